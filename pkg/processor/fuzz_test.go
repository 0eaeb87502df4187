// SPDX-License-Identifier: Apache-2.0

package processor

import (
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/mlops-fn/mlops-fn/pkg/jobspec"
	"github.com/mlops-fn/mlops-fn/pkg/kinds"
)

// fuzzJob is a valid job spec around the fuzzed mlops.env text.
func fuzzJob(envText, extra string) (*yaml.RNode, error) {
	spec := "apiVersion: mlops-fn.dev/v1alpha1\nkind: MLOpsJob\nmetadata:\n  name: bert\nspec:\n  image: docker.io/nlp/bert:1\n  command: [python, train.py]\n" + extra
	n, err := yaml.Parse(spec)
	if err != nil {
		return nil, err
	}
	return n, n.PipeE(yaml.Lookup("spec"), yaml.SetField("envFile", yaml.NewMapRNode(&map[string]string{"inline": envText})))
}

func parseItems(text string) ([]*yaml.RNode, error) {
	return (&kio.ByteReader{Reader: strings.NewReader(text), OmitReaderAnnotations: true}).Read()
}

func serialize(items []*yaml.RNode) string {
	var b strings.Builder
	for _, n := range items {
		b.WriteString(n.MustString())
		b.WriteString("---\n")
	}
	return b.String()
}

// FuzzProcess drives the whole processor with a fuzzed mlops.env, a fuzzed
// spec tail and fuzzed input items. It must never panic; a failure changes no
// item; a success leaves every item it does not own byte-identical (its YAML
// aliases expanded), parses, and is a fixed point: running again on the
// output changes nothing.
func FuzzProcess(f *testing.F) {
	f.Add("WORKERS=2\nUSER_ID=1000\nGROUP_ID=1000\n", "", "")
	f.Add("WORKERS=2\nNFS_SERVER=nfs\nNFS_PATH=/x\nNFS_MOUNT_PATH=/w\n", "  jobKind: Pod\n", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: bert\nspec:\n  containers:\n  - name: bert\n    args: [x]\n")
	f.Add("WORKERS=3\nGPUS_PER_WORKER=2\n", "  mpi: {implementation: Intel}\n", "# keep\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x # me\nspec: {replicas: 1}\n")
	f.Add("WORKERS=1\n", "", "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata:\n  name: bert\nspec:\n  mpiReplicaSpecs:\n    Worker:\n      template:\n        spec:\n          containers:\n          - name: w\n            env: [{name: A, value: b}]\n")
	f.Add("WORKERS=2\n", "  volumes: [{name: d, mountPath: /d, emptyDir: {}}]\n", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bert-mpijob-env\ndata:\n  WORKERS: \"4\"\n")
	f.Add("WORKERS=1\n", "  jobKind: Pod\n", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: bert\nspec:\n  containers:\n  - &c {name: bert, image: x}\n  - {<<: *c, name: log}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\ndata: {<<: {a: b}, c: d}\n")
	f.Fuzz(func(t *testing.T, envText, specTail, itemsText string) {
		config, err := fuzzJob(envText, specTail)
		if err != nil {
			return
		}
		items, err := parseItems(itemsText)
		if err != nil {
			return
		}
		before := serialize(items)
		rl := &framework.ResourceList{FunctionConfig: config.Copy(), Items: copyAll(items)}
		if err := (Processor{}).Process(rl); err != nil {
			if got := serialize(rl.Items); got != before {
				t.Fatalf("a failing run changed its items:\n%s\n---- was:\n%s", got, before)
			}
			return
		}
		out := serialize(rl.Items)
		if _, err := parseItems(out); err != nil {
			t.Fatalf("output does not parse: %v\n%s", err, out)
		}
		for _, in := range items {
			if owned(in) {
				continue
			}
			// Byte-identical, its YAML aliases expanded as kustomize reads them.
			want, err := ExpandAliases(in)
			if err != nil {
				t.Fatalf("the run succeeded on an item whose aliases do not expand: %v", err)
			}
			if !strings.Contains(out, want.MustString()) {
				t.Fatalf("an item the function does not own changed:\n%s\n---- output:\n%s", want.MustString(), out)
			}
		}
		again := &framework.ResourceList{FunctionConfig: config.Copy(), Items: copyAll(rl.Items)}
		if err := (Processor{}).Process(again); err != nil {
			t.Fatalf("running on its own output failed: %v\n%s", err, out)
		}
		if got := serialize(again.Items); got != out {
			t.Fatalf("not a fixed point:\n%s\n---- first run:\n%s", got, out)
		}
	})
}

// owned: the job's MPIJob/Pod and the ConfigMap may change; all else may not.
func owned(in *yaml.RNode) bool {
	if in.GetKind() == "ConfigMap" || kinds.All.Is(in.GetKind()) {
		return in.GetName() == "bert" || strings.HasPrefix(in.GetName(), "bert-") && strings.HasSuffix(in.GetName(), "-env") || len(in.GetLabels()) > 0
	}
	return false
}

func copyAll(items []*yaml.RNode) []*yaml.RNode {
	out := make([]*yaml.RNode, len(items))
	for i, n := range items {
		out[i] = n.Copy()
	}
	return out
}

// FuzzDecodeSpec: any YAML given as the job spec is read, defaulted and
// validated without a panic, and what validates renders.
func FuzzDecodeSpec(f *testing.F) {
	for _, seed := range []string{
		"apiVersion: mlops-fn.dev/v1alpha1\nkind: MLOpsJob\nmetadata: {name: a}\nspec: {image: x, command: [y]}\n",
		"apiVersion: mlops-fn.dev/v1alpha1\nkind: MLOpsJob\nmetadata: {name: a}\nspec: {workers: \"two\", mpi: {implemntation: x}}\n",
		"apiVersion: mlops-fn.dev/v1alpha1\nkind: MLOpsJob\nmetadata: {name: a}\nspec: {jobKind: Pod, image: x, volumes: [{name: v, mountPath: /v, emptyDir: {medium: Memory}}]}\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {job: nowhere.yaml}\n",
		"- a\n- b\n", "{}", "kind: MLOpsJob\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		config, err := yaml.Parse(text)
		if err != nil {
			return
		}
		job, errs := jobspec.Decode(config)
		if job == nil || len(errs) > 0 {
			if len(errs) == 0 {
				t.Fatal("no job and no error")
			}
			return
		}
		kinds.Default(job)
		if len(kinds.Validate(job)) > 0 {
			return
		}
		// Give it an mlops.env, so a valid spec goes all the way through.
		if err := config.PipeE(yaml.Lookup("spec"), yaml.SetField("envFile", yaml.NewMapRNode(&map[string]string{"inline": "WORKERS=2\n"}))); err != nil {
			return
		}
		rl := &framework.ResourceList{FunctionConfig: config}
		if err := (Processor{}).Process(rl); err == nil && len(rl.Items) != 2 {
			t.Fatalf("a valid spec rendered %d items: %s", len(rl.Items), itemIDs(rl.Items))
		}
	})
}
