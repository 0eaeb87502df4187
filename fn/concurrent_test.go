// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mlops-fn/mlops-fn/pkg/hydrate"
)

// TestConcurrentHydrates runs several `mlops-fn hydrate` of one overlay at
// once, mlops.env edited between their starts, round after round (issue 45:
// two at once once left hydrate's entries in kustomization.yaml and no
// mlops-fn/ folder). Without the lock, a run that read mlops.env before an
// edit and wrote after one that read it after would leave the overlay stale,
// and two writes at once remove each other's staged folders. Each run holds
// the overlay's lock from its read to its write, so each succeeds, and after
// every round the overlay builds with the last edit: `hydrate --check` passes.
// With an editor that takes no lock, an overlay is never half-written: it
// builds fresh, or its guard refuses it as stale.
func TestConcurrentHydrates(t *testing.T) {
	fn, dir := initJob(t)
	envPath := filepath.Join(dir, "mlops.env")
	text, err := os.ReadFile(envPath)
	if err != nil {
		t.Fatal(err)
	}
	workers := regexp.MustCompile(`(?m)^WORKERS=\d+$`)
	if !workers.Match(text) {
		t.Fatalf("mlops.env has no WORKERS=:\n%s", text)
	}
	// setWorkers edits mlops.env in one rename, as an editor saves it; under
	// the overlay's lock, as a script can, no run reads it half way.
	setWorkers := func(n int, locked bool) {
		if locked {
			unlock, err := hydrate.Lock(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer unlock()
		}
		tmp := envPath + ".edit"
		if err := os.WriteFile(tmp, workers.ReplaceAll(text, fmt.Appendf(nil, "WORKERS=%d", n)), 0o644); err != nil {
			t.Error(err)
		}
		if err := os.Rename(tmp, envPath); err != nil {
			t.Error(err)
		}
	}
	hydrateOnce := func(args ...string) (string, error) {
		cmd := exec.Command(fn, append([]string{"hydrate"}, args...)...)
		cmd.Dir = dir
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	const rounds, runs = 12, 3
	for round := range rounds {
		// The last rounds' editor takes no lock: a run that reads mlops.env
		// during an edit may fail, writing nothing, or write an overlay that
		// an edit after its read makes stale, which the guard then refuses.
		locked := round < 8
		var wg sync.WaitGroup
		outs := make([]string, runs)
		errs := make([]error, runs)
		for i := range runs {
			setWorkers(2+(round*runs+i)%3, locked)
			wg.Add(1)
			go func() {
				defer wg.Done()
				outs[i], errs[i] = hydrateOnce(".")
			}()
			// Long enough for the run to read mlops.env before the next edit.
			time.Sleep(300 * time.Millisecond)
		}
		wg.Wait()
		for i := range runs {
			if errs[i] != nil && (locked || !strings.Contains(outs[i], "writes nothing")) {
				t.Errorf("round %d, run %d: %v\n%s", round, i, errs[i], outs[i])
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "mlops-fn", "kustomization.yaml")); err != nil {
			t.Fatalf("round %d: the overlay is half-written: %v", round, err)
		}
		out, err := hydrateOnce("--check", ".")
		switch {
		case err == nil:
		case locked:
			// The last run to take the lock started after the last edit.
			t.Fatalf("round %d: after the runs, the overlay is not fresh: %v\n%s", round, err, out)
		case !strings.Contains(out, ". is stale: ") || strings.Contains(out, "does not build"):
			t.Fatalf("round %d: after the runs, the overlay neither builds fresh nor is refused as stale: %v\n%s", round, err, out)
		}
		if t.Failed() {
			return
		}
	}
}
