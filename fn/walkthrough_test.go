package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
)

// TestWalkthrough runs the README's first-job walkthrough as written, in a
// new folder, up to kubectl apply (make e2e applies such an overlay), and
// checks the overlay kubectl would apply carries the edit: -np 3.
func TestWalkthrough(t *testing.T) {
	binary(t)
	kubectl := tool(t, "kubectl", "install kubectl v1.32")
	data, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, block, found := strings.Cut(string(data), "<!-- walkthrough:")
	block, _, ok := strings.Cut(block, "<!-- /walkthrough -->")
	if !found || !ok {
		t.Fatal("README: no walkthrough block between <!-- walkthrough: … --> and <!-- /walkthrough -->")
	}
	_, block, _ = strings.Cut(block, "```sh\n")
	block, _, _ = strings.Cut(block, "```")
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

// TestInitEveryMode: init gives, in each mode, a folder kubectl builds into
// the job of that kind named like the folder; a second init into it is refused.
func TestInitEveryMode(t *testing.T) {
	binary(t)
	kubectl := tool(t, "kubectl", "install kubectl v1.32")
	fn, err := filepath.Abs(filepath.Join(repoRoot, "bin", "mlops-fn"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range jobkind.Kinds {
		mode, kind := string(k.Mode), k.Kind
		t.Run(mode, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "bert-"+mode)
			if out, err := exec.Command(fn, "init", "--mode", mode, dir).CombinedOutput(); err != nil {
				t.Fatalf("init: %v\n%s", err, out)
			}
			out, err := exec.Command(kubectl, "kustomize", dir).CombinedOutput()
			if err != nil {
				t.Fatalf("kubectl kustomize: %v\n%s", err, out)
			}
			got := objects(t, string(out))
			if _, ok := got[kind+"/bert-"+mode]; !ok {
				t.Errorf("no %s/bert-%s among %v", kind, mode, got)
			}
			again, err := exec.Command(fn, "init", "--mode", mode, dir).CombinedOutput()
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
