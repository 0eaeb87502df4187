// SPDX-License-Identifier: Apache-2.0

// Package pod is the single-node job, a Pod.
package pod

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/jobnode"
	"github.com/mlops-fn/mlops-fn/pkg/render"
)

// Kind is the single-node job: a Pod, with no operator.
type Kind struct{}

func (Kind) Facts() jobkind.Facts { return facts }

func (Kind) Object(_ *render.Plan, template render.Template) render.Job {
	t := template(jobkind.Single)
	return &corev1.Pod{ObjectMeta: t.ObjectMeta, Spec: t.Spec}
}

// FillProgram: the Pod runs the command, and is the job: its restart policy and deadline are the pod's.
func (Kind) FillProgram(p *render.Plan, _ jobkind.Role, spec *corev1.PodSpec, c *corev1.Container) {
	c.Command, c.Args = p.Command, p.Args
	spec.RestartPolicy = p.RestartPolicy
	spec.ActiveDeadlineSeconds = p.RunPolicy.ActiveDeadlineSeconds
}

var facts = jobkind.Facts{
	Kind: string(jobkind.Pod), APIVersion: "v1", PatchFile: "pod-patch.yaml",
	PodSpecs:      []jobkind.PodSpec{{Role: jobkind.Single, Path: []string{"spec"}}},
	RestartPolicy: corev1.RestartPolicyNever,
	Brief:         "single-node",
	LogsFrom:      "the Pod",
	Help:          "(single-node) a Pod",
	Carries:       []string{"imagePullPolicy", "workingDir", "priorityClassName", "hostNetwork", "restartPolicy"},
	Fields:        []jobkind.Field{{Path: "workers", EnvKeys: []string{"WORKERS"}, Why: "the number of worker pods; a single-node job is one Pod"}},
	PodNames:      func(s jobkind.Shape) []string { return []string{s.Name} },
	PodCount:      func(map[string]any) int { return 1 },
	Pods: func(obj map[string]any) []jobkind.Pods {
		spec, _ := obj["spec"].(map[string]any)
		return []jobkind.Pods{{Count: 1, Spec: spec}}
	},
	// Kueue holds a Pod with a scheduling gate, not a suspend field.
	KueueFramework: "pod",
	Demo: jobkind.Demo{
		Image: "python:3.12-slim", About: "a Python hello, which needs no operator", Command: []string{"python", "-c", "import os; print('hello from', os.uname().nodename)"},
		CommandNote: "the Pod's command",
		Shape:       jobkind.DemoResources,
	},
	New:      func() any { return &corev1.Pod{} },
	Validate: func(any) field.ErrorList { return nil },
}

// PodTemplates: the Pod is its own one pod spec, which mlops-fn fills.
func (Kind) PodTemplates(obj any) []jobnode.PodTemplate {
	o, ok := obj.(*corev1.Pod)
	if !ok {
		return nil
	}
	return []jobnode.PodTemplate{{Path: "spec", Meta: o.ObjectMeta, Spec: o.Spec, Filled: true}}
}
