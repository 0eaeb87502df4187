// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/kinds"
	"github.com/mlops-fn/mlops-fn/pkg/kinds/jobset"
)

// The ClusterQueue every Kueue check shares, its one ResourceFlavor, and the LocalQueue each of
// their namespaces gets. Not "default": Kueue puts the jobs of a namespace that has a
// LocalQueue named default in it, queue label or not, which the check without QUEUE must not see.
const (
	kueueAPI          = "kueue.x-k8s.io/v1beta2"
	kueueClusterQueue = "e2e-cluster-queue"
	kueueQueue        = "e2e-queue"
	kueueFlavor       = "e2e-flavor"
	// kueueGate is the scheduling gate Kueue holds a queued Pod with.
	kueueGate = "kueue.x-k8s.io/admission"
	// kueueManager is the manager of the runtime patch Kueue adds to a TrainJob.
	kueueManager = "kueue.x-k8s.io/manager"
)

// kueueResources are what the ClusterQueue covers.
var kueueResources = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, "nvidia.com/gpu"}

func kueueSetup(c *check) bool {
	err := applyYAML(fmt.Sprintf(`apiVersion: %[1]s
kind: ResourceFlavor
metadata: {name: %[3]s}
---
apiVersion: %[1]s
kind: ClusterQueue
metadata: {name: %[2]s}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: %[3]s
      resources: [{name: cpu, nominalQuota: 0}, {name: memory, nominalQuota: 0}, {name: nvidia.com/gpu, nominalQuota: 0}]
`, kueueAPI, kueueClusterQueue, kueueFlavor))
	if err != nil {
		c.fail("Kueue: the ResourceFlavor and ClusterQueue "+kueueClusterQueue+" are created (through Kueue's webhooks)", err.Error())
		return false
	}
	return c.that("Kueue: ResourceFlavor "+kueueFlavor+" and ClusterQueue "+kueueClusterQueue+" (cpu, memory, nvidia.com/gpu) are created, through Kueue's webhooks, and Active",
		waitUntil(30*time.Second, func() bool { return conditionOf(kueueAPI, "ClusterQueue", "", kueueClusterQueue, "Active") == "True" }),
		statusOf(kueueAPI, "ClusterQueue", "", kueueClusterQueue)) && kueueDefaultsEveryKind(c)
}

// kueueDefaultsEveryKind: run.sh registers Kueue's mutating webhook for each kind mlops-fn
// renders. Without it a queued job is created running and only suspended later by Kueue's
// controller, after its pods have started.
func kueueDefaultsEveryKind(c *check) bool {
	hooks, err := kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, "e2e-kueue", metav1.GetOptions{})
	if err != nil {
		c.fail("Kueue's mutating webhooks are registered (e2e-kueue)", err.Error())
		return false
	}
	ok := true
	for _, k := range kinds.All {
		gv, _ := schema.ParseGroupVersion(k.APIVersion)
		m, err := mapper.RESTMapping(gv.WithKind(k.Kind).GroupKind(), gv.Version)
		if err != nil {
			c.fail("the API serves "+k.Kind, err.Error())
			ok = false
			continue
		}
		found := false
		for _, h := range hooks.Webhooks {
			for _, r := range h.Rules {
				found = found || slices.Contains(r.APIGroups, m.Resource.Group) && slices.Contains(r.Resources, m.Resource.Resource) &&
					slices.Contains(r.Operations, admissionv1.Create)
			}
		}
		ok = c.that(fmt.Sprintf("Kueue's webhook defaults each new %s (suspends it when queued): registered for %s CREATE", k.Kind, m.Resource.GroupResource()),
			found, fmt.Sprint(len(hooks.Webhooks), " webhooks in e2e-kueue, none for it")) && ok
	}
	return ok
}

// kueueQuota sets the ClusterQueue's nominal quotas; a covered resource quota does not name gets 0.
func kueueQuota(quota corev1.ResourceList) error {
	var res []any
	for _, r := range kueueResources {
		q := quota[r]
		res = append(res, map[string]any{"name": string(r), "nominalQuota": q.String()})
	}
	patch := jsonText([]any{map[string]any{"op": "replace", "path": "/spec/resourceGroups/0/flavors/0/resources", "value": res}})
	r, err := resourceOf(kueueAPI, "ClusterQueue")
	if err != nil {
		return err
	}
	_, err = r.Patch(ctx, kueueClusterQueue, types.JSONPatchType, []byte(patch), metav1.PatchOptions{})
	return err
}

// kueueNamespace creates a namespace with the LocalQueue of the ClusterQueue, once Kueue has it.
func kueueNamespace(c *check, ns string) error {
	if err := newNamespace(ns, ""); err != nil {
		return err
	}
	err := applyYAML(fmt.Sprintf("apiVersion: %s\nkind: LocalQueue\nmetadata: {name: %s, namespace: %s}\nspec: {clusterQueue: %s}\n",
		kueueAPI, kueueQueue, ns, kueueClusterQueue))
	if err != nil {
		return err
	}
	if !waitUntil(30*time.Second, func() bool { return conditionOf(kueueAPI, "LocalQueue", ns, kueueQueue, "Active") == "True" }) {
		c.fail("Kueue: the LocalQueue "+ns+"/"+kueueQueue+" is Active", statusOf(kueueAPI, "LocalQueue", ns, kueueQueue))
	}
	return nil
}

// workload is the Workload in ns, nil if none: each Kueue check's job has a namespace of its own.
func workload(ns string) *unstructured.Unstructured {
	l, err := list(kueueAPI, "Workload", ns)
	if err != nil || len(l) == 0 {
		return nil
	}
	return &l[0]
}

func workloadCondition(ns, kind string) (status, message string) {
	w := workload(ns)
	if w == nil {
		return "", ""
	}
	return condition(w, kind)
}

// pending: Kueue has looked at the Workload and found no quota for it.
func pending(ns string) bool  { s, _ := workloadCondition(ns, "QuotaReserved"); return s == "False" }
func admitted(ns string) bool { s, _ := workloadCondition(ns, "Admitted"); return s == "True" }

// held is how Kueue holds the job: the suspend field (runPolicy.suspend of an MPIJob or
// PyTorchJob, spec.suspend of a TrainJob; "" if absent); for a Pod, "gated" if it has Kueue's
// scheduling gate (Kueue v0.19 adds kueue.x-k8s.io/topology too and removes both on admission),
// else its gates.
func held(o *overlay, ns string) string {
	u, err := getUnstructured(o.kind.APIVersion, o.kind.Kind, ns, o.name)
	if err != nil {
		return err.Error()
	}
	switch o.kind.JobKind() {
	case jobkind.Pod:
		var gates []string
		list, _, _ := unstructured.NestedSlice(u.Object, "spec", "schedulingGates")
		for _, g := range list {
			m, _ := g.(map[string]any)
			gates = append(gates, fmt.Sprint(m["name"]))
		}
		if slices.Contains(gates, kueueGate) {
			return "gated"
		}
		return strings.Join(gates, ",")
	case jobkind.TrainJob, jobset.JobSet:
		return nested(u, "spec", "suspend")
	}
	return nested(u, "spec", "runPolicy", "suspend")
}

func nested(u *unstructured.Unstructured, path ...string) string {
	v, found, _ := unstructured.NestedFieldNoCopy(u.Object, path...)
	if !found {
		return ""
	}
	return fmt.Sprint(v)
}

// running: n pods in ns, all Running on the fake node.
func running(ns string, n int) bool { return allInPhase(ns, "", n, corev1.PodRunning) }

// expectHeld: the job Kueue has not admitted is held: a Pod keeps Kueue's scheduling gate and
// no node, another kind stays suspended without pods.
func expectHeld(c *check, o *overlay, ns, when string) {
	if o.kind.JobKind() == jobkind.Pod {
		c.eq(when+": the Pod has Kueue's scheduling gate "+kueueGate, "gated", held(o, ns))
		node := "unreadable"
		if p, err := kube.CoreV1().Pods(ns).Get(ctx, o.name, metav1.GetOptions{}); err == nil {
			node = p.Spec.NodeName
		}
		c.eq(when+": the Pod is not scheduled (no nodeName)", "", node)
		return
	}
	c.eq(fmt.Sprintf("%s: the %s is suspended", when, o.kind.Kind), "true", held(o, ns))
	c.eq(when+": no pods", 0, len(pods(ns, "")))
}

// requests is what Kueue counts for the Workload: each resource summed over its pod sets.
func requests(w *unstructured.Unstructured) corev1.ResourceList {
	sum := corev1.ResourceList{}
	sets, _, _ := unstructured.NestedSlice(w.Object, "status", "resourceRequests")
	for _, s := range sets {
		m, _ := s.(map[string]any)
		res, _ := m["resources"].(map[string]any)
		for name, v := range res {
			q, err := resource.ParseQuantity(fmt.Sprint(v))
			if err != nil {
				continue
			}
			total := sum[corev1.ResourceName(name)]
			total.Add(q)
			sum[corev1.ResourceName(name)] = total
		}
	}
	return sum
}

// podCount is how many pods the job runs once admitted.
func (o *overlay) podCount() int {
	switch o.kind.JobKind() {
	case jobkind.Pod:
		return 1
	case jobkind.MPIJob:
		return int(o.plan.Workers) + 1 // and the launcher
	}
	return int(o.plan.Workers)
}

// checkKueue: the quickstart overlay src with QUEUE in a copy of its mlops.env, hydrated,
// against Kueue (the ClusterQueue's quota set here, per resource):
//
//	(a) quota 0: the job is created held (MPIJob, PyTorchJob: runPolicy.suspend; TrainJob:
//	    spec.suspend; Pod: Kueue's scheduling gate) with its Workload in the LocalQueue, which
//	    Kueue finds no quota for; no pods (Pod: not scheduled);
//	(b) quota = exactly what Kueue counts for the job: the Workload is admitted, the job
//	    released, its pods created and Running;
//	(c) the same job in a second namespace: its Workload waits, the job held; deleting the first
//	    job admits it and its pods run;
//	(d) the overlay itself (no QUEUE) in a third namespace with the LocalQueue, the ClusterQueue
//	    full: no Workload, not held, its pods run.
func checkKueue(t *check, src, tree string) {
	orig, err := loadOverlay(src)
	if err != nil {
		t.fail(src+" builds", err.Error())
		return
	}
	c := newCheck(t.t, fmt.Sprintf("%s with QUEUE=%s", src, kueueQueue))
	dir := filepath.Join(tree, src)
	f, err := os.OpenFile(filepath.Join(dir, "mlops.env"), os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = fmt.Fprintf(f, "%s=%s\n", "QUEUE", kueueQueue)
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		c.fail("QUEUE added to mlops.env", err.Error())
		return
	}
	if out, err := runMlopsFn("hydrate", dir); err != nil {
		c.fail("mlops-fn hydrate", out)
		return
	}
	o, err := loadOverlay(dir)
	if err != nil {
		c.fail("the hydrated overlay builds", err.Error())
		return
	}
	o.slug = orig.slug
	c.eq(fmt.Sprintf("the rendered %s has the label %s=%s", o.kind.Kind, api.QueueLabel, kueueQueue), kueueQueue, o.job.GetLabels()[api.QueueLabel])
	n := o.podCount()

	// (a) no quota
	if err := kueueQuota(nil); err != nil {
		c.fail("the ClusterQueue's quota set to 0", err.Error())
		return
	}
	first := "kueue-" + o.slug + "-1"
	if !kueueApply(c, o, first) {
		return
	}
	if !waitUntil(waitForPods, func() bool { return pending(first) }) {
		c.fail(fmt.Sprintf("Kueue creates the %s's Workload and finds no quota for it (quota 0)", o.kind.Kind), jsonText(workload(first)))
		return
	}
	w := workload(first)
	var owners []string
	for _, r := range w.GetOwnerReferences() {
		owners = append(owners, r.Kind+"/"+r.Name)
	}
	c.eq(fmt.Sprintf("quota 0: Kueue creates a Workload for the %s in LocalQueue %s, owned by it", o.kind.Kind, kueueQueue),
		kueueQueue+" "+o.kind.Kind+"/"+o.name, nested(w, "spec", "queueName")+" "+strings.Join(owners, ","))
	_, why := condition(w, "QuotaReserved")
	c.pass("quota 0: the Workload is not admitted: " + truncate(why, 200))
	expectHeld(c, o, first, "quota 0")
	if !waitUntil(30*time.Second, func() bool { w = workload(first); return w != nil && nested(w, "status", "resourceRequests") != "" }) {
		c.fail("Kueue reports the Workload's resource requests", jsonText(w))
		return
	}
	req := requests(w)
	note("Kueue counts the job as %s", jsonText(quantities(req)))
	nodes := int64(o.plan.Workers)
	if o.kind.JobKind() == jobkind.Pod {
		nodes = 1
	}
	gpus := req["nvidia.com/gpu"]
	c.eq(fmt.Sprintf("Kueue counts WORKERS x GPUS_PER_WORKER nvidia.com/gpu (%d x %d)", nodes, o.plan.GPUsPerWorker),
		nodes*int64(o.plan.GPUsPerWorker), gpus.Value())

	// (b) quota for exactly one such job
	if err := kueueQuota(req); err != nil {
		c.fail("the ClusterQueue's quota set to the job's requests", err.Error())
		return
	}
	if !c.that("quota = the job's requests: Kueue admits the Workload", waitUntil(waitForPods, func() bool { return admitted(first) }), jsonText(workload(first))) {
		return
	}
	expectReleased(c, o, first, "admitted")
	c.that(fmt.Sprintf("admitted: its %d pods are created and Running", n), waitUntil(waitForPods, func() bool { return running(first, n) }), podTable(first))
	if o.kind.JobKind() == jobkind.TrainJob {
		checkKueueRuntimePatch(c, o, first)
	}

	// (c) a second job of the same size
	second := "kueue-" + o.slug + "-2"
	if !kueueApply(c, o, second) {
		return
	}
	if waitUntil(waitForPods, func() bool { return pending(second) }) {
		_, why := workloadCondition(second, "QuotaReserved")
		c.pass(fmt.Sprintf("a second one in %s while the first runs: its Workload waits: %s", second, truncate(why, 200)))
	} else {
		c.fail(fmt.Sprintf("a second one in %s while the first runs: its Workload waits (QuotaReserved False)", second), jsonText(workload(second)))
	}
	c.that("the second one: its Workload is not admitted", !admitted(second), jsonText(workload(second)))
	expectHeld(c, o, second, "the second one")
	if err := deleteObject(o.kind.APIVersion, o.kind.Kind, first, o.name); err != nil {
		c.fail("the first one deleted", err.Error())
	}
	c.that("the second one: admitted once the first is deleted", waitUntil(90*time.Second, func() bool { return admitted(second) }),
		jsonText(workload(second)), statusOf(kueueAPI, "ClusterQueue", "", kueueClusterQueue))
	c.that(fmt.Sprintf("the second one: its %d pods are created and Running", n), waitUntil(waitForPods, func() bool { return running(second, n) }), podTable(second))

	// (d) no QUEUE, the ClusterQueue full
	plain := newCheck(t.t, src+" without QUEUE")
	third := "kueue-" + o.slug + "-noqueue"
	if kueueApply(plain, orig, third) {
		plain.that(fmt.Sprintf("the ClusterQueue full, a LocalQueue in the namespace: its %d pods are created and Running (not held by Kueue)", n),
			waitUntil(waitForPods, func() bool { return running(third, n) }), podTable(third))
		plain.that("Kueue creates no Workload", workload(third) == nil, jsonText(workload(third)))
		if o.kind.JobKind() == jobkind.Pod {
			plain.eq("the Pod has no scheduling gate", "", held(orig, third))
		} else {
			plain.that(fmt.Sprintf("the %s is not suspended", o.kind.Kind), held(orig, third) != "true", held(orig, third))
		}
		_ = deleteObject(o.kind.APIVersion, o.kind.Kind, third, o.name)
	}

	// Free the ClusterQueue for the next kind.
	_ = deleteObject(o.kind.APIVersion, o.kind.Kind, second, o.name)
	if !waitUntil(waitForPods, func() bool { return workload(second) == nil }) {
		note("the Workload in %s is still there", second)
	}
}

// kueueApply applies the overlay in ns, a fresh namespace with the LocalQueue.
func kueueApply(c *check, o *overlay, ns string) bool {
	if err := kueueNamespace(c, ns); err != nil {
		c.fail("a namespace with the LocalQueue", err.Error())
		return false
	}
	claimFixtures(c, o, ns)
	if out, err := kubectl("", "apply", "-k", o.dir, "-n", ns, "--server-side"); err != nil {
		c.fail("apply -k in namespace "+ns, out)
		return false
	}
	return true
}

// expectReleased: once admitted, Kueue removes a Pod's gates, or unsuspends the job.
func expectReleased(c *check, o *overlay, ns, when string) {
	if o.kind.JobKind() == jobkind.Pod {
		waitUntil(30*time.Second, func() bool { return held(o, ns) == "" })
		c.eq(when+": Kueue removes its scheduling gates", "", held(o, ns))
		return
	}
	waitUntil(30*time.Second, func() bool { return held(o, ns) == "false" })
	c.eq(fmt.Sprintf("%s: Kueue unsuspends the %s", when, o.kind.Kind), "false", held(o, ns))
}

// checkKueueRuntimePatch: Kueue's TrainJob integration writes the pod sets' admission into a
// runtime patch of its own and updates the TrainJob: mlops-fn's must stay as rendered (but for
// the time Trainer's defaulting stamps).
func checkKueueRuntimePatch(c *check, o *overlay, ns string) {
	u, err := getUnstructured(o.kind.APIVersion, o.kind.Kind, ns, o.name)
	if err != nil {
		c.fail("the TrainJob", err.Error())
		return
	}
	patches := func(u *unstructured.Unstructured, keep func(manager string) bool) []any {
		list, _, _ := unstructured.NestedSlice(u.Object, "spec", "runtimePatches")
		var out []any
		for _, p := range list {
			m, _ := p.(map[string]any)
			if keep(fmt.Sprint(m["manager"])) {
				delete(m, "time")
				out = append(out, m)
			}
		}
		return out
	}
	all := func(string) bool { return true }
	notKueue := func(m string) bool { return m != kueueManager }
	c.eq("admitted: the TrainJob's other runtime patches are as rendered, Kueue's own ("+kueueManager+") added",
		jsonText(patches(o.job.DeepCopy(), all)), jsonText(patches(u, notKueue)))
	note("the runtime patches' managers: %s", jsonText(managers(u)))
}

func managers(u *unstructured.Unstructured) []string {
	list, _, _ := unstructured.NestedSlice(u.Object, "spec", "runtimePatches")
	var out []string
	for _, p := range list {
		m, _ := p.(map[string]any)
		out = append(out, fmt.Sprint(m["manager"]))
	}
	return out
}
