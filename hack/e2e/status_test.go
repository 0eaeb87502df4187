// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/kinds"
	"github.com/mlops-fn/mlops-fn/pkg/kinds/jobset"
)

// mlopsStatus runs mlops-fn status on the overlay dir in namespace ns: its output and exit error.
func mlopsStatus(dir, ns string) (string, error) {
	return runMlopsFn("status", dir, "--namespace", ns)
}

// statusSays waits until mlops-fn status prints a first line starting with head and lines
// containing each of lines, exiting 0; it returns the last output, whether it did, and its error.
func statusSays(dir, ns, head string, lines ...string) (string, bool, error) {
	var out string
	var err error
	ok := waitUntil(waitForPods, func() bool {
		out, err = mlopsStatus(dir, ns)
		if err != nil || !strings.HasPrefix(out, head) {
			return false
		}
		for _, l := range lines {
			if !strings.Contains(out, l) {
				return false
			}
		}
		return true
	})
	return out, ok, err
}

// expectStatus: mlops-fn status says head (its first line) and lines, and exits 0, in the state named what.
func expectStatus(c *check, what, dir, ns, head string, lines ...string) string {
	out, ok, err := statusSays(dir, ns, head, lines...)
	detail := []string{"mlops-fn status printed:", out}
	if err != nil {
		detail = append(detail, "exit: "+err.Error())
	}
	if c.that(fmt.Sprintf("%s: mlops-fn status exits 0 and says %q %s", what, head, strings.Join(quoteAll(lines), " ")), ok, detail...) {
		note("%s: mlops-fn status printed:\n%s", what, strings.TrimRight(out, "\n"))
	}
	return out
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = strconv.Quote(v)
	}
	return out
}

// statusHead is the first line mlops-fn status prints for the overlay's job in ns, up to its phase.
func statusHead(o *overlay, ns, phase string) string {
	return fmt.Sprintf("%s/%s  namespace %s  %s  pods ", o.kind.Kind, o.name, ns, phase)
}

// finalPhase is the phase a kind ends in when it went well.
func finalPhase(o *overlay) string {
	switch o.kind.JobKind() {
	case jobkind.TrainJob:
		return "Complete"
	case jobset.JobSet:
		return "Completed"
	}
	return "Succeeded"
}

// heldPhase is the phase of a job Kueue holds: suspended, a Pod gated and Pending.
func heldPhase(o *overlay) string {
	if o.kind.JobKind() == jobkind.Pod {
		return "Pending"
	}
	return "Suspended"
}

// checkStatus: the quickstart overlay dir (a copy) in each state mlops-fn status tells apart:
// running; finished; its pods refused by Pod Security (under 'restricted', where the job needs
// more); queued with no such LocalQueue; held by Kueue at quota 0.
func checkStatus(c *check, dir string) {
	o, err := loadOverlay(dir)
	if err != nil {
		c.fail(dir+" builds", err.Error())
		return
	}
	n := o.podCount()

	// Running, then finished.
	ns := "status-" + o.slug
	if !statusApply(c, o, dir, ns, func() error { return newNamespace(ns, "privileged") }) {
		return
	}
	if !c.that(fmt.Sprintf("its %d pods Running", n), waitUntil(waitForPods, func() bool { return running(ns, n) }), podTable(ns)) {
		return
	}
	out := expectStatus(c, "running", dir, ns, statusHead(o, ns, "Running")+fmt.Sprintf("%d/%d ready\n", n, n))
	c.that("running: no line says it waits", !strings.Contains(out, "waiting:"), out)
	c.eq("running: a line for each pod, each ready", n, strings.Count(out, "  ready"))
	var names []string
	for _, p := range pods(ns, "") {
		names = append(names, p.Name)
	}
	if o.kind.JobKind() == jobkind.MPIJob {
		names = podNames(jobPods(o, ns, "launcher"))
	}
	if err := complete(ns, names...); err != nil {
		c.fail("its pods complete", err.Error())
		return
	}
	out = expectStatus(c, "finished", dir, ns, statusHead(o, ns, finalPhase(o)))
	c.that("finished: no line says it waits", !strings.Contains(out, "waiting:") && !strings.Contains(out, "why:"), out)

	// Pod Security refuses the operator's pods (a Pod is refused at apply: there is no job).
	if o.level != "restricted" && o.kind.JobKind() != jobkind.Pod {
		restricted := "status-restricted-" + o.slug
		if err := newNamespace(restricted, "restricted"); err != nil {
			c.fail("a namespace enforcing restricted", err.Error())
			return
		}
		if out, err := kubectl("", "apply", "-k", dir, "-n", restricted, "--server-side"); err != nil {
			c.fail("kubectl apply -k under 'restricted'", out)
			return
		}
		expectStatus(c, "under 'restricted' (it needs "+o.level+")", dir, restricted, fmt.Sprintf("%s/%s  namespace %s  ", o.kind.Kind, o.name, restricted),
			"waiting: Pod Security refuses its pods", `violates PodSecurity "restricted`)
	}

	// Queued in a LocalQueue that does not exist.
	const missing = "no-such-queue"
	if err := editEnv(dir, "QUEUE", missing); err != nil {
		c.fail("QUEUE set in mlops.env", err.Error())
		return
	}
	noQueue := "status-noqueue-" + o.slug
	if !statusApply(c, o, dir, noQueue, func() error { return newNamespace(noQueue, "privileged") }) {
		return
	}
	expectStatus(c, "QUEUE="+missing+", no such LocalQueue", dir, noQueue, statusHead(o, noQueue, heldPhase(o)),
		fmt.Sprintf("waiting: Kueue: no LocalQueue %s in namespace %s", missing, noQueue))

	// Held by Kueue: a LocalQueue whose ClusterQueue has no quota.
	if err := editEnv(dir, "QUEUE", kueueQueue); err != nil {
		c.fail("QUEUE set in mlops.env", err.Error())
		return
	}
	if err := kueueQuota(nil); err != nil {
		c.fail("the ClusterQueue's quota set to 0", err.Error())
		return
	}
	quota := "status-quota-" + o.slug
	if !statusApply(c, o, dir, quota, func() error { return kueueNamespace(c, quota) }) {
		return
	}
	expectStatus(c, "QUEUE="+kueueQueue+", quota 0", dir, quota, statusHead(o, quota, heldPhase(o)),
		"waiting: Kueue has not admitted it (Workload ", "in LocalQueue "+kueueQueue+"): ", "insufficient quota")
	for _, n := range []string{ns, noQueue, quota} {
		_ = deleteObject(o.kind.APIVersion, o.kind.Kind, n, o.name)
	}
}

// statusApply makes namespace ns (newNamespace) with the overlay's fixtures and applies the overlay
// dir there with mlops-fn apply.
func statusApply(c *check, o *overlay, dir, ns string, newNamespace func() error) bool {
	if err := newNamespace(); err != nil {
		c.fail("namespace "+ns, err.Error())
		return false
	}
	claimFixtures(c, o, ns)
	out, err := runWithoutKubectl("apply", dir, "--namespace", ns)
	if err != nil {
		c.fail("mlops-fn apply in namespace "+ns, out)
	}
	return err == nil
}

// TestStatus: mlops-fn status on each quickstart kind, in each state it tells apart.
func TestStatus(t *testing.T) {
	section("mlops-fn status: where a job is, and why it waits")
	c := newCheck(t, "")
	if skipWhenNamed(c, "mlops-fn status over the quickstarts", os.Getenv("E2E_KUEUE") == "1") {
		return
	}
	// TestKueue may have made the ClusterQueue and patched its quota (a second server-side apply
	// of it would conflict with that patch).
	if conditionOf(kueueAPI, "ClusterQueue", "", kueueClusterQueue, "Active") != "True" && !kueueSetup(c) {
		return
	}
	tree, dirs := quickstartTree(t)
	for _, dir := range dirs {
		c := newCheck(t, dir+": mlops-fn status")
		guarded(c, func() { checkStatus(c, filepath.Join(tree, dir)) })
	}
}

// mlopsLogs runs mlops-fn logs -f on the job folder dir in ns until it ends (or after waitForRun):
// its stdout, its stderr, and its exit error.
func mlopsLogs(dir, ns string) (string, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), waitForRun)
	defer cancel()
	cmd := exec.CommandContext(ctx, mlopsFn(), "logs", "-f", dir, "--namespace", ns)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// logsJob is a job on the real node whose program prints report lines, and what mlops-fn logs
// must show of them: want checks the reports of the log it followed.
type logsJob struct {
	realJob
	apiVersion, kind, done string
	want                   func(rs []report) (string, bool)
}

// TestRealLogs: mlops-fn logs -f follows the training program of each kind on the real node,
// from before its pod starts to the job's end: the MPIJob's launcher (every rank's line, from
// mpirun), the elastic PyTorchJob's worker 0, the TrainJob's node 0, the Pod. Then mlops-fn
// status says the job finished; a Pod whose image does not pull is said to wait for it.
func TestRealLogs(t *testing.T) {
	section("real node: mlops-fn logs follows each kind's training program")
	c := newCheck(t, "mlops-fn logs")
	if realNode() == "" {
		c.skip("no real node")
		return
	}
	const workers = 2
	mpiLine := `from mpi4py import MPI
c = MPI.COMM_WORLD
print("mlops-fn-e2e rank=%d size=%d" % (c.Get_rank(), c.Get_size()), flush=True)
`
	ranks := func(rs []report) (string, bool) {
		seen := map[int]bool{}
		for _, r := range rs {
			if r.int("size") == workers {
				seen[r.int("rank")] = true
			}
		}
		return fmt.Sprintf("the lines of ranks 0..%d, from mpirun on the launcher", workers-1), len(seen) == workers && seen[0] && seen[workers-1]
	}
	onlyHost := func(host string) func(rs []report) (string, bool) {
		return func(rs []report) (string, bool) {
			ok := len(rs) >= 2
			for _, r := range rs {
				ok = ok && strings.HasPrefix(r["host"], host) && r.int("world") == workers
			}
			return fmt.Sprintf("only %s's lines, both steps, in a world of %d", host, workers), ok
		}
	}
	jobs := []logsJob{
		{realJob{name: "logs-pod", jobKind: "Pod",
			spec: "  image: " + mpiImage + "\n  command: [sh, -c, " + strconv.Quote(`sleep 2; echo "mlops-fn-e2e host=$(hostname) step=0"`) + "]\n",
			env:  "USER_ID=1000\nGROUP_ID=1000\nCPU=250m\nMEMORY=256Mi\n"}, "v1", "Pod", "Succeeded",
			func(rs []report) (string, bool) {
				return "the Pod's line", len(rs) == 1 && rs[0]["host"] == "logs-pod"
			}},
		{realJob{name: "logs-mpi", jobKind: "MPIJob",
			spec: "  image: " + mpiImage + "\n  command: [python3, -c, " + strconv.Quote(mpiLine) + "]\n",
			env:  fmt.Sprintf("USER_ID=1000\nGROUP_ID=1000\nFS_GROUP=2000\nUSER_NAME=mpiuser\nWORKERS=%d\nCPU=250m\nMEMORY=256Mi\n", workers)},
			"kubeflow.org/v2beta1", "MPIJob", "Succeeded", ranks},
		{realJob{name: "logs-elastic", jobKind: "PyTorchJob", spec: "  image: " + torchImage + "\n" + torchCommand(2),
			env: fmt.Sprintf("USER_ID=1000\nGROUP_ID=1000\nWORKERS=%d\nMIN_WORKERS=%d\nMAX_WORKERS=%d\nCPU=500m\nMEMORY=1Gi\n", workers, workers, workers)},
			"kubeflow.org/v1", "PyTorchJob", "Succeeded", onlyHost("logs-elastic-worker-0")},
		{realJob{name: "logs-trainjob", jobKind: "TrainJob", spec: "  image: " + torchImage + "\n" + torchCommand(2) + "  trainer: {runtime: torch-distributed}\n",
			env: fmt.Sprintf("USER_ID=1000\nGROUP_ID=1000\nWORKERS=%d\nCPU=500m\nMEMORY=1Gi\n", workers)},
			"trainer.kubeflow.org/v1alpha1", "TrainJob", "Complete", onlyHost("logs-trainjob-node-0-0")},
		{realJob{name: "logs-jobset", jobKind: "JobSet", spec: "  image: " + torchImage + "\n" + torchCommand(2),
			env: fmt.Sprintf("USER_ID=1000\nGROUP_ID=1000\nWORKERS=%d\nCPU=500m\nMEMORY=1Gi\n", workers)},
			"jobset.x-k8s.io/v1alpha2", "JobSet", "Completed", onlyHost("logs-jobset-node-0-0")},
	}
	for _, j := range jobs {
		c := newCheck(t, "mlops-fn logs -f, "+j.kind)
		guarded(c, func() { checkRealLogs(t, c, j) })
	}
	guarded(c, func() { checkImagePull(t, c) })
}

// checkRealLogs: mlops-fn logs -f, started right after the apply, prints the program's lines and
// ends when the job has; mlops-fn status then says the job's final phase; mlops-fn logs without
// -f prints the same lines again.
func checkRealLogs(t *testing.T, c *check, j logsJob) {
	defer took(time.Now())
	ns := "real-" + j.name
	dir, ok := applyOnRealNode(t, c, j.realJob, ns)
	if !ok {
		return
	}
	stdout, stderr, err := mlopsLogs(dir, ns)
	what, ok := j.want(reports(stdout))
	if !c.that(fmt.Sprintf("mlops-fn logs -f exits 0 once the %s has ended, having printed %s", j.kind, what), err == nil && ok,
		"exit: "+fmt.Sprint(err), "stdout:", stdout, "stderr:", stderr, podTable(ns), recentEvents(ns, 10)) {
		return
	}
	note("mlops-fn logs -f printed (stdout):\n%s\nand on stderr:\n%s", strings.TrimRight(stdout, "\n"), strings.TrimRight(stderr, "\n"))
	c.eq(fmt.Sprintf("the %s has ended: %s", j.kind, j.done), j.done, jobEnded(j, ns))
	o := &overlay{kind: mustKind(j.kind), name: j.name}
	expectStatus(c, "ended", dir, ns, statusHead(o, ns, j.done))
	again, err := runMlopsFn("logs", dir, "--namespace", ns)
	_, ok = j.want(reports(again))
	c.that("mlops-fn logs (no -f) prints them again", err == nil && ok, again)
}

// applyOnRealNode makes namespace ns on the real node, the job's folder (mlops-fn init, its
// job.yaml and mlops.env, hydrate) and applies it there with kubectl apply -k; it returns the folder.
func applyOnRealNode(t *testing.T, c *check, j realJob, ns string) (string, bool) {
	if err := realNamespace(t, ns); err != nil {
		c.fail("a namespace on the real node", err.Error())
		return "", false
	}
	dir, err := j.hydrate(t.TempDir())
	if err != nil {
		c.fail("mlops-fn init and hydrate", err.Error())
		return "", false
	}
	if out, err := kubectl("", "apply", "-k", dir, "-n", ns, "--server-side"); err != nil {
		c.fail("kubectl apply -k", out)
		return "", false
	}
	return dir, true
}

// jobEnded is the job's phase once it ended: a Pod's phase, a job's final condition.
func jobEnded(j logsJob, ns string) string {
	if j.kind == "Pod" {
		p, err := kube.CoreV1().Pods(ns).Get(ctx, j.name, metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		return string(p.Status.Phase)
	}
	return jobFinished(j.apiVersion, j.kind, ns, j.name, j.done)
}

func mustKind(kind string) jobkind.Facts {
	k, _ := kinds.All.ForKind(kind)
	return k
}

// checkImagePull: a Pod whose image does not exist: mlops-fn status names the image and the
// kubelet's reason; mlops-fn logs without -f says what the program waits for and exits 1.
func checkImagePull(t *testing.T, c *check) {
	const image = "localhost/mlops-fn-e2e/no-such-image:1"
	ns := "real-no-image"
	j := realJob{name: "no-image", jobKind: "Pod", spec: "  image: " + image + "\n  command: [sh, -c, 'echo never']\n",
		env: "USER_ID=1000\nGROUP_ID=1000\nCPU=250m\nMEMORY=256Mi\n"}
	dir, ok := applyOnRealNode(t, c, j, ns)
	if !ok {
		return
	}
	o := &overlay{kind: mustKind("Pod"), name: j.name}
	expectStatus(c, "an image that does not pull", dir, ns, statusHead(o, ns, string(corev1.PodPending)),
		"waiting: pod no-image: the image "+image+" of container ", " does not pull (")
	out, err := runMlopsFn("logs", dir, "--namespace", ns)
	c.that("mlops-fn logs (no -f) exits 1, naming what the program waits for", err != nil && strings.Contains(out, "pod no-image, container ") &&
		(strings.Contains(out, "ErrImagePull") || strings.Contains(out, "ImagePullBackOff")), out)
}
