// SPDX-License-Identifier: Apache-2.0

package processor

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/render"
)

// kindSteps are the processor's steps that differ by kind, each kind's in the
// file named after it (mpijob.go, pytorchjob.go, trainjob.go); a Pod has
// none of its own.
type kindSteps interface {
	// narrow checks a target for what the kind needs, after the checks every
	// kind shares, and completes the plan narrowed to it.
	narrow(p Processor, target *yaml.RNode, q *render.Plan) error
	// afterPatch edits the job once the patch is applied.
	afterPatch(job *yaml.RNode, q *render.Plan) error
}

var steps = map[jobkind.JobKind]kindSteps{
	jobkind.MPIJob:     mpiJobSteps{},
	jobkind.PyTorchJob: pyTorchJobSteps{},
	jobkind.TrainJob:   trainJobSteps{},
}

// stepsOf are jobKind's steps.
func stepsOf(jobKind jobkind.JobKind) kindSteps {
	if s, ok := steps[jobKind]; ok {
		return s
	}
	return noSteps{}
}

type noSteps struct{}

func (noSteps) narrow(Processor, *yaml.RNode, *render.Plan) error { return nil }
func (noSteps) afterPatch(*yaml.RNode, *render.Plan) error        { return nil }
