// SPDX-License-Identifier: Apache-2.0

package hydrate

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mlops-fn/mlops-fn/internal/testutil"
	"github.com/mlops-fn/mlops-fn/pkg/scaffold"
)

// TestEnvFileMustBeInsideTheOverlay: kubectl's kustomize reads only files in
// or below the kustomization, so hydrate refuses an env file elsewhere before
// writing anything, and names any file inside by its path from the overlay.
func TestEnvFileMustBeInsideTheOverlay(t *testing.T) {
	t.Parallel()
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		// path is spec.envFile.path; {root} and {dir} stand for the tree and the overlay.
		path string
		// envAt is where mlops.env is put, from the tree's root.
		envAt string
		// relativeDir passes the overlay folder relative to the working directory.
		relativeDir bool
		// wantEnvs is the configMapGenerator's envs entry; empty: refused.
		wantEnvs string
	}{
		{name: "default", envAt: "overlay/mlops.env", wantEnvs: "mlops.env"},
		{name: "named", path: "mlops.env", envAt: "overlay/mlops.env", wantEnvs: "mlops.env"},
		{name: "below", path: "env/team.env", envAt: "overlay/env/team.env", wantEnvs: "env/team.env"},
		{name: "dot-dot back in", path: "./env/../mlops.env", envAt: "overlay/mlops.env", wantEnvs: "mlops.env"},
		{name: "up and back in", path: "../overlay/mlops.env", envAt: "overlay/mlops.env", wantEnvs: "mlops.env"},
		{name: "absolute inside", path: "{dir}/mlops.env", envAt: "overlay/mlops.env", wantEnvs: "mlops.env"},
		{name: "absolute inside, relative folder", path: "{dir}/env/mlops.env", envAt: "overlay/env/mlops.env", relativeDir: true, wantEnvs: "env/mlops.env"},
		{name: "sibling folder", path: "../shared/mlops.env", envAt: "shared/mlops.env"},
		{name: "sibling folder, relative folder", path: "../shared/mlops.env", envAt: "shared/mlops.env", relativeDir: true},
		{name: "down then out", path: "env/../../shared/mlops.env", envAt: "shared/mlops.env"},
		{name: "parent", path: "../mlops.env", envAt: "mlops.env"},
		{name: "absolute outside", path: "{root}/shared/mlops.env", envAt: "shared/mlops.env"},
		{name: "absolute outside, relative folder", path: "{root}/shared/mlops.env", envAt: "shared/mlops.env", relativeDir: true},
		{name: "prefix of the folder's name", path: "../overlay2/mlops.env", envAt: "overlay2/mlops.env"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			root, _ := overlay(t, "multi-node-nonroot")
			dir := filepath.Join(root, "overlay")
			env, err := os.ReadFile(filepath.Join(dir, "mlops.env"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(filepath.Join(dir, "mlops.env")); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Dir(filepath.Join(root, c.envAt)), 0o755); err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(root, c.envAt), string(env))
			value := strings.NewReplacer("{root}", root, "{dir}", dir).Replace(c.path)
			if c.path != "" {
				job, err := os.ReadFile(filepath.Join(dir, "job.yaml"))
				if err != nil {
					t.Fatal(err)
				}
				write(t, filepath.Join(dir, "job.yaml"), string(job)+"  envFile: {path: '"+value+"'}\n")
			}
			optsDir := dir
			if c.relativeDir {
				if optsDir, err = filepath.Rel(cwd, dir); err != nil {
					t.Fatal(err)
				}
			}
			before := snapshot(t, root)

			ov, err := Render(Options{Dir: optsDir})
			if c.wantEnvs == "" {
				if err == nil {
					t.Fatalf("rendered an overlay with spec.envFile.path %q outside %s", value, optsDir)
				}
				for _, want := range []string{filepath.Join(optsDir, "job.yaml"), "spec.envFile.path", value, "in or below", "kustomize"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("the error does not name %q: %v", want, err)
					}
				}
				if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
					t.Errorf("the refused run changed the tree (-before +after):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := ov.Write(); err != nil {
				t.Fatal(err)
			}
			k, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(k), "  envs:\n  - "+c.wantEnvs+"\n") {
				t.Errorf("kustomization.yaml does not name %s:\n%s", c.wantEnvs, k)
			}
			var data map[string]any
			for _, o := range kustomize(t, dir) {
				if o["kind"] == "ConfigMap" {
					data, _ = o["data"].(map[string]any)
				}
			}
			if data["WORKERS"] != "2" {
				t.Errorf("the generated ConfigMap does not carry mlops.env: %v", data)
			}
		})
	}
}

// TestWriteIsAllOrNothing: when a folder cannot be written, no folder
// changes, not even the ones before it, whether the write stops while staging
// or after the first folders were put in place (they are put back): every file
// is byte-identical to what it was, and no temporary file is left behind.
func TestWriteIsAllOrNothing(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		// spoil makes a destination unwritable in overlay a or b.
		spoil func(t *testing.T, a, b string)
		// single writes b alone, with Overlay.Write.
		single bool
		want   string
	}{
		{
			name:  "the second overlay's component is a file",
			spoil: func(t *testing.T, _, b string) { replaceByFile(t, filepath.Join(b, ComponentDir)) },
			want:  "nothing was written",
		},
		{
			name: "the second overlay's folder is gone",
			spoil: func(t *testing.T, _, b string) {
				if err := os.RemoveAll(b); err != nil {
					t.Fatal(err)
				}
			},
			want: "nothing was written",
		},
		{
			name:  "the second overlay's kustomization is a folder",
			spoil: func(t *testing.T, _, b string) { replaceByFolder(t, filepath.Join(b, "kustomization.yaml")) },
			want:  "nothing was written",
		},
		{
			name:   "one overlay: its kustomization is a folder",
			spoil:  func(t *testing.T, _, b string) { replaceByFolder(t, filepath.Join(b, "kustomization.yaml")) },
			single: true,
			want:   "nothing was written",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rootA, rootB, overlays := twoEditedOverlays(t)
			a, b := filepath.Join(rootA, "overlay"), filepath.Join(rootB, "overlay")
			c.spoil(t, a, b)
			before := map[string]map[string]string{a: snapshot(t, rootA), b: snapshot(t, rootB)}

			var err error
			if c.single {
				err = overlays[1].Write()
			} else {
				err = WriteAll(overlays)
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v; want one that says %q", err, c.want)
			}
			for dir, root := range map[string]string{a: rootA, b: rootB} {
				if diff := cmp.Diff(before[dir], snapshot(t, root)); diff != "" {
					t.Errorf("%s changed (-before +after):\n%s", dir, diff)
				}
			}
		})
	}
}

// twoEditedOverlays are two hydrated trees whose component and kustomization
// both change on the next write: a new worker count, and hydrate's component
// entry to put back.
func twoEditedOverlays(t *testing.T) (rootA, rootB string, overlays []*Overlay) {
	t.Helper()
	rootA, _ = overlay(t, "multi-node-nonroot")
	rootB, _ = overlay(t, "multi-node-nonroot")
	for _, root := range []string{rootA, rootB} {
		dir := filepath.Join(root, "overlay")
		env, _ := os.ReadFile(filepath.Join(dir, "mlops.env"))
		write(t, filepath.Join(dir, "mlops.env"), strings.Replace(string(env), "WORKERS=2", "WORKERS=3", 1))
		k, _ := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
		write(t, filepath.Join(dir, "kustomization.yaml"), strings.Replace(string(k), "components:\n- mlops-fn", "components: []", 1))
		ov, err := Render(Options{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if stale := ov.Stale(); len(stale) < 3 || ov.Kustomization == nil {
			t.Fatalf("%s: too little to write for the test to mean anything: %v", dir, stale)
		}
		overlays = append(overlays, ov)
	}
	return rootA, rootB, overlays
}

// TestWriteAllWritesEveryOverlay: with nothing in the way, every overlay is written and fresh.
func TestWriteAllWritesEveryOverlay(t *testing.T) {
	t.Parallel()
	var dirs []string
	var overlays []*Overlay
	for _, c := range []string{"multi-node-nonroot", "published-single-node-quickstart"} {
		root, _ := overlay(t, c)
		dir := filepath.Join(root, "overlay")
		env, _ := os.ReadFile(filepath.Join(dir, "mlops.env"))
		write(t, filepath.Join(dir, "mlops.env"), string(env)+"\nEXTRA_KEY=1\n")
		ov, err := Render(Options{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		dirs, overlays = append(dirs, dir), append(overlays, ov)
	}
	if err := WriteAll(overlays); err != nil {
		t.Fatal(err)
	}
	for i, dir := range dirs {
		if stale := overlays[i].Stale(); len(stale) > 0 {
			t.Errorf("%s: written, yet stale: %v", dir, stale)
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				t.Errorf("%s: temporary file left behind: %s", dir, e.Name())
			}
		}
	}
}

// TestWriteIsAllOrNothingAfterTheFirstFolder: a folder that fails once the
// first is in place puts the first back.
func TestWriteIsAllOrNothingAfterTheFirstFolder(t *testing.T) {
	t.Parallel()
	rootA, rootB, overlays := twoEditedOverlays(t)
	a, b := filepath.Join(rootA, "overlay"), filepath.Join(rootB, "overlay")
	beforeA := snapshot(t, rootA)
	// Once a is in place, b's kustomization becomes a folder: its rename fails.
	steps := 0
	for _, ov := range overlays {
		ov.afterStep = func(string) {
			if steps++; steps == 2 {
				replaceByFolder(t, filepath.Join(b, "kustomization.yaml"))
			}
		}
	}
	err := WriteAll(overlays)
	if err == nil || !strings.Contains(err.Error(), "every folder is as it was") {
		t.Fatalf("error %v; want one that says every folder is as it was", err)
	}
	if diff := cmp.Diff(beforeA, snapshot(t, rootA)); diff != "" {
		t.Errorf("%s changed (-before +after):\n%s", a, diff)
	}
	if _, err := os.Stat(filepath.Join(b, ComponentDir, "mpijob-patch.yaml")); err != nil {
		t.Errorf("%s lost its component: %v", b, err)
	}
	for _, dir := range []string{a, b} {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), tempPrefix) {
				t.Errorf("%s: temporary file left behind: %s", dir, e.Name())
			}
		}
	}
}

func replaceByFile(t *testing.T, path string) {
	t.Helper()
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	write(t, path, "")
}

func replaceByFolder(t *testing.T, path string) {
	t.Helper()
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(path, "inside"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// snapshot maps every path under root to its content (folders to "folder").
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	files, err := testutil.Snapshot(root)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestLinkOutsideIsRefused: kustomize's load restrictor follows a symlink,
// so mlops.env linking outside the overlay is refused; and kustomize finds
// no kustomization through a link that leaves the folder, so that is
// refused too (hydrate wrote its entries into the file outside). Nothing is
// written.
func TestLinkOutsideIsRefused(t *testing.T) {
	t.Parallel()
	for file, want := range map[string]string{
		"mlops.env":          "is not inside the overlay folder",
		"kustomization.yaml": "kustomization.yaml is a symbolic link to {shared}/kustomization.yaml, outside the overlay folder",
	} {
		t.Run(file, func(t *testing.T) {
			t.Parallel()
			root, _ := overlay(t, "multi-node-nonroot")
			dir := filepath.Join(root, "overlay")
			if err := os.MkdirAll(filepath.Join(root, "shared"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(filepath.Join(dir, file), filepath.Join(root, "shared", file)); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("../shared/"+file, filepath.Join(dir, file)); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, root)
			want = strings.ReplaceAll(want, "{shared}", filepath.Join(root, "shared"))
			if _, err := Render(Options{Dir: dir}); err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("want the link refused, saying %q, got %v", want, err)
			}
			if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
				t.Errorf("files changed (-before +after):\n%s", diff)
			}
		})
	}
}

// TestUsersFileIsNotOverwritten: a component folder that mlops-fn did not
// write (no header) stops the run before anything is written.
func TestUsersFileIsNotOverwritten(t *testing.T) {
	t.Parallel()
	root, _ := overlay(t, "multi-node-nonroot")
	dir := filepath.Join(root, "overlay")
	if err := os.RemoveAll(filepath.Join(dir, ComponentDir)); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, ComponentDir), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, ComponentDir, "kustomization.yaml"), "kind: Component # mine\n")
	before := snapshot(t, root)
	if _, err := Render(Options{Dir: dir}); err == nil || !strings.Contains(err.Error(), "mlops-fn did not write it") {
		t.Fatalf("want the user's %s folder protected, got %v", ComponentDir, err)
	}
	if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
		t.Errorf("files changed (-before +after):\n%s", diff)
	}
}

// TestSymlinkedKustomizationStaysALink: hydrate writes through a symbolic
// link to the file it names, and the link stays.
func TestSymlinkedKustomizationStaysALink(t *testing.T) {
	t.Parallel()
	root, _ := overlay(t, "multi-node-nonroot")
	dir := filepath.Join(root, "overlay")
	if err := os.MkdirAll(filepath.Join(dir, "conf"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "kustomization.yaml"), filepath.Join(dir, "conf", "kustomization.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("conf/kustomization.yaml", filepath.Join(dir, "kustomization.yaml")); err != nil {
		t.Fatal(err)
	}
	k, _ := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	write(t, filepath.Join(dir, "conf", "kustomization.yaml"), strings.Replace(string(k), "components:\n- mlops-fn", "components: []", 1))
	ov, err := Render(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if ov.Kustomization == nil {
		t.Fatal("nothing to write into the kustomization: the test means nothing")
	}
	if err := ov.Write(); err != nil {
		t.Fatal(err)
	}
	info, err := os.Lstat(filepath.Join(dir, "kustomization.yaml"))
	if err != nil || info.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("kustomization.yaml is no longer a link: %v %v", info, err)
	}
	k, err = os.ReadFile(filepath.Join(dir, "conf", "kustomization.yaml"))
	if err != nil {
		entries, _ := os.ReadDir(filepath.Join(dir, "conf"))
		t.Fatalf("%v %v", err, entries)
	}
	if !strings.Contains(string(k), "- mlops-fn") {
		t.Errorf("the link's target did not get the component entry (%d bytes):\n%s", len(k), k)
	}
	kustomize(t, dir)
}

// initFolder writes dir as mlops-fn init does for a job named name, hydrated.
func initFolder(t *testing.T, dir, name string) {
	t.Helper()
	files, err := scaffold.Files(scaffold.Options{Name: name, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	err = scaffold.Write(dir, files, func(staged string) error {
		ov, err := Render(Options{Dir: staged, Resources: []string{scaffold.BaseDir}})
		if err != nil {
			return err
		}
		return ov.Write()
	})
	if err != nil {
		t.Fatal(err)
	}
}

// following is Options for dir as the command passes them: with the base
// init wrote made to follow the job spec, when it must.
func following(dir string) Options {
	o := Options{Dir: dir}
	if base := scaffold.Follow(dir, "job.yaml"); base != nil {
		o.Folders = base.Folders()
	}
	return o
}

// renamedInit is a folder of init's whose job.yaml renames the job to name,
// and the Options that make its base follow.
func renamedInit(t *testing.T, name string) (dir string, o Options) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "job")
	initFolder(t, dir, "job")
	spec, _ := os.ReadFile(filepath.Join(dir, "job.yaml"))
	write(t, filepath.Join(dir, "job.yaml"), strings.Replace(string(spec), "\n  name: job\n", "\n  name: "+name+"\n", 1))
	if o = following(dir); o.Folders == nil {
		t.Fatalf("%s: the base init wrote does not follow the renamed job", dir)
	}
	return dir, o
}

// TestFollowedBaseGoesWithTheOverlay: the base init wrote, made to follow a
// renamed job (Options.Folders), is built and checked with the overlay and
// written with it, all or nothing: a refused Render leaves every file as it
// was, a write undone after the base was swapped in puts it back, and a
// write that succeeds leaves the base renamed and nothing stale.
func TestFollowedBaseGoesWithTheOverlay(t *testing.T) {
	t.Parallel()
	dir, o := renamedInit(t, "renamed")
	contradiction := "- target: {kind: MPIJob}\n  patch: |\n    - op: replace\n      path: /spec/mpiReplicaSpecs/Worker/replicas\n      value: 9\n"
	k, _ := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	write(t, filepath.Join(dir, "kustomization.yaml"), string(k)+contradiction)
	before := snapshot(t, dir)
	if _, err := Render(o); err == nil || !strings.Contains(err.Error(), "MPIJob/renamed: spec.mpiReplicaSpecs.Worker.replicas") {
		t.Errorf("a patch contradicting mlops-fn's over the renamed base: want the check's refusal, got %v", err)
	}
	if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
		t.Errorf("the refused run changed files (-before +after):\n%s", diff)
	}
	write(t, filepath.Join(dir, "kustomization.yaml"), string(k))

	// Two overlays; the second fails once the first, base included, is in place.
	other, otherOptions := renamedInit(t, "other")
	before, otherBase := snapshot(t, dir), snapshot(t, filepath.Join(other, "base"))
	first, err := Render(o)
	if err != nil {
		t.Fatal(err)
	}
	second, err := Render(otherOptions)
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	first.afterStep = func(s string) { steps = append(steps, s) }
	second.afterStep = func(s string) {
		if s == "base" {
			replaceByFolder(t, filepath.Join(other, "kustomization.yaml"))
		}
	}
	if err := WriteAll([]*Overlay{first, second}); err == nil || !strings.Contains(err.Error(), "every folder is as it was") {
		t.Fatalf("error %v; want one that says every folder is as it was", err)
	}
	if !slices.Contains(steps, "base") {
		t.Errorf("the base was not swapped in before the failure (steps %v): the test means nothing", steps)
	}
	if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
		t.Errorf("%s is not as it was (-before +after):\n%s", dir, diff)
	}
	if diff := cmp.Diff(otherBase, snapshot(t, filepath.Join(other, "base"))); diff != "" {
		t.Errorf("%s's base is not as it was (-before +after):\n%s", other, diff)
	}

	ov, err := Render(o)
	if err != nil {
		t.Fatal(err)
	}
	if stale := ov.Stale(); !slices.Contains(stale, "base/mpijob.yaml") {
		t.Errorf("Stale before the write: want base/mpijob.yaml among %v", stale)
	}
	if err := ov.Write(); err != nil {
		t.Fatal(err)
	}
	if skeleton, _ := os.ReadFile(filepath.Join(dir, "base", "mpijob.yaml")); !strings.Contains(string(skeleton), "\n  name: renamed\n") {
		t.Errorf("the base's skeleton is not renamed:\n%s", skeleton)
	}
	again := following(dir)
	if again.Folders != nil {
		t.Errorf("after the write the base still has to follow the job")
	}
	if ov, err = Render(again); err != nil {
		t.Fatal(err)
	}
	if stale := ov.Stale(); len(stale) > 0 {
		t.Errorf("the next run finds stale files: %v", stale)
	}
}
