// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
)

// TestCommandOf: init's training command from --command (once, split at its
// commas outside quotes and brackets; repeated, one argument each) or after --.
func TestCommandOf(t *testing.T) {
	for _, tc := range []struct {
		flags, dash, want []string
		err               string
	}{
		{flags: []string{"python,train.py"}, want: []string{"python", "train.py"}},
		{flags: []string{"python,-c,print(1,2)"}, want: []string{"python", "-c", "print(1,2)"}},
		{flags: []string{`python,-c,"import a, b"`}, want: []string{"python", "-c", "import a, b"}},
		{flags: []string{`sh,-c,echo 'a,b' [x,y] {p: 1, q: 2}`}, want: []string{"sh", "-c", `echo 'a,b' [x,y] {p: 1, q: 2}`}},
		{flags: []string{"python", "-c", "import a, b"}, want: []string{"python", "-c", "import a, b"}},
		{dash: []string{"python", "-c", "print(1,2)"}, want: []string{"python", "-c", "print(1,2)"}},
		{flags: []string{""}},
		{},
		{flags: []string{"python,-c,print(1,2"}, err: `--command "python,-c,print(1,2": an unclosed quote or bracket`},
		{flags: []string{"python"}, dash: []string{"train.py"}, err: "--command python and a command after -- (train.py): accepted: one of them"},
	} {
		got, err := commandOf(tc.flags, tc.dash)
		if tc.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("%q, %q: error %v, want %q", tc.flags, tc.dash, err, tc.err)
			}
			continue
		}
		if err != nil || !cmp.Equal(tc.want, got) {
			t.Errorf("%q, %q: got %q, %v; want %q", tc.flags, tc.dash, got, err, tc.want)
		}
	}
}

// TestMovedTo: init's warnings name the job's folder, not the temporary one
// it stages the files in.
func TestMovedTo(t *testing.T) {
	staged := "jobs/.mlops-fn-tmp-init-123"
	in := framework.Results{{Severity: framework.Warning, Message: staged + "/mlops.env: MEMORY: under 1 MiB", File: &framework.File{Path: staged + "/mlops.env"}}}
	got := movedTo(in, staged, "jobs/my-job/")
	if got[0].Message != "jobs/my-job/mlops.env: MEMORY: under 1 MiB" || got[0].File.Path != "jobs/my-job/mlops.env" {
		t.Errorf("got %q in %q", got[0].Message, got[0].File.Path)
	}
	if in[0].Message != staged+"/mlops.env: MEMORY: under 1 MiB" {
		t.Errorf("the input changed: %q", in[0].Message)
	}
}
