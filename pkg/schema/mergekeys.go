// SPDX-License-Identifier: Apache-2.0

package schema

import (
	"cmp"
	"encoding/json"
	"maps"
	"slices"

	"sigs.k8s.io/kustomize/kyaml/openapi"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// mergeExtensions are the schema fields kyaml's strategic merge reads to merge a list by key, not replace it.
var mergeExtensions = []string{"x-kubernetes-patch-strategy", "x-kubernetes-patch-merge-key", "x-kubernetes-list-map-keys"}

// MarkMergeKeys writes, on each list of the patch n that merges by key, the list's merge key as a comment
// kyaml reads for that field, e.g.
//
//	containers: # {"x-kubernetes-patch-merge-key":"name","x-kubernetes-patch-strategy":"merge"}
//
// kustomize then merges the patch into a CRD's pod templates by name with no openapi: entry: the one OpenAPI
// document of a build stays kustomize's own (or the user's), which cannot change these patches.
func MarkMergeKeys(n *yaml.RNode) error {
	meta, err := n.GetMeta()
	if err != nil {
		return err
	}
	s := For(meta.TypeMeta)
	if s == nil {
		return nil
	}
	walkSchema(nil, n.YNode(), s, func(key, value *yaml.Node, field *openapi.ResourceSchema) {
		if key == nil || value.Kind != yaml.SequenceNode {
			return
		}
		ext := maps.Clone(field.Schema.Extensions)
		maps.DeleteFunc(ext, func(e string, _ any) bool { return !slices.Contains(mergeExtensions, e) })
		if _, merges := ext[mergeExtensions[0]]; merges {
			b, e := json.Marshal(ext)
			if err = cmp.Or(err, e); e == nil {
				key.LineComment = "# " + string(b)
			}
		}
	})
	return err
}
