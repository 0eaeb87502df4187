package schema

import (
	"testing"

	"sigs.k8s.io/kustomize/kyaml/openapi"
)

// BenchmarkRegister is what every run of the function pays for the schema
// (kyaml's own small schema, which Register makes it read, included).
func BenchmarkRegister(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		openapi.ResetOpenAPI()
		Register()
	}
}
