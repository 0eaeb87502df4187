// SPDX-License-Identifier: Apache-2.0

package processor

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/render"
)

// placementClash refuses a target whose pod template asks Kueue for another
// placement than mlops.env's: the patch would leave both, or override the
// user's, and either way one of them silently loses.
func placementClash(target *yaml.RNode, q *render.Plan) error {
	if q.Placement == nil {
		return nil
	}
	for _, s := range kindOf(target).PodSpecs {
		at := append(slices.Clone(s.Path[:len(s.Path)-1]), "metadata", "annotations")
		m, _ := target.Pipe(yaml.Lookup(at...))
		if m == nil {
			continue
		}
		want := q.PodPlacement(s.Role)
		for _, key := range []string{api.RequiredTopologyAnnotation, api.PreferredTopologyAnnotation, api.PodSetGroupAnnotation} {
			have := m.Field(key)
			if have == nil || yaml.GetValue(have.Value) == want[key] {
				continue
			}
			what := fmt.Sprintf("mlops.env's placement sets %s", formatAnnotations(want))
			return fmt.Errorf("%s.%s: Invalid value: %q: the target asks Kueue for its own placement, and %s; accepted: the annotation removed from the target (mlops.env's TOPOLOGY_ key places the job), or no TOPOLOGY_ key in mlops.env",
				strings.Join(at, "."), key, yaml.GetValue(have.Value), what)
		}
	}
	return nil
}

// formatAnnotations is annotations as key: value pairs, sorted.
func formatAnnotations(a map[string]string) string {
	var pairs []string
	for _, k := range slices.Sorted(maps.Keys(a)) {
		pairs = append(pairs, k+": "+a[k])
	}
	return strings.Join(pairs, ", ")
}
