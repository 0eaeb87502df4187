// SPDX-License-Identifier: Apache-2.0

// Command floor is the cheapest kyaml function: it reads a ResourceList and
// writes it back. Its cost is the floor any kyaml-based function pays.
package main

import (
	"os"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/fn/framework/command"
)

func main() {
	passThrough := framework.ResourceListProcessorFunc(func(*framework.ResourceList) error { return nil })
	if err := command.Build(passThrough, command.StandaloneDisabled, false).Execute(); err != nil {
		os.Exit(1)
	}
}
