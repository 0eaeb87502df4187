// SPDX-License-Identifier: Apache-2.0

// Package cluster is the API server that apply, delete, status and logs talk to, with client-go: the
// kubeconfig read as kubectl reads it, the resources by its discovery, and the reads the commands share.
package cluster

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/mlops-fn/mlops-fn/pkg/kinds"
)

// Flags are kubectl's flags for the cluster, with kubectl's meanings.
type Flags struct {
	Kubeconfig, Context, Namespace string
	RequestTimeout                 time.Duration // bounds each request to the API server
}

// Cluster is the API server every command talks to, with client-go.
type Cluster struct {
	Config  *rest.Config // the kubeconfig's, each request bounded by --request-timeout
	Dynamic dynamic.Interface
	Namespaces
	// rest reads what is not an object: discovery. logs streams a log for as long as it runs: only its answer
	// is bounded (Log).
	rest, logs *rest.RESTClient
	mapper     *apimeta.DefaultRESTMapper
	served     map[schema.GroupVersion]bool
}

// Namespaces say where an object goes.
type Namespaces struct {
	// Namespace is the one of an object that names none: --namespace, else the context's, else default.
	// Explicit: it is --namespace's, which an object's own namespace must then equal, as kubectl requires.
	Namespace string
	Explicit  bool
}

// Connect reads the kubeconfig as kubectl does (--kubeconfig, else $KUBECONFIG, else ~/.kube/config;
// --context; --namespace as Namespaces says) and checks that its server serves the Kubernetes API.
func Connect(ctx context.Context, f Flags) (*Cluster, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = f.Kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: f.Context, Timeout: f.RequestTimeout.String()}
	overrides.Context.Namespace = f.Namespace
	config := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	rc, err := config.ClientConfig()
	if clientcmd.IsEmptyConfig(err) {
		return nil, noKubeconfig(rules)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig: %w", err)
	}
	c := &Cluster{Config: rc, mapper: apimeta.NewDefaultRESTMapper(nil), served: map[schema.GroupVersion]bool{}}
	if c.Namespace, c.Explicit, err = config.Namespace(); err != nil {
		return nil, fmt.Errorf("reading the kubeconfig's namespace: %w", err)
	}
	if c.Dynamic, err = dynamic.NewForConfig(rc); err != nil {
		return nil, err
	}
	if c.rest, err = coreClient(rc, rc.Timeout); err != nil {
		return nil, err
	}
	if c.logs, err = coreClient(rc, 0); err != nil {
		return nil, err
	}
	var versions metav1.APIVersions
	b, err := c.rest.Get().AbsPath("/api").DoRaw(ctx)
	if err == nil {
		err = json.Unmarshal(b, &versions)
	}
	if err != nil && !apierrors.IsNotFound(err) && !errors.As(err, new(*json.SyntaxError)) {
		if errors.As(err, new(*url.Error)) {
			return nil, c.Explain(err)
		}
		return nil, fmt.Errorf("reading the API server %s (GET /api): %w", rc.Host, err)
	}
	if err != nil || len(versions.Versions) == 0 {
		why := "no APIVersions"
		if err != nil {
			why, _, _ = strings.Cut(strings.TrimSpace(err.Error()), "\n")
		}
		return nil, fmt.Errorf("%s does not serve the Kubernetes API (GET /api: %s): check the kubeconfig's server (--kubeconfig, --context)", rc.Host, why)
	}
	return c, nil
}

// noKubeconfig says where kubectl's rules looked for a kubeconfig that none of them found (client-go's own
// message names KUBERNETES_MASTER).
func noKubeconfig(rules *clientcmd.ClientConfigLoadingRules) error {
	env := clientcmd.RecommendedConfigPathEnvVar + " is not set"
	if v := os.Getenv(clientcmd.RecommendedConfigPathEnvVar); v != "" {
		env = clientcmd.RecommendedConfigPathEnvVar + "=" + v
	}
	var looked []string
	for _, p := range rules.GetLoadingPrecedence() {
		state := "holds no cluster"
		if _, err := os.Stat(p); err != nil {
			state = "does not exist"
		}
		looked = append(looked, p+" "+state)
	}
	return fmt.Errorf("no kubeconfig: --kubeconfig is not given, %s, and %s; accepted: --kubeconfig FILE, KUBECONFIG=FILE, or a kubeconfig at %s, as kubectl reads them (kubectl config set-cluster and set-credentials write one; a cluster's provider has a command that does)",
		env, strings.Join(looked, ", "), clientcmd.RecommendedHomeFile)
}

// coreClient is an untyped REST client of the core API group over config, each request bounded by timeout.
func coreClient(config *rest.Config, timeout time.Duration) (*rest.RESTClient, error) {
	core := rest.CopyConfig(config)
	core.Timeout = timeout
	core.APIPath = "/api"
	core.GroupVersion = &schema.GroupVersion{Version: "v1"}
	// Nothing is decoded by client-go: logs are streamed, discovery read as JSON.
	core.NegotiatedSerializer = serializer.NewCodecFactory(runtime.NewScheme()).WithoutConversion()
	return rest.RESTClientFor(core)
}

// Explain names the server and the request of an error that reached no answer: the request timed out
// (--request-timeout) or found no server. The rest of err's message, what was being done, stays.
func (c *Cluster) Explain(err error) error {
	var u *url.Error
	if !errors.As(err, &u) {
		return err
	}
	what := strings.ToUpper(u.Op) + " " + u.URL
	if p, perr := url.Parse(u.URL); perr == nil {
		what = strings.ToUpper(u.Op) + " " + p.Path
	}
	why := fmt.Sprintf("the API server %s could not be reached (%s): %v", c.Config.Host, what, u.Err)
	switch {
	case u.Timeout() && u.Err.Error() == tlsHandshakeTimeout:
		why = fmt.Sprintf("the API server %s did not complete the TLS handshake of %s within 10s (client-go's own limit, which --request-timeout does not change)",
			c.Config.Host, what)
	case u.Timeout() && c.Config.Timeout > 0:
		why = fmt.Sprintf("the API server %s did not answer %s within %s (--request-timeout)", c.Config.Host, what, c.Config.Timeout)
	}
	return errors.New(strings.Replace(err.Error(), u.Error(), why, 1))
}

// tlsHandshakeTimeout is net/http's error when a TLS handshake outlasts the transport's TLSHandshakeTimeout,
// which client-go sets to 10 s.
const tlsHandshakeTimeout = "net/http: TLS handshake timeout"

// Mapping is the resource of kind gvk, from the API server's discovery of its group version; a *NotServedError
// where it serves no such kind.
func (c *Cluster) Mapping(ctx context.Context, gvk schema.GroupVersionKind) (*apimeta.RESTMapping, error) {
	gv := gvk.GroupVersion()
	if !c.served[gv] {
		var l metav1.APIResourceList
		b, err := c.rest.Get().AbsPath(discoveryPath(gv.String())).DoRaw(ctx)
		if apierrors.IsNotFound(err) {
			return nil, &NotServedError{Message: fmt.Sprintf("this cluster serves no %s (%s): the operator or CRD of %s is not installed%s", gv, c.Config.Host, gvk.Kind, install(gvk.Kind))}
		}
		if err == nil {
			err = json.Unmarshal(b, &l)
		}
		if err != nil {
			return nil, fmt.Errorf("reading the API server's resources of %s: %w", gv, c.Explain(err))
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") {
				continue // a subresource
			}
			scope := apimeta.RESTScopeRoot
			if r.Namespaced {
				scope = apimeta.RESTScopeNamespace
			}
			c.mapper.AddSpecific(gv.WithKind(r.Kind), gv.WithResource(r.Name), gv.WithResource(r.SingularName), scope)
		}
		c.served[gv] = true
	}
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if apimeta.IsNoMatchError(err) {
		return nil, &NotServedError{Message: fmt.Sprintf("this cluster serves %s, but no kind %s in it (%s)%s", gv, gvk.Kind, c.Config.Host, install(gvk.Kind))}
	}
	return m, err
}

// discoveryPath is where the API server lists the resources of groupVersion ("v1": the core group's).
func discoveryPath(groupVersion string) string {
	if groupVersion == "v1" {
		return "/api/v1"
	}
	return "/apis/" + groupVersion
}

// install says how to install what serves kind, a job kind's operator.
func install(kind string) string {
	k, ok := kinds.All.ForKind(kind)
	if !ok || len(k.Install) == 0 {
		return ""
	}
	return fmt.Sprintf("; install %s (the release mlops-fn's e2e tests run): %s", k.Operator, strings.Join(k.Install, ", then "))
}

// NotServedError: the API server answered, and serves no such kind.
type NotServedError struct{ Message string }

func (e *NotServedError) Error() string { return e.Message }

// Of is where an object whose own namespace is ns goes: ns, else the flags'; ns contradicting --namespace is
// an error, as kubectl's.
func (c Namespaces) Of(ns string) (string, error) {
	switch {
	case ns == "":
		return c.Namespace, nil
	case c.Explicit && ns != c.Namespace:
		return "", fmt.Errorf("the namespace from the provided object %q does not match the namespace %q: the overlay sets its namespace; drop --namespace or pass --namespace=%s", ns, c.Namespace, ns)
	}
	return ns, nil
}

// The reads the commands share, of the core group with the dynamic client and plain REST calls: client-go's
// typed clients and its discovery (and so its restmapper) import client-go's scheme, whose start registers
// every API group, in every run of mlops-fn, the KRM function's too (docs/performance.md).

// core is a resource of the core group in namespace ns ("": of the cluster).
func (c *Cluster) core(resource, ns string) dynamic.ResourceInterface {
	return c.Dynamic.Resource(schema.GroupVersionResource{Version: "v1", Resource: resource}).Namespace(ns)
}

// Get reads the object name of r, nil when it does not exist.
func Get(ctx context.Context, r dynamic.ResourceInterface, name string) (*unstructured.Unstructured, error) {
	u, err := r.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return u, err
}

// Pod is the pod name, alone; none when it does not exist.
func (c *Cluster) Pod(ctx context.Context, ns, name string) ([]corev1.Pod, error) {
	u, err := Get(ctx, c.core("pods", ns), name)
	if err != nil || u == nil {
		return nil, err
	}
	p := make([]corev1.Pod, 1)
	return p, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &p[0])
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
	return cancelOnClose{r, cancel}, nil
}

// cancelOnClose is a log whose Close ends its request's context.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (r cancelOnClose) Close() error { defer r.cancel(); return r.ReadCloser.Close() }

// Serves is nil when the API server serves groupVersion ("v1" for the core group).
func (c *Cluster) Serves(ctx context.Context, groupVersion string) error {
	return c.rest.Get().AbsPath(discoveryPath(groupVersion)).Do(ctx).Error()
}

// List reads the objects of a core resource (pods, events, nodes) in namespace ns into their Go type.
func List[T any](ctx context.Context, c *Cluster, resource, ns, selector string) ([]T, error) {
	l, err := c.core(resource, ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
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
