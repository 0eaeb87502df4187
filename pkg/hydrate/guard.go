package hydrate

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/mlops-fn/mlops-fn/pkg/env"
	"github.com/mlops-fn/mlops-fn/pkg/jobnode"
)

// The guard makes a hydrated overlay refuse to build once its inputs changed
// (mlops.env, the job spec, the base's job and its containers):
// plain kustomize (kubectl apply -k) cannot run mlops-fn, so an edit of
// mlops.env or the job spec would otherwise ship the patches of the old
// values with exit 0. kustomize can compare only by selecting: a replacement
// whose source selects nothing fails the build and prints the selector. So
// the guard object's name is set, a line at a time, to what the build reads
// now ("WORKERS=8"), and a replacement selects it by what hydrate read
// ("WORKERS=2"). Its kind is the message the user sees. Only replacement
// fields that kubectl's kustomize v5.5 knows are used (no sourceValue), and
// the kind and namespace are plain words, as kustomize v5.8 reads target
// selectors as regular expressions. No commas: kustomize keeps an object's
// earlier kinds in a comma-separated annotation.

// GuardKind is the guard object's kind, the start of the message a stale
// overlay fails with.
const GuardKind = "mlops-fn: this overlay is out of date; mlops.env or the job spec or the base changed after mlops-fn hydrate wrote it; run mlops-fn hydrate on this folder; hydrate read"

const (
	guardAPIVersion = "mlops-fn.dev/v1alpha1"
	checkedField    = "metadata.annotations.[mlops-fn.dev/checked]"
	// The inputs ConfigMap's keys: the job spec's text and the token of
	// hydrate's kustomization entries.
	specKey          = "spec"
	envKey           = "env"
	kustomizationKey = "kustomization"
)

// guardInputs is what the guard compares the build against.
type guardInputs struct {
	jobName       string
	namespace     string // the env ConfigMap's
	configMapName string
	inputsName    string // the local-config ConfigMap with the spec's text
	env           *env.File
	specFile      string // the spec's file name, for messages
	specText      string
	envFile       string // mlops.env's path in the overlay, for messages
	envText       string
	token         string
	targets       []*yaml.RNode // the base's objects the patches address
}

type guardBuilder struct {
	in           guardInputs
	selector     map[string]any // selects the guard object
	prefixes     map[string]any // spec.prefixes: name prefixes, by key
	replacements []any
}

// guard returns the guard object and the replacements that check the build's
// inputs against in.
func guard(in guardInputs) (object map[string]any, replacements []any) {
	g := &guardBuilder{in: in, prefixes: map[string]any{}}
	ns := in.jobName
	if in.namespace != "" {
		ns = in.namespace + "." + in.jobName
	}
	g.selector = map[string]any{"kind": GuardKind, "namespace": ns}

	envSource := map[string]any{"kind": "ConfigMap", "name": in.configMapName, "fieldPath": "data"}
	if in.namespace != "" {
		envSource["namespace"] = in.namespace
	}
	var keys []string
	for _, e := range in.env.Entries {
		keys = append(keys, e.Key)
	}
	if len(keys) > 0 {
		// The env ConfigMap's data, as the build made it, becomes the guard's
		// labels: readable by key, and selectable by a key's presence.
		g.add(envSource, g.target("metadata.labels", nil))
	}
	for _, e := range in.env.Entries {
		g.compare("env "+e.Key, e.Key+"=", e.Value,
			g.guardSource("metadata.labels."+pathKey(e.Key)), "=")
	}
	// A known key added since: its presence among the labels selects the guard
	// for a field it lacks, which fails the build with the path as the message.
	for _, doc := range env.KnownKeys() {
		k := doc.Key
		if slices.Contains(keys, k) {
			continue
		}
		sel := maps.Clone(g.selector)
		sel["labelSelector"] = k
		g.add(g.guardSource("spec.marker"), map[string]any{
			"select":     sel,
			"fieldPaths": []any{fmt.Sprintf("[mlops-fn: %s was added to mlops.env after mlops-fn hydrate wrote this overlay: run mlops-fn hydrate on this folder]", k)},
		})
	}
	inputs := func(key string, options map[string]any) map[string]any {
		s := map[string]any{"kind": "ConfigMap", "name": in.inputsName, "fieldPath": "data." + key}
		if options != nil {
			s["options"] = options
		}
		return s
	}
	// The files line by line: any edit, a key of the user's own added to
	// mlops.env too (it may misspell one of mlops-fn's), needs hydrate.
	for _, f := range []struct{ key, name, text string }{{envKey, in.envFile, in.envText}, {specKey, in.specFile, in.specText}} {
		lines := strings.Split(f.text, "\n")
		for i, line := range lines {
			g.compare(f.key+strconv.Itoa(i+1), fmt.Sprintf("%s:%d: ", f.name, i+1), line,
				inputs(f.key, map[string]any{"delimiter": "\n", "index": i}), ": ")
		}
		if f.text != "" {
			// Lines added after the last one compared.
			g.compare(f.key+"after", fmt.Sprintf("%s after line %d: ", f.name, len(lines)), "",
				inputs(f.key, map[string]any{"delimiter": f.text, "index": 1}), ": ")
		}
	}
	g.compare("kustomization", "kustomization.yaml, mlops-fn's entries: ", in.token, inputs(kustomizationKey, nil), ": ")
	// The base: each target is still there, with the containers the patches
	// address where they were (a patch aimed at a renamed container adds one).
	for _, t := range in.targets {
		// The job itself, for a kind whose base holds no containers (a TrainJob).
		g.compare(fmt.Sprintf("base%d", len(g.prefixes)), fmt.Sprintf("%s/%s: ", t.GetKind(), t.GetName()), t.GetName(), baseSource(t, "metadata.name"), ": ")
		for _, podSpec := range jobnode.PodSpecPaths(t.GetKind()) {
			for _, field := range []string{"containers", "initContainers"} {
				g.baseContainers(t, append(append([]string(nil), podSpec...), field))
			}
		}
	}

	// Done: a plain name and labels, so overlays built on top see one guard per job.
	g.prefixes["done"] = in.jobName
	g.add(g.guardSource("spec.prefixes.done"), g.target("metadata.name", nil))
	g.add(g.guardSource("spec.reset"), g.target("metadata.labels", nil))

	object = map[string]any{
		"apiVersion": guardAPIVersion,
		"kind":       GuardKind,
		"metadata": map[string]any{
			"name":      in.jobName,
			"namespace": ns,
			"labels":    map[string]any{"mlops-fn.dev/guard": "unchecked"},
			"annotations": map[string]any{
				"config.kubernetes.io/local-config": "true",
				"mlops-fn.dev/checked":              "no",
			},
		},
		"spec": map[string]any{
			"marker":   "present",
			"reset":    map[string]any{"mlops-fn.dev/guard": "checked"},
			"prefixes": g.prefixes,
		},
	}
	return object, g.replacements
}

// baseContainers checks the names of the containers at path in the target
// t, by index: a patch aimed at a container renamed or moved since would add one.
func (g *guardBuilder) baseContainers(t *yaml.RNode, path []string) {
	list, err := t.Pipe(yaml.Lookup(path...))
	if err != nil || list == nil {
		return
	}
	elems, _ := list.Elements()
	for i, c := range elems {
		name, _ := c.GetString("name")
		where := fmt.Sprintf("%s/%s %s %d: ", t.GetKind(), t.GetName(), strings.Join(path, "."), i)
		g.compare(fmt.Sprintf("base%d", len(g.prefixes)), where, name, baseSource(t, fmt.Sprintf("%s.%d.name", strings.Join(path, "."), i)), ": ")
	}
}

// baseSource reads fieldPath of the target t as the build has it, selected
// by its group, version (patches aimed at v2beta1 match no v1 job), kind,
// name and namespace: a target renamed or moved since selects nothing.
func baseSource(t *yaml.RNode, fieldPath string) map[string]any {
	gv, _ := schema.ParseGroupVersion(t.GetApiVersion())
	source := map[string]any{"group": gv.Group, "version": gv.Version, "kind": t.GetKind(), "name": t.GetName(), "fieldPath": fieldPath}
	if ns := t.GetNamespace(); ns != "" {
		source["namespace"] = ns
	}
	return source
}

// compare adds the three replacements that check one value: the guard's name
// becomes prefix, then prefix+what the build read (from source, put after
// delimiter), then the guard is selected by prefix+want.
func (g *guardBuilder) compare(id, prefix, want string, source map[string]any, delimiter string) {
	g.prefixes[id] = prefix
	g.add(g.guardSource("spec.prefixes."+pathKey(id)), g.target("metadata.name", nil))
	g.add(source, g.target("metadata.name", map[string]any{"delimiter": delimiter, "index": 1}))
	check := maps.Clone(g.selector)
	check["name"] = prefix + want
	check["fieldPath"] = "metadata.name"
	g.add(check, g.target(checkedField, nil))
}

func (g *guardBuilder) guardSource(fieldPath string) map[string]any {
	s := maps.Clone(g.selector)
	s["fieldPath"] = fieldPath
	return s
}

func (g *guardBuilder) target(fieldPath string, options map[string]any) map[string]any {
	t := map[string]any{"select": maps.Clone(g.selector), "fieldPaths": []any{fieldPath}}
	if options != nil {
		t["options"] = options
	}
	return t
}

func (g *guardBuilder) add(source, target map[string]any) {
	g.replacements = append(g.replacements, map[string]any{"source": source, "targets": []any{target}})
}

// pathKey writes a map key into a replacement's field path: kustomize splits
// paths at dots unless the key is bracketed, and takes brackets without a
// dot inside for a list item selector.
func pathKey(k string) string {
	if strings.Contains(k, ".") {
		return "[" + k + "]"
	}
	return k
}
