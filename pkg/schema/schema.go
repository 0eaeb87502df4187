// Package schema tells kustomize what it knows of built-in kinds only, for
// the MPIJob, PyTorchJob and TrainJob CRDs: their schema (without it a strategic-merge
// patch replaces the containers, volumes and env lists of such a job instead
// of merging them by name), the merge keys a hydrated patch carries from it,
// and their name references.
package schema

import (
	"sync"

	"sigs.k8s.io/kustomize/kyaml/openapi"
)

// definitions.go holds the job kinds' definitions, read from the CRD
// manifests in the operators' modules go.mod pins, and the Kubernetes
// definitions they and the core kinds reach from kyaml's built-in schema, as
// Go values: a run builds them instead of decoding JSON, and never parses
// kyaml's whole Kubernetes schema. TestDefinitionsAreCurrent keeps it current.
//
//go:generate go run generate.go

// mu serializes every use of kyaml's OpenAPI schema, a global of its openapi
// package that both kustomize and mlops-fn set: kustomize from a
// kustomization's openapi: field (and it keeps a document an earlier build
// set, openapi.SetSchema), mlops-fn to its definitions with the built-in
// schema off. Each use starts from a reset and resets after, as kyaml's
// TemplateProcessor.Filter does with its AdditionalSchemas.
var mu sync.Mutex

// With runs f with mlops-fn's definitions as kyaml's schema, in place of
// kyaml's built-in one: merges in f treat an MPIJob's lists as kustomize
// does given the hydrated overlay, and a Pod's as kustomize does.
func With(f func() error) error {
	mu.Lock()
	defer mu.Unlock()
	openapi.ResetOpenAPI()
	defer openapi.ResetOpenAPI()
	openapi.SuppressBuiltInSchemaUse()
	openapi.AddDefinitions(definitions())
	return f()
}

// WithBuiltIn runs f from kyaml's built-in schema, as a new kubectl process
// starts: a kustomize build, which may set its own from an openapi: field.
func WithBuiltIn(f func() error) error {
	mu.Lock()
	defer mu.Unlock()
	openapi.ResetOpenAPI()
	defer openapi.ResetOpenAPI()
	return f()
}
