// SPDX-License-Identifier: Apache-2.0

package env

import (
	"errors"
	"testing"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation"
)

// FuzzParse: any bytes either parse into valid, unique keys, in file order,
// or fail with the lines that are wrong; Decode never panics on what parses.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"", "WORKERS=2\n", "# c\n\n  A=1\nB\n", "\xef\xbb\xbfA=1\r\nB= x \n", "A=1\nA=2\n", "9X=1\n", "=x\n",
		"USER_ID=-1\nGPUS_PER_WORKER=65\nCPU=lots\nNFS_PATH=rel\n", "WORKER=2\nworkers=3\n", "A=\xff\n",
		"NFS_SERVER=[fd00::1]\nNFS_PATH=/a/../b\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse("mlops.env", data)
		if err != nil {
			var pe ParseErrors
			if !errors.As(err, &pe) || len(pe) == 0 {
				t.Fatalf("error is not ParseErrors: %T %v", err, err)
			}
			for i := 1; i < len(pe); i++ {
				if pe[i].Line < pe[i-1].Line {
					t.Fatalf("errors out of line order: %v", err)
				}
			}
			return
		}
		seen := map[string]bool{}
		for _, e := range file.Entries {
			if len(validation.IsEnvVarName(e.Key)) > 0 {
				t.Fatalf("invalid key accepted: %q", e.Key)
			}
			if seen[e.Key] {
				t.Fatalf("repeated key accepted: %q", e.Key)
			}
			seen[e.Key] = true
			if !utf8.ValidString(e.Value) {
				t.Fatalf("invalid UTF-8 value accepted: %q", e.Value)
			}
		}
		if len(file.Map()) != len(file.Entries) {
			t.Fatalf("Map has %d keys for %d entries", len(file.Map()), len(file.Entries))
		}
		_, problems := Decode(file)
		for _, p := range problems {
			if p.Message == "" {
				t.Fatalf("a problem without a message: %+v", p)
			}
		}
	})
}
