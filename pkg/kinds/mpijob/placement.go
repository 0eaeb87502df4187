// SPDX-License-Identifier: Apache-2.0

package mpijob

import (
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/render"
)

var _ render.Grouper = Kind{}

// PodSetGroup is the podset group of an MPIJob's launcher and workers: mpirun reaches every worker over ssh,
// so Kueue places the launcher in the workers' domain too.
const PodSetGroup = "launcher-and-workers"

func (Kind) Group(*render.Plan, jobkind.Role) string { return PodSetGroup }
