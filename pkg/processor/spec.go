package processor

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
)

// decodeSpec reads the function config strictly: an unknown or misspelt field
// is an error, not a silently ignored line.
func decodeSpec(config *yaml.RNode) (*api.TrainingJob, field.ErrorList) {
	want := fmt.Sprintf("a %s (apiVersion %s)", api.Kind, api.APIVersion)
	if config == nil || config.IsNilOrEmpty() {
		return nil, field.ErrorList{field.Required(field.NewPath("functionConfig"), "mlops-fn needs its job spec: "+want)}
	}
	if config.GetApiVersion() != api.APIVersion || config.GetKind() != api.Kind {
		return nil, field.ErrorList{field.Invalid(field.NewPath("kind"), config.GetApiVersion()+"/"+config.GetKind(), "accepted: "+want)}
	}
	b, err := config.MarshalJSON()
	if err != nil {
		return nil, field.ErrorList{field.InternalError(field.NewPath("functionConfig"), err)}
	}
	job := &api.TrainingJob{}
	strict, err := sigsjson.UnmarshalStrict(b, job)
	if err != nil {
		return nil, field.ErrorList{field.Invalid(field.NewPath("functionConfig"), "", decodeMessage(err))}
	}
	var errs field.ErrorList
	for _, e := range strict {
		errs = append(errs, field.Invalid(field.NewPath("functionConfig"), "", decodeMessage(e)))
	}
	// The runners' bookkeeping annotations describe the config file, not the job.
	for k := range job.Metadata.Annotations {
		if strings.Contains(k, "config.kubernetes.io/") || strings.Contains(k, "config.k8s.io/") {
			delete(job.Metadata.Annotations, k)
		}
	}
	if len(job.Metadata.Annotations) == 0 {
		job.Metadata.Annotations = nil
	}
	return job, errs
}

// decodeMessage turns encoding/json's wording into the spec's terms.
func decodeMessage(err error) string {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "json: ")
	msg = strings.ReplaceAll(msg, "Go struct field ", "field ")
	msg = strings.ReplaceAll(msg, "TrainingJob.", "")
	if strings.HasPrefix(msg, "unknown field") {
		msg += fmt.Sprintf("; accepted: the fields of %s %s (see mlops-fn --help)", api.APIVersion, api.Kind)
	}
	return msg
}

// configPath is where the runner says the function config lives, if it says.
func configPath(config *yaml.RNode) string {
	if config == nil {
		return ""
	}
	path, _, _ := kioutil.GetFileAnnotations(config)
	return path
}
