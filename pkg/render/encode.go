// SPDX-License-Identifier: Apache-2.0

package render

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/mlops-fn/mlops-fn/pkg/jobnode"
)

// Encode encodes the patch and writes its deletions (patch.Clear) as nulls, which a strategic merge (kyaml's
// and kustomize's) reads as "remove".
func (patch Patch) Encode() (*yaml.RNode, error) {
	n, err := jobnode.Encode(patch.Object)
	if err != nil {
		return nil, err
	}
	d, k := patch.Clear, patch.Kind
	if k.ProgramPath != nil {
		if err := setNulls(n, d.Container, true, k.ProgramPath...); err != nil {
			return nil, err
		}
		d.Container = nil
	}
	for _, spec := range jobnode.PodSpecs(k, n) {
		if err := setNulls(spec, d.PodSecurity, true, "securityContext"); err != nil {
			return nil, err
		}
	}
	// The training container alone: the others keep their own.
	for _, list := range jobnode.ContainerLists(k, n) {
		if len(list) > TrainingContainerIndex {
			if err := setNulls(list[TrainingContainerIndex], d.Container, true); err != nil {
				return nil, err
			}
		}
	}
	for _, c := range jobnode.Containers(k, n) {
		// Before the forced deletions make a securityContext.
		if err := setNulls(c, d.ContainerIDs, false, "securityContext"); err != nil {
			return nil, err
		}
		if err := setNulls(c, d.ContainerSecurity, true, "securityContext"); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// setNulls appends key: null for each key to the map at path below n, made if need be when force is set, else
// only where the patch sets something already (a map of nulls alone leaves `{}` in a target).
func setNulls(n *yaml.RNode, keys []string, force bool, path ...string) error {
	if len(keys) == 0 {
		return nil
	}
	var m *yaml.RNode
	var err error
	if force {
		m, err = n.Pipe(yaml.LookupCreate(yaml.MappingNode, path...))
	} else {
		m, err = n.Pipe(yaml.Lookup(path...))
	}
	if err != nil || m == nil || len(m.YNode().Content) == 0 && !force {
		return err
	}
	for _, k := range keys {
		if m.Field(k) != nil {
			continue // the patch sets it: its value replaces the target's
		}
		// Appended by hand: kyaml's SetField reads a null value as "delete the field".
		m.YNode().Content = append(m.YNode().Content,
			&yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: k},
			&yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagNull, Value: "null"})
	}
	return nil
}
