// SPDX-License-Identifier: Apache-2.0

package schema

import (
	"testing"

	"sigs.k8s.io/kustomize/kyaml/openapi"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

var mpiJobType = yaml.TypeMeta{APIVersion: "kubeflow.org/v2beta1", Kind: "MPIJob"}

// BenchmarkWith is what every run of the function pays for the schema
// (kyaml's own small schema, which a lookup makes it read, included).
func BenchmarkWith(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		current = unknown
		_ = With(func() error {
			openapi.SchemaForResourceType(mpiJobType)
			return nil
		})
	}
}
