// SPDX-License-Identifier: Apache-2.0

package hydrate

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestLockHasOneKeyPerFolder: a folder's lock is the same however its path is
// spelt, by its real path, through a symbolic link, or relative from a working
// directory reached through one: a second Lock in the process counts on the
// first (as the command's Lock then Render's does), where a second key would
// flock the folder again and wait on this very process for ever.
func TestLockHasOneKeyPerFolder(t *testing.T) {
	root := t.TempDir()
	realRoot := filepath.Join(root, "real")
	if err := os.MkdirAll(filepath.Join(realRoot, "overlay"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(realRoot, link); err != nil {
		t.Fatal(err)
	}
	t.Chdir(link) // and PWD, which os.Getwd, so filepath.Abs, believes
	first, err := Lock(filepath.Join(realRoot, "overlay"))
	if err != nil {
		t.Fatal(err)
	}
	key, _ := filepath.EvalSymlinks(filepath.Join(realRoot, "overlay"))
	defer first()
	for _, spelt := range []string{filepath.Join(link, "overlay"), "overlay", "./overlay/", filepath.Join("..", "link", "overlay")} {
		done := make(chan func())
		go func() {
			unlock, err := Lock(spelt)
			if err != nil {
				t.Error(err)
			}
			done <- unlock
		}()
		select {
		case unlock := <-done:
			if unlock != nil {
				unlock()
			}
		case <-time.After(5 * time.Second):
			t.Errorf("Lock(%q) waits on the lock this process holds as %s: the folder has two keys", spelt, key)
			_ = held.locks[key].f.Close() // gives the flock back, so the waiting Lock returns
			if unlock := <-done; unlock != nil {
				unlock()
			}
		}
	}
	held.Lock()
	defer held.Unlock()
	if l := held.locks[key]; l == nil || l.n != 1 || len(held.locks) != 1 {
		t.Errorf("held locks %v, want the one of %s, taken once", held.locks, key)
	}
}
