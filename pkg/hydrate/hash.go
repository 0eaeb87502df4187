// SPDX-License-Identifier: Apache-2.0

package hydrate

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// unhashedEnv is a copy of hydrated (the overlay's build) with the env ConfigMap, which kustomize hashes at the
// end of the build (NAME-KIND-env-HASH), and every reference to it named as in function's output, unhashed. A
// reference hydrated names unhashed is one kustomize did not rewrite, and an error: that pod reads no ConfigMap.
func unhashedEnv(function, hydrated []*yaml.RNode) ([]*yaml.RNode, error) {
	plain := map[string]bool{} // by namespace/name
	for _, it := range function {
		if it.GetKind() == "ConfigMap" {
			plain[it.GetNamespace()+"/"+it.GetName()] = true
		}
	}
	renamed := map[string]string{} // namespace/hashed name → name
	unhashed := map[string]bool{}  // namespace/name of a renamed one
	for _, it := range hydrated {
		if it.GetKind() != "ConfigMap" || plain[it.GetNamespace()+"/"+it.GetName()] {
			continue
		}
		n := it.GetName()
		if i := strings.LastIndexByte(n, '-'); i > 0 && plain[it.GetNamespace()+"/"+n[:i]] {
			renamed[it.GetNamespace()+"/"+n] = n[:i]
			unhashed[it.GetNamespace()+"/"+n[:i]] = true
		}
	}
	out := make([]*yaml.RNode, 0, len(hydrated))
	for _, it := range hydrated {
		c := it.Copy()
		ns := c.GetNamespace()
		var stale []string
		var staleName string
		var walk func(n *yaml.Node, path string)
		walk = func(n *yaml.Node, path string) {
			switch n.Kind {
			case yaml.MappingNode:
				for i := 0; i+1 < len(n.Content); i += 2 {
					walk(n.Content[i+1], strings.TrimPrefix(path+"."+n.Content[i].Value, "."))
				}
			case yaml.SequenceNode:
				for i, e := range n.Content {
					walk(e, fmt.Sprintf("%s[%d]", path, i))
				}
			case yaml.ScalarNode:
				if to, ok := renamed[ns+"/"+n.Value]; ok {
					n.Value = to
				} else if c.GetKind() != "ConfigMap" && path != "metadata.name" && unhashed[ns+"/"+n.Value] {
					stale, staleName = append(stale, path), n.Value
				}
			}
		}
		walk(c.YNode(), "")
		if len(stale) > 0 {
			return nil, fmt.Errorf("%s/%s: %s names ConfigMap %s, which kustomize renames with a hash of its data at the end of the build, "+
				"without rewriting this reference (a field kustomize does not know as a name reference); accepted: the reference in a field of the job's pod specs (pkg/schema name references)",
				c.GetKind(), c.GetName(), strings.Join(stale, ", "), staleName)
		}
		out = append(out, c)
	}
	return out, nil
}
