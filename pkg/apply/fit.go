// SPDX-License-Identifier: Apache-2.0

package apply

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/mlops-fn/mlops-fn/pkg/cluster"
	"github.com/mlops-fn/mlops-fn/pkg/jobnode"
	"github.com/mlops-fn/mlops-fn/pkg/kinds"
)

// Unfit says how the job's pods can never all run on the cluster's nodes: a pod that requests more of a
// resource than the largest node allocates, or the pods that must run at once (jobkind's Pods) more together
// than all nodes allocate. Whatever else runs there, taints and selectors aside, so what it says is certain
// (unless an autoscaler adds nodes). Cordoned nodes are left out. A user who may not list nodes gets nothing.
func Unfit(ctx context.Context, c *cluster.Cluster, job jobnode.Job) ([]string, error) {
	nodes, err := cluster.List[corev1.Node](ctx, c, "nodes", "", "")
	if apierrors.IsForbidden(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing the nodes: %w", err)
	}
	pods, err := jobPods(job)
	if err != nil {
		return nil, err
	}
	return unfit(job.Kind+"/"+job.Name, pods, nodes), nil
}

// jobPods are the requests of the pods the job runs at once, by role.
func jobPods(job jobnode.Job) ([]podRequests, error) {
	b, err := jobnode.JSON(job.Node)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(b); err != nil {
		return nil, err
	}
	jk, _ := kinds.All.ForKind(job.Kind)
	var pods []podRequests
	for _, p := range jk.Pods(u.Object) {
		var spec corev1.PodSpec
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(p.Spec, &spec); err != nil {
			return nil, fmt.Errorf("%s/%s: the %s pods' spec: %w", job.Kind, job.Name, p.Role, err)
		}
		pods = append(pods, podRequests{p.Role, p.Count, requests(spec), p.ResourcesFrom})
	}
	return pods, nil
}

// podRequests are what each of Count pods of Role requests.
type podRequests struct {
	Role     string
	Count    int
	Requests corev1.ResourceList
	From     string // the setting of the pods' resources ("": the workers')
}

// requests are what the scheduler counts of a pod of spec: its containers' requests, a limit standing for a
// request left out (as the API server defaults it), init containers and sidecars as the scheduler adds them.
func requests(spec corev1.PodSpec) corev1.ResourceList {
	for _, cs := range [][]corev1.Container{spec.Containers, spec.InitContainers} {
		for i := range cs {
			if r := &cs[i].Resources; len(r.Limits) > 0 {
				withLimits := maps.Clone(r.Limits)
				maps.Copy(withLimits, r.Requests)
				r.Requests = withLimits
			}
		}
	}
	return resourcehelper.PodRequests(&corev1.Pod{Spec: spec}, resourcehelper.PodResourcesOptions{})
}

// unfit: each resource a pod requests more of than the largest node allocates; else each the pods together
// request more of than all nodes.
func unfit(job string, pods []podRequests, nodes []corev1.Node) []string {
	nodes = slices.DeleteFunc(slices.Clone(nodes), func(n corev1.Node) bool { return n.Spec.Unschedulable })
	if len(nodes) == 0 {
		return nil // none yet: an autoscaler's cluster, or one being set up
	}
	var out []string
	tooLarge := map[corev1.ResourceName]bool{}
	for _, p := range pods {
		for _, name := range slices.Sorted(maps.Keys(p.Requests)) {
			want := p.Requests[name]
			largest, on := resource.Quantity{}, nodes[0].Name
			for _, n := range nodes {
				if q := n.Status.Allocatable[name]; q.Cmp(largest) > 0 {
					largest, on = q, n.Name
				}
			}
			if want.Cmp(largest) <= 0 {
				continue
			}
			tooLarge[name] = true
			out = append(out, fmt.Sprintf("%s: %s requests %s %s, more than any node allocates (the largest, %s: %s): it can never be scheduled; lower %s, or add a node that large",
				job, podsNamed(p), name, want.String(), on, largest.String(), setting(p.From, name)))
		}
	}
	total, parts := corev1.ResourceList{}, map[corev1.ResourceName][]string{}
	count := 0
	for _, p := range pods {
		count += p.Count
		for name, q := range p.Requests {
			sum, each := total[name], q.DeepCopy()
			each.Mul(int64(p.Count))
			sum.Add(each)
			total[name] = sum
			parts[name] = append(parts[name], strings.TrimSpace(fmt.Sprintf("%s %d × %s", p.Role, p.Count, q.String())))
		}
	}
	if count < 2 {
		return out
	}
	for _, name := range slices.Sorted(maps.Keys(total)) {
		all := resource.Quantity{}
		var each []string
		for _, n := range nodes {
			q := n.Status.Allocatable[name]
			all.Add(q)
			each = append(each, n.Name+" "+q.String())
		}
		want := total[name]
		if tooLarge[name] || want.Cmp(all) <= 0 {
			continue
		}
		if len(each) > 3 {
			each = append(each[:3], "…")
		}
		out = append(out, fmt.Sprintf("%s: its %d pods run at once and request %s %s together (%s), more than all %d schedulable nodes allocate (%s: %s): they can never all run, and those placed wait for the others; lower %s or the number of workers (WORKERS; MIN_WORKERS for an elastic job), or add nodes",
			job, count, name, want.String(), strings.Join(parts[name], " + "), len(nodes), all.String(), strings.Join(each, ", "), setting("", name)))
	}
	return out
}

// podsNamed: "each Worker pod", "the Launcher pod", "the pod".
func podsNamed(p podRequests) string {
	switch {
	case p.Role == "":
		return "the pod"
	case p.Count == 1:
		return "the " + p.Role + " pod"
	}
	return "each " + p.Role + " pod"
}

// setting is what sets a request of resource name: from, else the workers'.
func setting(from string, name corev1.ResourceName) string {
	switch {
	case from != "":
		return from
	case name == corev1.ResourceCPU:
		return "CPU (mlops.env) or spec.resources.requests.cpu"
	case name == corev1.ResourceMemory:
		return "MEMORY (mlops.env) or spec.resources.requests.memory"
	}
	return "its count (GPUS_PER_WORKER in mlops.env for GPUs, spec.rdma.perWorker for RDMA devices)"
}
