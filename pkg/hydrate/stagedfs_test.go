// SPDX-License-Identifier: Apache-2.0

package hydrate

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/mlops-fn/mlops-fn/internal/testutil"
)

// TestARemoteBaseLeavesNoClone: kustomize clones a remote base (here a git repository by file://) into a folder of
// the temporary folder and removes it through the build's file system, which is hydrate's staged one: hydrate and
// --check leave no clone behind (each build left one).
func TestARemoteBaseLeavesNoClone(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: kustomize clones a remote base with it")
	}
	repo, dir, tmp := t.TempDir(), t.TempDir(), t.TempDir()
	t.Setenv("TMPDIR", tmp)
	if err := testutil.CopyTree("../../quickstart/common", filepath.Join(repo, "common")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base"}} {
		if out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	for _, name := range []string{"job.yaml", "mlops.env"} {
		data, err := os.ReadFile(filepath.Join("../../quickstart/k8s/mlops/multi-node", name))
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, name), string(data))
	}
	write(t, filepath.Join(dir, "kustomization.yaml"), "resources:\n- file://"+repo+"//common/tensorflow/k8s/mlops/multi-node?ref=main\n")
	ov, err := Render(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := ov.Write(); err != nil {
		t.Fatal(err)
	}
	if ov, err = Render(Options{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	drift, err := ov.Drift()
	ov.Unlock()
	if err != nil || drift != "" {
		t.Fatalf("a fresh hydrate drifts: %q, %v", drift, err)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "kustomize-*")); len(left) > 0 {
		t.Errorf("the builds left kustomize's clones behind: %v", left)
	}
}
