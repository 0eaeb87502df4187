// Command mlops-fn is the KRM function; see pkg/cli.
package main

import (
	"os"
	"runtime/debug"

	"github.com/mlops-fn/mlops-fn/pkg/cli"
)

func main() {
	// cli.Execute has put every error on stderr, once.
	if err := cli.Execute(cli.New(collectGarbageOnlyIfLarge)); err != nil {
		os.Exit(1)
	}
}

// smallInput is the size below which a run keeps all its garbage: the heap
// stays a few tens of MB, and collecting it cost half a quickstart run's time.
const smallInput = 1 << 20

// collectGarbageOnlyIfLarge turns the collector off for small inputs, with a
// memory limit as the safety net that turns it back on under pressure. It is
// the process's to decide, hence here and not in pkg/cli, which tests run in
// process.
func collectGarbageOnlyIfLarge(inputBytes int) {
	if inputBytes < smallInput {
		debug.SetGCPercent(-1)
		debug.SetMemoryLimit(512 << 20)
	}
}
