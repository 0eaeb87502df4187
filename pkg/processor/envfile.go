package processor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/env"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/jobspec"
)

// EnvOrigin says where mlops.env was found, which decides who owns the ConfigMap.
type EnvOrigin int

const (
	FromInline    EnvOrigin = iota // spec.envFile.inline: mlops-fn writes the ConfigMap
	FromConfigMap                  // a ConfigMap the user (or configMapGenerator) made: left alone
	FromDisk                       // spec.envFile.path: mlops-fn writes the ConfigMap
)

// needsHashSuffix marks a configMapGenerator's ConfigMap whose name kustomize will hash.
const needsHashSuffix = "internal.config.kubernetes.io/needsHashSuffix"

// loadEnv finds mlops.env: inline text, else a ConfigMap among the inputs
// that mlops-fn did not write, else the file on disk, else the ConfigMap an
// earlier run wrote (so a package renders again without the file).
func (p Processor) loadEnv(job *api.TrainingJob, items []*yaml.RNode) (*env.File, EnvOrigin, error) {
	src := job.Spec.EnvFile
	if src.Inline != "" {
		f, err := env.Parse(p.configName()+": spec.envFile.inline", []byte(src.Inline))
		return f, FromInline, err
	}
	var ours *yaml.RNode
	if err := oneConfigMapPerNamespace(items, src.ConfigMapName); err != nil {
		return nil, 0, err
	}
	if i := findItem(items, "ConfigMap", src.ConfigMapName); i >= 0 {
		if !generated(items[i]) {
			// A Pod's envFrom kustomize rewrites; a custom resource's it does not know.
			if kind := jobkind.ForMode(job.Spec.Mode).Kind; kind != "Pod" && items[i].GetAnnotations()[needsHashSuffix] == "enabled" {
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
		return nil, 0, fmt.Errorf("%s: spec.envFile: mlops.env not found: no inline text, no ConfigMap %q among the inputs, and no file %s; accepted: one of the three",
			p.configName(), src.ConfigMapName, where)
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
