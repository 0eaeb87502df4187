// Package schema gives kustomize's merge the shape of the MPIJob CRD. Without
// it a strategic-merge patch replaces the containers, volumes and env lists of
// an MPIJob instead of merging them by name, as it does for built-in kinds.
package schema

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/kustomize/kyaml/openapi"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// mpiJob describes the path from an MPIJob down to its pod templates; the
// merge keys below that come from the Kubernetes definitions it references.
const mpiJob = `{
  "definitions": {
    "org.kubeflow.v2beta1.MPIJob": {
      "type": "object",
      "x-kubernetes-group-version-kind": [{"group": "kubeflow.org", "kind": "MPIJob", "version": "v2beta1"}],
      "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"},
        "spec": {"$ref": "#/definitions/org.kubeflow.v2beta1.MPIJobSpec"}
      }
    },
    "org.kubeflow.v2beta1.MPIJobSpec": {
      "type": "object",
      "properties": {
        "mpiReplicaSpecs": {"type": "object", "additionalProperties": {"$ref": "#/definitions/org.kubeflow.v2beta1.ReplicaSpec"}}
      }
    },
    "org.kubeflow.v2beta1.ReplicaSpec": {
      "type": "object",
      "properties": {
        "template": {"$ref": "#/definitions/io.k8s.api.core.v1.PodTemplateSpec"}
      }
    }
  }
}`

var registerMu sync.Mutex

// Register adds the MPIJob definitions to kyaml's global schema, beside the
// built-in Kubernetes ones, so merges in this process treat MPIJob as kustomize
// does when given Document. It registers again after kyaml's schema was reset
// or replaced (a kustomization's openapi: field does that).
func Register() {
	registerMu.Lock()
	defer registerMu.Unlock()
	if openapi.SchemaForResourceType(yaml.TypeMeta{APIVersion: "kubeflow.org/v2beta1", Kind: "MPIJob"}) != nil {
		return
	}
	if err := openapi.AddSchema([]byte(mpiJob)); err != nil {
		panic(fmt.Sprintf("mlops-fn's MPIJob schema does not parse: %v", err))
	}
}

// documentRoots are the kinds Document describes: kustomize uses the document
// instead of its built-in schema, so the core kinds a training overlay holds
// keep their merge keys. An overlay that also patches a Deployment or a Job
// needs their definitions added here.
var documentRoots = []string{
	"org.kubeflow.v2beta1.MPIJob",
	"io.k8s.api.core.v1.Pod",
	"io.k8s.api.core.v1.ConfigMap",
	"io.k8s.api.core.v1.Secret",
	"io.k8s.api.core.v1.Service",
	"io.k8s.api.core.v1.ServiceAccount",
	"io.k8s.api.core.v1.PersistentVolumeClaim",
}

// Document is a self-contained OpenAPI v2 document for a kustomization's
// `openapi: {path: …}` field: kustomize then uses it instead of its built-in
// schema, so it holds MPIJob, the common built-in kinds, and every definition
// they reach.
func Document() ([]byte, error) {
	Register()
	all := openapi.Schema().Definitions
	keep := spec.Definitions{}
	var visit func(name string) error
	visit = func(name string) error {
		if _, done := keep[name]; done {
			return nil
		}
		def, ok := all[name]
		if !ok {
			return fmt.Errorf("schema: definition %s is missing", name)
		}
		keep[name] = def
		for _, ref := range refs(def) {
			if err := visit(ref); err != nil {
				return err
			}
		}
		return nil
	}
	for _, root := range documentRoots {
		if err := visit(root); err != nil {
			return nil, err
		}
	}
	doc := spec.Swagger{SwaggerProps: spec.SwaggerProps{
		Swagger:     "2.0",
		Info:        &spec.Info{InfoProps: spec.InfoProps{Title: "Kubeflow MPIJob for kustomize (written by mlops-fn)", Version: "v2beta1"}},
		Paths:       &spec.Paths{Paths: map[string]spec.PathItem{}},
		Definitions: keep,
	}}
	// Re-encode through a map so keys come out sorted: same input, same bytes.
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	var sorted map[string]any
	if err := json.Unmarshal(raw, &sorted); err != nil {
		return nil, err
	}
	out, err := json.MarshalIndent(sorted, "", " ")
	return append(out, '\n'), err
}

// refs lists the definitions a schema refers to, anywhere inside it.
func refs(s spec.Schema) []string {
	var out []string
	var walk func(s *spec.Schema)
	walk = func(s *spec.Schema) {
		if s == nil {
			return
		}
		if r := s.Ref.String(); r != "" {
			out = append(out, strings.TrimPrefix(r, "#/definitions/"))
		}
		for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
			p := s.Properties[k]
			walk(&p)
		}
		if s.AdditionalProperties != nil {
			walk(s.AdditionalProperties.Schema)
		}
		if s.Items != nil {
			walk(s.Items.Schema)
			for i := range s.Items.Schemas {
				walk(&s.Items.Schemas[i])
			}
		}
		for i := range s.AllOf {
			walk(&s.AllOf[i])
		}
	}
	walk(&s)
	return out
}
