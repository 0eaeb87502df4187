// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mlops-fn/mlops-fn/internal/testutil"
	"github.com/mlops-fn/mlops-fn/pkg/kinds"
)

// TestWalkthrough runs the README's first-job walkthrough as written, in a
// new folder, up to kubectl apply (make e2e runs them all: TestRealWalkthrough), and
// checks the overlay kubectl would apply carries the edit: -np 3.
func TestWalkthrough(t *testing.T) {
	binary(t)
	kubectl := tool(t, "kubectl", "install kubectl v1.32")
	data, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	block, ok := testutil.MarkedBlock(string(data), "walkthrough")
	if !ok {
		t.Fatal("README: no ```sh block between <!-- walkthrough: … --> and <!-- /walkthrough -->")
	}
	bin, err := filepath.Abs(filepath.Join(repoRoot, "bin"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ran := 0
	for _, line := range strings.Split(block, "\n") {
		if strings.HasPrefix(line, "kubectl apply") {
			break
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		cmd := exec.Command("bash", "-c", line)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
		ran++
	}
	if ran < 3 {
		t.Fatalf("ran %d lines of the walkthrough; want init, the edit and hydrate", ran)
	}
	out, err := exec.Command(kubectl, "kustomize", filepath.Join(dir, "my-job")).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl kustomize my-job: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "- -np\n            - \"3\"") || !strings.Contains(string(out), "replicas: 3") {
		t.Errorf("the overlay does not carry WORKERS=3 (-np 3, 3 workers):\n%s", out)
	}
}

// TestInitEveryKind: init gives, for each kind, a folder kubectl builds into
// the job of that kind named like the folder; a second init into it is refused.
func TestInitEveryKind(t *testing.T) {
	binary(t)
	kubectl := tool(t, "kubectl", "install kubectl v1.32")
	fn, err := filepath.Abs(filepath.Join(repoRoot, "bin", "mlops-fn"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kinds.All {
		jobKind, kind, name := string(k.JobKind()), k.Kind, "bert-"+strings.ToLower(string(k.JobKind()))
		t.Run(jobKind, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), name)
			if out, err := exec.Command(fn, "init", "--kind", jobKind, dir).CombinedOutput(); err != nil {
				t.Fatalf("init: %v\n%s", err, out)
			}
			out, err := exec.Command(kubectl, "kustomize", dir).CombinedOutput()
			if err != nil {
				t.Fatalf("kubectl kustomize: %v\n%s", err, out)
			}
			got := objects(t, string(out))
			if _, ok := got[kind+"/"+name]; !ok {
				t.Errorf("no %s/%s among %v", kind, name, got)
			}
			again, err := exec.Command(fn, "init", "--kind", jobKind, dir).CombinedOutput()
			if err == nil || !strings.Contains(string(again), "exists and is not empty") {
				t.Errorf("a second init into %s: want it refused, got %v\n%s", dir, err, again)
			}
		})
	}
	// A bad name leaves nothing behind.
	dir := filepath.Join(t.TempDir(), "Bad_Name")
	if out, err := exec.Command(fn, "init", dir).CombinedOutput(); err == nil || !strings.Contains(string(out), `the job's name "Bad_Name"`) {
		t.Errorf("init with an invalid job name: want it refused, got %v\n%s", err, out)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the refused init left %s: %v", dir, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(dir))
	if len(entries) > 0 {
		t.Errorf("the refused init left files: %v", entries)
	}
}

// TestInitRenamed: after init, job.yaml's name and jobKind edited: hydrate
// rewrites the skeleton init wrote, saying so, and the overlay builds the
// renamed job of the new kind alone (before, the old MPIJob stayed beside a
// generated PyTorchJob); a skeleton the user edited is theirs: hydrate
// leaves it and names the mismatch.
func TestInitRenamed(t *testing.T) {
	binary(t)
	kubectl := tool(t, "kubectl", "install kubectl v1.32")
	fn, err := filepath.Abs(filepath.Join(repoRoot, "bin", "mlops-fn"))
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"MPIJob", "PyTorchJob", "TrainJob", "Pod"} {
		t.Run(kind, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ren")
			if out, err := exec.Command(fn, "init", dir).CombinedOutput(); err != nil {
				t.Fatalf("init: %v\n%s", err, out)
			}
			spec := filepath.Join(dir, "job.yaml")
			text, err := os.ReadFile(spec)
			if err != nil {
				t.Fatal(err)
			}
			edited := strings.Replace(strings.Replace(string(text), "name: ren\n", "name: renamed\n", 1), "jobKind: MPIJob", "jobKind: "+kind, 1)
			if kind == "TrainJob" {
				edited += "  trainer: {runtime: torch-distributed}\n" // else hydrate asks for it
			}
			if err := os.WriteFile(spec, []byte(edited), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(fn, "hydrate", dir).CombinedOutput()
			if err != nil {
				t.Fatalf("hydrate after renaming: %v\n%s", err, out)
			}
			if kind != "MPIJob" && !strings.Contains(string(out), "the skeleton init wrote, MPIJob/ren, follows "+spec+": now "+kind+"/renamed") {
				t.Errorf("hydrate does not say the skeleton follows job.yaml:\n%s", out)
			}
			built, err := exec.Command(kubectl, "kustomize", dir).CombinedOutput()
			if err != nil {
				t.Fatalf("kubectl kustomize: %v\n%s", err, built)
			}
			var jobs []string
			for id := range objects(t, string(built)) {
				if k, _, _ := strings.Cut(id, "/"); kinds.All.Is(k) {
					jobs = append(jobs, id)
				}
			}
			if want := []string{kind + "/renamed"}; strings.Join(jobs, " ") != strings.Join(want, " ") {
				t.Errorf("the overlay builds the jobs %v; want %v", jobs, want)
			}
		})
	}
	// A skeleton edited by the user stays theirs.
	dir := filepath.Join(t.TempDir(), "own")
	if out, err := exec.Command(fn, "init", dir).CombinedOutput(); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	skeleton := filepath.Join(dir, "base", "mpijob.yaml")
	text, _ := os.ReadFile(skeleton)
	if err := os.WriteFile(skeleton, append(text, []byte("  slotsPerWorker: 2\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(dir, "job.yaml")
	text, _ = os.ReadFile(spec)
	if err := os.WriteFile(spec, []byte(strings.Replace(string(text), "name: own\n", "name: mine\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(fn, "hydrate", dir).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "the base holds MPIJob/own, which is not the job of") {
		t.Errorf("hydrate over an edited skeleton of another name: want the base's mismatch named, got %v\n%s", err, out)
	}
	if now, _ := os.ReadFile(skeleton); !strings.HasSuffix(string(now), "  slotsPerWorker: 2\n") {
		t.Errorf("hydrate rewrote the user's skeleton:\n%s", now)
	}
}

// TestHydrateRefusedLeavesTheBase: hydrate makes the base init wrote follow
// a renamed job only as part of a write: refused (a kustomization mixing
// line ends; a patch of the user's contradicting mlops-fn's), it leaves
// every file byte-identical and claims no rewrite; once the cause is gone,
// the next run renames the skeleton and says so.
func TestHydrateRefusedLeavesTheBase(t *testing.T) {
	binary(t)
	fn, err := filepath.Abs(filepath.Join(repoRoot, "bin", "mlops-fn"))
	if err != nil {
		t.Fatal(err)
	}
	const contradiction = "- target: {kind: MPIJob}\n  patch: |\n    - op: replace\n      path: /spec/mpiReplicaSpecs/Worker/replicas\n      value: 9\n"
	for _, c := range []struct {
		name  string
		spoil func(kustomization string) string
		want  string
	}{
		{"mixed line ends", func(k string) string {
			lines := strings.SplitAfter(k, "\n")
			for i := range 3 {
				lines[i] = strings.TrimSuffix(lines[i], "\n") + "\r\n"
			}
			return strings.Join(lines, "")
		}, "kustomization.yaml mixes line ends"},
		{"a contradicting patch", func(k string) string { return k + contradiction },
			"MPIJob/d4n: spec.mpiReplicaSpecs.Worker.replicas: mlops-fn renders 2, the kustomization's build gives 9"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "d4m")
			if out, err := exec.Command(fn, "init", dir).CombinedOutput(); err != nil {
				t.Fatalf("init: %v\n%s", err, out)
			}
			spec, kustomization := filepath.Join(dir, "job.yaml"), filepath.Join(dir, "kustomization.yaml")
			text, _ := os.ReadFile(spec)
			write := func(path, text string) {
				if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write(spec, strings.Replace(string(text), "\n  name: d4m\n", "\n  name: d4n\n", 1))
			hydrated, _ := os.ReadFile(kustomization)
			write(kustomization, c.spoil(string(hydrated)))
			before, err := testutil.Snapshot(dir)
			if err != nil {
				t.Fatal(err)
			}
			hydrate := exec.Command(fn, "hydrate", ".")
			hydrate.Dir = dir
			out, err := hydrate.CombinedOutput()
			if err == nil || !strings.Contains(string(out), c.want) {
				t.Errorf("hydrate: want it refused, saying %q, got %v\n%s", c.want, err, out)
			}
			if strings.Contains(string(out), "follows job.yaml") {
				t.Errorf("the refused hydrate claims the base follows job.yaml:\n%s", out)
			}
			after, err := testutil.Snapshot(dir)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(before, after); diff != "" {
				t.Errorf("the refused hydrate changed files (-before +after):\n%s", diff)
			}

			write(kustomization, string(hydrated))
			hydrate = exec.Command(fn, "hydrate", ".")
			hydrate.Dir = dir
			if out, err := hydrate.CombinedOutput(); err != nil || !strings.Contains(string(out), "the skeleton init wrote, MPIJob/d4m, follows job.yaml: now MPIJob/d4n") {
				t.Errorf("hydrate once mended: want the base renamed, saying so, got %v\n%s", err, out)
			}
			if skeleton, _ := os.ReadFile(filepath.Join(dir, "base", "mpijob.yaml")); !strings.Contains(string(skeleton), "\n  name: d4n\n") {
				t.Errorf("the base's skeleton is not renamed:\n%s", skeleton)
			}
		})
	}
}

// TestInitCommand: init's training command after --, or in --command, keeps
// a program's own commas (python -c 'print(1,2)' is three arguments).
func TestInitCommand(t *testing.T) {
	binary(t)
	fn, err := filepath.Abs(filepath.Join(repoRoot, "bin", "mlops-fn"))
	if err != nil {
		t.Fatal(err)
	}
	const want = `  command: [python, -c, "print(1,2)"] # the Pod's command`
	for _, args := range [][]string{
		{"--", "python", "-c", "print(1,2)"},
		{"--command", "python,-c,print(1,2)"},
		{"--command", "python", "--command", "-c", "--command", "print(1,2)"},
	} {
		dir := filepath.Join(t.TempDir(), "cmd")
		out, err := exec.Command(fn, append([]string{"init", "--kind", "Pod", "--image", "python:3", dir}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("init %v: %v\n%s", args, err, out)
		}
		spec, _ := os.ReadFile(filepath.Join(dir, "job.yaml"))
		if !strings.Contains(string(spec), want+"\n") {
			t.Errorf("init %v: job.yaml lacks %q:\n%s", args, want, spec)
		}
	}
}

// TestInitEmptyFolder: init writes into an empty folder, one made beforehand
// (mkdir e && init e) or the working one (init .), the job named like the
// folder; the folder then holds a hydrated overlay, and a second init into
// it is refused, naming it.
func TestInitEmptyFolder(t *testing.T) {
	binary(t)
	fn, err := filepath.Abs(filepath.Join(repoRoot, "bin", "mlops-fn"))
	if err != nil {
		t.Fatal(err)
	}
	parent := t.TempDir()
	for _, c := range []struct{ folder, arg, cwd string }{
		{"made-first", "made-first", parent},
		{"here", ".", filepath.Join(parent, "here")},
	} {
		dir := filepath.Join(parent, c.folder)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(fn, "init", c.arg)
		cmd.Dir = c.cwd
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("init %s in %s: %v\n%s", c.arg, c.cwd, err, out)
		}
		if spec, _ := os.ReadFile(filepath.Join(dir, "job.yaml")); !strings.Contains(string(spec), "\n  name: "+c.folder+"\n") {
			t.Errorf("init %s: the job is not named %s:\n%s", c.arg, c.folder, spec)
		}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				t.Errorf("init %s left %s", c.arg, e.Name())
			}
		}
		check := exec.Command(fn, "hydrate", "--check", c.arg)
		check.Dir = c.cwd
		if out, err := check.CombinedOutput(); err != nil {
			t.Errorf("hydrate --check %s after init: %v\n%s", c.arg, err, out)
		}
		env := filepath.Join(dir, "mlops.env")
		text, err := os.ReadFile(env)
		if err != nil {
			t.Fatal(err)
		}
		edited := strings.Replace(string(text), "\nWORKERS=2\n", "\nWORKERS=3\n", 1)
		if edited == string(text) {
			t.Fatalf("init %s: mlops.env has no WORKERS=2 line:\n%s", c.arg, text)
		}
		if err := os.WriteFile(env, []byte(edited), 0o644); err != nil {
			t.Fatal(err)
		}
		stale := exec.Command(fn, "hydrate", "--check", c.arg)
		stale.Dir = c.cwd
		if out, err := stale.CombinedOutput(); err == nil || !strings.Contains(string(out), "is stale: MPIJob/"+c.folder+": spec.mpiReplicaSpecs.Launcher.template.spec.containers[0].command[2]: hydrate would build \"3\", the folder builds \"2\", and 2 more;") {
			t.Errorf("hydrate --check %s after an edit of mlops.env: want it refused, naming the object and field that differ, got %v\n%s", c.arg, err, out)
		}
		again := exec.Command(fn, "init", c.arg)
		again.Dir = c.cwd
		if out, err := again.CombinedOutput(); err == nil || !strings.Contains(string(out), "exists and is not empty (it holds base, job.yaml") {
			t.Errorf("a second init %s: want it refused, naming what the folder holds, got %v\n%s", c.arg, err, out)
		}
	}
}

// TestInitCommandNewline: an argument with a newline, in --command as after
// --, reaches job.yaml whole (--command wrote a block scalar into a flow list,
// and init failed naming a temporary file).
func TestInitCommandNewline(t *testing.T) {
	binary(t)
	fn, err := filepath.Abs(filepath.Join(repoRoot, "bin", "mlops-fn"))
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--command", "python", "--command", "a\nb"},
		{"--", "python", "a\nb"},
	} {
		dir := filepath.Join(t.TempDir(), "nl")
		out, err := exec.Command(fn, append([]string{"init", "--image", "python:3", dir}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("init %q: %v\n%s", args, err, out)
		}
		spec, _ := os.ReadFile(filepath.Join(dir, "job.yaml"))
		if want := `  command: [python, "a\nb"] #`; !strings.Contains(string(spec), want) {
			t.Errorf("init %q: job.yaml lacks %q:\n%s", args, want, spec)
		}
	}
}

// TestInitRefusesCommands: a command that starts mpirun (the launcher would
// run mpirun inside mpirun) and one item with spaces (no program has that
// path) are refused, naming the item, and no folder is written.
func TestInitRefusesCommands(t *testing.T) {
	binary(t)
	fn, err := filepath.Abs(filepath.Join(repoRoot, "bin", "mlops-fn"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--", "mpirun", "-np", "4", "python", "train.py"}, `spec.command[0]: Invalid value: "mpirun": mlops-fn writes the launcher's mpirun line itself`},
		{[]string{"--command", "python train.py --lr 0.1"}, `spec.command[0]: Invalid value: "python train.py --lr 0.1": is run as one program whose path is the whole text`},
	} {
		dir := filepath.Join(t.TempDir(), "c4")
		out, err := exec.Command(fn, append([]string{"init", "--image", "python:3.12", dir}, c.args...)...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), c.want) {
			t.Errorf("init %q: want refused with %q, got %v\n%s", c.args, c.want, err, out)
		}
		if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("init %q: a refused init wrote %s (%v)", c.args, dir, err)
		}
	}
}

// TestHydrateSaysWhatItWrote: hydrate's own field of the env generator,
// edited, is written back and said once written; --check, which writes
// nothing, says only that the folder is stale.
func TestHydrateSaysWhatItWrote(t *testing.T) {
	fn, dir := initJob(t)
	path := filepath.Join(dir, "kustomization.yaml")
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(text), "  envs:\n  - mlops.env\n", "  envs:\n  - site.env\n", 1)
	if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	const said = "info: kustomization.yaml: configMapGenerator job-mpijob-env: envs[0]: site.env is hydrate's place"
	check := exec.Command(fn, "hydrate", "--check", ".")
	check.Dir = dir
	if out, err := check.CombinedOutput(); err == nil || strings.Contains(string(out), "info:") {
		t.Errorf("hydrate --check after the edit: want it stale, saying nothing of writing; got %v\n%s", err, out)
	}
	write := exec.Command(fn, "hydrate", ".")
	write.Dir = dir
	if out, err := write.CombinedOutput(); err != nil || !strings.Contains(string(out), said) {
		t.Errorf("hydrate after the edit: want it to say %q; got %v\n%s", said, err, out)
	}
}

// initJob makes a job "job" with mlops-fn init in a new folder, and returns
// the command's path and the job's folder.
func initJob(t *testing.T) (fn, dir string) {
	t.Helper()
	binary(t)
	fn, err := filepath.Abs(filepath.Join(repoRoot, "bin", "mlops-fn"))
	if err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(t.TempDir(), "job")
	if out, err := exec.Command(fn, "init", dir).CombinedOutput(); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	return fn, dir
}
