// Command mlops-fn is the KRM function; see pkg/cli.
package main

import (
	"os"

	"github.com/mlops-fn/mlops-fn/pkg/cli"
)

func main() {
	if err := cli.New().Execute(); err != nil {
		os.Exit(1)
	}
}
