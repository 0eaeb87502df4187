// SPDX-License-Identifier: Apache-2.0

package pytorchjob

import (
	"net"
	"strconv"

	kubeflowv1 "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

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
	s.RunPolicy = kubeflowv1.RunPolicy{
		CleanPodPolicy:          ptr.To(kubeflowv1.CleanPodPolicy(p.RunPolicy.CleanPodPolicy)),
		TTLSecondsAfterFinished: p.RunPolicy.TTLSecondsAfterFinished,
		ActiveDeadlineSeconds:   p.RunPolicy.ActiveDeadlineSeconds,
		BackoffLimit:            p.RunPolicy.BackoffLimit,
	}
	if sp := p.RunPolicy.SchedulingPolicy; sp != nil {
		s.RunPolicy.SchedulingPolicy = &kubeflowv1.SchedulingPolicy{MinAvailable: sp.MinAvailable, Queue: sp.Queue,
			PriorityClass: sp.PriorityClass, ScheduleTimeoutSeconds: sp.ScheduleTimeoutSeconds}
	}
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
