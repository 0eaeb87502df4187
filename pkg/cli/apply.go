// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/mlops-fn/mlops-fn/pkg/apply"
	"github.com/mlops-fn/mlops-fn/pkg/cluster"
	"github.com/mlops-fn/mlops-fn/pkg/hydrate"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/jobnode"
	"github.com/mlops-fn/mlops-fn/pkg/kinds"
	"github.com/mlops-fn/mlops-fn/pkg/krm"
	"github.com/mlops-fn/mlops-fn/pkg/status"
)

// clusterFlags adds kubectl's flags for the cluster to cmd, with kubectl's meanings.
func clusterFlags(cmd *cobra.Command) *cluster.Flags {
	f := &cluster.Flags{RequestTimeout: 10 * time.Second}
	cmd.Flags().StringVarP(&f.Namespace, "namespace", "n", "", "kubectl's --namespace")
	cmd.Flags().StringVar(&f.Context, "context", "", "kubectl's --context")
	cmd.Flags().StringVar(&f.Kubeconfig, "kubeconfig", "", "kubectl's --kubeconfig")
	cmd.Flags().Var(timeout{&f.RequestTimeout}, "request-timeout",
		"how long each request waits for the API server's answer, such as 30s or 2m (0: no limit; the TLS handshake has client-go's own 10s)")
	return f
}

// timeout is a duration flag that refuses a negative one.
type timeout struct{ d *time.Duration }

func (t timeout) String() string { return t.d.String() }
func (t timeout) Type() string   { return "duration" }
func (t timeout) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err == nil && d < 0 {
		err = errors.New("is negative")
	}
	if err == nil {
		*t.d = d
	}
	return err
}

// given are the flags as the command line gave them.
func given(cmd *cobra.Command) []string {
	var out []string
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if f.Value.Type() != "bool" {
			out = append(out, "--"+f.Name+"="+f.Value.String())
		}
	})
	return out
}

func newApply() *cobra.Command {
	var o apply.Options
	var verbose bool
	cmd := &cobra.Command{
		Use:   "apply DIR",
		Short: "Hydrate DIR, then apply it so that a live job takes the edit whole or not at all",
		Long: `apply hydrates DIR (as mlops-fn hydrate does), then applies it server-side as
kubectl apply -k DIR --server-side --field-manager=mlops-fn --force-conflicts
would, with client-go (kubectl is not needed), after a dry run of every object
on the server and a comparison with the live job:

  no live job              applied
  the job unchanged        applied (what other managers added stays)
  an elastic PyTorchJob    applied: the training-operator re-forms the group
  scaled within its bounds (WORKERS within MIN_WORKERS..MAX_WORKERS)
  any other change         nothing is applied: it says what changes and exits 1
                           (kubectl apply would leave the job running a mix of
                           both renders, or stop half way on an immutable field)

A dry run the API server refuses for any other reason than a change in place
(RBAC, a webhook that fails, a quota, an invalid object) applies nothing and
says the API server's reason.

With --replace a job the edit changes, running or finished, is deleted (its pods
waited for) and the new one applied: a new run. Nothing is deleted unless a dry
run shows the new job would be created; the old job's manifest is saved to a
file in $TMPDIR first, and a failure after the delete names it (kubectl create -f
FILE brings the old job back). Each request waits --request-timeout for the API
server's answer.

Once applied, it warns where the job's pods can never all run on the cluster's
nodes (a pod larger than the largest node, or the pods that run at once larger
than all nodes together), naming the numbers, and where the job has a QUEUE but
Kueue never held it nor made a Workload for it (Kueue does not manage its kind
or namespace: it runs outside the queue).`,
		// DIR hydrated again, before its overlay is read (onOverlay)
		PreRunE: func(cmd *cobra.Command, args []string) error {
			o.Dir = args[0]
			if err := hydrated(o.Dir); err != nil {
				return fail(cmd, err)
			}
			opts, note := following(hydrate.Options{Dir: o.Dir, Config: "job.yaml", Verbose: verbose}, nil)
			ov, err := hydrate.Render(opts)
			if err != nil {
				return fail(cmd, err)
			}
			krm.Report(cmd.ErrOrStderr(), ov.Warnings)
			if err := ov.Write(); err != nil {
				return fail(cmd, err)
			}
			krm.Report(cmd.ErrOrStderr(), note)
			return nil
		},
	}
	cmd.Flags().BoolVar(&o.Replace, "replace", false, "delete a job the edit changes (running or finished), then apply: a new run")
	cmd.Flags().BoolVar(&verbose, "verbose", false, verboseUsage)
	return onOverlay(cmd, func(ctx context.Context, c *cluster.Cluster, objects []*yaml.RNode, jobs []jobnode.Job) error {
		o.Objects, o.Flags = objects, given(cmd)
		res, err := apply.Apply(ctx, c, o)
		if err == nil {
			fmt.Fprintf(cmd.OutOrStdout(), "%s %s\n", res.Job, res.Action)
			warnApplied(ctx, cmd, c, jobs)
		}
		return err
	})
}

func newDelete() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "delete DIR",
		Short: "Delete DIR's job and its env ConfigMap, also after an edit that was not hydrated",
		Long: `delete deletes the jobs the hydrated overlay DIR applies and the ConfigMaps
they read their environment from, waiting for their pods to go. After an edit
of job.yaml or mlops.env that was not hydrated, kubectl delete -k fails with the
guard's error; delete builds DIR with the patches the last hydrate wrote, so it
deletes the job that runs. The base's other objects (a ServiceAccount other
jobs share) stay.`,
	}
	return onOverlay(cmd, func(ctx context.Context, c *cluster.Cluster, objects []*yaml.RNode, jobs []jobnode.Job) error {
		deleted, err := apply.Delete(ctx, c, objects)
		for _, d := range deleted {
			fmt.Fprintf(cmd.OutOrStdout(), "%s deleted\n", d)
		}
		if err == nil && len(deleted) == 0 {
			var none []string
			for _, j := range jobs {
				ns, _ := c.Of(j.Namespace)
				none = append(none, fmt.Sprintf("%s/%s in namespace %s", j.Kind, j.Name, ns))
			}
			fmt.Fprintf(cmd.OutOrStdout(), "nothing to delete: no %s\n", strings.Join(none, ", no "))
		}
		return err
	})
}

// hydrated: dir is an overlay, which apply hydrates again; a folder that only holds a job spec is made one by
// hydrate with its base, or by init.
func hydrated(dir string) error {
	if hasKustomization(dir, func(err error) bool { return !errors.Is(err, fs.ErrNotExist) }) {
		return nil
	}
	return fmt.Errorf("%s has no kustomization.yaml: it was never hydrated; mlops-fn apply hydrates an overlay again, it does not make one: run mlops-fn hydrate --resources BASE %s (BASE: the folder that holds the job's skeleton), or mlops-fn init %s for a new job", dir, dir, dir)
}

// overlay is what the hydrated overlay dir applies, and its jobs, as the last hydrate wrote its patches (so
// also after an edit of job.yaml or mlops.env not yet hydrated, whose build the guard fails).
func overlay(dir string) ([]*yaml.RNode, []jobnode.Job, error) {
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("%s does not exist: name a folder mlops-fn hydrate wrote (mlops-fn hydrate --resources BASE DIR, or mlops-fn init DIR, makes one)", dir)
	}
	items, err := hydrate.Applied(dir)
	if err != nil {
		return nil, nil, err
	}
	jobs := jobnode.Jobs(kinds.All, items)
	if len(jobs) == 0 {
		return nil, nil, fmt.Errorf("%s builds no job of the kinds mlops-fn renders (%s)", dir, strings.Join(kinds.All.Names(), ", "))
	}
	return items, jobs, nil
}

// warnApplied warns, once applied, of what would go unseen: pods that can never all run on the nodes (they
// would wait forever, some holding a node), and a job of a LocalQueue Kueue does not queue (outside its
// quota). The job is applied: what cannot be read for these checks is a warning too.
func warnApplied(ctx context.Context, cmd *cobra.Command, c *cluster.Cluster, jobs []jobnode.Job) {
	warn := func(m string) {
		krm.Report(cmd.ErrOrStderr(), framework.Results{{Severity: framework.Warning, Message: m}})
	}
	for _, job := range jobs {
		id := job.Kind + "/" + job.Name
		unfit, err := apply.Unfit(ctx, c, job)
		if err != nil {
			warn(id + ": applied, but not checked against the cluster's nodes: " + err.Error())
		}
		for _, m := range unfit {
			warn(m)
		}
		r, err := status.Status(ctx, c, job)
		if err != nil {
			warn(id + ": applied, but not checked against Kueue: " + err.Error())
			continue
		}
		for _, n := range r.Notes {
			warn(id + ": " + n)
		}
	}
}

// onOverlay makes cmd take DIR and the cluster flags, and run on what DIR applies and its jobs (overlay) in
// the cluster the flags name; run's errors name the server and the request that did not answer.
func onOverlay(cmd *cobra.Command, run func(context.Context, *cluster.Cluster, []*yaml.RNode, []jobnode.Job) error) *cobra.Command {
	cmd.Args = cobra.ExactArgs(1)
	f := clusterFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		objects, jobs, err := overlay(args[0])
		var c *cluster.Cluster
		if err == nil {
			c, err = cluster.Connect(cmd.Context(), *f)
		}
		if err == nil {
			err = c.Explain(run(cmd.Context(), c, objects, jobs))
		}
		if err != nil {
			return fail(cmd, err)
		}
		return nil
	}
	return cmd
}

func newStatus() *cobra.Command {
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
	}
	return onOverlay(cmd, func(ctx context.Context, c *cluster.Cluster, _ []*yaml.RNode, jobs []jobnode.Job) error {
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

func newLogs() *cobra.Command {
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
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "stream the log, waiting for the program to start")
	runE := onOverlay(cmd, func(ctx context.Context, c *cluster.Cluster, _ []*yaml.RNode, jobs []jobnode.Job) error {
		err := status.Logs(ctx, c, jobs[0], status.LogOptions{Follow: follow, Out: cmd.OutOrStdout(), Err: cmd.ErrOrStderr()})
		if ctx.Err() != nil {
			return nil // interrupted
		}
		return err
	}).RunE
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
		defer stop()
		cmd.SetContext(ctx)
		return runE(cmd, args)
	}
	return cmd
}
