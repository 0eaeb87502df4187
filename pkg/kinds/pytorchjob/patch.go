// SPDX-License-Identifier: Apache-2.0

package pytorchjob

import (
	"errors"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/mlops-fn/mlops-fn/pkg/jobnode"
	"github.com/mlops-fn/mlops-fn/pkg/render"
)

var _ jobnode.Narrower = Kind{}

// Narrow: mlops-fn renders an elastic PyTorchJob, of workers only; a target
// with a Master is a static job it would half convert.
func (Kind) Narrow(target *yaml.RNode, _ *render.Plan, _ string) error {
	if m, _ := target.Pipe(yaml.Lookup("spec", "pytorchReplicaSpecs", "Master")); m != nil {
		return errors.New("spec.pytorchReplicaSpecs.Master: mlops-fn renders an elastic PyTorchJob, workers only, which torchrun's rendezvous joins; the site settings would reach the Workers and not the Master, and the job would become elastic; accepted: a PyTorchJob of Workers only (torchrun's c10d rendezvous runs on worker 0), or jobKind TrainJob for a Kubeflow Trainer runtime")
	}
	return nil
}
