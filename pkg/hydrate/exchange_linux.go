package hydrate

import "golang.org/x/sys/unix"

// exchange swaps two paths in one step (renameat2 RENAME_EXCHANGE): a
// reader sees the old folder or the new one, never none.
func exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}
