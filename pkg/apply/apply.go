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
	"strings"
	"time"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/mlops-fn/mlops-fn/pkg/fielddiff"
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

// Apply applies the hydrated overlay o.Dir when its live jobs, if any, are
// unchanged by it (or an elastic job only scales within its bounds), and
// otherwise refuses, changing nothing, unless o.Replace. With a live job,
// every object first goes through a dry run on the server: what the API
// server or a webhook refuses is refused before anything is written.
func Apply(o Options) (*Result, error) {
	k := kubectl{bin: o.Kubectl, flags: o.Flags}
	built, err := k.built(o.Dir)
	if err != nil {
		return nil, err
	}
	var jobs, lives []object
	for _, it := range built {
		if !jobkind.Is(kindOf(it)) {
			continue
		}
		live, err := k.get(it)
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, it)
		if live != nil {
			lives = append(lives, live)
		}
	}
	if len(jobs) == 0 {
		return nil, fmt.Errorf("%s builds no job of the kinds mlops-fn renders (%s)", o.Dir, strings.Join(kinds(), ", "))
	}
	res := &Result{Job: id(jobs[0])}
	if len(lives) == 0 {
		// No job runs that an edit could reach half: applied in kubectl's
		// order, the objects a job needs (its ServiceAccount) before it, which
		// a dry run cannot see.
		res.Action = "created"
		return res, k.run(k.apply(o.Dir)...)
	}
	dry, dryErr := k.list(k.apply(o.Dir, "--dry-run=server", "-o", "json")...)
	refused := func() *Refused {
		return &Refused{Job: id(lives[0]), Dir: o.Dir, Finished: finished(lives[0]), Changes: res.Changes,
			Command: "mlops-fn apply --replace " + strings.Join(append(slices.Clone(o.Flags), o.Dir), " ")}
	}
	if dryErr != nil {
		// A live job refuses the change in place (an immutable field, a webhook).
		res.Changes = []string{"the API server refuses it in place: " + firstLine(dryErr)}
		if !o.Replace {
			return nil, refused()
		}
	} else {
		if res.Changes, err = changes(lives, dry, built, k); err != nil {
			return nil, err
		}
		scales := true
		for _, live := range lives {
			scales = scales && finished(live) == "" && scalesWithin(live, find(dry, live), res.Changes)
		}
		switch {
		case len(res.Changes) == 0:
			res.Action = "unchanged"
			return res, k.run(k.apply(o.Dir)...)
		case scales:
			res.Action = "scaled"
			return res, k.run(k.apply(o.Dir)...)
		case !o.Replace:
			return nil, refused()
		}
	}
	for _, live := range lives {
		if err := k.run("delete", kindOf(live), name(live), "--namespace", namespace(live), "--wait=true"); err != nil {
			return nil, err
		}
		if err := k.podsGone(kindOf(live), name(live), namespace(live)); err != nil {
			return nil, err
		}
	}
	if _, err := k.list(k.apply(o.Dir, "--dry-run=server", "-o", "json")...); err != nil {
		return nil, fmt.Errorf("deleted %s, but the new job is refused too, so nothing else was applied: %w", id(lives[0]), err)
	}
	res.Action = "replaced"
	return res, k.run(k.apply(o.Dir)...)
}

// changes are what the apply would change in the live jobs (their spec and
// labels, as the dry run has them) and in the overlay's ConfigMaps (their
// data, as built: the apply makes it exactly that): each "path: old → new".
func changes(lives, dry, built []object, k kubectl) ([]string, error) {
	var out []string
	for _, live := range lives {
		job := find(dry, live)
		if job == nil {
			return nil, fmt.Errorf("the dry run returned no %s", id(live))
		}
		prefix := ""
		if len(lives) > 1 {
			prefix = id(live) + " "
		}
		diff(prefix+"spec", withoutPatchTimes(live["spec"]), withoutPatchTimes(job["spec"]), &out)
		diff(prefix+"metadata.labels", meta(live)["labels"], meta(job)["labels"], &out)
	}
	for _, cm := range configMaps(built) {
		old, err := k.get(cm)
		if err != nil {
			return nil, err
		}
		if old == nil {
			out = append(out, "ConfigMap/"+name(cm)+": (none) → created")
			continue
		}
		diff("ConfigMap/"+name(cm)+" data", old["data"], cm["data"], &out)
	}
	return out, nil
}

// find is the object of items of the same kind and name as o, nil if none.
func find(items []object, o object) object {
	for _, it := range items {
		if kindOf(it) == kindOf(o) && name(it) == name(o) {
			return it
		}
	}
	return nil
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

// diff appends the paths where a and b differ, each "path: a → b".
func diff(path string, a, b any, out *[]string) {
	for _, c := range fielddiff.Trees(path, a, b) {
		*out = append(*out, fmt.Sprintf("%s: %s → %s", c.Path, fielddiff.Brief(c.Old), fielddiff.Brief(c.New)))
	}
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

// output runs kubectl and returns its stdout; the error carries its stderr.
func (k kubectl) output(args ...string) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	cmd := k.command(args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("kubectl %s: %s", strings.Join(args, " "), strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// built are the objects of the overlay as kubectl builds them: what the
// apply sends.
func (k kubectl) built(dir string) ([]object, error) {
	out, err := k.output("kustomize", dir)
	if err != nil {
		return nil, err
	}
	nodes, err := kio.FromBytes(out)
	if err != nil {
		return nil, fmt.Errorf("kubectl kustomize %s: %w", dir, err)
	}
	var objects []object
	for _, n := range nodes {
		b, err := n.MarshalJSON()
		var o object
		if err == nil {
			err = json.Unmarshal(b, &o)
		}
		if err != nil {
			return nil, fmt.Errorf("kubectl kustomize %s: %w", dir, err)
		}
		objects = append(objects, o)
	}
	return objects, nil
}

// list runs kubectl for JSON output: one object or a List of them.
func (k kubectl) list(args ...string) ([]object, error) {
	out, err := k.output(args...)
	if err != nil {
		return nil, err
	}
	var o object
	if err := json.Unmarshal(out, &o); err != nil {
		return nil, fmt.Errorf("kubectl %s: %w", strings.Join(args, " "), err)
	}
	if items, ok := o["items"].([]any); ok && kindOf(o) == "List" {
		var objects []object
		for _, it := range items {
			if m, ok := it.(map[string]any); ok {
				objects = append(objects, m)
			}
		}
		return objects, nil
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
	out, err := k.output(args...)
	if err != nil || len(bytes.TrimSpace(out)) == 0 {
		return nil, err
	}
	var live object
	return live, json.Unmarshal(out, &live)
}

// Delete deletes the jobs the overlay o.Dir applies and the ConfigMaps they
// read their environment from, waiting for their pods to go; also after an
// edit of job.yaml or mlops.env that was not hydrated, whose build the guard
// fails (the component as the last hydrate wrote it). The base's other
// objects (a ServiceAccount other jobs share) stay.
func Delete(o Options) error {
	items, err := hydrate.Applied(o.Dir)
	if err != nil {
		return err
	}
	found, err := jobsOf(o.Dir, items)
	if err != nil {
		return err
	}
	var jobs []*yaml.RNode
	read := map[string]bool{}
	for _, j := range found {
		jobs = append(jobs, j.Node)
		for _, cm := range j.EnvConfigMaps {
			read[j.Namespace+"/"+cm] = true
		}
	}
	for _, it := range items {
		if it.GetKind() == "ConfigMap" && read[it.GetNamespace()+"/"+it.GetName()] {
			jobs = append(jobs, it)
		}
	}
	var b bytes.Buffer
	for _, it := range jobs {
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
	for _, job := range jobs {
		if err := k.podsGone(job.GetKind(), job.GetName(), job.GetNamespace()); err != nil {
			return err
		}
	}
	return nil
}

// Job is a job a hydrated overlay applies.
type Job struct {
	Kind, Name string
	// Namespace is the overlay's ("": the one kubectl's flags or context give).
	Namespace string
	// EnvConfigMaps are the ConfigMaps its containers read their environment
	// from: mlops.env's.
	EnvConfigMaps []string
	// Node is the job as the overlay builds it.
	Node *yaml.RNode
}

// Jobs are the jobs the hydrated overlay dir applies, as the last hydrate
// wrote its patches (so also after an edit not yet hydrated): what apply
// applied, delete deletes, and status and logs look for.
func Jobs(dir string) ([]Job, error) {
	items, err := hydrate.Applied(dir)
	if err != nil {
		return nil, err
	}
	return jobsOf(dir, items)
}

func jobsOf(dir string, items []*yaml.RNode) ([]Job, error) {
	var jobs []Job
	for _, it := range items {
		if jobkind.Is(it.GetKind()) {
			jobs = append(jobs, Job{Kind: it.GetKind(), Name: it.GetName(), Namespace: it.GetNamespace(), EnvConfigMaps: envConfigMaps(it), Node: it})
		}
	}
	if len(jobs) == 0 {
		return nil, fmt.Errorf("%s builds no job of the kinds mlops-fn renders (%s)", dir, strings.Join(kinds(), ", "))
	}
	return jobs, nil
}

// podsGone waits until no pod of the deleted job kind/name is left. The jobs
// are deleted in the background, not in the foreground: Trainer v2.3 keeps
// reconciling a TrainJob whose foreground delete has begun, failing on its
// JobSet, and the garbage collector took 90 s to win; in the background the
// TrainJob goes at once, and its JobSet, Jobs and pods after it.
func (k kubectl) podsGone(kind, job, namespace string) error {
	jk, ok := jobkind.ForKind(kind)
	if !ok || jk.PodsLabel == "" {
		return nil // not a job, or a Pod: kubectl delete --wait waited for it
	}
	args := []string{"get", "pods", "-l", jk.PodsLabel + "=" + job, "-o", "name"}
	if namespace != "" {
		args = append(args, "--namespace", namespace)
	}
	deadline := time.Now().Add(podsGoneTimeout)
	for {
		out, err := k.output(args...)
		switch {
		case err != nil:
			return err
		case len(bytes.TrimSpace(out)) == 0:
			return nil
		case time.Now().After(deadline):
			return fmt.Errorf("deleted %s/%s, but after %s its pods are still there: %s", kind, job, podsGoneTimeout, strings.Join(strings.Fields(string(out)), ", "))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// podsGoneTimeout bounds the wait for a deleted job's pods: their grace period
// (30 s by default) and the garbage collector's turn.
const podsGoneTimeout = 5 * time.Minute

// envConfigMaps are the ConfigMaps a job's containers read their environment
// from (envFrom, or configMapKeyRef: a TrainJob's trainer).
func envConfigMaps(job *yaml.RNode) []string {
	var names []string
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		for i := 0; n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
			if k := n.Content[i].Value; k == "configMapRef" || k == "configMapKeyRef" {
				if name, _ := yaml.NewRNode(n.Content[i+1]).GetString("name"); name != "" && !slices.Contains(names, name) {
					names = append(names, name)
				}
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(job.YNode())
	return names
}
