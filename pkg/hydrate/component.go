// SPDX-License-Identifier: Apache-2.0

package hydrate

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/processor"
	"github.com/mlops-fn/mlops-fn/pkg/render"
	"github.com/mlops-fn/mlops-fn/pkg/schema"
)

// renderComponent writes the job's patches, one set per target, or, the base holding none, the job the
// function would generate; the env ConfigMap goes beside the job, as the function writes it.
func (r *rendering) renderComponent() error {
	out, p, plan, items := r.out, r.p, r.plan, r.items
	// The function sees the targets after the kustomization's namespace: moved them; the patches find them by
	// kind and name before it does.
	seen := items
	if ns := r.k.Field("namespace"); ns != nil && ns.Value.YNode().Value != "" {
		seen = make([]*yaml.RNode, len(items))
		for i, it := range items {
			seen[i] = it.Copy()
			if err := seen[i].SetNamespace(ns.Value.YNode().Value); err != nil {
				return err
			}
		}
	}
	targets, plans, err := p.Targets(plan, seen)
	if err != nil {
		return err
	}
	for i, t := range targets {
		targets[i] = items[slices.Index(seen, t)]
	}
	if len(targets) == 0 {
		// The function would generate the job beside these: two jobs for one spec (a job of another kind under
		// the job's name, the processor refuses).
		for _, it := range items {
			if kind := it.GetKind(); kind == plan.Facts().Kind {
				return fmt.Errorf("%s: the base holds %s/%s, which is not the job of %s (%s named %s); accepted: a base whose %s is named %s, or spec.target naming the one to patch",
					p.ConfigFile, kind, it.GetName(), p.ConfigFile, jobkind.WithArticle(plan.Facts().Kind), plan.Target.Name, plan.Facts().Kind, plan.Target.Name)
			}
		}
		job, err := p.Generate(plan)
		if err != nil {
			return err
		}
		//nolint:staticcheck // the runners' legacy annotation too
		for _, a := range []string{kioutil.PathAnnotation, kioutil.LegacyPathAnnotation} {
			if _, err := job.Pipe(yaml.ClearAnnotation(a)); err != nil {
				return err
			}
		}
		s, err := job.String()
		r.generated = strings.ToLower(job.GetKind()) + ".yaml"
		r.jobParts = []*yaml.RNode{job}
		out.Component[r.generated] = []byte(r.header + s)
		return err
	}
	r.targets = targets
	names := map[string]bool{}
	for _, t := range targets {
		if names[t.GetName()] {
			return fmt.Errorf("%s: spec.target selects %s %q in more than one namespace; accepted: a target that selects one object of each name", p.ConfigFile, t.GetKind(), t.GetName())
		}
		names[t.GetName()] = true
	}
	for i, q := range plans {
		add := func(name string, text []byte) {
			if len(plans) > 1 {
				name = strings.TrimSuffix(name, ".yaml") + "." + targets[i].GetName() + ".yaml"
			}
			out.Component[name] = append([]byte(r.header), text...)
			target, _ := targetOf(targets[i])
			r.patches = append(r.patches, transformer("PatchTransformer", "mlops-fn-"+strings.TrimSuffix(name, ".yaml"), map[string]any{"path": name, "target": target}))
		}
		patch := q.Patch()
		n, err := patch.Encode()
		if err == nil {
			err = schema.Format(n)
		}
		if err == nil {
			err = schema.MarkMergeKeys(n)
		}
		var text string
		if err == nil {
			text, err = n.String()
		}
		if err != nil {
			return err
		}
		r.jobParts = append(r.jobParts, targets[i], n)
		add(patch.File, []byte(text))
		if j, ok := q.Kind().(render.JSONPatcher); ok {
			if file, ops := j.JSONPatch(q); ops != nil {
				b, err := yaml.Marshal(ops)
				if err != nil {
					return err
				}
				add(file, b)
			}
		}
	}
	for _, t := range targets {
		if ns := t.GetNamespace(); r.e.envNamespace == "" && ns != "" {
			r.e.envNamespace = ns
			// Set once already, the entries have nothing left to restore.
			_, err := setEntries(r.k, r.e, filepath.Join(r.o.Dir, filepath.Base(r.kname)))
			return err
		}
	}
	return nil
}

// componentKustomization writes the component's kustomization. kustomize runs patches: and replacements:
// before transformers:, and those in the order listed (inline ones before any named by a path); so the
// component lists as inline transformers the guard's steps, then the job's patches, each aimed at its target:
// the guard fails the build before a patch meets a base it was not written for.
func (r *rendering) componentKustomization() error {
	transformers, err := r.guard()
	if err != nil {
		return err
	}
	out, plan := r.out, r.plan
	// The job spec, a resource for the guard, is never applied: made local-config unless it is.
	if r.builtSpec.GetAnnotations()[processor.LocalConfig] != "true" {
		smp, err := yaml.FromMap(map[string]any{"apiVersion": api.APIVersion, "kind": api.Kind,
			"metadata": map[string]any{"name": plan.JobName, "annotations": map[string]any{processor.LocalConfig: "true"}}})
		if err != nil {
			return err
		}
		transformers = append(transformers, transformer("PatchTransformer", "mlops-fn-job-spec", map[string]any{"patch": smp.MustString(), "target": hub}))
	}
	transformers = append(transformers, r.patches...)
	k := yaml.MustParse("apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n")
	if r.generated != "" {
		if err := k.PipeE(yaml.SetField("resources", yaml.NewListRNode(r.generated))); err != nil {
			return err
		}
	}
	inline := yaml.NewListRNode()
	for _, t := range transformers {
		n, err := yaml.FromMap(t)
		if err != nil {
			return err
		}
		compact(n)
		inline.YNode().Content = append(inline.YNode().Content, &yaml.Node{Kind: yaml.ScalarNode, Style: yaml.LiteralStyle, Value: n.MustString()})
	}
	if err := k.PipeE(yaml.SetField("transformers", inline)); err != nil {
		return err
	}
	// A Pod's name references are built into kustomize; a CRD's are not. Only the fields the job sets: the
	// guard fails the build once the base's job or the patches change, and hydrate writes them again.
	if !plan.Facts().BuiltIn() {
		if refs := schema.NameReferences(r.holds, plan.Facts()); len(refs) > 0 {
			out.Component[NameReferenceFile] = append([]byte(r.header), refs...)
			if err := k.PipeE(yaml.SetField("configurations", yaml.NewListRNode(NameReferenceFile))); err != nil {
				return err
			}
		}
	}
	k.YNode().HeadComment = r.header + "# transformers: the guard (" + guardPrefix +
		"*), failing the build once what the job's patch comes from\n# changed, then the patch."
	text, err := k.String()
	out.Component[componentFile] = []byte(text)
	out.Component[ListedFile] = []byte(r.header + jsonPatch(map[string]any{"op": "test", "path": pointer(listedField), "value": listedValue}))
	return err
}

// targetOf selects n in a patch's target: group, version, kind, and name and namespace as exact regexps.
func targetOf(n *yaml.RNode) (map[string]any, error) {
	gv, err := k8sschema.ParseGroupVersion(n.GetApiVersion())
	target := map[string]any{"version": gv.Version, "kind": n.GetKind(), "name": "^" + regexp.QuoteMeta(n.GetName()) + "$"}
	if gv.Group != "" {
		target["group"] = gv.Group
	}
	if ns := n.GetNamespace(); ns != "" {
		target["namespace"] = "^" + regexp.QuoteMeta(ns) + "$"
	}
	return target, err
}

// holds reports whether the job, as the component builds it, sets path ("a/b"), lists looked into item by item.
func (r *rendering) holds(path string) bool {
	return slices.ContainsFunc(r.jobParts, func(n *yaml.RNode) bool { return holdsPath(n.YNode(), strings.Split(path, "/")) })
}

func holdsPath(n *yaml.Node, path []string) bool {
	switch {
	case n.Kind == yaml.SequenceNode:
		return slices.ContainsFunc(n.Content, func(c *yaml.Node) bool { return holdsPath(c, path) })
	case len(path) == 0:
		return n.Kind == yaml.ScalarNode && n.Tag != yaml.NodeTagNull && n.Value != ""
	case n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == path[0] {
				return holdsPath(n.Content[i+1], path[1:])
			}
		}
	}
	return false
}

// ListedFile is the JSON patch the user's kustomization applies to the job spec after the components: it
// fails the build when mlops-fn is no longer among them (a merge dropped the line), which the component cannot
// notice. The guard sets the field it tests.
const ListedFile = "listed.yaml"

// listedField is the guard's mark on the job spec, the message a build without the component fails with.
var listedField = "kustomization.yaml lists no " + ComponentDir + " in components: run mlops-fn hydrate on this folder; check"

const listedValue = "listed"
