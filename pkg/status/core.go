package status

import (
	"context"
	"io"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
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
}

// apiServer is Core over the dynamic client and an untyped REST client.
type apiServer struct {
	dynamic dynamic.Interface
	rest    *rest.RESTClient
}

var (
	podsResource   = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	eventsResource = schema.GroupVersionResource{Version: "v1", Resource: "events"}
)

func newAPIServer(config *rest.Config, d dynamic.Interface) (*apiServer, error) {
	c := rest.CopyConfig(config)
	c.APIPath = "/api"
	c.GroupVersion = &schema.GroupVersion{Version: "v1"}
	// Nothing is decoded: logs are streamed, discovery answers only checked.
	c.NegotiatedSerializer = serializer.NewCodecFactory(runtime.NewScheme()).WithoutConversion()
	r, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, err
	}
	return &apiServer{dynamic: d, rest: r}, nil
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

func (a *apiServer) Log(ctx context.Context, ns, pod, container string, follow bool) (io.ReadCloser, error) {
	return a.rest.Get().Namespace(ns).Resource("pods").Name(pod).SubResource("log").
		Param("container", container).Param("follow", strconv.FormatBool(follow)).Stream(ctx)
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
