//go:build e2e

package e2e

import (
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// levels are the Pod Security Standards, strictest first.
var levels = []string{"restricted", "baseline", "privileged"}

// applyServiceAccounts creates the overlay's ServiceAccounts in namespace: a server dry run
// cannot admit a pod whose ServiceAccount the same apply would create.
func applyServiceAccounts(o *overlay, namespace string) error {
	sas := o.ofKind("ServiceAccount")
	if len(sas) == 0 {
		return nil
	}
	var copies []*unstructured.Unstructured
	for _, sa := range sas {
		sa = sa.DeepCopy()
		sa.SetNamespace("")
		copies = append(copies, sa)
	}
	text, err := encodeObjects(copies)
	if err != nil {
		return err
	}
	return applyYAML(text, "-n", namespace)
}

var missingServiceAccount = regexp.MustCompile(`error looking up service account [^ ]*: serviceaccount "[^"]*" not found`)

// checkDryRun (check 1): server and client dry runs of `kubectl apply -k` accept every object.
func checkDryRun(c *check, o *overlay) {
	ns := "dry-" + o.slug
	if err := newNamespace(ns, ""); err != nil {
		c.fail("a namespace for the dry runs", err.Error())
		return
	}
	want := len(o.objects)
	const applied = "serverside-applied (server dry run)"
	serverDryRun := func() (string, error) {
		return kubectl("", "apply", "-k", o.dir, "-n", ns, "--server-side", "--dry-run=server")
	}
	out, err := serverDryRun()
	if err == nil {
		c.eq(fmt.Sprintf("apply -k --server-side --dry-run=server accepts all %d objects in a fresh namespace", want), want, strings.Count(out, applied))
	} else {
		// In a fresh namespace a dry run cannot admit a Pod whose ServiceAccount the same apply
		// creates (nothing is stored; ServiceAccount admission looks it up): every other object
		// must be accepted, and all of them once the ServiceAccounts exist.
		var others []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if !strings.Contains(l, applied) && !missingServiceAccount.MatchString(l) {
				others = append(others, l)
			}
		}
		if len(others) == 0 {
			c.pass("apply -k --server-side --dry-run=server in a fresh namespace refuses only Pods whose new ServiceAccount a dry run cannot see",
				missingServiceAccount.FindAllString(out, -1)...)
		} else {
			c.fail("apply -k --server-side --dry-run=server accepts all objects in a fresh namespace", out)
		}
		if err := applyServiceAccounts(o, ns); err != nil {
			c.fail("its ServiceAccounts are created", err.Error())
		}
		out, err = serverDryRun()
		if err != nil {
			c.fail("apply -k --server-side --dry-run=server accepts all objects once its ServiceAccounts exist", out)
		} else {
			c.eq(fmt.Sprintf("apply -k --server-side --dry-run=server accepts all %d objects once its ServiceAccounts exist", want), want, strings.Count(out, applied))
		}
	}
	out, err = kubectl("", "apply", "-k", o.dir, "-n", ns, "--dry-run=client")
	if err != nil {
		c.fail("apply -k --dry-run=client accepts all objects", out)
		return
	}
	c.eq(fmt.Sprintf("apply -k --dry-run=client accepts all %d objects", want), want, strings.Count(out, "(dry run)"))
}

// expectRefused: the overlay's objects, broken by edit, are refused by a server dry run in
// namespace with an error matching pattern. edit reports an error when it finds nothing to break.
func expectRefused(c *check, what, namespace string, o *overlay, pattern string, edit func(job *unstructured.Unstructured) error) {
	c.t.Helper()
	objs := make([]*unstructured.Unstructured, len(o.objects))
	for i, u := range o.objects {
		objs[i] = u.DeepCopy()
		if u == o.job {
			if err := edit(objs[i]); err != nil {
				c.fail(what, "the edit changed nothing: "+err.Error())
				return
			}
		}
	}
	text, err := encodeObjects(objs)
	if err != nil {
		c.fail(what, err.Error())
		return
	}
	out, err := kubectl(text, "apply", "-f", "-", "-n", namespace, "--server-side", "--dry-run=server")
	re := regexp.MustCompile(pattern)
	switch {
	case err == nil:
		c.fail(what, "accepted:", out)
	case re.MatchString(out):
		var said []string
		for _, l := range strings.Split(out, "\n") {
			if m := re.FindStringIndex(l); m != nil && len(said) < 2 {
				said = append(said, around(l, m[1]))
			}
		}
		c.pass(what, said...)
	default:
		c.fail(what, "refused, but not for "+pattern+":", out)
	}
}

// around shortens a long line to its start and what leads up to end.
func around(line string, end int) string {
	if end <= 300 {
		return truncate(line, 300)
	}
	return line[:120] + " … " + line[end-150:end]
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// probePods are the overlay's pods as Pod Security admission sees them: an MPIJob's or a
// PyTorchJob's pod templates as Pods, a Pod itself; a TrainJob's pods exist only once Trainer
// has merged runtime and patches, so real is one of them, as created.
func probePods(o *overlay, real *corev1.Pod) ([]*corev1.Pod, error) {
	if real != nil {
		spec := real.Spec.DeepCopy()
		spec.NodeName = ""
		return []*corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: o.name + "-node-psa-probe"}, Spec: *spec}}, nil
	}
	if o.job == nil {
		return nil, fmt.Errorf("no job in the overlay")
	}
	if o.job.GetKind() == "Pod" {
		p := &corev1.Pod{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.job.Object, p); err != nil {
			return nil, err
		}
		p.Namespace = ""
		return []*corev1.Pod{p}, nil
	}
	var probes []*corev1.Pod
	for _, at := range o.kind.ReferencePodSpecs {
		path := strings.Split(at, "/")
		m, found, err := unstructured.NestedMap(o.job.Object, path...)
		if err != nil || !found {
			continue
		}
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: o.name + "-" + strings.ToLower(path[len(path)-3]) + "-psa-probe"}}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &p.Spec); err != nil {
			return nil, err
		}
		probes = append(probes, p)
	}
	return probes, nil
}

// admits reports whether a namespace enforcing level admits every probe (a server dry run),
// with the first refusal.
func admits(o *overlay, level string, probes []*corev1.Pod) (bool, string) {
	ns := "psa-" + level + "-" + o.slug
	if err := newNamespace(ns, level); err != nil {
		return false, err.Error()
	}
	// The pods' ServiceAccount must exist for admission to get as far as Pod Security.
	if err := applyServiceAccounts(o, ns); err != nil {
		return false, err.Error()
	}
	for _, p := range probes {
		if _, err := kube.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			msg := err.Error()
			if i := strings.Index(msg, "violates PodSecurity"); i >= 0 {
				msg = msg[i:]
			}
			return false, truncate(msg, 400)
		}
	}
	return true, ""
}

// checkPodSecurity (check 3): the level mlops-fn names admits the pods, each stricter one
// refuses them. It returns the level that admits them, which the job then runs under.
func checkPodSecurity(c *check, o *overlay, real *corev1.Pod) string {
	probes, err := probePods(o, real)
	if err != nil {
		c.fail("Pod Security: the pods to probe", err.Error())
		return "privileged"
	}
	who := "what mlops-fn says the job needs"
	if o.fixture() {
		who = "what the fixture is written for"
	}
	var refusals []string
	admitted := ""
	for _, level := range levels {
		ok, refusal := admits(o, level, probes)
		if ok {
			admitted = level
			break
		}
		refusals = append(refusals, level+": "+refusal)
	}
	switch admitted {
	case "":
		c.fail("Pod Security: no level admits the pods", refusals...)
		return "privileged"
	case o.level:
		c.pass(fmt.Sprintf("Pod Security '%s' (%s) admits the pods", o.level, who), o.reasons...)
		for _, r := range refusals {
			level, why, _ := strings.Cut(r, ": ")
			c.pass(fmt.Sprintf("Pod Security '%s' refuses the pods", level), why)
		}
	default:
		c.fail(fmt.Sprintf("Pod Security: %s is '%s', it needs '%s'", who, o.level, admitted), append(o.reasons, refusals...)...)
	}
	return admitted
}
