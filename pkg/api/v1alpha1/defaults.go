// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	"cmp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
)

const (
	DefaultEnvPath = "mlops.env"
	DefaultMPIHome = "/home/mpiuser"
)

// DefaultMPIArgs are OpenMPI's mpirun flags of the Horovod and mpi-operator examples.
var DefaultMPIArgs = []string{"-bind-to", "none", "-map-by", "slot", "-mca", "pml", "ob1", "-mca", "btl", "^openib"}

// DefaultForwardEnv is what Horovod jobs forward to every rank.
var DefaultForwardEnv = []string{"NCCL_DEBUG=INFO", "LD_LIBRARY_PATH", "PATH"}

// DefaultLauncherResources are the launcher's when neither spec.launcherResources nor the target's launcher
// sets any: it only runs mpirun, so it requests a tenth of a core (what the scheduler and Kueue count), not a
// worker's share of a small node.
func DefaultLauncherResources() corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")},
	}
}

// DefaultConfigMapName is one job's env ConfigMap, by kind too: the multi-node and single-node quickstarts
// share a name, and neither may write or delete the other's.
func DefaultConfigMapName(name string, k jobkind.Facts) string {
	return name + "-" + strings.ToLower(k.Kind) + "-env"
}

// GuardInputsSuffix ends the name of the ConfigMap mlops-fn hydrate generates from mlops.env for its guard
// (NAME-mlops-fn-inputs, local-config: never applied). No env ConfigMap may take such a name.
const GuardInputsSuffix = "-mlops-fn-inputs"

// Default fills what the user left out that every kind shares (a kind's own fields are its Defaulter's;
// pkg/kinds.Default runs both). What mlops.env may still set (workers, slots, ids) the renderer settles.
func (j *MLOpsJob) Default(kinds jobkind.Table) {
	s := &j.Spec
	s.JobKind = cmp.Or(s.JobKind, kinds.Default())
	kind := kinds.Of(s.JobKind)
	s.EnvFile.Path = cmp.Or(s.EnvFile.Path, DefaultEnvPath)
	s.EnvFile.ConfigMapName = cmp.Or(s.EnvFile.ConfigMapName, DefaultConfigMapName(j.Metadata.Name, kind))
	s.Security.Hardening = cmp.Or(s.Security.Hardening, new(true))
	s.ContainerName = cmp.Or(s.ContainerName, kind.ContainerName, j.Metadata.Name)
	s.RunPolicy.CleanPodPolicy = cmp.Or(s.RunPolicy.CleanPodPolicy, kind.CleanPodPolicy)
	s.RestartPolicy = cmp.Or(s.RestartPolicy, kind.RestartPolicy)
}

// Defaulter is a job kind with fields of its own to default, after the shared ones.
type Defaulter interface {
	Default(s *MLOpsJobSpec)
}
