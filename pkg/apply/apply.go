// SPDX-License-Identifier: Apache-2.0

// Package apply takes a hydrated overlay to a cluster with client-go, so that an edit reaches a running job
// whole or not at all: kubectl apply -k alone patches a live job in place (the mpi-operator adds a worker
// beside the old ones and keeps the launcher's old rank count) or stops half way (a TrainJob's trainer is
// immutable, after its ConfigMap changed).
package apply

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/mlops-fn/mlops-fn/pkg/cluster"
	"github.com/mlops-fn/mlops-fn/pkg/fielddiff"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/jobnode"
	"github.com/mlops-fn/mlops-fn/pkg/kinds"
)

// Options say which overlay goes to which cluster.
type Options struct {
	Dir     string        // the hydrated overlay
	Objects []*yaml.RNode // what it applies (hydrate.Applied): one job at least
	Flags   []string      // the cluster flags as given, for the command a refusal names
	Replace bool          // delete a live job the overlay changes (waiting for its pods to go) before applying
}

// Result says what Apply did.
type Result struct {
	Job     string   // the overlay's job, KIND/NAME
	Action  string   // "created", "unchanged", "scaled" (an elastic job within its bounds), "replaced"
	Changes []string // the fields the edit changes in the live job
}

// refusal is the error of an edit that would change the live job in place: nothing was applied.
func refusal(live object, o Options, changes []string) error {
	command := "mlops-fn apply --replace " + strings.Join(append(slices.Clone(o.Flags), o.Dir), " ")
	what := fmt.Sprintf("the overlay %s changes it: %s; nothing was applied", o.Dir, strings.Join(changes, "; "))
	if f := finished(live); f != "" {
		return fmt.Errorf("%s finished (%s), and %s: an edit of a finished job is a new run: %s deletes the finished job (its pods and logs) and applies the new one", id(live), f, what, command)
	}
	return fmt.Errorf("%s is running (or waiting to), and %s: kubectl apply would leave the job running a mix of the old and the new render; %s deletes the running job, waits for its pods to go, and applies the new one", id(live), what, command)
}

// object is a Kubernetes object as JSON.
type object = map[string]any

// Apply applies the hydrated overlay o.Dir when its live jobs, if any, are unchanged by it (or an elastic job
// only scales within its bounds), and otherwise refuses, changing nothing, unless o.Replace. With a live job,
// every object first goes through a dry run on the server, so that a refusal comes before anything is written;
// only a refusal in place (inPlace) is a change that --replace takes.
func Apply(ctx context.Context, c *cluster.Cluster, o Options) (*Result, error) {
	built, err := targets(ctx, c, o.Objects)
	if err != nil {
		return nil, err
	}
	res := &Result{}
	var lives []target
	for _, t := range built {
		if !kinds.All.Is(kindOf(t.object)) {
			continue
		}
		live, err := t.get(ctx)
		if err != nil {
			return nil, err
		}
		res.Job = cmp.Or(res.Job, id(t.object))
		if live != nil {
			lives = append(lives, target{live, t.r})
		}
	}
	applied := func(action string) (*Result, error) {
		res.Action = action
		_, err := applyAll(ctx, built, false)
		return res, err
	}
	if len(lives) == 0 {
		// No job runs that an edit could reach half: applied in the build's order, the objects a job needs
		// (its ServiceAccount) before it, which a dry run cannot see.
		return applied("created")
	}
	dry, err := applyAll(ctx, built, true)
	if err != nil {
		if res.Changes, err = inPlace(ctx, lives, built, err); err != nil {
			what := "nothing was applied"
			if o.Replace {
				what = "nothing was deleted or applied"
			}
			return nil, fmt.Errorf("%s: the API server refuses the overlay %s (a dry run): %w", what, o.Dir, err)
		}
	} else if res.Changes, err = changes(ctx, lives, dry, built); err != nil {
		return nil, err
	} else if len(res.Changes) == 0 {
		return applied("unchanged")
	} else if !slices.ContainsFunc(lives, func(live target) bool {
		return finished(live.object) != "" || !scalesWithin(live.object, find(dry, live.object), res.Changes)
	}) {
		return applied("scaled")
	}
	if !o.Replace {
		return nil, refusal(lives[0].object, o, res.Changes)
	}
	if err := recreatable(ctx, c, built, lives); err != nil {
		return nil, fmt.Errorf("nothing was deleted: --replace deletes %s and creates the new one, and the API server refuses that: %w", id(lives[0].object), err)
	}
	saved, err := save(lives)
	if err != nil {
		return nil, err
	}
	for i, live := range lives {
		deleted, err := remove(ctx, live)
		if err == nil {
			err = gone(ctx, c, live)
		}
		if err != nil && i == 0 && !deleted {
			_ = os.Remove(saved)
			return nil, fmt.Errorf("nothing was deleted: %w", err)
		}
		if err != nil {
			return nil, lost(lives, saved, err)
		}
	}
	if _, err := applyAll(ctx, built, true); err != nil {
		return nil, lost(lives, saved, fmt.Errorf("the new job is refused, so nothing else was applied: %w", err))
	}
	if _, err = applyAll(ctx, built, false); err != nil {
		return nil, lost(lives, saved, err)
	}
	_ = os.Remove(saved)
	res.Action = "replaced"
	for _, live := range lives {
		for _, old := range oldEnv(live.object, built) {
			if err := old.r.Delete(ctx, name(old.object), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return res, fmt.Errorf("replaced %s, but deleting the old run's ConfigMap/%s: %w", id(live.object), name(old.object), err)
			}
		}
	}
	return res, nil
}

// oldEnv are the env ConfigMaps the live job reads that are no one's once it goes: named by the hash of their
// old data, each of the name of one that built holds but for the hash.
func oldEnv(live object, built []target) []target {
	var out []target
	for _, cm := range envConfigMapsOf(live) {
		for _, b := range built {
			if kindOf(b.object) == "ConfigMap" && namespace(b.object) == namespace(live) && name(b.object) != cm && unhashed(name(b.object)) == unhashed(cm) {
				o := object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": cm, "namespace": namespace(live)}}
				out = append(out, target{o, b.r})
				break
			}
		}
	}
	return out
}

// inPlace reads refused, the dry run's refusal: the changes when the API server refuses the objects only
// because they change a live job in place, else refused itself. In place: Invalid on the job's spec alone for
// a field that cannot change (a Pod's spec, a TrainJob's trainer), or passing with every running job
// suspended (deploy/admission's policy, Trainer's and Kueue's webhooks refuse a running job's edit; RBAC, a
// failing webhook, a quota or an invalid object refuse a suspended one too). The suspended dry run may be
// refused as immutable itself (JobSet's webhook lets a suspension change only the pods' scheduling fields):
// that too is in place, which --replace takes with a delete and a create.
func inPlace(ctx context.Context, lives, built []target, refused error) ([]string, error) {
	err := refused
	var dry []target
	if !immutable(err) {
		suspended, ok := suspend(built, lives)
		if !ok {
			return nil, refused
		}
		dry, err = applyAll(ctx, suspended, true)
	}
	if immutable(err) {
		s, _, _ := strings.Cut(strings.TrimSpace(err.Error()), "\n")
		return []string{"the API server refuses it in place: " + s}, nil
	}
	if err != nil {
		return nil, refused
	}
	for _, live := range lives {
		// The dry run's job as it would be, but for the suspension.
		k, _ := kinds.All.ForKind(kindOf(live.object))
		job := find(dry, live.object)
		if job == nil || k.SuspendPath == nil {
			continue
		}
		if v, found, _ := unstructured.NestedFieldCopy(live.object, k.SuspendPath...); found {
			_ = unstructured.SetNestedField(job, v, k.SuspendPath...)
		} else {
			unstructured.RemoveNestedField(job, k.SuspendPath...)
		}
	}
	changes, err := changes(ctx, lives, dry, built)
	if err != nil || len(changes) == 0 {
		return nil, refused
	}
	return changes, nil
}

// immutable: err is the API server's Invalid answer on a job's spec alone, for a field that cannot change in
// place: the whole spec Forbidden (a Pod's), or "field is immutable". Other causes beside it may come of the
// merge onto the live object, which a create would not meet: --replace checks that create first.
func immutable(err error) bool {
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) {
		return false
	}
	d := status.Status().Details
	if d == nil || !kinds.All.Is(d.Kind) {
		return false
	}
	fixed := false
	for _, c := range d.Causes {
		if c.Field != "spec" && !strings.HasPrefix(c.Field, "spec.") {
			return false
		}
		fixed = fixed || (c.Field == "spec" && c.Type == metav1.CauseTypeForbidden) || strings.Contains(c.Message, validation.FieldImmutableErrorMsg)
	}
	return fixed
}

// suspend is built with each running live job of a kind that suspends set to be suspended; false when there
// is none.
func suspend(built, lives []target) ([]target, bool) {
	out := slices.Clone(built)
	some := false
	for i, t := range out {
		live := find(lives, t.object)
		k, _ := kinds.All.ForKind(kindOf(t.object))
		if live == nil || finished(live) != "" || k.SuspendPath == nil {
			continue
		}
		o := runtime.DeepCopyJSON(t.object)
		if err := unstructured.SetNestedField(o, true, k.SuspendPath...); err != nil {
			continue
		}
		out[i], some = target{o, t.r}, true
	}
	return out, some
}

// recreatable checks, before the live jobs are deleted, that what follows would pass, as dry runs: each other
// object's apply and each job's create under a generated name of its length (the live job holds its name), as
// the API server, its webhooks and RBAC will see it (a quota of jobs, which the live one fills, refuses it: on
// the safe side); and the list of the jobs' pods the wait reads.
func recreatable(ctx context.Context, c *cluster.Cluster, built, lives []target) error {
	for _, t := range built {
		if find(lives, t.object) == nil {
			if _, err := applyAll(ctx, []target{t}, true); err != nil {
				return err
			}
			continue
		}
		u := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(t.object)}
		n := name(t.object)
		u.SetName("")
		u.SetGenerateName(n[:max(len(n)-5, 1)]) // the API server appends 5 characters
		if _, err := t.r.Create(ctx, u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldManager: fieldManager}); err != nil {
			return fmt.Errorf("creating %s (a dry run, under a name generated from %s): %w", id(t.object), u.GetGenerateName(), err)
		}
	}
	for _, live := range lives {
		if _, err := pods(ctx, c, live.object); err != nil {
			return err
		}
	}
	return nil
}

// save writes the live jobs' manifests, as kubectl create takes them back, to a file of their own in the
// temporary directory (never in the overlay, whose build would take it), and returns its path.
func save(lives []target) (string, error) {
	var b strings.Builder
	for _, live := range lives {
		o := runtime.DeepCopyJSON(live.object)
		delete(o, "status")
		for _, k := range []string{"uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"} {
			delete(meta(o), k)
		}
		y, err := sigsyaml.Marshal(o)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "---\n# %s as it ran before mlops-fn apply --replace deleted it\n%s", id(live.object), y)
	}
	f, err := os.CreateTemp("", fmt.Sprintf("mlops-fn-%s-%s-*.yaml", strings.ToLower(kindOf(lives[0].object)), name(lives[0].object)))
	if err == nil {
		_, err = f.WriteString(b.String())
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return "", fmt.Errorf("saving the manifest of %s before deleting it: %w", id(lives[0].object), err)
	}
	return f.Name(), nil
}

// lost is err after the live jobs were deleted: it says how to get them back (their env ConfigMap stays until
// the replace is done).
func lost(lives []target, saved string, err error) error {
	return fmt.Errorf("deleted %s, but then: %w; its manifest as it ran is saved in %s: kubectl create -f %s creates it again", id(lives[0].object), err, saved, saved)
}

// unhashed is a generated ConfigMap's name without kustomize's hash.
func unhashed(name string) string {
	if i := strings.LastIndexByte(name, '-'); i > 0 {
		return name[:i]
	}
	return name
}

// changes are what the apply would change, each "path: old → new": the live jobs' spec and labels (as the dry
// run has them) and the overlay's ConfigMaps' data (as built: the apply makes it exactly that).
func changes(ctx context.Context, lives, dry, built []target) ([]string, error) {
	var out []string
	for _, t := range lives {
		live := t.object
		job := find(dry, live)
		if job == nil {
			return nil, fmt.Errorf("the dry run returned no %s", id(live))
		}
		prefix := ""
		if len(lives) > 1 {
			prefix = id(live) + " "
		}
		diff(prefix+"spec", compared(live), compared(job), &out)
		diff(prefix+"metadata.labels", meta(live)["labels"], meta(job)["labels"], &out)
	}
	for _, t := range built {
		cm := t.object
		if kindOf(cm) != "ConfigMap" {
			continue
		}
		old, err := t.get(ctx)
		if err != nil {
			return nil, err
		}
		what := "ConfigMap/" + name(cm)
		if old == nil {
			// A new env ConfigMap (kustomize's hash of the edited data in its name) beside the one the live
			// job reads: compared with that.
			if old, err = replaced(ctx, lives, dry, t); err != nil {
				return nil, err
			}
			if old == nil {
				out = append(out, what+": (none) → created")
				continue
			}
			what += " (was " + name(old) + ")"
		}
		diff(what+" data", old["data"], cm["data"], &out)
	}
	return out, nil
}

// replaced is the live env ConfigMap that the new env ConfigMap cm takes the place of: the one a live job
// reads where its dry run reads cm; nil if none.
func replaced(ctx context.Context, lives, dry []target, cm target) (object, error) {
	for _, t := range lives {
		job := find(dry, t.object)
		if job == nil || !slices.Contains(envConfigMapsOf(job), name(cm.object)) {
			continue
		}
		for _, old := range envConfigMapsOf(t.object) {
			if old == name(cm.object) {
				continue
			}
			u, err := cluster.Get(ctx, cm.r, old)
			if err != nil {
				return nil, fmt.Errorf("reading ConfigMap/%s: %w", old, err)
			}
			if u != nil {
				return u.Object, nil
			}
		}
	}
	return nil, nil
}

// envConfigMapsOf are the ConfigMaps the job o's containers read their environment from.
func envConfigMapsOf(o object) []string {
	n, err := yaml.FromMap(o)
	if err != nil {
		return nil
	}
	return jobnode.EnvConfigMaps(n)
}

// find is the object of items of the same kind and name as o, nil if none.
func find(items []target, o object) object {
	for _, it := range items {
		if kindOf(it.object) == kindOf(o) && name(it.object) == name(o) {
			return it.object
		}
	}
	return nil
}

// compared is o's spec as its kind compares a live job with the one built (jobkind.Facts.Compared).
func compared(o object) any {
	if k, _ := kinds.All.ForKind(kindOf(o)); k.Compared != nil {
		return k.Compared(o["spec"])
	}
	return o["spec"]
}

// diff appends the paths where a and b differ, each "path: a → b".
func diff(path string, a, b any, out *[]string) {
	for _, c := range fielddiff.Trees(path, a, b) {
		*out = append(*out, fmt.Sprintf("%s: %s → %s", c.Path, fielddiff.Brief(c.Old), fielddiff.Brief(c.New)))
	}
}

// scalesWithin: the running job live may take job's spec in place (its kind's rule, jobkind's InPlace: a
// scale within its bounds), and the only other change is WORKERS in its env ConfigMap, whose new hash the
// containers' references follow.
func scalesWithin(live, job object, changes []string) bool {
	for _, c := range changes {
		if !strings.HasPrefix(c, "spec") && !strings.Contains(c, " data.WORKERS: ") {
			return false
		}
	}
	k, _ := kinds.All.ForKind(kindOf(job))
	return k.Scale != nil && k.InPlace(live, job)
}

// finished is the live job's final condition (Succeeded, Failed, Complete), or a Pod's final phase; "" while
// it runs or waits.
func finished(live object) string {
	status, _ := live["status"].(map[string]any)
	if phase, _ := status["phase"].(string); phase == "Succeeded" || phase == "Failed" {
		return phase
	}
	conditions, _ := status["conditions"].([]any)
	for _, c := range conditions {
		m, _ := c.(map[string]any)
		t, _ := m["type"].(string)
		if m["status"] == "True" && slices.Contains(jobkind.FinalConditions, t) {
			return t
		}
	}
	return ""
}

func meta(o object) map[string]any {
	m, _ := o["metadata"].(map[string]any)
	return m
}

func kindOf(o object) string    { s, _ := o["kind"].(string); return s }
func name(o object) string      { s, _ := meta(o)["name"].(string); return s }
func namespace(o object) string { s, _ := meta(o)["namespace"].(string); return s }
func id(o object) string        { return kindOf(o) + "/" + name(o) }

// fieldManager owns what mlops-fn applies. Server-side apply merges lists by their keys, so another manager's
// entries stay (Kueue's runtime patch of a TrainJob), where a client-side apply would replace the list.
const fieldManager = "mlops-fn"

// target is an object of the overlay and its resource on the cluster.
type target struct {
	object
	r dynamic.ResourceInterface
}

// targets are the objects items in the namespace each goes to (its own, else the flags'), each with its
// resource as the API server names it.
func targets(ctx context.Context, c *cluster.Cluster, items []*yaml.RNode) ([]target, error) {
	var out []target
	for _, it := range items {
		var o object
		b, err := jobnode.JSON(it)
		if err == nil {
			err = json.Unmarshal(b, &o)
		}
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %w", it.GetKind(), it.GetName(), err)
		}
		m, err := c.Mapping(ctx, schema.FromAPIVersionAndKind(it.GetApiVersion(), it.GetKind()))
		if err != nil {
			return nil, err
		}
		t := target{o, c.Dynamic.Resource(m.Resource)}
		if m.Scope.Name() == apimeta.RESTScopeNameNamespace {
			ns, err := c.Of(namespace(o))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", id(o), err)
			}
			meta(o)["namespace"] = ns
			t.r = t.r.(dynamic.NamespaceableResourceInterface).Namespace(ns)
		}
		out = append(out, t)
	}
	return out, nil
}

// applyAll applies every target server-side, the fields mlops-fn renders its own whoever applied them before;
// dry: on the server only. It returns the objects as applied.
func applyAll(ctx context.Context, targets []target, dry bool) ([]target, error) {
	opts := metav1.ApplyOptions{FieldManager: fieldManager, Force: true}
	if dry {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	var out []target
	for _, t := range targets {
		u, err := t.r.Apply(ctx, name(t.object), &unstructured.Unstructured{Object: t.object}, opts)
		if err != nil {
			return nil, fmt.Errorf("applying %s: %w", id(t.object), err)
		}
		out = append(out, target{u.Object, t.r})
	}
	return out, nil
}

// get reads the live object of t, nil when there is none.
func (t target) get(ctx context.Context) (object, error) {
	u, err := cluster.Get(ctx, t.r, name(t.object))
	switch {
	case err != nil:
		return nil, fmt.Errorf("reading %s: %w", id(t.object), err)
	case u == nil:
		return nil, nil
	}
	return u.Object, nil
}

// remove deletes t in the background, as kubectl delete does: whether it was there. In the foreground,
// Trainer v2.3 kept reconciling a TrainJob being deleted, failing on its JobSet, for 90 s.
func remove(ctx context.Context, t target) (bool, error) {
	err := t.r.Delete(ctx, name(t.object), metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("deleting %s: %w", id(t.object), err)
	}
	return true, nil
}

// gone waits until t and its pods are gone.
func gone(ctx context.Context, c *cluster.Cluster, t target) error {
	var still []string
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, goneTimeout, true, func(ctx context.Context) (bool, error) {
		// t while it exists, then its pods
		live, err := t.get(ctx)
		still = []string{id(t.object)}
		if err == nil && live == nil {
			still, err = pods(ctx, c, t.object)
		}
		return len(still) == 0, err
	})
	if wait.Interrupted(err) && len(still) > 0 {
		return fmt.Errorf("after %s these are still there: %s", goneTimeout, strings.Join(still, ", "))
	}
	return err
}

// pods are the names of the pods of the job o ("": not a job, or a Pod, which the wait for o itself covers).
func pods(ctx context.Context, c *cluster.Cluster, o object) ([]string, error) {
	jk, ok := kinds.All.ForKind(kindOf(o))
	if !ok || jk.PodsLabel == "" {
		return nil, nil
	}
	l, err := cluster.List[corev1.Pod](ctx, c, "pods", namespace(o), jk.PodsLabel+"="+name(o))
	if err != nil {
		return nil, fmt.Errorf("listing the pods of %s: %w", id(o), err)
	}
	var names []string
	for _, p := range l {
		names = append(names, "pod/"+p.Name)
	}
	return names, nil
}

// goneTimeout bounds the wait for a deleted job and its pods: their grace period (30 s by default) and the
// garbage collector's turn.
const goneTimeout = 5 * time.Minute

// Delete deletes the jobs among items (what an overlay applies, hydrate.Applied) and the ConfigMaps they read
// their environment from, waiting for them and their pods to go; the overlay's other objects (a
// ServiceAccount other jobs share) stay. It returns those it deleted, KIND/NAME; none: none was there.
func Delete(ctx context.Context, c *cluster.Cluster, items []*yaml.RNode) ([]string, error) {
	var jobsAndEnv []*yaml.RNode
	read := map[string]bool{}
	for _, j := range jobnode.Jobs(kinds.All, items) {
		jobsAndEnv = append(jobsAndEnv, j.Node)
		for _, cm := range j.EnvConfigMaps {
			read[j.Namespace+"/"+cm] = true
		}
	}
	for _, it := range items {
		if it.GetKind() == "ConfigMap" && read[it.GetNamespace()+"/"+it.GetName()] {
			jobsAndEnv = append(jobsAndEnv, it)
		}
	}
	all, err := targets(ctx, c, jobsAndEnv)
	if err != nil {
		return nil, err
	}
	// The env ConfigMap the live job reads: after an edit of mlops.env the build names another.
	var more []target
	for _, t := range all {
		if !kinds.All.Is(kindOf(t.object)) {
			continue
		}
		if live, err := t.get(ctx); err == nil && live != nil {
			more = append(more, oldEnv(live, all)...)
		}
	}
	var deleted []string
	for _, t := range append(all, more...) {
		was, err := remove(ctx, t)
		if err == nil && was {
			deleted = append(deleted, id(t.object))
			if err = gone(ctx, c, t); err != nil {
				err = fmt.Errorf("deleted %s, but %w", id(t.object), err)
			}
		}
		if err != nil {
			return deleted, err
		}
	}
	return deleted, nil
}
