// SPDX-License-Identifier: Apache-2.0

package pod

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/render"
)

// Kind is the single-node job: a Pod, with no operator.
type Kind struct{}

var _ render.Kind = Kind{}

func (Kind) Facts() jobkind.Facts { return facts }

func (Kind) Object(p *render.Plan, template render.Template) render.Job {
	return &corev1.Pod{Spec: template(jobkind.Single, p.ContainerOf(jobkind.Single)).Spec}
}

// FillProgram: the Pod runs the command, and is the job: its restart policy
// and deadline are the pod's.
func (Kind) FillProgram(p *render.Plan, _ jobkind.Role, spec *corev1.PodSpec, c *corev1.Container) {
	c.Command, c.Args = p.Command, p.Args
	spec.RestartPolicy = p.RestartPolicy
	spec.ActiveDeadlineSeconds = p.RunPolicy.ActiveDeadlineSeconds
}
