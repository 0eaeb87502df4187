// SPDX-License-Identifier: Apache-2.0

package testutil

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Unstructured is o (decoded JSON) as client-go's unstructured objects hold
// it: numbers int64, not encoding/json's float64.
func Unstructured(t *testing.T, o map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(b); err != nil {
		t.Fatal(err)
	}
	return u.Object
}
