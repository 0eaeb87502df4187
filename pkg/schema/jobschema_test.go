// SPDX-License-Identifier: Apache-2.0

package schema_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/mlops-fn/mlops-fn/pkg/jobnode"
	"github.com/mlops-fn/mlops-fn/pkg/jobspec"
	"github.com/mlops-fn/mlops-fn/pkg/kinds"
	"github.com/mlops-fn/mlops-fn/pkg/scaffold"
	"github.com/mlops-fn/mlops-fn/pkg/schema"
	"github.com/mlops-fn/mlops-fn/pkg/schema/internal/gen"
)

// repo is the repository's root, seen from this package.
const repo = "../.."

// TestJobSchemaIsCurrent: the committed JSON Schema is what the generator
// writes now from pkg/api/v1alpha1 (after a change to its types or their
// doc comments, `go generate ./pkg/schema`).
func TestJobSchemaIsCurrent(t *testing.T) {
	want, err := gen.JobSchema()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(repo, schema.JobSchemaFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s is stale; run `go generate ./pkg/schema` and read the diff:\n%s", schema.JobSchemaFile, cmp.Diff(string(want), string(got)))
	}
}

// jobSchema is the committed schema, compiled by a draft-07 validator,
// which checks it against the draft's metaschema first.
func jobSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repo, schema.JobSchemaFile))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(schema.JobSchemaFile, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(schema.JobSchemaFile)
	if err != nil {
		t.Fatalf("%s does not compile as a JSON Schema: %v", schema.JobSchemaFile, err)
	}
	if s.DraftVersion != 7 {
		t.Errorf("%s is of draft %d; yaml-language-server reads draft-07", schema.JobSchemaFile, s.DraftVersion)
	}
	return s
}

// verdict is what mlops-fn and the schema say of one job spec.
type verdict struct {
	// parsed: the text is one YAML document, which an editor validates.
	parsed bool
	// decodeErrs: mlops-fn refuses its shape (an unknown field, a wrong
	// type, a null); validateErrs: it refuses its values.
	decodeErrs, validateErrs field.ErrorList
	// schemaRefused are the fields the schema refuses, as mlops-fn names them.
	schemaRefused []string
}

func judge(t *testing.T, s *jsonschema.Schema, name string, text []byte) verdict {
	t.Helper()
	node, err := jobspec.Parse(name, text)
	if err != nil {
		return verdict{}
	}
	b, err := jobnode.JSON(node)
	if err != nil {
		return verdict{}
	}
	if node.YNode().Kind == yaml.MappingNode && node.GetKind() == "ConfigMap" && node.GetApiVersion() == "v1" {
		// A function config that names the job spec's file (docs/runners.md): not one.
		return verdict{}
	}
	v := verdict{parsed: true}
	job, errs := jobspec.Decode(node)
	if v.decodeErrs = errs; job != nil && len(errs) == 0 {
		kinds.Default(job)
		v.validateErrs = kinds.Validate(job)
	}
	instance, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var ve *jsonschema.ValidationError
	if err := s.Validate(instance); errors.As(err, &ve) {
		v.schemaRefused = leaves(ve)
	} else if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v
}

// leaves are the fields a validation error's causes are about, named as
// mlops-fn's errors name them (spec.volumes[0].mountPath): a missing or an
// unknown field by its own name.
func leaves(e *jsonschema.ValidationError) []string {
	if len(e.Causes) > 0 {
		var out []string
		for _, c := range e.Causes {
			out = append(out, leaves(c)...)
		}
		return out
	}
	at := fieldPath(e.InstanceLocation...)
	var names []string
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		names = k.Missing
	case *kind.AdditionalProperties:
		names = k.Properties
	default:
		return []string{at}
	}
	var out []string
	for _, n := range names {
		out = append(out, fieldPath(append(slices.Clone(e.InstanceLocation), n)...))
	}
	return out
}

// fieldPath names a JSON location as mlops-fn's errors do: spec.env[0].name.
func fieldPath(segs ...string) string {
	var p strings.Builder
	for _, seg := range segs {
		if _, err := strconv.Atoi(seg); err == nil {
			p.WriteString("[" + seg + "]")
			continue
		}
		if p.Len() > 0 {
			p.WriteString(".")
		}
		p.WriteString(seg)
	}
	return p.String()
}

// jobSpecs are every job spec of the repository: the golden cases', the
// quickstarts' and the examples', by path.
func jobSpecs(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, dir := range []string{"testdata", "quickstart", "examples"} {
		err := filepath.WalkDir(filepath.Join(repo, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.Name() != "job.yaml" {
				return err
			}
			b, err := os.ReadFile(path)
			out[strings.TrimPrefix(path, repo+"/")] = b
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// And the spec docs/job-spec.md shows, every field in it.
	doc, err := os.ReadFile(filepath.Join(repo, "docs", "job-spec.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```yaml\n(apiVersion: mlops-fn.dev.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/job-spec.md shows no job spec")
	}
	out["docs/job-spec.md"] = m[1]
	return out
}

// TestJobSchemaAgrees: on every job spec of the repository the schema and
// mlops-fn agree. What mlops-fn decodes, the schema accepts, unless
// mlops-fn's validation refuses the same field too (a value outside an
// enum, a number out of its range, a required field left out); what
// mlops-fn refuses for its shape (the golden error cases of an unknown
// field, a wrong type, a null), the schema refuses; and a value the
// validation does not support (not one of an enum's), the schema refuses.
func TestJobSchemaAgrees(t *testing.T) {
	s := jobSchema(t)
	specs := jobSpecs(t)
	var accepted, shape, values int
	var skipped []string
	for _, name := range slices.Sorted(maps.Keys(specs)) {
		v := judge(t, s, name, specs[name])
		switch {
		case !v.parsed:
			// Not YAML, several documents, or not a job spec: an editor says so before any schema.
			skipped = append(skipped, name)
			continue
		case len(v.decodeErrs) > 0:
			shape++
			t.Logf("%s: refused by both: %s", name, v.decodeErrs[0].Field)
			if len(v.schemaRefused) == 0 {
				t.Errorf("%s: mlops-fn refuses its shape (%v), the schema accepts it", name, v.decodeErrs.ToAggregate())
			}
			if stderr, err := os.ReadFile(filepath.Join(repo, filepath.Dir(name), "stderr.txt")); err == nil && !bytes.Contains(stderr, []byte(v.decodeErrs[0].Field)) {
				t.Errorf("%s: its golden stderr.txt does not name %s, which mlops-fn refuses:\n%s", name, v.decodeErrs[0].Field, stderr)
			}
		default:
			refused := map[string]bool{}
			for _, e := range v.validateErrs {
				refused[e.Field] = true
				if e.Type == field.ErrorTypeNotSupported && !slices.Contains(v.schemaRefused, e.Field) {
					t.Errorf("%s: mlops-fn supports none but %s at %s, the schema accepts it", name, e.Detail, e.Field)
				}
			}
			for _, f := range v.schemaRefused {
				if !refused[f] {
					t.Errorf("%s: the schema refuses %s, which mlops-fn accepts (its errors: %v)", name, f, v.validateErrs.ToAggregate())
				}
			}
			if len(v.validateErrs) == 0 {
				accepted++
			} else {
				values++
			}
			if len(v.schemaRefused) > 0 {
				t.Logf("%s: refused by both for its values: %s", name, strings.Join(v.schemaRefused, ", "))
			}
		}
	}
	t.Logf("%d job specs: %d accepted by both, %d refused by both for their shape, %d decoded and refused for their values; not YAML maps of one document or not job specs: %s",
		len(specs), accepted, shape, values, strings.Join(skipped, ", "))
	if accepted == 0 || shape == 0 {
		t.Errorf("want specs accepted and specs refused for their shape among them; got %d and %d", accepted, shape)
	}
}

// TestJobSchemaSubstitution: mlops-fn substitutes mlops.env keys (${KEY},
// quoted in a flow list or map) into string values once decoded, so a
// string field takes any ${KEY} in the schema too; a number, a boolean, a
// quantity or a field of a closed set takes none in mlops-fn (the key goes
// in mlops.env instead: WORKERS, CPU), and the schema refuses it there
// alike.
func TestJobSchemaSubstitution(t *testing.T) {
	s := jobSchema(t)
	for _, c := range []struct {
		spec     string
		accepted bool
	}{
		{"image: ${REGISTRY}/horovod:${TAG}\ncommand: [python, '${MODEL_DIR}/train.py']\nargs: [--data, '${DATASET_DIR}']", true},
		{"image: x\nscript: ${MODEL_DIR}/${MODEL_SCRIPT}\nworkingDir: ${MODEL_DIR}", true},
		{"image: x\ncommand: [x]\nenv: [{name: DATA, value: '${DATASET_DIR}'}]\nsecurity: {home: '${HOME_DIR}'}", true},
		{"image: x\ncommand: [x]\nvolumes: [{name: data, mountPath: '${DATASET_DIR}', subPath: '${USER_NAME}', nfs: {server: '${NFS_HOST}', path: '${EXPORT}'}}]", true},
		{"image: x\ncommand: [x]\nvolumes: [{name: data, mountPath: /data, hostPath: {path: '${DATA_ROOT}'}}]", true},
		{"image: x\ncommand: [x]\nworkers: ${WORKERS}", false},
		{"image: x\ncommand: [x]\ngpusPerWorker: '${GPUS_PER_WORKER}'", false},
		{"image: x\ncommand: [x]\nresources: {limits: {cpu: '${CPU}'}}", false},
		{"image: x\ncommand: [x]\nsecurity: {hardening: '${HARDENING}'}", false},
		{"image: x\ncommand: [x]\nrunPolicy: {backoffLimit: '${BACKOFF}'}", false},
		{"image: x\ncommand: [x]\nmpi: {implementation: '${MPI}'}", false},
		{"jobKind: ${KIND}\nimage: x\ncommand: [x]", false},
	} {
		text := "apiVersion: mlops-fn.dev/v1alpha1\nkind: MLOpsJob\nmetadata: {name: sub}\nspec:\n  " + strings.ReplaceAll(c.spec, "\n", "\n  ") + "\n"
		v := judge(t, s, "job.yaml", []byte(text))
		if !v.parsed {
			t.Fatalf("does not parse:\n%s", text)
		}
		mlopsFn := len(v.decodeErrs)+len(v.validateErrs) == 0
		schema := len(v.schemaRefused) == 0
		if mlopsFn != c.accepted || schema != c.accepted {
			t.Errorf("want accepted %v by both; mlops-fn %v (%v), the schema %v (refuses %v):\n%s", c.accepted, mlopsFn,
				append(v.decodeErrs, v.validateErrs...).ToAggregate(), schema, v.schemaRefused, text)
		}
	}
}

// TestJobSchemaUnknownFields: an unknown field in any object of the spec,
// Kubernetes' types inside it too, is refused by both: mlops-fn decodes
// strictly, the schema's objects allow no other properties.
func TestJobSchemaUnknownFields(t *testing.T) {
	s := jobSchema(t)
	b, err := os.ReadFile(filepath.Join(repo, schema.JobSchemaFile))
	if err != nil {
		t.Fatal(err)
	}
	var root map[string]any
	if err := json.Unmarshal(b, &root); err != nil {
		t.Fatal(err)
	}
	// objects are the paths of the schema's objects of fixed fields: a
	// list's by its first item.
	var objects [][]any
	var walk func(s map[string]any, path []any)
	walk = func(s map[string]any, path []any) {
		if props, ok := s["properties"].(map[string]any); ok {
			objects = append(objects, path)
			for _, k := range slices.Sorted(maps.Keys(props)) {
				walk(props[k].(map[string]any), append(slices.Clip(path), k))
			}
		}
		if items, ok := s["items"].(map[string]any); ok {
			walk(items, append(slices.Clip(path), 0))
		}
	}
	walk(root, nil)
	for _, path := range objects {
		job := map[string]any{"apiVersion": "mlops-fn.dev/v1alpha1", "kind": "MLOpsJob", "metadata": map[string]any{"name": "unknown"},
			"spec": map[string]any{"image": "x", "command": []any{"x"}}}
		var at any = job
		for i, seg := range path {
			var next any = map[string]any{}
			if i+1 < len(path) {
				if _, list := path[i+1].(int); list {
					next = []any{nil}
				}
			}
			switch c := at.(type) {
			case map[string]any:
				if _, ok := c[seg.(string)].(map[string]any); !ok {
					c[seg.(string)] = next
				}
				at = c[seg.(string)]
			case []any:
				if c[0] == nil {
					c[0] = next
				}
				at = c[0]
			}
		}
		at.(map[string]any)["unknownField"] = "x"
		text, err := json.Marshal(job)
		if err != nil {
			t.Fatal(err)
		}
		v := judge(t, s, "job.yaml", text)
		var segs []string
		for _, seg := range path {
			segs = append(segs, fmt.Sprint(seg))
		}
		want := fieldPath(append(segs, "unknownField")...)
		if !slices.ContainsFunc(v.decodeErrs, func(e *field.Error) bool { return e.Field == want }) || !slices.Contains(v.schemaRefused, want) {
			t.Errorf("%s: want it refused by both; mlops-fn: %v, the schema: %v", want, v.decodeErrs.ToAggregate(), v.schemaRefused)
		}
	}
	if len(objects) < 2 {
		t.Errorf("the schema has %d objects", len(objects))
	}
}

// TestJobSchemaAcceptsInit: the job.yaml mlops-fn init writes, of every
// kind, with the demo or an image of one's own, both accept; its first line
// names the schema.
func TestJobSchemaAcceptsInit(t *testing.T) {
	s := jobSchema(t)
	for _, k := range kinds.All {
		for _, o := range []scaffold.Options{
			{Name: "my-job", JobKind: k.JobKind()},
			{Name: "my-job", JobKind: k.JobKind(), Image: "docker.io/team/train:1", Command: []string{"python", "train.py"}},
		} {
			files, err := scaffold.Files(o)
			if err != nil {
				t.Fatal(err)
			}
			text := files["job.yaml"]
			v := judge(t, s, "job.yaml", text)
			if !v.parsed || len(v.decodeErrs)+len(v.validateErrs) > 0 || len(v.schemaRefused) > 0 {
				t.Errorf("%s: want accepted by both; mlops-fn: %v, the schema refuses %v:\n%s", k.Kind, append(v.decodeErrs, v.validateErrs...).ToAggregate(), v.schemaRefused, text)
			}
			if !bytes.HasPrefix(text, []byte("# yaml-language-server: $schema=")) || !bytes.Contains(text, []byte(schema.JobSchemaFile)) {
				t.Errorf("%s: job.yaml does not begin with the schema's line:\n%s", k.Kind, text)
			}
		}
	}
}

// TestReleaseShipsJobSchema: every archive of the release holds the schema
// (make dist-test opens them; this runs without GoReleaser).
func TestReleaseShipsJobSchema(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repo, ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var release struct {
		Archives []struct {
			Files []string `json:"files"`
		} `json:"archives"`
	}
	if err := sigsyaml.Unmarshal(b, &release); err != nil {
		t.Fatal(err)
	}
	if len(release.Archives) == 0 {
		t.Fatal(".goreleaser.yaml makes no archives")
	}
	for i, a := range release.Archives {
		if !slices.Contains(a.Files, schema.JobSchemaFile) {
			t.Errorf(".goreleaser.yaml: archives[%d].files %q lack %s", i, a.Files, schema.JobSchemaFile)
		}
	}
}
