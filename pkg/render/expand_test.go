// SPDX-License-Identifier: Apache-2.0

package render

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestExpandEscapes: $${ writes the text ${, closed or not; a ${ that no }
// closes is an error, wherever it stands.
func TestExpandEscapes(t *testing.T) {
	for _, c := range []struct {
		in, want string
		refused  bool
	}{
		{in: "${A}-${B}", want: "a-b"},
		{in: "echo $${HOME}", want: "echo ${HOME}"},
		{in: "echo $${HOME", want: "echo ${HOME"},
		{in: "${A} and $${B", want: "a and ${B"},
		{in: "--data=${A", refused: true},
		{in: "${A}${B", refused: true},
	} {
		x := &expander{values: map[string]string{"A": "a", "B": "b"}, source: "mlops.env"}
		got := x.str(field.NewPath("spec", "command"), c.in)
		switch {
		case c.refused && len(x.errs) == 0:
			t.Errorf("%q: want it refused, got %q", c.in, got)
		case !c.refused && len(x.errs) > 0:
			t.Errorf("%q: refused: %v", c.in, x.errs)
		case !c.refused && got != c.want:
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
}
