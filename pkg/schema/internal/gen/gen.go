// SPDX-License-Identifier: Apache-2.0

// Package gen writes, for `go generate ./pkg/schema`, pkg/schema's definitions.go (Definitions, Source) and
// the job spec's JSON Schema (JobSchema).
package gen

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/kube-openapi/pkg/schemamutation"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/yaml"
)

// crds are the job kinds' CustomResourceDefinitions, each in its module.
var crds = []struct{ module, file string }{
	{"github.com/kubeflow/mpi-operator", "manifests/base/kubeflow.org_mpijobs.yaml"},
	{"github.com/kubeflow/training-operator", "manifests/base/crds/kubeflow.org_pytorchjobs.yaml"},
	{"github.com/kubeflow/trainer/v2", "manifests/base/crds/trainer.kubeflow.org_trainjobs.yaml"},
	{"sigs.k8s.io/jobset", "config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml"},
}

// coreKinds are the built-in kinds a training overlay holds: the definitions replace kyaml's built-in schema,
// so these keep their merge keys. An overlay that patches a Deployment or a Job would need it added here.
var coreKinds = []string{
	"io.k8s.api.core.v1.Pod",
	"io.k8s.api.core.v1.ConfigMap",
	"io.k8s.api.core.v1.Secret",
	"io.k8s.api.core.v1.Service",
	"io.k8s.api.core.v1.ServiceAccount",
	"io.k8s.api.core.v1.PersistentVolumeClaim",
}

// Definitions are the job kinds' definitions, from their CRDs, and every one of builtin (kyaml's built-in
// schema) they and coreKinds reach, as kube-openapi decodes them from JSON: what kyaml would read.
func Definitions(builtin spec.Definitions) (decoded spec.Definitions, err error) {
	defer catch(&err)
	defs := spec.Definitions{}
	for _, c := range crds {
		addCRD(defs, c.module, c.file)
	}
	var visit func(name string)
	visit = func(name string) {
		if _, done := defs[name]; done {
			return
		}
		def, ok := builtin[name]
		if !ok {
			fail("kyaml's built-in schema has no definition %s", name)
		}
		defs[name] = withoutDescriptions(def)
		for _, ref := range refs(def) {
			visit(ref)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(defs)) {
		for _, ref := range refs(defs[name]) {
			visit(ref)
		}
	}
	for _, name := range coreKinds {
		visit(name)
	}
	b, err := json.Marshal(defs)
	check(err)
	return decoded, json.Unmarshal(b, &decoded)
}

// failure is an error of the generators, panicked through their recursions and returned by catch.
type failure struct{ error }

func fail(format string, args ...any) { panic(failure{fmt.Errorf(format, args...)}) }

func check(err error) {
	if err != nil {
		panic(failure{err})
	}
}

// catch, deferred, returns a failure as the function's error.
func catch(err *error) {
	if r := recover(); r != nil {
		f, ok := r.(failure)
		if !ok {
			panic(r)
		}
		*err = f.error
	}
}

// crd is the part of a CustomResourceDefinition read here.
type crd struct {
	Spec struct {
		Group    string
		Names    struct{ Kind string }
		Versions []struct {
			Name   string
			Served bool
			Schema struct {
				OpenAPIV3Schema spec.Schema `json:"openAPIV3Schema"`
			}
		}
	}
}

// addCRD adds the definition of each served version of the CRD in file of module, named as the API server
// names it (org.kubeflow.v2beta1.MPIJob).
func addCRD(defs spec.Definitions, module, file string) {
	c := readCRD(module, file)
	group := strings.Split(c.Spec.Group, ".")
	slices.Reverse(group)
	for _, v := range c.Spec.Versions {
		if !v.Served {
			continue
		}
		s := v.Schema.OpenAPIV3Schema
		def := spec.Schema{
			VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-group-version-kind": []any{
				map[string]any{"group": c.Spec.Group, "version": v.Name, "kind": c.Spec.Names.Kind},
			}}},
			SchemaProps: spec.SchemaProps{
				Type:       spec.StringOrArray{"object"},
				Properties: map[string]spec.Schema{"metadata": ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")},
			},
		}
		// The spec only: a patch leaves the status to the operator.
		for _, field := range []string{"apiVersion", "kind", "spec"} {
			if p, ok := s.Properties[field]; ok {
				def.Properties[field] = merging(p)
			}
		}
		defs[strings.Join(group, ".")+"."+v.Name+"."+c.Spec.Names.Kind] = def
	}
}

// readCRD reads the CRD in file of module, from the module cache.
func readCRD(module, file string) (c crd) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module).Output()
	if err != nil {
		fail("go list -m %s: %w", module, err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		fail("%s %s: not in the module cache; run `go mod download %s`", module, file, module)
	}
	raw, err := os.ReadFile(filepath.Join(dir, file))
	check(err)
	check(yaml.Unmarshal(raw, &c))
	return c
}

// merging is what kyaml's merges read of s, part of a CRD's schema: types, fields and merge keys, a CRD's
// server-side apply keys (x-kubernetes-list-type map) made the patch strategy kyaml reads. A pod template
// becomes the built-in PodTemplateSpec, whose lists merge as kustomize merges a Pod's.
func merging(s spec.Schema) spec.Schema {
	return *(&schemamutation.Walker{RefCallback: schemamutation.RefCallbackNoop, SchemaCallback: func(s *spec.Schema) *spec.Schema {
		// A CRD's inlined PodTemplateSpec: a template whose spec holds containers.
		_, containers := s.Properties["spec"].Properties["containers"]
		if _, metadata := s.Properties["metadata"]; containers && metadata {
			return new(ref("io.k8s.api.core.v1.PodTemplateSpec"))
		}
		out := spec.Schema{SchemaProps: spec.SchemaProps{Properties: s.Properties}}
		if len(s.Type) == 1 {
			out.Type = s.Type
		}
		if a := s.AdditionalProperties; a != nil && a.Schema != nil {
			out.AdditionalProperties = &spec.SchemaOrBool{Allows: true, Schema: a.Schema}
		}
		if it := s.Items; it != nil && it.Schema != nil {
			out.Items = &spec.SchemaOrArray{Schema: it.Schema}
		}
		if keys, ok := s.Extensions["x-kubernetes-list-map-keys"].([]any); ok && len(keys) > 0 && s.Extensions["x-kubernetes-list-type"] == "map" {
			out.Extensions = spec.Extensions{"x-kubernetes-patch-strategy": "merge", "x-kubernetes-patch-merge-key": keys[0]}
			if len(keys) > 1 {
				out.Extensions["x-kubernetes-list-map-keys"] = keys
			}
		}
		return &out
	}}).WalkSchema(&s)
}

func ref(name string) spec.Schema {
	return spec.Schema{SchemaProps: spec.SchemaProps{Ref: spec.MustCreateRef("#/definitions/" + name)}}
}

// withoutDescriptions drops the prose, most of the bytes: merges read only types, references and the
// x-kubernetes-patch extensions.
func withoutDescriptions(s spec.Schema) spec.Schema {
	return *(&schemamutation.Walker{RefCallback: schemamutation.RefCallbackNoop, SchemaCallback: func(s *spec.Schema) *spec.Schema {
		out := *s
		out.Description = ""
		return &out
	}}).WalkSchema(&s)
}

func refs(s spec.Schema) []string {
	var out []string
	walkSchemas(s, func(s spec.Schema) {
		if r := s.Ref.String(); r != "" {
			out = append(out, strings.TrimPrefix(r, "#/definitions/"))
		}
	})
	slices.Sort(out) // the walk is in map order: sorted, a failure names the same definition each run
	return out
}
