// SPDX-License-Identifier: Apache-2.0

package hydrate

import (
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/mlops-fn/mlops-fn/internal/testutil"
	"github.com/mlops-fn/mlops-fn/pkg/kinds"
)

// TestTheEnvConfigMapIsHashed: each quickstart overlay, built as kubectl builds it, names its
// env ConfigMap with kustomize's hash of the data, and every reference of the job to it
// follows (the MPIJob's, PyTorchJob's and TrainJob's through the component's name references):
// an edit of mlops.env makes a new ConfigMap, and a job that keeps running reads its own.
func TestTheEnvConfigMapIsHashed(t *testing.T) {
	t.Parallel()
	for _, k := range kinds.All {
		dir := filepath.Join("..", "..", "quickstart", "k8s", "mlops", testutil.QuickstartFolder[k.JobKind()])
		items, err := build(filesys.MakeFsOnDisk(), dir)
		if err != nil {
			t.Fatal(err)
		}
		var hashed string
		for _, it := range items {
			if n := it.GetName(); it.GetKind() == "ConfigMap" && envHashed.MatchString(n) {
				hashed = n
			}
		}
		if hashed == "" {
			t.Errorf("%s: no env ConfigMap named NAME-KIND-env-HASH in the build", dir)
			continue
		}
		plain := envHashed.FindStringSubmatch(hashed)[1]
		for _, it := range items {
			if !kinds.All.Is(it.GetKind()) {
				continue
			}
			text := it.MustString()
			if n := strings.Count(text, hashed); n == 0 {
				t.Errorf("%s: %s/%s does not name %s", dir, it.GetKind(), it.GetName(), hashed)
			}
			if strings.Count(text, plain+"\n") > 0 {
				t.Errorf("%s: %s/%s names the env ConfigMap without its hash, %s:\n%s", dir, it.GetKind(), it.GetName(), plain, text)
			}
		}
	}
}

// TestAReferenceWithoutTheHashIsRefused: hydrate's check names a field of the job that still
// names the env ConfigMap without kustomize's hash (a reference kustomize does not know).
func TestAReferenceWithoutTheHashIsRefused(t *testing.T) {
	t.Parallel()
	function := []*yaml.RNode{yaml.MustParse("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bert-mpijob-env}\n")}
	job := "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {name: bert}\nspec:\n  a: {configMapRef: {name: bert-mpijob-env-5hfd8h55cf}}\n"
	hydrated := []*yaml.RNode{yaml.MustParse("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bert-mpijob-env-5hfd8h55cf}\n"), yaml.MustParse(job)}
	got, err := unhashedEnv(function, hydrated)
	if err != nil {
		t.Fatal(err)
	}
	if n := got[1].MustString(); !strings.Contains(n, "name: bert-mpijob-env}") && !strings.Contains(n, "name: bert-mpijob-env\n") {
		t.Errorf("the reference is not named as the function names it:\n%s", n)
	}
	stale := yaml.MustParse(job + "  b: {configMapRef: {name: bert-mpijob-env}}\n")
	_, err = unhashedEnv(function, []*yaml.RNode{hydrated[0], stale})
	if err == nil || !strings.Contains(err.Error(), "MPIJob/bert: spec.b.configMapRef.name names ConfigMap bert-mpijob-env") {
		t.Errorf("want the stale reference named, got %v", err)
	}
}
