// SPDX-License-Identifier: Apache-2.0

//go:build dist

// Package dist checks the release `make dist` builds (.goreleaser.yaml): run
// by `make dist-test`, not by make test (it builds everything, minutes).
package dist

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/elf"
	"debug/macho"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/mlops-fn/mlops-fn/pkg/schema"
)

const root = "../.."

// artifact is an entry of GoReleaser's bin/dist/artifacts.json.
type artifact struct {
	Name   string `json:"name"`
	Path   string `json:"path"`
	Goos   string `json:"goos"`
	Goarch string `json:"goarch"`
	Type   string `json:"type"`
}

// platforms are the archives' (linux and darwin) and the images' (linux).
var platforms = []struct{ goos, goarch string }{{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "amd64"}, {"darwin", "arm64"}}

func TestDist(t *testing.T) {
	for _, tool := range []string{"goreleaser", "syft"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not on PATH: the release is not built (go install github.com/goreleaser/goreleaser/v2@v2.15.1, github.com/anchore/syft/cmd/syft@v1.57.1)", tool)
		}
	}
	if err := exec.Command("docker", "info").Run(); err != nil {
		t.Skip("no Docker daemon answers `docker info`: make dist builds the images with it")
	}
	cmd := exec.Command("make", "dist")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make dist: %v\n%s", err, out)
	}
	data, err := os.ReadFile(filepath.Join(root, "bin/dist/artifacts.json"))
	if err != nil {
		t.Fatal(err)
	}
	var artifacts []artifact
	if err := json.Unmarshal(data, &artifacts); err != nil {
		t.Fatalf("bin/dist/artifacts.json: %v", err)
	}
	byType := map[string][]artifact{}
	for _, a := range artifacts {
		byType[a.Type] = append(byType[a.Type], a)
	}

	sums := checksums(t, byType["Checksum"])
	archives := map[string]string{} // goos/goarch: the archive's path
	for _, a := range byType["Archive"] {
		archives[a.Goos+"/"+a.Goarch] = filepath.Join(root, a.Path)
	}
	sboms := map[string]bool{}
	for _, a := range byType["SBOM"] {
		sboms[a.Name] = true
	}
	var linuxAmd64 string
	binaries := t.TempDir() // the test's, not a subtest's: "version" and "image" run the linux/amd64 one later
	for _, p := range platforms {
		platform := p.goos + "/" + p.goarch
		t.Run("archive "+platform, func(t *testing.T) {
			path, ok := archives[platform]
			if !ok {
				t.Fatalf("no archive for %s among %v", platform, archives)
			}
			files := untar(t, path)
			for _, name := range []string{"mlops-fn", "LICENSE", "README.md", "CHANGELOG.md", schema.JobSchemaFile} {
				if _, ok := files[name]; !ok {
					t.Errorf("%s holds no %s", path, name)
				}
			}
			bin := filepath.Join(binaries, p.goos+"-"+p.goarch, "mlops-fn")
			if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(bin, files["mlops-fn"], 0o755); err != nil {
				t.Fatal(err)
			}
			if got := binaryPlatform(t, bin); got != platform {
				t.Errorf("%s: mlops-fn is a %s binary, want %s", path, got, platform)
			}
			if platform == "linux/amd64" {
				linuxAmd64 = bin
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if sum := sha256.Sum256(data); sums[filepath.Base(path)] != hex.EncodeToString(sum[:]) {
				t.Errorf("checksums.txt: %s is %q, its sha256 %x", filepath.Base(path), sums[filepath.Base(path)], sum)
			}
			if name := filepath.Base(path) + ".sbom.json"; !sboms[name] {
				t.Errorf("no SBOM %s among %v", name, sboms)
			} else {
				checkSBOM(t, filepath.Join(filepath.Dir(path), name))
			}
		})
	}
	if linuxAmd64 == "" {
		t.Fatal("no linux/amd64 binary to run")
	}
	t.Run("version", func(t *testing.T) {
		out, err := exec.Command(linuxAmd64, "version").Output()
		if err != nil || !strings.HasPrefix(string(out), "mlops-fn ") || !strings.Contains(string(out), "package:  github.com/mlops-fn/mlops-fn/fn/mlops-fn\n") {
			t.Fatalf("mlops-fn version: %v\n%s", err, out)
		}
		// Go stamps the commit in a clone (a git worktree's .git is a file: none there).
		if fi, err := os.Stat(filepath.Join(root, ".git")); err == nil && fi.IsDir() {
			head, err := exec.Command("git", "rev-parse", "HEAD").Output()
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(out), "commit:   "+strings.TrimSpace(string(head))+" ") {
				t.Errorf("mlops-fn version names no commit %s:\n%s", head, out)
			}
		}
	})

	images := map[string]string{} // goos/goarch: the image's reference
	for _, a := range byType["Docker Image"] {
		images[a.Goos+"/"+a.Goarch] = a.Name
	}
	for _, p := range platforms[:2] {
		platform := p.goos + "/" + p.goarch
		t.Run("image "+platform, func(t *testing.T) {
			ref, ok := images[platform]
			if !ok {
				t.Fatalf("no image for %s among %v", platform, images)
			}
			if !strings.HasPrefix(ref, "ghcr.io/mlops-fn/mlops-fn:v") || !strings.HasSuffix(ref, "-"+p.goarch) {
				t.Errorf("image %s: want ghcr.io/mlops-fn/mlops-fn:vVERSION-%s", ref, p.goarch)
			}
			if got := docker(t, nil, "image", "inspect", "--format", "{{.Os}}/{{.Architecture}}", ref); strings.TrimSpace(got) != platform {
				t.Errorf("image %s is for %s, want %s", ref, got, platform)
			}
			// The function in it, copied out without running it.
			id := strings.TrimSpace(docker(t, nil, "create", ref))
			defer docker(t, nil, "rm", id)
			bin := filepath.Join(t.TempDir(), "mlops-fn")
			docker(t, nil, "cp", id+":/usr/local/bin/mlops-fn", bin)
			if got := binaryPlatform(t, bin); got != platform {
				t.Errorf("image %s holds a %s binary, want %s", ref, got, platform)
			}
			if platform != "linux/amd64" {
				return
			}
			// The image renders the quickstart's kpt package as the binary does.
			in := resourceList(t, filepath.Join(root, "quickstart/kpt/multi-node"))
			fromImage := docker(t, in, "run", "-i", "--rm", "--network", "none", ref)
			run := exec.Command(linuxAmd64)
			run.Stdin = bytes.NewReader(in)
			fromBinary, err := run.Output()
			if err != nil {
				t.Fatalf("mlops-fn on the ResourceList: %v", err)
			}
			if fromImage != string(fromBinary) || !strings.Contains(fromImage, "kind: MPIJob") {
				t.Errorf("the image's ResourceList differs from the binary's:\n--- image\n%s\n--- binary\n%s", fromImage, fromBinary)
			}
		})
	}
}

// checksums reads checksums.txt: the sha256 of each file, by name.
func checksums(t *testing.T, files []artifact) map[string]string {
	t.Helper()
	if len(files) != 1 || files[0].Name != "checksums.txt" {
		t.Fatalf("want one checksums.txt, got %v", files)
	}
	data, err := os.ReadFile(filepath.Join(root, files[0].Path))
	if err != nil {
		t.Fatal(err)
	}
	sums := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if sum, name, ok := strings.Cut(line, "  "); ok {
			sums[name] = sum
		}
	}
	return sums
}

// untar reads the files of a .tar.gz.
func untar(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	files := map[string][]byte{}
	r := tar.NewReader(gz)
	for {
		h, err := r.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if files[h.Name], err = io.ReadAll(r); err != nil {
			t.Fatalf("%s: %s: %v", path, h.Name, err)
		}
	}
}

// binaryPlatform reads an executable's header: goos/goarch of an ELF or Mach-O file.
func binaryPlatform(t *testing.T, path string) string {
	t.Helper()
	if f, err := elf.Open(path); err == nil {
		defer f.Close()
		return "linux/" + map[elf.Machine]string{elf.EM_X86_64: "amd64", elf.EM_AARCH64: "arm64"}[f.Machine]
	}
	f, err := macho.Open(path)
	if err != nil {
		t.Fatalf("%s is neither ELF nor Mach-O: %v", path, err)
	}
	defer f.Close()
	return "darwin/" + map[macho.Cpu]string{macho.CpuAmd64: "amd64", macho.CpuArm64: "arm64"}[f.Cpu]
}

// checkSBOM: an SPDX document that lists the binary's modules.
func checkSBOM(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		SPDXVersion string `json:"spdxVersion"`
		Packages    []struct {
			Name string `json:"name"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for _, p := range doc.Packages {
		if p.Name == "sigs.k8s.io/kustomize/kyaml" {
			return
		}
	}
	t.Errorf("%s (%s): %d packages, none sigs.k8s.io/kustomize/kyaml, a module mlops-fn links", path, doc.SPDXVersion, len(doc.Packages))
}

// resourceList is what kpt hands the function for the package dir: its job
// spec as function config, its mlops.env ConfigMap as the item.
func resourceList(t *testing.T, dir string) []byte {
	t.Helper()
	read := func(name string) any {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := yaml.Unmarshal(data, &v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return v
	}
	out, err := yaml.Marshal(map[string]any{
		"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList",
		"functionConfig": read("job.yaml"), "items": []any{read("mlops-env.yaml")},
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// docker runs docker with stdin and returns its stdout.
func docker(t *testing.T, stdin []byte, args ...string) string {
	t.Helper()
	cmd := exec.Command("docker", args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("docker %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}
