// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/hydrate"
)

// overlaysOf maps files, as pre-commit passes the changed ones, to the overlays they lie in: the nearest
// folder above each (at it, for a folder) that holds a kustomization and an MLOpsJob spec named config (a
// base's own job.yaml, say an MPIJob, is not one). Each overlay comes once, in the order first met; a file in
// none is left out: a commit touches more than overlays. A folder in none, which a person named, is in
// outside.
func overlaysOf(files []string, config string) (dirs, outside []string) {
	seen := map[string]bool{}
	for _, f := range files {
		start, folder := filepath.Dir(f), false
		if info, err := os.Stat(f); err == nil && info.IsDir() {
			start, folder = filepath.Clean(f), true
		}
		for dir := start; ; dir = filepath.Dir(dir) {
			if isOverlay(dir, config) {
				if !seen[dir] {
					seen[dir] = true
					dirs = append(dirs, dir)
				}
				break
			}
			if filepath.Dir(dir) == dir {
				if folder {
					outside = append(outside, f)
				}
				break
			}
		}
	}
	return dirs, outside
}

// stagedPaths are the paths git's index changes against HEAD, relative to the working folder: those
// pre-commit passes, and those it does not, a deleted file and the old name of a renamed one, after which an
// overlay may no longer build.
func stagedPaths() ([]string, error) {
	top, err := git("rev-parse", "--show-toplevel")
	if err != nil {
		return nil, err
	}
	out, err := git("diff", "--cached", "--name-only", "--no-renames", "-z")
	if err != nil {
		return nil, err
	}
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, p := range strings.Split(out, "\x00") {
		if p == "" {
			continue
		}
		rel, err := filepath.Rel(cwd, filepath.Join(strings.TrimSpace(top), filepath.FromSlash(p)))
		if err != nil {
			return nil, err
		}
		paths = append(paths, rel)
	}
	return paths, nil
}

func git(args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("git", args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("--staged reads git's index: git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// isOverlay: dir holds a kustomization and a job spec named config that is an MLOpsJob, or that does not
// parse (hydrate then names its error), or no job spec but the component hydrate wrote (the spec deleted:
// hydrate names the missing file).
func isOverlay(dir, config string) bool {
	if !slices.ContainsFunc(konfig.RecognizedKustomizationFileNames(), func(name string) bool {
		_, err := os.Stat(filepath.Join(dir, name))
		return err == nil
	}) {
		return false
	}
	spec := filepath.Join(dir, config)
	if _, err := os.Stat(spec); err != nil {
		_, err := os.Stat(filepath.Join(dir, hydrate.ComponentDir, "kustomization.yaml"))
		return err == nil
	}
	n, err := yaml.ReadFile(spec)
	return err != nil || n.GetKind() == api.Kind
}
