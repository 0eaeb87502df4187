// SPDX-License-Identifier: Apache-2.0

package hydrate

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
)

// The guard makes a hydrated overlay refuse to build once what the function reads changed (mlops.env, the job
// spec, the base's job, the env ConfigMap's generator): plain kustomize cannot run mlops-fn, so an edit would
// otherwise ship the old values' patches with exit 0. A JSON patch's test compares whole maps and fails the
// build, printing the path it tested; so the guard, the component's first transformers, is replacements that
// copy what the build reads into the job spec (local-config, never applied) and JSON patches that test it:
//
//   - the two files first, so an edit of either (a job renamed in both job.yaml and the base too) is reported
//     as such: mlops.env as the generator makes the env ConfigMap's data (kustomize's parse; the user's
//     literals and further files), with the token of hydrate's entries; the job spec's metadata and spec;
//   - the base: of each object the patches address its apiVersion, metadata and spec; of the env ConfigMap its
//     namespace and that kustomize will hash its name (the hash comes after every transformer, the guard's too).
//
// Each field's name is the message the build fails with. A comment edited in either file passes.

const (
	specKind = api.Kind
	// guardPrefix starts the names of the guard's transformers, which Applied leaves out.
	guardPrefix = "mlops-fn-guard-"
	// tokenKey is the inputs ConfigMap's key for the token of hydrate's entries (dots: no variable's name). The
	// guard puts it in the env ConfigMap's data for a moment, so there is data to copy even when the build makes none.
	tokenKey = "mlops-fn.hydrate.entries"
	// hashAnnotation is kustomize's internal, undocumented mark of a generated object whose name gets a hash at
	// the end of the build (disableNameSuffixHash: false, as hydrate writes it).
	hashAnnotation = "internal.config.kubernetes.io/needsHashSuffix"
	// baseScratch is where the base's reads go, short in every replacement; one move puts it under baseField.
	baseScratch = "base"
)

// staleField is the guard's field for what, whose name a stale build prints ("testing value /FIELD failed").
func staleField(what string) string {
	return what + " changed: run mlops-fn hydrate on this folder; check"
}

// baseField is the guard's field for the job the patches address and the env ConfigMap.
var baseField = staleField("the base or kustomization.yaml")

// hub selects the job spec, where the guard copies what it tests.
var hub = map[string]any{"kind": specKind}

// guard is the guard's transformers, in the order they run.
func (r *rendering) guard() ([]map[string]any, error) {
	spec := map[string]any{}
	for _, f := range []string{"metadata", "spec"} {
		if n := r.builtSpec.Field(f); n != nil {
			v, err := n.Value.Map()
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", r.o.Config, f, err)
			}
			spec[f] = v
		}
	}
	envField := staleField(r.envFile)
	if r.envExtras {
		envField = staleField(r.envFile + " or kustomization.yaml")
	}
	wantData := map[string]any{tokenKey: r.e.token()}
	for k, v := range r.envData {
		wantData[k] = v
	}
	remove := "/data/" + pointerKey(tokenKey)
	if r.envData == nil {
		remove = "/data" // the build makes none
	}
	envSource := map[string]any{"kind": "ConfigMap", "name": r.plan.ConfigMapName}
	specField := staleField(r.o.Config)
	// The spec's metadata by a replacement: a JSON patch sees kustomize's internal annotations in it.
	files := []any{
		replacement(map[string]any{"kind": "ConfigMap", "name": r.e.inputsName}, "data."+pathKey(tokenKey), envSource, "data", tokenKey),
		replacement(envSource, "data", hub, envField),
		replacement(hub, "metadata", hub, specField, "metadata"),
	}
	fileTests := []map[string]any{
		testOp([]string{envField}, wantData),
		{"op": "copy", "from": "/spec", "path": pointer(specField, "spec")},
		testOp([]string{specField}, spec),
	}

	// The base: each object the patches address, found by group, kind and name only, so that a new version or
	// namespace fails a test, in the guard's words, rather than select nothing.
	var base []any
	baseTests := []map[string]any{{"op": "move", "from": pointer(baseScratch), "path": pointer(baseField)}}
	for _, t := range r.targets {
		key := t.GetKind() + " " + t.GetName()
		source := baseSource(t, r.items)
		base = append(base,
			replacement(source, "metadata", hub, baseScratch, key, "metadata"),
			replacement(source, "apiVersion", hub, baseScratch, key, "apiVersion"))
		baseTests = append(baseTests,
			testOp([]string{baseField, key, "metadata", "name"}, t.GetName()),
			testOp([]string{baseField, key, "metadata", "namespace"}, optional(t.GetNamespace())),
			testOp([]string{baseField, key, "apiVersion"}, t.GetApiVersion()))
		if s := t.Field("spec"); s != nil {
			v, err := s.Value.Map()
			if err != nil {
				return nil, fmt.Errorf("%s/%s: spec: %w", t.GetKind(), t.GetName(), err)
			}
			base = append(base, replacement(source, "spec", hub, baseScratch, key, "spec"))
			baseTests = append(baseTests, testOp([]string{baseField, key, "spec"}, v))
		}
	}
	// The env ConfigMap: where the job reads it, under the name it reads (kustomize hashes it after the guard).
	envKey := "ConfigMap " + r.plan.ConfigMapName
	base = append(base, replacement(envSource, "metadata", hub, baseScratch, envKey, "metadata"))
	baseTests = append(baseTests,
		testOp([]string{baseField, envKey, "metadata", "namespace"}, optional(r.e.envNamespace)),
		testOp([]string{baseField, envKey, "metadata", "annotations", hashAnnotation}, "enabled"),
		// The mark the kustomization's own check (listed.yaml) tests: the component ran.
		map[string]any{"op": "add", "path": pointer(listedField), "value": listedValue})

	envTarget := map[string]any{"kind": "ConfigMap", "name": "^" + regexp.QuoteMeta(r.plan.ConfigMapName) + "$"}
	return []map[string]any{
		transformer("ReplacementTransformer", guardPrefix+"files", map[string]any{"replacements": files}),
		transformer("PatchTransformer", guardPrefix+"files", map[string]any{"patch": jsonPatch(fileTests...), "target": hub}),
		transformer("PatchTransformer", guardPrefix+"untoken", map[string]any{
			"patch": jsonPatch(map[string]any{"op": "remove", "path": remove}), "target": envTarget}),
		transformer("ReplacementTransformer", guardPrefix+"base", map[string]any{"replacements": base}),
		transformer("PatchTransformer", guardPrefix+"base", map[string]any{"patch": jsonPatch(baseTests...), "target": hub}),
	}, nil
}

// transformer is the configuration of one of kustomize's builtin transformers, as transformers: lists it.
func transformer(kind, name string, fields map[string]any) map[string]any {
	t := map[string]any{"apiVersion": "builtin", "kind": kind, "metadata": map[string]any{"name": name}}
	maps.Copy(t, fields)
	return t
}

// replacement copies fieldPath of the object source selects to path, created, in the object target selects.
func replacement(source map[string]any, fieldPath string, target map[string]any, path ...string) map[string]any {
	from := map[string]any{"fieldPath": fieldPath}
	maps.Copy(from, source)
	var to []string
	for _, k := range path {
		to = append(to, pathKey(k))
	}
	return map[string]any{"source": from, "targets": []any{map[string]any{
		"select": target, "fieldPaths": []any{strings.Join(to, ".")}, "options": map[string]any{"create": true}}}}
}

func testOp(path []string, want any) map[string]any {
	return map[string]any{"op": "test", "path": pointer(path...), "value": want}
}

// pointer is the JSON pointer (RFC 6901) of the map keys path.
func pointer(path ...string) string {
	var p []string
	for _, k := range path {
		p = append(p, pointerKey(k))
	}
	return "/" + strings.Join(p, "/")
}

var pointerKey = strings.NewReplacer("~", "~0", "/", "~1").Replace

// pathKey writes a map key into a replacement's field path: kustomize splits paths at dots unless the key is
// bracketed, and takes brackets without a dot inside for a list item selector.
func pathKey(k string) string {
	if strings.Contains(k, ".") {
		return "[" + k + "]"
	}
	return k
}

// optional is a field's expected value: nil (absent) when empty.
func optional(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// jsonPatch writes ops as an inline JSON patch, an operation on one line unless its value is a map or list.
func jsonPatch(ops ...map[string]any) string {
	n, err := yaml.FromMap(map[string]any{"ops": ops})
	if err != nil {
		panic(err) // maps of strings and plain values always marshal
	}
	list := n.Field("ops").Value
	for _, op := range list.Content() {
		if v := yaml.NewRNode(op).Field("value"); v == nil || v.Value.YNode().Kind == yaml.ScalarNode {
			op.Style = yaml.FlowStyle
		}
	}
	return list.MustString()
}

// compact writes each selector of a transformer's configuration t on one line.
func compact(t *yaml.RNode) {
	flow := func(n *yaml.RNode, fields ...string) {
		for _, f := range fields {
			if v := n.Field(f); v != nil {
				v.Value.YNode().Style = yaml.FlowStyle
			}
		}
	}
	flow(t, "metadata", "target")
	if r := t.Field("replacements"); r != nil {
		for _, item := range r.Value.Content() {
			flow(yaml.NewRNode(item), "source", "targets")
		}
	}
}

// baseSource selects the target t in the build by group, kind and name, so a version or namespace changed
// since still reads, and fails a test; version and namespace only when the base holds another such object.
func baseSource(t *yaml.RNode, base []*yaml.RNode) map[string]any {
	gv, _ := schema.ParseGroupVersion(t.GetApiVersion())
	source := map[string]any{"kind": t.GetKind(), "name": t.GetName()}
	if gv.Group != "" {
		source["group"] = gv.Group
	}
	if slices.ContainsFunc(base, func(n *yaml.RNode) bool {
		ngv, _ := schema.ParseGroupVersion(n.GetApiVersion())
		return n != t && n.GetKind() == t.GetKind() && n.GetName() == t.GetName() && ngv.Group == gv.Group
	}) {
		source["version"] = gv.Version
		if ns := t.GetNamespace(); ns != "" {
			source["namespace"] = ns
		}
	}
	return source
}
