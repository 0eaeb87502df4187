// SPDX-License-Identifier: Apache-2.0

package render

import (
	"encoding/json"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/jobnode"
)

// Patch is a strategic-merge patch: a partial job in its Go type (an MPIJob, a Pod, a PyTorchJob…).
type Patch struct {
	File   string
	Object any
	Kind   jobkind.Facts // the facts of Object's kind
	Clear  Deletions     // what the patch deletes (null in the patch) from a target
}

// Deletions are fields a patch deletes in every pod spec and container it holds: a target's values that would
// trail or contradict the patch's (old args after a new command, runAsNonRoot beside uid 0).
type Deletions struct {
	Container         []string // keys of each container
	PodSecurity       []string // keys of each pod's securityContext
	ContainerSecurity []string // keys of each container's securityContext
	// ContainerIDs are keys of each container's securityContext deleted only where the patch sets one: no
	// empty securityContext is left behind.
	ContainerIDs []string
}

// Patch is the overlay's patch of the job, applied to Skeleton. One patch: kyaml's merge walks the whole target
// per patch, a long env list quadratically.
func (p *Plan) Patch() Patch {
	// A container's own ids would override the pod's; uid 0 cannot stand beside runAsNonRoot.
	var d Deletions
	switch {
	case p.RunAsUser == nil:
	case *p.RunAsUser == 0:
		d.PodSecurity, d.ContainerSecurity, d.ContainerIDs = []string{"runAsNonRoot"}, []string{"runAsNonRoot"}, []string{"runAsUser"}
	default:
		d.ContainerIDs = []string{"runAsUser", "runAsNonRoot"}
	}
	if p.RunAsGroup != nil {
		d.ContainerIDs = append(d.ContainerIDs, "runAsGroup")
	}
	if len(p.Command) > 0 && len(p.Args) == 0 {
		d.Container = []string{"args"}
	}
	if c, ok := p.kind.(Clearer); ok {
		c.Clear(p, &d)
	}
	facts := p.Facts()
	return Patch{File: facts.PatchFile, Kind: facts, Object: p.build(true), Clear: d}
}

// Skeleton is what a base holds: the object's identity and its container names.
func (p *Plan) Skeleton() any { return p.build(false) }

// ConfigMap carries every mlops.env key into the containers through envFrom.
func (p *Plan) ConfigMap(data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: p.ConfigMapName, Namespace: p.Namespace},
		Data:       data,
	}
}

// ContainerNames maps a role to the container the patch addresses (unset: ContainerName).
type ContainerNames map[jobkind.Role]string

// TrainingContainerIndex is where the training container stands in each pod after the patch: a strategic merge
// puts the patch's containers first. The mpi-operator sets up SSH and the hostfile in containers[0].
const TrainingContainerIndex = 0

// build builds the job's object. A patch's pod specs are filled per role: the training container first, then
// the target's other containers and init containers, which get the env, security and volumes alone.
func (p *Plan) build(patch bool) any {
	template := func(r jobkind.Role) corev1.PodTemplateSpec {
		spec := corev1.PodSpec{}
		c := corev1.Container{Name: p.ContainerOf(r)}
		if !patch {
			return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{c}}}
		}
		p.fillWorkload(r, &spec, &c)
		p.fillSecurity(r, &spec, &c)
		spec.Containers = []corev1.Container{c}
		filled := func(name string) corev1.Container {
			other := corev1.Container{Name: name}
			p.fillEnvFrom(r, &other)
			p.fillSecurity(r, &spec, &other)
			return other
		}
		for _, s := range p.Sidecars[r] {
			spec.Containers = append(spec.Containers, filled(s))
		}
		for _, s := range p.InitContainers[r] {
			spec.InitContainers = append(spec.InitContainers, filled(s))
		}
		return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: p.PodPlacement(r)}, Spec: spec}
	}
	obj := p.kind.Object(p, template)
	facts := p.Facts()
	obj.GetObjectKind().SetGroupVersionKind(schema.FromAPIVersionAndKind(facts.APIVersion, facts.Kind))
	// kustomize matches a patch to its target by namespace and name.
	obj.SetName(p.Name)
	obj.SetNamespace(p.Namespace)
	if f, ok := p.kind.(JobFiller); ok && patch {
		f.FillJob(p, obj)
	}
	// The spec's labels and annotations, patched or generated alike (Kueue's queue label).
	obj.SetLabels(p.Labels)
	if a := obj.GetAnnotations(); len(a) > 0 {
		// A Pod is its own template: its placement is on it already.
		obj.SetAnnotations(merged(p.Annotations, a))
	} else {
		obj.SetAnnotations(p.Annotations)
	}
	return obj
}

// ContainerOf is the container mlops-fn fills in the pod spec of role t.
func (p *Plan) ContainerOf(t jobkind.Role) string {
	if n := p.Containers[t]; n != "" {
		return n
	}
	return p.ContainerName
}

// merged is a and b in one map, b's value winning a shared key.
func merged(a, b map[string]string) map[string]string {
	m := map[string]string{}
	maps.Copy(m, a)
	maps.Copy(m, b)
	return m
}

// fillEnvFrom gives a container every mlops.env key through the env ConfigMap, after its own sources (the later wins).
func (p *Plan) fillEnvFrom(r jobkind.Role, c *corev1.Container) {
	c.EnvFrom = append(slices.Clone(p.OwnEnvFrom[r][c.Name]), corev1.EnvFromSource{ConfigMapRef: &corev1.ConfigMapEnvSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: p.ConfigMapName}}})
}

// fillWorkload sets the training container: what the spec and mlops.env describe, and what the kind runs in it.
func (p *Plan) fillWorkload(r jobkind.Role, spec *corev1.PodSpec, c *corev1.Container) {
	c.Image, c.ImagePullPolicy, c.WorkingDir = p.Image, p.ImagePullPolicy, p.WorkingDir
	p.fillEnvFrom(r, c)
	c.Env = p.Env
	c.Resources.Limits, c.Resources.Requests = p.Limits, p.Requests
	p.kind.FillProgram(p, r, spec, c)
	if len(c.Resources.Limits) == 0 {
		c.Resources.Limits = nil
	}
	if len(c.Resources.Requests) == 0 {
		c.Resources.Requests = nil
	}
	spec.ServiceAccountName, spec.PriorityClassName, spec.ImagePullSecrets = p.ServiceAccountName, p.PriorityClassName, p.ImagePullSecrets
	if p.HostNetwork {
		// Service names still resolve from the node's network namespace.
		spec.HostNetwork, spec.DNSPolicy = true, corev1.DNSClusterFirstWithHostNet
	}
	if !p.Apart(r) {
		spec.NodeSelector, spec.Tolerations = p.NodeSelector, p.Tolerations
	}
}

// FillRunPolicy sets out, an operator's runPolicy (MPIJob's, PyTorchJob's), from the plan's, field by JSON name.
func (p *Plan) FillRunPolicy(out any) {
	b, _ := json.Marshal(p.RunPolicy) // pointers and strings: it encodes, and decodes into their like
	_ = json.Unmarshal(b, out)
}

// KeepsProgram: the spec names no command or script, so the target keeps its own (a Narrow may edit it: Kept).
func (p *Plan) KeepsProgram() bool { return len(p.Command) == 0 }

// fillSecurity sets the ids and the hardening of a container and its pod, and mounts the data volumes in it.
func (p *Plan) fillSecurity(r jobkind.Role, spec *corev1.PodSpec, c *corev1.Container) {
	psc := &corev1.PodSecurityContext{RunAsUser: p.RunAsUser, RunAsGroup: p.RunAsGroup, FSGroup: p.FSGroup}
	if !p.Root() {
		psc.RunAsNonRoot = ptr.To(true)
	}
	if p.FSGroup != nil {
		// Walk volumes only when their root is not yet the group: large datasets stay fast.
		psc.FSGroupChangePolicy = ptr.To(corev1.FSGroupChangeOnRootMismatch)
	}
	csc := &corev1.SecurityContext{}
	if p.Hardening {
		psc.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
		csc.AllowPrivilegeEscalation = ptr.To(false)
		if !p.Root() {
			// A root sshd needs its default capabilities to switch users.
			csc.Capabilities = &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}
		}
	}
	if p.Facts().IDsOnContainers {
		csc.RunAsUser, csc.RunAsGroup, csc.RunAsNonRoot = p.RunAsUser, p.RunAsGroup, psc.RunAsNonRoot
	}
	if p.RDMAResource != "" && c.Name == p.ContainerOf(r) && !p.Apart(r) {
		// RDMA pins memory; the training container alone holds the devices.
		if csc.Capabilities == nil {
			csc.Capabilities = &corev1.Capabilities{}
		}
		csc.Capabilities.Add = []corev1.Capability{"IPC_LOCK"}
	}
	spec.SecurityContext, c.SecurityContext = psc, csc
	spec.Volumes, c.VolumeMounts = p.Volumes, p.Mounts
}

// Encode encodes the patch and writes its deletions (patch.Clear) as nulls, which a strategic merge (kyaml's
// and kustomize's) reads as "remove".
func (patch Patch) Encode() (*yaml.RNode, error) {
	n, err := jobnode.Encode(patch.Object)
	if err != nil {
		return nil, err
	}
	null := func(n *yaml.RNode, keys []string, force bool, path ...string) {
		if err == nil {
			err = setNulls(n, keys, force, path...)
		}
	}
	d, k := patch.Clear, patch.Kind
	if k.ProgramPath != nil {
		null(n, d.Container, true, k.ProgramPath...)
		d.Container = nil
	}
	for _, spec := range jobnode.PodSpecs(k, n) {
		null(spec, d.PodSecurity, true, "securityContext")
	}
	// The training container alone: the others keep their own.
	for _, list := range jobnode.ContainerLists(k, n) {
		if len(list) > TrainingContainerIndex {
			null(list[TrainingContainerIndex], d.Container, true)
		}
	}
	for _, c := range jobnode.Containers(k, n) {
		// Before the forced deletions make a securityContext.
		null(c, d.ContainerIDs, false, "securityContext")
		null(c, d.ContainerSecurity, true, "securityContext")
	}
	if err != nil {
		return nil, err
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
