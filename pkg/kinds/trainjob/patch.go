// SPDX-License-Identifier: Apache-2.0

package trainjob

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/jobnode"
	"github.com/mlops-fn/mlops-fn/pkg/render"
)

// Narrow: a TrainJob target's runtime, its own trainer env and the runtime patches of other managers.
func (Kind) Narrow(target *yaml.RNode, q *render.Plan, config string) error {
	if q.Trainer.Runtime == "" && jobnode.Scalar(target, "spec", "runtimeRef", "name") == "" {
		// A default here would be written into a hydrated overlay and win over a runtimeRef the base gains
		// later, unnoticed by the guard.
		return fmt.Errorf("names no training runtime (spec.runtimeRef), and neither does the job spec; accepted: spec.trainer.runtime in %s (e.g. %s), or runtimeRef in the TrainJob", config, api.DefaultTrainerRuntime)
	}
	if err := trainerEnvKept(target, q); err != nil {
		return err
	}
	return laterRuntimePatches(target, q)
}

// AfterPatch drops the trainer env entries an earlier run wrote for keys mlops.env no longer has: no pod starts
// on a ConfigMap key that is gone.
func (Kind) AfterPatch(job *yaml.RNode, q *render.Plan) error {
	list, err := job.Pipe(yaml.Lookup("spec", "trainer", "env"))
	if err != nil || list == nil || list.YNode().Kind != yaml.SequenceNode {
		return nil
	}
	list.YNode().Content = slices.DeleteFunc(list.YNode().Content, func(n *yaml.Node) bool {
		e := yaml.NewRNode(n)
		name, _ := e.GetString("name")
		return q.OwnEnvEntry(e, name) && !slices.Contains(q.EnvKeys, name)
	})
	return nil
}

// trainerEnvKept refuses a TrainJob whose own trainer env names an mlops.env key (it would merge with mlops-fn's
// entry) or a reserved variable.
func trainerEnvKept(target *yaml.RNode, q *render.Plan) error {
	list, err := target.Pipe(yaml.Lookup("spec", "trainer", "env"))
	if err != nil || list == nil {
		return nil
	}
	elems, _ := list.Elements()
	for i, e := range elems {
		name, _ := e.GetString("name")
		if why := reservedEnv(name); why != "" {
			return fmt.Errorf("spec.trainer.env[%d].name: Invalid value: %q: %s", i, name, why)
		}
		if slices.Contains(q.EnvKeys, name) && !q.OwnEnvEntry(e, name) { // an entry of an earlier run is mlops-fn's own
			return fmt.Errorf("spec.trainer.env[%d]: %s is a key of mlops.env too, whose value mlops-fn takes from the env ConfigMap; the TrainJob's own entry would merge with it into one the API server refuses; accepted: the value in mlops.env only (remove the entry from the TrainJob), or another name", i, name)
		}
	}
	return nil
}

// laterRuntimePatches refuses another manager's runtime patch after mlops-fn's that changes a pod field mlops-fn
// sets: Trainer merges them in order, so it would silently win. A field is changed where merging mlops-fn's
// patch again would change it back.
func laterRuntimePatches(target *yaml.RNode, q *render.Plan) error {
	job := &trainer.TrainJob{}
	if b, err := jobnode.JSON(target); err != nil || json.Unmarshal(b, job) != nil {
		return nil
	}
	if !slices.ContainsFunc(job.Spec.RuntimePatches, func(p trainer.RuntimePatch) bool { return p.Manager != RuntimePatchManager }) {
		return nil
	}
	ours, _ := q.Patch().Object.(*trainer.TrainJob)
	if ours == nil || len(ours.Spec.RuntimePatches) == 0 {
		return nil
	}
	own := ours.Spec.RuntimePatches[0]
	patches := slices.Clone(job.Spec.RuntimePatches)
	if i := slices.IndexFunc(patches, func(p trainer.RuntimePatch) bool { return p.Manager == RuntimePatchManager }); i >= 0 {
		patches[i] = own
	} else {
		patches = append([]trainer.RuntimePatch{own}, patches...)
	}
	var spec jobset.JobSetSpec
	after, offset := false, len(patches)-len(job.Spec.RuntimePatches)
	for i, patch := range patches {
		merged := mergeRuntimePatch(&spec, patch)
		if patch.Manager == RuntimePatchManager {
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

// podSpecOf is replicated job name's pod spec, as JSON's values.
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

// changed are the paths below at where got and want differ, sorted, a list's items by name where they have one.
// want is got with a patch merged over it, so it has every key got has.
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

// unnamed: v is not an object with a name.
func unnamed(v any) bool {
	m, _ := v.(map[string]any)
	_, ok := m["name"].(string)
	return !ok
}

// mergeRuntimePatch merges patch into spec as Kubeflow Trainer v2.3.0's unexported mergeRuntimePatches does;
// false for a patch of no JobSet spec, which Trainer skips, or one that does not merge, which it refuses.
func mergeRuntimePatch(spec *jobset.JobSetSpec, patch trainer.RuntimePatch) bool {
	if patch.TrainingRuntimeSpec == nil || patch.TrainingRuntimeSpec.Template == nil || patch.TrainingRuntimeSpec.Template.Spec == nil {
		return false
	}
	// Typed objects with string map keys: their encoding does not fail.
	source, _ := json.Marshal(spec)
	b, _ := json.Marshal(patch.TrainingRuntimeSpec.Template.Spec)
	merged, err := strategicpatch.StrategicMergePatch(source, b, jobset.JobSetSpec{})
	var out jobset.JobSetSpec
	if err != nil || json.Unmarshal(merged, &out) != nil {
		return false
	}
	*spec = out
	return true
}

// PodTemplates are a TrainJob's pod specs: its runtime patches merged as Trainer merges them, one per replicated job.
func (Kind) PodTemplates(obj any) []jobnode.PodTemplate {
	o, ok := obj.(*trainer.TrainJob)
	if !ok {
		return nil
	}
	var pods []jobnode.PodTemplate
	byJob := map[string]int{}
	var patches [][]string // each pod's patches' indexes
	var spec jobset.JobSetSpec
	for i, patch := range o.Spec.RuntimePatches {
		if !mergeRuntimePatch(&spec, patch) {
			continue
		}
		for _, rj := range patch.TrainingRuntimeSpec.Template.Spec.ReplicatedJobs {
			if rj.Template == nil || rj.Template.Spec == nil || rj.Template.Spec.Template == nil {
				continue
			}
			n, seen := byJob[rj.Name]
			if !seen {
				n, byJob[rj.Name] = len(pods), len(pods)
				pods = append(pods, jobnode.PodTemplate{Role: jobkind.Role(rj.Name)})
				patches = append(patches, nil)
			}
			patches[n] = append(patches[n], strconv.Itoa(i))
			pods[n].Path = fmt.Sprintf("spec.runtimePatches[%s].trainingRuntimeSpec.template.spec.replicatedJobs[name=%s].template.spec.template.spec", strings.Join(patches[n], ","), rj.Name)
			pods[n].Filled = pods[n].Filled || patch.Manager == RuntimePatchManager
		}
	}
	for _, rj := range spec.ReplicatedJobs {
		if n, ok := byJob[rj.Name]; ok {
			t := rj.Template.Spec.Template
			pods[n].Meta, pods[n].Spec = t.ObjectMeta, t.Spec
		}
	}
	return pods
}
