// SPDX-License-Identifier: Apache-2.0

package render_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	kubeflow "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/env"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/kinds"
	"github.com/mlops-fn/mlops-fn/pkg/kinds/mpijob"
	"github.com/mlops-fn/mlops-fn/pkg/kinds/trainjob"
	"github.com/mlops-fn/mlops-fn/pkg/render"
)

// resolve settles a spec (YAML-free: the fields given) against an mlops.env text.
func resolve(t *testing.T, spec api.MLOpsJobSpec, envText string) (*render.Plan, []render.Warning) {
	t.Helper()
	job := &api.MLOpsJob{APIVersion: api.APIVersion, Kind: api.Kind, Metadata: api.ObjectMeta{Name: "bert"}, Spec: spec}
	kinds.Default(job)
	if errs := kinds.Validate(job); len(errs) > 0 {
		t.Fatalf("the spec does not validate: %v", errs)
	}
	file, err := env.Parse("mlops.env", []byte(envText))
	if err != nil {
		t.Fatal(err)
	}
	set, problems := env.Decode(file)
	if len(problems) > 0 {
		t.Fatalf("mlops.env: %v", problems)
	}
	p, warnings, errs := render.Resolve(job, kinds.Of(job.Spec.JobKind), file, set)
	if len(errs) > 0 {
		t.Fatalf("Resolve: %v", errs)
	}
	return p, warnings
}

var program = api.MLOpsJobSpec{Image: "horovod/horovod:0.28.1", Command: []string{"python", "train.py"}}

// TestRanks: -np is every slot of every worker, and the launcher's when it
// takes part; slots default to one a GPU, else one.
func TestRanks(t *testing.T) {
	for _, c := range []struct {
		name, env string
		launcher  bool
		want      int32
	}{
		{"one slot a worker without GPUs", "WORKERS=4\n", false, 4},
		{"one slot a GPU", "WORKERS=4\nGPUS_PER_WORKER=2\n", false, 8},
		{"SLOTS_PER_WORKER wins over the GPUs", "WORKERS=3\nGPUS_PER_WORKER=8\nSLOTS_PER_WORKER=2\n", false, 6},
		{"the launcher takes part", "WORKERS=2\nSLOTS_PER_WORKER=4\n", true, 12},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec := program
			spec.MPI.RunLauncherAsWorker = c.launcher
			p, _ := resolve(t, spec, c.env)
			if got := mpijob.Ranks(p); got != c.want {
				t.Errorf("Ranks() = %d, want %d", got, c.want)
			}
			if got := launcherCommand(t, p); !strings.Contains(strings.Join(got, " "), " -np "+strconv.Itoa(int(c.want))+" ") {
				t.Errorf("mpirun %q does not pass -np %d", got, c.want)
			}
		})
	}
}

// TestMPIRunLine: OpenMPI reads the operator's hostfile explicitly (OpenMPI 5
// ignores the variables the operator sets) and gets --allow-run-as-root only
// as root; Intel MPI and MPICH get Hydra's flags. Every rank gets mlops.env's
// keys and spec.env's names by name.
func TestMPIRunLine(t *testing.T) {
	withEnv := program
	withEnv.Env = []corev1.EnvVar{{Name: "RUN_ID", Value: "7"}}
	for _, c := range []struct {
		name, env string
		spec      api.MLOpsJobSpec
		impl      api.MPIImplementation
		want      []string
	}{
		{"OpenMPI as root", "WORKERS=2\n", program, api.OpenMPI, []string{"mpirun", "--allow-run-as-root", "-np", "2", "--hostfile", mpijob.OperatorHostfile,
			"-bind-to", "none", "-map-by", "slot", "-mca", "pml", "ob1", "-mca", "btl", "^openib",
			"-x", "NCCL_DEBUG=INFO", "-x", "LD_LIBRARY_PATH", "-x", "PATH", "-x", "WORKERS", "python", "train.py"}},
		{"OpenMPI as a user, spec.env", "WORKERS=2\nUSER_ID=1000\n", withEnv, api.OpenMPI, []string{"mpirun", "-np", "2", "--hostfile", mpijob.OperatorHostfile,
			"-bind-to", "none", "-map-by", "slot", "-mca", "pml", "ob1", "-mca", "btl", "^openib",
			"-x", "NCCL_DEBUG=INFO", "-x", "LD_LIBRARY_PATH", "-x", "PATH", "-x", "USER_ID", "-x", "WORKERS", "-x", "RUN_ID", "python", "train.py"}},
		{"mlops.env's NCCL_DEBUG over the default's", "WORKERS=2\nNCCL_DEBUG=WARN\n", program, api.OpenMPI, []string{"mpirun", "--allow-run-as-root", "-np", "2", "--hostfile", mpijob.OperatorHostfile,
			"-bind-to", "none", "-map-by", "slot", "-mca", "pml", "ob1", "-mca", "btl", "^openib",
			"-x", "LD_LIBRARY_PATH", "-x", "PATH", "-x", "NCCL_DEBUG", "-x", "WORKERS", "python", "train.py"}},
		{"Intel MPI", "WORKERS=3\nDATASET_DIR=/data\n", withEnv, api.Intel, []string{"mpirun", "-n", "3", "-genv", "NCCL_DEBUG", "INFO",
			"-genvlist", "LD_LIBRARY_PATH,PATH,DATASET_DIR,WORKERS,RUN_ID", "python", "train.py"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec := c.spec
			spec.MPI.Implementation = c.impl
			p, _ := resolve(t, spec, c.env)
			if diff := cmp.Diff(c.want, launcherCommand(t, p)); diff != "" {
				t.Errorf("mpirun (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUnforwardable: a name mpirun cannot forward to a rank, in mlops.env
// or spec.env, is refused for an MPIJob, and only there; so is a
// forwardEnv value of a name the job sets.
func TestUnforwardable(t *testing.T) {
	dotted := program
	dotted.Env = []corev1.EnvVar{{Name: "run-id", Value: "7"}}
	pair := program
	pair.MPI.ForwardEnv = []string{"DATASET_DIR=/elsewhere"}
	for _, c := range []struct {
		name, env, field, text string
		spec                   api.MLOpsJobSpec
	}{
		{"mlops.env key", "WORKERS=2\nmy.key=1\n", "mlops.env[my.key]", "(e.g. my_key)", program},
		{"spec.env name", "WORKERS=2\n", "spec.env[0].name", "(e.g. run_id)", dotted},
		{"forwardEnv pair of an mlops.env key", "WORKERS=2\nDATASET_DIR=/data\n", "spec.mpi.forwardEnv[0]", "sets DATASET_DIR, which every rank already gets", pair},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, errs := resolveBert(t, c.spec, c.env)
			if len(errs) != 1 || errs[0].Field != c.field || !strings.Contains(errs[0].Detail, c.text) {
				t.Fatalf("errors %v, want one on %s saying %q", errs, c.field, c.text)
			}
			pod := c.spec
			pod.JobKind = jobkind.Pod
			pod.MPI = api.MPI{}
			if _, errs := resolveBert(t, pod, c.env); len(errs) > 0 {
				t.Errorf("a Pod (no mpirun) refused: %v", errs)
			}
		})
	}
}

// TestTrainJob: the program, node count, processes and resources go in
// spec.trainer with the env keys from the ConfigMap, sorted; the ids in
// mlops-fn's runtime patch of the node job.
func TestTrainJob(t *testing.T) {
	spec := program
	spec.JobKind = jobkind.TrainJob
	spec.Trainer.Runtime = "torch-distributed"
	p, _ := resolve(t, spec, "WORKERS=3\nGPUS_PER_WORKER=2\nUSER_ID=1000\nCPU=4\n")
	patch := p.Patch()
	if patch.File != "trainjob-patch.yaml" {
		t.Fatalf("patch file %q; want trainjob-patch.yaml", patch.File)
	}
	job := patch.Object.(*trainer.TrainJob)
	tr := job.Spec.Trainer
	if *tr.NumNodes != 3 || *tr.NumProcPerNode != 2 || !slices.Equal(tr.Command, program.Command) || tr.ResourcesPerNode.Limits.Cpu().String() != "4" {
		t.Errorf("trainer: %+v", tr)
	}
	var names []string
	for _, e := range tr.Env {
		if e.ValueFrom == nil || e.ValueFrom.ConfigMapKeyRef.Name != "bert-trainjob-env" {
			t.Errorf("env %s is not taken from the env ConfigMap: %+v", e.Name, e)
		}
		names = append(names, e.Name)
	}
	if want := []string{"CPU", "GPUS_PER_WORKER", "USER_ID", "WORKERS"}; !slices.Equal(names, want) {
		t.Errorf("env %v, want %v", names, want)
	}
	if job.Spec.RuntimeRef.Name != "torch-distributed" {
		t.Errorf("runtimeRef %+v", job.Spec.RuntimeRef)
	}
	sec := job.Spec.RuntimePatches
	if len(sec) != 1 || sec[0].Manager != trainjob.RuntimePatchManager {
		t.Fatalf("runtime patches %+v", sec)
	}
	rj := sec[0].TrainingRuntimeSpec.Template.Spec.ReplicatedJobs
	if len(rj) != 1 || rj[0].Name != "node" || *rj[0].Template.Spec.Template.Spec.SecurityContext.RunAsUser != 1000 {
		t.Errorf("replicated jobs %+v", rj)
	}
}

// TestReservedMountPaths: a volume at, inside or above a folder an operator
// mounts is refused, naming the owner; the same path passes where no
// operator mounts there.
func TestReservedMountPaths(t *testing.T) {
	nfs := func(at string) string {
		return "USER_ID=1000\nUSER_NAME=mpiuser\nWORKERS=2\nNFS_SERVER=10.0.0.5\nNFS_PATH=/export\nNFS_MOUNT_PATH=" + at + "\n"
	}
	trainJob, mpiRuntime, elastic := operatorSpecs()
	for _, c := range []struct {
		name string
		spec api.MLOpsJobSpec
		at   string
		want string // "" when the path is accepted
	}{
		{"MPIJob: the hostfile's folder", program, "/etc/mpi", "is /etc/mpi, where the mpi-operator mounts the hostfile it writes"},
		{"MPIJob: inside it", program, "/etc/mpi/data", "lies inside /etc/mpi, where the mpi-operator mounts the hostfile"},
		{"MPIJob: above it", program, "/etc", "hides /etc/mpi, where the mpi-operator mounts the hostfile"},
		{"MPIJob: above the SSH folder", program, "/home/mpiuser", "hides /home/mpiuser/.ssh, where the mpi-operator mounts the SSH keys"},
		{"MPIJob: beside them", program, "/etc/mpi-data", ""},
		{"TrainJob on an MPI runtime", mpiRuntime, "/etc/mpi", "is /etc/mpi, where Kubeflow Trainer's MPI runtime mounts the hostfile"},
		{"TrainJob on the node alone", trainJob, "/etc/mpi", ""},
		{"PyTorchJob", elastic, "/etc/mpi", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			_, errs := resolveBert(t, c.spec, nfs(c.at))
			for _, e := range errs {
				if strings.Contains(e.Field, "NFS_MOUNT_PATH") {
					got = append(got, e.Error())
				}
			}
			switch {
			case c.want == "" && len(got) > 0:
				t.Errorf("NFS_MOUNT_PATH=%s refused: %v", c.at, got)
			case c.want != "" && (len(got) != 1 || !strings.Contains(got[0], c.want)):
				t.Errorf("NFS_MOUNT_PATH=%s: want one error saying %q, got %v", c.at, c.want, got)
			}
		})
	}
}

// TestOperatorVolumeNames: a spec volume may not take the name of a volume
// the operator adds to the pods itself (the mpi-operator appends its own, and
// the API server refuses the pod; Trainer's replaces the user's).
func TestOperatorVolumeNames(t *testing.T) {
	trainJob, mpiRuntime, elastic := operatorSpecs()
	for _, c := range []struct {
		name, volume string
		spec         api.MLOpsJobSpec
		want         string // "" when the name is accepted
	}{
		{"MPIJob: the SSH keys'", "ssh-auth", program, "is the volume where the mpi-operator mounts the SSH keys, which the operator adds to the pods itself; accepted: another volume name"},
		{"MPIJob: the hostfile's", "mpi-job-config", program, "is the volume where the mpi-operator mounts the hostfile it writes"},
		{"MPIJob: Trainer's name", "mpi-hostfile", program, ""},
		{"TrainJob on an MPI runtime: the hostfile's", "mpi-hostfile", mpiRuntime, "is the volume where Kubeflow Trainer's MPI runtime mounts the hostfile it writes"},
		{"TrainJob: the SSH keys'", "mpi-ssh-auth", trainJob, "is the volume where Kubeflow Trainer's MPI runtime mounts the SSH keys"},
		{"TrainJob on the node alone: the hostfile's", "mpi-hostfile", trainJob, ""},
		{"PyTorchJob", "ssh-auth", elastic, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.spec.Volumes = []api.Volume{{Name: c.volume, MountPath: "/data", EmptyDir: &api.EmptyDir{}}}
			var got []string
			_, errs := resolveBert(t, c.spec, "WORKERS=2\nUSER_ID=1000\n")
			for _, e := range errs {
				got = append(got, e.Error())
			}
			switch {
			case c.want == "" && len(got) > 0:
				t.Errorf("volume %s refused: %v", c.volume, got)
			case c.want != "" && (len(got) != 1 || !strings.HasPrefix(got[0], `spec.volumes[0].name: Invalid value: "`+c.volume+`": `+c.want)):
				t.Errorf("volume %s: want one error saying %q, got %v", c.volume, c.want, got)
			}
		})
	}
}

// TestPodActiveDeadline: a Pod carries runPolicy.activeDeadlineSeconds as its
// own spec.activeDeadlineSeconds, and its restart policy.
func TestPodActiveDeadline(t *testing.T) {
	spec := program
	spec.JobKind = jobkind.Pod
	spec.RunPolicy = api.RunPolicy{ActiveDeadlineSeconds: ptr.To[int64](3600)}
	spec.RestartPolicy = corev1.RestartPolicyOnFailure
	p, _ := resolve(t, spec, "USER_ID=1000\n")
	pod := p.Patch().Object.(*corev1.Pod)
	if pod.Spec.ActiveDeadlineSeconds == nil || *pod.Spec.ActiveDeadlineSeconds != 3600 || pod.Spec.RestartPolicy != corev1.RestartPolicyOnFailure {
		t.Errorf("the Pod has activeDeadlineSeconds %v and restartPolicy %q; want 3600 and OnFailure", pod.Spec.ActiveDeadlineSeconds, pod.Spec.RestartPolicy)
	}
}

// resolveBert resolves a job named bert with spec (defaulted) and mlops.env's text.
func resolveBert(t *testing.T, spec api.MLOpsJobSpec, envText string) ([]render.Warning, field.ErrorList) {
	t.Helper()
	job := &api.MLOpsJob{APIVersion: api.APIVersion, Kind: api.Kind, Metadata: api.ObjectMeta{Name: "bert"}, Spec: spec}
	kinds.Default(job)
	file, err := env.Parse("mlops.env", []byte(envText))
	if err != nil {
		t.Fatal(err)
	}
	set, _ := env.Decode(file)
	_, warnings, errs := render.Resolve(job, kinds.Of(job.Spec.JobKind), file, set)
	return warnings, errs
}

// operatorSpecs: a TrainJob on the node alone, one on an MPI runtime (a launcher
// replicated job) and an elastic PyTorchJob, where the operators mount their own.
func operatorSpecs() (trainJob, mpiRuntime, elastic api.MLOpsJobSpec) {
	trainJob = api.MLOpsJobSpec{JobKind: jobkind.TrainJob, Image: "pytorch/pytorch:2.7.1", Command: []string{"torchrun", "train.py"},
		Trainer: api.Trainer{Runtime: "deepspeed-distributed"}}
	mpiRuntime = trainJob
	mpiRuntime.Trainer.ReplicatedJobs = []string{"launcher", "node"}
	elastic = api.MLOpsJobSpec{JobKind: jobkind.PyTorchJob, Image: "pytorch/pytorch:2.7.1", Command: []string{"torchrun", "train.py"}}
	return trainJob, mpiRuntime, elastic
}

// launcherCommand is the command the plan's MPIJob patch gives the launcher.
func launcherCommand(t *testing.T, p *render.Plan) []string {
	t.Helper()
	job, ok := p.Patch().Object.(*kubeflow.MPIJob)
	if !ok {
		t.Fatalf("the patch is a %T, not an MPIJob", p.Patch().Object)
	}
	return job.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeLauncher].Template.Spec.Containers[0].Command
}
