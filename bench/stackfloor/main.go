// SPDX-License-Identifier: Apache-2.0

// Command stackfloor is the least a kyaml function built on the upstream
// job types and kyaml's strategic merge pays: kyaml's pass-through, plus one
// MPIJob encoded from the operator's Go types, merged into the input's
// skeleton with mlops-fn's schema (schema.Merge), and decoded back strictly.
package main

import (
	"encoding/json"
	"os"

	v2beta1 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	corev1 "k8s.io/api/core/v1"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/fn/framework/command"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/mlops-fn/mlops-fn/pkg/schema"
)

func main() {
	mergeOne := framework.ResourceListProcessorFunc(func(rl *framework.ResourceList) error {
		job := &v2beta1.MPIJob{}
		job.APIVersion, job.Kind, job.Name = "kubeflow.org/v2beta1", "MPIJob", "resnet50-training"
		pod := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "resnet50-training", Image: "docker.io/intel/model-zoo:1", Command: []string{"mpirun", "-np", "4"}}}}}
		job.Spec.MPIReplicaSpecs = map[v2beta1.MPIReplicaType]*v2beta1.ReplicaSpec{"Launcher": {Template: pod}, "Worker": {Template: pod}}
		b, err := json.Marshal(job)
		if err != nil {
			return err
		}
		patch, err := yaml.Parse(string(b))
		if err != nil {
			return err
		}
		for i, it := range rl.Items {
			if it.GetKind() != "MPIJob" {
				continue
			}
			merged, err := schema.Merge(patch, it, yaml.MergeOptions{ListIncreaseDirection: yaml.MergeOptionsListAppend})
			if err != nil {
				return err
			}
			out, err := merged.MarshalJSON()
			if err != nil {
				return err
			}
			if _, err := sigsjson.UnmarshalStrict(out, &v2beta1.MPIJob{}); err != nil {
				return err
			}
			rl.Items[i] = merged
		}
		return nil
	})
	if err := command.Build(mergeOne, command.StandaloneDisabled, false).Execute(); err != nil {
		os.Exit(1)
	}
}
