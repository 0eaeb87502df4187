// SPDX-License-Identifier: Apache-2.0

package pytorchjob

import (
	"errors"
	"maps"
	"slices"

	kubeflowv1 "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/mlops-fn/mlops-fn/pkg/jobnode"
	"github.com/mlops-fn/mlops-fn/pkg/render"
)

// Narrow: a target with a Master is a static job, which an elastic job of workers only would half convert.
func (Kind) Narrow(target *yaml.RNode, _ *render.Plan, _ string) error {
	if m, _ := target.Pipe(yaml.Lookup("spec", "pytorchReplicaSpecs", "Master")); m != nil {
		return errors.New("spec.pytorchReplicaSpecs.Master: mlops-fn renders an elastic PyTorchJob, workers only, which torchrun's rendezvous joins; the site settings would reach the Workers and not the Master, and the job would become elastic; accepted: a PyTorchJob of Workers only (torchrun's c10d rendezvous runs on worker 0), or jobKind TrainJob for a Kubeflow Trainer runtime")
	}
	return nil
}

// PodTemplates are a PyTorchJob's pod specs, by replica type: mlops-fn fills the workers'.
func (Kind) PodTemplates(obj any) []jobnode.PodTemplate {
	o, ok := obj.(*kubeflowv1.PyTorchJob)
	if !ok {
		return nil
	}
	var pods []jobnode.PodTemplate
	for _, rt := range slices.Sorted(maps.Keys(o.Spec.PyTorchReplicaSpecs)) {
		if r := o.Spec.PyTorchReplicaSpecs[rt]; r != nil {
			pods = append(pods, jobnode.PodTemplate{Path: "spec.pytorchReplicaSpecs." + string(rt) + ".template.spec", Meta: r.Template.ObjectMeta,
				Spec: r.Template.Spec, Filled: rt == kubeflowv1.PyTorchJobReplicaTypeWorker})
		}
	}
	return pods
}
