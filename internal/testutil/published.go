// SPDX-License-Identifier: Apache-2.0

package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// PublishedJob is an upstream example job and what a user would write to run it with mlops-fn.
type PublishedJob struct {
	// Module and File: the example, in the pinned module's source.
	Module, File string
	// Spec is the job spec after "metadata:\n  " (its name, and what follows).
	Spec string
	// Env is the mlops.env.
	Env string
}

// Read is the example's text, from the module cache (the module is the pinned one).
func (p PublishedJob) Read() ([]byte, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", p.Module).Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		return nil, fmt.Errorf("go list -m %s: %v (run go mod download)", p.Module, err)
	}
	return os.ReadFile(filepath.Join(dir, p.File))
}

// Name names the job in tests: its file, or for a golden case its folder.
func (p PublishedJob) Name() string {
	if p.Module == mainModule {
		return filepath.Base(filepath.Dir(p.File))
	}
	return filepath.Base(p.File)
}

// JobSpec is the job spec's text.
func (p PublishedJob) JobSpec() string {
	return specHeader + p.Spec
}

// Published are jobs this project did not write: the mpi-operator's, the
// training-operator's and Kubeflow Trainer's own examples, read from the module cache at the pinned
// versions, with container names unlike the job's. Each gets a spec that
// targets it, and the site settings of mlops.env.
var Published = []PublishedJob{
	{"github.com/kubeflow/mpi-operator", "examples/v2beta1/pi/pi.yaml",
		"name: pi\nspec:\n  jobKind: MPIJob\n  image: mpioperator/mpi-pi:openmpi\n  command: [/home/mpiuser/pi]\n  security: {home: /home/mpiuser}\n",
		"USER_ID=1000\nGROUP_ID=1000\nUSER_NAME=mpiuser\nWORKERS=3\nCPU=1\nMEMORY=1Gi\nNFS_SERVER=10.0.0.5\nNFS_PATH=/export/pi\nNFS_MOUNT_PATH=/data\n"},
	// Site settings only: the published launcher keeps its mpirun line, its -n follows WORKERS.
	{"github.com/kubeflow/mpi-operator", "examples/v2beta1/pi/pi.yaml",
		"name: pi\nspec:\n  jobKind: MPIJob\n",
		"USER_ID=1000\nUSER_NAME=mpiuser\nWORKERS=5\nCPU=1\nMEMORY=1Gi\nNFS_SERVER=10.0.0.5\nNFS_PATH=/export/pi\nNFS_MOUNT_PATH=/data\n"},
	{"github.com/kubeflow/training-operator", "examples/pytorch/elastic/echo/echo.yaml",
		"name: elastic-example-echo\nspec:\n  jobKind: PyTorchJob\n",
		"WORKERS=3\nMIN_WORKERS=2\nMAX_WORKERS=4\nGPUS_PER_WORKER=1\nGPU_RESOURCE=gpu.intel.com/i915\nSHM_SIZE=1Gi\n"},
	{"github.com/kubeflow/mpi-operator", "examples/v2beta1/pi/pi-intel.yaml",
		"name: pi\n  namespace: hpc\n  labels: {kueue.x-k8s.io/queue-name: team-a}\n  annotations: {team: hpc}\nspec:\n  jobKind: MPIJob\n  image: mpioperator/mpi-pi:intel\n  command: [/home/mpiuser/pi]\n  mpi: {implementation: Intel}\n",
		"USER_ID=1000\nUSER_NAME=mpiuser\nWORKERS=4\nGPUS_PER_WORKER=2\nGPU_RESOURCE=amd.com/gpu\nSHM_SIZE=512Mi\nTOPOLOGY_PREFERRED=kubernetes.io/hostname\n"},
	{"github.com/kubeflow/mpi-operator", "examples/v2beta1/pi/pi-mpich.yaml",
		"name: pi\nspec:\n  jobKind: MPIJob\n  image: mpioperator/mpi-pi:mpich\n  command: [/home/mpiuser/pi]\n  mpi: {implementation: MPICH}\n",
		"USER_ID=1000\nUSER_NAME=mpiuser\nWORKERS=2\n"},
	{"github.com/kubeflow/mpi-operator", "examples/v2beta1/horovod/tensorflow-mnist.yaml",
		"name: tensorflow-mnist\nspec:\n  jobKind: MPIJob\n  image: docker.io/kubeflow/mpi-horovod-mnist\n  command: [python, /examples/tensorflow_mnist.py]\n",
		"WORKERS=2\nNFS_SERVER=nfs.lab\nNFS_PATH=/export\nNFS_MOUNT_PATH=/workspace\n"},
	{"github.com/kubeflow/mpi-operator", "examples/v2beta1/tensorflow-benchmarks/tensorflow-benchmarks.yaml",
		"name: tensorflow-benchmarks\nspec:\n  jobKind: MPIJob\n  image: mpioperator/tensorflow-benchmarks:latest\n  command: [python, scripts/tf_cnn_benchmarks/tf_cnn_benchmarks.py]\n",
		"WORKERS=1\nGPUS_PER_WORKER=2\n"},
	{"github.com/kubeflow/training-operator", "examples/pytorch/elastic/echo/echo.yaml",
		"name: elastic-example-echo\nspec:\n  jobKind: PyTorchJob\n  image: kubeflow/pytorch-elastic-example-echo:latest\n  command: [torchrun, /workspace/echo.py]\n",
		"WORKERS=2\nMIN_WORKERS=1\nMAX_WORKERS=3\nUSER_ID=1000\n"},
	{"github.com/kubeflow/training-operator", "examples/pytorch/elastic/imagenet/imagenet.yaml",
		"name: elastic-example-imagenet\nspec:\n  jobKind: PyTorchJob\n  image: kubeflow/pytorch-elastic-example-imagenet:latest\n  command: [torchrun, /workspace/examples/imagenet.py]\n",
		"WORKERS=2\nGPUS_PER_WORKER=1\nNFS_SERVER=10.0.0.5\nNFS_PATH=/export/imagenet\nNFS_MOUNT_PATH=/data\nTOPOLOGY_REQUIRED=cloud.provider.com/topology-rack\n"},
	// Kubeflow Trainer's TrainJobs: site settings only, their programs kept; the
	// second has a runtime patch of its platform team's, which stays beside mlops-fn's.
	{"github.com/kubeflow/trainer/v2", "examples/yaml/01-multi-node.yaml",
		"name: multi-node-example\nspec:\n  jobKind: TrainJob\n",
		"WORKERS=3\nGPUS_PER_WORKER=1\nUSER_ID=1000\nGROUP_ID=1000\nNFS_SERVER=10.0.0.5\nNFS_PATH=/export/ml\nNFS_MOUNT_PATH=/data\nSHM_SIZE=1Gi\n"},
	{"github.com/kubeflow/trainer/v2", "examples/yaml/02-runtime-patches.yaml",
		"name: runtime-patches-example\n  labels: {kueue.x-k8s.io/queue-name: team-a}\nspec:\n  jobKind: TrainJob\n  image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime\n  command: [torchrun, /workspace/train.py]\n  imagePullSecrets: [{name: regcred}]\n",
		"WORKERS=2\nMEMORY=16Gi\nUSER_ID=1000\nTOPOLOGY_REQUIRED=cloud.provider.com/topology-block\n"},
}

// mainModule is this project's module: its golden cases are read like the examples.
const mainModule = "github.com/mlops-fn/mlops-fn"

// specHeader starts every job spec; PublishedJob.Spec is what follows it.
const specHeader = "apiVersion: mlops-fn.dev/v1alpha1\nkind: MLOpsJob\nmetadata:\n  "

// Team are jobs written the way teams write them, not the published examples: sidecars
// before the trainer, init containers, a launcher's own limits. They are the golden cases
// testdata/team-*: input.yaml is the job, job.yaml and mlops.env what its team runs it with.
func Team() ([]PublishedJob, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", mainModule).Output()
	root := strings.TrimSpace(string(out))
	if err != nil || root == "" {
		return nil, fmt.Errorf("go list -m %s: %v", mainModule, err)
	}
	cases, err := filepath.Glob(filepath.Join(root, "testdata", "team-*"))
	if err != nil || len(cases) == 0 {
		return nil, fmt.Errorf("no golden cases testdata/team-* under %s: %v", root, err)
	}
	var jobs []PublishedJob
	for _, dir := range cases {
		spec, err := os.ReadFile(filepath.Join(dir, "job.yaml"))
		if err != nil {
			return nil, err
		}
		env, err := os.ReadFile(filepath.Join(dir, "mlops.env"))
		if err != nil {
			return nil, err
		}
		rest, ok := strings.CutPrefix(string(spec), specHeader)
		if !ok {
			return nil, fmt.Errorf("%s/job.yaml does not start with %q", dir, specHeader)
		}
		jobs = append(jobs, PublishedJob{Module: mainModule, File: filepath.Join("testdata", filepath.Base(dir), "input.yaml"), Spec: rest, Env: string(env)})
	}
	return jobs, nil
}

// UserJobs are the jobs this project did not write: Published, then Team.
func UserJobs() ([]PublishedJob, error) {
	team, err := Team()
	return slices.Concat(Published, team), err
}
