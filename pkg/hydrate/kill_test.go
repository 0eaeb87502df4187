// SPDX-License-Identifier: Apache-2.0

package hydrate

import (
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The child of TestKillAtEveryStep: a run of this test binary that hydrates
// the folder -kill-dir and kills itself with SIGKILL after write step
// number -kill-at. A kill needs a process of its own: it must leave the
// folder as a real kill would, with no deferred cleanup run, and the test
// must survive it. Flags, not environment variables, carry the two values.
var (
	killAt  = flag.Int("kill-at", 0, "TestKillChild: the write step after which the child kills itself")
	killDir = flag.String("kill-dir", "", "TestKillChild: the overlay folder the child hydrates")
)

// TestKillChild runs only as TestKillAtEveryStep's child.
func TestKillChild(t *testing.T) {
	if *killAt == 0 {
		t.Skip("the child process of TestKillAtEveryStep")
	}
	ov, err := Render(following(*killDir))
	if err != nil {
		t.Fatal(err)
	}
	steps := 0
	ov.afterStep = func(string) {
		if steps++; steps == *killAt {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
	}
	if err := ov.Write(); err != nil {
		t.Fatal(err)
	}
}

// withoutTemporaries is a snapshot without hydrate's temporary names.
func withoutTemporaries(files map[string]string) map[string]string {
	out := map[string]string{}
	for name, data := range files {
		if !strings.Contains(name, tempPrefix) {
			out[name] = data
		}
	}
	return out
}

// TestKillAtEveryStep: hydrate killed with SIGKILL after any step of its
// write leaves the folder as before or as after; only between the steps of a
// write that changes hydrate's kustomization entries, or the base init wrote
// with the component, may it be neither, and then the overlay refuses to
// build, saying to run hydrate (after a rename, in kustomize's words: the
// guard's inputs it no longer finds). The next run leaves no temporary file and
// gives the same folder as an uninterrupted run.
func TestKillAtEveryStep(t *testing.T) {
	t.Parallel()
	hydrated := func(t *testing.T) string {
		root, _ := overlay(t, "multi-node-nonroot")
		return root
	}
	for _, c := range []struct {
		name string
		// root makes the tree, edit edits its folder overlay.
		root func(t *testing.T) string
		edit func(t *testing.T, dir string)
	}{
		{"a value", hydrated, func(t *testing.T, dir string) {
			env, _ := os.ReadFile(filepath.Join(dir, "mlops.env"))
			write(t, filepath.Join(dir, "mlops.env"), strings.Replace(string(env), "WORKERS=2", "WORKERS=5", 1))
		}},
		{"another env file", hydrated, func(t *testing.T, dir string) {
			env, _ := os.ReadFile(filepath.Join(dir, "mlops.env"))
			write(t, filepath.Join(dir, "site.env"), strings.Replace(string(env), "WORKERS=2", "WORKERS=6", 1))
			job, _ := os.ReadFile(filepath.Join(dir, "job.yaml"))
			write(t, filepath.Join(dir, "job.yaml"), string(job)+"  envFile: {path: site.env}\n")
		}},
		{"a job of init's renamed", func(t *testing.T) string {
			root := t.TempDir()
			initFolder(t, filepath.Join(root, "overlay"), "job")
			return root
		}, func(t *testing.T, dir string) {
			job, _ := os.ReadFile(filepath.Join(dir, "job.yaml"))
			write(t, filepath.Join(dir, "job.yaml"), strings.Replace(string(job), "\n  name: job\n", "\n  name: renamed\n", 1))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			base := c.root(t)
			c.edit(t, filepath.Join(base, "overlay"))
			before := snapshot(t, base)

			// An uninterrupted run, counting its steps.
			done := t.TempDir()
			copyTree(t, base, done)
			var steps []string
			ov, err := Render(following(filepath.Join(done, "overlay")))
			if err != nil {
				t.Fatal(err)
			}
			ov.afterStep = func(s string) { steps = append(steps, s) }
			if err := ov.Write(); err != nil {
				t.Fatal(err)
			}
			after := snapshot(t, done)
			t.Logf("steps: %v", steps)

			for n := 1; n <= len(steps); n++ {
				root := t.TempDir()
				copyTree(t, base, root)
				dir := filepath.Join(root, "overlay")
				cmd := exec.Command(os.Args[0], "-test.run=^TestKillChild$", "-kill-at="+strconv.Itoa(n), "-kill-dir="+dir)
				out, err := cmd.CombinedOutput()
				var exit *exec.ExitError
				if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
					t.Fatalf("step %d (%s): want the child killed, got %v\n%s", n, steps[n-1], err, out)
				}
				now := withoutTemporaries(snapshot(t, root))
				switch {
				case cmp.Equal(now, before), cmp.Equal(now, after):
				case n < len(steps) && (steps[n-1] == "component" && steps[n] == "kustomization" || steps[n-1] == "base" && steps[n] == "component"):
					// After a rename, kustomize's words: the inputs ConfigMap under the new name, which the guard reads first.
					if _, err := stagedBuild(dir, nil, nil); err == nil || !strings.Contains(err.Error(), "run mlops-fn hydrate on this folder") && !strings.Contains(err.Error(), "renamed-mlops-fn-inputs.[noNs]:data") {
						t.Errorf("killed between the %s and the %s: want a build that says to run hydrate, got %v", steps[n-1], steps[n], err)
					}
				default:
					t.Errorf("killed after step %d (%s): the folder is neither as before nor as after (-after +now):\n%s", n, steps[n-1], cmp.Diff(after, now))
				}
				ov, err := Render(following(dir))
				if err == nil {
					err = ov.Write()
				}
				if err != nil {
					t.Fatalf("the run after the kill: %v", err)
				}
				if diff := cmp.Diff(after, snapshot(t, root)); diff != "" {
					t.Errorf("after step %d and another run, the folder differs from an uninterrupted run's (-want +got):\n%s", n, diff)
				}
			}
		})
	}
}
