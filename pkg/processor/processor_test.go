// SPDX-License-Identifier: Apache-2.0

package processor

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/mlops-fn/mlops-fn/pkg/env"
	"github.com/mlops-fn/mlops-fn/pkg/kinds"
)

const job = `apiVersion: mlops-fn.dev/v1alpha1
kind: MLOpsJob
metadata:
  name: bert
spec:
  image: docker.io/nlp/bert:1
  command: [python, train.py]
`

const envText = "WORKERS=2\nUSER_ID=1000\nGROUP_ID=1000\n"

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func itemIDs(items []*yaml.RNode) string {
	var k []string
	for _, n := range items {
		k = append(k, n.GetKind()+"/"+n.GetName())
	}
	return strings.Join(k, ",")
}

// TestConfigMapConfig: a ConfigMap config names the job spec; mlops.env is read next to it.
func TestConfigMapConfig(t *testing.T) {
	dir := writeFiles(t, map[string]string{"job.yaml": job, "mlops.env": envText})
	// A ConfigMap's data.job is relative to the working directory, where the
	// exec runners run the function: the test runs there too (t.Chdir, which
	// restores it and keeps the test from running in parallel).
	t.Chdir(filepath.Dir(dir))
	pointer := func(data string) *yaml.RNode {
		return yaml.MustParse("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: mlops-fn\ndata:\n" + data)
	}
	rl := &framework.ResourceList{FunctionConfig: pointer("  job: " + filepath.Base(dir) + "/job.yaml\n")}
	if err := (Processor{}).Process(rl); err != nil {
		t.Fatal(err)
	}
	if got := itemIDs(rl.Items); got != "MPIJob/bert,ConfigMap/bert-mpijob-env-78tkhct982" {
		t.Errorf("items: %s", got)
	}

	for _, c := range []struct{ data, want string }{
		{"  jobs: job.yaml\n", "ConfigMap/mlops-fn: data.jobs: unknown key; accepted: job, the path of the MLOpsJob file"},
		{"  other: x\n", "ConfigMap/mlops-fn: data.other: unknown key"},
		{"  job: \"\"\n", "ConfigMap/mlops-fn: data.job: Required value: the path of the MLOpsJob file, relative to the working directory"},
		{"  job: nowhere/job.yaml\n", "ConfigMap/mlops-fn: data.job: stat nowhere/job.yaml: no such file or directory (the working directory is "},
	} {
		rl := &framework.ResourceList{FunctionConfig: pointer(c.data)}
		err := (Processor{}).Process(rl)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("data %q: want an error containing %q, got %v", c.data, c.want, err)
		}
		if len(rl.Items) != 0 {
			t.Errorf("data %q: a failing run produced items", c.data)
		}
	}
}

// TestHashedConfigMapIsRefused: a configMapGenerator ConfigMap that kustomize
// will rename would leave the MPIJob's envFrom dangling.
func TestHashedConfigMapIsRefused(t *testing.T) {
	t.Parallel()
	cm := yaml.MustParse("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bert-mpijob-env\n  annotations:\n    internal.config.kubernetes.io/needsHashSuffix: enabled\ndata:\n  WORKERS: \"2\"\n")
	rl := &framework.ResourceList{FunctionConfig: yaml.MustParse(job), Items: []*yaml.RNode{cm}}
	err := (Processor{}).Process(rl)
	if err == nil || !strings.Contains(err.Error(), "disableNameSuffixHash: true") {
		t.Fatalf("want the disableNameSuffixHash error, got %v", err)
	}
	if len(rl.Items) != 1 || rl.Items[0].MustString() != cm.MustString() {
		t.Errorf("items changed on error: %s", itemIDs(rl.Items))
	}
	// The same ConfigMap without the hash is read as mlops.env.
	plain := yaml.MustParse("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bert-mpijob-env\ndata:\n  WORKERS: \"3\"\n")
	rl = &framework.ResourceList{FunctionConfig: yaml.MustParse(job), Items: []*yaml.RNode{plain}}
	if err := (Processor{}).Process(rl); err != nil {
		t.Fatal(err)
	}
	if got := itemIDs(rl.Items); got != "ConfigMap/bert-mpijob-env,MPIJob/bert" {
		t.Errorf("items: %s", got)
	}
	if r, _ := rl.Items[1].Pipe(yaml.Lookup("spec", "mpiReplicaSpecs", "Worker", "replicas")); r == nil || r.YNode().Value != "3" {
		t.Errorf("workers not taken from the ConfigMap: %v", r)
	}
}

// TestGeneratedObjectsAreFiledNextToTheConfig: kpt writes new objects where
// their path annotation says, beside the function config in the package.
func TestGeneratedObjectsAreFiledNextToTheConfig(t *testing.T) {
	t.Parallel()
	config := yaml.MustParse(job)
	if err := config.PipeE(yaml.SetAnnotation(kioutil.PathAnnotation, "jobs/job.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := config.PipeE(yaml.Lookup("spec"), yaml.SetField("envFile", yaml.MustParse("inline: |\n  WORKERS=2\n"))); err != nil {
		t.Fatal(err)
	}
	rl := &framework.ResourceList{FunctionConfig: config}
	if err := (Processor{}).Process(rl); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, n := range rl.Items {
		paths = append(paths, n.GetAnnotations()[kioutil.PathAnnotation])
	}
	if diff := cmp.Diff([]string{"jobs/mpijob_bert.yaml", "jobs/configmap_bert-mpijob-env-gb99dbcg8m.yaml"}, paths); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
}

// TestHugeEnvFileIsRefused: a 10 MB mlops.env would make a ConfigMap the API
// server refuses (1 MiB); the function says so instead of writing it.
func TestHugeEnvFileIsRefused(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("WORKERS=2\n")
	for i := 0; b.Len() < 10<<20; i++ {
		fmt.Fprintf(&b, "FILLER_%d=%s\n", i, strings.Repeat("x", 90))
	}
	dir := writeFiles(t, map[string]string{"job.yaml": job, "mlops.env": b.String()})
	config, err := yaml.ReadFile(filepath.Join(dir, "job.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rl := &framework.ResourceList{FunctionConfig: config}
	err = (Processor{ConfigDir: dir}).Process(rl)
	if err == nil || !strings.Contains(err.Error(), "the ConfigMap that carries them into the containers takes at most 1048576 (1 MiB)") {
		t.Fatalf("want the 1 MiB error, got %v", err)
	}
	if len(rl.Items) != 0 {
		t.Errorf("a refused run wrote %d items", len(rl.Items))
	}
}

// processWorkerPod runs the function with spec on an MPIJob named bert whose
// Worker pod spec is podSpec (YAML at the pod spec's indentation).
func processWorkerPod(t *testing.T, spec, podSpec string) error {
	t.Helper()
	dir := writeFiles(t, map[string]string{"job.yaml": spec, "mlops.env": envText})
	config, err := yaml.ReadFile(filepath.Join(dir, "job.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	target := yaml.MustParse("apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata:\n  name: bert\nspec:\n  mpiReplicaSpecs:\n    Worker:\n      template:\n        spec:\n" + podSpec)
	rl := &framework.ResourceList{FunctionConfig: config, Items: []*yaml.RNode{target}}
	return (Processor{ConfigDir: dir}).Process(rl)
}

// TestContainerNamesAreOnePerPod: a container and an init container share one
// name space in a pod; the patches, merging by name, would make one of two.
func TestContainerNamesAreOnePerPod(t *testing.T) {
	t.Parallel()
	err := processWorkerPod(t, job, `          initContainers:
          - name: bert
            image: busybox
          containers:
          - name: bert
            image: docker.io/nlp/bert:1
`)
	want := `MPIJob/bert: spec.mpiReplicaSpecs.Worker.template.spec.initContainers[0].name: Duplicate value: "bert": containers[0] of that pod has the name too`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("want %q, got %v", want, err)
	}
}

// TestUnknownFieldAtTheFilesIndex: the patches move the training container
// first; a misspelt field of it is reported at its index in the base.
func TestUnknownFieldAtTheFilesIndex(t *testing.T) {
	t.Parallel()
	err := processWorkerPod(t, job+"  containerName: bert\n", `          containers:
          - name: logger
            image: fluent/fluent-bit:3.2
          - name: bert
            image: docker.io/nlp/bert:1
            resourcez: {}
`)
	want := "MPIJob/bert: spec.mpiReplicaSpecs.Worker.template.spec.containers[1].resourcez: Invalid value: unknown field"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("want %q, got %v", want, err)
	}
}

// TestAliasesAreReadExpanded: a target whose Worker template is an alias of
// the Launcher's gets both patched as written out, and the caller's items
// stay as they were when the run fails.
func TestAliasesAreReadExpanded(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[string]string{"job.yaml": job, "mlops.env": envText})
	config, err := yaml.ReadFile(filepath.Join(dir, "job.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	target := `apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: bert
spec:
  mpiReplicaSpecs:
    Launcher:
      template: &pod
        spec:
          containers:
          - name: bert
            image: docker.io/nlp/bert:0
            env: [{name: TEAM, value: nlp}]
    Worker:
      template: *pod
`
	rl := &framework.ResourceList{FunctionConfig: config, Items: []*yaml.RNode{yaml.MustParse(target)}}
	if err := (Processor{ConfigDir: dir}).Process(rl); err != nil {
		t.Fatal(err)
	}
	for _, role := range []string{"Launcher", "Worker"} {
		c, err := rl.Items[0].Pipe(yaml.Lookup("spec", "mpiReplicaSpecs", role, "template", "spec", "containers", "[name=bert]"))
		if err != nil || c == nil {
			t.Fatalf("%s: no container bert: %v\n%s", role, err, rl.Items[0].MustString())
		}
		if image, _ := c.GetString("image"); image != "docker.io/nlp/bert:1" {
			t.Errorf("%s: image %q, want the spec's", role, image)
		}
		if env, _ := c.Pipe(yaml.Lookup("env", "[name=TEAM]", "value")); env == nil || env.YNode().Value != "nlp" {
			t.Errorf("%s: the base's env TEAM is gone:\n%s", role, c.MustString())
		}
	}
	if strings.Contains(rl.Items[0].MustString(), "*pod") {
		t.Errorf("an alias is left in the output:\n%s", rl.Items[0].MustString())
	}

	// A failing run (WORKERS in the env ConfigMap is no number) hands back the items as they came.
	items := []*yaml.RNode{yaml.MustParse(target), yaml.MustParse("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bert-mpijob-env}\ndata: {WORKERS: \"x\"}\n")}
	before := items[0].MustString()
	rl = &framework.ResourceList{FunctionConfig: config, Items: items}
	if err := (Processor{ConfigDir: dir}).Process(rl); err == nil {
		t.Fatal("want an error")
	}
	if got := rl.Items[0].MustString(); got != before {
		t.Errorf("a failing run changed the caller's item:\n%s\n---- was:\n%s", got, before)
	}
}

// TestLocalConfigMap: spec.envFile.localConfigMap reads mlops.env from a
// local-config ConfigMap among the items, touches no file (the working
// directory holds none), leaves that ConfigMap as it came and writes the env
// ConfigMap; what would make its source unclear is refused, naming it.
func TestLocalConfigMap(t *testing.T) {
	t.Chdir(t.TempDir()) // no mlops.env here: a read of the disk would fail
	spec := job + "  envFile:\n    localConfigMap: {name: mlops-env}\n"
	local := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: mlops-env\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\ndata:\n  WORKERS: \"3\"\n  USER_ID: \"1000\"\n"
	rl := &framework.ResourceList{FunctionConfig: yaml.MustParse(spec), Items: []*yaml.RNode{yaml.MustParse(local)}}
	if err := (Processor{}).Process(rl); err != nil {
		t.Fatal(err)
	}
	if got := itemIDs(rl.Items); got != "ConfigMap/mlops-env,MPIJob/bert,ConfigMap/bert-mpijob-env-f27bdg9fkb" {
		t.Fatalf("items: %s", got)
	}
	if got := rl.Items[0].MustString(); got != yaml.MustParse(local).MustString() {
		t.Errorf("the local-config ConfigMap changed:\n%s", got)
	}
	if w, _ := rl.Items[2].Pipe(yaml.Lookup("data", "WORKERS")); w == nil || w.YNode().Value != "3" {
		t.Errorf("the env ConfigMap does not carry the local-config ConfigMap's values:\n%s", rl.Items[2].MustString())
	}
	// A second run on the output changes nothing (kpt fn render, twice).
	first := itemIDs(rl.Items)
	rl = &framework.ResourceList{FunctionConfig: yaml.MustParse(spec), Items: rl.Items}
	if err := (Processor{}).Process(rl); err != nil || itemIDs(rl.Items) != first {
		t.Fatalf("second run: %v, items %s", err, itemIDs(rl.Items))
	}

	// Under a kustomization's namePrefix the ConfigMap arrives renamed, with
	// kustomize's record of its name (the package's files in a kustomization).
	renamed := strings.Replace(local, "name: mlops-env\n  annotations:\n", "name: team-mlops-env\n  annotations:\n    "+PreviousNamesAnnotation+": mlops-env\n", 1)
	rl = &framework.ResourceList{FunctionConfig: yaml.MustParse(spec), Items: []*yaml.RNode{yaml.MustParse(renamed)}}
	if err := (Processor{}).Process(rl); err != nil {
		t.Fatalf("the local-config ConfigMap renamed by a namePrefix: %v", err)
	}

	userEnv := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bert-mpijob-env\ndata:\n  WORKERS: \"2\"\n"
	for _, c := range []struct{ name, spec, items, want string }{
		{"inline too", job + "  envFile:\n    inline: WORKERS=2\n    localConfigMap: {name: mlops-env}\n", local,
			`spec.envFile: Forbidden: names inline and localConfigMap ("mlops-env"): one source of mlops.env`},
		{"no name", job + "  envFile:\n    localConfigMap: {}\n", local, "spec.envFile.localConfigMap.name: Required value"},
		{"bad name", job + "  envFile:\n    localConfigMap: {name: Mlops_Env}\n", local, `spec.envFile.localConfigMap.name: Invalid value: "Mlops_Env"`},
		{"the env ConfigMap's name", job + "  envFile:\n    localConfigMap: {name: bert-mpijob-env}\n", local,
			`spec.envFile.localConfigMap.name: Invalid value: "bert-mpijob-env": is also spec.envFile.configMapName`},
		{"twice", spec, local + "---\n" + local, "ConfigMap/mlops-env is among the inputs 2 times"},
		{"local-config false", spec, strings.Replace(local, `"true"`, `"false"`, 1), `ConfigMap/mlops-env: has config.kubernetes.io/local-config: "false", so kpt and kustomize would apply it`},
		{"the env ConfigMap too", spec, local + "---\n" + userEnv, `spec.envFile.localConfigMap ("mlops-env") names the source of mlops.env, and ConfigMap/bert-mpijob-env among the inputs holds it too`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var items []*yaml.RNode
			for _, doc := range strings.Split(c.items, "---\n") {
				items = append(items, yaml.MustParse(doc))
			}
			rl := &framework.ResourceList{FunctionConfig: yaml.MustParse(c.spec), Items: items}
			err := (Processor{}).Process(rl)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want an error containing %q, got %v", c.want, err)
			}
			if len(rl.Items) != len(items) {
				t.Errorf("a failing run changed the items: %s", itemIDs(rl.Items))
			}
		})
	}
}

// TestEnvKeysNotCarriedAreWarned: the keys of the fields a jobKind cannot
// carry are mlops.env's, and set there they are warned about.
func TestEnvKeysNotCarriedAreWarned(t *testing.T) {
	t.Parallel()
	for _, k := range kinds.All {
		keys := kinds.All.EnvKeysNotCarried(k)
		text := "WORKERS=2\n"
		for _, key := range keys {
			if !env.IsKnownKey(key) {
				t.Errorf("jobKind %s: %s is no mlops.env key", k.Kind, key)
			}
			switch key {
			case "WORKERS":
			case "RDZV_ENDPOINT":
				text += key + "=etcd:2379\n"
			default:
				text += key + "=1\n"
			}
		}
		config, err := fuzzJob(text, "  jobKind: "+k.Kind+"\n"+k.Demo.Spec)
		if err != nil {
			t.Fatal(err)
		}
		o, results := Processor{}.Resolve(config, nil)
		if o == nil {
			t.Fatalf("jobKind %s: %v", k.Kind, results)
		}
		for _, key := range keys {
			if !slices.ContainsFunc(o.Warnings, func(r *framework.Result) bool { return r.Field != nil && r.Field.Path == key }) {
				t.Errorf("jobKind %s: %s set, and no warning: %v", k.Kind, key, o.Warnings)
			}
		}
	}
}
