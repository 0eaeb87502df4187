// SPDX-License-Identifier: Apache-2.0

// Package jobnode is a job as YAML: typed objects and patches encoded the
// way kustomize and kubectl write them, nodes decoded back as JSON, and a job
// node's pod specs and containers found by the job kinds table.
package jobnode

import (
	"encoding/json"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/render"
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

// EncodePatch encodes a patch and writes its deletions (patch.Clear) as
// nulls, which a strategic merge (kyaml's and kustomize's) reads as "remove".
func EncodePatch(patch render.Patch) (*yaml.RNode, error) {
	n, err := Encode(patch.Object)
	if err != nil {
		return nil, err
	}
	d, k := patch.Clear, patch.Kind
	if program := k.ProgramPath; program != nil {
		if err := setNulls(n, d.Container, true, program...); err != nil {
			return nil, err
		}
		d.Container = nil
	}
	for _, spec := range PodSpecs(k, n) {
		if err := setNulls(spec, d.PodSecurity, true, "securityContext"); err != nil {
			return nil, err
		}
	}
	// The container deletions follow what the patch sets in the training
	// container alone; the others keep their own program.
	for _, list := range ContainerLists(k, n) {
		if len(list) > render.TrainingContainerIndex {
			if err := setNulls(list[render.TrainingContainerIndex], d.Container, true); err != nil {
				return nil, err
			}
		}
	}
	for _, c := range Containers(k, n) {
		// Where the patch sets the container's securityContext, before the
		// forced deletions make one.
		if err := setNulls(c, d.ContainerIDs, false, "securityContext"); err != nil {
			return nil, err
		}
		if err := setNulls(c, d.ContainerSecurity, true, "securityContext"); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// setNulls appends key: null for each key to the map at path below n; that map
// is made if need be when force is set, else only filled where the patch sets
// something already (a map of nulls alone leaves `{}` in a target without it).
func setNulls(n *yaml.RNode, keys []string, force bool, path ...string) error {
	if len(keys) == 0 {
		return nil
	}
	var m *yaml.RNode
	var err error
	if force {
		m, err = n.Pipe(yaml.LookupCreate(yaml.MappingNode, path...))
	} else {
		m, err = n.Pipe(yaml.Lookup(path...))
	}
	if err != nil || m == nil || len(m.YNode().Content) == 0 && !force {
		return err
	}
	for _, k := range keys {
		if m.Field(k) != nil {
			continue // the patch sets it: its value replaces the target's
		}
		// Appended by hand: kyaml's SetField reads a null value as "delete the field".
		m.YNode().Content = append(m.YNode().Content,
			&yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: k},
			&yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagNull, Value: "null"})
	}
	return nil
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

// Containers are every container and init container of n, a job of kind k,
// in role order.
func Containers(k jobkind.Facts, n *yaml.RNode) []*yaml.RNode {
	var all []*yaml.RNode
	for _, byRole := range []map[jobkind.Role][]*yaml.RNode{ContainerLists(k, n), InitContainerLists(k, n)} {
		for _, role := range slices.Sorted(maps.Keys(byRole)) {
			all = append(all, byRole[role]...)
		}
	}
	return all
}

// Narrower is a kind that checks a target for what it needs, after the
// checks every kind shares, and completes the plan narrowed to it; config
// names the job spec in messages.
type Narrower interface {
	Narrow(target *yaml.RNode, q *render.Plan, config string) error
}

// AfterPatcher is a kind that edits its job once the patch is applied.
type AfterPatcher interface {
	AfterPatch(job *yaml.RNode, q *render.Plan) error
}

// JSONPatcher is a kind whose AfterPatch edit hydrate writes as a JSON patch
// applied after the strategic merge: its file and operations (nil: none).
type JSONPatcher interface {
	JSONPatch(q *render.Plan) (file string, ops []any)
}

// Templated is a kind that lists every pod spec of its jobs, decoded into its
// upstream Go type (an operator's replica types mlops-fn does not fill
// among them): what Pod Security admission evaluates.
type Templated interface {
	PodTemplates(obj any) []PodTemplate
}

// PodTemplate is one pod spec of a decoded job: its field path, metadata and
// spec, whether mlops-fn fills it, and its role then.
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

// OwnEnvEntry: e is what mlops-fn writes for key name, its value taken from the env ConfigMap.
func OwnEnvEntry(e *yaml.RNode, name string, q *render.Plan) bool {
	return q.NamesEnv(Scalar(e, "valueFrom", "configMapKeyRef", "name")) && Scalar(e, "valueFrom", "configMapKeyRef", "key") == name && Scalar(e, "value") == ""
}
