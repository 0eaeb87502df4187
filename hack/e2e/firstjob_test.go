// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/mlops-fn/mlops-fn/internal/testutil"
	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
)

// TestRealWalkthrough: the README's first job, its lines run as written by bash (mlops-fn and
// kubectl on PATH, the kubeconfig's namespace one on the real node, as a user's context names
// theirs), and the same without the edit (init, then no change): each MPIJob Succeeds on the real
// node of two cores, mpi-operator's pi in every rank. Before issue 49 the launcher (1 CPU) stayed
// Pending beside two workers of CPU=1, and WORKERS=3 never scheduled.
func TestRealWalkthrough(t *testing.T) {
	section("real node: the README's first job, as written")
	c := newCheck(t, "walkthrough")
	if realNode() == "" {
		c.skip("no real node")
		return
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		c.fail("the README", err.Error())
		return
	}
	block, ok := testutil.MarkedBlock(string(readme), "walkthrough")
	if !ok {
		c.fail("the README's walkthrough", "no ```sh block between <!-- walkthrough: … --> and <!-- /walkthrough -->")
		return
	}
	var lines []string
	for _, l := range strings.Split(block, "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	for _, run := range []struct {
		ns, what string
		edit     bool
		workers  int
	}{{"real-walkthrough", "the walkthrough", true, 3}, {"real-first-job", "init with no edit", false, 2}} {
		guarded(c, func() { runWalkthrough(c, t, lines, run.ns, run.what, run.edit, run.workers) })
	}
}

// runWalkthrough runs lines in a new folder with the kubeconfig's namespace ns; without edit, the
// lines that are neither mlops-fn's nor kubectl's (the edit) are left out. pi must report workers.
func runWalkthrough(c *check, t *testing.T, lines []string, ns, what string, edit bool, workers int) {
	defer took(time.Now())
	if err := realNamespace(t, ns); err != nil {
		c.fail("a namespace on the real node", err.Error())
		return
	}
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	text, err := os.ReadFile(os.Getenv("KUBECONFIG"))
	if err == nil {
		err = os.WriteFile(kubeconfig, text, 0o600)
	}
	if err != nil {
		c.fail("a kubeconfig of the user's", err.Error())
		return
	}
	if out, err := runWith("", "kubectl", "--kubeconfig", kubeconfig, "config", "set-context", "--current", "--namespace", ns); err != nil {
		c.fail("the kubeconfig's namespace", out)
		return
	}
	kubectlPath, err := exec.LookPath("kubectl")
	if err != nil {
		c.fail("kubectl on PATH", err.Error())
		return
	}
	path := filepath.Dir(mlopsFn()) + string(os.PathListSeparator) + filepath.Dir(kubectlPath) + string(os.PathListSeparator) + os.Getenv("PATH")
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		c.fail("a working folder", err.Error())
		return
	}
	for _, line := range lines {
		if !edit && !strings.HasPrefix(line, "mlops-fn ") && !strings.HasPrefix(line, "kubectl ") {
			continue // the edit
		}
		if strings.HasPrefix(line, "kubectl delete") {
			finished := jobFinished("kubeflow.org/v2beta1", "MPIJob", ns, "my-job", "Succeeded")
			if !c.eq(what+": the MPIJob my-job Succeeded on the real node", "Succeeded", finished) {
				note("%s\n%s", podTable(ns), recentEvents(ns, 10))
				return
			}
		}
		runCtx, cancel := context.WithTimeout(ctx, waitForRun)
		cmd := exec.CommandContext(runCtx, "bash", "-c", line)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "PATH="+path, "KUBECONFIG="+kubeconfig)
		out, err := cmd.CombinedOutput()
		cancel()
		if !c.that(fmt.Sprintf("%s: %s", what, strings.Join(strings.Fields(strings.SplitN(line, "#", 2)[0]), " ")), err == nil, string(out), fmt.Sprint(err)) {
			note("%s\n%s", podTable(ns), recentEvents(ns, 10))
			return
		}
		if strings.HasPrefix(line, "mlops-fn logs") {
			c.that(fmt.Sprintf("%s: the launcher's log has pi's result over %d workers", what, workers), strings.Contains(string(out), "pi is approximately") &&
				strings.Contains(string(out), fmt.Sprintf("Workers: %d\n", workers)), string(out))
		}
	}
	c.eq(what+": kubectl delete -k left no MPIJob", 0, len(mpiJobs(ns)))
}

// mpiJobs are the MPIJobs in ns, by name.
func mpiJobs(ns string) []string {
	l, err := list("kubeflow.org/v2beta1", "MPIJob", ns)
	if err != nil {
		return []string{err.Error()}
	}
	var names []string
	for _, u := range l {
		if u.GetDeletionTimestamp() == nil {
			names = append(names, u.GetName())
		}
	}
	return names
}

// TestApplyWarnsUnfit: mlops-fn apply warns, naming the numbers of the cluster's real Node objects
// (kwok's and the real node), of a worker larger than the largest node and of workers that
// together need more than all nodes; a job that fits (init's) gets no such warning.
func TestApplyWarnsUnfit(t *testing.T) {
	section("apply: pods that can never all fit the cluster's nodes")
	c := newCheck(t, "apply unfit")
	l, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		c.fail("listing the nodes", err.Error())
		return
	}
	var largest, all resource.Quantity
	var on string
	for _, n := range l.Items {
		if n.Spec.Unschedulable {
			continue
		}
		q := n.Status.Allocatable[corev1.ResourceCPU]
		all.Add(q)
		if q.Cmp(largest) > 0 {
			largest, on = q, n.Name
		}
	}
	ns := "apply-unfit"
	if err := newNamespace(ns, ""); err != nil {
		c.fail("namespace "+ns, err.Error())
		return
	}
	defer deleteNamespace(ns)
	tooLarge := largest.Value() + 1
	together := all.Value()/2 + 1 // two workers of this fit one by one, not together
	for _, run := range []struct {
		name, env, want string
	}{
		{"too-large", fmt.Sprintf("WORKERS=2\nCPU=%d\n", tooLarge),
			fmt.Sprintf("MPIJob/too-large: each Worker pod requests cpu %d, more than any node allocates (the largest, %s: %s): it can never be scheduled; lower CPU (mlops.env)", tooLarge, on, largest.String())},
		{"together", fmt.Sprintf("WORKERS=2\nCPU=%d\n", together),
			fmt.Sprintf("MPIJob/together: its 3 pods run at once and request cpu %s together (Launcher 1 × 100m + Worker 2 × %d), more than all %d schedulable nodes allocate (%s: ",
				sum(fmt.Sprint(2*together), "100m"), together, len(schedulable(l.Items)), all.String())},
		{"fits", "", ""},
	} {
		if run.name == "together" && together > largest.Value() {
			c.skip("two workers that fit one node each but not all nodes together: the largest node is not larger than the others together")
			continue
		}
		dir := filepath.Join(t.TempDir(), run.name)
		if out, err := runMlopsFn("init", dir); err != nil {
			c.fail("mlops-fn init "+run.name, out)
			continue
		}
		if run.env != "" {
			if err := os.WriteFile(filepath.Join(dir, "mlops.env"), []byte("USER_ID=1000\nGROUP_ID=1000\nUSER_NAME=mpiuser\n"+run.env), 0o644); err != nil {
				c.fail("mlops.env", err.Error())
				continue
			}
		}
		cmd := exec.Command(mlopsFn(), "apply", dir, "--namespace", ns)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if !c.that(run.name+": mlops-fn apply applies it (a warning is no error)", err == nil && strings.Contains(string(out), "MPIJob/"+run.name+" created"), string(out), stderr.String()) {
			continue
		}
		if run.want == "" {
			c.that(run.name+": init's job fits: no warning of the nodes", !strings.Contains(stderr.String(), "can never"), stderr.String())
			continue
		}
		c.that(fmt.Sprintf("%s: mlops-fn apply warns %q", run.name, run.want), strings.Contains(stderr.String(), "mlops-fn: warning: "+run.want), stderr.String())
	}
}

func schedulable(nodes []corev1.Node) []corev1.Node {
	var out []corev1.Node
	for _, n := range nodes {
		if !n.Spec.Unschedulable {
			out = append(out, n)
		}
	}
	return out
}

// sum is the quantities' sum, as Kubernetes writes it.
func sum(qs ...string) string {
	var s resource.Quantity
	for _, q := range qs {
		s.Add(resource.MustParse(q))
	}
	return s.String()
}

// TestKueueNotManaged: a PyTorchJob with QUEUE that Kueue does not manage runs unqueued, and
// mlops-fn apply and status say so. Kueue v0.19's default configuration leaves
// kubeflow.org/pytorchjob out (TestKueueDefault runs it); this control plane's Kueue enables it
// (run.sh), so the job goes where this Kueue manages nothing: kube-system, outside its
// managedJobsNamespaceSelector and its webhooks' namespaceSelector. There Kueue acts as it does on
// every PyTorchJob with the integration off: its webhook passes the job unsuspended, its
// controller makes no Workload. The same job in a namespace Kueue manages is held, with no such
// warning.
func TestKueueNotManaged(t *testing.T) {
	section("Kueue: a job of a QUEUE that Kueue does not manage")
	c := newCheck(t, "Kueue not managed")
	if skipWhenNamed(c, "the Kueue checks", os.Getenv("E2E_KUEUE") == "1") {
		return
	}
	managed := "kueue-managed-pytorchjob"
	if err := newNamespace(managed, ""); err != nil {
		c.fail("namespace "+managed, err.Error())
		return
	}
	defer deleteNamespace(managed)
	dir, ok := queuedJob(c, t, "PyTorchJob", "unqueued", "team-a")
	if !ok {
		return
	}
	for _, run := range []struct {
		ns      string
		managed bool
	}{{"kube-system", false}, {managed, true}} {
		o, u, stderr, ok := mlopsApplied(c, dir, run.ns)
		if !ok {
			continue
		}
		if !run.managed {
			expectNotQueued(c, "kube-system (Kueue manages nothing there)", o, u, run.ns, "team-a", stderr)
		} else {
			c.eq(run.ns+" (Kueue manages it): the PyTorchJob is held, suspended by Kueue's webhook", "true", held(o, run.ns))
			c.that(run.ns+": mlops-fn apply does not say it is not queued", !strings.Contains(stderr, "not queued"), stderr)
		}
		if out, err := runMlopsFn("delete", dir, "--namespace", run.ns); err != nil {
			c.fail("mlops-fn delete in "+run.ns, out)
		}
	}
}

// TestKueueDefault: Kueue v0.19.2 with its release's own Configuration, its
// integrations.frameworks as the release ships them: kubeflow.org/mpijob in, kubeflow.org/pytorchjob
// commented out. run.sh restarts Kueue with it after every other check, then runs this one
// (E2E_KUEUE_CONFIG=release). Each in a namespace Kueue manages, with a LocalQueue of a
// ClusterQueue without quota: a PyTorchJob with QUEUE runs unsuspended, its pods Running, with no
// Workload, and mlops-fn apply warns and mlops-fn status notes that it is not queued; an MPIJob
// with QUEUE is held, suspended with its Workload and no pods, and mlops-fn status says it waits
// for Kueue.
func TestKueueDefault(t *testing.T) {
	section("Kueue with its release's default configuration")
	c := newCheck(t, "Kueue's default configuration")
	if skipWhenNamed(c, "the Kueue checks", os.Getenv("E2E_KUEUE") == "1") {
		return
	}
	switch config := os.Getenv("E2E_KUEUE_CONFIG"); config {
	case "":
		c.skip("Kueue runs the harness's configuration here: run.sh runs this check last, Kueue restarted with its release's")
		return
	case "release":
		c.pass("Kueue restarted with its release's configuration (integrations.frameworks of its config/components/manager/controller_manager_config.yaml)")
	default:
		c.fail("Kueue restarted with its release's configuration", config)
		return
	}
	// The ClusterQueue of the other Kueue checks, if they ran (a second server-side apply would
	// conflict with their quota patch).
	if conditionOf(kueueAPI, "ClusterQueue", "", kueueClusterQueue, "Active") != "True" && !kueueSetup(c) {
		return
	}
	if err := kueueQuota(nil); err != nil {
		c.fail("the ClusterQueue's quota set to 0", err.Error())
		return
	}
	for _, kind := range []string{"PyTorchJob", "MPIJob"} {
		name := strings.ToLower(kind)
		ns := "kueue-default-" + name
		if err := kueueNamespace(c, ns); err != nil {
			c.fail("namespace "+ns+" with the LocalQueue "+kueueQueue, err.Error())
			continue
		}
		dir, ok := queuedJob(c, t, kind, name, kueueQueue)
		if !ok {
			continue
		}
		o, u, stderr, ok := mlopsApplied(c, dir, ns)
		if !ok {
			continue
		}
		if kind == "PyTorchJob" {
			// Running first: a Workload Kueue made would be there by then.
			n := o.podCount()
			c.that(fmt.Sprintf("%s: its %d pods are created and Running", ns, n),
				waitUntil(waitForPods, func() bool { return running(ns, n) }), podTable(ns))
			expectNotQueued(c, ns+" (Kueue manages the namespace, not the kind)", o, u, ns, kueueQueue, stderr)
			continue
		}
		made := waitUntil(waitForPods, func() bool { return len(workloadsOf(u, ns)) == 1 && pending(ns) })
		w := workload(ns)
		c.that(ns+": Kueue makes the MPIJob's Workload, in LocalQueue "+kueueQueue+", and finds no quota for it",
			made && w != nil && nested(w, "spec", "queueName") == kueueQueue, jsonText(w))
		expectHeld(c, o, ns, ns)
		c.that(ns+": mlops-fn apply does not say it is not queued", !strings.Contains(stderr, "not queued"), stderr)
		expectStatus(c, ns+", the MPIJob held", dir, ns, statusHead(o, ns, heldPhase(o)),
			"waiting: Kueue has not admitted it (Workload ", "in LocalQueue "+kueueQueue+"): ", "insufficient quota")
	}
}

// queuedJob is a job folder made by mlops-fn init --kind kind, named name, with QUEUE=queue.
func queuedJob(c *check, t *testing.T, kind, name, queue string) (string, bool) {
	dir := filepath.Join(t.TempDir(), name)
	if out, err := runMlopsFn("init", dir, "--kind", kind); err != nil {
		c.fail("mlops-fn init --kind "+kind, out)
		return "", false
	}
	if err := editEnv(dir, "QUEUE", queue); err != nil {
		c.fail("QUEUE in mlops.env", err.Error())
		return "", false
	}
	return dir, true
}

// mlopsApplied runs mlops-fn apply on the job folder dir in ns: the overlay (hydrated by it), its
// job as the API server has it, and apply's stderr.
func mlopsApplied(c *check, dir, ns string) (*overlay, *unstructured.Unstructured, string, bool) {
	cmd := exec.Command(mlopsFn(), "apply", dir, "--namespace", ns)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if !c.that("mlops-fn apply "+filepath.Base(dir)+" in "+ns, err == nil, string(out), stderr.String()) {
		return nil, nil, "", false
	}
	o, err := loadOverlay(dir)
	if err != nil {
		c.fail("the overlay mlops-fn apply hydrated builds", err.Error())
		return nil, nil, "", false
	}
	u, err := getUnstructured(o.kind.APIVersion, o.kind.Kind, ns, o.name)
	if err != nil {
		c.fail("the "+o.kind.Kind+" in "+ns, err.Error())
		return nil, nil, "", false
	}
	return o, u, stderr.String(), true
}

// workloadsOf names the Workloads in ns that the job u owns.
func workloadsOf(u *unstructured.Unstructured, ns string) []string {
	workloads, err := list(kueueAPI, "Workload", ns)
	if err != nil {
		return []string{err.Error()}
	}
	var its []string
	for _, w := range workloads {
		for _, o := range w.GetOwnerReferences() {
			if o.UID == u.GetUID() {
				its = append(its, w.GetName())
			}
		}
	}
	return its
}

// expectNotQueued: the job u of the overlay o, with QUEUE=queue, was applied in ns (where) but
// Kueue does not manage it: it runs unsuspended with the queue label and no Workload, mlops-fn
// apply warned (stderr), naming integrations.frameworks, and mlops-fn status notes it.
func expectNotQueued(c *check, where string, o *overlay, u *unstructured.Unstructured, ns, queue, stderr string) {
	suspended, _, _ := unstructured.NestedBool(u.Object, "spec", "runPolicy", "suspend")
	c.that(fmt.Sprintf("%s: the %s with the queue label runs unsuspended", where, o.kind.Kind), !suspended && u.GetLabels()[api.QueueLabel] == queue, jsonText(u.Object["spec"]))
	its := workloadsOf(u, ns)
	c.that(ns+": Kueue made no Workload for it", len(its) == 0, strings.Join(its, ", "))
	note := "not queued: its label " + api.QueueLabel + " names Kueue's LocalQueue " + queue + " (QUEUE in mlops.env), but Kueue never held it and made no Workload for it"
	c.that(ns+": mlops-fn apply warns that Kueue does not queue it, naming integrations.frameworks",
		strings.Contains(stderr, "mlops-fn: warning: "+o.kind.Kind+"/"+o.name+": "+note) &&
			strings.Contains(stderr, o.kind.KueueFramework+" in its Configuration's integrations.frameworks"), stderr)
	status, err := mlopsStatus(o.dir, ns)
	c.that(ns+": mlops-fn status says it in a note: line", err == nil && strings.Contains(status, "\n  note: "+note), status)
}
