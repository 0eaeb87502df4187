// SPDX-License-Identifier: Apache-2.0

package render

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	kubeflowv1 "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/env"
)

// pyTorchJobRenderer: an elastic job is a PyTorchJob of workers only.
type pyTorchJobRenderer struct{}

var _ kindRenderer = pyTorchJobRenderer{}

func (pyTorchJobRenderer) object(p *Plan, template func(role, string) corev1.PodTemplateSpec) job {
	return &kubeflowv1.PyTorchJob{Spec: kubeflowv1.PyTorchJobSpec{PyTorchReplicaSpecs: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec{
		kubeflowv1.PyTorchJobReplicaTypeWorker: {Template: template(elasticWorker, p.ContainerOf(""))},
	}}}
}

func (pyTorchJobRenderer) operatorVolumes(*Plan) []operatorVolume { return nil }

// gang: the workers, of which torchrun starts with MIN_WORKERS.
func (pyTorchJobRenderer) gang(p *Plan) (int32, string, int32, bool) {
	least := int32(0)
	if p.Elastic.MinWorkers < p.Workers {
		least = p.Elastic.MinWorkers
	}
	return p.Workers, "the workers (WORKERS)", least, true
}

// fillJob: the operator turns elasticPolicy into torchrun's PET_*
// variables (nnodes min:max, rendezvous, restarts, procs per node).
func (pyTorchJobRenderer) fillJob(p *Plan, obj job) {
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
		policy.RDZVID = ptr.To(p.RendezvousID())
	}
	s.ElasticPolicy = policy
	s.NprocPerNode = ptr.To(strconv.Itoa(int(e.ProcsPerWorker)))
	w := s.PyTorchReplicaSpecs[kubeflowv1.PyTorchJobReplicaTypeWorker]
	w.Replicas = ptr.To(p.Workers)
	w.RestartPolicy = kubeflowv1.RestartPolicy(p.RestartPolicy)
}

// RendezvousID is spec.elastic.runId, else namespace-name when the namespace
// is known, so two jobs of one spec in different namespaces sharing an etcd do
// not meet either.
func (p *Plan) RendezvousID() string {
	if p.Elastic.RunID != "" {
		return p.Elastic.RunID
	}
	if p.Namespace != "" {
		return p.Namespace + "-" + p.Name
	}
	return p.Name
}

// ElasticPlan is an elastic job's settled shape.
type ElasticPlan struct {
	MinWorkers, MaxWorkers int32
	Backend, Endpoint      string
	RunID                  string
	MaxRestarts            *int32
	ProcsPerWorker         int32
}

// elastic settles the elastic bounds and rendezvous: MIN_WORKERS <= WORKERS
// <= MAX_WORKERS, and an etcd server exactly when the backend is etcd.
func elastic(e api.Elastic, set env.Settings, workers, gpus int32, envKey func(string) *field.Path, errs field.ErrorList) (ElasticPlan, field.ErrorList) {
	spec := field.NewPath("spec", "elastic")
	ep := ElasticPlan{
		MinWorkers:     pick(set.MinWorkers, e.MinWorkers, workers),
		MaxWorkers:     pick(set.MaxWorkers, e.MaxWorkers, workers),
		Backend:        e.RendezvousBackend,
		Endpoint:       e.RendezvousEndpoint,
		RunID:          e.RunID,
		MaxRestarts:    e.MaxRestarts,
		ProcsPerWorker: pick(nil, e.ProcsPerWorker, max(gpus, 1)),
	}
	if set.RendezvousEndpoint != "" {
		ep.Endpoint = set.RendezvousEndpoint
	} else if ep.Endpoint != "" {
		if wrong, ok := env.CheckRendezvous(ep.Endpoint); !ok {
			errs = append(errs, field.Invalid(spec.Child("rendezvousEndpoint"), ep.Endpoint, strings.TrimPrefix(wrong+"; accepted: "+env.RendezvousAccepted, "; ")))
		}
	}
	// An error names the key or field the value came from.
	from := func(key string, fromEnv bool, specField string) *field.Path {
		if fromEnv {
			return envKey(key)
		}
		return spec.Child(specField)
	}
	if ep.MinWorkers > workers {
		errs = append(errs, field.Invalid(from("MIN_WORKERS", set.MinWorkers != nil, "minWorkers"), ep.MinWorkers, fmt.Sprintf("is more than the %d workers the job starts with (WORKERS); accepted: 1 to %d", workers, workers)))
	}
	if ep.MaxWorkers < workers {
		errs = append(errs, field.Invalid(from("MAX_WORKERS", set.MaxWorkers != nil, "maxWorkers"), ep.MaxWorkers, fmt.Sprintf("is fewer than the %d workers the job starts with (WORKERS); accepted: %d to %d", workers, workers, api.MaxWorkers)))
	}
	switch {
	case ep.Backend == "c10d" && ep.Endpoint != "":
		errs = append(errs, field.Invalid(from("RDZV_ENDPOINT", set.RendezvousEndpoint != "", "rendezvousEndpoint"), ep.Endpoint, "the c10d rendezvous runs on worker 0 and takes no server; accepted: no RDZV_ENDPOINT or spec.elastic.rendezvousEndpoint, or spec.elastic.rendezvousBackend etcd"))
	case ep.Backend != "c10d" && ep.Endpoint == "":
		errs = append(errs, field.Required(envKey("RDZV_ENDPOINT"), "the "+ep.Backend+" rendezvous needs its etcd server: set RDZV_ENDPOINT (or spec.elastic.rendezvousEndpoint) to host:port"))
	}
	return ep, errs
}
