// SPDX-License-Identifier: Apache-2.0

package apply

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/google/go-cmp/cmp"
)

func decode(t *testing.T, text string) object {
	t.Helper()
	var o object
	if err := json.Unmarshal([]byte(text), &o); err != nil {
		t.Fatal(err)
	}
	return o
}

// TestDiff: every leaf that differs, by its path, with both values; none for equal trees.
func TestDiff(t *testing.T) {
	live := decode(t, `{"a": {"replicas": 3, "limits": {"cpu": "1"}, "same": [1, 2], "list": [{"n": "x", "v": 1}]}, "gone": "x", "more": [1]}`)
	next := decode(t, `{"a": {"replicas": 4, "limits": {"cpu": "2", "memory": "1Gi"}, "same": [1, 2], "list": [{"n": "x", "v": 2}]}, "more": [1, 2]}`)
	var got []string
	diff("spec", live, next, &got)
	want := []string{
		`spec.a.limits.cpu: "1" → "2"`,
		`spec.a.limits.memory: (none) → "1Gi"`,
		`spec.a.list[0].v: 1 → 2`,
		`spec.a.replicas: 3 → 4`,
		`spec.gone: "x" → (none)`,
		`spec.more[1]: (none) → 2`,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("diff (-want +got):\n%s", d)
	}
	got = nil
	diff("spec", live, live, &got)
	if len(got) != 0 {
		t.Errorf("equal trees differ: %v", got)
	}
}

// TestScalesWithin: an elastic PyTorchJob's worker count within its bounds is
// the one change applied in place; outside them, with another change, or of
// another kind, it is not.
func TestScalesWithin(t *testing.T) {
	job := func(replicas, max int) object {
		return decode(t, `{"kind": "PyTorchJob", "spec": {"elasticPolicy": {"minReplicas": 1, "maxReplicas": `+itoa(max)+`},
			"pytorchReplicaSpecs": {"Worker": {"replicas": `+itoa(replicas)+`}}}}`)
	}
	scale := []string{"spec.pytorchReplicaSpecs.Worker.replicas: 2 → 3", `ConfigMap/x-env data.WORKERS: "2" → "3"`}
	for _, c := range []struct {
		name      string
		live, job object
		changes   []string
		want      bool
	}{
		{"within the bounds", job(2, 3), job(3, 3), scale, true},
		{"above the bounds", job(2, 3), job(4, 3), scale, false},
		{"the bounds changed too", job(2, 3), job(3, 4), scale, false},
		{"another change", job(2, 3), job(3, 3), append(scale, `spec.pytorchReplicaSpecs.Worker.template.spec.containers: …`), false},
		{"the env ConfigMap's new hash", job(2, 3), job(3, 3), append(scale, `spec.pytorchReplicaSpecs.Worker.template.spec.containers[0].envFrom[0].configMapRef.name: "x-env-b2" → "x-env-c3"`), true},
		{"an MPIJob", decode(t, `{"kind": "MPIJob"}`), decode(t, `{"kind": "MPIJob"}`), scale, false},
	} {
		if got := scalesWithin(c.live, c.job, c.changes); got != c.want {
			t.Errorf("%s: scalesWithin = %v, want %v", c.name, got, c.want)
		}
		// As client-go's unstructured objects hold them: int64, not float64.
		live, job := unstructuredOf(t, c.live), unstructuredOf(t, c.job)
		if got := scalesWithin(live, job, c.changes); got != c.want {
			t.Errorf("%s, as client-go decodes it: scalesWithin = %v, want %v", c.name, got, c.want)
		}
	}
}

func unstructuredOf(t *testing.T, o object) object {
	t.Helper()
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(b); err != nil {
		t.Fatal(err)
	}
	return u.Object
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestFinished: the final conditions of the operators' jobs and a Pod's final phase.
func TestFinished(t *testing.T) {
	for text, want := range map[string]string{
		`{"status": {"conditions": [{"type": "Running", "status": "False"}, {"type": "Succeeded", "status": "True"}]}}`: "Succeeded",
		`{"status": {"conditions": [{"type": "Failed", "status": "True"}]}}`:                                            "Failed",
		`{"status": {"conditions": [{"type": "Complete", "status": "True"}]}}`:                                          "Complete",
		`{"status": {"conditions": [{"type": "Running", "status": "True"}]}}`:                                           "",
		`{"status": {"phase": "Succeeded"}}`:                                                                            "Succeeded",
		`{"status": {"phase": "Running"}}`:                                                                              "",
		`{}`:                                                                                                            "",
	} {
		if got := finished(decode(t, text)); got != want {
			t.Errorf("finished(%s) = %q, want %q", text, got, want)
		}
	}
}

// TestPatchTimesIgnored: Trainer's webhook stamps each runtime patch with a
// time; an unchanged patch without it is no change.
func TestPatchTimesIgnored(t *testing.T) {
	live := decode(t, `{"runtimePatches": [{"manager": "m", "time": "2026-11-25T09:21:35Z", "x": 1}]}`)
	same := decode(t, `{"runtimePatches": [{"manager": "m", "x": 1}]}`)
	other := decode(t, `{"runtimePatches": [{"manager": "m", "x": 2}]}`)
	var got []string
	diff("spec", withoutPatchTimes(live), withoutPatchTimes(same), &got)
	if len(got) != 0 {
		t.Errorf("an unchanged patch differs: %v", got)
	}
	diff("spec", withoutPatchTimes(live), withoutPatchTimes(other), &got)
	if d := cmp.Diff([]string{"spec.runtimePatches[0].x: 1 → 2"}, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if _, ok := live["runtimePatches"].([]any)[0].(map[string]any)["time"]; !ok {
		t.Error("withoutPatchTimes changed the live object")
	}
}
