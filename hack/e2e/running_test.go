// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
)

// runningPolicy is the ValidatingAdmissionPolicy of deploy/admission, which run.sh loads.
const runningPolicy = "mlops-fn-running-job"

// checkPlainApplyRunning: a quickstart job applied with plain kubectl apply -k, as the README's
// walkthrough, and running; mlops.env edited (WORKERS and CPU), hydrated and applied with plain
// kubectl apply -k, client-side and server-side (forcing conflicts, so that admission decides): kubectl exits non-zero (the policy refuses the
// job's new spec; a Pod's spec the API server), the job is unchanged (its generation and a digest
// of its spec, its pods' CPU) and still reads its own env ConfigMap with the old data, the new
// one beside it; mlops-fn apply --replace still replaces it, and deletes the old ConfigMap. An
// elastic job scaled within its bounds by plain kubectl apply -k is accepted.
func checkPlainApplyRunning(c *check, dir, ns string) {
	o, ok := overlayIn(c, dir, ns)
	if !ok {
		return
	}
	if out, err := kubectl("", "apply", "-k", dir, "-n", ns); err != nil {
		c.fail("kubectl apply -k: the job is created", out)
		return
	}
	checkRunsEdit(c, o, ns, "kubectl apply -k")
	var kept []string // the env ConfigMaps of before a scale, which the pods that stay read
	hydrate := func(what string) bool {
		out, err := runWithoutKubectl("hydrate", dir)
		return c.that(what+": mlops-fn hydrate", err == nil, out)
	}

	if o.kind.JobKind() == jobkind.PyTorchJob {
		// An edit of mlops.env that is no scale (OUTPUT_DIR alone) gives the env ConfigMap a new
		// name too, which pods started later would read: refused like any other change.
		if !checkRefusedEnvEdit(c, o, dir, ns, "OUTPUT_DIR", "/elsewhere", hydrate) {
			return
		}
	}
	if o.kind.JobKind() == jobkind.PyTorchJob && o.plan.Workers < o.plan.Elastic.MaxWorkers {
		// Scaled within MIN_WORKERS..MAX_WORKERS: the policy lets the Worker replicas and the env
		// ConfigMap's new name through, and the new worker reads the new ConfigMap.
		if err := editEnv(dir, "WORKERS", fmt.Sprint(o.plan.Workers+1)); err != nil {
			c.fail("WORKERS edited", err.Error())
			return
		}
		if !hydrate("elastic WORKERS+1") {
			return
		}
		out, err := kubectl("", "apply", "-k", dir, "-n", ns)
		c.that("elastic WORKERS+1 within MAX_WORKERS: plain kubectl apply -k scales the running job in place", err == nil, out)
		kept = append(kept, o.plan.ConfigMapName)
		if o, err = loadOverlay(dir); err != nil {
			c.fail("the scaled overlay builds", err.Error())
			return
		}
		checkRunsEdit(c, o, ns, "scaled by kubectl apply -k", kept...)
	}

	before := versions(o, ns)
	edits, ok := editRunningEnv(c, o, dir)
	if !ok {
		return
	}
	if !hydrate(fmt.Sprintf("edited %v", edits)) {
		return
	}
	edited, err := loadOverlay(dir)
	if err != nil {
		c.fail("the edited overlay builds", err.Error())
		return
	}
	c.that("edited: the env ConfigMap has another name (kustomize's hash of the new data)", edited.plan.ConfigMapName != o.plan.ConfigMapName,
		o.plan.ConfigMapName, edited.plan.ConfigMapName)
	for _, how := range [][]string{{}, {"--server-side", "--force-conflicts"}} {
		what := strings.TrimSpace("kubectl apply -k " + strings.Join(how, " "))
		out, err := kubectl("", append([]string{"apply", "-k", dir, "-n", ns}, how...)...)
		refused := err != nil
		if k := o.kind.JobKind(); k == jobkind.MPIJob || k == jobkind.PyTorchJob {
			// The policy's message names the command that takes the edit whole. A Pod's spec and
			// a TrainJob's trainer are immutable (the API server, the CRD's own rule), which
			// refuses before the policy runs.
			refused = refused && strings.Contains(out, runningPolicy) && strings.Contains(out, "mlops-fn apply --replace")
		}
		c.that(fmt.Sprintf("edited %v, the job running: %s exits non-zero, refused", edits, what), refused, out)
		c.eq(what+", refused: the job and the ConfigMap it reads are unchanged in the cluster", before, versions(o, ns))
		checkRunsEdit(c, o, ns, what+", refused", kept...)
	}
	if cm, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, edited.plan.ConfigMapName, metav1.GetOptions{}); c.that("refused: the new env ConfigMap is beside the old one", err == nil, fmt.Sprint(err)) {
		c.eq("refused: the new env ConfigMap holds mlops.env as edited", edited.env, cm.Data)
	}

	if out, err := runWithoutKubectl("apply", "--replace", dir, "-n", ns); err != nil || !strings.Contains(out, " replaced") {
		c.fail("mlops-fn apply --replace under the policy: the job is replaced", out)
		return
	}
	c.pass("mlops-fn apply --replace under the policy: the job is replaced")
	checkRunsEdit(c, edited, ns, "replaced")
	_, err = kube.CoreV1().ConfigMaps(ns).Get(ctx, o.plan.ConfigMapName, metav1.GetOptions{})
	c.that("replaced: the old run's env ConfigMap is deleted", apierrors.IsNotFound(err), fmt.Sprint(err))

	if out, err := runWithoutKubectl("delete", dir, "-n", ns); err != nil {
		c.fail("mlops-fn delete", out)
	}
}

// checkRefusedEnvEdit sets key=value in the overlay's mlops.env, hydrates it and applies it with
// plain kubectl apply -k onto the running job: refused by the policy, the job and its ConfigMap
// unchanged; then puts mlops.env back and hydrates it again.
func checkRefusedEnvEdit(c *check, o *overlay, dir, ns, key, value string, hydrate func(string) bool) bool {
	before := versions(o, ns)
	file := filepath.Join(dir, "mlops.env")
	saved, err := os.ReadFile(file)
	if err != nil {
		c.fail("mlops.env read", err.Error())
		return false
	}
	if err := editEnv(dir, key, value); err != nil {
		c.fail(key+" edited", err.Error())
		return false
	}
	what := fmt.Sprintf("%s=%s alone, the job running", key, value)
	if !hydrate(what) {
		return false
	}
	out, err := kubectl("", "apply", "-k", dir, "-n", ns)
	c.that(what+": plain kubectl apply -k is refused by the policy", err != nil && strings.Contains(out, runningPolicy), out)
	c.eq(what+", refused: the job and the ConfigMap it reads are unchanged in the cluster", before, versions(o, ns))
	if err := os.WriteFile(file, saved, 0o644); err != nil {
		c.fail("mlops.env put back", err.Error())
		return false
	}
	return hydrate("mlops.env put back")
}

// policyReady waits until the API server has compiled the policy (its status names the
// generation it checked).
func policyReady() error {
	var last string
	ok := waitUntil(60*time.Second, func() bool {
		u, err := getUnstructured("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", "", runningPolicy)
		if err != nil {
			last = err.Error()
			return false
		}
		observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
		last = fmt.Sprintf("generation %d, status.observedGeneration %d", u.GetGeneration(), observed)
		return observed == u.GetGeneration()
	})
	if !ok {
		return fmt.Errorf("ValidatingAdmissionPolicy %s not ready: %s", runningPolicy, last)
	}
	// The admission plugin reads policies through an informer: give it a moment past the status.
	time.Sleep(2 * time.Second)
	return nil
}

func TestRunningPolicy(t *testing.T) {
	section("a running job and plain kubectl apply -k: the ConfigMap's hash and the policy of deploy/admission")
	c := newCheck(t, "")
	if skipWhenNamed(c, "the running quickstarts applied with plain kubectl", false) {
		return
	}
	if err := policyReady(); err != nil {
		c.fail("the policy is loaded", err.Error())
		return
	}
	eachQuickstart(t, " edited while it runs, kubectl apply -k", "plain-", checkPlainApplyRunning)
}
