// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mlops-fn/mlops-fn/pkg/cli"
	"github.com/mlops-fn/mlops-fn/pkg/hydrate"
	"github.com/mlops-fn/mlops-fn/pkg/kinds"
)

// runBinary runs bin/mlops-fn in an empty folder and returns its exit code,
// stdout and stderr.
func runBinary(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return runBinaryEnv(t, nil, args...)
}

// runBinaryEnv is runBinary with env added to the environment.
func runBinaryEnv(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	binary(t)
	bin, err := filepath.Abs(filepath.Join(repoRoot, "bin", "mlops-fn"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = t.TempDir()
	cmd.Stdin = strings.NewReader("")
	cmd.Env = append(os.Environ(), env...)
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
		{"a negative --request-timeout", []string{"delete", "--request-timeout=-1s", "."},
			"mlops-fn delete: error: ", "mlops-fn delete", []string{"flag --request-timeout=-1s: is negative", "such as 30s or 2m (0: no limit"}},
		{"hydrate missing folder", []string{"hydrate", "missing"},
			"mlops-fn: error: ", "", []string{"missing/job.yaml"}},
		{"hydrate given the job spec instead of its folder", []string{"hydrate", "{repo}/quickstart/k8s/mlops/multi-node/job.yaml"},
			"mlops-fn: error: ", "", []string{"is a file", "mlops-fn hydrate {repo}/quickstart/k8s/mlops/multi-node"}},
		{"hydrate given one folder twice", []string{"hydrate", "{repo}/quickstart/k8s/mlops/multi-node", "{repo}/quickstart/k8s/mlops/multi-node/"},
			"mlops-fn: error: ", "", []string{"are the same folder"}},
		{"misspelt command", []string{"aply", "mn"},
			"mlops-fn: error: ", "mlops-fn", []string{"unknown command aply; did you mean apply?", "accepted: a command (apply, completion, delete, hydrate, init, logs, status, version)", "mlops-fn JOB.yaml"}},
		{"unknown command", []string{"render"},
			"mlops-fn: error: ", "mlops-fn", []string{"unknown command render; accepted: a command (", "mlops-fn JOB.yaml"}},
		{"hydrate --staged without --files", []string{"hydrate", "--check", "--staged"},
			"mlops-fn: error: ", "", []string{"--staged adds files", "needs --files"}},
		{"hydrate --staged outside a git repository", []string{"hydrate", "--check", "--files", "--staged"},
			"mlops-fn: error: ", "", []string{"--staged reads git's index: git rev-parse --show-toplevel", "not a git repository"}},
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

// TestHelpNamesEveryKind: --help (which `kpt fn doc` shows) and hydrate's
// --help describe every kind, the object each becomes and the files written.
func TestHelpNamesEveryKind(t *testing.T) {
	names, patchFiles := kinds.All.Names(), []string{}
	for _, k := range kinds.All {
		patchFiles = append(patchFiles, k.PatchFile)
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--help"}, slices.Concat([]string{"kubeflow.org/v1", "elasticPolicy",
			"torchrun", "MIN_WORKERS", "MAX_WORKERS", "hydrate"}, names)},
		{[]string{"hydrate", "--help"}, slices.Concat([]string{hydrate.NameReferenceFile, "kustomization.yaml"}, names, patchFiles)},
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

// clusterCommands are the commands that reach a cluster, on a copy of the
// quickstart's MPIJob overlay.
func clusterCommands(t *testing.T) [][]string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(repoRoot, "quickstart"))); err != nil {
		t.Fatal(err)
	}
	overlay := filepath.Join(dir, "k8s", "mlops", "multi-node")
	return [][]string{{"apply", overlay}, {"delete", overlay}, {"status", overlay}, {"logs", overlay}, {"logs", "-f", overlay}}
}

// kubeconfig writes a kubeconfig whose one context's server is server; env
// is an environment of it and a PATH without kubectl.
func kubeconfig(t *testing.T, server string) (env []string) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "config")
	text := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q, insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u, namespace: team}}]
current-context: c
`, server)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"KUBECONFIG=" + path, "PATH=" + dir, "HOME=" + dir}
}

// TestClusterNeverAnswers: against an API server that accepts connections
// and never answers, every cluster command exits 1 within its
// --request-timeout (and the waits after it), naming the server and the
// request; kubectl is not on PATH.
func TestClusterNeverAnswers(t *testing.T) {
	release := make(chan struct{})
	server := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer server.Close()
	defer close(release)
	env := kubeconfig(t, server.URL)
	binary(t)
	for _, args := range clusterCommands(t) {
		start := time.Now()
		code, _, stderr := runBinaryEnv(t, env, append(args, "--request-timeout=1s")...)
		took := time.Since(start)
		t.Logf("mlops-fn %s: %s", args[0], took)
		if code != 1 || took > 15*time.Second {
			t.Errorf("mlops-fn %s: exit code %d after %s, want 1 within its timeout of 1s (and hydrate's run); stderr:\n%s", args[0], code, took, stderr)
		}
		for _, want := range []string{server.URL, "did not answer GET /api within 1s (--request-timeout)"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("mlops-fn %s: stderr does not name %q:\n%s", strings.Join(args, " "), want, stderr)
			}
		}
	}
}

// TestRequestTimeoutZero: --request-timeout=0 sets no limit of mlops-fn's;
// against a server that accepts connections and never starts TLS, client-go's
// own limit of the TLS handshake ends the request, and the message says so
// (not "within 0s").
func TestRequestTimeoutZero(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	go func() {
		var held []net.Conn
		for {
			c, err := l.Accept()
			if err != nil {
				for _, c := range held {
					_ = c.Close()
				}
				return
			}
			held = append(held, c)
		}
	}()
	server := "https://" + l.Addr().String()
	code, _, stderr := runBinaryEnv(t, kubeconfig(t, server), "status", clusterCommands(t)[2][1], "--request-timeout=0")
	want := "the API server " + server + " did not complete the TLS handshake of GET /api within 10s (client-go's own limit, which --request-timeout does not change)"
	if code != 1 || !strings.Contains(stderr, want) || strings.Contains(stderr, "within 0s") {
		t.Errorf("exit code %d, want 1 and %q; stderr:\n%s", code, want, stderr)
	}
}

// TestNoKubeconfig: no --kubeconfig, no KUBECONFIG, no ~/.kube/config: every
// cluster command names where it looked and what it accepts, not client-go's
// KUBERNETES_MASTER.
func TestNoKubeconfig(t *testing.T) {
	home := t.TempDir()
	env := []string{"KUBECONFIG=", "KUBERNETES_SERVICE_HOST=", "HOME=" + home, "PATH=" + home}
	want := "no kubeconfig: --kubeconfig is not given, KUBECONFIG is not set, and " + filepath.Join(home, ".kube", "config") + " does not exist; accepted: --kubeconfig FILE, KUBECONFIG=FILE, or a kubeconfig at "
	for _, args := range clusterCommands(t) {
		code, _, stderr := runBinaryEnv(t, env, args...)
		if code != 1 || !strings.Contains(stderr, want) || strings.Contains(stderr, "KUBERNETES_MASTER") {
			t.Errorf("mlops-fn %s: exit code %d, want 1 and %q; stderr:\n%s", strings.Join(args, " "), code, want, stderr)
		}
	}
}

// TestClusterIsNotKubernetes: a server that does not serve the Kubernetes
// API (404 everywhere, or an HTML page) is an error naming it, exit 1, for
// every cluster command, not an operator missing.
func TestClusterIsNotKubernetes(t *testing.T) {
	servers := map[string]http.HandlerFunc{
		"404": http.NotFound,
		"HTML": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html><body>a web site</body></html>")
		},
	}
	commands := clusterCommands(t)
	for name, handler := range servers {
		t.Run(name, func(t *testing.T) {
			server := httptest.NewTLSServer(handler)
			defer server.Close()
			env := kubeconfig(t, server.URL)
			for _, args := range commands {
				code, stdout, stderr := runBinaryEnv(t, env, args...)
				if code != 1 || !strings.Contains(stderr, server.URL+" does not serve the Kubernetes API") || strings.Contains(stdout+stderr, "operator") {
					t.Errorf("mlops-fn %s: exit code %d, want 1 and an error that %s does not serve the Kubernetes API; stdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, server.URL, stdout, stderr)
				}
			}
		})
	}
}

// TestClusterCommandsOnFolders: apply on a folder never hydrated names the
// commands that make it an overlay; status on a folder that does not exist
// says so.
func TestClusterCommandsOnFolders(t *testing.T) {
	spec := t.TempDir()
	for _, name := range []string{"job.yaml", "mlops.env"} {
		text, err := os.ReadFile(filepath.Join(repoRoot, "quickstart", "k8s", "mlops", "multi-node", name))
		if err == nil {
			err = os.WriteFile(filepath.Join(spec, name), text, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	missing := filepath.Join(t.TempDir(), "missing")
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"apply", spec}, []string{"never hydrated", "mlops-fn hydrate --resources BASE " + spec, "mlops-fn init " + spec}},
		{[]string{"status", missing}, []string{missing + " does not exist"}},
		{[]string{"logs", missing}, []string{missing + " does not exist"}},
		{[]string{"delete", missing}, []string{missing + " does not exist"}},
	} {
		code, _, stderr := runBinaryEnv(t, kubeconfig(t, "https://127.0.0.1:1"), c.args...)
		if code != 1 {
			t.Errorf("mlops-fn %s: exit code %d, want 1", strings.Join(c.args, " "), code)
		}
		for _, w := range c.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("mlops-fn %s: stderr does not name %q:\n%s", strings.Join(c.args, " "), w, stderr)
			}
		}
	}
}

// TestPodSecurityVerbose: a job whose NFS volume needs Pod Security level
// baseline gets one short warning line, naming the level and the volume;
// --verbose, of the standalone renderer and of hydrate, gives the long form,
// each pod in the API server's words.
func TestPodSecurityVerbose(t *testing.T) {
	overlay, err := filepath.Abs(filepath.Join(repoRoot, "quickstart/k8s/mlops/multi-node"))
	if err != nil {
		t.Fatal(err)
	}
	const short = `MPIJob/resnet50-training: the pods need Pod Security level baseline: volumes "nfs", "datasets" use restricted volume type "nfs" (more: --verbose, docs/job-spec.md#pod-security)` + "\n"
	const long = `MPIJob/resnet50-training: the pods need Pod Security level baseline: spec.mpiReplicaSpecs.Launcher.template.spec, spec.mpiReplicaSpecs.Worker.template.spec: violates PodSecurity "restricted:latest": restricted volume types`
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{filepath.Join(overlay, "job.yaml")}, short},
		{[]string{"--verbose", filepath.Join(overlay, "job.yaml")}, long},
		{[]string{"hydrate", "--check", overlay}, short},
		{[]string{"hydrate", "--check", "--verbose", overlay}, long},
	} {
		code, _, stderr := runBinary(t, c.args...)
		if code != 0 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("mlops-fn %s: exit %d; want one warning line holding %q, got:\n%s", strings.Join(c.args, " "), code, c.want, stderr)
		}
	}
}
