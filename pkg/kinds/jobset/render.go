// SPDX-License-Identifier: Apache-2.0

package jobset

import (
	"fmt"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/jobnode"
	"github.com/mlops-fn/mlops-fn/pkg/render"
)

// Kind is a JobSet of one replicated job, a Job of one pod a node.
type Kind struct{}

var (
	_ render.JobFiller = Kind{}
	_ render.Narrower  = Kind{}
)

func (Kind) Facts() jobkind.Facts { return facts }

func (Kind) Object(_ *render.Plan, template render.Template) render.Job {
	return &jobset.JobSet{Spec: jobset.JobSetSpec{ReplicatedJobs: []jobset.ReplicatedJob{{Name: Node,
		Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: template(jobkind.Single)}}}}}}
}

// FillProgram: each node runs the command (torchrun), told the rendezvous in PET_* variables: its rank is its
// Job's index, node 0's address its hostname in the JobSet's headless Service.
func (Kind) FillProgram(p *render.Plan, _ jobkind.Role, spec *corev1.PodSpec, c *corev1.Container) {
	c.Command, c.Args = p.Command, p.Args
	spec.RestartPolicy = p.RestartPolicy
	field := func(path string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}
	}
	c.Env = append([]corev1.EnvVar{
		{Name: "JOBSET_NAME", ValueFrom: field("metadata.labels['" + jobset.JobSetNameKey + "']")},
		{Name: "PET_NNODES", Value: strconv.Itoa(int(p.Workers))},
		{Name: "PET_NPROC_PER_NODE", Value: strconv.Itoa(int(p.SlotsPerWorker))},
		{Name: "PET_NODE_RANK", ValueFrom: field("metadata.annotations['" + jobset.JobIndexKey + "']")},
		{Name: "PET_MASTER_ADDR", Value: "$(JOBSET_NAME)-" + Node + "-0-0.$(JOBSET_NAME)"},
		{Name: "PET_MASTER_PORT", Value: strconv.Itoa(MasterPort)},
	}, c.Env...)
	c.Ports = []corev1.ContainerPort{{Name: "rendezvous", ContainerPort: MasterPort}}
}

// FillJob: WORKERS Jobs of one pod each, which do not retry a pod alone (a static rendezvous cannot take it
// back): the JobSet restarts them all, up to runPolicy.backoffLimit times.
func (Kind) FillJob(p *render.Plan, obj render.Job) {
	s := &obj.(*jobset.JobSet).Spec
	rj := &s.ReplicatedJobs[0]
	rj.Replicas = p.Workers
	j := &rj.Template.Spec
	j.Parallelism, j.Completions = ptr.To(int32(1)), ptr.To(int32(1))
	j.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	j.BackoffLimit = ptr.To(int32(0))
	j.ActiveDeadlineSeconds = p.RunPolicy.ActiveDeadlineSeconds
	if b := p.RunPolicy.BackoffLimit; b != nil {
		s.FailurePolicy = &jobset.FailurePolicy{MaxRestarts: *b}
	}
	s.TTLSecondsAfterFinished = p.RunPolicy.TTLSecondsAfterFinished
}

// Narrow: a subdomain would rename the headless Service node 0's address is in; the one replicated job is node.
func (Kind) Narrow(target *yaml.RNode, _ *render.Plan, _ string) error {
	if s := jobnode.Scalar(target, "spec", "network", "subdomain"); s != "" {
		return fmt.Errorf("spec.network.subdomain: %s names the JobSet's headless Service, whose name (the JobSet's) mlops-fn's torchrun finds node 0 by ($(JOBSET_NAME)-%s-0-0.$(JOBSET_NAME)); accepted: no subdomain", s, Node)
	}
	list, _ := target.Pipe(yaml.Lookup("spec", "replicatedJobs"))
	if list == nil {
		return nil
	}
	elems, _ := list.Elements()
	for i, e := range elems {
		if name, _ := e.GetString("name"); name != Node {
			return fmt.Errorf("spec.replicatedJobs[%d].name: %q: mlops-fn renders a JobSet of one replicated job, %s, which torchrun's rendezvous joins; the site settings would not reach this one; accepted: one replicated job named %s", i, name, Node, Node)
		}
	}
	return nil
}

// PodTemplates are a JobSet's pod specs, by replicated job: mlops-fn fills the node job's.
func (Kind) PodTemplates(obj any) []jobnode.PodTemplate {
	o, ok := obj.(*jobset.JobSet)
	if !ok {
		return nil
	}
	var pods []jobnode.PodTemplate
	for _, rj := range o.Spec.ReplicatedJobs {
		t := rj.Template.Spec.Template
		pods = append(pods, jobnode.PodTemplate{Path: "spec.replicatedJobs[name=" + rj.Name + "].template.spec.template.spec",
			Meta: t.ObjectMeta, Spec: t.Spec, Filled: rj.Name == Node})
	}
	return pods
}
