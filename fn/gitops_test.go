// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestGitOpsBuildsTheCommittedOverlays is what Argo CD and Flux do: check
// out the repository (a clean clone: committed files only) and run a plain
// `kustomize build` of each overlay folder, with no plugins and no exec. Each
// quickstart and example overlay builds the objects that the function of the
// same commit renders as kustomize's exec transformer on the overlay's own
// resources (docs/runners.md, "Argo CD / Flux").
func TestGitOpsBuildsTheCommittedOverlays(t *testing.T) {
	kustomize := kustomizeBin(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed: no clone to build")
	}
	top, err := exec.Command("git", "-C", "..", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not a git checkout (%v): no commit to clone", err)
	}
	clone := filepath.Join(t.TempDir(), "repo")
	runIn(t, t.TempDir(), nil, "git", "clone", "--quiet", strings.TrimSpace(string(top)), clone)
	// The function of the clone's commit, not of the working tree.
	fn := filepath.Join(clone, "bin", "mlops-fn")
	runIn(t, clone, nil, "go", "build", "-o", fn, "./fn/mlops-fn")

	var overlays []string
	for _, pattern := range []string{"quickstart/k8s/mlops/*/job.yaml", "examples/*/job.yaml", "examples/*/*/job.yaml"} {
		jobs, err := filepath.Glob(filepath.Join(clone, pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs {
			rel, _ := filepath.Rel(clone, filepath.Dir(j))
			overlays = append(overlays, rel)
		}
	}
	if len(overlays) < 8 {
		t.Fatalf("found only %d overlays in the clone: %v", len(overlays), overlays)
	}
	for _, overlay := range overlays {
		t.Run(overlay, func(t *testing.T) {
			got := objects(t, runIn(t, clone, nil, kustomize, "build", overlay))

			// The function beside the same resources, the job spec left out:
			// it reads ../job.yaml and ../mlops.env itself.
			data, err := os.ReadFile(filepath.Join(clone, overlay, "kustomization.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			var k types.Kustomization
			if err := yaml.Unmarshal(data, &k); err != nil {
				t.Fatalf("%s/kustomization.yaml: %v", overlay, err)
			}
			resources := []string{}
			for _, r := range k.Resources {
				if r != "job.yaml" {
					resources = append(resources, "../"+r)
				}
			}
			function := filepath.Join(clone, overlay, ".function")
			kustomization, err := yaml.Marshal(map[string]any{"resources": resources, "transformers": []string{"fn.yaml"}})
			if err != nil {
				t.Fatal(err)
			}
			files := map[string]string{
				"kustomization.yaml": string(kustomization),
				"fn.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: mlops-fn\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: " + fn + "\ndata:\n  job: ../job.yaml\n",
			}
			if err := os.MkdirAll(function, 0o755); err != nil {
				t.Fatal(err)
			}
			for name, text := range files {
				if err := os.WriteFile(filepath.Join(function, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want := objects(t, runIn(t, clone, nil, kustomize, "build", "--enable-alpha-plugins", "--enable-exec", function))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("kustomize build of the committed %s (as Argo CD and Flux apply it) differs from the function: run `make hydrate` and commit the overlay (-function +committed):\n%s", overlay, diff)
			}
		})
	}
}
