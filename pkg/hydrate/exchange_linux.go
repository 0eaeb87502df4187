// SPDX-License-Identifier: Apache-2.0

package hydrate

import (
	"errors"

	"golang.org/x/sys/unix"
)

// exchange swaps two paths in one step (renameat2 RENAME_EXCHANGE): a reader sees the old folder or the new
// one, never none. File systems without it (NFS, CIFS: EINVAL) get three renames.
func exchange(a, b string) error {
	err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
		return exchangeByRenames(a, b)
	}
	return err
}
