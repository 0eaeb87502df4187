// SPDX-License-Identifier: Apache-2.0

package jobkind_test

import (
	"encoding/json"
	"testing"

	"github.com/mlops-fn/mlops-fn/internal/testutil"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/kinds"
	"github.com/mlops-fn/mlops-fn/pkg/kinds/jobset"
)

// TestInPlace: each kind's rule for a running job. An elastic PyTorchJob
// scales its workers within its bounds, the env ConfigMap's new name (its
// hash) with it; nothing else changes in place, on any kind: not the bounds,
// the resources, another reference, nor the env ConfigMap's name alone.
func TestInPlace(t *testing.T) {
	// The pod spec's env ConfigMap references, at x-env-HASH.
	podSpec := func(hash string) string {
		return `{"initContainers": [{"name": "init", "envFrom": [{"configMapRef": {"name": "x-env-` + hash + `"}}]}],
			"containers": [{"name": "main", "image": "i", "resources": {"limits": {"cpu": "1"}},
				"envFrom": [{"configMapRef": {"name": "x-env-` + hash + `"}}, {"secretRef": {"name": "s"}}],
				"env": [{"name": "A", "valueFrom": {"configMapKeyRef": {"name": "x-env-` + hash + `", "key": "A"}}}]}]}`
	}
	base := map[jobkind.JobKind]string{
		jobkind.Pod:    `{"kind": "Pod", "spec": ` + podSpec("b2") + `}`,
		jobkind.MPIJob: `{"kind": "MPIJob", "spec": {"slotsPerWorker": 1, "mpiReplicaSpecs": {"Launcher": {"replicas": 1, "template": {"spec": ` + podSpec("b2") + `}}, "Worker": {"replicas": 2, "template": {"spec": ` + podSpec("b2") + `}}}}}`,
		jobkind.PyTorchJob: `{"kind": "PyTorchJob", "spec": {"elasticPolicy": {"minReplicas": 1, "maxReplicas": 3}, "runPolicy": {"cleanPodPolicy": "None"},
			"pytorchReplicaSpecs": {"Worker": {"replicas": 2, "restartPolicy": "OnFailure", "template": {"spec": ` + podSpec("b2") + `}}}}}`,
		jobkind.TrainJob: `{"kind": "TrainJob", "spec": {"runtimeRef": {"name": "torch-distributed"}, "trainer": {"numNodes": 2}}}`,
		jobset.JobSet:    `{"kind": "JobSet", "spec": {"replicatedJobs": [{"name": "node", "replicas": 2, "template": {"spec": {"template": {"spec": ` + podSpec("b2") + `}}}}]}}`,
	}
	type edit = func(o map[string]any)
	set := func(v any, path ...string) edit {
		return func(o map[string]any) {
			m := o
			for _, k := range path[:len(path)-1] {
				if m[k] == nil {
					m[k] = map[string]any{}
				}
				m = m[k].(map[string]any)
			}
			if v == nil {
				delete(m, path[len(path)-1])
			} else {
				m[path[len(path)-1]] = v
			}
		}
	}
	// rehash gives every env ConfigMap reference of the pod spec at path the name x-env-c3.
	rehash := func(path ...string) edit {
		return func(o map[string]any) {
			var spec map[string]any
			_ = json.Unmarshal([]byte(podSpec("c3")), &spec)
			set(spec, path...)(o)
		}
	}
	worker := []string{"spec", "pytorchReplicaSpecs", "Worker"}
	at := func(path ...string) []string { return append(append([]string{}, worker...), path...) }
	container := func(e edit) edit {
		return func(o map[string]any) {
			spec := o["spec"].(map[string]any)["pytorchReplicaSpecs"].(map[string]any)["Worker"].(map[string]any)["template"].(map[string]any)["spec"]
			e(spec.(map[string]any)["containers"].([]any)[0].(map[string]any))
		}
	}
	covered := map[jobkind.JobKind]bool{}
	scale := []edit{set(3.0, at("replicas")...), rehash(at("template", "spec")...)}
	for _, c := range []struct {
		kind  jobkind.JobKind
		name  string
		edits []edit
		want  bool
	}{
		{jobkind.Pod, "unchanged", nil, true},
		{jobkind.Pod, "the env ConfigMap's new name", []edit{rehash("spec")}, false},
		{jobkind.Pod, "the CPU", []edit{set(map[string]any{"limits": map[string]any{"cpu": "2"}}, "spec", "resources")}, false},

		{jobkind.MPIJob, "unchanged", nil, true},
		{jobkind.MPIJob, "a worker more, its env ConfigMap's new name", []edit{set(3.0, "spec", "mpiReplicaSpecs", "Worker", "replicas"),
			rehash("spec", "mpiReplicaSpecs", "Worker", "template", "spec"), rehash("spec", "mpiReplicaSpecs", "Launcher", "template", "spec")}, false},
		{jobkind.MPIJob, "the slots", []edit{set(2.0, "spec", "slotsPerWorker")}, false},

		{jobkind.PyTorchJob, "unchanged", nil, true},
		{jobkind.PyTorchJob, "scaled within the bounds, the env ConfigMap's new name", scale, true},
		{jobkind.PyTorchJob, "scaled within the bounds, the same ConfigMap", scale[:1], true},
		{jobkind.PyTorchJob, "scaled down to the minimum", []edit{set(1.0, at("replicas")...)}, true},
		{jobkind.PyTorchJob, "scaled above the maximum", []edit{set(4.0, at("replicas")...)}, false},
		{jobkind.PyTorchJob, "the bounds changed too", append(scale, set(4.0, "spec", "elasticPolicy", "maxReplicas")), false},
		{jobkind.PyTorchJob, "no bounds", append(scale, set(nil, "spec", "elasticPolicy")), false},
		{jobkind.PyTorchJob, "no replicas", []edit{set(nil, at("replicas")...)}, false},
		{jobkind.PyTorchJob, "the env ConfigMap's new name alone (OUTPUT_DIR)", scale[1:], false},
		{jobkind.PyTorchJob, "scaled, and the CPU", append(scale, container(set("2", "resources", "limits", "cpu"))), false},
		{jobkind.PyTorchJob, "scaled, and the key a variable reads", append(scale, container(func(c map[string]any) {
			c["env"].([]any)[0].(map[string]any)["valueFrom"].(map[string]any)["configMapKeyRef"].(map[string]any)["key"] = "B"
		})), false},
		{jobkind.PyTorchJob, "scaled, and another Secret", append(scale, container(func(c map[string]any) {
			c["envFrom"].([]any)[1].(map[string]any)["secretRef"].(map[string]any)["name"] = "t"
		})), false},
		{jobkind.PyTorchJob, "scaled, and the envFrom's order", append(scale, container(func(c map[string]any) {
			l := c["envFrom"].([]any)
			l[0], l[1] = l[1], l[0]
		})), false},
		{jobkind.PyTorchJob, "scaled, and a prefix", append(scale, container(func(c map[string]any) {
			c["envFrom"].([]any)[0].(map[string]any)["prefix"] = "P_"
		})), false},
		{jobkind.PyTorchJob, "scaled, and a master", append(scale, set(map[string]any{"replicas": 1.0}, "spec", "pytorchReplicaSpecs", "Master")), false},
		{jobkind.PyTorchJob, "scaled, and the restart policy", append(scale, set("Never", at("restartPolicy")...)), false},
		{jobkind.PyTorchJob, "scaled, and the run policy", append(scale, set("All", "spec", "runPolicy", "cleanPodPolicy")), false},

		{jobkind.TrainJob, "unchanged", nil, true},
		{jobkind.TrainJob, "a node more", []edit{set(3.0, "spec", "trainer", "numNodes")}, false},

		{jobset.JobSet, "unchanged", nil, true},
		{jobset.JobSet, "suspended", []edit{set(true, "spec", "suspend")}, false},
	} {
		var live, job map[string]any
		if err := json.Unmarshal([]byte(base[c.kind]), &live); err != nil {
			t.Fatal(c.kind, err)
		}
		_ = json.Unmarshal([]byte(base[c.kind]), &job)
		for _, e := range c.edits {
			e(job)
		}
		k := kinds.All.Of(c.kind)
		if got := k.InPlace(live, job); got != c.want {
			t.Errorf("%s, %s: InPlace = %v, want %v", c.kind, c.name, got, c.want)
		}
		// As client-go's unstructured objects hold them: int64, not float64.
		if got := k.InPlace(testutil.Unstructured(t, live), testutil.Unstructured(t, job)); got != c.want {
			t.Errorf("%s, %s, as client-go decodes it: InPlace = %v, want %v", c.kind, c.name, got, c.want)
		}
		covered[c.kind] = true
	}
	for _, k := range kinds.All {
		if !covered[k.JobKind()] {
			t.Errorf("%s: no case of its in-place rule", k.Kind)
		}
	}
}
