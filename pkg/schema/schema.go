// Package schema tells kustomize what it knows of built-in kinds only, for
// the MPIJob, PyTorchJob and TrainJob CRDs: their schema (without it a strategic-merge
// patch replaces the containers, volumes and env lists of such a job instead
// of merging them by name), the merge keys a hydrated patch carries from it,
// and their name references.
package schema

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/kustomize/kyaml/openapi"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// document is the OpenAPI v2 document the function merges with: the
// job kinds' definitions (written in schema_test.go) plus the Kubernetes
// definitions they and the core kinds reach. It is generated from kyaml's
// built-in schema by `go test ./pkg/schema -update` (TestDocumentIsCurrent
// keeps it current), so a run parses about 64 KB instead of kyaml's whole
// Kubernetes schema.
//
//go:embed crd-schema.json
var document []byte

// Document is the schema Register loads (the hydrated overlays carry the
// merge keys it gives, MarkMergeKeys, not the document).
func Document() []byte { return document }

var registerMu sync.Mutex

// Register makes Document kyaml's schema in this process, so merges treat an
// MPIJob as kustomize does given the hydrated overlay. kyaml's built-in
// Kubernetes schema is not loaded: the document covers the kinds mlops-fn
// merges. It is done again after anything (a test's reset) removed it.
func Register() {
	registerMu.Lock()
	defer registerMu.Unlock()
	openapi.SuppressBuiltInSchemaUse()
	if openapi.SchemaForResourceType(mpiJobType) != nil {
		return
	}
	defs, err := definitions(document)
	if err != nil {
		panic(fmt.Sprintf("mlops-fn's embedded schema does not load: %v", err))
	}
	openapi.AddDefinitions(defs)
}

var mpiJobType = yaml.TypeMeta{APIVersion: "kubeflow.org/v2beta1", Kind: "MPIJob"}

// definitions reads the document with encoding/json: kube-openapi's own
// decoder spends several milliseconds on it, a third of a run.
func definitions(doc []byte) (spec.Definitions, error) {
	var d struct {
		Definitions map[string]map[string]any `json:"definitions"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, err
	}
	defs := spec.Definitions{}
	for name, def := range d.Definitions {
		s, err := toSchema(def)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		defs[name] = s
	}
	return defs, nil
}

// toSchema converts the subset of OpenAPI v2 the document uses.
func toSchema(m map[string]any) (spec.Schema, error) {
	var s spec.Schema
	sub := func(v any) (*spec.Schema, error) {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("want an object, got %T", v)
		}
		inner, err := toSchema(obj)
		return &inner, err
	}
	for k, v := range m {
		var err error
		switch k {
		case "$ref":
			s.Ref, err = spec.NewRef(v.(string))
		case "type":
			s.Type = spec.StringOrArray{v.(string)}
		case "format":
			s.Format = v.(string)
		case "required":
			for _, r := range v.([]any) {
				s.Required = append(s.Required, r.(string))
			}
		case "properties":
			s.Properties = map[string]spec.Schema{}
			for name, pv := range v.(map[string]any) {
				var p *spec.Schema
				if p, err = sub(pv); err != nil {
					return s, fmt.Errorf("%s: %w", name, err)
				}
				s.Properties[name] = *p
			}
		case "additionalProperties":
			var p *spec.Schema
			p, err = sub(v)
			s.AdditionalProperties = &spec.SchemaOrBool{Allows: true, Schema: p}
		case "items":
			var p *spec.Schema
			p, err = sub(v)
			s.Items = &spec.SchemaOrArray{Schema: p}
		default:
			if !strings.HasPrefix(k, "x-") {
				return s, fmt.Errorf("keyword %q is not read here; teach toSchema", k)
			}
			s.AddExtension(k, v)
		}
		if err != nil {
			return s, err
		}
	}
	return s, nil
}
