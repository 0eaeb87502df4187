// SPDX-License-Identifier: Apache-2.0

package processor

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/kinds"
	"github.com/mlops-fn/mlops-fn/pkg/render"
)

// The items the function writes back: its own objects found, updated in place, pruned.

// A doom is why pruning drops an item, and whether a warning says so.
type doom struct {
	why string
	say bool
}

// doomed is what pruning drops. What an earlier run of this spec generated that this one does not, in the spec's
// namespace alone (a same-named spec of another namespace owns its own): the job of another kind, or from before a
// target came, which would run beside this one (job, generated again, is replaced where it stands), and ConfigMaps
// no longer written (written: this run writes plan's in the spec's namespace). What a job spec no longer among the
// items generated where this spec files its objects: a renamed job's old objects, which would run beside the new.
// Specs count by name alone (a ConfigMap goes to any namespace). Only kpt hands the specs over as items; where this
// spec is not among them, none is known gone and nothing is dropped.
func (p Processor) doomed(items []*yaml.RNode, plan *render.Plan, job *yaml.RNode, written bool) map[*yaml.RNode]doom {
	specs := map[string]bool{}
	for _, it := range items {
		if isSpec(it) {
			specs[it.GetName()] = true
		}
	}
	doomed := map[*yaml.RNode]doom{}
	for _, it := range items {
		owner, ours := strings.CutPrefix(it.GetAnnotations()[GeneratedBy], api.Kind+"/")
		file, _, _ := kioutil.GetFileAnnotations(it)
		switch {
		case ours && owner == plan.JobName && it.GetNamespace() == plan.Namespace:
			if kinds.All.Is(it.GetKind()) && !sameObject(it, job) || it.GetKind() == "ConfigMap" && (!written || it.GetName() != plan.ConfigMapName) {
				doomed[it] = doom{why: api.Kind + "/" + owner + " generated it and writes it no more"}
			}
		case ours && specs[plan.JobName] && !specs[owner] && path.Dir(file) == p.outputDir:
			doomed[it] = doom{why: fmt.Sprintf("%s %s generated it, and no job spec among the inputs names that job now (renamed?)", api.Kind, owner), say: true}
		}
	}
	return doomed
}

// prune drops the doomed items but a ConfigMap that an item staying still reads, unless one of its name stays
// beside it to be read instead: removed, it would leave that reader's pods waiting for it; kept, it says why.
func prune(items []*yaml.RNode, doomed map[*yaml.RNode]doom) ([]*yaml.RNode, []string) {
	stay := slices.DeleteFunc(slices.Clone(items), func(it *yaml.RNode) bool { _, ok := doomed[it]; return ok })
	var notices []string
	items = slices.DeleteFunc(items, func(it *yaml.RNode) bool {
		d, ok := doomed[it]
		if !ok {
			return false
		}
		if it.GetKind() == "ConfigMap" && !slices.ContainsFunc(stay, func(s *yaml.RNode) bool { return sameObject(s, it) }) {
			for _, s := range stay {
				if s.GetNamespace() == it.GetNamespace() && readsConfigMap(s.YNode(), it.GetName()) {
					notices = append(notices, fmt.Sprintf("%s: kept: %s, but %s still reads it; delete them together", identify(it), d.why, identify(s)))
					return false
				}
			}
		}
		if d.say {
			notices = append(notices, fmt.Sprintf("%s: removed: %s", identify(it), d.why))
		}
		return true
	})
	return items, notices
}

// readsConfigMap: n names the ConfigMap name at any depth, whatever the kind: configMapRef, configMapKeyRef, configMap.
func readsConfigMap(n *yaml.Node, name string) bool {
	for i := 0; n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
		if k, v := n.Content[i].Value, n.Content[i+1]; (k == "configMapRef" || k == "configMapKeyRef" || k == "configMap") && v.Kind == yaml.MappingNode {
			if ref := yaml.NewRNode(v).Field("name"); ref != nil && ref.Value.YNode().Value == name {
				return true
			}
		}
	}
	return slices.ContainsFunc(n.Content, func(c *yaml.Node) bool { return readsConfigMap(c, name) })
}

func isSpec(n *yaml.RNode) bool {
	return n.GetApiVersion() == api.APIVersion && n.GetKind() == api.Kind
}

// onePerName refuses two job specs, or two targets, of one kind, name and namespace among the inputs (a job file
// copied): the cluster holds one, and each would silently replace or remove the other. A generated job is replaced.
func onePerName(items []*yaml.RNode) error {
	seen := map[string]int{}
	for i, it := range items {
		if !isSpec(it) && (!kinds.All.Is(it.GetKind()) || generated(it)) {
			continue
		}
		group, _, _ := strings.Cut(it.GetApiVersion(), "/")
		key := strings.Join([]string{group, it.GetKind(), it.GetNamespace(), it.GetName()}, "/")
		if first, twice := seen[key]; twice {
			why := "mlops-fn would patch both, and the cluster holds one"
			if isSpec(it) {
				why = "each would replace or remove the job the other generates"
			}
			return fmt.Errorf("input items %d (%s) and %d (%s) are two %ss named %q %s: %s; accepted: one %s of a name per namespace (rename or remove one)",
				first+1, identify(items[first]), i+1, identify(it), it.GetKind(), it.GetName(), inNamespace(it.GetNamespace()), why, it.GetKind())
		}
		seen[key] = i
	}
	return nil
}

// inNamespace says where an object is, by its namespace ns.
func inNamespace(ns string) string {
	if ns == "" {
		return "without a namespace"
	}
	return fmt.Sprintf("in namespace %q", ns)
}

func generated(n *yaml.RNode) bool {
	_, ok := n.GetAnnotations()[GeneratedBy]
	return ok
}

// findItem finds the item of that kind called name, now or, failing that, before kustomize renamed it.
func findItem(items []*yaml.RNode, kind, name string) int {
	if i := slices.IndexFunc(items, func(it *yaml.RNode) bool { return it.GetKind() == kind && it.GetName() == name }); i >= 0 {
		return i
	}
	return slices.IndexFunc(items, func(it *yaml.RNode) bool { return it.GetKind() == kind && slices.Contains(previousNames(it), name) })
}

// isNamed: n is named name, or was before a kustomize namePrefix or nameSuffix.
func isNamed(n *yaml.RNode, name string) bool {
	return n.GetName() == name || slices.Contains(previousNames(n), name)
}

// PreviousNamesAnnotation is where kustomize keeps, for functions, the names its namePrefix, nameSuffix and patches replaced.
const PreviousNamesAnnotation = "internal.config.kubernetes.io/previousNames"

func previousNames(n *yaml.RNode) []string {
	v := n.GetAnnotations()[PreviousNamesAnnotation]
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

func sameObject(a, b *yaml.RNode) bool {
	return a != nil && b != nil && a.GetKind() == b.GetKind() && a.GetName() == b.GetName() && a.GetNamespace() == b.GetNamespace()
}

// upsert replaces the item of the same kind, name and namespace, else appends.
func upsert(items []*yaml.RNode, n *yaml.RNode) []*yaml.RNode {
	if i := slices.IndexFunc(items, func(it *yaml.RNode) bool { return sameObject(it, n) }); i >= 0 {
		items[i] = n
		return items
	}
	return append(items, n)
}
