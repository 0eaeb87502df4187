// SPDX-License-Identifier: Apache-2.0

//go:build ignore

// Command generate writes policy.yaml from the job kinds' facts; run by
// `go generate ./deploy/admission`.
package main

import (
	"log"
	"os"

	"github.com/mlops-fn/mlops-fn/deploy/admission"
)

func main() {
	b, err := admission.Policy()
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(admission.File, b, 0o644); err != nil {
		log.Fatal(err)
	}
}
