// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mlops-fn/mlops-fn/internal/testutil"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/kinds/jobset"
)

// quickstartCopy copies the repository's quickstart under dir (the overlays' bases are
// outside their folders) and returns the copy's root.
func quickstartCopy(dir string) (string, error) {
	return dir, testutil.CopyTree(filepath.Join(root, "quickstart"), filepath.Join(dir, "quickstart"))
}

// checkRenamed: an overlay of the user's over the hydrated overlay renames everything
// (namePrefix, nameSuffix); the job the operator runs must name the renamed ConfigMap and
// ServiceAccount (the API server refuses pods whose ServiceAccount does not exist), which takes
// the hydrated component's name references.
func checkRenamed(c *check, o *overlay, work string) {
	c = newCheck(c.t, o.dir+" under namePrefix/nameSuffix")
	const prefix, suffix = "dev-", "-v2"
	dir := filepath.Join(work, "renamed-"+o.slug)
	base, err := filepath.Rel(dir, filepath.Join(root, o.dir))
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "kustomization.yaml"),
			fmt.Appendf(nil, "namePrefix: %s\nnameSuffix: %s\nresources:\n- %s\n", prefix, suffix, base), 0o644)
	}
	if err != nil {
		c.fail("an overlay on top", err.Error())
		return
	}
	renamed := *o
	renamed.name = prefix + o.name + suffix
	ns := "renamed-" + o.slug
	if err := newNamespace(ns, "privileged"); err != nil {
		c.fail("a namespace", err.Error())
		return
	}
	if out, err := kubectl("", "apply", "-k", dir, "-n", ns, "--server-side"); err != nil {
		c.fail("apply -k", out)
		return
	}
	role, n := "worker", int(o.plan.Workers)
	if o.kind.JobKind() == jobkind.TrainJob || o.kind.JobKind() == jobset.JobSet {
		role = string(jobkind.TrainerNode)
	}
	if !waitUntil(waitForPods, func() bool { return len(pods(ns, renamed.selector(role))) >= n }) {
		c.fail("the operator creates the renamed job's pods", recentEvents(ns, 5))
		return
	}
	c.pass(fmt.Sprintf("the operator creates the pods of %s (their ServiceAccount exists)", renamed.name))
	ps := pods(ns, renamed.selector(role))
	if o.kind.Kind == "MPIJob" {
		launchers := renamed.selector(strings.ToLower(string(jobkind.Launcher)))
		waitUntil(waitForPods, func() bool { return len(pods(ns, launchers)) >= 1 })
		ps = append(ps, pods(ns, launchers)...)
	}
	wantSA := prefix + o.plan.ServiceAccountName + suffix
	for _, p := range ps {
		sa := p.Spec.ServiceAccountName
		if sa == "" {
			sa = "default"
		}
		c.eq(fmt.Sprintf("pod/%s runs as the renamed ServiceAccount", p.Name), wantSA, sa)
		cms := envConfigMaps(&p)
		if len(cms) == 0 {
			c.fail(fmt.Sprintf("pod/%s reads the env ConfigMap (envFrom or configMapKeyRef)", p.Name), jsonText(p.Spec.Containers))
		}
		for _, cm := range cms {
			_, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, cm, metav1.GetOptions{})
			c.that(fmt.Sprintf("pod/%s's env ConfigMap %s exists", p.Name, cm), err == nil, fmt.Sprint(err))
		}
	}
}

// envConfigMaps are the ConfigMaps the pod's containers read their environment from.
func envConfigMaps(p *corev1.Pod) []string {
	var names []string
	add := func(n string) {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for _, k := range p.Spec.Containers {
		for _, e := range k.EnvFrom {
			if e.ConfigMapRef != nil {
				add(e.ConfigMapRef.Name)
			}
		}
		for _, e := range k.Env {
			if e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil {
				add(e.ValueFrom.ConfigMapKeyRef.Name)
			}
		}
	}
	slices.Sort(names)
	return names
}

// checkEdited: a user edits the multi-node quickstart's mlops.env and runs kubectl apply -k
// without hydrating again: the API server gets nothing, and kubectl says to run hydrate. After
// hydrate, the job the operator runs has the new worker count.
func checkEdited(c *check, work string) {
	const workers = 5
	tree, err := quickstartCopy(filepath.Join(work, "edited"))
	if err != nil {
		c.fail("a copy of the quickstart", err.Error())
		return
	}
	dir := filepath.Join(tree, "quickstart/k8s/mlops/multi-node")
	before, err := loadOverlay(dir)
	if err != nil {
		c.fail("the quickstart's copy builds", err.Error())
		return
	}
	envFile := filepath.Join(dir, "mlops.env")
	text, err := os.ReadFile(envFile)
	if err == nil {
		text = regexp.MustCompile(`(?m)^WORKERS=.*$`).ReplaceAll(text, fmt.Appendf(nil, "WORKERS=%d", workers))
		err = os.WriteFile(envFile, text, 0o644)
	}
	if err != nil {
		c.fail("WORKERS edited in mlops.env", err.Error())
		return
	}
	const ns = "edited"
	if err := newNamespace(ns, "privileged"); err != nil {
		c.fail("a namespace", err.Error())
		return
	}
	out, err := kubectl("", "apply", "-k", dir, "-n", ns, "--server-side")
	switch {
	case err == nil:
		c.fail("edited mlops.env, not hydrated: kubectl apply -k fails", out)
	case strings.Contains(out, "run mlops-fn hydrate on this folder"):
		c.pass("edited mlops.env, not hydrated: kubectl apply -k fails, saying to run mlops-fn hydrate")
	default:
		c.fail("edited mlops.env, not hydrated: kubectl apply -k says to run mlops-fn hydrate", out)
	}
	var reached []string
	if l, err := list(before.kind.APIVersion, before.kind.Kind, ns); err == nil {
		for _, u := range l {
			reached = append(reached, u.GetKind()+"/"+u.GetName())
		}
	}
	if cms, err := kube.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{}); err == nil {
		for _, cm := range cms.Items {
			if cm.Name != "kube-root-ca.crt" {
				reached = append(reached, "ConfigMap/"+cm.Name)
			}
		}
	}
	c.that("edited mlops.env, not hydrated: nothing reached the API server", len(reached) == 0, reached...)
	if out, err := runMlopsFn("hydrate", dir); err != nil {
		c.fail("edited mlops.env: mlops-fn hydrate", out)
		return
	}
	o, err := loadOverlay(dir)
	if err != nil {
		c.fail("edited mlops.env, hydrated: the overlay builds", err.Error())
		return
	}
	c.eq("edited mlops.env: mlops-fn's plan has the new worker count", int32(workers), o.plan.Workers)
	if out, err := kubectl("", "apply", "-k", dir, "-n", ns, "--server-side"); err != nil {
		c.fail("edited mlops.env, hydrated: kubectl apply -k", out)
		return
	}
	c.pass("edited mlops.env, hydrated: kubectl apply -k succeeds")
	c.that(fmt.Sprintf("edited mlops.env, hydrated: the operator creates %d worker pods", o.plan.Workers), waitUntil(waitForPods, func() bool {
		return len(pods(ns, o.selector("worker"))) >= int(o.plan.Workers)
	}), podTable(ns))
}

// runMlopsFn runs the mlops-fn binary; it returns the combined output.
func runMlopsFn(args ...string) (string, error) {
	return run(mlopsFn(), args...)
}
