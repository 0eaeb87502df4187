// SPDX-License-Identifier: Apache-2.0

// Package render turns a job spec and its mlops.env into typed Kubernetes objects: the overlay patches and
// the skeletons they apply to. It does no I/O.
package render

import (
	"cmp"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/env"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
)

// GPUResource is the extended resource the NVIDIA device plugin serves.
const GPUResource corev1.ResourceName = "nvidia.com/gpu"

// Plan is a job with every value settled (spec defaults, mlops.env, ${KEY} references): all the builders read.
type Plan struct {
	// JobName is the spec's name; Name is the object's, which a target may change.
	JobName       string
	Name          string
	Target        api.Target
	Namespace     string
	Labels        map[string]string
	Annotations   map[string]string
	JobKind       jobkind.JobKind
	kind          Kind
	ConfigMapName string
	// HashedFrom is ConfigMapName without the hash of its data that the function appends ("": none).
	HashedFrom string

	ContainerName string
	// ContainerNamed: spec.containerName is not its default (the job's name): a target's pod must have it.
	ContainerNamed bool
	Containers     ContainerNames
	// Sidecars and InitContainers are a target's other containers, by role: given security, env and volumes too.
	Sidecars, InitContainers map[jobkind.Role][]string
	// OwnEnvFrom are a target's containers' envFrom sources, by role and container: envFrom has no merge key,
	// so the patch carries them, before the env ConfigMap.
	OwnEnvFrom       map[jobkind.Role]map[string][]corev1.EnvFromSource
	Image            string
	ImagePullPolicy  corev1.PullPolicy
	ImagePullSecrets []corev1.LocalObjectReference
	Command          []string
	Args             []string
	// Script: Command is spec.script, which an MPIJob's launcher runs itself, not under mlops-fn's mpirun.
	Script             bool
	WorkingDir         string
	Env                []corev1.EnvVar
	ServiceAccountName string

	Workers, GPUsPerWorker, SlotsPerWorker int32
	// GPUsFrom is the setting that counts the GPUs ("": none); GPUResourceSet: GPU_RESOURCE names GPUResource.
	GPUsFrom                   string
	GPUResource                corev1.ResourceName
	GPUResourceSet             bool
	Limits, LauncherLimits     corev1.ResourceList
	Requests, LauncherRequests corev1.ResourceList
	// LauncherLimitsDefault: the launcher's are the default, under a target launcher's own.
	LauncherLimitsDefault bool

	NodeSelector      map[string]string
	Tolerations       []corev1.Toleration
	PriorityClassName string

	MPI     api.MPI
	Elastic ElasticPlan
	Trainer api.Trainer
	// EnvKeys are mlops.env's keys, sorted: a TrainJob's trainer takes each from the env ConfigMap.
	EnvKeys       []string
	RunPolicy     api.RunPolicy
	RestartPolicy corev1.RestartPolicy // the pods'
	Volumes       []corev1.Volume
	Mounts        []corev1.VolumeMount

	// Notices say what patching the target changes beyond what the user wrote.
	Notices []string

	// Placement is Kueue's topology annotation of every pod template, or nil.
	Placement map[string]string

	Kept any // what a kind's Narrow found in the target for its later edits (AfterPatcher, JSONPatcher)

	RunAsUser, RunAsGroup, FSGroup *int64
	Home                           string
	Hardening                      bool
	HostNetwork                    bool
	// RDMAResource is the RDMA devices' resource, "" without RDMA.
	RDMAResource corev1.ResourceName
}

// gangMinimum settles runPolicy.schedulingPolicy.minAvailable (PodGroup minMember). The operators' default,
// every pod, never forms where a pod is created once others run (WaitForWorkersReady's launcher), and waits
// for more than needed where fewer may start (MIN_WORKERS): there the plan sets it.
func (p *Plan) gangMinimum(path *field.Path, errs field.ErrorList) field.ErrorList {
	g, ok := p.kind.(Gang)
	if !ok {
		return errs // no gang: the kind-fields table refuses schedulingPolicy
	}
	pods, which, least := g.Gang(p)
	sp := p.RunPolicy.SchedulingPolicy
	if sp != nil && sp.MinAvailable != nil {
		if *sp.MinAvailable > pods {
			errs = append(errs, field.Invalid(path, *sp.MinAvailable,
				fmt.Sprintf("is more than the job's %d pods, %s: the group would never start; accepted: 1 to %d", pods, which, pods)))
		}
		return errs
	}
	if least > 0 {
		policy := ptr.Deref(sp, api.SchedulingPolicy{})
		policy.MinAvailable = ptr.To(least)
		p.RunPolicy.SchedulingPolicy = &policy
	}
	return errs
}

// ElasticPlan is an elastic job's settled shape.
type ElasticPlan struct {
	MinWorkers, MaxWorkers int32
	Backend, Endpoint      string
	RunID                  string
	MaxRestarts            *int32
	ProcsPerWorker         int32
}

// Kind is the job kind the plan renders.
func (p *Plan) Kind() Kind { return p.kind }

// Facts is the row of the job kinds table the plan renders.
func (p *Plan) Facts() jobkind.Facts { return p.kind.Facts() }

// Warning is advice about a job that renders.
type Warning struct {
	Field   *field.Path
	Message string
}

// Resolve settles job (defaulted, validated), of kind, against mlops.env, by the shared rules and the kind's
// (Resolver). Errors name the spec field or mlops.env key.
func Resolve(job *api.MLOpsJob, kind Kind, file *env.File, set env.Settings) (*Plan, []Warning, field.ErrorList) {
	s := &job.Spec
	spec := field.NewPath("spec")
	in := Input{Spec: s, Env: file, Set: set}
	envKey := in.EnvKey
	x := &expander{values: file.Map(), source: file.Source}

	p := &Plan{
		JobName:            job.Metadata.Name,
		Target:             ptr.Deref(s.Target, api.Target{Name: job.Metadata.Name}),
		Name:               job.Metadata.Name,
		Namespace:          job.Metadata.Namespace,
		Labels:             job.Metadata.Labels,
		Annotations:        job.Metadata.Annotations,
		JobKind:            s.JobKind,
		kind:               kind,
		ConfigMapName:      s.EnvFile.ConfigMapName,
		ContainerName:      s.ContainerName,
		ContainerNamed:     s.ContainerName != cmp.Or(kind.Facts().ContainerName, job.Metadata.Name),
		Image:              x.str(spec.Child("image"), s.Image),
		ImagePullPolicy:    s.ImagePullPolicy,
		ImagePullSecrets:   s.ImagePullSecrets,
		Command:            x.strs(spec.Child("command"), s.Command),
		Args:               x.strs(spec.Child("args"), s.Args),
		ServiceAccountName: s.ServiceAccountName,
		NodeSelector:       s.NodeSelector,
		Tolerations:        s.Tolerations,
		PriorityClassName:  s.PriorityClassName,
		MPI:                s.MPI,
		Trainer:            s.Trainer,
		RunPolicy:          s.RunPolicy,
		RestartPolicy:      s.RestartPolicy,
		Hardening:          *s.Security.Hardening,
		HostNetwork:        s.HostNetwork,
		EnvKeys:            slices.Sorted(maps.Keys(file.Map())),
	}
	errs := twoHomes(s, set, file.Source, file.Map())
	var warnings []Warning
	if reserved := kind.Facts().ReservedEnv; reserved != nil {
		for _, k := range p.EnvKeys {
			if why := reserved(k); why != "" {
				errs = append(errs, field.Invalid(envKey(k), k, why))
			}
		}
	}
	if s.Script != "" {
		script := x.str(spec.Child("script"), s.Script)
		p.Command, p.Script = []string{script}, true
		if strings.IndexFunc(script, unicode.IsSpace) >= 0 {
			errs = append(errs, field.Invalid(spec.Child("script"), script, "is run as one program whose path is the whole text, spaces included; accepted: the script's path alone, and the arguments as command: [python, train.py, --lr, \"0.1\"] (or the script's path in command and the arguments in args)"))
		}
	}
	if len(s.Command) > 0 && len(p.Command) > 0 && strings.IndexFunc(p.Command[0], unicode.IsSpace) >= 0 {
		errs = append(errs, field.Invalid(spec.Child("command").Index(0), p.Command[0], "is run as one program whose path is the whole text, spaces included; accepted: one item per argument, command: [python, train.py, --lr, \"0.1\"] (init: mlops-fn init DIR -- python train.py --lr 0.1)"))
	}
	for i, e := range s.Env {
		if _, ok := x.values[e.Name]; ok {
			errs = append(errs, field.Invalid(spec.Child("env").Index(i).Child("name"), e.Name, fmt.Sprintf("is a key of %s, whose value reaches the containers through the env ConfigMap; an env entry of the same name would override it there while the job is rendered from %s; accepted: the value in %s only, or another name", x.source, x.source, x.source)))
		}
		e.Value = x.str(spec.Child("env").Index(i).Child("value"), e.Value)
		p.Env = append(p.Env, e)
	}

	if err := checkImage(p.Image); p.Image != "" && err != "" && len(x.errs) == 0 {
		if p.Image != s.Image {
			err = fmt.Sprintf("(expanded from %q) %s", s.Image, err)
		}
		errs = append(errs, field.Invalid(spec.Child("image"), p.Image, err))
	}
	if s.WorkingDir != "" {
		p.WorkingDir, _ = x.path(spec.Child("workingDir"), s.WorkingDir)
	}

	p.Workers = ptr.Deref(cmp.Or(set.Workers, s.Workers), 0)
	if p.Facts().CarriesField("workers") && p.Workers == 0 {
		errs = append(errs, field.Required(envKey("WORKERS"),
			fmt.Sprintf("%s needs the number of workers: set WORKERS in %s (or spec.workers), 1 to %d", p.JobKind, file.Source, api.MaxWorkers)))
	}
	p.GPUsPerWorker = ptr.Deref(cmp.Or(set.GPUsPerWorker, s.GPUsPerWorker), 0)
	// One rank per GPU by default.
	p.SlotsPerWorker = ptr.Deref(cmp.Or(set.SlotsPerWorker, s.SlotsPerWorker), max(p.GPUsPerWorker, 1))
	p.RunAsUser = cmp.Or(set.UserID, s.Security.RunAsUser)
	p.RunAsGroup = cmp.Or(set.GroupID, s.Security.RunAsGroup)
	// Volumes belong to the job's group by default.
	p.FSGroup = cmp.Or(set.FSGroup, s.Security.FSGroup, p.RunAsGroup)
	if s.Security.Home != "" {
		p.Home, _ = x.path(spec.Child("security", "home"), s.Security.Home)
	}
	if p.Home == "" {
		p.Home = api.DefaultMPIHome
		if set.UserName != "" && set.UserName != "root" {
			p.Home = "/home/" + set.UserName
		}
	}
	warnings = append(warnings, unlikelyQuantities(s, spec)...)
	if r, ok := kind.(Resolver); ok {
		w, e := r.Resolve(p, in)
		warnings, errs = append(warnings, w...), append(errs, e...)
	}
	errs = p.gangMinimum(spec.Child("runPolicy", "schedulingPolicy", "minAvailable"), errs)
	p.Limits, p.Requests = corev1.ResourceList{}, maps.Clone(s.Resources.Requests)
	for _, l := range []struct {
		key     string
		name    corev1.ResourceName
		fromEnv *resource.Quantity
	}{{"CPU", corev1.ResourceCPU, set.CPU}, {"MEMORY", corev1.ResourceMemory, set.Memory}} {
		if q := cmp.Or(l.fromEnv, quantity(s.Resources.Limits, l.name)); q != nil {
			p.Limits[l.name] = *q
		}
		// The spec's own limits are checked against its requests already.
		if r, ok := p.Requests[l.name]; ok && l.fromEnv != nil && r.Cmp(*l.fromEnv) > 0 {
			errs = append(errs, field.Invalid(spec.Child("resources", "requests").Key(string(l.name)), r.String(), fmt.Sprintf(
				"is above the limit %s=%s of %s, which the API server refuses; accepted: a request up to that limit", l.key, l.fromEnv.String(), file.Source)))
		}
	}
	limitOwners := map[corev1.ResourceName]string{corev1.ResourceCPU: "CPU", corev1.ResourceMemory: "MEMORY"}
	gpu := cmp.Or(corev1.ResourceName(set.GPUResource), GPUResource)
	p.GPUResource, p.GPUResourceSet = gpu, set.GPUResource != ""
	switch {
	case set.GPUsPerWorker != nil:
		p.GPUsFrom = "GPUS_PER_WORKER"
	case s.GPUsPerWorker != nil:
		p.GPUsFrom = "spec.gpusPerWorker"
	}
	if p.GPUsPerWorker > 0 {
		p.Limits[gpu] = *resource.NewQuantity(int64(p.GPUsPerWorker), resource.DecimalSI)
		limitOwners[gpu] = "GPUS_PER_WORKER (of GPU_RESOURCE)"
	}
	if r := s.RDMA; r != nil {
		p.RDMAResource = corev1.ResourceName(r.Resource)
		// One limit a resource: the RDMA count would replace the other.
		if owner, taken := limitOwners[p.RDMAResource]; taken {
			errs = append(errs, field.Invalid(spec.Child("rdma", "resource"), r.Resource,
				fmt.Sprintf("is the resource whose limit %s sets; accepted: the RDMA devices' own resource (e.g. rdma/rdma_shared_device_a)", owner)))
		} else if p.RDMAResource == gpu {
			// Without GPUs the count would ask for GPUs where RDMA devices were meant.
			errs = append(errs, field.Invalid(spec.Child("rdma", "resource"), r.Resource,
				fmt.Sprintf("is the GPUs' resource (GPU_RESOURCE, by default %s): its count, spec.rdma.perWorker, would request GPUs, not RDMA devices; accepted: the RDMA devices' own resource (e.g. rdma/rdma_shared_device_a), and GPUS_PER_WORKER for GPUs", GPUResource)))
		}
		p.Limits[p.RDMAResource] = *resource.NewQuantity(int64(ptr.Deref(r.PerWorker, 1)), resource.DecimalSI)
	}
	if set.UserName == "root" && p.RunAsUser != nil && *p.RunAsUser != 0 {
		uid := "spec.security.runAsUser"
		if set.UserID != nil {
			uid = "USER_ID"
		}
		errs = append(errs, field.Invalid(envKey("USER_NAME"), set.UserName, fmt.Sprintf(
			"names the root user, but %s is %d: the job runs as that user, whose home is not /root; accepted: the name of user %d in the image (its home is /home/NAME), or %s=0", uid, *p.RunAsUser, *p.RunAsUser, uid)))
	}
	p.Volumes, p.Mounts, errs = volumes(x, s.Volumes, set, file, errs)
	errs = append(errs, p.memoryVolumesAboveLimit(s.Volumes, set, envKey)...)
	// Kueue reads the queue from the job's labels: QUEUE beside another queue-name label has no silent winner.
	if l := p.Labels[api.QueueLabel]; l != "" && set.Queue != "" && l != set.Queue {
		errs = append(errs, field.Invalid(envKey("QUEUE"), set.Queue, fmt.Sprintf("contradicts the label %s: %s of the job spec's metadata.labels; accepted: one of them", api.QueueLabel, l)))
	}
	for label, value := range map[string]string{api.QueueLabel: set.Queue, api.PriorityClassLabel: s.WorkloadPriorityClass} {
		if value != "" {
			p.Labels = merged(p.Labels, map[string]string{label: value})
		}
	}
	warnings = append(warnings, p.place(set, envKey)...)
	for i, v := range s.Volumes {
		if why := p.OperatorVolumeName(v.Name); why != "" {
			errs = append(errs, field.Invalid(spec.Child("volumes").Index(i).Child("name"), v.Name, why))
		}
	}
	for _, m := range p.Mounts {
		for _, why := range p.OperatorMountPath(m.MountPath) {
			errs = append(errs, field.Invalid(volumeField(m.Name, s.Volumes, envKey("NFS_MOUNT_PATH"), "mountPath"), m.MountPath, why))
		}
	}
	return p, warnings, append(append(errs, x.errs...), p.CheckName()...)
}

// OperatorVolume is a volume an operator adds to the pods, Name mounted at Path ("": the runtime decides);
// Owner says what it mounts there.
type OperatorVolume struct{ Name, Path, Owner string }

// OperatorVolumeName says why name is the operator's own volume name, "" if free.
func (p *Plan) OperatorVolumeName(name string) string {
	for _, r := range p.operatorVolumes() {
		if name == r.Name {
			return fmt.Sprintf("is the volume where %s, which the operator adds to the pods itself; accepted: another volume name", r.Owner)
		}
	}
	return ""
}

// OperatorMountPath says how a mount at mountPath clashes with each of the operator's own mounts it meets.
func (p *Plan) OperatorMountPath(mountPath string) []string {
	var clashes []string
	for _, r := range p.operatorVolumes() {
		how := ""
		switch {
		case r.Path == "":
			continue
		case mountPath == r.Path:
			how = "is " + r.Path
		case within(r.Path, mountPath):
			how = "hides " + r.Path
		case within(mountPath, r.Path):
			how = "lies inside " + r.Path
		default:
			continue
		}
		clashes = append(clashes, fmt.Sprintf("%s, where %s; accepted: a mount path neither at, inside nor above %s", how, r.Owner, r.Path))
	}
	return clashes
}

// Root reports whether the containers run as root: uid 0, or none (the image's user, root in most training images).
func (p *Plan) Root() bool { return p.RunAsUser == nil || *p.RunAsUser == 0 }

// memoryVolumesAboveLimit refuses a memory-backed emptyDir larger than the memory limit, which the kubelet
// caps it at and its contents count against.
func (p *Plan) memoryVolumesAboveLimit(specVols []api.Volume, set env.Settings, envKey func(string) *field.Path) field.ErrorList {
	limit, ok := p.Limits[corev1.ResourceMemory]
	if !ok {
		return nil
	}
	owner := "spec.resources.limits.memory: " + limit.String()
	if set.Memory != nil {
		owner = "MEMORY=" + limit.String()
	}
	var errs field.ErrorList
	for _, v := range p.Volumes {
		if v.EmptyDir == nil || v.EmptyDir.Medium != corev1.StorageMediumMemory || v.EmptyDir.SizeLimit == nil || v.EmptyDir.SizeLimit.Cmp(limit) <= 0 {
			continue
		}
		errs = append(errs, field.Invalid(volumeField(v.Name, specVols, envKey("SHM_SIZE"), "emptyDir", "sizeLimit"), v.EmptyDir.SizeLimit.String(), fmt.Sprintf(
			"is above the memory limit %s: a memory-backed volume counts against the container's memory, and the kubelet sizes it at most the pod's memory limit, so the pod would get %s and a program filling it would be OOM-killed; accepted: a size below the memory limit, leaving the program room (e.g. MEMORY=16Gi with SHM_SIZE=4Gi), or the memory limit raised", owner, limit.String())))
	}
	return errs
}

func volumes(x *expander, specVols []api.Volume, set env.Settings, file *env.File, errs field.ErrorList) ([]corev1.Volume, []corev1.VolumeMount, field.ErrorList) {
	var vols []corev1.Volume
	var mounts []corev1.VolumeMount
	mountAt := map[string]string{}
	addMount := func(p *field.Path, m corev1.VolumeMount) {
		if other, taken := mountAt[m.MountPath]; taken {
			msg := fmt.Sprintf("is also the mount path of volume %q", other)
			if other == api.ShmVolumeName {
				msg += ", the memory-backed /dev/shm of SHM_SIZE; accepted: this volume or SHM_SIZE, not both"
			}
			errs = append(errs, field.Invalid(p, m.MountPath, msg))
		}
		mountAt[m.MountPath] = m.Name
		mounts = append(mounts, m)
	}
	if set.NFSServer != "" && set.NFSPath != "" {
		key := field.NewPath(file.Source).Key("NFS_MOUNT_PATH")
		if set.NFSMountPath == "" {
			errs = append(errs, field.Required(key, "where the NFS share NFS_SERVER:NFS_PATH is mounted in the containers, e.g. /workspace"))
		} else {
			vols = append(vols, corev1.Volume{Name: api.NFSVolumeName, VolumeSource: corev1.VolumeSource{
				NFS: &corev1.NFSVolumeSource{Server: set.NFSServer, Path: set.NFSPath}}})
			addMount(key, corev1.VolumeMount{Name: api.NFSVolumeName, MountPath: path.Clean(set.NFSMountPath)})
		}
	}
	if set.ShmSize != nil {
		// DataLoader workers and NCCL outgrow the runtime's 64 MiB.
		vols = append(vols, corev1.Volume{Name: api.ShmVolumeName, VolumeSource: corev1.VolumeSource{
			EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: set.ShmSize}}})
		addMount(field.NewPath(file.Source).Key("SHM_SIZE"), corev1.VolumeMount{Name: api.ShmVolumeName, MountPath: api.ShmPath})
	}
	for i, v := range specVols {
		p := field.NewPath("spec", "volumes").Index(i)
		if set.ShmSize != nil && v.Name == api.ShmVolumeName {
			errs = append(errs, field.Invalid(p.Child("name"), v.Name, "is the name of SHM_SIZE's /dev/shm volume; accepted: another name, or SHM_SIZE alone"))
		}
		vol := corev1.Volume{Name: v.Name}
		switch {
		case v.NFS != nil:
			server := cmp.Or(x.str(p.Child("nfs", "server"), v.NFS.Server), set.NFSServer)
			if server == "" {
				errs = append(errs, field.Required(p.Child("nfs", "server"), "an NFS server: set it here or NFS_SERVER in "+file.Source))
			} else if wrong, ok := env.CheckNFSServer(server); !ok {
				errs = append(errs, field.Invalid(p.Child("nfs", "server"), server, strings.TrimPrefix(wrong+"; accepted: "+env.NFSServerAccepted, "; ")))
			}
			nfsPath, _ := x.path(p.Child("nfs", "path"), v.NFS.Path)
			vol.NFS = &corev1.NFSVolumeSource{Server: server, Path: nfsPath, ReadOnly: v.ReadOnly}
		case v.PVC != nil:
			vol.PersistentVolumeClaim = &corev1.PersistentVolumeClaimVolumeSource{ClaimName: v.PVC.ClaimName, ReadOnly: v.ReadOnly}
		case v.HostPath != nil:
			hp, _ := x.path(p.Child("hostPath", "path"), v.HostPath.Path)
			vol.HostPath = &corev1.HostPathVolumeSource{Path: hp, Type: v.HostPath.Type}
		case v.EmptyDir != nil:
			vol.EmptyDir = &corev1.EmptyDirVolumeSource{Medium: v.EmptyDir.Medium, SizeLimit: v.EmptyDir.SizeLimit}
		}
		vols = append(vols, vol)
		subPath := x.str(p.Child("subPath"), v.SubPath)
		if path.IsAbs(subPath) || slices.Contains(strings.Split(subPath, "/"), "..") {
			errs = append(errs, field.Invalid(p.Child("subPath"), subPath, `accepted: a relative path inside the volume, without ".."`))
		}
		// A mount path that did not expand is reported once, not again as a clash.
		if mountPath, ok := x.path(p.Child("mountPath"), v.MountPath); ok {
			addMount(p.Child("mountPath"), corev1.VolumeMount{Name: v.Name, MountPath: mountPath, ReadOnly: v.ReadOnly, SubPath: subPath})
		}
	}
	return vols, mounts, errs
}

// volumeField is the field at path of volume name's spec.volumes item, else orKey, the mlops.env key that made it.
func volumeField(name string, specVols []api.Volume, orKey *field.Path, path ...string) *field.Path {
	if i := slices.IndexFunc(specVols, func(v api.Volume) bool { return v.Name == name }); i >= 0 {
		return field.NewPath("spec", "volumes").Index(i).Child(path[0], path[1:]...)
	}
	return orKey
}

// within tells whether child is parent or lies below it.
func within(child, parent string) bool {
	return child == parent || parent == "/" || strings.HasPrefix(child, parent+"/")
}

// twoHomes refuses each setting given both in the job spec and in mlops.env: the loser would be silently unused.
func twoHomes(s *api.MLOpsJobSpec, set env.Settings, source string, values map[string]string) field.ErrorList {
	spec, limits := field.NewPath("spec"), s.Resources.Limits
	var errs field.ErrorList
	for _, h := range []struct {
		key      string
		path     *field.Path
		fromSpec any
		specSet  bool
		envIsSet bool
	}{
		{"WORKERS", spec.Child("workers"), ptr.Deref(s.Workers, 0), s.Workers != nil, set.Workers != nil},
		{"GPUS_PER_WORKER", spec.Child("gpusPerWorker"), ptr.Deref(s.GPUsPerWorker, 0), s.GPUsPerWorker != nil, set.GPUsPerWorker != nil},
		{"SLOTS_PER_WORKER", spec.Child("slotsPerWorker"), ptr.Deref(s.SlotsPerWorker, 0), s.SlotsPerWorker != nil, set.SlotsPerWorker != nil},
		{"CPU", spec.Child("resources", "limits").Key("cpu"), limits.Cpu().String(), quantity(limits, corev1.ResourceCPU) != nil, set.CPU != nil},
		{"MEMORY", spec.Child("resources", "limits").Key("memory"), limits.Memory().String(), quantity(limits, corev1.ResourceMemory) != nil, set.Memory != nil},
		{"USER_ID", spec.Child("security", "runAsUser"), ptr.Deref(s.Security.RunAsUser, 0), s.Security.RunAsUser != nil, set.UserID != nil},
		{"GROUP_ID", spec.Child("security", "runAsGroup"), ptr.Deref(s.Security.RunAsGroup, 0), s.Security.RunAsGroup != nil, set.GroupID != nil},
		{"FS_GROUP", spec.Child("security", "fsGroup"), ptr.Deref(s.Security.FSGroup, 0), s.Security.FSGroup != nil, set.FSGroup != nil},
		{"MIN_WORKERS", spec.Child("elastic", "minWorkers"), ptr.Deref(s.Elastic.MinWorkers, 0), s.Elastic.MinWorkers != nil, set.MinWorkers != nil},
		{"MAX_WORKERS", spec.Child("elastic", "maxWorkers"), ptr.Deref(s.Elastic.MaxWorkers, 0), s.Elastic.MaxWorkers != nil, set.MaxWorkers != nil},
		{"RDZV_ENDPOINT", spec.Child("elastic", "rendezvousEndpoint"), s.Elastic.RendezvousEndpoint, s.Elastic.RendezvousEndpoint != "", set.RendezvousEndpoint != ""},
	} {
		if h.specSet && h.envIsSet {
			errs = append(errs, field.Invalid(h.path, h.fromSpec, fmt.Sprintf(
				"is set in %s too (%s=%s), and one of the two would go unused; accepted: %s in %s or %s, not both",
				source, h.key, values[h.key], h.key, source, h.path)))
		}
	}
	return errs
}

// unlikelyQuantities warns of spec quantities no training job means, as for mlops.env's: memory: "16", cpu: 16Gi.
func unlikelyQuantities(s *api.MLOpsJobSpec, spec *field.Path) []Warning {
	var warnings []Warning
	check := func(at *field.Path, name string, q *resource.Quantity, unlikely func(resource.Quantity, string, func(string) string) string) {
		if q == nil {
			return
		}
		// The YAML's text is gone: the value was reprinted in canonical form (1000 as 1k).
		if why := unlikely(*q, written(*q), func(meant string) string { return name + ": " + meant }); why != "" {
			warnings = append(warnings, Warning{Field: at, Message: why})
		}
	}
	for _, r := range []struct {
		at  *field.Path
		res *corev1.ResourceRequirements
	}{{spec.Child("resources"), &s.Resources}, {spec.Child("launcherResources"), s.LauncherResources}} {
		if r.res == nil {
			continue
		}
		for _, l := range []struct {
			name string
			list corev1.ResourceList
		}{{"limits", r.res.Limits}, {"requests", r.res.Requests}} {
			check(r.at.Child(l.name).Key("cpu"), "cpu", quantity(l.list, corev1.ResourceCPU), env.UnlikelyCPU)
			check(r.at.Child(l.name).Key("memory"), "memory", quantity(l.list, corev1.ResourceMemory), env.UnlikelyMemory)
		}
	}
	for i, v := range s.Volumes {
		if v.EmptyDir != nil {
			check(spec.Child("volumes").Index(i).Child("emptyDir", "sizeLimit"), "sizeLimit", v.EmptyDir.SizeLimit, env.UnlikelyMemory)
		}
	}
	return warnings
}

// written is q as a spec may have written it: 1k, reprinted by the parser from 1000, in full.
func written(q resource.Quantity) string {
	s := q.String()
	if q.Format == resource.DecimalSI && strings.ContainsAny(s[len(s)-1:], "kMGTPE") {
		return strconv.FormatInt(q.Value(), 10)
	}
	return s
}

// quantity is l's quantity of name, nil when l has none.
func quantity(l corev1.ResourceList, name corev1.ResourceName) *resource.Quantity {
	if q, ok := l[name]; ok {
		return &q
	}
	return nil
}

// imageReference is the distribution reference grammar, [host[:port]/]path[:tag][@digest]. isImageReference
// checks the lengths: counted repetitions ({0,127}) would compile to thousands of instructions at every start.
var imageReference = regexp.MustCompile(`^(?:(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*(?::[0-9]+)?/)?[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*(?::([A-Za-z0-9_][A-Za-z0-9_.-]*))?(?:@(sha256|sha512):([a-f0-9]+))?$`)

// digestLength is the hex length of each digest container runtimes accept.
var digestLength = map[string]int{"sha256": 64, "sha512": 128}

// isImageReference: ref matches the grammar, with a tag of at most 128 characters and a digest in full.
func isImageReference(ref string) bool {
	m := imageReference.FindStringSubmatch(ref)
	if m == nil {
		return false
	}
	tag, algorithm, hex := m[1], m[2], m[3]
	return len(tag) <= 128 && (algorithm == "" || len(hex) == digestLength[algorithm])
}

func checkImage(ref string) string {
	if len(ref) <= 255 && isImageReference(ref) {
		return ""
	}
	const accepted = "accepted: an image reference [registry[:port]/]repository[:tag][@digest] with a lowercase repository, e.g. docker.io/library/python:3.12"
	repoAndTag, digest, hasDigest := strings.Cut(ref, "@")
	repo := repoAndTag
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	if _, path, found := strings.Cut(repo, "/"); found {
		repo = path
	}
	switch {
	case strings.IndexFunc(ref, unicode.IsSpace) >= 0:
		return "contains whitespace; " + accepted
	case hasDigest && isImageReference(repoAndTag):
		return fmt.Sprintf("has the digest %q, which container runtimes refuse; accepted: @sha256: and 64 lowercase hex digits, or @sha512: and 128", digest)
	case strings.ToLower(repo) != repo:
		return "the repository has uppercase letters; " + accepted
	case len(ref) > 255:
		return "is longer than 255 characters; " + accepted
	}
	return accepted
}

// CheckName applies the mpi-operator's rule that every pod name is a DNS-1035 label.
func (p *Plan) CheckName() field.ErrorList {
	names := p.Facts().PodNames(jobkind.Shape{Name: p.Name, Workers: p.Workers, MaxWorkers: p.Elastic.MaxWorkers, ReplicatedJobs: p.Trainer.ReplicatedJobs})
	var errs field.ErrorList
	for _, n := range names {
		for _, msg := range validation.IsDNS1035Label(n) {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), p.Name, fmt.Sprintf("pod name %s: %s", n, msg)))
		}
	}
	return errs
}

// NamesEnv: name is the env ConfigMap's, or an earlier render's (without its hash, or with another): mlops-fn's.
func (p *Plan) NamesEnv(name string) bool {
	if name == p.ConfigMapName {
		return true
	}
	rest, ok := strings.CutPrefix(name, p.HashedFrom)
	return p.HashedFrom != "" && ok && (rest == "" || len(rest) == 11 && rest[0] == '-' && strings.Trim(rest[1:], "0123456789abcdefghijklmnopqrstuvwxyz") == "")
}

// place settles Placement from mlops.env's topology key; only Kueue reads it, so a job with no queue is warned.
func (p *Plan) place(set env.Settings, envKey func(string) *field.Path) []Warning {
	if set.Topology == "" {
		return nil
	}
	key, annotation := "TOPOLOGY_REQUIRED", api.RequiredTopologyAnnotation
	if set.TopologyPreferred {
		key, annotation = "TOPOLOGY_PREFERRED", api.PreferredTopologyAnnotation
	}
	p.Placement = map[string]string{annotation: set.Topology}
	if p.Labels[api.QueueLabel] == "" {
		return []Warning{{Field: envKey(key), Message: fmt.Sprintf(
			"is read by Kueue alone, and the job has no queue: the scheduler places its pods anywhere; set QUEUE (or the label %s) for them to go to one domain of %s", api.QueueLabel, set.Topology)}}
	}
	return nil
}

// PodPlacement is the annotations of the pod templates of role: the topology level, and the kind's group.
func (p *Plan) PodPlacement(role jobkind.Role) map[string]string {
	if p.Placement == nil {
		return nil
	}
	a := maps.Clone(p.Placement)
	if g, ok := p.kind.(Grouper); ok {
		if name := g.Group(p, role); name != "" {
			a[api.PodSetGroupAnnotation] = name
		}
	}
	return a
}

// reference is ${KEY} or ${KEY:-default}, or the same escaped by a second $ for a shell: $${HOSTNAME}.
var reference = regexp.MustCompile(`\$?\$\{([^}]*)\}`)

var keyName = regexp.MustCompile(`^[-._a-zA-Z][-._a-zA-Z0-9]*$`)

// expander substitutes ${KEY} with mlops.env values and collects the references to keys the file lacks.
type expander struct {
	values map[string]string
	source string
	errs   field.ErrorList
}

// unclosed is a ${ that no } closes, or the same escaped.
var unclosed = regexp.MustCompile(`\$?\$\{[^}]*$`)

func (x *expander) str(p *field.Path, s string) string {
	if at := unclosed.FindStringIndex(s); at != nil {
		text := s[at[0]:]
		if strings.HasPrefix(text, "$$") {
			return x.str(p, s[:at[0]]) + text[1:]
		}
		x.errs = append(x.errs, field.Invalid(p, s, fmt.Sprintf("%s has no closing }; accepted: ${KEY} or ${KEY:-default} for a key of %s, or $%s for the text %s", text, x.source, text, text)))
		return s
	}
	return reference.ReplaceAllStringFunc(s, func(ref string) string {
		if strings.HasPrefix(ref, "$$") {
			return ref[1:]
		}
		inner := ref[2 : len(ref)-1]
		key, fallback, hasDefault := strings.Cut(inner, ":-")
		if !keyName.MatchString(key) {
			msg := fmt.Sprintf("%s is not a reference mlops-fn expands; accepted: ${KEY} or ${KEY:-default} for a key of %s", ref, x.source)
			if key != "" {
				msg += fmt.Sprintf(", or $%s for the text %s (a shell expands it at run time)", ref, ref)
			}
			x.errs = append(x.errs, field.Invalid(p, s, msg))
			return ref
		}
		v, ok := x.values[key]
		switch {
		case hasDefault && !ok && !env.IsKnownKey(key):
			// Most likely a variable of the container's shell (${LOCAL_RANK:-0}): a default put in now would
			// be every rank's value.
			x.errs = append(x.errs, field.Invalid(p, s, fmt.Sprintf("references %s, but %s is neither in %s nor a key mlops-fn knows, so mlops-fn would write %q in now, for every pod; accepted: $%s for the shell to expand at run time, or %s in %s", ref, key, x.source, fallback, ref, key, x.source)))
			return ref
		case hasDefault && (!ok || v == ""):
			return fallback
		case !ok:
			msg := fmt.Sprintf("references ${%s}, which %s does not define", key, x.source)
			if near := env.Closest(key, slices.Collect(maps.Keys(x.values))); near != "" {
				msg += fmt.Sprintf(": did you mean ${%s}?", near)
			} else {
				msg += fmt.Sprintf("; accepted: a key of %s, or $${%s} for the text ${%s} (a shell expands it at run time)", x.source, key, key)
			}
			x.errs = append(x.errs, field.Invalid(p, s, msg))
		}
		return v
	})
}

func (x *expander) strs(p *field.Path, in []string) []string {
	if in == nil {
		return nil
	}
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = x.str(p.Index(i), s)
	}
	return out
}

// path expands s and checks it is an absolute path, which it returns cleaned; ok is false on an error.
func (x *expander) path(p *field.Path, s string) (string, bool) {
	before := len(x.errs)
	v := x.str(p, s)
	if len(x.errs) > before {
		return v, false
	}
	if msg := api.CheckAbsPath(v); msg != "" {
		x.errs = append(x.errs, field.Invalid(p, v, msg))
		return v, false
	}
	return path.Clean(v), true
}
