// SPDX-License-Identifier: Apache-2.0

package pytorchjob

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	kubeflowv1 "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	webhook "github.com/kubeflow/training-operator/pkg/webhooks/pytorch"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// TestPyTorchJobWebhookAgrees: the copy of the training-operator's
// PyTorchJob webhook refuses what the webhook's own ValidateCreate refuses,
// at the same fields with the same types (its words are mlops-fn's).
func TestPyTorchJobWebhookAgrees(t *testing.T) {
	t.Parallel()
	role := func(replicas int32, containers ...corev1.Container) *kubeflowv1.ReplicaSpec {
		return &kubeflowv1.ReplicaSpec{Replicas: ptr.To(replicas), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: containers}}}
	}
	pytorch := corev1.Container{Name: "pytorch", Image: "torch"}
	job := func(edit func(*kubeflowv1.PyTorchJob)) *kubeflowv1.PyTorchJob {
		j := &kubeflowv1.PyTorchJob{ObjectMeta: metav1.ObjectMeta{Name: "bert"}, Spec: kubeflowv1.PyTorchJobSpec{
			PyTorchReplicaSpecs: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec{"Worker": role(2, pytorch)}}}
		edit(j)
		return j
	}
	for name, j := range map[string]*kubeflowv1.PyTorchJob{
		"valid":                job(func(*kubeflowv1.PyTorchJob) {}),
		"name not a DNS-1035":  job(func(j *kubeflowv1.PyTorchJob) { j.Name = "1bert.x" }),
		"managedBy unknown":    job(func(j *kubeflowv1.PyTorchJob) { j.Spec.RunPolicy.ManagedBy = ptr.To("example.io/x") }),
		"managedBy MultiKueue": job(func(j *kubeflowv1.PyTorchJob) { j.Spec.RunPolicy.ManagedBy = ptr.To(kubeflowv1.MultiKueueController) }),
		"no replica specs":     job(func(j *kubeflowv1.PyTorchJob) { j.Spec.PyTorchReplicaSpecs = nil }),
		"elastic without Worker": job(func(j *kubeflowv1.PyTorchJob) {
			j.Spec.ElasticPolicy = &kubeflowv1.ElasticPolicy{}
			j.Spec.PyTorchReplicaSpecs = map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec{"Master": role(1, pytorch)}
		}),
		"nProcPerNode twice": job(func(j *kubeflowv1.PyTorchJob) {
			j.Spec.ElasticPolicy = &kubeflowv1.ElasticPolicy{NProcPerNode: ptr.To[int32](2)}
			j.Spec.NprocPerNode = ptr.To("2")
		}),
		"unknown role":  job(func(j *kubeflowv1.PyTorchJob) { j.Spec.PyTorchReplicaSpecs["Chief"] = role(1, pytorch) }),
		"no containers": job(func(j *kubeflowv1.PyTorchJob) { j.Spec.PyTorchReplicaSpecs["Worker"] = role(2) }),
		"no image": job(func(j *kubeflowv1.PyTorchJob) {
			j.Spec.PyTorchReplicaSpecs["Worker"] = role(2, corev1.Container{Name: "pytorch"})
		}),
		"no pytorch": job(func(j *kubeflowv1.PyTorchJob) {
			j.Spec.PyTorchReplicaSpecs["Worker"] = role(2, corev1.Container{Name: "trainer", Image: "torch"})
		}),
		"two Masters":       job(func(j *kubeflowv1.PyTorchJob) { j.Spec.PyTorchReplicaSpecs["Master"] = role(2, pytorch) }),
		"no Worker replica": job(func(j *kubeflowv1.PyTorchJob) { j.Spec.PyTorchReplicaSpecs["Worker"] = role(0, pytorch) }),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := (&webhook.Webhook{}).ValidateCreate(logr.NewContext(context.Background(), logr.Discard()), j)
			var want []string
			if agg, ok := err.(utilerrors.Aggregate); ok {
				for _, e := range agg.Errors() {
					want = append(want, string(e.(*field.Error).Type)+" "+e.(*field.Error).Field)
				}
			}
			var got []string
			for _, e := range pyTorchJobWebhook(j) {
				if e.Type == field.ErrorTypeInvalid && strings.HasSuffix(e.Field, ".containers") {
					e.Type = field.ErrorTypeRequired // the webhook's "must have a container named pytorch", naming those there are
				}
				got = append(got, string(e.Type)+" "+e.Field)
			}
			// The webhook says "Required" twice for a role of no containers, once per check.
			if diff := cmp.Diff(slices.Compact(slices.Sorted(slices.Values(want))), slices.Compact(slices.Sorted(slices.Values(got)))); diff != "" {
				t.Errorf("the webhook's errors (-) and the copy's (+):\n%s\nwebhook: %v", diff, err)
			}
		})
	}
}
