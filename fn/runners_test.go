// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/api/hasher"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/mlops-fn/mlops-fn/internal/testutil"
	"github.com/mlops-fn/mlops-fn/pkg/jobspec"
	"github.com/mlops-fn/mlops-fn/pkg/kinds"
	"github.com/mlops-fn/mlops-fn/pkg/processor"
)

// The runner tests drive the real kustomize, kpt, kubectl and Docker on the
// quickstart, from the repository root as the README's commands are written
// (a copy of it: see TestMain). A missing tool skips its runner with the
// command that installs it.

var (
	buildOnce sync.Once
	buildErr  error
	imageOnce sync.Once
	imageErr  error
)

// binary builds bin/mlops-fn in the copy, the path the quickstart's exec configs name.
func binary(t *testing.T) {
	t.Helper()
	buildOnce.Do(func() {
		out, err := exec.Command("go", "build", "-o", filepath.Join(repoRoot, "bin", "mlops-fn"), "./mlops-fn").CombinedOutput()
		if err != nil {
			buildErr = &commandError{"go build", string(out), err}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
}

// withMutator rewrites the Kptfile of the package pkg to run mutator (the
// local build) instead of the released image the committed packages name
// (metadata.yaml's), and returns what puts it back.
func withMutator(t *testing.T, pkg, mutator string) (restore func()) {
	t.Helper()
	file := filepath.Join(pkg, "Kptfile")
	released, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	line := "  - image: " + releasedImage(t) + "\n"
	local := strings.Replace(string(released), line, "  - "+mutator+"\n", 1)
	if local == string(released) {
		t.Fatalf("%s runs no %q:\n%s", file, line, released)
	}
	write := func(data []byte) {
		t.Helper()
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write([]byte(local))
	return func() { write(released) }
}

// image builds localhost/mlops-fn:dev with `make image` when a Docker daemon answers.
func image(t *testing.T) {
	t.Helper()
	if err := exec.Command("docker", "info").Run(); err != nil {
		t.Skip("no Docker daemon answers `docker info`: container runners not tested")
	}
	binary(t)
	imageOnce.Do(func() {
		out, err := exec.Command("make", "-C", repoRoot, "image", "IMAGE=localhost/mlops-fn:dev").CombinedOutput()
		if err != nil {
			imageErr = &commandError{"make image", string(out), err}
		}
	})
	if imageErr != nil {
		t.Fatal(imageErr)
	}
}

type commandError struct {
	cmd, output string
	err         error
}

func (e *commandError) Error() string { return e.cmd + ": " + e.err.Error() + "\n" + e.output }

// tool finds a runner's binary on PATH or in GOPATH/bin, or skips.
func tool(t *testing.T, name, install string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if gopath, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		p := filepath.Join(strings.TrimSpace(string(gopath)), "bin", name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skipf("%s not found: %s (.ci/run installs it)", name, install)
	return ""
}

func kustomizeBin(t *testing.T) string {
	return tool(t, "kustomize", "go install sigs.k8s.io/kustomize/kustomize/v5@v5.8.2")
}

func kptBin(t *testing.T) string {
	return tool(t, "kpt", "install kpt v1.0.0-beta.56 from github.com/kptdev/kpt releases")
}

// run runs a command in the repository root and returns its stdout.
func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = repoRoot
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// objects indexes the job's objects (MPIJob or Pod, and the ConfigMap) by
// kind/name, without the runners' bookkeeping annotations.
// envHash is kustomize's hash at the end of an env ConfigMap's name.
var envHash = regexp.MustCompile(`\b(\S+-(?:mpijob|pod|pytorchjob|trainjob|jobset)-env)-[a-z0-9]{10}\b`)

func objects(t *testing.T, out string) map[string]map[string]any {
	t.Helper()
	// The env ConfigMap is named by kustomize's hash of its data, by every
	// runner alike: the name, compared below, is that hash's.
	nodes, err := (&kio.ByteReader{Reader: strings.NewReader(out), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatalf("output does not parse: %v\n%s", err, out)
	}
	for _, n := range nodes {
		m := envHash.FindStringSubmatch(n.GetName())
		if n.GetKind() != "ConfigMap" || m == nil || m[0] != n.GetName() {
			continue
		}
		plain := n.Copy()
		if err := plain.SetName(m[1]); err != nil {
			t.Fatal(err)
		}
		if h, err := new(hasher.Hasher).Hash(plain); err != nil || n.GetName() != m[1]+"-"+h {
			t.Errorf("ConfigMap/%s: the name is not %s and kustomize's hash of its data, %s (%v)", n.GetName(), m[1], h, err)
		}
	}
	got := map[string]map[string]any{}
	for _, n := range nodes {
		if n.GetKind() != "ConfigMap" && !kinds.All.Is(n.GetKind()) {
			continue
		}
		annotations := n.GetAnnotations()
		if annotations["config.kubernetes.io/local-config"] == "true" {
			continue // a package's input (mlops.env as a ConfigMap): no runner applies it
		}
		for k := range annotations {
			if k == "mlops-fn.dev/generated-by" || strings.Contains(k, "config.kubernetes.io/") || strings.Contains(k, "config.k8s.io/") {
				delete(annotations, k)
			}
		}
		if err := n.SetAnnotations(annotations); err != nil {
			t.Fatal(err)
		}
		m, err := n.Map()
		if err != nil {
			t.Fatal(err)
		}
		if md := m["metadata"].(map[string]any); len(annotations) == 0 {
			delete(md, "annotations")
		}
		got[n.GetKind()+"/"+n.GetName()] = m
	}
	if len(got) != 2 {
		t.Fatalf("want the job and its ConfigMap, got %d objects:\n%s", len(got), out)
	}
	return got
}

// readPackage concatenates a kpt package's resources, without the Kptfile and the job spec.
func readPackage(t *testing.T, dir string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	var b strings.Builder
	for _, f := range files {
		if filepath.Base(f) == "job.yaml" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("---\n")
		b.Write(data)
	}
	return b.String()
}

// copyPackage copies a kpt package's files (only those named, if any) into a new folder.
func copyPackage(t *testing.T, from, to string, only []string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if only != nil && !slices.Contains(only, e.Name()) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// readFiles is a package's every file by name, the Kptfile and inputs included.
func readFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = string(data)
	}
	return files
}

// onPath is the environment with dir first on PATH.
func onPath(dir string) []string {
	return append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// runIn runs a command in dir, with env (nil: the test's own), and returns its stdout.
func runIn(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s (in %s): %v\n%s", name, strings.Join(args, " "), dir, err, stderr.String())
	}
	return stdout.String()
}

// tempPackage is a folder for kpt under the repository's bin/ (git-ignored),
// named relative to the root so kpt's exec paths resolve as documented.
func tempPackage(t *testing.T) (rel, abs string) {
	t.Helper()
	dir, err := os.MkdirTemp(filepath.Join(repoRoot, "bin"), "kpt-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	rel, _ = filepath.Rel(repoRoot, dir)
	return rel, dir
}

// TestRunnersAgree renders each quickstart overlay with every runner and
// compares the objects with what `kubectl apply -k` applies.
func TestRunnersAgree(t *testing.T) {
	for _, k := range kinds.All {
		topology := testutil.QuickstartFolder[k.JobKind()]
		t.Run(topology, func(t *testing.T) {
			overlay := "quickstart/k8s/mlops/" + topology
			kubectl := tool(t, "kubectl", "install kubectl v1.32")
			want := objects(t, run(t, kubectl, "kustomize", overlay))
			check := func(t *testing.T, out string) {
				t.Helper()
				if diff := cmp.Diff(want, objects(t, out)); diff != "" {
					t.Errorf("differs from kubectl apply -k (-kubectl +runner):\n%s", diff)
				}
			}
			t.Run("kustomize hydrated", func(t *testing.T) {
				check(t, run(t, kustomizeBin(t), "build", overlay))
			})
			t.Run("kustomize exec", func(t *testing.T) {
				binary(t)
				check(t, run(t, kustomizeBin(t), "build", "--enable-alpha-plugins", "--enable-exec", overlay+"/kustomize-exec"))
			})
			t.Run("krusty exec", func(t *testing.T) {
				binary(t)
				opts := krusty.MakeDefaultOptions()
				opts.PluginConfig = types.EnabledPluginConfig(types.BploUseStaticallyLinked)
				opts.PluginConfig.FnpLoadingOptions.EnableExec = true
				m, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), filepath.Join(repoRoot, overlay, "kustomize-exec"))
				if err != nil {
					t.Fatal(err)
				}
				out, err := m.AsYaml()
				if err != nil {
					t.Fatal(err)
				}
				check(t, string(out))
			})
			t.Run("kustomize container", func(t *testing.T) {
				image(t)
				check(t, run(t, kustomizeBin(t), "build", "--enable-alpha-plugins", "--load-restrictor", "LoadRestrictionsNone", overlay+"/kustomize-container"))
			})
			t.Run("kpt render exec", func(t *testing.T) {
				// The package as a user copies it, out of the repository, rendered
				// from elsewhere: kpt looks up exec: mlops-fn on PATH.
				kpt := kptBin(t)
				binary(t)
				committed := filepath.Join(repoRoot, "quickstart/kpt", topology)
				pkg := filepath.Join(t.TempDir(), topology)
				copyPackage(t, committed, pkg, nil)
				render := func() {
					t.Helper()
					// Rendered with exec: mlops-fn, the Kptfile then put back as committed.
					restore := withMutator(t, pkg, "exec: mlops-fn")
					runIn(t, t.TempDir(), onPath(filepath.Join(repoRoot, "bin")), kpt, "fn", "render", pkg, "--allow-exec")
					restore()
				}
				render()
				first := readFiles(t, pkg)
				check(t, readPackage(t, pkg))
				if diff := cmp.Diff(readFiles(t, committed), first); diff != "" {
					t.Errorf("quickstart/kpt/%s is stale: render it again with the local build as its mutator (d=quickstart/kpt/%s; sed -i 's|- image: .*|- exec: mlops-fn|' $d/Kptfile && PATH=$PWD/bin:$PATH kpt fn render $d --allow-exec; git checkout $d/Kptfile) (-committed +rendered):\n%s", topology, topology, diff)
				}
				render()
				if diff := cmp.Diff(first, readFiles(t, pkg)); diff != "" {
					t.Errorf("the second render changed the package (-first +second):\n%s", diff)
				}

				// A job renamed in job.yaml replaces the old one: kpt hands the
				// function the package's job spec, so the old job's files go.
				spec := filepath.Join(pkg, "job.yaml")
				text, err := os.ReadFile(spec)
				if err != nil {
					t.Fatal(err)
				}
				name := regexp.MustCompile(`(?m)^metadata:\n  name: (\S+)$`).FindStringSubmatch(string(text))
				if name == nil {
					t.Fatalf("job.yaml names no job:\n%s", text)
				}
				if err := os.WriteFile(spec, []byte(strings.Replace(string(text), name[0], name[0]+"-v2", 1)), 0o644); err != nil {
					t.Fatal(err)
				}
				restore := withMutator(t, pkg, "exec: mlops-fn")
				cmd := exec.Command(kpt, "fn", "render", pkg, "--allow-exec")
				cmd.Dir, cmd.Env = t.TempDir(), onPath(filepath.Join(repoRoot, "bin"))
				out, err := cmd.CombinedOutput()
				restore()
				if err != nil {
					t.Fatalf("kpt fn render after the rename: %v\n%s", err, out)
				}
				// mlops-fn's files follow the name; a job file of the user's (a
				// target) stays theirs, and the renamed job is generated beside it;
				// so does the ConfigMap that job still reads, with a warning.
				want := map[string]bool{}
				var kept []string
				for file, content := range first {
					renamed := strings.ReplaceAll(file, name[1], name[1]+"-v2")
					switch {
					case strings.Contains(content, processor.GeneratedBy):
						want[renamed] = true
						cm, isCM := strings.CutPrefix(strings.TrimSuffix(file, ".yaml"), "configmap_")
						if isCM && slices.ContainsFunc(slices.Collect(maps.Values(first)), func(c string) bool {
							return !strings.Contains(c, processor.GeneratedBy) && strings.Contains(c, "name: "+cm+"\n")
						}) {
							want[file] = true
							kept = append(kept, "ConfigMap/"+cm+": kept: MLOpsJob "+name[1]+" generated it")
						}
					case renamed != file:
						want[file], want[renamed] = true, true
					default:
						want[file] = true
					}
				}
				if got, want := slices.Sorted(maps.Keys(readFiles(t, pkg))), slices.Sorted(maps.Keys(want)); !slices.Equal(got, want) {
					t.Errorf("after renaming the job %s to %s-v2 and rendering, the package holds %v, want %v", name[1], name[1], got, want)
				}
				for _, k := range kept {
					if !strings.Contains(string(out), k) {
						t.Errorf("kpt's output does not warn %q:\n%s", k, out)
					}
				}
			})
			t.Run("kustomize exec on the kpt package", func(t *testing.T) {
				// The package's two inputs in a kustomization: kustomize hands its
				// transformers the local-config ConfigMap and drops it from the output.
				binary(t)
				dir := filepath.Join(t.TempDir(), topology)
				copyPackage(t, filepath.Join(repoRoot, "quickstart/kpt", topology), dir, []string{"job.yaml", "mlops-env.yaml"})
				job, err := os.ReadFile(filepath.Join(dir, "job.yaml"))
				if err != nil {
					t.Fatal(err)
				}
				fn := "    config.kubernetes.io/local-config: \"true\"\n    config.kubernetes.io/function: |\n      exec:\n        path: " + filepath.Join(repoRoot, "bin", "mlops-fn") + "\n"
				withFn := strings.Replace(string(job), "    config.kubernetes.io/local-config: \"true\"\n", fn, 1)
				if err := os.WriteFile(filepath.Join(dir, "job.yaml"), []byte(withFn), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte("resources:\n- mlops-env.yaml\ntransformers:\n- job.yaml\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				check(t, runIn(t, t.TempDir(), nil, kustomizeBin(t), "build", "--enable-alpha-plugins", "--enable-exec", dir))
			})
			t.Run("kpt eval exec", func(t *testing.T) {
				kpt := kptBin(t)
				binary(t)
				rel, abs := tempPackage(t)
				run(t, kpt, "fn", "eval", "--exec", "bin/mlops-fn", rel, "--", "job="+overlay+"/job.yaml")
				check(t, readPackage(t, abs))
			})
			t.Run("kpt render image", func(t *testing.T) {
				// The package's inputs alone (no output of an exec render), with
				// the image instead of exec: nothing outside the package is read.
				kpt := kptBin(t)
				image(t)
				pkg := filepath.Join(t.TempDir(), topology)
				copyPackage(t, filepath.Join(repoRoot, "quickstart/kpt", topology), pkg, []string{"Kptfile", "job.yaml", "mlops-env.yaml"})
				withMutator(t, pkg, "image: localhost/mlops-fn:dev")
				runIn(t, t.TempDir(), nil, kpt, "fn", "render", pkg, "--image-pull-policy", "never")
				check(t, readPackage(t, pkg))
			})
			t.Run("kpt eval image", func(t *testing.T) {
				// The one line the Kptfile's description gives for the local
				// build: the package's inputs, the released image left named.
				kpt := kptBin(t)
				image(t)
				dir := t.TempDir()
				copyPackage(t, filepath.Join(repoRoot, "quickstart/kpt", topology), filepath.Join(dir, topology), []string{"Kptfile", "job.yaml", "mlops-env.yaml"})
				runIn(t, dir, nil, kpt, "fn", "eval", topology, "--image", "localhost/mlops-fn:dev", "--image-pull-policy", "never", "--fn-config", topology+"/job.yaml")
				check(t, readPackage(t, filepath.Join(dir, topology)))
			})
			t.Run("standalone", func(t *testing.T) {
				binary(t)
				check(t, run(t, "bin/mlops-fn", overlay+"/job.yaml"))
			})
		})
	}
}

// TestKptRefusesTwoSpecsOfOneName: a package whose two mutators' job specs
// share one name (an MPIJob's and a Pod's) would have the second remove the
// first's job without a word; kpt's render fails instead, naming both files,
// and the package stays as it was.
func TestKptRefusesTwoSpecsOfOneName(t *testing.T) {
	kpt := kptBin(t)
	binary(t)
	pkg := filepath.Join(t.TempDir(), "multi-node")
	copyPackage(t, filepath.Join(repoRoot, "quickstart/kpt/multi-node"), pkg, nil)
	edit := func(file, old, new string) {
		t.Helper()
		text, err := os.ReadFile(filepath.Join(pkg, file))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(text), old) {
			t.Fatalf("%s holds no %q", file, old)
		}
		if err := os.WriteFile(filepath.Join(pkg, file), []byte(strings.Replace(string(text), old, new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	spec, err := os.ReadFile(filepath.Join(pkg, "job.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkg, "pod.yaml"), spec, 0o644); err != nil {
		t.Fatal(err)
	}
	edit("pod.yaml", "jobKind: MPIJob", "jobKind: Pod")
	withMutator(t, pkg, "exec: mlops-fn")
	edit("Kptfile", "    configPath: job.yaml\n", "    configPath: job.yaml\n  - exec: mlops-fn\n    configPath: pod.yaml\n")
	before := readFiles(t, pkg)
	cmd := exec.Command(kpt, "fn", "render", pkg, "--allow-exec")
	cmd.Dir, cmd.Env = t.TempDir(), onPath(filepath.Join(repoRoot, "bin"))
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("kpt fn render succeeded:\n%s", out)
	}
	for _, want := range []string{"job.yaml: MLOpsJob/resnet50-training", "pod.yaml: MLOpsJob/resnet50-training", `two MLOpsJobs named "resnet50-training"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("kpt's output does not say %q:\n%s", want, out)
		}
	}
	if diff := cmp.Diff(before, readFiles(t, pkg)); diff != "" {
		t.Errorf("the refused render changed the package (-before +after):\n%s", diff)
	}
}

// TestKustomizeWithoutExecFails: kustomize's defaults, which kubectl apply -k
// uses, refuse the function with a clear error instead of skipping it.
func TestKustomizeWithoutExecFails(t *testing.T) {
	binary(t)
	dir := filepath.Join(repoRoot, "quickstart/k8s/mlops/multi-node/kustomize-exec")
	_, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err == nil || !strings.Contains(err.Error(), "external plugins disabled") {
		t.Fatalf("kustomize's default options: want the error %q, got %v", "external plugins disabled", err)
	}
	kubectl := tool(t, "kubectl", "install kubectl v1.32")
	cmd := exec.Command(kubectl, "kustomize", dir)
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "external plugins disabled") {
		t.Fatalf("kubectl kustomize: want the error %q, got %v:\n%s", "external plugins disabled", err, out)
	}
}

// TestKustomizeSkipsExecSilently pins the trap the README warns about: with
// --enable-alpha-plugins but without --enable-exec, kustomize exits 0 and
// leaves the skeleton unpatched. If kustomize ever fails here instead, the
// README's warning can go.
func TestKustomizeSkipsExecSilently(t *testing.T) {
	binary(t)
	out := run(t, kustomizeBin(t), "build", "--enable-alpha-plugins", "quickstart/k8s/mlops/multi-node/kustomize-exec")
	nodes, err := (&kio.ByteReader{Reader: strings.NewReader(out)}).Read()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if n.GetKind() == "MPIJob" {
			if img, _ := n.Pipe(yaml.Lookup("spec", "mpiReplicaSpecs", "Worker", "template", "spec", "containers", "[name=resnet50-training]", "image")); img != nil {
				t.Fatalf("kustomize now runs exec functions without --enable-exec: drop the README's warning")
			}
			return
		}
	}
	t.Fatalf("no MPIJob in the output:\n%s", out)
}

// TestKptFnDoc: kpt shows the image's --help as the function's documentation.
func TestKptFnDoc(t *testing.T) {
	kpt := kptBin(t)
	image(t)
	out := run(t, kpt, "fn", "doc", "--image", "localhost/mlops-fn:dev")
	for _, want := range []string{"mlops-fn renders", "WORKERS", "Job spec (function config):"} {
		if !strings.Contains(out, want) {
			t.Errorf("kpt fn doc lacks %q:\n%s", want, out)
		}
	}
}

// TestImageRunsLockedDown: the image works as kpt and kustomize run it, and
// tighter still: not root, read-only root filesystem, no network, no
// capabilities, no privilege escalation.
func TestImageRunsLockedDown(t *testing.T) {
	image(t)
	env, err := os.ReadFile(filepath.Join(repoRoot, "quickstart/k8s/mlops/multi-node/mlops.env"))
	if err != nil {
		t.Fatal(err)
	}
	config, err := jobspec.Read(filepath.Join(repoRoot, "quickstart/k8s/mlops/multi-node/job.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := config.PipeE(yaml.Lookup("spec"), yaml.SetField("envFile", yaml.NewMapRNode(&map[string]string{"inline": string(env)}))); err != nil {
		t.Fatal(err)
	}
	var in bytes.Buffer
	if err := (kio.ByteWriter{Writer: &in, WrappingKind: kio.ResourceListKind, WrappingAPIVersion: kio.ResourceListAPIVersion, FunctionConfig: config}).Write(nil); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("docker", "run", "--rm", "-i", "--read-only", "--network", "none", "--user", "65534:65534",
		"--cap-drop", "ALL", "--security-opt", "no-new-privileges", "localhost/mlops-fn:dev")
	cmd.Stdin = &in
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("docker run: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "kind: MPIJob") || !strings.Contains(stdout.String(), "kind: ConfigMap") {
		t.Fatalf("no MPIJob and ConfigMap in the output:\n%s", stdout.String())
	}
}

// TestKustomizeExecAfterNamespaceAndPrefix: kustomize's namespace and
// namePrefix run before a transformer function, so the function finds the
// skeleton renamed (by its previous name) and writes the ConfigMap into the
// job's namespace; one job comes out, patched, referring to the renamed
// ServiceAccount.
func TestKustomizeExecAfterNamespaceAndPrefix(t *testing.T) {
	binary(t)
	_, tmp := tempPackage(t)
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := filepath.Abs(tmp)
	if err != nil {
		t.Fatal(err)
	}
	rel := func(p string) string {
		r, err := filepath.Rel(dir, filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	files := map[string]string{
		"kustomization.yaml": "namespace: ml\nnamePrefix: dev-\nresources:\n- " + rel("quickstart/common/tensorflow/k8s/mlops/multi-node") + "\ntransformers:\n- mlops-fn.yaml\n",
		"mlops-fn.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: mlops-fn\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: " +
			rel("bin/mlops-fn") + "\ndata:\n  job: " + rel("quickstart/k8s/mlops/multi-node/job.yaml") + "\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := run(t, kustomizeBin(t), "build", "--enable-alpha-plugins", "--enable-exec", dir)
	nodes, err := (&kio.ByteReader{Reader: strings.NewReader(out)}).Read()
	if err != nil {
		t.Fatal(err)
	}
	var jobs, configMaps []*yaml.RNode
	for _, n := range nodes {
		switch n.GetKind() {
		case "MPIJob":
			jobs = append(jobs, n)
		case "ConfigMap":
			configMaps = append(configMaps, n)
		}
	}
	if len(jobs) != 1 || jobs[0].GetName() != "dev-resnet50-training" || jobs[0].GetNamespace() != "ml" {
		t.Fatalf("want one MPIJob ml/dev-resnet50-training, got %d:\n%s", len(jobs), out)
	}
	worker := []string{"spec", "mpiReplicaSpecs", "Worker", "template", "spec"}
	for field, want := range map[string]string{"serviceAccountName": "dev-model-service", "containers.[name=resnet50-training].image": ""} {
		path := append(append([]string(nil), worker...), strings.Split(field, ".")...)
		got, err := jobs[0].Pipe(yaml.Lookup(path...))
		if err != nil || got == nil || (want != "" && yaml.GetValue(got) != want) {
			t.Errorf("MPIJob %s: got %v, want %q (empty: any value, i.e. patched)", field, got, want)
		}
	}
	// Named as the hydrated overlay names it: kustomize's hash of the same data.
	if len(configMaps) != 1 || configMaps[0].GetName() != "resnet50-training-mpijob-env-fch26hchkg" || configMaps[0].GetNamespace() != "ml" {
		t.Fatalf("want the ConfigMap ml/resnet50-training-mpijob-env-fch26hchkg, got %d ConfigMaps:\n%s", len(configMaps), out)
	}
}
