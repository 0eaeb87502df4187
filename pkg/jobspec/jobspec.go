// SPDX-License-Identifier: Apache-2.0

// Package jobspec reads the job spec (kind MLOpsJob): one YAML document, decoded strictly, its errors pinned
// to their field and line.
package jobspec

import (
	"fmt"
	"maps"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/jobnode"
)

// Decode reads the function config strictly: an unknown or misspelt field is an error, not a line ignored.
func Decode(config *yaml.RNode) (*api.MLOpsJob, field.ErrorList) {
	want := fmt.Sprintf("%s (apiVersion %s)", jobkind.WithArticle(api.Kind), api.APIVersion)
	if config == nil || config.IsNilOrEmpty() {
		return nil, field.ErrorList{omitted(field.ErrorTypeRequired, "", "the job spec is missing or empty; accepted: "+want)}
	}
	if config.YNode().Kind != yaml.MappingNode {
		return nil, field.ErrorList{omitted(field.ErrorTypeInvalid, "", "is a YAML "+NodeKind(config)+"; accepted: "+want+", a YAML map")}
	}
	var errs field.ErrorList
	if v := config.GetApiVersion(); v != api.APIVersion {
		errs = append(errs, field.Invalid(field.NewPath("apiVersion"), v, "accepted: "+api.APIVersion+" (mlops-fn's job spec)"))
	}
	if k := config.GetKind(); k != api.Kind {
		errs = append(errs, field.Invalid(field.NewPath("kind"), k, "accepted: "+api.Kind+" (mlops-fn's job spec)"))
	}
	if len(errs) > 0 {
		return nil, errs
	}
	// encoding/json turns a null into "" in a list or a map of strings.
	if p, _ := firstNode(config.YNode(), nil, "", "", func(y *yaml.Node, _, _ string) bool {
		return y.Kind == yaml.ScalarNode && y.Tag == yaml.NodeTagNull
	}); p != nil {
		return nil, field.ErrorList{field.Invalid(p, "null", "is null (an empty YAML value); accepted: a value, or leave the entry out")}
	}
	b, err := jobnode.JSON(config)
	if err != nil {
		return nil, field.ErrorList{omitted(field.ErrorTypeInvalid, "", "does not read as YAML: "+oneLine(err.Error()))}
	}
	job := &api.MLOpsJob{}
	strict, err := sigsjson.UnmarshalStrict(b, job)
	if err != nil {
		// The first limits, requests or sizeLimit value that is not a quantity: encoding/json's error names neither.
		if p, y := firstNode(config.YNode(), nil, "", "", func(y *yaml.Node, key, parent string) bool {
			if y.Kind != yaml.ScalarNode || key != "sizeLimit" && parent != "limits" && parent != "requests" {
				return false
			}
			_, err := resource.ParseQuantity(y.Value)
			return err != nil
		}); p != nil {
			return nil, field.ErrorList{field.Invalid(p, y.Value, quantityDetail)}
		}
		return nil, field.ErrorList{pinpoint(config, err, DecodeError(err, specFields))}
	}
	for _, e := range strict {
		errs = append(errs, DecodeError(e, specFields))
	}
	// The runners' bookkeeping annotations describe the config file, not the job.
	maps.DeleteFunc(job.Metadata.Annotations, func(k, _ string) bool {
		return strings.Contains(k, "config.kubernetes.io/") || strings.Contains(k, "config.k8s.io/")
	})
	if len(job.Metadata.Annotations) == 0 {
		job.Metadata.Annotations = nil
	}
	return job, errs
}

const quantityDetail = "is not a Kubernetes quantity; accepted: a Kubernetes quantity such as 500m, 2 or 4Gi (suffixes are case-sensitive: Gi, not gi)"

// firstNode is the first node below y, parents first, that is wanted by its key and its parent's key ("" for
// a list's item): its path and node.
func firstNode(y *yaml.Node, p *field.Path, key, parent string, wanted func(y *yaml.Node, key, parent string) bool) (*field.Path, *yaml.Node) {
	if p != nil && wanted(y, key, parent) {
		return p, y
	}
	for i, c := range y.Content {
		switch {
		case y.Kind == yaml.MappingNode && i%2 == 1:
			k := y.Content[i-1].Value
			if found, n := firstNode(c, p.Child(k), k, key, wanted); found != nil {
				return found, n
			}
		case y.Kind == yaml.SequenceNode:
			if found, n := firstNode(c, p.Index(i), "", "", wanted); found != nil {
				return found, n
			}
		}
	}
	return nil, nil
}

// unknownField and wrongType read the field path out of encoding/json's errors.
var (
	unknownField = regexp.MustCompile(`^(?:json: )?unknown field "(.*)"$`)
	wrongType    = regexp.MustCompile(`cannot unmarshal (.+?) into Go struct field [A-Za-z0-9]+\.(\S+) of type (\S+)`)
)

// renamed are v1alpha1's fields before it took Kubernetes' shapes, and what replaced them, which errors name.
var renamed = map[string]string{
	"spec.mode":                     "spec.jobKind, the kind the job becomes (MPIJob, multi-node, by default; mlops-fn --help lists every kind)",
	"spec.resources.cpu":            "spec.resources.limits.cpu, as in a container",
	"spec.resources.memory":         "spec.resources.limits.memory, as in a container",
	"spec.launcherResources.cpu":    "spec.launcherResources.limits.cpu, as in a container",
	"spec.launcherResources.memory": "spec.launcherResources.limits.memory, as in a container",
}

// specFields is what DecodeError says a job spec accepts.
var specFields = fmt.Sprintf("the fields of %s %s, listed in docs/job-spec.md", api.APIVersion, api.Kind)

// DecodeError turns a decoding error into one about the field it names; accepted says which fields exist.
func DecodeError(err error, accepted string) *field.Error {
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if m := unknownField.FindStringSubmatch(msg); m != nil {
		if now, ok := renamed[m[1]]; ok {
			accepted = now
		}
		return omitted(field.ErrorTypeInvalid, m[1], "unknown field; accepted: "+accepted)
	}
	if m := wrongType.FindStringSubmatch(msg); m != nil {
		return omitted(field.ErrorTypeTypeInvalid, m[2], fmt.Sprintf("is %s; accepted: %s", yamlWords(m[1]), yamlWords(m[3])))
	}
	if strings.Contains(msg, "quantities must match") {
		return omitted(field.ErrorTypeInvalid, "spec", "a resource quantity (cpu, memory or sizeLimit) "+quantityDetail)
	}
	return omitted(field.ErrorTypeInvalid, "spec", oneLine(msg))
}

// omitted is an error of type t about path that names no value.
func omitted(t field.ErrorType, path, detail string) *field.Error {
	return &field.Error{Type: t, Field: path, BadValue: field.OmitValueType{}, Detail: detail}
}

// yamlWords names a JSON or Go type as a YAML author knows it.
func yamlWords(t string) string {
	switch {
	case strings.HasPrefix(t, "number"):
		return strings.TrimSpace("a number " + strings.TrimSpace(strings.TrimPrefix(t, "number")))
	case t == "string":
		return "a string"
	case t == "bool":
		return "true or false"
	case t == "array" || strings.HasPrefix(t, "[]"):
		return "a list"
	case t == "v1.LocalObjectReference":
		return "a map naming the object: {name: regcred}"
	case t == "object" || strings.HasPrefix(t, "map[") || strings.Contains(t, "."):
		return "a map"
	case strings.HasPrefix(t, "int") || strings.HasPrefix(t, "uint"):
		return "a whole number that fits " + t
	}
	return "a " + t
}

// pinpoint adds to a type error what encoding/json's message leaves out: the list index or map key of the
// value, and the value (args: [--lr, 0.1] gives spec.args[1], 0.1, not just spec.args).
func pinpoint(config *yaml.RNode, err error, e *field.Error) *field.Error {
	m := wrongType.FindStringSubmatch(err.Error())
	if m == nil {
		return e
	}
	found, _, _ := strings.Cut(m[1], " ") // "number 2.5" is a number
	p, n := locate(config, strings.Split(m[2], "."), nil, found)
	if n == nil {
		return e
	}
	if n.Kind != yaml.ScalarNode {
		return omitted(field.ErrorTypeTypeInvalid, p.String(), e.Detail)
	}
	detail := e.Detail
	if m[3] == "string" {
		detail += fmt.Sprintf(" (quote it: %q)", n.Value)
	}
	return field.Invalid(p, n.Value, detail)
}

// JSONType is the JSON type a YAML node becomes, as encoding/json names it.
func JSONType(n *yaml.Node) string {
	switch {
	case n.Kind == yaml.SequenceNode:
		return "array"
	case n.Kind == yaml.MappingNode:
		return "object"
	case n.Tag == yaml.NodeTagInt || n.Tag == yaml.NodeTagFloat:
		return "number"
	case n.Tag == yaml.NodeTagBool:
		return "bool"
	case n.Tag == yaml.NodeTagNull:
		return "null"
	}
	return "string"
}

// locate finds along a Go field path (spec.env.value), through every list item and map value on the way, the
// first value of the JSON type the decoder found there: its path and node. At the path's end an item or value
// of that type (a list's element, a nodeSelector's value) comes before the node itself.
func locate(n *yaml.RNode, segs []string, p *field.Path, found string) (*field.Path, *yaml.Node) {
	y := n.YNode()
	switch {
	case len(segs) == 0:
		for i, c := range y.Content {
			switch {
			case y.Kind == yaml.SequenceNode && JSONType(c) == found:
				return p.Index(i), c
			case y.Kind == yaml.MappingNode && i%2 == 1 && JSONType(c) == found:
				return p.Key(y.Content[i-1].Value), c
			}
		}
		if y.Kind != yaml.AliasNode && JSONType(y) == found {
			return p, y
		}
	case y.Kind == yaml.SequenceNode:
		for i, c := range y.Content {
			if q, bad := locate(yaml.NewRNode(c), segs, p.Index(i), found); bad != nil {
				return q, bad
			}
		}
	case y.Kind == yaml.MappingNode:
		if f := n.Field(segs[0]); f != nil {
			return locate(f.Value, segs[1:], p.Child(segs[0]), found)
		}
	}
	return nil, nil
}

// NodeKind names a YAML node's kind for messages: map, list or scalar.
func NodeKind(n *yaml.RNode) string {
	switch n.YNode().Kind {
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "scalar"
	}
	return "map"
}

// oneLine folds a multi-line library error into one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
