// SPDX-License-Identifier: Apache-2.0

package processor

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/jobnode"
	"github.com/mlops-fn/mlops-fn/pkg/kinds/trainjob"
	"github.com/mlops-fn/mlops-fn/pkg/render"
)

// trainJobSteps: a TrainJob target's runtime, its own trainer env and the
// runtime patches of other managers.
type trainJobSteps struct{}

var (
	_ jobnode.Narrower     = trainJobSteps{}
	_ jobnode.AfterPatcher = trainJobSteps{}
)

func (trainJobSteps) Narrow(target *yaml.RNode, q *render.Plan, config string) error {
	if q.Trainer.Runtime == "" && jobnode.Scalar(target, "spec", "runtimeRef", "name") == "" {
		// A default here would be written into a hydrated overlay and win over
		// a runtimeRef the base gains later, unnoticed by the guard.
		return fmt.Errorf("names no training runtime (spec.runtimeRef), and neither does the job spec; accepted: spec.trainer.runtime in %s (e.g. %s), or runtimeRef in the TrainJob", config, api.DefaultTrainerRuntime)
	}
	if err := trainerEnvKept(target, q); err != nil {
		return err
	}
	return laterRuntimePatches(target, q)
}

func (trainJobSteps) AfterPatch(job *yaml.RNode, q *render.Plan) error {
	dropStaleTrainerEnv(job, q)
	return nil
}

// trainerEnvKept refuses a TrainJob whose own trainer env names an mlops.env
// key: mlops-fn's entry for it (valueFrom the env ConfigMap) would merge with
// the target's value into a variable the API server refuses; or a PET_*
// variable, which Trainer's webhook refuses, as in spec.env.
func trainerEnvKept(target *yaml.RNode, q *render.Plan) error {
	list, err := target.Pipe(yaml.Lookup("spec", "trainer", "env"))
	if err != nil || list == nil {
		return nil
	}
	elems, _ := list.Elements()
	for i, e := range elems {
		name, _ := e.GetString("name")
		if why := api.TrainerEnvReserved(name); why != "" {
			return fmt.Errorf("spec.trainer.env[%d].name: Invalid value: %q: %s", i, name, why)
		}
		if slices.Contains(q.EnvKeys, name) && !ownEnvEntry(e, name, q) { // an entry of an earlier run is mlops-fn's own
			return fmt.Errorf("spec.trainer.env[%d]: %s is a key of mlops.env too, whose value mlops-fn takes from the env ConfigMap; the TrainJob's own entry would merge with it into one the API server refuses; accepted: the value in mlops.env only (remove the entry from the TrainJob), or another name", i, name)
		}
	}
	return nil
}

// laterRuntimePatches refuses another manager's runtime patch that sets a
// pod field mlops-fn sets for the same replicated job: Trainer applies the
// patches in list order, mlops-fn's first, so theirs would silently win.
func laterRuntimePatches(target *yaml.RNode, q *render.Plan) error {
	patches, err := target.Pipe(yaml.Lookup("spec", "runtimePatches"))
	if err != nil || patches == nil {
		return nil
	}
	ours := map[string]bool{
		"serviceAccountName": q.ServiceAccountName != "", "nodeSelector": len(q.NodeSelector) > 0,
		"tolerations": len(q.Tolerations) > 0, "imagePullSecrets": len(q.ImagePullSecrets) > 0,
	}
	ids := map[string]bool{"runAsUser": q.RunAsUser != nil, "runAsGroup": q.RunAsGroup != nil, "fsGroup": q.FSGroup != nil, "runAsNonRoot": true}
	elems, _ := patches.Elements()
	for i, patch := range elems {
		manager, _ := patch.GetString("manager")
		if manager == trainjob.RuntimePatchManager {
			continue
		}
		for _, job := range q.Trainer.ReplicatedJobs {
			spec, _ := patch.Pipe(yaml.Lookup("trainingRuntimeSpec", "template", "spec", "replicatedJobs", "[name="+job+"]", "template", "spec", "template", "spec"))
			if spec == nil {
				continue
			}
			var clash []string
			for _, f := range slices.Sorted(maps.Keys(ours)) {
				if ours[f] && spec.Field(f) != nil {
					clash = append(clash, f)
				}
			}
			for _, f := range slices.Sorted(maps.Keys(ids)) {
				if ids[f] && jobnode.Scalar(spec, "securityContext", f) != "" {
					clash = append(clash, "securityContext."+f)
				}
			}
			if len(clash) > 0 {
				return fmt.Errorf("spec.runtimePatches[%d] (manager %s) sets %s of replicated job %s, which mlops-fn sets from the job spec and mlops.env; Trainer applies the patches in order and that one, after mlops-fn's, would win; accepted: the setting in one place only (that patch, or the job spec and mlops.env)", i, manager, strings.Join(clash, ", "), job)
			}
		}
	}
	return nil
}

// dropStaleTrainerEnv removes the trainer env entries an earlier run wrote
// for keys mlops.env no longer has: a target patched in place (a kpt
// package) keeps them, and the pods would not start on a ConfigMap key that
// is gone.
func dropStaleTrainerEnv(job *yaml.RNode, q *render.Plan) {
	list, err := job.Pipe(yaml.Lookup("spec", "trainer", "env"))
	if err != nil || list == nil || list.YNode().Kind != yaml.SequenceNode {
		return
	}
	list.YNode().Content = slices.DeleteFunc(list.YNode().Content, func(n *yaml.Node) bool {
		e := yaml.NewRNode(n)
		name, _ := e.GetString("name")
		return ownEnvEntry(e, name, q) && !slices.Contains(q.EnvKeys, name)
	})
}

// ownEnvEntry: e is what mlops-fn writes for key name, its value taken from the env ConfigMap.
func ownEnvEntry(e *yaml.RNode, name string, q *render.Plan) bool {
	return q.NamesEnv(jobnode.Scalar(e, "valueFrom", "configMapKeyRef", "name")) && jobnode.Scalar(e, "valueFrom", "configMapKeyRef", "key") == name && jobnode.Scalar(e, "value") == ""
}
