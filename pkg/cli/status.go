// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/spf13/cobra"

	"github.com/mlops-fn/mlops-fn/pkg/cluster"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/jobnode"
	"github.com/mlops-fn/mlops-fn/pkg/kinds"
	"github.com/mlops-fn/mlops-fn/pkg/status"
)

// jobsAndCluster runs run on the jobs DIR applies (as mlops-fn apply finds them) in the cluster the flags
// name.
func jobsAndCluster(cmd *cobra.Command, dir string, f clusterFlags, run func(context.Context, []jobnode.Job, *status.Cluster) error) error {
	_, jobs, err := overlay(dir)
	if err != nil {
		return fail(cmd, err)
	}
	return connect(cmd, f, func(ctx context.Context, c *cluster.Cluster) error {
		return run(ctx, jobs, status.From(c))
	})
}

func newStatus() *cobra.Command {
	var f clusterFlags
	cmd := &cobra.Command{
		Use:   "status DIR",
		Short: "Say where DIR's job is: its phase, its pods ready, and when it waits, why",
		Long: `status reads the job the hydrated overlay DIR applies (as mlops-fn apply
finds it) from the cluster, and prints its phase, its pods ready of those it
runs, each pod, and when it waits, why:

  Kueue       no LocalQueue of the job's QUEUE in its namespace; its Workload
              not admitted, with Kueue's message (no quota, ...)
  images      a container whose image does not pull (ErrImagePull, ImagePullBackOff)
  admission   the operator cannot create its pods: Pod Security refuses them
  scheduling  a pod no node takes; a container that cannot start or crashes

A note: line says what goes wrong without making the job wait: a job with a
QUEUE that Kueue never held nor made a Workload for runs outside the queue
(Kueue does not manage its kind: PyTorchJob's integration is off in Kueue
v0.19's default configuration).

A job waiting is no error: status exits 1 only when the cluster cannot be read.
Each request waits --request-timeout for the API server's answer.`,
		Args: cobra.ExactArgs(1),
	}
	f.add(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return jobsAndCluster(cmd, args[0], f, func(ctx context.Context, jobs []jobnode.Job, c *status.Cluster) error {
			for _, job := range jobs {
				r, err := status.Status(ctx, c, job)
				if err != nil {
					return err
				}
				fmt.Fprint(cmd.OutOrStdout(), r.String())
			}
			return nil
		})
	}
	return cmd
}

func newLogs() *cobra.Command {
	var f clusterFlags
	var follow bool
	cmd := &cobra.Command{
		Use:   "logs DIR",
		Short: "Print the log of DIR's training program (-f: follow it)",
		Long: `logs prints the log of the training program of the job the hydrated overlay
DIR applies, from the container that runs it (the one reading mlops.env's
ConfigMap) in the pod that runs it:

` + kinds.All.Column(func(k jobkind.Facts) string { return k.LogsFrom }) + `
-f follows it: it waits for the program to start, and after its log ends
follows a new run (a launcher started again, a restarted container) until
the job has finished. Each request waits --request-timeout for the API
server's answer (the log itself streams for as long as the program runs).`,
		Args: cobra.ExactArgs(1),
	}
	f.add(cmd)
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "stream the log, waiting for the program to start")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
		defer stop()
		cmd.SetContext(ctx)
		return jobsAndCluster(cmd, args[0], f, func(ctx context.Context, jobs []jobnode.Job, c *status.Cluster) error {
			err := status.Logs(ctx, c, jobs[0], status.LogOptions{Follow: follow, Out: cmd.OutOrStdout(), Err: cmd.ErrOrStderr()})
			if ctx.Err() != nil {
				return nil // interrupted
			}
			return err
		})
	}
	return cmd
}
