// SPDX-License-Identifier: Apache-2.0

package admission

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/yaml"

	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/kinds"
)

// TestPolicyIsCurrent: policy.yaml is what the kinds' facts give now (after
// a change of a kind's in-place rule, SuspendPath or the kinds, `go generate
// ./deploy/admission`), a ValidatingAdmissionPolicy the binding names that
// matches the update of every operator's kind and names mlops-fn apply
// --replace when it refuses.
func TestPolicyIsCurrent(t *testing.T) {
	want, err := Policy()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(File)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s is stale; run `go generate ./deploy/admission` and read the diff:\n%s", File, cmp.Diff(string(want), string(got)))
	}
	var policy admissionv1.ValidatingAdmissionPolicy
	var binding admissionv1.ValidatingAdmissionPolicyBinding
	if err := yaml.UnmarshalStrict(want, &policy); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("binding.yaml")
	if err == nil {
		err = yaml.UnmarshalStrict(b, &binding)
	}
	if err != nil {
		t.Fatal(err)
	}
	if binding.Spec.PolicyName != policy.Name {
		t.Errorf("binding.yaml names %q, the policy is %q", binding.Spec.PolicyName, policy.Name)
	}
	for _, k := range kinds.All {
		if k.BuiltIn() {
			continue
		}
		group, _, _ := strings.Cut(k.APIVersion, "/")
		matched := false
		for _, r := range policy.Spec.MatchConstraints.ResourceRules {
			matched = matched || strings.Join(r.APIGroups, ",") == group && strings.Contains(strings.Join(r.Resources, ","), strings.ToLower(k.Kind)+"s") &&
				len(r.Operations) == 1 && r.Operations[0] == admissionv1.Update
		}
		if !matched {
			t.Errorf("%s: no rule matches its update: %+v", k.Kind, policy.Spec.MatchConstraints.ResourceRules)
		}
	}
	if v := policy.Spec.Validations; len(v) != 1 || !strings.Contains(v[0].MessageExpression, "mlops-fn apply --replace") {
		t.Errorf("validations %+v: want one, whose message names mlops-fn apply --replace", v)
	}
}

// TestPolicyRefusesFieldsCELCannotSelect: a rule's field that is no CEL
// identifier is an error naming it, not a policy that fails to compile.
func TestPolicyRefusesFieldsCELCannotSelect(t *testing.T) {
	k := kinds.All.Of(jobkind.PyTorchJob)
	scale := *k.Scale
	scale.Replicas = []string{"spec", "replicatedJobs", "[name=node]", "replicas"}
	k.Scale = &scale
	_, err := kindOf(k)
	if err == nil || !strings.Contains(err.Error(), `field "[name=node]" of spec.replicatedJobs.[name=node].replicas`) {
		t.Errorf("err = %v, want one naming the field", err)
	}
}
