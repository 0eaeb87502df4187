// SPDX-License-Identifier: Apache-2.0

package apply

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mlops-fn/mlops-fn/internal/testutil"
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

// TestScalesWithin: an elastic PyTorchJob's worker count within its bounds,
// its kind's in-place rule (jobkind's TestInPlace has the rule's cases), and
// WORKERS in the env ConfigMap (a new hash) are the changes applied in place;
// another key of the ConfigMap, a label, or another kind are not.
func TestScalesWithin(t *testing.T) {
	job := func(replicas, max int, hash string) object {
		return decode(t, `{"kind": "PyTorchJob", "spec": {"elasticPolicy": {"minReplicas": 1, "maxReplicas": `+itoa(max)+`},
			"pytorchReplicaSpecs": {"Worker": {"replicas": `+itoa(replicas)+`, "template": {"spec": {"containers": [{"name": "pytorch",
				"envFrom": [{"configMapRef": {"name": "x-env-`+hash+`"}}]}]}}}}}}`)
	}
	scale := []string{"spec.pytorchReplicaSpecs.Worker.replicas: 2 → 3", `ConfigMap/x-env-c3 (was x-env-b2) data.WORKERS: "2" → "3"`,
		`spec.pytorchReplicaSpecs.Worker.template.spec.containers[0].envFrom[0].configMapRef.name: "x-env-b2" → "x-env-c3"`}
	for _, c := range []struct {
		name      string
		live, job object
		changes   []string
		want      bool
	}{
		{"within the bounds", job(2, 3, "b2"), job(3, 3, "c3"), scale, true},
		{"above the bounds", job(2, 3, "b2"), job(4, 3, "c3"), scale, false},
		{"the bounds changed too", job(2, 3, "b2"), job(3, 4, "c3"), scale, false},
		{"the env ConfigMap's new hash alone", job(2, 3, "b2"), job(2, 3, "c3"), scale[2:], false},
		{"another key of the env ConfigMap", job(2, 3, "b2"), job(3, 3, "c3"), append(scale, `ConfigMap/x-env-c3 (was x-env-b2) data.OUTPUT_DIR: "/a" → "/b"`), false},
		{"a label", job(2, 3, "b2"), job(3, 3, "c3"), append(scale, `metadata.labels.team: "a" → "b"`), false},
		{"an MPIJob", decode(t, `{"kind": "MPIJob"}`), decode(t, `{"kind": "MPIJob"}`), scale, false},
	} {
		if got := scalesWithin(c.live, c.job, c.changes); got != c.want {
			t.Errorf("%s: scalesWithin = %v, want %v", c.name, got, c.want)
		}
		// As client-go's unstructured objects hold them: int64, not float64.
		live, job := testutil.Unstructured(t, c.live), testutil.Unstructured(t, c.job)
		if got := scalesWithin(live, job, c.changes); got != c.want {
			t.Errorf("%s, as client-go decodes it: scalesWithin = %v, want %v", c.name, got, c.want)
		}
	}
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
