// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"

	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/mlops-fn/mlops-fn/pkg/apply"
	"github.com/mlops-fn/mlops-fn/pkg/cluster"
	"github.com/mlops-fn/mlops-fn/pkg/jobnode"
	"github.com/mlops-fn/mlops-fn/pkg/krm"
	"github.com/mlops-fn/mlops-fn/pkg/status"
)

// warnApplied warns, once dir is applied, of what would otherwise go unseen: pods that can never all run on
// the cluster's nodes (they would wait forever, some holding a node), and a job of a LocalQueue that Kueue
// does not queue (it runs outside the queue's quota). The job is applied: what cannot be read for these
// checks is a warning too.
func warnApplied(ctx context.Context, cmd *cobra.Command, c *cluster.Cluster, jobs []jobnode.Job) {
	var warnings framework.Results
	warn := func(m string) {
		warnings = append(warnings, &framework.Result{Severity: framework.Warning, Message: m})
	}
	defer func() { krm.Report(cmd.ErrOrStderr(), warnings) }()
	sc := status.From(c)
	for _, job := range jobs {
		id := job.Kind + "/" + job.Name
		unfit, err := apply.Unfit(ctx, c, job)
		if err != nil {
			warn(id + ": applied, but not checked against the cluster's nodes: " + err.Error())
		}
		for _, m := range unfit {
			warn(m)
		}
		r, err := status.Status(ctx, sc, job)
		if err != nil {
			warn(id + ": applied, but not checked against Kueue: " + err.Error())
			continue
		}
		for _, n := range r.Notes {
			warn(id + ": " + n)
		}
	}
}
