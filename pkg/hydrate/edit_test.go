// SPDX-License-Identifier: Apache-2.0

package hydrate

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/mlops-fn/mlops-fn/internal/testutil"
	"github.com/mlops-fn/mlops-fn/pkg/env"
	"github.com/mlops-fn/mlops-fn/pkg/kinds"
)

// editValues are a valid value for each documented key that differs from
// the quickstart's, and one for a key mlops-fn does not know.
var editValues = map[string]string{
	"REGISTRY": "ghcr.io/team", "DATASET_DIR": "/data2", "MODEL_DIR": "/Users/models/bert", "OUTPUT_DIR": "/Users/out2",
	"MODEL_NAME": "bert", "MODEL_SCRIPT": "train2.sh", "NFS_SERVER": "10.1.2.3", "NFS_PATH": "/export/other",
	"NFS_MOUNT_PATH": "/mnt/nfs", "USER_ID": "4242", "USER_NAME": "alice", "GROUP_ID": "4343", "GROUP_NAME": "alice",
	"FS_GROUP": "4444", "WORKERS": "8", "GPUS_PER_WORKER": "4", "SLOTS_PER_WORKER": "2", "CPU": "8", "MEMORY": "32Gi",
	"MIN_WORKERS": "1", "MAX_WORKERS": "9", "RDZV_ENDPOINT": "etcd.example:2379", "UNKNOWN_KEY": "1",
	"GPU_RESOURCE": "amd.com/gpu", "SHM_SIZE": "1Gi", "QUEUE": "team-b",
	"TOPOLOGY_REQUIRED": "cloud.provider.com/topology-block", "TOPOLOGY_PREFERRED": "cloud.provider.com/topology-rack",
}

// copyTree copies a folder, symbolic links as links.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	if err := testutil.CopyTree(from, to); err != nil {
		t.Fatal(err)
	}
}

// quickstartCopy copies the repository's quickstart and gives the overlay of topology in it.
func quickstartCopy(t *testing.T, topology string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "quickstart")
	copyTree(t, "../../quickstart", root)
	return filepath.Join(root, "k8s", "mlops", topology)
}

// edit is a change a user makes without running hydrate.
type edit struct {
	name  string
	apply func(dir string) bool // false: does not apply to this overlay
}

func editEnv(key, how string) edit {
	return edit{name: how + " " + key, apply: func(dir string) bool {
		path := filepath.Join(dir, "mlops.env")
		data, _ := os.ReadFile(path)
		lines := strings.Split(string(data), "\n")
		at := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, key+"=") })
		switch {
		case how == "change" && at >= 0:
			lines[at] = key + "=" + editValues[key]
		case how == "remove" && at >= 0:
			lines = slices.Delete(lines, at, at+1)
		case how == "add" && at < 0:
			lines = append(lines[:len(lines)-1], key+"="+editValues[key], "")
		default:
			return false
		}
		return os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644) == nil
	}}
}

// editBase edits the job's skeleton in the quickstart's base: change gets
// its text, and says whether it changed anything.
func editBase(name string, change func(string) (string, bool)) edit {
	return edit{name: name, apply: func(dir string) bool {
		files, _ := filepath.Glob(filepath.Join(dir, "..", "..", "..", "common", "tensorflow", "k8s", "mlops", filepath.Base(dir), "*.yaml"))
		for _, path := range files {
			data, _ := os.ReadFile(path)
			if filepath.Base(path) == "kustomization.yaml" {
				continue
			}
			if text, ok := change(string(data)); ok {
				return os.WriteFile(path, []byte(text), 0o644) == nil
			}
		}
		return false
	}}
}

func replaceAll(old, replacement string) func(string) (string, bool) {
	return func(text string) (string, bool) {
		return strings.ReplaceAll(text, old, replacement), strings.Contains(text, old)
	}
}

// sidecarFirst puts a container before the first of each containers list.
func sidecarFirst(text string) (string, bool) {
	lines := strings.Split(text, "\n")
	var out []string
	changed := false
	for i, l := range lines {
		out = append(out, l)
		if strings.TrimSpace(l) == "containers:" && i+1 < len(lines) {
			indent := lines[i+1][:len(lines[i+1])-len(strings.TrimLeft(lines[i+1], " "))]
			out = append(out, indent+"- {name: sidecar, image: busybox}")
			changed = true
		}
	}
	return strings.Join(out, "\n"), changed
}

// editFile replaces old by replacement, once, in the file at path (relative
// to the overlay folder).
func editFile(name, path, old, replacement string) edit {
	return edit{name: name, apply: func(dir string) bool {
		p := filepath.Join(dir, filepath.FromSlash(path))
		data, _ := os.ReadFile(p)
		if !bytes.Contains(data, []byte(old)) {
			return false
		}
		return os.WriteFile(p, bytes.Replace(data, []byte(old), []byte(replacement), 1), 0o644) == nil
	}}
}

// privilegedFirst makes the first container of each containers list privileged.
func privilegedFirst(text string) (string, bool) {
	lines := strings.Split(text, "\n")
	var out []string
	changed := false
	for i, l := range lines {
		out = append(out, l)
		if i > 0 && strings.TrimSpace(lines[i-1]) == "containers:" && strings.HasPrefix(strings.TrimSpace(l), "- ") {
			indent := l[:len(l)-len(strings.TrimLeft(l, " "))]
			out = append(out, indent+"  securityContext: {privileged: true}")
			changed = true
		}
	}
	return strings.Join(out, "\n"), changed
}

// editBaseKustomization changes the kustomization of the quickstart's base.
func editBaseKustomization(name string, change func(string) string) edit {
	return edit{name: name, apply: func(dir string) bool {
		path := filepath.Join(dir, "..", "..", "..", "common", "tensorflow", "k8s", "mlops", filepath.Base(dir), "kustomization.yaml")
		data, err := os.ReadFile(path)
		return err == nil && os.WriteFile(path, []byte(change(string(data))), 0o644) == nil
	}}
}

func editSpec(name, old, replacement string) edit {
	return edit{name: name, apply: func(dir string) bool {
		path := filepath.Join(dir, "job.yaml")
		data, _ := os.ReadFile(path)
		if !bytes.Contains(data, []byte(old)) {
			return false
		}
		return os.WriteFile(path, bytes.Replace(data, []byte(old), []byte(replacement), 1), 0o644) == nil
	}}
}

// TestEditWithoutHydrate is what a user does: edit mlops.env, job.yaml or the
// base's job in a hydrated quickstart overlay and build it with kubectl,
// without running hydrate. For every documented key and an unknown one (changed, removed,
// added) and for edits of the job spec, the build either equals a fresh
// hydrate's or fails saying to run hydrate; never exit 0 with objects that
// disagree with the inputs. It builds with kustomize's own code (kubectl's
// options) and, where kubectl is installed, with kubectl kustomize too.
func TestEditWithoutHydrate(t *testing.T) {
	t.Parallel()
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Log("kubectl is not installed: the builds run in process only (CI installs kubectl)")
	}
	var edits []edit
	keys := []string{"UNKNOWN_KEY"}
	for _, doc := range env.KnownKeys() {
		keys = append(keys, doc.Key)
	}
	for _, k := range keys {
		if editValues[k] == "" {
			t.Fatalf("no edit value for %s: add one to editValues", k)
		}
		for _, how := range []string{"change", "remove", "add"} {
			edits = append(edits, editEnv(k, how))
		}
	}
	edits = append(edits,
		editSpec("rename the job", "name: resnet50-", "name: bert-"),
		editSpec("add a namespace", "metadata:\n", "metadata:\n  namespace: ml\n"),
		editSpec("add a label", "metadata:\n", "metadata:\n  labels: {kueue.x-k8s.io/queue-name: team}\n"),
		editSpec("switch to single-node", "jobKind: MPIJob", "jobKind: Pod"),
		editSpec("switch to multi-node", "jobKind: Pod", "jobKind: MPIJob"),
		editSpec("change the image", "image: ${REGISTRY}/", "image: ${REGISTRY}/other/"),
		editSpec("add a comment", "spec:\n", "# a comment\nspec:\n"),
		editSpec("append after a blank line", "path: /export/datasets\n", "path: /export/datasets\n\n  workers: 3\n"),
		editSpec("set workers in the spec", "spec:\n", "spec:\n  workers: 5\n"),
		editBase("rename the base's containers", replaceAll("- name: resnet50-training", "- name: trainer")),
		editBase("rename the base's pytorch container", replaceAll("- name: pytorch", "- name: torch")),
		editBase("rename the base's job", replaceAll("  name: resnet50-", "  name: other-")),
		editBase("add a container before the base's", sidecarFirst),
		editBase("change the base job's apiVersion", replaceAll("kubeflow.org/v2beta1", "kubeflow.org/v1")),
		editBaseKustomization("move the base into a namespace", func(k string) string { return "namespace: ml\n" + k }),
		editBase("make the base's containers privileged", privilegedFirst),
		editFile("lose the component's line in a merge", "kustomization.yaml", "- mlops-fn # mlops-fn hydrate", "# - mlops-fn"),
		editFile("add a literal to the env generator", "kustomization.yaml", "  envs:\n  - mlops.env\n", "  envs:\n  - mlops.env\n  literals:\n  - TEAM=vision\n"),
		editFile("add a known key as a literal", "kustomization.yaml", "  envs:\n  - mlops.env\n", "  envs:\n  - mlops.env\n  literals:\n  - QUEUE=team-b\n"),
		edit{"add a second env file", func(dir string) bool {
			return os.WriteFile(filepath.Join(dir, "team.env"), []byte("TEAM=vision\n"), 0o644) == nil &&
				editFile("", "kustomization.yaml", "  envs:\n  - mlops.env\n", "  envs:\n  - mlops.env\n  - team.env\n").apply(dir)
		}},
		editFile("no hash on the env ConfigMap's name", "kustomization.yaml", "disableNameSuffixHash: false", "disableNameSuffixHash: true"),
		edit{"drop mlops.env's final newline", func(dir string) bool {
			path := filepath.Join(dir, "mlops.env")
			data, _ := os.ReadFile(path)
			return bytes.HasSuffix(data, []byte("\n")) && os.WriteFile(path, bytes.TrimSuffix(data, []byte("\n")), 0o644) == nil
		}},
		edit{"comment out every line of mlops.env", func(dir string) bool {
			path := filepath.Join(dir, "mlops.env")
			data, _ := os.ReadFile(path)
			lines := strings.Split(string(data), "\n")
			for i, l := range lines {
				if l != "" && !strings.HasPrefix(l, "#") {
					lines[i] = "# " + l
				}
			}
			return os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644) == nil
		}},
	)
	var mu sync.Mutex
	counts := map[string]int{}
	// After the parallel subtests.
	t.Cleanup(func() {
		t.Logf("outcomes: %v", counts)
		if counts["refused"] < len(edits) {
			t.Errorf("want most edits refused, got %v", counts)
		}
	})
	for _, topology := range testutil.QuickstartFolders() {
		for _, e := range edits {
			t.Run(topology+"/"+e.name, func(t *testing.T) {
				t.Parallel()
				outcome := staleBuild(t, kubectl, func(t *testing.T) string { return quickstartCopy(t, topology) }, e)
				mu.Lock()
				defer mu.Unlock()
				counts[outcome]++
			})
		}
	}
}

// TestEditKeptLauncherWithoutHydrate: a user's own MPIJob whose launcher
// keeps its mpirun line (the spec has no command), edited after hydrate
// where the function reads it: the build equals a fresh hydrate's or fails
// saying to run hydrate.
func TestEditKeptLauncherWithoutHydrate(t *testing.T) {
	t.Parallel()
	kubectl, _ := exec.LookPath("kubectl")
	base := "../base/skeleton.yaml"
	for _, e := range []edit{
		editFile("slotsPerWorker", base, "slotsPerWorker: 1", "slotsPerWorker: 2"),
		editFile("runLauncherAsWorker", base, "\nspec:\n", "\nspec:\n  runLauncherAsWorker: true\n"),
		editFile("mpiImplementation", base, "\nspec:\n", "\nspec:\n  mpiImplementation: Intel\n"),
		editFile("hosts in the mpirun line", base, "            - /home/mpiuser/pi\n", "            - -H\n            - a,b\n            - /home/mpiuser/pi\n"),
		editFile("the rank count moved into the command", base, "            - mpirun\n            args:\n            - -n\n            - \"2\"\n", "            - mpirun\n            - -n\n            - \"2\"\n            args:\n"),
		editFile("a worker made privileged", base, "              runAsUser: 1000\n            command:\n            - /usr/sbin/sshd", "              runAsUser: 1000\n              privileged: true\n            command:\n            - /usr/sbin/sshd"),
	} {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			staleBuild(t, kubectl, func(t *testing.T) string {
				root, _ := overlay(t, "site-settings-published-pi")
				return filepath.Join(root, "overlay")
			}, e)
		})
	}
}

// staleBuild makes two hydrated overlays with mk, edits both, hydrates one
// and builds the other, stale, with kustomize's code and kubectl (where
// installed), and judges the stale build.
func staleBuild(t *testing.T, kubectl string, mk func(t *testing.T) string, e edit) string {
	t.Helper()
	stale := mk(t)
	if !e.apply(stale) {
		t.Skip("does not apply to this overlay")
	}
	fresh := mk(t)
	e.apply(fresh)
	var want []*yaml.RNode
	ov, err := Render(Options{Dir: fresh})
	if err == nil {
		err = ov.Write()
	}
	if err == nil {
		if want, err = stagedBuild(fresh, nil, nil); err != nil {
			t.Fatalf("the freshly hydrated overlay does not build: %v", err)
		}
	}
	got, buildErr := stagedBuild(stale, nil, nil)
	outcome := judge(t, "kustomize", want, got, buildErr)
	if kubectl == "" {
		return outcome
	}
	cmd := exec.Command(kubectl, "kustomize", stale)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		judge(t, "kubectl", want, nil, &cmdError{err, stderr.String()})
		return outcome
	}
	nodes, err := kio.FromBytes(out)
	if err != nil {
		t.Fatal(err)
	}
	judge(t, "kubectl", want, nodes, nil)
	return outcome
}

type cmdError struct {
	err    error
	stderr string
}

func (e *cmdError) Error() string { return e.err.Error() + ": " + e.stderr }

// judge passes a stale build that failed saying to run hydrate, or that
// equals the fresh hydrate's (want nil: hydrate refused the edit).
func judge(t *testing.T, builder string, want, got []*yaml.RNode, buildErr error) string {
	t.Helper()
	if buildErr != nil {
		// Only a base that no longer holds the job under its name, which
		// hydrate refuses too, fails in kustomize's words: the job it does
		// not find.
		if !strings.Contains(buildErr.Error(), "run mlops-fn hydrate on this folder") && (want != nil || !strings.Contains(buildErr.Error(), "nothing selected by")) {
			t.Errorf("%s: the stale build fails without saying to run hydrate: %v", builder, buildErr)
		}
		return "refused"
	}
	if want == nil {
		t.Errorf("%s: hydrate refuses the edited inputs, yet the stale overlay builds with exit 0", builder)
		return "wrong"
	}
	diff, err := difference(want, got)
	if err != nil {
		t.Fatal(err)
	}
	if diff != "" {
		t.Errorf("%s: the stale build exits 0 and differs from a fresh hydrate's (-fresh +stale):\n%s", builder, diff)
		return "wrong"
	}
	return "equal"
}

// TestCRLFCheckoutBuilds: a checkout that turned every line end of the
// inputs into CRLF (git's core.autocrlf on Windows) builds the same objects:
// the guard compares values, not lines.
func TestCRLFCheckoutBuilds(t *testing.T) {
	t.Parallel()
	for _, topology := range testutil.QuickstartFolders() {
		t.Run(topology, func(t *testing.T) {
			t.Parallel()
			dir := quickstartCopy(t, topology)
			want, err := stagedBuild(dir, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{"mlops.env", "job.yaml", "kustomization.yaml"} {
				path := filepath.Join(dir, f)
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if bytes.Contains(data, []byte("\r")) {
					t.Fatalf("%s has CRs already", f)
				}
				if err := os.WriteFile(path, bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n")), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := stagedBuild(dir, nil, nil)
			if err != nil {
				t.Fatalf("the CRLF checkout does not build: %v", err)
			}
			if diff, err := difference(want, got); err != nil || diff != "" {
				t.Errorf("the CRLF checkout builds other objects (%v) (-LF +CRLF):\n%s", err, diff)
			}
		})
	}
}

// TestGuardIsSmall: the guard grows with what it checks (the two files, the
// base's job), not with their lines: in every committed overlay at most ten
// times mlops.env and the job spec together, plus 4 KB for its own text
// (selectors and messages), and in the quickstart ten times (issue 26's
// measure). And the multi-node quickstart's mlops-fn/ beside the job's patch
// is at most half of its 14,065 bytes when issue 46 was filed.
func TestGuardIsSmall(t *testing.T) {
	t.Parallel()
	machinery := 0
	err := filepath.WalkDir("../../quickstart/k8s/mlops/multi-node/"+ComponentDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(path, "-patch.yaml") {
			return err
		}
		info, err := d.Info()
		if err == nil {
			machinery += int(info.Size())
		}
		return err
	})
	if err != nil || machinery == 0 || machinery > 14065/2 {
		t.Errorf("the multi-node quickstart's %s/ holds %d bytes beside the job's patch (%v); want at most %d", ComponentDir, machinery, err, 14065/2)
	}
	for _, dir := range committedOverlays(t) {
		inputs, guard := 0, 0
		for _, f := range []string{"mlops.env", "job.yaml"} {
			st, err := os.Stat(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			inputs += int(st.Size())
		}
		component, err := os.ReadFile(filepath.Join(dir, ComponentDir, componentFile))
		if err != nil {
			t.Fatal(err)
		}
		if guard, err = GuardSize(component); err != nil {
			t.Fatal(err)
		}
		limit := 10*inputs + 4096
		if strings.Contains(dir, "quickstart") {
			limit = 10 * inputs
		}
		if guard == 0 || guard > limit {
			t.Errorf("%s: the guard is %d bytes for %d bytes of mlops.env and job.yaml; want at most %d", dir, guard, inputs, limit)
		}
	}
}

// TestDocsQuoteTheStaleBuild: docs/hydrate.md quotes what a stale build of the
// multi-node quickstart prints, byte for byte but the folder's absolute path:
// `kubectl apply -k` where kubectl is installed, and kustomize's own error
// after kubectl's "error: ".
func TestDocsQuoteTheStaleBuild(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/hydrate.md")
	if err != nil {
		t.Fatal(err)
	}
	_, quote, ok := strings.Cut(string(doc), "<!-- stale-build")
	quote, _, closed := strings.Cut(quote, "<!-- /stale-build -->")
	_, quote, fenced := strings.Cut(quote, "```\n")
	quote, _, _ = strings.Cut(quote, "```")
	if !ok || !closed || !fenced {
		t.Fatal("docs/hydrate.md has no <!-- stale-build --> block")
	}
	dir := quickstartCopy(t, "multi-node")
	if !editEnv("WORKERS", "change").apply(dir) {
		t.Fatal("the multi-node quickstart has no WORKERS")
	}
	elide := func(s string) string {
		return strings.ReplaceAll(s, filepath.Dir(dir)+string(filepath.Separator), "…/")
	}
	_, err = stagedBuild(dir, nil, nil)
	if err == nil {
		t.Fatal("the stale quickstart builds")
	}
	if got := elide("error: " + err.Error() + "\n"); got != quote {
		t.Errorf("docs/hydrate.md quotes\n%s\nkustomize's error, as kubectl prints it, is\n%s", quote, got)
	}
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not installed (CI installs it)")
	}
	cmd := exec.Command(kubectl, "apply", "-k", dir, "--dry-run=client")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+filepath.Join(t.TempDir(), "none"))
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatal("kubectl applies the stale quickstart")
	}
	if got := elide(string(out)); got != quote {
		t.Errorf("docs/hydrate.md quotes\n%s\nkubectl apply -k prints\n%s", quote, got)
	}
}

// TestAppliedBuildsWithoutTheGuard: after an edit that was not hydrated,
// Applied (what mlops-fn delete deletes) still builds the job the last
// hydrate wrote, and neither the guard's object nor the job spec.
func TestAppliedBuildsWithoutTheGuard(t *testing.T) {
	t.Parallel()
	for _, k := range kinds.All {
		topology := testutil.QuickstartFolder[k.JobKind()]
		t.Run(topology, func(t *testing.T) {
			t.Parallel()
			dir := quickstartCopy(t, topology)
			if !editEnv("CPU", "change").apply(dir) {
				t.Fatal("the quickstart has no CPU")
			}
			if _, err := stagedBuild(dir, nil, nil); err == nil {
				t.Fatal("the edited overlay builds")
			}
			items, err := Applied(dir)
			if err != nil {
				t.Fatal(err)
			}
			kinds := map[string]int{}
			for _, it := range items {
				kinds[it.GetKind()]++
			}
			if kinds[k.Kind] != 1 || kinds["ConfigMap"] != 1 || kinds[specKind] != 0 {
				t.Errorf("Applied builds %v; want the job and its env ConfigMap", kinds)
			}
		})
	}
}

// TestHandRemovedEntries: one of hydrate's entries deleted from the
// kustomization by hand. The build fails (saying to run hydrate where the
// component is gone; in kustomize's words where the guard cannot read what
// the entry made, docs/hydrate.md) or, for the check of the component
// alone, builds the same objects; `hydrate --check` (Stale) names the
// kustomization, and hydrate writes the entry back.
func TestHandRemovedEntries(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, entry, message string
	}{
		{"the env generator", "- name: resnet50-training-mpijob-env # mlops-fn hydrate: mlops.env for the job's containers\n  envs:\n  - mlops.env\n  options:\n    disableNameSuffixHash: false\n", "nothing selected by ConfigMap.[noVer].[noGrp]/resnet50-training-mpijob-env.[noNs]:data"},
		{"the inputs generator", "- name: resnet50-training-mlops-fn-inputs # mlops-fn hydrate: mlops.env as the guard compares it\n  envs:\n  - mlops.env\n", "nothing selected by ConfigMap.[noVer].[noGrp]/resnet50-training-mlops-fn-inputs.[noNs]:data.[mlops-fn.hydrate.entries]"},
		{"the job spec", "- job.yaml # mlops-fn hydrate: the job spec, which the guard compares (local-config: never applied)\n", "nothing selected by MLOpsJob"},
		{"the component", "- mlops-fn # mlops-fn hydrate: the job's patches, written by mlops-fn hydrate\n", "testing value /kustomization.yaml lists no mlops-fn in components: run mlops-fn hydrate on this folder; check failed"},
		{"the check of the component", "- path: mlops-fn/listed.yaml # mlops-fn hydrate: fails the build when components: lacks mlops-fn\n  target:\n    kind: MLOpsJob\n", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := quickstartCopy(t, "multi-node")
			want, err := stagedBuild(dir, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "kustomization.yaml")
			k, _ := os.ReadFile(path)
			if !bytes.Contains(k, []byte(c.entry)) {
				t.Fatalf("kustomization.yaml lacks %q:\n%s", c.entry, k)
			}
			entry := c.entry
			if c.name == "the inputs generator" {
				// The whole entry, to the components that follow it.
				i := bytes.Index(k, []byte(c.entry))
				entry = string(k[i : i+bytes.Index(k[i:], []byte("components:"))])
			}
			write(t, path, strings.Replace(string(k), entry, "", 1))
			got, err := stagedBuild(dir, nil, nil)
			switch {
			case c.message == "" && err != nil:
				t.Errorf("the build fails: %v", err)
			case c.message == "":
				if diff, _ := difference(want, got); diff != "" {
					t.Errorf("the build differs (-hydrated +edited):\n%s", diff)
				}
			case err == nil || !strings.Contains(err.Error(), c.message):
				t.Errorf("want a build failing with %q, got %v", c.message, err)
			}
			ov, err := Render(Options{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			if stale := ov.Stale(); !slices.Contains(stale, "kustomization.yaml") {
				t.Errorf("hydrate --check names %v, not kustomization.yaml", stale)
			}
			if err := ov.Write(); err != nil {
				t.Fatal(err)
			}
			if k, _ := os.ReadFile(path); !bytes.Contains(k, []byte(c.entry)) {
				t.Errorf("hydrate did not write the entry back:\n%s", k)
			}
			if _, err := stagedBuild(dir, nil, nil); err != nil {
				t.Errorf("hydrated again, the overlay does not build: %v", err)
			}
		})
	}
}
