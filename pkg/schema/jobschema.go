// SPDX-License-Identifier: Apache-2.0

package schema

// JobSchemaFile is the job spec's JSON Schema for yaml-language-server (docs/job-spec.md), by its path in the
// repository and the release's archives; `go generate ./pkg/schema` writes it (TestJobSchemaIsCurrent).
const JobSchemaFile = "schema/mlops-job-v1alpha1.schema.json"
