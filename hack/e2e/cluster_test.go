// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
)

var (
	ctx    = context.Background()
	kube   kubernetes.Interface
	dyn    dynamic.Interface
	mapper meta.RESTMapper
)

func connect() error {
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 50, 100
	if kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	if dyn, err = dynamic.NewForConfig(cfg); err != nil {
		return err
	}
	mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(kube.Discovery()))
	_, err = kube.Discovery().ServerVersion()
	return err
}

// resourceOf is the API of a kind, found through discovery (the CRDs' plural names are theirs).
func resourceOf(apiVersion, kind string) (dynamic.NamespaceableResourceInterface, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, err
	}
	m, err := mapper.RESTMapping(gv.WithKind(kind).GroupKind(), gv.Version)
	if err != nil {
		return nil, err
	}
	return dyn.Resource(m.Resource), nil
}

// get reads the object of that kind into a typed value (into: a pointer), or returns the error.
func get(apiVersion, kind, namespace, name string, into any) error {
	u, err := getUnstructured(apiVersion, kind, namespace, name)
	if err != nil {
		return err
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into)
}

func getUnstructured(apiVersion, kind, namespace, name string) (*unstructured.Unstructured, error) {
	r, err := resourceOf(apiVersion, kind)
	if err != nil {
		return nil, err
	}
	return r.Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
}

// list is every object of that kind in namespace.
func list(apiVersion, kind, namespace string) ([]unstructured.Unstructured, error) {
	r, err := resourceOf(apiVersion, kind)
	if err != nil {
		return nil, err
	}
	l, err := r.Namespace(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	return l.Items, nil
}

// deleteObject deletes without waiting for it to be gone; a missing object is no error.
func deleteObject(apiVersion, kind, namespace, name string) error {
	r, err := resourceOf(apiVersion, kind)
	if err != nil {
		return err
	}
	err = r.Namespace(namespace).Delete(ctx, name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// condition is the status of a condition of an object's status.conditions, "" when absent.
func condition(u *unstructured.Unstructured, kind string) (status, message string) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == kind {
			s, _ := m["status"].(string)
			msg, _ := m["message"].(string)
			return s, msg
		}
	}
	return "", ""
}

// conditionOf reads the object and returns that condition's status ("" when absent or unreadable).
func conditionOf(apiVersion, kind, namespace, name, cond string) string {
	u, err := getUnstructured(apiVersion, kind, namespace, name)
	if err != nil {
		return ""
	}
	s, _ := condition(u, cond)
	return s
}

// statusOf is an object's status as JSON, for a failure's detail.
func statusOf(apiVersion, kind, namespace, name string) string {
	u, err := getUnstructured(apiVersion, kind, namespace, name)
	if err != nil {
		return err.Error()
	}
	return jsonText(u.Object["status"])
}

// pods are the pods in namespace matching selector ("" for all), by name.
func pods(namespace, selector string) []corev1.Pod {
	l, err := kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil
	}
	sort.Slice(l.Items, func(i, j int) bool { return l.Items[i].Name < l.Items[j].Name })
	return l.Items
}

func podNames(ps []corev1.Pod) []string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	return names
}

// allInPhase: n pods match selector, each in phase.
func allInPhase(namespace, selector string, n int, phase corev1.PodPhase) bool {
	ps := pods(namespace, selector)
	if len(ps) != n {
		return false
	}
	for _, p := range ps {
		if p.Status.Phase != phase {
			return false
		}
	}
	return true
}

// complete asks kwok to complete the pods (hack/e2e/kwok/pod-complete.yaml).
func complete(namespace string, names ...string) error {
	patch := []byte(`{"metadata": {"annotations": {"e2e.mlops-fn.dev/complete": "true"}}}`)
	for _, n := range names {
		if _, err := kube.CoreV1().Pods(namespace).Patch(ctx, n, "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// podTable lists the namespace's pods with their phase and node, for a failure's detail.
func podTable(namespace string) string {
	var b strings.Builder
	for _, p := range pods(namespace, "") {
		fmt.Fprintf(&b, "%s %s %s\n", p.Name, p.Status.Phase, p.Spec.NodeName)
	}
	if b.Len() == 0 {
		return "no pods"
	}
	return b.String()
}

// recentEvents are the namespace's last events, for a failure's detail.
func recentEvents(namespace string, n int) string {
	l, err := kube.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	sort.SliceStable(l.Items, func(i, j int) bool { return l.Items[i].LastTimestamp.Before(&l.Items[j].LastTimestamp) })
	items := l.Items
	if len(items) > n {
		items = items[len(items)-n:]
	}
	var b strings.Builder
	for _, e := range items {
		fmt.Fprintf(&b, "%s %s/%s: %s\n", e.Reason, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Message)
	}
	return b.String()
}

// eventsMention: an event of the namespace says text.
func eventsMention(namespace, text string) bool {
	l, err := kube.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return false
	}
	for _, e := range l.Items {
		if strings.Contains(e.Message, text) {
			return true
		}
	}
	return false
}

// pollEvery is how often waitUntil asks: the API server is local, and most waits end within a
// second or two, so a one-second poll added about half a second to each of hundreds of them.
const pollEvery = 200 * time.Millisecond

// waitUntil polls ok every pollEvery until it holds or timeout passes.
func waitUntil(timeout time.Duration, ok func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if ok() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pollEvery)
	}
}

// newNamespace creates a namespace enforcing Pod Security level ("": none) and waits for its
// default ServiceAccount (pods without one are refused).
func newNamespace(name, level string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if level != "" {
		ns.Labels = map[string]string{"pod-security.kubernetes.io/enforce": level, "pod-security.kubernetes.io/warn": level}
	}
	if _, err := kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return err
	}
	if !waitUntil(30*time.Second, func() bool {
		_, err := kube.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil
	}) {
		return fmt.Errorf("namespace %s got no default ServiceAccount", name)
	}
	return nil
}

// kubectl runs the kubectl on PATH (run.sh puts the pinned one first) with stdin; it returns
// the combined output.
func kubectl(stdin string, args ...string) (string, error) {
	return runWith(stdin, "kubectl", args...)
}

// run runs a program without input; it returns the combined output.
func run(name string, args ...string) (string, error) { return runWith("", name, args...) }

func runWith(stdin, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// applyYAML server-side applies manifests; the error carries kubectl's output.
func applyYAML(manifests string, args ...string) error {
	out, err := kubectl(manifests, append([]string{"apply", "--server-side", "-f", "-"}, args...)...)
	if err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	return nil
}
