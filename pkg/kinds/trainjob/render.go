// SPDX-License-Identifier: Apache-2.0

package trainjob

import (
	"reflect"
	"slices"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	"github.com/kubeflow/trainer/v2/pkg/constants"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/render"
)

// Kind is a TrainJob on a training runtime, which owns the pod templates.
type Kind struct{}

var (
	_ render.JobFiller    = Kind{}
	_ render.Operated     = Kind{}
	_ render.NewJob       = Kind{}
	_ api.Defaulter       = Kind{}
	_ api.Validator       = Kind{}
	_ render.Narrower     = Kind{}
	_ render.AfterPatcher = Kind{}
)

// NewJob: a new TrainJob runs on the default runtime.
func (Kind) NewJob(p *render.Plan) {
	if p.Trainer.Runtime == "" {
		p.Trainer.Runtime, p.Trainer.RuntimeKind = api.DefaultTrainerRuntime, api.ClusterTrainingRuntime
	}
}

func (Kind) Facts() jobkind.Facts { return facts }

// Object builds a TrainJob from the filled pod templates: the node's training container becomes spec.trainer,
// and the rest of each pod spec mlops-fn's runtime patch, the only place a TrainJob carries pod settings.
func (Kind) Object(p *render.Plan, template render.Template) render.Job {
	job := &trainer.TrainJob{}
	node := template(jobkind.TrainerNode)
	c := node.Spec.Containers[0]
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
		t := node
		if name == string(jobkind.TrainerLauncher) {
			t = template(jobkind.TrainerLauncher)
		}
		// Kueue reads a TrainJob's placement from its JobSet's pod templates.
		pt := trainer.PodTemplatePatch{Spec: podSpecPatch(t.Spec)}
		if len(t.Annotations) > 0 {
			pt.Metadata = &metav1.ObjectMeta{Annotations: t.Annotations}
		}
		if pt.Spec != nil || pt.Metadata != nil {
			patches = append(patches, trainer.ReplicatedJobPatch{Name: name, Template: &trainer.JobTemplatePatch{
				Spec: &trainer.JobSpecPatch{Template: &pt}}})
		}
	}
	if len(patches) > 0 {
		job.Spec.RuntimePatches = []trainer.RuntimePatch{{Manager: RuntimePatchManager,
			TrainingRuntimeSpec: &trainer.TrainingRuntimeSpecPatch{Template: &trainer.JobSetTemplatePatch{
				Spec: &trainer.JobSetSpecPatch{ReplicatedJobs: patches}}}}}
	}
	return job
}

// podSpecPatch is the part of spec a runtime patch carries (nil: none): of the containers, mounts and securityContext.
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

// FillJob sets the TrainJob's runtime, node count, processes per node and deadline.
func (Kind) FillJob(p *render.Plan, obj render.Job) {
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

// OperatorVolumes are Kubeflow Trainer v2.3's MPI plugin's; a launcher is the sign of an MPI runtime.
func (Kind) OperatorVolumes(p *render.Plan) []render.OperatorVolume {
	vols := []render.OperatorVolume{{Name: "mpi-ssh-auth", Owner: "Kubeflow Trainer's MPI runtime mounts the SSH keys"}}
	if slices.Contains(p.Trainer.ReplicatedJobs, string(jobkind.TrainerLauncher)) {
		vols = append(vols, render.OperatorVolume{Name: "mpi-hostfile", Path: constants.MPIHostfileDir,
			Owner: "Kubeflow Trainer's MPI runtime mounts the hostfile it writes"})
	}
	return vols
}

// FillProgram: the node runs the command; its env takes each mlops.env key from the env ConfigMap (a trainer
// has no envFrom).
func (Kind) FillProgram(p *render.Plan, role jobkind.Role, _ *corev1.PodSpec, c *corev1.Container) {
	if role != jobkind.TrainerNode {
		return
	}
	c.Command, c.Args, c.EnvFrom, c.Env = p.Command, p.Args, nil, nil
	for _, k := range p.EnvKeys {
		c.Env = append(c.Env, corev1.EnvVar{Name: k, ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: p.ConfigMapName}, Key: k}}})
	}
	c.Env = append(c.Env, p.Env...)
}
