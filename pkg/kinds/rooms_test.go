// SPDX-License-Identifier: Apache-2.0

package kinds

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
)

// roomless are the files outside pkg/kinds/KIND that may name a kind: the
// list of kinds, the schema generator's list of CRDs, and the jobKind values
// and roles (the API's words).
var roomless = []string{"kinds/kinds.go", "schema/internal/gen/gen.go", "jobkind/jobkind.go"}

// TestKindsStayInTheirFolders: outside pkg/kinds/KIND and roomless, no
// non-test, non-generated Go file of pkg/ names anything of one kind: a
// jobKind or role constant of pkg/jobkind, a package of an operator's module,
// its API group, an operator kind's name or one of its spec's fields (but
// those the job spec has too) as a whole string, or a Carries of a field only
// one kind carries.
func TestKindsStayInTheirFolders(t *testing.T) {
	named := kindNames(t)
	var modules, groups []string
	for _, k := range All {
		if k.BuiltIn() {
			continue
		}
		named[k.Kind] = "the kind's name"
		parts := strings.SplitN(reflect.TypeOf(k.New()).Elem().PkgPath(), "/", 4)
		modules = append(modules, strings.Join(parts[:3], "/"))
		group, _, _ := strings.Cut(k.APIVersion, "/")
		groups = append(groups, group)
	}
	// An operator kind's own spec fields, by their JSON names, but those the
	// job spec has too, at any depth.
	ours := map[string]bool{}
	jsonNames(reflect.TypeFor[api.MLOpsJobSpec](), ours, true)
	for _, k := range All {
		if spec, ok := reflect.TypeOf(k.New()).Elem().FieldByName("Spec"); ok && !k.BuiltIn() {
			theirs := map[string]bool{}
			jsonNames(spec.Type, theirs, false)
			for name := range theirs {
				if !ours[name] {
					named[name] = "a field of the kind's spec"
				}
			}
		}
	}
	single := map[string]bool{}
	for _, f := range All.Fields() {
		single[f.Path] = len(carriers(f.Path)) == 1
	}
	var offenders []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		rel := filepath.ToSlash(strings.TrimPrefix(path, "../"))
		switch {
		case err != nil:
			return err
		case d.IsDir() && strings.Count(rel, "/") == 1 && strings.HasPrefix(rel, "kinds/"):
			return filepath.SkipDir // a kind's own folder
		case d.IsDir() || !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || slices.Contains(roomless, rel):
			return nil
		}
		file, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments)
		if err != nil || ast.IsGenerated(file) {
			return err
		}
		var what []string
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ImportSpec:
				p, _ := strconv.Unquote(n.Path.Value)
				if slices.ContainsFunc(modules, func(m string) bool { return p == m || strings.HasPrefix(p, m+"/") }) {
					what = append(what, "imports "+p)
				}
				return false
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && x.Name == "jobkind" && named[n.Sel.Name] != "" {
					what = append(what, "jobkind."+n.Sel.Name)
				}
			case *ast.CallExpr:
				name := ""
				switch f := n.Fun.(type) {
				case *ast.SelectorExpr:
					name = f.Sel.Name
				case *ast.Ident:
					name = f.Name
				}
				if strings.HasPrefix(strings.ToLower(name), "carries") && len(n.Args) > 0 {
					if l, ok := n.Args[len(n.Args)-1].(*ast.BasicLit); ok && single[unquote(l)] {
						what = append(what, name+"("+l.Value+"), a field of one kind")
					}
				}
			case *ast.BasicLit:
				if v := unquote(n); n.Kind == token.STRING && (named[v] != "" || slices.ContainsFunc(groups, func(g string) bool { return strings.Contains(v, g+"/") })) {
					what = append(what, "the string "+strconv.Quote(v[:min(len(v), 60)]))
				}
			}
			return true
		})
		if len(what) > 0 {
			offenders = append(offenders, "pkg/"+rel+": "+strings.Join(what, ", "))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(offenders) > 0 {
		t.Errorf("outside pkg/kinds/KIND and %v, files name a kind (move it into the kind, behind an interface or a fact):\n%s",
			roomless, strings.Join(offenders, "\n"))
	}
}

// kindNames are pkg/jobkind's constants of type JobKind and Role, by name,
// but for the role of a kind's one pod template.
func kindNames(t *testing.T) map[string]string {
	file, err := parser.ParseFile(token.NewFileSet(), "../jobkind/jobkind.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, d := range file.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
			for _, s := range g.Specs {
				v := s.(*ast.ValueSpec)
				if id, ok := v.Type.(*ast.Ident); ok && (id.Name == "JobKind" || id.Name == "Role") && v.Names[0].Name != "Single" {
					names[v.Names[0].Name] = id.Name
				}
			}
		}
	}
	return names
}

// jsonNames adds the JSON names of struct type t's fields to names, and
// deep, those of the structs they hold.
func jsonNames(t reflect.Type, names map[string]bool, deep bool) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return
	}
	for f := range t.Fields() {
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" && !names[name] {
			names[name] = true
			if deep {
				jsonNames(f.Type, names, deep)
			}
		}
	}
}

// carriers are the kinds that carry the field at path.
func carriers(path string) []string {
	var out []string
	for _, k := range All {
		if k.CarriesField(path) {
			out = append(out, k.Kind)
		}
	}
	return out
}

func unquote(l *ast.BasicLit) string {
	s, _ := strconv.Unquote(l.Value)
	return s
}
