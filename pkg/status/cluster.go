// SPDX-License-Identifier: Apache-2.0

// Package status reads a job mlops-fn applied back from the cluster, with
// client-go: where it is (mlops-fn status) and what its training program
// prints (mlops-fn logs), for every kind of the job kinds table.
package status

import (
	"context"
	"strings"

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
	core, err := newAPIServer(a)
	return a, &Cluster{Core: core, Dynamic: a.Dynamic, Namespaces: a.Namespaces}, err
}

// resource is the API resource of a kind mlops-fn renders (their plurals
// are the kinds' lowercased, with an s).
func resource(apiVersion, kind string) schema.GroupVersionResource {
	gv, _ := schema.ParseGroupVersion(apiVersion)
	return gv.WithResource(strings.ToLower(kind) + "s")
}

// get reads an object, nil when it does not exist.
func (c *Cluster) get(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, error) {
	u, err := c.Dynamic.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return u, err
}
