// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/mlops-fn/mlops-fn/internal/testutil"
	"github.com/mlops-fn/mlops-fn/pkg/env"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/kinds"
)

// TestDocsAreComplete keeps the error catalogue in docs/ in step with the
// code: every golden error case is in it, and every case it names exists.
func TestDocsAreComplete(t *testing.T) {
	catalogue := readDoc(t, "errors.md")
	cases, _ := filepath.Glob("../testdata/error-*")
	if len(cases) == 0 {
		t.Fatal("no error cases under ../testdata")
	}
	for _, c := range cases {
		if name := filepath.Base(c); !strings.Contains(catalogue, "`"+name+"`") {
			t.Errorf("docs/errors.md: the error catalogue does not list the golden case %s", name)
		}
	}
	for _, field := range strings.Split(catalogue, "`") {
		if strings.HasPrefix(field, "error-") {
			if _, err := os.Stat(filepath.Join("../testdata", field)); err != nil {
				t.Errorf("docs/errors.md: the error catalogue names %s, which is not a golden case", field)
			}
		}
	}
	// The message column is the golden stderr's; -update (make golden-update) writes it.
	updated := catalogueRow.ReplaceAllStringFunc(catalogue, func(line string) string {
		row := catalogueRow.FindStringSubmatch(line)
		want := catalogueMessage(t, row[2])
		if row[1] == want {
			return line
		}
		if !*update {
			t.Errorf("docs/errors.md: the row of %s says\n  %s\nbut its stderr.txt says\n  %s\nrun make golden-update", row[2], row[1], want)
			return line
		}
		return strings.Replace(line, "`"+row[1]+"`", "`"+want+"`", 1)
	})
	if *update && updated != catalogue {
		if err := os.WriteFile(filepath.Join("../docs", "errors.md"), []byte(updated), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDocsKeyTable: docs/mlops-env.md's table of keys is env.KnownKeys,
// written by `go test ./fn -run TestDocsKeyTable -update` (make golden-update).
func TestDocsKeyTable(t *testing.T) {
	const begin, end = "<!-- keys: generated from pkg/env by make golden-update -->\n", "<!-- /keys -->\n"
	doc := readDoc(t, "mlops-env.md")
	head, rest, found := strings.Cut(doc, begin)
	_, tail, closed := strings.Cut(rest, end)
	if !found || !closed {
		t.Fatalf("docs/mlops-env.md has no %q … %q table", begin, end)
	}
	var table strings.Builder
	table.WriteString("| key | type | meaning |\n|---|---|---|\n")
	for _, k := range env.KnownKeys() {
		fmt.Fprintf(&table, "| `%s` | %s | %s |\n", k.Key, k.Type, k.Description)
	}
	want := head + begin + table.String() + end + tail
	if want == doc {
		return
	}
	if *update {
		if err := os.WriteFile(filepath.Join("../docs", "mlops-env.md"), []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/mlops-env.md's key table differs from pkg/env (-doc +code); run make golden-update:\n%s", cmp.Diff(doc, want))
}

func readDoc(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("../docs", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// catalogueRow is a row of the error catalogue: | input | `message` | `case` |.
var catalogueRow = regexp.MustCompile("(?m)^\\| .*? \\| `(.*?)` \\| `(error-[^`]+)` \\|$")

// catalogueMessage is what the catalogue shows of a case: its first error
// line without the prefix and the case's folder, backquotes as quotes (the
// table sets it in code), cut to 150 characters.
func catalogueMessage(t *testing.T, name string) string {
	data, err := os.ReadFile(filepath.Join("../testdata", name, "stderr.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if msg, ok := strings.CutPrefix(line, "mlops-fn: error: "); ok {
			msg = strings.ReplaceAll(strings.ReplaceAll(msg, "testdata/"+name+"/", ""), "`", "'")
			if r := []rune(msg); len(r) > 150 {
				msg = string(r[:147]) + "…"
			}
			return msg
		}
	}
	t.Fatalf("%s/stderr.txt has no error line", name)
	return ""
}

// TestCatalogMetadata: metadata.yaml, the function's kpt catalog entry, lists
// one example package for each jobKind of the job kinds table, and each exists.
func TestCatalogMetadata(t *testing.T) {
	var meta struct {
		Image              string   `json:"image"`
		Description        string   `json:"description"`
		Tags               []string `json:"tags"`
		SourceURL          string   `json:"sourceURL"`
		ExamplePackageURLs []string `json:"examplePackageURLs"`
		License            string   `json:"license"`
	}
	data, err := os.ReadFile("../metadata.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := sigsyaml.UnmarshalStrict(data, &meta); err != nil {
		t.Fatalf("metadata.yaml: %v", err)
	}
	var want []string
	for _, k := range kinds.All {
		m := testutil.QuickstartFolder[k.JobKind()]
		want = append(want, "https://github.com/mlops-fn/mlops-fn/tree/main/quickstart/kpt/"+m)
		if _, err := os.Stat(filepath.Join("../quickstart/kpt", m, "Kptfile")); err != nil {
			t.Errorf("%s has no kpt example package: %v", k.Kind, err)
		}
	}
	slices.Sort(want)
	if diff := cmp.Diff(want, meta.ExamplePackageURLs); diff != "" {
		t.Errorf("metadata.yaml's examplePackageURLs (-want +got):\n%s", diff)
	}
	if meta.Image == "" || meta.Description == "" || meta.SourceURL == "" || meta.License != "Apache-2.0" {
		t.Errorf("metadata.yaml: image %q, description %q, sourceURL %q, license %q: each is required (license Apache-2.0, as LICENSE)", meta.Image, meta.Description, meta.SourceURL, meta.License)
	}
	// The entry and every example package name the released image of the
	// newest release in CHANGELOG.md.
	if want := releasedImage(t); meta.Image != want {
		t.Errorf("metadata.yaml: image %q, want %q, the image of CHANGELOG.md's newest release", meta.Image, want)
	}
	kptfiles, _ := filepath.Glob("../quickstart/kpt/*/Kptfile")
	for _, file := range kptfiles {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), "\n  - image: "+meta.Image+"\n") {
			t.Errorf("%s: its mutator is not metadata.yaml's image %s:\n%s", file, meta.Image, data)
		}
	}
}

// TestKptPackagesShipTheirServiceAccount: a kpt package is applied alone
// (kpt live apply), so the ServiceAccount its job spec names is in it: the
// API server refuses a Pod, and an operator the job's pods, without one.
func TestKptPackagesShipTheirServiceAccount(t *testing.T) {
	specs, _ := filepath.Glob("../quickstart/kpt/*/job.yaml")
	if len(specs) != len(kinds.All) {
		t.Fatalf("%d kpt packages, want one per kind (%d)", len(specs), len(kinds.All))
	}
	for _, spec := range specs {
		job, err := yaml.ReadFile(spec)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := job.GetString("spec.serviceAccountName")
		if name == "" {
			continue
		}
		var found bool
		for _, n := range readNodes(t, filepath.Join(filepath.Dir(spec), "serviceaccount_"+name+".yaml")) {
			found = found || n.GetKind() == "ServiceAccount" && n.GetName() == name
		}
		if !found {
			t.Errorf("%s names spec.serviceAccountName %s, and its package holds no ServiceAccount %s", spec, name, name)
		}
	}
}

// TestQuickstartHeaders: each quickstart job.yaml's header says a setting
// in both it and mlops.env is an error (it said mlops.env's values win), and
// so it is: USER_ID, in every quickstart's mlops.env, set in the spec too.
func TestQuickstartHeaders(t *testing.T) {
	binary(t)
	for _, topology := range testutil.QuickstartFolders() {
		t.Run(topology, func(t *testing.T) {
			dir := filepath.Join("../quickstart/k8s/mlops", topology)
			text, err := os.ReadFile(filepath.Join(dir, "job.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			const says = "# spec.workers, ...) lives in one of them: set in both, it is an error naming\n# both.\n"
			if header, _, _ := strings.Cut(string(text), "apiVersion:"); !strings.Contains(header, says) {
				t.Fatalf("%s/job.yaml's header does not say %q:\n%s", dir, says, header)
			}
			spec := yaml.MustParse(string(text))
			if err := spec.PipeE(yaml.LookupCreate(yaml.MappingNode, "spec", "security"), yaml.SetField("runAsUser", yaml.NewRNode(&yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagInt, Value: "1000"}))); err != nil {
				t.Fatal(err)
			}
			tmp := t.TempDir()
			env, err := os.ReadFile(filepath.Join(dir, "mlops.env"))
			if err != nil {
				t.Fatal(err)
			}
			if err := errors.Join(os.WriteFile(filepath.Join(tmp, "job.yaml"), []byte(spec.MustString()), 0o644), os.WriteFile(filepath.Join(tmp, "mlops.env"), env, 0o644)); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(filepath.Join(repoRoot, "bin", "mlops-fn"), filepath.Join(tmp, "job.yaml")).CombinedOutput()
			if err == nil || !strings.Contains(string(out), "spec.security.runAsUser") || !strings.Contains(string(out), "USER_ID") || !strings.Contains(string(out), "not both") {
				t.Errorf("USER_ID in mlops.env and spec.security.runAsUser: want an error naming both, got %v\n%s", err, out)
			}
		})
	}
}

// releasedImage is the image of CHANGELOG.md's newest release.
func releasedImage(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	newest := regexp.MustCompile(`(?m)^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d\d-\d\d$`).FindSubmatch(data)
	if newest == nil {
		t.Fatal("CHANGELOG.md names no release: no line `## [X.Y.Z] - YYYY-MM-DD`")
	}
	return "ghcr.io/mlops-fn/mlops-fn:v" + string(newest[1])
}

// TestDocsKindFields: docs/job-spec.md's table of what each kind carries says
// what the spec's validation refuses, row by row, with the mlops.env keys of
// each field, and leaves none of the refused fields out.
func TestDocsKindFields(t *testing.T) {
	doc := readDoc(t, "job-spec.md")
	_, table, found := strings.Cut(doc, "<!-- kind-fields")
	table, _, closed := strings.Cut(table, "<!-- /kind-fields -->")
	if !found || !closed {
		t.Fatal("docs/job-spec.md has no <!-- kind-fields --> table")
	}
	fields := map[string]jobkind.Field{}
	for _, f := range kinds.All.Fields() {
		fields[f.Path] = f
	}
	jobKinds := kinds.All.Names()
	listed := map[string]bool{}
	for _, line := range strings.Split(table, "\n")[1:] {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) != 1+len(jobKinds) || strings.HasPrefix(cells[0], "field") || strings.HasPrefix(cells[0], "---") {
			continue
		}
		var paths, keys, wantKeys []string
		for i, tok := range strings.Split(cells[0], "`") {
			if i%2 == 1 && tok == strings.ToUpper(tok) {
				keys = append(keys, tok)
			} else if i%2 == 1 {
				paths = append(paths, tok)
			}
		}
		for _, path := range paths {
			listed[path] = true
			wantKeys = append(wantKeys, fields[path].EnvKeys...)
			_, row := fields[path]
			for m, cell := range cells[1:] {
				if says, carries := strings.HasPrefix(cell, "yes"), !row || kinds.All.Of(jobkind.JobKind(jobKinds[m])).CarriesField(path); says != carries {
					t.Errorf("docs/job-spec.md: %s in jobKind %s says %q, but the jobKind carries it: %v", path, jobKinds[m], cell, carries)
				}
			}
		}
		if !slices.Equal(keys, wantKeys) {
			t.Errorf("docs/job-spec.md: the row of %v names the mlops.env keys %v; they are %v", paths, keys, wantKeys)
		}
	}
	for path := range fields {
		if !listed[path] {
			t.Errorf("docs/job-spec.md: the table of what each kind carries has no row for %s", path)
		}
	}
}

// TestReadmeInstallsThePinnedVersions: the README's first screen installs
// each kind's operator, with its project's own command, at the version make
// e2e runs (hack/e2e/versions.env), and says where to read on before line 70.
func TestReadmeInstallsThePinnedVersions(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	pins, err := os.ReadFile(filepath.Join(repoRoot, "hack/e2e/versions.env"))
	if err != nil {
		t.Fatal(err)
	}
	pin := func(key string) string {
		m := regexp.MustCompile(`(?m)^` + key + `=(v\S+)$`).FindSubmatch(pins)
		if m == nil {
			t.Fatalf("hack/e2e/versions.env has no %s=v… line", key)
		}
		return string(m[1])
	}
	_, block, found := strings.Cut(string(readme), "## What the cluster needs\n")
	_, block, fenced := strings.Cut(block, "```sh\n")
	block, _, closed := strings.Cut(block, "```")
	if !found || !fenced || !closed {
		t.Fatal("README.md: no ```sh block under ## What the cluster needs")
	}
	for _, want := range []string{
		"kubectl apply --server-side -f https://raw.githubusercontent.com/kubeflow/mpi-operator/" + pin("MPI_OPERATOR_VERSION") + "/deploy/v2beta1/mpi-operator.yaml\n",
		`kubectl apply --server-side -k "github.com/kubeflow/training-operator.git/manifests/overlays/standalone?ref=` + pin("TRAINING_OPERATOR_VERSION") + "\"\n",
		`kubectl apply --server-side -k "https://github.com/kubeflow/trainer.git/manifests/overlays/manager?ref=` + pin("TRAINER_VERSION") + "\"\n",
		`kubectl apply --server-side -k "https://github.com/kubeflow/trainer.git/manifests/overlays/runtimes?ref=` + pin("TRAINER_VERSION") + "\"\n",
		"Kubeflow Trainer " + pin("TRAINER_VERSION") + " with JobSet " + pin("JOBSET_VERSION"),
		"kubectl apply --server-side -f https://github.com/kubernetes-sigs/kueue/releases/download/" + pin("KUEUE_VERSION") + "/manifests.yaml\n",
	} {
		if !strings.Contains(block, want) {
			t.Errorf("README.md's cluster block lacks %q:\n%s", want, block)
		}
	}
	if head := strings.SplitAfterN(string(readme), "\n", 70); !strings.Contains(strings.Join(head[:len(head)-1], ""), "\n## Where to read on\n") {
		t.Errorf("README.md: ## Where to read on is not among the first 70 lines")
	}
}
