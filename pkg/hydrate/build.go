// SPDX-License-Identifier: Apache-2.0

package hydrate

import (
	"cmp"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/fielddiff"
	"github.com/mlops-fn/mlops-fn/pkg/schema"
)

// builds counts the builds, hydrate's main cost (TestBuildsPerWrite).
var builds atomic.Int64

// build runs kustomize on dir as `kubectl apply -k` does (no plugins, files only from in or below each
// kustomization), from kyaml's built-in schema as a new kubectl process (TestBuildsDoNotShareTheSchema).
func build(fsys filesys.FileSystem, dir string) ([]*yaml.RNode, error) {
	builds.Add(1)
	var m resmap.ResMap
	err := schema.WithBuiltIn(func() error {
		var err error
		m, err = krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fsys, dir)
		return err
	})
	if m := mergeWithoutBase.FindStringSubmatch(fmt.Sprint(err)); m != nil {
		return nil, fmt.Errorf("%s: a %sGenerator named %s has behavior: merge or replace, which needs a %s of that name from its kustomization's resources (the base), and they hold none; accepted: no behavior on that generator (create, kustomize's default)",
			filepath.Join(dir, "kustomization.yaml"), strings.ToLower(m[1][:1])+m[1][1:], m[2], m[1])
	}
	if err != nil {
		return nil, err
	}
	return m.ToRNodeSlice(), nil
}

// mergeWithoutBase is kustomize's error for a generator that merges into or replaces an object its resources
// lack (kustomize edit add configmap --behavior=merge), which it prints as Go pointers and structs.
var mergeWithoutBase = regexp.MustCompile(`Kind:"([A-Za-z]+)".*Name:"([^"]*)".*does not exist; cannot merge or replace`)

// builtObject is an object of a build as the API server receives it: decoded, no comments or field order.
type builtObject struct {
	apiVersion, kind, namespace, name string
	fields                            map[string]any
}

func (o builtObject) metadata(field string) map[string]string {
	meta, _ := o.fields["metadata"].(map[string]any)
	values, _ := meta[field].(map[string]any)
	out := map[string]string{}
	for k, v := range values {
		out[k] = fmt.Sprint(v)
	}
	return out
}

// String names the object in messages: MPIJob/resnet50, and its namespace.
func (o builtObject) String() string {
	if o.namespace == "" {
		return o.kind + "/" + o.name
	}
	return o.kind + "/" + o.name + " (namespace " + o.namespace + ")"
}

// objectDiff is how one object differs between two builds; one change at path "" when a build lacks it.
type objectDiff struct {
	object  builtObject
	changes []fielddiff.Change
}

// differences lists how two builds differ, object by object by kind, namespace and name.
func differences(want, got []*yaml.RNode) ([]objectDiff, error) {
	objects := map[string][2]*builtObject{} // by kind, namespace and name: in want, in got
	for side, nodes := range [][]*yaml.RNode{want, got} {
		for _, n := range nodes {
			m, err := n.Map()
			if err != nil {
				return nil, err
			}
			key := n.GetKind() + " " + n.GetNamespace() + "/" + n.GetName()
			both := objects[key]
			both[side] = &builtObject{n.GetApiVersion(), n.GetKind(), n.GetNamespace(), n.GetName(), m}
			objects[key] = both
		}
	}
	fields := func(o *builtObject) any {
		if o == nil {
			return nil
		}
		return o.fields
	}
	var out []objectDiff
	for _, key := range slices.Sorted(maps.Keys(objects)) {
		w, g := objects[key][0], objects[key][1]
		if changes := fielddiff.Trees("", fields(w), fields(g)); len(changes) > 0 {
			out = append(out, objectDiff{object: *cmp.Or(w, g), changes: changes})
		}
	}
	return out, nil
}

// maxChangesShown bounds the changes a message lists; it counts the rest.
const maxChangesShown = 4

// describe writes the first shown changes, one a line, each build's value after its name (want, got), then
// how many more.
func describe(diffs []objectDiff, shown int, want, got string) string {
	var lines []string
	more := 0
	for _, d := range diffs {
		for _, c := range d.changes {
			if len(lines) == shown {
				more++
				continue
			}
			where := d.object.String()
			wantValue, gotValue := fielddiff.Brief(c.Old), fielddiff.Brief(c.New)
			if c.Path == "" {
				wantValue, gotValue = presence(c.Old), presence(c.New)
			} else {
				where += ": " + c.Path
			}
			lines = append(lines, fmt.Sprintf("%s: %s %s, %s %s", where, want, wantValue, got, gotValue))
		}
	}
	if more > 0 {
		lines = append(lines, fmt.Sprintf("and %d more", more))
	}
	return strings.Join(lines, "\n")
}

func presence(object any) string {
	if object == nil {
		return "no such object"
	}
	return "the object"
}

// stagedBuild builds dir with files (by name in dir) replaced, and folders (by path in dir) replaced whole.
func stagedBuild(dir string, files map[string][]byte, folders map[string]map[string][]byte) ([]*yaml.RNode, error) {
	s := &staged{FileSystem: filesys.MakeFsOnDisk(), files: map[string][]byte{}, dirs: map[string]bool{}}
	for name, b := range files {
		s.files[filepath.Join(dir, name)] = b
	}
	for rel, content := range folders {
		folder := filepath.Join(dir, filepath.FromSlash(rel))
		if real, err := filepath.EvalSymlinks(folder); err == nil {
			folder = real // where kustomize, resolving links, reads it
		}
		s.dirs[folder] = true
		for name, b := range content {
			s.files[filepath.Join(folder, filepath.FromSlash(name))] = b
		}
	}
	return build(s, dir)
}

// Applied builds the overlay dir as kubectl does but without the guard: the patches as last written over the
// base and mlops.env as they are, so the job it applied can be deleted after an edit of job.yaml or mlops.env.
func Applied(dir string) ([]*yaml.RNode, error) {
	path := filepath.Join(abs(dir), ComponentDir, componentFile)
	if !ownedByUs(path) {
		return nil, fmt.Errorf("%s is not an overlay mlops-fn hydrate wrote (no %s with its header)", dir, filepath.Join(ComponentDir, componentFile))
	}
	k, err := yaml.ReadFile(path)
	if err != nil {
		return nil, err
	}
	transformers, err := k.Pipe(yaml.Lookup("transformers"))
	if err != nil {
		return nil, fmt.Errorf("%s: transformers: %w", path, err)
	}
	if transformers == nil {
		return nil, fmt.Errorf("%s lists no transformers; accepted: the file mlops-fn hydrate wrote (run it again)", path)
	}
	transformers.YNode().Content = slices.DeleteFunc(transformers.Content(), isGuard)
	text, err := k.String()
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{filepath.Join(ComponentDir, componentFile): []byte(text)}
	// The check that the component ran tests the guard's mark: it goes too.
	kpath, _, err := kustomizationFile(dir)
	if err != nil {
		return nil, err
	}
	if kpath != "" {
		user, _, _, err := readKustomization(kpath, nil, "")
		if err != nil {
			return nil, err
		}
		if patches := user.Field("patches"); patches != nil && patches.Value.YNode().Kind == yaml.SequenceNode {
			patches.Value.YNode().Content = slices.DeleteFunc(patches.Value.Content(), isListedEntry)
		}
		if text, err = user.String(); err != nil {
			return nil, err
		}
		files[filepath.Base(kpath)] = []byte(text)
	}
	nodes, err := stagedBuild(abs(dir), files, nil)
	// The job spec, a resource for the guard, which marks it local-config.
	return slices.DeleteFunc(nodes, func(n *yaml.RNode) bool {
		return n.GetApiVersion() == api.APIVersion && n.GetKind() == specKind
	}), err
}

// GuardSize is the bytes the guard's transformers take in the component's kustomization text.
func GuardSize(componentKustomization []byte) (int, error) {
	k, err := yaml.Parse(string(componentKustomization))
	if err != nil {
		return 0, err
	}
	transformers, err := k.Pipe(yaml.Lookup("transformers"))
	if err != nil || transformers == nil {
		return 0, fmt.Errorf("no transformers: %v", err)
	}
	size := 0
	for _, n := range transformers.Content() {
		if isGuard(n) {
			size += len("- |\n") + len(n.Value) + 2*strings.Count(n.Value, "\n")
		}
	}
	return size, nil
}

// isGuard: transformers entry n is the guard's: inline, named guardPrefix..., or, in an older component, its file.
func isGuard(n *yaml.Node) bool {
	if n.Value == "guard/checks.yaml" {
		return true
	}
	t, err := yaml.Parse(n.Value)
	return err == nil && t.YNode().Kind == yaml.MappingNode && strings.HasPrefix(t.GetName(), guardPrefix)
}
