// SPDX-License-Identifier: Apache-2.0

package processor

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/jobnode"
	"github.com/mlops-fn/mlops-fn/pkg/jobspec"
	"github.com/mlops-fn/mlops-fn/pkg/kinds"
)

// Check decodes a patched object strictly into its upstream Go type and runs its operator's checks, refusing what the
// API server and the operators would, with its field. It returns the typed object (nil for a kind that is no job's).
func Check(n *yaml.RNode) (any, field.ErrorList) {
	k, obj, errs := decode(n)
	if obj == nil {
		return nil, errs
	}
	return obj, k.Validate(obj)
}

// decode reads n strictly into its kind's upstream Go type: no object if that fails or n is no job.
func decode(n *yaml.RNode) (jobkind.Facts, any, field.ErrorList) {
	k, ok := kinds.All.ForKind(n.GetKind())
	if !ok {
		return k, nil, nil
	}
	b, err := jobnode.JSON(n)
	if err != nil {
		return k, nil, field.ErrorList{field.InternalError(nil, err)}
	}
	obj := k.New()
	accepted := "the fields of " + k.APIVersion + " " + k.Kind
	strict, err := sigsjson.UnmarshalStrict(b, obj)
	if err != nil {
		strict = []error{err}
	}
	var errs field.ErrorList
	for _, e := range strict {
		errs = append(errs, jobspec.DecodeError(e, accepted))
	}
	if len(errs) > 0 {
		return k, nil, errs
	}
	return k, obj, nil
}

// CheckMetadata refuses a metadata not shaped as Kubernetes' (kyaml's accessors index it as maps of strings).
func CheckMetadata(n *yaml.RNode) error {
	meta := n.Field("metadata")
	if meta == nil || meta.Value.IsNil() {
		return nil
	}
	if meta.Value.YNode().Kind != yaml.MappingNode {
		return fmt.Errorf("metadata is a YAML %s; accepted: a map (name, namespace, labels, annotations)", jobspec.NodeKind(meta.Value))
	}
	for _, f := range []string{"name", "namespace", "labels", "annotations"} {
		v := meta.Value.Field(f)
		want, accepted := yaml.ScalarNode, "a string"
		if f == "labels" || f == "annotations" {
			want, accepted = yaml.MappingNode, "a map of strings"
		}
		if v == nil || v.Value.IsNil() {
			continue
		}
		if v.Value.YNode().Kind != want {
			return fmt.Errorf("metadata.%s is a YAML %s; accepted: %s", f, jobspec.NodeKind(v.Value), accepted)
		}
		content := v.Value.YNode().Content // a scalar's is empty
		for i := 1; i < len(content); i += 2 {
			if content[i].Kind != yaml.ScalarNode {
				return fmt.Errorf("metadata.%s.%s is a YAML %s; accepted: a string", f, content[i-1].Value, jobspec.NodeKind(yaml.NewRNode(content[i])))
			}
		}
	}
	return nil
}

// maxExpansion bounds the nodes expanding an item's aliases may add: a pod template's hundreds, not a bomb's.
const maxExpansion = 100_000

// ExpandAliases returns n with its YAML aliases and merge keys (<<) expanded, in a copy (n itself if it holds none),
// as kustomize reads its inputs: kpt and a standalone run pass them as written, which kyaml's merges do not follow.
func ExpandAliases(n *yaml.RNode) (*yaml.RNode, error) {
	written, aliased := writtenSize(n.YNode())
	if !aliased {
		return n, nil
	}
	limit := written + maxExpansion
	size := expandedSize(n.YNode(), map[*yaml.Node]int{}, limit+1)
	if size == recursive {
		return nil, fmt.Errorf("a YAML alias in it names a node that holds the alias, so expanding it never ends (kustomize drops such a merge key silently); " +
			"accepted: aliases of nodes outside them")
	}
	if size > limit {
		return nil, fmt.Errorf("its YAML aliases expand to more than %d nodes beyond the %d written (mlops-fn reads aliases expanded, "+
			"as kustomize does, up to that bound); accepted: aliases that add at most %d nodes", maxExpansion, written, maxExpansion)
	}
	out := yaml.NewRNode(copyTree(n.YNode(), map[*yaml.Node]*yaml.Node{}))
	if err := out.DeAnchor(); err != nil {
		return nil, fmt.Errorf("expanding its YAML aliases and merge keys: %v; "+
			"accepted: merge keys (<<) whose values are maps, aliases of maps, or lists of them", err)
	}
	return out, nil
}

// writtenSize counts the nodes as written, an alias as one, and tells whether any is an alias or a merge key.
func writtenSize(y *yaml.Node) (int, bool) {
	size, aliased := 1, y.Kind == yaml.AliasNode || y.Tag == yaml.MergeTag
	for _, c := range y.Content {
		s, a := writtenSize(c)
		size, aliased = size+s, aliased || a
	}
	return size, aliased
}

// recursive is expandedSize's count of a node that an alias inside it names.
const recursive = -1

// expandedSize counts the nodes with every alias expanded, capped at limit, each node's count kept (an alias bomb
// names the same node many times); recursive when an alias names a node it is in.
func expandedSize(y *yaml.Node, seen map[*yaml.Node]int, limit int) int {
	if y.Kind == yaml.AliasNode && y.Alias != nil {
		return expandedSize(y.Alias, seen, limit)
	}
	if s, ok := seen[y]; ok {
		return s // recursive while y is still being counted
	}
	seen[y] = recursive
	size := 1
	for _, c := range y.Content {
		s := expandedSize(c, seen, limit)
		if s == recursive {
			return recursive
		}
		size = min(size+s, limit)
	}
	seen[y] = size
	return size
}

// copyTree copies y with its aliases pointing into the copy: kyaml's Copy keeps the original's, which DeAnchor changes.
func copyTree(y *yaml.Node, copies map[*yaml.Node]*yaml.Node) *yaml.Node {
	if c, ok := copies[y]; ok {
		return c
	}
	c := *y
	copies[y] = &c
	c.Content = make([]*yaml.Node, len(y.Content))
	for i, child := range y.Content {
		c.Content[i] = copyTree(child, copies)
	}
	if y.Alias != nil {
		c.Alias = copyTree(y.Alias, copies)
	}
	return &c
}
