package processor

import (
	"fmt"
	"regexp"
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
	var errs field.ErrorList
	if v := config.GetApiVersion(); v != api.APIVersion {
		errs = append(errs, field.Invalid(field.NewPath("apiVersion"), v, "accepted: "+api.APIVersion+" (mlops-fn's job spec)"))
	}
	if k := config.GetKind(); k != api.Kind {
		errs = append(errs, field.Invalid(field.NewPath("kind"), k, "accepted: "+api.Kind+" (mlops-fn's job spec)"))
	}
	if len(errs) > 0 {
		return nil, errs
	}
	b, err := config.MarshalJSON()
	if err != nil {
		return nil, field.ErrorList{field.InternalError(field.NewPath("functionConfig"), err)}
	}
	job := &api.TrainingJob{}
	strict, err := sigsjson.UnmarshalStrict(b, job)
	if err != nil {
		return nil, field.ErrorList{decodeError(err, specFields)}
	}
	for _, e := range strict {
		errs = append(errs, decodeError(e, specFields))
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

// unknownField and wrongType read the field path out of encoding/json's errors.
var (
	unknownField = regexp.MustCompile(`^(?:json: )?unknown field "(.*)"$`)
	wrongType    = regexp.MustCompile(`cannot unmarshal (\S+) into Go struct field [A-Za-z0-9]+\.(\S+) of type (\S+)`)
)

// specFields is what decodeError says a job spec accepts.
var specFields = fmt.Sprintf("the fields of %s %s, listed in the README's job spec reference", api.APIVersion, api.Kind)

// decodeError turns a decoding error into one about the field it names;
// accepted says which fields exist.
func decodeError(err error, accepted string) *field.Error {
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if m := unknownField.FindStringSubmatch(msg); m != nil {
		return &field.Error{Type: field.ErrorTypeInvalid, Field: m[1], BadValue: field.OmitValueType{},
			Detail: "unknown field; accepted: " + accepted}
	}
	if m := wrongType.FindStringSubmatch(msg); m != nil {
		return &field.Error{Type: field.ErrorTypeTypeInvalid, Field: m[2], BadValue: field.OmitValueType{},
			Detail: fmt.Sprintf("is a %s; accepted: a %s", m[1], m[3])}
	}
	return &field.Error{Type: field.ErrorTypeInvalid, Field: "spec", BadValue: field.OmitValueType{}, Detail: msg}
}

// configPath is where the runner says the function config lives, if it says.
func configPath(config *yaml.RNode) string {
	if config == nil {
		return ""
	}
	path, _, _ := kioutil.GetFileAnnotations(config)
	return path
}
