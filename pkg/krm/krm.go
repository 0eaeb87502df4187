// SPDX-License-Identifier: Apache-2.0

// Package krm runs mlops-fn as a KRM function: a ResourceList on stdin, one on stdout, errors and warnings on stderr.
// It is all the container image runs (../../krm), linking no kustomize build nor cobra, and pkg/cli's argless run.
package krm

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	k8syaml "sigs.k8s.io/yaml"

	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/jobspec"
	"github.com/mlops-fn/mlops-fn/pkg/processor"
)

// Run is the KRM function protocol: on failure the items go back unchanged with the results, as kpt expects, and
// every error, those returned too, goes to stderr, since kustomize drops results. inputRead learns the input's size.
func Run(in io.Reader, out, stderr io.Writer, inputRead func(int)) error {
	input, err := io.ReadAll(in)
	if err != nil {
		return ReportError(stderr, fmt.Errorf("reading the ResourceList: %w", err))
	}
	inputRead(len(input))
	var written bytes.Buffer
	rw := &kio.ByteReadWriter{Reader: bytes.NewReader(input), Writer: &written, KeepReaderAnnotations: true}
	p := &checked{rw: rw, input: input}
	err = framework.Execute(p, rw)
	switch refused, ok := errors.AsType[*notResourceList](err); {
	case ok:
		_, _ = out.Write(input) // the input back unchanged, as on any failure
		return ReportError(stderr, refused.err)
	case err != nil && !p.ran:
		// kyaml could not read it: say what is wrong, as precisely as we can.
		_, _ = out.Write(input)
		return ReportError(stderr, cmp.Or(isResourceList(input), explainUnreadable(input, err)))
	}
	if _, werr := out.Write(written.Bytes()); werr != nil && err == nil {
		err = werr
	}
	Report(stderr, p.results)
	if err != nil && p.results.ExitCode() == 0 {
		// Not one of the results just reported: writing failed.
		return ReportError(stderr, err)
	}
	return err
}

// checked processes what kyaml read, once it is known to be a ResourceList of objects: kyaml would pass any
// other YAML through, exit 0. The check needs no second parse of the input.
type checked struct {
	rw      *kio.ByteReadWriter
	results framework.Results
	ran     bool
	input   []byte
}

// notResourceList is the input refused before any processing.
type notResourceList struct{ err error }

func (e *notResourceList) Error() string { return e.err.Error() }

func (c *checked) Process(rl *framework.ResourceList) error {
	c.ran = true
	if c.rw.WrappingKind != kio.ResourceListKind {
		kind := c.rw.WrappingKind
		if kind == "" && len(rl.Items) > 0 {
			kind = rl.Items[0].GetKind()
		}
		if kind == kio.ResourceListKind && len(rl.Items) == 1 {
			// kyaml unwraps a ResourceList only when it has either field.
			return &notResourceList{errors.New("standard input holds a ResourceList with neither items nor functionConfig, so no job spec; accepted: a ResourceList whose functionConfig is the MLOpsJob (apiVersion mlops-fn.dev/v1alpha1) and whose items are the objects to patch, as kustomize and kpt send it")}
		}
		if kind == kio.ResourceListKind {
			// kyaml unwraps a ResourceList only when it is the one document.
			return &notResourceList{fmt.Errorf("standard input holds %d YAML documents, the first a ResourceList; accepted: one ResourceList alone, as kustomize and kpt send it (its items hold the objects)", len(rl.Items))}
		}
		return &notResourceList{notAResourceList(kind)}
	}
	if len(rl.Items) == 0 {
		// kyaml reads no items from items that are a scalar: the objects meant would be dropped silently.
		if err := itemsShape(c.input); err != nil {
			return &notResourceList{err}
		}
	}
	for i, it := range rl.Items {
		if it.YNode().Kind != yaml.MappingNode {
			return &notResourceList{notAnObject(i, describeNode(it))}
		}
	}
	err := processor.Processor{}.Process(rl)
	c.results = rl.Results
	return err
}

func notAResourceList(kind string) error {
	what := "no kind"
	if kind != "" {
		what = jobkind.WithArticle(kind)
	}
	return fmt.Errorf("standard input holds %s, not a ResourceList: with no arguments mlops-fn is a KRM function and reads the ResourceList kustomize and kpt send; accepted: a ResourceList on stdin, or mlops-fn JOB.yaml [INPUT.yaml ...] for a job spec file", what)
}

// itemsShape refuses a ResourceList whose items is not a list (a map, a scalar), naming what it is.
func itemsShape(input []byte) error {
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(input)).Decode(&doc); err != nil || len(doc.Content) == 0 {
		return nil // kyaml read it: what it says stands
	}
	items := yaml.NewRNode(doc.Content[0]).Field("items")
	if items == nil || yaml.IsMissingOrNull(items.Value) || items.Value.YNode().Kind == yaml.SequenceNode {
		return nil
	}
	what := "a YAML " + jobspec.NodeKind(items.Value)
	if items.Value.YNode().Kind == yaml.ScalarNode {
		what = fmt.Sprintf("the YAML scalar %q", items.Value.YNode().Value)
	}
	return fmt.Errorf("the ResourceList's items is %s, not a list; accepted: items: a list of Kubernetes objects (YAML maps), or none", what)
}

func notAnObject(i int, what string) error {
	return fmt.Errorf("the ResourceList's item %d is %s, not an object; accepted: Kubernetes objects (YAML maps)", i+1, what)
}

// isResourceList refuses stdin kyaml failed on that is no ResourceList or has items that are no objects.
func isResourceList(input []byte) error {
	var doc struct {
		Kind  string `json:"kind"`
		Items []any  `json:"items"`
	}
	if err := k8syaml.Unmarshal(input, &doc); err != nil {
		// encoding/json decodes the kind beside items of another type.
		if doc.Kind == kio.ResourceListKind {
			return itemsShape(input) // a map: kyaml took its keys and values for items
		}
		return nil // kyaml's reader says what is wrong
	}
	if doc.Kind != kio.ResourceListKind {
		return notAResourceList(doc.Kind)
	}
	for i, it := range doc.Items {
		if _, ok := it.(map[string]any); !ok {
			return notAnObject(i, describeValue(it))
		}
	}
	return nil
}

func describeValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case []any:
		return "a list"
	case string:
		return fmt.Sprintf("the string %q", v)
	}
	return fmt.Sprint(v)
}

// describeNode says what a YAML node that is no map is, as describeValue.
func describeNode(n *yaml.RNode) string {
	y := n.YNode()
	switch {
	case y.Kind == yaml.SequenceNode:
		return "a list"
	case y.Tag == yaml.NodeTagNull:
		return "null"
	case y.Tag == yaml.NodeTagString:
		return fmt.Sprintf("the string %q", y.Value)
	}
	return y.Value
}

// explainUnreadable names the item whose malformed metadata kyaml's reader failed on (it shows the node).
func explainUnreadable(input []byte, err error) error {
	items, rerr := (&kio.ByteReader{Reader: bytes.NewReader(input), OmitReaderAnnotations: true}).Read()
	if rerr != nil {
		return err
	}
	for i, it := range items {
		if merr := processor.CheckMetadata(it); merr != nil {
			return fmt.Errorf("the ResourceList's item %d: %w", i+1, merr)
		}
	}
	return err
}

// ReportError writes an error that is not a result, a line of stderr per line, and returns it.
func ReportError(w io.Writer, err error) error {
	Report(w, framework.Results{{Severity: framework.Error, Message: err.Error()}})
	return err
}

// Report writes errors and warnings to stderr, one per line.
func Report(w io.Writer, results framework.Results) {
	for _, r := range results {
		for _, line := range strings.Split(strings.TrimSpace(r.Message), "\n") {
			if line = strings.TrimSpace(line); line != "" {
				fmt.Fprintf(w, "mlops-fn: %s: %s\n", r.Severity, line)
			}
		}
	}
}

// smallInput is the size below which a run keeps all its garbage: the heap stays a few tens of MB, and
// collecting it cost half a quickstart run's time.
const smallInput = 1 << 20

// CollectGarbageOnlyIfLarge turns the collector off for small inputs, a memory limit turning it back on under
// pressure. Only a program's main passes it to Run (or to cli.New): the tests, which run in process, do not.
func CollectGarbageOnlyIfLarge(inputBytes int) {
	if inputBytes < smallInput {
		debug.SetGCPercent(-1)
		debug.SetMemoryLimit(512 << 20)
	}
}
