// SPDX-License-Identifier: Apache-2.0

package status

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/mlops-fn/mlops-fn/pkg/apply"
)

// Core is what status and logs read of the API server besides the jobs:
// pods, events, a container's log, and whether a group version is served.
// Connect's reads them with the dynamic client and plain REST calls:
// client-go's typed clientset and discovery register every API group at
// start, in every run of mlops-fn, the KRM function's too
// (docs/performance.md).
type Core interface {
	// Pod is the pod, or an error IsNotFound recognises.
	Pod(ctx context.Context, ns, name string) (*corev1.Pod, error)
	Pods(ctx context.Context, ns, selector string) ([]corev1.Pod, error)
	Events(ctx context.Context, ns string) ([]corev1.Event, error)
	Log(ctx context.Context, ns, pod, container string, follow bool) (io.ReadCloser, error)
	// Serves is nil when the API server serves groupVersion ("v1" for the core group).
	Serves(ctx context.Context, groupVersion string) error
	// Resource is the API resource of a kind, by the API server's discovery;
	// an *apply.NotServedError where it serves no such kind.
	Resource(ctx context.Context, gvk schema.GroupVersionKind) (schema.GroupVersionResource, error)
}

// apiServer is Core over the dynamic client and an untyped REST client.
type apiServer struct {
	cluster *apply.Cluster
	dynamic dynamic.Interface
	rest    *rest.RESTClient
	// logs streams a log for as long as it runs: only its answer is bounded, by timeout.
	logs    *rest.RESTClient
	timeout time.Duration
	host    string
}

var (
	podsResource   = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	eventsResource = schema.GroupVersionResource{Version: "v1", Resource: "events"}
)

func newAPIServer(c *apply.Cluster) (*apiServer, error) {
	unbounded := rest.CopyConfig(c.Config)
	unbounded.Timeout = 0
	logs, err := apply.CoreClient(unbounded)
	if err != nil {
		return nil, err
	}
	return &apiServer{cluster: c, dynamic: c.Dynamic, rest: c.REST, logs: logs, timeout: c.Config.Timeout, host: c.Config.Host}, nil
}

func (a *apiServer) Pod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	u, err := a.dynamic.Resource(podsResource).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	var p corev1.Pod
	return &p, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &p)
}

func (a *apiServer) Pods(ctx context.Context, ns, selector string) ([]corev1.Pod, error) {
	return list[corev1.Pod](ctx, a.dynamic, podsResource, ns, selector)
}

func (a *apiServer) Events(ctx context.Context, ns string) ([]corev1.Event, error) {
	return list[corev1.Event](ctx, a.dynamic, eventsResource, ns, "")
}

// Log streams a container's log; the API server must answer within the
// request timeout, the log itself runs as long as the container's does.
func (a *apiServer) Log(ctx context.Context, ns, pod, container string, follow bool) (io.ReadCloser, error) {
	ctx, cancel := context.WithCancel(ctx)
	unanswered := time.AfterFunc(cmp.Or(a.timeout, time.Duration(math.MaxInt64)), cancel)
	r, err := a.logs.Get().Namespace(ns).Resource("pods").Name(pod).SubResource("log").
		Param("container", container).Param("follow", strconv.FormatBool(follow)).Stream(ctx)
	if !unanswered.Stop() {
		cancel()
		return nil, fmt.Errorf("the API server %s did not answer GET /api/v1/namespaces/%s/pods/%s/log within %s (--request-timeout)", a.host, ns, pod, a.timeout)
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return struct {
		io.Reader
		io.Closer
	}{r, closer(func() error { defer cancel(); return r.Close() })}, nil
}

type closer func() error

func (f closer) Close() error { return f() }

func (a *apiServer) Resource(ctx context.Context, gvk schema.GroupVersionKind) (schema.GroupVersionResource, error) {
	m, err := a.cluster.Mapping(ctx, gvk)
	if err != nil {
		return schema.GroupVersionResource{}, err
	}
	return m.Resource, nil
}

func (a *apiServer) Serves(ctx context.Context, groupVersion string) error {
	path := "/apis/" + groupVersion
	if groupVersion == "v1" {
		path = "/api/v1"
	}
	return a.rest.Get().AbsPath(path).Do(ctx).Error()
}

// list reads the objects of a core resource into their Go type.
func list[T any](ctx context.Context, d dynamic.Interface, r schema.GroupVersionResource, ns, selector string) ([]T, error) {
	l, err := d.Resource(r).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	out := make([]T, len(l.Items))
	for i := range l.Items {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(l.Items[i].Object, &out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}
