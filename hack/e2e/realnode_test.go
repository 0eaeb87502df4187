// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mlops-fn/mlops-fn/internal/testutil"
)

// The real node (hack/e2e/node.sh): the jobs below run real processes there, and every check
// reads what those processes printed or wrote. Expected values are the inputs the test writes
// (mlops.env, job.yaml), never mlops-fn's own plan: a wrong plan must fail here. TestConformance
// (conformance_test.go) is the exception: it compares what every process sees with the plan.

// The images built offline from Debian's packages (hack/e2e/images.sh).
const (
	mpiImage   = "localhost/mlops-fn-e2e/mpi:trixie"
	torchImage = "localhost/mlops-fn-e2e/torch:trixie"
)

// waitForRun is how long a real job gets to finish: images are local, the programs short.
const waitForRun = 4 * time.Minute

// realNode is the real node's name, "" when make e2e runs without one.
func realNode() string { return os.Getenv("E2E_REAL_NODE") }

// realNamespace creates a namespace whose pods run on the real node: the API server's
// PodNodeSelector and PodTolerationRestriction admission plugins add the node selector and the
// tolerations of its taints to every pod, so the jobs stay as mlops-fn renders them.
func realNamespace(t *testing.T, name string) error {
	node, err := kube.CoreV1().Nodes().Get(ctx, realNode(), metav1.GetOptions{})
	if err != nil {
		return err
	}
	var tolerations []corev1.Toleration
	for _, taint := range node.Spec.Taints {
		tolerations = append(tolerations, corev1.Toleration{Key: taint.Key, Operator: corev1.TolerationOpExists, Effect: taint.Effect})
	}
	t.Cleanup(func() { deleteNamespace(name) })
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{
		"scheduler.alpha.kubernetes.io/node-selector":      "kubernetes.io/hostname=" + realNode(),
		"scheduler.alpha.kubernetes.io/defaultTolerations": jsonText(tolerations),
	}}}
	if _, err := kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return err
	}
	if !waitUntil(30*time.Second, func() bool {
		_, err := kube.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil
	}) {
		return fmt.Errorf("namespace %s got no default ServiceAccount", name)
	}
	return nil
}

// deleteNamespace deletes a namespace, its pods at once, and waits until they are gone: the real
// node has two cores, and the next job needs them.
func deleteNamespace(name string) {
	zero := int64(0)
	_ = kube.CoreV1().Pods(name).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
	if err := kube.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		return
	}
	waitUntil(2*time.Minute, func() bool { return len(pods(name, "")) == 0 })
}

// took notes how long a real run took (docs/e2e.md gives the times).
func took(start time.Time) { note("took %d s", int(time.Since(start).Seconds())) }

// realJob is a job folder as a user makes one: mlops-fn init, then their job.yaml and mlops.env,
// then mlops-fn hydrate; kubectl apply -k runs it.
type realJob struct {
	name, jobKind string
	spec          string // job.yaml's spec, after "spec:\n" (indented two spaces)
	env           string // mlops.env
}

// hydrate writes the job's folder under dir and hydrates it; it returns the folder.
func (j realJob) hydrate(dir string) (string, error) {
	folder := filepath.Join(dir, j.name)
	if out, err := runMlopsFn("init", folder, "--kind", j.jobKind); err != nil {
		return "", fmt.Errorf("mlops-fn init: %v: %s", err, out)
	}
	spec := "apiVersion: mlops-fn.dev/v1alpha1\nkind: MLOpsJob\nmetadata:\n  name: " + j.name +
		"\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\nspec:\n  jobKind: " + j.jobKind + "\n" + j.spec
	if err := os.WriteFile(filepath.Join(folder, "job.yaml"), []byte(spec), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(folder, "mlops.env"), []byte(j.env), 0o644); err != nil {
		return "", err
	}
	if out, err := runMlopsFn("hydrate", folder); err != nil {
		return "", fmt.Errorf("mlops-fn hydrate: %v: %s", err, out)
	}
	return folder, nil
}

// sharedVolume creates a PersistentVolume on the real node (a local volume: the kubelet applies
// the pod's fsGroup to it, as it would to a disk) bound to claim "shared" in ns, and returns the
// folder behind it, which the checks read.
func sharedVolume(t *testing.T, ns string) (string, error) {
	dir := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", err
	}
	return dir, applyYAML(fmt.Sprintf(`apiVersion: v1
kind: PersistentVolume
metadata: {name: %[1]s-shared}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteMany]
  storageClassName: ""
  claimRef: {namespace: %[1]s, name: shared}
  local: {path: %[2]s}
  nodeAffinity:
    required:
      nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [%[3]s]}]}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: shared, namespace: %[1]s}
spec:
  accessModes: [ReadWriteMany]
  storageClassName: ""
  volumeName: %[1]s-shared
  resources: {requests: {storage: 1Gi}}
`, ns, dir, realNode()))
}

// logsOf is what the pod's container printed ("" for the first container).
func logsOf(ns, pod, container string) string {
	b, err := kube.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Container: container}).DoRaw(ctx)
	if err != nil {
		return "(no logs: " + err.Error() + ")"
	}
	return string(b)
}

// report is one line a test program printed: "mlops-fn-e2e key=value ...".
type report map[string]string

var reportLine = regexp.MustCompile(`(?m)^mlops-fn-e2e (.*)$`)

// reports are the report lines in text, in order.
func reports(text string) []report {
	var out []report
	for _, m := range reportLine.FindAllStringSubmatch(text, -1) {
		r := report{}
		for _, f := range strings.Fields(m[1]) {
			if k, v, ok := strings.Cut(f, "="); ok {
				r[k] = v
			}
		}
		out = append(out, r)
	}
	return out
}

func (r report) int(key string) int {
	n, err := strconv.Atoi(r[key])
	if err != nil {
		return -1
	}
	return n
}

// jobFinished waits for the job's condition Succeeded or Failed (Complete or Failed for a
// TrainJob) and returns its type.
func jobFinished(apiVersion, kind, ns, name string, done ...string) string {
	var got string
	waitUntil(waitForRun, func() bool {
		for _, d := range append(done, "Failed") {
			if conditionOf(apiVersion, kind, ns, name, d) == "True" {
				got = d
				return true
			}
		}
		return false
	})
	return got
}

// sharedFiles are the files the job wrote to the shared volume, by name: "uid:gid".
func sharedFiles(dir string) map[string]string {
	out := map[string]string{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			continue
		}
		out[e.Name()] = ownerOf(info)
	}
	return out
}

// mpiProgram: every rank reports its host and ids and an allreduce of rank+1, and writes a file
// named after its rank to the shared folder given as its argument.
const mpiProgram = `import os, socket, sys
from mpi4py import MPI
c = MPI.COMM_WORLD
r, n = c.Get_rank(), c.Get_size()
s = c.allreduce(r + 1)
h = socket.gethostname()
open(os.path.join(sys.argv[1], "rank-%d" % r), "w").write(h)
print("mlops-fn-e2e rank=%d size=%d host=%s uid=%d gid=%d sum=%d" % (r, n, h, os.getuid(), os.getgid(), s), flush=True)
`

// TestRealMPIJob: an MPIJob from mlops.env and a job spec, OpenMPI 5 as Debian ships it, a
// non-root user, SSH as the mpi-operator sets it up: WORKERS x SLOTS_PER_WORKER ranks, spread
// over the worker pods and none on the launcher, the reduction right, the files on the shared
// volume written with the job's ids, the job Succeeded.
func TestRealMPIJob(t *testing.T) {
	section("real node: an MPIJob runs mpirun over its workers")
	c := newCheck(t, "real MPIJob")
	if realNode() == "" {
		c.skip("no real node (make e2e starts one inside its own network namespace; E2E_NETNS=0 runs without)")
		return
	}
	defer took(time.Now())
	const workers, slots, uid, gid, fsGroup = 2, 2, 1000, 1000, 2000
	ns := "real-mpijob"
	if err := realNamespace(t, ns); err != nil {
		c.fail("a namespace on the real node", err.Error())
		return
	}
	shared, err := sharedVolume(t, ns)
	if err != nil {
		c.fail("a shared volume", err.Error())
		return
	}
	j := realJob{name: "allreduce", jobKind: "MPIJob",
		spec: "  image: " + mpiImage + "\n  command: [python3, -c, " + strconv.Quote(mpiProgram) + ", /shared]\n" +
			"  volumes: [{name: shared, mountPath: /shared, pvc: {claimName: shared}}]\n",
		env: fmt.Sprintf("USER_ID=%d\nGROUP_ID=%d\nFS_GROUP=%d\nUSER_NAME=mpiuser\nWORKERS=%d\nSLOTS_PER_WORKER=%d\nCPU=250m\nMEMORY=256Mi\n",
			uid, gid, fsGroup, workers, slots)}
	guarded(c, func() { runMPIJob(c, j, ns, t.TempDir(), workers, slots, shared, uid, gid, fsGroup) })
}

// TestRealRootMPIJob: the same as root. mlops-fn gives a root MPIJob no fsGroup: it would make the
// key the operator mounts at /root/.ssh group-readable, and ssh refuses a key that others can read.
func TestRealRootMPIJob(t *testing.T) {
	section("real node: a root MPIJob")
	c := newCheck(t, "real root MPIJob")
	if realNode() == "" {
		c.skip("no real node")
		return
	}
	defer took(time.Now())
	const workers = 2
	ns := "real-root-mpijob"
	if err := realNamespace(t, ns); err != nil {
		c.fail("a namespace on the real node", err.Error())
		return
	}
	j := realJob{name: "root", jobKind: "MPIJob",
		spec: "  image: " + mpiImage + "\n  command: [python3, -c, " + strconv.Quote(mpiProgram) + ", /tmp]\n",
		env:  fmt.Sprintf("USER_ID=0\nGROUP_ID=0\nWORKERS=%d\nCPU=250m\nMEMORY=256Mi\n", workers)}
	guarded(c, func() { runMPIJob(c, j, ns, t.TempDir(), workers, 1, "", 0, 0, 0) })
}

// runMPIJob applies the job and checks what its ranks printed and wrote.
func runMPIJob(c *check, j realJob, ns, work string, workers, slots int, shared string, uid, gid, fsGroup int) {
	dir, err := j.hydrate(work)
	if err != nil {
		c.fail("mlops-fn init and hydrate", err.Error())
		return
	}
	if out, err := kubectl("", "apply", "-k", dir, "-n", ns, "--server-side"); err != nil {
		c.fail("kubectl apply -k", out)
		return
	}
	checkMPIRun(c, ns, j.name, workers, slots, uid, gid)
	if shared == "" {
		return
	}
	want := map[string]string{}
	for r := range workers * slots {
		want[fmt.Sprintf("rank-%d", r)] = fmt.Sprintf("%d:%d", uid, fsGroup)
	}
	c.eq(fmt.Sprintf("each rank wrote its file to the shared volume as uid %d, group FS_GROUP %d", uid, fsGroup), want, sharedFiles(shared))
}

// checkMPIRun: the MPIJob name Succeeds, and its launcher's log has exactly workers x slots
// ranks, slots on each worker pod, none on the launcher, each with the right reduction.
func checkMPIRun(c *check, ns, name string, workers, slots, uid, gid int) {
	finished := jobFinished("kubeflow.org/v2beta1", "MPIJob", ns, name, "Succeeded")
	launchers := pods(ns, "training.kubeflow.org/job-name="+name+",training.kubeflow.org/job-role=launcher")
	var log string
	for _, p := range launchers {
		log += logsOf(ns, p.Name, "")
	}
	if !c.eq("the MPIJob "+name+" Succeeded", "Succeeded", finished) {
		note("%s", podTable(ns))
		note("%s", recentEvents(ns, 10))
		note("launcher log:\n%s", log)
		return
	}
	firstLauncherSucceeded(c, ns, name, launchers)
	ranks := workers * slots
	rs := reports(log)
	perHost := map[string]int{}
	var bad []string
	for _, r := range rs {
		perHost[r["host"]]++
		if r.int("size") != ranks || r.int("sum") != ranks*(ranks+1)/2 || r.int("uid") != uid || r.int("gid") != gid {
			bad = append(bad, fmt.Sprint(r))
		}
	}
	c.eq(fmt.Sprintf("mpirun started WORKERS x SLOTS_PER_WORKER = %d ranks", ranks), ranks, len(rs))
	c.that(fmt.Sprintf("every rank saw %d ranks and the allreduce of rank+1 (%d), as %d:%d", ranks, ranks*(ranks+1)/2, uid, gid), len(rs) > 0 && len(bad) == 0, bad...)
	want := map[string]int{}
	for w := range workers {
		want[fmt.Sprintf("%s-worker-%d", name, w)] = slots
	}
	c.eq(fmt.Sprintf("%d ranks on each worker pod, none on the launcher", slots), want, perHost)
	if c.t.Failed() {
		note("launcher log:\n%s", log)
	}
}

// firstLauncherSucceeded: mlops-fn's default WaitForWorkersReady starts the launcher once the
// workers' sshd can answer, so its first pod succeeds and none failed before it (AtStartup's
// first launcher failed with exit code 255 on every run, and the Job's backoff started another).
func firstLauncherSucceeded(c *check, ns, name string, launchers []corev1.Pod) {
	var failed []string
	for _, p := range launchers {
		if p.Status.Phase != corev1.PodSucceeded {
			failed = append(failed, p.Name+" "+string(p.Status.Phase))
		}
	}
	if j, err := kube.BatchV1().Jobs(ns).Get(ctx, name+"-launcher", metav1.GetOptions{}); err == nil && j.Status.Failed > 0 {
		failed = append(failed, fmt.Sprintf("Job %s: %d failed launcher pods", j.Name, j.Status.Failed))
	}
	c.that("the MPIJob's first launcher pod succeeded, none failed before it", len(launchers) == 1 && len(failed) == 0, append(failed, podNames(launchers)...)...)
}

// TestRealPublishedPi: mpi-operator's own pi example, given site settings only: its launcher
// keeps its mpirun line, whose rank count follows WORKERS, and the ranks run on the workers.
func TestRealPublishedPi(t *testing.T) {
	section("real node: mpi-operator's published pi, site settings only")
	c := newCheck(t, "real published pi")
	if realNode() == "" {
		c.skip("no real node")
		return
	}
	defer took(time.Now())
	const workers = 2
	ns := "real-pi"
	if err := realNamespace(t, ns); err != nil {
		c.fail("a namespace on the real node", err.Error())
		return
	}
	p := testutil.PublishedJob{Module: "github.com/kubeflow/mpi-operator", File: "examples/v2beta1/pi/pi.yaml",
		Spec: "name: pi\nspec:\n  jobKind: MPIJob\n",
		Env:  fmt.Sprintf("USER_ID=1000\nUSER_NAME=mpiuser\nWORKERS=%d\nCPU=250m\nMEMORY=256Mi\n", workers)}
	dir, err := publishedOverlay(p, t.TempDir())
	if err != nil {
		c.fail("hydrated over the example", err.Error())
		return
	}
	if out, err := kubectl("", "apply", "-k", dir, "-n", ns, "--server-side"); err != nil {
		c.fail("kubectl apply -k", out)
		return
	}
	finished := jobFinished("kubeflow.org/v2beta1", "MPIJob", ns, "pi", "Succeeded")
	var log string
	launchers := pods(ns, "training.kubeflow.org/job-name=pi,training.kubeflow.org/job-role=launcher")
	for _, p := range launchers {
		log += logsOf(ns, p.Name, "")
	}
	if !c.eq("the MPIJob pi Succeeded", "Succeeded", finished) {
		note("%s\n%s\nlauncher log:\n%s", podTable(ns), recentEvents(ns, 10), log)
		return
	}
	firstLauncherSucceeded(c, ns, "pi", launchers)
	hosts := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^Rank \d+ on host (\S+)$`).FindAllStringSubmatch(log, -1) {
		hosts[m[1]]++
	}
	c.eq("pi reports WORKERS workers", fmt.Sprintf("Workers: %d", workers), regexp.MustCompile(`Workers: \d+`).FindString(log))
	c.eq("one rank on each worker pod, none on the launcher", map[string]int{"pi-worker-0": 1, "pi-worker-1": 1}, hosts)
	m := regexp.MustCompile(`pi is approximately ([0-9.]+)`).FindStringSubmatch(log)
	var pi float64
	if m != nil {
		pi, _ = strconv.ParseFloat(m[1], 64)
	}
	c.that("pi is approximately 3.14", math.Abs(pi-math.Pi) < 0.01, log)
}

// ownerOf is a file's "uid:gid".
func ownerOf(info os.FileInfo) string {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return "unknown"
	}
	return fmt.Sprintf("%d:%d", st.Uid, st.Gid)
}

// torchProgram: STEPS (its argument) gloo all-reduces of rank+1, one a second, each reported with
// the world size, host, ids, torchrun's restart count and the time.
const torchProgram = `import os, socket, sys, time
import torch, torch.distributed as dist
dist.init_process_group("gloo")
r, n = dist.get_rank(), dist.get_world_size()
h, restart = socket.gethostname(), os.environ.get("TORCHELASTIC_RESTART_COUNT", "-1")
for step in range(int(sys.argv[1])):
    t = torch.tensor([float(r + 1)])
    dist.all_reduce(t)
    print("mlops-fn-e2e step=%d rank=%d world=%d host=%s restart=%s sum=%d uid=%d gid=%d t=%.3f" % (step, r, n, h, restart, int(t.item()), os.getuid(), os.getgid(), time.time()), flush=True)
    time.sleep(1)
dist.destroy_process_group()
`

// torchCommand runs torchProgram for steps under torchrun, which reads its node count, rendezvous
// and rank from the PET_* variables the operator or Trainer sets.
func torchCommand(steps int) string {
	return fmt.Sprintf("  command: [torchrun, --no-python, python3, -c, %s, \"%d\"]\n", strconv.Quote(torchProgram), steps)
}

// podsLogs is every report the pods matching selector printed so far.
func podsLogs(ns, selector string) (map[string][]report, string) {
	out := map[string][]report{}
	var all strings.Builder
	for _, p := range pods(ns, selector) {
		l := logsOf(ns, p.Name, "")
		out[p.Name] = reports(l)
		fmt.Fprintf(&all, "--- %s\n%s", p.Name, l)
	}
	return out, all.String()
}

// TestRealElastic: an elastic PyTorchJob: torchrun on WORKERS pods forms one c10d rendezvous and
// its gloo all-reduce sees WORKERS ranks; a worker killed mid-run, the others re-form within
// MIN_WORKERS..MAX_WORKERS and finish; the job Succeeds.
func TestRealElastic(t *testing.T) {
	section("real node: an elastic PyTorchJob re-forms after a worker dies")
	c := newCheck(t, "real elastic PyTorchJob")
	if realNode() == "" {
		c.skip("no real node")
		return
	}
	defer took(time.Now())
	const workers, minWorkers, maxWorkers, steps, uid, gid = 3, 2, 3, 12, 1000, 1000
	ns := "real-elastic"
	if err := realNamespace(t, ns); err != nil {
		c.fail("a namespace on the real node", err.Error())
		return
	}
	j := realJob{name: "elastic", jobKind: "PyTorchJob", spec: "  image: " + torchImage + "\n" + torchCommand(steps),
		env: fmt.Sprintf("USER_ID=%d\nGROUP_ID=%d\nWORKERS=%d\nMIN_WORKERS=%d\nMAX_WORKERS=%d\nCPU=500m\nMEMORY=1Gi\n",
			uid, gid, workers, minWorkers, maxWorkers)}
	dir, err := j.hydrate(t.TempDir())
	if err != nil {
		c.fail("mlops-fn init and hydrate", err.Error())
		return
	}
	if out, err := kubectl("", "apply", "-k", dir, "-n", ns, "--server-side"); err != nil {
		c.fail("kubectl apply -k", out)
		return
	}
	selector := "training.kubeflow.org/job-name=" + j.name
	// The first round: every worker past its third all-reduce, in a world of WORKERS.
	var first map[string][]report
	var log string
	formed := waitUntil(waitForRun, func() bool {
		first, log = podsLogs(ns, selector)
		if len(first) != workers {
			return false
		}
		for _, rs := range first {
			if len(rs) < 3 {
				return false
			}
		}
		return true
	})
	if !c.that(fmt.Sprintf("torchrun forms one rendezvous of %d workers, each past its third all-reduce", workers), formed,
		podTable(ns), recentEvents(ns, 10), log) {
		return
	}
	var bad []string
	for pod, rs := range first {
		for _, r := range rs {
			if r.int("world") != workers || r.int("sum") != workers*(workers+1)/2 || r["host"] != pod ||
				r.int("uid") != uid || r.int("gid") != gid {
				bad = append(bad, pod+": "+fmt.Sprint(r))
			}
		}
	}
	c.that(fmt.Sprintf("each all-reduce saw %d ranks (sum %d), in its own pod, as %d:%d", workers, workers*(workers+1)/2, uid, gid), len(bad) == 0, bad...)

	// A worker dies: its pod is killed at once. The training-operator makes a new one; the others'
	// all-reduce fails, torchrun (or, past its restarts, the kubelet) restarts them, and they meet
	// in a new rendezvous.
	victim := fmt.Sprintf("%s-worker-%d", j.name, workers-1)
	zero := int64(0)
	killed := float64(time.Now().UnixMilli()) / 1000
	if err := kube.CoreV1().Pods(ns).Delete(ctx, victim, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		c.fail("kill "+victim, err.Error())
		return
	}
	c.pass("killed " + victim + " mid-run")
	finished := jobFinished("kubeflow.org/v1", "PyTorchJob", ns, j.name, "Succeeded")
	after, log := podsLogs(ns, selector)
	if !c.eq("the PyTorchJob Succeeded", "Succeeded", finished) {
		note("%s\n%s\n%s", podTable(ns), recentEvents(ns, 10), log)
		return
	}
	// What ran after the kill: worlds within the bounds, the sums right, one through every step.
	var worlds []int
	completed := false
	bad = nil
	for pod, rs := range after {
		for _, r := range rs {
			if t, err := strconv.ParseFloat(r["t"], 64); err != nil || t < killed {
				continue
			}
			w := r.int("world")
			if w < minWorkers || w > maxWorkers || r.int("sum") != w*(w+1)/2 {
				bad = append(bad, pod+": "+fmt.Sprint(r))
			}
			if !slices.Contains(worlds, w) {
				worlds = append(worlds, w)
			}
			completed = completed || r.int("step") == steps-1
		}
	}
	if !c.that("after the kill, the workers re-form and all-reduce again", len(worlds) > 0, log) {
		return
	}
	var restarts []string
	for _, p := range pods(ns, selector) {
		for _, s := range p.Status.ContainerStatuses {
			restarts = append(restarts, fmt.Sprintf("%s restarted %d times", p.Name, s.RestartCount))
		}
	}
	note("worlds after the kill: %v; %s", worlds, strings.Join(restarts, ", "))
	c.that(fmt.Sprintf("every re-formed all-reduce saw between MIN_WORKERS %d and MAX_WORKERS %d ranks, its sum right", minWorkers, maxWorkers), len(bad) == 0, bad...)
	c.that(fmt.Sprintf("a re-formed round ran all %d steps", steps), completed, log)
}

// sidecarFirstMPIJob is a team's own MPIJob as they wrote it: a metrics sidecar (a native one)
// on the launcher, an init container and a log shipper before the trainer on each worker. The
// mpi-operator puts the SSH keys and the hostfile's environment into containers[0].
const sidecarFirstMPIJob = `apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: team
spec:
  slotsPerWorker: 1
  runPolicy:
    cleanPodPolicy: Running
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          initContainers:
          - name: metrics
            image: ` + mpiImage + `
            restartPolicy: Always
            command: [sleep, infinity]
          containers:
          - name: trainer
            image: ` + mpiImage + `
            command: [mpirun, -n, "1", python3, -c, %s, /tmp]
    Worker:
      replicas: 1
      template:
        spec:
          initContainers:
          - name: prepare
            image: ` + mpiImage + `
            command: [sh, -c, "echo prepared"]
          containers:
          - name: log-shipper
            image: ` + mpiImage + `
            command: [sleep, infinity]
          - name: trainer
            image: ` + mpiImage + `
            command: [/usr/sbin/sshd, -De, -f, /home/mpiuser/.sshd_config]
`

// TestRealMPIJobSidecarFirst: site settings on that job through the function (mlops-fn JOB.yaml
// MPIJOB.yaml, then kubectl apply): the trainer comes first, so mpirun reaches every worker.
func TestRealMPIJobSidecarFirst(t *testing.T) {
	section("real node: a team's MPIJob whose trainer is not the first container")
	c := newCheck(t, "real MPIJob, sidecars first")
	if realNode() == "" {
		c.skip("no real node")
		return
	}
	defer took(time.Now())
	const workers = 2
	ns := "real-sidecars"
	if err := realNamespace(t, ns); err != nil {
		c.fail("a namespace on the real node", err.Error())
		return
	}
	dir := t.TempDir()
	files := map[string]string{
		"mpijob.yaml": fmt.Sprintf(sidecarFirstMPIJob, strconv.Quote(mpiProgram)),
		// The launcher waits for the workers by default (WaitForWorkersReady): their init
		// container delays their sshd, and a launcher started beside them failed its first
		// tries (80 s of the Job's backoff); checkMPIRun sees that the first one succeeds.
		"job.yaml":  "apiVersion: mlops-fn.dev/v1alpha1\nkind: MLOpsJob\nmetadata:\n  name: team\nspec:\n  jobKind: MPIJob\n  containerName: trainer\n",
		"mlops.env": fmt.Sprintf("USER_ID=1000\nGROUP_ID=1000\nUSER_NAME=mpiuser\nWORKERS=%d\nCPU=250m\nMEMORY=256Mi\n", workers),
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(mlopsFn(), filepath.Join(dir, "job.yaml"), filepath.Join(dir, "mpijob.yaml"))
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		c.fail("mlops-fn renders the job", stderr.String())
		return
	}
	c.that("mlops-fn says the workers' trainer moves first", strings.Contains(stderr.String(), `Worker.template.spec.containers[1]: the training container "trainer" moves first`), stderr.String())
	if err := applyYAML(out.String(), "-n", ns); err != nil {
		c.fail("kubectl apply", err.Error())
		return
	}
	checkMPIRun(c, ns, "team", workers, 1, 1000, 1000)
}

// TestRealNFS: the shared nfs volume mlops.env names reaches the kubelet's nfs plugin, which
// mounts NFS_SERVER:NFS_PATH. This machine's kernel has no NFS client (no CONFIG_NFS_FS), so the
// mount itself fails: the check reads the kubelet's own account of the mount it ran, and the
// ownership checks use a local PersistentVolume instead (TestConformance, TestRealMPIJob).
func TestRealNFS(t *testing.T) {
	section("real node: the nfs volume reaches the kubelet's mount")
	c := newCheck(t, "real nfs volume")
	if realNode() == "" {
		c.skip("no real node")
		return
	}
	defer took(time.Now())
	const server, path = "10.243.0.1", "/export/e2e"
	ns := "real-nfs"
	if err := realNamespace(t, ns); err != nil {
		c.fail("a namespace on the real node", err.Error())
		return
	}
	j := realJob{name: "nfs", jobKind: "Pod", spec: "  image: " + mpiImage + "\n  command: [ls, /data]\n",
		env: "USER_ID=1000\nGROUP_ID=1000\nCPU=250m\nMEMORY=256Mi\nNFS_SERVER=" + server + "\nNFS_PATH=" + path + "\nNFS_MOUNT_PATH=/data\n"}
	dir, err := j.hydrate(t.TempDir())
	if err != nil {
		c.fail("mlops-fn init and hydrate", err.Error())
		return
	}
	if out, err := kubectl("", "apply", "-k", dir, "-n", ns, "--server-side"); err != nil {
		c.fail("kubectl apply -k", out)
		return
	}
	var message string
	waitUntil(time.Minute, func() bool {
		l, err := kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=FailedMount"})
		if err == nil && len(l.Items) > 0 {
			message = l.Items[0].Message
		}
		return message != ""
	})
	if !c.that("the kubelet tries to mount the nfs volume (FailedMount: this kernel has no NFS client)", message != "", podTable(ns), recentEvents(ns, 10)) {
		return
	}
	note("%s", message)
	c.that(fmt.Sprintf("the kubelet ran mount -t nfs %s:%s (NFS_SERVER:NFS_PATH)", server, path),
		strings.Contains(message, "-t nfs") && strings.Contains(message, server+":"+path), message)
}
