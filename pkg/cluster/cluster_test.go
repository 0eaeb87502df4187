// SPDX-License-Identifier: Apache-2.0

package cluster

import (
	"strings"
	"testing"
)

// TestNamespaceOf: an object's own namespace wins over the context's, and
// contradicting --namespace is kubectl's error; none takes the flags'.
func TestNamespaceOf(t *testing.T) {
	for _, c := range []struct {
		n          Namespaces
		own, want  string
		contradict bool
	}{
		{Namespaces{Namespace: "ctx"}, "", "ctx", false},
		{Namespaces{Namespace: "ctx"}, "team", "team", false},
		{Namespaces{Namespace: "team", Explicit: true}, "team", "team", false},
		{Namespaces{Namespace: "other", Explicit: true}, "", "other", false},
		{Namespaces{Namespace: "other", Explicit: true}, "team", "", true},
	} {
		got, err := c.n.Of(c.own)
		if got != c.want || (err != nil) != c.contradict {
			t.Errorf("%+v.Of(%q) = %q, %v; want %q, error %v", c.n, c.own, got, err, c.want, c.contradict)
		}
		if err != nil && !strings.Contains(err.Error(), `the namespace from the provided object "team" does not match the namespace "other"`) {
			t.Errorf("the error is not kubectl's: %v", err)
		}
	}
}
