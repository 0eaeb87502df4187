// SPDX-License-Identifier: Apache-2.0

package hydrate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"golang.org/x/sys/unix"
)

// A run holds an exclusive flock(2) of each overlay folder from Render's first read to the end of its write,
// so two runs on one overlay take turns (issue 45: two at once left hydrate's entries with no mlops-fn/
// folder). On the folder itself: no file to commit or ignore, and the kernel releases it however the process
// ends. Counted within a process, so the command locks all its folders first, in one order (no deadlock),
// and Render and Write take them again.
var held = struct {
	sync.Mutex
	locks map[string]*folderLock
}{locks: map[string]*folderLock{}}

type folderLock struct {
	f *os.File
	n int
}

// Lock takes the lock of each folder, waiting while another process holds it; unlock gives them back. A
// folder that does not exist is skipped: the run's first read names it.
func Lock(dirs ...string) (unlock func(), err error) {
	var reals []string
	for _, dir := range dirs {
		real, err := realDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		reals = append(reals, real)
	}
	slices.Sort(reals)
	var taken []string
	unlock = func() {
		for _, d := range taken {
			release(d)
		}
		taken = nil
	}
	for _, d := range slices.Compact(reals) {
		if err := acquire(d); err != nil {
			unlock()
			return nil, err
		}
		taken = append(taken, d)
	}
	return unlock, nil
}

// realDir is dir as the lock knows it: made absolute, then links resolved, so a folder has one key however it
// is spelt (relative from a working directory reached through a link too); fileInside checks files alike.
func realDir(dir string) (string, error) {
	a, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(a)
}

func acquire(dir string) error {
	held.Lock()
	defer held.Unlock()
	if l := held.locks[dir]; l != nil {
		l.n++
		return nil
	}
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		_ = f.Close()
		return fmt.Errorf("%s: locking the folder against another mlops-fn hydrate: %w", dir, err)
	}
	held.locks[dir] = &folderLock{f: f, n: 1}
	return nil
}

func release(dir string) {
	held.Lock()
	defer held.Unlock()
	if l := held.locks[dir]; l != nil {
		if l.n--; l.n == 0 {
			_ = l.f.Close() // which gives the lock back
			delete(held.locks, dir)
		}
	}
}
