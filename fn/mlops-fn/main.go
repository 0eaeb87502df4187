// SPDX-License-Identifier: Apache-2.0

// Command mlops-fn is the full command: the KRM function, the standalone
// renderer, hydrate, init, apply, delete, version (pkg/cli). Its folder names
// the binary go install writes; the image runs ../../krm.
package main

import (
	"os"

	"github.com/mlops-fn/mlops-fn/pkg/cli"
	"github.com/mlops-fn/mlops-fn/pkg/krm"
)

func main() {
	// cli.Execute has put every error on stderr, once.
	if err := cli.Execute(cli.New(krm.CollectGarbageOnlyIfLarge)); err != nil {
		os.Exit(1)
	}
}
