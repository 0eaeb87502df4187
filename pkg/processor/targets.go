// SPDX-License-Identifier: Apache-2.0

package processor

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/jobnode"
	"github.com/mlops-fn/mlops-fn/pkg/kinds"
	"github.com/mlops-fn/mlops-fn/pkg/render"
)

// The targets: the base's jobs the function patches, and the plan narrowed to each.

// Targets are the items the function patches, each with the plan narrowed to it; none when it generates the job.
// It applies no patch: hydrate runs the function, whose results carry the patched job's notices (Pod Security).
func (p Processor) Targets(plan *render.Plan, items []*yaml.RNode) ([]*yaml.RNode, []*render.Plan, error) {
	found, err := p.targets(plan, items)
	if err != nil {
		return nil, nil, err
	}
	var targets []*yaml.RNode
	var plans []*render.Plan
	for _, i := range found {
		q, err := p.Narrow(plan, items[i])
		if err != nil {
			return nil, nil, err
		}
		targets, plans = append(targets, items[i]), append(plans, q)
	}
	return targets, plans, nil
}

// targets finds the items to patch: the objects named like the job (or spec.target's) mlops-fn did not write.
func (p Processor) targets(plan *render.Plan, items []*yaml.RNode) ([]int, error) {
	kind, apiVersion := plan.Facts().Kind, plan.Facts().APIVersion
	sel := plan.Target
	var found []int
	// By the name first, else by a name kustomize's namePrefix or nameSuffix replaced.
	for _, named := range []func(*yaml.RNode) bool{
		func(it *yaml.RNode) bool { return it.GetName() == sel.Name },
		func(it *yaml.RNode) bool { return slices.Contains(previousNames(it), sel.Name) },
	} {
		for i, it := range items {
			if it.GetKind() != kind || generated(it) || (sel.Name != "" && !named(it)) || !hasLabels(it, sel.Labels) {
				continue
			}
			if ns := it.GetNamespace(); plan.Namespace != "" && ns != "" && ns != plan.Namespace {
				continue // the same-named job of another namespace
			}
			if it.GetApiVersion() != apiVersion {
				return nil, fmt.Errorf("%s/%s is %s; mlops-fn patches %s %s", kind, it.GetName(), it.GetApiVersion(), apiVersion, kind)
			}
			found = append(found, i)
		}
		if len(found) > 0 || sel.Name == "" {
			break
		}
	}
	if len(found) == 0 && (sel.Name != plan.JobName || len(sel.Labels) > 0) {
		var seen []string
		for _, it := range items {
			if it.GetKind() == kind {
				seen = append(seen, describe(it.GetName(), it.GetLabels()))
			}
		}
		return nil, fmt.Errorf("%s: spec.target: %s matches no %s among the inputs; the inputs' %ss: %s",
			p.configName(), describe(sel.Name, sel.Labels), kind, kind, cmp.Or(strings.Join(seen, ", "), "none"))
	}
	if len(found) == 0 {
		// A job of another kind under the job's name would go out unpatched beside a new job.
		for _, it := range items {
			if other, ok := kinds.All.ForKind(it.GetKind()); ok && other.Kind != kind && it.GetName() == sel.Name && !generated(it) {
				return nil, fmt.Errorf("%s: %s/%s among the inputs is named like the job, but jobKind is %s: it would go out unpatched beside a new %s; "+
					"accepted: jobKind %s, or another name for one of the two",
					p.configName(), it.GetKind(), it.GetName(), kind, kind, other.Kind)
			}
		}
	}
	return found, nil
}

// Narrow is plan as it applies to target: its name, namespace and containers. It refuses a target the plan cannot
// serve, such as one in another namespace than the spec names (a patch cannot move an object).
func (p Processor) Narrow(plan *render.Plan, target *yaml.RNode) (*render.Plan, error) {
	id := identify(target)
	q := *plan
	q.Name, q.Namespace = target.GetName(), target.GetNamespace()
	for _, step := range []func(*yaml.RNode, *render.Plan) error{uniqueContainerNames, envShadowsKeys, hostNetworkDNS, containerNames,
		ownEnvFrom, mountsTaken, baseVolumesClash, baseGPUs, placementClash} {
		if err := step(target, &q); err != nil {
			return nil, fmt.Errorf("%s: %w", id, err)
		}
	}
	if plan.Namespace != "" && q.Namespace != plan.Namespace {
		in := fmt.Sprintf("namespace %q", q.Namespace)
		if q.Namespace == "" {
			in = "no namespace"
		}
		return nil, fmt.Errorf("%s: metadata.namespace: %q, but the target %s has %s, and a patch cannot move an object; accepted: the target in namespace %q (in the base, or through `namespace: %s` in the kustomization), or no metadata.namespace in the spec", p.configName(), plan.Namespace, id, in, plan.Namespace, plan.Namespace)
	}
	if errs := q.CheckName(); len(errs) > 0 {
		return nil, objectError(id, errs)
	}
	if c := privilegedContainer(target); c != "" && q.Hardening {
		return nil, fmt.Errorf("%s: container %s is privileged (or adds capabilities), and the API server refuses such a container with the allowPrivilegeEscalation: false mlops-fn's hardening sets on every container; accepted: no privileged container in the job, or spec.security.hardening: false (the job then needs Pod Security level privileged)", id, c)
	}
	if n, ok := q.Kind().(render.Narrower); ok {
		if err := n.Narrow(target, &q, p.configName()); err != nil {
			return nil, fmt.Errorf("%s: %w", id, err)
		}
	}
	return &q, nil
}

// identify names an input object in messages: its file, when the runner says, and kind/name.
func identify(n *yaml.RNode) string {
	id := n.GetKind() + "/" + n.GetName()
	if n.GetKind() == "" {
		id = "named " + strconv.Quote(n.GetName())
	}
	if file, _, _ := kioutil.GetFileAnnotations(n); file != "" {
		return file + ": " + id
	}
	return id
}

// describe names an object or a selector: `name` with labels a=b,c=d.
func describe(name string, labels map[string]string) string {
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		kv = append(kv, k+"="+labels[k])
	}
	switch {
	case name == "":
		return "labels " + strings.Join(kv, ",")
	case len(kv) == 0:
		return fmt.Sprintf("%q", name)
	}
	return fmt.Sprintf("%q with labels %s", name, strings.Join(kv, ","))
}

func hasLabels(n *yaml.RNode, want map[string]string) bool {
	have := n.GetLabels()
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// movedFirst tells of each pod template whose training container the patch moves first.
func movedFirst(target *yaml.RNode, q *render.Plan) []string {
	var notices []string
	id, kind := identify(target), kindOf(target)
	lists := jobnode.ContainerLists(kind, target)
	for _, role := range slices.Sorted(maps.Keys(lists)) {
		name := q.ContainerOf(role)
		i := slices.IndexFunc(lists[role], func(c *yaml.RNode) bool { n, _ := c.GetString("name"); return n == name })
		if i <= render.TrainingContainerIndex {
			continue
		}
		var before []string
		for _, c := range lists[role][:i] {
			n, _ := c.GetString("name")
			before = append(before, strconv.Quote(n))
		}
		why := cmp.Or(kind.FirstContainer, "kubectl logs and exec default to the first container")
		notices = append(notices,
			fmt.Sprintf("%s: %s.containers[%d]: the training container %q moves first, before %s: mlops-fn puts it first in every pod (%s); the others keep their order",
				id, strings.Join(kind.PodSpecPath(role), "."), i, name, strings.Join(before, ", "), why))
	}
	return notices
}

// ownEnvFrom sets the envFrom sources but the env ConfigMap of the target's containers and init containers by role, name.
func ownEnvFrom(target *yaml.RNode, q *render.Plan) error {
	out := map[jobkind.Role]map[string][]corev1.EnvFromSource{}
	q.OwnEnvFrom = out
	kind := kindOf(target)
	for _, byRole := range []map[jobkind.Role][]*yaml.RNode{jobnode.ContainerLists(kind, target), jobnode.InitContainerLists(kind, target)} {
		for role, list := range byRole {
			for _, c := range list {
				from := c.Field("envFrom")
				if from == nil || from.Value.IsNil() {
					continue
				}
				name, _ := c.GetString("name")
				b, err := jobnode.JSON(from.Value)
				var sources []corev1.EnvFromSource
				if err == nil {
					err = json.Unmarshal(b, &sources)
				}
				if err != nil {
					return fmt.Errorf("container %s: envFrom: %v; accepted: a list of configMapRef and secretRef sources", name, err)
				}
				sources = slices.DeleteFunc(sources, func(s corev1.EnvFromSource) bool {
					return s.ConfigMapRef != nil && q.NamesEnv(s.ConfigMapRef.Name) && s.Prefix == ""
				})
				if len(sources) > 0 {
					if out[role] == nil {
						out[role] = map[string][]corev1.EnvFromSource{}
					}
					out[role][name] = sources
				}
			}
		}
	}
	return nil
}

// privilegedContainer names a container of the target that runs privileged or adds capabilities, or is "".
func privilegedContainer(target *yaml.RNode) string {
	for _, c := range jobnode.Containers(kindOf(target), target) {
		add, _ := c.Pipe(yaml.Lookup("securityContext", "capabilities", "add"))
		if jobnode.Scalar(c, "securityContext", "privileged") == "true" || add != nil && add.YNode().Kind == yaml.SequenceNode && len(add.YNode().Content) > 0 {
			name, _ := c.GetString("name")
			return name
		}
	}
	return ""
}

// kindOf is the facts of n's kind, none for a kind mlops-fn does not render.
func kindOf(n *yaml.RNode) jobkind.Facts {
	k, _ := kinds.All.ForKind(n.GetKind())
	return k
}
