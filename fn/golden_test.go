// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/mlops-fn/mlops-fn/internal/testutil"
	"github.com/mlops-fn/mlops-fn/pkg/cli"
	"github.com/mlops-fn/mlops-fn/pkg/kinds"
)

// update rewrites the golden files from the actual output: `make golden-update`.
var update = flag.Bool("update", false, "rewrite testdata/*/expected.yaml and stderr.txt from the actual output")

// TestGolden runs `mlops-fn job.yaml [input.yaml]` in every testdata case
// folder and compares stdout with expected.yaml and stderr with stderr.txt
// (an absent file means: must be empty).
func TestGolden(t *testing.T) {
	cases, err := filepath.Glob("../testdata/*/job.yaml")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no golden cases under ../testdata: %v", err)
	}
	for _, job := range cases {
		dir := filepath.Dir(job)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			args := []string{job}
			if _, err := os.Stat(filepath.Join(dir, "input.yaml")); err == nil {
				args = append(args, filepath.Join(dir, "input.yaml"))
			}
			var stdout, stderr bytes.Buffer
			cmd := cli.New(nil)
			cmd.SetArgs(args)
			cmd.SetOut(&stdout)
			cmd.SetErr(&stderr)
			runErr := cmd.Execute()
			// Messages name files relative to the repository's testdata, not the test's folder.
			errText := strings.ReplaceAll(stderr.String(), "../testdata/", "testdata/")

			compare(t, filepath.Join(dir, "expected.yaml"), stdout.String())
			compare(t, filepath.Join(dir, "stderr.txt"), errText)
			if hasError := strings.Contains(errText, ": error: "); hasError != (runErr != nil) {
				t.Errorf("exit status and stderr disagree: err=%v, stderr:\n%s", runErr, errText)
			}
			if runErr != nil && stdout.Len() > 0 {
				t.Errorf("a failing run wrote to stdout:\n%s", stdout.String())
			}
			decodeStrictly(t, stdout.String())
		})
	}
}

// compare checks a golden file; an empty actual output means the file must not exist.
func compare(t *testing.T, golden, actual string) {
	t.Helper()
	if *update {
		if actual == "" {
			_ = os.Remove(golden)
			return
		}
		if err := os.WriteFile(golden, []byte(actual), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), actual); diff != "" {
		t.Errorf("%s differs (-want +got); run `make golden-update` and read the diff if this is intended:\n%s", golden, diff)
	}
}

// decodeStrictly decodes every rendered object into its upstream Go type with
// unknown fields disallowed: a string where an integer belongs, or fsGroup on
// a container, fails here.
func decodeStrictly(t *testing.T, out string) {
	t.Helper()
	nodes, err := (&kio.ByteReader{Reader: strings.NewReader(out)}).Read()
	if err != nil {
		t.Fatalf("output does not parse: %v", err)
	}
	for _, n := range nodes {
		var obj any
		if k, ok := kinds.All.ForKind(n.GetKind()); ok {
			obj = k.New()
		} else if n.GetKind() == "ConfigMap" {
			obj = &corev1.ConfigMap{}
		} else {
			continue
		}
		b, err := n.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if err := testutil.DecodeStrict(b, obj); err != nil {
			t.Errorf("%s/%s does not decode strictly: %v", n.GetKind(), n.GetName(), err)
		}
	}
}
