// SPDX-License-Identifier: Apache-2.0

package processor

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/mlops-fn/mlops-fn/pkg/jobspec"
)

// JobKey is the one key of a ConfigMap function config: the path of the job
// spec, relative to the working directory. Exec runners then read the same
// job.yaml and mlops.env as `kubectl apply -k` does, with no copy to keep in
// step: `kpt fn eval --exec mlops-fn PKG -- job=path/job.yaml`, or a
// kustomization's transformers: entry.
const JobKey = "job"

// dereference replaces a ConfigMap config by the job spec it names; the
// spec's folder then anchors mlops.env, as in standalone runs.
func (p Processor) dereference(config *yaml.RNode) (*yaml.RNode, Processor, error) {
	if config == nil || config.YNode().Kind != yaml.MappingNode || config.GetKind() != "ConfigMap" || config.GetApiVersion() != "v1" {
		return config, p, nil
	}
	name := "ConfigMap/" + config.GetName()
	data := config.GetDataMap()
	for _, k := range slices.Sorted(maps.Keys(data)) {
		if k != JobKey {
			return nil, p, fmt.Errorf("%s: data.%s: unknown key; accepted: %s, the path of the %s file", name, k, JobKey, "MLOpsJob")
		}
	}
	job := data[JobKey]
	if job == "" {
		return nil, p, fmt.Errorf("%s: data.%s: Required value: the path of the MLOpsJob file, relative to the working directory", name, JobKey)
	}
	if info, err := os.Stat(job); err != nil {
		wd, _ := os.Getwd()
		return nil, p, fmt.Errorf("%s: data.%s: %w (the working directory is %s)", name, JobKey, err, wd)
	} else if info.IsDir() {
		return nil, p,
			fmt.Errorf("%s: data.%s: %q is a folder; accepted: the path of the MLOpsJob file, such as %s", name, JobKey, job, filepath.Join(job, "job.yaml"))
	}
	spec, err := jobspec.Read(job)
	if err != nil {
		return nil, p, err
	}
	p.ConfigDir, p.ConfigFile = filepath.Dir(job), job
	return spec, p, nil
}
