// Package jobkind is the one table of the job kinds mlops-fn renders: for
// each mode, the kind, its apiVersion and upstream Go type, where its pod
// specs are, the overlay patch file that carries it, and the checks its
// operator applies. The renderer, the processor, hydrate, the schema and the
// tests read it; adding a kind is one entry here plus its renderer.
package jobkind

import (
	"maps"
	"slices"
	"strings"

	kubeflow "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	mpivalidation "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/validation"
	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	kubeflowv1 "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"
)

// Mode picks the workload kind.
type Mode string

const (
	SingleNode Mode = "single-node"
	MultiNode  Mode = "multi-node"
	// Elastic is an elastic PyTorchJob: torchrun workers between min and max.
	Elastic Mode = "elastic"
	// TrainJob is a Kubeflow Trainer v2 TrainJob on a training runtime.
	TrainJob Mode = "trainjob"
)

// Role names a pod template of a job: an MPIJob's replica type, "" for the
// single template of a Pod or a PyTorchJob.
type Role = kubeflow.MPIReplicaType

// PodSpec is where a job keeps the pod spec of one role.
type PodSpec struct {
	Role Role
	Path []string
}

// Reference is a field, slash-separated, that names an object of Kind.
type Reference struct{ Kind, Path string }

// RuntimePatchManager owns the runtime patch mlops-fn writes into a TrainJob.
const RuntimePatchManager = "mlops-fn.dev/mlops-fn"

// trainJobPodSpec is where a TrainJob's runtime patch of mlops-fn's keeps the
// pod spec of a replicated job of the runtime.
func trainJobPodSpec(replicatedJob string) []string {
	return []string{"spec", "runtimePatches", "[manager=" + RuntimePatchManager + "]", "trainingRuntimeSpec", "template", "spec",
		"replicatedJobs", "[name=" + replicatedJob + "]", "template", "spec", "template", "spec"}
}

// TrainJob roles: the replicated jobs of Trainer's built-in runtimes.
const (
	TrainerNode     Role = "node"
	TrainerLauncher Role = "launcher"
)

// JobKind is one row of the table.
type JobKind struct {
	Mode       Mode
	Kind       string
	APIVersion string
	// PatchFile is the overlay patch that sets the job's own fields.
	PatchFile string
	// PodSpecs are the pod specs mlops-fn fills, in role order.
	PodSpecs []PodSpec
	// ReferencePodSpecs are every pod spec the kind may hold, slash-separated,
	// where kustomize must rename the objects a job names.
	ReferencePodSpecs []string
	// ProgramPath is where the training program (command, args) is when the
	// kind keeps it outside its pod specs' containers: a TrainJob's trainer.
	ProgramPath []string
	// References are the kind's other fields that name an object, by that
	// object's kind.
	References []Reference
	// PodsLabel is the label the operator puts on each pod of a job, valued
	// with the job's name ("": a Pod is the job).
	PodsLabel string
	// New is an empty object of the upstream Go type.
	New func() any
	// Validate is what the operator (its validation or its webhook) refuses.
	Validate func(obj any) field.ErrorList
}

// Kinds is the table, in the order of the modes in messages.
var Kinds = []JobKind{
	{
		Mode: SingleNode, Kind: "Pod", APIVersion: "v1", PatchFile: "pod-patch.yaml",
		PodSpecs: []PodSpec{{"", []string{"spec"}}},
		New:      func() any { return &corev1.Pod{} },
		Validate: func(any) field.ErrorList { return nil },
	},
	{
		Mode: MultiNode, Kind: "MPIJob", APIVersion: kubeflow.SchemeGroupVersion.String(), PatchFile: "mpijob-patch.yaml",
		PodsLabel: kubeflow.JobNameLabel,
		PodSpecs: []PodSpec{
			{kubeflow.MPIReplicaTypeLauncher, []string{"spec", "mpiReplicaSpecs", "Launcher", "template", "spec"}},
			{kubeflow.MPIReplicaTypeWorker, []string{"spec", "mpiReplicaSpecs", "Worker", "template", "spec"}},
		},
		ReferencePodSpecs: []string{"spec/mpiReplicaSpecs/Launcher/template/spec", "spec/mpiReplicaSpecs/Worker/template/spec"},
		New:               func() any { return &kubeflow.MPIJob{} },
		Validate:          func(obj any) field.ErrorList { return validateMPIJob(obj.(*kubeflow.MPIJob)) },
	},
	{
		Mode: Elastic, Kind: kubeflowv1.PyTorchJobKind, APIVersion: kubeflowv1.SchemeGroupVersion.String(), PatchFile: "pytorchjob-patch.yaml",
		PodsLabel:         kubeflowv1.JobNameLabel,
		PodSpecs:          []PodSpec{{"", []string{"spec", "pytorchReplicaSpecs", "Worker", "template", "spec"}}},
		ReferencePodSpecs: []string{"spec/pytorchReplicaSpecs/Master/template/spec", "spec/pytorchReplicaSpecs/Worker/template/spec"},
		New:               func() any { return &kubeflowv1.PyTorchJob{} },
		Validate:          func(obj any) field.ErrorList { return pyTorchJobWebhook(obj.(*kubeflowv1.PyTorchJob)) },
	},
	{
		Mode: TrainJob, Kind: trainer.TrainJobKind, APIVersion: trainer.GroupVersion.String(), PatchFile: "trainjob-patch.yaml",
		PodsLabel: jobset.JobSetNameKey, // Trainer names the JobSet like the TrainJob
		PodSpecs: []PodSpec{
			{TrainerLauncher, trainJobPodSpec(string(TrainerLauncher))},
			{TrainerNode, trainJobPodSpec(string(TrainerNode))},
		},
		ReferencePodSpecs: []string{"spec/runtimePatches/trainingRuntimeSpec/template/spec/replicatedJobs/template/spec/template/spec"},
		ProgramPath:       []string{"spec", "trainer"},
		References: []Reference{
			{"ConfigMap", "spec/trainer/env/valueFrom/configMapKeyRef/name"},
			{"Secret", "spec/trainer/env/valueFrom/secretKeyRef/name"},
			{"Secret", "spec/initializer/dataset/secretRef/name"},
			{"Secret", "spec/initializer/model/secretRef/name"},
			{"ConfigMap", "spec/initializer/dataset/env/valueFrom/configMapKeyRef/name"},
			{"ConfigMap", "spec/initializer/model/env/valueFrom/configMapKeyRef/name"},
			{"Secret", "spec/initializer/dataset/env/valueFrom/secretKeyRef/name"},
			{"Secret", "spec/initializer/model/env/valueFrom/secretKeyRef/name"},
		},
		New:      func() any { return &trainer.TrainJob{} },
		Validate: func(obj any) field.ErrorList { return validateTrainJob(obj.(*trainer.TrainJob)) },
	},
}

// Modes are the modes of the table, as accepted values in messages.
func Modes() []string {
	var out []string
	for _, k := range Kinds {
		out = append(out, string(k.Mode))
	}
	return out
}

// ForMode is the row of a mode; a mode the table lacks has none (the spec's
// validation refuses it first).
func ForMode(m Mode) JobKind {
	for _, k := range Kinds {
		if k.Mode == m {
			return k
		}
	}
	return JobKind{}
}

// ForKind is the row of a kind, and whether it is one mlops-fn renders.
func ForKind(kind string) (JobKind, bool) {
	for _, k := range Kinds {
		if k.Kind == kind {
			return k, true
		}
	}
	return JobKind{}, false
}

// Is says whether kind is one a job renders to.
func Is(kind string) bool {
	_, ok := ForKind(kind)
	return ok
}

// PodSpecPath is where the kind keeps the pod spec of role, nil if it has none.
func (k JobKind) PodSpecPath(role Role) []string {
	for _, s := range k.PodSpecs {
		if s.Role == role {
			return slices.Clone(s.Path)
		}
	}
	return nil
}

// WithArticle: "an MPIJob", "a Pod", "a PyTorchJob".
func WithArticle(kind string) string {
	if strings.HasPrefix(kind, "MPI") {
		return "an " + kind
	}
	return "a " + kind
}

// validateMPIJob is the mpi-operator's validation, plus the replica types it
// has no controller for.
func validateMPIJob(job *kubeflow.MPIJob) field.ErrorList {
	errs := mpivalidation.ValidateMPIJob(job)
	for t := range job.Spec.MPIReplicaSpecs {
		if t != kubeflow.MPIReplicaTypeLauncher && t != kubeflow.MPIReplicaTypeWorker {
			errs = append(errs, field.NotSupported(field.NewPath("spec", "mpiReplicaSpecs"), string(t), []string{"Launcher", "Worker"}))
		}
	}
	return errs
}

// pyTorchJobWebhook is the admission check of the training-operator
// (pkg/webhooks/pytorch/pytorchjob_webhook.go, unexported there).
func pyTorchJobWebhook(job *kubeflowv1.PyTorchJob) field.ErrorList {
	errs := nameIsDNS1035Label(job.Name)
	spec := field.NewPath("spec")
	if e := job.Spec.ElasticPolicy; e != nil && e.NProcPerNode != nil && job.Spec.NprocPerNode != nil {
		errs = append(errs, field.Forbidden(spec.Child("elasticPolicy", "nProcPerNode"), "must not be used with spec.nprocPerNode"))
	}
	replicas := spec.Child("pytorchReplicaSpecs")
	if job.Spec.PyTorchReplicaSpecs == nil {
		errs = append(errs, field.Required(replicas, "a Worker (and optionally a Master) replica spec"))
	}
	for _, t := range slices.Sorted(maps.Keys(job.Spec.PyTorchReplicaSpecs)) {
		r, role := job.Spec.PyTorchReplicaSpecs[t], replicas.Key(string(t))
		containers := role.Child("template", "spec", "containers")
		if t != kubeflowv1.PyTorchJobReplicaTypeWorker && t != kubeflowv1.PyTorchJobReplicaTypeMaster {
			errs = append(errs, field.NotSupported(role, string(t), []string{"Master", "Worker"}))
		}
		if r == nil || len(r.Template.Spec.Containers) == 0 {
			errs = append(errs, field.Required(containers, "a container named "+kubeflowv1.PyTorchJobDefaultContainerName))
			continue
		}
		var names []string
		for i, c := range r.Template.Spec.Containers {
			if c.Image == "" {
				errs = append(errs, field.Required(containers.Index(i).Child("image"), "an image reference"))
			}
			names = append(names, c.Name)
		}
		if !slices.Contains(names, kubeflowv1.PyTorchJobDefaultContainerName) {
			errs = append(errs, field.Invalid(containers, strings.Join(names, ", "), "the training-operator admits a PyTorchJob only with a container named "+
				kubeflowv1.PyTorchJobDefaultContainerName+"; accepted: the training container named "+kubeflowv1.PyTorchJobDefaultContainerName))
		}
		if t == kubeflowv1.PyTorchJobReplicaTypeMaster && (r.Replicas == nil || *r.Replicas != 1) {
			errs = append(errs, field.Forbidden(role.Child("replicas"), "a Master has exactly 1 replica"))
		}
	}
	return errs
}

// validateTrainJob is what the TrainJob CRD's rules and Trainer's webhook
// check without the runtime at hand: the name is a DNS-1035 label (the
// JobSet's and its pods' names derive from it), each runtime patch has a
// domain-prefixed manager, and numNodes is positive.
func validateTrainJob(job *trainer.TrainJob) field.ErrorList {
	errs := nameIsDNS1035Label(job.Name)
	spec := field.NewPath("spec")
	for i, p := range job.Spec.RuntimePatches {
		errs = append(errs, validation.IsDomainPrefixedPath(spec.Child("runtimePatches").Index(i).Child("manager"), p.Manager)...)
	}
	if t := job.Spec.Trainer; t != nil && t.NumNodes != nil && *t.NumNodes < 1 {
		errs = append(errs, field.Invalid(spec.Child("trainer", "numNodes"), *t.NumNodes, "must be at least 1"))
	}
	return errs
}

// nameIsDNS1035Label: the operators name Services and pods after the job.
func nameIsDNS1035Label(name string) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range apivalidation.NameIsDNS1035Label(name, false) {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), name, msg))
	}
	return errs
}
