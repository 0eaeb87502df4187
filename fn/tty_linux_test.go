// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mlops-fn/mlops-fn/pkg/cli"
)

// TestBareCommandOnATerminal: mlops-fn with no argument and a terminal on
// stdin, a person at a prompt, prints the help (it read stdin as a
// ResourceList and reported an empty one).
func TestBareCommandOnATerminal(t *testing.T) {
	binary(t)
	tty := terminal(t)
	// Without the help it waits for a ResourceList the terminal never sends.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(repoRoot, "bin", "mlops-fn"))
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("mlops-fn on a terminal: %v\n%s", err, stderr.String())
	}
	help := strings.SplitN(cli.New(nil).Long, "\n", 2)[0]
	if !strings.Contains(stdout.String(), help) || stderr.Len() > 0 {
		t.Errorf("want the help (%q) and nothing on stderr; got\n%s\nstderr:\n%s", help, stdout.String(), stderr.String())
	}
}

// terminal opens a new pseudo-terminal and returns its terminal side.
func terminal(t *testing.T) *os.File {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	t.Cleanup(func() { _ = ptmx.Close() })
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tty.Close() })
	return tty
}
