// SPDX-License-Identifier: Apache-2.0

package schema

import (
	"fmt"
	"strings"

	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
)

// references are the pod spec fields that name another object, by its kind: those kustomize v5.8's own name
// references rename in a Pod (namePrefix, nameSuffix, a generator's hash).
var references = []struct {
	group, version, kind string
	fields               []string
}{
	{"", "v1", "ConfigMap", []string{
		"volumes/configMap/name", "volumes/projected/sources/configMap/name",
		"containers/env/valueFrom/configMapKeyRef/name", "containers/envFrom/configMapRef/name",
		"initContainers/env/valueFrom/configMapKeyRef/name", "initContainers/envFrom/configMapRef/name"}},
	{"", "v1", "Secret", []string{
		"volumes/secret/secretName", "volumes/projected/sources/secret/name", "imagePullSecrets/name",
		"containers/env/valueFrom/secretKeyRef/name", "containers/envFrom/secretRef/name",
		"initContainers/env/valueFrom/secretKeyRef/name", "initContainers/envFrom/secretRef/name"}},
	{"", "v1", "ServiceAccount", []string{"serviceAccountName"}},
	{"", "v1", "PersistentVolumeClaim", []string{"volumes/persistentVolumeClaim/claimName"}},
	{"scheduling.k8s.io", "v1", "PriorityClass", []string{"priorityClassName"}},
}

// NameReferences is a kustomize configuration (a kustomization's configurations: entry) telling it where the
// pod specs of kinds name ConfigMaps, Secrets, ServiceAccounts, claims and priority classes, and where a kind
// keeps an image outside its containers (for images:): kustomize knows these fields in built-in kinds only, so
// a namePrefix, nameSuffix or generator's hash would rename the objects but not the job's references. holds,
// when not nil, keeps only the fields it says hold a name (a field the job does not set needs none); "" when
// none is kept.
func NameReferences(holds func(path string) bool, kinds ...jobkind.Facts) []byte {
	var b strings.Builder
	for _, r := range references {
		var specs strings.Builder
		spec := func(group, kind, path string) {
			if holds == nil || holds(path) {
				fmt.Fprintf(&specs, "  - group: %s\n    kind: %s\n    path: %s\n", group, kind, path)
			}
		}
		for _, k := range kinds {
			group, _, _ := strings.Cut(k.APIVersion, "/")
			for _, s := range k.ReferencePodSpecs {
				for _, f := range r.fields {
					spec(group, k.Kind, s+"/"+f)
				}
			}
			for _, ref := range k.References {
				if ref.Kind == r.kind {
					spec(group, k.Kind, ref.Path)
				}
			}
		}
		if specs.Len() == 0 {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("nameReference:\n")
		}
		fmt.Fprintf(&b, "- kind: %s\n", r.kind)
		if r.group != "" {
			fmt.Fprintf(&b, "  group: %s\n", r.group)
		}
		fmt.Fprintf(&b, "  version: %s\n  fieldSpecs:\n%s", r.version, specs.String())
	}
	// A kind that keeps its program, image included, outside its pod specs (a TrainJob's trainer).
	images := ""
	for _, k := range kinds {
		path := strings.Join(k.ProgramPath, "/") + "/image"
		if k.ProgramPath != nil && (holds == nil || holds(path)) {
			group, _, _ := strings.Cut(k.APIVersion, "/")
			images += fmt.Sprintf("- group: %s\n  kind: %s\n  path: %s\n", group, k.Kind, path)
		}
	}
	if images != "" {
		b.WriteString("images:\n" + images)
	}
	return []byte(b.String())
}
