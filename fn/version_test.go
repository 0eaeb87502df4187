// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestVersion: `mlops-fn version` and --version print internal/version's
// text for the command's package, whose import path ends in mlops-fn (the
// name go install gives the binary).
func TestVersion(t *testing.T) {
	code, out, stderr := runBinary(t, "version")
	if code != 0 || !strings.HasPrefix(out, "mlops-fn ") || !strings.Contains(out, "package:  github.com/mlops-fn/mlops-fn/fn/mlops-fn\n") {
		t.Errorf("mlops-fn version: exit %d, %q, stderr %q", code, out, stderr)
	}
	if code, flag, stderr := runBinary(t, "--version"); code != 0 || flag != out {
		t.Errorf("mlops-fn --version: exit %d, %q, want %q; stderr %q", code, flag, out, stderr)
	}
}

// TestVersionNamesTheCommit: a build in a clone with VCS stamping (Go's
// default, and the release's) says the commit it was built from.
func TestVersionNamesTheCommit(t *testing.T) {
	if fi, err := os.Stat("../.git"); err != nil || !fi.IsDir() {
		t.Skip("no .git folder at the repository's root (a git worktree has a file): Go stamps no commit there")
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("git rev-parse HEAD: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "mlops-fn")
	if out, err := exec.Command("go", "build", "-buildvcs=true", "-o", bin, "./mlops-fn").CombinedOutput(); err != nil {
		t.Fatalf("go build -buildvcs=true: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.Contains(string(out), "commit:   "+strings.TrimSpace(string(head))+" ") || !strings.Contains(string(out), "\nmodified: ") {
		t.Errorf("version: %v, %q, want the commit %s and whether the tree was modified", err, out, head)
	}
}
