// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"os"
	"path/filepath"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
)

// overlaysOf maps files, as pre-commit passes the changed ones, to the
// overlays they lie in: the nearest folder at or above each that holds a
// kustomization and an MLOpsJob spec named config (a base's own job.yaml,
// say an MPIJob, is not one). Each overlay comes once, in the order first
// met; a file in none is left out: a commit touches more than overlays.
func overlaysOf(files []string, config string) []string {
	var dirs []string
	seen := map[string]bool{}
	for _, f := range files {
		for dir := filepath.Dir(f); ; dir = filepath.Dir(dir) {
			if isOverlay(dir, config) {
				if !seen[dir] {
					seen[dir] = true
					dirs = append(dirs, dir)
				}
				break
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	return dirs
}

// isOverlay: dir holds a kustomization and a job spec named config that is
// an MLOpsJob, or that does not parse (hydrate then names its error).
func isOverlay(dir, config string) bool {
	found := false
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			found = true
			break
		}
	}
	if !found {
		return false
	}
	spec := filepath.Join(dir, config)
	if _, err := os.Stat(spec); err != nil {
		return false
	}
	n, err := yaml.ReadFile(spec)
	return err != nil || n.GetKind() == api.Kind
}
