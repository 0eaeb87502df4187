// SPDX-License-Identifier: Apache-2.0

//go:build e2e

// Package e2e checks mlops-fn's overlays against a real control plane: the one
// hack/e2e/run.sh (make e2e) builds from pinned sources and starts, whose
// kubeconfig it passes in KUBECONFIG. What each check expects comes from
// mlops-fn's own resolved plan of the overlay (processor.Resolve), never from
// re-reading job.yaml or mlops.env here.
//
// Every check prints PASS, FAIL or SKIP and a description; the run ends with
// "e2e: N passed, N failed, N skipped" and fails when any check failed.
//
//	E2E_OVERLAYS      the overlay folders to run, space-separated (default:
//	                  every quickstart overlay and example, and the TrainJob
//	                  fixture); naming some leaves out the renamed, edited
//	                  and Kueue checks
//	E2E_KUEUE         1: the Kueue checks run even when E2E_OVERLAYS names some
//	E2E_KUEUE_CONFIG  release: Kueue runs its release's own configuration,
//	                  which TestKueueDefault needs (run.sh restarts Kueue so
//	                  for the run's last phase); else why it does not
//	E2E_TALLY_TO      a file: the counts are written there, for the run's
//	                  next phase, and no summary is printed
//	E2E_TALLY_FROM    a file: the counts of the run's earlier phase, which
//	                  the summary adds
//	MLOPS_FN          the mlops-fn binary (default: bin/mlops-fn)
package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// root is the repository, the working directory of every check.
var root string

func TestMain(m *testing.M) {
	if os.Getenv("KUBECONFIG") == "" {
		fmt.Println("SKIP  e2e: KUBECONFIG is not set; these checks need the control plane make e2e (hack/e2e/run.sh) starts")
		os.Exit(0)
	}
	var err error
	if root, err = repositoryRoot(); err != nil {
		fmt.Println("e2e:", err)
		os.Exit(1)
	}
	if err := os.Chdir(root); err != nil {
		fmt.Println("e2e:", err)
		os.Exit(1)
	}
	if err := connect(); err != nil {
		fmt.Println("e2e: cannot reach the control plane:", err)
		os.Exit(1)
	}
	code := m.Run()
	if file := os.Getenv("E2E_TALLY_FROM"); file != "" {
		if err := loadTally(file); err != nil {
			fmt.Println("e2e: the counts of the run's first phase:", err)
			code = 1
		}
	}
	if file := os.Getenv("E2E_TALLY_TO"); file != "" {
		if err := saveTally(file); err != nil {
			fmt.Println("e2e:", err)
			code = 1
		}
	} else {
		fmt.Print(summary())
	}
	if code == 0 && failed() {
		code = 1
	}
	os.Exit(code)
}

// repositoryRoot is the folder above the working directory that holds go.mod.
func repositoryRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above %s: run from within the repository", dir)
		}
	}
}

// mlopsFn is the function's binary the checks run hydrate with.
func mlopsFn() string {
	if p := os.Getenv("MLOPS_FN"); p != "" {
		return p
	}
	return filepath.Join(root, "bin", "mlops-fn")
}

// namedOverlays are the overlays E2E_OVERLAYS names; nil: all of them.
func namedOverlays() []string {
	if named := strings.Fields(os.Getenv("E2E_OVERLAYS")); len(named) > 0 {
		return named
	}
	return nil
}
