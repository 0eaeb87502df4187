// SPDX-License-Identifier: Apache-2.0

package hydrate

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/mlops-fn/mlops-fn/pkg/fielddiff"
)

// afterThePatches is what of a kustomization kustomize applies after mlops-fn's component and may contradict
// it, as a message lists it; the user's own fields (usersfields.go) act after the function too.
const afterThePatches = "patches:, patchesStrategicMerge:, patchesJson6902:, replacements:, replicas:, transformers:, components listed after " + ComponentDir

// contradiction is the check's error: the fields where the build and the function's run differ, the
// kustomization's entries that likely set them, and why.
func (r *rendering) contradiction(diffs []objectDiff, why string) error {
	kfile := filepath.Join(r.o.Dir, filepath.Base(r.kname))
	cause := fmt.Sprintf("%s has no entry that acts after mlops-fn's patches (%s) and names what differs", kfile, afterThePatches)
	if found := r.suspects(diffs); len(found) > 0 {
		cause = fmt.Sprintf("likely cause, in %s after mlops-fn's patches: %s", kfile, strings.Join(found, "; "))
	}
	return fmt.Errorf("%s: the hydrated overlay would differ from mlops-fn run as a kustomize transformer on the same kustomization, so hydrate writes nothing:\n%s\n%s%s; accepted: entries there that leave what mlops-fn renders as it renders it (set such a value in %s or %s instead)",
		r.o.Dir, describe(diffs, maxChangesShown, "mlops-fn renders", "the kustomization's build gives"), cause, why, r.configPath, filepath.Join(r.o.Dir, r.envFile))
}

// suspects are the kustomization's entries after mlops-fn's patches that may set what differs: a patch or
// replacement aimed at a differing object, replicas: where such a field differs, and what hydrate cannot look
// into (transformers:, a component listed after mlops-fn's), in the kustomization's order.
func (r *rendering) suspects(diffs []objectDiff) []string {
	k, err := kustomizationOf(r.k)
	if err != nil {
		return nil
	}
	selected := func(sel *types.Selector) bool {
		return slices.ContainsFunc(diffs, func(d objectDiff) bool { return selects(sel, d.object, k) })
	}
	// patchesStrategicMerge's entries as patches: a file's path, or inline (a line break or a colon).
	var smp []types.Patch
	for _, e := range k.PatchesStrategicMerge { //nolint:staticcheck // users still write them, and kustomize v5 applies them
		if strings.ContainsAny(string(e), "\n:") {
			smp = append(smp, types.Patch{Patch: string(e)})
		} else {
			smp = append(smp, types.Patch{Path: string(e)})
		}
	}
	var found []string
	for _, field := range []struct {
		name    string
		patches []types.Patch
	}{{"patches", k.Patches}, {"patchesJson6902", k.PatchesJson6902}, {"patchesStrategicMerge", smp}} { //nolint:staticcheck // as above
		for _, p := range field.patches {
			if path.Clean(p.Path) == listedPath {
				continue // hydrate's own, which tests a mark
			}
			if what := r.patchSuspect(p, diffs, k, selected); what != "" {
				found = append(found, field.name+": "+what)
			}
		}
	}
	for _, rf := range k.Replacements {
		if rf.Path != "" {
			found = append(found, "replacements: the entry with path "+rf.Path)
			continue
		}
		var targets []string
		hit := false
		for _, t := range rf.Targets {
			if t.Select != nil {
				targets = append(targets, selectorText(t.Select))
				hit = hit || selected(t.Select)
			}
		}
		if hit {
			found = append(found, "replacements: the entry with targets "+strings.Join(targets, ", "))
		}
	}
	for _, rep := range k.Replicas {
		if slices.ContainsFunc(diffs, func(d objectDiff) bool {
			return slices.Contains(names(d.object, k), rep.Name) &&
				slices.ContainsFunc(d.changes, func(c fielddiff.Change) bool { return strings.HasSuffix(c.Path, ".replicas") })
		}) {
			found = append(found, "replicas: "+rep.Name)
		}
	}
	for _, t := range k.Transformers {
		found = append(found, "transformers: "+t)
	}
	if i := slices.IndexFunc(k.Components, func(c string) bool { return path.Clean(c) == ComponentDir }); i >= 0 {
		for _, c := range k.Components[i+1:] {
			found = append(found, "components: "+c)
		}
	}
	return found
}

// patchSuspect names a patch entry that may set what differs, "" for one that cannot: its target selects a
// differing object, or, without one, the patch names one.
func (r *rendering) patchSuspect(p types.Patch, diffs []objectDiff, k types.Kustomization, selected func(*types.Selector) bool) string {
	named := ""
	if p.Target != nil {
		if !selected(p.Target) {
			return ""
		}
	} else {
		var readable bool
		if named, readable = r.patchNames(p, diffs, k); named == "" && readable {
			return ""
		}
	}
	switch {
	case p.Path != "":
		return "the entry with path " + p.Path
	case p.Target != nil:
		return "the entry with target " + selectorText(p.Target)
	case named != "":
		return "the inline patch of " + named
	}
	return "an inline patch"
}

// patchNames is the first differing object a patch without a target (a strategic merge) names, "" for none;
// readable is false when its file or text does not read here, so it may name any.
func (r *rendering) patchNames(p types.Patch, diffs []objectDiff, k types.Kustomization) (named string, readable bool) {
	text := []byte(p.Patch)
	if p.Path != "" {
		var err error
		if text, err = os.ReadFile(filepath.Join(r.o.Dir, p.Path)); err != nil {
			return "", false
		}
	}
	docs, err := kio.FromBytes(text)
	if err != nil {
		return "", false
	}
	for _, d := range diffs {
		if slices.ContainsFunc(docs, func(doc *yaml.RNode) bool {
			return doc.GetKind() == d.object.kind && slices.Contains(names(d.object, k), doc.GetName())
		}) {
			return d.object.String(), true
		}
	}
	return "", true
}

// selects: sel, as kustomize matches it, selects o. Patches run before namePrefix:, nameSuffix: and
// namespace:, so o's name without them counts, and its namespace does not.
func selects(sel *types.Selector, o builtObject, k types.Kustomization) bool {
	re, err := types.NewSelectorRegex(sel)
	if err != nil {
		return true // kustomize refuses it; the message still points there
	}
	// An empty label (or annotation) selector matches all, as does one kustomize refuses.
	matchesSet := func(selector string, set map[string]string) bool {
		s, err := labels.Parse(selector)
		return err != nil || s.Matches(labels.Set(set))
	}
	gv, _ := k8sschema.ParseGroupVersion(o.apiVersion)
	return re.MatchGvk(resid.Gvk{Group: gv.Group, Version: gv.Version, Kind: o.kind}) && slices.ContainsFunc(names(o, k), re.MatchName) &&
		re.MatchNamespace(o.namespace) && matchesSet(sel.LabelSelector, o.metadata("labels")) && matchesSet(sel.AnnotationSelector, o.metadata("annotations"))
}

// names are o's name as built, and without the kustomization's prefix and suffix.
func names(o builtObject, k types.Kustomization) []string {
	return []string{o.name, strings.TrimSuffix(strings.TrimPrefix(o.name, k.NamePrefix), k.NameSuffix)}
}

// selectorText writes a selector as a YAML flow map, its fields in kustomize's order.
func selectorText(sel *types.Selector) string {
	var fields []string
	for _, f := range [][2]string{{"group", sel.Group}, {"version", sel.Version}, {"kind", sel.Kind}, {"name", sel.Name},
		{"namespace", sel.Namespace}, {"labelSelector", sel.LabelSelector}, {"annotationSelector", sel.AnnotationSelector}} {
		if f[1] != "" {
			fields = append(fields, f[0]+": "+f[1])
		}
	}
	return "{" + strings.Join(fields, ", ") + "}"
}
