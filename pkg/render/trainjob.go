// SPDX-License-Identifier: Apache-2.0

package render

import (
	"path"
	"reflect"
	"slices"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	trainjobkind "github.com/mlops-fn/mlops-fn/pkg/kinds/trainjob"
)

// trainJobRenderer: a TrainJob on a training runtime, which owns the pod
// templates.
type trainJobRenderer struct{}

var _ kindRenderer = trainJobRenderer{}

// object builds a TrainJob from the pod templates the fill gave each of
// the runtime's replicated jobs: the node's training container becomes
// spec.trainer (image, program, env, resources per node), and what a pod
// spec holds beyond it becomes mlops-fn's runtime patch, the only place a
// TrainJob carries pod settings.
func (trainJobRenderer) object(p *Plan, template func(role, string) corev1.PodTemplateSpec) job {
	job := &trainer.TrainJob{}
	node := template(trainerNode, p.ContainerOf(jobkind.TrainerNode)).Spec
	c := node.Containers[0]
	t := trainer.Trainer{Command: c.Command, Args: c.Args, Env: c.Env}
	if c.Image != "" {
		t.Image = ptr.To(c.Image)
	}
	if len(c.Resources.Limits) > 0 || len(c.Resources.Requests) > 0 {
		t.ResourcesPerNode = &corev1.ResourceRequirements{Limits: c.Resources.Limits, Requests: c.Resources.Requests}
	}
	if !reflect.DeepEqual(t, trainer.Trainer{}) {
		job.Spec.Trainer = &t
	}
	var patches []trainer.ReplicatedJobPatch
	for _, name := range p.Trainer.ReplicatedJobs {
		spec := node
		if name == string(jobkind.TrainerLauncher) {
			spec = template(trainerLauncher, p.ContainerOf(jobkind.TrainerLauncher)).Spec
		}
		if ps := podSpecPatch(spec); ps != nil {
			patches = append(patches, trainer.ReplicatedJobPatch{Name: name, Template: &trainer.JobTemplatePatch{
				Spec: &trainer.JobSpecPatch{Template: &trainer.PodTemplatePatch{Spec: ps}}}})
		}
	}
	if len(patches) > 0 {
		job.Spec.RuntimePatches = []trainer.RuntimePatch{{Manager: trainjobkind.RuntimePatchManager,
			TrainingRuntimeSpec: &trainer.TrainingRuntimeSpecPatch{Template: &trainer.JobSetTemplatePatch{
				Spec: &trainer.JobSetSpecPatch{ReplicatedJobs: patches}}}}}
	}
	return job
}

// podSpecPatch is the part of spec a runtime patch can carry, nil when
// there is none: the containers' settings other than those spec.trainer
// carries are their mounts and securityContext.
func podSpecPatch(spec corev1.PodSpec) *trainer.PodSpecPatch {
	ps := trainer.PodSpecPatch{Volumes: spec.Volumes, ImagePullSecrets: spec.ImagePullSecrets,
		SecurityContext: spec.SecurityContext, NodeSelector: spec.NodeSelector, Tolerations: spec.Tolerations}
	if spec.ServiceAccountName != "" {
		ps.ServiceAccountName = ptr.To(spec.ServiceAccountName)
	}
	for _, c := range spec.Containers {
		cp := trainer.ContainerPatch{Name: c.Name, VolumeMounts: c.VolumeMounts}
		if c.SecurityContext != nil && !reflect.DeepEqual(*c.SecurityContext, corev1.SecurityContext{}) {
			cp.SecurityContext = c.SecurityContext
		}
		if len(cp.VolumeMounts) > 0 || cp.SecurityContext != nil {
			ps.Containers = append(ps.Containers, cp)
		}
	}
	if reflect.DeepEqual(ps, trainer.PodSpecPatch{}) {
		return nil
	}
	return &ps
}

// fillJob sets the TrainJob's own fields: its runtime, the node count
// and processes per node (the runtime derives torchrun's PET_* variables or
// mpirun's slots from them), and its deadline.
func (trainJobRenderer) fillJob(p *Plan, obj job) {
	job := obj.(*trainer.TrainJob)
	if p.Trainer.Runtime != "" {
		job.Spec.RuntimeRef = trainer.RuntimeRef{Name: p.Trainer.Runtime, APIGroup: ptr.To(trainer.GroupVersion.Group), Kind: ptr.To(p.Trainer.RuntimeKind)}
	}
	if job.Spec.Trainer == nil {
		job.Spec.Trainer = &trainer.Trainer{}
	}
	job.Spec.Trainer.NumNodes = ptr.To(p.Workers)
	job.Spec.Trainer.NumProcPerNode = ptr.To(p.SlotsPerWorker)
	job.Spec.ActiveDeadlineSeconds = ptr.Deref(p.RunPolicy.ActiveDeadlineSeconds, 0)
}

// operatorVolumes are Kubeflow Trainer v2.3's MPI plugin's
// (constants.MPISSHAuthVolumeName, MPIHostfileVolumeName), an MPI runtime's:
// its launcher is the sign of one (its SSH keys go where the runtime's
// sshAuthMountPath says).
func (trainJobRenderer) operatorVolumes(p *Plan) []operatorVolume {
	vols := []operatorVolume{{"mpi-ssh-auth", "", "Kubeflow Trainer's MPI runtime mounts the SSH keys"}}
	if slices.Contains(p.Trainer.ReplicatedJobs, string(jobkind.TrainerLauncher)) {
		vols = append(vols, operatorVolume{"mpi-hostfile", path.Dir(OperatorHostfile), "Kubeflow Trainer's MPI runtime mounts the hostfile it writes"})
	}
	return vols
}

// gang: a TrainJob's runtime sets its podGroupPolicy.
func (trainJobRenderer) gang(*Plan) (int32, string, int32, bool) { return 0, "", 0, false }

// envRefs take each mlops.env key from the env ConfigMap.
func (p *Plan) envRefs() []corev1.EnvVar {
	var out []corev1.EnvVar
	for _, k := range p.EnvKeys {
		out = append(out, corev1.EnvVar{Name: k, ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: p.ConfigMapName}, Key: k}}})
	}
	return out
}
