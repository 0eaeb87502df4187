// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The edits that break an overlay's job on purpose; each reports an error when it finds
// nothing to break, so that a check of a refusal cannot pass on an unbroken object.

// setField sets the field at path, which must exist with another value.
func setField(u *unstructured.Unstructured, value any, path ...string) error {
	old, found, err := unstructured.NestedFieldNoCopy(u.Object, path...)
	if err != nil || !found {
		return fmt.Errorf("no %v", path)
	}
	if old == value {
		return fmt.Errorf("%v is %v already", path, value)
	}
	parent, _, _ := unstructured.NestedFieldNoCopy(u.Object, path[:len(path)-1]...)
	parent.(map[string]any)[path[len(path)-1]] = value
	return nil
}

// renameField moves the field from to the name to, in the map at parent.
func renameField(u *unstructured.Unstructured, parent []string, from, to string) error {
	m, found, err := unstructured.NestedFieldNoCopy(u.Object, parent...)
	obj, ok := m.(map[string]any)
	if err != nil || !found || !ok {
		return fmt.Errorf("no %v", parent)
	}
	v, has := obj[from]
	if !has {
		return fmt.Errorf("no %v.%s", parent, from)
	}
	delete(obj, from)
	obj[to] = v
	return nil
}

// editListItem edits the element of the list at path whose name is name.
func editListItem(u *unstructured.Unstructured, path []string, name string, edit func(map[string]any)) error {
	return editListItemBy(u, path, "name", name, edit)
}

// editListItemBy edits the elements of the list at path whose key is value.
func editListItemBy(u *unstructured.Unstructured, path []string, key, value string, edit func(map[string]any)) error {
	l, found, err := unstructured.NestedFieldNoCopy(u.Object, path...)
	list, ok := l.([]any)
	if err != nil || !found || !ok {
		return fmt.Errorf("no list %v", path)
	}
	edited := false
	for _, e := range list {
		if m, ok := e.(map[string]any); ok && m[key] == value {
			edit(m)
			edited = true
		}
	}
	if !edited {
		return fmt.Errorf("no element of %v with %s %s", path, key, value)
	}
	return nil
}

// editRuntimePatchContainers edits the container node in every runtime patch of a TrainJob.
func editRuntimePatchContainers(u *unstructured.Unstructured, edit func(map[string]any)) error {
	edited := false
	patches, _, _ := unstructured.NestedSlice(u.Object, "spec", "runtimePatches")
	for i := range patches {
		walk(patches[i], func(m map[string]any) {
			containers, ok := m["containers"].([]any)
			if !ok {
				return
			}
			for _, c := range containers {
				if k, ok := c.(map[string]any); ok && k["name"] == "node" {
					edit(k)
					edited = true
				}
			}
		})
	}
	if !edited {
		return fmt.Errorf("no container node in spec.runtimePatches")
	}
	return unstructured.SetNestedSlice(u.Object, patches, "spec", "runtimePatches")
}

// checkBrokenObjects: the checks can fail: the quickstarts' output, broken, is refused.
func checkBrokenObjects(c *check) {
	load := func(dir string) *overlay {
		o, err := loadOverlay(dir)
		if err != nil {
			c.fail(dir+" builds", err.Error())
		}
		return o
	}
	if o := load("quickstart/k8s/mlops/multi-node"); o != nil {
		expectRefused(c, `negative: an MPIJob with replicas: "two" is refused`, "broken", o, "replicas", func(job *unstructured.Unstructured) error {
			return setField(job, "two", "spec", "mpiReplicaSpecs", "Worker", "replicas")
		})
		expectRefused(c, "negative: an MPIJob with a misspelt field is refused", "broken", o, "slotPerWorker", func(job *unstructured.Unstructured) error {
			return renameField(job, []string{"spec"}, "slotsPerWorker", "slotPerWorker")
		})
	}
	if o := load("quickstart/k8s/mlops/single-node"); o != nil {
		expectRefused(c, `negative: a Pod with runAsUser: "1000" (a string) is refused`, "broken", o, "runAsUser", func(job *unstructured.Unstructured) error {
			uid, found, _ := unstructured.NestedFieldNoCopy(job.Object, "spec", "securityContext", "runAsUser")
			if !found {
				return fmt.Errorf("no spec.securityContext.runAsUser")
			}
			return setField(job, fmt.Sprint(uid), "spec", "securityContext", "runAsUser")
		})
	}
	if o := load("quickstart/k8s/mlops/elastic"); o != nil {
		expectRefused(c, "negative: training-operator's webhook refuses a PyTorchJob without a pytorch container", "broken", o,
			"must have at least one container with name pytorch", func(job *unstructured.Unstructured) error {
				path := []string{"spec", "pytorchReplicaSpecs", "Worker", "template", "spec", "containers"}
				return editListItem(job, path, "pytorch", func(k map[string]any) { k["name"] = "trainer" })
			})
	}
}
