package processor

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
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
			return nil, p, fmt.Errorf("%s: data.%s: unknown key; accepted: %s, the path of the %s file", name, k, JobKey, "TrainingJob")
		}
	}
	job := data[JobKey]
	if job == "" {
		return nil, p, fmt.Errorf("%s: data.%s: Required value: the path of the TrainingJob file, relative to the working directory", name, JobKey)
	}
	if info, err := os.Stat(job); err != nil {
		wd, _ := os.Getwd()
		return nil, p, fmt.Errorf("%s: data.%s: %w (the working directory is %s)", name, JobKey, err, wd)
	} else if info.IsDir() {
		return nil, p, fmt.Errorf("%s: data.%s: %q is a folder; accepted: the path of the TrainingJob file, such as %s", name, JobKey, job, filepath.Join(job, "job.yaml"))
	}
	spec, err := ReadSpec(job)
	if err != nil {
		return nil, p, err
	}
	p.ConfigDir, p.ConfigFile = filepath.Dir(job), job
	return spec, p, nil
}

// ReadSpec reads a job spec file, which holds exactly one YAML document.
func ReadSpec(path string) (*yaml.RNode, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseSpec(path, data)
}

// ParseSpec parses the text of the job spec file at path.
func ParseSpec(path string, data []byte) (*yaml.RNode, error) {
	want := fmt.Sprintf("one %s (apiVersion %s)", api.Kind, api.APIVersion)
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%s is empty; accepted: %s", path, want)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []*yaml.Node
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			msg := oneLine(err.Error())
			if unquotedReference(data, msg) {
				msg += ` (a ${KEY} inside a flow list [a, ${KEY}] must be quoted: "${KEY}")`
			}
			return nil, fmt.Errorf("%s: %s", path, msg)
		}
		docs = append(docs, &n)
	}
	if len(docs) != 1 {
		return nil, fmt.Errorf("%s holds %d YAML documents; accepted: %s", path, len(docs), want)
	}
	return yaml.NewRNode(docs[0]), nil
}

var yamlErrorLine = regexp.MustCompile(`^yaml: line (\d+): did not find expected ',' or ']'`)

// unquotedReference tells whether a YAML error points at a flow list holding
// ${KEY}, which YAML reads as the start of a map.
func unquotedReference(data []byte, msg string) bool {
	m := yamlErrorLine.FindStringSubmatch(msg)
	if m == nil {
		return false
	}
	n, _ := strconv.Atoi(m[1])
	lines := strings.Split(string(data), "\n")
	// The parser reports the line before the flow list as often as the list's own.
	for i := n - 1; i <= n && i < len(lines); i++ {
		if i >= 0 && strings.Contains(lines[i], "[") && strings.Contains(lines[i], "${") {
			return true
		}
	}
	return false
}
