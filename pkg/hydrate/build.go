package hydrate

import (
	"fmt"
	"path/filepath"
	"slices"
	"sync"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/openapi"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
)

// build runs kustomize on dir as `kubectl kustomize` and `kubectl apply -k`
// do (kustomize's defaults: no plugins, files only from in or below each
// kustomization), from a fresh schema.
func build(fsys filesys.FileSystem, dir string) ([]*yaml.RNode, error) {
	var m resmap.ResMap
	err := inFreshSchema(func() error {
		var err error
		m, err = krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fsys, dir)
		return err
	})
	if err != nil {
		return nil, err
	}
	return m.ToRNodeSlice(), nil
}

// schemaMu serializes what reads or writes kyaml's OpenAPI schema from a fresh
// start: kustomize's builds and the check's run of the function.
var schemaMu sync.Mutex

// inFreshSchema runs f from kyaml's built-in OpenAPI schema, as a new
// kubectl or mlops-fn process would. The schema is a global of kyaml's
// openapi package, and both sides of hydrate's check change it: kustomize
// sets it from a kustomization's openapi: field and, with none, keeps the
// custom document an earlier build set (openapi.SetSchema leaves it); the
// processor registers mlops-fn's CRD schema and turns the built-in one off
// (schema.Register). Without the reset, a build after one with openapi:, or
// after the function, would merge with the wrong schema
// (TestBuildsDoNotShareTheSchema).
func inFreshSchema(f func() error) error {
	schemaMu.Lock()
	defer schemaMu.Unlock()
	openapi.ResetOpenAPI()
	return f()
}

// objects keys a build's output by kind, namespace and name, each as YAML
// with sorted keys: what the API server receives, not comments or field order.
func objects(nodes []*yaml.RNode) (map[string]string, error) {
	out := map[string]string{}
	for _, n := range nodes {
		m, err := n.Map()
		if err != nil {
			return nil, err
		}
		b, err := yaml.Marshal(m)
		if err != nil {
			return nil, err
		}
		out[id(n)] = string(b)
	}
	return out, nil
}

func id(n *yaml.RNode) string {
	ns := n.GetNamespace()
	if ns == "" {
		ns = "(no namespace)"
	}
	return n.GetKind() + " " + ns + "/" + n.GetName()
}

// difference describes how two builds differ, "" when they do not.
func difference(want, got []*yaml.RNode) (string, error) {
	w, err := objects(want)
	if err != nil {
		return "", err
	}
	g, err := objects(got)
	if err != nil {
		return "", err
	}
	return cmp.Diff(w, g), nil
}

// stagedBuild builds dir as it will be: files (by name in dir) replaced and,
// when component is given, the component folder replaced by it.
func stagedBuild(dir string, files, component map[string][]byte) ([]*yaml.RNode, error) {
	s := newStaged()
	for name, b := range files {
		s.files[filepath.Join(dir, name)] = b
	}
	if component != nil {
		c := filepath.Join(dir, ComponentDir)
		s.dirs[c] = true
		for name, b := range component {
			s.files[filepath.Join(c, name)] = b
		}
	}
	return build(s, dir)
}

// Applied builds the overlay dir as kubectl does, without the guard: its
// patches as the last hydrate wrote them over the base and mlops.env as they
// are, so that the job it applied can be deleted after an edit of job.yaml
// or mlops.env.
func Applied(dir string) ([]*yaml.RNode, error) {
	component := filepath.Join(abs(dir), ComponentDir)
	path := filepath.Join(component, componentFile)
	if !ownedByUs(path) {
		return nil, fmt.Errorf("%s is not an overlay mlops-fn hydrate wrote (no %s with its header)", dir, filepath.Join(ComponentDir, componentFile))
	}
	k, err := yaml.ReadFile(path)
	if err != nil {
		return nil, err
	}
	// The guard: the first of transformers:.
	transformers, err := k.Pipe(yaml.Lookup("transformers"))
	if err != nil {
		return nil, fmt.Errorf("%s: transformers: %w", path, err)
	}
	if transformers == nil {
		return nil, fmt.Errorf("%s lists no transformers; accepted: the file mlops-fn hydrate wrote (run it again)", path)
	}
	transformers.YNode().Content = slices.DeleteFunc(transformers.Content(), func(n *yaml.Node) bool { return n.Value == guardDir+"/"+checksFile })
	text, err := k.String()
	if err != nil {
		return nil, err
	}
	s := newStaged()
	s.files[path] = []byte(text)
	nodes, err := build(s, abs(dir))
	// The job spec, a resource for the guard, which marks it local-config.
	return slices.DeleteFunc(nodes, func(n *yaml.RNode) bool {
		return n.GetApiVersion() == api.APIVersion && n.GetKind() == specKind
	}), err
}
