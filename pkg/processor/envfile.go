package processor

import (
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
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/jobspec"
)

// EnvOrigin says where mlops.env was found, which decides who owns the ConfigMap.
type EnvOrigin int

const (
	FromInline      EnvOrigin = iota // spec.envFile.inline: mlops-fn writes the ConfigMap
	FromConfigMap                    // a ConfigMap the user (or configMapGenerator) made: left alone
	FromDisk                         // spec.envFile.path: mlops-fn writes the ConfigMap
	FromLocalConfig                  // spec.envFile.localConfigMap: mlops-fn writes the ConfigMap
)

// LocalConfig is the annotation that keeps an object out of what kpt and
// kustomize apply: a package's inputs, such as the job spec and mlops.env.
const LocalConfig = "config.kubernetes.io/local-config"

// envSources refuses a local-config ConfigMap beside another source the
// spec names. It reads the spec as written: Default fills in path.
func envSources(job *api.MLOpsJob) field.ErrorList {
	src := job.Spec.EnvFile
	if src.LocalConfigMap == nil {
		return nil
	}
	at := field.NewPath("spec", "envFile", "localConfigMap")
	var errs field.ErrorList
	if src.Path != "" {
		errs = append(errs, field.Forbidden(at, fmt.Sprintf("names ConfigMap %q, and spec.envFile.path names the file %s: one source of mlops.env; accepted: localConfigMap (a kpt package) or path (a file beside the spec), not both", src.LocalConfigMap.Name, src.Path)))
	}
	if src.Inline != "" {
		errs = append(errs, field.Forbidden(at, fmt.Sprintf("names ConfigMap %q, and spec.envFile.inline holds the text too: one source of mlops.env; accepted: localConfigMap or inline, not both", src.LocalConfigMap.Name)))
	}
	name := src.LocalConfigMap.Name
	if name == "" {
		errs = append(errs, field.Required(at.Child("name"), "the name of a ConfigMap among the inputs annotated "+LocalConfig+`: "true", whose data is mlops.env`))
	} else {
		for _, msg := range validation.IsDNS1123Subdomain(name) {
			errs = append(errs, field.Invalid(at.Child("name"), name, msg))
		}
	}
	return errs
}

// localConfigEnv reads mlops.env from the local-config ConfigMap the spec
// names: a kpt package keeps it beside job.yaml, and neither kpt nor
// kustomize applies it; mlops-fn writes the env ConfigMap the containers read.
func (p Processor) localConfigEnv(job *api.MLOpsJob, items []*yaml.RNode) (*env.File, error) {
	name, envName := job.Spec.EnvFile.LocalConfigMap.Name, job.Spec.EnvFile.ConfigMapName
	at := p.configName() + ": spec.envFile.localConfigMap.name"
	if name == envName {
		return nil, fmt.Errorf("%s: Invalid value: %q: is also spec.envFile.configMapName, the ConfigMap mlops-fn writes for the containers from it; accepted: another name, such as mlops-env", at, name)
	}
	var found, local []*yaml.RNode
	for _, it := range items {
		if it.GetKind() != "ConfigMap" {
			continue
		}
		if isNamed(it, name) {
			found = append(found, it)
		}
		if it.GetAnnotations()[LocalConfig] == "true" {
			local = append(local, it)
		}
		if isNamed(it, envName) && !generated(it) {
			return nil, fmt.Errorf("%s: %q names the source of mlops.env, and %s among the inputs holds it too (the env ConfigMap, which mlops-fn would read instead and leave alone); accepted: one of the two: remove %s, or spec.envFile.localConfigMap", at, name, identify(it), identify(it))
		}
	}
	switch len(found) {
	case 0:
		names := "none"
		if len(local) > 0 {
			var ns []string
			for _, it := range local {
				ns = append(ns, strconv.Quote(it.GetName()))
			}
			names = strings.Join(ns, ", ")
		}
		return nil, fmt.Errorf("%s: Invalid value: %q: no ConfigMap of that name among the inputs (local-config ConfigMaps among them: %s); accepted: the name of a ConfigMap in the package, annotated %s: \"true\", whose data is mlops.env's KEY: value pairs", at, name, names, LocalConfig)
	case 1:
	default:
		return nil, fmt.Errorf("ConfigMap/%s is among the inputs %d times (%s, and %s), and spec.envFile.localConfigMap names it; accepted: one ConfigMap of that name", name, len(found), identify(found[0]), identify(found[1]))
	}
	cm := found[0]
	if v, ok := cm.GetAnnotations()[LocalConfig]; v != "true" {
		has := "has no annotation " + LocalConfig
		if ok {
			has = fmt.Sprintf("has %s: %q", LocalConfig, v)
		}
		return nil, fmt.Errorf("%s: %s, so kpt and kustomize would apply it to the cluster beside %s, the env ConfigMap mlops-fn writes from it (spec.envFile.localConfigMap names it as the source of mlops.env); accepted: the annotation %s: \"true\"", identify(cm), has, envName, LocalConfig)
	}
	return configMapFile(cm)
}

// needsHashSuffix marks a configMapGenerator's ConfigMap whose name kustomize will hash.
const needsHashSuffix = "internal.config.kubernetes.io/needsHashSuffix"

// loadEnv finds mlops.env: inline text or the local-config ConfigMap the
// spec names, else a ConfigMap among the inputs
// that mlops-fn did not write, else the file on disk, else the ConfigMap an
// earlier run wrote (so a package renders again without the file).
func (p Processor) loadEnv(job *api.MLOpsJob, items []*yaml.RNode) (*env.File, EnvOrigin, error) {
	src := job.Spec.EnvFile
	if src.Inline != "" {
		f, err := env.Parse(p.configName()+": spec.envFile.inline", []byte(src.Inline))
		return f, FromInline, err
	}
	if src.LocalConfigMap != nil {
		f, err := p.localConfigEnv(job, items)
		return f, FromLocalConfig, err
	}
	var ours *yaml.RNode
	if err := oneConfigMapPerNamespace(items, src.ConfigMapName); err != nil {
		return nil, 0, err
	}
	if i := findItem(items, "ConfigMap", src.ConfigMapName); i >= 0 {
		if !generated(items[i]) {
			// A Pod's envFrom kustomize rewrites; a custom resource's it does not know.
			if kind := jobkind.ForMode(job.Spec.JobKind).Kind; kind != "Pod" && items[i].GetAnnotations()[needsHashSuffix] == "enabled" {
				return nil, 0, fmt.Errorf("ConfigMap/%s: configMapGenerator will add a name hash, which kustomize does not write into the envFrom of %s (a custom resource's fields are unknown to it); accepted: `options: {disableNameSuffixHash: true}` on its configMapGenerator entry", src.ConfigMapName, jobkind.WithArticle(kind))
			}
			f, err := configMapFile(items[i])
			return f, FromConfigMap, err
		}
		ours = items[i]
	}
	path := src.Path
	if !filepath.IsAbs(path) {
		path = filepath.Join(p.ConfigDir, path)
	}
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		f, err := env.Parse(path, data)
		return f, FromDisk, err
	case errors.Is(err, fs.ErrNotExist) && ours != nil:
		f, err := configMapFile(ours)
		return f, FromDisk, err
	case errors.Is(err, fs.ErrNotExist):
		where := path
		if p.ConfigDir == "" && !filepath.IsAbs(path) {
			where += " in the working directory"
		}
		return nil, 0, fmt.Errorf("%s: spec.envFile: mlops.env not found: no inline text, no ConfigMap %q among the inputs, and no file %s; accepted: one of the three, or spec.envFile.localConfigMap: {name: NAME} naming a ConfigMap among the inputs annotated %s: \"true\" (a kpt package's form)",
			p.configName(), src.ConfigMapName, where, LocalConfig)
	default:
		return nil, 0, fmt.Errorf("%s: spec.envFile.path: %w", p.configName(), err)
	}
}

func configMapFile(cm *yaml.RNode) (*env.File, error) {
	if d := cm.Field("data"); d != nil && d.Value.YNode().Kind != yaml.MappingNode {
		return nil, fmt.Errorf("ConfigMap/%s: data is a YAML %s; accepted: a map of KEY: value", cm.GetName(), jobspec.NodeKind(d.Value))
	}
	if d := cm.Field("data"); d != nil {
		c := d.Value.YNode().Content
		for i := 0; i+1 < len(c); i += 2 {
			if v := c[i+1]; v.Kind != yaml.ScalarNode || v.Tag != yaml.NodeTagString {
				return nil, fmt.Errorf("ConfigMap/%s: data.%s: %s is a YAML %s, and the API server takes only strings in a ConfigMap's data; accepted: a string (quote it: %q)", cm.GetName(), c[i].Value, v.Value, jobspec.JSONType(v), v.Value)
			}
		}
	}
	data := cm.GetDataMap()
	if binary := cm.GetBinaryDataMap(); len(binary) > 0 {
		return nil, fmt.Errorf("ConfigMap/%s: binaryData is not accepted: mlops.env holds text", cm.GetName())
	}
	return env.FromMap("ConfigMap/"+cm.GetName(), data), nil
}

// oneConfigMapPerNamespace refuses two env ConfigMaps of one name in one
// namespace among the inputs: which one the job reads would be chance.
func oneConfigMapPerNamespace(items []*yaml.RNode, name string) error {
	seen := map[string]string{}
	for _, it := range items {
		if it.GetKind() != "ConfigMap" || it.GetName() != name || generated(it) {
			continue
		}
		if first, twice := seen[it.GetNamespace()]; twice {
			where := fmt.Sprintf("in namespace %q", it.GetNamespace())
			if it.GetNamespace() == "" {
				where = "without a namespace"
			}
			return fmt.Errorf("ConfigMap/%s is among the inputs twice %s (%s, and %s); accepted: one ConfigMap of the job's env per namespace", name, where, first, identify(it))
		}
		seen[it.GetNamespace()] = identify(it)
	}
	return nil
}
