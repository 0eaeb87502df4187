// Command mlops-fn is the KRM function; see pkg/cli.
package main

import (
	"os"

	"github.com/mlops-fn/mlops-fn/pkg/cli"
)

func main() {
	// cli.Execute has put every error on stderr, once.
	if err := cli.Execute(cli.New()); err != nil {
		os.Exit(1)
	}
}
