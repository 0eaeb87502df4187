// SPDX-License-Identifier: Apache-2.0

package render

import corev1 "k8s.io/api/core/v1"

// podRenderer: a single-node job is a Pod, with no operator.
type podRenderer struct{}

var _ kindRenderer = podRenderer{}

func (podRenderer) object(p *Plan, template func(role, string) corev1.PodTemplateSpec) job {
	return &corev1.Pod{Spec: template(single, p.ContainerOf("")).Spec}
}

func (podRenderer) fillJob(*Plan, job)                      {}
func (podRenderer) operatorVolumes(*Plan) []operatorVolume  { return nil }
func (podRenderer) gang(*Plan) (int32, string, int32, bool) { return 0, "", 0, false }
