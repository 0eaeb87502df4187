// SPDX-License-Identifier: Apache-2.0

package hydrate

import (
	"maps"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/resid"

	"github.com/mlops-fn/mlops-fn/pkg/kinds"

	"sigs.k8s.io/kustomize/api/filters/annotations"
	"sigs.k8s.io/kustomize/api/filters/imagetag"
	"sigs.k8s.io/kustomize/api/filters/labels"
	"sigs.k8s.io/kustomize/api/filters/namespace"
	"sigs.k8s.io/kustomize/api/filters/prefix"
	"sigs.k8s.io/kustomize/api/filters/suffix"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

// The user's fields kustomize applies after the component (namespace:, labels:, commonLabels:,
// commonAnnotations:, images:, what `kustomize edit set|add` writes) win over the job spec's values in the
// hydrated overlay; the check applies them once more to the function's output, with kustomize's own filters.
// namePrefix: and nameSuffix: act before the function too: a second pass only on the objects it makes.

func kustomizationOf(k *yaml.RNode) (types.Kustomization, error) {
	var out types.Kustomization
	text, err := k.String()
	if err == nil {
		err = sigsyaml.Unmarshal([]byte(text), &out)
	}
	return out, err
}

// imageFieldSpecs are kustomize's default image fields (its internal builtinpluginconsts; its LegacyFilter finds
// every containers: and initContainers: list besides), then the job kinds' images outside their containers (a
// TrainJob's trainer), which the component's configuration adds to kustomize's (schema.NameReferences).
var imageFieldSpecs = append(types.FsSlice{
	{Path: "spec/containers[]/image", CreateIfNotPresent: true},
	{Path: "spec/initContainers[]/image", CreateIfNotPresent: true},
	{Path: "spec/volumes[]/image/reference", CreateIfNotPresent: true},
	{Path: "spec/template/spec/containers[]/image", CreateIfNotPresent: true},
	{Path: "spec/template/spec/initContainers[]/image", CreateIfNotPresent: true},
	{Path: "spec/template/spec/volumes[]/image/reference", CreateIfNotPresent: true},
	{Path: "spec/jobTemplate/spec/template/spec/volumes[]/image/reference", CreateIfNotPresent: true},
}, func() types.FsSlice {
	var out types.FsSlice
	for _, k := range kinds.All {
		if k.ProgramPath != nil {
			group, _ := resid.ParseGroupVersion(k.APIVersion)
			out = append(out, types.FieldSpec{Gvk: resid.Gvk{Group: group, Kind: k.Kind}, Path: strings.Join(k.ProgramPath, "/") + "/image"})
		}
	}
	return out
}()...)

// applyUsersFields applies k's fields that act after the function to items in kustomize's order; each but
// the prefix and suffix, applied only to made (the objects the function made), is idempotent.
func applyUsersFields(k types.Kustomization, items, made []*yaml.RNode) error {
	type step struct {
		filter kio.Filter
		on     []*yaml.RNode
	}
	var steps []step
	if k.Namespace != "" {
		steps = append(steps, step{namespace.Filter{Namespace: k.Namespace, SetRoleBindingSubjects: namespace.DefaultSubjectsOnly}, items})
	}
	name := types.FieldSpec{Path: "metadata/name"}
	if k.NamePrefix != "" {
		steps = append(steps, step{prefix.Filter{Prefix: k.NamePrefix, FieldSpec: name}, made})
	}
	if k.NameSuffix != "" {
		steps = append(steps, step{suffix.Filter{Suffix: k.NameSuffix, FieldSpec: name}, made})
	}
	// Labels and annotations go on every kind's metadata: the job kinds (CRDs and Pod) have no other field of
	// them in kustomize's defaults.
	pairs := map[string]string{}
	maps.Copy(pairs, k.CommonLabels) //nolint:staticcheck // as commonLabels: is written
	for _, l := range k.Labels {
		maps.Copy(pairs, l.Pairs)
	}
	if len(pairs) > 0 {
		steps = append(steps, step{labels.Filter{Labels: pairs, FsSlice: types.FsSlice{{Path: "metadata/labels", CreateIfNotPresent: true}}}, items})
	}
	if len(k.CommonAnnotations) > 0 {
		steps = append(steps, step{annotations.Filter{Annotations: k.CommonAnnotations,
			FsSlice: types.FsSlice{{Path: "metadata/annotations", CreateIfNotPresent: true}}}, items})
	}
	for _, img := range k.Images {
		steps = append(steps, step{imagetag.LegacyFilter{ImageTag: img}, items}, step{imagetag.Filter{ImageTag: img, FsSlice: slices.Clone(imageFieldSpecs)}, items})
	}
	for _, s := range steps {
		if _, err := s.filter.Filter(s.on); err != nil {
			return err
		}
	}
	return nil
}
