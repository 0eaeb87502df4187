// SPDX-License-Identifier: Apache-2.0

// Package status reads a job mlops-fn applied back from the cluster, with client-go: where it is (mlops-fn
// status) and what its training program prints (mlops-fn logs), for every kind of the job kinds table.
package status

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/cluster"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/jobnode"
	"github.com/mlops-fn/mlops-fn/pkg/kinds"
)

// readJob reads a job of kind jk, nil when it does not exist; notServed says why where the cluster serves no
// such kind (its operator is not installed).
func readJob(ctx context.Context, c *cluster.Cluster, jk jobkind.Facts, ns, name string) (u *unstructured.Unstructured, notServed string, err error) {
	m, err := c.Mapping(ctx, schema.FromAPIVersionAndKind(jk.APIVersion, jk.Kind))
	if no := (*cluster.NotServedError)(nil); errors.As(err, &no) {
		return nil, no.Error(), nil
	}
	if err != nil {
		return nil, "", err
	}
	u, err = cluster.Get(ctx, c.Dynamic.Resource(m.Resource).Namespace(ns), name)
	return u, "", err
}

// Report is where a job is.
type Report struct {
	Job, Namespace string // KIND/NAME, and where it was looked for
	// Phase: Pending, Created, Running, Restarting, Suspended, Succeeded, Complete, Failed; a Pod's phase; not
	// found.
	Phase    string
	Expected int // the job's replicas (a TrainJob's numNodes)
	Pods     []Pod
	Why      []string // why the job waits, or failed: Kueue, the pods' images, Pod Security, ...
	// Notes are what goes wrong without keeping the job waiting: a job of a LocalQueue Kueue never queued.
	Notes []string
}

// Pod is one pod of the job.
type Pod struct {
	Name, Phase string
	Ready       bool
	Detail      string // a container's waiting or terminated reason, the scheduler's
}

// Kueue's API group, and the scheduling gate it holds a queued Pod with.
const kueueGroup, kueueGate = "kueue.x-k8s.io", "kueue.x-k8s.io/admission"

// Status reads where job is: the job, its pods, and when it waits, why. Only an error reaching the cluster is
// an error.
func Status(ctx context.Context, c *cluster.Cluster, job jobnode.Job) (*Report, error) {
	ns, err := c.Of(job.Namespace)
	if err != nil {
		return nil, err
	}
	r := &Report{Job: job.Kind + "/" + job.Name, Namespace: ns}
	jk, _ := kinds.All.ForKind(job.Kind)
	u, notServed, err := readJob(ctx, c, jk, ns, job.Name)
	if err != nil {
		return nil, fmt.Errorf("reading %s in namespace %s: %w", r.Job, ns, err)
	}
	if u == nil {
		r.Phase = "not found"
		r.Why = append(r.Why, cmp.Or(notServed,
			fmt.Sprintf("no such %s in namespace %s: not applied yet (mlops-fn apply DIR), or applied to another namespace (--namespace)", jk.Kind, ns)))
		return r, nil
	}
	pods, err := jobPods(ctx, c, jk, ns, job.Name)
	if err != nil {
		return nil, err
	}
	r.Phase, r.Expected = phase(jk, u, pods), jk.PodCount(u.Object)
	for _, p := range pods {
		r.Pods = append(r.Pods, podState(p))
	}
	if slices.Contains(jobkind.FinalConditions, r.Phase) {
		if r.Phase == "Failed" {
			r.Why = append(r.Why, failure(u, r.Pods))
		}
		return r, nil
	}
	gated := slices.ContainsFunc(pods, func(p corev1.Pod) bool {
		return slices.ContainsFunc(p.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == kueueGate })
	})
	why, notes, err := kueue(ctx, c, jk, u, ns, r.Phase == "Suspended" || gated)
	if err != nil {
		return nil, err
	}
	r.Why, r.Notes = append(r.Why, why...), notes
	if r.Phase == "Suspended" && len(why) == 0 {
		r.Why = append(r.Why, "suspended: "+strings.Join(jk.SuspendPath, ".")+" is true; it starts once that is false")
	}
	for _, p := range pods {
		r.Why = append(r.Why, podWaits(p)...)
	}
	if r.Expected > 0 && len(pods) >= r.Expected {
		// Every pod is there: a refusal the controller retried past (a webhook's cache behind the API
		// server's, seen in make e2e) is history.
		return r, nil
	}
	why, err = refused(ctx, c, ns, job.Name, u.GetCreationTimestamp())
	if err != nil {
		return nil, err
	}
	r.Why = append(r.Why, why...)
	return r, nil
}

// jobPods are the job's pods, by name: a Pod's itself, else the operator's, by the label it puts on them.
func jobPods(ctx context.Context, c *cluster.Cluster, jk jobkind.Facts, ns, name string) ([]corev1.Pod, error) {
	if jk.PodsLabel == "" {
		pods, err := c.Pod(ctx, ns, name)
		if err != nil {
			return nil, fmt.Errorf("reading pod %s in namespace %s: %w", name, ns, err)
		}
		return pods, nil
	}
	pods, err := cluster.List[corev1.Pod](ctx, c, "pods", ns, jk.PodsLabel+"="+name)
	if err != nil {
		return nil, fmt.Errorf("listing the pods of %s/%s in namespace %s: %w", jk.Kind, name, ns, err)
	}
	pods = slices.DeleteFunc(pods, func(p corev1.Pod) bool { return p.DeletionTimestamp != nil })
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	return pods, nil
}

// condition is the status of a job's condition of type t, and its reason and message.
func condition(u *unstructured.Unstructured, t string) (status, reason, message string) {
	list, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range list {
		m, _ := c.(map[string]any)
		if m["type"] == t {
			status, _ = m["status"].(string)
			reason, _ = m["reason"].(string)
			message, _ = m["message"].(string)
		}
	}
	return status, reason, message
}

// phase: a Pod's phase; a job's final condition, else Suspended, else its operator's latest condition
// (Restarting, Running, Created), else Running when a pod runs, else Pending.
func phase(jk jobkind.Facts, u *unstructured.Unstructured, pods []corev1.Pod) string {
	if jk.PodsLabel == "" {
		p, _, _ := unstructured.NestedString(u.Object, "status", "phase")
		return cmp.Or(p, "Pending")
	}
	for _, t := range append(slices.Clone(jobkind.FinalConditions), "Suspended") {
		if s, _, _ := condition(u, t); s == "True" {
			return t
		}
	}
	if suspended, _, _ := unstructured.NestedBool(u.Object, jk.SuspendPath...); suspended {
		return "Suspended"
	}
	for _, t := range []string{"Restarting", "Running", "Created"} {
		if s, _, _ := condition(u, t); s == "True" {
			return t
		}
	}
	for _, p := range pods {
		if p.Status.Phase == corev1.PodRunning {
			return "Running"
		}
	}
	return "Pending"
}

// podState: a pod's phase, whether it is ready, and why a container waits or how it ended.
func podState(p corev1.Pod) Pod {
	s := Pod{Name: p.Name, Phase: string(p.Status.Phase)}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			s.Ready = true
		}
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason != "" {
			s.Detail = "not scheduled: " + c.Reason
		}
	}
	if len(p.Spec.SchedulingGates) > 0 {
		var gates []string
		for _, g := range p.Spec.SchedulingGates {
			gates = append(gates, g.Name)
		}
		s.Detail = "scheduling gates " + strings.Join(gates, ", ")
	}
	for _, c := range slices.Concat(p.Status.InitContainerStatuses, p.Status.ContainerStatuses) {
		switch {
		case c.State.Waiting != nil && c.State.Waiting.Reason != "" && c.State.Waiting.Reason != "PodInitializing":
			s.Detail = c.Name + ": " + c.State.Waiting.Reason
			return s
		case c.State.Terminated != nil && c.State.Terminated.ExitCode != 0:
			s.Detail = fmt.Sprintf("%s: %s, exit code %d", c.Name, c.State.Terminated.Reason, c.State.Terminated.ExitCode)
			return s
		}
	}
	return s
}

// imagePull are the waiting reasons of a container whose image does not pull.
var imagePull = []string{"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull"}

// podWaits says why a pod waits: an image that does not pull, a container that cannot start or keeps
// crashing, the scheduler finding no node.
func podWaits(p corev1.Pod) []string {
	var out []string
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			out = append(out, fmt.Sprintf("pod %s is not scheduled: %s", p.Name, c.Message))
		}
	}
	images := map[string]string{}
	for _, c := range slices.Concat(p.Spec.InitContainers, p.Spec.Containers) {
		images[c.Name] = c.Image
	}
	for _, c := range slices.Concat(p.Status.InitContainerStatuses, p.Status.ContainerStatuses) {
		w := c.State.Waiting
		switch {
		case w == nil:
		case slices.Contains(imagePull, w.Reason):
			out = append(out, fmt.Sprintf("pod %s: the image %s of container %s does not pull (%s): %s", p.Name, images[c.Name], c.Name, w.Reason, w.Message))
		case w.Reason == "CrashLoopBackOff" || strings.HasPrefix(w.Reason, "CreateContainer") || w.Reason == "RunContainerError":
			out = append(out, fmt.Sprintf("pod %s: container %s: %s: %s", p.Name, c.Name, w.Reason, w.Message))
		}
	}
	return out
}

// kueue says why Kueue holds the job (held: it is suspended or gated): no Kueue, no such LocalQueue, or its
// Workload not admitted, with Kueue's message. A job of a LocalQueue neither held nor owning a Workload runs
// outside the queue, its quota uncounted: notes say so.
func kueue(ctx context.Context, c *cluster.Cluster, jk jobkind.Facts, u *unstructured.Unstructured, ns string,
	held bool) (why, notes []string, err error) {
	queue := u.GetLabels()[api.QueueLabel]
	if queue == "" {
		return nil, nil, nil
	}
	versions := []string{"v1beta2", "v1beta1"} // newest first
	served := slices.IndexFunc(versions, func(v string) bool { return c.Serves(ctx, kueueGroup+"/"+v) == nil })
	if served < 0 {
		if !held {
			return nil, []string{fmt.Sprintf("not queued: its label %s names Kueue's LocalQueue %s (QUEUE in mlops.env), but this cluster serves no Kueue API (%s): it runs without a queue", api.QueueLabel, queue, kueueGroup)}, nil
		}
		return []string{fmt.Sprintf("its label %s names Kueue's LocalQueue %s, but this cluster serves no Kueue API (%s): nothing admits it", api.QueueLabel, queue, kueueGroup)}, nil, nil
	}
	gv := schema.GroupVersion{Group: kueueGroup, Version: versions[served]}
	l, err := c.Dynamic.Resource(gv.WithResource("workloads")).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("listing Kueue's Workloads in namespace %s: %w", ns, err)
	}
	var w *unstructured.Unstructured
	if i := slices.IndexFunc(l.Items, func(w unstructured.Unstructured) bool {
		return slices.ContainsFunc(w.GetOwnerReferences(), func(o metav1.OwnerReference) bool { return o.UID == u.GetUID() })
	}); i >= 0 {
		w = &l.Items[i]
	}
	if w == nil && !held {
		// the kinds' frameworks that Kueue's default Configuration leaves out
		off := slices.DeleteFunc(slices.Clone(kinds.All), func(k jobkind.Facts) bool { return !k.KueueOff }).Sentence("and",
			func(k jobkind.Facts) string { return k.KueueFramework })
		// Kueue's webhook holds a job it manages as it is created, and makes its Workload before it lets it
		// go: this one it does not manage.
		return nil, []string{fmt.Sprintf("not queued: its label %s names Kueue's LocalQueue %s (QUEUE in mlops.env), but Kueue never held it and made no Workload for it: it runs outside the queue, its quota uncounted. "+
			"Kueue manages %s only with %s in its Configuration's integrations.frameworks (Kueue v0.19's default leaves %s out) and in the namespaces its managedJobsNamespaceSelector selects: ask the cluster's admin to enable it (docs/sharing-a-cluster.md), or remove QUEUE",
			api.QueueLabel, queue, jobkind.WithArticle(jk.Kind), jk.KueueFramework, off)}, nil
	}
	lq, err := cluster.Get(ctx, c.Dynamic.Resource(gv.WithResource("localqueues")).Namespace(ns), queue)
	if err != nil {
		return nil, nil, fmt.Errorf("reading LocalQueue %s in namespace %s: %w", queue, ns, err)
	}
	if lq == nil {
		return []string{fmt.Sprintf("Kueue: no LocalQueue %s in namespace %s (the job's label %s, QUEUE in mlops.env), so Kueue never admits it: create it, or set QUEUE to one of `kubectl get localqueues -n %s`",
			queue, ns, api.QueueLabel, ns)}, nil, nil
	}
	if w == nil {
		return []string{fmt.Sprintf("Kueue has made no Workload for it yet (LocalQueue %s)", queue)}, nil, nil
	}
	if s, _, _ := condition(w, "Admitted"); s == "True" {
		return nil, nil, nil
	}
	reason := "no quota reserved yet"
	for _, t := range []string{"QuotaReserved", "Admitted"} {
		if s, r, message := condition(w, t); s == "False" && message != "" {
			reason = r + ": " + message
			break
		}
	}
	return []string{fmt.Sprintf("Kueue has not admitted it (Workload %s in LocalQueue %s): %s", w.GetName(), queue, reason)}, nil, nil
}

// refused says why the job's pods cannot be created: the operators' (and the Job controller's) FailedCreate
// events on the job or the objects named after it, since the job was created; Pod Security named as such.
func refused(ctx context.Context, c *cluster.Cluster, ns, name string, since metav1.Time) ([]string, error) {
	events, err := cluster.List[corev1.Event](ctx, c, "events", ns, "")
	if err != nil {
		return nil, fmt.Errorf("listing the events of namespace %s: %w", ns, err)
	}
	var last *corev1.Event
	for i, e := range events {
		mine := e.InvolvedObject.Name == name || strings.HasPrefix(e.InvolvedObject.Name, name+"-")
		// The Job controller's and the training-operator's reason is FailedCreate; mpi-operator v0.8 reports
		// its workers' as MPIJobFailed, "worker pod created failed: …".
		createFailed := strings.Contains(e.Reason, "FailedCreate") || strings.Contains(e.Message, "pod created failed")
		if !mine || e.Type != corev1.EventTypeWarning || !createFailed || eventTime(e).Before(since.Time) {
			continue
		}
		if last == nil || !eventTime(e).Before(eventTime(*last)) {
			last = &events[i]
		}
	}
	if last == nil {
		return nil, nil
	}
	what := "its pods cannot be created"
	if strings.Contains(last.Message, "violates PodSecurity") {
		what = "Pod Security refuses its pods (the namespace's pod-security.kubernetes.io/enforce level)"
	}
	return []string{fmt.Sprintf("%s: %s %s/%s: %s", what, last.Reason, last.InvolvedObject.Kind, last.InvolvedObject.Name, last.Message)}, nil
}

// eventTime is when an event last happened, whichever field its reporter set.
func eventTime(e corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

// failure says why a job failed: its Failed condition, else its pods'.
func failure(u *unstructured.Unstructured, pods []Pod) string {
	if _, reason, message := condition(u, "Failed"); message != "" {
		return "failed: " + reason + ": " + message
	}
	for _, p := range pods {
		if p.Phase == string(corev1.PodFailed) && p.Detail != "" {
			return "failed: pod " + p.Name + ": " + p.Detail
		}
	}
	return "failed"
}

// String is the report as mlops-fn status prints it.
func (r *Report) String() string {
	width, ready := 0, 0
	for _, p := range r.Pods {
		width = max(width, len(p.Name))
		if p.Ready {
			ready++
		}
	}
	var b strings.Builder
	if r.Phase == "not found" {
		fmt.Fprintf(&b, "%s  namespace %s  not found\n", r.Job, r.Namespace)
	} else {
		fmt.Fprintf(&b, "%s  namespace %s  %s  pods %d/%d ready\n", r.Job, r.Namespace, r.Phase, ready, r.Expected)
	}
	for _, p := range r.Pods {
		ready := "not ready"
		if p.Ready {
			ready = "ready"
		}
		b.WriteString(strings.TrimRight(fmt.Sprintf("  pod %-*s  %-9s  %s  %s", width, p.Name, p.Phase, ready, p.Detail), " ") + "\n")
	}
	label := "waiting"
	if r.Phase == "Failed" {
		label = "why"
	}
	for _, w := range r.Why {
		fmt.Fprintf(&b, "  %s: %s\n", label, w)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}
	return b.String()
}
