// SPDX-License-Identifier: Apache-2.0

package scaffold

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/schema"

	sigsyaml "sigs.k8s.io/yaml"
)

// TestFilesKeepArgumentsWhole: job.yaml reads back with the image and every
// argument of the command as given, whatever they hold (a newline made a
// block scalar that broke the file, "x # y" lost its comment-like tail), and
// an argument that is not UTF-8 text is refused, naming it.
func TestFilesKeepArgumentsWhole(t *testing.T) {
	command := []string{"python", "python\nfoo", "-c", "import os\nprint(1)", "a\tb", "true", "1", "null", "~", "", "a: b", "#x", "x #y",
		"- c", `"`, "'", `\n`, "ünï", "\x01", "%x", "@x", "`x`", "[a]", "{a: 1}", "&a", "*a", "!x", "|", ">", "?", ":", "-", "--epochs=3"}
	for _, jobKind := range []jobkind.JobKind{jobkind.MPIJob, jobkind.Pod} {
		files, err := Files(Options{Name: "job", JobKind: jobKind, Image: "docker.io/team/x:1", Command: command})
		if err != nil {
			t.Fatalf("%s: %v", jobKind, err)
		}
		var doc struct {
			Spec struct {
				Image   string   `json:"image"`
				Command []string `json:"command"`
			} `json:"spec"`
		}
		if err := sigsyaml.Unmarshal(files["job.yaml"], &doc); err != nil {
			t.Fatalf("%s: job.yaml does not read: %v\n%s", jobKind, err, files["job.yaml"])
		}
		if doc.Spec.Image != "docker.io/team/x:1" || !slices.Equal(doc.Spec.Command, command) {
			t.Errorf("%s: job.yaml reads back as %q %q, want %q\n%s", jobKind, doc.Spec.Image, doc.Spec.Command, command, files["job.yaml"])
		}
	}
	for _, o := range []Options{
		{Name: "job", Image: "x", Command: []string{"python", "caf\xe9"}},
		{Name: "job", Image: "x\xff", Command: []string{"python"}},
	} {
		_, err := Files(o)
		if err == nil || !strings.Contains(err.Error(), "is not UTF-8 text") {
			t.Errorf("%q %q: want refused as not UTF-8, got %v", o.Image, o.Command, err)
		}
	}
}

// TestFilesNameTheFolder: init's messages name the files where they go, never
// the temporary folder it checks them in.
func TestFilesNameTheFolder(t *testing.T) {
	for _, c := range []struct{ dir, want string }{
		{filepath.Join("jobs", "x"), filepath.Join("jobs", "x", "mlops.env")},
		{".", "which mlops.env does not define"},
	} {
		_, err := Files(Options{Name: "x", Image: "${FOO}/x", Command: []string{"python"}, Dir: c.dir})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), os.TempDir()) {
			t.Errorf("dir %q: want an error naming %q and no temporary folder, got %v", c.dir, c.want, err)
		}
	}
	_, err := Files(Options{Name: "x", Image: "x\ny", Command: []string{"python"}, Dir: "jobs/x"})
	if err == nil || !strings.Contains(err.Error(), "jobs/x/job.yaml: spec.image") || strings.Contains(err.Error(), os.TempDir()) {
		t.Errorf("an image with a newline: want the image refused in jobs/x/job.yaml, got %v", err)
	}
}

// TestWrite: init writes a new folder or an empty one (init ., or a folder
// made beforehand), all or nothing; a folder that holds anything, or a file,
// is refused by name.
func TestWrite(t *testing.T) {
	files := map[string][]byte{"job.yaml": []byte("a"), "base/kustomization.yaml": []byte("b")}
	ok := func(string) error { return nil }
	check := func(t *testing.T, dir string) {
		t.Helper()
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if !slices.Equal(names, []string{"base", "job.yaml"}) {
			t.Errorf("%s holds %v; want base, job.yaml", dir, names)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "base", "kustomization.yaml")); string(b) != "b" {
			t.Errorf("base/kustomization.yaml holds %q", b)
		}
	}
	t.Run("new", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "new")
		if err := Write(dir, files, ok); err != nil {
			t.Fatal(err)
		}
		check(t, dir)
	})
	t.Run("empty", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.Chmod(dir, 0o750); err != nil {
			t.Fatal(err)
		}
		if err := Write(dir, files, ok); err != nil {
			t.Fatal(err)
		}
		check(t, dir)
		if info, _ := os.Stat(dir); info.Mode().Perm() != 0o750 {
			t.Errorf("the folder's mode changed to %v", info.Mode().Perm())
		}
	})
	t.Run("dot", func(t *testing.T) {
		dir := t.TempDir()
		t.Chdir(dir)
		if err := Write(".", files, ok); err != nil {
			t.Fatal(err)
		}
		check(t, dir)
	})
	t.Run("a failure leaves an empty folder empty, and no new folder", func(t *testing.T) {
		parent := t.TempDir()
		empty := filepath.Join(parent, "empty")
		if err := os.Mkdir(empty, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, dir := range []string{empty, filepath.Join(parent, "new")} {
			if err := Write(dir, files, func(string) error { return errors.New("hydrate failed") }); err == nil || err.Error() != "hydrate failed" {
				t.Errorf("%s: got %v, want hydrate's error", dir, err)
			}
		}
		if entries, _ := os.ReadDir(empty); len(entries) != 0 {
			t.Errorf("the empty folder holds %v after a failure", entries)
		}
		if entries, _ := os.ReadDir(parent); len(entries) != 1 {
			t.Errorf("the parent holds %v after a failure; want only the empty folder", entries)
		}
	})
	t.Run("refused", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		err := Write(dir, files, ok)
		if err == nil || !strings.HasPrefix(err.Error(), dir+" exists and is not empty (it holds notes.txt)") {
			t.Errorf("a folder that holds a file: got %v", err)
		}
		t.Chdir(dir)
		err = Write(".", files, ok)
		if err == nil || !strings.HasPrefix(err.Error(), ". ("+dir+") exists and is not empty") {
			t.Errorf("init . in a folder that holds a file: got %v", err)
		}
		err = Write("notes.txt", files, ok)
		if err == nil || !strings.HasPrefix(err.Error(), "notes.txt exists and is a file") {
			t.Errorf("a file: got %v", err)
		}
		if err := os.Symlink("/nonexistent", "dangling"); err != nil {
			t.Fatal(err)
		}
		err = Write("dangling", files, ok)
		if err == nil || err.Error() != "dangling is a symbolic link to /nonexistent, which does not exist; accepted: a new or empty folder (create /nonexistent first, or remove the link)" {
			t.Errorf("a dangling symbolic link: got %v", err)
		}
		if target, err := os.Readlink("dangling"); err != nil || target != "/nonexistent" {
			t.Errorf("the link changed: %q, %v", target, err)
		}
	})
}

// TestFilesSayWhoseExample: without --image, job.yaml's comment on the image
// says whose example it is, true to the kind: an operator's for the
// operators' kinds, none for a Pod, which has no operator.
func TestFilesSayWhoseExample(t *testing.T) {
	for jobKind, want := range map[jobkind.JobKind]string{
		jobkind.MPIJob:     "mpioperator/mpi-pi:openmpi # the mpi-operator's own example: put your training image here\n",
		jobkind.PyTorchJob: "kubeflow/pytorch-elastic-example-echo:latest # the training-operator's own example: put your training image here\n",
		jobkind.TrainJob:   "pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime # the image of Kubeflow Trainer's own examples: put your training image here\n",
		jobkind.Pod:        "python:3.12-slim # a Python hello, which needs no operator: put your training image here\n",
	} {
		files, err := Files(Options{Name: "job", JobKind: jobKind})
		if err != nil {
			t.Fatalf("%s: %v", jobKind, err)
		}
		if spec := string(files["job.yaml"]); !strings.Contains(spec, "\n  image: "+want) {
			t.Errorf("%s: job.yaml lacks the image line %q:\n%s", jobKind, want, spec)
		}
	}
}

// TestJobYAMLNamesTheSchema: job.yaml's first line points yaml-language-server
// at the schema of the release that wrote it, a file the repository holds;
// a build of no release points at main's.
func TestJobYAMLNamesTheSchema(t *testing.T) {
	files, err := Files(Options{Name: "job"})
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(files["job.yaml"]), "\n")
	if want := "# yaml-language-server: $schema=" + SchemaURL(release()); first != want {
		t.Errorf("job.yaml begins %q, want %q", first, want)
	}
	if _, err := os.Stat(filepath.Join("..", "..", schema.JobSchemaFile)); err != nil {
		t.Errorf("the URL's file: %v", err)
	}
	const raw = "https://raw.githubusercontent.com/mlops-fn/mlops-fn/"
	for version, ref := range map[string]string{
		"v0.1.0":                               "v0.1.0",
		"v0.2.0-rc.1":                          "v0.2.0-rc.1",
		"(devel)":                              "main",
		"":                                     "main",
		"v0.1.1-0.20261202003700-0123456789ab": "main",
		"v0.1.0+dirty":                         "main",
	} {
		if got, want := SchemaURL(version), raw+ref+"/"+schema.JobSchemaFile; got != want {
			t.Errorf("version %q: %s, want %s", version, got, want)
		}
	}
}
