// SPDX-License-Identifier: Apache-2.0

package v1alpha1_test

import (
	"slices"
	"testing"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/kinds"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func valid() *api.MLOpsJob {
	j := &api.MLOpsJob{
		APIVersion: api.APIVersion,
		Kind:       api.Kind,
		Metadata:   api.ObjectMeta{Name: "resnet50"},
		Spec:       api.MLOpsJobSpec{Image: "docker.io/library/python:3.12", Command: []string{"python", "train.py"}},
	}
	kinds.Default(j)
	return j
}

func TestDefault(t *testing.T) {
	j := &api.MLOpsJob{Metadata: api.ObjectMeta{Name: "bert"}}
	kinds.Default(j)
	on := true
	// No launcherResources: the renderer defaults them where the target's launcher has none.
	want := api.MLOpsJobSpec{
		JobKind:       jobkind.MPIJob,
		EnvFile:       api.EnvFile{Path: "mlops.env", ConfigMapName: "bert-mpijob-env"},
		ContainerName: "bert",
		MPI: api.MPI{
			Implementation:         api.OpenMPI,
			Args:                   api.DefaultMPIArgs,
			ForwardEnv:             api.DefaultForwardEnv,
			LauncherCreationPolicy: "WaitForWorkersReady",
		},
		RestartPolicy: "Never",
		RunPolicy:     api.RunPolicy{CleanPodPolicy: "Running"},
		Security:      api.Security{Hardening: &on},
	}
	if diff := cmp.Diff(want, j.Spec); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}

	// Defaults never overwrite what the user wrote.
	off := false
	j = &api.MLOpsJob{Metadata: api.ObjectMeta{Name: "bert"}, Spec: api.MLOpsJobSpec{
		JobKind: jobkind.Pod, ContainerName: "main", MPI: api.MPI{Implementation: api.Intel, Args: []string{}},
		Security: api.Security{Hardening: &off}, RunPolicy: api.RunPolicy{CleanPodPolicy: "All"},
	}}
	kinds.Default(j)
	if j.Spec.JobKind != jobkind.Pod || j.Spec.ContainerName != "main" || *j.Spec.Security.Hardening || j.Spec.RunPolicy.CleanPodPolicy != "All" {
		t.Errorf("a default replaced a user value: %+v", j.Spec)
	}
	if len(j.Spec.MPI.Args) != 0 {
		t.Errorf("an explicitly empty mpi.args was filled: %v", j.Spec.MPI.Args)
	}

	// An elastic job's workers finish on their own: the training-operator
	// marks it Succeeded at the first worker's end, and Running would delete
	// the others, rank 0 among them.
	elastic := &api.MLOpsJob{Metadata: api.ObjectMeta{Name: "bert"}, Spec: api.MLOpsJobSpec{JobKind: jobkind.PyTorchJob}}
	kinds.Default(elastic)
	if elastic.Spec.RunPolicy.CleanPodPolicy != "None" {
		t.Errorf("elastic cleanPodPolicy %q, want None", elastic.Spec.RunPolicy.CleanPodPolicy)
	}

	// api.Intel api.MPI and api.MPICH do not understand api.OpenMPI's flags: no default args for them.
	intel := &api.MLOpsJob{Metadata: api.ObjectMeta{Name: "bert"}, Spec: api.MLOpsJobSpec{MPI: api.MPI{Implementation: api.MPICH}}}
	kinds.Default(intel)
	if intel.Spec.MPI.Args != nil {
		t.Errorf("MPICH got OpenMPI's args: %v", intel.Spec.MPI.Args)
	}
}

func TestValidate(t *testing.T) {
	i32 := func(v int32) *int32 { return &v }
	i64 := func(v int64) *int64 { return &v }
	q := func(s string) *resource.Quantity { v := resource.MustParse(s); return &v }
	cases := []struct {
		name   string
		mutate func(*api.MLOpsJob)
		want   []string
	}{
		{"valid", func(*api.MLOpsJob) {}, nil},
		{"wrong kind", func(j *api.MLOpsJob) { j.Kind = "Job" },
			[]string{`kind: Invalid value: "Job": accepted: MLOpsJob`}},
		{"wrong apiVersion", func(j *api.MLOpsJob) { j.APIVersion = "mlops-fn.dev/v1" },
			[]string{`apiVersion: Invalid value: "mlops-fn.dev/v1": accepted: mlops-fn.dev/v1alpha1`}},
		{"relative literal mount path", func(j *api.MLOpsJob) {
			j.Spec.Volumes = []api.Volume{{Name: "out", MountPath: "output", EmptyDir: &api.EmptyDir{Medium: "Disk"}}}
		}, []string{
			`spec.volumes[0].mountPath: Invalid value: "output": accepted: an absolute path`,
			`spec.volumes[0].emptyDir.medium: Unsupported value: "Disk": supported values: "", "Memory"`,
		}},
		{"no name", func(j *api.MLOpsJob) { j.Metadata.Name = "" },
			[]string{"metadata.name: Required value: the job's name: a DNS label such as resnet50"}},
		{"name not a DNS label", func(j *api.MLOpsJob) { j.Metadata.Name = "ResNet_50" },
			[]string{`metadata.name: Invalid value: "ResNet_50": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`}},
		{"unknown jobKind", func(j *api.MLOpsJob) { j.Spec.JobKind = "multinode" },
			[]string{`spec.jobKind: Unsupported value: "multinode": supported values: "Pod", "MPIJob", "PyTorchJob", "TrainJob", "JobSet"`}},
		// A target brings them; generating without them is refused later (processor).
		{"no image: the target's", func(j *api.MLOpsJob) { j.Spec.Image = "" }, nil},
		{"script and command", func(j *api.MLOpsJob) { j.Spec.Script = "/train.sh" },
			[]string{"spec.script: Forbidden: set either script or command, not both"}},
		{"multi-node without a program: the target's", func(j *api.MLOpsJob) { j.Spec.Command = nil }, nil},
		{"single-node may use the image's entrypoint", func(j *api.MLOpsJob) {
			j.Spec = api.MLOpsJobSpec{JobKind: jobkind.Pod, Image: j.Spec.Image}
			kinds.Default(j)
		}, nil},
		{"counts out of range", func(j *api.MLOpsJob) {
			j.Spec.Workers, j.Spec.GPUsPerWorker, j.Spec.SlotsPerWorker = i32(0), i32(65), i32(2000)
		}, []string{
			"spec.workers: Invalid value: 0: accepted: 1 to 10000",
			"spec.gpusPerWorker: Invalid value: 65: accepted: 0 to 64",
			"spec.slotsPerWorker: Invalid value: 2000: accepted: 1 to 1024",
		}},
		{"zero cpu", func(j *api.MLOpsJob) { j.Spec.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: *q("0")} },
			[]string{`spec.resources.limits[cpu]: Invalid value: "0": accepted: a quantity greater than zero`}},
		{"resources a container may have, mlops-fn sets otherwise", func(j *api.MLOpsJob) {
			j.Spec.Resources = corev1.ResourceRequirements{
				Limits:   corev1.ResourceList{"nvidia.com/gpu": *q("1"), corev1.ResourceCPU: *q("2")},
				Requests: corev1.ResourceList{corev1.ResourceCPU: *q("3")},
				Claims:   []corev1.ResourceClaim{{Name: "gpu"}},
			}
		}, []string{
			"spec.resources.claims: Forbidden: mlops-fn sets no resource claims; accepted: limits and requests of cpu and memory",
			`spec.resources.limits[nvidia.com/gpu]: Unsupported value: "nvidia.com/gpu": supported values: "cpu", "memory (GPUs are spec.gpusPerWorker or GPUS_PER_WORKER, RDMA devices spec.rdma)"`,
			`spec.resources.requests[cpu]: Invalid value: "3": is above its limit 2, which the API server refuses; accepted: a request up to the limit`,
		}},
		{"ids out of range", func(j *api.MLOpsJob) { j.Spec.Security.RunAsUser, j.Spec.Security.FSGroup = i64(-1), i64(1<<31) },
			[]string{"spec.security.runAsUser: Invalid value: -1: accepted: 0 to 2147483647", "spec.security.fsGroup: Invalid value: 2147483648: accepted: 0 to 2147483647"}},
		{"relative home", func(j *api.MLOpsJob) { j.Spec.Security.Home = "home/me" },
			[]string{`spec.security.home: Invalid value: "home/me": accepted: an absolute path`}},
		{"traversal", func(j *api.MLOpsJob) {
			j.Spec.WorkingDir = "/work/../etc"
			j.Spec.Volumes = []api.Volume{{Name: "d", MountPath: "/d", SubPath: "../alice", HostPath: &api.HostPath{Path: "/data/../etc"}}}
		}, []string{
			`spec.workingDir: Invalid value: "/work/../etc": has a ".." element; accepted: an absolute path without ".."`,
			`spec.volumes[0].subPath: Invalid value: "../alice": accepted: a relative path inside the volume, without ".."`,
			`spec.volumes[0].hostPath.path: Invalid value: "/data/../etc": has a ".." element; accepted: an absolute path without ".."`,
		}},
		{"env value and valueFrom", func(j *api.MLOpsJob) {
			j.Spec.Env = []corev1.EnvVar{{Name: "A", Value: "x", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}
		}, []string{`spec.env[0].valueFrom: Invalid value: "A": accepted: value or valueFrom, not both`}},
		{"mpi args set the ranks", func(j *api.MLOpsJob) { j.Spec.MPI.Args = []string{"-np", "8"}; j.Spec.MPI.WorkerCommand = []string{} }, []string{
			`spec.mpi.args[0]: Invalid value: "-np": mlops-fn sets the number of ranks from workers × slots; accepted: the other mpirun flags`,
			`spec.mpi.workerCommand: Invalid value: "[]": an empty command leaves the workers without sshd; accepted: a command, or leave the field out for the default`,
		}},
		{"mpi args set the ranks after =", func(j *api.MLOpsJob) { j.Spec.MPI.Args = []string{"-n=8", "--c=2", "-N", "2"} }, []string{
			`spec.mpi.args[0]: Invalid value: "-n=8": mlops-fn sets the number of ranks from workers × slots; accepted: the other mpirun flags`,
			`spec.mpi.args[1]: Invalid value: "--c=2": mlops-fn sets the number of ranks from workers × slots; accepted: the other mpirun flags`,
		}},
		{"labels and annotations", func(j *api.MLOpsJob) {
			j.Metadata.Labels = map[string]string{"a b": "c"}
			j.Metadata.Annotations = map[string]string{"x/y/z": "v"}
		}, []string{
			`metadata.labels[a b]: Invalid value: "a b": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
			`metadata.annotations[x/y/z]: Invalid value: "x/y/z": a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
		}},
		{"unknown mpi", func(j *api.MLOpsJob) { j.Spec.MPI.Implementation = "MVAPICH" },
			[]string{`spec.mpi.implementation: Unsupported value: "MVAPICH": supported values: "OpenMPI", "Intel", "MPICH"`}},
		{"bad forwarded variable", func(j *api.MLOpsJob) { j.Spec.MPI.ForwardEnv = []string{"1X=2"} },
			[]string{`spec.mpi.forwardEnv[0]: Invalid value: "1X=2": a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')`}},
		{"cleanPodPolicy", func(j *api.MLOpsJob) { j.Spec.RunPolicy.CleanPodPolicy = "Always" },
			[]string{`spec.runPolicy.cleanPodPolicy: Unsupported value: "Always": supported values: "None", "Running", "All"`}},
		{"restartPolicy", func(j *api.MLOpsJob) { j.Spec.RestartPolicy = "Always" },
			[]string{`spec.restartPolicy: Unsupported value: "Always": supported values: "Never", "OnFailure"`}},
		{"volumes", func(j *api.MLOpsJob) {
			j.Spec.Volumes = []api.Volume{
				{Name: "data", MountPath: "/data", PVC: &api.PVCSource{ClaimName: "data"}, HostPath: &api.HostPath{Path: "/d"}},
				{Name: "data", MountPath: "/d2", EmptyDir: &api.EmptyDir{}},
				{Name: "nfs", EmptyDir: &api.EmptyDir{}},
			}
		}, []string{
			`spec.volumes[0]: Invalid value: "data": has 2 sources; accepted: exactly one of nfs, pvc, hostPath, emptyDir`,
			`spec.volumes[1].name: Duplicate value: "data"`,
			`spec.volumes[2].name: Invalid value: "nfs": reserved for the NFS share from NFS_SERVER and NFS_PATH`,
			"spec.volumes[2].mountPath: Required value: an absolute path in the container, e.g. ${DATASET_DIR}",
		}},
		{"toleration", func(j *api.MLOpsJob) {
			j.Spec.Tolerations = []corev1.Toleration{{Key: "gpu", Operator: "Exists", Value: "yes", Effect: "NoRun"}}
		}, []string{
			`spec.tolerations[0].effect: Unsupported value: "NoRun": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"`,
			`spec.tolerations[0].value: Invalid value: "yes": must be empty when operator is Exists`,
		}},
		{"node selector", func(j *api.MLOpsJob) { j.Spec.NodeSelector = map[string]string{"gpu": "a b"} },
			[]string{`spec.nodeSelector[gpu]: Invalid value: "a b": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`}},
		{"empty target", func(j *api.MLOpsJob) { j.Spec.Target = &api.Target{} },
			[]string{"spec.target: Required value: a name, labels, or both"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j := valid()
			c.mutate(j)
			var got []string
			for _, e := range kinds.Validate(j) {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestKindFields: a field a kind cannot carry is refused in that kind,
// never dropped; runPolicy.activeDeadlineSeconds every kind carries (a Pod's
// own field too), and a Pod its restart policy.
func TestKindFields(t *testing.T) {
	i32 := func(v int32) *int32 { return &v }
	i64 := func(v int64) *int64 { return &v }
	cpu := resource.MustParse("1")
	want := map[jobkind.JobKind][]string{
		jobkind.Pod: {"spec.workers", "spec.slotsPerWorker", "spec.launcherResources", "spec.security.home", "spec.mpi", "spec.elastic", "spec.trainer",
			"spec.runPolicy.cleanPodPolicy", "spec.runPolicy.ttlSecondsAfterFinished", "spec.runPolicy.backoffLimit", "spec.runPolicy.schedulingPolicy"},
		jobkind.MPIJob:     {"spec.elastic", "spec.trainer"},
		jobkind.PyTorchJob: {"spec.slotsPerWorker", "spec.launcherResources", "spec.security.home", "spec.mpi", "spec.trainer"},
		jobkind.TrainJob: {"spec.launcherResources", "spec.security.home", "spec.mpi", "spec.elastic", "spec.imagePullPolicy", "spec.workingDir", "spec.priorityClassName", "spec.hostNetwork", "spec.restartPolicy",
			"spec.runPolicy.cleanPodPolicy", "spec.runPolicy.ttlSecondsAfterFinished", "spec.runPolicy.backoffLimit", "spec.runPolicy.schedulingPolicy"},
	}
	for jobKind, forbidden := range want {
		t.Run(string(jobKind), func(t *testing.T) {
			j := &api.MLOpsJob{APIVersion: api.APIVersion, Kind: api.Kind, Metadata: api.ObjectMeta{Name: "bert"}, Spec: api.MLOpsJobSpec{
				JobKind: jobKind, Image: "x", Command: []string{"train"},
				ImagePullPolicy: corev1.PullAlways, WorkingDir: "/w", PriorityClassName: "high", HostNetwork: true,
				Workers: i32(2), SlotsPerWorker: i32(2), LauncherResources: &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: cpu}}, Security: api.Security{Home: "/home/me"},
				MPI: api.MPI{RunLauncherAsWorker: true}, Elastic: api.Elastic{MaxRestarts: i32(3)}, Trainer: api.Trainer{Runtime: "torch-distributed"},
				RestartPolicy: corev1.RestartPolicyOnFailure,
				RunPolicy: api.RunPolicy{CleanPodPolicy: "All", TTLSecondsAfterFinished: i32(60), ActiveDeadlineSeconds: i64(600), BackoffLimit: i32(1),
					SchedulingPolicy: &api.SchedulingPolicy{Queue: "q"}},
			}}
			kinds.Default(j)
			var got []string
			for _, e := range kinds.Validate(j) {
				if e.Type != field.ErrorTypeForbidden {
					t.Errorf("an error besides the refusals: %v", e)
				}
				got = append(got, e.Field)
			}
			if diff := cmp.Diff(forbidden, got); diff != "" {
				t.Errorf("refused fields (-want +got):\n%s", diff)
			}
		})
	}

	// Nothing of the jobKind's own defaults is refused.
	for _, jobKind := range []jobkind.JobKind{jobkind.Pod, jobkind.MPIJob, jobkind.PyTorchJob, jobkind.TrainJob} {
		j := &api.MLOpsJob{APIVersion: api.APIVersion, Kind: api.Kind, Metadata: api.ObjectMeta{Name: "bert"}, Spec: api.MLOpsJobSpec{JobKind: jobKind, Image: "x", Command: []string{"train"}}}
		kinds.Default(j)
		if errs := kinds.Validate(j); len(errs) > 0 {
			t.Errorf("jobKind %s refuses its own defaults: %v", jobKind, errs)
		}
	}

	j := &api.MLOpsJob{APIVersion: api.APIVersion, Kind: api.Kind, Metadata: api.ObjectMeta{Name: "bert"}, Spec: api.MLOpsJobSpec{
		JobKind: jobkind.Pod, LauncherResources: &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: cpu}}}}
	kinds.Default(j)
	wantMsg := "spec.launcherResources: Forbidden: jobKind Pod cannot carry it (the resources of an MPIJob's launcher, which runs mpirun; a TrainJob's MPI runtime sizes its own launcher); accepted: no spec.launcherResources, or jobKind MPIJob"
	if errs := kinds.Validate(j); len(errs) != 1 || errs[0].Error() != wantMsg {
		t.Errorf("got %v\nwant %s", errs, wantMsg)
	}
}

// TestKindsCarryTableFields: what a kind says it carries (jobkind.Facts.Carries)
// is a field of the table; a misspelt path would carry nothing.
func TestKindsCarryTableFields(t *testing.T) {
	for _, k := range kinds.All {
		for _, path := range k.Carries {
			if !slices.ContainsFunc(kinds.All.Fields(), func(f jobkind.Field) bool { return f.Path == path }) {
				t.Errorf("%s carries %s, which is no row of the kinds' fields", k.Kind, path)
			}
		}
	}
}

// TestEnvKeysNotCarried: the mlops.env keys of the fields a jobKind cannot carry.
func TestEnvKeysNotCarried(t *testing.T) {
	for jobKind, want := range map[jobkind.JobKind][]string{
		jobkind.Pod:        {"WORKERS", "SLOTS_PER_WORKER", "MIN_WORKERS", "MAX_WORKERS", "RDZV_ENDPOINT"},
		jobkind.MPIJob:     {"MIN_WORKERS", "MAX_WORKERS", "RDZV_ENDPOINT"},
		jobkind.PyTorchJob: {"SLOTS_PER_WORKER"},
		jobkind.TrainJob:   {"MIN_WORKERS", "MAX_WORKERS", "RDZV_ENDPOINT"},
	} {
		if diff := cmp.Diff(want, kinds.All.EnvKeysNotCarried(kinds.All.Of(jobKind))); diff != "" {
			t.Errorf("jobKind %s (-want +got):\n%s", jobKind, diff)
		}
	}
	for _, path := range []string{"mpi", "elastic", "runPolicy.cleanPodPolicy"} {
		if !slices.ContainsFunc(kinds.All.Fields(), func(f jobkind.Field) bool { return f.Path == path }) {
			t.Errorf("CarriesField is asked about %s, which the table lacks (and so would say every kind carries it)", path)
		}
	}
}
