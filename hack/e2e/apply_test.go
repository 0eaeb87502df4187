// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/kinds/jobset"
	"github.com/mlops-fn/mlops-fn/pkg/kinds/mpijob"
)

// editEnv sets KEY=VALUE in the overlay's mlops.env, replacing the key's line or adding one.
func editEnv(dir, key, value string) error {
	path := filepath.Join(dir, "mlops.env")
	text, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	line := regexp.MustCompile(`(?m)^` + key + `=.*$`)
	if line.Match(text) {
		text = line.ReplaceAll(text, []byte(key+"="+value))
	} else {
		text = fmt.Appendf(text, "%s=%s\n", key, value)
	}
	return os.WriteFile(path, text, 0o644)
}

// versions say what a client wrote to the overlay's job and env ConfigMap in ns: the job's
// generation and a digest of its spec, labels and annotations (not its resourceVersion, which
// the operator's status updates move), and the ConfigMap's resourceVersion. Equal before and
// after a refused apply means nothing reached them.
func versions(o *overlay, ns string) string {
	var out []string
	if u, err := getUnstructured(o.kind.APIVersion, o.kind.Kind, ns, o.name); err == nil {
		written, err := json.Marshal([]any{u.Object["spec"], u.GetLabels(), u.GetAnnotations()})
		if err != nil {
			written = []byte(err.Error())
		}
		out = append(out, fmt.Sprintf("%s/%s@generation=%d,sha256=%x", o.kind.Kind, o.name, u.GetGeneration(), sha256.Sum256(written)))
	}
	if cm, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, o.plan.ConfigMapName, metav1.GetOptions{}); err == nil {
		out = append(out, "ConfigMap/"+cm.Name+"@"+cm.ResourceVersion)
	}
	return strings.Join(out, " ")
}

// jobPods are the pods the job's operator made for role ("" for a Pod: the Pod itself).
func jobPods(o *overlay, ns string, role jobkind.Role) []corev1.Pod {
	if o.kind.JobKind() == jobkind.Pod {
		p, err := kube.CoreV1().Pods(ns).Get(ctx, o.name, metav1.GetOptions{})
		if err != nil {
			return nil
		}
		return []corev1.Pod{*p}
	}
	return pods(ns, o.selector(strings.ToLower(string(role))))
}

// workerRole is the role whose pods are the workers.
func workerRole(o *overlay) jobkind.Role {
	switch o.kind.JobKind() {
	case jobkind.MPIJob:
		return jobkind.Worker
	case jobkind.TrainJob, jobset.JobSet:
		return jobkind.TrainerNode
	case jobkind.PyTorchJob:
		return "worker"
	}
	return ""
}

// checkRunsEdit: every pod of the job runs what the overlay now says: as many workers as
// WORKERS, each training container with the CPU limit of CPU, an MPIJob launcher's mpirun
// with workers × slots ranks. kept are the env ConfigMaps that pods which kept running may
// read (an elastic job scaled in place: the new pods read the new one, by its hash).
func checkRunsEdit(c *check, o *overlay, ns, when string, kept ...string) {
	role := workerRole(o)
	want := 1
	if o.kind.JobKind() != jobkind.Pod {
		want = int(o.plan.Workers)
	}
	var ps []corev1.Pod
	waitUntil(waitForPods, func() bool {
		ps = slices.DeleteFunc(jobPods(o, ns, role), func(p corev1.Pod) bool { return p.DeletionTimestamp != nil })
		return len(ps) == want
	})
	c.eq(fmt.Sprintf("%s: %d pods run the job", when, want), want, len(ps))
	wantCPU := o.plan.Limits[corev1.ResourceCPU]
	for _, p := range ps {
		k := o.trainingContainer(&p, role)
		if k == nil {
			c.fail(fmt.Sprintf("%s: pod/%s has the training container", when, p.Name), jsonText(podContainerNames(&p)))
			continue
		}
		got := k.Resources.Limits[corev1.ResourceCPU]
		c.eq(fmt.Sprintf("%s: pod/%s runs with CPU %s (mlops.env's CPU)", when, p.Name, wantCPU.String()), wantCPU.String(), got.String())
		reads := envConfigMaps(&p)
		c.that(fmt.Sprintf("%s: pod/%s reads its environment from %s", when, p.Name, strings.Join(append([]string{o.plan.ConfigMapName}, kept...), " or ")),
			slices.ContainsFunc(reads, func(n string) bool { return n == o.plan.ConfigMapName || slices.Contains(kept, n) }), reads...)
	}
	// What those pods read: the ConfigMap holds mlops.env as it is now.
	if cm, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, o.plan.ConfigMapName, metav1.GetOptions{}); err != nil {
		c.fail(when+": the env ConfigMap", err.Error())
	} else {
		c.eq(fmt.Sprintf("%s: the env ConfigMap holds mlops.env's keys and values", when), o.env, cm.Data)
	}
	if o.kind.JobKind() != jobkind.MPIJob {
		return
	}
	var launchers []corev1.Pod
	waitUntil(waitForPods, func() bool {
		launchers = slices.DeleteFunc(jobPods(o, ns, jobkind.Launcher), func(p corev1.Pod) bool { return p.DeletionTimestamp != nil })
		return len(launchers) > 0
	})
	for _, p := range launchers {
		if k := o.trainingContainer(&p, jobkind.Launcher); k != nil {
			c.eq(fmt.Sprintf("%s: pod/%s's mpirun starts workers × slots ranks", when, p.Name), fmt.Sprint(mpijob.Ranks(o.plan)), ranksOf(k))
		}
	}
}

// checkEditRunning: a quickstart job applied with mlops-fn apply (an MPIJob with plain kubectl
// apply -k, as the README's first job) and running; mlops.env
// edited (WORKERS and CPU); mlops-fn apply refuses, names the command, and nothing in the
// cluster changes; mlops-fn apply --replace runs the new render in every pod; after another
// edit that is not hydrated, kubectl delete -k fails on the guard and mlops-fn delete deletes
// the job. An elastic job scaled within its bounds is applied in place.
func checkEditRunning(c *check, dir, ns string) {
	o, ok := overlayIn(c, dir, ns)
	if !ok {
		return
	}
	if o.kind.JobKind() == jobkind.MPIJob {
		// As the README's first job: plain kubectl apply -k; mlops-fn apply takes over after the edit.
		if out, err := kubectl("", "apply", "-k", dir, "-n", ns); err != nil {
			c.fail("kubectl apply -k: the job is created", out)
			return
		}
	} else if out, err := runWithoutKubectl("apply", dir, "-n", ns); err != nil || !strings.Contains(out, " created") {
		c.fail("mlops-fn apply: the job is created", out)
		return
	}
	checkRunsEdit(c, o, ns, "first apply")
	if out, err := runWithoutKubectl("apply", dir, "-n", ns); err != nil || !strings.Contains(out, " unchanged") {
		c.fail("mlops-fn apply again, nothing edited: unchanged", out)
	} else {
		c.pass("mlops-fn apply again, nothing edited: unchanged")
	}

	var kept []string // the env ConfigMaps of before a scale, which the pods that stay read
	if o.kind.JobKind() == jobkind.PyTorchJob && o.plan.Workers < o.plan.Elastic.MaxWorkers {
		// Scaled within MIN_WORKERS..MAX_WORKERS, nothing else: legitimately live.
		if err := editEnv(dir, "WORKERS", fmt.Sprint(o.plan.Workers+1)); err != nil {
			c.fail("WORKERS edited", err.Error())
			return
		}
		out, err := runWithoutKubectl("apply", dir, "-n", ns)
		c.that("elastic WORKERS+1 within MAX_WORKERS: mlops-fn apply scales the running job in place", err == nil && strings.Contains(out, " scaled"), out)
		kept = append(kept, o.plan.ConfigMapName)
		if o, err = loadOverlay(dir); err == nil {
			checkRunsEdit(c, o, ns, "scaled", kept...)
		}
	}

	before := versions(o, ns)
	edits, ok := editRunningEnv(c, o, dir)
	if !ok {
		return
	}
	out, err := runWithoutKubectl("apply", dir, "-n", ns)
	c.that(fmt.Sprintf("edited %v, the job running: mlops-fn apply refuses and names mlops-fn apply --replace", edits),
		err != nil && strings.Contains(out, "mlops-fn apply --replace") && strings.Contains(out, "nothing was applied"), out)
	if k := o.kind.JobKind(); k == jobkind.MPIJob || k == jobkind.PyTorchJob {
		// The policy of deploy/admission refuses the change: the message is mlops-fn's list.
		replicas := fmt.Sprintf("Worker.replicas: %d → %d", o.plan.Workers, o.plan.Workers+1)
		c.that("refused under the policy: the message lists the changed fields ("+replicas+"), not the policy's text",
			strings.Contains(out, replicas) && !strings.Contains(out, runningPolicy), out)
	}
	c.eq("edited, refused: neither the job nor its env ConfigMap changed in the cluster", before, versions(o, ns))
	checkRunsEdit(c, o, ns, "refused", kept...)

	if out, err := runWithoutKubectl("apply", "--replace", dir, "-n", ns); err != nil || !strings.Contains(out, " replaced") {
		c.fail("mlops-fn apply --replace: the job is replaced", out)
		return
	}
	c.pass("mlops-fn apply --replace: the job is replaced")
	if o, err = loadOverlay(dir); err != nil {
		c.fail("the edited overlay builds", err.Error())
		return
	}
	checkRunsEdit(c, o, ns, "replaced")

	if o.kind.JobKind() == jobkind.MPIJob || o.kind.JobKind() == jobkind.Pod {
		// A finished job and its edit: a new run, which mlops-fn apply names.
		role, final := jobkind.Launcher, func() bool {
			return conditionOf(o.kind.APIVersion, o.kind.Kind, ns, o.name, "Succeeded") == "True"
		}
		if o.kind.JobKind() == jobkind.Pod {
			role, final = "", func() bool {
				p, err := kube.CoreV1().Pods(ns).Get(ctx, o.name, metav1.GetOptions{})
				return err == nil && p.Status.Phase == corev1.PodSucceeded
			}
		}
		for _, p := range jobPods(o, ns, role) {
			if err := complete(ns, p.Name); err != nil {
				c.fail("kwok completes the job", err.Error())
			}
		}
		if c.that("the replaced job Succeeds", waitUntil(waitForPods, final), podTable(ns)) {
			if err := editEnv(dir, "CPU", "2"); err != nil {
				c.fail("mlops.env edited", err.Error())
				return
			}
			before := versions(o, ns)
			out, err := runWithoutKubectl("apply", dir, "-n", ns)
			c.that("the job finished, then edited: mlops-fn apply refuses, says it finished and names --replace for a new run",
				err != nil && strings.Contains(out, "finished (Succeeded)") && strings.Contains(out, "mlops-fn apply --replace"), out)
			c.eq("the job finished, then edited, refused: nothing changed in the cluster", before, versions(o, ns))
		}
	}

	// Deleting works after an edit that was not hydrated.
	if err := editEnv(dir, "MEMORY", "8Gi"); err != nil {
		c.fail("mlops.env edited again", err.Error())
		return
	}
	out, err = kubectl("", "delete", "-k", dir, "-n", ns)
	c.that("edited, not hydrated: kubectl delete -k fails on the guard", err != nil && strings.Contains(out, "mlops-fn hydrate"), out)
	if out, err := runWithoutKubectl("delete", dir, "-n", ns); err != nil {
		c.fail("edited, not hydrated: mlops-fn delete", out)
		return
	}
	_, err = getUnstructured(o.kind.APIVersion, o.kind.Kind, ns, o.name)
	c.that("edited, not hydrated: mlops-fn delete deleted the job", apierrors.IsNotFound(err), fmt.Sprint(err))
	_, err = kube.CoreV1().ConfigMaps(ns).Get(ctx, o.plan.ConfigMapName, metav1.GetOptions{})
	c.that("edited, not hydrated: mlops-fn delete deleted the env ConfigMap", apierrors.IsNotFound(err), fmt.Sprint(err))
}

func TestEditRunning(t *testing.T) {
	section("a running job edited: mlops-fn apply takes the edit whole or not at all")
	c := newCheck(t, "")
	if skipWhenNamed(c, "the running quickstarts edited", false) {
		return
	}
	eachQuickstart(t, " edited while it runs", "edit-", checkEditRunning)
}

// runWithoutKubectl runs mlops-fn with a PATH that holds no kubectl: apply
// and delete talk to the cluster with client-go alone.
func runWithoutKubectl(args ...string) (string, error) {
	bin, err := exec.LookPath(mlopsFn())
	if err != nil {
		return "", err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "PATH=/nonexistent")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// editRunningEnv edits mlops.env as a user changing a running job would: CPU, and
// WORKERS one more (an elastic job's MAX_WORKERS with it, so the edit is not a scale).
func editRunningEnv(c *check, o *overlay, dir string) (map[string]string, bool) {
	edits := map[string]string{"CPU": "3"}
	if o.kind.JobKind() != jobkind.Pod {
		edits["WORKERS"] = fmt.Sprint(o.plan.Workers + 1)
		if o.kind.JobKind() == jobkind.PyTorchJob {
			edits["MAX_WORKERS"] = fmt.Sprint(o.plan.Workers + 1)
		}
	}
	for k, v := range edits {
		if err := editEnv(dir, k, v); err != nil {
			c.fail("mlops.env edited", err.Error())
			return nil, false
		}
	}
	return edits, true
}

// limitedUser is a kubeconfig of ServiceAccount name in ns, bound to a Role of rules there.
func limitedUser(dir, ns, name string, rules []rbacv1.PolicyRule) (string, error) {
	if _, err := kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		return "", err
	}
	if _, err := kube.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		return "", err
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: ns}}}
	if _, err := kube.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		return "", err
	}
	token, err := kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	config, err := clientcmd.LoadFromFile(os.Getenv("KUBECONFIG"))
	if err != nil {
		return "", err
	}
	config.AuthInfos = map[string]*clientcmdapi.AuthInfo{name: {Token: token.Status.Token}}
	config.Contexts[config.CurrentContext].AuthInfo = name
	path := filepath.Join(dir, name+".kubeconfig")
	return path, clientcmd.WriteToFile(*config, path)
}

// checkReplaceRBAC: the multi-node quickstart's MPIJob applied and running, then edited. A
// user without patch on MPIJobs: mlops-fn apply and apply --replace exit 1 in the API server's
// words (cannot patch), advise no --replace, and the job is still there with the same UID. A
// user with patch but without create: apply --replace meets the policy (a change in place),
// then the dry run of the new job's create: exit 1, nothing deleted. The admin's mlops-fn
// apply lists the changed fields (not the policy's message), and --replace replaces the job;
// mlops-fn delete says what it deleted, and then that nothing is left.
func checkReplaceRBAC(c *check, dir, ns string) {
	o, ok := overlayIn(c, dir, ns)
	if !ok {
		return
	}
	if out, err := runWithoutKubectl("apply", dir, "-n", ns); err != nil || !strings.Contains(out, " created") {
		c.fail("mlops-fn apply: the job is created", out)
		return
	}
	checkRunsEdit(c, o, ns, "first apply")
	uid := func() string {
		u, err := getUnstructured(o.kind.APIVersion, o.kind.Kind, ns, o.name)
		if err != nil {
			return err.Error()
		}
		return string(u.GetUID())
	}
	before := uid()
	edits, ok := editRunningEnv(c, o, dir)
	if !ok {
		return
	}
	read := []string{"get", "list", "watch"}
	others := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps", "serviceaccounts", "pods"}, Verbs: []string{"*"}}
	jobs := func(verbs ...string) rbacv1.PolicyRule {
		return rbacv1.PolicyRule{APIGroups: []string{"kubeflow.org"}, Resources: []string{"mpijobs"}, Verbs: slices.Concat(read, verbs)}
	}
	noPatch, err := limitedUser(c.t.TempDir(), ns, "no-patch", []rbacv1.PolicyRule{others, jobs("create", "delete")})
	if err != nil {
		c.fail("a user without patch on MPIJobs", err.Error())
		return
	}
	noCreate, err := limitedUser(c.t.TempDir(), ns, "no-create", []rbacv1.PolicyRule{others, jobs("patch", "update", "delete")})
	if err != nil {
		c.fail("a user without create on MPIJobs", err.Error())
		return
	}
	for _, args := range [][]string{{"apply"}, {"apply", "--replace"}} {
		what := fmt.Sprintf("edited %v, mlops-fn %s as a user without patch", edits, strings.Join(args, " "))
		out, err := runWithoutKubectl(append(args, dir, "-n", ns, "--kubeconfig", noPatch)...)
		c.that(what+": exit 1 in the API server's words, no --replace advised", err != nil &&
			strings.Contains(out, `cannot patch resource "mpijobs"`) && !strings.Contains(out, "mlops-fn apply --replace") && !strings.Contains(out, "changes it"), out)
		c.eq(what+": the job is still there, the same one (its UID)", before, uid())
	}
	out, err := runWithoutKubectl("apply", "--replace", dir, "-n", ns, "--kubeconfig", noCreate)
	c.that("mlops-fn apply --replace as a user without create: exit 1, nothing deleted", err != nil &&
		strings.Contains(out, "nothing was deleted: ") && strings.Contains(out, `cannot create resource "mpijobs"`), out)
	c.eq("as a user without create: the job is still there, the same one (its UID)", before, uid())

	out, err = runWithoutKubectl("apply", dir, "-n", ns)
	replicas := fmt.Sprintf("spec.mpiReplicaSpecs.Worker.replicas: %d → %d", o.plan.Workers, o.plan.Workers+1)
	c.that("under the policy, mlops-fn apply lists the changed fields, not the policy's message", err != nil &&
		strings.Contains(out, replicas) && !strings.Contains(out, runningPolicy), out)
	if out, err := runWithoutKubectl("apply", "--replace", dir, "-n", ns); err != nil || !strings.Contains(out, " replaced") {
		c.fail("mlops-fn apply --replace (the admin): the job is replaced", out)
		return
	}
	c.that("replaced: a new job (another UID)", uid() != before, before, uid())
	out, err = runWithoutKubectl("delete", dir, "-n", ns)
	c.that("mlops-fn delete says what it deleted", err == nil && strings.Contains(out, fmt.Sprintf("%s/%s deleted", o.kind.Kind, o.name)), out)
	out, err = runWithoutKubectl("delete", dir, "-n", ns)
	c.that("mlops-fn delete again: nothing to delete", err == nil &&
		strings.Contains(out, fmt.Sprintf("nothing to delete: no %s/%s in namespace %s", o.kind.Kind, o.name, ns)), out)
}

func TestReplaceRBAC(t *testing.T) {
	section("mlops-fn apply --replace as a user RBAC limits: nothing deleted")
	c := newCheck(t, "")
	if skipWhenNamed(c, "the multi-node quickstart as a limited user", false) {
		return
	}
	tree, _ := quickstartTree(t)
	const dir = "quickstart/k8s/mlops/multi-node"
	c = newCheck(t, dir+" as a limited user")
	guarded(c, func() { checkReplaceRBAC(c, filepath.Join(tree, dir), "rbac-"+slugRules.Replace(dir)) })
}
