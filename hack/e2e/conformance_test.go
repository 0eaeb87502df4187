// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mlops-fn/mlops-fn/pkg/kinds/mpijob"
	"github.com/mlops-fn/mlops-fn/pkg/render"
)

// The conformance check: each kind's job runs the project's conformance program
// (hack/e2e/conformance, /usr/local/bin/mlops-fn-conformance in every image) in every rank or
// process, and every field of every line it prints is compared with mlops-fn's resolved plan of
// the job's folder (loadOverlay: processor.Resolve), the operator's hostfile for MPI.

const (
	mpichImage        = "localhost/mlops-fn-e2e/mpich:trixie"
	conformanceBinary = "/usr/local/bin/mlops-fn-conformance"
	conformancePrefix = "mlops-fn-conformance "
)

// conformanceReport is one line of the program (hack/e2e/conformance's Report).
type conformanceReport struct {
	Rank, Size, LocalRank, LocalSize int
	RankFrom, Host                   string
	UID, GID                         int
	Groups                           []int
	Env                              map[string]*string
	Cwd                              string
	Mounts                           []conformanceMount
	ShmSize, CPUMax, MemoryMax       int64
	Errors                           []string
	pod                              string // the pod whose log had the line
}

type conformanceMount struct {
	Path     string
	ReadOnly bool
	UID, GID int
	Mode     string
}

// conformanceSite is the site's mlops.env every kind gets, beside its own keys: keys mlops-fn
// knows and keys of the site's own, a value with a space, non-root ids with a group for the
// volumes.
const conformanceSite = `USER_ID=1000
GROUP_ID=1000
FS_GROUP=2000
MY_KEY=hello
DATASET_DIR=/datasets
OUTPUT_DIR=/output
MODEL_NAME=conformance model
SHM_SIZE=128Mi
`

// conformanceSpec is the job.yaml every kind gets beside its image and command: spec.env
// entries (one empty), a shared volume at OUTPUT_DIR, a read-only one at DATASET_DIR.
const conformanceSpec = `  env: [{name: SPEC_GREETING, value: from job.yaml}, {name: SPEC_EMPTY, value: ""}]
  volumes:
  - {name: shared, mountPath: /output, pvc: {claimName: shared}}
  - {name: datasets, mountPath: /datasets, readOnly: true, emptyDir: {}}
`

// conformanceCase is one kind's job.
type conformanceCase struct {
	name, jobKind, image string
	spec, env            string // job.yaml's and mlops.env's lines of this kind
	torchrun             bool   // the program runs under torchrun
}

// workingDir is the job's working directory, where the kind carries it (a TrainJob does not).
const workingDir = "  workingDir: /output\n"

var conformanceCases = []conformanceCase{
	{name: "openmpi", jobKind: "MPIJob", image: mpiImage, spec: workingDir, env: "USER_NAME=mpiuser\nWORKERS=2\nSLOTS_PER_WORKER=2\nCPU=250m\nMEMORY=256Mi\n"},
	// Three workers at 200m beside the launcher fit the real node's 2 CPUs.
	{name: "mpich", jobKind: "MPIJob", image: mpichImage, spec: workingDir + "  mpi: {implementation: MPICH}\n",
		env: "USER_NAME=mpiuser\nWORKERS=3\nCPU=200m\nMEMORY=256Mi\n"},
	{name: "pod", jobKind: "Pod", image: mpiImage, spec: workingDir, env: "CPU=250m\nMEMORY=256Mi\n"},
	{name: "elastic", jobKind: "PyTorchJob", image: torchImage, torchrun: true, spec: workingDir,
		env: "WORKERS=2\nMIN_WORKERS=1\nMAX_WORKERS=2\nCPU=500m\nMEMORY=1Gi\n"},
	{name: "trainjob", jobKind: "TrainJob", image: torchImage, torchrun: true, spec: "  trainer: {runtime: torch-distributed}\n",
		env: "WORKERS=2\nCPU=500m\nMEMORY=1Gi\n"},
	// Three nodes: every rank finds node 0 by its hostname in the JobSet's headless Service.
	{name: "jobset", jobKind: "JobSet", image: torchImage, torchrun: true, spec: workingDir, env: "WORKERS=3\nCPU=300m\nMEMORY=768Mi\n"},
}

// TestConformance runs each kind's job on the real node with the conformance program.
func TestConformance(t *testing.T) {
	for _, k := range conformanceCases {
		section("real node: conformance of " + k.name + " (" + k.jobKind + ")")
		c := newCheck(t, "conformance "+k.name)
		if realNode() == "" {
			c.skip("no real node")
			continue
		}
		guarded(c, func() { runConformance(c, t, k) })
	}
}

// envNames are the keys of mlops.env lines and the names of spec.env entries the program reports.
func (k conformanceCase) envNames() []string {
	var names []string
	for line := range strings.Lines(conformanceSite + k.env) {
		if key, _, ok := strings.Cut(line, "="); ok {
			names = append(names, key)
		}
	}
	return append(names, "SPEC_GREETING", "SPEC_EMPTY")
}

func (k conformanceCase) job() realJob {
	command := []string{conformanceBinary}
	if k.torchrun {
		command = []string{"torchrun", "--no-python", conformanceBinary}
	}
	command = append(command, k.envNames()...)
	return realJob{name: "conf-" + k.name, jobKind: k.jobKind, env: conformanceSite + k.env,
		spec: "  image: " + k.image + "\n  command: " + jsonText(command) + "\n" + conformanceSpec + k.spec}
}

func runConformance(c *check, t *testing.T, k conformanceCase) {
	defer took(time.Now())
	j := k.job()
	ns := j.name
	dir, ok := applyOnRealNode(t, c, j, ns)
	if !ok {
		return
	}
	// The pods wait for their claim; the scheduler takes them up once it is bound.
	if _, err := sharedVolume(t, ns); err != nil {
		c.fail("a shared volume", err.Error())
		return
	}
	o, err := loadOverlay(dir)
	if err != nil {
		c.fail("mlops-fn's plan of the folder", err.Error())
		return
	}
	if !c.eq("the "+k.jobKind+" finished well", "done", finishedConformance(o, ns)) {
		note("%s\n%s\n%s", podTable(ns), recentEvents(ns, 10), programLogs(o, ns))
		return
	}
	// An elastic job Succeeds when any worker does: the others' lines may come a moment later.
	w := wantOf(o, k.envNames())
	var lines []conformanceReport
	var bad []string
	waitUntil(time.Minute, func() bool {
		lines, bad = conformanceLines(o, ns)
		return len(lines)+len(bad) >= w.ranks
	})
	if !c.that("every line the program printed is a report", len(bad) == 0, bad...) {
		return
	}
	compareConformance(c, o, ns, lines, w)
}

// finishedConformance waits for the job to end: "done" when it succeeded, else its last state.
func finishedConformance(o *overlay, ns string) string {
	if o.kind.Kind == "Pod" {
		var phase corev1.PodPhase
		waitUntil(waitForRun, func() bool {
			if p, err := kube.CoreV1().Pods(ns).Get(ctx, o.name, metav1.GetOptions{}); err == nil {
				phase = p.Status.Phase
			}
			return phase == corev1.PodSucceeded || phase == corev1.PodFailed
		})
		if phase == corev1.PodSucceeded {
			return "done"
		}
		return "phase " + string(phase)
	}
	done := "Succeeded"
	switch o.kind.Kind {
	case "TrainJob":
		done = "Complete"
	case "JobSet":
		done = "Completed"
	}
	if got := jobFinished(o.kind.APIVersion, o.kind.Kind, ns, o.name, done); got != done {
		return "condition " + got
	}
	return "done"
}

// programPods are the pods whose logs hold the program's lines: an MPIJob's launcher (mpirun
// prints every rank's), every pod of the other kinds.
func programPods(o *overlay, ns string) []corev1.Pod {
	switch o.kind.Kind {
	case "Pod":
		return pods(ns, "")
	case "MPIJob":
		return pods(ns, o.kind.PodsLabel+"="+o.name+","+o.kind.ProgramPods[0])
	}
	return pods(ns, o.kind.PodsLabel+"="+o.name)
}

func programLogs(o *overlay, ns string) string {
	var b strings.Builder
	for _, p := range programPods(o, ns) {
		fmt.Fprintf(&b, "--- %s\n%s", p.Name, logsOf(ns, p.Name, ""))
	}
	return b.String()
}

// conformanceLines are the program's reports in the logs, and the lines that start like one
// but do not parse.
func conformanceLines(o *overlay, ns string) ([]conformanceReport, []string) {
	var out []conformanceReport
	var bad []string
	for _, p := range programPods(o, ns) {
		for line := range strings.Lines(logsOf(ns, p.Name, "")) {
			_, text, ok := strings.Cut(line, conformancePrefix)
			if !ok {
				continue
			}
			r := conformanceReport{pod: p.Name}
			if err := json.Unmarshal([]byte(text), &r); err != nil {
				bad = append(bad, p.Name+": "+err.Error()+": "+line)
				continue
			}
			out = append(out, r)
		}
	}
	return out, bad
}

// conformanceWant is what the plan says every process sees.
type conformanceWant struct {
	ranks, localSize int
	rankFrom         string
	uid, gid         int
	groups           []int // the process's group or among its supplementary groups
	env              map[string]*string
	cwd              string
	cpu, memory      int64
	shm              int64 // 0: not asked for
}

func wantOf(o *overlay, names []string) conformanceWant {
	p := o.plan
	w := conformanceWant{ranks: 1, localSize: 1, uid: int(deref(p.RunAsUser)), gid: int(deref(p.RunAsGroup)),
		cwd: p.WorkingDir, cpu: -1, memory: -1, env: map[string]*string{}}
	switch p.JobKind {
	case "MPIJob":
		w.ranks, w.localSize, w.rankFrom = int(mpijob.Ranks(p)), int(p.SlotsPerWorker), "OpenMPI"
		if p.MPI.Implementation != "OpenMPI" {
			w.rankFrom = "Hydra"
		}
	case "PyTorchJob":
		w.ranks, w.localSize, w.rankFrom = int(p.Workers*p.Elastic.ProcsPerWorker), int(p.Elastic.ProcsPerWorker), "torchrun"
	case "TrainJob", "JobSet":
		w.ranks, w.localSize, w.rankFrom = int(p.Workers*p.SlotsPerWorker), int(p.SlotsPerWorker), "torchrun"
	}
	w.groups = []int{w.gid}
	if p.FSGroup != nil {
		w.groups = append(w.groups, int(*p.FSGroup))
	}
	if q, ok := p.Limits[corev1.ResourceCPU]; ok {
		w.cpu = q.MilliValue()
	}
	if q, ok := p.Limits[corev1.ResourceMemory]; ok {
		w.memory = q.Value()
	}
	for _, v := range p.Volumes {
		if m := mountOf(p, v.Name); m != nil && m.MountPath == "/dev/shm" && v.EmptyDir != nil && v.EmptyDir.SizeLimit != nil {
			w.shm = v.EmptyDir.SizeLimit.Value()
		}
	}
	values := map[string]string{}
	for _, k := range p.EnvKeys {
		values[k] = o.env[k]
	}
	for _, e := range p.Env {
		if e.ValueFrom == nil {
			values[e.Name] = e.Value
		}
	}
	for _, n := range names {
		if v, ok := values[n]; ok {
			w.env[n] = &v
		} else {
			w.env[n] = nil
		}
	}
	return w
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

func mountOf(p *render.Plan, volume string) *corev1.VolumeMount {
	for i, m := range p.Mounts {
		if m.Name == volume {
			return &p.Mounts[i]
		}
	}
	return nil
}

// compareConformance compares every field of every line with the plan; each check is one field
// over every rank, and its failure lists the ranks that saw otherwise.
func compareConformance(c *check, o *overlay, ns string, lines []conformanceReport, w conformanceWant) {
	slices.SortFunc(lines, func(a, b conformanceReport) int { return a.Rank - b.Rank })
	var ranks []int
	for _, r := range lines {
		ranks = append(ranks, r.Rank)
	}
	want := make([]int, w.ranks)
	for i := range want {
		want[i] = i
	}
	if !c.eq(fmt.Sprintf("one line per rank, ranks 0..%d each once", w.ranks-1), want, ranks) {
		note("logs:\n%s", programLogs(o, ns))
	}
	field := func(name, want string, got func(r conformanceReport) string) {
		var bad []string
		for _, r := range lines {
			if g := got(r); g != want {
				bad = append(bad, fmt.Sprintf("rank %d (pod %s, host %s): %s", r.Rank, r.pod, r.Host, g))
			}
		}
		c.that(name+" is "+want+" in every rank", len(lines) > 0 && len(bad) == 0, bad...)
	}
	itoa := strconv.Itoa
	field("the program's errors", "[]", func(r conformanceReport) string { return jsonText(orEmpty(r.Errors)) })
	field("the rank's source", strconv.Quote(w.rankFrom), func(r conformanceReport) string { return strconv.Quote(r.RankFrom) })
	field("the world size", itoa(w.ranks), func(r conformanceReport) string { return itoa(r.Size) })
	field("the local size", itoa(w.localSize), func(r conformanceReport) string { return itoa(r.LocalSize) })
	field("uid", itoa(w.uid), func(r conformanceReport) string { return itoa(r.UID) })
	field("gid", itoa(w.gid), func(r conformanceReport) string { return itoa(r.GID) })
	for _, g := range w.groups {
		field(fmt.Sprintf("group %d among the groups", g), "true", func(r conformanceReport) string {
			if r.GID == g || slices.Contains(r.Groups, g) {
				return "true"
			}
			return "groups " + jsonText(r.Groups)
		})
	}
	for _, n := range slices.Sorted(maps.Keys(w.env)) {
		field("env "+n, valueText(w.env[n]), func(r conformanceReport) string {
			v, asked := r.Env[n]
			if !asked {
				return "not reported"
			}
			return valueText(v)
		})
	}
	if w.cwd != "" {
		field("the working directory", w.cwd, func(r conformanceReport) string { return r.Cwd })
	}
	for _, m := range o.plan.Mounts {
		want := fmt.Sprintf("mounted, read-only %t", m.ReadOnly)
		owned := ownedByFSGroup(o.plan, m)
		if owned {
			want += fmt.Sprintf(", group %d, setgid and group rwx", *o.plan.FSGroup)
		}
		field("the mount "+m.MountPath, want, func(r conformanceReport) string {
			i := slices.IndexFunc(r.Mounts, func(x conformanceMount) bool { return x.Path == m.MountPath })
			if i < 0 {
				return "not mounted"
			}
			x := r.Mounts[i]
			got := fmt.Sprintf("mounted, read-only %t", x.ReadOnly)
			if mode, err := strconv.ParseUint(x.Mode, 8, 32); owned && err == nil && x.GID == int(*o.plan.FSGroup) && mode&0o2070 == 0o2070 {
				got += fmt.Sprintf(", group %d, setgid and group rwx", x.GID)
			} else if owned {
				got += fmt.Sprintf(", owner %d:%d, mode %s", x.UID, x.GID, x.Mode)
			}
			return got
		})
	}
	if w.shm > 0 {
		field("the size of /dev/shm (SHM_SIZE)", strconv.FormatInt(w.shm, 10), func(r conformanceReport) string { return strconv.FormatInt(r.ShmSize, 10) })
	}
	field("the cgroup's CPU limit (millicores)", strconv.FormatInt(w.cpu, 10), func(r conformanceReport) string { return strconv.FormatInt(r.CPUMax, 10) })
	field("the cgroup's memory limit (bytes)", strconv.FormatInt(w.memory, 10), func(r conformanceReport) string { return strconv.FormatInt(r.MemoryMax, 10) })
	if o.plan.JobKind == "MPIJob" {
		comparePlacement(c, o, ns, lines)
		return
	}
	// Every other kind's process runs in the pod whose log has its line (JobSet names a pod's
	// host after the pod, without the pod's random suffix).
	field("the host", "the pod's name", func(r conformanceReport) string {
		if r.Host == r.pod || strings.HasPrefix(r.pod, r.Host+"-") {
			return "the pod's name"
		}
		return r.Host
	})
}

// comparePlacement: the operator's hostfile (its ConfigMap, which the launcher mounts) lists
// WORKERS hosts of SLOTS_PER_WORKER slots, and the ranks ran there: on each host as many as its
// slots, local ranks 0..slots-1, none on the launcher.
func comparePlacement(c *check, o *overlay, ns string, lines []conformanceReport) {
	cm, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, o.name+"-config", metav1.GetOptions{})
	if err != nil {
		c.fail("the operator's hostfile", err.Error())
		return
	}
	slots := map[string]int{}
	for line := range strings.Lines(cm.Data["hostfile"]) {
		f := strings.Fields(strings.NewReplacer(":", " slots=").Replace(line))
		if len(f) != 2 || !strings.HasPrefix(f[1], "slots=") {
			c.fail("the operator's hostfile", "a line neither HOST slots=N nor HOST:N: "+line)
			return
		}
		n, _ := strconv.Atoi(strings.TrimPrefix(f[1], "slots="))
		host, _, _ := strings.Cut(f[0], ".")
		slots[host] += n
	}
	want := map[string]int{}
	for i := range o.plan.Workers {
		want[fmt.Sprintf("%s-worker-%d", o.name, i)] = int(o.plan.SlotsPerWorker)
	}
	if o.plan.MPI.RunLauncherAsWorker {
		want[o.name+"-launcher"] = int(o.plan.SlotsPerWorker)
	}
	c.eq("the operator's hostfile has WORKERS hosts of SLOTS_PER_WORKER slots", want, slots)
	perHost, local := map[string]int{}, map[string][]int{}
	for _, r := range lines {
		perHost[r.Host]++
		local[r.Host] = append(local[r.Host], r.LocalRank)
	}
	c.eq("the ranks ran on the hostfile's hosts, as many on each as its slots", slots, perHost)
	var bad []string
	for host, rs := range local {
		slices.Sort(rs)
		for i, lr := range rs {
			if lr != i {
				bad = append(bad, fmt.Sprintf("%s: local ranks %v", host, rs))
				break
			}
		}
	}
	c.that("the local ranks on each host are 0..slots-1", len(bad) == 0, bad...)
}

// ownedByFSGroup: the kubelet gives the volume's root the pod's fsGroup (an emptyDir, a
// claim's local volume).
func ownedByFSGroup(p *render.Plan, m corev1.VolumeMount) bool {
	if p.FSGroup == nil {
		return false
	}
	for _, v := range p.Volumes {
		if v.Name == m.Name {
			return v.EmptyDir != nil || v.PersistentVolumeClaim != nil
		}
	}
	return false
}

func valueText(v *string) string {
	if v == nil {
		return "unset"
	}
	return strconv.Quote(*v)
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
