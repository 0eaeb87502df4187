// SPDX-License-Identifier: Apache-2.0

package processor

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/jobnode"
	"github.com/mlops-fn/mlops-fn/pkg/render"
)

// The checks of a target's pods that Narrow runs, and the names it takes from them.

// placed is a container or init container of a target and its field path.
type placed struct {
	node *yaml.RNode
	name string
	// pod is the pod spec's path, at the container's place in it: containers[1].
	pod, at string
}

func (c placed) path() string { return c.pod + "." + c.at }

// podContainers are the containers and init containers of each pod template of the target, in role order.
func podContainers(target *yaml.RNode) [][]placed {
	var pods [][]placed
	for _, s := range kindOf(target).PodSpecs {
		var pod []placed
		for _, field := range []string{"containers", "initContainers"} {
			list, _ := target.Pipe(yaml.Lookup(append(slices.Clone(s.Path), field)...))
			elems, _ := list.Elements()
			for i, c := range elems {
				name, _ := c.GetString("name")
				pod = append(pod, placed{c, name, strings.Join(s.Path, "."), fmt.Sprintf("%s[%d]", field, i)})
			}
		}
		pods = append(pods, pod)
	}
	return pods
}

// uniqueContainerNames refuses two containers (init containers too) of a pod sharing a name: the patch would merge them.
func uniqueContainerNames(target *yaml.RNode, _ *render.Plan) error {
	for _, pod := range podContainers(target) {
		first := map[string]string{}
		for _, c := range pod {
			if at, ok := first[c.name]; ok {
				return fmt.Errorf("%s.name: Duplicate value: %q: %s of that pod has the name too, and mlops-fn's patch, which merges containers by name, would make one container of the two (Kubernetes refuses them anyway); accepted: a name of its own for each container and init container of a pod", c.path(), c.name, at)
			}
			first[c.name] = c.at
		}
	}
	return nil
}

// envShadowsKeys refuses a container's env entry that names an mlops.env key: Kubernetes lets env win over the env
// ConfigMap's envFrom, so the container would see its own value (WORKERS=8 in a job of 2 workers). An entry taking
// the key from the env ConfigMap itself stays. A TrainJob carries mlops.env in its trainer's env (trainerEnvKept).
func envShadowsKeys(target *yaml.RNode, q *render.Plan) error {
	if len(q.Facts().ProgramPath) > 0 {
		return nil // the program's env is outside the pod specs' containers
	}
	for _, c := range slices.Concat(podContainers(target)...) {
		list, _ := c.node.Pipe(yaml.Lookup("env"))
		elems, _ := list.Elements()
		for i, e := range elems {
			name, _ := e.GetString("name")
			if !slices.Contains(q.EnvKeys, name) || q.OwnEnvEntry(e, name) {
				continue
			}
			value := strconv.Quote(jobnode.Scalar(e, "value"))
			if value == `""` && e.Field("valueFrom") != nil {
				value = "a value from elsewhere (valueFrom)"
			}
			return fmt.Errorf("%s.env[%d].name: Invalid value: %q: container %s sets %s to %s, and %s is a key of mlops.env, which reaches the container through the env ConfigMap (envFrom); Kubernetes gives the container's own entry precedence, so it would see that value while the job is rendered from mlops.env; accepted: the value in mlops.env only (remove the entry from the container), or another name", c.path(), i, name, c.name, name, value, name)
		}
	}
	return nil
}

// mountsTaken refuses a container's own volume mounted where mlops-fn mounts one (mounts merge by path: the patch would
// silently swap them), or at or around the operator's paths (the SSH keys, the hostfile).
func mountsTaken(target *yaml.RNode, q *render.Plan) error {
	ours := map[string]string{}
	for _, m := range q.Mounts {
		ours[m.MountPath] = m.Name
	}
	for _, c := range slices.Concat(podContainers(target)...) {
		mounts, _ := c.node.Pipe(yaml.Lookup("volumeMounts"))
		elems, _ := mounts.Elements()
		for i, m := range elems {
			at, _ := m.GetString("mountPath")
			volume, _ := m.GetString("name")
			if want, taken := ours[path.Clean(at)]; taken && at != "" && volume != want {
				return fmt.Errorf("%s.volumeMounts[%d]: container %s mounts its volume %q at %s, where mlops-fn mounts %q (mlops.env or spec.volumes); "+
					"accepted: one of the two at another path, or the container's mount removed", c.path(), i, c.name, volume, at, want)
			}
			if clashes := q.OperatorMountPath(path.Clean(at)); at != "" && len(clashes) > 0 {
				return fmt.Errorf("%s.volumeMounts[%d].mountPath: Invalid value: %q: container %s's mount %s", c.path(), i, at, c.name, clashes[0])
			}
		}
	}
	return nil
}

// requestsAboveLimits refuses a base's request above the limit mlops-fn set (CPU, MEMORY, GPUs): the API server would too.
func requestsAboveLimits(job *yaml.RNode) error {
	for _, c := range slices.Concat(podContainers(job)...) {
		limits, _ := c.node.Pipe(yaml.Lookup("resources", "limits"))
		requests, _ := c.node.Pipe(yaml.Lookup("resources", "requests"))
		names, _ := limits.Fields()
		for _, name := range names {
			limit, err := resource.ParseQuantity(yaml.GetValue(limits.Field(name).Value))
			f := requests.Field(name)
			if f == nil || err != nil {
				continue
			}
			if request, err := resource.ParseQuantity(yaml.GetValue(f.Value)); err == nil && request.Cmp(limit) > 0 {
				return fmt.Errorf("%s.resources.requests.%s: container %s requests %s, above its limit %s, which mlops-fn sets (CPU, MEMORY, GPUS_PER_WORKER in mlops.env, or spec.resources, spec.launcherResources); Kubernetes refuses a request above its limit; accepted: the base's request at most that limit, or the request removed (it then defaults to the limit)", c.path(), name, c.name, request.String(), limit.String())
			}
		}
	}
	return nil
}

// baseGPUs settles the training containers' GPUs with the plan's: a request follows the limit (Kubernetes requires an
// extended resource's to equal it). Refused: a count of 0 beside the base's GPUs, which a patch cannot remove, and
// the base's GPUs of another resource beside the plan's default one, which would make each pod ask for both.
func baseGPUs(target *yaml.RNode, q *render.Plan) error {
	requested := false
	for _, s := range kindOf(target).PodSpecs {
		if q.Apart(s.Role) {
			continue // the launcher gets the launcher's limits
		}
		name := q.Containers[s.Role]
		for _, list := range []string{"limits", "requests"} {
			m, _ := target.Pipe(yaml.Lookup(append(slices.Clone(s.Path), "containers", "[name="+name+"]", "resources", list)...))
			fields, _ := m.Fields()
			for _, r := range fields {
				at := fmt.Sprintf("%s.containers[name=%s].resources.%s.%s", strings.Join(s.Path, "."), name, list, r)
				value := yaml.GetValue(m.Field(r).Value)
				switch {
				case corev1.ResourceName(r) == q.GPUResource && q.GPUsPerWorker == 0 && q.GPUsFrom != "":
					count := q.GPUsFrom + "=" + value
					if q.GPUsFrom != "GPUS_PER_WORKER" {
						count = q.GPUsFrom + ": " + value
					}
					return fmt.Errorf("%s: Invalid value: %q: the base's container %s asks for GPUs, and %s is 0, which says none; a patch cannot remove the base's; "+
						"accepted: %s, %s left out (the base's count stays), or the GPUs removed from the base", at, value, name, q.GPUsFrom, count, q.GPUsFrom)
				case corev1.ResourceName(r) == q.GPUResource && list == "requests" && q.GPUsPerWorker > 0:
					requested = true
				case corev1.ResourceName(r) != q.GPUResource && isGPU(r) && q.GPUsPerWorker > 0 && !q.GPUResourceSet:
					return fmt.Errorf("%s: Invalid value: %q: the base's container %s asks for %s, and %s asks for %d %s (GPU_RESOURCE's default) besides: each pod would ask for both; accepted: GPU_RESOURCE=%s in mlops.env (%s then counts those), or the base's %s removed", at, value, name, r, q.GPUsFrom, q.GPUsPerWorker, q.GPUResource, r, q.GPUsFrom, r)
				}
			}
		}
	}
	if requested { // in a copy of the plan's requests
		q.Requests = maps.Collect(maps.All(q.Requests))
		q.Requests[q.GPUResource] = q.Limits[q.GPUResource]
	}
	return nil
}

// isGPU: a device plugin's GPUs or accelerators: nvidia.com/gpu, amd.com/gpu, gpu.intel.com/i915, habana.ai/.
func isGPU(name string) bool {
	return strings.Contains(name, "gpu") || strings.HasPrefix(name, "habana.ai/")
}

// baseVolumesClash refuses a volume of the target's pods named like the operator's, or like mlops-fn's with another
// source: merged by name, it would have two, which the API server refuses.
func baseVolumesClash(target *yaml.RNode, q *render.Plan) error {
	ours := map[string]string{}
	for _, v := range q.Volumes {
		ours[v.Name] = volumeSource(v.VolumeSource)
	}
	for _, s := range kindOf(target).PodSpecs {
		list, _ := target.Pipe(yaml.Lookup(append(slices.Clone(s.Path), "volumes")...))
		elems, _ := list.Elements()
		for i, v := range elems {
			name, _ := v.GetString("name")
			at := fmt.Sprintf("%s.volumes[%d]", strings.Join(s.Path, "."), i)
			if why := q.OperatorVolumeName(name); why != "" {
				return fmt.Errorf("%s.name: Invalid value: %q: %s", at, name, why)
			}
			fields, _ := v.Fields()
			if src, taken := ours[name]; taken && !slices.Contains(fields, src) {
				return fmt.Errorf("%s: volume %q of the pods is also the name of mlops-fn's %s volume (mlops.env or spec.volumes): merged by name, it would have two sources, which Kubernetes refuses; accepted: another name for the pods' volume, or for the spec's", at, name, src)
			}
		}
	}
	return nil
}

// volumeSource is the field that holds a volume's source: nfs, hostPath, ...
func volumeSource(v corev1.VolumeSource) string {
	var m map[string]json.RawMessage
	b, _ := json.Marshal(v)
	_ = json.Unmarshal(b, &m)
	for k := range m {
		return k
	}
	return ""
}

// placementClash refuses a pod template asking Kueue for another placement than mlops.env's: one would silently lose.
func placementClash(target *yaml.RNode, q *render.Plan) error {
	if q.Placement == nil {
		return nil
	}
	for _, s := range kindOf(target).PodSpecs {
		at := append(slices.Clone(s.Path[:len(s.Path)-1]), "metadata", "annotations")
		m, _ := target.Pipe(yaml.Lookup(at...))
		want := q.PodPlacement(s.Role)
		for _, key := range []string{api.RequiredTopologyAnnotation, api.PreferredTopologyAnnotation, api.PodSetGroupAnnotation} {
			have := m.Field(key)
			if have == nil || yaml.GetValue(have.Value) == want[key] {
				continue
			}
			var pairs []string
			for _, k := range slices.Sorted(maps.Keys(want)) {
				pairs = append(pairs, k+": "+want[k])
			}
			return fmt.Errorf("%s.%s: Invalid value: %q: the target asks Kueue for its own placement, and mlops.env's placement sets %s; "+
				"accepted: the annotation removed from the target (mlops.env's TOPOLOGY_ key places the job), or no TOPOLOGY_ key in mlops.env",
				strings.Join(at, "."), key, yaml.GetValue(have.Value), strings.Join(pairs, ", "))
		}
	}
	return nil
}

// namesBy are the containers' names by role, each role's but(role) left out.
func namesBy(byRole map[jobkind.Role][]*yaml.RNode, but func(jobkind.Role) string) map[jobkind.Role][]string {
	out := map[jobkind.Role][]string{}
	for role, list := range byRole {
		for _, c := range list {
			if name, _ := c.GetString("name"); name != "" && name != but(role) {
				out[role] = append(out[role], name)
			}
		}
	}
	return out
}

// containerNames takes each pod template's training container: the one named like the spec's, else the first (the
// mpi-operator's main). spec.containerName's must be in every pod: the first would take its limits and program. The
// others are sidecars, and the notices tell of a training container moved first.
func containerNames(target *yaml.RNode, q *render.Plan) error {
	kind := kindOf(target)
	lists := jobnode.ContainerLists(kind, target)
	q.Containers = render.ContainerNames{}
	for _, s := range kind.PodSpecs {
		var all []string
		for _, c := range lists[s.Role] {
			name, _ := c.GetString("name")
			all = append(all, name)
		}
		switch {
		case slices.Contains(all, q.ContainerName):
			q.Containers[s.Role] = q.ContainerName
		case q.ContainerNamed && len(all) > 0:
			return fmt.Errorf("%s.containers: has no container named %q (spec.containerName), only %s; accepted: spec.containerName naming the training container of every pod, or a container %s in this pod", strings.Join(s.Path, "."), q.ContainerName, strings.Join(all, ", "), q.ContainerName)
		case len(all) > 0:
			q.Containers[s.Role] = all[0]
		}
	}
	q.Sidecars = namesBy(lists, func(r jobkind.Role) string { return cmp.Or(q.Containers[r], q.ContainerName) })
	q.InitContainers = namesBy(jobnode.InitContainerLists(kind, target), func(jobkind.Role) string { return "" })
	q.Notices = append(movedFirst(target, q), q.Notices...) // after hostNetworkDNS's
	return nil
}
