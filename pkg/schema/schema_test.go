// SPDX-License-Identifier: Apache-2.0

package schema

import (
	"bytes"
	"encoding/json"
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
	"sigs.k8s.io/kustomize/kyaml/yaml/merge2"

	"github.com/mlops-fn/mlops-fn/pkg/kinds"
	"github.com/mlops-fn/mlops-fn/pkg/schema/internal/gen"
)

// TestDefinitionsAreCurrent: definitions.go is what the generator writes now
// from the pinned CRD manifests and kyaml's built-in schema (after a module
// upgrade or a change to the generator, `go generate ./pkg/schema`), and its
// Go values are what kube-openapi decodes, down to the parsed references
// (reflect.DeepEqual, not only the same JSON).
func TestDefinitionsAreCurrent(t *testing.T) {
	var builtin spec.Definitions
	_ = WithBuiltIn(func() error {
		builtin = openapi.Schema().Definitions
		return nil
	})
	want, err := gen.Definitions(builtin)
	if err != nil {
		t.Fatal(err)
	}
	wantGo, err := gen.Source(want)
	if err != nil {
		t.Fatal(err)
	}
	gotGo, err := os.ReadFile("definitions.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(wantGo, gotGo) {
		t.Errorf("definitions.go is stale; run `go generate ./pkg/schema` and read the diff:\n%s", cmp.Diff(string(wantGo), string(gotGo)))
	}
	if got := definitions(); !reflect.DeepEqual(got, want) {
		gotJSON, _ := json.MarshalIndent(got, "", " ")
		wantJSON, _ := json.MarshalIndent(want, "", " ")
		t.Errorf("definitions differ (-kube-openapi +definitions.go):\n%s", cmp.Diff(string(wantJSON), string(gotJSON)))
	}
}

// TestForGivesMergeKeys: the schemas For gives say that every pod spec of
// every job kind merges its containers by name, and the lists the CRDs key
// (x-kubernetes-list-map-keys) merge by their keys.
func TestForGivesMergeKeys(t *testing.T) {
	type list struct {
		path []string
		key  string
	}
	want := map[yaml.TypeMeta][]list{}
	for _, k := range kinds.All {
		tm := yaml.TypeMeta{APIVersion: k.APIVersion, Kind: k.Kind}
		for _, s := range k.ReferencePodSpecs {
			want[tm] = append(want[tm], list{append(strings.Split(s, "/"), "containers"), "name"})
		}
	}
	trainJob := yaml.TypeMeta{APIVersion: "trainer.kubeflow.org/v1alpha1", Kind: "TrainJob"}
	want[trainJob] = append(want[trainJob],
		list{[]string{"spec", "trainer", "env"}, "name"},
		list{[]string{"spec", "runtimePatches"}, "manager"},
		list{[]string{"spec", "runtimePatches", "trainingRuntimeSpec", "template", "spec", "replicatedJobs"}, "name"})
	for tm, lists := range want {
		for _, l := range lists {
			s := For(tm)
			for _, f := range l.path {
				if s == nil {
					break
				}
				if e := s.Elements(); e != nil {
					s = e
				}
				s = s.Field(f)
			}
			if s == nil {
				t.Errorf("%s %v: no schema", tm.Kind, l.path)
				continue
			}
			if _, key := s.PatchStrategyAndKey(); key != l.key {
				t.Errorf("%s %v: merge key %q, want %s", tm.Kind, l.path, key, l.key)
			}
		}
	}
}

// TestSchemasHoldNoReference: no schema For gives holds a $ref, which
// kyaml's Field and Elements would resolve against its global schema, and
// each kind of the definitions has one.
func TestSchemasHoldNoReference(t *testing.T) {
	var walk func(path string, s spec.Schema)
	walk = func(path string, s spec.Schema) {
		if s.Ref.String() != "" {
			t.Errorf("%s: $ref %s", path, s.Ref.String())
		}
		for k, p := range s.Properties {
			walk(path+"."+k, p)
		}
		if s.Items != nil && s.Items.Schema != nil {
			walk(path+"[]", *s.Items.Schema)
		}
		if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
			walk(path+".*", *s.AdditionalProperties.Schema)
		}
	}
	for _, k := range kinds.All {
		tm := yaml.TypeMeta{APIVersion: k.APIVersion, Kind: k.Kind}
		s := For(tm)
		if s == nil {
			t.Errorf("%s: no schema", k.Kind)
			continue
		}
		walk(k.Kind, *s.Schema)
	}
}

// TestMergeReadsNoGlobal: Merge merges an MPIJob's containers by name from
// mlops-fn's definitions while kyaml's global holds a document that knows
// no kind, under which kyaml's merge2.Merge replaces the list.
func TestMergeReadsNoGlobal(t *testing.T) {
	target := `apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: j}
spec: {mpiReplicaSpecs: {Worker: {template: {spec: {containers: [{name: a, image: a:1}]}}}}}
`
	patch := `apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: j}
spec: {mpiReplicaSpecs: {Worker: {template: {spec: {containers: [{name: b, image: b:1}]}}}}}
`
	names := func(n *yaml.RNode) []string {
		list, err := n.Pipe(yaml.Lookup("spec", "mpiReplicaSpecs", "Worker", "template", "spec", "containers"))
		if err != nil || list == nil {
			t.Fatalf("no containers: %v", err)
		}
		var out []string
		for _, c := range list.Content() {
			out = append(out, yaml.NewRNode(c).Field("name").Value.YNode().Value)
		}
		return out
	}
	var merged, global *yaml.RNode
	_ = WithBuiltIn(func() error {
		noKinds := []byte(`{"swagger": "2.0", "info": {"title": "no kinds", "version": "v1"}, "paths": {}, "definitions": {}}`)
		if err := openapi.SetSchema(nil, noKinds, true); err != nil {
			t.Fatal(err)
		}
		var err error
		if merged, err = Merge(yaml.MustParse(patch), yaml.MustParse(target), yaml.MergeOptions{}); err != nil {
			t.Fatal(err)
		}
		if global, err = merge2.Merge(yaml.MustParse(patch), yaml.MustParse(target), yaml.MergeOptions{}); err != nil {
			t.Fatal(err)
		}
		return nil
	})
	if got := names(global); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("under the document that knows no kind, merge2.Merge gives containers %v, want [b]: the test sets no global", got)
	}
	if got := names(merged); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("Merge gives containers %v, want [a b] (merged by name)", got)
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
	if err := yaml.Unmarshal(NameReferences(nil, kinds.All...), &ours); err != nil {
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
			for _, k := range kinds.All {
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
