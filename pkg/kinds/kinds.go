// SPDX-License-Identifier: Apache-2.0

// Package kinds is the one list of the job kinds mlops-fn renders, each a
// package of its own (pkg/kinds/KIND): its facts and the code that renders,
// patches, checks and reads it back. The layers above the kinds (processor,
// hydrate, apply, status, scaffold, cli, krm) take the kinds from here; the
// layers below (the API, the renderer, the YAML codec, the schema) are handed
// the kind they need.
package kinds

import (
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/kinds/mpijob"
	"github.com/mlops-fn/mlops-fn/pkg/kinds/pod"
	"github.com/mlops-fn/mlops-fn/pkg/kinds/pytorchjob"
	"github.com/mlops-fn/mlops-fn/pkg/kinds/trainjob"
)

// All are the kinds, in the order of the kinds in messages.
var All = jobkind.Table{pod.Facts, mpijob.Facts, pytorchjob.Facts, trainjob.Facts}
