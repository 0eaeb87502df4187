// SPDX-License-Identifier: Apache-2.0

package processor

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// maxExpansion bounds the nodes that expanding one item's aliases may add:
// an aliased pod template adds hundreds, an alias bomb billions.
const maxExpansion = 100_000

// ExpandAliases returns n with its YAML aliases and merge keys (<<) expanded,
// as kustomize reads its inputs, or n itself when it holds none. kpt and a
// standalone run hand them over as written, and kyaml's accessors and merges
// do not follow them: a Worker template aliasing the Launcher's lost its
// image and command. n is not changed.
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
		return nil, fmt.Errorf("its YAML aliases expand to more than %d nodes beyond the %d written (mlops-fn reads aliases expanded, as kustomize does, up to that bound); accepted: aliases that add at most %d nodes", maxExpansion, written, maxExpansion)
	}
	out := yaml.NewRNode(copyTree(n.YNode(), map[*yaml.Node]*yaml.Node{}))
	if err := out.DeAnchor(); err != nil {
		return nil, fmt.Errorf("expanding its YAML aliases and merge keys: %v; "+
			"accepted: merge keys (<<) whose values are maps, aliases of maps, or lists of them", err)
	}
	return out, nil
}

// writtenSize counts the nodes as written, an alias as one, and tells
// whether any is an alias or a merge key.
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

// expandedSize counts the nodes with every alias replaced by what it names,
// each node's count kept (an alias bomb names the same node many times) and
// capped at limit; recursive when an alias names a node it is inside.
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

// copyTree copies y with its aliases pointing into the copy: kyaml's Copy
// keeps them pointing at the original, which DeAnchor would then change.
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
