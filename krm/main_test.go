// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlops-fn/mlops-fn/pkg/krm"
)

// TestLinksNoBuild: the image's program links neither kustomize's build
// (hydrate's self-check, in the full command) nor the command line's cobra;
// of kustomize's api only its hasher (the env ConfigMap's name, over kyaml).
func TestLinksNoBuild(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"sigs.k8s.io/kustomize/api/", "github.com/spf13/cobra", "github.com/mlops-fn/mlops-fn/pkg/hydrate", "github.com/mlops-fn/mlops-fn/pkg/cli"} {
			if strings.HasPrefix(dep, banned) && dep != "sigs.k8s.io/kustomize/api/hasher" {
				t.Errorf("the image's program links %s", dep)
			}
		}
	}
}

// TestArguments: --help is the full command's help (kpt fn doc shows it),
// --version the build's version; any other argument is refused, naming the binary that has the command.
func TestArguments(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "mlops-fn-krm")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--help").Output()
	if err != nil || string(out) != krm.Help() {
		t.Errorf("--help: %v, %d bytes, want the %d of krm.Help", err, len(out), len(krm.Help()))
	}
	out, err = exec.Command(bin, "--version").Output()
	if err != nil || !strings.HasPrefix(string(out), "mlops-fn ") || !strings.Contains(string(out), "package:  github.com/mlops-fn/mlops-fn/krm\n") {
		t.Errorf("--version: %v, %q, want internal/version's text for this package", err, out)
	}
	cmd := exec.Command(bin, "hydrate", ".")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err == nil || !strings.Contains(stderr.String(), "the mlops-fn binary") {
		t.Errorf("want exit 1 naming the mlops-fn binary, got %v: %s", err, stderr.String())
	}
	cmd = exec.Command(bin)
	cmd.Stdin = strings.NewReader("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
	cmd.Stderr = &stderr
	if err := cmd.Run(); err == nil || !strings.Contains(stderr.String(), "not a ResourceList") {
		t.Errorf("want exit 1 for stdin that is no ResourceList, got %v: %s", err, stderr.String())
	}
}
