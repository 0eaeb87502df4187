// SPDX-License-Identifier: Apache-2.0

package pytorchjob

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"

	kubeflowv1 "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/env"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/jobnode"
	"github.com/mlops-fn/mlops-fn/pkg/render"
)

// Kind is the elastic job: a PyTorchJob of workers only.
type Kind struct{}

var (
	_ api.Defaulter    = Kind{}
	_ api.Validator    = Kind{}
	_ render.JobFiller = Kind{}
	_ render.Gang      = Kind{}
	_ render.Narrower  = Kind{}
	_ render.Resolver  = Kind{}
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

// RendezvousID is spec.elastic.runId, else namespace-name: jobs of one spec in two namespaces sharing an etcd
// do not meet.
func RendezvousID(p *render.Plan) string {
	if p.Elastic.RunID != "" {
		return p.Elastic.RunID
	}
	if p.Namespace != "" {
		return p.Namespace + "-" + p.Name
	}
	return p.Name
}

// Resolve settles the elastic bounds, MIN_WORKERS <= WORKERS <= MAX_WORKERS, and an etcd server exactly when
// the backend is etcd (a job without workers is refused for that).
func (Kind) Resolve(p *render.Plan, in render.Input) ([]render.Warning, field.ErrorList) {
	if p.Workers == 0 {
		return nil, nil
	}
	e, set, workers, envKey := in.Spec.Elastic, in.Set, p.Workers, in.EnvKey
	var errs field.ErrorList
	spec := field.NewPath("spec", "elastic")
	ep := render.ElasticPlan{
		MinWorkers:     *cmp.Or(set.MinWorkers, e.MinWorkers, &workers),
		MaxWorkers:     *cmp.Or(set.MaxWorkers, e.MaxWorkers, &workers),
		Backend:        e.RendezvousBackend,
		Endpoint:       e.RendezvousEndpoint,
		RunID:          e.RunID,
		MaxRestarts:    e.MaxRestarts,
		ProcsPerWorker: *cmp.Or(e.ProcsPerWorker, ptr.To(max(p.GPUsPerWorker, 1))),
	}
	if set.RendezvousEndpoint != "" {
		ep.Endpoint = set.RendezvousEndpoint
	} else if ep.Endpoint != "" {
		if wrong, ok := env.CheckRendezvous(ep.Endpoint); !ok {
			errs = append(errs, field.Invalid(spec.Child("rendezvousEndpoint"), ep.Endpoint, strings.TrimPrefix(wrong+"; accepted: "+env.RendezvousAccepted, "; ")))
		}
	}
	from := func(key string, fromEnv bool, specField string) *field.Path {
		if fromEnv {
			return envKey(key)
		}
		return spec.Child(specField)
	}
	if ep.MinWorkers > workers {
		errs = append(errs, field.Invalid(from("MIN_WORKERS", set.MinWorkers != nil, "minWorkers"), ep.MinWorkers,
			fmt.Sprintf("is more than the %d workers the job starts with (WORKERS); accepted: 1 to %d", workers, workers)))
	}
	if ep.MaxWorkers < workers {
		errs = append(errs, field.Invalid(from("MAX_WORKERS", set.MaxWorkers != nil, "maxWorkers"), ep.MaxWorkers,
			fmt.Sprintf("is fewer than the %d workers the job starts with (WORKERS); accepted: %d to %d", workers, workers, api.MaxWorkers)))
	}
	switch {
	case ep.Backend == "c10d" && ep.Endpoint != "":
		errs = append(errs, field.Invalid(from("RDZV_ENDPOINT", set.RendezvousEndpoint != "", "rendezvousEndpoint"), ep.Endpoint,
			"the c10d rendezvous runs on worker 0 and takes no server; "+
				"accepted: no RDZV_ENDPOINT or spec.elastic.rendezvousEndpoint, or spec.elastic.rendezvousBackend etcd"))
	case ep.Backend != "c10d" && ep.Endpoint == "":
		errs = append(errs, field.Required(envKey("RDZV_ENDPOINT"),
			"the "+ep.Backend+" rendezvous needs its etcd server: set RDZV_ENDPOINT (or spec.elastic.rendezvousEndpoint) to host:port"))
	}
	p.Elastic = ep
	return nil, errs
}
