// SPDX-License-Identifier: Apache-2.0

// Package status reads a job mlops-fn applied back from the cluster, with
// client-go: where it is (mlops-fn status) and what its training program
// prints (mlops-fn logs), for every kind of the job kinds table.
package status

import (
	"context"
	"errors"

	"github.com/mlops-fn/mlops-fn/pkg/jobkind"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/mlops-fn/mlops-fn/pkg/apply"
)

// Cluster is the API server the commands read, and the namespace of a job
// whose overlay names none.
type Cluster struct {
	Core    Core
	Dynamic dynamic.Interface
	apply.Namespaces
}

// Connect connects as mlops-fn apply does.
func Connect(ctx context.Context, f apply.Flags) (*apply.Cluster, *Cluster, error) {
	a, err := apply.Connect(ctx, f)
	if err != nil {
		return nil, nil, err
	}
	c, err := From(a)
	return a, c, err
}

// From reads the cluster a connects to.
func From(a *apply.Cluster) (*Cluster, error) {
	core, err := newAPIServer(a)
	return &Cluster{Core: core, Dynamic: a.Dynamic, Namespaces: a.Namespaces}, err
}

// job reads a job of kind jk, nil when it does not exist; notServed says why
// where the cluster serves no such kind (its operator is not installed).
func (c *Cluster) job(ctx context.Context, jk jobkind.Facts, ns, name string) (u *unstructured.Unstructured, notServed string, err error) {
	gvr, err := c.Core.Resource(ctx, schema.FromAPIVersionAndKind(jk.APIVersion, jk.Kind))
	if no := (*apply.NotServedError)(nil); errors.As(err, &no) {
		return nil, no.Error(), nil
	}
	if err != nil {
		return nil, "", err
	}
	u, err = c.get(ctx, gvr, ns, name)
	return u, "", err
}

// get reads an object, nil when it does not exist.
func (c *Cluster) get(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, error) {
	u, err := c.Dynamic.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return u, err
}
