// SPDX-License-Identifier: Apache-2.0

package pod

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
)

// facts: the single-node job: a Pod, the job itself, with no operator.
var facts = jobkind.Facts{
	Kind: string(jobkind.Pod), APIVersion: "v1", PatchFile: "pod-patch.yaml",
	PodSpecs:      []jobkind.PodSpec{{Role: jobkind.Single, Path: []string{"spec"}}},
	RestartPolicy: corev1.RestartPolicyNever,
	Carries:       []string{"imagePullPolicy", "workingDir", "priorityClassName", "hostNetwork", "restartPolicy"},
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
