// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"os"
	"testing"

	"github.com/mlops-fn/mlops-fn/internal/testutil"
)

// repoRoot is a copy of the repository the tests run in: they build
// bin/mlops-fn where the quickstart's exec configs name it, and kustomize,
// kpt and make write beside the packages, so the checkout is only read (and
// golden-update writes testdata through its own path).
var repoRoot string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mlops-fn-repo-")
	if err == nil {
		err = testutil.CopyTree("..", dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "copying the repository for the tests:", err)
		os.Exit(1)
	}
	repoRoot = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
