// SPDX-License-Identifier: Apache-2.0

package processor

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// quickstartList is the input kustomize hands the function for the
// multi-node quickstart, with n unrelated ConfigMaps.
func quickstartList(b testing.TB, n int) (*yaml.RNode, []*yaml.RNode) {
	b.Helper()
	root := filepath.Join("..", "..", "quickstart")
	config, err := yaml.ReadFile(filepath.Join(root, "k8s/mlops/multi-node/job.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	skeleton, err := yaml.ReadFile(filepath.Join(root, "common/tensorflow/k8s/mlops/multi-node/mpijob.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	env, err := os.ReadFile(filepath.Join(root, "k8s/mlops/multi-node/mlops.env"))
	if err != nil {
		b.Fatal(err)
	}
	if err := config.PipeE(yaml.Lookup("spec"), yaml.SetField("envFile", yaml.NewMapRNode(&map[string]string{"inline": string(env)}))); err != nil {
		b.Fatal(err)
	}
	items := []*yaml.RNode{skeleton}
	for i := 0; i < n; i++ {
		items = append(items, yaml.MustParse(fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: unrelated-%d\ndata:\n  key: value\n", i)))
	}
	return config, items
}

func benchmarkProcess(b *testing.B, n int) {
	config, items := quickstartList(b, n)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		in := make([]*yaml.RNode, len(items))
		for j, it := range items {
			in[j] = it.Copy()
		}
		rl := &framework.ResourceList{FunctionConfig: config.Copy(), Items: in}
		if err := (Processor{}).Process(rl); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkProcessQuickstart(b *testing.B)     { benchmarkProcess(b, 0) }
func BenchmarkProcess10kPassThrough(b *testing.B) { benchmarkProcess(b, 10000) }
