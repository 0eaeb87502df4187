// SPDX-License-Identifier: Apache-2.0

// Package trainjob is Kubeflow Trainer v2's TrainJob: its facts, rendering and patching.
package trainjob

import (
	"fmt"
	"slices"
	"strings"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
)

// RuntimePatchManager owns the runtime patch mlops-fn writes into a TrainJob.
const RuntimePatchManager = "mlops-fn.dev/mlops-fn"

var facts = jobkind.Facts{
	Kind: string(jobkind.TrainJob), APIVersion: trainer.GroupVersion.String(), PatchFile: "trainjob-patch.yaml",
	PodSpecs: []jobkind.PodSpec{
		{Role: jobkind.TrainerLauncher, Path: trainJobPodSpec(jobkind.TrainerLauncher)},
		{Role: jobkind.TrainerNode, Path: trainJobPodSpec(jobkind.TrainerNode)},
	},
	ReferencePodSpecs: []string{"spec/runtimePatches/trainingRuntimeSpec/template/spec/replicatedJobs/template/spec/template/spec"},
	ProgramPath:       []string{"spec", "trainer"},
	References: []jobkind.Reference{
		{Kind: "ConfigMap", Path: "spec/trainer/env/valueFrom/configMapKeyRef/name"},
		{Kind: "Secret", Path: "spec/trainer/env/valueFrom/secretKeyRef/name"},
		{Kind: "Secret", Path: "spec/initializer/dataset/secretRef/name"},
		{Kind: "Secret", Path: "spec/initializer/model/secretRef/name"},
		{Kind: "ConfigMap", Path: "spec/initializer/dataset/env/valueFrom/configMapKeyRef/name"},
		{Kind: "ConfigMap", Path: "spec/initializer/model/env/valueFrom/configMapKeyRef/name"},
		{Kind: "Secret", Path: "spec/initializer/dataset/env/valueFrom/secretKeyRef/name"},
		{Kind: "Secret", Path: "spec/initializer/model/env/valueFrom/secretKeyRef/name"},
	},
	Operator: "Kubeflow Trainer",
	// The control plane with JobSet, then the runtimes (docs/operator-guides/installation.md).
	Install: []string{`kubectl apply --server-side -k "https://github.com/kubeflow/trainer.git/manifests/overlays/manager?ref=v2.3.0"`,
		`kubectl apply --server-side -k "https://github.com/kubeflow/trainer.git/manifests/overlays/runtimes?ref=v2.3.0"`},
	Starter:  "the runtime's launcher (torchrun)",
	Brief:    "Kubeflow Trainer",
	LogsFrom: "its launcher (an MPI runtime), else node 0",
	Help:     "a Kubeflow Trainer v2 TrainJob (trainer.kubeflow.org/v1alpha1) on a\ntraining runtime (spec.trainer.runtime, default torch-distributed)",
	Carries:  []string{"workers", "slotsPerWorker", "trainer"},
	Fields: []jobkind.Field{
		{Path: "imagePullPolicy", Why: lacks + "the training runtime's container sets it"},
		{Path: "workingDir", Why: lacks + "the training runtime's container sets it"},
		{Path: "priorityClassName", Why: lacks + "the training runtime's pod template sets it, or Kueue's priority-class label on the job: spec.workloadPriorityClass"},
		{Path: "hostNetwork", Why: lacks + "the training runtime's pod template sets it"},
		{Path: "restartPolicy", Why: "the pods' restart policy, which a TrainJob's training runtime sets"},
		{Path: "trainer", Why: "the runtime and replicated jobs of a TrainJob"},
		// Every kind carries runPolicy.activeDeadlineSeconds: a Pod's, a TrainJob's own, the operators' runPolicy.
		{Path: "runPolicy.cleanPodPolicy", Why: "the pods an operator deletes when its job ends; a TrainJob's runtime owns them"},
		{Path: "runPolicy.ttlSecondsAfterFinished", Why: "how long an operator keeps its finished job; a TrainJob's runtime owns it"},
		{Path: "runPolicy.backoffLimit",
			Why: "how often an operator retries its failed job; a Pod's containers restart by spec.restartPolicy, a TrainJob's runtime sets its own"},
		{Path: "runPolicy.schedulingPolicy",
			Why: "gang scheduling of a job's pods: a Pod has no gang, a JobSet only Kueue's all-at-once admission (QUEUE), a TrainJob's runtime sets its podGroupPolicy"},
	},
	ReservedEnv:     reservedEnv,
	Compared:        withoutPatchTimes,
	ContainerName:   string(jobkind.TrainerNode),
	IDsOnContainers: true,
	ContainerNameWhy: "Kubeflow Trainer sets a TrainJob's image, command, env and resources in the runtime's container named " + string(jobkind.TrainerNode) +
		", and admits a runtime patch naming another container that then keeps the JobSet from starting",
	PodsLabel: jobset.JobSetNameKey, // Trainer names the JobSet like the TrainJob
	ProgramPods: []string{
		jobset.ReplicatedJobNameKey + "=" + string(jobkind.TrainerLauncher),
		jobset.ReplicatedJobNameKey + "=" + string(jobkind.TrainerNode) + "," + jobset.JobIndexKey + "=0," + batchv1.JobCompletionIndexAnnotation + "=0",
	},
	// JobSet's pods are NAME-JOB-0-INDEX and a random suffix of 5; the node job has one pod a node.
	PodNames: func(s jobkind.Shape) []string {
		var names []string
		for _, j := range s.ReplicatedJobs {
			last := int32(0)
			if j == string(jobkind.TrainerNode) {
				last = max(s.Workers-1, 0)
			}
			names = append(names, fmt.Sprintf("%s-%s-0-%d-xxxxx", s.Name, j, last))
		}
		return names
	},
	PodCount: numNodes,
	// The node pods' resources; the runtime's other pods are the runtime's.
	Pods: func(obj map[string]any) []jobkind.Pods {
		node := map[string]any{"name": string(jobkind.TrainerNode)}
		if r := jobkind.Nested(obj, "spec", "trainer", "resourcesPerNode"); r != nil {
			node["resources"] = r
		}
		return []jobkind.Pods{{Role: string(jobkind.TrainerNode), Count: numNodes(obj), Spec: map[string]any{"containers": []any{node}}}}
	},
	SuspendPath:    []string{"spec", "suspend"},
	KueueFramework: "trainer.kubeflow.org/trainjob",
	Demo: jobkind.Torchrun(jobkind.Demo{
		CommandNote: "the torchrun line; Kubeflow Trainer's torch-distributed runtime passes it nnodes and the master",
		Shape:       "# The TrainJob's nodes, and on each its CPU, memory and GPUs.\nWORKERS=2\n" + jobkind.DemoResources,
		Spec:        "  trainer:\n    runtime: " + api.DefaultTrainerRuntime + " # the ClusterTrainingRuntime the TrainJob runs on\n",
	}),
	New:      func() any { return &trainer.TrainJob{} },
	Validate: func(obj any) field.ErrorList { return validateTrainJob(obj.(*trainer.TrainJob)) },
}

// numNodes is a TrainJob's spec.trainer.numNodes, 1 when unset, as Trainer defaults it.
func numNodes(obj map[string]any) int {
	if n, ok := jobkind.Nested(obj, "spec", "trainer", "numNodes").(int64); ok {
		return int(n)
	}
	return 1
}

const lacks = "Kubeflow Trainer's TrainJob and its runtimePatches have no such field: "

// Default: the runtime owns MPI, the launcher and the restart policy; nor is the runtime defaulted: a user's own
// TrainJob keeps its runtimeRef unless the spec names one.
func (Kind) Default(s *api.MLOpsJobSpec) {
	if s.Trainer.Runtime != "" && s.Trainer.RuntimeKind == "" {
		s.Trainer.RuntimeKind = api.ClusterTrainingRuntime
	}
	if s.Trainer.ReplicatedJobs == nil {
		s.Trainer.ReplicatedJobs = []string{string(jobkind.TrainerNode)}
	}
}

// withoutPatchTimes is a TrainJob's spec without its runtime patches' times: Trainer's webhook writes them, and a
// dry run of an unchanged patch may come back without.
func withoutPatchTimes(spec any) any { return jobkind.Drop(spec, "runtimePatches", "*", "time") }

func reservedEnv(name string) string {
	if strings.HasPrefix(name, "PET_") {
		return "Kubeflow Trainer sets torchrun's PET_* variables itself and refuses a TrainJob whose env names one; accepted: another name (numNodes and numProcPerNode follow WORKERS and SLOTS_PER_WORKER)"
	}
	return ""
}

// Validate checks spec.trainer.
func (Kind) Validate(s *api.MLOpsJobSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	t, tp := s.Trainer, p.Child("trainer")
	errs = append(errs, api.IfSet(tp.Child("runtime"), t.Runtime, validation.IsDNS1123Subdomain)...)
	if t.RuntimeKind != "" {
		errs = append(errs, api.OneOf(tp.Child("runtimeKind"), t.RuntimeKind, api.ClusterTrainingRuntime, api.TrainingRuntime)...)
		if t.Runtime == "" {
			errs = append(errs, field.Required(tp.Child("runtime"), "runtimeKind names the kind of a runtime: the runtime's name, e.g. "+api.DefaultTrainerRuntime))
		}
	}
	if len(t.ReplicatedJobs) == 0 {
		errs = append(errs, field.Required(tp.Child("replicatedJobs"), "the runtime's replicated jobs whose pods get the site settings, e.g. [node]"))
	}
	for i, name := range t.ReplicatedJobs {
		errs = append(errs, api.OneOf(tp.Child("replicatedJobs").Index(i), name, string(jobkind.TrainerNode), string(jobkind.TrainerLauncher))...)
		if slices.Index(t.ReplicatedJobs, name) < i {
			errs = append(errs, field.Duplicate(tp.Child("replicatedJobs").Index(i), name))
		}
	}
	return errs
}

// trainJobPodSpec is where mlops-fn's runtime patch keeps a replicated job's pod spec.
func trainJobPodSpec(replicatedJob jobkind.Role) []string {
	return []string{"spec", "runtimePatches", "[manager=" + RuntimePatchManager + "]", "trainingRuntimeSpec", "template", "spec",
		"replicatedJobs", "[name=" + string(replicatedJob) + "]", "template", "spec", "template", "spec"}
}

// validateTrainJob is what the TrainJob CRD's rules and Trainer's webhook check without the runtime at hand.
func validateTrainJob(job *trainer.TrainJob) field.ErrorList {
	errs := jobkind.NameIsDNS1035Label(job.Name)
	spec := field.NewPath("spec")
	for i, p := range job.Spec.RuntimePatches {
		errs = append(errs, validation.IsDomainPrefixedPath(spec.Child("runtimePatches").Index(i).Child("manager"), p.Manager)...)
	}
	if t := job.Spec.Trainer; t != nil && t.NumNodes != nil && *t.NumNodes < 1 {
		errs = append(errs, field.Invalid(spec.Child("trainer", "numNodes"), *t.NumNodes, "must be at least 1"))
	}
	return errs
}
