// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/mlops-fn/mlops-fn/internal/testutil"
)

// kustomizeReleases are the kustomize releases the guard must hold on
// (KUSTOMIZE_RELEASES in hack/e2e/versions.env: those kubectl v1.31 and
// later embed, and the pinned one on PATH), and the folder .ci/run installs
// each into, DIR/VERSION/kustomize (KUSTOMIZE_RELEASES_DIR, else
// $(go env GOPATH)/kustomize).
func kustomizeReleases(t *testing.T) (releases []string, dir string) {
	t.Helper()
	pins, err := os.ReadFile(filepath.Join(repoRoot, "hack/e2e/versions.env"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^KUSTOMIZE_RELEASES="([^"]+)"$`).FindSubmatch(pins)
	if m == nil {
		t.Fatal(`hack/e2e/versions.env has no KUSTOMIZE_RELEASES="…" line`)
	}
	releases = strings.Fields(string(m[1]))
	for _, minor := range []string{"v5.4.", "v5.6.", "v5.8."} {
		if !strings.Contains(string(m[1]), minor) {
			t.Errorf("KUSTOMIZE_RELEASES lacks a %sx release: %v", minor, releases)
		}
	}
	if dir = os.Getenv("KUSTOMIZE_RELEASES_DIR"); dir == "" {
		gopath, err := exec.Command("go", "env", "GOPATH").Output()
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(strings.TrimSpace(string(gopath)), "kustomize")
	}
	return releases, dir
}

// kustomizeRelease is the binary of release, or skips saying how to install it.
func kustomizeRelease(t *testing.T, dir, release string) string {
	t.Helper()
	bin := filepath.Join(dir, release, "kustomize")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	// The pinned kustomize on PATH is not installed twice.
	if p, err := exec.LookPath("kustomize"); err == nil {
		if v, err := exec.Command(p, "version").Output(); err == nil && strings.TrimSpace(string(v)) == release {
			return p
		}
	}
	t.Skipf("kustomize %s not installed at %s: GOBIN=%s go install sigs.k8s.io/kustomize/kustomize/v5@%s (.ci/run installs it)",
		release, bin, filepath.Dir(bin), release)
	return ""
}

// guardEdit is an edit of a hydrated quickstart overlay without hydrate, and
// what the build then says: the guard's whole message, or a part of it
// (contains), or nothing (the build gives the fresh objects).
type guardEdit struct {
	name            string
	edit            func(t *testing.T, overlay string) bool // false: does not apply
	multiNodeOnly   bool                                    // the same steps of the guard in every kind
	fails           string
	failsContaining []string
}

// The guard's message, as kustomize's JSON patch prints a failed test.
func guardMessage(field string) string {
	return "testing value /" + field + " changed: run mlops-fn hydrate on this folder; check failed: test failed"
}

func replaceIn(t *testing.T, file string, re *regexp.Regexp, with func(m string) string) bool {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	loc := re.FindIndex(data)
	if loc == nil {
		return false
	}
	out := string(data[:loc[0]]) + with(string(data[loc[0]:loc[1]])) + string(data[loc[1]:])
	if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	return true
}

var guardEdits = []guardEdit{
	{name: "fresh", edit: func(*testing.T, string) bool { return true }},
	{name: "a comment, and CRLF line ends", edit: func(t *testing.T, overlay string) bool {
		// kustomize's envs: parse drops comments and a line end's \r (the
		// guard compares values, not lines); YAML reads CRLF alike.
		for _, f := range []string{"mlops.env", "job.yaml"} {
			path := filepath.Join(overlay, f)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			data = append(data, "# a comment\n"...)
			if err := os.WriteFile(path, bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n")), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return true
	}},
	{name: "WORKERS edited in mlops.env", fails: guardMessage("mlops.env"), edit: func(t *testing.T, overlay string) bool {
		env := filepath.Join(overlay, "mlops.env")
		if !replaceIn(t, env, regexp.MustCompile(`(?m)^WORKERS=\d+$`), func(string) string { return "WORKERS=7" }) {
			data, err := os.ReadFile(env)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(env, append(data, "WORKERS=7\n"...), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return true
	}},
	{name: "a label added in job.yaml", multiNodeOnly: true, fails: guardMessage("job.yaml"), edit: func(t *testing.T, overlay string) bool {
		return replaceIn(t, filepath.Join(overlay, "job.yaml"), regexp.MustCompile(`(?m)^metadata:\n`), func(m string) string {
			return m + "  labels: {team: vision}\n"
		})
	}},
	{name: "the base moved into a namespace", multiNodeOnly: true, failsContaining: []string{"testing value /the base or kustomization.yaml changed: run mlops-fn hydrate on this folder; check/", "/metadata/namespace failed: test failed"},
		edit: func(t *testing.T, overlay string) bool {
			bases, _ := filepath.Glob(filepath.Join(overlay, "../../../common/tensorflow/k8s/mlops", filepath.Base(overlay), "kustomization.yaml"))
			return len(bases) == 1 && replaceIn(t, bases[0], regexp.MustCompile(`(?m)^resources:\n`), func(m string) string { return "namespace: ml\n" + m })
		}},
	{name: "the env ConfigMap's hash turned off", multiNodeOnly: true, failsContaining: []string{"changed: run mlops-fn hydrate on this folder; check/ConfigMap ", "/metadata/annotations/internal.config.kubernetes.io~1needsHashSuffix failed: test failed"},
		edit: func(t *testing.T, overlay string) bool {
			// kustomize marks a name it will hash with an internal annotation,
			// which the guard tests for.
			checks, err := os.ReadFile(filepath.Join(overlay, "mlops-fn/kustomization.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			return bytes.Contains(checks, []byte("internal.config.kubernetes.io~1needsHashSuffix")) &&
				replaceIn(t, filepath.Join(overlay, "kustomization.yaml"), regexp.MustCompile(`disableNameSuffixHash: false`), func(string) string { return "disableNameSuffixHash: true" })
		}},
	{name: "mlops-fn dropped from components", multiNodeOnly: true, fails: "testing value /kustomization.yaml lists no mlops-fn in components: run mlops-fn hydrate on this folder; check failed: test failed",
		edit: func(t *testing.T, overlay string) bool {
			return replaceIn(t, filepath.Join(overlay, "kustomization.yaml"), regexp.MustCompile(`(?m)^- mlops-fn\b.*$`), func(string) string { return "# - mlops-fn" })
		}},
}

// built is every object of a build by kind/name, none of them local-config.
func built(t *testing.T, out string) map[string]map[string]any {
	t.Helper()
	nodes, err := (&kio.ByteReader{Reader: strings.NewReader(out), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatalf("output does not parse: %v\n%s", err, out)
	}
	all := map[string]map[string]any{}
	for _, n := range nodes {
		if _, local := n.GetAnnotations()["config.kubernetes.io/local-config"]; local {
			t.Errorf("the build outputs %s/%s, which is local-config (the job spec, the guard and its inputs are never applied)", n.GetKind(), n.GetName())
		}
		m, err := n.Map()
		if err != nil {
			t.Fatal(err)
		}
		all[n.GetKind()+"/"+n.GetName()] = m
	}
	return all
}

// TestGuardOnEveryKustomize builds each quickstart overlay, fresh and edited
// without hydrate, with each kustomize release a supported kubectl embeds:
// the fresh one builds the function's objects, the same on every release;
// each stale one fails with the guard's message, word for word where
// kustomize's words are part of it (a failed JSON patch test). It covers what
// the guard takes from kustomize beyond its documentation (docs/hydrate.md,
// "What the guard takes from kustomize").
func TestGuardOnEveryKustomize(t *testing.T) {
	releases, dir := kustomizeReleases(t)
	binary(t)
	fresh := map[string]map[string]map[string]any{} // topology: the first release's objects
	function := map[string]map[string]map[string]any{}
	for _, topology := range testutil.QuickstartFolders() {
		function[topology] = objects(t, run(t, "bin/mlops-fn", "quickstart/k8s/mlops/"+topology+"/job.yaml"))
	}
	for _, release := range releases {
		t.Run(release, func(t *testing.T) {
			kustomize := kustomizeRelease(t, dir, release)
			for _, topology := range testutil.QuickstartFolders() {
				for _, e := range guardEdits {
					if e.multiNodeOnly && topology != "multi-node" {
						continue
					}
					t.Run(topology+"/"+e.name, func(t *testing.T) {
						root := filepath.Join(t.TempDir(), "quickstart")
						if err := testutil.CopyTree(filepath.Join(repoRoot, "quickstart"), root); err != nil {
							t.Fatal(err)
						}
						overlay := filepath.Join(root, "k8s/mlops", topology)
						if !e.edit(t, overlay) {
							t.Skip("does not apply to this overlay")
						}
						cmd := exec.Command(kustomize, "build", overlay)
						var stdout, stderr bytes.Buffer
						cmd.Stdout, cmd.Stderr = &stdout, &stderr
						err := cmd.Run()
						if e.fails == "" && e.failsContaining == nil {
							if err != nil {
								t.Fatalf("kustomize %s build: %v\n%s", release, err, stderr.String())
							}
							if diff := cmp.Diff(function[topology], objects(t, stdout.String())); diff != "" {
								t.Errorf("kustomize %s builds other objects than the function renders (-function +kustomize):\n%s", release, diff)
							}
							all := built(t, stdout.String())
							if e.name != "fresh" {
								return
							}
							if first, ok := fresh[topology]; ok {
								if diff := cmp.Diff(first, all); diff != "" {
									t.Errorf("kustomize %s builds other objects than %s (-%s +%s):\n%s", release, releases[0], releases[0], release, diff)
								}
							} else {
								fresh[topology] = all
							}
							return
						}
						if err == nil {
							t.Fatalf("kustomize %s builds the stale overlay with exit 0:\n%s", release, stdout.String())
						}
						for _, want := range append(e.failsContaining, e.fails) {
							if !strings.Contains(stderr.String(), want) {
								t.Errorf("kustomize %s fails without the guard's message\n%s\nit prints:\n%s", release, want, stderr.String())
							}
						}
					})
				}
			}
		})
	}
}
