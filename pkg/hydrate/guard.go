package hydrate

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/env"
	"github.com/mlops-fn/mlops-fn/pkg/jobnode"
)

// The guard makes a hydrated overlay refuse to build once its inputs changed
// (mlops.env, the job spec, the base's job and its containers): plain
// kustomize (kubectl apply -k) cannot run mlops-fn, so an edit of mlops.env
// or the job spec would otherwise ship the patches of the old values with
// exit 0. kustomize cannot compare two values, but a JSON patch's test
// operation can, whole maps at once, and fails the build when they differ,
// printing the path it tested. So:
//
//   - read/ copies what the build reads now into the guard object, one field
//     per input: mlops.env as kustomize parses it (the inputs generator's
//     `envs:`, which drops comments and a CRLF's CR, plus the token of
//     hydrate's kustomization entries), the job spec's metadata and spec (the
//     file is a resource of the kustomization, parsed as YAML), the names of
//     the base's job and containers the patches address;
//   - hydrate-read.yaml tests each field against what hydrate read.
//
// Each field's name is the message the build fails with. The guard object
// and the job spec are local-config: kustomize never outputs them. A comment
// edited in either file changes nothing the patches come from, and passes.

// GuardKind is the guard object's kind.
const GuardKind = "MlopsFnStaleOverlay"

const (
	guardAPIVersion = "mlops-fn.dev/v1alpha1"
	specKind        = api.Kind
	readDir         = "read"
	// expectedFile holds the tests: what hydrate read.
	expectedFile = "hydrate-read.yaml"
	// tokenKey is the inputs ConfigMap's key for the token of hydrate's
	// kustomization entries (not an environment variable's name: it has dots).
	tokenKey = "mlops-fn.hydrate.entries"
)

// guardInputs is what the guard compares the build against.
type guardInputs struct {
	jobName       string
	namespace     string // the env ConfigMap's
	configMapName string
	inputsName    string // the local-config ConfigMap with mlops.env and the token
	env           *env.File
	specFile      string // the spec's file name, for messages
	spec          *yaml.RNode
	envFile       string // mlops.env's path in the overlay, for messages
	token         string
	targets       []*yaml.RNode // the base's objects the patches address
}

// guardFiles are the guard's files, by path in the guard folder.
type guardFiles struct {
	object, read, tests []byte
}

// staleField is the guard's field for what, and the message a stale build
// fails with: kustomize prints "testing value /FIELD failed".
func staleField(what string) string {
	return what + " changed: run mlops-fn hydrate on this folder; check"
}

// check is one field of the guard: what the build reads, from where, and
// what hydrate read.
type check struct {
	field   string
	sources []source
	want    map[string]any
}

// source copies fieldPath of the object selector selects into the check's
// field, under key (the whole field when key is ""); the guard object holds
// placeholder there, of the value's kind (kustomize drops a map copied onto a
// string).
type source struct {
	selector    map[string]any
	fieldPath   string
	key         string
	placeholder any
}

// guard returns the guard's files: the object, read/'s replacements and the tests.
func guard(in guardInputs, header string) (guardFiles, error) {
	envData := map[string]any{tokenKey: in.token}
	for _, e := range in.env.Entries {
		envData[e.Key] = e.Value
	}
	spec := map[string]any{}
	for _, f := range []string{"metadata", "spec"} {
		if n := in.spec.Field(f); n != nil {
			v, err := n.Value.Map()
			if err != nil {
				return guardFiles{}, fmt.Errorf("%s: %s: %w", in.specFile, f, err)
			}
			spec[f] = v
		}
	}
	inputs := map[string]any{"kind": "ConfigMap", "name": in.inputsName}
	specSource := map[string]any{"kind": specKind}
	checks := []check{
		{staleField(in.envFile), []source{{inputs, "data", "", nil}}, envData},
		{staleField(in.specFile), []source{{specSource, "metadata", "metadata", map[string]any{}}, {specSource, "spec", "spec", map[string]any{}}}, spec},
	}
	// The base: each target is still there, with the containers the patches
	// address where they were (a patch aimed at a renamed container adds one),
	// and the env ConfigMap the job reads.
	base := check{field: staleField("the base or kustomization.yaml"), want: map[string]any{}}
	envSource := map[string]any{"kind": "ConfigMap", "name": in.configMapName}
	if in.namespace != "" {
		envSource["namespace"] = in.namespace
	}
	base.add(envSource, "ConfigMap/"+in.configMapName, "metadata.name", in.configMapName)
	for _, t := range in.targets {
		// The job itself, for a kind whose base holds no containers (a TrainJob).
		where := t.GetKind() + "/" + t.GetName()
		base.add(baseSource(t), where, "metadata.name", t.GetName())
		for _, podSpec := range jobnode.PodSpecPaths(t.GetKind()) {
			for _, field := range []string{"containers", "initContainers"} {
				list, err := t.Pipe(yaml.Lookup(append(append([]string(nil), podSpec...), field)...))
				if err != nil || list == nil {
					continue
				}
				elems, _ := list.Elements()
				for i, c := range elems {
					name, _ := c.GetString("name")
					base.add(baseSource(t), where, fmt.Sprintf("%s.%s.%d.name", strings.Join(podSpec, "."), field, i), name)
				}
			}
		}
	}
	checks = append(checks, base)

	object := map[string]any{
		"apiVersion": guardAPIVersion,
		"kind":       GuardKind,
		"metadata": map[string]any{
			"name":        in.jobName,
			"annotations": map[string]any{"config.kubernetes.io/local-config": "true"},
		},
	}
	var replacements, tests []any
	for _, c := range checks {
		placeholder := map[string]any{}
		for _, s := range c.sources {
			target := pathKey(c.field)
			if s.key != "" {
				target += "." + pathKey(s.key)
				placeholder[s.key] = s.placeholder
			}
			from := map[string]any{"fieldPath": s.fieldPath}
			for k, v := range s.selector {
				from[k] = v
			}
			replacements = append(replacements, map[string]any{"source": from, "targets": []any{map[string]any{
				"select": map[string]any{"kind": GuardKind}, "fieldPaths": []any{target}}}})
		}
		object[c.field] = placeholder
		tests = append(tests, map[string]any{"op": "test", "path": "/" + pointerKey(c.field), "value": c.want})
	}
	objectText, err := encodeFile(header, object)
	if err != nil {
		return guardFiles{}, err
	}
	read, err := componentText(header, "# Copies what the build reads now into the guard object (guard.yaml); ../"+expectedFile+" tests it.", []field{{"resources", []any{guardFile}}, {"replacements", replacements}})
	if err != nil {
		return guardFiles{}, err
	}
	n, err := yaml.FromMap(map[string]any{"tests": tests})
	if err != nil {
		return guardFiles{}, err
	}
	testsText, err := n.Field("tests").Value.String()
	if err != nil {
		return guardFiles{}, err
	}
	return guardFiles{objectText, read, []byte(header + "# What mlops-fn hydrate read: a JSON patch whose tests fail the build when the inputs differ.\n" + testsText)}, nil
}

// add checks that fieldPath of the object selector selects reads value.
func (c *check) add(selector map[string]any, where, fieldPath, value string) {
	key := where + " " + fieldPath
	c.sources = append(c.sources, source{selector, fieldPath, key, ""})
	c.want[key] = value
}

// baseSource selects the target t as the build has it, by its group,
// version (patches aimed at v2beta1 match no v1 job), kind, name and
// namespace: a target renamed or moved since selects nothing.
func baseSource(t *yaml.RNode) map[string]any {
	gv, _ := schema.ParseGroupVersion(t.GetApiVersion())
	source := map[string]any{"group": gv.Group, "version": gv.Version, "kind": t.GetKind(), "name": t.GetName()}
	if ns := t.GetNamespace(); ns != "" {
		source["namespace"] = ns
	}
	return source
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

// pointerKey writes a map key into a JSON pointer (RFC 6901).
func pointerKey(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}
