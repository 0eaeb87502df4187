// SPDX-License-Identifier: Apache-2.0

package hydrate

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/mlops-fn/mlops-fn/internal/testutil"
	"github.com/mlops-fn/mlops-fn/pkg/jobnode"
	"github.com/mlops-fn/mlops-fn/pkg/processor"
)

// overlay copies a golden case into a temporary tree: base/ holds the
// skeleton, overlay/ the job spec and mlops.env, hydrated.
func overlay(t *testing.T, testCase string) (root string, skeleton *yaml.RNode) {
	t.Helper()
	root = t.TempDir()
	src := filepath.Join("..", "..", "testdata", testCase)
	for _, dir := range []string{"base", "overlay"} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"job.yaml", "mlops.env"} {
		data, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(root, "overlay", f), string(data))
	}
	config, err := yaml.ReadFile(filepath.Join(src, "job.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	resolved, results := processor.Processor{ConfigDir: src}.Resolve(config, nil)
	if resolved == nil {
		t.Fatalf("case %s does not resolve: %v", testCase, results)
	}
	// The base is the case's own target when it has one, else the plan's skeleton.
	if target, err := yaml.ReadFile(filepath.Join(src, "input.yaml")); err == nil {
		skeleton = target
	} else if skeleton, err = jobnode.Encode(resolved.Plan.Skeleton()); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "base", "skeleton.yaml"), skeleton.MustString())
	write(t, filepath.Join(root, "base", "kustomization.yaml"), "resources:\n- skeleton.yaml\n")

	ov, err := Render(Options{Dir: filepath.Join(root, "overlay"), Resources: []string{"../base"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := ov.Write(); err != nil {
		t.Fatal(err)
	}
	return root, skeleton
}

// TestKustomizationEntries: a hydrated kustomization holds, under each
// field, as many entries marked as hydrate's as KustomizationEntries, which
// `hydrate --help` lists, says.
func TestKustomizationEntries(t *testing.T) {
	t.Parallel()
	root, _ := overlay(t, "multi-node-nonroot")
	text, err := os.ReadFile(filepath.Join(root, "overlay", "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	marked, field := map[string]int{}, ""
	for _, line := range strings.Split(string(text), "\n") {
		if key, _, ok := strings.Cut(line, ":"); ok && key != "" && !strings.HasPrefix(line, " ") && !strings.HasPrefix(line, "-") && !strings.HasPrefix(line, "#") {
			field = key
		}
		if strings.Contains(line, "# "+ownedMark+":") {
			marked[field]++
		}
	}
	want := map[string]int{}
	for _, e := range KustomizationEntries {
		want[e.Field]++
	}
	if diff := cmp.Diff(want, marked); diff != "" {
		t.Errorf("hydrate's marked entries by field (-KustomizationEntries +kustomization.yaml):\n%s\n%s", diff, text)
	}
}

// difference describes how two builds differ, "" when they do not.
func difference(want, got []*yaml.RNode) (string, error) {
	diffs, err := differences(want, got)
	if err != nil || len(diffs) == 0 {
		return "", err
	}
	return describe(diffs, maxChangesShown, "the first build gives", "the second"), nil
}

// hydrateDir runs hydrate on dir and writes what it renders.
func hydrateDir(t *testing.T, dir string) {
	t.Helper()
	ov, err := Render(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := ov.Write(); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// kustomize builds dir in process with kustomize's defaults, as kubectl apply
// -k does, from a fresh schema (build).
func kustomize(t *testing.T, dir string) []map[string]any {
	t.Helper()
	nodes, err := build(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	var out []map[string]any
	for _, r := range nodes {
		obj, err := r.Map()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, obj)
	}
	return out
}

// envHashed is an env ConfigMap's name with kustomize's hash of its data.
var envHashed = regexp.MustCompile(`^(.+-(?:mpijob|pod|pytorchjob|trainjob|jobset)-env)-[a-z0-9]{10}$`)

// transform runs the function on the skeleton as kustomize's transformers: would.
func transform(t *testing.T, dir string, skeleton *yaml.RNode) []map[string]any {
	t.Helper()
	config, err := yaml.ReadFile(filepath.Join(dir, "job.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rl := &framework.ResourceList{FunctionConfig: config, Items: []*yaml.RNode{skeleton.Copy()}}
	if err := (processor.Processor{ConfigDir: dir}).Process(rl); err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, n := range rl.Items {
		//nolint:staticcheck // the runners still write the legacy annotations
		for _, a := range []string{processor.GeneratedBy, kioutil.PathAnnotation, kioutil.LegacyPathAnnotation} {
			if _, err := n.Pipe(yaml.ClearAnnotation(a)); err != nil {
				t.Fatal(err)
			}
		}
		if len(n.GetAnnotations()) == 0 {
			if err := n.PipeE(yaml.Lookup("metadata"), yaml.Clear("annotations")); err != nil {
				t.Fatal(err)
			}
		}
		obj, err := n.Map()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, obj)
	}
	return out
}

// TestKustomizeAppliesTheSamePatches: the hydrated overlay, built by
// kustomize's own machinery, gives the objects the transformer produces, lists
// merged by name inside the MPIJob as in the Pod.
func TestKustomizeAppliesTheSamePatches(t *testing.T) {
	t.Parallel()
	for _, c := range []string{
		"multi-node-nonroot",
		"published-horovod-4gpu-nfs",
		"published-tensorflow-benchmarks",
		"published-multi-node-quickstart",
		"published-single-node-quickstart",
		"volumes-every-kind",
		"intel-mpi",
		"elastic-c10d",
		"elastic-etcd-run-id",
		"patch-root-clears-nonroot-target",
		"patch-existing-mpijob",
		"elastic-patch-existing",
		"patch-target-sidecar-hardened",
		"patch-target-init-container-hardened",
		"site-settings-published-pi",
		"site-settings-rank-count-in-args",
		"team-mpijob-sidecar-first",
		"team-pytorchjob-profiler",
		"team-pod-tensorboard",
	} {
		t.Run(c, func(t *testing.T) {
			t.Parallel()
			if _, err := os.Stat(filepath.Join("..", "..", "testdata", c)); err != nil {
				t.Fatalf("golden case %s is listed here but missing from testdata (renamed or removed?): update the list: %v", c, err)
			}
			root, skeleton := overlay(t, c)
			got := kustomize(t, filepath.Join(root, "overlay"))
			want := transform(t, filepath.Join(root, "overlay"), skeleton)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("kustomize and the function disagree (-function +kustomize):\n%s", diff)
			}
		})
	}
}

// TestWithoutTheMergeKeysKustomizeReplacesLists shows why the patch carries
// its lists' merge keys as comments: without them the patch replaces the
// job's containers list, and a sidecar of the base loses its image.
func TestWithoutTheMergeKeysKustomizeReplacesLists(t *testing.T) {
	t.Parallel()
	root, _ := overlay(t, sidecarCase)
	dir := filepath.Join(root, "overlay")
	patches, err := filepath.Glob(filepath.Join(dir, ComponentDir, "*-patch.yaml"))
	if err != nil || len(patches) == 0 {
		t.Fatalf("want the job's patch, got %v (%v)", patches, err)
	}
	with := kustomize(t, dir)
	marks := regexp.MustCompile(` # \{"x-kubernetes-[^\n]*`)
	for _, p := range patches {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		write(t, p, marks.ReplaceAllString(string(b), ""))
	}
	without := kustomize(t, dir)
	if sidecarImage(t, with) == nil {
		t.Fatal("with the merge keys the sidecar has no image")
	}
	if sidecarImage(t, without) != nil {
		t.Fatalf("without the merge keys kustomize kept the sidecar's image %v: the comments may no longer be needed", sidecarImage(t, without))
	}
}

// sidecarCase is a golden case whose base has a sidecar of its own,
// "profiler", beside the training container of a PyTorchJob (a CRD, whose
// schema kustomize does not know).
const sidecarCase = "team-pytorchjob-profiler"

// sidecarImage is the image of sidecarCase's sidecar, nil when it has none.
func sidecarImage(t *testing.T, objs []map[string]any) any {
	t.Helper()
	for _, o := range objs {
		if o["kind"] == "PyTorchJob" {
			for _, c := range o["spec"].(map[string]any)["pytorchReplicaSpecs"].(map[string]any)["Worker"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any) {
				if c.(map[string]any)["name"] == "profiler" {
					return c.(map[string]any)["image"]
				}
			}
			t.Fatal("the worker has no profiler container")
		}
	}
	t.Fatal("the build has no PyTorchJob")
	return nil
}

// TestStaleDetectsDrift: editing mlops.env makes the overlay stale until it is hydrated again.
func TestStaleDetectsDrift(t *testing.T) {
	t.Parallel()
	root, _ := overlay(t, "multi-node-nonroot")
	dir := filepath.Join(root, "overlay")
	fresh, err := Render(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if stale := fresh.Stale(); len(stale) > 0 {
		t.Fatalf("just hydrated, yet stale: %v", stale)
	}
	env, _ := os.ReadFile(filepath.Join(dir, "mlops.env"))
	write(t, filepath.Join(dir, "mlops.env"), strings.Replace(string(env), "WORKERS=2", "WORKERS=3", 1))
	edited, err := Render(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"mlops-fn/kustomization.yaml", "mlops-fn/mpijob-patch.yaml"}, edited.Stale()); diff != "" {
		t.Errorf("stale files (-want +got):\n%s", diff)
	}
	if err := edited.Write(); err != nil {
		t.Fatal(err)
	}
	if stale := edited.Stale(); len(stale) > 0 {
		t.Errorf("hydrated again, yet stale: %v", stale)
	}
}

// TestKeepsTheUsersKustomization: hydrate owns its entries only; the rest of
// the file stays, comments included: the user's own fields of the env
// generator (literals, labels), their patch, configurations and namespace.
// A second run changes nothing.
func TestKeepsTheUsersKustomization(t *testing.T) {
	t.Parallel()
	root, _ := overlay(t, "multi-node-nonroot")
	dir := filepath.Join(root, "overlay")
	write(t, filepath.Join(dir, "kustomization.yaml"), `# my overlay
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: team-a # where we train
resources:
- ../base
patches:
- path: my-patch.yaml
configurations:
- kustomizeconfig.yaml
configMapGenerator:
# the site's env
- name: resnet50-mpijob-env
  envs:
  - mlops.env
  literals:
  - TEAM=a # ours
  options:
    labels:
      team: a
`)
	write(t, filepath.Join(dir, "kustomizeconfig.yaml"), "nameReference: []\n")
	write(t, filepath.Join(dir, "my-patch.yaml"), "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata:\n  name: resnet50\n  labels:\n    team: a\n")
	var once []byte
	for run := 0; run < 2; run++ {
		ov, err := Render(Options{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if run == 1 && ov.Kustomization != nil {
			t.Errorf("the second run rewrites the kustomization:\n%s", cmp.Diff(string(once), string(ov.Kustomization)))
		}
		if err := ov.Write(); err != nil {
			t.Fatal(err)
		}
		once, _ = os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	}
	want := `# my overlay
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: team-a # where we train
resources:
- ../base
- job.yaml # mlops-fn hydrate: the job spec, which the guard compares (local-config: never applied)
patches:
- path: my-patch.yaml
- path: mlops-fn/listed.yaml # mlops-fn hydrate: fails the build when components: lacks mlops-fn
  target:
    kind: MLOpsJob
configurations:
- kustomizeconfig.yaml
configMapGenerator:
# the site's env
- name: resnet50-mpijob-env # mlops-fn hydrate: mlops.env for the job's containers
  envs:
  - mlops.env
  literals:
  - TEAM=a # ours
  options:
    labels:
      team: a
    disableNameSuffixHash: false
- name: resnet50-mlops-fn-inputs # mlops-fn hydrate: mlops.env as the guard compares it
  envs:
  - mlops.env
  literals:
  - mlops-fn.hydrate.entries=7a9a557d570c1f1c
  options:
    disableNameSuffixHash: true
    annotations:
      config.kubernetes.io/local-config: "true"
components:
- mlops-fn # mlops-fn hydrate: the job's patches, written by mlops-fn hydrate
`
	if diff := cmp.Diff(want, string(once)); diff != "" {
		t.Errorf("kustomization.yaml (-want +got):\n%s", diff)
	}
	for _, o := range kustomize(t, dir) {
		meta := o["metadata"].(map[string]any)
		switch o["kind"] {
		case "MPIJob":
			if meta["namespace"] != "team-a" || meta["labels"].(map[string]any)["team"] != "a" {
				t.Errorf("the user's namespace or patch was lost: %v", meta)
			}
		case "ConfigMap":
			if o["data"].(map[string]any)["TEAM"] != "a" || meta["labels"].(map[string]any)["team"] != "a" {
				t.Errorf("the user's literal or label was lost: %v", o)
			}
		}
	}
}

// TestTheUsersOpenAPIChangesNoPatch: an openapi: entry of the user's (one
// OpenAPI document for the whole build, here one that knows no kind), in the
// hydrated kustomization or in an overlay on top, leaves the job as it is
// without it: the patches carry their merge keys.
func TestTheUsersOpenAPIChangesNoPatch(t *testing.T) {
	t.Parallel()
	root, _ := overlay(t, sidecarCase)
	dir := filepath.Join(root, "overlay")
	want := kustomize(t, dir)
	if sidecarImage(t, want) == nil {
		t.Fatal("the hydrated sidecar has no image")
	}
	top := filepath.Join(root, "top")
	if err := os.MkdirAll(top, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, top} {
		write(t, filepath.Join(d, "mine.json"), `{"swagger":"2.0","definitions":{}}`)
	}
	write(t, filepath.Join(top, "kustomization.yaml"), "resources:\n- ../overlay\nopenapi:\n  path: mine.json\n")
	if diff := cmp.Diff(want, kustomize(t, top)); diff != "" {
		t.Errorf("an overlay on top naming its own openapi: changes the build (-without +with):\n%s", diff)
	}
	k, _ := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	write(t, filepath.Join(dir, "kustomization.yaml"), string(k)+"openapi:\n  path: mine.json\n")
	ov, err := Render(Options{Dir: dir})
	if err != nil {
		t.Fatalf("hydrate refuses the user's openapi: %v", err)
	}
	if err := ov.Write(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, kustomize(t, dir)); diff != "" {
		t.Errorf("openapi: in the hydrated kustomization changes the build (-without +with):\n%s", diff)
	}
}

// TestRemovesStaleFiles: a patch file the job no longer needs (here the
// security-context-patch.yaml and nfs-volume-patch.yaml of releases before the
// job's one patch, each a transformer of the component's kustomization)
// leaves the component and its kustomization; a file of the user's beside it
// stays.
func TestRemovesStaleFiles(t *testing.T) {
	t.Parallel()
	root, _ := overlay(t, "multi-node-nonroot")
	dir := filepath.Join(root, "overlay")
	hydrateDir(t, dir)
	stale := []string{"security-context-patch.yaml", "nfs-volume-patch.yaml"}
	path := filepath.Join(dir, ComponentDir, componentFile)
	k, err := yaml.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	transformers := k.Field("transformers").Value.YNode()
	i := slices.IndexFunc(transformers.Content, func(n *yaml.Node) bool { return strings.Contains(n.Value, "path: mpijob-patch.yaml\n") })
	if i < 0 {
		t.Fatalf("%s has no transformer of mpijob-patch.yaml:\n%s", path, k.MustString())
	}
	job, _ := os.ReadFile(filepath.Join(dir, ComponentDir, "mpijob-patch.yaml"))
	for _, f := range stale {
		// A patch that sets what the job's patch sets: the old layout builds the same job.
		write(t, filepath.Join(dir, ComponentDir, f), string(job))
		old := *transformers.Content[i]
		old.Value = strings.ReplaceAll(old.Value, "mpijob-patch", strings.TrimSuffix(f, ".yaml"))
		transformers.Content = append(transformers.Content, &old)
	}
	write(t, path, k.MustString())
	kustomize(t, dir) // the old layout builds
	write(t, filepath.Join(dir, "my-patch.yaml"), "# mine\nkind: MPIJob\n")
	hydrateDir(t, dir)
	for _, f := range stale {
		if _, err := os.Stat(filepath.Join(dir, ComponentDir, f)); !os.IsNotExist(err) {
			t.Errorf("%s is still there: %v", filepath.Join(ComponentDir, f), err)
		}
		if b, _ := os.ReadFile(path); strings.Contains(string(b), f) {
			t.Errorf("%s still lists %s:\n%s", path, f, b)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "my-patch.yaml")); err != nil {
		t.Errorf("the user's file went: %v", err)
	}
	kustomize(t, dir)
}

// TestSpecChangesWorkOrFailAtHydrate: a rename, a namespace, a mode switch
// or a target either give an overlay that builds (checked against the
// function by Render itself) or fail at hydrate time with a clear error,
// never an overlay kubectl cannot build.
func TestSpecChangesWorkOrFailAtHydrate(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		// job and kustomization replace text in those files; "" appends.
		job, kustomization [2]string
		wantErr            string // "" : builds, with wantInBuild in the job
		wantInBuild        string
	}{
		{name: "rename, the base's job keeps its name", job: [2]string{"name: resnet50\n", "name: bert\n"},
			wantErr: "the base holds MPIJob/resnet50, which is not the job of"},
		{name: "rename, with spec.target naming the base's job", job: [2]string{"name: resnet50\nspec:\n", "name: bert\nspec:\n  target: {name: resnet50}\n"},
			wantInBuild: "name: resnet50"},
		{name: "namespace, the base's job has none", job: [2]string{"name: resnet50\n", "name: resnet50\n  namespace: ml\n"},
			wantErr: "a patch cannot move an object"},
		{name: "namespace, and namespace: in the kustomization", job: [2]string{"name: resnet50\n", "name: resnet50\n  namespace: ml\n"},
			kustomization: [2]string{"", "namespace: ml\n"}, wantInBuild: "namespace: ml"},
		{name: "namespace in the kustomization only", kustomization: [2]string{"", "namespace: team\n"}, wantInBuild: "namespace: team"},
		{name: "labels and annotations", job: [2]string{"name: resnet50\n", "name: resnet50\n  labels: {kueue.x-k8s.io/queue-name: team-a}\n  annotations: {owner: alice}\n"},
			wantInBuild: "kueue.x-k8s.io/queue-name: team-a"},
		{name: "mode switch, the base holds the MPIJob", job: [2]string{"jobKind: MPIJob", "jobKind: Pod"},
			wantErr: "MPIJob/resnet50 among the inputs is named like the job, but jobKind is Pod"},
		{name: "a target by labels", job: [2]string{"spec:\n", "spec:\n  target: {labels: {app: train}}\n"},
			wantErr: "spec.target.labels: a hydrated overlay patches the objects it found"},
		{name: "a target that is not there", job: [2]string{"spec:\n", "spec:\n  target: {name: other}\n"},
			wantErr: `spec.target: "other" matches no MPIJob among the inputs`},
		{name: "mlops.env from a kpt package's ConfigMap", job: [2]string{"spec:\n", "spec:\n  envFile: {localConfigMap: {name: mlops-env}}\n"},
			wantErr: "spec.envFile.localConfigMap is set, which names a ConfigMap among a kpt package's inputs, but kubectl apply -k reads mlops.env from disk"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			root, _ := overlay(t, "multi-node-nonroot")
			dir := filepath.Join(root, "overlay")
			for file, r := range map[string][2]string{"job.yaml": c.job, "kustomization.yaml": c.kustomization} {
				if r == [2]string{} {
					continue
				}
				data, _ := os.ReadFile(filepath.Join(dir, file))
				text := string(data) + r[1]
				if r[0] != "" {
					if !strings.Contains(string(data), r[0]) {
						t.Fatalf("%s lacks %q", file, r[0])
					}
					text = strings.Replace(string(data), r[0], r[1], 1)
				}
				write(t, filepath.Join(dir, file), text)
			}
			before := snapshot(t, root)
			ov, err := Render(Options{Dir: dir})
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("want an error with %q, got %v", c.wantErr, err)
				}
				if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
					t.Errorf("the refused run changed files:\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := ov.Write(); err != nil {
				t.Fatal(err)
			}
			jobs := 0
			for _, o := range kustomize(t, dir) {
				if o["kind"] != "MPIJob" {
					continue
				}
				jobs++
				n, err := yaml.FromMap(o)
				if err != nil {
					t.Fatal(err)
				}
				if s := n.MustString(); !strings.Contains(s, c.wantInBuild) {
					t.Errorf("the job lacks %q:\n%s", c.wantInBuild, s)
				}
			}
			if jobs != 1 {
				t.Errorf("want one MPIJob, got %d", jobs)
			}
		})
	}
}

// TestKustomizationEdgeCases: what users write in their kustomization, each
// a case a review found: hydrate keeps the user's lines and builds.
func TestKustomizationEdgeCases(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		// edit changes the hydrated kustomization (and job.yaml when spec != "").
		edit, spec [2]string
		// the build's env ConfigMaps, name → a key of theirs that must be there
		wantConfigMaps map[string]string
		wantText       []string // in the kustomization afterwards
	}{
		{name: "the job renamed: the env generator is renamed in place, the user's literal kept",
			edit:           [2]string{"  envs:\n  - mlops.env\n", "  envs:\n  - mlops.env\n  literals:\n  - TEAM=vision # mine\n"},
			spec:           [2]string{"name: resnet50\nspec:\n", "name: resnet-b\nspec:\n  target: {name: resnet50}\n"},
			wantConfigMaps: map[string]string{"resnet-b-mpijob-env": "TEAM"},
			wantText:       []string{"- TEAM=vision # mine"}},
		{name: "the user's own env generator: their env file stays, mlops.env first",
			edit:           [2]string{"- name: resnet50-mpijob-env # mlops-fn hydrate: mlops.env for the job's containers\n  envs:\n  - mlops.env\n", "- name: resnet50-mpijob-env\n  envs:\n  - team.env # team settings\n"},
			wantConfigMaps: map[string]string{"resnet50-mpijob-env": "TEAM"},
			wantText:       []string{"  - mlops.env\n  - team.env # team settings\n"}},
		{name: "the user's comment on the env generator entry: kept, the mark after it",
			edit:           [2]string{"- name: resnet50-mpijob-env # mlops-fn hydrate: mlops.env for the job's containers\n", "- name: resnet50-mpijob-env # the team's settings\n"},
			wantConfigMaps: map[string]string{"resnet50-mpijob-env": "WORKERS"},
			wantText:       []string{"- name: resnet50-mpijob-env # the team's settings; mlops-fn hydrate: mlops.env for the job's containers\n"}},
		{name: "a comment after components:",
			edit:           [2]string{"components:\n", "components: # hydrate adds its folder here\n"},
			wantConfigMaps: map[string]string{"resnet50-mpijob-env": "WORKERS"},
			wantText:       []string{"components: # hydrate adds its folder here\n- mlops-fn"}},
		{name: "a flow list with a comment",
			edit:           [2]string{"components:\n- mlops-fn # mlops-fn hydrate: the job's patches, written by mlops-fn hydrate\n", "components: [] # none yet\n"},
			wantConfigMaps: map[string]string{"resnet50-mpijob-env": "WORKERS"},
			wantText:       []string{"components: # none yet\n- mlops-fn"}},
		{name: "the component written ./mlops-fn",
			edit:           [2]string{"- mlops-fn # mlops-fn hydrate", "- ./mlops-fn # mlops-fn hydrate"},
			wantConfigMaps: map[string]string{"resnet50-mpijob-env": "WORKERS"},
			wantText:       []string{"- ./mlops-fn"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			root, _ := overlay(t, "multi-node-nonroot")
			dir := filepath.Join(root, "overlay")
			write(t, filepath.Join(dir, "team.env"), "TEAM=vision\n")
			for file, r := range map[string][2]string{"kustomization.yaml": c.edit, "job.yaml": c.spec} {
				if r == [2]string{} {
					continue
				}
				data, _ := os.ReadFile(filepath.Join(dir, file))
				if !strings.Contains(string(data), r[0]) {
					t.Fatalf("%s lacks %q:\n%s", file, r[0], data)
				}
				write(t, filepath.Join(dir, file), strings.Replace(string(data), r[0], r[1], 1))
			}
			hydrateDir(t, dir)
			got := map[string]map[string]any{}
			for _, o := range kustomize(t, dir) {
				if o["kind"] == "ConfigMap" {
					// By the generator's name: kustomize's hash of the data follows it.
					got[envHashed.ReplaceAllString(o["metadata"].(map[string]any)["name"].(string), "$1")] = o["data"].(map[string]any)
				}
			}
			if len(got) != len(c.wantConfigMaps) {
				t.Errorf("ConfigMaps %v; want %v (no orphan)", slices.Sorted(maps.Keys(got)), c.wantConfigMaps)
			}
			for name, key := range c.wantConfigMaps {
				if _, ok := got[name][key]; !ok {
					t.Errorf("ConfigMap %s lacks %s: %v", name, key, got[name])
				}
			}
			k, _ := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
			for _, w := range c.wantText {
				if !strings.Contains(string(k), w) {
					t.Errorf("kustomization.yaml lacks %q:\n%s", w, k)
				}
			}
		})
	}
}

// TestKeepsLineEndsAndByteOrderMark: a kustomization saved with a byte order
// mark and CRLF line ends keeps both when hydrate rewrites its entries, is not
// rewritten when they stand, and one mixing line ends is refused, unwritten.
func TestKeepsLineEndsAndByteOrderMark(t *testing.T) {
	t.Parallel()
	root, _ := overlay(t, "multi-node-nonroot")
	dir := filepath.Join(root, "overlay")
	path := filepath.Join(dir, "kustomization.yaml")
	data, _ := os.ReadFile(path)
	lf := "# the team's overlay\n" + string(data)
	dos := "\ufeff" + strings.ReplaceAll(lf, "\n", "\r\n")
	write(t, path, dos)
	ov, err := Render(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if ov.Kustomization != nil {
		t.Errorf("hydrate rewrites a kustomization whose entries stand:\n%q", ov.Kustomization)
	}

	// The job renamed: hydrate renames its entries, every other line as it was.
	spec, _ := os.ReadFile(filepath.Join(dir, "job.yaml"))
	write(t, filepath.Join(dir, "job.yaml"), strings.Replace(string(spec), "name: resnet50\nspec:\n", "name: resnet-b\nspec:\n  target: {name: resnet50}\n", 1))
	ov, err = Render(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := ov.Write(); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	text, ok := strings.CutPrefix(string(got), "\ufeff")
	if !ok {
		t.Errorf("the byte order mark is gone:\n%q", got)
	}
	if bare := strings.Count(text, "\n") - strings.Count(text, "\r\n"); bare > 0 || !strings.Contains(text, "resnet-b-mpijob-env") {
		t.Errorf("%d lines lost their CRLF, or the entries were not renamed:\n%q", bare, got)
	}
	for _, line := range strings.Split(lf, "\n") {
		if !strings.Contains(line, "resnet50-m") && !strings.Contains(line, tokenKey+"=") && !strings.Contains(text, line+"\r\n") {
			t.Errorf("the line %q is gone:\n%s", line, text)
		}
	}

	write(t, path, strings.Replace(dos, "\r\n", "\n", 1))
	before := snapshot(t, root)
	_, err = Render(Options{Dir: dir})
	if want := "kustomization.yaml mixes line ends: 29 lines end in CRLF (\\r\\n), 1 in LF (\\n)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("want %q, got %v", want, err)
	}
	if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
		t.Errorf("a refused run changed files:\n%s", diff)
	}
}

// TestJobSpecAfterEmptyDocuments: a job.yaml that starts with separators ("---" lines, which kustomize and the
// function skip) hydrates to the component of the same job.yaml without them; hydrate read the empty first
// document and said the job spec was not in the build's output.
func TestJobSpecAfterEmptyDocuments(t *testing.T) {
	t.Parallel()
	root, _ := overlay(t, "multi-node-nonroot")
	dir := filepath.Join(root, "overlay")
	want, err := Render(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	want.Unlock()
	spec := filepath.Join(dir, "job.yaml")
	data, _ := os.ReadFile(spec)
	write(t, spec, "---\n---\n"+string(data))
	got, err := Render(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	got.Unlock()
	if diff := cmp.Diff(want.Component, got.Component); diff != "" {
		t.Errorf("the component differs (-without the separators +with them):\n%s", diff)
	}
}

// TestKustomizationKeyTwice: a field written twice in the kustomization
// (a second resources: list) is refused naming both lines, nothing written;
// kustomize's build said "nothing selected by MLOpsJob".
func TestKustomizationKeyTwice(t *testing.T) {
	root, _ := overlay(t, "multi-node-nonroot")
	dir := filepath.Join(root, "overlay")
	path := filepath.Join(dir, "kustomization.yaml")
	data, _ := os.ReadFile(path)
	write(t, path, string(data)+"resources:\n- extra.yaml\n")
	before := snapshot(t, root)
	_, err := Render(Options{Dir: dir})
	if err == nil || !regexp.MustCompile(`kustomization.yaml:\d+: resources: is written twice, first on line \d+; accepted: each field once`).MatchString(err.Error()) {
		t.Errorf("want the repeated resources: named, got %v", err)
	}
	if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
		t.Errorf("a refused run changed files:\n%s", diff)
	}
}

// TestEnvConfigMapBesideTheJob: a base that puts the job in a namespace gets
// the env ConfigMap there too, as the function writes it.
func TestEnvConfigMapBesideTheJob(t *testing.T) {
	t.Parallel()
	root, _ := overlay(t, "multi-node-nonroot")
	k, _ := os.ReadFile(filepath.Join(root, "base", "kustomization.yaml"))
	write(t, filepath.Join(root, "base", "kustomization.yaml"), "namespace: vision\n"+string(k))
	dir := filepath.Join(root, "overlay")
	hydrateDir(t, dir)
	for _, o := range kustomize(t, dir) {
		if ns := o["metadata"].(map[string]any)["namespace"]; (o["kind"] == "ConfigMap" || o["kind"] == "MPIJob") && ns != "vision" {
			t.Errorf("%s %v is in namespace %v, not the job's (vision)", o["kind"], o["metadata"], ns)
		}
	}
}

// TestMarksGone: `kustomize edit` and YAML formatters rewrite the
// kustomization without its comments, hydrate's marks among them, and sort
// its keys. hydrate finds its entries by name again (the env generator
// renamed in place when the job is renamed) and writes its marks back.
func TestMarksGone(t *testing.T) {
	t.Parallel()
	for _, rename := range []bool{false, true} {
		t.Run(fmt.Sprintf("renamed %v", rename), func(t *testing.T) {
			t.Parallel()
			root, _ := overlay(t, "multi-node-nonroot")
			dir := filepath.Join(root, "overlay")
			path := filepath.Join(dir, "kustomization.yaml")
			k, err := yaml.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			stripCommentsSortKeys(k.YNode())
			write(t, path, k.MustString())
			name := "resnet50"
			if rename {
				name = "resnet-b"
				spec, _ := os.ReadFile(filepath.Join(dir, "job.yaml"))
				write(t, filepath.Join(dir, "job.yaml"), strings.Replace(string(spec), "name: resnet50\nspec:\n", "name: resnet-b\nspec:\n  target: {name: resnet50}\n", 1))
			}
			ov, err := Render(Options{Dir: dir})
			if err != nil {
				t.Fatalf("hydrate after the marks are gone: %v", err)
			}
			if err := ov.Write(); err != nil {
				t.Fatal(err)
			}
			var configMaps []string
			for _, o := range kustomize(t, dir) {
				if o["kind"] == "ConfigMap" {
					// By the generator's name: kustomize's hash of the data follows it.
					configMaps = append(configMaps, envHashed.ReplaceAllString(o["metadata"].(map[string]any)["name"].(string), "$1"))
				}
			}
			if want := []string{name + "-mpijob-env"}; !slices.Equal(configMaps, want) {
				t.Errorf("ConfigMaps %v; want %v", configMaps, want)
			}
			text, _ := os.ReadFile(path)
			for _, want := range []string{name + "-mpijob-env # mlops-fn hydrate", name + "-mlops-fn-inputs # mlops-fn hydrate", "- mlops-fn # mlops-fn hydrate", "- job.yaml"} {
				if strings.Count(string(text), want) != 1 {
					t.Errorf("want %q once in kustomization.yaml:\n%s", want, text)
				}
			}
			if n := strings.Count(string(text), "-mlops-fn-inputs"); n != 1 {
				t.Errorf("%d inputs generators; want 1:\n%s", n, text)
			}
		})
	}
}

// TestRestoredFieldsAreSaid: hydrate's own fields of the env generator,
// edited by hand, are written back, and hydrate says which and why (it used
// to, silently).
func TestRestoredFieldsAreSaid(t *testing.T) {
	t.Parallel()
	root, _ := overlay(t, "multi-node-nonroot")
	dir := filepath.Join(root, "overlay")
	first, err := Render(Options{Dir: dir, Resources: []string{"../base"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Write(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "kustomization.yaml")
	text, _ := os.ReadFile(path)
	edited := strings.Replace(strings.Replace(string(text), "  envs:\n  - mlops.env\n", "  envs:\n  - site.env\n", 1), "disableNameSuffixHash: false", "disableNameSuffixHash: true", 1)
	if edited == string(text) {
		t.Fatalf("kustomization.yaml has no env generator to edit:\n%s", text)
	}
	write(t, path, edited)
	write(t, filepath.Join(dir, "site.env"), "WORKERS=2\n")
	ov, err := Render(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var said []string
	for _, r := range ov.Warnings {
		said = append(said, r.Message)
	}
	for _, want := range []string{
		"configMapGenerator resnet50-mpijob-env: envs[0]: site.env is hydrate's place: it writes mlops.env there",
		"configMapGenerator resnet50-mpijob-env: options.disableNameSuffixHash: true is hydrate's: it writes false",
	} {
		if !slices.ContainsFunc(said, func(s string) bool { return strings.Contains(s, want) }) {
			t.Errorf("hydrate does not say %q; it says %q", want, said)
		}
	}
}

// stripCommentsSortKeys does what `kustomize edit` does to a kustomization's
// form: no comments, map keys in order.
func stripCommentsSortKeys(n *yaml.Node) {
	n.HeadComment, n.LineComment, n.FootComment = "", "", ""
	if n.Kind == yaml.MappingNode {
		pairs := make([][2]*yaml.Node, 0, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			pairs = append(pairs, [2]*yaml.Node{n.Content[i], n.Content[i+1]})
		}
		slices.SortFunc(pairs, func(a, b [2]*yaml.Node) int { return strings.Compare(a[0].Value, b[0].Value) })
		n.Content = n.Content[:0]
		for _, p := range pairs {
			n.Content = append(n.Content, p[0], p[1])
		}
	}
	for _, c := range n.Content {
		stripCommentsSortKeys(c)
	}
}

// TestComponentAfterTheOverlay: a component of the user's listed after
// mlops-fn acts after its patches, so hydrate reads the base without it, as
// the guard does; the job gets both.
func TestComponentAfterTheOverlay(t *testing.T) {
	t.Parallel()
	root, _ := overlay(t, "multi-node-nonroot")
	dir := filepath.Join(root, "overlay")
	if err := os.MkdirAll(filepath.Join(dir, "ttl"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "ttl", "kustomization.yaml"), "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n- target: {kind: MPIJob}\n  patch: |\n    apiVersion: kubeflow.org/v2beta1\n    kind: MPIJob\n    metadata: {name: any}\n    spec: {runPolicy: {ttlSecondsAfterFinished: 60}}\n")
	k, _ := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	write(t, filepath.Join(dir, "kustomization.yaml"), strings.Replace(string(k), "- mlops-fn # mlops-fn hydrate: the job's patches, written by mlops-fn hydrate\n", "- mlops-fn # mlops-fn hydrate: the job's patches, written by mlops-fn hydrate\n- ttl\n", 1))
	hydrateDir(t, dir)
	for _, o := range kustomize(t, dir) {
		if o["kind"] == "MPIJob" {
			policy, _ := o["spec"].(map[string]any)["runPolicy"].(map[string]any)
			if policy["ttlSecondsAfterFinished"] != 60 || policy["cleanPodPolicy"] == nil {
				t.Errorf("runPolicy %v; want the component's ttlSecondsAfterFinished beside mlops-fn's cleanPodPolicy", policy)
			}
		}
	}
}

// TestEnvGeneratorExtrasReachTheJob: the user's literals and further env
// files on the env generator are part of the env ConfigMap in every mode;
// hydrate renders the job from it, as the function does as a kustomize
// transformer, so a TrainJob, which names each key in its env, names
// theirs too. An edit of a literal then fails the build, naming both files.
func TestEnvGeneratorExtrasReachTheJob(t *testing.T) {
	t.Parallel()
	for _, topology := range testutil.QuickstartFolders() {
		t.Run(topology, func(t *testing.T) {
			t.Parallel()
			dir := quickstartCopy(t, topology)
			write(t, filepath.Join(dir, "team.env"), "TEAM=vision\n")
			k, _ := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
			write(t, filepath.Join(dir, "kustomization.yaml"), strings.Replace(string(k), "  envs:\n  - mlops.env\n", "  envs:\n  - mlops.env\n  - team.env\n  literals:\n  - SITE=lab\n", 1))
			hydrateDir(t, dir)
			for _, o := range kustomize(t, dir) {
				switch o["kind"] {
				case "ConfigMap":
					if data := o["data"].(map[string]any); data["TEAM"] != "vision" || data["SITE"] != "lab" {
						t.Errorf("the env ConfigMap lacks TEAM or SITE: %v", data)
					}
				case "TrainJob":
					text, _ := yaml.FromMap(o)
					for _, key := range []string{"TEAM", "SITE"} {
						if !strings.Contains(text.MustString(), "key: "+key+"\n") {
							t.Errorf("the TrainJob's env lacks %s:\n%s", key, text.MustString())
						}
					}
				}
			}
			k, _ = os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
			write(t, filepath.Join(dir, "kustomization.yaml"), strings.Replace(string(k), "- SITE=lab\n", "- SITE=lab2\n", 1))
			const want = "testing value /mlops.env or kustomization.yaml changed: run mlops-fn hydrate on this folder; check failed: test failed"
			if _, err := build(filesys.MakeFsOnDisk(), dir); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("SITE edited in kustomization.yaml: want a build failing with %q, got %v", want, err)
			}
		})
	}
}

// TestInputChangedMidRun: an edit of job.yaml or mlops.env after Render read
// them is named (kustomize reads both again, so a later step fails on the
// edit, not on the user's files); an edit that leaves mlops.env's entries
// as they were is none, and neither is an unchanged folder.
func TestInputChangedMidRun(t *testing.T) {
	dir := quickstartCopy(t, "multi-node")
	r := &rendering{o: Options{Dir: dir, Config: "job.yaml"}, configPath: filepath.Join(dir, "job.yaml")}
	if got := r.inputChanged(); got != "" {
		t.Fatalf("before readSpec: inputChanged() = %q, want none", got)
	}
	if err := r.readSpec(); err != nil {
		t.Fatal(err)
	}
	envPath := filepath.Join(dir, "mlops.env")
	envText, _ := os.ReadFile(envPath)
	specText, _ := os.ReadFile(r.configPath)
	for _, c := range []struct {
		name       string
		path, text string
		want       string
	}{
		{"unchanged", envPath, string(envText), ""},
		{"a comment added to mlops.env", envPath, "# a note\n" + string(envText), ""},
		{"WORKERS edited", envPath, strings.Replace(string(envText), "WORKERS=2", "WORKERS=5", 1), envPath},
		{"job.yaml edited", r.configPath, string(specText) + "\n# edited\n", r.configPath},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := os.WriteFile(c.path, []byte(c.text), 0o644); err != nil {
				t.Fatal(err)
			}
			defer func() {
				_ = os.WriteFile(envPath, envText, 0o644)
				_ = os.WriteFile(r.configPath, specText, 0o644)
			}()
			if got := r.inputChanged(); got != c.want {
				t.Errorf("inputChanged() = %q, want %q", got, c.want)
			}
		})
	}
}
