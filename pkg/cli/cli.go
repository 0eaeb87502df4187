// SPDX-License-Identifier: Apache-2.0

// Package cli is mlops-fn's command line: the KRM function on stdin/stdout, the standalone renderer, and the
// hydrate command that writes overlays.
package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
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

// New builds the mlops-fn command. inputRead, when not nil, learns the size of a run's input once it is read:
// the program's main decides what that means for the process (its garbage collection); a library sets nothing
// process-wide.
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
				if isTerminal(cmd.InOrStdin()) {
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
	cmd.Flags().BoolVar(&verbose, "verbose", false, "warnings in their long form: Pod Security's says what the API server says of each pod")
	cmd.SetVersionTemplate("{{.Version}}")
	cmd.SetFlagErrorFunc(flagError)
	cmd.AddCommand(newHydrate(), newInit(), newApply(), newDelete(), newStatus(), newLogs(), newVersion())
	return cmd
}

// isTerminal: r is a terminal, where nobody types a ResourceList.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// commandLike is a first argument that reads as a command, not a file.
var commandLike = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// unknownCommand refuses a first argument that is no file and reads as a command (a misspelt one), which
// would otherwise be opened as a job spec.
func unknownCommand(cmd *cobra.Command, first string) error {
	if !commandLike.MatchString(first) {
		return nil
	}
	if _, err := os.Stat(first); !errors.Is(err, fs.ErrNotExist) {
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
		n, err = processor.ExpandAliases(n)
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", name, i+1, err)
		}
		nodes[i] = n
		if err := processor.CheckMetadata(n); err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", name, i+1, err)
		}
		if err := n.PipeE(yaml.SetAnnotation(kioutil.PathAnnotation, name)); err != nil {
			return nil, err
		}
	}
	return nodes, nil
}

// reportError writes an error that is not a result, a line of stderr per line, and returns it marked as
// reported.
func reportError(w io.Writer, err error) error {
	return markReported(krm.ReportError(w, err))
}
