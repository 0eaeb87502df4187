package hydrate

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/go-cmp/cmp"
	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/openapi"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// staged is the file system a build sees before hydrate writes: the disk,
// with some files replaced and hydrate's folder replaced whole. It is read-only.
type staged struct {
	disk  filesys.FileSystem
	files map[string][]byte // absolute path → content
	dirs  map[string]bool   // absolute folders whose content on disk is hidden
}

func newStaged() *staged {
	return &staged{disk: filesys.MakeFsOnDisk(), files: map[string][]byte{}, dirs: map[string]bool{}}
}

// hidden: p lies in a folder staged whole, so the disk does not show through.
func (s *staged) hidden(p string) bool {
	for d := range s.dirs {
		if p == d || strings.HasPrefix(p, d+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

func abs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	return a
}

var errReadOnly = errors.New("hydrate's staged file system is read-only")

func (s *staged) Create(string) (filesys.File, error) { return nil, errReadOnly }
func (s *staged) Mkdir(string) error                  { return errReadOnly }
func (s *staged) MkdirAll(string) error               { return errReadOnly }
func (s *staged) RemoveAll(string) error              { return errReadOnly }
func (s *staged) WriteFile(string, []byte) error      { return errReadOnly }

func (s *staged) Open(p string) (filesys.File, error) {
	if a := abs(p); s.files[a] != nil || s.hidden(a) {
		return nil, fmt.Errorf("open %s: staged files are read through ReadFile", p)
	}
	return s.disk.Open(p)
}

// virtualDir: p holds a staged file.
func (s *staged) virtualDir(p string) bool {
	for f := range s.files {
		if strings.HasPrefix(f, p+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

func (s *staged) IsDir(p string) bool {
	a := abs(p)
	if s.dirs[a] || s.virtualDir(a) {
		return true
	}
	return !s.hidden(a) && s.files[a] == nil && s.disk.IsDir(p)
}

func (s *staged) Exists(p string) bool {
	a := abs(p)
	if s.dirs[a] || s.files[a] != nil || s.virtualDir(a) {
		return true
	}
	return !s.hidden(a) && s.disk.Exists(p)
}

func (s *staged) ReadFile(p string) ([]byte, error) {
	a := abs(p)
	if b, ok := s.files[a]; ok {
		return b, nil
	}
	if s.hidden(a) {
		return nil, &fs.PathError{Op: "read", Path: p, Err: fs.ErrNotExist}
	}
	return s.disk.ReadFile(p)
}

func (s *staged) ReadDir(p string) ([]string, error) {
	a := abs(p)
	names := map[string]bool{}
	if !s.hidden(a) {
		if on, err := s.disk.ReadDir(p); err == nil {
			for _, n := range on {
				names[n] = true
			}
		} else if !s.dirs[a] {
			return nil, err
		}
	}
	for f := range s.files {
		if rel, err := filepath.Rel(a, f); err == nil && !strings.HasPrefix(rel, "..") {
			names[strings.Split(rel, string(filepath.Separator))[0]] = true
		}
	}
	return slices.Sorted(maps.Keys(names)), nil
}

func (s *staged) CleanedAbs(p string) (filesys.ConfirmedDir, string, error) {
	a := abs(p)
	switch {
	case s.dirs[a], s.virtualDir(a):
		return filesys.ConfirmedDir(a), "", nil
	case s.files[a] != nil || s.hidden(a):
		return filesys.ConfirmedDir(filepath.Dir(a)), filepath.Base(a), nil
	}
	return s.disk.CleanedAbs(p)
}

func (s *staged) Glob(pattern string) ([]string, error) { return s.disk.Glob(pattern) }
func (s *staged) Walk(p string, fn filepath.WalkFunc) error {
	return s.disk.Walk(p, fn)
}

// kubectlOptions build as `kubectl kustomize` and `kubectl apply -k` do: no
// plugins, files only from in or below each kustomization.
func kubectlOptions() *krusty.Options { return krusty.MakeDefaultOptions() }

// execOptions also run exec KRM functions, as `kustomize build
// --enable-alpha-plugins --enable-exec` does; env reaches the function.
func execOptions(env ...string) *krusty.Options {
	o := krusty.MakeDefaultOptions()
	o.PluginConfig = types.EnabledPluginConfig(types.BploUseStaticallyLinked)
	o.PluginConfig.FnpLoadingOptions.EnableExec = true
	o.PluginConfig.FnpLoadingOptions.Env = env
	return o
}

// build runs kustomize on dir. kustomize keeps its OpenAPI schema in a global:
// each build starts from the built-in one, as a kubectl process does.
func build(fsys filesys.FileSystem, dir string, o *krusty.Options) ([]*yaml.RNode, error) {
	openapi.ResetOpenAPI()
	m, err := krusty.MakeKustomizer(o).Run(fsys, dir)
	if err != nil {
		return nil, err
	}
	return m.ToRNodeSlice(), nil
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
func stagedBuild(dir string, files, component map[string][]byte, o *krusty.Options) ([]*yaml.RNode, error) {
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
	return build(s, dir, o)
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
	// The guard: the first of transformers:; in an overlay of an earlier
	// mlops-fn, its component.
	transformers, err := k.Pipe(yaml.Lookup("transformers"))
	if err != nil {
		return nil, fmt.Errorf("%s: transformers: %w", path, err)
	}
	components, err := k.Pipe(yaml.Lookup("components"))
	if err != nil {
		return nil, fmt.Errorf("%s: components: %w", path, err)
	}
	switch {
	case transformers != nil:
		transformers.YNode().Content = slices.DeleteFunc(transformers.Content(), func(n *yaml.Node) bool { return n.Value == guardDir+"/"+checksFile })
	case components != nil:
		components.YNode().Content = slices.DeleteFunc(components.Content(), func(n *yaml.Node) bool { return n.Value == guardDir })
	default:
		return nil, fmt.Errorf("%s lists neither transformers nor components; accepted: the file mlops-fn hydrate wrote (run it again)", path)
	}
	text, err := k.String()
	if err != nil {
		return nil, err
	}
	s := newStaged()
	s.files[path] = []byte(text)
	nodes, err := build(s, abs(dir), kubectlOptions())
	// The job spec, a resource for the guard, which marks it local-config.
	return slices.DeleteFunc(nodes, func(n *yaml.RNode) bool {
		return n.GetApiVersion() == api.APIVersion && n.GetKind() == specKind
	}), err
}
