// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
)

// The gang checks' pool: a kwok node of its own, tainted so that no other check's pods land on
// it, whose free CPU the checks set with 1-CPU filler pods; each pod of a gang job asks 1 CPU.
const (
	gangNode     = "kwok-gang-0"
	gangPoolKey  = "e2e.mlops-fn.dev/pool"
	gangPool     = "gang"
	gangNodeCPUs = 4
	gangFillNS   = "gang-fill"
	podGroupAPI  = "scheduling.x-k8s.io/v1alpha1"
	// podGroupLabel is the label scheduler-plugins' Coscheduling finds a pod's group by.
	podGroupLabel = "scheduling.x-k8s.io/pod-group"
	// gangRuntime: Trainer's torch-distributed runtime with podGroupPolicy.coscheduling, its
	// pods named for the gang scheduler (a TrainJob cannot name a scheduler itself).
	gangRuntime = "torch-distributed-gang"
	// gangCycle outlasts one scheduling attempt of a group short of room: the Permit wait
	// (5 s, run.sh) and the back-off (2 s).
	gangCycle = 8 * time.Second
)

// gangJob is a job made by mlops-fn init for the pool: its mlops.env keys, the lines added to its
// job.yaml's spec, the group the operator must make of it (min of all its pods), and the room the
// checks leave in the pool. An MPIJob's launcher is not in the pool (mlops-fn places only the
// workers: a launcher needs no accelerator), so it finds room elsewhere, and only the gang holds it.
type gangJob struct {
	jobKind  jobkind.JobKind
	name     string
	env      map[string]string
	spec     string
	min, all int
	// short: room in the pool for fewer members than min; minRoom: room for min, where minBound
	// pods are bound; allRoom (0: none): room for every pod.
	short, minRoom, minBound, allRoom int
	// partial (a control whose minimum lets a part start): the pods bound with room short.
	partial int
}

const gangLauncher = "  launcherResources: {limits: {cpu: \"1\", memory: 256Mi}}\n"

var gangJobs = []gangJob{
	// The operator's default, AtStartup: the launcher and the workers; 1 worker of 2 fits, the launcher anywhere.
	{jobKind: jobkind.MPIJob, name: "gang-mpi", env: map[string]string{"WORKERS": "2"},
		spec: gangLauncher + "  mpi: {launcherCreationPolicy: AtStartup}\n", min: 3, all: 3, short: 1, minRoom: 2, minBound: 3},
	// mlops-fn's default, WaitForWorkersReady, and its minimum: the workers; the launcher is created once they run.
	{jobKind: jobkind.MPIJob, name: "gang-mpi-wait", env: map[string]string{"WORKERS": "2"},
		spec: gangLauncher, min: 2, all: 3, short: 1, minRoom: 2, minBound: 3},
	// mlops-fn's minimum: MIN_WORKERS, where the operator's default would wait for all three.
	{jobKind: jobkind.PyTorchJob, name: "gang-elastic", env: map[string]string{"WORKERS": "3", "MIN_WORKERS": "2", "MAX_WORKERS": "3"},
		min: 2, all: 3, short: 1, minRoom: 2, minBound: 2, allRoom: 3},
	{jobKind: jobkind.TrainJob, name: "gang-trainjob", env: map[string]string{"WORKERS": "2"},
		min: 2, all: 2, short: 1, minRoom: 2, minBound: 2},
	// The control: with a minimum of 1, the launcher and the worker that fits are bound.
	{jobKind: jobkind.MPIJob, name: "gang-mpi-min1", env: map[string]string{"WORKERS": "2"},
		spec: gangLauncher + "  mpi: {launcherCreationPolicy: AtStartup}\n  runPolicy:\n    schedulingPolicy: {minAvailable: 1}\n", min: 1, all: 3, short: 1, partial: 2},
}

// TestGang: gang scheduling by a real scheduler, scheduler-plugins' Coscheduling, which
// mpi-operator and the training-operator are started for (run.sh). For an MPIJob, an elastic
// PyTorchJob and a TrainJob on a coscheduling runtime, each made by mlops-fn init for the pool:
//
//	(a) the operator makes the PodGroup with the minimum mlops-fn rendered (or the operator's
//	    default where mlops-fn leaves it), labels the pods with it and names the gang scheduler;
//	(b) with room in the pool for fewer members than that minimum, no pod of the job is bound
//	    over two scheduling attempts (none half started; an MPIJob's launcher, which has room
//	    outside the pool, is held too);
//	(c) room for the minimum: that many are bound, and no more where the rest has no room;
//	(d) room for all: all are bound.
//
// And a control, an MPIJob with minAvailable 1: with the same room, part of it is bound, which
// is what (b) would see with a wrong minimum or without the gang scheduler.
func TestGang(t *testing.T) {
	section("gang scheduling: scheduler-plugins' Coscheduling")
	c := newCheck(t, "")
	if skipWhenNamed(c, "gang scheduling", false) || !gangSetup(c) {
		return
	}
	work := t.TempDir()
	for _, g := range gangJobs {
		guarded(c, func() { checkGang(newCheck(t, g.name), work, g) })
	}
}

// gangSetup makes the pool's node, its filler namespace and the coscheduling runtime.
func gangSetup(c *check) bool {
	node := fmt.Sprintf(`apiVersion: v1
kind: Node
metadata:
  name: %[1]s
  annotations: {kwok.x-k8s.io/node: fake, node.alpha.kubernetes.io/ttl: "0"}
  labels: {kubernetes.io/hostname: %[1]s, type: kwok, %[2]s: %[3]s}
spec:
  taints: [{key: %[2]s, value: %[3]s, effect: NoSchedule}]
status:
  allocatable: {cpu: "%[4]d", memory: 64Gi, pods: "110"}
  capacity: {cpu: "%[4]d", memory: 64Gi, pods: "110"}
`, gangNode, gangPoolKey, gangPool, gangNodeCPUs)
	if err := applyYAML(node); err != nil {
		c.fail("the gang pool's node "+gangNode, err.Error())
		return false
	}
	if !c.that("the gang pool's node "+gangNode+" is Ready", waitUntil(60*time.Second, func() bool {
		n, err := kube.CoreV1().Nodes().Get(ctx, gangNode, metav1.GetOptions{})
		return err == nil && nodeReady(n)
	})) {
		return false
	}
	if err := newNamespace(gangFillNS, ""); err != nil {
		c.fail("the fillers' namespace", err.Error())
		return false
	}
	return gangRuntimeSetup(c)
}

func nodeReady(n *corev1.Node) bool {
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// gangRuntimeSetup: the torch-distributed ClusterTrainingRuntime copied as gangRuntime, with
// podGroupPolicy.coscheduling and the gang scheduler named in each replicated job's pods.
func gangRuntimeSetup(c *check) bool {
	u, err := getUnstructured(trainer.GroupVersion.String(), trainer.ClusterTrainingRuntimeKind, "", "torch-distributed")
	if err != nil {
		c.fail("Trainer's torch-distributed ClusterTrainingRuntime", err.Error())
		return false
	}
	rt := &unstructured.Unstructured{Object: map[string]any{"apiVersion": u.GetAPIVersion(), "kind": u.GetKind(), "spec": u.Object["spec"]}}
	rt.SetName(gangRuntime)
	rt.SetLabels(u.GetLabels())
	err = unstructured.SetNestedField(rt.Object, map[string]any{"coscheduling": map[string]any{"scheduleTimeoutSeconds": int64(60)}}, "spec", "podGroupPolicy")
	jobs, _, _ := unstructured.NestedSlice(rt.Object, "spec", "template", "spec", "replicatedJobs")
	for _, j := range jobs {
		if err == nil {
			err = unstructured.SetNestedField(j.(map[string]any), os.Getenv("GANG_SCHEDULER"), "template", "spec", "template", "spec", "schedulerName")
		}
	}
	if err == nil {
		err = unstructured.SetNestedSlice(rt.Object, jobs, "spec", "template", "spec", "replicatedJobs")
	}
	if err == nil {
		err = applyYAML(jsonText(rt.Object))
	}
	return c.that(fmt.Sprintf("the ClusterTrainingRuntime %s (torch-distributed, podGroupPolicy.coscheduling, schedulerName %s) is accepted by Trainer's webhook",
		gangRuntime, os.Getenv("GANG_SCHEDULER")), err == nil, fmt.Sprint(err))
}

// gangRoom leaves n CPUs of the pool's node free: 1-CPU filler pods bound to it (by nodeName,
// past any scheduler) for the rest, added or deleted until that many run.
func gangRoom(n int) error {
	want := gangNodeCPUs - n
	for i := range gangNodeCPUs {
		name := fmt.Sprintf("fill-%d", i)
		if i >= want {
			err := kube.CoreV1().Pods(gangFillNS).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
			if err != nil && !apierrors.IsNotFound(err) {
				return err
			}
			continue
		}
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: gangFillNS},
			Spec: corev1.PodSpec{
				NodeName:    gangNode,
				Tolerations: []corev1.Toleration{{Key: gangPoolKey, Value: gangPool, Effect: corev1.TaintEffectNoSchedule}},
				Containers: []corev1.Container{{Name: "fill", Image: "registry.k8s.io/pause:3.10",
					Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}},
			},
		}
		if _, err := kube.CoreV1().Pods(gangFillNS).Create(ctx, p, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	if !waitUntil(waitForPods, func() bool { return allInPhase(gangFillNS, "", want, corev1.PodRunning) }) {
		return fmt.Errorf("%d filler pods do not run: %s", want, podTable(gangFillNS))
	}
	return nil
}

// gangFolder: mlops-fn init's folder for g, its mlops.env and job.yaml set for the pool, hydrated.
func gangFolder(work string, g gangJob) (string, error) {
	dir := filepath.Join(work, g.name)
	if out, err := runMlopsFn("init", "--kind", string(g.jobKind), dir); err != nil {
		return "", fmt.Errorf("mlops-fn init: %s", out)
	}
	env := map[string]string{"CPU": "1", "MEMORY": "256Mi"}
	for k, v := range g.env {
		env[k] = v
	}
	spec := fmt.Sprintf("  nodeSelector: {%s: %s}\n  tolerations: [{key: %s, value: %s, effect: NoSchedule}]\n", gangPoolKey, gangPool, gangPoolKey, gangPool) + g.spec
	err := editFile(filepath.Join(dir, "mlops.env"), func(s string) string {
		for k, v := range env {
			line := regexp.MustCompile(`(?m)^` + k + `=.*$`)
			if line.MatchString(s) {
				s = line.ReplaceAllLiteralString(s, k+"="+v)
			} else {
				s += k + "=" + v + "\n"
			}
		}
		return s
	})
	if err == nil {
		err = editFile(filepath.Join(dir, "job.yaml"), func(s string) string {
			s = strings.Replace(s, "runtime: torch-distributed ", "runtime: "+gangRuntime+" ", 1)
			return strings.TrimSuffix(s, "\n") + "\n" + spec
		})
	}
	if err != nil {
		return "", err
	}
	if out, err := runMlopsFn("hydrate", dir); err != nil {
		return "", fmt.Errorf("mlops-fn hydrate: %s", out)
	}
	return dir, nil
}

func editFile(path string, edit func(string) string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return os.WriteFile(path, []byte(edit(string(b))), 0o644)
}

// gangPods are the job's pods as its operator labels them, and how many are bound to a node.
func gangPods(ns string, o *overlay) ([]corev1.Pod, int) {
	ps := pods(ns, o.kind.PodsLabel+"="+o.name)
	bound := 0
	for _, p := range ps {
		if p.Spec.NodeName != "" {
			bound++
		}
	}
	return ps, bound
}

// triedAll: n pods exist, and the scheduler has tried each (PodScheduled False).
func triedAll(ns string, o *overlay, n int) bool {
	ps, _ := gangPods(ns, o)
	if len(ps) < n {
		return false
	}
	for _, p := range ps {
		tried := false
		for _, cond := range p.Status.Conditions {
			tried = tried || cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse
		}
		if !tried {
			return false
		}
	}
	return true
}

// boundStays: for d, never more than n of the job's pods are bound.
func boundStays(ns string, o *overlay, n int, d time.Duration) bool {
	return !waitUntil(d, func() bool { _, b := gangPods(ns, o); return b > n })
}

func checkGang(c *check, work string, g gangJob) {
	dir, err := gangFolder(work, g)
	if err != nil {
		c.fail("the job's folder", err.Error())
		return
	}
	o, err := loadOverlay(dir)
	if err != nil {
		c.fail("the hydrated overlay builds", err.Error())
		return
	}
	ns := g.name
	if err := newNamespace(ns, ""); err != nil {
		c.fail("a namespace", err.Error())
		return
	}
	defer func() {
		_ = deleteObject(o.kind.APIVersion, o.kind.Kind, ns, o.name)
		waitUntil(waitForPods, func() bool { ps, _ := gangPods(ns, o); return len(ps) == 0 })
	}()

	// (b) room in the pool for fewer members than the minimum
	if err := gangRoom(g.short); err != nil {
		c.fail(fmt.Sprintf("%d CPUs free on %s", g.short, gangNode), err.Error())
		return
	}
	if out, err := kubectl("", "apply", "-k", dir, "-n", ns, "--server-side"); err != nil {
		c.fail("apply -k", out)
		return
	}

	// (a) the PodGroup and the pods' scheduler
	var pg *unstructured.Unstructured
	if !c.that("the operator creates the PodGroup "+o.name, waitUntil(waitForPods, func() bool {
		pg, err = getUnstructured(podGroupAPI, "PodGroup", ns, o.name)
		return err == nil
	}), fmt.Sprint(err), recentEvents(ns, 5)) {
		return
	}
	c.eq("the PodGroup's minMember", fmt.Sprint(g.min), nested(pg, "spec", "minMember"))
	created := g.all
	if o.plan.MPI.LauncherCreationPolicy == api.WaitForWorkersReady {
		created = g.all - 1 // the launcher comes once the workers run
	}
	if g.partial > 0 {
		c.that(fmt.Sprintf("the control (minAvailable %d), room in the pool for %d: %d of its %d pods are bound, the job half started", g.min, g.short, g.partial, g.all),
			waitUntil(waitForPods, func() bool { _, b := gangPods(ns, o); return b == g.partial }) && boundStays(ns, o, g.partial, gangCycle), podTable(ns))
		return
	}
	if !c.that(fmt.Sprintf("the operator creates %d pods and the scheduler tries each", created),
		waitUntil(waitForPods, func() bool { return triedAll(ns, o, created) }), podTable(ns), recentEvents(ns, 5)) {
		return
	}
	ps, _ := gangPods(ns, o)
	for _, p := range ps {
		c.eq(fmt.Sprintf("pod/%s: schedulerName, and the PodGroup label %s", p.Name, podGroupLabel),
			os.Getenv("GANG_SCHEDULER")+" "+o.name, p.Spec.SchedulerName+" "+p.Labels[podGroupLabel])
	}
	c.that(fmt.Sprintf("room in the pool for %d, short of the minimum %d: no pod is bound, over two scheduling attempts", g.short, g.min),
		boundStays(ns, o, 0, 2*gangCycle), podTable(ns), recentEvents(ns, 3))

	// (c) room for the minimum
	if err := gangRoom(g.minRoom); err != nil {
		c.fail(fmt.Sprintf("%d CPUs free", g.minRoom), err.Error())
		return
	}
	if !c.that(fmt.Sprintf("room in the pool for the minimum (%d): %d pods are bound", g.minRoom, g.minBound),
		waitUntil(waitForPods, func() bool { _, b := gangPods(ns, o); return b >= g.minBound }), podTable(ns)) {
		return
	}
	if g.minBound < created {
		c.that(fmt.Sprintf("and no more than %d, the room there is", g.minBound), boundStays(ns, o, g.minBound, gangCycle), podTable(ns))
	}

	// (d) room for all
	if g.allRoom > 0 {
		if err := gangRoom(g.allRoom); err != nil {
			c.fail(fmt.Sprintf("%d CPUs free", g.allRoom), err.Error())
			return
		}
		c.that(fmt.Sprintf("room for all: the %d pods are bound", g.all),
			waitUntil(waitForPods, func() bool { ps, b := gangPods(ns, o); return len(ps) == g.all && b == g.all }), podTable(ns), recentEvents(ns, 3))
	}
}
