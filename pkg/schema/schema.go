// Package schema tells kustomize what it knows of built-in kinds only, for
// the MPIJob, PyTorchJob and TrainJob CRDs: their schema (without it a strategic-merge
// patch replaces the containers, volumes and env lists of such a job instead
// of merging them by name), the merge keys a hydrated patch carries from it,
// and their name references.
package schema

import (
	_ "embed"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/openapi"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// document is the OpenAPI v2 document the function merges with: the
// job kinds' definitions (written in schema_test.go) plus the Kubernetes
// definitions they and the core kinds reach. It is generated from kyaml's
// built-in schema by `go test ./pkg/schema -update` (TestDocumentIsCurrent
// keeps it current), and from it definitions.go, its definitions as Go
// values: a run builds those instead of decoding its 64 KB (an eighth of the
// instructions), and never parses kyaml's whole Kubernetes schema.
//
//go:embed crd-schema.json
var document []byte

// Document is the schema Register loads, as JSON (the hydrated overlays
// carry the merge keys it gives, MarkMergeKeys, not the document).
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
	openapi.AddDefinitions(definitions())
}

var mpiJobType = yaml.TypeMeta{APIVersion: "kubeflow.org/v2beta1", Kind: "MPIJob"}
