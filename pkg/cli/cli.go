// SPDX-License-Identifier: Apache-2.0

// Package cli is mlops-fn's command line: the KRM function on stdin/stdout, the standalone renderer, and the
// hydrate command that writes overlays.
package cli

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/mlops-fn/mlops-fn/internal/version"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/jobspec"
	"github.com/mlops-fn/mlops-fn/pkg/kinds"
	"github.com/mlops-fn/mlops-fn/pkg/krm"
	"github.com/mlops-fn/mlops-fn/pkg/processor"
)

// New builds the mlops-fn command. inputRead, when not nil, learns the size of a run's input once read: main
// decides what that means for the process (its garbage collection); a library sets nothing process-wide.
func New(inputRead func(bytes int)) *cobra.Command {
	if inputRead == nil {
		inputRead = func(int) {}
	}
	var verbose bool
	cmd := &cobra.Command{
		Use:     "mlops-fn [JOB.yaml [INPUT.yaml|- ...]]",
		Short:   "Render " + kinds.All.Sentence("and", func(k jobkind.Facts) string { return k.Kind }) + " manifests for distributed training from mlops.env and a job spec",
		Long:    krm.Help(),
		Args:    cobra.ArbitraryArgs,
		Version: version.String(),
		// The subcommands' too: cobra asks the root. A run reports its own errors, Execute cobra's.
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				if f, ok := cmd.InOrStdin().(*os.File); ok && term.IsTerminal(int(f.Fd())) {
					// A runner pipes a ResourceList; a person at a prompt asks what this is.
					return cmd.Help()
				}
				return markReported(krm.Run(cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr(), inputRead))
			}
			if err := unknownCommand(cmd, args[0]); err != nil {
				return err
			}
			return runStandalone(args, verbose, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr(), inputRead)
		},
	}
	cmd.SuggestionsMinimumDistance = 2 // cobra's own, which SuggestionsFor leaves unset
	cmd.Flags().BoolVar(&verbose, "verbose", false, verboseUsage)
	cmd.SetVersionTemplate("{{.Version}}")
	cmd.SetFlagErrorFunc(flagError)
	cmd.AddCommand(newHydrate(), newInit(), newApply(), newDelete(), newStatus(), newLogs(), newVersion())
	return cmd
}

const verboseUsage = "warnings in their long form: Pod Security's says what the API server says of each pod"

// commandLike is a first argument that reads as a command, not a file.
var commandLike = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// unknownCommand refuses a first argument that is no file and reads as a command (a misspelt one), which
// would otherwise be opened as a job spec.
func unknownCommand(cmd *cobra.Command, first string) error {
	if _, err := os.Stat(first); !commandLike.MatchString(first) || !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	hint := ""
	if s := cmd.SuggestionsFor(first); len(s) > 0 {
		hint = "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return fmt.Errorf("unknown command %s%s; accepted: a command (%s), or a job spec's file: mlops-fn JOB.yaml", first, hint, strings.Join(names, ", "))
}

// runStandalone renders `mlops-fn job.yaml [inputs]` to plain YAML. Nothing reaches stdout unless the whole
// run succeeds.
func runStandalone(args []string, verbose bool, in io.Reader, out, stderr io.Writer, inputRead func(int)) error {
	configFile := args[0]
	config, err := jobspec.Read(configFile)
	if err != nil {
		return reportError(stderr, err)
	}
	// Read every input first: their size decides how the run collects garbage.
	data := make([][]byte, len(args)-1)
	size := 0
	for i, name := range args[1:] {
		if name == "-" {
			data[i], err = io.ReadAll(in)
		} else {
			data[i], err = os.ReadFile(name)
		}
		if err != nil {
			return reportError(stderr, err)
		}
		size += len(data[i])
	}
	inputRead(size)
	var inputs []*yaml.RNode
	for i, name := range args[1:] {
		nodes, err := parseInput(name, data[i])
		if err != nil {
			return reportError(stderr, err)
		}
		inputs = append(inputs, nodes...)
	}
	rl := &framework.ResourceList{FunctionConfig: config, Items: inputs}
	p := processor.Processor{ConfigDir: filepath.Dir(configFile), ConfigFile: configFile, Verbose: verbose}
	err = p.Process(rl)
	krm.Report(stderr, rl.Results)
	if err != nil {
		// Process returns its errors among the results.
		return markReported(err)
	}
	var buf bytes.Buffer
	//nolint:staticcheck // runners still write the legacy annotations: plain YAML drops them too
	w := kio.ByteWriter{Writer: &buf, ClearAnnotations: []string{
		kioutil.PathAnnotation, kioutil.LegacyPathAnnotation, kioutil.IndexAnnotation,
		kioutil.LegacyIndexAnnotation, kioutil.IdAnnotation, kioutil.LegacyIdAnnotation,
		kioutil.SeqIndentAnnotation,
	}}
	if err := w.Write(rl.Items); err != nil {
		return reportError(stderr, err)
	}
	if _, err := out.Write(buf.Bytes()); err != nil {
		return reportError(stderr, err)
	}
	return nil
}

// parseInput reads the objects of one input: plain Kubernetes objects only.
func parseInput(name string, data []byte) ([]*yaml.RNode, error) {
	r := &kio.ByteReader{Reader: bytes.NewReader(data), OmitReaderAnnotations: true}
	nodes, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if r.WrappingKind != "" {
		return nil, fmt.Errorf("%s is a %s; accepted: plain objects (pipe a ResourceList to mlops-fn on stdin instead)", name, r.WrappingKind)
	}
	// Messages about an input object name its file; the writer drops the annotation.
	for i, n := range nodes {
		if n.YNode().Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s: document %d is a YAML %s; accepted: Kubernetes objects (YAML maps)", name, i+1, jobspec.NodeKind(n))
		}
		// Expanded here already, so the metadata is checked as kustomize reads it.
		if n, err = processor.ExpandAliases(n); err == nil {
			err = processor.CheckMetadata(n)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", name, i+1, err)
		}
		nodes[i] = n
		if err := n.PipeE(yaml.SetAnnotation(kioutil.PathAnnotation, name)); err != nil {
			return nil, err
		}
	}
	return nodes, nil
}

// reportError writes an error that is not a result to w, a line per line, and returns it marked reported.
func reportError(w io.Writer, err error) error {
	return markReported(krm.ReportError(w, err))
}

// Execute runs the command line and makes sure every error reaches stderr exactly once. A run reports its own
// errors (reportError, fail) and marks them as reported; any other error is cobra rejecting the command line
// (a flag, an argument, a subcommand), which gets one line naming the command and pointing to its --help.
func Execute(cmd *cobra.Command) error {
	failed, err := cmd.ExecuteC()
	if err != nil && !errors.As(err, new(*reported)) {
		failed = cmp.Or(failed, cmd)
		path := failed.CommandPath()
		fmt.Fprintf(failed.ErrOrStderr(), "%s: error: %s; see `%s --help`\n", path, strings.Join(strings.Fields(err.Error()), " "), path)
	}
	return err
}

// reported marks an error that is already on stderr.
type reported struct{ err error }

func (r *reported) Error() string { return r.err.Error() }
func (r *reported) Unwrap() error { return r.err }

func markReported(err error) error {
	if err == nil {
		return nil
	}
	return &reported{err}
}

// flagError rewrites pflag's parse errors to say what was wrong and which flags the command accepts.
func flagError(cmd *cobra.Command, err error) error {
	var (
		notExist      *pflag.NotExistError
		valueRequired *pflag.ValueRequiredError
		invalidValue  *pflag.InvalidValueError
	)
	switch {
	case errors.As(err, &notExist):
		name := "--" + notExist.GetSpecifiedName()
		if short := notExist.GetSpecifiedShortnames(); short == notExist.GetSpecifiedName() {
			name = "-" + short
		} else if short != "" {
			name = fmt.Sprintf("-%s (in -%s)", notExist.GetSpecifiedName(), short)
		}
		return fmt.Errorf("unknown flag %s%s; accepted flags: %s", name, elsewhere(cmd, notExist.GetSpecifiedName()), acceptedFlags(cmd))
	case errors.As(err, &valueRequired):
		f := valueRequired.GetFlag()
		return fmt.Errorf("flag --%s needs a value: %s", f.Name, f.Usage)
	case errors.As(err, &invalidValue):
		f := invalidValue.GetFlag()
		if f.Value.Type() == "bool" {
			return fmt.Errorf("flag --%s=%s is not a boolean; accepted: --%s, --%s=true or --%s=false", f.Name, invalidValue.GetValue(), f.Name, f.Name, f.Name)
		}
		return fmt.Errorf("flag --%s=%s: %v; accepted: %s", f.Name, invalidValue.GetValue(), errors.Unwrap(invalidValue), f.Usage)
	}
	return fmt.Errorf("%w; accepted flags: %s", err, acceptedFlags(cmd))
}

// acceptedFlags lists the flags cmd takes, help included.
func acceptedFlags(cmd *cobra.Command) string {
	var names []string
	add := func(f *pflag.Flag) {
		switch {
		case f.Hidden:
		case f.Shorthand != "":
			names = append(names, "-"+f.Shorthand+"/--"+f.Name)
		default:
			names = append(names, "--"+f.Name)
		}
	}
	cmd.LocalFlags().VisitAll(add)
	cmd.InheritedFlags().VisitAll(add)
	return strings.Join(names, ", ")
}

// elsewhere names the subcommands that define a flag cmd does not know.
func elsewhere(cmd *cobra.Command, name string) string {
	var owners []string
	for _, sub := range cmd.Commands() {
		if sub.Flags().Lookup(name) != nil || (len(name) == 1 && sub.Flags().ShorthandLookup(name) != nil) {
			owners = append(owners, "`"+sub.CommandPath()+"`")
		}
	}
	if len(owners) == 0 {
		return ""
	}
	return " (a flag of " + strings.Join(owners, ", ") + ")"
}

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
