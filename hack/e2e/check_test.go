// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tally counts the checks of the whole run, for the summary line.
var tally struct {
	sync.Mutex
	counts
}

// counts are a run's checks, carried from one phase of it to the next in a file (E2E_TALLY_TO,
// E2E_TALLY_FROM).
type counts struct {
	Passed, Failed, Skipped int
	Failures                []string
}

// check reports the checks of one test, each described after prefix.
type check struct {
	t      *testing.T
	prefix string
}

func newCheck(t *testing.T, prefix string) *check { return &check{t: t, prefix: prefix} }

func (c *check) describe(what string) string {
	if c.prefix == "" {
		return what
	}
	return c.prefix + ": " + what
}

// pass records a check that held; detail lines are printed under it.
func (c *check) pass(what string, detail ...string) {
	tally.Lock()
	tally.Passed++
	tally.Unlock()
	fmt.Printf("PASS  %s\n", c.describe(what))
	printDetail(detail)
}

// fail records a check that did not hold and fails the test; it goes on.
func (c *check) fail(what string, detail ...string) {
	c.t.Helper()
	tally.Lock()
	tally.Failed++
	tally.Failures = append(tally.Failures, c.describe(what))
	tally.Unlock()
	fmt.Printf("FAIL  %s\n", c.describe(what))
	printDetail(detail)
	c.t.Fail()
}

// skip records a check that could not run, and why.
func (c *check) skip(what string) {
	tally.Lock()
	tally.Skipped++
	tally.Unlock()
	fmt.Printf("SKIP  %s\n", c.describe(what))
}

// eq passes when got equals want (cmp.Equal), else fails with both.
func (c *check) eq(what string, want, got any) bool {
	c.t.Helper()
	if cmp.Equal(want, got) {
		c.pass(what)
		return true
	}
	if ws, ok := want.(string); ok {
		c.fail(what, "expected: "+ws, "actual:   "+fmt.Sprint(got))
	} else {
		c.fail(what, "(-expected +actual):", cmp.Diff(want, got))
	}
	return false
}

// that passes when ok holds, else fails with detail.
func (c *check) that(what string, ok bool, detail ...string) bool {
	c.t.Helper()
	if ok {
		c.pass(what)
	} else {
		c.fail(what, detail...)
	}
	return ok
}

// note prints an indented line under the last check: what was seen.
func note(format string, a ...any) { printDetail([]string{fmt.Sprintf(format, a...)}) }

func printDetail(lines []string) {
	for _, l := range lines {
		for _, s := range strings.Split(strings.TrimRight(l, "\n"), "\n") {
			fmt.Printf("        %s\n", s)
		}
	}
}

// section starts a group of checks in the output.
func section(name string) { fmt.Printf("\n=== %s\n", name) }

func failed() bool {
	tally.Lock()
	defer tally.Unlock()
	return tally.Failed > 0
}

func summary() string {
	tally.Lock()
	defer tally.Unlock()
	var b strings.Builder
	b.WriteString("\n=== summary\n")
	for _, f := range tally.Failures {
		fmt.Fprintf(&b, "failed: %s\n", f)
	}
	fmt.Fprintf(&b, "e2e: %d passed, %d failed, %d skipped\n", tally.Passed, tally.Failed, tally.Skipped)
	return b.String()
}

// loadTally adds the counts an earlier phase of the run wrote to file.
func loadTally(file string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var earlier counts
	if err := json.Unmarshal(b, &earlier); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	tally.Lock()
	defer tally.Unlock()
	tally.Passed += earlier.Passed
	tally.Failed += earlier.Failed
	tally.Skipped += earlier.Skipped
	tally.Failures = append(earlier.Failures, tally.Failures...)
	return nil
}

// saveTally writes the counts for a later phase of the run.
func saveTally(file string) error {
	tally.Lock()
	defer tally.Unlock()
	b, err := json.Marshal(tally.counts)
	if err != nil {
		return err
	}
	return os.WriteFile(file, b, 0o644)
}
