// SPDX-License-Identifier: Apache-2.0

package jobset

import (
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
)

// TestValidateJobSet: JobSet's webhook refuses a name whose last pod's name
// would pass 63 characters, and a subdomain that is no DNS-1035 label.
func TestValidateJobSet(t *testing.T) {
	js := func(name string, replicas int32) *jobset.JobSet {
		return &jobset.JobSet{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: jobset.JobSetSpec{ReplicatedJobs: []jobset.ReplicatedJob{{Name: Node, Replicas: replicas,
			Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{CompletionMode: ptr.To(batchv1.IndexedCompletion), Completions: ptr.To(int32(1))}}}}}}
	}
	if errs := validateJobSet(js("mnist", 3)); len(errs) != 0 {
		t.Errorf("mnist: %v", errs)
	}
	long := strings.Repeat("a", 50)
	if errs := validateJobSet(js(long, 10)); len(errs) == 0 {
		t.Errorf("%s with 10 nodes: admitted, its last pod's name too long", long)
	}
	sub := js("mnist", 1)
	sub.Spec.Network = &jobset.Network{Subdomain: "Not_A_Label"}
	if errs := validateJobSet(sub); len(errs) == 0 {
		t.Error("subdomain Not_A_Label admitted")
	}
	if got := facts.PodNames(jobkind.Shape{Name: "mnist", Workers: 3}); len(got) != 1 || got[0] != "mnist-node-2-0-xxxxx" {
		t.Errorf("PodNames = %v", got)
	}
}

// TestNarrow refuses a target's subdomain and a replicated job other than node.
func TestNarrow(t *testing.T) {
	for text, want := range map[string]string{
		"spec: {replicatedJobs: [{name: node}]}":                          "",
		"spec: {network: {subdomain: w}, replicatedJobs: [{name: node}]}": "spec.network.subdomain",
		"spec: {replicatedJobs: [{name: node}, {name: driver}]}":          "spec.replicatedJobs[1].name",
	} {
		err := Kind{}.Narrow(yaml.MustParse(text), nil, "job.yaml")
		switch {
		case err == nil && want != "":
			t.Errorf("%s: admitted, want %s", text, want)
		case err != nil && (want == "" || !strings.HasPrefix(err.Error(), want)):
			t.Errorf("%s: %v, want %q", text, err, want)
		}
	}
}
