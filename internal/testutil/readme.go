// SPDX-License-Identifier: Apache-2.0

package testutil

import (
	"fmt"
	"strings"
)

// Walkthrough is the README's first-job block, its non-blank lines as
// written (README.md's text is readme).
func Walkthrough(readme string) ([]string, error) {
	_, block, found := strings.Cut(readme, "<!-- walkthrough:")
	block, _, ok := strings.Cut(block, "<!-- /walkthrough -->")
	if !found || !ok {
		return nil, fmt.Errorf("README.md: no walkthrough block between <!-- walkthrough: … --> and <!-- /walkthrough -->")
	}
	_, block, _ = strings.Cut(block, "```sh\n")
	block, _, _ = strings.Cut(block, "```")
	var lines []string
	for _, l := range strings.Split(block, "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	return lines, nil
}
