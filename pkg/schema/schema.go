// SPDX-License-Identifier: Apache-2.0

// Package schema tells kustomize what it knows of built-in kinds only, for
// the MPIJob, PyTorchJob and TrainJob CRDs: their schema (without it a strategic-merge
// patch replaces the containers, volumes and env lists of such a job instead
// of merging them by name), the merge keys a hydrated patch carries from it,
// and their name references. It also generates the job spec's JSON Schema,
// for editors (JobSchemaFile).
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

// The schema kyaml's global holds, as far as mu's holders know.
const (
	unknown = iota
	builtIn // kyaml's own, as a new process starts with it
	ours    // mlops-fn's definitions, kyaml's built-in schema off
)

var (
	// mu serializes every use of kyaml's OpenAPI schema, a global of its
	// openapi package that both kustomize and mlops-fn set: kustomize from
	// a kustomization's openapi: field (and it keeps a document an earlier
	// build set, openapi.SetSchema), mlops-fn to its definitions.
	mu      sync.Mutex
	current = unknown
)

// With runs f with mlops-fn's definitions as kyaml's schema, in place of
// kyaml's built-in one: merges in f treat an MPIJob's lists as kustomize
// does given the hydrated overlay, and a Pod's as kustomize does.
func With(f func() error) error {
	mu.Lock()
	defer mu.Unlock()
	if current != ours {
		openapi.ResetOpenAPI()
		openapi.SuppressBuiltInSchemaUse()
		openapi.AddDefinitions(definitions())
		current = ours
	}
	return f()
}

// WithBuiltIn runs f from kyaml's built-in schema, as a new kubectl process
// starts: a kustomize build, which may set its own from an openapi: field.
// The built-in schema, parsed, is kept for the next build: parsing it was
// 46% of pkg/hydrate's test CPU. kyaml adds an openapi: document to what it
// has parsed, so f, having set one over a kept schema, runs again afresh.
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
