// SPDX-License-Identifier: Apache-2.0

package apply

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeAPIServer serves discovery of the core group and the MPIJob's, and
// keeps what server-side apply sends (a dry run returns it, unkept).
type fakeAPIServer struct {
	mu      sync.Mutex
	objects map[string][]byte
	applies []string
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

// TestApplyServerSide: a quickstart overlay goes to the cluster by
// server-side apply with mlops-fn's field manager, in the context's
// namespace, each kind's resource from discovery; applied again unchanged,
// after a dry run of every object.
func TestApplyServerSide(t *testing.T) {
	f := &fakeAPIServer{objects: map[string][]byte{}}
	server := httptest.NewServer(f)
	defer server.Close()
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
	c, err := Connect(ctx, Flags{Kubeconfig: config, RequestTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Dir: "../../quickstart/k8s/mlops/multi-node"}
	const ssa = "application/apply-patch+yaml /api%s fieldManager=mlops-fn force=true dryRun=%s"
	jobs, err := Jobs(o.Dir)
	if err != nil || len(jobs) != 1 || len(jobs[0].EnvConfigMaps) != 1 {
		t.Fatalf("the overlay's job: %+v, %v", jobs, err)
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
