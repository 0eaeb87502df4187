// SPDX-License-Identifier: Apache-2.0

package render

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
)

// TestCheckImage accepts what container runtimes pull and says why not.
func TestCheckImage(t *testing.T) {
	digest := strings.Repeat("a", 64)
	for ref, want := range map[string]string{
		"docker.io/library/python:3.12":              "",
		"localhost:5000/team/train@sha256:" + digest: "",
		"x/y@sha256:" + strings.Repeat("a", 40):      "digest",
		"x/y@md5:abc":                                "digest",
		"Team/Train:1":                               "uppercase",
		"x/y :1":                                     "whitespace",
		"x/y:" + strings.Repeat("t", 128):            "",
		"x/y:" + strings.Repeat("t", 129):            "accepted",
		"x/y@sha512:" + strings.Repeat("b", 128):     "",
		"x/y@sha512:" + digest:                       "digest",
		"x/y@sha256:" + strings.Repeat("a", 65):      "digest",
		"x/y:1@sha256:" + digest:                     "",
		"x/y:@sha256:" + digest:                      "accepted",
	} {
		got := checkImage(ref)
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("checkImage(%q) = %q, want it to say %q", ref, got, want)
		}
	}
}

// TestWrittenQuantity: a decimal multiple the parser reprints with a suffix
// is written out in full; other quantities keep their text.
func TestWrittenQuantity(t *testing.T) {
	for in, want := range map[string]string{"1000": "1000", "2k": "2000", "16Gi": "16Gi", "500m": "500m", "16": "16", "1.5": "1500m"} {
		if got := written(resource.MustParse(in)); got != want {
			t.Errorf("%s: got %s, want %s", in, got, want)
		}
	}
}
