package processor

import (
	"encoding/json"

	"sigs.k8s.io/kustomize/kyaml/yaml"
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
