// SPDX-License-Identifier: Apache-2.0

package render

import (
	"fmt"
	"maps"

	"k8s.io/apimachinery/pkg/util/validation/field"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/env"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
)

// Grouper is a kind whose pod templates Kueue places in one topology domain: their podset group ("": none).
type Grouper interface {
	Group(p *Plan, role jobkind.Role) string
}

// place settles Placement from mlops.env's topology key; only Kueue reads it, so a job with no queue is warned.
func (p *Plan) place(set env.Settings, envKey func(string) *field.Path) []Warning {
	if set.Topology == "" {
		return nil
	}
	key, annotation := "TOPOLOGY_REQUIRED", api.RequiredTopologyAnnotation
	if set.TopologyPreferred {
		key, annotation = "TOPOLOGY_PREFERRED", api.PreferredTopologyAnnotation
	}
	p.Placement = map[string]string{annotation: set.Topology}
	if p.Labels[api.QueueLabel] == "" {
		return []Warning{{Field: envKey(key), Message: fmt.Sprintf(
			"is read by Kueue alone, and the job has no queue: the scheduler places its pods anywhere; set QUEUE (or the label %s) for them to go to one domain of %s", api.QueueLabel, set.Topology)}}
	}
	return nil
}

// PodPlacement is the annotations of the pod templates of role: the topology level, and the kind's group.
func (p *Plan) PodPlacement(role jobkind.Role) map[string]string {
	if p.Placement == nil {
		return nil
	}
	a := maps.Clone(p.Placement)
	if g, ok := p.kind.(Grouper); ok {
		if name := g.Group(p, role); name != "" {
			a[api.PodSetGroupAnnotation] = name
		}
	}
	return a
}
