// SPDX-License-Identifier: Apache-2.0

package jobnode

import (
	"slices"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
)

// Job is a job a hydrated overlay applies.
type Job struct {
	Kind, Name string
	Namespace  string // the overlay's ("": the one the flags or context give)
	// EnvConfigMaps are the ConfigMaps its containers read their environment from: mlops.env's.
	EnvConfigMaps []string
	Node          *yaml.RNode // the job as the overlay builds it
}

// Jobs are the jobs among items, an overlay's objects: those of kinds.
func Jobs(kinds jobkind.Table, items []*yaml.RNode) []Job {
	var jobs []Job
	for _, it := range items {
		if kinds.Is(it.GetKind()) {
			jobs = append(jobs, Job{Kind: it.GetKind(), Name: it.GetName(), Namespace: it.GetNamespace(), EnvConfigMaps: EnvConfigMaps(it), Node: it})
		}
	}
	return jobs
}

// EnvConfigMaps are the ConfigMaps a job's containers read their environment from (envFrom, a trainer's configMapKeyRef).
func EnvConfigMaps(job *yaml.RNode) []string {
	var names []string
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		for i := 0; n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
			if k := n.Content[i].Value; k == "configMapRef" || k == "configMapKeyRef" {
				if name, _ := yaml.NewRNode(n.Content[i+1]).GetString("name"); name != "" && !slices.Contains(names, name) {
					names = append(names, name)
				}
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(job.YNode())
	return names
}
