// SPDX-License-Identifier: Apache-2.0

// Package mpijob is the multi-node job, mpi-operator v0.8's MPIJob: its facts, rendering and patching.
package mpijob

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	kubeflow "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	mpivalidation "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/validation"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
)

var facts = jobkind.Facts{
	Kind: string(jobkind.MPIJob), Default: true, APIVersion: kubeflow.SchemeGroupVersion.String(), PatchFile: "mpijob-patch.yaml",
	PodSpecs: []jobkind.PodSpec{
		{Role: jobkind.Launcher, Path: []string{"spec", "mpiReplicaSpecs", string(jobkind.Launcher), "template", "spec"}},
		{Role: jobkind.Worker, Path: []string{"spec", "mpiReplicaSpecs", string(jobkind.Worker), "template", "spec"}},
	},
	ReferencePodSpecs: []string{"spec/mpiReplicaSpecs/Launcher/template/spec", "spec/mpiReplicaSpecs/Worker/template/spec"},
	Operator:          "the mpi-operator",
	// Its README's "Release Version".
	Install:        []string{"kubectl apply --server-side -f https://raw.githubusercontent.com/kubeflow/mpi-operator/v0.8.2/deploy/v2beta1/mpi-operator.yaml"},
	Starter:        "mpirun",
	Brief:          "multi-node",
	LogsFrom:       "the launcher (mpirun prints every rank's output there)",
	Help:           "(default; multi-node) a kubeflow.org/v2beta1 MPIJob: a launcher\nrunning mpirun with -np = workers x slots, and the workers",
	FirstContainer: "the mpi-operator sets up SSH and the hostfile in the first container",
	Carries: []string{"imagePullPolicy", "workingDir", "priorityClassName", "hostNetwork", "restartPolicy",
		"workers", "slotsPerWorker", "launcherResources", "security.home", "mpi", "runPolicy.cleanPodPolicy", "runPolicy.ttlSecondsAfterFinished", "runPolicy.backoffLimit", "runPolicy.schedulingPolicy"},
	Fields: []jobkind.Field{
		{Path: "slotsPerWorker", EnvKeys: []string{"SLOTS_PER_WORKER"},
			Why: "the MPI ranks, or a TrainJob's processes, on each worker; a Pod runs its command once, an elastic job's torchrun takes spec.elastic.procsPerWorker"},
		{Path: "launcherResources", Why: "the resources of an MPIJob's launcher, which runs mpirun; a TrainJob's MPI runtime sizes its own launcher"},
		// USER_NAME names the user in every kind's image too: a shared mlops.env keeps it unwarned.
		{Path: "security.home", Why: "where the mpi-operator mounts an MPIJob's SSH keys; a TrainJob's MPI runtime sets its own in mlPolicy.mpi"},
		{Path: "mpi", Why: "mpirun and the workers' sshd of an MPIJob; a TrainJob's MPI runtime sets them in mlPolicy.mpi"},
	},
	RestartPolicy:  corev1.RestartPolicyNever,
	CleanPodPolicy: string(kubeflow.CleanPodPolicyRunning),
	PodsLabel:      kubeflow.JobNameLabel,
	ProgramPods:    []string{kubeflow.JobRoleLabel + "=launcher"},
	PodNames: func(s jobkind.Shape) []string {
		return []string{s.Name + "-launcher", fmt.Sprintf("%s-worker-%d", s.Name, max(s.Workers-1, 0))}
	},
	PodCount: func(obj map[string]any) int {
		return jobkind.Count(jobkind.ReplicaPods(obj, "spec", "mpiReplicaSpecs"))
	},
	Pods: func(obj map[string]any) []jobkind.Pods {
		pods := jobkind.ReplicaPods(obj, "spec", "mpiReplicaSpecs")
		for i := range pods {
			if pods[i].Role == string(jobkind.Launcher) {
				pods[i].ResourcesFrom = "spec.launcherResources (the launcher's)"
			}
		}
		return pods
	},
	SuspendPath:    []string{"spec", "runPolicy", "suspend"},
	KueueFramework: "kubeflow.org/mpijob",
	Demo: jobkind.Demo{
		Image: "mpioperator/mpi-pi:openmpi", About: "the mpi-operator's own example", Command: []string{"/home/mpiuser/pi"},
		CommandNote: "mlops-fn runs it under mpirun -np WORKERS x slots",
		Shape:       "WORKERS=2\n" + jobkind.DemoResources,
		UserName:    true,
	},
	New:      func() any { return &kubeflow.MPIJob{} },
	Validate: func(obj any) field.ErrorList { return validateMPIJob(obj.(*kubeflow.MPIJob)) },
}

// Default: OpenMPI, its flags, the variables Horovod jobs forward, and a launcher created once the workers run.
func (Kind) Default(s *api.MLOpsJobSpec) {
	s.MPI.Implementation = cmp.Or(s.MPI.Implementation, api.OpenMPI)
	if s.MPI.Args == nil && s.MPI.Implementation == api.OpenMPI {
		// OpenMPI's flags; Intel MPI's and MPICH's Hydra rejects them.
		s.MPI.Args = append([]string(nil), api.DefaultMPIArgs...)
	}
	if s.MPI.ForwardEnv == nil {
		s.MPI.ForwardEnv = append([]string(nil), api.DefaultForwardEnv...)
	}
	// Not AtStartup: a launcher started beside its workers runs mpirun before their sshd listens, fails, and
	// waits out the Job's backoff (seen on every run on a real node).
	s.MPI.LauncherCreationPolicy = cmp.Or(s.MPI.LauncherCreationPolicy, api.WaitForWorkersReady)
}

// Validate checks spec.mpi: mpirun's flags, the workers' command, the names forwarded to the ranks.
func (Kind) Validate(s *api.MLOpsJobSpec, spec *field.Path) field.ErrorList {
	m, p := s.MPI, spec.Child("mpi")
	var errs field.ErrorList
	errs = append(errs, api.OneOf(p.Child("implementation"), string(m.Implementation), string(api.OpenMPI), string(api.Intel), string(api.MPICH))...)
	errs = append(errs, api.OneOf(p.Child("launcherCreationPolicy"), m.LauncherCreationPolicy, api.AtStartup, api.WaitForWorkersReady)...)
	for i, a := range m.Args {
		// One dash or two, its value after "=" or next (-n=4 as -np 4).
		if name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); a != name && slices.Contains([]string{"np", "n", "c"}, name) {
			errs = append(errs, field.Invalid(p.Child("args").Index(i), a, "mlops-fn sets the number of ranks from workers × slots; accepted: the other mpirun flags"))
		}
	}
	if m.WorkerCommand != nil && len(m.WorkerCommand) == 0 {
		errs = append(errs, field.Invalid(p.Child("workerCommand"), "[]", "an empty command leaves the workers without sshd; accepted: a command, or leave the field out for the default"))
	}
	for i, kv := range m.ForwardEnv {
		name, _, _ := strings.Cut(kv, "=")
		for _, msg := range validation.IsEnvVarName(name) {
			errs = append(errs, field.Invalid(p.Child("forwardEnv").Index(i), kv, msg))
		}
	}
	return errs
}

// validateMPIJob is the mpi-operator's validation, plus the replica types it has no controller for.
func validateMPIJob(job *kubeflow.MPIJob) field.ErrorList {
	errs := mpivalidation.ValidateMPIJob(job)
	for t := range job.Spec.MPIReplicaSpecs {
		if t != kubeflow.MPIReplicaTypeLauncher && t != kubeflow.MPIReplicaTypeWorker {
			errs = append(errs, field.NotSupported(field.NewPath("spec", "mpiReplicaSpecs"), string(t), []string{"Launcher", "Worker"}))
		}
	}
	return errs
}
