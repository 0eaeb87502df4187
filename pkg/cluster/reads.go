// SPDX-License-Identifier: Apache-2.0

package cluster

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// The reads the commands share, of the core group with the dynamic client and plain REST calls: client-go's
// typed clients and its discovery (and so its restmapper) import client-go's scheme, whose start registers
// every API group, in every run of mlops-fn, the KRM function's too (docs/performance.md).

var (
	podsResource   = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	eventsResource = schema.GroupVersionResource{Version: "v1", Resource: "events"}
	nodesResource  = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
)

// Get reads the object name of r, nil when it does not exist.
func Get(ctx context.Context, r dynamic.ResourceInterface, name string) (*unstructured.Unstructured, error) {
	u, err := r.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return u, err
}

// Pod is the pod, or an error IsNotFound recognises.
func (c *Cluster) Pod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	u, err := c.Dynamic.Resource(podsResource).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	var p corev1.Pod
	return &p, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &p)
}

func (c *Cluster) Pods(ctx context.Context, ns, selector string) ([]corev1.Pod, error) {
	return list[corev1.Pod](ctx, c.Dynamic.Resource(podsResource).Namespace(ns), selector)
}

func (c *Cluster) Events(ctx context.Context, ns string) ([]corev1.Event, error) {
	return list[corev1.Event](ctx, c.Dynamic.Resource(eventsResource).Namespace(ns), "")
}

func (c *Cluster) Nodes(ctx context.Context) ([]corev1.Node, error) {
	return list[corev1.Node](ctx, c.Dynamic.Resource(nodesResource), "")
}

// Log streams a container's log; the API server must answer within the request timeout, the log itself runs
// as long as the container's does.
func (c *Cluster) Log(ctx context.Context, ns, pod, container string, follow bool) (io.ReadCloser, error) {
	ctx, cancel := context.WithCancel(ctx)
	timeout := c.Config.Timeout
	unanswered := time.AfterFunc(cmp.Or(timeout, time.Duration(math.MaxInt64)), cancel)
	r, err := c.logs.Get().Namespace(ns).Resource("pods").Name(pod).SubResource("log").
		Param("container", container).Param("follow", strconv.FormatBool(follow)).Stream(ctx)
	if !unanswered.Stop() {
		cancel()
		return nil, fmt.Errorf("the API server %s did not answer GET /api/v1/namespaces/%s/pods/%s/log within %s (--request-timeout)",
			c.Config.Host, ns, pod, timeout)
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

// Resource is the API resource of a kind, by the API server's discovery; a *NotServedError where it serves no
// such kind.
func (c *Cluster) Resource(ctx context.Context, gvk schema.GroupVersionKind) (schema.GroupVersionResource, error) {
	m, err := c.Mapping(ctx, gvk)
	if err != nil {
		return schema.GroupVersionResource{}, err
	}
	return m.Resource, nil
}

// Serves is nil when the API server serves groupVersion ("v1" for the core group).
func (c *Cluster) Serves(ctx context.Context, groupVersion string) error {
	return c.rest.Get().AbsPath(discoveryPath(groupVersion)).Do(ctx).Error()
}

// list reads the objects of a core resource into their Go type.
func list[T any](ctx context.Context, r dynamic.ResourceInterface, selector string) ([]T, error) {
	l, err := r.List(ctx, metav1.ListOptions{LabelSelector: selector})
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
