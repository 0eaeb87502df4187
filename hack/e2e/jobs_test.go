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
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/kinds/jobset"
	"github.com/mlops-fn/mlops-fn/pkg/kinds/mpijob"
	"github.com/mlops-fn/mlops-fn/pkg/kinds/pytorchjob"
	"github.com/mlops-fn/mlops-fn/pkg/render"
)

// waitForPods is how long the operators get to create and run pods, and kwok to complete them.
const waitForPods = 60 * time.Second

// selector picks the pods of the overlay's job with role: an MPIJob's launcher or worker, a
// PyTorchJob's replica type, a TrainJob's replicated job.
func (o *overlay) selector(role string) string {
	job := o.kind.PodsLabel + "=" + o.name
	switch o.kind.Kind {
	case "MPIJob":
		return job + ",training.kubeflow.org/job-role=" + role
	case "PyTorchJob":
		return job + ",training.kubeflow.org/replica-type=" + role
	case "TrainJob", "JobSet":
		return job + ",jobset.sigs.k8s.io/replicatedjob-name=" + role
	}
	return ""
}

// claims are the PersistentVolumeClaims the overlay's pods mount, wherever their volumes are.
func (o *overlay) claims() []string {
	var names []string
	for _, u := range o.objects {
		walk(u.Object, func(m map[string]any) {
			if pvc, ok := m["persistentVolumeClaim"].(map[string]any); ok {
				if n, ok := pvc["claimName"].(string); ok && !slices.Contains(names, n) {
					names = append(names, n)
				}
			}
		})
	}
	slices.Sort(names)
	return names
}

// walk calls f on every map in v, depth first.
func walk(v any, f func(map[string]any)) {
	switch t := v.(type) {
	case map[string]any:
		f(t)
		for _, x := range t {
			walk(x, f)
		}
	case []any:
		for _, x := range t {
			walk(x, f)
		}
	}
}

// claimFixtures creates a bound PersistentVolume and claim for each claim the overlay's pods
// mount (the examples expect the user's claims to exist; without them the pods stay Pending).
func claimFixtures(c *check, o *overlay, ns string) {
	for _, claim := range o.claims() {
		err := applyYAML(fmt.Sprintf(`apiVersion: v1
kind: PersistentVolume
metadata: {name: %[1]s-%[2]s}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteMany]
  storageClassName: ""
  claimRef: {namespace: %[1]s, name: %[2]s}
  hostPath: {path: /tmp/%[1]s-%[2]s}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  accessModes: [ReadWriteMany]
  storageClassName: ""
  volumeName: %[1]s-%[2]s
  resources: {requests: {storage: 1Gi}}
`, ns, claim))
		bound := err == nil && waitUntil(30*time.Second, func() bool {
			pvc, err := kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, claim, metav1.GetOptions{})
			return err == nil && pvc.Status.Phase == corev1.ClaimBound
		})
		if !bound {
			c.fail("fixture claim "+claim+" binds", fmt.Sprint(err))
		}
	}
}

// applyForReal applies the overlay with kubectl apply -k in a fresh namespace enforcing level.
func applyForReal(c *check, o *overlay, ns, level, why string) bool {
	if err := newNamespace(ns, level); err != nil {
		c.fail("a namespace to run in", err.Error())
		return false
	}
	claimFixtures(c, o, ns)
	what := fmt.Sprintf("apply -k in a namespace enforcing '%s'%s", level, why)
	if out, err := kubectl("", "apply", "-k", o.dir, "-n", ns, "--server-side"); err != nil {
		c.fail(what, out)
		return false
	}
	c.pass(what)
	return true
}

// waitForCount waits until selector matches at least n pods; a timeout prints the events.
func waitForCount(ns, selector string, n int) {
	if !waitUntil(waitForPods, func() bool { return len(pods(ns, selector)) >= n }) {
		note("%s", recentEvents(ns, 5))
		return
	}
	time.Sleep(2 * time.Second) // a pod too many would show by now
}

// checkEnvConfigMap: the job's env ConfigMap holds mlops.env's keys and values.
func checkEnvConfigMap(c *check, o *overlay, ns string) {
	name := o.plan.ConfigMapName
	cm, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		c.fail("ConfigMap "+name+" exists", err.Error())
		return
	}
	want := o.env
	if len(want) == 0 {
		want = nil
	}
	got := cm.Data
	if len(got) == 0 {
		got = nil
	}
	c.eq(fmt.Sprintf("ConfigMap %s holds mlops.env's keys and values", name), want, got)
}

func optional[T any](p *T) string {
	if p == nil {
		return "unset"
	}
	return fmt.Sprint(*p)
}

// trainingContainer is the container mlops-fn fills in pod for role, nil if the pod has none.
func (o *overlay) trainingContainer(pod *corev1.Pod, role jobkind.Role) *corev1.Container {
	name := o.plan.ContainerOf(role)
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return &pod.Spec.Containers[i]
		}
	}
	return nil
}

// checkPodSpec: a pod the operator made for role carries what mlops-fn's plan says.
func checkPodSpec(c *check, o *overlay, pod *corev1.Pod, role jobkind.Role) {
	p := o.plan
	what := func(s string) string { return pod.Name + ": " + s }
	want, got := o.podSecurityContext(), podIDs(pod.Spec.SecurityContext)
	c.eq(what("runAsUser"), optional(want.RunAsUser), optional(got.RunAsUser))
	c.eq(what("runAsGroup"), optional(want.RunAsGroup), optional(got.RunAsGroup))
	c.eq(what("fsGroup"), optional(want.FSGroup), optional(got.FSGroup))
	c.eq(what("runAsNonRoot"), optional(want.RunAsNonRoot), optional(got.RunAsNonRoot))

	if o.kind.JobKind() != jobkind.TrainJob {
		checkCarried(c, o, pod, role)
	}
	trainer := o.trainingContainer(pod, role)
	if trainer == nil {
		c.fail(what("has the training container "+p.ContainerOf(role)), jsonText(podContainerNames(pod)))
		return
	}
	trainJob := o.kind.JobKind() == jobkind.TrainJob
	if trainJob {
		// The ids are on the trainer's container too: a runtime's container ids would win over the pod's.
		var sc corev1.SecurityContext
		if trainer.SecurityContext != nil {
			sc = *trainer.SecurityContext
		}
		c.eq(what("container "+trainer.Name+" runs as mlops.env's user and group (runAsUser, runAsGroup)"),
			optional(want.RunAsUser)+" "+optional(want.RunAsGroup), optional(sc.RunAsUser)+" "+optional(sc.RunAsGroup))
	}
	var overriding []string
	for _, k := range pod.Spec.Containers {
		if trainJob && k.Name == trainer.Name || k.SecurityContext == nil {
			continue
		}
		if k.SecurityContext.RunAsUser != nil || k.SecurityContext.RunAsGroup != nil {
			overriding = append(overriding, k.Name)
		}
	}
	c.that(what("no container overrides the pod's user or group"), len(overriding) == 0, "containers: "+strings.Join(overriding, ", "))

	if trainJob {
		// The Trainer API has no envFrom: every key of mlops.env, one configMapKeyRef each.
		var refs []string
		for _, e := range trainer.Env {
			if r := e.ValueFrom; r != nil && r.ConfigMapKeyRef != nil && r.ConfigMapKeyRef.Name == p.ConfigMapName {
				refs = append(refs, e.Name+"="+r.ConfigMapKeyRef.Name+"/"+r.ConfigMapKeyRef.Key)
			}
		}
		slices.Sort(refs)
		var wantRefs []string
		for _, k := range p.EnvKeys {
			wantRefs = append(wantRefs, k+"="+p.ConfigMapName+"/"+k)
		}
		c.eq(what(fmt.Sprintf("container %s reads each key of mlops.env from the job's env ConfigMap %s", trainer.Name, p.ConfigMapName)),
			strings.Join(wantRefs, "\n"), strings.Join(refs, "\n"))
	} else {
		var without []string
		for _, k := range pod.Spec.Containers {
			if !slices.ContainsFunc(k.EnvFrom, func(e corev1.EnvFromSource) bool {
				return e.ConfigMapRef != nil && e.ConfigMapRef.Name == p.ConfigMapName
			}) {
				without = append(without, k.Name)
			}
		}
		c.that(what("every container has envFrom the job's env ConfigMap "+p.ConfigMapName), len(without) == 0, "without: "+strings.Join(without, ", "))
	}

	for _, v := range p.Volumes {
		i := slices.IndexFunc(pod.Spec.Volumes, func(w corev1.Volume) bool { return w.Name == v.Name })
		if i < 0 {
			c.fail(what("has volume "+v.Name), jsonText(pod.Spec.Volumes))
			continue
		}
		c.that(what(fmt.Sprintf("volume %s is mlops-fn's (%s)", v.Name, volumeSource(v))), subsetOf(v, pod.Spec.Volumes[i]),
			"planned: "+jsonText(v), "in the pod: "+jsonText(pod.Spec.Volumes[i]))
	}
	for _, m := range p.Mounts {
		var missing []string
		for _, k := range pod.Spec.Containers {
			if !slices.ContainsFunc(k.VolumeMounts, func(x corev1.VolumeMount) bool { return x.Name == m.Name && x.MountPath == m.MountPath }) {
				missing = append(missing, k.Name)
			}
		}
		c.that(what(fmt.Sprintf("every container mounts %s at %s", m.Name, m.MountPath)), len(missing) == 0, "not in: "+strings.Join(missing, ", "))
	}

	if role == jobkind.Launcher && p.MPI.Implementation == api.OpenMPI {
		// OpenMPI 5 ignores the operator's OMPI_MCA_orte_default_hostfile: mlops-fn passes the file
		// itself, on its own mpirun line or, for a script that starts mpirun, as PRRTE's default.
		line := strings.Join(append(slices.Clone(trainer.Command), trainer.Args...), " ")
		if p.Script {
			line = jsonText(trainer.Env)
		}
		c.that(what("mpirun reads the operator's hostfile ("+mpijob.OperatorHostfile+")"),
			strings.Contains(line, "--hostfile "+mpijob.OperatorHostfile) || strings.Contains(line, `"PRTE_MCA_prte_default_hostfile","value":"`+mpijob.OperatorHostfile+`"`), line)
		c.that(what(mpijob.OperatorHostfile+" is mounted"), slices.ContainsFunc(trainer.VolumeMounts, func(m corev1.VolumeMount) bool {
			return strings.HasPrefix(mpijob.OperatorHostfile, m.MountPath+"/")
		}), jsonText(trainer.VolumeMounts))
	}

	if trainJob {
		return // a TrainJob's resources are resourcesPerNode (checkTrainJobPod)
	}
	limits := p.Limits
	if role == jobkind.Launcher && !p.MPI.RunLauncherAsWorker {
		limits = p.LauncherLimits
	}
	gpus := func(l corev1.ResourceList) string {
		q := l[render.GPUResource]
		return q.String()
	}
	c.eq(what(string(render.GPUResource)+" limit"), gpus(limits), gpus(trainer.Resources.Limits))
	if len(limits) > 0 {
		// A job's own limits of other resources stay (the carried check compares them).
		c.eq(what("the training container has the limits mlops-fn sets (GPUS_PER_WORKER, CPU, MEMORY, ...)"), quantities(limits), quantitiesOf(trainer.Resources.Limits, limits))
	}
	requests := p.Requests
	if role == jobkind.Launcher && !p.MPI.RunLauncherAsWorker {
		requests = p.LauncherRequests
	}
	if len(requests) > 0 {
		c.eq(what("the training container has the requests of spec.resources"), quantities(requests), quantitiesOf(trainer.Resources.Requests, requests))
	}
}

func podContainerNames(pod *corev1.Pod) []string {
	var names []string
	for _, k := range pod.Spec.Containers {
		names = append(names, k.Name)
	}
	return names
}

// quantities is a resource list as text, by name (what the API server canonicalizes compares equal).
func quantities(l corev1.ResourceList) map[string]string {
	m := map[string]string{}
	for k, v := range l {
		m[string(k)] = v.String()
	}
	return m
}

// quantitiesOf are l's quantities of the resources names lists ("0" where l has none).
func quantitiesOf(l, names corev1.ResourceList) map[string]string {
	m := map[string]string{}
	for name := range names {
		q := l[name]
		m[string(name)] = q.String()
	}
	return m
}

// volumeSource names what kind of volume v is.
func volumeSource(v corev1.Volume) string {
	var m map[string]any
	b, _ := json.Marshal(v.VolumeSource)
	_ = json.Unmarshal(b, &m)
	for k := range m {
		return k
	}
	return "none"
}

// subsetOf: every field a sets, b sets to the same, compared as JSON by carried; what the API
// server defaulted in b is not compared.
func subsetOf(a, b any) bool {
	var x, y any
	for _, v := range []struct {
		in  any
		out *any
	}{{a, &x}, {b, &y}} {
		raw, err := json.Marshal(v.in)
		if err != nil || json.Unmarshal(raw, v.out) != nil {
			return false
		}
	}
	return len(carried(x, y, "")) == 0
}

// checkMPIJob (check 2): the MPIJob applied for real: mpi-operator's launcher and workers, its
// hostfile, the ranks, each pod's spec; they run, and the job succeeds when the launcher completes.
func checkMPIJob(c *check, o *overlay, ns, level string) {
	p := o.plan
	if !applyForReal(c, o, ns, level, "") {
		return
	}
	workers, launchers := o.selector("worker"), o.selector("launcher")
	if !waitUntil(waitForPods, func() bool {
		return len(pods(ns, workers)) >= int(p.Workers) && len(pods(ns, launchers)) >= 1
	}) {
		note("%s", recentEvents(ns, 5))
	} else {
		time.Sleep(2 * time.Second)
	}
	ws, ls := pods(ns, workers), pods(ns, launchers)
	c.eq(fmt.Sprintf("mpi-operator creates exactly WORKERS=%d worker pods", p.Workers), int(p.Workers), len(ws))
	c.eq("mpi-operator creates one launcher pod", 1, len(ls))

	var hosts []string
	for i := range int(p.Workers) {
		host := fmt.Sprintf("%s-worker-%d.%s.%s.svc", o.name, i, o.name, ns)
		if p.MPI.Implementation == api.OpenMPI {
			hosts = append(hosts, fmt.Sprintf("%s slots=%d", host, p.SlotsPerWorker))
		} else {
			hosts = append(hosts, fmt.Sprintf("%s:%d", host, p.SlotsPerWorker))
		}
	}
	hostfile := ""
	if cm, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, o.name+"-config", metav1.GetOptions{}); err == nil {
		hostfile = strings.TrimRight(cm.Data["hostfile"], "\n")
	}
	c.eq(fmt.Sprintf("hostfile lists %d workers with slots=%d", p.Workers, p.SlotsPerWorker), strings.Join(hosts, "\n"), hostfile)
	checkEnvConfigMap(c, o, ns)

	for i := range ls {
		launcher := &ls[i]
		if k := o.trainingContainer(launcher, jobkind.Launcher); k != nil {
			c.eq(fmt.Sprintf("mpirun's rank count (-np) is mlops-fn's %d (workers x slots)", mpijob.Ranks(p)), strconv.Itoa(int(mpijob.Ranks(p))), ranksOf(k))
		}
		checkPodSpec(c, o, launcher, jobkind.Launcher)
	}
	for i := range ws {
		checkPodSpec(c, o, &ws[i], jobkind.Worker)
	}
	if !c.that(fmt.Sprintf("the launcher and %d workers are scheduled on the fake node and Running", p.Workers), waitUntil(waitForPods, func() bool {
		return allInPhase(ns, workers, int(p.Workers), corev1.PodRunning) && allInPhase(ns, launchers, 1, corev1.PodRunning)
	}), podTable(ns)) || len(ls) == 0 {
		return
	}
	if err := complete(ns, ls[0].Name); err != nil {
		c.fail("the launcher completes", err.Error())
		return
	}
	c.that("the MPIJob is Succeeded once the launcher completes", waitUntil(waitForPods, func() bool {
		return conditionOf(o.kind.APIVersion, o.kind.Kind, ns, o.name, "Succeeded") == "True"
	}), statusOf(o.kind.APIVersion, o.kind.Kind, ns, o.name))
}

// checkPyTorchJob (check 2, elastic): training-operator's workers, and the PET_* variables
// torchrun reads, as mlops-fn's plan says; they run and the job is Running.
func checkPyTorchJob(c *check, o *overlay, ns, level string) {
	p := o.plan
	if !applyForReal(c, o, ns, level, " (training-operator's webhook validates the PyTorchJob)") {
		return
	}
	workers := o.selector("worker")
	waitForCount(ns, workers, int(p.Workers))
	ws := pods(ns, workers)
	c.eq(fmt.Sprintf("training-operator creates exactly WORKERS=%d worker pods", p.Workers), int(p.Workers), len(ws))
	var want []string
	for i := range int(p.Workers) {
		want = append(want, fmt.Sprintf("%s-worker-%d", o.name, i))
	}
	got := podNames(ws)
	slices.SortFunc(got, func(a, b string) int { return workerIndex(a) - workerIndex(b) })
	c.eq(fmt.Sprintf("the worker pods are %s-worker-0..%d", o.name, p.Workers-1), want, got)
	c.eq("no master pod (elastic: workers only)", 0, len(pods(ns, o.selector("master"))))
	checkEnvConfigMap(c, o, ns)

	e := p.Elastic
	pet := map[string]string{
		"PET_NNODES":         fmt.Sprintf("%d:%d", e.MinWorkers, e.MaxWorkers),
		"PET_RDZV_BACKEND":   e.Backend,
		"PET_RDZV_ENDPOINT":  e.Endpoint,
		"PET_NPROC_PER_NODE": strconv.Itoa(int(e.ProcsPerWorker)),
	}
	if e.Backend == "c10d" {
		// The c10d rendezvous runs on worker 0, at the port the operator reads from the container's.
		pet["PET_RDZV_ENDPOINT"] = fmt.Sprintf("%s-worker-0:%d", o.name, 23456)
	} else {
		pet["PET_RDZV_ID"] = pytorchjob.RendezvousID(p)
	}
	if e.MaxRestarts != nil {
		pet["PET_MAX_RESTARTS"] = strconv.Itoa(int(*e.MaxRestarts))
	} else if kept, found, _ := unstructured.NestedFieldNoCopy(o.job.Object, "spec", "elasticPolicy", "maxRestarts"); found {
		pet["PET_MAX_RESTARTS"] = fmt.Sprint(kept) // the job's own, which mlops-fn keeps
	}
	for i := range ws {
		pod := &ws[i]
		have := map[string]string{}
		if k := o.trainingContainer(pod, ""); k != nil {
			for _, v := range k.Env {
				if strings.HasPrefix(v.Name, "PET_") {
					have[v.Name] = v.Value
				}
			}
		}
		c.eq(pod.Name+": the training container's PET_* variables (torchrun's nnodes, rendezvous, procs, restarts)", pet, have)
		if i == 0 {
			note("%s", jsonText(have))
		}
		checkPodSpec(c, o, pod, "")
	}
	if !c.that(fmt.Sprintf("the %d workers are scheduled on the fake node and Running", p.Workers), waitUntil(waitForPods, func() bool {
		return allInPhase(ns, workers, int(p.Workers), corev1.PodRunning)
	}), podTable(ns)) {
		return
	}
	c.that("the PyTorchJob is Running", waitUntil(waitForPods, func() bool {
		return conditionOf(o.kind.APIVersion, o.kind.Kind, ns, o.name, "Running") == "True"
	}), statusOf(o.kind.APIVersion, o.kind.Kind, ns, o.name))
}

// workerIndex is N of a pod named ...-worker-N.
func workerIndex(name string) int {
	n, _ := strconv.Atoi(name[strings.LastIndex(name, "-")+1:])
	return n
}

// checkPod (check 4): the single-node Pod applied for real runs and succeeds.
func checkPod(c *check, o *overlay, ns, level string) {
	if !applyForReal(c, o, ns, level, ": the Pod is admitted") {
		return
	}
	checkEnvConfigMap(c, o, ns)
	pod, err := kube.CoreV1().Pods(ns).Get(ctx, o.name, metav1.GetOptions{})
	if err != nil {
		c.fail(o.name+": exists", err.Error())
		return
	}
	checkPodSpec(c, o, pod, "")
	phase := func(want corev1.PodPhase) func() bool {
		return func() bool {
			p, err := kube.CoreV1().Pods(ns).Get(ctx, o.name, metav1.GetOptions{})
			return err == nil && p.Status.Phase == want
		}
	}
	if !c.that("the Pod is scheduled on the fake node and Running", waitUntil(waitForPods, phase(corev1.PodRunning)), podTable(ns)) {
		return
	}
	if err := complete(ns, o.name); err != nil {
		c.fail("the Pod completes", err.Error())
		return
	}
	c.that("the Pod is Succeeded once it completes", waitUntil(waitForPods, phase(corev1.PodSucceeded)), podTable(ns))
}

// checkRefusedForReal (check 3, for real): under 'restricted', a job that needs more is refused
// when its pods are created: by the operator for an MPIJob or PyTorchJob, by the Job controller
// for a TrainJob's JobSet, at apply for a Pod.
func checkRefusedForReal(c *check, o *overlay) {
	ns := "restricted-" + o.slug
	if err := newNamespace(ns, "restricted"); err != nil {
		c.fail("a namespace enforcing restricted", err.Error())
		return
	}
	out, err := kubectl("", "apply", "-k", o.dir, "-n", ns, "--server-side")
	if o.kind.Kind == "Pod" {
		switch {
		case err == nil:
			c.fail("apply -k under 'restricted' refuses the Pod", out)
		case strings.Contains(out, "violates PodSecurity"):
			c.pass("apply -k under 'restricted' refuses the Pod")
		default:
			c.fail("apply -k under 'restricted' refuses the Pod, for Pod Security", out)
		}
		return
	}
	if err != nil {
		c.fail("apply -k under 'restricted' (the job is admitted; its pods are not)", out)
		return
	}
	role, who := "worker", "the operator's worker pods"
	switch o.kind.JobKind() {
	case jobkind.TrainJob:
		role, who = string(jobkind.TrainerNode), "the Job controller's pods of the TrainJob"
	case jobset.JobSet:
		role, who = jobset.Node, "the Job controller's pods of the JobSet"
	}
	if !waitUntil(waitForPods, func() bool { return eventsMention(ns, "violates PodSecurity") }) {
		c.fail("under 'restricted' "+who+" are refused", podTable(ns), recentEvents(ns, 5))
		return
	}
	c.eq("under 'restricted' "+who+" are refused (violates PodSecurity)", 0, len(pods(ns, o.selector(role))))
}

// templateFor is the pod template spec the overlay's job holds for role, as JSON values: what
// mlops-fn's patches made of the job, which the operator's pods must carry.
func (o *overlay) templateFor(role jobkind.Role) (map[string]any, bool) {
	for _, ps := range o.kind.PodSpecs {
		if ps.Role != role {
			continue
		}
		m, found, err := unstructured.NestedMap(o.job.Object, ps.Path...)
		return m, found && err == nil
	}
	return nil, false
}

// carried lists where pod (as JSON) differs from template: every field the template sets must
// be the pod's; lists of named elements (containers, volumes, env, mounts) match by name, and
// the pod may hold more of them (the operator adds its own); quantities compare by value.
func carried(template any, pod any, at string) []string {
	switch t := template.(type) {
	case map[string]any:
		p, ok := pod.(map[string]any)
		if !ok {
			return []string{at + ": missing"}
		}
		var diffs []string
		for _, k := range slices.Sorted(maps.Keys(t)) {
			diffs = append(diffs, carried(t[k], p[k], at+"."+k)...)
		}
		return diffs
	case []any:
		p, ok := pod.([]any)
		if !ok {
			return []string{at + ": missing"}
		}
		if named(t) && named(p) {
			var diffs []string
			for _, e := range t {
				name := e.(map[string]any)["name"]
				i := slices.IndexFunc(p, func(x any) bool { return x.(map[string]any)["name"] == name })
				if i < 0 {
					diffs = append(diffs, fmt.Sprintf("%s[%v]: missing", at, name))
					continue
				}
				diffs = append(diffs, carried(e, p[i], fmt.Sprintf("%s[%v]", at, name))...)
			}
			return diffs
		}
		if len(t) != len(p) {
			return []string{fmt.Sprintf("%s: %s, the pod has %s", at, jsonText(t), jsonText(p))}
		}
		var diffs []string
		for i := range t {
			diffs = append(diffs, carried(t[i], p[i], fmt.Sprintf("%s[%d]", at, i))...)
		}
		return diffs
	}
	if fmt.Sprint(template) == fmt.Sprint(pod) || sameQuantity(template, pod) {
		return nil
	}
	return []string{fmt.Sprintf("%s: %v, the pod has %v", at, template, pod)}
}

// named: every element is an object with a name.
func named(l []any) bool {
	for _, e := range l {
		if m, ok := e.(map[string]any); !ok || m["name"] == nil {
			return false
		}
	}
	return len(l) > 0
}

func sameQuantity(a, b any) bool {
	x, err1 := resource.ParseQuantity(fmt.Sprint(a))
	y, err2 := resource.ParseQuantity(fmt.Sprint(b))
	return err1 == nil && err2 == nil && x.Cmp(y) == 0
}

// checkCarried: the operator's pod for role carries every field of the job's pod template.
func checkCarried(c *check, o *overlay, pod *corev1.Pod, role jobkind.Role) {
	template, ok := o.templateFor(role)
	if !ok {
		c.fail(pod.Name+": the job's pod template for "+string(role), "not found in the rendered "+o.kind.Kind)
		return
	}
	spec, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&pod.Spec)
	if err != nil {
		c.fail(pod.Name+": its spec as JSON", err.Error())
		return
	}
	diffs := carried(template, spec, "spec")
	c.that(pod.Name+": carries every field of the job's pod template as mlops-fn rendered it", len(diffs) == 0, diffs...)
}

// ranksOf is the rank count of the mpirun line the container runs, or that
// a launcher's script is given to start, "none" without either.
func ranksOf(k *corev1.Container) string {
	ref, ok := mpijob.RanksArgument(k.Command, k.Args)
	if !ok {
		if i := slices.IndexFunc(k.Env, func(e corev1.EnvVar) bool { return e.Name == mpijob.ScriptRanks }); i >= 0 {
			return k.Env[i].Value
		}
		return "none"
	}
	line := k.Command
	if ref.Field == "args" {
		line = k.Args
	}
	return line[ref.Index]
}
