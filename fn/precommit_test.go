// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// preCommitHook is an entry of .pre-commit-hooks.yaml, as pre-commit reads it.
type preCommitHook struct {
	ID            string `yaml:"id"`
	Name          string `yaml:"name"`
	Entry         string `yaml:"entry"`
	Language      string `yaml:"language"`
	Files         string `yaml:"files"`
	Exclude       string `yaml:"exclude"`
	PassFilenames *bool  `yaml:"pass_filenames"`
	AlwaysRun     bool   `yaml:"always_run"`
}

const hookID = "mlops-fn-hydrate-check"

// theHook is the repository's mlops-fn-hydrate-check hook.
func theHook(t *testing.T) preCommitHook {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, ".pre-commit-hooks.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var hooks []preCommitHook
	if err := yaml.Unmarshal(data, &hooks); err != nil {
		t.Fatalf(".pre-commit-hooks.yaml: %v", err)
	}
	for _, h := range hooks {
		if h.ID == hookID {
			return h
		}
	}
	t.Fatalf(".pre-commit-hooks.yaml has no hook %s: %+v", hookID, hooks)
	return preCommitHook{}
}

// TestPreCommitHookFile: the hook is pre-commit's golang kind, whose install
// (`go install ./...` at the repository's root) puts the entry's command on
// PATH, and it is handed the changed files, which --files maps to overlays.
func TestPreCommitHookFile(t *testing.T) {
	h := theHook(t)
	if h.Name == "" || h.Language != "golang" {
		t.Errorf("want a name and language golang (pre-commit installs the module's commands with go install ./...), got %+v", h)
	}
	entry := strings.Fields(h.Entry)
	if len(entry) == 0 {
		t.Fatal("the hook has no entry")
	}
	target, err := exec.Command("go", "list", "-f", "{{.Name}} {{.Target}}", "./mlops-fn").Output()
	if err != nil {
		t.Fatal(err)
	}
	name, bin, _ := strings.Cut(strings.TrimSpace(string(target)), " ")
	if name != "main" || filepath.Base(bin) != entry[0] {
		t.Errorf("go install ./... installs fn/mlops-fn as %s (package %s), the hook runs %s", filepath.Base(bin), name, entry[0])
	}
	if h.PassFilenames != nil && !*h.PassFilenames || !strings.Contains(h.Entry, "--files") {
		t.Errorf("the hook should pass the changed files to hydrate --files: %+v", h)
	}
}

// gitRepo is a new repository with a job made by mlops-fn init, committed.
func gitRepo(t *testing.T) (dir string, env []string) {
	t.Helper()
	dir = t.TempDir()
	env = append(onPath(filepath.Join(repoRoot, "bin")),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	runIn(t, dir, env, "git", "init", "--quiet")
	runIn(t, dir, env, filepath.Join(repoRoot, "bin", "mlops-fn"), "init", "my-job")
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not an overlay\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runIn(t, dir, env, "git", "add", "-A")
	runIn(t, dir, env, "git", "commit", "--quiet", "-m", "my-job")
	return dir, env
}

// edit rewrites a file of the repository with a regexp, and stages everything.
func editStaged(t *testing.T, dir string, env []string, file, old, replacement string) {
	t.Helper()
	path := filepath.Join(dir, file)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(old)
	if !re.Match(data) {
		t.Fatalf("%s has no %q:\n%s", file, old, data)
	}
	if err := os.WriteFile(path, re.ReplaceAll(data, []byte(replacement)), 0o644); err != nil {
		t.Fatal(err)
	}
	runIn(t, dir, env, "git", "add", "-A")
}

// TestPreCommitHookEntry runs the hook's entry as pre-commit does on a
// commit: on the staged files (pre-commit's git diff filter, which drops
// deleted ones), filtered by the hook's files and exclude, from the
// repository's root, and with none only when always_run. An overlay whose
// mlops.env or base changed without hydrate fails it, naming the overlay;
// hydrated and staged, it passes, and so do files in no overlay. A commit
// that only deletes mlops.env fails it too.
func TestPreCommitHookEntry(t *testing.T) {
	binary(t)
	h := theHook(t)
	dir, env := gitRepo(t)
	hook := func(t *testing.T) (string, error) {
		t.Helper()
		staged := strings.Fields(runIn(t, dir, env, "git", "diff", "--cached", "--name-only", "--diff-filter=ACMRTUXB"))
		var files []string
		for _, f := range staged {
			if (h.Files == "" || regexp.MustCompile(h.Files).MatchString(f)) && (h.Exclude == "" || !regexp.MustCompile(h.Exclude).MatchString(f)) {
				files = append(files, f)
			}
		}
		if len(files) == 0 && !h.AlwaysRun {
			return "", nil // pre-commit skips the hook: no files to check
		}
		// The entry's command, as pre-commit finds it on the PATH of the
		// hook's environment: here the build, named as go install names it.
		entry := strings.Fields(h.Entry)
		cmd := exec.Command(filepath.Join(repoRoot, "bin", entry[0]), append(entry[1:], files...)...)
		cmd.Dir, cmd.Env = dir, env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		return stderr.String(), err
	}
	for _, c := range []struct{ name, file, old, replacement string }{
		{"WORKERS edited in mlops.env", "my-job/mlops.env", `(?m)^WORKERS=2$`, "WORKERS=3"},
		{"the base's job edited", "my-job/base/mpijob.yaml", `(?m)^spec:$`, "spec:\n  runPolicy:\n    cleanPodPolicy: All"},
	} {
		t.Run(c.name, func(t *testing.T) {
			editStaged(t, dir, env, "notes.txt", `(?s).*`, "not an overlay: "+c.name+"\n")
			if stderr, err := hook(t); err != nil {
				t.Fatalf("the hook fails on a file in no overlay: %v\n%s", err, stderr)
			}
			editStaged(t, dir, env, c.file, c.old, c.replacement)
			stderr, err := hook(t)
			if err == nil || !strings.Contains(stderr, "my-job is stale") || !strings.Contains(stderr, "mlops-fn hydrate my-job") {
				t.Errorf("the hook on a stale overlay: %v, want it to fail naming my-job and the command:\n%s", err, stderr)
			}
			runIn(t, dir, env, filepath.Join(repoRoot, "bin", "mlops-fn"), "hydrate", "my-job")
			runIn(t, dir, env, "git", "add", "-A")
			if stderr, err := hook(t); err != nil {
				t.Errorf("the hook fails on the hydrated overlay: %v\n%s", err, stderr)
			}
			runIn(t, dir, env, "git", "commit", "--quiet", "-m", c.name)
		})
	}
	t.Run("mlops.env deleted", func(t *testing.T) {
		runIn(t, dir, env, "git", "rm", "--quiet", "my-job/mlops.env")
		stderr, err := hook(t)
		if err == nil || !strings.Contains(stderr, "my-job/job.yaml: spec.envFile: mlops.env not found") {
			t.Errorf("the hook on a commit that deletes mlops.env: %v, want it to fail naming the file:\n%s", err, stderr)
		}
		runIn(t, dir, env, "git", "reset", "--quiet", "HEAD", "my-job/mlops.env")
		runIn(t, dir, env, "git", "checkout", "--", "my-job/mlops.env")
		if stderr, err := hook(t); err != nil {
			t.Errorf("the hook with mlops.env back: %v\n%s", err, stderr)
		}
	})
}

// TestCheckFilesOfAFolder: --files given an overlay's folder checks that
// overlay (it looked only above it, and passed a stale one in silence).
func TestCheckFilesOfAFolder(t *testing.T) {
	binary(t)
	dir, env := gitRepo(t)
	editStaged(t, dir, env, "my-job/mlops.env", `(?m)^WORKERS=2$`, "WORKERS=3")
	cmd := exec.Command(filepath.Join(repoRoot, "bin", "mlops-fn"), "hydrate", "--check", "--files", "my-job")
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "my-job is stale") {
		t.Errorf("hydrate --check --files on a stale overlay's folder: %v, want it to fail naming my-job:\n%s", err, out)
	}
}

// TestPreCommitRunsTheHook: pre-commit itself (Debian's package; .ci/run
// installs it) installs the hook from this repository and runs it on a
// commit's staged files.
func TestPreCommitRunsTheHook(t *testing.T) {
	preCommit, err := exec.LookPath("pre-commit")
	if err != nil {
		t.Skip("pre-commit not installed: apt-get install pre-commit (.ci/run installs it)")
	}
	top, err := exec.Command("git", "-C", "..", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not a git checkout (%v): pre-commit installs hooks from a repository", err)
	}
	binary(t)
	dir, env := gitRepo(t)
	gomodcache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	// pre-commit's go install sets GOPATH to the hook's folder: the module
	// cache stays the machine's, so nothing is downloaded again.
	env = append(env, "PRE_COMMIT_HOME="+t.TempDir(), "GOMODCACHE="+strings.TrimSpace(string(gomodcache)))
	tryRepo := func() (string, error) {
		cmd := exec.Command(preCommit, "try-repo", strings.TrimSpace(string(top)), hookID)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	editStaged(t, dir, env, "my-job/mlops.env", `(?m)^WORKERS=2$`, "WORKERS=3")
	out, err := tryRepo()
	if err == nil || !strings.Contains(out, "my-job is stale") {
		t.Errorf("pre-commit on a stale overlay: %v, want it to fail naming my-job:\n%s", err, out)
	}
	runIn(t, dir, env, filepath.Join(repoRoot, "bin", "mlops-fn"), "hydrate", "my-job")
	runIn(t, dir, env, "git", "add", "-A")
	if out, err := tryRepo(); err != nil || !strings.Contains(out, "Passed") {
		t.Errorf("pre-commit on the hydrated overlay: %v\n%s", err, out)
	}
	// pre-commit passes no deleted file: the hook runs anyway and finds it.
	runIn(t, dir, env, "git", "commit", "--quiet", "-m", "hydrated")
	runIn(t, dir, env, "git", "rm", "--quiet", "my-job/mlops.env")
	if out, err := tryRepo(); err == nil || !strings.Contains(out, "mlops.env not found") {
		t.Errorf("pre-commit on a commit that deletes mlops.env: %v, want it to fail naming the file:\n%s", err, out)
	}
}
