// SPDX-License-Identifier: Apache-2.0

// Package schema tells kustomize what it knows of built-in kinds only, for the job kinds' CRDs: their schema
// (without it a strategic-merge patch replaces a job's containers, volumes and env lists instead of merging
// them by name), the merge keys a hydrated patch carries, their name references; and the job spec's JSON
// Schema, for editors (JobSchemaFile).
package schema

import (
	"cmp"
	"strings"
	"sync"

	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/kustomize/kyaml/kio/filters"
	"sigs.k8s.io/kustomize/kyaml/openapi"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/kustomize/kyaml/yaml/merge2"
	"sigs.k8s.io/kustomize/kyaml/yaml/walk"
)

// definitions.go holds the job kinds' definitions and the Kubernetes ones they reach as Go values: a run
// never decodes JSON nor parses kyaml's whole Kubernetes schema. TestDefinitionsAreCurrent keeps it current.
//
//go:generate go run generate.go

// schemas are the definitions' schemas by type, handed to kyaml's walker (walk.Walker.Schema), never to its
// OpenAPI global, which only kustomize's builds set (WithBuiltIn): the function's merge and a build run side
// by side. Each reference is inlined as For first asks for a type: kyaml's ResourceSchema.Field and Elements
// resolve a reference against its global schema (TestSchemasHoldNoReference).
var schemas = sync.OnceValue(func() *inliner {
	return newInliner(definitions())
})

// inliner inlines the definitions' references, each definition once.
type inliner struct {
	mu      sync.Mutex
	defs    spec.Definitions
	types   map[yaml.TypeMeta]string // a type's definition's name
	inlined map[string]spec.Schema
}

// newInliner indexes defs by type as kyaml's AddDefinitions does.
func newInliner(defs spec.Definitions) *inliner {
	in := &inliner{defs: defs, types: map[yaml.TypeMeta]string{}, inlined: map[string]spec.Schema{}}
	for name, d := range defs {
		gvks, _ := d.Extensions["x-kubernetes-group-version-kind"].([]any)
		for _, g := range gvks {
			m, _ := g.(map[string]any)
			group, _ := m["group"].(string)
			version, _ := m["version"].(string)
			kind, _ := m["kind"].(string)
			in.types[yaml.TypeMeta{APIVersion: runtimeschema.GroupVersion{Group: group, Version: version}.String(), Kind: kind}] = name
		}
	}
	return in
}

// of is the schema of type t, inlined, nil for a type defs lack.
func (in *inliner) of(t yaml.TypeMeta) *openapi.ResourceSchema {
	in.mu.Lock()
	defer in.mu.Unlock()
	name, ok := in.types[t]
	if !ok {
		return nil
	}
	s := in.inline(spec.Schema{SchemaProps: spec.SchemaProps{Ref: spec.MustCreateRef("#/definitions/" + name)}})
	return &openapi.ResourceSchema{Schema: &s}
}

// inline is s with its references replaced; the definitions hold no cycle (a Pod's are a tree).
func (in *inliner) inline(s spec.Schema) spec.Schema {
	if ref := s.Ref.String(); ref != "" {
		name := strings.TrimPrefix(ref, "#/definitions/")
		d, ok := in.inlined[name]
		if !ok {
			d = in.inline(in.defs[name])
			in.inlined[name] = d
		}
		return d
	}
	if len(s.Properties) > 0 {
		props := make(map[string]spec.Schema, len(s.Properties))
		for k, p := range s.Properties {
			props[k] = in.inline(p)
		}
		s.Properties = props
	}
	if s.Items != nil && s.Items.Schema != nil {
		items := in.inline(*s.Items.Schema)
		s.Items = &spec.SchemaOrArray{Schema: &items}
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		values := in.inline(*s.AdditionalProperties.Schema)
		s.AdditionalProperties = &spec.SchemaOrBool{Allows: s.AdditionalProperties.Allows, Schema: &values}
	}
	return s
}

// For is the schema of the objects of type t, nil for a type the definitions lack.
func For(t yaml.TypeMeta) *openapi.ResourceSchema {
	skipBuiltIn()
	return schemas().of(t)
}

// none is the schema of a type the definitions lack: no field known, no list merged by key, no global lookup.
var none = &openapi.ResourceSchema{Schema: &spec.Schema{}}

// Merge is merge2.Merge from mlops-fn's definitions of dest's type (else patch's), not kyaml's global.
func Merge(patch, dest *yaml.RNode, opts yaml.MergeOptions) (*yaml.RNode, error) {
	s := cmp.Or(For(typeOf(dest)), For(typeOf(patch)), none)
	return walk.Walker{Sources: []*yaml.RNode{dest, patch}, Visitor: merge2.Merger{}, MergeOptions: opts, Schema: s}.Walk()
}

// Format is kyaml's FormatFilter{UseSchema: true} on n from mlops-fn's definitions: conventional field order,
// and the values of string fields that would read as another type quoted.
func Format(n *yaml.RNode) error {
	if _, err := (filters.FormatFilter{}).Filter([]*yaml.RNode{n}); err != nil {
		return err
	}
	if s := For(typeOf(n)); s != nil && n.GetAnnotations()[filters.FmtAnnotation] != filters.FmtStrategyNone {
		walkSchema(nil, n.YNode(), s, func(_, n *yaml.Node, s *openapi.ResourceSchema) {
			if n.Kind == yaml.ScalarNode {
				yaml.FormatNonStringStyle(n, *s.Schema)
			}
		})
	}
	return nil
}

func typeOf(n *yaml.RNode) yaml.TypeMeta {
	return yaml.TypeMeta{APIVersion: n.GetApiVersion(), Kind: n.GetKind()}
}

// walkSchema calls f on n, of schema s, and on each node below it that s knows, with its schema and the key
// of the field it is the value of (nil for a list's item and for n), as kyaml's formatter walks.
func walkSchema(key, n *yaml.Node, s *openapi.ResourceSchema, f func(key, n *yaml.Node, s *openapi.ResourceSchema)) {
	f(key, n, s)
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if field := s.Field(n.Content[i].Value); field != nil {
				walkSchema(n.Content[i], n.Content[i+1], field, f)
			}
		}
	case yaml.SequenceNode:
		if e := s.Elements(); e != nil {
			for _, c := range n.Content {
				walkSchema(nil, c, e, f)
			}
		}
	}
}

// The schema kyaml's global holds, as far as mu's holders know.
const (
	unknown    = iota
	builtIn    // kyaml's own, as a new process starts with it
	noBuiltIns // kyaml's own for kustomizations alone: no build ran
)

var (
	// mu serializes kustomize's builds, which set kyaml's OpenAPI schema, a global of its openapi package,
	// from a kustomization's openapi: field (and keep a document an earlier build set, openapi.SetSchema).
	mu      sync.Mutex
	current = unknown
)

// skipBuiltIn keeps kyaml from parsing its built-in Kubernetes schema (140 ms) in a process that has run no
// build: its walker, given a schema, still initializes the global at the first field it looks up.
var skipBuiltIn = sync.OnceFunc(func() {
	mu.Lock()
	defer mu.Unlock()
	if current == unknown {
		openapi.ResetOpenAPI()
		openapi.SuppressBuiltInSchemaUse()
		current = noBuiltIns
	}
})

// WithBuiltIn runs f, a kustomize build (which may set a schema from an openapi: field), from kyaml's built-in
// schema, kept parsed for the next build (parsing was 46% of pkg/hydrate's test CPU); kyaml adds an openapi:
// document to what it holds, so f, having set one over a kept schema, runs again afresh.
func WithBuiltIn(f func() error) error {
	mu.Lock()
	defer mu.Unlock()
	fresh := current != builtIn
	if fresh {
		openapi.ResetOpenAPI()
		current = builtIn
	}
	err := f()
	if openapi.GetSchemaVersion() == openapi.DefaultOpenAPI {
		return err
	}
	current = unknown
	if fresh {
		return err
	}
	openapi.ResetOpenAPI()
	return f()
}
