// Package apply takes a hydrated overlay to a cluster through kubectl, so
// that an edit reaches a running job whole or not at all: kubectl apply -k
// alone patches a live job in place (the mpi-operator adds a worker beside
// the old ones and keeps the launcher's old rank count) or stops half way
// (a TrainJob's trainer is immutable, after its ConfigMap changed).
package apply

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os/exec"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/mlops-fn/mlops-fn/pkg/hydrate"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
)

// Options say which overlay goes to which cluster.
type Options struct {
	// Dir is the hydrated overlay.
	Dir string
	// Kubectl is the kubectl binary. Default: kubectl on PATH.
	Kubectl string
	// Flags are kubectl's own flags for every call: --namespace, --context, --kubeconfig.
	Flags []string
	// Replace deletes a live job the overlay changes (waiting for its pods to
	// go) before applying.
	Replace bool
}

// Result says what Apply did.
type Result struct {
	// Job is the overlay's job, KIND/NAME.
	Job string
	// Action: "created", "unchanged", "scaled" (an elastic job within its
	// bounds), "replaced".
	Action string
	// Changes are the fields the edit changes in the live job.
	Changes []string
}

// Refused is the error of an edit that would change a live job in place:
// nothing was applied.
type Refused struct {
	Job, Dir string
	Finished string // the live job's final condition, "" while it runs
	Changes  []string
	Command  string
}

func (r *Refused) Error() string {
	state := "is running (or waiting to)"
	if r.Finished != "" {
		state = "finished (" + r.Finished + ")"
	}
	what := fmt.Sprintf("%s %s, and the overlay %s changes it: %s", r.Job, state, r.Dir, strings.Join(r.Changes, "; "))
	if r.Finished != "" {
		return what + "; nothing was applied: an edit of a finished job is a new run: " + r.Command + " deletes the finished job (its pods and logs) and applies the new one"
	}
	return what + "; nothing was applied: kubectl apply would leave the job running a mix of the old and the new render; " + r.Command + " deletes the running job, waits for its pods to go, and applies the new one"
}

// object is a Kubernetes object as JSON.
type object = map[string]any

// Apply applies the hydrated overlay o.Dir when the live job, if any, is
// unchanged by it (or an elastic job only scales within its bounds), and
// otherwise refuses, changing nothing, unless o.Replace. The objects are
// checked first by a server-side dry run, so whatever the API server or a
// webhook refuses leaves the cluster as it was.
func Apply(o Options) (*Result, error) {
	k := kubectl{bin: o.Kubectl, flags: o.Flags}
	dry, err := k.list(k.apply(o.Dir, "--dry-run=server", "-o", "json")...)
	job := findJob(dry)
	if job == nil && err == nil {
		return nil, fmt.Errorf("%s builds no job of the kinds mlops-fn renders (%s)", o.Dir, strings.Join(kinds(), ", "))
	}
	var live object
	if job != nil || err != nil {
		// The job's kind and name come from the overlay's build when the dry run failed.
		if job == nil {
			built, berr := k.list("apply", "-k", o.Dir, "--dry-run=client", "-o", "json")
			if berr != nil {
				return nil, berr
			}
			job = findJob(built)
		}
		if job != nil {
			if live, err = k.get(job); err != nil {
				return nil, err
			}
		}
	}
	res := &Result{}
	if job != nil {
		res.Job = id(job)
	}
	command := "mlops-fn apply --replace " + strings.Join(append(slices.Clone(o.Flags), o.Dir), " ")
	if live == nil {
		if err != nil {
			return nil, err
		}
		res.Action = "created"
		return res, k.run(k.apply(o.Dir)...)
	}
	if err != nil {
		// The live job refuses the change (an immutable field, a webhook).
		if !o.Replace {
			return nil, &Refused{Job: res.Job, Dir: o.Dir, Finished: finished(live), Changes: []string{"the API server refuses it in place: " + firstLine(err)}, Command: command}
		}
		res.Changes = []string{firstLine(err)}
	} else {
		res.Changes = changes(live, job, configMaps(dry), k)
		switch {
		case len(res.Changes) == 0:
			res.Action = "unchanged"
			return res, k.run(k.apply(o.Dir)...)
		case scalesWithin(live, job, res.Changes) && finished(live) == "":
			res.Action = "scaled"
			return res, k.run(k.apply(o.Dir)...)
		case !o.Replace:
			return nil, &Refused{Job: res.Job, Dir: o.Dir, Finished: finished(live), Changes: res.Changes, Command: command}
		}
	}
	if err := k.run("delete", kindOf(job), name(job), "--namespace", namespace(live), "--cascade=foreground", "--wait=true"); err != nil {
		return nil, err
	}
	res.Action = "replaced"
	return res, k.run(k.apply(o.Dir)...)
}

// changes are the fields the edit changes in the live job (spec, labels)
// and in its env ConfigMaps (data keys): each "path: old → new".
func changes(live, job object, configs []object, k kubectl) []string {
	var out []string
	diff("spec", withoutPatchTimes(live["spec"]), withoutPatchTimes(job["spec"]), &out)
	diff("metadata.labels", meta(live)["labels"], meta(job)["labels"], &out)
	for _, cm := range configs {
		old, err := k.get(cm)
		if err != nil || old == nil {
			continue
		}
		diff("ConfigMap/"+name(cm)+" data", old["data"], cm["data"], &out)
	}
	return out
}

// withoutPatchTimes is a job's spec without the time of each TrainJob
// runtime patch: Trainer's webhook writes it (for observability only), and a
// dry run of an unchanged patch may come back without it.
func withoutPatchTimes(spec any) any {
	m, ok := spec.(map[string]any)
	if !ok || m["runtimePatches"] == nil {
		return spec
	}
	out := maps.Clone(m)
	patches, _ := m["runtimePatches"].([]any)
	var kept []any
	for _, p := range patches {
		if pm, ok := p.(map[string]any); ok {
			pm = maps.Clone(pm)
			delete(pm, "time")
			p = pm
		}
		kept = append(kept, p)
	}
	out["runtimePatches"] = kept
	return out
}

// diff appends the paths where a and b differ, with both values.
func diff(path string, a, b any, out *[]string) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			diff(path+"."+k, am[k], bm[k], out)
		}
		return
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if aok && bok {
		for i := range max(len(al), len(bl)) {
			var ai, bi any
			if i < len(al) {
				ai = al[i]
			}
			if i < len(bl) {
				bi = bl[i]
			}
			diff(fmt.Sprintf("%s[%d]", path, i), ai, bi, out)
		}
		return
	}
	if !reflect.DeepEqual(a, b) {
		*out = append(*out, fmt.Sprintf("%s: %s → %s", path, brief(a), brief(b)))
	}
}

func brief(v any) string {
	if v == nil {
		return "(none)"
	}
	b, _ := json.Marshal(v)
	if len(b) > 200 {
		return string(b[:197]) + "…"
	}
	return string(b)
}

// scalesWithin: the only changes are an elastic PyTorchJob's worker count,
// within its elasticPolicy's bounds (and WORKERS in its env ConfigMap): the
// training-operator and torchrun re-form the group, as they do for a lost worker.
func scalesWithin(live, job object, changes []string) bool {
	if kindOf(job) != jobkind.ForMode(jobkind.Elastic).Kind {
		return false
	}
	const replicas = "spec.pytorchReplicaSpecs.Worker.replicas: "
	for _, c := range changes {
		if !strings.HasPrefix(c, replicas) && !strings.Contains(c, " data.WORKERS: ") {
			return false
		}
	}
	policy, _ := lookup(job, "spec", "elasticPolicy").(map[string]any)
	n, _ := lookup(job, "spec", "pytorchReplicaSpecs", "Worker", "replicas").(float64)
	lo, _ := policy["minReplicas"].(float64)
	hi, _ := policy["maxReplicas"].(float64)
	return policy != nil && reflect.DeepEqual(lookup(live, "spec", "elasticPolicy"), lookup(job, "spec", "elasticPolicy")) && n >= lo && n <= hi
}

// finished is the live job's final condition (Succeeded, Failed, Complete),
// or a Pod's final phase; "" while it runs or waits.
func finished(live object) string {
	status, _ := live["status"].(map[string]any)
	if phase, _ := status["phase"].(string); phase == "Succeeded" || phase == "Failed" {
		return phase
	}
	conditions, _ := status["conditions"].([]any)
	for _, c := range conditions {
		m, _ := c.(map[string]any)
		t, _ := m["type"].(string)
		if m["status"] == "True" && (t == "Succeeded" || t == "Failed" || t == "Complete") {
			return t
		}
	}
	return ""
}

// findJob is the object of a job kind among items.
func findJob(items []object) object {
	for _, it := range items {
		if jobkind.Is(kindOf(it)) {
			return it
		}
	}
	return nil
}

// configMaps are the ConfigMaps among items.
func configMaps(items []object) []object {
	var out []object
	for _, it := range items {
		if kindOf(it) == "ConfigMap" {
			out = append(out, it)
		}
	}
	return out
}

func kinds() []string {
	var out []string
	for _, k := range jobkind.Kinds {
		out = append(out, k.Kind)
	}
	return out
}

func lookup(o any, path ...string) any {
	for _, p := range path {
		m, _ := o.(map[string]any)
		o = m[p]
	}
	return o
}

func meta(o object) map[string]any {
	m, _ := o["metadata"].(map[string]any)
	return m
}

func kindOf(o object) string    { s, _ := o["kind"].(string); return s }
func name(o object) string      { s, _ := meta(o)["name"].(string); return s }
func namespace(o object) string { s, _ := meta(o)["namespace"].(string); return s }
func id(o object) string        { return kindOf(o) + "/" + name(o) }

func firstLine(err error) string {
	s, _, _ := strings.Cut(strings.TrimSpace(err.Error()), "\n")
	return s
}

// fieldManager owns what mlops-fn applies. Server-side apply merges lists
// by their keys, so another manager's entries stay (Kueue's runtime patch
// of a TrainJob), where a client-side apply would replace the list.
const fieldManager = "mlops-fn"

// apply are the arguments of a server-side apply of dir: the fields
// mlops-fn renders are its own, whoever applied them before.
func (k kubectl) apply(dir string, more ...string) []string {
	return append([]string{"apply", "-k", dir, "--server-side", "--force-conflicts", "--field-manager=" + fieldManager}, more...)
}

// kubectl runs kubectl with the user's flags.
type kubectl struct {
	bin   string
	flags []string
}

func (k kubectl) command(args ...string) *exec.Cmd {
	bin := k.bin
	if bin == "" {
		bin = "kubectl"
	}
	return exec.Command(bin, append(slices.Clone(k.flags), args...)...)
}

// run runs kubectl, its output to the caller's terminal through the error.
func (k kubectl) run(args ...string) error {
	out, err := k.command(args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("kubectl %s: %s", strings.Join(args, " "), strings.TrimSpace(string(out)))
	}
	return nil
}

// list runs kubectl for JSON output: one object or a List of them.
func (k kubectl) list(args ...string) ([]object, error) {
	var stdout, stderr bytes.Buffer
	cmd := k.command(args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("kubectl %s: %s", strings.Join(args, " "), strings.TrimSpace(stderr.String()))
	}
	var o object
	if err := json.Unmarshal(stdout.Bytes(), &o); err != nil {
		return nil, fmt.Errorf("kubectl %s: %w", strings.Join(args, " "), err)
	}
	if items, ok := o["items"].([]any); ok && kindOf(o) == "List" {
		var out []object
		for _, it := range items {
			if m, ok := it.(map[string]any); ok {
				out = append(out, m)
			}
		}
		return out, nil
	}
	return []object{o}, nil
}

// get reads the live object named like o (in o's namespace, else kubectl's),
// nil when there is none.
func (k kubectl) get(o object) (object, error) {
	args := []string{"get", kindOf(o), name(o), "-o", "json", "--ignore-not-found"}
	if ns := namespace(o); ns != "" {
		args = append(args, "--namespace", ns)
	}
	var stdout, stderr bytes.Buffer
	cmd := k.command(args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("kubectl %s: %s", strings.Join(args, " "), strings.TrimSpace(stderr.String()))
	}
	if len(bytes.TrimSpace(stdout.Bytes())) == 0 {
		return nil, nil
	}
	var live object
	return live, json.Unmarshal(stdout.Bytes(), &live)
}

// Delete deletes what the overlay o.Dir applied, as `kubectl delete -k`
// would, also after an edit that was not hydrated (whose build the guard
// fails): the objects of the overlay as the last hydrate wrote it.
func Delete(o Options) error {
	items, err := hydrate.Applied(o.Dir)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	for _, it := range items {
		s, err := it.String()
		if err != nil {
			return err
		}
		b.WriteString("---\n" + s)
	}
	k := kubectl{bin: o.Kubectl, flags: o.Flags}
	cmd := k.command("delete", "-f", "-", "--ignore-not-found", "--wait=true")
	cmd.Stdin = &b
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("kubectl delete: %s", strings.TrimSpace(string(out)))
	}
	return nil
}
