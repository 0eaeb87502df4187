// SPDX-License-Identifier: Apache-2.0

// Package status reads a job mlops-fn applied back from the cluster, with client-go: where it is (mlops-fn
// status) and what its training program prints (mlops-fn logs), for every kind of the job kinds table.
package status

import (
	"context"
	"errors"
	"io"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/mlops-fn/mlops-fn/pkg/cluster"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
)

// Cluster is the API server the commands read, and the namespace of a job whose overlay names none.
type Cluster struct {
	Core    Core
	Dynamic dynamic.Interface
	cluster.Namespaces
}

// Core is what status and logs read of the API server besides the jobs (cluster.Cluster's reads; the tests'
// fake is client-go's).
type Core interface {
	// Pod is the pod, or an error IsNotFound recognises.
	Pod(ctx context.Context, ns, name string) (*corev1.Pod, error)
	Pods(ctx context.Context, ns, selector string) ([]corev1.Pod, error)
	Events(ctx context.Context, ns string) ([]corev1.Event, error)
	Log(ctx context.Context, ns, pod, container string, follow bool) (io.ReadCloser, error)
	// Serves is nil when the API server serves groupVersion ("v1" for the core group).
	Serves(ctx context.Context, groupVersion string) error
	// Resource is the API resource of a kind, by the API server's discovery; a *cluster.NotServedError where
	// it serves no such kind.
	Resource(ctx context.Context, gvk schema.GroupVersionKind) (schema.GroupVersionResource, error)
}

var _ Core = (*cluster.Cluster)(nil)

// From reads the cluster c connects to.
func From(c *cluster.Cluster) *Cluster {
	return &Cluster{Core: c, Dynamic: c.Dynamic, Namespaces: c.Namespaces}
}

// job reads a job of kind jk, nil when it does not exist; notServed says why where the cluster serves no such
// kind (its operator is not installed).
func (c *Cluster) job(ctx context.Context, jk jobkind.Facts, ns, name string) (u *unstructured.Unstructured, notServed string, err error) {
	gvr, err := c.Core.Resource(ctx, schema.FromAPIVersionAndKind(jk.APIVersion, jk.Kind))
	if no := (*cluster.NotServedError)(nil); errors.As(err, &no) {
		return nil, no.Error(), nil
	}
	if err != nil {
		return nil, "", err
	}
	u, err = cluster.Get(ctx, c.Dynamic.Resource(gvr).Namespace(ns), name)
	return u, "", err
}
