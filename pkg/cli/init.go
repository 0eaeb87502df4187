package cli

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/hydrate"
	"github.com/mlops-fn/mlops-fn/pkg/scaffold"
)

func newInit() *cobra.Command {
	var o scaffold.Options
	var mode string
	cmd := &cobra.Command{
		Use:   "init DIR",
		Short: "Start a job: DIR/mlops.env, DIR/job.yaml, a base with its skeleton, hydrated for kubectl apply -k",
		Long: `init writes a new job's folder, DIR (new or empty):
  mlops.env       your site and you, commented: uid/gid, workers, CPU, memory, NFS
  job.yaml        the job spec: its name, mode, image and command
  base/           the job's skeleton, named like the job (the hydrated patches fill it in)
and hydrates it (mlops-fn hydrate DIR), so that kubectl apply -k DIR runs it.
Without --image the job is the operator's own example (mpi-operator's pi for
multi-node, a Python hello for single-node, the training-operator's echo for
elastic, Trainer's torch-distributed for trainjob), which runs on any cluster with the operator: edit job.yaml and
mlops.env, then run mlops-fn hydrate DIR again.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("init takes one folder (the new job's), got %d arguments", len(args))
			}
			return nil
		},
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			o.Mode = api.Mode(mode)
			if o.Name == "" {
				abs, err := filepath.Abs(dir)
				if err != nil {
					return fail(cmd, err)
				}
				o.Name = filepath.Base(abs)
			}
			files, err := scaffold.Files(o)
			if err != nil {
				return fail(cmd, err)
			}
			err = scaffold.Write(dir, files, func(staged string) error {
				ov, err := hydrate.Render(hydrate.Options{Dir: staged, Resources: []string{scaffold.BaseDir}})
				if err != nil {
					return err
				}
				report(cmd.ErrOrStderr(), ov.Warnings)
				return ov.Write()
			})
			if err != nil {
				return fail(cmd, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: edit %s and %s, then\n  mlops-fn hydrate %s\n  kubectl apply -k %s\n",
				dir, filepath.Join(dir, "mlops.env"), filepath.Join(dir, "job.yaml"), dir, dir)
			return nil
		},
	}
	cmd.Flags().StringVar(&mode, "mode", string(api.ModeMultiNode), "multi-node (MPIJob), single-node (Pod), elastic (PyTorchJob) or trainjob (Kubeflow Trainer TrainJob)")
	cmd.Flags().StringVar(&o.Name, "name", "", "the job's name (default: DIR's name)")
	cmd.Flags().StringVar(&o.Image, "image", "", "the training image (default: the operator's example)")
	cmd.Flags().StringSliceVar(&o.Command, "command", nil, "the training command, comma-separated (default: the example's)")
	return cmd
}
