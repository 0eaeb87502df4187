// SPDX-License-Identifier: Apache-2.0

package processor

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

const unrelated = `# team tooling
apiVersion: apps/v1
kind: Deployment
metadata:
  name: tensorboard # keep me
spec:
  replicas: 1
---
apiVersion: v1
kind: Service
metadata: {name: tensorboard, labels: {b: "2", a: "1"}}
spec:
  ports: [{port: 6006}]
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: other
data:
  z: "1"
  a: "2"
`

func process(t *testing.T, env, spec string, items []*yaml.RNode) []*yaml.RNode {
	t.Helper()
	config, err := fuzzJob(env, spec)
	if err != nil {
		t.Fatal(err)
	}
	rl := &framework.ResourceList{FunctionConfig: config, Items: copyAll(items)}
	if err := (Processor{}).Process(rl); err != nil {
		t.Fatal(err)
	}
	return rl.Items
}

const propertyEnv = "WORKERS=3\nGPUS_PER_WORKER=2\nUSER_ID=1000\nGROUP_ID=1000\nNFS_SERVER=nfs\nNFS_PATH=/export\nNFS_MOUNT_PATH=/w\nZ=1\nA=2\nM=3\n"
const propertySpec = "  nodeSelector: {b: \"2\", a: \"1\", c: \"3\"}\n  volumes: [{name: data, mountPath: /data, readOnly: true, nfs: {path: /d}}]\n"

// TestDeterministic: the same input gives the same bytes, run after run, in
// spite of Go's randomised map order.
func TestDeterministic(t *testing.T) {
	t.Parallel()
	items, err := parseItems(unrelated)
	if err != nil {
		t.Fatal(err)
	}
	first := serialize(process(t, propertyEnv, propertySpec, items))
	for i := 0; i < 25; i++ {
		if got := serialize(process(t, propertyEnv, propertySpec, items)); got != first {
			t.Fatalf("run %d differs:\n%s\n---- first:\n%s", i, got, first)
		}
	}
}

// TestOrderIndependent: shuffling the input items changes only their order:
// every object comes out the same.
func TestOrderIndependent(t *testing.T) {
	t.Parallel()
	items, err := parseItems(unrelated + "---\napiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata:\n  name: bert\nspec:\n  mpiReplicaSpecs:\n    Worker:\n      template:\n        spec:\n          containers: [{name: bert}]\n")
	if err != nil {
		t.Fatal(err)
	}
	byID := func(nodes []*yaml.RNode) map[string]string {
		m := map[string]string{}
		for _, n := range nodes {
			m[n.GetKind()+"/"+n.GetName()] = n.MustString()
		}
		return m
	}
	want := byID(process(t, propertyEnv, propertySpec, items))
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 10; i++ {
		shuffled := copyAll(items)
		r.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
		got := byID(process(t, propertyEnv, propertySpec, shuffled))
		for id, text := range want {
			if got[id] != text {
				t.Fatalf("shuffle %d: %s differs:\n%s\n---- unshuffled:\n%s", i, id, got[id], text)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("shuffle %d: %d objects, want %d", i, len(got), len(want))
		}
	}
}

// TestUpdatedInPlace: a generated object from an earlier run is replaced where
// it stands when mlops.env changes, never added a second time.
func TestUpdatedInPlace(t *testing.T) {
	t.Parallel()
	items, err := parseItems(unrelated)
	if err != nil {
		t.Fatal(err)
	}
	first := process(t, propertyEnv, propertySpec, items)
	second := process(t, strings.Replace(propertyEnv, "WORKERS=3", "WORKERS=5", 1), propertySpec, first)
	if len(second) != len(first) {
		t.Fatalf("%d items after the second run, %d after the first: %s", len(second), len(first), itemIDs(second))
	}
	// The env ConfigMap, named by the hash of its data, is the new data's
	// where the old one stood.
	last := len(first) - 1
	for i := range first {
		if first[i].GetKind() != second[i].GetKind() || first[i].GetName() != second[i].GetName() && i != last {
			t.Fatalf("item %d moved: %s", i, itemIDs(second))
		}
	}
	if old, cm := first[last].GetName(), second[last].GetName(); second[last].GetKind() != "ConfigMap" || cm == old || !strings.HasPrefix(cm, "bert-mpijob-env-") {
		t.Errorf("the env ConfigMap of WORKERS=5 is %s, that of WORKERS=3 %s: want two names of bert-mpijob-env and a hash", cm, old)
	}
	job := second[len(second)-2]
	workers, _ := job.Pipe(yaml.Lookup("spec", "mpiReplicaSpecs", "Worker", "replicas"))
	if workers == nil || workers.YNode().Value != "5" {
		t.Errorf("the MPIJob was not updated: %s", job.MustString())
	}
	if !strings.Contains(serialize(second), "-np\n            - \"10\"") {
		t.Errorf("-np does not follow WORKERS x slots (5 x 2):\n%s", job.MustString())
	}
}

// TestKindSwitchReplacesTheJob: when the spec changes jobKind, or a target
// arrives, the job an earlier run generated goes: the package never holds two
// jobs for one spec. Other items, and jobs of other specs, stay.
func TestKindSwitchReplacesTheJob(t *testing.T) {
	t.Parallel()
	other := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: gpt\n  annotations:\n    mlops-fn.dev/generated-by: MLOpsJob/gpt\nspec: {containers: [{name: gpt, image: gpt}]}\n"
	items, err := parseItems(unrelated + "---\n" + other)
	if err != nil {
		t.Fatal(err)
	}
	multi := process(t, propertyEnv, propertySpec, items)
	target := "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {name: bert}\nspec: {mpiReplicaSpecs: {Launcher: {template: {spec: {containers: [{name: bert}]}}}, Worker: {template: {spec: {containers: [{name: bert}]}}}}}\n"
	withTarget, err := parseItems(target)
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		spec  string
		items []*yaml.RNode
		want  string
	}{
		"multi-node to single-node": {propertySpec + "  jobKind: Pod\n", multi, "Deployment/tensorboard,Service/tensorboard,ConfigMap/other,Pod/gpt,Pod/bert,ConfigMap/bert-pod-env-2g697tf9c2"},
		"multi-node to elastic":     {propertySpec + "  jobKind: PyTorchJob\n", multi, "Deployment/tensorboard,Service/tensorboard,ConfigMap/other,Pod/gpt,PyTorchJob/bert,ConfigMap/bert-pytorchjob-env-2g697tf9c2"},
		"a target arrives":          {propertySpec, append(copyAll(multi), withTarget...), "Deployment/tensorboard,Service/tensorboard,ConfigMap/other,Pod/gpt,ConfigMap/bert-mpijob-env-2g697tf9c2,MPIJob/bert"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := process(t, propertyEnv, tc.spec, tc.items)
			if itemIDs(got) != tc.want {
				t.Fatalf("got %s\nwant %s", itemIDs(got), tc.want)
			}
		})
	}
}

// TestNamespacesKeepApart: a spec leaves the job a same-named spec of another
// namespace generated, and the ConfigMaps it writes beside targets in two
// namespaces are filed apart (kpt refuses two objects in one file).
func TestNamespacesKeepApart(t *testing.T) {
	t.Parallel()
	config := func(ns string) string {
		return "apiVersion: mlops-fn.dev/v1alpha1\nkind: MLOpsJob\nmetadata:\n  name: bert\n  namespace: " + ns +
			"\nspec:\n  image: docker.io/nlp/bert:1\n  command: [python, train.py]\n  envFile:\n    inline: \"WORKERS=2\\n\"\n"
	}
	run := func(spec string, items []*yaml.RNode) []*yaml.RNode {
		t.Helper()
		cfg, err := yaml.Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		rl := &framework.ResourceList{FunctionConfig: cfg, Items: copyAll(items)}
		if err := (Processor{}).Process(rl); err != nil {
			t.Fatal(err)
		}
		return rl.Items
	}
	teamA := run(config("team-a"), nil)
	both := run(config("team-b"), teamA)
	var jobs []string
	files := map[string]string{}
	for _, n := range both {
		file := n.GetAnnotations()["internal.config.kubernetes.io/path"]
		if other, taken := files[file]; taken {
			t.Fatalf("%s and %s/%s share the file %s", other, n.GetKind(), n.GetNamespace(), file)
		}
		files[file] = n.GetKind() + "/" + n.GetNamespace()
		if n.GetKind() == "MPIJob" {
			jobs = append(jobs, n.GetNamespace())
		}
	}
	if strings.Join(jobs, ",") != "team-a,team-b" {
		t.Fatalf("want the MPIJobs of team-a and team-b, got namespaces %v: %s", jobs, itemIDs(both))
	}

	targets, err := parseItems("apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {name: bert, namespace: a}\n---\n" +
		"apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {name: bert, namespace: b}\n")
	if err != nil {
		t.Fatal(err)
	}
	// A spec of namespace a patches its job there; bert of namespace b is another's.
	var patched []string
	for _, n := range run(config("a"), targets) {
		if n.GetKind() == "ConfigMap" || n.Field("spec") != nil {
			patched = append(patched, n.GetKind()+"/"+n.GetNamespace())
		}
	}
	if got, want := strings.Join(patched, ","), "MPIJob/a,ConfigMap/a"; got != want {
		t.Fatalf("got %s, want %s: the job of namespace b must pass through untouched", got, want)
	}
}

// TestTargetAfterGeneratedJob: when a target arrives after a generated job, the
// ConfigMap goes to the target's namespace even though the generated job, ahead
// of it among the items, is dropped, and the old ConfigMap with it.
func TestTargetAfterGeneratedJob(t *testing.T) {
	t.Parallel()
	first := process(t, propertyEnv, propertySpec, nil)
	target, err := parseItems("apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {name: bert, namespace: ml}\nspec: {mpiReplicaSpecs: {Launcher: {template: {spec: {containers: [{name: bert}]}}}, Worker: {template: {spec: {containers: [{name: bert}]}}}}}\n")
	if err != nil {
		t.Fatal(err)
	}
	items := append(first, target...)
	var got []string
	for _, n := range process(t, propertyEnv, propertySpec, items) {
		got = append(got, n.GetKind()+"/"+n.GetNamespace()+"/"+n.GetName())
	}
	if want := "MPIJob/ml/bert,ConfigMap/ml/bert-mpijob-env-2g697tf9c2"; strings.Join(got, ",") != want {
		t.Fatalf("got %s\nwant %s", strings.Join(got, ","), want)
	}
}

// TestRenamedConfigMapReplacesTheOld: a spec that names another ConfigMap
// leaves no generated ConfigMap of the old name behind.
func TestRenamedConfigMapReplacesTheOld(t *testing.T) {
	t.Parallel()
	first := process(t, propertyEnv, propertySpec, nil)
	config, err := fuzzJob(propertyEnv, propertySpec)
	if err != nil {
		t.Fatal(err)
	}
	if err := config.PipeE(yaml.Lookup("spec", "envFile"), yaml.SetField("configMapName", yaml.NewStringRNode("other-env"))); err != nil {
		t.Fatal(err)
	}
	rl := &framework.ResourceList{FunctionConfig: config, Items: copyAll(first)}
	if err := (Processor{}).Process(rl); err != nil {
		t.Fatal(err)
	}
	if got, want := itemIDs(rl.Items), "MPIJob/bert,ConfigMap/other-env-2g697tf9c2"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

// TestRenamedSpecDropsItsOldObjects: where the runner hands the function the
// package's job specs (kpt), what a spec no longer among them generated is
// dropped; what another spec of the package generated stays, and so does a
// spec's ConfigMap beside its target in another namespace, and everything
// where the specs are not among the items (kustomize, standalone).
func TestRenamedSpecDropsItsOldObjects(t *testing.T) {
	t.Parallel()
	first := process(t, propertyEnv, propertySpec, nil)
	spec := func(name string) (*yaml.RNode, *yaml.RNode) {
		t.Helper()
		config, err := fuzzJob(propertyEnv, propertySpec)
		if err != nil {
			t.Fatal(err)
		}
		if err := config.SetName(name); err != nil {
			t.Fatal(err)
		}
		return config, config.Copy()
	}
	gpt, err := parseItems("apiVersion: mlops-fn.dev/v1alpha1\nkind: MLOpsJob\nmetadata: {name: gpt}\n---\n" +
		"apiVersion: v1\nkind: Pod\nmetadata:\n  name: gpt\n  annotations:\n    mlops-fn.dev/generated-by: MLOpsJob/gpt\nspec: {containers: [{name: gpt, image: gpt}]}\n")
	if err != nil {
		t.Fatal(err)
	}
	target, err := parseItems("apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {name: bert, namespace: team}\nspec: {mpiReplicaSpecs: {Launcher: {template: {spec: {containers: [{name: bert}]}}}, Worker: {template: {spec: {containers: [{name: bert}]}}}}}\n")
	if err != nil {
		t.Fatal(err)
	}
	config, item := spec("bert")
	beside := append(copyAll(target), item)
	rl := &framework.ResourceList{FunctionConfig: config, Items: beside}
	if err := (Processor{}).Process(rl); err != nil {
		t.Fatal(err)
	}
	withTarget := rl.Items // the ConfigMap generated beside the target, in namespace team
	for name, tc := range map[string]struct {
		name           string
		items          []*yaml.RNode
		specAmongItems bool
		want           string
		removed        int
	}{
		"renamed":                   {"bert-v2", append(copyAll(first), copyAll(gpt)...), true, "MLOpsJob/gpt,Pod/gpt,MLOpsJob/bert-v2,MPIJob/bert-v2,ConfigMap/bert-v2-mpijob-env-2g697tf9c2", 2},
		"renamed, spec unknown":     {"bert-v2", append(copyAll(first), copyAll(gpt)...), false, "MPIJob/bert,ConfigMap/bert-mpijob-env-2g697tf9c2,MLOpsJob/gpt,Pod/gpt,MPIJob/bert-v2,ConfigMap/bert-v2-mpijob-env-2g697tf9c2", 0},
		"ConfigMap beside a target": {"bert", append(copyAll(withTarget), copyAll(gpt)...), false, "MPIJob/bert,MLOpsJob/bert,ConfigMap/bert-mpijob-env-2g697tf9c2,MLOpsJob/gpt,Pod/gpt", 0},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			config, item := spec(tc.name)
			items := tc.items
			if tc.specAmongItems {
				items = append(items, item)
			}
			rl := &framework.ResourceList{FunctionConfig: config, Items: items}
			if err := (Processor{}).Process(rl); err != nil {
				t.Fatal(err)
			}
			if got := itemIDs(rl.Items); got != tc.want {
				t.Fatalf("got %s\nwant %s", got, tc.want)
			}
			var removed int
			for _, r := range rl.Results {
				if strings.Contains(r.Message, "removed: MLOpsJob bert generated it") {
					removed++
				}
			}
			if removed != tc.removed {
				t.Errorf("%d warnings name a removed object, want %d: %v", removed, tc.removed, rl.Results)
			}
		})
	}
}

// TestRenamedSpecKeepsWhatATargetReads: a job renamed in its spec leaves its
// target (the user's file) behind, and that target still reads the env
// ConfigMap the old name's run wrote (an MPIJob by envFrom, a TrainJob by its
// trainer's env): the ConfigMap stays, and a warning says why.
func TestRenamedSpecKeepsWhatATargetReads(t *testing.T) {
	for kind, target := range map[string]string{
		"MPIJob":   "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {name: bert}\nspec: {mpiReplicaSpecs: {Launcher: {template: {spec: {containers: [{name: bert}]}}}, Worker: {template: {spec: {containers: [{name: bert}]}}}}}\n",
		"TrainJob": "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: bert}\nspec: {runtimeRef: {name: torch-distributed}}\n",
	} {
		t.Run(kind, func(t *testing.T) {
			spec := func(name string) *yaml.RNode {
				t.Helper()
				config, err := fuzzJob("WORKERS=2\nUSER_ID=1000\n", "  jobKind: "+kind+"\n")
				if err != nil {
					t.Fatal(err)
				}
				if err := config.SetName(name); err != nil {
					t.Fatal(err)
				}
				return config
			}
			items, err := parseItems(target)
			if err != nil {
				t.Fatal(err)
			}
			rl := &framework.ResourceList{FunctionConfig: spec("bert"), Items: append(items, spec("bert"))}
			if err := (Processor{}).Process(rl); err != nil {
				t.Fatal(err)
			}
			env := strings.ToLower(kind)
			renamed := slices.DeleteFunc(rl.Items, isSpec)
			rl = &framework.ResourceList{FunctionConfig: spec("bert-v2"), Items: append(renamed, spec("bert-v2"))}
			if err := (Processor{}).Process(rl); err != nil {
				t.Fatal(err)
			}
			// One mlops.env: the same hash of its data after either name.
			want := fmt.Sprintf("%s/bert,ConfigMap/bert-%s-env-9m28g45b4b,MLOpsJob/bert-v2,%s/bert-v2,ConfigMap/bert-v2-%s-env-9m28g45b4b", kind, env, kind, env)
			if got := itemIDs(rl.Items); got != want {
				t.Fatalf("got %s\nwant %s", got, want)
			}
			if msg := fmt.Sprintf("ConfigMap/bert-%s-env-9m28g45b4b: kept: MLOpsJob bert generated it, and no job spec among the inputs names that job now (renamed?), but %s/bert still reads it", env, kind); !strings.Contains(fmt.Sprint(rl.Results), msg) {
				t.Errorf("no warning %q: %v", msg, rl.Results)
			}
		})
	}
}

// TestTargetReadsTheNewEnvOnly: a target patched by an earlier run, run again
// after mlops.env changed, reads the new env ConfigMap (another hash) alone:
// the earlier run's reference is mlops-fn's, not the user's, so neither an
// MPIJob's envFrom nor a TrainJob's trainer env keeps it, and the old
// ConfigMap goes.
func TestTargetReadsTheNewEnvOnly(t *testing.T) {
	t.Parallel()
	for kind, target := range map[string]string{
		"MPIJob":   "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {name: bert}\nspec: {mpiReplicaSpecs: {Launcher: {template: {spec: {containers: [{name: bert}]}}}, Worker: {template: {spec: {containers: [{name: bert}]}}}}}\n",
		"TrainJob": "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: bert}\nspec: {runtimeRef: {name: torch-distributed}}\n",
	} {
		items, err := parseItems(target)
		if err != nil {
			t.Fatal(err)
		}
		spec := "  jobKind: " + kind + "\n"
		first := process(t, "WORKERS=2\nUSER_ID=1000\n", spec, items)
		second := process(t, "WORKERS=3\nUSER_ID=1000\n", spec, first)
		old, cm := first[len(first)-1].GetName(), second[len(second)-1].GetName()
		if !strings.HasPrefix(old, "bert-"+strings.ToLower(kind)+"-env-") || cm == old || len(second) != len(first) {
			t.Fatalf("%s: the first run's ConfigMap %s, the second's %s: want two hashes of one name, the old one gone: %s", kind, old, cm, itemIDs(second))
		}
		job := second[0].MustString()
		if strings.Contains(job, old) || !strings.Contains(job, "name: "+cm) {
			t.Errorf("%s: the job still reads %s, or not %s:\n%s", kind, old, cm, job)
		}
	}
}
