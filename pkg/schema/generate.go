// SPDX-License-Identifier: Apache-2.0

//go:build ignore

// Command generate writes definitions.go and the job spec's JSON Schema (schema.JobSchemaFile): go generate.
package main

import (
	"log"
	"os"
	"path/filepath"

	"sigs.k8s.io/kustomize/kyaml/openapi"

	"github.com/mlops-fn/mlops-fn/pkg/schema"
	"github.com/mlops-fn/mlops-fn/pkg/schema/internal/gen"
)

func main() {
	defs, err := gen.Definitions(openapi.Schema().Definitions)
	must(err)
	src, err := gen.Source(defs)
	must(err)
	must(os.WriteFile("definitions.go", src, 0o644))
	js, err := gen.JobSchema()
	must(err)
	must(os.WriteFile(filepath.Join("..", "..", schema.JobSchemaFile), js, 0o644))
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
