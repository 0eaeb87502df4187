// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/mlops-fn/mlops-fn/pkg/cli"
	"github.com/mlops-fn/mlops-fn/pkg/jobspec"
	"github.com/mlops-fn/mlops-fn/pkg/processor"
)

// runResourceList runs the function as kustomize and kpt do: a ResourceList on
// stdin, in the case's folder (exec functions run in the kustomization root).
func runResourceList(t *testing.T, dir string, items []*yaml.RNode, config *yaml.RNode) (*yaml.RNode, string, error) {
	t.Helper()
	var in bytes.Buffer
	if err := (kio.ByteWriter{Writer: &in, WrappingKind: kio.ResourceListKind, WrappingAPIVersion: kio.ResourceListAPIVersion, FunctionConfig: config}).Write(items); err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = os.Chdir(wd) }()
	var stdout, stderr bytes.Buffer
	cmd := cli.New(nil)
	cmd.SetArgs([]string{}) // not nil: cobra would read the test binary's own flags
	cmd.SetIn(&in)
	cmd.SetOut(&stdout)
	cmd.SetErr(&stderr)
	err := cmd.Execute()
	out, perr := yaml.Parse(stdout.String())
	if perr != nil {
		t.Fatalf("stdout is no ResourceList: %v\n%s", perr, stdout.String())
	}
	return out, stderr.String(), err
}

func readNodes(t *testing.T, path string) []*yaml.RNode {
	t.Helper()
	nodes, err := tryReadNodes(path)
	if err != nil {
		t.Fatal(err)
	}
	return nodes
}

// tryReadNodes reads the objects of a file; no file is no objects.
func tryReadNodes(path string) ([]*yaml.RNode, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	r := &kio.ByteReader{Reader: bytes.NewReader(data), OmitReaderAnnotations: true}
	nodes, err := r.Read()
	if err == nil && r.WrappingKind != "" {
		err = fmt.Errorf("a %s, not plain objects", r.WrappingKind)
	}
	for _, n := range nodes {
		if err == nil && n.YNode().Kind != yaml.MappingNode {
			err = fmt.Errorf("a document is not a YAML map")
		}
	}
	return nodes, err
}

// plain strips the runners' bookkeeping so objects compare by content.
func plain(t *testing.T, nodes []*yaml.RNode) []string {
	t.Helper()
	var out []string
	for _, n := range nodes {
		n = n.Copy()
		//nolint:staticcheck // the runners still write the legacy annotations
		for _, a := range []string{kioutil.PathAnnotation, kioutil.LegacyPathAnnotation, kioutil.IndexAnnotation, kioutil.LegacyIndexAnnotation, kioutil.IdAnnotation, kioutil.LegacyIdAnnotation} {
			if _, err := n.Pipe(yaml.ClearAnnotation(a)); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, n.MustString())
	}
	return out
}

// TestResourceListMatchesStandalone: every golden case gives the same objects
// through the KRM protocol as standalone; a failing case returns its input
// items unchanged with error results, and says why on stderr.
func TestResourceListMatchesStandalone(t *testing.T) {
	cases, _ := filepath.Glob("../testdata/*/job.yaml")
	for _, job := range cases {
		dir := filepath.Dir(job)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			// What does not parse never reaches a function through kustomize or kpt.
			config, err := jobspec.Read(job)
			if err != nil {
				t.Skipf("the job spec does not parse, so no runner would call the function: %v", err)
			}
			items, err := tryReadNodes(filepath.Join(dir, "input.yaml"))
			if err != nil {
				t.Skipf("input.yaml does not parse, so no runner would call the function: %v", err)
			}
			for _, it := range items {
				// kyaml's own ResourceList writer indexes metadata as a map (and panics otherwise).
				if err := processor.CheckMetadata(it); err != nil {
					t.Skipf("an input's metadata is not a map, so no runner can build the ResourceList: %v", err)
				}
			}
			rl, stderr, runErr := runResourceList(t, dir, items, config)
			gotItems, _ := rl.Pipe(yaml.Lookup("items"))
			var got []*yaml.RNode
			if gotItems != nil {
				got, _ = gotItems.Elements()
			}
			expected := readNodes(t, filepath.Join(dir, "expected.yaml"))
			if expected == nil {
				if runErr == nil {
					t.Fatal("an error case succeeded through the ResourceList")
				}
				if diff := cmp.Diff(plain(t, items), plain(t, got)); diff != "" {
					t.Errorf("a failing run changed its items (-input +output):\n%s", diff)
				}
				results, _ := rl.Pipe(yaml.Lookup("results"))
				if results == nil || !strings.Contains(results.MustString(), "severity: error") {
					t.Errorf("no error results in the ResourceList:\n%s", rl.MustString())
				}
				if !strings.Contains(stderr, "mlops-fn: error: ") {
					t.Errorf("stderr does not say what failed: %q", stderr)
				}
				return
			}
			if runErr != nil {
				t.Fatalf("failed: %v\n%s", runErr, stderr)
			}
			if diff := cmp.Diff(plain(t, expected), plain(t, got)); diff != "" {
				t.Errorf("ResourceList output differs from expected.yaml (-standalone +resourcelist):\n%s", diff)
			}
		})
	}
}

// TestKptfileAndLocalConfigPassThrough: kpt passes the Kptfile and the job
// spec itself in as items; they come out byte for byte, comments included.
func TestKptfileAndLocalConfigPassThrough(t *testing.T) {
	dir := "../testdata/multi-node-nonroot"
	config, err := yaml.ReadFile(filepath.Join(dir, "job.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	kptfile := yaml.MustParse("# the package\napiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: training # keep me\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\npipeline:\n  mutators:\n  - exec: mlops-fn\n    configPath: job.yaml\n")
	spec := config.Copy()
	rl, stderr, err := runResourceList(t, dir, []*yaml.RNode{kptfile.Copy(), spec}, config)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	items, _ := rl.Pipe(yaml.Lookup("items"))
	got, _ := items.Elements()
	if len(got) != 4 {
		t.Fatalf("want Kptfile, job spec, MPIJob, ConfigMap; got %d items", len(got))
	}
	if diff := cmp.Diff(plain(t, []*yaml.RNode{kptfile, config}), plain(t, got[:2])); diff != "" {
		t.Errorf("pass-through items changed (-in +out):\n%s", diff)
	}
	if kinds := got[2].GetKind() + "," + got[3].GetKind(); kinds != "MPIJob,ConfigMap" {
		t.Errorf("generated kinds: %s", kinds)
	}
}
