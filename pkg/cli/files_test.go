// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestOverlaysOf: each file maps to the nearest folder above it with a
// kustomization and an MLOpsJob job.yaml, once; a base whose own job.yaml is
// an MPIJob is not an overlay, and a file in no overlay maps to nothing.
func TestOverlaysOf(t *testing.T) {
	root := t.TempDir()
	spec := "apiVersion: mlops-fn.dev/v1alpha1\nkind: MLOpsJob\nmetadata:\n  name: a\n"
	for name, text := range map[string]string{
		"a/kustomization.yaml":           "resources:\n- base\n",
		"a/job.yaml":                     spec,
		"a/mlops.env":                    "WORKERS=2\n",
		"a/base/kustomization.yaml":      "resources:\n- job.yaml\n",
		"a/base/job.yaml":                "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata:\n  name: a\n",
		"a/mlops-fn/guard/checks.yaml":   "",
		"b/Kustomization":                "resources: []\n",
		"b/job.yaml":                     "not: [yaml",
		"c/kustomization.yaml":           "resources: []\n",
		"c/job.yaml":                     "apiVersion: v1\nkind: Pod\nmetadata:\n  name: c\n",
		"notes/readme.txt":               "",
		"a/no-overlay-here/x/kept.yaml":  "",
		"d/job.yaml":                     spec, // no kustomization: never hydrated
		"a/base/deep/er/kustomize.patch": "",
	} {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(root)
	got, _ := overlaysOf([]string{
		"notes/readme.txt", "a/mlops.env", "a/base/job.yaml", "a/mlops-fn/guard/checks.yaml", "a/gone.yaml",
		"a/no-overlay-here/x/kept.yaml", "a/base/deep/er/kustomize.patch", "b/job.yaml", "c/job.yaml", "d/job.yaml", "top.txt",
	}, "job.yaml")
	if want := []string{"a", "b"}; !slices.Equal(got, want) {
		t.Errorf("overlaysOf = %v, want %v", got, want)
	}
	// A folder is looked at itself first: an overlay, or the one it lies in.
	got, outside := overlaysOf([]string{"b", "notes", "a/base/", "c"}, "job.yaml")
	if want := []string{"b", "a"}; !slices.Equal(got, want) {
		t.Errorf("overlaysOf of folders = %v, want %v", got, want)
	}
	if want := []string{"notes", "c"}; !slices.Equal(outside, want) {
		t.Errorf("overlaysOf of folders: outside = %v, want %v", outside, want)
	}
}
