// SPDX-License-Identifier: Apache-2.0

package processor

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/env"
	"github.com/mlops-fn/mlops-fn/pkg/fielddiff"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/jobspec"
	"github.com/mlops-fn/mlops-fn/pkg/kinds"
)

// EnvOrigin says where mlops.env was found, which decides who owns the ConfigMap.
type EnvOrigin int

const (
	FromSpec      EnvOrigin = iota // spec.envFile.inline or localConfigMap: mlops-fn writes the ConfigMap
	FromConfigMap                  // a ConfigMap the user (or configMapGenerator) made: left alone
	FromDisk                       // spec.envFile.path: mlops-fn writes the ConfigMap
)

// LocalConfig keeps an object, such as a kpt package's job spec and mlops.env, out of what kpt and kustomize apply.
const LocalConfig = "config.kubernetes.io/local-config"

// envSources refuses a spec that names two sources of mlops.env, as written (Default fills in path).
func envSources(src api.EnvFile) field.ErrorList {
	var named []string
	if src.Path != "" {
		named = append(named, "path ("+src.Path+")")
	}
	if src.Inline != "" {
		named = append(named, "inline")
	}
	var errs field.ErrorList
	if src.LocalConfigMap != nil {
		at := field.NewPath("spec", "envFile", "localConfigMap", "name")
		named = append(named, fmt.Sprintf("localConfigMap (%q)", src.LocalConfigMap.Name))
		if name := src.LocalConfigMap.Name; name == "" {
			errs = append(errs, field.Required(at, "the name of a ConfigMap among the inputs annotated "+LocalConfig+`: "true", whose data is mlops.env`))
		} else {
			for _, msg := range validation.IsDNS1123Subdomain(name) {
				errs = append(errs, field.Invalid(at, name, msg))
			}
		}
	}
	if len(named) > 1 {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "envFile"),
			fmt.Sprintf("names %s: one source of mlops.env; "+
				"accepted: one of path (a file beside the spec; default mlops.env), inline (the text) or localConfigMap (a kpt package's ConfigMap)",
				strings.Join(named, " and "))))
	}
	return errs
}

// localConfigEnv reads mlops.env from the local-config ConfigMap the spec names, which neither kpt nor kustomize applies.
func (p Processor) localConfigEnv(src api.EnvFile, items []*yaml.RNode) (*env.File, error) {
	name, at := src.LocalConfigMap.Name, p.configName()+": spec.envFile.localConfigMap.name"
	var found []*yaml.RNode
	var local []string
	for _, it := range items {
		if it.GetKind() != "ConfigMap" {
			continue
		}
		if isNamed(it, name) {
			found = append(found, it)
		}
		if it.GetAnnotations()[LocalConfig] == "true" {
			local = append(local, strconv.Quote(it.GetName()))
		}
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("%s: Invalid value: %q: no ConfigMap of that name among the inputs (local-config ConfigMaps among them: %s); "+
			"accepted: the name of a ConfigMap in the package, annotated %s: \"true\", whose data is mlops.env's KEY: value pairs",
			at, name, cmp.Or(strings.Join(local, ", "), "none"), LocalConfig)
	}
	if len(found) > 1 {
		return nil, fmt.Errorf("ConfigMap/%s is among the inputs %d times (%s, and %s), and spec.envFile.localConfigMap names it; "+
			"accepted: one ConfigMap of that name", name, len(found), identify(found[0]), identify(found[1]))
	}
	cm := found[0]
	if v, ok := cm.GetAnnotations()[LocalConfig]; v != "true" {
		has := "has no annotation " + LocalConfig
		if ok {
			has = fmt.Sprintf("has %s: %q", LocalConfig, v)
		}
		return nil, fmt.Errorf("%s: %s, so kpt and kustomize would apply it to the cluster beside %s, the env ConfigMap mlops-fn writes from it (spec.envFile.localConfigMap names it as the source of mlops.env); accepted: the annotation %s: \"true\"", identify(cm), has, src.ConfigMapName, LocalConfig)
	}
	return configMapFile(cm)
}

// needsHashSuffix marks a configMapGenerator's ConfigMap whose name kustomize will hash.
const needsHashSuffix = "internal.config.kubernetes.io/needsHashSuffix"

// loadEnv reads mlops.env from its one source (docs/mlops-env.md, "One source"): what the spec names, or the env
// ConfigMap among the inputs (configMapGenerator's, for runners that read no files). Beside the file, that ConfigMap
// is read where it holds the file's every entry (a generator of that file, which may add keys); else it is refused.
func (p Processor) loadEnv(job *api.MLOpsJob, items []*yaml.RNode) (*env.File, EnvOrigin, error) {
	src := job.Spec.EnvFile
	if src.LocalConfigMap != nil && src.LocalConfigMap.Name == src.ConfigMapName {
		return nil, 0, fmt.Errorf("%s: spec.envFile.localConfigMap.name: Invalid value: %q: is also spec.envFile.configMapName, the ConfigMap mlops-fn writes for the containers from it; accepted: another name, such as mlops-env", p.configName(), src.ConfigMapName)
	}
	cm, cmFile, err := envConfigMap(job, items)
	if err != nil {
		return nil, 0, err
	}
	named := "spec.envFile.inline"
	if src.LocalConfigMap != nil {
		named = fmt.Sprintf("spec.envFile.localConfigMap (%q)", src.LocalConfigMap.Name)
	}
	switch {
	case cm != nil && (src.Inline != "" || src.LocalConfigMap != nil):
		return nil, 0,
			fmt.Errorf("%s: %s names the source of mlops.env, and %s among the inputs holds it too (the env ConfigMap, read where the spec names no other source); "+
				"accepted: one of the two: remove %s, or %s", p.configName(), named, identify(cm), identify(cm), named)
	case src.Inline != "":
		f, err := env.Parse(p.configName()+": spec.envFile.inline", []byte(src.Inline))
		return f, FromSpec, err
	case src.LocalConfigMap != nil:
		f, err := p.localConfigEnv(src, items)
		return f, FromSpec, err
	}
	path := src.Path
	if !filepath.IsAbs(path) {
		path = filepath.Join(p.ConfigDir, path)
	}
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		file, err := env.Parse(path, data)
		if err != nil || cm == nil {
			return file, FromDisk, err
		}
		if d := disagreement(file, cmFile, true); d != "" {
			return nil, 0, fmt.Errorf("%s and %s among the inputs both hold mlops.env and disagree (file → ConfigMap): %s; accepted: one of the two (a runner that reads the file needs no env ConfigMap; one that cannot gets it from configMapGenerator), or the ConfigMap generated from that file (envs: [%s]), which may add keys", path, identify(cm), d, src.Path)
		}
		return cmFile, FromConfigMap, nil
	case errors.Is(err, fs.ErrNotExist) && cm != nil:
		return cmFile, FromConfigMap, nil
	case errors.Is(err, fs.ErrNotExist):
		where := path
		if p.ConfigDir == "" && !filepath.IsAbs(path) {
			where += " in the working directory"
		}
		return nil, 0, fmt.Errorf("%s: spec.envFile: mlops.env not found: no inline text, no ConfigMap %q among the inputs, and no file %s; "+
			"accepted: one of the three, or spec.envFile.localConfigMap: {name: NAME} naming a ConfigMap among the inputs annotated %s: \"true\" (a kpt package's form)",
			p.configName(), src.ConfigMapName, where, LocalConfig)
	default:
		return nil, 0, fmt.Errorf("%s: spec.envFile.path: %w", p.configName(), err)
	}
}

// disagreement lists the keys whose values differ from a to b, each as KEY: "a's" → "b's" ("(none)": no such
// key); keys b alone has count only unless extrasOK (a generator's own literals beside its envs file).
func disagreement(a, b *env.File, extrasOK bool) string {
	tree := func(f *env.File) map[string]any {
		m := map[string]any{}
		for _, e := range f.Entries {
			m[e.Key] = e.Value
		}
		return m
	}
	var keys []string
	for _, c := range fielddiff.Trees("", tree(a), tree(b)) {
		if c.Old != nil || !extrasOK {
			keys = append(keys, fmt.Sprintf("%s: %s → %s", c.Path, fielddiff.Brief(c.Old), fielddiff.Brief(c.New)))
		}
	}
	return strings.Join(keys, ", ")
}

// envConfigMap finds the env ConfigMap among the inputs mlops-fn did not write, nil if none: one a namespace, all of
// one content, since the job is rendered from one and each namespace's pods read their own.
func envConfigMap(job *api.MLOpsJob, items []*yaml.RNode) (*yaml.RNode, *env.File, error) {
	name := job.Spec.EnvFile.ConfigMapName
	var first *yaml.RNode
	var firstFile *env.File
	seen := map[string]string{}
	for _, it := range items {
		if it.GetKind() != "ConfigMap" || generated(it) || !isNamed(it, name) {
			continue
		}
		if other, twice := seen[it.GetNamespace()]; twice {
			return nil, nil, fmt.Errorf("ConfigMap/%s is among the inputs twice %s (%s, and %s); "+
				"accepted: one ConfigMap of the job's env per namespace", name, inNamespace(it.GetNamespace()), other, identify(it))
		}
		seen[it.GetNamespace()] = identify(it)
		f, err := configMapFile(it)
		if err != nil {
			return nil, nil, err
		}
		if first == nil {
			first, firstFile = it, f
			continue
		}
		if d := disagreement(firstFile, f, false); d != "" {
			return nil, nil, fmt.Errorf("%s is among the inputs in namespaces %q and %q, and they disagree (%[2]s → %[3]s): %s; "+
				"the job is rendered from one, and each namespace's pods read their own; "+
				"accepted: the same data in every namespace", identify(it), first.GetNamespace(), it.GetNamespace(), d)
		}
	}
	// A Pod's envFrom kustomize rewrites; a custom resource's it does not know.
	if k := kinds.All.Of(job.Spec.JobKind); first != nil && !k.BuiltIn() && first.GetAnnotations()[needsHashSuffix] == "enabled" {
		return nil, nil, fmt.Errorf("ConfigMap/%s: configMapGenerator will add a name hash, which kustomize does not write into the envFrom of %s (a custom resource's fields are unknown to it); accepted: `options: {disableNameSuffixHash: true}` on its configMapGenerator entry", name, jobkind.WithArticle(k.Kind))
	}
	return first, firstFile, nil
}

func configMapFile(cm *yaml.RNode) (*env.File, error) {
	if d := cm.Field("data"); d != nil {
		if d.Value.YNode().Kind != yaml.MappingNode {
			return nil, fmt.Errorf("ConfigMap/%s: data is a YAML %s; accepted: a map of KEY: value", cm.GetName(), jobspec.NodeKind(d.Value))
		}
		c := d.Value.YNode().Content
		for i := 0; i+1 < len(c); i += 2 {
			if v := c[i+1]; v.Kind != yaml.ScalarNode || v.Tag != yaml.NodeTagString {
				return nil, fmt.Errorf("ConfigMap/%s: data.%s: %s is a YAML %s, and the API server takes only strings in a ConfigMap's data; "+
					"accepted: a string (quote it: %q)", cm.GetName(), c[i].Value, v.Value, jobspec.JSONType(v), v.Value)
			}
		}
	}
	if len(cm.GetBinaryDataMap()) > 0 {
		return nil, fmt.Errorf("ConfigMap/%s: binaryData is not accepted: mlops.env holds text", cm.GetName())
	}
	return env.FromMap("ConfigMap/"+cm.GetName(), cm.GetDataMap()), nil
}
