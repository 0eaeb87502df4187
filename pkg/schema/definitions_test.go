package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/format"
	"go/token"
	"maps"
	"reflect"
	"slices"
	"strings"

	"k8s.io/kube-openapi/pkg/validation/spec"
)

// goDefinitions writes definitions.go: doc's definitions, as kube-openapi
// decodes them, as Go composite literals, so a run builds them without
// decoding JSON. Each distinct reference is parsed once, into a variable.
func goDefinitions(doc []byte) ([]byte, error) {
	var sw spec.Swagger
	if err := sw.UnmarshalJSON(doc); err != nil {
		return nil, err
	}
	g := goWriter{refs: map[string]string{}, types: map[string]string{}}
	for _, name := range slices.Sorted(maps.Keys(sw.Definitions)) {
		fmt.Fprintf(&g.body, "%q: ", name)
		if err := g.schema(sw.Definitions[name]); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		g.body.WriteString(",\n")
	}
	var out bytes.Buffer
	out.WriteString("// Code generated from crd-schema.json by `go test ./pkg/schema -update`. DO NOT EDIT.\n\n")
	out.WriteString("package schema\n\nimport \"k8s.io/kube-openapi/pkg/validation/spec\"\n\n")
	out.WriteString("// definitions is crd-schema.json's definitions, built as kube-openapi decodes them.\n")
	out.WriteString("func definitions() spec.Definitions {\n")
	for _, ref := range slices.Sorted(maps.Keys(g.refs)) {
		fmt.Fprintf(&out, "%s := spec.MustCreateRef(%q)\n", g.refs[ref], ref)
	}
	for _, t := range slices.Sorted(maps.Keys(g.types)) {
		fmt.Fprintf(&out, "%s := spec.StringOrArray{%s}\n", g.types[t], t)
	}
	out.WriteString("return spec.Definitions{\n")
	out.Write(g.body.Bytes())
	out.WriteString("}\n}\n")
	return format.Source(out.Bytes())
}

// goWriter writes the definitions' literals and collects the references and
// types they share.
type goWriter struct {
	body  bytes.Buffer
	refs  map[string]string // reference → its variable
	types map[string]string // a type's quoted names → its variable
}

// schema writes s as a spec.Schema literal's braces; a field it does not
// write is an error, so no keyword of the document is dropped unseen.
func (g *goWriter) schema(s spec.Schema) error {
	rest := s
	w := &g.body
	w.WriteString("{")
	if len(s.Extensions) > 0 {
		w.WriteString("VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{")
		for _, k := range slices.Sorted(maps.Keys(s.Extensions)) {
			v, err := goValue(s.Extensions[k])
			if err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			fmt.Fprintf(w, "%q: %s, ", k, v)
		}
		w.WriteString("}}, ")
		rest.Extensions = nil
	}
	w.WriteString("SchemaProps: spec.SchemaProps{")
	if r := s.Ref.String(); r != "" {
		v, err := g.ref(r)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "Ref: %s, ", v)
		rest.Ref = spec.Ref{}
	}
	if s.Type != nil {
		v, err := g.typ(s.Type)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "Type: %s, ", v)
		rest.Type = nil
	}
	if s.Format != "" {
		fmt.Fprintf(w, "Format: %q, ", s.Format)
		rest.Format = ""
	}
	if s.Required != nil {
		fmt.Fprintf(w, "Required: []string{%s}, ", goStrings(s.Required))
		rest.Required = nil
	}
	if s.Properties != nil {
		w.WriteString("Properties: map[string]spec.Schema{\n")
		for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
			fmt.Fprintf(w, "%q: ", k)
			if err := g.schema(s.Properties[k]); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			w.WriteString(",\n")
		}
		w.WriteString("}, ")
		rest.Properties = nil
	}
	if a := s.AdditionalProperties; a != nil && a.Allows && a.Schema != nil {
		w.WriteString("AdditionalProperties: &spec.SchemaOrBool{Allows: true, Schema: &spec.Schema")
		if err := g.schema(*a.Schema); err != nil {
			return err
		}
		w.WriteString("}, ")
		rest.AdditionalProperties = nil
	}
	if it := s.Items; it != nil && it.Schema != nil && it.Schemas == nil {
		w.WriteString("Items: &spec.SchemaOrArray{Schema: &spec.Schema")
		if err := g.schema(*it.Schema); err != nil {
			return err
		}
		w.WriteString("}, ")
		rest.Items = nil
	}
	w.WriteString("}}")
	if !reflect.ValueOf(rest).IsZero() {
		unwritten, _ := json.Marshal(rest)
		return fmt.Errorf("keywords goWriter does not write: %s; teach it", unwritten)
	}
	return nil
}

// ref is the variable holding reference r, named after the definition it
// points to: its version and kind, e.g. v1ObjectMeta.
func (g *goWriter) ref(r string) (string, error) {
	if v, ok := g.refs[r]; ok {
		return v, nil
	}
	parts := strings.Split(strings.TrimPrefix(r, "#/definitions/"), ".")
	if len(parts) < 2 {
		return "", fmt.Errorf("reference %q: want #/definitions/group.version.Kind", r)
	}
	v := strings.Join(parts[len(parts)-2:], "")
	if !token.IsIdentifier(v) || slices.Contains(slices.Collect(maps.Values(g.refs)), v) {
		return "", fmt.Errorf("reference %q: its variable %s is taken or invalid", r, v)
	}
	g.refs[r] = v
	return v, nil
}

// typ is the variable holding type t, e.g. typeString: nodes of one type
// share its slice, as kube-openapi's readers never change a type in place.
func (g *goWriter) typ(t spec.StringOrArray) (string, error) {
	q := goStrings(t)
	if v, ok := g.types[q]; ok {
		return v, nil
	}
	v := "type"
	for _, name := range t {
		if name == "" {
			return "", fmt.Errorf("type %s: an empty name", q)
		}
		v += strings.ToUpper(name[:1]) + name[1:]
	}
	if !token.IsIdentifier(v) || slices.Contains(slices.Collect(maps.Values(g.types)), v) {
		return "", fmt.Errorf("type %s: its variable %s is taken or invalid", q, v)
	}
	g.types[q] = v
	return v, nil
}

func goStrings(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// goValue writes an extension's value, as kube-openapi decodes JSON into any.
func goValue(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("%q", v), nil
	case []any:
		elems := make([]string, len(v))
		for i, e := range v {
			s, err := goValue(e)
			if err != nil {
				return "", err
			}
			elems[i] = s
		}
		return "[]any{" + strings.Join(elems, ", ") + "}", nil
	case map[string]any:
		var elems []string
		for _, k := range slices.Sorted(maps.Keys(v)) {
			s, err := goValue(v[k])
			if err != nil {
				return "", err
			}
			elems = append(elems, fmt.Sprintf("%q: %s", k, s))
		}
		return "map[string]any{" + strings.Join(elems, ", ") + "}", nil
	}
	return "", fmt.Errorf("a value of type %T; teach goValue", v)
}
