// SPDX-License-Identifier: Apache-2.0

package schema

// JobSchemaFile is the job spec's JSON Schema (draft-07), by its path in the repository and in the release's
// archives: `go generate ./pkg/schema` writes it from pkg/api/v1alpha1's types (gen.JobSchema), and
// TestJobSchemaIsCurrent keeps it current. yaml-language-server reads it (docs/job-spec.md).
const JobSchemaFile = "schema/mlops-job-v1alpha1.schema.json"
