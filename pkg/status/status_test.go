// SPDX-License-Identifier: Apache-2.0

package status

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakedynamic "k8s.io/client-go/dynamic/fake"

	"github.com/mlops-fn/mlops-fn/pkg/cluster"
	"github.com/mlops-fn/mlops-fn/pkg/jobnode"
)

const ns = "team"

// fakeCluster is a fake cluster holding objs, read by the dynamic client; its
// discovery is an API server's answer to cluster.Connect; kueue: Kueue's API
// is served.
func fakeCluster(t *testing.T, kueue bool, objs ...runtime.Object) *cluster.Cluster {
	t.Helper()
	served := map[string][]metav1.APIResource{"/apis/kubeflow.org/v2beta1": {{Name: "mpijobs", Kind: "MPIJob", Namespaced: true}}}
	if kueue {
		served["/apis/kueue.x-k8s.io/v1beta2"] = nil
	}
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resources, ok := served[r.URL.Path]
		switch {
		case r.URL.Path == "/api":
			_ = json.NewEncoder(w).Encode(metav1.APIVersions{Versions: []string{"v1"}})
		case ok:
			_ = json.NewEncoder(w).Encode(metav1.APIResourceList{APIResources: resources})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(server.Close)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	config := `{"apiVersion": "v1", "kind": "Config", "current-context": "c", "clusters": [{"name": "c", "cluster": {"server": "` + server.URL + `"}}],
		"contexts": [{"name": "c", "context": {"cluster": "c", "namespace": "` + ns + `"}}]}`
	if err := os.WriteFile(kubeconfig, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := cluster.Connect(context.Background(), cluster.Flags{Kubeconfig: kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	lists := map[schema.GroupVersionResource]string{
		{Group: "kubeflow.org", Version: "v2beta1", Resource: "mpijobs"}:       "MPIJobList",
		{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "localqueues"}: "LocalQueueList",
		{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "workloads"}:   "WorkloadList",
	}
	c.Dynamic = fakedynamic.NewSimpleDynamicClientWithCustomListKinds(scheme, lists, objs...)
	return c
}

func object(t *testing.T, text string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(text)); err != nil {
		t.Fatal(err)
	}
	return u
}

// mpiJob is an MPIJob "pi" of 1 launcher and 2 workers, with labels and status.
func mpiJob(t *testing.T, labels, status string) *unstructured.Unstructured {
	return object(t, `{"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {"name": "pi", "namespace": "team", "uid": "u1",
		"creationTimestamp": "2026-11-25T10:00:00Z", "labels": {`+labels+`}},
		"spec": {"runPolicy": {"suspend": `+map[bool]string{true: "true", false: "false"}[strings.Contains(status, "Suspended")]+`},
		"mpiReplicaSpecs": {"Launcher": {"replicas": 1}, "Worker": {"replicas": 2}}}, "status": {"conditions": [`+status+`]}}`)
}

func pod(name string, ready bool, waiting string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"training.kubeflow.org/job-name": "pi"}},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "mpi", Image: "registry.example/mpi:1"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	if ready {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "mpi", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
	}
	if waiting != "" {
		p.Status.Phase = corev1.PodPending
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "mpi", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: waiting, Message: "pull access denied"}}}}
	}
	return p
}

var job = jobnode.Job{Kind: "MPIJob", Name: "pi"}

// TestStatus: each state's phase, pods and reason, as printed.
func TestStatus(t *testing.T) {
	running := `{"type": "Created", "status": "True"}, {"type": "Running", "status": "True"}`
	suspended := `{"type": "Created", "status": "True"}, {"type": "Suspended", "status": "True"}`
	workload := func(reserved string) *unstructured.Unstructured {
		return object(t, `{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload", "metadata": {"name": "mpijob-pi-1", "namespace": "team",
			"ownerReferences": [{"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "name": "pi", "uid": "u1"}]},
			"status": {"conditions": [`+reserved+`]}}`)
	}
	localQueue := object(t, `{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue", "metadata": {"name": "team-a", "namespace": "team"}}`)
	refused := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e1", Namespace: ns}, Type: corev1.EventTypeWarning, Reason: "FailedCreate",
		InvolvedObject: corev1.ObjectReference{Kind: "Job", Name: "pi-launcher"}, LastTimestamp: metav1.NewTime(time.Date(2026, 11, 25, 10, 0, 5, 0, time.UTC)),
		Message: `Error creating: pods "pi-launcher-x" is forbidden: violates PodSecurity "restricted:latest": runAsNonRoot != true`}
	old, other := refused.DeepCopy(), refused.DeepCopy()
	old.Name, old.Message, other.Name, other.InvolvedObject.Name, other.Message = "e0", "a former run's", "e2", "pip-launcher", "another job's"
	old.LastTimestamp = metav1.NewTime(time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC))
	// mpi-operator v0.8's own report of its workers' refusal, on the MPIJob (seen in make e2e).
	workerRefused := refused.DeepCopy()
	workerRefused.Name, workerRefused.Reason, workerRefused.InvolvedObject = "e3", "MPIJobFailed", corev1.ObjectReference{Kind: "MPIJob", Name: "pi"}
	workerRefused.Message = `worker pod created failed: pods "pi-worker-0" is forbidden: violates PodSecurity "restricted:latest": runAsNonRoot != true`
	// Kueue's pod webhook refused the launcher once, its Job not yet in its cache; the Job controller retried (make e2e).
	retried := refused.DeepCopy()
	retried.Name, retried.Message = "e4", `Error creating: admission webhook "mpod.kb.io" denied the request: Job.batch "pi-launcher" not found`
	queued := `"kueue.x-k8s.io/queue-name": "team-a"`
	for _, tc := range []struct {
		name  string
		kueue bool
		objs  []runtime.Object
		want  string
	}{
		{"running", false, []runtime.Object{mpiJob(t, "", running), pod("pi-launcher-abc", true, ""), pod("pi-worker-0", true, ""), pod("pi-worker-1", true, "")},
			"MPIJob/pi  namespace team  Running  pods 3/3 ready\n  pod pi-launcher-abc  Running    ready\n  pod pi-worker-0      Running    ready\n  pod pi-worker-1      Running    ready\n"},
		{"running, a refusal retried past", false, []runtime.Object{mpiJob(t, "", running), pod("pi-launcher-abc", true, ""), pod("pi-worker-0", true, ""), pod("pi-worker-1", true, ""), retried},
			"MPIJob/pi  namespace team  Running  pods 3/3 ready\n  pod pi-launcher-abc  Running    ready\n  pod pi-worker-0      Running    ready\n  pod pi-worker-1      Running    ready\n"},
		{"no LocalQueue", true, []runtime.Object{mpiJob(t, queued, suspended)},
			"MPIJob/pi  namespace team  Suspended  pods 0/3 ready\n  waiting: Kueue: no LocalQueue team-a in namespace team (the job's label kueue.x-k8s.io/queue-name, QUEUE in mlops.env), so Kueue never admits it: create it, or set QUEUE to one of `kubectl get localqueues -n team`\n"},
		{"no Kueue", false, []runtime.Object{mpiJob(t, queued, suspended)},
			"MPIJob/pi  namespace team  Suspended  pods 0/3 ready\n  waiting: its label kueue.x-k8s.io/queue-name names Kueue's LocalQueue team-a, but this cluster serves no Kueue API (kueue.x-k8s.io): nothing admits it\n"},
		{"held by quota", true, []runtime.Object{mpiJob(t, queued, suspended), localQueue,
			workload(`{"type": "QuotaReserved", "status": "False", "reason": "Pending", "message": "couldn't assign flavors to pod set launcher: insufficient quota for cpu"}`)},
			"MPIJob/pi  namespace team  Suspended  pods 0/3 ready\n  waiting: Kueue has not admitted it (Workload mpijob-pi-1 in LocalQueue team-a): Pending: couldn't assign flavors to pod set launcher: insufficient quota for cpu\n"},
		{"admitted", true, []runtime.Object{mpiJob(t, queued, running), localQueue, workload(`{"type": "Admitted", "status": "True"}`),
			pod("pi-launcher-abc", true, ""), pod("pi-worker-0", true, ""), pod("pi-worker-1", true, "")},
			"MPIJob/pi  namespace team  Running  pods 3/3 ready\n  pod pi-launcher-abc  Running    ready\n  pod pi-worker-0      Running    ready\n  pod pi-worker-1      Running    ready\n"},
		// Kueue v0.19's default Configuration leaves kubeflow.org/pytorchjob out: its webhook lets such a job go unheld, and no Workload is made.
		{"not queued: Kueue does not manage the kind", true, []runtime.Object{mpiJob(t, queued, running), localQueue,
			pod("pi-launcher-abc", true, ""), pod("pi-worker-0", true, ""), pod("pi-worker-1", true, "")},
			"MPIJob/pi  namespace team  Running  pods 3/3 ready\n  pod pi-launcher-abc  Running    ready\n  pod pi-worker-0      Running    ready\n  pod pi-worker-1      Running    ready\n" +
				"  note: not queued: its label kueue.x-k8s.io/queue-name names Kueue's LocalQueue team-a (QUEUE in mlops.env), but Kueue never held it and made no Workload for it: it runs outside the queue, its quota uncounted. " +
				"Kueue manages an MPIJob only with kubeflow.org/mpijob in its Configuration's integrations.frameworks (Kueue v0.19's default leaves kubeflow.org/pytorchjob out) and in the namespaces its managedJobsNamespaceSelector selects: ask the cluster's admin to enable it (docs/sharing-a-cluster.md), or remove QUEUE\n"},
		{"not queued: no Kueue", false, []runtime.Object{mpiJob(t, queued, `{"type": "Created", "status": "True"}`)},
			"MPIJob/pi  namespace team  Created  pods 0/3 ready\n  note: not queued: its label kueue.x-k8s.io/queue-name names Kueue's LocalQueue team-a (QUEUE in mlops.env), but this cluster serves no Kueue API (kueue.x-k8s.io): it runs without a queue\n"},
		{"suspended, no queue", false, []runtime.Object{mpiJob(t, "", suspended)},
			"MPIJob/pi  namespace team  Suspended  pods 0/3 ready\n  waiting: suspended: spec.runPolicy.suspend is true; it starts once that is false\n"},
		{"image", false, []runtime.Object{mpiJob(t, "", `{"type": "Created", "status": "True"}`), pod("pi-worker-0", false, "ImagePullBackOff")},
			"MPIJob/pi  namespace team  Created  pods 0/3 ready\n  pod pi-worker-0  Pending    not ready  mpi: ImagePullBackOff\n" +
				"  waiting: pod pi-worker-0: the image registry.example/mpi:1 of container mpi does not pull (ImagePullBackOff): pull access denied\n"},
		{"Pod Security", false, []runtime.Object{mpiJob(t, "", `{"type": "Created", "status": "True"}`), refused, other, old},
			"MPIJob/pi  namespace team  Created  pods 0/3 ready\n  waiting: Pod Security refuses its pods (the namespace's pod-security.kubernetes.io/enforce level): FailedCreate Job/pi-launcher: " + refused.Message + "\n"},
		{"Pod Security, the workers", false, []runtime.Object{mpiJob(t, "", `{"type": "Created", "status": "True"}`), workerRefused},
			"MPIJob/pi  namespace team  Created  pods 0/3 ready\n  waiting: Pod Security refuses its pods (the namespace's pod-security.kubernetes.io/enforce level): MPIJobFailed MPIJob/pi: " + workerRefused.Message + "\n"},
		{"finished", false, []runtime.Object{mpiJob(t, "", `{"type": "Running", "status": "False"}, {"type": "Succeeded", "status": "True"}`), refused},
			"MPIJob/pi  namespace team  Succeeded  pods 0/3 ready\n"},
		{"failed", false, []runtime.Object{mpiJob(t, "", `{"type": "Failed", "status": "True", "reason": "MPIJobFailed", "message": "launcher failed"}`)},
			"MPIJob/pi  namespace team  Failed  pods 0/3 ready\n  why: failed: MPIJobFailed: launcher failed\n"},
		{"not found", false, nil,
			"MPIJob/pi  namespace team  not found\n  waiting: no such MPIJob in namespace team: not applied yet (mlops-fn apply DIR), or applied to another namespace (--namespace)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Status(context.Background(), fakeCluster(t, tc.kueue, tc.objs...), job)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.String(); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// TestStatusNoOperator: a kind the cluster's discovery does not list (its
// operator not installed) is not found, saying so, and read under the
// resource name discovery gives where it is listed.
func TestStatusNoOperator(t *testing.T) {
	r, err := Status(context.Background(), fakeCluster(t, false), jobnode.Job{Kind: "PyTorchJob", Name: "pi"})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.String(); !strings.Contains(got, "not found\n  waiting: ") || !strings.Contains(got, "kubeflow.org/v1") || strings.Contains(got, "not applied yet") {
		t.Errorf("a PyTorchJob on a cluster without the training-operator:\n%s", got)
	}
}

// TestLogsNotStarted: without -f, a program with no pod, or whose container
// waits, is an error naming why; its log is not read.
func TestLogsNotStarted(t *testing.T) {
	launcher := pod("pi-launcher-abc", false, "ErrImagePull")
	launcher.Labels["training.kubeflow.org/job-role"] = "launcher"
	for _, tc := range []struct {
		objs []runtime.Object
		want string
	}{
		{[]runtime.Object{mpiJob(t, "", "")}, "MPIJob/pi in namespace team: no pod runs its program yet"},
		{[]runtime.Object{mpiJob(t, "", ""), launcher}, "MPIJob/pi in namespace team: pod pi-launcher-abc, container mpi: ErrImagePull"},
	} {
		var out bytes.Buffer
		err := Logs(context.Background(), fakeCluster(t, false, tc.objs...), job, LogOptions{Out: &out, Err: &out})
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || out.Len() > 0 {
			t.Errorf("error %v, output %q; want the error %q and no output", err, out.String(), tc.want)
		}
	}
}

// TestTrainingContainer: the container reading the env ConfigMap, else
// kubectl's default container, else the first.
func TestTrainingContainer(t *testing.T) {
	p := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "sidecar"}, {Name: "trainer",
		EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "pi-mpijob-env"}}}}}}}}
	if got := trainingContainer(p, []string{"pi-mpijob-env"}); got != "trainer" {
		t.Errorf("got %s, want trainer (it reads the env ConfigMap)", got)
	}
	if got := trainingContainer(p, nil); got != "sidecar" {
		t.Errorf("got %s, want sidecar (the first)", got)
	}
	p.Annotations = map[string]string{"kubectl.kubernetes.io/default-container": "trainer"}
	if got := trainingContainer(p, nil); got != "trainer" {
		t.Errorf("got %s, want trainer (kubectl's default container)", got)
	}
}
