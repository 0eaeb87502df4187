// SPDX-License-Identifier: Apache-2.0

// Package jobkind holds the types of a job kind's facts, each kind's row in pkg/kinds/KIND, for the layers the
// kinds are handed to (API, renderer, codec, schema). It names no kind's facts.
package jobkind

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// JobKind is spec.jobKind: the kind the job becomes, one of the table's.
type JobKind string

const (
	// Pod is a single-node job.
	Pod JobKind = "Pod"
	// MPIJob is a multi-node job: mpirun on a launcher, over ssh to the workers.
	MPIJob JobKind = "MPIJob"
	// PyTorchJob is an elastic PyTorchJob: torchrun workers between min and max.
	PyTorchJob JobKind = "PyTorchJob"
	// TrainJob is a Kubeflow Trainer v2 TrainJob on a training runtime.
	TrainJob JobKind = "TrainJob"
)

// Role names one pod template of a job: a replica type, a replicated job, or Single for a kind's only one.
type Role string

const (
	Single Role = ""
	// Launcher and Worker are an MPIJob's replica types (mpi-operator's MPIReplicaTypeLauncher and Worker).
	Launcher Role = "Launcher"
	Worker   Role = "Worker"
	// TrainerNode and TrainerLauncher are the replicated jobs of Trainer's built-in runtimes.
	TrainerNode     Role = "node"
	TrainerLauncher Role = "launcher"
)

// PodSpec is where a job keeps the pod spec of one role.
type PodSpec struct {
	Role Role
	Path []string
}

// Reference is a field, slash-separated, that names an object of Kind.
type Reference struct{ Kind, Path string }

// Shape is what a job's pod names follow.
type Shape struct {
	Name string
	// Workers is the number of workers (a TrainJob's nodes); MaxWorkers an elastic job's bound, else 0.
	Workers, MaxWorkers int32
	ReplicatedJobs      []string // a TrainJob's
}

// Demo is the job init writes, which runs on any cluster with the operator.
type Demo struct {
	Image       string
	About       string // whose example it is, in job.yaml's comment on the image
	Command     []string
	CommandNote string // what runs the command, in job.yaml's comment
	Shape       string // mlops.env's lines on the job's shape
	Spec        string // job.yaml's lines the kind needs beyond the image and command
	// UserName: mlops.env names the user in the image (an MPIJob's SSH keys go to their home).
	UserName bool
}

// DemoResources are each demo pod's CPU and MEMORY (limits, and so requests): three workers and an MPIJob's
// launcher (100m) fit a node of two cores beside a control plane's own pods (750m in minikube's default).
const DemoResources = "CPU=250m\nMEMORY=512Mi\n# GPUS_PER_WORKER=1\n"

// Torchrun is demo d of a kind running torchrun on each node: Kubeflow Trainer's example image, a gloo group printing each rank.
func Torchrun(d Demo) Demo {
	d.Image, d.About = "pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime", "the image of Kubeflow Trainer's own examples"
	d.Command = []string{"torchrun", "--no-python", "python3", "-c",
		"import torch.distributed as d; d.init_process_group('gloo'); print('rank', d.get_rank(), 'of', d.get_world_size())"}
	return d
}

// Pods are the pods of one role of a job: Count of them, each of pod spec Spec (decoded JSON).
type Pods struct {
	Role  string
	Count int
	Spec  map[string]any
	// ResourcesFrom sets their resources, when not the workers' setting (spec.resources, CPU, MEMORY).
	ResourcesFrom string
}

// Scale is an elastic job's worker count, and the bounds it may move within on a running job (Facts.InPlace).
type Scale struct{ Replicas, Min, Max []string }

// Facts is one row of the table.
type Facts struct {
	Kind       string
	Default    bool // the kind is spec.jobKind's default
	APIVersion string
	PatchFile  string    // the overlay patch that sets the job's own fields
	PodSpecs   []PodSpec // the pod specs mlops-fn fills, in role order
	// ReferencePodSpecs are every pod spec the kind may hold: kustomize renames what a job names in them.
	ReferencePodSpecs []string
	// ProgramPath is where the kind keeps the program (command, args) outside its containers: a TrainJob's trainer.
	ProgramPath []string
	References  []Reference // the kind's other fields that name an object, by that object's kind
	// ContainerName is the training container's name the operator requires ("": the job's), ContainerNameWhy why.
	ContainerName, ContainerNameWhy string
	Operator                        string // what runs the kind and checks it ("": the API server alone)
	// Install are the upstream commands installing Operator and the CRD, at hack/e2e/versions.env's release.
	Install []string
	// Starter is the program that starts the user's command ("": the container runs it, or its image's own).
	Starter string
	// IDsOnContainers: the user and group ids go on each container as well as on the pod: a TrainJob's
	// runtime container may set its own uid (deepspeed-distributed: 1000), which no runtime patch deletes.
	IDsOnContainers bool
	// FirstContainer says why the training container goes first ("": kubectl logs and exec default to it).
	FirstContainer string
	// Carries are the fields of Table.Fields this kind carries, dotted; Fields the rows whose text is this kind's.
	Carries []string
	Fields  []Field
	// Compared is a spec as a live job's is compared with the built one's: without what a webhook writes (nil: as is).
	Compared func(spec any) any
	// ReservedEnv says why the job's env cannot have a variable of this name, "" (or nil) if it can.
	ReservedEnv func(name string) string
	// Scale is what an in-place scale of a running job changes (nil: nothing; Facts.InPlace, deploy/admission).
	Scale *Scale
	// RestartPolicy is the pods' default; CleanPodPolicy the operator's runPolicy default ("": none).
	RestartPolicy  corev1.RestartPolicy
	CleanPodPolicy string
	// PodsLabel is the label the operator puts on each pod of a job, valued with the job's name ("": a Pod is
	// the job); ProgramPods select, beside it, the pods that run the training program, best first.
	PodsLabel   string
	ProgramPods []string
	// PodNames are the names the operator gives the pods of a job of shape, xxxxx for a random suffix.
	PodNames func(Shape) []string
	PodCount func(obj map[string]any) int // how many pods a job, as the cluster holds it, runs
	// Pods are the pods a job must run at once, by role: an MPIJob's launcher waits for all workers, torchrun its minimum.
	Pods        func(obj map[string]any) []Pods
	SuspendPath []string
	// KueueFramework is the kind's name in Kueue's integrations.frameworks; KueueOff: v0.19's default leaves it out.
	KueueFramework string
	KueueOff       bool
	// Help is the kind's paragraph in --help, its later lines indented as the first's text.
	Help string
	// Brief says what the kind is for in a word or two (multi-node), for messages' lists of kinds.
	Brief    string
	LogsFrom string                        // the pod whose log mlops-fn logs prints, in its help
	Demo     Demo                          // the job init writes of this kind
	New      func() any                    // an empty object of the upstream Go type
	Validate func(obj any) field.ErrorList // what the operator (its validation or its webhook) refuses
}

// Field is a spec field that only some kinds carry (Facts.Carries lists a kind's), with the mlops.env keys
// that set it. Set in another kind it is refused, never dropped; its keys there are warned about (shared).
type Field struct {
	Path    string // dotted, without "spec.", by the fields' JSON names
	EnvKeys []string
	Why     string // what the field is for, and where the kinds that lack it keep it
}

// Table is the job kinds a program renders, in the order of the kinds in messages (pkg/kinds.All).
type Table []Facts

// JobKind is the kind's value of spec.jobKind: its name.
func (k Facts) JobKind() JobKind { return JobKind(k.Kind) }

// Names are the values of spec.jobKind.
func (t Table) Names() []string { return t.each(func(k Facts) string { return k.Kind }) }

func (t Table) each(text func(Facts) string) []string {
	var out []string
	for _, k := range t {
		out = append(out, text(k))
	}
	return out
}

// Sentence lists each kind's text in a sentence: "a, b and c" (conj "and").
func (t Table) Sentence(conj string, text func(Facts) string) string {
	items := t.each(text)
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " " + conj + " " + items[len(items)-1]
}

// Described is the kind's name and what it is for: "MPIJob (multi-node, default)".
func (k Facts) Described() string {
	if k.Default {
		return k.Kind + " (" + k.Brief + ", default)"
	}
	return k.Kind + " (" + k.Brief + ")"
}

// Column lists each kind's text, one line a kind, under its name.
func (t Table) Column(text func(Facts) string) string {
	var b strings.Builder
	for _, k := range t {
		fmt.Fprintf(&b, "  %-11s %s\n", k.Kind, text(k))
	}
	return b.String()
}

// Of is the row of a job kind; one the table lacks has none (the spec's validation refuses it first).
func (t Table) Of(jobKind JobKind) Facts {
	k, _ := t.ForKind(string(jobKind))
	return k
}

// ForKind is the row of a kind, and whether it is one the table renders.
func (t Table) ForKind(kind string) (Facts, bool) {
	if i := slices.IndexFunc(t, func(k Facts) bool { return k.Kind == kind }); i >= 0 {
		return t[i], true
	}
	return Facts{}, false
}

// Fields are the spec fields only some kinds carry, in the table's order (docs/job-spec.md's table).
func (t Table) Fields() []Field {
	var out []Field
	for _, k := range t {
		out = append(out, k.Fields...)
	}
	return out
}

// CarriesField says whether the kind carries the field at path, one of Table.Fields.
func (k Facts) CarriesField(path string) bool { return slices.Contains(k.Carries, path) }

// EnvKeysNotCarried are the mlops.env keys kind k renders nothing from: they set fields it cannot carry.
func (t Table) EnvKeysNotCarried(k Facts) []string {
	var keys []string
	for _, f := range t.Fields() {
		if !k.CarriesField(f.Path) {
			keys = append(keys, f.EnvKeys...)
		}
	}
	return keys
}

// Default is spec.jobKind's default.
func (t Table) Default() JobKind {
	if i := slices.IndexFunc(t, func(k Facts) bool { return k.Default }); i >= 0 {
		return t[i].JobKind()
	}
	return ""
}

// Is says whether a job renders to kind.
func (t Table) Is(kind string) bool {
	return slices.ContainsFunc(t, func(k Facts) bool { return k.Kind == kind })
}

// BuiltIn says whether the kind is Kubernetes' own, which kustomize and every cluster know.
func (k Facts) BuiltIn() bool { return k.Operator == "" }

// PodSpecPath is where the kind keeps the pod spec of role, nil if it has none.
func (k Facts) PodSpecPath(role Role) []string {
	for _, s := range k.PodSpecs {
		if s.Role == role {
			return slices.Clone(s.Path)
		}
	}
	return nil
}

// WithArticle: "an MPIJob", "an MLOpsJob", "a Pod", "a PyTorchJob".
func WithArticle(kind string) string {
	if strings.HasPrefix(kind, "MPI") || strings.HasPrefix(kind, "ML") { // em-
		return "an " + kind
	}
	return "a " + kind
}

// NameIsDNS1035Label: the operators name Services and pods after the job.
func NameIsDNS1035Label(name string) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range apivalidation.NameIsDNS1035Label(name, false) {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), name, msg))
	}
	return errs
}

// Count sums the pods' counts.
func Count(pods []Pods) int {
	n := 0
	for _, p := range pods {
		n += p.Count
	}
	return n
}

// ReplicaPods are the pods of the replica specs at path, sorted by replica type (no replicas: one pod).
func ReplicaPods(obj map[string]any, path ...string) []Pods {
	specs, _ := Nested(obj, path...).(map[string]any)
	var out []Pods
	for _, t := range slices.Sorted(maps.Keys(specs)) {
		n, ok := Nested(specs[t], "replicas").(int64)
		if !ok {
			n = 1
		}
		spec, _ := Nested(specs[t], "template", "spec").(map[string]any)
		out = append(out, Pods{Role: t, Count: int(n), Spec: spec})
	}
	return out
}

// Nested is the value at path in decoded JSON, nil if absent.
func Nested(v any, path ...string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}
