// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/mlops-fn/mlops-fn/pkg/kinds"
	"github.com/mlops-fn/mlops-fn/pkg/processor"
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
		for i, m := range nestedMaps(o.job.Object, path) {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: o.name + "-" + strings.ToLower(path[len(path)-3]) + "-psa-probe"}}
			if i > 0 {
				p.Name = fmt.Sprintf("%s-%d", p.Name, i)
			}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &p.Spec); err != nil {
				return nil, err
			}
			probes = append(probes, p)
		}
	}
	return probes, nil
}

// nestedMaps are the objects at path in v, a list on the way standing for each of its items
// (as kustomize's field specs read a JobSet's spec/replicatedJobs/template/...).
func nestedMaps(v any, path []string) []map[string]any {
	if l, ok := v.([]any); ok {
		var out []map[string]any
		for _, e := range l {
			out = append(out, nestedMaps(e, path)...)
		}
		return out
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	if len(path) == 0 {
		return []map[string]any{m}
	}
	return nestedMaps(m[path[0]], path[1:])
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

// TestGoldenPodSecurity: for every golden case's pods (testdata/*/expected.yaml, each pod spec
// of each job as processor.Pods finds it), the API server's own Pod Security verdict equals
// mlops-fn's (processor.PodSecurity) at restricted and at baseline: a server dry run of the pod
// in a namespace enforcing the level is admitted where mlops-fn admits it, and refused in
// mlops-fn's words (violates PodSecurity "LEVEL:latest": ...) where it refuses it.
func TestGoldenPodSecurity(t *testing.T) {
	section("the golden cases' pods: the API server's Pod Security verdict and mlops-fn's")
	c := newCheck(t, "")
	if skipWhenNamed(c, "the golden cases' Pod Security", false) {
		return
	}
	enforced := levels[:2] // privileged admits every pod
	for _, level := range enforced {
		if err := newNamespace("psa-golden-"+level, level); err != nil {
			c.fail("a namespace enforcing Pod Security "+level, err.Error())
			return
		}
	}
	cases, err := filepath.Glob("testdata/*/expected.yaml")
	if err != nil || len(cases) == 0 {
		c.fail("the golden cases are found", fmt.Sprint(err))
		return
	}
	for _, path := range cases {
		name := filepath.Base(filepath.Dir(path))
		text, err := os.ReadFile(path)
		if err != nil {
			c.fail(name+": its expected.yaml reads", err.Error())
			continue
		}
		items, err := kio.FromBytes(text)
		if err != nil {
			c.fail(name+": its expected.yaml parses", err.Error())
			continue
		}
		for _, job := range items {
			if k, ok := kinds.All.ForKind(job.GetKind()); !ok || job.GetApiVersion() != k.APIVersion {
				continue
			}
			what := fmt.Sprintf("%s: %s/%s", name, job.GetKind(), job.GetName())
			level, refusals := processor.PodSecurity(job)
			var differ, same, invalid []string
			for i, pod := range processor.Pods(job) {
				if len(pod.Spec.Containers) == 0 {
					// A runtime patch that sets no container: its runtime's decide, and a Pod needs one.
					continue
				}
				for _, enforce := range enforced {
					want := ""
					for _, r := range refusals {
						if r.Path == pod.Path && string(r.Level) == enforce {
							want = r.Message
						}
					}
					got := podSecurityVerdict("psa-golden-"+enforce, probe(pod, i))
					line := fmt.Sprintf("%s under %s: API server: %s", pod.Path, enforce, orAdmitted(got))
					if strings.HasPrefix(got, notPodSecurity) && strings.Contains(got, " is invalid: ") {
						// Validation runs before validating admission: Pod Security never sees
						// a pod the API server finds invalid.
						invalid = append(invalid, line)
						continue
					}
					if got != want {
						differ = append(differ, line, "  mlops-fn:   "+orAdmitted(want))
					} else {
						same = append(same, line)
					}
				}
			}
			switch {
			case len(same)+len(differ) == 0 && len(invalid) > 0:
				c.skip(what + ": the API server finds its pods invalid, so Pod Security never judges them: " + invalid[0])
			case len(same)+len(differ) == 0:
				c.skip(what + ": no pod spec to probe")
			case len(differ) > 0:
				c.fail(what+": the API server's Pod Security verdict differs from mlops-fn's", append(differ, invalid...)...)
			default:
				c.pass(fmt.Sprintf("%s: the API server's Pod Security verdict is mlops-fn's (needs %s)", what, level), append(same, invalid...)...)
			}
		}
	}
}

func orAdmitted(refusal string) string {
	if refusal == "" {
		return "admitted"
	}
	return refusal
}

// probe is a Pod of a job's pod spec, as Pod Security admission sees it, made valid where
// admission does not look: a TrainJob's runtime patch leaves the image to its runtime, the
// operators add volumes the templates mount and the ServiceAccount they name, and a cluster
// holds the PriorityClass a job names.
func probe(pod processor.Pod, i int) *corev1.Pod {
	spec := pod.Spec.DeepCopy()
	spec.NodeName, spec.ServiceAccountName, spec.DeprecatedServiceAccount = "", "", ""
	spec.PriorityClassName, spec.Priority = "", nil
	volumes := map[string]bool{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = true
	}
	for _, cs := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for j := range cs {
			if cs[j].Image == "" {
				cs[j].Image = "registry.k8s.io/pause:3.10"
			}
			var mounts []corev1.VolumeMount
			for _, m := range cs[j].VolumeMounts {
				if volumes[m.Name] {
					mounts = append(mounts, m)
				}
			}
			cs[j].VolumeMounts = mounts
		}
	}
	meta := metav1.ObjectMeta{Name: fmt.Sprintf("psa-probe-%d", i), Labels: pod.Meta.Labels, Annotations: pod.Meta.Annotations}
	return &corev1.Pod{ObjectMeta: meta, Spec: *spec}
}

// podSecurityVerdict is what the API server's Pod Security admission says of pod in namespace (a
// server dry run): "" when it admits it, else its refusal from "violates PodSecurity" on (any
// other refusal whole, which matches no verdict of mlops-fn's).
func podSecurityVerdict(namespace string, pod *corev1.Pod) string {
	_, err := kube.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err == nil {
		return ""
	}
	msg := err.Error()
	if i := strings.Index(msg, "violates PodSecurity"); i >= 0 {
		return msg[i:]
	}
	return notPodSecurity + msg
}

// notPodSecurity starts a refusal that is not Pod Security admission's.
const notPodSecurity = "refused, not by Pod Security: "
