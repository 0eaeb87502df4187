package hydrate

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/mlops-fn/mlops-fn/internal/testutil"
	"github.com/mlops-fn/mlops-fn/pkg/env"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
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
}

// copyTree copies a folder, symbolic links as links.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	if err := testutil.CopyTree(from, to); err != nil {
		t.Fatal(err)
	}
}

// quickstartCopy copies the repository's quickstart and gives the overlay of mode in it.
func quickstartCopy(t *testing.T, mode string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "quickstart")
	copyTree(t, "../../quickstart", root)
	return filepath.Join(root, "k8s", "mlops", mode)
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
		editSpec("switch to single-node", "mode: multi-node", "mode: single-node"),
		editSpec("switch to multi-node", "mode: single-node", "mode: multi-node"),
		editSpec("change the image", "image: ${REGISTRY}/", "image: ${REGISTRY}/other/"),
		editSpec("add a comment", "spec:\n", "# a comment\nspec:\n"),
		editSpec("append after a blank line", "path: /export/datasets\n", "path: /export/datasets\n\n  workers: 3\n"),
		editSpec("set workers in the spec", "spec:\n", "spec:\n  workers: 5\n"),
		editBase("rename the base's containers", replaceAll("- name: resnet50-training", "- name: trainer")),
		editBase("rename the base's pytorch container", replaceAll("- name: pytorch", "- name: torch")),
		editBase("rename the base's job", replaceAll("  name: resnet50-", "  name: other-")),
		editBase("add a container before the base's", sidecarFirst),
		editBase("change the base job's apiVersion", replaceAll("kubeflow.org/v2beta1", "kubeflow.org/v1")),
	)
	counts := map[string]int{}
	for _, mode := range jobkind.Modes() {
		for _, e := range edits {
			t.Run(mode+"/"+e.name, func(t *testing.T) {
				stale := quickstartCopy(t, mode)
				if !e.apply(stale) {
					t.Skip("does not apply to this overlay")
				}
				fresh := quickstartCopy(t, mode)
				e.apply(fresh)
				var want []*yaml.RNode
				ov, err := Render(Options{Dir: fresh, Function: fnBinary})
				if err == nil {
					err = ov.Write()
				}
				if err == nil {
					if want, err = stagedBuild(fresh, nil, nil, kubectlOptions()); err != nil {
						t.Fatalf("the freshly hydrated overlay does not build: %v", err)
					}
				}
				got, buildErr := stagedBuild(stale, nil, nil, kubectlOptions())
				outcome := judge(t, "kustomize", want, got, buildErr)
				counts[outcome]++
				if kubectl == "" {
					return
				}
				cmd := exec.Command(kubectl, "kustomize", stale)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				if err != nil {
					judge(t, "kubectl", want, nil, &cmdError{err, stderr.String()})
					return
				}
				nodes, err := kio.FromBytes(out)
				if err != nil {
					t.Fatal(err)
				}
				judge(t, "kubectl", want, nodes, nil)
			})
		}
	}
	t.Logf("outcomes: %v", counts)
	if counts["refused"] < len(edits) {
		t.Errorf("want most edits refused, got %v", counts)
	}
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
		// An edit of the base's job is refused by the guard too, in
		// kustomize's words: the object or container it no longer finds.
		if !strings.Contains(buildErr.Error(), "run mlops-fn hydrate on this folder") && !strings.Contains(buildErr.Error(), filepath.Join(ComponentDir, guardDir)+"'") {
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
	for _, mode := range jobkind.Modes() {
		t.Run(mode, func(t *testing.T) {
			dir := quickstartCopy(t, mode)
			want, err := stagedBuild(dir, nil, nil, kubectlOptions())
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
			got, err := stagedBuild(dir, nil, nil, kubectlOptions())
			if err != nil {
				t.Fatalf("the CRLF checkout does not build: %v", err)
			}
			if diff, err := difference(want, got); err != nil || diff != "" {
				t.Errorf("the CRLF checkout builds other objects (%v) (-LF +CRLF):\n%s", err, diff)
			}
		})
	}
}

// TestGuardIsSmall: the guard grows with the files it checks, not with
// their lines: in every committed overlay at most ten times mlops.env and the
// job spec together, plus 4 KB for its four files' own text (their headers,
// selectors and messages), and in the quickstart ten times (issue 26's
// measure).
func TestGuardIsSmall(t *testing.T) {
	for _, dir := range committedOverlays(t) {
		inputs, guard := 0, 0
		for _, f := range []string{"mlops.env", "job.yaml"} {
			st, err := os.Stat(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			inputs += int(st.Size())
		}
		err := filepath.WalkDir(filepath.Join(dir, ComponentDir, guardDir), func(_ string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			info, err := d.Info()
			guard += int(info.Size())
			return err
		})
		if err != nil {
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
