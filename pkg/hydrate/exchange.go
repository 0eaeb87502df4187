// SPDX-License-Identifier: Apache-2.0

package hydrate

import "os"

// exchangeByRenames swaps two folders by three renames, where the system or
// the file system has no atomic exchange: between them the path is briefly
// missing, and a build then fails rather than reads a mixed folder.
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
