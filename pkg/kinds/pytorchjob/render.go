// SPDX-License-Identifier: Apache-2.0

package pytorchjob

import (
	"errors"
	"maps"
	"net"
	"slices"
	"strconv"

	kubeflowv1 "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/jobnode"
	"github.com/mlops-fn/mlops-fn/pkg/render"
)

// Kind is the elastic job: a PyTorchJob of workers only.
type Kind struct{}

var (
	_ render.Kind       = Kind{}
	_ api.Defaulter     = Kind{}
	_ api.Validator     = Kind{}
	_ render.JobFiller  = Kind{}
	_ render.Gang       = Kind{}
	_ render.Narrower   = Kind{}
	_ jobnode.Templated = Kind{}
	_ render.Resolver   = Kind{}
)

func (Kind) Facts() jobkind.Facts { return facts }

func (Kind) Object(_ *render.Plan, template render.Template) render.Job {
	return &kubeflowv1.PyTorchJob{Spec: kubeflowv1.PyTorchJobSpec{PyTorchReplicaSpecs: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec{
		kubeflowv1.PyTorchJobReplicaTypeWorker: {Template: template(jobkind.Single)},
	}}}
}

// FillProgram: each worker runs the command (torchrun); the operator reads the rendezvous port by its name.
func (Kind) FillProgram(p *render.Plan, _ jobkind.Role, _ *corev1.PodSpec, c *corev1.Container) {
	c.Command, c.Args = p.Command, p.Args
	c.Ports = []corev1.ContainerPort{{Name: kubeflowv1.PyTorchJobDefaultPortName, ContainerPort: kubeflowv1.PyTorchJobDefaultPort}}
}

// Gang: the workers, of which torchrun starts with MIN_WORKERS.
func (Kind) Gang(p *render.Plan) (int32, string, int32) {
	least := int32(0)
	if p.Elastic.MinWorkers < p.Workers {
		least = p.Elastic.MinWorkers
	}
	return p.Workers, "the workers (WORKERS)", least
}

// FillJob: the operator turns elasticPolicy into torchrun's PET_* variables.
func (Kind) FillJob(p *render.Plan, obj render.Job) {
	s := &obj.(*kubeflowv1.PyTorchJob).Spec
	p.FillRunPolicy(&s.RunPolicy)
	e := p.Elastic
	policy := &kubeflowv1.ElasticPolicy{
		MinReplicas: ptr.To(e.MinWorkers),
		MaxReplicas: ptr.To(e.MaxWorkers),
		RDZVBackend: ptr.To(kubeflowv1.RDZVBackend(e.Backend)),
		MaxRestarts: e.MaxRestarts,
	}
	if e.Backend != "c10d" {
		// A shared etcd tells jobs apart by id: the job's name is unique in its namespace.
		host, port, _ := net.SplitHostPort(e.Endpoint)
		n, _ := strconv.Atoi(port)
		policy.RDZVHost, policy.RDZVPort = ptr.To(host), ptr.To(int32(n))
		policy.RDZVID = ptr.To(RendezvousID(p))
	}
	s.ElasticPolicy = policy
	s.NprocPerNode = ptr.To(strconv.Itoa(int(e.ProcsPerWorker)))
	w := s.PyTorchReplicaSpecs[kubeflowv1.PyTorchJobReplicaTypeWorker]
	w.Replicas = ptr.To(p.Workers)
	w.RestartPolicy = kubeflowv1.RestartPolicy(p.RestartPolicy)
}

// Narrow: a target with a Master is a static job, which an elastic job of workers only would half convert.
func (Kind) Narrow(target *yaml.RNode, _ *render.Plan, _ string) error {
	if m, _ := target.Pipe(yaml.Lookup("spec", "pytorchReplicaSpecs", "Master")); m != nil {
		return errors.New("spec.pytorchReplicaSpecs.Master: mlops-fn renders an elastic PyTorchJob, workers only, which torchrun's rendezvous joins; the site settings would reach the Workers and not the Master, and the job would become elastic; accepted: a PyTorchJob of Workers only (torchrun's c10d rendezvous runs on worker 0), or jobKind TrainJob for a Kubeflow Trainer runtime")
	}
	return nil
}

// PodTemplates are a PyTorchJob's pod specs, by replica type: mlops-fn fills the workers'.
func (Kind) PodTemplates(obj any) []jobnode.PodTemplate {
	o, ok := obj.(*kubeflowv1.PyTorchJob)
	if !ok {
		return nil
	}
	var pods []jobnode.PodTemplate
	for _, rt := range slices.Sorted(maps.Keys(o.Spec.PyTorchReplicaSpecs)) {
		if r := o.Spec.PyTorchReplicaSpecs[rt]; r != nil {
			pods = append(pods, jobnode.PodTemplate{Path: "spec.pytorchReplicaSpecs." + string(rt) + ".template.spec", Meta: r.Template.ObjectMeta,
				Spec: r.Template.Spec, Filled: rt == kubeflowv1.PyTorchJobReplicaTypeWorker})
		}
	}
	return pods
}
