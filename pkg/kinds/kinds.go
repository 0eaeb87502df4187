// SPDX-License-Identifier: Apache-2.0

// Package kinds is the one list of the job kinds mlops-fn renders, each a package (pkg/kinds/KIND). The layers
// above the kinds take them from here; those below (API, renderer, codec, schema) are handed the one they need.
package kinds

import (
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/kinds/jobset"
	"github.com/mlops-fn/mlops-fn/pkg/kinds/mpijob"
	"github.com/mlops-fn/mlops-fn/pkg/kinds/pod"
	"github.com/mlops-fn/mlops-fn/pkg/kinds/pytorchjob"
	"github.com/mlops-fn/mlops-fn/pkg/kinds/trainjob"
	"github.com/mlops-fn/mlops-fn/pkg/render"
)

// list is every kind, in the order of the kinds in messages.
var list = []render.Kind{pod.Kind{}, mpijob.Kind{}, pytorchjob.Kind{}, trainjob.Kind{}, jobset.Kind{}}

// All are the kinds' facts, in that order.
var All = func() jobkind.Table {
	var t jobkind.Table
	for _, k := range list {
		t = append(t, k.Facts())
	}
	return t
}()

// Default fills what the user left out of job: what every kind shares, then its kind's own (api.Defaulter).
func Default(job *api.MLOpsJob) {
	job.Default(All)
	if d, ok := Of(job.Spec.JobKind).(api.Defaulter); ok {
		d.Default(&job.Spec)
	}
}

// Validate checks job (defaulted): by the rules every kind shares, then by its kind's own (spec.env's names
// by Facts.ReservedEnv, then api.Validator).
func Validate(job *api.MLOpsJob) field.ErrorList {
	errs, spec := job.Validate(All), field.NewPath("spec")
	if reserved := All.Of(job.Spec.JobKind).ReservedEnv; reserved != nil {
		for i, e := range job.Spec.Env {
			if why := reserved(e.Name); why != "" {
				errs = append(errs, field.Invalid(spec.Child("env").Index(i).Child("name"), e.Name, why))
			}
		}
	}
	if v, ok := Of(job.Spec.JobKind).(api.Validator); ok {
		errs = append(errs, v.Validate(&job.Spec, spec)...)
	}
	return errs
}

// Of is a job kind, nil for one mlops-fn does not render (the spec's validation refuses it first).
func Of(jobKind jobkind.JobKind) render.Kind {
	if i := slices.IndexFunc(list, func(k render.Kind) bool { return k.Facts().JobKind() == jobKind }); i >= 0 {
		return list[i]
	}
	return nil
}
