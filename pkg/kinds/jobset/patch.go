// SPDX-License-Identifier: Apache-2.0

package jobset

import (
	"fmt"

	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/mlops-fn/mlops-fn/pkg/jobnode"
	"github.com/mlops-fn/mlops-fn/pkg/render"
)

// Narrow: a subdomain would rename the headless Service node 0's address is in; the one replicated job is node.
func (Kind) Narrow(target *yaml.RNode, _ *render.Plan, _ string) error {
	if s := jobnode.Scalar(target, "spec", "network", "subdomain"); s != "" {
		return fmt.Errorf("spec.network.subdomain: %s names the JobSet's headless Service, whose name (the JobSet's) mlops-fn's torchrun finds node 0 by ($(JOBSET_NAME)-%s-0-0.$(JOBSET_NAME)); accepted: no subdomain", s, Node)
	}
	list, _ := target.Pipe(yaml.Lookup("spec", "replicatedJobs"))
	if list == nil {
		return nil
	}
	elems, _ := list.Elements()
	for i, e := range elems {
		if name, _ := e.GetString("name"); name != Node {
			return fmt.Errorf("spec.replicatedJobs[%d].name: %q: mlops-fn renders a JobSet of one replicated job, %s, which torchrun's rendezvous joins; the site settings would not reach this one; accepted: one replicated job named %s", i, name, Node, Node)
		}
	}
	return nil
}

// PodTemplates are a JobSet's pod specs, by replicated job: mlops-fn fills the node job's.
func (Kind) PodTemplates(obj any) []jobnode.PodTemplate {
	o, ok := obj.(*jobset.JobSet)
	if !ok {
		return nil
	}
	var pods []jobnode.PodTemplate
	for _, rj := range o.Spec.ReplicatedJobs {
		t := rj.Template.Spec.Template
		pods = append(pods, jobnode.PodTemplate{Path: "spec.replicatedJobs[name=" + rj.Name + "].template.spec.template.spec",
			Meta: t.ObjectMeta, Spec: t.Spec, Filled: rj.Name == Node})
	}
	return pods
}
