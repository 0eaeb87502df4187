package processor

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/render"
)

// The items the function writes back: its own objects found, updated in place, pruned.

// configMapNamespaces: the ConfigMap goes where its readers are, the targets'
// namespaces (a kustomization's namespace: reached them first), else the job's.
func configMapNamespaces(plan *render.Plan, items []*yaml.RNode, targets []int) []string {
	if len(targets) == 0 {
		return []string{plan.Namespace}
	}
	var namespaces []string
	for _, i := range targets {
		namespaces = append(namespaces, items[i].GetNamespace())
	}
	slices.Sort(namespaces)
	return slices.Compact(namespaces)
}

// pruneStale drops what an earlier run of this spec generated that this run
// does not: the job generated in another mode, or before a target came, which
// would run beside this one (job, generated again, stays to be replaced where
// it stands), and the ConfigMaps it no longer writes. Only in the
// namespace the spec generates into: a same-named spec of another namespace
// owns its own objects.
func pruneStale(items []*yaml.RNode, plan *render.Plan, job *yaml.RNode, written map[string]bool) []*yaml.RNode {
	owner := api.Kind + "/" + plan.JobName
	return slices.DeleteFunc(items, func(it *yaml.RNode) bool {
		if it.GetAnnotations()[GeneratedBy] != owner || it.GetNamespace() != plan.Namespace {
			return false
		}
		switch {
		case jobkind.Is(it.GetKind()):
			return !sameObject(it, job)
		case it.GetKind() == "ConfigMap":
			return !written[it.GetNamespace()+"/"+it.GetName()]
		}
		return false
	})
}

// pruneOrphans drops what a job spec that is no longer among the items
// generated where this spec files its objects: the old job and ConfigMap of a
// job renamed in its spec, which would run beside the new one. Specs count by
// name alone: a spec's ConfigMap goes where its targets are, in any namespace.
// Only kpt hands a package's specs to the function as items; where this spec
// is not among them (kustomize, the standalone renderer) the generating spec
// cannot be known gone, and nothing is dropped.
func (p Processor) pruneOrphans(items []*yaml.RNode, plan *render.Plan) ([]*yaml.RNode, []string) {
	specs := map[string]bool{}
	for _, it := range items {
		if it.GetApiVersion() == api.APIVersion && it.GetKind() == api.Kind {
			specs[it.GetName()] = true
		}
	}
	if !specs[plan.JobName] {
		return items, nil
	}
	var notices []string
	items = slices.DeleteFunc(items, func(it *yaml.RNode) bool {
		owner, ours := strings.CutPrefix(it.GetAnnotations()[GeneratedBy], api.Kind+"/")
		file, _, _ := kioutil.GetFileAnnotations(it)
		if !ours || specs[owner] || path.Dir(file) != p.outputDir {
			return false
		}
		notices = append(notices, fmt.Sprintf("%s: removed: %s %s generated it, and no job spec among the inputs names that job now (renamed?)", identify(it), api.Kind, owner))
		return true
	})
	return items, notices
}

func generated(n *yaml.RNode) bool {
	_, ok := n.GetAnnotations()[GeneratedBy]
	return ok
}

// findItem finds the item of that kind called name, now or, failing that,
// before kustomize renamed it.
func findItem(items []*yaml.RNode, kind, name string) int {
	for i, it := range items {
		if it.GetKind() == kind && it.GetName() == name {
			return i
		}
	}
	for i, it := range items {
		if it.GetKind() == kind && slices.Contains(previousNames(it), name) {
			return i
		}
	}
	return -1
}

// isNamed: n is named name, or was before a kustomize namePrefix or nameSuffix.
func isNamed(n *yaml.RNode, name string) bool {
	return n.GetName() == name || slices.Contains(previousNames(n), name)
}

// PreviousNamesAnnotation is where kustomize keeps the names its namePrefix,
// nameSuffix and patches replaced; it hands the annotation to functions.
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
	for i, it := range items {
		if sameObject(it, n) {
			items[i] = n
			return items
		}
	}
	return append(items, n)
}
