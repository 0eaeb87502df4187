// SPDX-License-Identifier: Apache-2.0

package schema

import (
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// BenchmarkSchemas is what every run of the function pays for the schema
// of an MPIJob: the definitions built, and the references inlined.
func BenchmarkSchemas(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		newInliner(definitions()).of(yaml.TypeMeta{APIVersion: "kubeflow.org/v2beta1", Kind: "MPIJob"})
	}
}
