// SPDX-License-Identifier: Apache-2.0

// Package testutil holds what the tests of several packages share. It is
// internal: no API for users of mlops-fn.
package testutil

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	sigsjson "sigs.k8s.io/json"

	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/kinds"
	"github.com/mlops-fn/mlops-fn/pkg/kinds/jobset"
)

// skipped are the folders CopyTree leaves out: history, caches and build output.
var skipped = map[string]bool{".git": true, ".cache": true, "bin": true}

// CopyTree copies the folder from into to (created), keeping file modes and
// symbolic links, without the top-level .git, .cache and bin.
func CopyTree(from, to string) error {
	return filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		if d.IsDir() && skipped[rel] {
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

// Snapshot maps every path under root to its content, and each folder to
// "folder": a test compares two to see that nothing changed, byte for byte.
func Snapshot(root string) (map[string]string, error) {
	files := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			files[rel] = "folder"
			return nil
		}
		data, err := os.ReadFile(path)
		files[rel] = string(data)
		return err
	})
	return files, err
}

// DecodeStrict decodes JSON into into with unknown and duplicate fields refused,
// as the API server's strict field validation does.
func DecodeStrict(b []byte, into any) error {
	strict, err := sigsjson.UnmarshalStrict(b, into)
	if err != nil {
		return err
	}
	return errors.Join(strict...)
}

// QuickstartFolder is the folder of each kind's quickstart under
// quickstart/k8s/mlops and quickstart/kpt, named by the topology it gives.
var QuickstartFolder = map[jobkind.JobKind]string{
	jobkind.Pod:        "single-node",
	jobkind.MPIJob:     "multi-node",
	jobkind.PyTorchJob: "elastic",
	jobkind.TrainJob:   "trainjob",
	jobset.JobSet:      "jobset",
}

// QuickstartFolders are the quickstarts' folders, in the kinds table's order.
func QuickstartFolders() []string {
	var out []string
	for _, k := range kinds.All {
		out = append(out, QuickstartFolder[k.JobKind()])
	}
	return out
}
