// SPDX-License-Identifier: Apache-2.0

package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"math"
	"os/exec"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kube-openapi/pkg/schemamutation"
	"k8s.io/kube-openapi/pkg/validation/spec"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/kinds"
)

// JobSchema is the job spec's JSON Schema (draft-07, what yaml-language-server reads): pkg/api/v1alpha1's Go
// types as mlops-fn decodes them (strictly), described by their doc comments (Kubernetes' types: SwaggerDoc);
// required fields, enums and number ranges read from the validation itself (required, enum, bounds).
func JobSchema() (_ []byte, err error) {
	defer catch(&err)
	w := schemaWriter{docs: map[string]map[string]string{}, quantityPattern: quantityPattern()}
	root := w.schema(reflect.TypeFor[api.MLOpsJob](), []step{}, "")
	root.Schema = "http://json-schema.org/draft-07/schema#"
	root.Title = fmt.Sprintf("%s %s, mlops-fn's job spec (job.yaml)", api.APIVersion, api.Kind)
	for field, value := range map[string]string{"apiVersion": api.APIVersion, "kind": api.Kind} {
		p := root.Properties[field]
		p.Enum = []any{value}
		root.Properties[field] = p
	}
	// Sorted keys, whichever of kube-openapi's marshalers runs.
	b, err := json.Marshal(root)
	check(err)
	var doc any
	check(json.Unmarshal(b, &doc))
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	check(enc.Encode(doc))
	return out.Bytes(), nil
}

// schemaWriter builds the schema of a Go type, reading the doc comments of mlops-fn's packages on the way.
type schemaWriter struct {
	docs            map[string]map[string]string // package path → "Type" and "Type.Field" → doc
	quantityPattern string
}

// step is one move from an MLOpsJob to a field inside it: a struct field's index, or intoList (item 0).
type step int

const intoList step = -1

// then is steps followed by s; nil (a value no probe reaches) stays nil.
func then(steps []step, s step) []step {
	if steps == nil {
		return nil
	}
	return append(slices.Clone(steps), s)
}

// schema is t's schema; steps lead from an MLOpsJob to a value of t at path (nil: none, nothing probed).
func (w *schemaWriter) schema(t reflect.Type, steps []step, path string) spec.Schema {
	if t.Kind() == reflect.Pointer {
		return w.schema(t.Elem(), steps, path)
	}
	if t == reflect.TypeFor[resource.Quantity]() {
		// A string or a number, as its OpenAPI says.
		return spec.Schema{SchemaProps: spec.SchemaProps{Type: resource.Quantity{}.OpenAPIV3OneOfTypes(), Pattern: w.quantityPattern}}
	}
	if reflect.PointerTo(t).Implements(reflect.TypeFor[json.Unmarshaler]()) {
		fail("%s: %s decodes itself; teach JobSchema its JSON", path, t)
	}
	var s spec.Schema
	switch t.Kind() {
	case reflect.String:
		s.Type = spec.StringOrArray{"string"}
		if steps != nil {
			s.Enum = enum(steps, path)
		}
	case reflect.Bool:
		s.Type = spec.StringOrArray{"boolean"}
	case reflect.Int32, reflect.Int64:
		lo := int64(-1) << (t.Bits() - 1)
		hi := -(lo + 1)
		s.Type, s.Format = spec.StringOrArray{"integer"}, t.Kind().String()
		if steps != nil {
			lo, hi = bounds(steps, path, lo, hi)
		}
		// int64's own bounds are left out: a float64 cannot hold them exactly.
		if lo > math.MinInt64 {
			s.Minimum = new(float64(lo))
		}
		if hi < math.MaxInt64 {
			s.Maximum = new(float64(hi))
		}
	case reflect.Slice:
		item := w.schema(t.Elem(), then(steps, intoList), path+"[0]")
		s.Type, s.Items = spec.StringOrArray{"array"}, &spec.SchemaOrArray{Schema: &item}
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			fail("%s: a map keyed by %s; teach JobSchema", path, t.Key())
		}
		// A map's values are not probed (nil steps): no validation has a set of them.
		value := w.schema(t.Elem(), nil, path+"[*]")
		s.Type, s.AdditionalProperties = spec.StringOrArray{"object"}, &spec.SchemaOrBool{Allows: true, Schema: &value}
	case reflect.Struct:
		return w.object(t, steps, path)
	default:
		fail("%s: a %s; teach JobSchema its JSON", path, t)
	}
	return s
}

// object is a struct's schema: its JSON fields, an inline struct's among them, no others (decoded strictly).
func (w *schemaWriter) object(t reflect.Type, steps []step, path string) spec.Schema {
	docs := w.fieldDocs(t)
	s := spec.Schema{SchemaProps: spec.SchemaProps{
		Description:          docs[""],
		Type:                 spec.StringOrArray{"object"},
		Properties:           map[string]spec.Schema{},
		AdditionalProperties: &spec.SchemaOrBool{Allows: false},
	}}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		fsteps := then(steps, step(i))
		if f.Anonymous && name == "" {
			inner := w.object(f.Type, fsteps, path)
			maps.Copy(s.Properties, inner.Properties)
			s.Required = append(s.Required, inner.Required...)
			continue
		}
		if name == "" {
			fail("%s.%s has no JSON name; teach JobSchema", t, f.Name)
		}
		fpath := strings.TrimPrefix(path+"."+name, ".")
		p := w.schema(f.Type, fsteps, fpath)
		// What the probe's context requires another may not (a toleration's operator, without a key): only a
		// field without omitempty, as Kubernetes' types write a required one, is required.
		req := fsteps != nil && !slices.Contains(strings.Split(opts, ","), "omitempty") && required(fsteps, fpath)
		if p.Enum != nil && f.Type.Kind() == reflect.String && !req && !slices.Contains(p.Enum, any("")) {
			// Decoded, "" is the field left out, which a spec may do.
			p.Enum = append(p.Enum, "")
		}
		if p.Description = docs[name]; p.Description == "" {
			p.Description = w.fieldDocs(f.Type)[""]
		}
		s.Properties[name] = p
		if req {
			s.Required = append(s.Required, name)
		}
	}
	return s
}

// fieldDocs are the docs of struct t (or the one t points to or lists) and its fields, by JSON name ("": the
// type's own): Kubernetes' from SwaggerDoc, mlops-fn's from the source.
func (w *schemaWriter) fieldDocs(t reflect.Type) map[string]string {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return map[string]string{}
	}
	if d, ok := reflect.Zero(t).Interface().(interface{ SwaggerDoc() map[string]string }); ok {
		return d.SwaggerDoc()
	}
	if !strings.HasPrefix(t.PkgPath(), "github.com/mlops-fn/mlops-fn/") {
		return map[string]string{}
	}
	docs, ok := w.docs[t.PkgPath()]
	if !ok {
		docs = packageDocs(t.PkgPath())
		w.docs[t.PkgPath()] = docs
	}
	out := map[string]string{"": docs[t.Name()]}
	var previous string
	for i := range t.NumField() {
		f := t.Field(i)
		doc, ok := docs[t.Name()+"."+f.Name]
		if !ok && regexp.MustCompile(`\b`+f.Name+`\b`).MatchString(previous) {
			// "Command and Args are the training program.": Args' too.
			doc = previous
		} else {
			previous = doc
		}
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
			out[name] = doc
		}
	}
	return out
}

// packageDocs reads the doc comments of the package at path: "Type" and "Type.Field" → docText.
func packageDocs(path string) map[string]string {
	out, err := exec.Command("go", "list", "-f", "{{.Dir}}", path).Output()
	if err != nil {
		fail("go list %s: %w", path, err)
	}
	source := func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }
	pkgs, err := parser.ParseDir(token.NewFileSet(), strings.TrimSpace(string(out)), source, parser.ParseComments)
	check(err)
	docs := map[string]string{}
	for _, pkg := range pkgs {
		for _, t := range doc.New(pkg, path, doc.AllDecls|doc.PreserveAST).Types {
			docs[t.Name] = docText(t.Doc)
			if st, ok := t.Decl.Specs[0].(*ast.TypeSpec).Type.(*ast.StructType); ok {
				for _, f := range st.Fields.List {
					for _, n := range f.Names {
						if f.Doc != nil {
							docs[t.Name+"."+n.Name] = docText(f.Doc.Text())
						}
					}
				}
			}
		}
	}
	return docs
}

// docText is a comment's text, each paragraph on one line, without marker lines (+enum), as Kubernetes'
// generators write descriptions.
func docText(text string) string {
	var paragraphs []string
	for _, p := range strings.Split(strings.TrimSpace(text), "\n\n") {
		var lines []string
		for _, l := range strings.Split(p, "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "+") {
				lines = append(lines, l)
			}
		}
		if len(lines) > 0 {
			paragraphs = append(paragraphs, strings.Join(lines, " "))
		}
	}
	return strings.Join(paragraphs, "\n\n")
}

// probe is a value no validation accepts.
const probe = "\x00probe"

// agreed is what probe finds in a job of each jobKind (ok false: nothing), which every kind that finds
// something must agree on; found is false when none does.
func agreed[T any](path string, probe func(kind string) (T, bool)) (v T, found bool) {
	var first string
	for _, k := range kinds.All.Names() {
		got, ok := probe(k)
		switch {
		case !ok:
		case !found:
			v, found, first = got, true, k
		case !reflect.DeepEqual(got, v):
			fail("%s: jobKind %s takes %v, jobKind %s %v; teach JobSchema", path, first, v, k, got)
		}
	}
	return v, found
}

// enum is the closed set of values the validation accepts for the string field at path (steps lead to it),
// nil when it has none: the field set to a probe, in a job of each jobKind, is refused as not supported, the
// error listing the supported values.
func enum(steps []step, path string) []any {
	supported, _ := agreed(path, func(k string) ([]any, bool) {
		for _, e := range refusals(k, steps, probe, func(f string) bool { return f == path }) {
			if e.Type != field.ErrorTypeNotSupported {
				continue
			}
			rest, ok := strings.CutPrefix(e.Detail, "supported values: ")
			if !ok {
				fail("%s: %q lists no supported values; teach JobSchema", path, e.Detail)
			}
			var values []any
			for rest != "" {
				q, err := strconv.QuotedPrefix(rest)
				if err != nil {
					fail("%s: reading the supported values of %q: %w", path, e.Detail, err)
				}
				v, _ := strconv.Unquote(q)
				values = append(values, v)
				rest = strings.TrimPrefix(rest[len(q):], ", ")
			}
			return values, values != nil
		}
		return nil, false
	})
	return supported
}

// refusals are the validation's errors about a field that about takes, in a job of jobKind k with value at
// the field steps lead to (nil: the field left out), defaulted first as mlops-fn does.
func refusals(k string, steps []step, value any, about func(string) bool) field.ErrorList {
	job := api.MLOpsJob{APIVersion: api.APIVersion, Kind: api.Kind, Metadata: api.ObjectMeta{Name: "probe"}}
	job.Spec.JobKind = jobkind.JobKind(k)
	// Each step reaches a value of its own in the new job: every pointer on the way is nil, every list empty.
	v := reflect.ValueOf(&job).Elem()
	allocate := func() {
		for v.Kind() == reflect.Pointer {
			v.Set(reflect.New(v.Type().Elem()))
			v = v.Elem()
		}
	}
	for _, s := range steps {
		allocate()
		if s == intoList {
			v.Set(reflect.MakeSlice(v.Type(), 1, 1))
			v = v.Index(0)
		} else {
			v = v.Field(int(s))
		}
	}
	if value == nil {
		v.Set(reflect.Zero(v.Type()))
	} else {
		allocate()
		v.Set(reflect.ValueOf(value).Convert(v.Type()))
	}
	kinds.Default(&job)
	var out field.ErrorList
	for _, e := range kinds.Validate(&job) {
		if about(e.Field) {
			out = append(out, e)
		}
	}
	return out
}

// within says whether the field f is inside the field of.
func within(f, of string) bool { return strings.HasPrefix(f, of+".") || strings.HasPrefix(f, of+"[") }

// required says whether the validation refuses the field at path left out, in a job of every jobKind.
func required(steps []step, path string) bool {
	for _, k := range kinds.All.Names() {
		if len(refusals(k, steps, nil, func(f string) bool { return f == path || within(f, path) })) == 0 {
			return false
		}
	}
	return true
}

// bounds are the least and greatest whole number the validation accepts at path, within the Go type's lo and
// hi (returned when no kind takes 1 or 0): bisected from 1 or 0 in each jobKind (its ranges are intervals).
func bounds(steps []step, path string, lo, hi int64) (least, greatest int64) {
	found, ok := agreed(path, func(k string) ([2]int64, bool) {
		// The errors of the field or of one holding it (spec.elastic, of a kind that carries none).
		about := func(f string) bool { return f == path || within(path, f) }
		takes := func(n int64) bool { return len(refusals(k, steps, n, about)) == 0 }
		seed := int64(1)
		if !takes(seed) {
			if seed = 0; !takes(seed) {
				return [2]int64{}, false
			}
		}
		// The least n of [a, b] that takes (b does), then the greatest of [c, d]; differences in uint64.
		a, b := lo, seed
		for a < b {
			if mid := a + int64((uint64(b)-uint64(a))/2); takes(mid) {
				b = mid
			} else {
				a = mid + 1
			}
		}
		c, d := seed, hi
		for c < d {
			diff := uint64(d) - uint64(c)
			if mid := c + int64(diff/2+diff%2); takes(mid) {
				c = mid
			} else {
				d = mid - 1
			}
		}
		return [2]int64{a, c}, true
	})
	if !ok {
		return lo, hi
	}
	return found[0], found[1]
}

// quantityPattern is the pattern of a Kubernetes quantity's string form, as the CRDs go.mod pins write it
// (controller-gen's): one for every quantity.
func quantityPattern() string {
	found := map[string]bool{}
	for _, c := range crds {
		for _, v := range readCRD(c.module, c.file).Spec.Versions {
			walkSchemas(v.Schema.OpenAPIV3Schema, func(s spec.Schema) {
				if s.Extensions["x-kubernetes-int-or-string"] == true && s.Pattern != "" {
					found[s.Pattern] = true
				}
			})
		}
	}
	if len(found) != 1 {
		fail("the CRDs' quantities have %d patterns, want one: %q", len(found), slices.Sorted(maps.Keys(found)))
	}
	return slices.Collect(maps.Keys(found))[0]
}

// walkSchemas calls f on s and every schema inside it.
func walkSchemas(s spec.Schema, f func(spec.Schema)) {
	(&schemamutation.Walker{RefCallback: schemamutation.RefCallbackNoop, SchemaCallback: func(s *spec.Schema) *spec.Schema {
		f(*s)
		return s
	}}).WalkSchema(&s)
}
