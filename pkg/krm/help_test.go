// SPDX-License-Identifier: Apache-2.0

package krm

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestHelpSaysHowApplyReachesTheCluster: --help says the cluster commands
// use client-go, not kubectl, which is what their packages import: client-go
// or pkg/cluster (the client-go client they share), and no os/exec to run a program.
func TestHelpSaysHowApplyReachesTheCluster(t *testing.T) {
	i := strings.Index(Help(), "  mlops-fn apply DIR")
	if i < 0 || !strings.Contains(Help()[i:i+200], "with client-go (no kubectl needed)") || strings.Contains(Help(), "with kubectl") {
		t.Errorf("--help does not say that apply uses client-go:\n%s", Help())
	}
	for _, pkg := range []string{"../apply", "../status", "../cluster"} {
		files, err := filepath.Glob(filepath.Join(pkg, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		var imports []string
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range file.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				imports = append(imports, path)
			}
		}
		if slices.Contains(imports, "os/exec") || !slices.ContainsFunc(imports, func(p string) bool {
			return strings.HasPrefix(p, "k8s.io/client-go/") || p == "github.com/mlops-fn/mlops-fn/pkg/cluster"
		}) {
			t.Errorf("%s imports %v: want client-go or pkg/cluster, and no os/exec, as --help says", pkg, imports)
		}
	}
}
