// SPDX-License-Identifier: Apache-2.0

package testutil

import "strings"

// MarkedBlock is the ```sh block of text between <!-- marker: … --> and
// <!-- /marker -->, the lines a test runs as written.
func MarkedBlock(text, marker string) (string, bool) {
	_, block, found := strings.Cut(text, "<!-- "+marker+":")
	block, _, closed := strings.Cut(block, "<!-- /"+marker+" -->")
	_, block, fenced := strings.Cut(block, "```sh\n")
	block, _, ended := strings.Cut(block, "```")
	return block, found && closed && fenced && ended
}
