package hydrate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// tempPrefix starts every temporary name hydrate makes in an overlay; a run
// removes those an interrupted run left.
const tempPrefix = ".mlops-fn-tmp-"

// step reports a change on disk to the overlay's afterStep, if any.
func (o *Overlay) step(name string) {
	if o.afterStep != nil {
		o.afterStep(name)
	}
}

// Write writes o into its folder (see WriteAll).
func (o *Overlay) Write() error { return WriteAll([]*Overlay{o}) }

// WriteAll writes every overlay into its folder, all or none. A folder
// changes in at most two renames: the component folder is swapped whole with
// the staged one, then the kustomization, when hydrate's entries in it
// changed (a rename, a namespace, another env file: rare). A process killed
// between the two leaves an overlay whose guard refuses to build (its token
// names the other kustomization) until the next hydrate. After the renames
// each folder is built again from disk and must equal what Render built, or
// every folder is put back as it was.
func WriteAll(overlays []*Overlay) error {
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
	var done []*stagedOverlay
	undo := func(cause error) error {
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
	for _, s := range staged {
		err := s.commit()
		done = append(done, s)
		if err != nil {
			return undo(err)
		}
	}
	for _, s := range staged {
		if err := s.verify(); err != nil {
			return undo(err)
		}
	}
	var errs []error
	for _, s := range staged {
		errs = append(errs, s.finish())
	}
	cleanup()
	return errors.Join(errs...)
}

// stagedOverlay is one folder's write in progress.
type stagedOverlay struct {
	o          *Overlay
	component  string // the staged component folder; after the swap, the old one
	swapped    bool   // the component folder is in place
	created    bool   // there was no component folder before
	kustTemp   string // the staged kustomization
	oldKust    []byte // the kustomization before, to put back
	oldMode    fs.FileMode
	kustPlaced bool
}

// stage removes what an interrupted run left, then writes the new component
// folder and kustomization under temporary names beside their destinations.
func (o *Overlay) stage() (*stagedOverlay, error) {
	s := &stagedOverlay{o: o}
	kdir := filepath.Dir(o.kustomizationPath)
	for _, dir := range []string{o.dir, kdir} {
		if err := removeLeftovers(dir); err != nil {
			return nil, err
		}
	}
	if info, err := os.Lstat(filepath.Join(o.dir, ComponentDir)); err == nil && !info.IsDir() {
		return nil, fmt.Errorf("%s is not a folder; accepted: the folder mlops-fn hydrate writes, or nothing there", filepath.Join(o.dir, ComponentDir))
	}
	dir, err := os.MkdirTemp(o.dir, tempPrefix+"component-")
	if err != nil {
		return nil, err
	}
	s.component = dir
	if err := os.Chmod(dir, 0o755); err != nil {
		s.cleanup()
		return nil, err
	}
	for name, data := range o.Component {
		file := filepath.Join(dir, filepath.FromSlash(name))
		if err := errors.Join(os.MkdirAll(filepath.Dir(file), 0o755), os.WriteFile(file, data, 0o644)); err != nil {
			s.cleanup()
			return nil, err
		}
	}
	if o.Kustomization == nil {
		o.step("stage")
		return s, nil
	}
	s.oldMode = 0o644
	if info, err := os.Stat(o.kustomizationPath); err == nil {
		s.oldMode = info.Mode().Perm()
		if s.oldKust, err = os.ReadFile(o.kustomizationPath); err != nil {
			s.cleanup()
			return nil, err
		}
	}
	if s.kustTemp, err = writeTemp(kdir, "kustomization-", o.Kustomization, s.oldMode); err != nil {
		s.cleanup()
		return nil, err
	}
	o.step("stage")
	return s, nil
}

func writeTemp(dir, name string, data []byte, mode fs.FileMode) (string, error) {
	f, err := os.CreateTemp(dir, tempPrefix+name)
	if err != nil {
		return "", err
	}
	_, werr := f.Write(data)
	if err := errors.Join(werr, f.Close(), os.Chmod(f.Name(), mode)); err != nil {
		_ = os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// removeLeftovers deletes the temporary names an interrupted run left in dir.
func removeLeftovers(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), tempPrefix) {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// commit puts the staged folder and kustomization in place.
func (s *stagedOverlay) commit() error {
	dest := filepath.Join(s.o.dir, ComponentDir)
	if exists(dest) {
		if err := exchange(s.component, dest); err != nil {
			return fmt.Errorf("%s: swapping in the new folder: %w", dest, err)
		}
	} else {
		if err := os.Rename(s.component, dest); err != nil {
			return err
		}
		s.created = true
	}
	s.swapped = true
	s.o.step("component")
	if s.kustTemp != "" {
		if err := os.Rename(s.kustTemp, s.o.kustomizationPath); err != nil {
			return err
		}
		s.kustTemp, s.kustPlaced = "", true
		s.o.step("kustomization")
	}
	return nil
}

// verify builds the folder from disk: it must be what Render built and checked.
func (s *stagedOverlay) verify() error {
	got, err := stagedBuild(s.o.dir, nil, nil)
	if err != nil {
		return fmt.Errorf("%s: the written overlay does not build: %w", s.o.dir, err)
	}
	diffs, err := differences(s.o.built, got)
	if err != nil {
		return err
	}
	if len(diffs) > 0 {
		return fmt.Errorf("%s: the written overlay builds differently from the one hydrate checked:\n%s", s.o.dir, describe(diffs, "hydrate checked", "the written folder builds"))
	}
	return nil
}

// undo puts the folder back as it was before commit.
func (s *stagedOverlay) undo() error {
	var errs []error
	if s.kustPlaced {
		if s.oldKust == nil {
			errs = append(errs, os.Remove(s.o.kustomizationPath))
		} else if tmp, err := writeTemp(filepath.Dir(s.o.kustomizationPath), "kustomization-", s.oldKust, s.oldMode); err != nil {
			errs = append(errs, err)
		} else {
			errs = append(errs, os.Rename(tmp, s.o.kustomizationPath))
		}
	}
	dest := filepath.Join(s.o.dir, ComponentDir)
	switch {
	case s.swapped && s.created:
		errs = append(errs, os.Rename(dest, s.component))
	case s.swapped:
		errs = append(errs, exchange(s.component, dest))
	}
	s.swapped = false
	return errors.Join(errs...)
}

// finish ends a folder's write; the old component folder goes in cleanup.
func (s *stagedOverlay) finish() error {
	s.o.step("finish")
	return nil
}

// cleanup removes the staged (or, after the swap, the old) component folder
// and an unplaced kustomization.
func (s *stagedOverlay) cleanup() {
	if s.component != "" && (!s.swapped || !s.created) {
		_ = os.RemoveAll(s.component)
	}
	if s.kustTemp != "" {
		_ = os.Remove(s.kustTemp)
	}
}
