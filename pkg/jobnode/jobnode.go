// SPDX-License-Identifier: Apache-2.0

// Package jobnode is a job as YAML: typed objects and patches encoded the way kustomize and kubectl write
// them, nodes decoded back as JSON, and a job node's pod specs and containers found by the job kinds table.
package jobnode

import (
	"encoding/json"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
)

// Encode turns a typed object into YAML in its Go struct's field order, without the empty noise upstream types marshal
// (creationTimestamp: null, resources: {}, template: {metadata: {}}) nor a status (a JobSet's marshals restarts: 0).
func Encode(obj any) (*yaml.RNode, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	node, err := yaml.Parse(string(b))
	if err != nil {
		return nil, err
	}
	_ = node.PipeE(yaml.Clear("status"))
	prune(node.YNode())
	return node, nil
}

// JSON is n as JSON, decoded from the node itself (kyaml's MarshalJSON writes YAML and parses it again).
func JSON(n *yaml.RNode) ([]byte, error) {
	y := n.YNode()
	if y == nil {
		return []byte("null"), nil
	}
	var v any = &map[string]any{}
	if y.Kind == yaml.SequenceNode {
		v = &[]any{}
	}
	if err := y.Decode(v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// prune drops nulls and empty maps and lists, bottom-up, and turns JSON's flow style into block style. An
// empty emptyDir stays: it means "use the defaults".
func prune(n *yaml.Node) {
	n.Style = 0
	switch n.Kind {
	case yaml.MappingNode:
		kept := n.Content[:0]
		for i := 0; i < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			prune(v)
			empty := v.Kind == yaml.ScalarNode && v.Tag == yaml.NodeTagNull || (v.Kind == yaml.MappingNode || v.Kind == yaml.SequenceNode) && len(v.Content) == 0
			if empty && k.Value != "emptyDir" {
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

// PodSpecs returns the pod specs of n, a job of kind k, in role order.
func PodSpecs(k jobkind.Facts, n *yaml.RNode) []*yaml.RNode {
	var specs []*yaml.RNode
	for _, s := range k.PodSpecs {
		if spec, err := n.Pipe(yaml.Lookup(s.Path...)); err == nil && spec != nil {
			specs = append(specs, spec)
		}
	}
	return specs
}

// ContainerLists returns the containers of n, a job of kind k, by role.
func ContainerLists(k jobkind.Facts, n *yaml.RNode) map[jobkind.Role][]*yaml.RNode {
	return lists(k, n, "containers")
}

// InitContainerLists returns their init containers (native sidecars among them) by role.
func InitContainerLists(k jobkind.Facts, n *yaml.RNode) map[jobkind.Role][]*yaml.RNode {
	return lists(k, n, "initContainers")
}

func lists(k jobkind.Facts, n *yaml.RNode, field string) map[jobkind.Role][]*yaml.RNode {
	out := map[jobkind.Role][]*yaml.RNode{}
	for _, s := range k.PodSpecs {
		list, _ := n.Pipe(yaml.Lookup(append(slices.Clone(s.Path), field)...))
		if elems, err := list.Elements(); err == nil && list != nil {
			out[s.Role] = elems
		}
	}
	return out
}

// Containers are every container and init container of n, a job of kind k, in role order.
func Containers(k jobkind.Facts, n *yaml.RNode) []*yaml.RNode {
	var all []*yaml.RNode
	for _, byRole := range []map[jobkind.Role][]*yaml.RNode{ContainerLists(k, n), InitContainerLists(k, n)} {
		for _, role := range slices.Sorted(maps.Keys(byRole)) {
			all = append(all, byRole[role]...)
		}
	}
	return all
}

// Templated is a kind listing every pod spec of its decoded jobs, unfilled ones too: what Pod Security admission sees.
type Templated interface{ PodTemplates(obj any) []PodTemplate }

// PodTemplate is one pod spec of a decoded job: its field path, metadata, spec, and whether (as which role) mlops-fn fills it.
type PodTemplate struct {
	Path   string
	Meta   metav1.ObjectMeta
	Spec   corev1.PodSpec
	Filled bool
	Role   jobkind.Role
}

// Scalar is the scalar at path in n, "" when there is none.
func Scalar(n *yaml.RNode, path ...string) string {
	v, err := n.Pipe(yaml.Lookup(path...))
	if err != nil || v == nil || v.YNode().Kind != yaml.ScalarNode {
		return ""
	}
	return v.YNode().Value
}
