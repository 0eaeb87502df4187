// SPDX-License-Identifier: Apache-2.0

package jobkind

import (
	"maps"
	"reflect"
	"slices"
)

// FinalConditions end a job of an operator's kind when True (a TrainJob's Complete, a JobSet's Completed, the
// others' Succeeded): nothing runs then to change in place. Successes first: status names the phase by the first.
var FinalConditions = []string{"Succeeded", "Complete", "Completed", "Failed"}

// EnvNames are the fields of a pod spec that name a ConfigMap a container reads ("*": each item of a list):
// the env ConfigMap is named by a hash of mlops.env's data, so a scale (WORKERS) gives it a new name.
var EnvNames = [][]string{
	{"containers", "*", "envFrom", "*", "configMapRef", "name"},
	{"containers", "*", "env", "*", "valueFrom", "configMapKeyRef", "name"},
	{"initContainers", "*", "envFrom", "*", "configMapRef", "name"},
	{"initContainers", "*", "env", "*", "valueFrom", "configMapKeyRef", "name"},
}

// Free are the fields a scale of the kind may change ("*": each item): the worker count and the env ConfigMap names.
func (k Facts) Free() [][]string {
	if k.Scale == nil {
		return nil
	}
	out := [][]string{k.Scale.Replicas}
	for _, s := range k.PodSpecs {
		for _, n := range EnvNames {
			out = append(out, slices.Concat(s.Path, n))
		}
	}
	return out
}

// InPlace is the kind's rule for a running job, live, updated to job (decoded JSON): its spec unchanged, or a
// scale to a worker count within Scale.Min and Max that changes nothing else but Free. A new env ConfigMap name
// alone (OUTPUT_DIR edited) is no scale; a kind without Scale (an MPIJob: mpirun keeps its rank count) changes
// nothing in place. deploy/admission's policy is this rule in CEL.
func (k Facts) InPlace(live, job map[string]any) bool {
	if reflect.DeepEqual(live["spec"], job["spec"]) {
		return true
	}
	s := k.Scale
	if s == nil {
		return false
	}
	n, ok := number(Nested(job, s.Replicas...))
	was, wasSet := number(Nested(live, s.Replicas...))
	lo, okLo := number(Nested(job, s.Min...))
	hi, okHi := number(Nested(job, s.Max...))
	if !ok || wasSet && n == was || !okLo || !okHi || n < lo || n > hi {
		return false
	}
	var l, j any = live, job
	for _, p := range k.Free() {
		l, j = Drop(l, p...), Drop(j, p...)
	}
	return reflect.DeepEqual(Nested(l, "spec"), Nested(j, "spec"))
}

// Drop is v (decoded JSON) without the field at path ("*": each item), copied where it differs.
func Drop(v any, path ...string) any {
	switch t := v.(type) {
	case map[string]any:
		next, ok := t[path[0]]
		if !ok {
			return v
		}
		out := maps.Clone(t)
		if len(path) == 1 {
			delete(out, path[0])
		} else {
			out[path[0]] = Drop(next, path[1:]...)
		}
		return out
	case []any:
		if path[0] != "*" || len(path) == 1 {
			return v
		}
		var out []any
		for _, e := range t {
			out = append(out, Drop(e, path[1:]...))
		}
		return out
	}
	return v
}

// number is a JSON number as the API server's objects hold it (int64, as client-go decodes them) or as
// encoding/json decodes it (float64).
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}
