// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mlops-fn/mlops-fn/internal/testutil"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
)

// The tests run in this order (go test runs a file's tests in order, one at a time).

func TestControlPlane(t *testing.T) {
	section("control plane")
	c := newCheck(t, "")
	want := os.Getenv("KUBERNETES_VERSION")
	v, err := kube.Discovery().ServerVersion()
	if err != nil {
		c.fail("kube-apiserver answers", err.Error())
		return
	}
	if want == "" {
		c.skip("the pinned Kubernetes version: KUBERNETES_VERSION is not set (run.sh passes hack/e2e/versions.env's)")
		return
	}
	c.eq("the client talks to kube-apiserver "+want, want, v.GitVersion)
}

func TestBrokenObjects(t *testing.T) {
	section("broken objects")
	c := newCheck(t, "")
	if err := newNamespace("broken", ""); err != nil {
		c.fail("the namespace broken", err.Error())
		return
	}
	checkBrokenObjects(c)
	checkBrokenTrainJob(c)
}

// TestOverlays runs each overlay: dry runs, the Pod Security level, then the job for real.
func TestOverlays(t *testing.T) {
	dirs := namedOverlays()
	if dirs == nil {
		var err error
		if dirs, err = allOverlays(); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, fixtureDir)
	}
	for _, dir := range dirs {
		section(dir)
		c := newCheck(t, strings.TrimSuffix(dir, "/"))
		o, err := loadOverlay(dir)
		if err != nil {
			c.fail("the overlay builds, and mlops-fn resolves its job", err.Error())
			continue
		}
		describeOverlay(o)
		guarded(c, func() { runOverlay(c, o) })
	}
}

// guarded runs checks; a panic in them fails one check with its stack, and the next overlay runs.
func guarded(c *check, checks func()) {
	defer func() {
		if r := recover(); r != nil {
			c.fail(fmt.Sprintf("the checks ran to their end (they panicked: %v)", r), string(debug.Stack()))
		}
	}()
	checks()
}

// TestPublished runs the upstream examples and the team jobs the runner tests use (internal/testutil.UserJobs),
// each hydrated over the example as a user would, like an overlay: jobs this project did not write.
func TestPublished(t *testing.T) {
	if skipWhenNamed(newCheck(t, ""), "the published examples", false) {
		return
	}
	work := t.TempDir()
	jobs, err := testutil.UserJobs()
	if err != nil {
		newCheck(t, "the user jobs").fail("read", err.Error())
		return
	}
	for i, p := range jobs {
		what := fmt.Sprintf("published %s %s #%d", p.Module, p.File, i+1)
		section(what)
		c := newCheck(t, what)
		if why := publishedSkip(p); why != "" {
			c.skip(why)
			continue
		}
		dir, err := publishedOverlay(p, filepath.Join(work, strconv.Itoa(i)))
		var o *overlay
		if err == nil {
			o, err = loadOverlay(dir)
		}
		if err != nil {
			c.fail("hydrated over the example, the overlay builds", err.Error())
			continue
		}
		o.slug = fmt.Sprintf("published-%d", i+1)
		describeOverlay(o)
		guarded(c, func() { runOverlay(c, o) })
	}
}

func describeOverlay(o *overlay) {
	if o.plan == nil {
		note("%s %s (a fixture), Pod Security %s", o.kind.Kind, o.name, o.level)
		return
	}
	p := o.plan
	note("%s %s, %s: workers=%d slots=%d gpus=%d uid=%s, Pod Security %s", o.kind.Kind, o.name, p.JobKind, p.Workers, p.SlotsPerWorker, p.GPUsPerWorker, optional(p.RunAsUser), o.level)
}

func runOverlay(c *check, o *overlay) {
	checkDryRun(c, o)
	ns := "run-" + o.slug
	if o.kind.JobKind() == jobkind.TrainJob {
		// Its pods exist only once Trainer has merged runtime and patches: applied for real under
		// the level it claims (the pods must be admitted), then one of them probes each level.
		if o.level != "restricted" {
			checkRefusedForReal(c, o)
		}
		if pod := checkTrainJob(c, o, ns, o.level); pod != nil {
			checkPodSecurity(c, o, pod)
		} else {
			c.skip("Pod Security: no pod of the TrainJob to probe")
		}
		return
	}
	level := checkPodSecurity(c, o, nil)
	if o.job == nil {
		c.skip("no job to apply for real: the harness runs no controller for its objects")
		return
	}
	if level != "restricted" {
		checkRefusedForReal(c, o)
	}
	switch o.kind.JobKind() {
	case jobkind.Pod:
		checkPod(c, o, ns, level)
	case jobkind.MPIJob:
		checkMPIJob(c, o, ns, level)
	case jobkind.PyTorchJob:
		checkPyTorchJob(c, o, ns, level)
	}
}

// allOverlays are the quickstart overlays, then the examples: each folder with a job.yaml and
// a kustomization.yaml, sorted.
func allOverlays() ([]string, error) {
	var dirs []string
	for _, top := range []string{"quickstart/k8s/mlops", "examples"} {
		var found []string
		err := filepath.WalkDir(top, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() != "job.yaml" {
				return err
			}
			dir := filepath.Dir(path)
			if _, err := os.Stat(filepath.Join(dir, "kustomization.yaml")); err == nil {
				found = append(found, dir)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		slices.Sort(found)
		dirs = append(dirs, found...)
	}
	return dirs, nil
}

// quickstartOverlays are the quickstart's overlays, one a job kind.
func quickstartOverlays() ([]string, error) {
	all, err := allOverlays()
	var qs []string
	for _, d := range all {
		if strings.HasPrefix(d, "quickstart/") {
			qs = append(qs, d)
		}
	}
	return qs, err
}

// quickstartTree is a copy of the quickstart to edit, and its overlays (relative to the copy).
func quickstartTree(t *testing.T) (string, []string) {
	tree, err := quickstartCopy(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := quickstartOverlays()
	if err != nil {
		t.Fatal(err)
	}
	return tree, dirs
}

// skipWhenNamed: the checks over the whole quickstart run only when E2E_OVERLAYS names no overlay
// (or force says to run anyway).
func skipWhenNamed(c *check, what string, force bool) bool {
	if namedOverlays() != nil && !force {
		c.skip(what + ": only the overlays E2E_OVERLAYS names run")
		return true
	}
	return false
}

func TestRenamed(t *testing.T) {
	section("renamed by an overlay on top")
	c := newCheck(t, "")
	if skipWhenNamed(c, "the quickstarts under namePrefix/nameSuffix", false) {
		return
	}
	dirs, err := quickstartOverlays()
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	for _, dir := range dirs {
		o, err := loadOverlay(dir)
		if err != nil {
			c.fail(dir+" builds", err.Error())
			continue
		}
		if o.kind.JobKind() == jobkind.Pod {
			continue // a Pod has no operator that could miss a renamed name
		}
		guarded(c, func() { checkRenamed(c, o, work) })
	}
}

func TestEdited(t *testing.T) {
	section("edited, then applied without and with mlops-fn hydrate")
	c := newCheck(t, "")
	if skipWhenNamed(c, "the edited quickstart", false) {
		return
	}
	checkEdited(c, t.TempDir())
}

func TestKueue(t *testing.T) {
	section("Kueue: each quickstart kind queued, admitted, held by quota, and not held without QUEUE")
	c := newCheck(t, "")
	if skipWhenNamed(c, "Kueue", os.Getenv("E2E_KUEUE") == "1") || !kueueSetup(c) {
		return
	}
	tree, dirs := quickstartTree(t)
	for _, dir := range dirs {
		guarded(c, func() { checkKueue(c, dir, tree) })
	}
}
