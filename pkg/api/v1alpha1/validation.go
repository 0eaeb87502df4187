// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	"fmt"
	"maps"
	"math"
	"path"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
)

// Limits shared with mlops.env's keys, so both places accept the same values.
const (
	MaxWorkers = 10000
	MaxGPUs    = 64
	MaxSlots   = 1024
	MaxID      = math.MaxInt32
)

// Validate checks the spec on its own by the rules every kind shares (a kind's own are its Validator's);
// values that may hold ${KEY} (image, paths) the renderer checks once expanded.
func (j *MLOpsJob) Validate(kinds jobkind.Table) field.ErrorList {
	meta, name := field.NewPath("metadata"), j.Metadata.Name
	l, wpc, cm := j.Metadata.Labels[PriorityClassLabel], j.Spec.WorkloadPriorityClass, j.Spec.EnvFile.ConfigMapName
	return slices.Concat(
		when(j.APIVersion != APIVersion, field.Invalid(field.NewPath("apiVersion"), j.APIVersion, "accepted: "+APIVersion)),
		when(j.Kind != Kind, field.Invalid(field.NewPath("kind"), j.Kind, "accepted: "+Kind)),
		when(name == "", field.Required(meta.Child("name"), "the job's name: a DNS label such as resnet50")),
		IfSet(meta.Child("name"), name, validation.IsDNS1035Label),
		validateMap(meta.Child("labels"), j.Metadata.Labels, validation.IsValidLabelValue),
		when(l != "" && wpc != "" && l != wpc, field.Invalid(field.NewPath("spec", "workloadPriorityClass"), wpc,
			fmt.Sprintf("contradicts the label %s: %s of metadata.labels; accepted: one of them", PriorityClassLabel, l))),
		validateMap(meta.Child("annotations"), j.Metadata.Annotations, nil),
		IfSet(meta.Child("namespace"), j.Metadata.Namespace, validation.IsDNS1123Label),
		// hydrate would generate two ConfigMaps of that name.
		when(strings.HasSuffix(cm, GuardInputsSuffix), field.Invalid(field.NewPath("spec", "envFile", "configMapName"), cm, fmt.Sprintf("ends in %s, like the ConfigMap mlops-fn hydrate generates from mlops.env for its guard (%s%s, local-config: never applied); accepted: another name, such as %s (the default)", GuardInputsSuffix, name, GuardInputsSuffix, DefaultConfigMapName(name, kinds.Of(j.Spec.JobKind))))),
		j.Spec.validate(field.NewPath("spec"), kinds))
}

// Validator is a job kind with checks of its own on the spec at p, after the shared ones (pkg/kinds.Validate).
type Validator interface {
	Validate(s *MLOpsJobSpec, p *field.Path) field.ErrorList
}

func (s *MLOpsJobSpec) validate(p *field.Path, kinds jobkind.Table) field.ErrorList {
	kind := kinds.Of(s.JobKind)
	errs := slices.Concat(
		OneOf(p.Child("jobKind"), string(s.JobKind), kinds.Names()...),
		IfSet(p.Child("containerName"), s.ContainerName, validation.IsDNS1123Label),
		when(s.ContainerName != "" && kind.ContainerNameWhy != "" && s.ContainerName != kind.ContainerName, field.Invalid(p.Child("containerName"),
			s.ContainerName, fmt.Sprintf("%s; accepted: %s (the default in jobKind %s)", kind.ContainerNameWhy, kind.ContainerName, kind.Kind))),
		oneOfIfSet(p.Child("imagePullPolicy"), string(s.ImagePullPolicy),
			string(corev1.PullAlways), string(corev1.PullIfNotPresent), string(corev1.PullNever)),
		oneOfIfSet(p.Child("restartPolicy"), string(s.RestartPolicy), "Never", "OnFailure"))
	for i, secret := range s.ImagePullSecrets {
		errs = append(errs, each(p.Child("imagePullSecrets").Index(i).Child("name"), secret.Name, validation.IsDNS1123Subdomain)...)
	}
	errs = append(errs, when(s.Script != "" && len(s.Command) > 0, field.Forbidden(p.Child("script"), "set either script or command, not both"))...)
	for i, e := range s.Env {
		ep := p.Child("env").Index(i)
		errs = slices.Concat(errs, each(ep.Child("name"), e.Name, validation.IsEnvVarName),
			when(e.Value != "" && e.ValueFrom != nil, field.Invalid(ep.Child("valueFrom"), e.Name, "accepted: value or valueFrom, not both")),
			// An empty valueFrom would be dropped, leaving the variable empty.
			when(e.ValueFrom != nil && *e.ValueFrom == (corev1.EnvVarSource{}), field.Invalid(ep.Child("valueFrom"), e.Name,
				"names no source; accepted: one of fieldRef, resourceFieldRef, configMapKeyRef, secretKeyRef, fileKeyRef")))
	}
	errs = slices.Concat(errs,
		literalPath(p.Child("workingDir"), s.WorkingDir),
		each(p.Child("envFile", "configMapName"), s.EnvFile.ConfigMapName, validation.IsDNS1123Subdomain),
		IfSet(p.Child("serviceAccountName"), s.ServiceAccountName, validation.IsDNS1123Subdomain),
		IntRange(p.Child("workers"), s.Workers, 1, MaxWorkers),
		IntRange(p.Child("gpusPerWorker"), s.GPUsPerWorker, 0, MaxGPUs),
		IntRange(p.Child("slotsPerWorker"), s.SlotsPerWorker, 1, MaxSlots),
		validateResources(s.Resources, p.Child("resources")),
		validateResources(ptr.Deref(s.LauncherResources, corev1.ResourceRequirements{}), p.Child("launcherResources")),
		validateMap(p.Child("nodeSelector"), s.NodeSelector, validation.IsValidLabelValue))
	for i, t := range s.Tolerations {
		errs = append(errs, validateToleration(p.Child("tolerations").Index(i), t)...)
	}
	if r := s.RDMA; r != nil {
		rp := p.Child("rdma", "resource")
		bad := len(validation.IsQualifiedName(r.Resource)) > 0 || !strings.Contains(r.Resource, "/") || strings.HasPrefix(r.Resource, "kubernetes.io/")
		errs = slices.Concat(errs,
			when(r.Resource == "", field.Required(rp, "the RDMA device plugin's resource name, e.g. rdma/rdma_shared_device_a")),
			when(r.Resource != "" && bad, field.Invalid(rp, r.Resource,
				"accepted: an extended resource name DOMAIN/NAME of the device plugin, e.g. rdma/rdma_shared_device_a")),
			IntRange(p.Child("rdma", "perWorker"), r.PerWorker, 1, MaxGPUs))
	}
	errs = slices.Concat(errs,
		IfSet(p.Child("workloadPriorityClass"), s.WorkloadPriorityClass, validation.IsDNS1123Subdomain),
		IfSet(p.Child("priorityClassName"), s.PriorityClassName, validation.IsDNS1123Subdomain),
		validateVolumes(p.Child("volumes"), s.Volumes),
		s.RunPolicy.validate(p.Child("runPolicy")),
		s.Security.validate(p.Child("security")),
		s.notCarried(p, kinds))
	if t := s.Target; t != nil {
		errs = slices.Concat(errs, when(t.Name == "" && len(t.Labels) == 0, field.Required(p.Child("target"), "a name, labels, or both")),
			validateMap(p.Child("target", "labels"), t.Labels, validation.IsValidLabelValue))
	}
	return errs
}

// validateResources: cpu and memory only, each above zero, no request above its limit.
func validateResources(r corev1.ResourceRequirements, p *field.Path) field.ErrorList {
	errs := when(len(r.Claims) > 0, field.Forbidden(p.Child("claims"), "mlops-fn sets no resource claims; accepted: limits and requests of cpu and memory"))
	for _, list := range []struct {
		name string
		l    corev1.ResourceList
	}{{"limits", r.Limits}, {"requests", r.Requests}} {
		for _, name := range slices.Sorted(maps.Keys(list.l)) {
			at, q := p.Child(list.name).Key(string(name)), list.l[name]
			switch limit, limited := r.Limits[name]; {
			case name != corev1.ResourceCPU && name != corev1.ResourceMemory:
				errs = append(errs, field.NotSupported(at, string(name), []string{"cpu",
					"memory (GPUs are spec.gpusPerWorker or GPUS_PER_WORKER, RDMA devices spec.rdma)"}))
			case q.Sign() <= 0:
				errs = append(errs, field.Invalid(at, q.String(), "accepted: a quantity greater than zero"))
			case name == corev1.ResourceCPU && FinerThanMilli(q):
				errs = append(errs, field.Invalid(at, q.AsDec().String(), FinerThanMilliWrong+"; accepted: a whole number of m, such as 1m or 500m"))
			case list.name == "requests" && limited && q.Cmp(limit) > 0:
				errs = append(errs, field.Invalid(at, q.String(),
					fmt.Sprintf("is above its limit %s, which the API server refuses; accepted: a request up to the limit", limit.String())))
			}
		}
	}
	return errs
}

// FinerThanMilliWrong says why a CPU quantity FinerThanMilli is refused.
const FinerThanMilliWrong = "is finer than 1m (a thousandth of a core), which Kubernetes does not allow"

// FinerThanMilli: Kubernetes takes no CPU quantity finer than 1m; the kubelet would round it up.
func FinerThanMilli(q resource.Quantity) bool {
	return q.Cmp(*resource.NewMilliQuantity(q.MilliValue(), q.Format)) != 0
}

func validateVolumes(p *field.Path, vols []Volume) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, v := range vols {
		vp := p.Index(i)
		sources := len(slices.DeleteFunc([]bool{v.NFS != nil, v.PVC != nil, v.HostPath != nil, v.EmptyDir != nil}, func(set bool) bool { return !set }))
		errs = slices.Concat(errs,
			each(vp.Child("name"), v.Name, validation.IsDNS1123Label),
			when(v.Name == NFSVolumeName, field.Invalid(vp.Child("name"), v.Name, "reserved for the NFS share from NFS_SERVER and NFS_PATH")),
			when(seen[v.Name], field.Duplicate(vp.Child("name"), v.Name)),
			requiredPath(vp.Child("mountPath"), v.MountPath, "an absolute path in the container, e.g. ${DATASET_DIR}"),
			when(v.SubPath != "" && !strings.Contains(v.SubPath, "${") && (path.IsAbs(v.SubPath) || hasDotDot(v.SubPath)),
				field.Invalid(vp.Child("subPath"), v.SubPath, `accepted: a relative path inside the volume, without ".."`)),
			when(sources != 1, field.Invalid(vp, v.Name, fmt.Sprintf("has %d sources; accepted: exactly one of nfs, pvc, hostPath, emptyDir", sources))))
		seen[v.Name] = true
		if v.PVC != nil {
			errs = append(errs, each(vp.Child("pvc", "claimName"), v.PVC.ClaimName, validation.IsDNS1123Subdomain)...)
		}
		if v.NFS != nil {
			errs = append(errs, requiredPath(vp.Child("nfs", "path"), v.NFS.Path, "the absolute path exported by the NFS server")...)
		}
		if h := v.HostPath; h != nil {
			errs = append(errs, requiredPath(vp.Child("hostPath", "path"), h.Path, "an absolute path on the node")...)
			if h.Type != nil {
				errs = append(errs, OneOf(vp.Child("hostPath", "type"), string(*h.Type), "",
					"DirectoryOrCreate", "Directory", "FileOrCreate", "File", "Socket", "CharDevice", "BlockDevice")...)
			}
		}
		if d := v.EmptyDir; d != nil {
			errs = slices.Concat(errs, OneOf(vp.Child("emptyDir", "medium"), string(d.Medium), "", string(corev1.StorageMediumMemory)),
				when(d.SizeLimit != nil && d.SizeLimit.Sign() <= 0, field.Invalid(vp.Child("emptyDir", "sizeLimit"), d.SizeLimit.String(),
					"accepted: a quantity greater than zero, such as 8Gi")))
		}
	}
	return errs
}

// CheckAbsPath says what is wrong with p as an absolute path, "" when nothing (the renderer's, once expanded).
func CheckAbsPath(p string) string {
	switch {
	case !path.IsAbs(p):
		return "accepted: an absolute path"
	case hasDotDot(p):
		return `has a ".." element; accepted: an absolute path without ".."`
	}
	return ""
}

// literalPath checks a path that references no ${KEY}: those are checked once expanded.
func literalPath(p *field.Path, value string) field.ErrorList {
	msg := CheckAbsPath(value)
	return when(value != "" && !strings.Contains(value, "${") && msg != "", field.Invalid(p, value, msg))
}

// requiredPath is literalPath of a path that may not be left out.
func requiredPath(p *field.Path, value, required string) field.ErrorList {
	return append(when(value == "", field.Required(p, required)), literalPath(p, value)...)
}

func hasDotDot(p string) bool {
	return slices.Contains(strings.Split(p, "/"), "..")
}

// NFSVolumeName is the volume made from NFS_SERVER and NFS_PATH.
const NFSVolumeName = "nfs"

// ShmVolumeName is the memory-backed volume SHM_SIZE mounts at ShmPath.
const (
	ShmVolumeName = "dshm"
	ShmPath       = "/dev/shm"
)

// Kueue's labels on a job: its LocalQueue (QUEUE of mlops.env) and its WorkloadPriorityClass
// (spec.workloadPriorityClass).
const (
	QueueLabel         = "kueue.x-k8s.io/queue-name"
	PriorityClassLabel = "kueue.x-k8s.io/priority-class"
)

// Kueue's annotations on a pod template: Topology Aware Scheduling's level (TOPOLOGY_REQUIRED or
// TOPOLOGY_PREFERRED of mlops.env), and the group of pod templates placed together in it.
const (
	RequiredTopologyAnnotation  = "kueue.x-k8s.io/podset-required-topology"
	PreferredTopologyAnnotation = "kueue.x-k8s.io/podset-preferred-topology"
	PodSetGroupAnnotation       = "kueue.x-k8s.io/podset-group-name"
)

func (r RunPolicy) validate(p *field.Path) field.ErrorList {
	// Unset where the jobKind cannot carry them (Default leaves them out there).
	errs := slices.Concat(oneOfIfSet(p.Child("cleanPodPolicy"), r.CleanPodPolicy, "None", "Running", "All"),
		atLeast(p.Child("ttlSecondsAfterFinished"), r.TTLSecondsAfterFinished, 0, "accepted: 0 or more"),
		atLeast(p.Child("activeDeadlineSeconds"), r.ActiveDeadlineSeconds, 1, "accepted: 1 or more"),
		atLeast(p.Child("backoffLimit"), r.BackoffLimit, 0, "accepted: 0 or more"))
	if sp := r.SchedulingPolicy; sp != nil {
		q := p.Child("schedulingPolicy")
		errs = slices.Concat(errs, atLeast(q.Child("minAvailable"), sp.MinAvailable, 1, "accepted: 1 or more (at most the job's pods)"),
			atLeast(q.Child("scheduleTimeoutSeconds"), sp.ScheduleTimeoutSeconds, 1, "accepted: 1 or more"),
			IfSet(q.Child("queue"), sp.Queue, validation.IsDNS1123Subdomain),
			IfSet(q.Child("priorityClass"), sp.PriorityClass, validation.IsDNS1123Subdomain))
	}
	return errs
}

func (s Security) validate(p *field.Path) field.ErrorList {
	return slices.Concat(IntRange(p.Child("runAsUser"), s.RunAsUser, 0, MaxID), IntRange(p.Child("runAsGroup"), s.RunAsGroup, 0, MaxID),
		IntRange(p.Child("fsGroup"), s.FSGroup, 0, MaxID), literalPath(p.Child("home"), s.Home))
}

// validateMap checks each key of m as a qualified name, and its value by value (nil: any).
func validateMap(p *field.Path, m map[string]string, value func(string) []string) field.ErrorList {
	var errs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(m)) {
		errs = append(errs, each(p.Key(k), k, validation.IsQualifiedName)...)
		if value != nil {
			errs = append(errs, each(p.Key(k), m[k], value)...)
		}
	}
	return errs
}

func validateToleration(p *field.Path, t corev1.Toleration) field.ErrorList {
	return slices.Concat(oneOfIfSet(p.Child("operator"), string(t.Operator), "Exists", "Equal"),
		oneOfIfSet(p.Child("effect"), string(t.Effect), "NoSchedule", "PreferNoSchedule", "NoExecute"),
		when(t.Operator == corev1.TolerationOpExists && t.Value != "", field.Invalid(p.Child("value"), t.Value, "must be empty when operator is Exists")),
		when(t.Key == "" && t.Operator != corev1.TolerationOpExists, field.Invalid(p.Child("operator"), string(t.Operator),
			"an empty key matches every taint only with operator Exists; accepted: a key, or operator Exists")),
		when(t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute, field.Invalid(p.Child("tolerationSeconds"),
			ptr.Deref(t.TolerationSeconds, 0), "only applies to effect NoExecute")),
		IfSet(p.Child("key"), t.Key, validation.IsQualifiedName))
}

// when is err when bad holds, else none; err is built either way, so it must not dereference what bad guards.
func when(bad bool, err *field.Error) field.ErrorList {
	if bad {
		return field.ErrorList{err}
	}
	return nil
}

// OneOf refuses value unless it is one of accepted.
func OneOf(p *field.Path, value string, accepted ...string) field.ErrorList {
	return when(!slices.Contains(accepted, value), field.NotSupported(p, value, accepted))
}

// oneOfIfSet is OneOf for a value that may be left out.
func oneOfIfSet(p *field.Path, value string, accepted ...string) field.ErrorList {
	if value == "" {
		return nil
	}
	return OneOf(p, value, accepted...)
}

// IntRange refuses v, if set, outside lo to hi.
func IntRange[T int32 | int64](p *field.Path, v *T, lo, hi T) field.ErrorList {
	return when(v != nil && (*v < lo || *v > hi), field.Invalid(p, ptr.Deref(v, 0), fmt.Sprintf("accepted: %d to %d", lo, hi)))
}

// atLeast refuses v, if set, below lo.
func atLeast[T int32 | int64](p *field.Path, v *T, lo T, accepted string) field.ErrorList {
	return when(v != nil && *v < lo, field.Invalid(p, ptr.Deref(v, 0), accepted))
}

// each is an Invalid at p for each message of an apimachinery check of value.
func each(p *field.Path, value string, check func(string) []string) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range check(value) {
		errs = append(errs, field.Invalid(p, value, msg))
	}
	return errs
}

// IfSet is each for a value that may be left out.
func IfSet(p *field.Path, value string, check func(string) []string) field.ErrorList {
	if value == "" {
		return nil
	}
	return each(p, value, check)
}
