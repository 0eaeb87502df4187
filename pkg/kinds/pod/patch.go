// SPDX-License-Identifier: Apache-2.0

package pod

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/mlops-fn/mlops-fn/pkg/jobnode"
)

var _ jobnode.Templated = Kind{}

// PodTemplates: the Pod is its own one pod spec, which mlops-fn fills.
func (Kind) PodTemplates(obj any) []jobnode.PodTemplate {
	o, ok := obj.(*corev1.Pod)
	if !ok {
		return nil
	}
	return []jobnode.PodTemplate{{Path: "spec", Meta: o.ObjectMeta, Spec: o.Spec, Filled: true}}
}
