// SPDX-License-Identifier: Apache-2.0

package pytorchjob

import (
	"cmp"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/env"
	"github.com/mlops-fn/mlops-fn/pkg/render"
)

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
