// SPDX-License-Identifier: Apache-2.0

// Package v1alpha1 is the job spec mlops-fn takes as its function config.
package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
)

const (
	Group      = "mlops-fn.dev"
	Version    = "v1alpha1"
	APIVersion = Group + "/" + Version
	Kind       = "MLOpsJob"
)

// MPIImplementation mirrors the MPIJob field of the same name.
type MPIImplementation string

const (
	OpenMPI MPIImplementation = "OpenMPI"
	Intel   MPIImplementation = "Intel"
	MPICH   MPIImplementation = "MPICH"
)

// MLOpsJob is the job spec: the shape of the workload. Site- and user-specific values live in mlops.env; a
// setting both can hold is set in one of them (render refuses both).
type MLOpsJob struct {
	// APIVersion is mlops-fn.dev/v1alpha1.
	APIVersion string `json:"apiVersion"`
	// Kind is MLOpsJob.
	Kind     string     `json:"kind"`
	Metadata ObjectMeta `json:"metadata"`
	// Spec is the workload's shape (docs/job-spec.md).
	Spec MLOpsJobSpec `json:"spec"`
}

// ObjectMeta is the part of metadata the job spec reads.
type ObjectMeta struct {
	// Name names the job (and, with suffixes, its pods).
	Name string `json:"name"`
	// Namespace, Labels and Annotations are copied to the generated objects.
	Namespace   string            `json:"namespace,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// MLOpsJobSpec is the workload's shape: what the job runs and how.
type MLOpsJobSpec struct {
	// JobKind is the kind the job becomes (pkg/jobkind): MPIJob (multi-node, the default), Pod (single-node),
	// PyTorchJob (elastic) or TrainJob (Kubeflow Trainer).
	JobKind jobkind.JobKind `json:"jobKind,omitempty"`
	// EnvFile says where mlops.env comes from.
	EnvFile EnvFile `json:"envFile,omitempty"`
	// Target selects the existing jobs of the spec's jobKind to patch. Default: the items named like the job.
	Target *Target `json:"target,omitempty"`

	// ContainerName names the training container. Default: the job's name.
	ContainerName string `json:"containerName,omitempty"`
	// Image may reference mlops.env keys as ${KEY}. Optional with a target, which keeps its own.
	Image string `json:"image"`
	// ImagePullPolicy of the training containers, as in a container.
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty"`
	// ImagePullSecrets are a pod spec's: [{name: regcred}].
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`
	// Command and Args are the training program. Multi-node: what mpirun starts on every slot.
	Command []string `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	// Script is a path in the image run as the training program (the quickstarts' MODEL_SCRIPT); excludes Command.
	Script string `json:"script,omitempty"`
	// WorkingDir of the training containers, an absolute path; may reference mlops.env keys as ${KEY}.
	WorkingDir string `json:"workingDir,omitempty"`
	// Env adds variables to the training containers, after the ones from mlops.env.
	Env []corev1.EnvVar `json:"env,omitempty"`
	// ServiceAccountName the job's pods run as.
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
	// RestartPolicy of the pods, as in a pod spec: Never (default; OnFailure in an elastic PyTorchJob) or
	// OnFailure.
	RestartPolicy corev1.RestartPolicy `json:"restartPolicy,omitempty"`

	// Workers, GPUsPerWorker and SlotsPerWorker, or WORKERS, GPUS_PER_WORKER, SLOTS_PER_WORKER (not both).
	Workers        *int32 `json:"workers,omitempty"`
	GPUsPerWorker  *int32 `json:"gpusPerWorker,omitempty"`
	SlotsPerWorker *int32 `json:"slotsPerWorker,omitempty"`
	// Resources are each worker's (and the single-node Pod's) training container's, as in a container: limits
	// and requests of cpu and memory. CPU and MEMORY in mlops.env set the limits instead (not both). GPUs are
	// gpusPerWorker's, RDMA devices rdma's.
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`
	// LauncherResources are the launcher's (it only runs mpirun), shaped alike. Default:
	// DefaultLauncherResources, unless a target's launcher has resources of its own.
	LauncherResources *corev1.ResourceRequirements `json:"launcherResources,omitempty"`

	// WorkloadPriorityClass is the Kueue WorkloadPriorityClass of the job (its kueue.x-k8s.io/priority-class
	// label): the order Kueue admits in.
	WorkloadPriorityClass string `json:"workloadPriorityClass,omitempty"`

	// HostNetwork runs the pods in the node's network namespace (with dnsPolicy ClusterFirstWithHostNet), as
	// some RDMA and RoCE fabrics need: Pod Security level privileged.
	HostNetwork bool `json:"hostNetwork,omitempty"`
	// RDMA gives each training container RDMA devices of a device plugin and the IPC_LOCK capability they
	// need to pin memory: Pod Security level privileged.
	RDMA *RDMA `json:"rdma,omitempty"`

	// NodeSelector, Tolerations and PriorityClassName are the pods', as in a pod spec.
	NodeSelector      map[string]string   `json:"nodeSelector,omitempty"`
	Tolerations       []corev1.Toleration `json:"tolerations,omitempty"`
	PriorityClassName string              `json:"priorityClassName,omitempty"`

	MPI       MPI       `json:"mpi,omitempty"`
	Elastic   Elastic   `json:"elastic,omitempty"`
	Trainer   Trainer   `json:"trainer,omitempty"`
	Volumes   []Volume  `json:"volumes,omitempty"`
	RunPolicy RunPolicy `json:"runPolicy,omitempty"`
	Security  Security  `json:"security,omitempty"`
}

// EnvFile locates mlops.env: one of Path, Inline and LocalConfigMap, or a ConfigMap item named ConfigMapName,
// which beside Path's file must hold its values (docs/mlops-env.md, "One source").
type EnvFile struct {
	// Path is relative to the job spec's file (standalone) or the working directory (exec). Default mlops.env.
	Path string `json:"path,omitempty"`
	// ConfigMapName is the ConfigMap that carries the values into the containers. Default NAME-KIND-env (resnet50-mpijob-env): one per job.
	ConfigMapName string `json:"configMapName,omitempty"`
	// Inline holds the file's text, for runners that cannot read files.
	Inline string `json:"inline,omitempty"`
	// LocalConfigMap names a ConfigMap among the inputs, annotated config.kubernetes.io/local-config: "true"
	// (never applied), whose data is mlops.env: a kpt package's form. Excludes Path and Inline.
	LocalConfigMap *corev1.LocalObjectReference `json:"localConfigMap,omitempty"`
	// ExtraKeys are keys of the user's own in mlops.env that are one edit away from a key mlops-fn knows
	// (GPU_PER_WORKER): without them listed here such a key is an error, as it most likely misspells the
	// known one.
	ExtraKeys []string `json:"extraKeys,omitempty"`
}

// Target selects items by name and/or labels; both must match when both are set.
type Target struct {
	// Name the items have.
	Name string `json:"name,omitempty"`
	// Labels the items have, every one.
	Labels map[string]string `json:"labels,omitempty"`
}

// MPI shapes an MPIJob's mpirun, launcher and workers (jobKind MPIJob).
type MPI struct {
	// Implementation is OpenMPI (default), Intel or MPICH.
	Implementation MPIImplementation `json:"implementation,omitempty"`
	// Args go to mpirun before the program. Default: the Horovod flags of the mpi-operator examples.
	Args []string `json:"args,omitempty"`
	// ForwardEnv lists variables forwarded to every rank (OpenMPI -x, Intel/MPICH -genv/-genvlist).
	ForwardEnv []string `json:"forwardEnv,omitempty"`
	// WorkerCommand starts the worker's sshd. Default: sshd in the foreground, with the user's config when not root.
	WorkerCommand []string `json:"workerCommand,omitempty"`
	// LauncherCreationPolicy is WaitForWorkersReady (default) or AtStartup.
	LauncherCreationPolicy string `json:"launcherCreationPolicy,omitempty"`
	// RunLauncherAsWorker makes the launcher take a rank too.
	RunLauncherAsWorker bool `json:"runLauncherAsWorker,omitempty"`
}

// The launcher creation policies of mpi-operator v0.8.
const (
	AtStartup = "AtStartup"
	// WaitForWorkersReady: the launcher is created once every worker is ready, which a gang's minimum must
	// leave out.
	WaitForWorkersReady = "WaitForWorkersReady"
)

// Elastic shapes an elastic PyTorchJob (jobKind PyTorchJob); MIN_WORKERS, MAX_WORKERS and RDZV_ENDPOINT in
// mlops.env set it instead (not both).
type Elastic struct {
	// MinWorkers and MaxWorkers bound the workers; WORKERS is where the job starts. Default: WORKERS.
	MinWorkers *int32 `json:"minWorkers,omitempty"`
	MaxWorkers *int32 `json:"maxWorkers,omitempty"`
	// RendezvousBackend is c10d (default: the rendezvous runs on worker 0), etcd or etcd-v2.
	RendezvousBackend string `json:"rendezvousBackend,omitempty"`
	// RendezvousEndpoint is the etcd server, host:port; required with etcd.
	RendezvousEndpoint string `json:"rendezvousEndpoint,omitempty"`
	// RunID names the run in an etcd rendezvous. Default: NAMESPACE-NAME (NAME without a namespace): two live
	// jobs cannot share it; set it for parallel runs of one spec in namespaces the spec does not name.
	RunID string `json:"runId,omitempty"`
	// MaxRestarts is how often torchrun restarts the workers' group.
	MaxRestarts *int32 `json:"maxRestarts,omitempty"`
	// ProcsPerWorker is torchrun's nproc_per_node. Default: GPUS_PER_WORKER, else 1.
	ProcsPerWorker *int32 `json:"procsPerWorker,omitempty"`
}

// RDMA names the devices a cluster's RDMA device plugin serves.
type RDMA struct {
	// Resource is the plugin's extended resource, e.g. rdma/rdma_shared_device_a.
	Resource string `json:"resource"`
	// PerWorker is how many each training container gets. Default 1.
	PerWorker *int32 `json:"perWorker,omitempty"`
}

// Trainer shapes a Kubeflow Trainer v2 TrainJob (jobKind TrainJob): the runtime it runs on and which of the
// runtime's replicated jobs get the site settings.
type Trainer struct {
	// Runtime names the training runtime. Default: a target's own, else torch-distributed.
	Runtime string `json:"runtime,omitempty"`
	// RuntimeKind is ClusterTrainingRuntime (default) or TrainingRuntime (in the job's namespace).
	RuntimeKind string `json:"runtimeKind,omitempty"`
	// ReplicatedJobs of the runtime whose pods get the ids, volumes, nodeSelector, tolerations and pull
	// secrets: node (default), and launcher for an MPI runtime such as deepspeed-distributed.
	ReplicatedJobs []string `json:"replicatedJobs,omitempty"`
}

// Trainer runtime kinds and defaults (Kubeflow Trainer v2).
const (
	ClusterTrainingRuntime = "ClusterTrainingRuntime"
	TrainingRuntime        = "TrainingRuntime"
	DefaultTrainerRuntime  = "torch-distributed"
)

// Volume is a data volume mounted on every training container. NFS_SERVER/NFS_PATH add the shared "nfs"
// volume at NFS_MOUNT_PATH on their own.
type Volume struct {
	// Name of the volume, a DNS label other than nfs.
	Name string `json:"name"`
	// MountPath in the containers, an absolute path; may reference mlops.env keys as ${KEY}.
	MountPath string `json:"mountPath"`
	// ReadOnly mounts the volume read-only.
	ReadOnly bool `json:"readOnly,omitempty"`
	// SubPath mounts a path inside the volume, relative and without "..".
	SubPath string `json:"subPath,omitempty"`
	// Exactly one source.
	NFS      *NFSSource `json:"nfs,omitempty"`
	PVC      *PVCSource `json:"pvc,omitempty"`
	HostPath *HostPath  `json:"hostPath,omitempty"`
	EmptyDir *EmptyDir  `json:"emptyDir,omitempty"`
}

// NFSSource defaults its server to NFS_SERVER.
type NFSSource struct {
	// Server is the NFS server's host. Default NFS_SERVER.
	Server string `json:"server,omitempty"`
	// Path is the absolute path the server exports.
	Path string `json:"path"`
}

// PVCSource names a PersistentVolumeClaim in the job's namespace.
type PVCSource struct {
	// ClaimName is the PersistentVolumeClaim's name.
	ClaimName string `json:"claimName"`
}

// HostPath is a path on the node, as a pod's hostPath volume.
type HostPath struct {
	// Path on the node, absolute.
	Path string `json:"path"`
	// Type is what the path must be on the node, as a hostPath volume's: "" (no check), Directory, File, ...
	Type *corev1.HostPathType `json:"type,omitempty"`
}

// EmptyDir is a scratch volume of each pod, as a pod's emptyDir volume.
type EmptyDir struct {
	// Medium "Memory" makes a tmpfs, e.g. for /dev/shm.
	Medium corev1.StorageMedium `json:"medium,omitempty"`
	// SizeLimit bounds its size: a quantity greater than zero, such as 8Gi.
	SizeLimit *resource.Quantity `json:"sizeLimit,omitempty"`
}

// RunPolicy mirrors the operators' runPolicy; docs/job-spec.md's table says which of its fields each jobKind
// carries.
type RunPolicy struct {
	// CleanPodPolicy is None, Running (default) or All.
	CleanPodPolicy string `json:"cleanPodPolicy,omitempty"`
	// TTLSecondsAfterFinished before the operator deletes the finished job.
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
	// ActiveDeadlineSeconds the job may run before it is stopped.
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`
	// BackoffLimit is how often a failed job is retried.
	BackoffLimit *int32 `json:"backoffLimit,omitempty"`
	// SchedulingPolicy is the operators' gang scheduling (Volcano, scheduler-plugins): MPIJob and PyTorchJob
	// only.
	SchedulingPolicy *SchedulingPolicy `json:"schedulingPolicy,omitempty"`
}

// SchedulingPolicy mirrors the operators' runPolicy.schedulingPolicy: the pods start together or not at all,
// so a half-started job holds no GPUs.
type SchedulingPolicy struct {
	// MinAvailable pods to start together; default (the operators'): all of them.
	MinAvailable *int32 `json:"minAvailable,omitempty"`
	// Queue is the Volcano queue.
	Queue string `json:"queue,omitempty"`
	// PriorityClass of the pod group (Volcano).
	PriorityClass string `json:"priorityClass,omitempty"`
	// ScheduleTimeoutSeconds before the group gives up (scheduler-plugins).
	ScheduleTimeoutSeconds *int32 `json:"scheduleTimeoutSeconds,omitempty"`
}

// Security holds the identity defaults; or USER_ID, GROUP_ID and FS_GROUP (not both).
type Security struct {
	// RunAsUser, RunAsGroup and FSGroup are integers of the pod securityContext.
	RunAsUser  *int64 `json:"runAsUser,omitempty"`
	RunAsGroup *int64 `json:"runAsGroup,omitempty"`
	FSGroup    *int64 `json:"fsGroup,omitempty"`
	// Home is the non-root user's home, where the SSH keys are mounted. Default /home/$USER_NAME, else /home/mpiuser.
	Home string `json:"home,omitempty"`
	// Hardening adds allowPrivilegeEscalation=false, drops capabilities and sets seccomp RuntimeDefault. Default true.
	Hardening *bool `json:"hardening,omitempty"`
}
