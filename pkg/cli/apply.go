package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mlops-fn/mlops-fn/pkg/apply"
	"github.com/mlops-fn/mlops-fn/pkg/hydrate"
	"github.com/mlops-fn/mlops-fn/pkg/status"
)

// clusterFlags are kubectl's flags: apply and delete pass them on to every
// kubectl call, status and logs read the kubeconfig as kubectl would.
type clusterFlags struct{ status.Flags }

func (f *clusterFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&f.Namespace, "namespace", "n", "", "kubectl's --namespace")
	cmd.Flags().StringVar(&f.Context, "context", "", "kubectl's --context")
	cmd.Flags().StringVar(&f.Kubeconfig, "kubeconfig", "", "kubectl's --kubeconfig")
}

// kubectl are the flags as kubectl's arguments.
func (f *clusterFlags) kubectl() []string {
	var out []string
	for _, v := range [][2]string{{"--namespace", f.Namespace}, {"--context", f.Context}, {"--kubeconfig", f.Kubeconfig}} {
		if v[1] != "" {
			out = append(out, v[0]+"="+v[1])
		}
	}
	return out
}

// kubectlFlags are the kubectl flags apply and delete pass on to every kubectl call.
func kubectlFlags(cmd *cobra.Command, o *apply.Options) func() {
	var f clusterFlags
	f.add(cmd)
	cmd.Flags().StringVar(&o.Kubectl, "kubectl", "kubectl", "the kubectl binary")
	return func() { o.Flags = append(o.Flags, f.kubectl()...) }
}

func newApply() *cobra.Command {
	var o apply.Options
	cmd := &cobra.Command{
		Use:   "apply DIR",
		Short: "Hydrate DIR, then apply it so that a live job takes the edit whole or not at all",
		Long: `apply hydrates DIR (as mlops-fn hydrate does), then applies it with kubectl
(kubectl apply -k DIR --server-side --field-manager=mlops-fn --force-conflicts),
after a dry run of every object on the server and a comparison with the live job:

  no live job              applied
  the job unchanged        applied (what other managers added stays)
  an elastic PyTorchJob    applied: the training-operator re-forms the group
  scaled within its bounds (WORKERS within MIN_WORKERS..MAX_WORKERS)
  any other change         nothing is applied: it says what changes and exits 1
                           (kubectl apply would leave the job running a mix of
                           both renders, or stop half way on an immutable field)

With --replace a job the edit changes, running or finished, is deleted (its pods
waited for) and the new one applied: a new run.`,
		Args:          cobra.ExactArgs(1),
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	setFlags := kubectlFlags(cmd, &o)
	cmd.Flags().BoolVar(&o.Replace, "replace", false, "delete a job the edit changes (running or finished), then apply: a new run")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		setFlags()
		o.Dir = args[0]
		opts, note := following(hydrate.Options{Dir: o.Dir, Config: "job.yaml"})
		ov, err := hydrate.Render(opts)
		if err != nil {
			return fail(cmd, err)
		}
		report(cmd.ErrOrStderr(), ov.Warnings)
		if err := ov.Write(); err != nil {
			return fail(cmd, err)
		}
		inform(cmd, note)
		res, err := apply.Apply(o)
		if err != nil {
			return fail(cmd, err)
		}
		fmt.Fprintf(cmd.OutOrStdout(), "%s %s\n", res.Job, res.Action)
		return nil
	}
	return cmd
}

func newDelete() *cobra.Command {
	var o apply.Options
	cmd := &cobra.Command{
		Use:   "delete DIR",
		Short: "Delete DIR's job and its env ConfigMap, also after an edit that was not hydrated",
		Long: `delete deletes the jobs the hydrated overlay DIR applies and the ConfigMaps
they read their environment from, waiting for their pods to go. After an edit
of job.yaml or mlops.env that was not hydrated, kubectl delete -k fails with the
guard's error; delete builds DIR with the patches the last hydrate wrote, so it
deletes the job that runs. The base's other objects (a ServiceAccount other
jobs share) stay.`,
		Args:          cobra.ExactArgs(1),
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	setFlags := kubectlFlags(cmd, &o)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		setFlags()
		o.Dir = args[0]
		if err := apply.Delete(o); err != nil {
			return fail(cmd, err)
		}
		return nil
	}
	return cmd
}
