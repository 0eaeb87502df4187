// SPDX-License-Identifier: Apache-2.0

package processor

import (
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/render"
)

// stepsOf is what answers the processor's hooks (jobnode.Narrower,
// jobnode.AfterPatcher) for a kind: the kind itself, but for a TrainJob
// the processor's trainJobSteps until they move into pkg/kinds/trainjob.
func stepsOf(k render.Kind) any {
	if k.Facts().JobKind() == jobkind.TrainJob {
		return trainJobSteps{}
	}
	return k
}
