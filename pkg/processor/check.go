package processor

import (
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/jobspec"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Check decodes a patched object into its upstream Go type, unknown fields
// disallowed, and runs its operator's checks (jobkind's Validate): what the
// API server and the operators would refuse is refused here, with its field.
// It returns the typed object (nil for a kind that is no job's).
func Check(n *yaml.RNode) (any, field.ErrorList) {
	k, ok := jobkind.ForKind(n.GetKind())
	if !ok {
		return nil, nil
	}
	b, err := n.MarshalJSON()
	if err != nil {
		return nil, field.ErrorList{field.InternalError(nil, err)}
	}
	obj := k.New()
	if errs := strictDecode(b, obj, k.APIVersion+" "+k.Kind); len(errs) > 0 {
		return nil, errs
	}
	return obj, k.Validate(obj)
}

func strictDecode(b []byte, into any, kind string) field.ErrorList {
	accepted := "the fields of " + kind
	strict, err := sigsjson.UnmarshalStrict(b, into)
	if err != nil {
		return field.ErrorList{jobspec.DecodeError(err, accepted)}
	}
	var errs field.ErrorList
	for _, e := range strict {
		errs = append(errs, jobspec.DecodeError(e, accepted))
	}
	return errs
}
