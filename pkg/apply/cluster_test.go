// SPDX-License-Identifier: Apache-2.0

package apply

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/mlops-fn/mlops-fn/pkg/cluster"
	"github.com/mlops-fn/mlops-fn/pkg/hydrate"
	"github.com/mlops-fn/mlops-fn/pkg/jobnode"
	"github.com/mlops-fn/mlops-fn/pkg/kinds"
)

// fakeAPIServer serves discovery of the core group and the MPIJob's, and
// keeps what server-side apply sends (a dry run returns it, unkept).
type fakeAPIServer struct {
	mu      sync.Mutex
	objects map[string][]byte
	applies []string
	// refuse, when set, answers a write (PATCH, POST, DELETE) of path with
	// the Status it returns; nil: the write passes. live: path exists.
	refuse func(method, path string, dry, live bool, body map[string]any) *metav1.Status
	// deletes are the paths deleted.
	deletes []string
}

func (f *fakeAPIServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.URL.Path == "/api":
		fmt.Fprint(w, `{"kind": "APIVersions", "versions": ["v1"]}`)
	case r.URL.Path == "/api/v1":
		fmt.Fprint(w, `{"kind": "APIResourceList", "groupVersion": "v1", "resources": [
			{"name": "configmaps", "singularName": "configmap", "namespaced": true, "kind": "ConfigMap"},
			{"name": "pods", "singularName": "pod", "namespaced": true, "kind": "Pod"},
			{"name": "pods/status", "singularName": "", "namespaced": true, "kind": "Pod"},
			{"name": "serviceaccounts", "singularName": "serviceaccount", "namespaced": true, "kind": "ServiceAccount"}]}`)
	case r.URL.Path == "/apis/kubeflow.org/v2beta1":
		fmt.Fprint(w, `{"kind": "APIResourceList", "groupVersion": "kubeflow.org/v2beta1", "resources": [
			{"name": "mpijobs", "singularName": "mpijob", "namespaced": true, "kind": "MPIJob"}]}`)
	case r.Method == http.MethodGet && f.objects[r.URL.Path] != nil:
		_, _ = w.Write(f.objects[r.URL.Path])
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/pods"):
		fmt.Fprint(w, `{"kind": "PodList", "apiVersion": "v1", "items": []}`)
	case r.Method != http.MethodGet && f.refused(w, r):
	case r.Method == http.MethodPost && r.URL.Query().Get("dryRun") == "All":
		var o map[string]any
		_ = json.NewDecoder(r.Body).Decode(&o)
		m := o["metadata"].(map[string]any)
		m["name"] = m["generateName"].(string) + "x7k2q"
		_ = json.NewEncoder(w).Encode(o)
	case r.Method == http.MethodDelete && f.objects[r.URL.Path] != nil:
		delete(f.objects, r.URL.Path)
		f.deletes = append(f.deletes, r.URL.Path)
		fmt.Fprint(w, `{"kind": "Status", "apiVersion": "v1", "status": "Success"}`)
	case r.Method == http.MethodPatch:
		body, _ := io.ReadAll(r.Body)
		q := r.URL.Query()
		f.applies = append(f.applies, fmt.Sprintf("%s %s fieldManager=%s force=%s dryRun=%s", r.Header.Get("Content-Type"), r.URL.Path, q.Get("fieldManager"), q.Get("force"), q.Get("dryRun")))
		if q.Get("dryRun") == "" {
			f.objects[r.URL.Path] = body
		}
		_, _ = w.Write(body)
	default:
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404}`)
	}
}

// refused answers r with f.refuse's Status, if any.
func (f *fakeAPIServer) refused(w http.ResponseWriter, r *http.Request) bool {
	if f.refuse == nil {
		return false
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var o map[string]any
	_ = yaml.Unmarshal(body, &o) // server-side apply sends YAML (JSON is YAML)
	status := f.refuse(r.Method, r.URL.Path, r.URL.Query().Get("dryRun") == "All", f.objects[r.URL.Path] != nil, o)
	if status == nil {
		return false
	}
	status.Kind, status.APIVersion, status.Status = "Status", "v1", metav1.StatusFailure
	w.WriteHeader(int(status.Code))
	_ = json.NewEncoder(w).Encode(status)
	return true
}

// TestApplyServerSide: a quickstart overlay goes to the cluster by
// server-side apply with mlops-fn's field manager, in the context's
// namespace, each kind's resource from discovery; applied again unchanged,
// after a dry run of every object.
func TestApplyServerSide(t *testing.T) {
	f := &fakeAPIServer{objects: map[string][]byte{}}
	ctx, c := fakeCluster(t, f)
	o := overlay(t, "../../quickstart/k8s/mlops/multi-node")
	const ssa = "application/apply-patch+yaml /api%s fieldManager=mlops-fn force=true dryRun=%s"
	jobs := jobnode.Jobs(kinds.All, o.Objects)
	if len(jobs) != 1 || len(jobs[0].EnvConfigMaps) != 1 {
		t.Fatalf("the overlay's job: %+v", jobs)
	}
	// The env ConfigMap's name ends in kustomize's hash of its data.
	env := jobs[0].EnvConfigMaps[0]
	if !strings.HasPrefix(env, "resnet50-training-mpijob-env-") {
		t.Fatalf("the job reads ConfigMap %s, want resnet50-training-mpijob-env-HASH", env)
	}
	objects := []string{"/v1/namespaces/team/serviceaccounts/model-service", "s/kubeflow.org/v2beta1/namespaces/team/mpijobs/resnet50-training", "/v1/namespaces/team/configmaps/" + env}
	for _, action := range []string{"created", "unchanged"} {
		res, err := Apply(ctx, c, o)
		if err != nil || res.Action != action || res.Job != "MPIJob/resnet50-training" {
			t.Fatalf("applied: %+v, %v; want MPIJob/resnet50-training %s", res, err, action)
		}
	}
	var want []string
	for _, dryRun := range []string{"", "All", ""} { // created; then a dry run and the apply
		for _, path := range objects {
			want = append(want, fmt.Sprintf(ssa, path, dryRun))
		}
	}
	if got := strings.Join(f.applies, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("the API server got\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
	var job map[string]any
	if err := json.Unmarshal(f.objects["/apis/kubeflow.org/v2beta1/namespaces/team/mpijobs/resnet50-training"], &job); err != nil || namespace(job) != "team" {
		t.Errorf("the MPIJob applied is in namespace %q (%v), want team", namespace(job), err)
	}
}

// overlay is what the hydrated overlay dir applies.
func overlay(t *testing.T, dir string) Options {
	t.Helper()
	items, err := hydrate.Applied(dir)
	if err != nil {
		t.Fatal(err)
	}
	return Options{Dir: dir, Objects: items}
}

// fakeCluster connects to f, served for the test, in namespace team.
func fakeCluster(t *testing.T, f *fakeAPIServer) (context.Context, *cluster.Cluster) {
	t.Helper()
	server := httptest.NewServer(f)
	t.Cleanup(server.Close)
	config := filepath.Join(t.TempDir(), "config")
	text := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q}}]
users: [{name: u, user: {}}]
contexts: [{name: c, context: {cluster: c, user: u, namespace: team}}]
current-context: c
`, server.URL)
	if err := os.WriteFile(config, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c, err := cluster.Connect(ctx, cluster.Flags{Kubeconfig: config, RequestTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return ctx, c
}

const (
	quickstart = "../../quickstart/k8s/mlops/multi-node"
	mpiJobPath = "/apis/kubeflow.org/v2beta1/namespaces/team/mpijobs/resnet50-training"
)

// mpiJobs are the MPIJobs' resource, whose refusals the API server names so.
var mpiJobs = schema.GroupResource{Group: "kubeflow.org", Resource: "mpijobs"}

// Refusals as kube-apiserver builds them: RBAC's (its authorizer's words),
// a failing webhook's, the policy of deploy/admission's, the API server's
// or a CRD rule's Invalid.
//
//nolint:staticcheck // RBAC's authorizer's words, capitalized
var (
	rbac      = apierrors.NewForbidden(mpiJobs, "resnet50-training", errors.New(`User "limited" cannot patch resource "mpijobs" in API group "kubeflow.org" in the namespace "team"`)).ErrStatus
	noCreate  = apierrors.NewForbidden(mpiJobs, "", errors.New(`User "limited" cannot create resource "mpijobs" in API group "kubeflow.org" in the namespace "team"`)).ErrStatus
	noDelete  = apierrors.NewForbidden(mpiJobs, "resnet50-training", errors.New(`User "limited" cannot delete resource "mpijobs" in API group "kubeflow.org" in the namespace "team"`)).ErrStatus
	webhook   = apierrors.NewInternalError(errors.New(`failed calling webhook "vmpijob.kb.io": failed to call webhook: Post "https://kueue-webhook-service.kueue-system.svc:443/validate": dial tcp 127.0.0.1:9443: connect: connection refused`)).ErrStatus
	policy    = apierrors.NewForbidden(mpiJobs, "resnet50-training", errors.New(`ValidatingAdmissionPolicy 'mlops-fn-running-job' with binding 'mlops-fn-running-job' denied request: MPIJob/resnet50-training is running, and this update changes its spec`)).ErrStatus
	fixedSpec = apierrors.NewInvalid(schema.GroupKind{Group: "kubeflow.org", Kind: "MPIJob"}, "resnet50-training", field.ErrorList{field.Invalid(field.NewPath("spec", "mpiReplicaSpecs"), "object", validation.FieldImmutableErrorMsg)}).ErrStatus
	badValue  = apierrors.NewInvalid(schema.GroupKind{Group: "kubeflow.org", Kind: "MPIJob"}, "resnet50-training", field.ErrorList{field.Invalid(field.NewPath("spec", "slotsPerWorker"), 0, "must be greater than 0")}).ErrStatus
	podSpec   = apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "p", field.ErrorList{field.Forbidden(field.NewPath("spec"), "pod updates may not change fields other than `spec.containers[*].image`")})
	// As kube-apiserver v1.37 answers the single-node quickstart's Pod edited from CPU=4 to CPU=3 (TestEditRunning).
	podSpecAndRequests = apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "p", field.ErrorList{
		field.Invalid(field.NewPath("spec", "containers").Index(0).Child("resources", "requests"), "4", "must be less than or equal to cpu limit of 3"),
		field.Forbidden(field.NewPath("spec"), "pod updates may not change fields other than `spec.containers[*].image`")})
	fixedAndBad = apierrors.NewInvalid(schema.GroupKind{Group: "kubeflow.org", Kind: "MPIJob"}, "resnet50-training", field.ErrorList{
		field.Invalid(field.NewPath("spec", "mpiReplicaSpecs"), "object", validation.FieldImmutableErrorMsg), field.Invalid(field.NewPath("spec", "slotsPerWorker"), 0, "must be greater than 0")}).ErrStatus
	fixedLabel = apierrors.NewInvalid(schema.GroupKind{Group: "kubeflow.org", Kind: "MPIJob"}, "resnet50-training", field.ErrorList{field.Invalid(field.NewPath("metadata", "labels"), "q", validation.FieldImmutableErrorMsg)})
)

// TestImmutable: only an Invalid answer on a job's spec, for a field that
// cannot change, is a refusal in place; a cause beside it may come of the
// merge onto the live object (kube-apiserver's answer to a Pod's new CPU
// limit: its requests, defaulted from the old limit, above the new one).
func TestImmutable(t *testing.T) {
	cm := apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "env", field.ErrorList{field.Invalid(field.NewPath("spec", "data"), "x", validation.FieldImmutableErrorMsg)})
	notOnSpec := apierrors.NewInvalid(schema.GroupKind{Group: "trainer.kubeflow.org", Kind: "TrainJob"}, "t", field.ErrorList{
		field.Invalid(field.NewPath("spec", "trainer"), "object", validation.FieldImmutableErrorMsg), field.Invalid(field.NewPath("metadata", "name"), "x", "must be no more than 63 characters")})
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"a Pod's spec", podSpec, true},
		{"a CRD's immutable rule, wrapped", fmt.Errorf("applying MPIJob/x: %w", &apierrors.StatusError{ErrStatus: fixedSpec}), true},
		{"a bad value", &apierrors.StatusError{ErrStatus: badValue}, false},
		{"a Pod's spec and its requests above its new limits", podSpecAndRequests, true},
		{"an immutable field and a bad name", notOnSpec, false},
		{"an immutable label", fixedLabel, false},
		{"a ConfigMap", cm, false},
		{"RBAC", &apierrors.StatusError{ErrStatus: rbac}, false},
		{"the policy", &apierrors.StatusError{ErrStatus: policy}, false},
		{"a webhook that fails", &apierrors.StatusError{ErrStatus: webhook}, false},
		{"no answer", errors.New("connection refused"), false},
	} {
		if got := immutable(c.err); got != c.want {
			t.Errorf("%s: immutable(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}

// TestReplaceRefusals: mlops-fn apply on a live MPIJob edited (Worker
// replicas 99 live, 2 in the overlay) against an API server that refuses a
// write. A refusal in place (the policy's, which lets a suspended job
// through; an immutable field) is mlops-fn's own list of changes, and with
// --replace the job is replaced; any other refusal is the API server's
// words, nothing deleted and no --replace advised; a replace whose create
// the API server refuses deletes nothing; a failure after the delete names
// the old job's saved manifest.
func TestReplaceRefusals(t *testing.T) {
	running := func(method, path string, dry, live bool, body map[string]any) bool {
		suspended, _, _ := unstructured.NestedBool(body, "spec", "runPolicy", "suspend")
		return method == http.MethodPatch && path == mpiJobPath && live && !suspended
	}
	always := func(s metav1.Status) func(string, string, bool, bool, map[string]any) *metav1.Status {
		return func(method, path string, dry, live bool, body map[string]any) *metav1.Status {
			if method == http.MethodPatch && path == mpiJobPath {
				return &s
			}
			return nil
		}
	}
	inPlace := func(method, path string, dry, live bool, body map[string]any) *metav1.Status {
		if running(method, path, dry, live, body) {
			return &policy
		}
		return nil
	}
	for _, c := range []struct {
		name    string
		refuse  func(method, path string, dry, live bool, body map[string]any) *metav1.Status
		replace bool
		edited  bool
		want    []string // in the message (or "replaced")
		not     []string
		deleted bool
	}{
		{"RBAC, unchanged", always(rbac), false, false, []string{"nothing was applied: the API server refuses the overlay " + quickstart + " (a dry run): applying MPIJob/resnet50-training: ", `cannot patch resource "mpijobs"`}, []string{"--replace", "changes it"}, false},
		{"RBAC, --replace", always(rbac), true, true, []string{"nothing was deleted or applied", `cannot patch resource "mpijobs"`}, []string{"changes it"}, false},
		{"a failing webhook, --replace", always(webhook), true, true, []string{"nothing was deleted or applied", `failed calling webhook "vmpijob.kb.io"`}, nil, false},
		{"an invalid value, --replace", always(badValue), true, true, []string{"nothing was deleted or applied", "spec.slotsPerWorker: Invalid value: 0"}, nil, false},
		{"the policy", inPlace, false, true, []string{"is running (or waiting to), and the overlay " + quickstart + " changes it: spec.mpiReplicaSpecs.Worker.replicas: 99 → 2; nothing was applied", "mlops-fn apply --replace"}, []string{"ValidatingAdmissionPolicy", "suspend"}, false},
		{"the policy, --replace", inPlace, true, true, []string{"replaced"}, nil, true},
		{"an immutable field, --replace", func(method, path string, dry, live bool, body map[string]any) *metav1.Status {
			if method == http.MethodPatch && path == mpiJobPath && live {
				return &fixedSpec
			}
			return nil
		}, true, true, []string{"replaced"}, nil, true},
		{"an immutable field and a bad value, --replace", func(method, path string, dry, live bool, body map[string]any) *metav1.Status {
			switch {
			case method == http.MethodPatch && path == mpiJobPath && live:
				return &fixedAndBad
			case method == http.MethodPost:
				return &badValue
			}
			return nil
		}, true, true, []string{"nothing was deleted: ", "spec.slotsPerWorker: Invalid value: 0"}, nil, false},
		{"the policy, --replace, no create", func(method, path string, dry, live bool, body map[string]any) *metav1.Status {
			if method == http.MethodPost {
				return &noCreate
			}
			return inPlace(method, path, dry, live, body)
		}, true, true, []string{"nothing was deleted: --replace deletes MPIJob/resnet50-training and creates the new one, and the API server refuses that: creating MPIJob/resnet50-training (a dry run, under a name generated from resnet50-tra): ", `cannot create resource "mpijobs"`}, nil, false},
		{"the policy, --replace, no delete", func(method, path string, dry, live bool, body map[string]any) *metav1.Status {
			if method == http.MethodDelete {
				return &noDelete
			}
			return inPlace(method, path, dry, live, body)
		}, true, true, []string{"nothing was deleted: deleting MPIJob/resnet50-training: ", `cannot delete resource "mpijobs"`}, nil, false},
		{"the policy, --replace, the webhook down after the delete", func(method, path string, dry, live bool, body map[string]any) *metav1.Status {
			if method == http.MethodPatch && path == mpiJobPath && !live {
				return &webhook
			}
			return inPlace(method, path, dry, live, body)
		}, true, true, []string{"deleted MPIJob/resnet50-training, but then: the new job is refused, so nothing else was applied: applying MPIJob/resnet50-training: ", "its manifest as it ran is saved in ", ": kubectl create -f "}, nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("TMPDIR", t.TempDir())
			f := &fakeAPIServer{objects: map[string][]byte{}}
			ctx, cl := fakeCluster(t, f)
			if _, err := Apply(ctx, cl, overlay(t, quickstart)); err != nil {
				t.Fatal(err)
			}
			live := decode(t, string(f.objects[mpiJobPath]))
			if c.edited {
				_ = unstructured.SetNestedField(live, int64(99), "spec", "mpiReplicaSpecs", "Worker", "replicas")
			}
			live["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Running", "status": "True"}}}
			meta(live)["uid"] = "u-1"
			b, _ := json.Marshal(live)
			f.objects[mpiJobPath] = b
			f.refuse = c.refuse
			o := overlay(t, quickstart)
			o.Replace = c.replace
			res, err := Apply(ctx, cl, o)
			got := fmt.Sprint(err)
			if err == nil {
				got = res.Action
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("got %q, want it to hold %q", got, w)
				}
			}
			for _, n := range c.not {
				if strings.Contains(got, n) {
					t.Errorf("got %q, want it without %q", got, n)
				}
			}
			if deleted := len(f.deletes) > 0; deleted != c.deleted {
				t.Errorf("deleted %v, want %v", f.deletes, c.deleted)
			}
			saved, _ := filepath.Glob(filepath.Join(os.Getenv("TMPDIR"), "mlops-fn-mpijob-resnet50-training-*.yaml"))
			if !c.deleted || err == nil {
				if len(saved) != 0 {
					t.Errorf("a manifest is left in %v", saved)
				}
				return
			}
			if len(saved) != 1 || !strings.Contains(got, "kubectl create -f "+saved[0]) {
				t.Fatalf("the message names no saved manifest of %v: %s", saved, got)
			}
			text, err := os.ReadFile(saved[0])
			if err != nil {
				t.Fatal(err)
			}
			var back map[string]any
			if err := yaml.Unmarshal(text, &back); err != nil {
				t.Fatal(err)
			}
			live = decode(t, string(b)) // as JSON decodes it, the saved file's numbers too
			delete(live, "status")
			delete(meta(live), "uid")
			if d := cmp.Diff(live, back); d != "" {
				t.Errorf("the saved manifest is not the live job without its status and uid (-live +saved):\n%s", d)
			}
		})
	}
}

// TestDeleteSaysWhat: Delete returns each object it deleted, the job and its
// env ConfigMap; none once they are gone.
func TestDeleteSaysWhat(t *testing.T) {
	f := &fakeAPIServer{objects: map[string][]byte{}}
	ctx, c := fakeCluster(t, f)
	o := overlay(t, quickstart)
	if _, err := Apply(ctx, c, o); err != nil {
		t.Fatal(err)
	}
	jobs := jobnode.Jobs(kinds.All, o.Objects)
	for _, want := range [][]string{{"MPIJob/resnet50-training", "ConfigMap/" + jobs[0].EnvConfigMaps[0]}, nil} {
		got, err := Delete(ctx, c, o.Objects)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("Delete: %v, %v; want %v", got, err, want)
		}
	}
}

// TestOperatorNotInstalled: a cluster that serves no PyTorchJob (the fake
// serves the MPIJob's group only) is told what to install, and how.
func TestOperatorNotInstalled(t *testing.T) {
	ctx, c := fakeCluster(t, &fakeAPIServer{objects: map[string][]byte{}})
	_, err := Apply(ctx, c, overlay(t, "../../quickstart/k8s/mlops/elastic"))
	k, _ := kinds.All.ForKind("PyTorchJob")
	want := "this cluster serves no kubeflow.org/v1 (" + c.Config.Host + "): the operator or CRD of PyTorchJob is not installed; install the training-operator (the release mlops-fn's e2e tests run): " + k.Install[0]
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}
