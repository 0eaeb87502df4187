// SPDX-License-Identifier: Apache-2.0

package processor

import (
	"errors"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/mlops-fn/mlops-fn/pkg/env"
	"github.com/mlops-fn/mlops-fn/pkg/render"
)

// configName names the job spec in messages.
func (p Processor) configName() string {
	if p.ConfigFile != "" {
		return p.ConfigFile
	}
	return "functionConfig"
}

// fieldResults turns field errors into results that name their file: the job
// spec, or mlops.env for the paths render roots at the env file (FILE[KEY]).
func (p Processor) fieldResults(errs field.ErrorList, envSource string) framework.Results {
	var out framework.Results
	for _, e := range errs {
		file, fieldPath := p.locate(e.Field, envSource)
		where := file + ": "
		if fieldPath != "" {
			where += fieldPath + ": "
		}
		r := &framework.Result{Severity: framework.Error, Message: where + e.ErrorBody(),
			File: &framework.File{Path: file}, Field: &framework.Field{Path: fieldPath}}
		if e.Type == field.ErrorTypeInvalid || e.Type == field.ErrorTypeNotSupported {
			r.Field.CurrentValue = e.BadValue
		}
		out = append(out, r)
	}
	return out
}

func (p Processor) warningResults(warnings []render.Warning, envSource string) framework.Results {
	var out framework.Results
	for _, w := range warnings {
		file, fieldPath := p.locate(w.Field.String(), envSource)
		out = append(out, &framework.Result{Severity: framework.Warning, Message: file + ": " + fieldPath + ": " + w.Message,
			File: &framework.File{Path: file}, Field: &framework.Field{Path: fieldPath}})
	}
	return out
}

// noticeResults are a target's notices (render.Plan.Notices) as warnings.
func noticeResults(notices []string) framework.Results {
	var out framework.Results
	for _, n := range notices {
		out = append(out, &framework.Result{Severity: framework.Warning, Message: n})
	}
	return out
}

// locate splits a field path into its file and the field or key in it.
func (p Processor) locate(path, envSource string) (file, fieldPath string) {
	if key, ok := strings.CutPrefix(path, envSource+"["); ok && envSource != "" {
		return envSource, strings.TrimSuffix(key, "]")
	}
	return p.configName(), path
}

// envPath names the file an mlops.env error is about.
func (p Processor) envPath(err error) string {
	var pe *env.ParseError
	if errors.As(err, &pe) {
		return pe.Source
	}
	return p.configName()
}

func errorResult(err error) *framework.Result {
	return &framework.Result{Severity: framework.Error, Message: err.Error()}
}

// objectError names the object whose rendered form is invalid.
func objectError(id string, errs field.ErrorList) error {
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = id + ": " + e.Error()
	}
	return errors.New(strings.Join(msgs, "\n"))
}

func errorsOnly(results framework.Results) framework.Results {
	var out framework.Results
	for _, r := range results {
		if r.Severity == framework.Error {
			out = append(out, r)
		}
	}
	return out
}

func severity(warning bool) framework.Severity {
	if warning {
		return framework.Warning
	}
	return framework.Error
}
