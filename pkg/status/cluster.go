// Package status reads a job mlops-fn applied back from the cluster, with
// client-go: where it is (mlops-fn status) and what its training program
// prints (mlops-fn logs), for every kind of the job kinds table.
package status

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/mlops-fn/mlops-fn/pkg/apply"
)

// Flags are kubectl's flags, as mlops-fn apply passes them on to kubectl.
type Flags struct {
	Kubeconfig, Context, Namespace string
}

// Cluster is the API server the commands read, and the namespace of a job
// whose overlay names none.
type Cluster struct {
	Core      Core
	Dynamic   dynamic.Interface
	Namespace string
}

// Connect reads the kubeconfig as kubectl does (--kubeconfig, else
// $KUBECONFIG, else ~/.kube/config; --context; --namespace, else the
// context's, else default).
func Connect(f Flags) (*Cluster, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = f.Kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: f.Context}
	overrides.Context.Namespace = f.Namespace
	config := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	rest, err := config.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig: %w", err)
	}
	ns, _, err := config.Namespace()
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig's namespace: %w", err)
	}
	c := &Cluster{Namespace: ns}
	if c.Dynamic, err = dynamic.NewForConfig(rest); err != nil {
		return nil, err
	}
	if c.Core, err = newAPIServer(rest, c.Dynamic); err != nil {
		return nil, err
	}
	return c, nil
}

// namespaceOf is where job lives: the overlay's namespace, else the flags'.
func (c *Cluster) namespaceOf(job apply.Job) string {
	if job.Namespace != "" {
		return job.Namespace
	}
	return c.Namespace
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
