// SPDX-License-Identifier: Apache-2.0

package kinds

import (
	"os"
	"strings"
	"testing"
)

// TestInstallPinsTheE2EVersions: each operator's install commands name the
// release hack/e2e/versions.env pins, the one the e2e tests run; a Pod needs
// none.
func TestInstallPinsTheE2EVersions(t *testing.T) {
	text, err := os.ReadFile("../../hack/e2e/versions.env")
	if err != nil {
		t.Fatal(err)
	}
	versions := map[string]string{}
	for line := range strings.Lines(string(text)) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok && !strings.HasPrefix(k, "#") {
			versions[k] = v
		}
	}
	pinned := map[string]string{"MPIJob": "MPI_OPERATOR_VERSION", "PyTorchJob": "TRAINING_OPERATOR_VERSION", "TrainJob": "TRAINER_VERSION", "JobSet": "JOBSET_VERSION"}
	for _, k := range All {
		if k.BuiltIn() {
			if len(k.Install) != 0 {
				t.Errorf("%s is Kubernetes' own, yet installs %v", k.Kind, k.Install)
			}
			continue
		}
		v := versions[pinned[k.Kind]]
		if v == "" || len(k.Install) == 0 {
			t.Errorf("%s: install commands %v, e2e version %s=%q", k.Kind, k.Install, pinned[k.Kind], v)
		}
		for _, c := range k.Install {
			at := strings.Contains(c, "/"+v+"/") || strings.Contains(c, "?ref="+v+`"`)
			if !strings.HasPrefix(c, "kubectl apply --server-side ") || !at {
				t.Errorf("%s: %q is not a server-side kubectl apply of %s=%s", k.Kind, c, pinned[k.Kind], v)
			}
		}
	}
}
