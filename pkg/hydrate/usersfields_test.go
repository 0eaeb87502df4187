// SPDX-License-Identifier: Apache-2.0

package hydrate

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// kustomizeEdit runs the real `kustomize edit ARGS` in dir, as a CI job or a
// user does; the test skips without kustomize on PATH.
func kustomizeEdit(t *testing.T, dir string, args ...string) {
	t.Helper()
	bin, err := exec.LookPath("kustomize")
	if err != nil {
		t.Skip("kustomize is not on PATH: this test runs `kustomize edit` itself")
	}
	cmd := exec.Command(bin, append([]string{"edit"}, args...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kustomize edit %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// containers lists every container of an object, in a pod spec at any depth.
func containers(obj any) []map[string]any {
	var out []map[string]any
	switch v := obj.(type) {
	case map[string]any:
		for k, f := range v {
			if list, ok := f.([]any); ok && (k == "containers" || k == "initContainers") {
				for _, c := range list {
					if c, ok := c.(map[string]any); ok {
						out = append(out, c)
					}
				}
				continue
			}
			out = append(out, containers(f)...)
		}
	case []any:
		for _, f := range v {
			out = append(out, containers(f)...)
		}
	}
	return out
}

// metadataOf is an object's metadata.
func metadataOf(o map[string]any) map[string]any {
	m, _ := o["metadata"].(map[string]any)
	return m
}

// jobOf is the build's job (the object of kind), failing without one.
func jobOf(t *testing.T, objs []map[string]any, kind string) map[string]any {
	t.Helper()
	for _, o := range objs {
		if o["kind"] == kind {
			return o
		}
	}
	t.Fatalf("the build has no %s", kind)
	return nil
}

// TestKustomizeEditsAreTheUsers: kustomize's own fields, written into a
// hydrated overlay by `kustomize edit` (images:, namespace:, namePrefix:,
// nameSuffix:, labels:, commonLabels:, commonAnnotations:), are the user's:
// hydrate accepts and keeps them, a second run finds nothing to change, and
// the build carries the user's value, also where the job spec or mlops.env
// sets the same field (an image, Kueue's queue label): the kustomization
// wins, as it does over any base.
func TestKustomizeEditsAreTheUsers(t *testing.T) {
	t.Parallel()
	const image = "docker.io/intel/image-recognition"
	for _, c := range []struct {
		name, topology, kind string
		before               func(t *testing.T, dir string) // an edit hydrated before kustomize's
		edits                [][]string
		kept                 string // a line the kustomization keeps
		carries              func(t *testing.T, objs []map[string]any, job map[string]any)
	}{{
		name: "set image, new name and tag", topology: "multi-node", kind: "MPIJob",
		edits: [][]string{{"set", "image", image + "=registry.lab/ir:v2"}},
		kept:  "newName: registry.lab/ir",
		carries: func(t *testing.T, _ []map[string]any, job map[string]any) {
			cs := containers(job)
			if len(cs) != 2 {
				t.Fatalf("want the launcher's and the worker's containers, got %d", len(cs))
			}
			for _, ctr := range cs {
				if ctr["image"] != "registry.lab/ir:v2" {
					t.Errorf("container %v: image %v, want registry.lab/ir:v2", ctr["name"], ctr["image"])
				}
			}
		},
	}, {
		name: "set image, a tag", topology: "single-node", kind: "Pod",
		edits: [][]string{{"set", "image", image + ":v3"}},
		kept:  "newTag: v3",
		carries: func(t *testing.T, _ []map[string]any, job map[string]any) {
			for _, ctr := range containers(job) {
				if ctr["image"] != image+":v3" {
					t.Errorf("container %v: image %v, want %s:v3", ctr["name"], ctr["image"], image)
				}
			}
		},
	}, {
		// Not a containers list: the component's configuration names it for kustomize.
		name: "set image, a TrainJob's trainer", topology: "trainjob", kind: "TrainJob",
		edits: [][]string{{"set", "image", "docker.io/pytorch/pytorch=registry.lab/pt:v2"}},
		kept:  "newName: registry.lab/pt",
		carries: func(t *testing.T, _ []map[string]any, job map[string]any) {
			trainer, _ := job["spec"].(map[string]any)["trainer"].(map[string]any)
			if trainer["image"] != "registry.lab/pt:v2" {
				t.Errorf("spec.trainer.image %v, want registry.lab/pt:v2", trainer["image"])
			}
		},
	}, {
		name: "set namespace", topology: "elastic", kind: "PyTorchJob",
		edits: [][]string{{"set", "namespace", "team-a"}},
		kept:  "namespace: team-a",
		carries: func(t *testing.T, objs []map[string]any, _ map[string]any) {
			for _, o := range objs {
				if ns := metadataOf(o)["namespace"]; ns != "team-a" {
					t.Errorf("%v/%v: namespace %v, want team-a", o["kind"], metadataOf(o)["name"], ns)
				}
			}
		},
	}, {
		name: "set nameprefix and namesuffix", topology: "multi-node", kind: "MPIJob",
		edits: [][]string{{"set", "nameprefix", "dev-"}, {"set", "namesuffix", "--", "-b"}},
		kept:  "namePrefix: dev-",
		carries: func(t *testing.T, _ []map[string]any, job map[string]any) {
			if name := metadataOf(job)["name"]; name != "dev-resnet50-training-b" {
				t.Errorf("the job is named %v, want dev-resnet50-training-b", name)
			}
			for _, ctr := range containers(job) {
				if !strings.Contains(fmt.Sprint(ctr["envFrom"]), "dev-resnet50-training-mpijob-env-b") {
					t.Errorf("container %v reads %v, want the renamed env ConfigMap", ctr["name"], ctr["envFrom"])
				}
			}
		},
	}, {
		name: "set nameprefix, the job generated", topology: "multi-node", kind: "MPIJob",
		before: func(t *testing.T, dir string) {
			// A base without the job: the component holds the whole job.
			k, _ := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
			write(t, filepath.Join(dir, "kustomization.yaml"), strings.Replace(string(k), "/tensorflow/k8s/mlops/multi-node\n", "/tensorflow/k8s/mlops/base\n", 1))
			hydrateDir(t, dir)
			if _, err := os.Stat(filepath.Join(dir, ComponentDir, "mpijob.yaml")); err != nil {
				t.Fatalf("the component holds no job: %v", err)
			}
		},
		edits: [][]string{{"set", "nameprefix", "dev-"}},
		kept:  "namePrefix: dev-",
		carries: func(t *testing.T, _ []map[string]any, job map[string]any) {
			if name := metadataOf(job)["name"]; name != "dev-resnet50-training" {
				t.Errorf("the job is named %v, want dev-resnet50-training", name)
			}
			for _, ctr := range containers(job) {
				if !strings.Contains(fmt.Sprint(ctr["envFrom"]), "dev-resnet50-training-mpijob-env") {
					t.Errorf("container %v reads %v, want the renamed env ConfigMap", ctr["name"], ctr["envFrom"])
				}
			}
		},
	}, {
		name: "add label and annotation", topology: "trainjob", kind: "TrainJob",
		edits: [][]string{{"add", "label", "team:a"}, {"add", "label", "--without-selector", "tier:gold"}, {"add", "annotation", "owner:me"}},
		kept:  "owner: me",
		carries: func(t *testing.T, _ []map[string]any, job map[string]any) {
			m := metadataOf(job)
			labels, _ := m["labels"].(map[string]any)
			annotations, _ := m["annotations"].(map[string]any)
			if labels["team"] != "a" || labels["tier"] != "gold" || annotations["owner"] != "me" {
				t.Errorf("the job's labels %v and annotations %v lack team=a, tier=gold, owner=me", labels, annotations)
			}
		},
	}, {
		name: "a label mlops.env sets too", topology: "multi-node", kind: "MPIJob",
		before: func(t *testing.T, dir string) {
			env, _ := os.ReadFile(filepath.Join(dir, "mlops.env"))
			write(t, filepath.Join(dir, "mlops.env"), string(env)+"QUEUE=team-a\n")
			hydrateDir(t, dir)
		},
		edits: [][]string{{"add", "label", "--without-selector", "kueue.x-k8s.io/queue-name:team-b"}},
		kept:  "kueue.x-k8s.io/queue-name: team-b",
		carries: func(t *testing.T, _ []map[string]any, job map[string]any) {
			labels, _ := metadataOf(job)["labels"].(map[string]any)
			if labels["kueue.x-k8s.io/queue-name"] != "team-b" {
				t.Errorf("the job's queue label: %v, want the kustomization's team-b", labels["kueue.x-k8s.io/queue-name"])
			}
		},
	}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := quickstartCopy(t, c.topology)
			if c.before != nil {
				c.before(t, dir)
			}
			for _, args := range c.edits {
				kustomizeEdit(t, dir, args...)
			}
			hydrateDir(t, dir)
			text, _ := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
			if !strings.Contains(string(text), c.kept) {
				t.Errorf("hydrate dropped %q from the kustomization:\n%s", c.kept, text)
			}
			again, err := Render(Options{Dir: dir})
			if err != nil {
				t.Fatalf("hydrate again: %v", err)
			}
			if stale := again.Stale(); len(stale) > 0 {
				t.Errorf("hydrated, yet stale: %v", stale)
			}
			objs := kustomize(t, dir)
			c.carries(t, objs, jobOf(t, objs, c.kind))
		})
	}
}

// TestCheckComparesObjects: `hydrate --check` (Drift) compares what the
// folder builds with what it would build once hydrated, not the files: after
// `kustomize edit set namespace`, the component's files differ from a fresh
// render (the namespace in them) yet build the same objects, which passes;
// an edit of mlops.env that was not hydrated fails, naming the first object
// and field that differ, although the guard refuses the folder's build.
func TestCheckComparesObjects(t *testing.T) {
	t.Parallel()
	dir := quickstartCopy(t, "elastic")
	kustomizeEdit(t, dir, "set", "namespace", "team-a")
	ov, err := Render(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(ov.Stale()) == 0 {
		t.Fatal("the files hydrate would write are the folder's: the case tests nothing")
	}
	if drift, err := ov.Drift(); err != nil || drift != "" {
		t.Errorf("after kustomize edit set namespace: want no drift, got %q, %v", drift, err)
	}

	env, _ := os.ReadFile(filepath.Join(dir, "mlops.env"))
	write(t, filepath.Join(dir, "mlops.env"), strings.Replace(string(env), "\nWORKERS=2\n", "\nWORKERS=3\n", 1))
	if ov, err = Render(Options{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	const want = "PyTorchJob/resnet50-elastic (namespace team-a): spec.pytorchReplicaSpecs.Worker.replicas: hydrate would build 3, the folder builds 2"
	if drift, err := ov.Drift(); err != nil || drift != want {
		t.Errorf("after an edit of WORKERS: want drift %q, got %q, %v", want, drift, err)
	}
	if err := ov.Write(); err != nil {
		t.Fatal(err)
	}
	if drift, err := ov.Drift(); err != nil || drift != "" {
		t.Errorf("hydrated: want no drift, got %q, %v", drift, err)
	}
}

// TestBuildsPerWrite: a write of the quickstart builds the overlay twice,
// the base and the hydrated overlay: the function's run reuses the base's
// build where the kustomization has no field that acts after the component,
// and the write reads its files back rather than building them again. Not
// parallel: builds counts every build of the package.
func TestBuildsPerWrite(t *testing.T) {
	dir := quickstartCopy(t, "multi-node")
	env, _ := os.ReadFile(filepath.Join(dir, "mlops.env"))
	write(t, filepath.Join(dir, "mlops.env"), strings.Replace(string(env), "\nWORKERS=2\n", "\nWORKERS=3\n", 1))
	before := builds.Load()
	hydrateDir(t, dir)
	if n := builds.Load() - before; n != 2 {
		t.Errorf("a write built %d times, want 2", n)
	}
	// A field acting after the component: the function's input is built too.
	kustomizeEdit(t, dir, "set", "image", "docker.io/intel/image-recognition=registry.lab/ir:v2")
	before = builds.Load()
	hydrateDir(t, dir)
	if n := builds.Load() - before; n != 3 {
		t.Errorf("a write with images: built %d times, want 3", n)
	}
}

// TestOwnComponentWithAnnotations: a component of the user's that adds
// annotations and labels, listed before mlops-fn's (so that they reach the
// job spec, a resource the guard reads) or after it: hydrate writes the
// overlay, whose build carries them and refuses an edit of job.yaml that was
// not hydrated. The guard compares the spec as the build reads it, not as
// the file parses: before, the build said "/job.yaml changed: run mlops-fn
// hydrate", right after hydrate.
func TestOwnComponentWithAnnotations(t *testing.T) {
	t.Parallel()
	for _, where := range []string{"before", "after"} {
		t.Run(where, func(t *testing.T) {
			t.Parallel()
			dir := quickstartCopy(t, "multi-node")
			if err := os.MkdirAll(filepath.Join(dir, "team"), 0o755); err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(dir, "team", "kustomization.yaml"), "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\ncommonAnnotations:\n  team.example/owner: ml\ncommonLabels:\n  team: ml\n")
			k, _ := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
			const ours = "- mlops-fn # mlops-fn hydrate: the job's patches, written by mlops-fn hydrate\n"
			text := strings.Replace(string(k), ours, "- team\n"+ours, 1)
			if where == "after" {
				text = strings.Replace(string(k), ours, ours+"- team\n", 1)
			}
			if text == string(k) {
				t.Fatalf("the quickstart's kustomization lists no %q", ours)
			}
			write(t, filepath.Join(dir, "kustomization.yaml"), text)
			hydrateDir(t, dir)
			job := jobOf(t, kustomize(t, dir), "MPIJob")
			annotations, _ := metadataOf(job)["annotations"].(map[string]any)
			labels, _ := metadataOf(job)["labels"].(map[string]any)
			if annotations["team.example/owner"] != "ml" || labels["team"] != "ml" {
				t.Errorf("the job's annotations %v and labels %v lack the component's", annotations, labels)
			}
			spec, _ := os.ReadFile(filepath.Join(dir, "job.yaml"))
			write(t, filepath.Join(dir, "job.yaml"), strings.Replace(string(spec), "fp32-training\n", "fp32-training-v2\n", 1))
			if _, err := build(filesys.MakeFsOnDisk(), dir); err == nil || !strings.Contains(err.Error(), "/job.yaml changed: run mlops-fn hydrate") {
				t.Errorf("an edit of job.yaml that was not hydrated: want the guard's refusal, got %v", err)
			}
		})
	}
}
