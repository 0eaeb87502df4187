// SPDX-License-Identifier: Apache-2.0

package schema

import (
	"testing"
)

// BenchmarkSchemas is what every run of the function pays for the schema:
// the definitions built, and their references inlined.
func BenchmarkSchemas(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		resourceSchemas(definitions())
	}
}
