// Package scaffold writes a new job's folder: a commented mlops.env, the job
// spec, and a base whose skeleton is named like the job, ready for hydrate.
package scaffold

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/jobnode"
	"github.com/mlops-fn/mlops-fn/pkg/jobspec"
	"github.com/mlops-fn/mlops-fn/pkg/processor"
)

// BaseDir is the base in the new folder; its kustomization lists the skeleton.
const BaseDir = "base"

// Options say what job to start.
type Options struct {
	Name    string
	Mode    api.Mode
	Image   string   // "" : the mode's demo image
	Command []string // nil: the demo's command (with the demo image), else none
}

// demo is a job that runs on any cluster with the operator: the operators'
// own examples.
var demo = map[api.Mode]struct {
	image   string
	command []string
}{
	api.ModeMultiNode:  {"mpioperator/mpi-pi:openmpi", []string{"/home/mpiuser/pi"}},
	api.ModeSingleNode: {"python:3.12-slim", []string{"python", "-c", "import os; print('hello from', os.uname().nodename)"}},
	api.ModeElastic:    {"kubeflow/pytorch-elastic-example-echo:latest", []string{"python", "-m", "torch.distributed.run", "/workspace/echo.py"}},
	// Kubeflow Trainer's own example image (examples/pytorch/image-classification).
	api.ModeTrainJob: {"pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime", []string{"torchrun", "--no-python", "python3", "-c",
		"import torch.distributed as d; d.init_process_group('gloo'); print('rank', d.get_rank(), 'of', d.get_world_size())"}},
}

// Files are the new folder's files, by path in it.
func Files(o Options) (map[string][]byte, error) {
	if o.Mode == "" {
		o.Mode = api.ModeMultiNode
	}
	d, ok := demo[o.Mode]
	if !ok {
		return nil, fmt.Errorf("--mode %q: accepted: %s", o.Mode, strings.Join(jobkind.Modes(), ", "))
	}
	for _, msg := range validation.IsDNS1035Label(o.Name) {
		return nil, fmt.Errorf("the job's name %q (--name, else the folder's name): %s; accepted: a DNS label, lowercase letters, digits and '-', starting with a letter, e.g. --name my-job", o.Name, msg)
	}
	if o.Image != "" && o.Command == nil && o.Mode != api.ModeSingleNode {
		return nil, fmt.Errorf("--image %s without --command: mode %s needs the program %s starts; accepted: --command python,train.py (comma-separated)", o.Image, o.Mode, map[api.Mode]string{api.ModeMultiNode: "mpirun", api.ModeElastic: "torchrun", api.ModeTrainJob: "the runtime's launcher (torchrun)"}[o.Mode])
	}
	image, command := o.Image, o.Command
	comment := "your training image"
	if image == "" {
		image, comment = d.image, "the operator's own example: put your training image here"
		if command == nil {
			command = d.command
		}
	}
	spec := fmt.Sprintf(`# The workload's shape. mlops.env holds the site and you, and its values win over
# the same ones here. After editing either file, run mlops-fn hydrate on this folder.
apiVersion: %s
kind: %s
metadata:
  name: %s
  annotations:
    config.kubernetes.io/local-config: "true"
spec:
  mode: %s
  image: %s # %s
`, api.APIVersion, api.Kind, o.Name, o.Mode, image, comment)
	if o.Mode == api.ModeTrainJob {
		spec += "  trainer:\n    runtime: " + api.DefaultTrainerRuntime + " # the ClusterTrainingRuntime the TrainJob runs on\n"
	}
	if len(command) > 0 {
		spec += "  command: " + flowList(command) + " # " + map[api.Mode]string{
			api.ModeMultiNode:  "mlops-fn runs it under mpirun -np WORKERS x slots",
			api.ModeSingleNode: "the Pod's command",
			api.ModeElastic:    "the torchrun line; the training-operator passes it the rendezvous",
			api.ModeTrainJob:   "the torchrun line; Kubeflow Trainer's torch-distributed runtime passes it nnodes and the master",
		}[o.Mode] + "\n"
	}
	files := map[string][]byte{
		"job.yaml":  []byte(spec),
		"mlops.env": []byte(envFile(o.Mode)),
	}
	skeleton, kind, err := skeletonOf(files)
	if err != nil {
		return nil, err
	}
	for name, b := range baseFiles(skeleton, kind) {
		files[name] = b
	}
	return files, nil
}

// baseFiles are the base init writes for a skeleton of kind.
func baseFiles(skeleton []byte, kind string) map[string][]byte {
	name := strings.ToLower(kind) + ".yaml"
	return map[string][]byte{
		filepath.Join(BaseDir, name):                 skeleton,
		filepath.Join(BaseDir, "kustomization.yaml"): []byte(baseKustomization + name + "\n"),
	}
}

const baseKustomization = "# The job's skeleton: the overlay above patches it (mlops-fn hydrate).\nresources:\n- "

// Follow makes the base of a folder init wrote follow its job spec: when
// job.yaml (config, in dir) names the job otherwise or changes its mode,
// and dir/base is still the skeleton init wrote (its header's fingerprint
// matches it, the base's kustomization is init's), it rewrites that skeleton
// for the new ones and says so. Any other base, or a spec that does not resolve, it leaves to hydrate,
// which names what differs.
func Follow(dir, config string) (string, error) {
	base := filepath.Join(dir, BaseDir)
	entries, err := os.ReadDir(base)
	if err != nil || len(entries) != 2 {
		return "", nil
	}
	k, err := os.ReadFile(filepath.Join(base, "kustomization.yaml"))
	if err != nil || !strings.HasPrefix(string(k), baseKustomization) {
		return "", nil
	}
	file := strings.TrimSuffix(strings.TrimPrefix(string(k), baseKustomization), "\n")
	old, err := os.ReadFile(filepath.Join(base, file))
	if err != nil || string(k) != baseKustomization+file+"\n" {
		return "", nil
	}
	m := skeletonHeader.FindSubmatch(old)
	if m == nil || fingerprint(string(old[len(m[0]):])) != string(m[3]) {
		return "", nil // not init's, or edited since: the user's base
	}
	oldKind, oldName := string(m[1]), string(m[2])
	if file != strings.ToLower(oldKind)+".yaml" {
		return "", nil
	}
	spec, err := os.ReadFile(filepath.Join(dir, config))
	if err != nil {
		return "", nil
	}
	envText, err := os.ReadFile(filepath.Join(dir, "mlops.env"))
	if err != nil {
		return "", nil
	}
	skeleton, kind, err := skeletonOf(map[string][]byte{"job.yaml": spec, "mlops.env": envText})
	if err != nil {
		return "", nil // hydrate says what is wrong with the spec
	}
	n := skeletonHeader.FindSubmatch(skeleton)
	if n == nil || (string(n[1]) == oldKind && string(n[2]) == oldName) {
		return "", nil // the same job: hydrate patches it
	}
	if err := os.Remove(filepath.Join(base, file)); err != nil {
		return "", err
	}
	for name, b := range baseFiles(skeleton, kind) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("%s: the skeleton init wrote, %s/%s, follows %s: now %s/%s (%s)", base, oldKind, oldName,
		filepath.Join(dir, config), n[1], n[2], filepath.Join(base, strings.ToLower(kind)+".yaml")), nil
}

// flowList writes a YAML flow list, each item quoted where YAML needs it.
func flowList(items []string) string {
	quoted := make([]string, len(items))
	for i, s := range items {
		n := yaml.NewStringRNode(s)
		text, err := n.String()
		if err != nil || strings.ContainsAny(s, ",[]{}#&*!|>'\"%@` ") {
			text = strconv.Quote(s)
		}
		quoted[i] = strings.TrimSpace(text)
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// envFile is a commented mlops.env for mode.
func envFile(mode api.Mode) string {
	shape := "WORKERS=2\nCPU=1\nMEMORY=1Gi\n# GPUS_PER_WORKER=1\n"
	switch mode {
	case api.ModeSingleNode:
		shape = "CPU=1\nMEMORY=1Gi\n# GPUS_PER_WORKER=1\n"
	case api.ModeElastic:
		shape = "WORKERS=2\nMIN_WORKERS=1\nMAX_WORKERS=3\nCPU=1\nMEMORY=1Gi\n# GPUS_PER_WORKER=1\n"
	case api.ModeTrainJob:
		shape = "# The TrainJob's nodes, and on each its CPU, memory and GPUs.\n" + shape
	}
	who, ids := "your uid and gid (id -u, id -g)", "USER_ID=1000\nGROUP_ID=1000\n"
	if api.Carries(mode, "security.home") {
		// The other modes keep no SSH keys in the user's home.
		who, ids = who+", your user name in the image", ids+"USER_NAME=mpiuser\n"
	}
	return `# mlops.env: your site and you. Every key is also an environment variable of the
# training containers. After editing, run mlops-fn hydrate on this folder, then
# kubectl apply -k it (until then the build fails, saying so).

# Who the job runs as: ` + who + `.
` + ids + `
# The shape of the job.
` + shape + `
# A shared NFS folder, mounted read-write in every container (all three or none):
# NFS_SERVER=nfs.example.com
# NFS_PATH=/export/users
# NFS_MOUNT_PATH=/workspace

# Where images come from, for ${REGISTRY} in job.yaml's image:
# REGISTRY=ghcr.io/your-team
`
}

// skeletonOf renders the skeleton the spec's job patches: its kind, name and
// container names, as mlops-fn would generate them.
func skeletonOf(files map[string][]byte) ([]byte, string, error) {
	dir, err := os.MkdirTemp("", "mlops-fn-init-")
	if err != nil {
		return nil, "", err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return nil, "", err
		}
	}
	config, err := jobspec.Read(filepath.Join(dir, "job.yaml"))
	if err != nil {
		return nil, "", err
	}
	resolved, results := processor.Processor{ConfigDir: dir, ConfigFile: "job.yaml"}.Resolve(config, nil)
	if resolved == nil {
		return nil, "", results
	}
	n, err := jobnode.Encode(resolved.Plan.Skeleton())
	if err != nil {
		return nil, "", err
	}
	s, err := n.String()
	return []byte(fmt.Sprintf(skeletonHeaderFormat, n.GetKind(), n.GetName(), fingerprint(s)) + s), n.GetKind(), err
}

// skeletonHeaderFormat heads the skeleton init writes: its kind, name, and
// the fingerprint of what follows, by which Follow knows it unedited.
const skeletonHeaderFormat = "# %s %s: the names mlops-fn's patches find; they fill in the rest.\n" +
	"# Written by mlops-fn init (%s): while unedited, hydrate rewrites it when job.yaml renames the job or changes its mode.\n"

// skeletonHeader reads that header.
var skeletonHeader = regexp.MustCompile(`^# ([A-Za-z]+) ([a-z0-9-]+): the names mlops-fn's patches find; they fill in the rest\.\n` +
	`# Written by mlops-fn init \(([0-9a-f]{16})\): [^\n]*\n`)

// fingerprint is a short hash of a skeleton's body.
func fingerprint(body string) string {
	sum := sha256.Sum256([]byte(body))
	return hex.EncodeToString(sum[:8])
}

// Write puts files into dir, which must not exist or be empty, in one
// rename: a failure leaves no folder behind.
func Write(dir string, files map[string][]byte, finish func(staged string) error) error {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("%s exists and is not empty; accepted: a new folder (mlops-fn init writes a whole job's folder); to rename a job init wrote or change its mode, edit its job.yaml and run mlops-fn hydrate %s", dir, dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	parent := filepath.Dir(filepath.Clean(dir))
	staged, err := os.MkdirTemp(parent, ".mlops-fn-tmp-init-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(staged) }()
	for name, b := range files {
		path := filepath.Join(staged, name)
		if err := errors.Join(os.MkdirAll(filepath.Dir(path), 0o755), os.WriteFile(path, b, 0o644)); err != nil {
			return err
		}
	}
	if err := os.Chmod(staged, 0o755); err != nil {
		return err
	}
	if err := finish(staged); err != nil {
		return err
	}
	return os.Rename(staged, dir)
}
