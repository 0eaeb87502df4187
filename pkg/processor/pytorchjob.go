// SPDX-License-Identifier: Apache-2.0

package processor

import (
	"errors"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/mlops-fn/mlops-fn/pkg/render"
)

// pyTorchJobSteps: mlops-fn renders an elastic PyTorchJob, of workers only;
// a target with a Master is a static job it would half convert.
type pyTorchJobSteps struct{}

var _ kindSteps = pyTorchJobSteps{}

func (pyTorchJobSteps) narrow(_ Processor, target *yaml.RNode, _ *render.Plan) error {
	if m, _ := target.Pipe(yaml.Lookup("spec", "pytorchReplicaSpecs", "Master")); m != nil {
		return errors.New("spec.pytorchReplicaSpecs.Master: mlops-fn renders an elastic PyTorchJob, workers only, which torchrun's rendezvous joins; the site settings would reach the Workers and not the Master, and the job would become elastic; accepted: a PyTorchJob of Workers only (torchrun's c10d rendezvous runs on worker 0), or jobKind TrainJob for a Kubeflow Trainer runtime")
	}
	return nil
}

func (pyTorchJobSteps) afterPatch(*yaml.RNode, *render.Plan) error { return nil }
