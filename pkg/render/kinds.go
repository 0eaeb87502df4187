// SPDX-License-Identifier: Apache-2.0

package render

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/env"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/jobnode"
)

// Kind is a job kind as the renderer sees it (pkg/kinds/KIND): the shared fills give the pod templates, the
// kind the object around them and what its pods run, and every pod template of its jobs for Pod Security.
type Kind interface {
	Facts() jobkind.Facts
	jobnode.Templated
	// Object is a job of the kind whose pod templates template gives.
	Object(p *Plan, template Template) Job
	// FillProgram sets what the training container of the pods of role runs, and the pod's fields for it.
	FillProgram(p *Plan, role jobkind.Role, spec *corev1.PodSpec, c *corev1.Container)
}

// Template is the pod template of role, its training container named by Plan.ContainerOf.
type Template func(role jobkind.Role) corev1.PodTemplateSpec

// JobFiller is a kind with fields of its own beyond its pod templates.
type JobFiller interface{ FillJob(p *Plan, obj Job) }

// Operated is a kind whose operator adds volumes to the pods by name.
type Operated interface {
	OperatorVolumes(p *Plan) []OperatorVolume
}

// Gang is a kind whose pods a gang scheduler starts together: how many, which, and the plan's minimum (0: all).
type Gang interface {
	Gang(p *Plan) (pods int32, which string, least int32)
}

// Apart is a kind some of whose pods run beside the training (an MPIJob's launcher), without its nodes and RDMA.
type Apart interface {
	Apart(p *Plan, role jobkind.Role) bool
}

// Grouper is a kind whose pod templates Kueue places in one topology domain: their podset group ("": none).
type Grouper interface {
	Group(p *Plan, role jobkind.Role) string
}

// Resolver is a kind with plan rules of its own, run once the shared shape, ids and home are settled and
// before the gang's minimum (Gang reads what it settles).
type Resolver interface {
	Resolve(p *Plan, in Input) ([]Warning, field.ErrorList)
}

// Input is what Resolve settles a plan from.
type Input struct {
	Spec *api.MLOpsJobSpec
	Env  *env.File
	Set  env.Settings
}

// EnvKey is where mlops.env's key is, in messages.
func (in Input) EnvKey(key string) *field.Path { return field.NewPath(in.Env.Source).Key(key) }

// Clearer is a kind whose patch deletes more of a target than the shared fills do (Patch.Clear).
type Clearer interface{ Clear(p *Plan, d *Deletions) }

// NewJob is a kind whose jobs, generated with no target, settle more of the plan than a target's patch does.
type NewJob interface{ NewJob(p *Plan) }

// Narrower is a kind that checks a target for what it needs and completes the plan narrowed to it; config
// names the job spec in messages.
type Narrower interface {
	Narrow(target *yaml.RNode, q *Plan, config string) error
}

// AfterPatcher is a kind that edits its job once the patch is applied.
type AfterPatcher interface {
	AfterPatch(job *yaml.RNode, q *Plan) error
}

// JSONPatcher is a kind whose AfterPatch edit hydrate writes as a JSON patch after the strategic merge (nil: none).
type JSONPatcher interface {
	JSONPatch(q *Plan) (file string, ops []any)
}

// Job is a job object of any kind.
type Job interface {
	metav1.Object
	runtime.Object
}

// Apart says whether the pods of role run beside the training.
func (p *Plan) Apart(role jobkind.Role) bool {
	a, ok := p.kind.(Apart)
	return ok && a.Apart(p, role)
}

func (p *Plan) operatorVolumes() []OperatorVolume {
	if o, ok := p.kind.(Operated); ok {
		return o.OperatorVolumes(p)
	}
	return nil
}

// OwnEnvEntry: e is what mlops-fn writes for key name, its value taken from the env ConfigMap.
func (p *Plan) OwnEnvEntry(e *yaml.RNode, name string) bool {
	return p.NamesEnv(jobnode.Scalar(e, "valueFrom", "configMapKeyRef", "name")) &&
		jobnode.Scalar(e, "valueFrom", "configMapKeyRef", "key") == name && jobnode.Scalar(e, "value") == ""
}
