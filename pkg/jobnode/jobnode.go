// SPDX-License-Identifier: Apache-2.0

// Package jobnode is a job as YAML: typed objects and patches encoded the
// way kustomize and kubectl write them, nodes decoded back as JSON, and a job
// node's pod specs and containers found by the job kinds table.
package jobnode

import (
	"encoding/json"
	"maps"
	"slices"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
)

// Encode turns a typed object into YAML in the field order of its Go struct,
// without the empty noise the upstream types marshal (creationTimestamp: null,
// status: {}, resources: {}, template: {metadata: {}}).
func Encode(obj any) (*yaml.RNode, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	node, err := yaml.Parse(string(b))
	if err != nil {
		return nil, err
	}
	prune(node.YNode())
	return node, nil
}

// JSON is n as JSON, decoded from the node itself: kyaml's MarshalJSON
// writes the node out as YAML and parses that again first.
func JSON(n *yaml.RNode) ([]byte, error) {
	y := n.YNode()
	if y == nil {
		return []byte("null"), nil
	}
	if y.Kind == yaml.SequenceNode {
		var a []any
		if err := y.Decode(&a); err != nil {
			return nil, err
		}
		return json.Marshal(a)
	}
	m := map[string]any{}
	if err := y.Decode(&m); err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

// prune drops nulls and empty maps and lists, bottom-up, and turns JSON's flow
// style into block style. An empty emptyDir stays: it means "use the defaults".
func prune(n *yaml.Node) {
	n.Style = 0
	switch n.Kind {
	case yaml.MappingNode:
		kept := n.Content[:0]
		for i := 0; i < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			prune(v)
			if empty(v) && k.Value != "emptyDir" {
				continue
			}
			k.Style = 0
			kept = append(kept, k, v)
		}
		n.Content = kept
	case yaml.SequenceNode:
		for _, c := range n.Content {
			prune(c)
		}
	}
}

func empty(n *yaml.Node) bool {
	switch n.Kind {
	case yaml.MappingNode, yaml.SequenceNode:
		return len(n.Content) == 0
	case yaml.ScalarNode:
		return n.Tag == yaml.NodeTagNull
	}
	return false
}

// jobKindOf is n's row of the job kinds table, empty for another kind.
func jobKindOf(n *yaml.RNode) jobkind.Facts {
	k, _ := jobkind.ForKind(n.GetKind())
	return k
}

// PodSpecPaths lead from an object of kind to its pod specs, in role order.
func PodSpecPaths(kind string) [][]string {
	k, _ := jobkind.ForKind(kind)
	var out [][]string
	for _, s := range k.PodSpecs {
		out = append(out, s.Path)
	}
	return out
}

// PodSpecs returns the pod specs of an MPIJob, a Pod or a PyTorchJob, in role order.
func PodSpecs(n *yaml.RNode) []*yaml.RNode {
	var specs []*yaml.RNode
	for _, path := range PodSpecPaths(n.GetKind()) {
		if spec, err := n.Pipe(yaml.Lookup(path...)); err == nil && spec != nil {
			specs = append(specs, spec)
		}
	}
	return specs
}

// ContainerLists returns the containers of an MPIJob, a Pod or a PyTorchJob by role.
func ContainerLists(n *yaml.RNode) map[jobkind.Role][]*yaml.RNode {
	return lists(n, "containers")
}

// InitContainerLists returns their init containers (native sidecars among them) by role.
func InitContainerLists(n *yaml.RNode) map[jobkind.Role][]*yaml.RNode {
	return lists(n, "initContainers")
}

func lists(n *yaml.RNode, field string) map[jobkind.Role][]*yaml.RNode {
	out := map[jobkind.Role][]*yaml.RNode{}
	for _, s := range jobKindOf(n).PodSpecs {
		list, err := n.Pipe(yaml.Lookup(append(slices.Clone(s.Path), field)...))
		if err != nil || list == nil {
			continue
		}
		if elems, err := list.Elements(); err == nil {
			out[s.Role] = elems
		}
	}
	return out
}

// Containers are every container and init container of n, in role order.
func Containers(n *yaml.RNode) []*yaml.RNode {
	var all []*yaml.RNode
	for _, byRole := range []map[jobkind.Role][]*yaml.RNode{ContainerLists(n), InitContainerLists(n)} {
		for _, role := range slices.Sorted(maps.Keys(byRole)) {
			all = append(all, byRole[role]...)
		}
	}
	return all
}
