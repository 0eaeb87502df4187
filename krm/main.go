// SPDX-License-Identifier: Apache-2.0

// Command mlops-fn-krm is what the container image runs: mlops-fn as a KRM
// function only (a ResourceList on stdin, pkg/krm), --help for `kpt fn
// doc`, and --version. The standalone renderer, hydrate, init, apply and delete are the
// full command's (../fn/mlops-fn, bin/mlops-fn): they build overlays with kustomize's
// own code, which this program does not link.
package main

import (
	"fmt"
	"os"

	"github.com/mlops-fn/mlops-fn/internal/version"
	"github.com/mlops-fn/mlops-fn/pkg/krm"
)

func main() {
	if args := os.Args[1:]; len(args) > 0 {
		if len(args) == 1 && (args[0] == "--help" || args[0] == "-h") {
			fmt.Print(krm.Help())
			return
		}
		if len(args) == 1 && args[0] == "--version" {
			fmt.Print(version.String())
			return
		}
		fmt.Fprintf(os.Stderr, "mlops-fn: error: the image runs mlops-fn as a KRM function only (a ResourceList on stdin, no arguments; --help, --version), not %q: the standalone renderer, hydrate, init, apply and delete are the mlops-fn binary (make build)\n", args)
		os.Exit(1)
	}
	// krm.Run has put every error on stderr, once.
	if err := krm.Run(os.Stdin, os.Stdout, os.Stderr, krm.CollectGarbageOnlyIfLarge); err != nil {
		os.Exit(1)
	}
}
