// SPDX-License-Identifier: Apache-2.0

package render

import (
	"fmt"

	"github.com/mlops-fn/mlops-fn/pkg/jobkind"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// kindRenderer is what the renderer does differently for each kind, each
// kind's in the file named after it (pod.go, mpijob.go, pytorchjob.go,
// trainjob.go); the pod templates are the shared fills'.
type kindRenderer interface {
	// object is a job of the kind whose pod templates template fills.
	object(p *Plan, template func(role, string) corev1.PodTemplateSpec) job
	// fillJob sets the job's own fields.
	fillJob(p *Plan, obj job)
	// operatorVolumes are the volumes the kind's operator adds to the pods by name.
	operatorVolumes(p *Plan) []operatorVolume
	// gang is the pods a gang scheduler starts together, what they are, and
	// the minimum the plan sets (0: the operator's, every pod); no ok where
	// the kind has no gang.
	gang(p *Plan) (pods int32, which string, least int32, ok bool)
}

// job is a job object of any kind.
type job interface {
	metav1.Object
	runtime.Object
}

var renderers = map[jobkind.JobKind]kindRenderer{
	jobkind.Pod:        podRenderer{},
	jobkind.MPIJob:     mpiJobRenderer{},
	jobkind.PyTorchJob: pyTorchJobRenderer{},
	jobkind.TrainJob:   trainJobRenderer{},
}

// renderer is the plan's kind's; the spec's validation refuses any other.
func (p *Plan) renderer() kindRenderer {
	r, ok := renderers[p.JobKind]
	if !ok {
		panic(fmt.Sprintf("render: jobKind %q has no renderer: a plan comes from Resolve, which refuses it", p.JobKind))
	}
	return r
}
