// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
)

// editedImage is the image `kustomize edit set image` gives the job: kwok's nodes run any.
const editedImage = "localhost/e2e/edited:v2"

// imageName is an image reference without its tag or digest, as kustomize's images: names it.
func imageName(ref string) string {
	if i := strings.IndexByte(ref, '@'); i >= 0 {
		ref = ref[:i]
	}
	if i := strings.LastIndexByte(ref, ':'); i > strings.LastIndexByte(ref, '/') {
		ref = ref[:i]
	}
	return ref
}

// setImage runs `kustomize edit set image NAME=editedImage` in dir, as a CI job does after it
// built an image; without kustomize on PATH it writes the entry kustomize writes.
func setImage(dir, name string) (string, error) {
	if bin, err := exec.LookPath("kustomize"); err == nil {
		cmd := exec.Command(bin, "edit", "set", "image", name+"="+editedImage)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		return "kustomize edit set image", errorWith(err, out)
	}
	path := filepath.Join(dir, "kustomization.yaml")
	text, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	entry := "images:\n- name: " + name + "\n  newName: " + imageName(editedImage) + "\n  newTag: v2\n"
	return "the images: entry kustomize edit set image writes (no kustomize on PATH)", os.WriteFile(path, append(text, entry...), 0o644)
}

// errorWith adds a command's output to its error.
func errorWith(err error, out []byte) error {
	if err == nil {
		return nil
	}
	return &commandError{err: err, out: string(out)}
}

type commandError struct {
	err error
	out string
}

func (e *commandError) Error() string { return e.err.Error() + ": " + e.out }

// checkEditImage: the overlay's image set with kustomize edit, then mlops-fn apply (which
// hydrates first): hydrate keeps the user's images: entry, --check passes, and every pod of
// the job runs the new image, no container the old one.
func checkEditImage(c *check, dir, ns string) {
	o, ok := overlayIn(c, dir, ns)
	if !ok {
		return
	}
	old := imageName(o.plan.Image)
	how, err := setImage(dir, old)
	if err != nil {
		c.fail("the image set", err.Error())
		return
	}
	if out, err := runWithoutKubectl("apply", dir, "-n", ns); err != nil || !strings.Contains(out, " created") {
		c.fail(how+", then mlops-fn apply: the job is created", out)
		return
	}
	c.pass(how + " " + old + "=" + editedImage + ", then mlops-fn apply: the job is created")
	text, _ := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	c.that("hydrate kept the images: entry", strings.Contains(string(text), "newName: "+imageName(editedImage)), string(text))
	out, err := runWithoutKubectl("hydrate", "--check", dir)
	c.that("mlops-fn hydrate --check passes on the edited overlay", err == nil, out)

	role, want := workerRole(o), 1
	if o.kind.JobKind() != jobkind.Pod {
		want = int(o.plan.Workers)
	}
	var ps []corev1.Pod
	all := func() []corev1.Pod {
		if o.kind.JobKind() == jobkind.Pod {
			return jobPods(o, ns, "")
		}
		return pods(ns, o.kind.PodsLabel+"="+o.name)
	}
	waitUntil(waitForPods, func() bool {
		workers := slices.DeleteFunc(jobPods(o, ns, role), func(p corev1.Pod) bool { return p.DeletionTimestamp != nil })
		launched := o.kind.JobKind() != jobkind.MPIJob || len(jobPods(o, ns, jobkind.Launcher)) > 0
		ps = all()
		return len(workers) == want && launched
	})
	c.that("the job's pods are there (its workers, an MPIJob's launcher)", len(ps) >= want, podTable(ns))
	for _, p := range ps {
		var images []string
		for _, k := range slices.Concat(p.Spec.InitContainers, p.Spec.Containers) {
			images = append(images, k.Name+"="+k.Image)
			if imageName(k.Image) == old {
				c.fail("pod/"+p.Name+": container "+k.Name+" runs the new image", k.Image)
			}
		}
		r := role
		if o.kind.JobKind() == jobkind.MPIJob && strings.Contains(p.Name, "-launcher") {
			r = jobkind.Launcher
		}
		k := o.trainingContainer(&p, r)
		c.that("pod/"+p.Name+" runs "+editedImage+" in its training container", k != nil && k.Image == editedImage, images...)
	}
}

// TestEditImage: an overlay edited with `kustomize edit set image` and applied with mlops-fn
// apply runs the new image on every pod: kustomize's images: is the user's and wins over the
// job spec's image; a TrainJob's spec.trainer.image too, which kustomize's images: reaches
// through the component's configuration (schema.NameReferences).
func TestEditImage(t *testing.T) {
	section("kustomize edit set image, then mlops-fn apply: every pod runs the new image")
	c := newCheck(t, "")
	if skipWhenNamed(c, "the quickstarts with kustomize edit set image", false) {
		return
	}
	eachQuickstart(t, " with kustomize edit set image", "image-", checkEditImage)
}
