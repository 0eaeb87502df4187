// SPDX-License-Identifier: Apache-2.0

package schema

import (
	"bytes"
	"errors"
	"io/fs"
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

	"github.com/mlops-fn/mlops-fn/pkg/jobnode"
	"github.com/mlops-fn/mlops-fn/pkg/jobspec"
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
	got, err := os.ReadFile(filepath.Join(repo, JobSchemaFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s is stale; run `go generate ./pkg/schema` and read the diff:\n%s", JobSchemaFile, cmp.Diff(string(want), string(got)))
	}
}

// jobSchema is the committed schema, compiled by a draft-07 validator,
// which checks it against the draft's metaschema first.
func jobSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(filepath.Join(repo, JobSchemaFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(JobSchemaFile, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(JobSchemaFile)
	if err != nil {
		t.Fatalf("%s does not compile as a JSON Schema: %v", JobSchemaFile, err)
	}
	if s.DraftVersion != 7 {
		t.Errorf("%s is of draft %d; yaml-language-server reads draft-07", JobSchemaFile, s.DraftVersion)
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
		job.Default()
		v.validateErrs = job.Validate()
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
	var p strings.Builder
	for _, seg := range e.InstanceLocation {
		if _, err := strconv.Atoi(seg); err == nil {
			p.WriteString("[" + seg + "]")
		} else {
			if p.Len() > 0 {
				p.WriteString(".")
			}
			p.WriteString(seg)
		}
	}
	at := p.String()
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
		if at != "" {
			n = at + "." + n
		}
		out = append(out, n)
	}
	return out
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
// enum, a required field left out); what mlops-fn refuses for its shape
// (the golden error cases of an unknown field, a wrong type, a null), the
// schema refuses; and a value the validation does not support (not one of
// an enum's), the schema refuses.
func TestJobSchemaAgrees(t *testing.T) {
	s := jobSchema(t)
	specs := jobSpecs(t)
	var accepted, shape, values int
	var skipped []string
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range specs {
			if !yield(k) {
				return
			}
		}
	}) {
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
		}
	}
	t.Logf("%d job specs: %d accepted by both, %d refused by both for their shape, %d decoded and refused for their values; not YAML maps of one document or not job specs: %s",
		len(specs), accepted, shape, values, strings.Join(skipped, ", "))
	if accepted == 0 || shape == 0 {
		t.Errorf("want specs accepted and specs refused for their shape among them; got %d and %d", accepted, shape)
	}
}
