// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Kueue's Topology Aware Scheduling, as TestKueuePlacement sets it up: a Topology of three levels,
// a ResourceFlavor naming it, and tasNodes kwok nodes in two blocks, tainted so that no other
// check's pods go there (the flavor's toleration lets the placed pods in).
const (
	tasTopology     = "e2e-topology"
	tasFlavor       = "e2e-tas-flavor"
	tasClusterQueue = "e2e-tas-cluster-queue"
	tasBlock        = "e2e.mlops-fn.dev/block"
	tasRack         = "e2e.mlops-fn.dev/rack"
	tasPool         = "e2e.mlops-fn.dev/tas"
	// tasNodeCPU holds two demo pods (mlops-fn init's CPU=250m) and an MPIJob's launcher (100m).
	tasNodeCPU = "600m"
)

// tasNodes are the nodes by block: two racks of one node each per block.
var tasNodes = map[string][]string{"block-a": {"tas-a1", "tas-a2"}, "block-b": {"tas-b1", "tas-b2"}}

// TestKueuePlacement: TOPOLOGY_REQUIRED of mlops.env on the real Kueue. A 3-worker MPIJob with the
// block level is admitted and its launcher and workers all land in one block; a 5-worker one,
// more pods than a block holds, is held, and mlops-fn status says why in Kueue's words; a
// TrainJob of 3 nodes lands in one block too (its placement reaches the JobSet through
// mlops-fn's runtime patch).
func TestKueuePlacement(t *testing.T) {
	section("Kueue: topology-aware placement (TOPOLOGY_REQUIRED)")
	c := newCheck(t, "Kueue placement")
	if skipWhenNamed(c, "the Kueue checks", os.Getenv("E2E_KUEUE") == "1") || !tasSetup(c) {
		return
	}
	for _, j := range []struct {
		kind    string
		workers int
		fits    bool
	}{{"MPIJob", 3, true}, {"MPIJob", 5, false}, {"TrainJob", 3, true}} {
		name := fmt.Sprintf("placed-%s-%d", strings.ToLower(j.kind), j.workers)
		guarded(c, func() { checkPlacement(newCheck(t, name), t, name, j.kind, j.workers, j.fits) })
	}
}

func checkPlacement(c *check, t *testing.T, name, kind string, workers int, fits bool) {
	ns := name
	if err := newNamespace(ns, ""); err != nil {
		c.fail("namespace "+ns, err.Error())
		return
	}
	defer deleteNamespace(ns)
	if err := applyYAML(fmt.Sprintf("apiVersion: %s\nkind: LocalQueue\nmetadata: {name: %s, namespace: %s}\nspec: {clusterQueue: %s}\n",
		kueueAPI, kueueQueue, ns, tasClusterQueue)); err != nil {
		c.fail("the LocalQueue "+ns+"/"+kueueQueue, err.Error())
		return
	}
	dir, ok := queuedJob(c, t, kind, name, kueueQueue)
	if !ok {
		return
	}
	for key, value := range map[string]string{"WORKERS": fmt.Sprint(workers), "TOPOLOGY_REQUIRED": tasBlock} {
		if err := editEnv(dir, key, value); err != nil {
			c.fail(key+" in mlops.env", err.Error())
			return
		}
	}
	o, _, _, ok := mlopsApplied(c, dir, ns)
	if !ok {
		return
	}
	if !fits {
		expectStatus(c, ns+", more pods than a block holds", dir, ns, statusHead(o, ns, heldPhase(o)),
			"waiting: Kueue has not admitted it", "topology \""+tasTopology+"\" allows to fit only")
		return
	}
	pods := o.podCount()
	var placed []corev1.Pod
	landed := waitUntil(waitForPods, func() bool {
		l, err := kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		placed = slices.DeleteFunc(l.Items, func(p corev1.Pod) bool { return p.Spec.NodeName == "" })
		return err == nil && admitted(ns) && len(placed) == pods
	})
	blocks := map[string][]string{}
	for _, p := range placed {
		for block, nodes := range tasNodes {
			if slices.Contains(nodes, p.Spec.NodeName) {
				blocks[block] = append(blocks[block], p.Name+" on "+p.Spec.NodeName)
			}
		}
	}
	c.that(fmt.Sprintf("%s: Kueue admits the %s and binds its %d pods", ns, kind, pods), landed, podTable(ns), jsonText(workload(ns)))
	c.that(fmt.Sprintf("%s: all %d pods are in one block of the Topology (%s)", ns, pods, tasBlock),
		len(blocks) == 1 && len(slices.Concat(slices.Collect(maps.Values(blocks))...)) == pods, fmt.Sprint(blocks), podTable(ns))
	w := workload(ns)
	sets, _, _ := unstructured.NestedSlice(w.Object, "spec", "podSets")
	var required, groups []string
	for _, s := range sets {
		ps, _ := s.(map[string]any)
		r, _, _ := unstructured.NestedString(ps, "topologyRequest", "required")
		g, _, _ := unstructured.NestedString(ps, "topologyRequest", "podSetGroupName")
		required, groups = append(required, r), append(groups, g)
	}
	c.that(fmt.Sprintf("%s: each of the Workload's %d pod sets requires the level %s", ns, len(sets), tasBlock),
		len(sets) > 0 && !slices.ContainsFunc(required, func(r string) bool { return r != tasBlock }), jsonText(w))
	if kind == "MPIJob" {
		c.that(ns+": the launcher and the workers are one podset group", slices.Equal(groups, []string{"launcher-and-workers", "launcher-and-workers"}), jsonText(w))
	}
	if out, err := runMlopsFn("delete", dir, "--namespace", ns); err != nil {
		c.fail("mlops-fn delete in "+ns, out)
	}
}

// tasSetup makes the Topology, its ResourceFlavor and ClusterQueue, and the blocks' nodes.
func tasSetup(c *check) bool {
	var y strings.Builder
	fmt.Fprintf(&y, `apiVersion: %[1]s
kind: Topology
metadata: {name: %[2]s}
spec:
  levels: [{nodeLabel: %[3]s}, {nodeLabel: %[4]s}, {nodeLabel: kubernetes.io/hostname}]
---
apiVersion: %[1]s
kind: ResourceFlavor
metadata: {name: %[5]s}
spec:
  nodeLabels: {%[6]s: "true"}
  topologyName: %[2]s
  tolerations: [{key: %[6]s, operator: Exists, effect: NoSchedule}]
---
apiVersion: %[1]s
kind: ClusterQueue
metadata: {name: %[7]s}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: %[5]s
      resources: [{name: cpu, nominalQuota: "10"}, {name: memory, nominalQuota: 64Gi}]
`, kueueAPI, tasTopology, tasBlock, tasRack, tasFlavor, tasPool, tasClusterQueue)
	for block, nodes := range tasNodes {
		for i, n := range nodes {
			fmt.Fprintf(&y, `---
apiVersion: v1
kind: Node
metadata:
  name: %[1]s
  annotations: {kwok.x-k8s.io/node: fake, node.alpha.kubernetes.io/ttl: "0"}
  labels: {kubernetes.io/hostname: %[1]s, type: kwok, %[2]s: %[3]s, %[4]s: %[3]s-r%[5]d, %[6]s: "true"}
spec:
  taints: [{key: %[6]s, value: "true", effect: NoSchedule}]
status:
  allocatable: {cpu: %[7]s, memory: 8Gi, pods: "110"}
  capacity: {cpu: %[7]s, memory: 8Gi, pods: "110"}
`, n, tasBlock, block, tasRack, i, tasPool, tasNodeCPU)
		}
	}
	if err := applyYAML(y.String()); err != nil {
		c.fail("Kueue: the Topology "+tasTopology+", its ResourceFlavor and ClusterQueue, and the blocks' nodes are created", err.Error())
		return false
	}
	ready := waitUntil(60*time.Second, func() bool {
		for _, nodes := range tasNodes {
			for _, n := range nodes {
				node, err := kube.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
				if err != nil || !nodeReady(node) {
					return false
				}
			}
		}
		return conditionOf(kueueAPI, "ClusterQueue", "", tasClusterQueue, "Active") == "True"
	})
	return c.that(fmt.Sprintf("Kueue: Topology %s (%s, %s, kubernetes.io/hostname), ResourceFlavor %s and ClusterQueue %s are Active, and 4 nodes of %s CPU in two blocks Ready",
		tasTopology, tasBlock, tasRack, tasFlavor, tasClusterQueue, tasNodeCPU), ready, statusOf(kueueAPI, "ClusterQueue", "", tasClusterQueue))
}
