// SPDX-License-Identifier: Apache-2.0

// Package jobset is JobSet's JobSet, torchrun on each node of one replicated job with a static rendezvous on node 0.
package jobset

import (
	"fmt"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	"sigs.k8s.io/jobset/pkg/util/placement"

	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
)

// JobSet is spec.jobKind's value of the kind.
const JobSet jobkind.JobKind = "JobSet"

// Node is the JobSet's one replicated job: a Job of one pod a node.
const Node = "node"

// MasterPort is torchrun's rendezvous port on node 0, Kubeflow Trainer's (constants.ContainerTrainerPort).
const MasterPort = 29500

var facts = jobkind.Facts{
	Kind: string(JobSet), APIVersion: jobset.GroupVersion.String(), PatchFile: "jobset-patch.yaml",
	PodSpecs: []jobkind.PodSpec{{Role: jobkind.Single,
		Path: []string{"spec", "replicatedJobs", "[name=" + Node + "]", "template", "spec", "template", "spec"}}},
	ReferencePodSpecs: []string{"spec/replicatedJobs/template/spec/template/spec"},
	Operator:          "the JobSet controller",
	Install:           []string{`kubectl apply --server-side -f "https://github.com/kubernetes-sigs/jobset/releases/download/v0.12.0/manifests.yaml"`},
	Starter:           "torchrun",
	Brief:             "torchrun over JobSet",
	LogsFrom:          "node 0",
	Help:              "a JobSet (jobset.x-k8s.io/v1alpha2) of WORKERS Jobs of one pod,\ntorchrun on each in a static rendezvous on node 0",
	Carries: []string{"imagePullPolicy", "workingDir", "priorityClassName", "hostNetwork", "restartPolicy", "workers", "slotsPerWorker",
		"runPolicy.ttlSecondsAfterFinished", "runPolicy.backoffLimit"},
	ReservedEnv: reservedEnv,
	// A Job's pod restarts alone under OnFailure into a static rendezvous the others have left: the JobSet's
	// failure policy restarts them together.
	RestartPolicy: corev1.RestartPolicyNever,
	PodsLabel:     jobset.JobSetNameKey,
	ProgramPods:   []string{jobset.ReplicatedJobNameKey + "=" + Node + "," + jobset.JobIndexKey + "=0"},
	// JobSet's pods are NAME-JOB-JOBINDEX-PODINDEX and a random suffix of 5.
	PodNames: func(s jobkind.Shape) []string {
		return []string{placement.GenPodName(s.Name, Node, strconv.Itoa(int(max(s.Workers-1, 0))), "0") + "-xxxxx"}
	},
	PodCount:       func(obj map[string]any) int { return jobkind.Count(pods(obj)) },
	Pods:           pods,
	SuspendPath:    []string{"spec", "suspend"},
	KueueFramework: "jobset.x-k8s.io/jobset",
	Demo: jobkind.Torchrun(jobkind.Demo{
		CommandNote: "the torchrun line; mlops-fn passes it the nodes, its node's rank and node 0's address (PET_*)",
		Shape:       "# The JobSet's nodes, and on each its CPU, memory and GPUs.\nWORKERS=2\n" + jobkind.DemoResources,
	}),
	New:      func() any { return &jobset.JobSet{} },
	Validate: func(obj any) field.ErrorList { return validateJobSet(obj.(*jobset.JobSet)) },
}

// pods are a JobSet's pods by replicated job: replicas times parallelism (1 when unset, as a Job's).
func pods(obj map[string]any) []jobkind.Pods {
	jobs, _ := jobkind.Nested(obj, "spec", "replicatedJobs").([]any)
	var out []jobkind.Pods
	for _, j := range jobs {
		name, _ := jobkind.Nested(j, "name").(string)
		n, ok := jobkind.Nested(j, "replicas").(int64)
		if !ok {
			n = 1
		}
		if par, ok := jobkind.Nested(j, "template", "spec", "parallelism").(int64); ok {
			n *= par
		}
		spec, _ := jobkind.Nested(j, "template", "spec", "template", "spec").(map[string]any)
		out = append(out, jobkind.Pods{Role: name, Count: int(n), Spec: spec})
	}
	return out
}

var rendezvousEnv = []string{"JOBSET_NAME", "PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK", "PET_MASTER_ADDR", "PET_MASTER_PORT"}

// reservedEnv: mlops-fn sets torchrun's rendezvous (PET_*) and the name it derives node 0's address from.
func reservedEnv(name string) string {
	if strings.HasPrefix(name, "PET_") || name == "JOBSET_NAME" {
		return "mlops-fn sets torchrun's PET_* variables of a JobSet itself (" + strings.Join(rendezvousEnv, ", ") +
			"); accepted: another name (PET_NNODES and PET_NPROC_PER_NODE follow WORKERS and SLOTS_PER_WORKER)"
	}
	return ""
}

// validateJobSet is what JobSet v0.12.0's webhook (ValidateCreate, with its controller-runtime) refuses of a
// JobSet mlops-fn renders: names that are no DNS-1035 labels.
func validateJobSet(js *jobset.JobSet) field.ErrorList {
	errs := jobkind.NameIsDNS1035Label(js.Name)
	spec := field.NewPath("spec")
	if n := js.Spec.Network; n != nil && n.Subdomain != "" {
		for _, msg := range validation.IsDNS1035Label(n.Subdomain) {
			errs = append(errs, field.Invalid(spec.Child("network", "subdomain"), n.Subdomain, msg))
		}
	}
	for i, rj := range js.Spec.ReplicatedJobs {
		p := spec.Child("replicatedJobs").Index(i)
		if rj.Replicas < 1 {
			errs = append(errs, field.Invalid(p.Child("replicas"), rj.Replicas, "must be at least 1"))
			continue
		}
		for _, msg := range validation.IsDNS1035Label(placement.GenJobName(js.Name, rj.Name, int(rj.Replicas-1))) {
			errs = append(errs, field.Invalid(p.Child("name"), rj.Name, "the name of its last Job: "+msg))
		}
		if t := rj.Template.Spec; t.CompletionMode != nil && *t.CompletionMode == batchv1.IndexedCompletion && t.Completions != nil {
			name := placement.GenPodName(js.Name, rj.Name, strconv.Itoa(int(rj.Replicas-1)), strconv.Itoa(int(*t.Completions-1))) + "-abcde"
			for _, msg := range validation.IsDNS1035Label(name) {
				errs = append(errs, field.Invalid(p.Child("name"), rj.Name, fmt.Sprintf("the name of its last pod (%s): %s", name, msg)))
			}
		}
	}
	return errs
}
