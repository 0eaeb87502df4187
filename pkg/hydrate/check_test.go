// SPDX-License-Identifier: Apache-2.0

package hydrate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/mlops-fn/mlops-fn/pkg/fielddiff"
)

// TestTheCheckRefusesAContradiction: a patch of the user's kustomization,
// which kustomize applies after the component, setting the workers' replicas
// against WORKERS: the function, run after it, would set them back, so the
// overlay would differ from the function's run, and hydrate writes nothing.
func TestTheCheckRefusesAContradiction(t *testing.T) {
	t.Parallel()
	root, _ := overlay(t, "multi-node-nonroot")
	dir := filepath.Join(root, "overlay")
	write(t, filepath.Join(dir, "replicas.yaml"), "- op: replace\n  path: /spec/mpiReplicaSpecs/Worker/replicas\n  value: 7\n")
	k, _ := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	write(t, filepath.Join(dir, "kustomization.yaml"), strings.Replace(string(k), "patches:\n", "patches:\n- path: replicas.yaml\n  target: {kind: MPIJob, name: resnet50}\n", 1))
	before := snapshot(t, root)
	_, err := Render(Options{Dir: dir})
	for _, want := range []string{
		"would differ from mlops-fn run as a kustomize transformer",
		"\nMPIJob/resnet50: spec.mpiReplicaSpecs.Worker.replicas: mlops-fn renders 2, the kustomization's build gives 7\n",
		"likely cause, in " + filepath.Join(dir, "kustomization.yaml") + " after mlops-fn's patches: patches: the entry with path replicas.yaml;",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("want the check's difference, saying %q, got %v", want, err)
		}
	}
	if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
		t.Errorf("the refused run changed files:\n%s", diff)
	}
}

// TestJSONPatchOfARenderedField: a JSON patch of the workers' CPU limit,
// which only mlops-fn's patch sets: kustomize refuses it before the function
// runs, and hydrate names the entry and the contradiction beside
// kustomize's words, as for a strategic merge.
func TestJSONPatchOfARenderedField(t *testing.T) {
	t.Parallel()
	root, _ := overlay(t, "multi-node-nonroot")
	dir := filepath.Join(root, "overlay")
	const cpu = "/spec/mpiReplicaSpecs/Worker/template/spec/containers/0/resources/limits/cpu"
	k, _ := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	write(t, filepath.Join(dir, "kustomization.yaml"), strings.Replace(string(k), "patches:\n",
		"patches:\n- target: {kind: MPIJob, name: resnet50}\n  patch: |-\n    - op: replace\n      path: "+cpu+"\n      value: \"16\"\n", 1))
	before := snapshot(t, root)
	_, err := Render(Options{Dir: dir})
	for _, want := range []string{
		"\nMPIJob/resnet50: spec.mpiReplicaSpecs.Worker.template.spec.containers[0].resources.limits.cpu: mlops-fn renders \"8\", the kustomization's build gives \"16\"\n",
		"after mlops-fn's patches: patches: the entry with target {kind: MPIJob, name: resnet50}; ",
		"kustomize refuses the patch first: replace operation does not apply: doc is missing path: " + cpu,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("want the contradiction, saying %q, got %v", want, err)
		}
	}
	if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
		t.Errorf("the refused run changed files:\n%s", diff)
	}
}

// TestContradictionMessage: the check's refusal names each field that
// differs with both values, the first few and then how many more, and the
// entries of the kustomization acting after mlops-fn's patches that may set
// them, in the kustomization's order; or says it found none.
func TestContradictionMessage(t *testing.T) {
	t.Parallel()
	job := builtObject{apiVersion: "kubeflow.org/v2beta1", kind: "MPIJob", name: "dev-pw4"}
	replicas := objectDiff{object: job, changes: []fielddiff.Change{{Path: "spec.mpiReplicaSpecs.Worker.replicas", Old: 2, New: 9}}}
	image := objectDiff{object: job, changes: []fielddiff.Change{{Path: "spec.mpiReplicaSpecs.Worker.template.spec.containers[0].image", Old: "mpi:1", New: "mpi:2"}}}
	label := objectDiff{object: job, changes: []fielddiff.Change{{Path: `metadata.labels["kueue.x-k8s.io/queue-name"]`, Old: "a", New: "b"}}}
	extra := objectDiff{object: builtObject{kind: "ConfigMap", namespace: "team", name: "x"}, changes: []fielddiff.Change{{Path: "", New: map[string]any{}}}}
	const kustomization = `namePrefix: dev-
patches:
- path: mlops-fn/listed.yaml
  target: {kind: MLOpsJob}
- path: workers.yaml
  target: {kind: MPIJob, name: pw4}
- path: deployment.yaml
  target: {kind: Deployment}
- path: elsewhere.yaml
  target: {kind: MPIJob, labelSelector: app=elsewhere}
- path: team.yaml
  target: {kind: MPIJob, namespace: team}
- patch: |
    apiVersion: kubeflow.org/v2beta1
    kind: MPIJob
    metadata: {name: pw4}
    spec: {slotsPerWorker: 2}
- patch: |
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: other}
- path: missing.yaml
replacements:
- source: {kind: ConfigMap, name: x, fieldPath: data.n}
  targets:
  - select: {kind: MPI.*}
    fieldPaths: [spec.slotsPerWorker]
replicas:
- name: pw4
  count: 9
images:
- name: mpi
  newTag: "2"
- name: mpi-other
labels:
- pairs: {kueue.x-k8s.io/queue-name: b}
transformers:
- mine.yaml
components:
- before
- mlops-fn
- after
`
	r := &rendering{o: Options{Dir: "pw4"}, k: yaml.MustParse(kustomization), kname: "/abs/pw4/kustomization.yaml", configPath: filepath.Join("pw4", "job.yaml"), envFile: "mlops.env"}
	for _, c := range []struct {
		name  string
		diffs []objectDiff
		want  string
	}{{
		name:  "a patch and replicas:",
		diffs: []objectDiff{replicas},
		want: `pw4: the hydrated overlay would differ from mlops-fn run as a kustomize transformer on the same kustomization, so hydrate writes nothing:
MPIJob/dev-pw4: spec.mpiReplicaSpecs.Worker.replicas: mlops-fn renders 2, the kustomization's build gives 9
likely cause, in pw4/kustomization.yaml after mlops-fn's patches: patches: the entry with path workers.yaml; patches: the inline patch of MPIJob/dev-pw4; patches: the entry with path missing.yaml; replacements: the entry with targets {kind: MPI.*}; replicas: pw4; transformers: mine.yaml; components: after; accepted: entries there that leave what mlops-fn renders as it renders it (set such a value in pw4/job.yaml or pw4/mlops.env instead)`,
	}, {
		name:  "more than a few, none of them the user's own fields",
		diffs: []objectDiff{image, label, image, label, extra},
		want: `pw4: the hydrated overlay would differ from mlops-fn run as a kustomize transformer on the same kustomization, so hydrate writes nothing:
MPIJob/dev-pw4: spec.mpiReplicaSpecs.Worker.template.spec.containers[0].image: mlops-fn renders "mpi:1", the kustomization's build gives "mpi:2"
MPIJob/dev-pw4: metadata.labels["kueue.x-k8s.io/queue-name"]: mlops-fn renders "a", the kustomization's build gives "b"
MPIJob/dev-pw4: spec.mpiReplicaSpecs.Worker.template.spec.containers[0].image: mlops-fn renders "mpi:1", the kustomization's build gives "mpi:2"
MPIJob/dev-pw4: metadata.labels["kueue.x-k8s.io/queue-name"]: mlops-fn renders "a", the kustomization's build gives "b"
and 1 more
likely cause, in pw4/kustomization.yaml after mlops-fn's patches: patches: the entry with path workers.yaml; patches: the inline patch of MPIJob/dev-pw4; patches: the entry with path missing.yaml; replacements: the entry with targets {kind: MPI.*}; transformers: mine.yaml; components: after; accepted: entries there that leave what mlops-fn renders as it renders it (set such a value in pw4/job.yaml or pw4/mlops.env instead)`,
	}} {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, r.contradiction(c.diffs, "").Error()); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
		})
	}

	// An object only one side has; nothing in the kustomization names it.
	r.k = yaml.MustParse("resources: [base]\ncomponents: [mlops-fn]\n")
	want := `pw4: the hydrated overlay would differ from mlops-fn run as a kustomize transformer on the same kustomization, so hydrate writes nothing:
ConfigMap/x (namespace team): mlops-fn renders no such object, the kustomization's build gives the object
pw4/kustomization.yaml has no entry that acts after mlops-fn's patches (` + afterThePatches + `) and names what differs; accepted: entries there that leave what mlops-fn renders as it renders it (set such a value in pw4/job.yaml or pw4/mlops.env instead)`
	if diff := cmp.Diff(want, r.contradiction([]objectDiff{extra}, "").Error()); diff != "" {
		t.Errorf("with no suspect, message (-want +got):\n%s", diff)
	}
}

// TestTheCheckFollowsRenames: namePrefix: and nameSuffix: in the hydrated
// kustomization act before the function, which finds its target and the env
// ConfigMap by the names kustomize replaced, as kustomize hands them to a
// transformer: the check passes, and the job reads the renamed ConfigMap.
func TestTheCheckFollowsRenames(t *testing.T) {
	t.Parallel()
	root, _ := overlay(t, "multi-node-nonroot")
	dir := filepath.Join(root, "overlay")
	k, _ := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	write(t, filepath.Join(dir, "kustomization.yaml"), string(k)+"namePrefix: dev-\nnameSuffix: -b\n")
	hydrateDir(t, dir)
	jobs := 0
	for _, o := range kustomize(t, dir) {
		if o["kind"] != "MPIJob" {
			continue
		}
		jobs++
		if name := o["metadata"].(map[string]any)["name"]; name != "dev-resnet50-b" {
			t.Errorf("the job is named %v", name)
		}
	}
	if jobs != 1 {
		t.Errorf("want one MPIJob, got %d", jobs)
	}

	// The renamed job's pod names are checked as the function checks them.
	k, _ = os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	write(t, filepath.Join(dir, "kustomization.yaml"), strings.Replace(string(k), "namePrefix: dev-\n", "namePrefix: "+strings.Repeat("a", 50)+"-\n", 1))
	if _, err := Render(Options{Dir: dir}); err == nil || !strings.Contains(err.Error(), "must be no more than 63 characters") {
		t.Errorf("a namePrefix that makes pod names too long: want the function's error, got %v", err)
	}
}

// TestMergeWithoutBase: a generator with behavior merge and nothing to merge
// into (kustomize edit add configmap --behavior=merge) is refused naming the
// generator and the fix, not in kustomize's Go pointers and structs.
func TestMergeWithoutBase(t *testing.T) {
	t.Parallel()
	dir := quickstartCopy(t, "multi-node")
	k, _ := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	write(t, filepath.Join(dir, "kustomization.yaml"), strings.Replace(string(k), "configMapGenerator:\n", "configMapGenerator:\n- name: extra\n  behavior: merge\n  literals: [A=B]\n", 1))
	_, err := Render(Options{Dir: dir})
	if err == nil || !strings.Contains(err.Error(), "configMapGenerator named extra has behavior: merge or replace") || strings.Contains(err.Error(), "0x") || strings.Contains(err.Error(), "resid.") {
		t.Errorf("want the generator named and no Go values, got %v", err)
	}
}

// TestGlobalDisableNameSuffixHash: a top-level generatorOptions that takes
// the hash off every generated name, the env ConfigMap's too, is refused
// before anything is built, saying what is accepted (the guard's "run mlops-fn
// hydrate" came back from the command that had just run).
func TestGlobalDisableNameSuffixHash(t *testing.T) {
	t.Parallel()
	dir := quickstartCopy(t, "multi-node")
	k, _ := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	write(t, filepath.Join(dir, "kustomization.yaml"), string(k)+"generatorOptions:\n  disableNameSuffixHash: true\n")
	_, err := Render(Options{Dir: dir})
	for _, want := range []string{
		filepath.Join(dir, "kustomization.yaml") + ":",
		": generatorOptions.disableNameSuffixHash: true takes kustomize's hash off the name of every ConfigMap",
		"accepted: no disableNameSuffixHash under generatorOptions (or false), and options: {disableNameSuffixHash: true} on each of your own generators",
	} {
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "run mlops-fn hydrate") {
			t.Fatalf("want the field named, saying %q, got %v", want, err)
		}
	}
}

// TestBuildsDoNotShareTheSchema: kyaml's OpenAPI schema is a global that
// kustomize sets from a kustomization's openapi: and keeps for the next build
// without one; each build starts afresh, so a build after one with openapi:
// gives what it gives alone.
func TestBuildsDoNotShareTheSchema(t *testing.T) {
	t.Parallel()
	withOpenAPI, plain := t.TempDir(), t.TempDir()
	deployment := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        image: web:1\n"
	patch := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: sidecar\n        image: sidecar:1\n"
	for _, dir := range []string{withOpenAPI, plain} {
		write(t, filepath.Join(dir, "deployment.yaml"), deployment)
		write(t, filepath.Join(dir, "patch.yaml"), patch)
		write(t, filepath.Join(dir, "kustomization.yaml"), "resources:\n- deployment.yaml\npatches:\n- path: patch.yaml\n")
	}
	// A document that knows no Deployment: its containers list is replaced.
	write(t, filepath.Join(withOpenAPI, "schema.json"), `{"swagger": "2.0", "info": {"title": "no kinds", "version": "v1"}, "paths": {}, "definitions": {}}`)
	write(t, filepath.Join(withOpenAPI, "kustomization.yaml"), "resources:\n- deployment.yaml\npatches:\n- path: patch.yaml\nopenapi:\n  path: schema.json\n")

	alone, err := build(filesys.MakeFsOnDisk(), plain)
	if err != nil {
		t.Fatal(err)
	}
	custom, err := build(filesys.MakeFsOnDisk(), withOpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	after, err := build(filesys.MakeFsOnDisk(), plain)
	if err != nil {
		t.Fatal(err)
	}
	if diff, err := difference(alone, custom); err != nil || diff == "" {
		t.Fatalf("the openapi: build should replace the containers (and so differ), got diff %q, %v", diff, err)
	}
	if diff, err := difference(alone, after); err != nil || diff != "" {
		t.Errorf("a build after one with openapi: differs from the same build alone (-alone +after): %v\n%s", err, diff)
	}
}
