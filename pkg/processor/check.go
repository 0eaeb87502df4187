// SPDX-License-Identifier: Apache-2.0

package processor

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/jobnode"
	"github.com/mlops-fn/mlops-fn/pkg/jobspec"
	"github.com/mlops-fn/mlops-fn/pkg/kinds"
)

// Check decodes a patched object into its upstream Go type, unknown fields
// disallowed, and runs its operator's checks (jobkind's Validate): what the
// API server and the operators would refuse is refused here, with its field.
// It returns the typed object (nil for a kind that is no job's).
func Check(n *yaml.RNode) (any, field.ErrorList) {
	k, obj, errs := decode(n)
	if obj == nil {
		return nil, errs
	}
	return obj, k.Validate(obj)
}

// CheckTarget is Check of a target as the patch left it (patched). The
// patches reorder lists (mlops-fn's runtime patch goes first in a TrainJob's
// spec.runtimePatches, the training container first in its pod), so a field
// that does not decode, which only the target can have brought, is reported
// at its path in the target: the index the user's file has.
func CheckTarget(target, patched *yaml.RNode) (any, field.ErrorList) {
	job, errs := Check(patched)
	if job == nil && len(errs) > 0 {
		if _, _, inTarget := decode(target); len(inTarget) > 0 {
			return nil, inTarget
		}
	}
	return job, errs
}

// decode reads n into its job kind's upstream Go type, unknown fields
// disallowed: no object when it does not decode, or is no job.
func decode(n *yaml.RNode) (jobkind.Facts, any, field.ErrorList) {
	k, ok := kinds.All.ForKind(n.GetKind())
	if !ok {
		return k, nil, nil
	}
	b, err := jobnode.JSON(n)
	if err != nil {
		return k, nil, field.ErrorList{field.InternalError(nil, err)}
	}
	obj := k.New()
	if errs := strictDecode(b, obj, k.APIVersion+" "+k.Kind); len(errs) > 0 {
		return k, nil, errs
	}
	return k, obj, nil
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

// CheckMetadata refuses a metadata that is not shaped as Kubernetes' (kyaml's
// accessors index it as a map of strings and maps of strings).
func CheckMetadata(n *yaml.RNode) error {
	meta := n.Field("metadata")
	if meta == nil || meta.Value.IsNil() {
		return nil
	}
	if meta.Value.YNode().Kind != yaml.MappingNode {
		return fmt.Errorf("metadata is a YAML %s; accepted: a map (name, namespace, labels, annotations)", jobspec.NodeKind(meta.Value))
	}
	for _, f := range []string{"name", "namespace"} {
		if v := meta.Value.Field(f); v != nil && !v.Value.IsNil() && v.Value.YNode().Kind != yaml.ScalarNode {
			return fmt.Errorf("metadata.%s is a YAML %s; accepted: a string", f, jobspec.NodeKind(v.Value))
		}
	}
	for _, f := range []string{"labels", "annotations"} {
		v := meta.Value.Field(f)
		if v == nil || v.Value.IsNil() {
			continue
		}
		if v.Value.YNode().Kind != yaml.MappingNode {
			return fmt.Errorf("metadata.%s is a YAML %s; accepted: a map of strings", f, jobspec.NodeKind(v.Value))
		}
		for i := 1; i < len(v.Value.YNode().Content); i += 2 {
			if c := v.Value.YNode().Content[i]; c.Kind != yaml.ScalarNode {
				return fmt.Errorf("metadata.%s.%s is a YAML %s; accepted: a string", f, v.Value.YNode().Content[i-1].Value, jobspec.NodeKind(yaml.NewRNode(c)))
			}
		}
	}
	return nil
}
