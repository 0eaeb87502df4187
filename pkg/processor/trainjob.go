// SPDX-License-Identifier: Apache-2.0

package processor

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"
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

// laterRuntimePatches refuses another manager's runtime patch that changes
// a pod field mlops-fn sets for a replicated job: Trainer merges the patches
// in list order, mlops-fn's first (or where the target has it), so one after
// it would silently win. A field is changed when merging mlops-fn's patch
// again over Trainer's result so far would change it back.
func laterRuntimePatches(target *yaml.RNode, q *render.Plan) error {
	job, _ := decoded(target).(*trainer.TrainJob)
	if job == nil || !slices.ContainsFunc(job.Spec.RuntimePatches, func(p trainer.RuntimePatch) bool { return p.Manager != trainjob.RuntimePatchManager }) {
		return nil
	}
	ours, _ := q.Patch().Object.(*trainer.TrainJob)
	if ours == nil || len(ours.Spec.RuntimePatches) == 0 {
		return nil
	}
	own := ours.Spec.RuntimePatches[0]
	patches := slices.Clone(job.Spec.RuntimePatches)
	if i := slices.IndexFunc(patches, func(p trainer.RuntimePatch) bool { return p.Manager == trainjob.RuntimePatchManager }); i >= 0 {
		patches[i] = own
	} else {
		patches = append([]trainer.RuntimePatch{own}, patches...)
	}
	var spec jobset.JobSetSpec
	after, offset := false, len(patches)-len(job.Spec.RuntimePatches)
	for i, patch := range patches {
		merged := mergeRuntimePatch(&spec, patch)
		if patch.Manager == trainjob.RuntimePatchManager {
			after = true
			continue
		}
		if !merged || !after {
			continue
		}
		again := *spec.DeepCopy()
		mergeRuntimePatch(&again, own)
		for _, name := range q.Trainer.ReplicatedJobs {
			if clash := changed("", podSpecOf(spec, name), podSpecOf(again, name)); len(clash) > 0 {
				return fmt.Errorf("spec.runtimePatches[%d] (manager %s) sets %s of replicated job %s, which mlops-fn sets from the job spec and mlops.env; Trainer applies the patches in order and that one, after mlops-fn's, would win; accepted: the setting in one place only (that patch, or the job spec and mlops.env)", i-offset, patch.Manager, strings.Join(clash, ", "), name)
			}
		}
	}
	return nil
}

// podSpecOf is replicated job name's pod spec in spec, as JSON's values.
func podSpecOf(spec jobset.JobSetSpec, name string) any {
	for _, rj := range spec.ReplicatedJobs {
		if rj.Name == name {
			var out any
			if b, err := json.Marshal(rj.Template.Spec.Template.Spec); err == nil && json.Unmarshal(b, &out) == nil {
				return out
			}
		}
	}
	return nil
}

// changed are the paths below at where got and want differ, sorted: an
// object's keys, a list's items by name where they have one. want is got
// with a patch merged over it, so it has every key got has.
func changed(at string, got, want any) []string {
	var out []string
	switch w := want.(type) {
	case map[string]any:
		g, _ := got.(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(w)) {
			out = append(out, changed(strings.TrimPrefix(at+"."+k, "."), g[k], w[k])...)
		}
		return out
	case []any:
		if g, _ := got.([]any); len(g) == len(w) && slices.IndexFunc(w, unnamed) < 0 && slices.IndexFunc(g, unnamed) < 0 {
			for i := range w {
				out = append(out, changed(fmt.Sprintf("%s[name=%s]", at, w[i].(map[string]any)["name"]), g[i], w[i])...)
			}
			return out
		}
	}
	if !reflect.DeepEqual(got, want) {
		out = append(out, at)
	}
	return out
}

// unnamed: v is not an object with a name, as a list item merged by name is.
func unnamed(v any) bool {
	m, _ := v.(map[string]any)
	_, ok := m["name"].(string)
	return !ok
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

// mergeRuntimePatch merges patch into spec as Kubeflow Trainer v2.3.0 does
// (TrainingRuntime.mergeRuntimePatches in pkg/runtime/core, unexported
// there): a strategic merge of its JSON over jobset's JobSetSpec. False for
// a patch of no JobSet spec, which Trainer skips, or one that does not
// merge, which Trainer refuses (strict decoding has caught it before).
func mergeRuntimePatch(spec *jobset.JobSetSpec, patch trainer.RuntimePatch) bool {
	if patch.TrainingRuntimeSpec == nil || patch.TrainingRuntimeSpec.Template == nil || patch.TrainingRuntimeSpec.Template.Spec == nil {
		return false
	}
	source, err := json.Marshal(spec)
	if err != nil {
		return false
	}
	b, err := json.Marshal(patch.TrainingRuntimeSpec.Template.Spec)
	if err != nil {
		return false
	}
	merged, err := strategicpatch.StrategicMergePatch(source, b, jobset.JobSetSpec{})
	if err != nil {
		return false
	}
	var out jobset.JobSetSpec
	if json.Unmarshal(merged, &out) != nil {
		return false
	}
	*spec = out
	return true
}
