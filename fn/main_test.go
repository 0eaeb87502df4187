package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// repoRoot is a copy of the repository the tests run in: they build
// bin/mlops-fn where the quickstart's exec configs name it, and kustomize,
// kpt and make write beside the packages, so the checkout is only read (and
// golden-update writes testdata through its own path).
var repoRoot string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mlops-fn-repo-")
	if err == nil {
		err = copyTree("..", dir)
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

// copyTree copies the repository's files and symlinks, without git's data,
// the build output and the e2e cache.
func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		if d.IsDir() && (rel == ".git" || rel == ".cache" || rel == "bin") {
			return filepath.SkipDir
		}
		target := filepath.Join(to, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, info.Mode().Perm()|0o700)
		case info.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
}
