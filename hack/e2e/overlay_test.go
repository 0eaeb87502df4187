// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/kustomize/kyaml/kio"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"

	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/jobspec"
	"github.com/mlops-fn/mlops-fn/pkg/kinds"
	"github.com/mlops-fn/mlops-fn/pkg/processor"
	"github.com/mlops-fn/mlops-fn/pkg/render"
)

// fixtureDir is the hand-written TrainJob run like an overlay, and broken on purpose.
const fixtureDir = "hack/e2e/manifests/trainjob"

// overlay is an overlay folder as kubectl builds it, and what mlops-fn's plan says of it.
type overlay struct {
	dir  string // relative to the repository
	slug string // a short name for its namespaces
	// objects are `kubectl kustomize dir`, what `kubectl apply -k` sends.
	objects []*unstructured.Unstructured
	kind    jobkind.Facts
	job     *unstructured.Unstructured // the job object; nil if the overlay has none
	name    string                     // the job's name

	// plan is mlops-fn's resolved plan of the overlay's job.yaml and mlops.env (nil for a
	// fixture, which has neither); env is that mlops.env's keys and values.
	plan *render.Plan
	env  map[string]string
	// level is the Pod Security level the pods need: mlops-fn's verdict on the job as
	// built (processor.PodSecurity; a fixture: its kustomization's words "needs Pod
	// Security level LEVEL"), with the refusals.
	level   string
	reasons []string

	trainJob *trainer.TrainJob // the job, when it is a TrainJob
}

var slugRules = strings.NewReplacer("quickstart/k8s/mlops/", "qs-", "examples/", "", "hack/e2e/manifests/", "fixture-", "/", "-")

// overlayIn makes namespace ns (Pod Security privileged) and loads the overlay
// in dir; false, with c failed, when either fails.
func overlayIn(c *check, dir, ns string) (*overlay, bool) {
	if err := newNamespace(ns, "privileged"); err != nil {
		c.fail("a namespace", err.Error())
		return nil, false
	}
	o, err := loadOverlay(dir)
	if err != nil {
		c.fail("the overlay builds", err.Error())
		return nil, false
	}
	return o, true
}

// eachQuickstart runs check on a copy of each quickstart overlay, as a check
// named by the folder and what, in a namespace of its own named by nsPrefix
// and the folder.
func eachQuickstart(t *testing.T, what, nsPrefix string, check func(c *check, dir, ns string)) {
	tree, dirs := quickstartTree(t)
	for _, dir := range dirs {
		c := newCheck(t, dir+what)
		guarded(c, func() { check(c, filepath.Join(tree, dir), nsPrefix+slugRules.Replace(dir)) })
	}
}

func loadOverlay(dir string) (*overlay, error) {
	dir = strings.TrimSuffix(dir, "/")
	// A copy elsewhere (an absolute path) is named by its folder; its caller may rename it.
	slug := slugRules.Replace(dir)
	if filepath.IsAbs(dir) {
		slug = filepath.Base(dir)
	}
	o := &overlay{dir: dir, slug: slug}
	out, err := kubectl("", "kustomize", dir)
	if err != nil {
		return nil, fmt.Errorf("kubectl kustomize %s: %v: %s", dir, err, out)
	}
	if o.objects, err = decodeObjects(out); err != nil {
		return nil, fmt.Errorf("kubectl kustomize %s: %v", dir, err)
	}
	for _, u := range o.objects {
		if k, ok := kinds.All.ForKind(u.GetKind()); ok && u.GetAPIVersion() == k.APIVersion {
			o.kind, o.job, o.name = k, u, u.GetName()
			break
		}
	}
	if o.kind.Kind == trainer.TrainJobKind {
		o.trainJob = &trainer.TrainJob{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.job.Object, o.trainJob); err != nil {
			return nil, fmt.Errorf("%s: the TrainJob: %v", dir, err)
		}
	}
	spec := filepath.Join(dir, "job.yaml")
	if _, err := os.Stat(spec); errors.Is(err, os.ErrNotExist) {
		return o, o.readFixtureLevel()
	}
	config, err := jobspec.Read(spec)
	if err != nil {
		return nil, err
	}
	proc := processor.Processor{ConfigDir: dir, ConfigFile: spec}
	resolved, results := proc.Resolve(config, nil)
	if resolved == nil {
		return nil, fmt.Errorf("mlops-fn cannot resolve %s: %v", spec, results)
	}
	o.plan, o.env = resolved.Plan, resolved.Env.Map()
	// The build names the env ConfigMap with kustomize's hash of its data at the end: the
	// name the cluster knows, which the checks look for.
	for _, u := range o.objects {
		if n := u.GetName(); u.GetKind() == "ConfigMap" && strings.HasPrefix(n, o.plan.ConfigMapName+"-") && !strings.Contains(n[len(o.plan.ConfigMapName)+1:], "-") {
			o.plan.ConfigMapName = n
		}
	}
	// The plan as it applies to the job the overlay builds: its name and containers.
	items, err := kio.FromBytes([]byte(out))
	if err != nil {
		return nil, err
	}
	if _, plans, err := proc.Targets(o.plan, items); err != nil {
		return nil, fmt.Errorf("mlops-fn on the built %s: %v", dir, err)
	} else if len(plans) == 1 {
		o.plan = plans[0]
	}
	o.level = "restricted"
	if o.job != nil {
		job, err := kyaml.FromMap(o.job.Object)
		if err != nil {
			return nil, err
		}
		level, refusals := processor.PodSecurity(job)
		o.level = string(level)
		for _, r := range refusals {
			o.reasons = append(o.reasons, r.Path+": "+r.Message)
		}
	}
	return o, nil
}

var fixtureLevel = regexp.MustCompile(`needs Pod Security level ([a-z]+)`)

// readFixtureLevel: a fixture names its level in its kustomization.yaml, worded as mlops-fn's warning.
func (o *overlay) readFixtureLevel() error {
	k, err := os.ReadFile(filepath.Join(o.dir, "kustomization.yaml"))
	if err != nil {
		return err
	}
	o.level = "restricted"
	if m := fixtureLevel.FindSubmatch(k); m != nil {
		o.level = string(m[1])
		o.reasons = []string{string(m[0]) + " (its kustomization.yaml)"}
	}
	return nil
}

// decodeObjects splits a multi-document YAML stream into objects.
func decodeObjects(text string) ([]*unstructured.Unstructured, error) {
	d := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(text), 4096)
	var objs []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := d.Decode(&u.Object); err != nil {
			if err == io.EOF {
				return objs, nil
			}
			return nil, err
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
}

// encodeObjects is the objects as one YAML stream.
func encodeObjects(objs []*unstructured.Unstructured) (string, error) {
	var b strings.Builder
	for _, u := range objs {
		y, err := yaml.Marshal(u.Object)
		if err != nil {
			return "", err
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	return b.String(), nil
}

// ofKind are the overlay's objects of kind.
func (o *overlay) ofKind(kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, u := range o.objects {
		if u.GetKind() == kind {
			out = append(out, u)
		}
	}
	return out
}

// fixture reports whether the overlay is hand-written: no plan to compare with.
func (o *overlay) fixture() bool { return o.plan == nil }

// podSecurityContext is what the plan says each pod's securityContext holds (the ids).
func (o *overlay) podSecurityContext() ids {
	p := o.plan
	want := ids{RunAsUser: p.RunAsUser, RunAsGroup: p.RunAsGroup, FSGroup: p.FSGroup}
	if !p.Root() {
		t := true
		want.RunAsNonRoot = &t
	}
	return want
}

// ids are the identity fields of a pod's securityContext the checks compare.
type ids struct {
	RunAsUser, RunAsGroup, FSGroup *int64
	RunAsNonRoot                   *bool
}

func podIDs(sc *corev1.PodSecurityContext) ids {
	if sc == nil {
		return ids{}
	}
	return ids{sc.RunAsUser, sc.RunAsGroup, sc.FSGroup, sc.RunAsNonRoot}
}

// jsonText is v as compact JSON, for failure details.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}
