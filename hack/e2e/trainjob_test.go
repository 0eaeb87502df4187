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

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/kinds/trainjob"
)

// Trainer's torch plugin (plugins/torch/torch.go): the master's port, and the field the node
// rank comes from (the Job's completion index).
const (
	torchMasterPort   = 29500
	completionIndex   = "batch.kubernetes.io/job-completion-index"
	nodeRankFieldPath = "metadata.annotations['" + completionIndex + "']"
)

// nodes is the node count the TrainJob asks for: mlops-fn's WORKERS, or what a fixture writes.
func (o *overlay) nodes() int {
	if o.plan != nil {
		return int(o.plan.Workers)
	}
	if n := o.trainJob.Spec.Trainer; n != nil && n.NumNodes != nil {
		return int(*n.NumNodes)
	}
	return 1 // torch-distributed's mlPolicy.numNodes
}

// procsPerNode is PET_NPROC_PER_NODE: mlops-fn's SLOTS_PER_WORKER, or a fixture's numProcPerNode.
func (o *overlay) procsPerNode() string {
	if o.plan != nil {
		return strconv.Itoa(int(o.plan.SlotsPerWorker))
	}
	if t := o.trainJob.Spec.Trainer; t != nil && t.NumProcPerNode != nil {
		return strconv.Itoa(int(*t.NumProcPerNode))
	}
	return "the fixture sets no numProcPerNode"
}

// nodePatch is the TrainJob's runtime patches of the replicated job node, merged in order as
// Trainer applies them: the pod's securityContext (later fields win), ServiceAccount and
// volumes, and the container node's securityContext and volumeMounts.
type nodePatch struct {
	podSecurity, nodeSecurity map[string]any
	serviceAccount            string
	volumes                   []corev1.Volume
	mounts                    []corev1.VolumeMount
}

func (o *overlay) nodePatch() nodePatch {
	n := nodePatch{podSecurity: map[string]any{}, nodeSecurity: map[string]any{}}
	for _, rp := range o.trainJob.Spec.RuntimePatches {
		t := rp.TrainingRuntimeSpec
		if t == nil || t.Template == nil || t.Template.Spec == nil {
			continue
		}
		for _, rj := range t.Template.Spec.ReplicatedJobs {
			if rj.Name != string(jobkind.TrainerNode) || rj.Template == nil || rj.Template.Spec == nil ||
				rj.Template.Spec.Template == nil || rj.Template.Spec.Template.Spec == nil {
				continue
			}
			spec := rj.Template.Spec.Template.Spec
			mergeJSON(n.podSecurity, spec.SecurityContext)
			if spec.ServiceAccountName != nil {
				n.serviceAccount = *spec.ServiceAccountName
			}
			n.volumes = append(n.volumes, spec.Volumes...)
			for _, c := range spec.Containers {
				if c.Name == string(jobkind.TrainerNode) {
					mergeJSON(n.nodeSecurity, c.SecurityContext)
					n.mounts = append(n.mounts, c.VolumeMounts...)
				}
			}
		}
	}
	return n
}

// mergeJSON merges v, as JSON, into m: maps field by field, anything else replaced.
func mergeJSON(m map[string]any, v any) {
	var src map[string]any
	b, _ := json.Marshal(v)
	if json.Unmarshal(b, &src) != nil {
		return
	}
	var merge func(dst, src map[string]any)
	merge = func(dst, src map[string]any) {
		for k, sv := range src {
			if sm, ok := sv.(map[string]any); ok {
				if dm, ok := dst[k].(map[string]any); ok {
					merge(dm, sm)
					continue
				}
			}
			dst[k] = sv
		}
	}
	merge(m, src)
}

// checkTrainJob (check 2, TrainJob): Trainer's webhooks default and validate it, Trainer merges
// runtime, trainer fields and runtime patches into a JobSet, JobSet makes the Job of the
// replicated job node, the Job controller its pods, kwok runs them; completing them completes
// the TrainJob. It returns one of the pods, for the Pod Security probe.
func checkTrainJob(c *check, o *overlay, ns, level string) *corev1.Pod {
	if !applyForReal(c, o, ns, level, " (Trainer's webhooks default and validate the TrainJob)") {
		return nil
	}
	n := o.nodes()
	selector := o.selector(string(jobkind.TrainerNode))
	waitForCount(ns, selector, n)
	var js jobset.JobSet
	if err := get(jobset.GroupVersion.String(), "JobSet", ns, o.name, &js); err != nil {
		c.fail("Trainer creates the JobSet "+o.name, err.Error(), statusOf(o.kind.APIVersion, o.kind.Kind, ns, o.name))
		return nil
	}
	var owners []string
	for _, r := range js.OwnerReferences {
		if r.Controller != nil && *r.Controller {
			owners = append(owners, r.Kind+"/"+r.Name)
		}
	}
	c.eq("Trainer creates the JobSet "+o.name+", owned by the TrainJob", "TrainJob/"+o.name, strings.Join(owners, ","))
	shape := "none"
	for _, rj := range js.Spec.ReplicatedJobs {
		if rj.Name == string(jobkind.TrainerNode) {
			shape = optional(rj.Template.Spec.Parallelism) + " " + optional(rj.Template.Spec.Completions)
		}
	}
	c.eq(fmt.Sprintf("the JobSet's replicated job node runs numNodes=%d pods at once (parallelism, completions)", n), fmt.Sprintf("%d %d", n, n), shape)
	ps := pods(ns, selector)
	c.eq(fmt.Sprintf("exactly numNodes=%d node pods", n), n, len(ps))
	if o.plan != nil {
		numNodes := "unset"
		if t := o.trainJob.Spec.Trainer; t != nil {
			numNodes = optional(t.NumNodes)
		}
		c.eq(fmt.Sprintf("the TrainJob's numNodes is WORKERS=%d", o.plan.Workers), strconv.Itoa(int(o.plan.Workers)), numNodes)
		checkEnvConfigMap(c, o, ns)
	}
	// kwok does not start containers: a kubelet would refuse one whose configMapKeyRef is missing.
	var missing []string
	if t := o.trainJob.Spec.Trainer; t != nil {
		for _, e := range t.Env {
			r := e.ValueFrom
			if r == nil || r.ConfigMapKeyRef == nil || r.ConfigMapKeyRef.Optional != nil && *r.ConfigMapKeyRef.Optional {
				continue
			}
			cm, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, r.ConfigMapKeyRef.Name, metav1.GetOptions{})
			if _, has := cm.Data[r.ConfigMapKeyRef.Key]; err != nil || !has {
				missing = append(missing, r.ConfigMapKeyRef.Name+"/"+r.ConfigMapKeyRef.Key)
			}
		}
	}
	c.that("every configMapKeyRef of the trainer's env names a key of a ConfigMap in the namespace", len(missing) == 0, "missing: "+strings.Join(missing, ", "))
	if len(ps) == 0 {
		return nil
	}
	var indexes, want []string
	for i := range n {
		want = append(want, strconv.Itoa(i))
	}
	master := "none"
	for _, p := range ps {
		indexes = append(indexes, p.Annotations[completionIndex])
		if p.Annotations[completionIndex] == "0" {
			master = p.Spec.Hostname + "." + p.Spec.Subdomain
		}
	}
	slices.SortFunc(indexes, func(a, b string) int { x, _ := strconv.Atoi(a); y, _ := strconv.Atoi(b); return x - y })
	c.eq(fmt.Sprintf("the pods' completion indexes (PET_NODE_RANK) are 0..%d, once each", n-1), want, indexes)
	for i := range ps {
		checkTrainJobPod(c, o, &ps[i], i == 0)
		if o.plan != nil {
			checkPodSpec(c, o, &ps[i], jobkind.TrainerNode)
		}
	}
	// PET_MASTER_ADDR is rank 0's DNS name: its hostname and subdomain, and the JobSet's headless Service.
	c.eq("PET_MASTER_ADDR is rank 0's pod: its hostname.subdomain", masterAddress(o), master)
	svc := "none"
	if s, err := kube.CoreV1().Services(ns).Get(ctx, o.name, metav1.GetOptions{}); err == nil {
		svc = s.Spec.ClusterIP + " " + s.Spec.Selector[jobset.JobSetNameKey]
	}
	c.eq("JobSet's headless Service "+o.name+" selects the node pods (their DNS names)", "None "+o.name, svc)

	if !c.that(fmt.Sprintf("the %d node pods are scheduled on the fake node and Running", n), waitUntil(waitForPods, func() bool {
		return allInPhase(ns, selector, n, corev1.PodRunning)
	}), podTable(ns)) {
		return &ps[0]
	}
	if err := complete(ns, podNames(ps)...); err != nil {
		c.fail("the node pods complete", err.Error())
		return &ps[0]
	}
	c.that("the TrainJob is Complete once its node pods complete (Jobs, then JobSet, succeeded)", waitUntil(waitForPods, func() bool {
		return conditionOf(o.kind.APIVersion, o.kind.Kind, ns, o.name, "Complete") == "True"
	}), statusOf(o.kind.APIVersion, o.kind.Kind, ns, o.name), statusOf(jobset.GroupVersion.String(), "JobSet", ns, o.name))
	return &ps[0]
}

// masterAddress is rank 0's DNS name: JobSet's pod hostname <jobset>-<job>-<job index>-<pod
// index>, in the JobSet's headless Service.
func masterAddress(o *overlay) string { return o.name + "-node-0-0." + o.name }

// checkTrainJobPod: the pod carries what the TrainJob says: the runtime patches' pod
// securityContext, ServiceAccount and volumes, and the container node's volumeMounts and
// securityContext; the trainer's image, command, args, env and resourcesPerNode; the PET_*
// variables Trainer's torch plugin sets for torchrun.
func checkTrainJobPod(c *check, o *overlay, pod *corev1.Pod, first bool) {
	what := func(s string) string { return pod.Name + ": " + s }
	var node *corev1.Container
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == string(jobkind.TrainerNode) {
			node = &pod.Spec.Containers[i]
		}
	}
	if node == nil {
		c.fail(what("has the runtime's container node"), jsonText(podContainerNames(pod)))
		return
	}
	patch := o.nodePatch()
	var psc corev1.PodSecurityContext
	if pod.Spec.SecurityContext != nil {
		psc = *pod.Spec.SecurityContext
	}
	var planned corev1.PodSecurityContext
	b, _ := json.Marshal(patch.podSecurity)
	_ = json.Unmarshal(b, &planned)
	c.eq(what("pod securityContext runAsUser/runAsGroup/fsGroup/runAsNonRoot (the runtime patch's)"), podIDs(&planned), podIDs(&psc))
	c.that(what("the runtime patch's whole pod securityContext is the pod's"), subsetOf(patch.podSecurity, psc),
		"patch: "+jsonText(patch.podSecurity), "pod:   "+jsonText(psc))
	if patch.serviceAccount != "" {
		sa := pod.Spec.ServiceAccountName
		if sa == "" {
			sa = "default"
		}
		c.eq(what("runs as the runtime patch's ServiceAccount"), patch.serviceAccount, sa)
	}
	var want, got []string
	for _, v := range patch.volumes {
		want = append(want, v.Name)
		if i := slices.IndexFunc(pod.Spec.Volumes, func(w corev1.Volume) bool { return w.Name == v.Name }); i >= 0 && subsetOf(v, pod.Spec.Volumes[i]) {
			got = append(got, v.Name)
		}
	}
	c.eq(what(fmt.Sprintf("the runtime patch's volumes are the pod's (%s)", orNone(want))), strings.Join(want, ","), strings.Join(got, ","))
	want, got = nil, nil
	for _, m := range patch.mounts {
		want = append(want, m.Name+":"+m.MountPath)
		if i := slices.IndexFunc(node.VolumeMounts, func(w corev1.VolumeMount) bool { return w.Name == m.Name }); i >= 0 && subsetOf(m, node.VolumeMounts[i]) {
			got = append(got, m.Name+":"+m.MountPath)
		}
	}
	c.eq(what(fmt.Sprintf("container node has the runtime patch's volumeMounts (%s)", orNone(want))), strings.Join(want, ","), strings.Join(got, ","))
	c.that(what("container node has the runtime patch's securityContext"), subsetOf(patch.nodeSecurity, node.SecurityContext),
		"patch: "+jsonText(patch.nodeSecurity), "node:  "+jsonText(node.SecurityContext))

	t := o.trainJob.Spec.Trainer
	if t == nil {
		t = &trainer.Trainer{}
	}
	// What the trainer leaves unset is the runtime's.
	if t.Image != nil {
		c.eq(what("container node runs the trainer's image"), *t.Image, node.Image)
	}
	if t.Command != nil {
		c.eq(what("container node runs the trainer's command"), t.Command, node.Command)
	}
	if t.Args != nil {
		c.eq(what("container node runs the trainer's args"), t.Args, node.Args)
	}
	kept := 0
	for _, e := range t.Env {
		if i := slices.IndexFunc(node.Env, func(x corev1.EnvVar) bool { return x.Name == e.Name }); i >= 0 && subsetOf(e, node.Env[i]) {
			kept++
		}
	}
	c.eq(what(fmt.Sprintf("container node has the trainer's %d env variables (values and configMapKeyRefs)", len(t.Env))), len(t.Env), kept)
	// (the API server defaults a request that is not set to the limit)
	var res corev1.ResourceRequirements
	if t.ResourcesPerNode != nil {
		res = *t.ResourcesPerNode
	}
	requests := maps.Clone(res.Limits)
	if requests == nil && res.Requests != nil {
		requests = corev1.ResourceList{}
	}
	maps.Copy(requests, res.Requests)
	c.eq(what("container node's resources are the trainer's resourcesPerNode"),
		[]map[string]string{quantities(res.Limits), quantities(requests)},
		[]map[string]string{quantities(node.Resources.Limits), quantities(node.Resources.Requests)})
	gpu := func(l corev1.ResourceList) string { q := l["nvidia.com/gpu"]; return q.String() }
	c.eq(what("nvidia.com/gpu limit"), gpu(res.Limits), gpu(node.Resources.Limits))

	pet := map[string]string{
		"PET_MASTER_ADDR":    masterAddress(o),
		"PET_MASTER_PORT":    strconv.Itoa(torchMasterPort),
		"PET_NNODES":         strconv.Itoa(o.nodes()),
		"PET_NODE_RANK":      "fieldRef:" + nodeRankFieldPath,
		"PET_NPROC_PER_NODE": o.procsPerNode(),
	}
	have := map[string]string{}
	for _, e := range node.Env {
		if !strings.HasPrefix(e.Name, "PET_") {
			continue
		}
		have[e.Name] = e.Value
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			have[e.Name] = "fieldRef:" + e.ValueFrom.FieldRef.FieldPath
		}
	}
	c.eq(what("the PET_* variables of Trainer's torch plugin (nnodes, procs per node, node rank, master address and port)"), pet, have)
	if first {
		note("%s", jsonText(have))
	}
	c.that(what(fmt.Sprintf("container node exposes the master port %d", torchMasterPort)), slices.ContainsFunc(node.Ports, func(p corev1.ContainerPort) bool {
		return p.ContainerPort == torchMasterPort
	}), jsonText(node.Ports))
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ",")
}

// checkBrokenTrainJob: the TrainJob fixture, broken: Trainer's validating webhook (named in the
// refusal, so that it is its and not the CRD schema's) refuses each of its rules mlops-fn's
// output must keep; the schema refuses a misspelt field.
func checkBrokenTrainJob(c *check) {
	o, err := loadOverlay(fixtureDir)
	if err != nil {
		c.fail("the TrainJob fixture builds", err.Error())
		return
	}
	const hook = `admission webhook "validator.trainjob.trainer.kubeflow.org" denied the request: `
	// In the namespace Kueue's webhooks exempt (its own): elsewhere its TrainJob webhook, which
	// works out the pod sets of any TrainJob, refuses the same (runtime '...' not found), and
	// whichever webhook answers first is the refusal kubectl shows.
	expectRefused(c, "negative: Trainer's webhook refuses a TrainJob whose runtimeRef names no ClusterTrainingRuntime", "kueue-system", o,
		hook+".*specified clusterTrainingRuntime must be created before the TrainJob is created", func(job *unstructured.Unstructured) error {
			return setField(job, "no-such-runtime", "spec", "runtimeRef", "name")
		})
	expectRefused(c, "negative: Trainer's webhook refuses a TrainJob setting a torchrun variable (PET_NNODES) in trainer.env", "broken", o,
		hook+".*must not have reserved envs", func(job *unstructured.Unstructured) error {
			return editListItem(job, []string{"spec", "trainer", "env"}, "WORKERS", func(e map[string]any) { e["name"] = "PET_NNODES" })
		})
	expectRefused(c, "negative: Trainer's webhook refuses env in the runtime patch of container node (only trainer.env may set it)", "broken", o,
		hook+".*must not have envs for the", func(job *unstructured.Unstructured) error {
			return editRuntimePatchContainers(job, func(k map[string]any) {
				k["env"] = []any{map[string]any{"name": "EXTRA", "value": "1"}}
			})
		})
	expectRefused(c, "negative: Trainer's webhook refuses a runtime patch whose manager is no domain-prefixed path", "broken", o,
		hook+".*manager", func(job *unstructured.Unstructured) error {
			return editListItemBy(job, []string{"spec", "runtimePatches"}, "manager", trainjob.RuntimePatchManager, func(e map[string]any) { e["manager"] = "mlops-fn" })
		})
	expectRefused(c, "negative: a TrainJob with a misspelt field (runtimePatch) is refused", "broken", o,
		`\.spec\.runtimePatch: field not declared in schema`, func(job *unstructured.Unstructured) error {
			return renameField(job, []string{"spec"}, "runtimePatches", "runtimePatch")
		})
}
