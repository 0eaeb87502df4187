// SPDX-License-Identifier: Apache-2.0

package trainjob

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestEmptyPodSpecPatch: a pod spec with nothing a runtime patch carries
// gives no patch.
func TestEmptyPodSpecPatch(t *testing.T) {
	if podSpecPatch(corev1.PodSpec{Containers: []corev1.Container{{Name: "node", SecurityContext: &corev1.SecurityContext{}}}}) != nil {
		t.Error("a pod spec with nothing a runtime patch carries gives a patch")
	}
}
