package schema

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/kustomize/kyaml/openapi"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
)

var update = flag.Bool("update", false, "rewrite crd-schema.json from kyaml's built-in schema, and definitions.go from it")

// mpiJob describes the path from an MPIJob (and a PyTorchJob, whose replica
// specs have the same template field) down to its pod templates; the merge
// keys below that come from the Kubernetes definitions it references.
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
    "org.kubeflow.v1.PyTorchJob": {
      "type": "object",
      "x-kubernetes-group-version-kind": [{"group": "kubeflow.org", "kind": "PyTorchJob", "version": "v1"}],
      "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"},
        "spec": {"$ref": "#/definitions/org.kubeflow.v1.PyTorchJobSpec"}
      }
    },
    "org.kubeflow.v1.PyTorchJobSpec": {
      "type": "object",
      "properties": {
        "pytorchReplicaSpecs": {"type": "object", "additionalProperties": {"$ref": "#/definitions/org.kubeflow.v2beta1.ReplicaSpec"}}
      }
    },
    "org.kubeflow.v2beta1.ReplicaSpec": {
      "type": "object",
      "properties": {
        "template": {"$ref": "#/definitions/io.k8s.api.core.v1.PodTemplateSpec"}
      }
    },
    "org.kubeflow.trainer.v1alpha1.TrainJob": {
      "type": "object",
      "x-kubernetes-group-version-kind": [{"group": "trainer.kubeflow.org", "kind": "TrainJob", "version": "v1alpha1"}],
      "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"},
        "spec": {"$ref": "#/definitions/org.kubeflow.trainer.v1alpha1.TrainJobSpec"}
      }
    },
    "org.kubeflow.trainer.v1alpha1.TrainJobSpec": {
      "type": "object",
      "properties": {
        "trainer": {
          "type": "object",
          "properties": {
            "env": {"type": "array", "items": {"$ref": "#/definitions/io.k8s.api.core.v1.EnvVar"},
              "x-kubernetes-patch-merge-key": "name", "x-kubernetes-patch-strategy": "merge"}
          }
        },
        "runtimePatches": {"type": "array", "items": {"$ref": "#/definitions/org.kubeflow.trainer.v1alpha1.RuntimePatch"},
          "x-kubernetes-patch-merge-key": "manager", "x-kubernetes-patch-strategy": "merge"}
      }
    },
    "org.kubeflow.trainer.v1alpha1.RuntimePatch": {
      "type": "object",
      "properties": {
        "trainingRuntimeSpec": {"type": "object", "properties": {
          "template": {"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
              "replicatedJobs": {"type": "array", "items": {"$ref": "#/definitions/org.kubeflow.trainer.v1alpha1.ReplicatedJobPatch"},
                "x-kubernetes-patch-merge-key": "name", "x-kubernetes-patch-strategy": "merge"}
            }}
          }}
        }}
      }
    },
    "org.kubeflow.trainer.v1alpha1.ReplicatedJobPatch": {
      "type": "object",
      "properties": {
        "template": {"type": "object", "properties": {
          "spec": {"type": "object", "properties": {
            "template": {"$ref": "#/definitions/io.k8s.api.core.v1.PodTemplateSpec"}
          }}
        }}
      }
    }
  }
}`

// documentRoots are the kinds the document describes: kustomize uses it
// instead of its built-in schema, so the core kinds a training overlay holds
// keep their merge keys. An overlay that also patches a Deployment or a Job
// needs their definitions added here.
var documentRoots = []string{
	"org.kubeflow.v2beta1.MPIJob",
	"org.kubeflow.v1.PyTorchJob",
	"org.kubeflow.trainer.v1alpha1.TrainJob",
	"io.k8s.api.core.v1.Pod",
	"io.k8s.api.core.v1.ConfigMap",
	"io.k8s.api.core.v1.Secret",
	"io.k8s.api.core.v1.Service",
	"io.k8s.api.core.v1.ServiceAccount",
	"io.k8s.api.core.v1.PersistentVolumeClaim",
}

// generate builds the document: the MPIJob definitions and every definition of
// kyaml's built-in Kubernetes schema the roots reach, keys sorted.
func generate() ([]byte, error) {
	openapi.ResetOpenAPI()
	defer openapi.ResetOpenAPI()
	if err := openapi.AddSchema([]byte(mpiJob)); err != nil {
		return nil, err
	}
	all := openapi.Schema().Definitions
	keep := spec.Definitions{}
	var visit func(name string) error
	visit = func(name string) error {
		if _, done := keep[name]; done {
			return nil
		}
		def, ok := all[name]
		if !ok {
			return fmt.Errorf("definition %s is missing", name)
		}
		keep[name] = withoutDescriptions(def)
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
		Info:        &spec.Info{InfoProps: spec.InfoProps{Title: "Kubeflow MPIJob, PyTorchJob and TrainJob for kustomize (written by mlops-fn)", Version: "v2beta1"}},
		Paths:       &spec.Paths{Paths: map[string]spec.PathItem{}},
		Definitions: keep,
	}}
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

// withoutDescriptions drops the prose, most of the bytes: merges read only
// types, references and the x-kubernetes-patch extensions.
func withoutDescriptions(s spec.Schema) spec.Schema {
	s.Description = ""
	if s.Properties != nil {
		props := map[string]spec.Schema{}
		for k, p := range s.Properties {
			props[k] = withoutDescriptions(p)
		}
		s.Properties = props
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		inner := withoutDescriptions(*s.AdditionalProperties.Schema)
		s.AdditionalProperties = &spec.SchemaOrBool{Allows: s.AdditionalProperties.Allows, Schema: &inner}
	}
	if s.Items != nil && s.Items.Schema != nil {
		inner := withoutDescriptions(*s.Items.Schema)
		s.Items = &spec.SchemaOrArray{Schema: &inner}
	}
	return s
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

// TestDocumentIsCurrent: the embedded document is what kyaml's schema gives
// now, and definitions.go is the document's; `go test ./pkg/schema -update`
// rewrites both after a kyaml upgrade or a change to the generators.
func TestDocumentIsCurrent(t *testing.T) {
	want, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	wantGo, err := goDefinitions(want)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("crd-schema.json", want, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("definitions.go", wantGo, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(want, Document()) {
		t.Errorf("crd-schema.json is stale; run `go test ./pkg/schema -update` and read the diff:\n%s", cmp.Diff(string(want), string(Document())))
	}
	gotGo, err := os.ReadFile("definitions.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(wantGo, gotGo) {
		t.Errorf("definitions.go is stale; run `go test ./pkg/schema -update` and read the diff:\n%s", cmp.Diff(string(wantGo), string(gotGo)))
	}
}

// TestRegisterGivesMergeKeys: after Register, kyaml knows the MPIJob's
// containers merge by name, and Pod's still do.
func TestRegisterGivesMergeKeys(t *testing.T) {
	openapi.ResetOpenAPI()
	Register()
	for _, c := range []struct {
		apiVersion, kind string
		path             []string
	}{
		{"kubeflow.org/v2beta1", "MPIJob", []string{"spec", "mpiReplicaSpecs", "Worker", "template", "spec", "containers"}},
		{"v1", "Pod", []string{"spec", "containers"}},
	} {
		s := openapi.SchemaForResourceType(yamlType(c.apiVersion, c.kind))
		if s == nil {
			t.Fatalf("%s: no schema", c.kind)
		}
		if _, key := s.Lookup(c.path...).PatchStrategyAndKey(); key != "name" {
			t.Errorf("%s %v: merge key %q, want name", c.kind, c.path, key)
		}
	}
}

func yamlType(apiVersion, kind string) yaml.TypeMeta {
	return yaml.TypeMeta{APIVersion: apiVersion, Kind: kind}
}

// TestDefinitionsMatchKubeOpenAPI: the generated definitions give kyaml
// exactly what kube-openapi's decoder gives for the document, down to the
// parsed references (reflect.DeepEqual, not only the same JSON).
func TestDefinitionsMatchKubeOpenAPI(t *testing.T) {
	var want spec.Swagger
	if err := want.UnmarshalJSON(Document()); err != nil {
		t.Fatal(err)
	}
	got := definitions()
	if !reflect.DeepEqual(got, want.Definitions) {
		gotJSON, _ := json.MarshalIndent(got, "", " ")
		wantJSON, _ := json.MarshalIndent(want.Definitions, "", " ")
		t.Errorf("definitions differ (-kube-openapi +definitions.go):\n%s", cmp.Diff(string(wantJSON), string(gotJSON)))
	}
}

// nameReferenceConfig is the part of a kustomize configuration read here.
type nameReferenceConfig struct {
	NameReference []struct {
		Kind       string `yaml:"kind"`
		FieldSpecs []struct {
			Kind string `yaml:"kind"`
			Path string `yaml:"path"`
		} `yaml:"fieldSpecs"`
	} `yaml:"nameReference"`
}

// TestNameReferencesCoverKustomizesPodFields: every field kustomize's own
// name references follow in a Pod is followed in each CRD pod spec too. The
// list is read from the pinned kustomize module's source (an internal package).
func TestNameReferencesCoverKustomizesPodFields(t *testing.T) {
	dir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/kustomize/api").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	src, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(dir)), "internal/konfig/builtinpluginconsts/namereference.go"))
	if err != nil {
		t.Fatal(err)
	}
	_, text, _ := strings.Cut(string(src), "nameReferenceFieldSpecs = `")
	text, _, _ = strings.Cut(text, "`")
	var builtin, ours nameReferenceConfig
	if err := yaml.Unmarshal([]byte(text), &builtin); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(NameReferences(), &ours); err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, ref := range ours.NameReference {
		for _, fs := range ref.FieldSpecs {
			have[ref.Kind+" "+fs.Kind+" "+fs.Path] = true
		}
	}
	checked := 0
	for _, ref := range builtin.NameReference {
		for _, fs := range ref.FieldSpecs {
			field, inPodSpec := strings.CutPrefix(fs.Path, "spec/")
			if fs.Kind != "Pod" || !inPodSpec {
				continue
			}
			for _, k := range jobkind.Kinds {
				for _, s := range k.ReferencePodSpecs {
					checked++
					if !have[ref.Kind+" "+k.Kind+" "+s+"/"+field] {
						t.Errorf("%s: kustomize follows a Pod's %s; the name references miss %s %s/%s", ref.Kind, fs.Path, k.Kind, s, field)
					}
				}
			}
		}
	}
	if checked < 40 {
		t.Fatalf("checked %d fields: has kustomize's configuration changed shape?", checked)
	}
}

// TestMarkMergeKeys: the lists that merge by key carry their key, in the
// comment kyaml reads as the field's schema; the lists kustomize replaces
// (a command, envFrom, capabilities) carry none.
func TestMarkMergeKeys(t *testing.T) {
	n := yaml.MustParse(`apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: j
spec:
  mpiReplicaSpecs:
    Worker:
      template:
        spec:
          containers:
          - name: c
            command: [sleep]
            envFrom:
            - configMapRef: {name: e}
            env:
            - {name: A, value: "1"}
            volumeMounts:
            - {name: v, mountPath: /v}
            securityContext:
              capabilities:
                drop: [ALL]
          volumes:
          - name: v
`)
	if err := MarkMergeKeys(n); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	var walk func(*yaml.Node)
	walk = func(y *yaml.Node) {
		for i, c := range y.Content {
			if y.Kind == yaml.MappingNode && i%2 == 0 && c.LineComment != "" {
				got[c.Value] = c.LineComment
			}
			walk(c)
		}
	}
	walk(n.YNode())
	want := map[string]string{
		"containers":   `# {"x-kubernetes-patch-merge-key":"name","x-kubernetes-patch-strategy":"merge"}`,
		"env":          `# {"x-kubernetes-patch-merge-key":"name","x-kubernetes-patch-strategy":"merge"}`,
		"volumeMounts": `# {"x-kubernetes-patch-merge-key":"mountPath","x-kubernetes-patch-strategy":"merge"}`,
		"volumes":      `# {"x-kubernetes-patch-merge-key":"name","x-kubernetes-patch-strategy":"merge,retainKeys"}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("merge-key comments (-want +got):\n%s", diff)
	}
}
