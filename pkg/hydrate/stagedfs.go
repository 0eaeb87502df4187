// SPDX-License-Identifier: Apache-2.0

package hydrate

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// staged is the file system a build sees before hydrate writes: the disk, with some files replaced and
// hydrate's folders replaced whole. It is read-only; Glob and Walk are the disk's.
type staged struct {
	filesys.FileSystem                   // the disk
	files              map[string][]byte // absolute path → content
	dirs               map[string]bool   // absolute folders whose content on disk is hidden
}

// hidden: p lies in a folder staged whole, so the disk does not show through.
func (s *staged) hidden(p string) bool {
	for d := range s.dirs {
		if p == d || strings.HasPrefix(p, d+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// virtualDir: p holds a staged file.
func (s *staged) virtualDir(p string) bool {
	for f := range s.files {
		if strings.HasPrefix(f, p+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

func abs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return filepath.Clean(p)
}

var errReadOnly = errors.New("hydrate's staged file system is read-only")

func (s *staged) Create(string) (filesys.File, error) { return nil, errReadOnly }
func (s *staged) Mkdir(string) error                  { return errReadOnly }
func (s *staged) MkdirAll(string) error               { return errReadOnly }
func (s *staged) WriteFile(string, []byte) error      { return errReadOnly }

// RemoveAll is kustomize's cleanup of a remote base's clone, a folder of its own in the temporary folder
// (filesys.NewTmpConfirmedDir, links resolved); refused, it left a clone there on every build.
func (s *staged) RemoveAll(p string) error {
	tmp, err := filepath.EvalSymlinks(os.TempDir())
	if dir, name := filepath.Split(abs(p)); err == nil && filepath.Clean(dir) == tmp && strings.HasPrefix(name, "kustomize-") {
		return s.FileSystem.RemoveAll(p)
	}
	return errReadOnly
}

func (s *staged) Open(p string) (filesys.File, error) {
	if a := abs(p); s.files[a] != nil || s.hidden(a) {
		return nil, fmt.Errorf("open %s: staged files are read through ReadFile", p)
	}
	return s.FileSystem.Open(p)
}

func (s *staged) IsDir(p string) bool {
	a := abs(p)
	return s.dirs[a] || s.virtualDir(a) || !s.hidden(a) && s.files[a] == nil && s.FileSystem.IsDir(p)
}

func (s *staged) Exists(p string) bool {
	a := abs(p)
	return s.dirs[a] || s.files[a] != nil || s.virtualDir(a) || !s.hidden(a) && s.FileSystem.Exists(p)
}

func (s *staged) ReadFile(p string) ([]byte, error) {
	a := abs(p)
	if b, ok := s.files[a]; ok {
		return b, nil
	}
	if s.hidden(a) {
		return nil, &fs.PathError{Op: "read", Path: p, Err: fs.ErrNotExist}
	}
	return s.FileSystem.ReadFile(p)
}

func (s *staged) ReadDir(p string) ([]string, error) {
	a := abs(p)
	names := map[string]bool{}
	if !s.hidden(a) {
		on, err := s.FileSystem.ReadDir(p)
		if err != nil && !s.dirs[a] {
			return nil, err
		}
		for _, n := range on {
			names[n] = true
		}
	}
	for f := range s.files {
		if rel, err := filepath.Rel(a, f); err == nil && !strings.HasPrefix(rel, "..") {
			names[strings.Split(rel, string(filepath.Separator))[0]] = true
		}
	}
	return slices.Sorted(maps.Keys(names)), nil
}

func (s *staged) CleanedAbs(p string) (filesys.ConfirmedDir, string, error) {
	a := abs(p)
	switch {
	case s.dirs[a], s.virtualDir(a):
		return filesys.ConfirmedDir(a), "", nil
	case s.files[a] != nil || s.hidden(a):
		return filesys.ConfirmedDir(filepath.Dir(a)), filepath.Base(a), nil
	}
	return s.FileSystem.CleanedAbs(p)
}
