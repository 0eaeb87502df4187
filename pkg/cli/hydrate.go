// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/hydrate"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/kinds"
	"github.com/mlops-fn/mlops-fn/pkg/krm"
	"github.com/mlops-fn/mlops-fn/pkg/scaffold"
)

func newHydrate() *cobra.Command {
	var o hydrate.Options
	var check, files, staged bool
	cmd := &cobra.Command{
		Use:   "hydrate DIR...",
		Short: "Write an overlay's patch files and kustomization, for `kubectl apply -k DIR`",
		Long: fmt.Sprintf(`hydrate renders DIR/job.yaml with its mlops.env against the base that
DIR/kustomization.yaml names (the job's own containers, as the function finds
them) and writes DIR/%s/, a kustomize Component kubectl applies without mlops-fn:
%s               the job's one patch: its fields, the ids and hardening, the
               volumes (or the whole job, when the base has none)
  the guard    makes the build fail, saying to run hydrate, once mlops.env or
               job.yaml changed after this run
Each list of a patch that merges by key says its key in a comment
(containers: # {"x-kubernetes-patch-merge-key":"name",...}): kustomize reads
it there, as it knows no CRD's schema, and the build's own schema stays as it
is. For a job of a CRD (%s) it adds %s,
the fields where the job names ConfigMaps, Secrets and ServiceAccounts.
In DIR/kustomization.yaml it keeps %d entries, each marked "# mlops-fn hydrate":
%severy other line stays. After any edit of job.yaml or mlops.env, run hydrate
again.

Before writing, it builds the overlay as kubectl does and compares it with
mlops-fn run, in this process, as kustomize runs a transformer (after the
kustomization's own fields); on a difference it writes nothing and names the
fields that differ and the entries likely to set them. Nothing is written
unless every folder renders; a folder's component is swapped in one step, and
a failure puts every folder back. The base init wrote, while unedited, is
rewritten for a renamed job or another jobKind as part of the same write.
The env file must lie in its folder. Two runs on one folder take turns: each
holds a lock of the folder (flock) from its first read to its last write.

With --check nothing is written: the command fails when what DIR builds
differs from what it would build once hydrated (CI's drift check), naming the
first object and field that differ; files that differ but build the same
objects pass.

With --files the arguments are files, as pre-commit passes the changed ones:
the overlay of each, the nearest folder above it (or, for a folder, at it)
holding kustomization.yaml and the job spec, is hydrated or checked once; a
file in no overlay is skipped (a folder with a warning). --staged adds the files git's index changes
against HEAD, those deleted or renamed away included, which pre-commit never
passes: the pre-commit hook's form (.pre-commit-hooks.yaml).`, hydrate.ComponentDir,
			kinds.All.Column(func(k jobkind.Facts) string { return " " + k.PatchFile }), // the kinds' names in 12 columns
			// the kinds an operator's CRD defines, which kustomize knows nothing of
			slices.DeleteFunc(slices.Clone(kinds.All), jobkind.Facts.BuiltIn).Sentence("or", func(k jobkind.Facts) string { return k.Kind }),
			hydrate.NameReferenceFile, len(hydrate.KustomizationEntries), kustomizationEntries()),
		Args: func(_ *cobra.Command, dirs []string) error {
			if len(dirs) == 0 && !staged {
				return fmt.Errorf("needs at least one overlay folder (the folder holding %s and %s)", o.Config, api.DefaultEnvPath)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, dirs []string) error {
			if os.Getenv("GOGC") == "" {
				// kyaml's merge of a long list allocates short-lived garbage in quadratic amounts: collecting
				// less often saves a fifth of a long spec's hydrate, for twice its small peak memory.
				debug.SetGCPercent(400)
			}
			if staged && !files {
				return fail(cmd, fmt.Errorf("--staged adds files, not overlay folders: it needs --files (mlops-fn hydrate --check --files --staged)"))
			}
			if staged {
				paths, err := stagedPaths()
				if err != nil {
					return fail(cmd, err)
				}
				dirs = append(dirs, paths...)
			}
			if files {
				var outside []string
				dirs, outside = overlaysOf(dirs, o.Config)
				for _, f := range outside {
					krm.Report(cmd.ErrOrStderr(), framework.Results{{Severity: framework.Warning, Message: fmt.Sprintf(
						"%s: skipped: no folder at or above it holds a kustomization and an %s %s, so it lies in no overlay", f, api.Kind, o.Config)}})
				}
			}
			// Render every folder before writing any, so a bad one leaves all untouched.
			overlays := make([]*hydrate.Overlay, len(dirs))
			seen := map[string]string{}
			for _, dir := range dirs {
				if real, err := filepath.EvalSymlinks(dir); err == nil {
					if abs, err := filepath.Abs(real); err == nil {
						if first, twice := seen[abs]; twice {
							return fail(cmd, fmt.Errorf("%s and %s are the same folder; accepted: each overlay folder once", first, dir))
						}
						seen[abs] = dir
					}
				}
				if info, err := os.Stat(dir); err == nil && !info.IsDir() {
					return fail(cmd, fmt.Errorf("%s is a file; hydrate takes the overlay folder that holds %s and %s: mlops-fn hydrate %s", dir, o.Config, api.DefaultEnvPath, filepath.Dir(dir)))
				}
			}
			// Every folder locked first, in one order, for the whole run.
			unlock, err := hydrate.Lock(dirs...)
			if err != nil {
				return fail(cmd, err)
			}
			defer unlock()
			// Infos say what hydrate writes: printed once it has, never under --check.
			var infos, notes framework.Results
			for i, dir := range dirs {
				opts := o
				opts.Dir = dir
				if !check {
					opts, notes = following(opts, notes)
				}
				ov, err := hydrate.Render(opts)
				if err != nil {
					return fail(cmd, err)
				}
				for _, r := range ov.Warnings {
					if r.Severity == framework.Info {
						infos = append(infos, r)
					} else {
						krm.Report(cmd.ErrOrStderr(), framework.Results{r})
					}
				}
				overlays[i] = ov
			}
			if !check {
				if err := hydrate.WriteAll(overlays); err != nil {
					return fail(cmd, err)
				}
				krm.Report(cmd.ErrOrStderr(), append(infos, notes...))
				return nil
			}
			for i, dir := range dirs {
				drift, err := overlays[i].Drift()
				if err != nil {
					return fail(cmd, err)
				}
				if drift != "" {
					return fail(cmd, fmt.Errorf("%s is stale: %s; run `mlops-fn hydrate %s`", dir, drift, dir))
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&o.Config, "config", "job.yaml", "the job spec's file name in each DIR")
	cmd.Flags().StringSliceVar(&o.Resources, "resources", nil, "resources of a new kustomization.yaml (the base with the skeleton)")
	cmd.Flags().BoolVar(&check, "check", false, "write nothing; fail when what DIR builds differs from what it would build once hydrated")
	cmd.Flags().BoolVar(&files, "files", false, "the arguments are files: take the overlay each lies in (pre-commit's hook)")
	cmd.Flags().BoolVar(&staged, "staged", false, "with --files: also the files git's index changes, deleted ones included (pre-commit passes none of those)")
	cmd.Flags().BoolVar(&o.Verbose, "verbose", false, verboseUsage)
	return cmd
}

// following is o with the base init wrote in o.Dir made to follow the job spec when it must (scaffold.Follow),
// written with the overlay or not at all; notes gains the note that says so, for once it is written.
func following(o hydrate.Options, notes framework.Results) (hydrate.Options, framework.Results) {
	if base := scaffold.Follow(o.Dir, o.Config); base != nil {
		o.Folders = base.Folders()
		notes = append(notes, &framework.Result{Severity: framework.Info, Message: base.Note})
	}
	return o, notes
}

// fail reports err on stderr: results one per line, anything else as is.
func fail(cmd *cobra.Command, err error) error {
	if results, ok := err.(framework.Results); ok {
		krm.Report(cmd.ErrOrStderr(), results)
		return markReported(err)
	}
	return reportError(cmd.ErrOrStderr(), err)
}

func kustomizationEntries() string {
	var b strings.Builder
	for _, e := range hydrate.KustomizationEntries {
		fmt.Fprintf(&b, "  %-19s %s\n", e.Field, e.What)
	}
	return b.String()
}

// overlaysOf maps files, as pre-commit passes the changed ones, to the overlays they lie in, once each in the
// order first met: the nearest folder at or above each that isOverlay. A file in none is left out (a commit
// touches more than overlays); a folder in none, which a person named, is in outside.
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

// stagedPaths are the paths git's index changes against HEAD, relative to the working folder, also those
// pre-commit does not pass (a deleted file, a renamed one's old name), after which an overlay may not build.
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
	if !hasKustomization(dir, func(err error) bool { return err == nil }) {
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

// hasKustomization: dir holds a kustomization file, as found reads os.Stat's error.
func hasKustomization(dir string, found func(error) bool) bool {
	return slices.ContainsFunc(konfig.RecognizedKustomizationFileNames(), func(name string) bool {
		_, err := os.Stat(filepath.Join(dir, name))
		return found(err)
	})
}
