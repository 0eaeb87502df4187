// SPDX-License-Identifier: Apache-2.0

package hydrate

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// tempPrefix starts hydrate's temporary names in an overlay; a run removes those an interrupted run left.
const tempPrefix = ".mlops-fn-tmp-"

func (o *Overlay) step(name string) {
	if o.afterStep != nil {
		o.afterStep(name)
	}
}

// Write writes o into its folder (see WriteAll).
func (o *Overlay) Write() error { return WriteAll([]*Overlay{o}) }

// WriteAll writes every overlay into its folder, all or none. A folder changes in at most two renames: the
// component folder swapped whole, then the kustomization when hydrate's entries changed (rare); killed between,
// the guard refuses the build (its token names the other kustomization) until the next hydrate.
// Options.Folders go before the component: killed between, the old guard refuses the edited job spec. Each
// folder is then read back and must hold what Render built, or every folder is put back.
func WriteAll(overlays []*Overlay) error {
	defer func() {
		for _, o := range overlays {
			o.Unlock()
		}
	}()
	var staged []*stagedOverlay
	cleanup := func() {
		for _, s := range staged {
			s.cleanup()
		}
	}
	for _, o := range overlays {
		s, err := o.stage()
		if err != nil {
			cleanup()
			return fmt.Errorf("nothing was written: %w", err)
		}
		staged = append(staged, s)
	}
	undo := func(cause error, done []*stagedOverlay) error {
		var errs []error
		for _, s := range slices.Backward(done) {
			errs = append(errs, s.undo())
		}
		cleanup()
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("%w; putting the folders back failed too, run mlops-fn hydrate again: %w", cause, err)
		}
		return fmt.Errorf("every folder is as it was: %w", cause)
	}
	for i, s := range staged {
		if err := s.commit(); err != nil {
			return undo(err, staged[:i+1]) // its own steps too
		}
	}
	for _, s := range staged {
		if err := s.verify(); err != nil {
			return undo(err, staged)
		}
	}
	for _, s := range staged {
		s.o.step("finish")
	}
	cleanup() // the old folders
	return nil
}

// stagedOverlay is one folder's write in progress.
type stagedOverlay struct {
	o *Overlay
	// folders are swapped in order, the component last: its guard refuses the build until the last step.
	folders  []*folderSwap
	kustTemp string // the staged kustomization, "" once in place
	oldKust  []byte // the kustomization before, to put back
	oldMode  fs.FileMode
}

// folderSwap replaces one folder whole: staged under a temporary name beside it, then swapped in one step.
type folderSwap struct {
	dest    string            // the folder replaced (a symbolic link's target)
	step    string            // its name for afterStep
	staged  string            // the staged folder ("" until staged); after the swap, the old one
	files   map[string][]byte // what it holds, by path in it
	swapped bool              // the new folder is in place
	created bool              // there was no folder before
}

// stage removes what an interrupted run left, then writes the new folders and kustomization beside theirs.
func (o *Overlay) stage() (_ *stagedOverlay, err error) {
	s := &stagedOverlay{o: o}
	defer func() {
		if err != nil {
			s.cleanup()
		}
	}()
	replaced := o.replaced()
	leftovers := []string{o.dir, filepath.Dir(o.kustomizationPath)}
	for _, rel := range append(slices.Sorted(maps.Keys(o.folders)), ComponentDir) {
		dest, err := folderAt(filepath.Join(o.dir, filepath.FromSlash(rel)), rel == ComponentDir)
		if err != nil {
			return nil, err
		}
		step := rel
		if rel == ComponentDir {
			step = "component"
		}
		s.folders = append(s.folders, &folderSwap{dest: dest, step: step, files: replaced[rel]})
		leftovers = append(leftovers, filepath.Dir(dest))
	}
	// All before any staging: a staged folder has a leftover's name.
	slices.Sort(leftovers)
	for _, dir := range slices.Compact(leftovers) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), tempPrefix) {
				continue
			}
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return nil, err
			}
		}
	}
	for _, f := range s.folders {
		if err := f.stage(); err != nil {
			return nil, err
		}
	}
	if o.Kustomization != nil {
		s.oldMode = 0o644
		if info, err := os.Stat(o.kustomizationPath); err == nil {
			s.oldMode = info.Mode().Perm()
			if s.oldKust, err = os.ReadFile(o.kustomizationPath); err != nil {
				return nil, err
			}
		}
		if s.kustTemp, err = s.writeTemp(o.Kustomization); err != nil {
			return nil, err
		}
	}
	o.step("stage")
	return s, nil
}

// folderAt is the folder a swap replaces at path: path, or the folder a symbolic link there names (the link
// stays); the component's own folder may be no link.
func folderAt(path string, component bool) (string, error) {
	info, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return path, nil
	case err != nil:
		return "", err
	case info.Mode()&fs.ModeSymlink != 0 && !component:
		if path, err = filepath.EvalSymlinks(path); err != nil {
			return "", err
		}
		if info, err = os.Stat(path); err != nil {
			return "", err
		}
	}
	if !info.IsDir() {
		return "", fmt.Errorf("%s is not a folder; accepted: the folder mlops-fn hydrate writes, or nothing there", path)
	}
	return path, nil
}

// stage writes f's files into a new folder beside dest, with dest's mode; the staged overlay's cleanup
// removes it when a later step fails.
func (f *folderSwap) stage() (err error) {
	mode := fs.FileMode(0o755)
	if info, err := os.Stat(f.dest); err == nil {
		mode = info.Mode().Perm()
	}
	if f.staged, err = os.MkdirTemp(filepath.Dir(f.dest), tempPrefix+filepath.Base(f.dest)+"-"); err != nil {
		return err
	}
	if err := os.Chmod(f.staged, mode); err != nil {
		return err
	}
	for name, data := range f.files {
		file := filepath.Join(f.staged, filepath.FromSlash(name))
		if err := errors.Join(os.MkdirAll(filepath.Dir(file), 0o755), os.WriteFile(file, data, 0o644)); err != nil {
			return err
		}
	}
	return nil
}

// writeTemp writes data under a temporary name beside the kustomization, with its mode.
func (s *stagedOverlay) writeTemp(data []byte) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(s.o.kustomizationPath), tempPrefix+"kustomization-")
	if err != nil {
		return "", err
	}
	_, werr := f.Write(data)
	if err := errors.Join(werr, f.Close(), os.Chmod(f.Name(), s.oldMode)); err != nil {
		_ = os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

func (s *stagedOverlay) commit() error {
	for _, f := range s.folders {
		if err := f.commit(); err != nil {
			return err
		}
		s.o.step(f.step)
	}
	if s.kustTemp != "" {
		if err := os.Rename(s.kustTemp, s.o.kustomizationPath); err != nil {
			return err
		}
		s.kustTemp = ""
		s.o.step("kustomization")
	}
	return nil
}

func (f *folderSwap) commit() error {
	var err error
	if f.created = !exists(f.dest); f.created {
		err = os.Rename(f.staged, f.dest)
	} else if err = exchange(f.staged, f.dest); err != nil {
		err = fmt.Errorf("%s: swapping in the new folder: %w", f.dest, err)
	}
	f.swapped = err == nil
	return err
}

// exchangeByRenames swaps two folders by three renames, where the system or the file system has no atomic
// exchange: between them the path is briefly missing, and a build then fails rather than reads a mixed folder.
func exchangeByRenames(a, b string) error {
	tmp := a + ".swap"
	if err := os.Rename(b, tmp); err != nil {
		return err
	}
	if err := os.Rename(a, b); err != nil {
		_ = os.Rename(tmp, b)
		return err
	}
	return os.Rename(tmp, a)
}

// verify reads the folder back: each file must hold the bytes Render's staged build read, and no other file be
// in the folders replaced. An input edited meanwhile is the guard's: the build refuses until the next hydrate.
func (s *stagedOverlay) verify() error {
	for _, f := range s.folders {
		if stale := staleIn(f.dest, f.step, f.files); len(stale) > 0 {
			return fmt.Errorf("%s: the written folder is not what hydrate checked: %s", s.o.dir, strings.Join(stale, ", "))
		}
	}
	if s.o.Kustomization != nil {
		if have, err := os.ReadFile(s.o.kustomizationPath); err != nil || !bytes.Equal(have, s.o.Kustomization) {
			return fmt.Errorf("%s: the written %s is not what hydrate checked", s.o.dir, filepath.Base(s.o.kustomizationPath))
		}
	}
	return nil
}

func (s *stagedOverlay) undo() error {
	var errs []error
	if s.o.Kustomization != nil && s.kustTemp == "" { // placed
		if s.oldKust == nil {
			errs = append(errs, os.Remove(s.o.kustomizationPath))
		} else if tmp, err := s.writeTemp(s.oldKust); err != nil {
			errs = append(errs, err)
		} else {
			errs = append(errs, os.Rename(tmp, s.o.kustomizationPath))
		}
	}
	for _, f := range slices.Backward(s.folders) {
		errs = append(errs, f.undo())
	}
	return errors.Join(errs...)
}

func (f *folderSwap) undo() error {
	var err error
	switch {
	case f.swapped && f.created:
		err = os.Rename(f.dest, f.staged)
	case f.swapped:
		err = exchange(f.staged, f.dest)
	}
	f.swapped = false
	return err
}

// cleanup removes the staged (or, after the swaps, the old) folders and an unplaced kustomization.
func (s *stagedOverlay) cleanup() {
	for _, f := range s.folders {
		f.cleanup()
	}
	if s.kustTemp != "" {
		_ = os.Remove(s.kustTemp)
	}
}

func (f *folderSwap) cleanup() {
	if !f.swapped || !f.created {
		_ = os.RemoveAll(f.staged)
	}
}
