package main

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mlops-fn/mlops-fn/pkg/cli"
	"github.com/mlops-fn/mlops-fn/pkg/hydrate"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/render"
)

// runBinary runs bin/mlops-fn in an empty folder and returns its exit code,
// stdout and stderr.
func runBinary(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	binary(t)
	bin, err := filepath.Abs(filepath.Join(repoRoot, "bin", "mlops-fn"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = t.TempDir()
	cmd.Stdin = strings.NewReader("")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	code := 0
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("mlops-fn %s: %v", strings.Join(args, " "), err)
		}
		code = exit.ExitCode()
	}
	return code, stdout.String(), stderr.String()
}

// TestUsageErrors: a command line mlops-fn rejects exits 1 with one line on
// stderr naming the command, what was wrong, what is accepted and the --help
// to read; errors the run reports itself are not printed a second time.
func TestUsageErrors(t *testing.T) {
	cases := []struct {
		name string
		args []string
		// prefix starts the line; help is the command whose --help it points to, "" for none.
		prefix, help string
		want         []string
	}{
		{"hydrate without folders", []string{"hydrate"},
			"mlops-fn hydrate: error: ", "mlops-fn hydrate", []string{"at least one overlay folder", "job.yaml", "mlops.env"}},
		{"hydrate without folders names --config", []string{"hydrate", "--config=spec.yaml"},
			"mlops-fn hydrate: error: ", "mlops-fn hydrate", []string{"overlay folder", "spec.yaml"}},
		{"unknown flag", []string{"--bogus", "job.yaml"},
			"mlops-fn: error: ", "mlops-fn", []string{"unknown flag --bogus", "accepted flags: -h/--help"}},
		{"unknown shorthand", []string{"-x", "job.yaml"},
			"mlops-fn: error: ", "mlops-fn", []string{"unknown flag -x", "-h/--help"}},
		{"hydrate's flag given to the function", []string{"--check", "."},
			"mlops-fn: error: ", "mlops-fn", []string{"unknown flag --check", "`mlops-fn hydrate`"}},
		{"hydrate unknown flag", []string{"hydrate", "--bogus", "."},
			"mlops-fn hydrate: error: ", "mlops-fn hydrate", []string{"unknown flag --bogus", "--check", "--config", "--resources"}},
		{"hydrate flag without value", []string{"hydrate", "--config"},
			"mlops-fn hydrate: error: ", "mlops-fn hydrate", []string{"--config needs a value", "job spec"}},
		{"hydrate bad boolean", []string{"hydrate", "--check=maybe", "."},
			"mlops-fn hydrate: error: ", "mlops-fn hydrate", []string{"--check=maybe", "--check=true", "--check=false"}},
		{"hydrate bad list", []string{"hydrate", `--resources="base`, "."},
			"mlops-fn hydrate: error: ", "mlops-fn hydrate", []string{`--resources="base`, "accepted: resources"}},
		// Reported by the run itself: once, and without the usage treatment.
		{"missing job spec", []string{"missing.yaml"},
			"mlops-fn: error: ", "", []string{"open missing.yaml"}},
		{"hydrate missing folder", []string{"hydrate", "missing"},
			"mlops-fn: error: ", "", []string{"missing/job.yaml"}},
		{"hydrate given the job spec instead of its folder", []string{"hydrate", "{repo}/quickstart/k8s/mlops/multi-node/job.yaml"},
			"mlops-fn: error: ", "", []string{"is a file", "mlops-fn hydrate {repo}/quickstart/k8s/mlops/multi-node"}},
		{"hydrate given one folder twice", []string{"hydrate", "{repo}/quickstart/k8s/mlops/multi-node", "{repo}/quickstart/k8s/mlops/multi-node/"},
			"mlops-fn: error: ", "", []string{"are the same folder"}},
		{"init into a folder that holds files", []string{"init", "{repo}/quickstart/k8s/mlops/multi-node"},
			"mlops-fn: error: ", "", []string{"exists and is not empty"}},
	}
	repo, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		for i := range c.args {
			c.args[i] = strings.ReplaceAll(c.args[i], "{repo}", repo)
		}
		for i := range c.want {
			c.want[i] = strings.ReplaceAll(c.want[i], "{repo}", repo)
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := runBinary(t, c.args...)
			if code != 1 {
				t.Errorf("exit code %d, want 1", code)
			}
			if stdout != "" {
				t.Errorf("stdout is not empty:\n%s", stdout)
			}
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			if len(lines) != 1 || lines[0] == "" || !strings.HasSuffix(stderr, "\n") {
				t.Fatalf("stderr has %d lines, want exactly one error line:\n%s", len(lines), stderr)
			}
			line := lines[0]
			if !strings.HasPrefix(line, c.prefix) {
				t.Errorf("stderr does not start with %q:\n%s", c.prefix, line)
			}
			for _, w := range c.want {
				if !strings.Contains(line, w) {
					t.Errorf("stderr does not name %q:\n%s", w, line)
				}
			}
			if pointer := "see `" + c.help + " --help`"; c.help != "" && !strings.HasSuffix(line, pointer) {
				t.Errorf("stderr does not end with %q:\n%s", pointer, line)
			}
			if c.help == "" && strings.Contains(line, "--help") {
				t.Errorf("a run's own error got the usage treatment:\n%s", line)
			}
		})
	}
}

// TestHelpNamesEveryMode: --help (which `kpt fn doc` shows) and hydrate's
// --help describe every mode, the object each becomes and the files written.
func TestHelpNamesEveryMode(t *testing.T) {
	modes, kinds, patchFiles := jobkind.Modes(), []string{}, []string{}
	for _, k := range jobkind.Kinds {
		kinds, patchFiles = append(kinds, k.Kind), append(patchFiles, k.PatchFile)
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--help"}, slices.Concat([]string{"kubeflow.org/v1", "elasticPolicy",
			"torchrun", "MIN_WORKERS", "MAX_WORKERS", "hydrate"}, kinds, modes)},
		{[]string{"hydrate", "--help"}, slices.Concat([]string{render.SecurityContextPatchFile, render.NFSVolumePatchFile,
			hydrate.NameReferenceFile, "kustomization.yaml"}, kinds, patchFiles, modes)},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			code, stdout, stderr := runBinary(t, c.args...)
			if code != 0 || stderr != "" {
				t.Fatalf("exit code %d, stderr:\n%s", code, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("the help does not mention %q:\n%s", w, stdout)
				}
			}
			if strings.Contains(stdout, "# or single-node") {
				t.Errorf("the help still offers only multi-node or single-node:\n%s", stdout)
			}
		})
	}
}

// TestUnreadableResourceListItem: an item kyaml's ResourceList reader cannot
// take (its metadata is a list) is named in one line, not shown as a node dump.
func TestUnreadableResourceListItem(t *testing.T) {
	in := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: ok}}\n" +
		"- {apiVersion: v1, kind: ConfigMap, metadata: [x]}\nfunctionConfig: {apiVersion: mlops-fn.dev/v1alpha1, kind: MLOpsJob, metadata: {name: a}, spec: {image: a}}\n"
	var stdout, stderr bytes.Buffer
	cmd := cli.New(nil)
	cmd.SetArgs([]string{}) // not nil: cobra would read the test binary's own flags
	cmd.SetIn(strings.NewReader(in))
	cmd.SetOut(&stdout)
	cmd.SetErr(&stderr)
	if err := cli.Execute(cmd); err == nil {
		t.Fatal("a malformed item was accepted")
	}
	want := "mlops-fn: error: the ResourceList's item 2: metadata is a YAML list; accepted: a map (name, namespace, labels, annotations)\n"
	if stderr.String() != want {
		t.Errorf("stderr:\n%q\nwant\n%q", stderr.String(), want)
	}
}

// validConfig is a functionConfig that renders a job: what it receives decides.
const validConfig = `functionConfig: {apiVersion: mlops-fn.dev/v1alpha1, kind: MLOpsJob, metadata: {name: a}, spec: {image: a, command: [a], envFile: {inline: "WORKERS=2\nUSER_ID=1\n"}}}` + "\n"

// TestStdinIsAResourceList: with no arguments stdin must be a ResourceList
// whose items are objects; anything else is named, exit 1, the input back.
func TestStdinIsAResourceList(t *testing.T) {
	binary(t)
	for name, c := range map[string]struct{ in, want string }{
		"a job spec":         {"apiVersion: mlops-fn.dev/v1alpha1\nkind: MLOpsJob\nmetadata: {name: x}\n", "standard input holds an MLOpsJob, not a ResourceList"},
		"nothing":            {"", "standard input holds no kind, not a ResourceList"},
		"an item that is 42": {"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: [42]\n", "the ResourceList's item 1 is 42, not an object"},
		"a job config naming a folder": {"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}, data: {job: quickstart}}\n",
			`data.job: "quickstart" is a folder`},
		// kyaml took a map's keys and values for items, and read no items from a scalar.
		"items that are a map": {"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: {a: 1}\n" + validConfig,
			"mlops-fn: error: the ResourceList's items is a YAML map, not a list; accepted: items: a list of Kubernetes objects (YAML maps), or none\n"},
		"items that are a scalar": {"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: x\n" + validConfig,
			"mlops-fn: error: the ResourceList's items is the YAML scalar \"x\", not a list; accepted: items: a list of Kubernetes objects (YAML maps), or none\n"},
		"neither items nor functionConfig": {"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n",
			"mlops-fn: error: standard input holds a ResourceList with neither items nor functionConfig, so no job spec;"},
		"two documents": {"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n" + validConfig + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
			"mlops-fn: error: standard input holds 2 YAML documents, the first a ResourceList; accepted: one ResourceList alone, as kustomize and kpt send it (its items hold the objects)\n"},
		"functionConfig that is a list": {"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig: [a]\n",
			"mlops-fn: error: functionConfig: Invalid value: is a YAML list; accepted: an MLOpsJob (apiVersion mlops-fn.dev/v1alpha1), a YAML map\n"},
		"an item that is a string": {"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: [x]\n" + validConfig,
			"mlops-fn: error: the ResourceList's item 1 is the string \"x\", not an object; accepted: Kubernetes objects (YAML maps)\n"},
	} {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(filepath.Join("bin", "mlops-fn"))
			cmd.Dir = repoRoot
			cmd.Stdin = strings.NewReader(c.in)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if err == nil || !strings.Contains(stderr.String(), c.want) {
				t.Errorf("want exit 1 and %q, got %v:\n%s", c.want, err, stderr.String())
			}
			if c.in != "" && !strings.Contains(c.want, "folder") && !strings.Contains(c.want, "functionConfig: Invalid") && stdout.String() != c.in {
				t.Errorf("stdout is not the input unchanged:\n%s", stdout.String())
			}
		})
	}
}
