// SPDX-License-Identifier: Apache-2.0

package hydrate

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/mlops-fn/mlops-fn/pkg/jobspec"
	"github.com/mlops-fn/mlops-fn/pkg/processor"
)

// check is hydrate's invariant: the overlay, built as kubectl builds it, equals mlops-fn run in process as the
// last transformer of the same kustomization (fn/runners_test.go runs the binary under kustomize).
//
// kustomize hands a transformer the names namePrefix and nameSuffix replaced in an annotation, which a build
// in process drops. So the build without the component first marks each base object with its name (a patch
// before the user's, run before namespace:, namePrefix: and nameSuffix:); the mark becomes that annotation.
func (r *rendering) check() error {
	// The kustomization is written back in the user's form, only when hydrate's entries changed.
	k, err := r.k.String()
	if err != nil {
		return err
	}
	text := []byte(r.form.apply(k))
	if !bytes.Equal(r.oldText, text) {
		r.out.Kustomization = text
	}
	// The build and the function's run share nothing they write (the function's merge reads no kyaml global):
	// side by side, hydrate takes about as long as the build alone (make bench).
	var hydrated []*yaml.RNode
	built := make(chan struct{})
	go func() {
		defer close(built)
		hydrated, err = stagedBuild(r.out.dir, map[string][]byte{filepath.Base(r.kname): text}, r.out.replaced())
	}()
	function, fnErr := r.runFunctionLast()
	<-built
	if err != nil {
		return fmt.Errorf("%s: the hydrated overlay does not build: %w", r.o.Dir, err)
	}
	diffs, err := r.againstFunction(function, fnErr, hydrated)
	if err != nil {
		if missing := missingPath.FindStringSubmatch(err.Error()); missing != nil {
			// A JSON patch of a field only the component sets: the function's run fails on it; without it, the
			// run says what the patch changes.
			if diffs, _ := r.withoutPatchesOf(missing[1], hydrated); len(diffs) > 0 {
				return r.contradiction(diffs, "; mlops-fn run after it as a kustomize transformer never sees the job, as kustomize refuses the patch first: "+missing[0])
			}
		}
		return err
	}
	if len(diffs) > 0 {
		return r.contradiction(diffs, "")
	}
	r.out.built = hydrated
	return nil
}

// againstFunction is how hydrated differs from function, the function's output as the last transformer, or err.
func (r *rendering) againstFunction(function []*yaml.RNode, err error, hydrated []*yaml.RNode) ([]objectDiff, error) {
	if err != nil {
		return nil, fmt.Errorf("%s: mlops-fn as a kustomize transformer on this kustomization fails, so hydrate writes nothing: %w", r.o.Dir, err)
	}
	unhashed, err := unhashedEnv(function, hydrated)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.o.Dir, err)
	}
	return differences(function, unhashed)
}

// missingPath is kustomize's refusal of a JSON patch operation on a path the object lacks.
var missingPath = regexp.MustCompile(`[a-z]+ operation does not apply: doc is missing path: (/[^:\s]*)(: missing value)?`)

// withoutPatchesOf is againstFunction on the kustomization without its JSON patches with an operation on path.
func (r *rendering) withoutPatchesOf(path string, hydrated []*yaml.RNode) ([]objectDiff, error) {
	k := r.k
	defer func() { r.k = k }()
	r.k = k.Copy()
	dropped := false
	for _, field := range []string{"patches", "patchesJson6902"} {
		if list := r.k.Field(field); list != nil {
			list.Value.YNode().Content = slices.DeleteFunc(list.Value.YNode().Content, func(n *yaml.Node) bool {
				drop := r.operatesOn(yaml.NewRNode(n), path)
				dropped = dropped || drop
				return drop
			})
		}
	}
	if !dropped {
		return nil, nil
	}
	function, err := r.runFunctionLast()
	return r.againstFunction(function, err, hydrated)
}

// operatesOn: the patch entry is a JSON patch with an operation on path.
func (r *rendering) operatesOn(entry *yaml.RNode, path string) bool {
	text, _ := entry.GetString("patch")
	if file, _ := entry.GetString("path"); file != "" {
		data, err := os.ReadFile(filepath.Join(r.o.Dir, file))
		if err != nil {
			return false
		}
		text = string(data)
	}
	ops, err := yaml.Parse(text)
	return err == nil && ops.YNode().Kind == yaml.SequenceNode && slices.ContainsFunc(ops.YNode().Content, func(op *yaml.Node) bool {
		p, _ := yaml.NewRNode(op).GetString("path")
		return op.Kind == yaml.MappingNode && p == path
	})
}

// nameMark holds an object's name before the build, for the function's check.
const nameMark = "mlops-fn.dev/check-name-before-build"

// runFunctionLast runs the function on the kustomization's build without the component.
func (r *rendering) runFunctionLast() ([]*yaml.RNode, error) {
	withFn, err := withoutEntries(r.k, r.e, false)
	if err != nil {
		return nil, err
	}
	items, err := r.functionInput(withFn)
	if err != nil {
		return nil, err
	}
	// The spec as parsed, unchanged by the steps before.
	config, err := jobspec.Parse(r.configPath, r.specText)
	if err != nil {
		return nil, err
	}
	key := func(n *yaml.RNode) string { return n.GetKind() + " " + n.GetNamespace() + "/" + n.GetName() }
	input := map[string]bool{}
	for _, it := range items {
		input[key(it)] = true
	}
	rl := &framework.ResourceList{Items: items, FunctionConfig: config}
	if err := r.p.Process(rl); err != nil {
		// Each error of the function's results on a line of its own, as the function prints them.
		results, ok := err.(framework.Results)
		if !ok || results.ExitCode() == 0 {
			return nil, err
		}
		var lines []string
		for _, res := range results {
			if res.Severity == framework.Error {
				lines = append(lines, res.Message)
			}
		}
		return nil, errors.New("\n" + strings.Join(lines, "\n"))
	}
	// hydrate's warnings are the function's, on the job it patched.
	r.out.Warnings = rl.Results
	// The user's fields that act after the component act after the function.
	fields, err := kustomizationOf(r.k)
	if err != nil {
		return nil, err
	}
	// What kustomize drops from a transformer's output.
	//nolint:staticcheck // the runners' legacy annotations too
	drop := []string{processor.PreviousNamesAnnotation, kioutil.PathAnnotation, kioutil.LegacyPathAnnotation,
		kioutil.IndexAnnotation, kioutil.LegacyIndexAnnotation, kioutil.IdAnnotation, kioutil.LegacyIdAnnotation}
	var made []*yaml.RNode
	for _, it := range rl.Items {
		for _, a := range drop {
			if _, err := it.Pipe(yaml.ClearAnnotation(a)); err != nil {
				return nil, err
			}
		}
		if err := yaml.ClearEmptyAnnotations(it); err != nil {
			return nil, err
		}
		if !input[key(it)] {
			made = append(made, it)
		}
	}
	if err := applyUsersFields(fields, rl.Items, made); err != nil {
		return nil, fmt.Errorf("%s: applying its own fields to mlops-fn's output: %w", r.kname, err)
	}
	return rl.Items, nil
}

// functionInput is what kustomize hands the function listed last in withFn, the kustomization without the
// component: without fields that act after the component (the quickstarts), the base buildBase built.
func (r *rendering) functionInput(withFn *yaml.RNode) ([]*yaml.RNode, error) {
	text, err := withFn.String()
	if err != nil {
		return nil, err
	}
	if text == r.preText {
		items := make([]*yaml.RNode, len(r.base))
		for i, it := range r.base {
			items[i] = it.Copy()
		}
		return items, nil
	}
	if err := markNames(withFn, r.base); err != nil {
		return nil, err
	}
	if text, err = withFn.String(); err != nil {
		return nil, err
	}
	items, err := stagedBuild(r.out.dir, map[string][]byte{filepath.Base(r.kname): []byte(text)}, r.out.folders)
	if err != nil {
		return nil, err
	}
	for _, it := range items {
		before, ok := it.GetAnnotations()[nameMark]
		if !ok {
			continue
		}
		if _, err := it.Pipe(yaml.ClearAnnotation(nameMark)); err != nil {
			return nil, err
		}
		if before != it.GetName() {
			if err := it.PipeE(yaml.SetAnnotation(processor.PreviousNamesAnnotation, before)); err != nil {
				return nil, err
			}
		}
	}
	return items, nil
}

// markNames puts, before the kustomization's own patches, one that marks each base object with its name.
func markNames(k *yaml.RNode, base []*yaml.RNode) error {
	var marks []*yaml.Node
	for _, it := range base {
		target, err := targetOf(it)
		if err != nil {
			return err
		}
		p, err := yaml.FromMap(map[string]any{"apiVersion": it.GetApiVersion(), "kind": it.GetKind(),
			"metadata": map[string]any{"name": it.GetName(), "annotations": map[string]any{nameMark: it.GetName()}}})
		if err != nil {
			return err
		}
		entry, err := yaml.FromMap(map[string]any{"patch": strings.TrimSpace(p.MustString()), "target": target})
		if err != nil {
			return err
		}
		marks = append(marks, entry.YNode())
	}
	if len(marks) == 0 {
		return nil
	}
	patches, err := listField(k, "patches")
	if err != nil {
		return err
	}
	patches.YNode().Content = append(marks, patches.YNode().Content...)
	return nil
}
