package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// published are jobs this project did not write: the mpi-operator's, the
// training-operator's and Kubeflow Trainer's own examples, read from the module cache at the pinned
// versions, with container names unlike the job's. Each gets a spec that
// targets it, and the site settings of mlops.env.
var published = []struct {
	module, file string
	spec         string
	env          string
}{
	{"github.com/kubeflow/mpi-operator", "examples/v2beta1/pi/pi.yaml",
		"name: pi\nspec:\n  mode: multi-node\n  image: mpioperator/mpi-pi:openmpi\n  command: [/home/mpiuser/pi]\n  security: {home: /home/mpiuser}\n",
		"USER_ID=1000\nGROUP_ID=1000\nUSER_NAME=mpiuser\nWORKERS=3\nCPU=1\nMEMORY=1Gi\nNFS_SERVER=10.0.0.5\nNFS_PATH=/export/pi\nNFS_MOUNT_PATH=/data\n"},
	// Site settings only: the published launcher keeps its mpirun line, its -n follows WORKERS.
	{"github.com/kubeflow/mpi-operator", "examples/v2beta1/pi/pi.yaml",
		"name: pi\nspec:\n  mode: multi-node\n",
		"USER_ID=1000\nUSER_NAME=mpiuser\nWORKERS=5\nCPU=1\nMEMORY=1Gi\nNFS_SERVER=10.0.0.5\nNFS_PATH=/export/pi\nNFS_MOUNT_PATH=/data\n"},
	{"github.com/kubeflow/training-operator", "examples/pytorch/elastic/echo/echo.yaml",
		"name: elastic-example-echo\nspec:\n  mode: elastic\n",
		"WORKERS=3\nMIN_WORKERS=2\nMAX_WORKERS=4\nGPUS_PER_WORKER=1\nGPU_RESOURCE=gpu.intel.com/i915\nSHM_SIZE=1Gi\n"},
	{"github.com/kubeflow/mpi-operator", "examples/v2beta1/pi/pi-intel.yaml",
		"name: pi\n  namespace: hpc\n  labels: {kueue.x-k8s.io/queue-name: team-a}\n  annotations: {team: hpc}\nspec:\n  mode: multi-node\n  image: mpioperator/mpi-pi:intel\n  command: [/home/mpiuser/pi]\n  mpi: {implementation: Intel}\n",
		"USER_ID=1000\nUSER_NAME=mpiuser\nWORKERS=4\nGPUS_PER_WORKER=2\nGPU_RESOURCE=amd.com/gpu\nSHM_SIZE=512Mi\n"},
	{"github.com/kubeflow/mpi-operator", "examples/v2beta1/pi/pi-mpich.yaml",
		"name: pi\nspec:\n  mode: multi-node\n  image: mpioperator/mpi-pi:mpich\n  command: [/home/mpiuser/pi]\n  mpi: {implementation: MPICH}\n",
		"USER_ID=1000\nUSER_NAME=mpiuser\nWORKERS=2\n"},
	{"github.com/kubeflow/mpi-operator", "examples/v2beta1/horovod/tensorflow-mnist.yaml",
		"name: tensorflow-mnist\nspec:\n  mode: multi-node\n  image: docker.io/kubeflow/mpi-horovod-mnist\n  command: [python, /examples/tensorflow_mnist.py]\n",
		"WORKERS=2\nNFS_SERVER=nfs.lab\nNFS_PATH=/export\nNFS_MOUNT_PATH=/workspace\n"},
	{"github.com/kubeflow/mpi-operator", "examples/v2beta1/tensorflow-benchmarks/tensorflow-benchmarks.yaml",
		"name: tensorflow-benchmarks\nspec:\n  mode: multi-node\n  image: mpioperator/tensorflow-benchmarks:latest\n  command: [python, scripts/tf_cnn_benchmarks/tf_cnn_benchmarks.py]\n",
		"WORKERS=1\nGPUS_PER_WORKER=2\n"},
	{"github.com/kubeflow/training-operator", "examples/pytorch/elastic/echo/echo.yaml",
		"name: elastic-example-echo\nspec:\n  mode: elastic\n  image: kubeflow/pytorch-elastic-example-echo:latest\n  command: [torchrun, /workspace/echo.py]\n",
		"WORKERS=2\nMIN_WORKERS=1\nMAX_WORKERS=3\nUSER_ID=1000\n"},
	{"github.com/kubeflow/training-operator", "examples/pytorch/elastic/imagenet/imagenet.yaml",
		"name: elastic-example-imagenet\nspec:\n  mode: elastic\n  image: kubeflow/pytorch-elastic-example-imagenet:latest\n  command: [torchrun, /workspace/examples/imagenet.py]\n",
		"WORKERS=2\nGPUS_PER_WORKER=1\nNFS_SERVER=10.0.0.5\nNFS_PATH=/export/imagenet\nNFS_MOUNT_PATH=/data\n"},
	// Kubeflow Trainer's TrainJobs: site settings only, their programs kept; the
	// second has a runtime patch of its platform team's, which stays beside mlops-fn's.
	{"github.com/kubeflow/trainer/v2", "examples/yaml/01-multi-node.yaml",
		"name: multi-node-example\nspec:\n  mode: trainjob\n",
		"WORKERS=3\nGPUS_PER_WORKER=1\nUSER_ID=1000\nGROUP_ID=1000\nNFS_SERVER=10.0.0.5\nNFS_PATH=/export/ml\nNFS_MOUNT_PATH=/data\nSHM_SIZE=1Gi\n"},
	{"github.com/kubeflow/trainer/v2", "examples/yaml/02-runtime-patches.yaml",
		"name: runtime-patches-example\n  labels: {kueue.x-k8s.io/queue-name: team-a}\nspec:\n  mode: trainjob\n  image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime\n  command: [torchrun, /workspace/train.py]\n  imagePullSecrets: [regcred]\n",
		"WORKERS=2\nMEMORY=16Gi\nUSER_ID=1000\n"},
}

// moduleDir is where the pinned module's source is in the module cache.
func moduleDir(t *testing.T, module string) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module).Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		t.Fatalf("go list -m %s: %v (run go mod download)", module, err)
	}
	return strings.TrimSpace(string(out))
}

// TestRunnersAgreeOnPublishedJobs: on bases the project did not write, the
// hydrated overlay that kubectl applies, kustomize with the function as an
// exec transformer or in its image, the function on a ResourceList, kpt fn
// eval and the standalone command give the same
// objects, the user's containers patched where they stand.
func TestRunnersAgreeOnPublishedJobs(t *testing.T) {
	kubectl := tool(t, "kubectl", "install kubectl v1.32")
	binary(t)
	fn, err := filepath.Abs(filepath.Join(repoRoot, "bin", "mlops-fn"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range published {
		name := filepath.Base(p.file)
		if !strings.Contains(p.spec, "image:") {
			name += ", site settings only"
		}
		t.Run(name, func(t *testing.T) {
			job, err := os.ReadFile(filepath.Join(moduleDir(t, p.module), p.file))
			if err != nil {
				t.Fatal(err)
			}
			root := t.TempDir()
			files := map[string]string{
				"base/job.yaml":                string(job),
				"base/kustomization.yaml":      "resources:\n- job.yaml\n",
				"overlay/job.yaml":             "apiVersion: mlops-fn.dev/v1alpha1\nkind: TrainingJob\nmetadata:\n  " + p.spec,
				"overlay/mlops.env":            p.env,
				"exec/kustomization.yaml":      "resources:\n- ../base\ntransformers:\n- fn.yaml\n",
				"exec/fn.yaml":                 "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: mlops-fn\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: " + fn + "\ndata:\n  job: ../overlay/job.yaml\n",
				"kpt/" + filepath.Base(p.file): string(job),
			}
			if strings.Contains(p.spec, "namespace: hpc") {
				// The spec's namespace: the base (or the kustomization) puts the job there.
				files["base/kustomization.yaml"] = "namespace: hpc\nresources:\n- job.yaml\n"
				files["exec/kustomization.yaml"] = "namespace: hpc\nresources:\n- job.yaml\ntransformers:\n- fn.yaml\n"
				files["exec/job.yaml"] = string(job)
				files["kpt/"+filepath.Base(p.file)] = strings.Replace(string(job), "metadata:\n  name: pi\n", "metadata:\n  name: pi\n  namespace: hpc\n", 1)
			}
			for name, text := range files {
				path := filepath.Join(root, name)
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			overlay := filepath.Join(root, "overlay")
			run(t, fn, "hydrate", "--resources", "../base", overlay)
			want := objects(t, run(t, kubectl, "kustomize", overlay))
			check := func(t *testing.T, out string) {
				t.Helper()
				if diff := cmp.Diff(want, objects(t, out)); diff != "" {
					t.Errorf("differs from kubectl apply -k of the hydrated overlay (-kubectl +runner):\n%s", diff)
				}
			}
			t.Run("kustomize exec", func(t *testing.T) {
				check(t, run(t, kustomizeBin(t), "build", "--enable-alpha-plugins", "--enable-exec", filepath.Join(root, "exec")))
			})
			t.Run("kpt eval exec", func(t *testing.T) {
				kpt := kptBin(t)
				pkg := filepath.Join(root, "kpt")
				run(t, kpt, "fn", "eval", "--exec", fn, pkg, "--", "job="+filepath.Join(overlay, "job.yaml"))
				check(t, readPackage(t, pkg))
			})
			t.Run("KRM, spec as function config", func(t *testing.T) {
				// As a container runner calls it: the spec is the function config,
				// mlops.env arrives as the ConfigMap kustomize's generator makes.
				var items []*yaml.RNode
				for _, f := range []string{filepath.Join(root, "kpt", filepath.Base(p.file))} {
					items = append(items, readNodes(t, f)...)
				}
				for id, obj := range want {
					if strings.HasPrefix(id, "ConfigMap/") {
						cm, err := yaml.FromMap(obj)
						if err != nil {
							t.Fatal(err)
						}
						items = append(items, cm)
					}
				}
				config, err := yaml.ReadFile(filepath.Join(overlay, "job.yaml"))
				if err != nil {
					t.Fatal(err)
				}
				out, stderr, err := runResourceList(t, root, items, config)
				if err != nil {
					t.Fatalf("%v\n%s", err, stderr)
				}
				list, err := out.Pipe(yaml.Lookup("items"))
				if err != nil {
					t.Fatal(err)
				}
				elems, err := list.Elements()
				if err != nil {
					t.Fatal(err)
				}
				text, err := kio.StringAll(elems)
				if err != nil {
					t.Fatal(err)
				}
				check(t, text)
			})
			t.Run("kustomize container", func(t *testing.T) {
				image(t)
				dir := filepath.Join(root, "container")
				name := strings.Fields(strings.SplitN(p.spec, "\n", 2)[0])[1]
				envName := ""
				for id := range want {
					if strings.HasPrefix(id, "ConfigMap/") {
						envName = strings.TrimPrefix(id, "ConfigMap/")
					}
				}
				ns, specNS := "", ""
				if strings.Contains(p.spec, "namespace: hpc") {
					ns, specNS = "namespace: hpc\n", "      namespace: hpc\n"
				}
				for file, text := range map[string]string{
					"kustomization.yaml":        ns + "resources:\n- ../base\nconfigMapGenerator:\n- name: " + envName + "\n  envs: [../overlay/mlops.env]\n  options: {disableNameSuffixHash: true}\ntransformers:\n- config\n",
					"config/kustomization.yaml": "resources:\n- ../../overlay/job.yaml\npatches:\n- patch: |\n    apiVersion: mlops-fn.dev/v1alpha1\n    kind: TrainingJob\n    metadata:\n      name: " + name + "\n" + specNS + "      annotations:\n        config.kubernetes.io/function: |\n          container:\n            image: localhost/mlops-fn:dev\n",
				} {
					path := filepath.Join(dir, file)
					if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				check(t, run(t, kustomizeBin(t), "build", "--enable-alpha-plugins", "--load-restrictor", "LoadRestrictionsNone", dir))
			})
			t.Run("standalone", func(t *testing.T) {
				check(t, run(t, fn, filepath.Join(overlay, "job.yaml"), filepath.Join(root, "kpt", filepath.Base(p.file))))
			})
			// The user's containers carry the site settings; no second container.
			for _, obj := range want {
				if obj["kind"] == "ConfigMap" {
					continue
				}
				text := run(t, kubectl, "kustomize", overlay)
				images := strings.Count(string(job), "image:")
				if images == 0 && strings.Contains(p.spec, "image:") {
					images = 1 // a TrainJob that left the image to its runtime
				}
				if strings.Count(text, "- name: mpi-launcher") > 1 || strings.Count(text, "image:") != images {
					t.Errorf("the hydrated job has another container than the published one's:\n%s", text)
				}
				envFrom := "envFrom:"
				if obj["kind"] == "TrainJob" {
					envFrom = "configMapKeyRef:" // its trainer has no envFrom
				}
				if !strings.Contains(text, envFrom) {
					t.Errorf("the user's containers got no %s\n%s", envFrom, text)
				}
				// The accelerator and /dev/shm of mlops.env reach the job.
				for _, line := range strings.Split(p.env, "\n") {
					key, value, _ := strings.Cut(line, "=")
					want := map[string]string{"GPU_RESOURCE": value + ": ", "SHM_SIZE": "sizeLimit: " + value}[key]
					if want != "" && !strings.Contains(text, want) {
						t.Errorf("%s=%s: the job has no %q:\n%s", key, value, want, text)
					}
				}
			}
		})
	}
}
