// SPDX-License-Identifier: Apache-2.0

package trainjob

import (
	"encoding/json"
	"testing"

	"github.com/mlops-fn/mlops-fn/pkg/fielddiff"
)

// TestPatchTimesIgnored: Trainer's webhook stamps each runtime patch with a
// time; an unchanged patch without it is no change.
func TestPatchTimesIgnored(t *testing.T) {
	decode := func(text string) map[string]any {
		var m map[string]any
		if err := json.Unmarshal([]byte(text), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	live := decode(`{"runtimePatches": [{"manager": "m", "time": "2026-11-25T09:21:35Z", "x": 1}]}`)
	same := decode(`{"runtimePatches": [{"manager": "m", "x": 1}]}`)
	other := decode(`{"runtimePatches": [{"manager": "m", "x": 2}]}`)
	if got := fielddiff.Trees("spec", facts.Compared(live), facts.Compared(same)); len(got) != 0 {
		t.Errorf("an unchanged patch differs: %v", got)
	}
	if got := fielddiff.Trees("spec", facts.Compared(live), facts.Compared(other)); len(got) != 1 || got[0].Path != "spec.runtimePatches[0].x" {
		t.Errorf("got %v, want the one change spec.runtimePatches[0].x", got)
	}
	if _, ok := live["runtimePatches"].([]any)[0].(map[string]any)["time"]; !ok {
		t.Error("Compared changed the live object")
	}
}
