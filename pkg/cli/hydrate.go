package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/mlops-fn/mlops-fn/pkg/hydrate"
)

func newHydrate() *cobra.Command {
	var o hydrate.Options
	var check bool
	cmd := &cobra.Command{
		Use:   "hydrate DIR...",
		Short: "Write an overlay's patch files and kustomization, for `kubectl apply -k DIR`",
		Long: `hydrate renders DIR/job.yaml with its mlops.env and writes into DIR the
patches (MPIJob or Pod, securityContext, NFS volumes), the MPIJob schema
kustomize needs to merge them by name, and the kustomization that lists them.
kubectl cannot run functions; the hydrated folder needs none.

With --check nothing is written: the command fails when a file in DIR differs
from what it would write (CI's drift check).`,
		Args:          cobra.MinimumNArgs(1),
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, dirs []string) error {
			// Render every folder before writing any, so a bad one leaves all untouched.
			overlays := make([]*hydrate.Overlay, len(dirs))
			for i, dir := range dirs {
				opts := o
				opts.Dir = dir
				ov, err := hydrate.Render(opts)
				if err != nil {
					return fail(cmd, err)
				}
				report(cmd.ErrOrStderr(), ov.Warnings)
				overlays[i] = ov
			}
			for i, dir := range dirs {
				if check {
					if stale := overlays[i].Stale(dir); len(stale) > 0 {
						return fail(cmd, fmt.Errorf("%s is stale: %s differ from what mlops-fn renders now; run `mlops-fn hydrate %s`", dir, strings.Join(stale, ", "), dir))
					}
					continue
				}
				if err := overlays[i].Write(dir); err != nil {
					return fail(cmd, err)
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&o.Config, "config", "job.yaml", "the job spec's file name in each DIR")
	cmd.Flags().StringSliceVar(&o.Resources, "resources", nil, "resources of a new kustomization.yaml (the base with the skeleton)")
	cmd.Flags().BoolVar(&check, "check", false, "write nothing; fail when DIR differs from what would be written")
	return cmd
}

// fail reports err on stderr: results one per line, anything else as is.
func fail(cmd *cobra.Command, err error) error {
	if results, ok := err.(framework.Results); ok {
		report(cmd.ErrOrStderr(), results)
	} else {
		reportError(cmd.ErrOrStderr(), err)
	}
	return err
}
