// SPDX-License-Identifier: Apache-2.0

package hydrate

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	kubeflow "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/mlops-fn/mlops-fn/internal/testutil"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/kinds"
	"github.com/mlops-fn/mlops-fn/pkg/processor"
	"github.com/mlops-fn/mlops-fn/pkg/schema"
)

// committedOverlays are the hydrated folders in the repository: the quickstart's and the examples'.
func committedOverlays(t *testing.T) []string {
	t.Helper()
	var dirs []string
	for _, pattern := range []string{"../../quickstart/k8s/mlops/*/job.yaml", "../../examples/*/job.yaml", "../../examples/*/*/job.yaml"} {
		jobs, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs {
			dirs = append(dirs, filepath.Dir(j))
		}
	}
	if len(dirs) < 8 {
		t.Fatalf("found only %d hydrated overlays: %v", len(dirs), dirs)
	}
	return dirs
}

// TestCommittedOverlays: every committed overlay is what mlops-fn renders
// now (no drift), kubectl's kustomize defaults build it, and its job decodes
// strictly into the upstream type and passes the operators' validation.
func TestCommittedOverlays(t *testing.T) {
	t.Parallel()
	for _, dir := range committedOverlays(t) {
		t.Run(dir, func(t *testing.T) {
			t.Parallel()
			ov, err := Render(Options{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			if stale := ov.Stale(); len(stale) > 0 {
				t.Fatalf("stale: %v; run `make hydrate` and commit", stale)
			}
			nodes, err := build(filesys.MakeFsOnDisk(), dir)
			if err != nil {
				t.Fatalf("kustomize build: %v", err)
			}
			jobs := 0
			for _, r := range nodes {
				b, err := r.MarshalJSON()
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case kinds.All.Is(r.GetKind()):
					// Strictly decoded, and checked as the operator's own validation or webhook would.
					n, err := yaml.Parse(string(b))
					if err != nil {
						t.Fatal(err)
					}
					if _, errs := processor.Check(n); len(errs) > 0 {
						t.Errorf("%s is refused: %v", r.GetKind(), errs)
					}
					if r.GetKind() == "MPIJob" {
						job := &kubeflow.MPIJob{}
						decode(t, b, job)
						if c := job.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeWorker].Template.Spec.Containers[0]; c.Image == "" || len(c.Command) == 0 {
							t.Errorf("the worker container lost its image or command: %+v", c)
						}
					}
					jobs++
				case r.GetKind() == "ConfigMap":
					decode(t, b, &corev1.ConfigMap{})
				}
			}
			if jobs != 1 {
				t.Errorf("want one job, got %d", jobs)
			}
		})
	}
}

func decode(t *testing.T, b []byte, into any) {
	t.Helper()
	if err := testutil.DecodeStrict(b, into); err != nil {
		t.Errorf("does not decode strictly: %v", err)
	}
}

// TestRenamesReachTheJob: an overlay over a committed one that renames
// everything (namespace, namePrefix, nameSuffix) still gives a job whose pod
// specs name the renamed ConfigMap and ServiceAccount: the hydrated
// kustomization's configurations: teaches kustomize the CRDs' references.
func TestRenamesReachTheJob(t *testing.T) {
	t.Parallel()
	for _, k := range kinds.All {
		if k.ReferencePodSpecs == nil {
			continue // a Pod: kustomize knows its references
		}
		overlay := testutil.QuickstartFolder[k.JobKind()]
		t.Run(overlay, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			target, err := filepath.Abs(filepath.Join("../../quickstart/k8s/mlops", overlay))
			if err != nil {
				t.Fatal(err)
			}
			rel, err := filepath.Rel(dir, target)
			if err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(dir, "kustomization.yaml"), "namespace: ml\nnamePrefix: dev-\nnameSuffix: -v2\nresources:\n- "+rel+"\n")
			names := map[string]bool{}
			var jobs []map[string]any
			for _, obj := range kustomize(t, dir) {
				kind := obj["kind"].(string)
				names[kind+"/"+obj["metadata"].(map[string]any)["name"].(string)] = true
				if kinds.All.Is(kind) {
					jobs = append(jobs, obj)
				}
			}
			if len(jobs) != 1 {
				t.Fatalf("want one job, got %d", len(jobs))
			}
			// Every reference of the job, wherever its kind keeps them.
			refs := 0
			var walk func(v any)
			walk = func(v any) {
				switch v := v.(type) {
				case map[string]any:
					for k, inner := range v {
						ref, kind := "", ""
						switch k {
						case "serviceAccountName":
							ref, kind = fmt.Sprint(inner), "ServiceAccount"
						case "configMapRef", "configMapKeyRef":
							ref, kind = fmt.Sprint(inner.(map[string]any)["name"]), "ConfigMap"
						}
						if kind != "" {
							refs++
							if !names[kind+"/"+ref] {
								t.Errorf("%s names %s %q, not in the build: %v", k, kind, ref, names)
							}
						}
						walk(inner)
					}
				case []any:
					for _, inner := range v {
						walk(inner)
					}
				}
			}
			walk(jobs[0])
			if refs < 2 {
				t.Fatalf("found %d references to check; want the ServiceAccount and the ConfigMap at least", refs)
			}
		})
	}
}

// TestOneJobItsOwnObjects: the multi-node and single-node quickstarts (both
// jobs are named resnet50-training) applied to one namespace share no object
// but the base's ServiceAccount (docs/hydrate.md: "One job, its own objects"), so
// neither overwrites the other's env ConfigMap and kubectl delete -k of one
// keeps the other's.
func TestOneJobItsOwnObjects(t *testing.T) {
	t.Parallel()
	ids := map[string][]string{}
	for _, topology := range testutil.QuickstartFolders() {
		nodes, err := stagedBuild("../../quickstart/k8s/mlops/"+topology, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range nodes {
			ids[n.GetKind()+"/"+n.GetName()] = append(ids[n.GetKind()+"/"+n.GetName()], topology)
		}
	}
	for id, topologies := range ids {
		if len(topologies) > 1 && id != "ServiceAccount/model-service" {
			t.Errorf("%s is in the quickstarts %v: deleting one would delete the other's", id, topologies)
		}
	}
	if len(ids["ServiceAccount/model-service"]) != len(kinds.All) {
		t.Errorf("the README says the quickstarts share the base's ServiceAccount: %v", ids)
	}
}

// twoContainers is a Deployment of the user's own, beside a hydrated overlay
// in one build, and a strategic-merge patch of one of its containers.
const (
	twoContainers = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: app
        image: app:1
        env:
        - name: A
          value: "1"
      - name: proxy
        image: proxy:1
`
	proxyPatch = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
      - name: proxy
        image: proxy:2
`
)

// deployment is the Deployment of a build.
func deployment(t *testing.T, objs []map[string]any) map[string]any {
	t.Helper()
	for _, o := range objs {
		if o["kind"] == "Deployment" {
			return o
		}
	}
	t.Fatal("the build has no Deployment")
	return nil
}

// relativeTo is target's path relative to dir, as a kustomization names it.
func relativeTo(t *testing.T, dir, target string) string {
	t.Helper()
	abs, err := filepath.Abs(target)
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(dir, abs)
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

// overlays are folders that hydrate patches a base's job in (the committed
// quickstarts), and folders whose base holds no job, in which the component
// brings the whole job: its kinds are then new to kustomize only once the
// component is read.
func overlaysOfEveryKind(t *testing.T) map[string]string {
	t.Helper()
	dirs := map[string]string{}
	for _, topology := range testutil.QuickstartFolders() {
		quickstart := filepath.Join("../../quickstart/k8s/mlops", topology)
		dirs[topology+", patched"] = quickstart
		dir := filepath.Join(t.TempDir(), topology)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"job.yaml", "mlops.env"} {
			b, err := os.ReadFile(filepath.Join(quickstart, f))
			if err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(dir, f), string(b))
		}
		write(t, filepath.Join(dir, "serviceaccount.yaml"), "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: model-service\n")
		ov, err := Render(Options{Dir: dir, Resources: []string{"serviceaccount.yaml"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := ov.Write(); err != nil {
			t.Fatal(err)
		}
		dirs[topology+", generated"] = dir
	}
	return dirs
}

// TestTheOverlayLeavesOtherMergesAlone: a kustomization that includes a
// hydrated overlay and patches a Deployment of its own gets the Deployment it
// gets without the overlay: the overlay changes no schema of the build
// (kustomize keeps one OpenAPI document per build; one that lacks apps/v1
// makes the patch replace the Deployment's containers with its one).
func TestTheOverlayLeavesOtherMergesAlone(t *testing.T) {
	t.Parallel()
	for name, overlay := range overlaysOfEveryKind(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			write(t, filepath.Join(dir, "deployment.yaml"), twoContainers)
			write(t, filepath.Join(dir, "proxy-patch.yaml"), proxyPatch)
			k := "resources:\n- deployment.yaml\n%spatches:\n- path: proxy-patch.yaml\n"
			write(t, filepath.Join(dir, "kustomization.yaml"), fmt.Sprintf(k, ""))
			alone := deployment(t, kustomize(t, dir))
			containers := alone["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)
			if len(containers) != 2 {
				t.Fatalf("without the overlay the patch left %d containers, want 2: %v", len(containers), containers)
			}
			write(t, filepath.Join(dir, "kustomization.yaml"), fmt.Sprintf(k, "- "+relativeTo(t, dir, overlay)+"\n"))
			if diff := cmp.Diff(alone, deployment(t, kustomize(t, dir))); diff != "" {
				t.Errorf("including the overlay changes the user's Deployment (-without +with):\n%s", diff)
			}
		})
	}
}

// TestNameReferencesAreTheJobs: a committed overlay's name references are
// those of the kind's fields that its job, as the overlay builds it, sets:
// none missing (kustomize would leave that name as it is), none it does not
// set (the quickstart's MPIJob names no Secret).
func TestNameReferencesAreTheJobs(t *testing.T) {
	t.Parallel()
	for _, dir := range committedOverlays(t) {
		nodes, err := build(filesys.MakeFsOnDisk(), dir)
		if err != nil {
			t.Fatal(err)
		}
		jobs := slices.DeleteFunc(nodes, func(n *yaml.RNode) bool { return !kinds.All.Is(n.GetKind()) })
		if len(jobs) == 0 {
			t.Fatalf("%s builds no job", dir)
		}
		want := schema.NameReferences(func(path string) bool {
			return slices.ContainsFunc(jobs, func(j *yaml.RNode) bool { return holdsPath(j.YNode(), strings.Split(path, "/")) })
		}, kinds.All.Of(jobkind.JobKind(jobs[0].GetKind())))
		got, err := os.ReadFile(filepath.Join(dir, ComponentDir, NameReferenceFile))
		if errors.Is(err, fs.ErrNotExist) {
			got = nil
		} else if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasSuffix(got, want) || (len(want) == 0) != (got == nil) {
			t.Errorf("%s: %s is\n%s\nwant the fields the job sets:\n%s", dir, NameReferenceFile, got, want)
		}
	}
}
