// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/mlops-fn/mlops-fn/pkg/hydrate"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/kinds"
	"github.com/mlops-fn/mlops-fn/pkg/krm"
	"github.com/mlops-fn/mlops-fn/pkg/scaffold"
)

func newInit() *cobra.Command {
	var o scaffold.Options
	var jobKind string
	var commands []string
	cmd := &cobra.Command{
		Use:   "init DIR [-- COMMAND ARG...]",
		Short: "Start a job: DIR/mlops.env, DIR/job.yaml, a base with its skeleton, hydrated for kubectl apply -k",
		Long: `init writes a new job's folder, DIR (new or empty):
  mlops.env       your site and you, commented: uid/gid, workers, CPU, memory, NFS
  job.yaml        the job spec: its name, jobKind, image and command
  base/           the job's skeleton, named like the job (the hydrated patches fill it in)
and hydrates it (mlops-fn hydrate DIR), so that kubectl apply -k DIR runs it.
Without --image the job is an example that runs as it is on any cluster with
the kind's operator (a Pod needs none):
` + kinds.All.Column(func(k jobkind.Facts) string { return k.Demo.About }) + `Edit job.yaml and mlops.env, then run mlops-fn hydrate DIR again.`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch dash := cmd.ArgsLenAtDash(); {
			case dash >= 0 && (dash != 1 || len(args) == 1):
				return fmt.Errorf("init takes one folder, then optionally -- and the training command (init DIR -- python train.py), got %d arguments before -- and %d after", dash, len(args)-dash)
			case dash < 0 && len(args) != 1:
				return fmt.Errorf("init takes one folder (the new job's), got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			var err error
			if o.Command, err = commandOf(commands, args[1:]); err != nil {
				return fail(cmd, err)
			}
			o.JobKind, o.Dir = jobkind.JobKind(jobKind), dir
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
				krm.Report(cmd.ErrOrStderr(), movedTo(ov.Warnings, staged, dir))
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
	cmd.Flags().StringVar(&jobKind, "kind", string(kinds.All.Default()),
		"the kind the job becomes: "+kinds.All.Sentence("or", jobkind.Facts.Described))
	cmd.Flags().StringVar(&o.Name, "name", "", "the job's name (default: DIR's name)")
	cmd.Flags().StringVar(&o.Image, "image", "", "the training image (default: the operator's example)")
	cmd.Flags().StringArrayVar(&commands, "command", nil,
		"the training command: once, comma-separated (python,train.py); or once per argument; or after -- (default: the example's)")
	return cmd
}

// commandOf is the training command given to init: after -- as it is; in --command flags, one argument each
// when repeated; in a single --command, split at its commas outside quotes and brackets (python,-c,print(1,2)
// is three arguments), a field in double quotes unquoted.
func commandOf(flags, afterDash []string) ([]string, error) {
	switch {
	case len(afterDash) > 0 && len(flags) > 0:
		return nil, fmt.Errorf("--command %s and a command after -- (%s): accepted: one of them", strings.Join(flags, " --command "), strings.Join(afterDash, " "))
	case len(afterDash) > 0:
		return afterDash, nil
	case len(flags) != 1 || !utf8.ValidString(flags[0]):
		return flags, nil // not UTF-8: scaffold.Files refuses it, as it is
	}
	var out []string
	var field strings.Builder
	var quote rune
	depth := 0
	for _, r := range flags[0] {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '"' || r == '\'':
			quote = r
		case strings.ContainsRune("([{", r):
			depth++
		case strings.ContainsRune(")]}", r):
			depth--
		case r == ',' && depth == 0:
			out = append(out, unquote(field.String()))
			field.Reset()
			continue
		}
		field.WriteRune(r)
	}
	if quote != 0 || depth != 0 {
		return nil, fmt.Errorf("--command %q: an unclosed quote or bracket, so its commas cannot be told apart; accepted: --command once per argument (--command python --command -c --command 'print(1,2)'), or the command after -- (mlops-fn init DIR -- python -c 'print(1,2)')", flags[0])
	}
	if s := field.String(); s != "" || len(out) > 0 {
		out = append(out, unquote(s))
	}
	return out, nil
}

// unquote strips the double quotes around a whole field, as CSV does (the form --command took before).
func unquote(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return strings.ReplaceAll(s[1:len(s)-1], `""`, `"`)
	}
	return s
}

// movedTo are results about files in the folder init stages its files in, about the same files in dir, where
// they will be: the staged folder is a temporary name.
func movedTo(results framework.Results, staged, dir string) framework.Results {
	return scaffold.Renamed(results, func(s string) string { return strings.ReplaceAll(s, staged, filepath.Clean(dir)) })
}
