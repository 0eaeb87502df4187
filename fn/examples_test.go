// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mlops-fn/mlops-fn/internal/testutil"
)

// TestExampleRecipes: every folder of examples/ has a README whose recipe
// renders each overlay in it; each mlops-fn line of the recipes (examples/'s
// own README's too) runs as written from the repository root, bash and
// mlops-fn on PATH (`go run ./fn/mlops-fn` is that binary, built once), and
// prints the objects kubectl kustomize builds of the job spec's folder.
func TestExampleRecipes(t *testing.T) {
	binary(t)
	kubectl := tool(t, "kubectl", "install kubectl v1.32")
	bin, err := filepath.Abs(filepath.Join(repoRoot, "bin"))
	if err != nil {
		t.Fatal(err)
	}
	folders, _ := filepath.Glob(filepath.Join(repoRoot, "examples", "*", ""))
	readmes := []string{filepath.Join(repoRoot, "examples", "README.md")}
	for _, f := range folders {
		if info, err := os.Stat(f); err == nil && info.IsDir() {
			readmes = append(readmes, filepath.Join(f, "README.md"))
		}
	}
	if len(readmes) < 2 {
		t.Fatal("no folders under examples/")
	}
	rendered := map[string]bool{} // overlay folders, relative to the root
	for _, readme := range readmes {
		name, _ := filepath.Rel(repoRoot, readme)
		data, err := os.ReadFile(readme)
		if err != nil {
			t.Errorf("%s: %v (every example says what it replaces and how to render and apply it)", name, err)
			continue
		}
		block, ok := testutil.MarkedBlock(string(data), "recipe")
		if !ok {
			t.Errorf("%s: no ```sh block between <!-- recipe: … --> and <!-- /recipe -->", name)
			continue
		}
		for _, line := range strings.Split(block, "\n") {
			command, _, _ := strings.Cut(line, "#")
			fields := strings.Fields(command)
			if len(fields) > 2 && fields[0] == "go" && fields[1] == "run" && fields[2] == "./fn/mlops-fn" {
				fields = append([]string{"mlops-fn"}, fields[3:]...)
			}
			if len(fields) < 2 || fields[0] != "mlops-fn" || !strings.HasSuffix(fields[1], "/job.yaml") {
				continue // the cluster's lines
			}
			overlay := filepath.Dir(fields[1])
			got := runIn(t, repoRoot, onPath(bin), "bash", "-c", strings.Join(fields, " "))
			want := run(t, kubectl, "kustomize", overlay)
			if diff := cmp.Diff(objects(t, want), objects(t, got)); diff != "" {
				t.Errorf("%s: %s prints other objects than kubectl kustomize %s (-overlay +recipe):\n%s", name, strings.TrimSpace(line), overlay, diff)
			}
			rendered[overlay] = true
		}
	}
	specs, _ := filepath.Glob(filepath.Join(repoRoot, "examples", "*", "job.yaml"))
	nested, _ := filepath.Glob(filepath.Join(repoRoot, "examples", "*", "*", "job.yaml"))
	for _, spec := range slices.Concat(specs, nested) {
		overlay, _ := filepath.Rel(repoRoot, filepath.Dir(spec))
		if !rendered[overlay] {
			t.Errorf("no example README's recipe renders %s", overlay)
		}
	}
}
