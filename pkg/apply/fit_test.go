// SPDX-License-Identifier: Apache-2.0

package apply

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mlops-fn/mlops-fn/pkg/hydrate"
	"github.com/mlops-fn/mlops-fn/pkg/jobnode"
	"github.com/mlops-fn/mlops-fn/pkg/kinds"
	"github.com/mlops-fn/mlops-fn/pkg/scaffold"
)

func node(name, cpu, memory string, cordoned bool) corev1.Node {
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{Unschedulable: cordoned},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}}}
}

func list(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

// TestUnfit: a pod larger than the largest node, and pods together larger
// than all nodes (the first job's old defaults on a 2-CPU node), each named
// with the numbers and the setting; a cordoned node counts for nothing.
func TestUnfit(t *testing.T) {
	nodes := []corev1.Node{node("e2e-node", "2", "24Gi", false), node("big", "64", "256Gi", true)}
	for _, c := range []struct {
		name string
		pods []podRequests
		want []string
	}{
		{"the old defaults: a launcher of 1 CPU beside 2 workers of 1", []podRequests{
			{"Launcher", 1, list("cpu", "1", "memory", "1Gi"), "spec.launcherResources (the launcher's)"}, {"Worker", 2, list("cpu", "1", "memory", "1Gi"), ""}},
			[]string{"MPIJob/j: its 3 pods run at once and request cpu 3 together (Launcher 1 × 1 + Worker 2 × 1), more than all 1 schedulable nodes allocate (2: e2e-node 2): they can never all run, and those placed wait for the others; lower CPU (mlops.env) or spec.resources.requests.cpu or the number of workers (WORKERS; MIN_WORKERS for an elastic job), or add nodes"}},
		{"the new defaults", []podRequests{
			{"Launcher", 1, list("cpu", "100m", "memory", "128Mi"), "spec.launcherResources (the launcher's)"}, {"Worker", 3, list("cpu", "250m", "memory", "512Mi"), ""}}, nil},
		{"a worker larger than any node, and GPUs no node has", []podRequests{
			{"Launcher", 1, list("cpu", "100m"), "spec.launcherResources (the launcher's)"}, {"Worker", 2, list("cpu", "4", "nvidia.com/gpu", "1"), ""}},
			[]string{
				"MPIJob/j: each Worker pod requests cpu 4, more than any node allocates (the largest, e2e-node: 2): it can never be scheduled; lower CPU (mlops.env) or spec.resources.requests.cpu, or add a node that large",
				"MPIJob/j: each Worker pod requests nvidia.com/gpu 1, more than any node allocates (the largest, e2e-node: 0): it can never be scheduled; lower its count (GPUS_PER_WORKER in mlops.env for GPUs, spec.rdma.perWorker for RDMA devices), or add a node that large",
			}},
		{"a launcher larger than any node", []podRequests{{"Launcher", 1, list("memory", "32Gi"), "spec.launcherResources (the launcher's)"}, {"Worker", 1, list("memory", "1Gi"), ""}},
			[]string{"MPIJob/j: the Launcher pod requests memory 32Gi, more than any node allocates (the largest, e2e-node: 24Gi): it can never be scheduled; lower spec.launcherResources (the launcher's), or add a node that large"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if d := cmp.Diff(c.want, unfit("MPIJob/j", c.pods, nodes)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
	if got := unfit("MPIJob/j", []podRequests{{"Worker", 9, list("cpu", "64"), ""}}, nodes[1:]); got != nil {
		t.Errorf("no schedulable node: want nothing said, got %v", got)
	}
}

// TestInitFitsASmallNode: the job init writes, of every kind, with the
// README's WORKERS=3, fits a node of 2 CPUs beside a control plane's own
// pods (minikube's default: 750m and about 300Mi of requests of its own).
func TestInitFitsASmallNode(t *testing.T) {
	small := []corev1.Node{node("minikube", "1250m", "1800Mi", false)}
	for _, k := range kinds.All {
		t.Run(k.Kind, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "my-job")
			files, err := scaffold.Files(scaffold.Options{Name: "my-job", JobKind: k.JobKind(), Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			files["mlops.env"] = []byte(strings.Replace(string(files["mlops.env"]), "\nWORKERS=2\n", "\nWORKERS=3\n", 1))
			for name, b := range files {
				path := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			ov, err := hydrate.Render(hydrate.Options{Dir: dir, Resources: []string{scaffold.BaseDir}})
			if err != nil {
				t.Fatal(err)
			}
			if err := ov.Write(); err != nil {
				t.Fatal(err)
			}
			jobs := jobnode.Jobs(kinds.All, overlay(t, dir).Objects)
			pods, err := jobPods(jobs[0])
			if err != nil {
				t.Fatal(err)
			}
			if got := unfit(k.Kind+"/my-job", pods, small); got != nil {
				t.Errorf("init's job does not fit a small node: %v", got)
			}
		})
	}
}
