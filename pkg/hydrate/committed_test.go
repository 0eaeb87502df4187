package hydrate

import (
	"path/filepath"
	"testing"

	kubeflow "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	corev1 "k8s.io/api/core/v1"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/openapi"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/mlops-fn/mlops-fn/pkg/processor"
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
	for _, dir := range committedOverlays(t) {
		t.Run(dir, func(t *testing.T) {
			ov, err := Render(Options{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			if stale := ov.Stale(dir); len(stale) > 0 {
				t.Fatalf("stale: %v; run `make hydrate` and commit", stale)
			}
			openapi.ResetOpenAPI()
			m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
			if err != nil {
				t.Fatalf("kustomize build: %v", err)
			}
			jobs := 0
			for _, r := range m.Resources() {
				b, err := r.MarshalJSON()
				if err != nil {
					t.Fatal(err)
				}
				switch r.GetKind() {
				case "MPIJob", "Pod", "PyTorchJob":
					// Strictly decoded, and checked as the operator's own validation or webhook would.
					n, err := yaml.Parse(string(b))
					if err != nil {
						t.Fatal(err)
					}
					if errs := processor.Check(n); len(errs) > 0 {
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
				case "ConfigMap":
					decode(t, b, &corev1.ConfigMap{})
				}
			}
			if jobs != 1 {
				t.Errorf("want one MPIJob or Pod, got %d", jobs)
			}
		})
	}
}

func decode(t *testing.T, b []byte, into any) {
	t.Helper()
	strict, err := sigsjson.UnmarshalStrict(b, into)
	if err != nil || len(strict) > 0 {
		t.Errorf("does not decode strictly: %v %v", err, strict)
	}
}
