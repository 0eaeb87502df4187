// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mlops-fn/mlops-fn/internal/version"
)

// newVersion is `mlops-fn version`; the root's --version (cobra's) prints the same text.
func newVersion() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the release, the commit and whether its tree was modified, from Go's build info",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprint(cmd.OutOrStdout(), version.String())
			return err
		},
	}
}
