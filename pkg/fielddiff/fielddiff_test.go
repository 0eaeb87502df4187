// SPDX-License-Identifier: Apache-2.0

package fielddiff

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func decode(t *testing.T, text string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestTrees: every leaf that differs, by its path, with both values, in
// sorted order; none for equal trees.
func TestTrees(t *testing.T) {
	old := decode(t, `{"a": {"replicas": 3, "limits": {"cpu": "1"}, "same": [1, 2], "list": [{"n": "x", "v": 1}]}, "gone": "x", "more": [1]}`)
	next := decode(t, `{"a": {"replicas": 4, "limits": {"cpu": "2", "memory": "1Gi"}, "same": [1, 2], "list": [{"n": "x", "v": 2}]}, "more": [1, 2]}`)
	want := []Change{
		{"spec.a.limits.cpu", "1", "2"},
		{"spec.a.limits.memory", nil, "1Gi"},
		{"spec.a.list[0].v", 1.0, 2.0},
		{"spec.a.replicas", 3.0, 4.0},
		{"spec.gone", "x", nil},
		{"spec.more[1]", nil, 2.0},
	}
	if d := cmp.Diff(want, Trees("spec", old, next)); d != "" {
		t.Errorf("changes (-want +got):\n%s", d)
	}
	if got := Trees("spec", old, old); len(got) != 0 {
		t.Errorf("equal trees differ: %v", got)
	}
	if got := Trees("", old, nil); len(got) != 1 || got[0].Path != "" || got[0].New != nil {
		t.Errorf("a tree against nothing: want one change at the root, got %v", got)
	}
	labels := Trees("metadata", map[string]any{"labels": map[string]any{"kueue.x-k8s.io/queue-name": "a"}}, map[string]any{"labels": map[string]any{}})
	if len(labels) != 1 || labels[0].Path != `metadata.labels["kueue.x-k8s.io/queue-name"]` {
		t.Errorf("a key with dots: want it quoted in brackets, got %v", labels)
	}
	if got := Trees("", map[string]any{"a": 1}, map[string]any{"a": 2}); len(got) != 1 || got[0].Path != "a" {
		t.Errorf("no root: want the path a, got %v", got)
	}
}

// TestBrief: strings quoted, cut long values on a character's boundary.
func TestBrief(t *testing.T) {
	if got := Brief("2"); got != `"2"` {
		t.Errorf(`Brief("2") = %s`, got)
	}
	long := Brief(strings.Repeat("é", 150))
	if !strings.HasSuffix(long, "…") || !json.Valid([]byte(strings.TrimSuffix(long, "…")+`"`)) {
		t.Errorf("a long value is cut inside a character or not marked: %s", long)
	}
}
