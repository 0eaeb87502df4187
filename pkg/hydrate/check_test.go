package hydrate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/mlops-fn/mlops-fn/pkg/schema"
)

// TestTheCheckRefusesAContradiction: a patch of the user's kustomization,
// which kustomize applies after the component, setting the workers' replicas
// against WORKERS: the function, run after it, would set them back, so the
// overlay would differ from the function's run, and hydrate writes nothing.
func TestTheCheckRefusesAContradiction(t *testing.T) {
	root, _ := overlay(t, "multi-node-nonroot")
	dir := filepath.Join(root, "overlay")
	write(t, filepath.Join(dir, "replicas.yaml"), "- op: replace\n  path: /spec/mpiReplicaSpecs/Worker/replicas\n  value: 7\n")
	k, _ := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	write(t, filepath.Join(dir, "kustomization.yaml"), strings.Replace(string(k), "patches:\n", "patches:\n- path: replicas.yaml\n  target: {kind: MPIJob, name: resnet50}\n", 1))
	before := snapshot(t, root)
	_, err := Render(Options{Dir: dir})
	if err == nil || !strings.Contains(err.Error(), "would differ from mlops-fn run as a kustomize transformer") || !strings.Contains(err.Error(), `"7"`) {
		t.Fatalf("want the check's difference, with replicas: 7, got %v", err)
	}
	if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
		t.Errorf("the refused run changed files:\n%s", diff)
	}
}

// TestTheCheckFollowsRenames: namePrefix: and nameSuffix: in the hydrated
// kustomization act before the function, which finds its target and the env
// ConfigMap by the names kustomize replaced, as kustomize hands them to a
// transformer: the check passes, and the job reads the renamed ConfigMap.
func TestTheCheckFollowsRenames(t *testing.T) {
	root, _ := overlay(t, "multi-node-nonroot")
	dir := filepath.Join(root, "overlay")
	k, _ := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	write(t, filepath.Join(dir, "kustomization.yaml"), string(k)+"namePrefix: dev-\nnameSuffix: -b\n")
	hydrateDir(t, dir)
	jobs := 0
	for _, o := range kustomize(t, dir) {
		if o["kind"] != "MPIJob" {
			continue
		}
		jobs++
		if name := o["metadata"].(map[string]any)["name"]; name != "dev-resnet50-b" {
			t.Errorf("the job is named %v", name)
		}
	}
	if jobs != 1 {
		t.Errorf("want one MPIJob, got %d", jobs)
	}

	// The renamed job's pod names are checked as the function checks them.
	k, _ = os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	write(t, filepath.Join(dir, "kustomization.yaml"), strings.Replace(string(k), "namePrefix: dev-\n", "namePrefix: "+strings.Repeat("a", 50)+"-\n", 1))
	if _, err := Render(Options{Dir: dir}); err == nil || !strings.Contains(err.Error(), "must be no more than 63 characters") {
		t.Errorf("a namePrefix that makes pod names too long: want the function's error, got %v", err)
	}
}

// TestBuildsDoNotShareTheSchema: kyaml's OpenAPI schema is a global that
// kustomize sets from a kustomization's openapi: and keeps for the next build
// without one; each build starts afresh, so a build after one with openapi:
// gives what it gives alone.
func TestBuildsDoNotShareTheSchema(t *testing.T) {
	withOpenAPI, plain := t.TempDir(), t.TempDir()
	deployment := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        image: web:1\n"
	patch := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: sidecar\n        image: sidecar:1\n"
	for _, dir := range []string{withOpenAPI, plain} {
		write(t, filepath.Join(dir, "deployment.yaml"), deployment)
		write(t, filepath.Join(dir, "patch.yaml"), patch)
		write(t, filepath.Join(dir, "kustomization.yaml"), "resources:\n- deployment.yaml\npatches:\n- path: patch.yaml\n")
	}
	// A document that knows no Deployment: its containers list is replaced.
	if err := os.WriteFile(filepath.Join(withOpenAPI, "schema.json"), schema.Document(), 0o644); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(withOpenAPI, "kustomization.yaml"), "resources:\n- deployment.yaml\npatches:\n- path: patch.yaml\nopenapi:\n  path: schema.json\n")

	alone, err := build(filesys.MakeFsOnDisk(), plain)
	if err != nil {
		t.Fatal(err)
	}
	custom, err := build(filesys.MakeFsOnDisk(), withOpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	after, err := build(filesys.MakeFsOnDisk(), plain)
	if err != nil {
		t.Fatal(err)
	}
	if diff, err := difference(alone, custom); err != nil || diff == "" {
		t.Fatalf("the openapi: build should replace the containers (and so differ), got diff %q, %v", diff, err)
	}
	if diff, err := difference(alone, after); err != nil || diff != "" {
		t.Errorf("a build after one with openapi: differs from the same build alone (-alone +after): %v\n%s", err, diff)
	}
}
