// SPDX-License-Identifier: Apache-2.0

package processor

import (
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/openapi"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/mlops-fn/mlops-fn/pkg/schema"
)

// noKinds is an OpenAPI document that knows no kind, as a kustomization's
// openapi: field may name: under it, kyaml's merge replaces every list.
var noKinds = []byte(`{"swagger": "2.0", "info": {"title": "no kinds", "version": "v1"}, "paths": {}, "definitions": {}}`)

// TestRenderReadsNoGlobalSchema: the function renders the quickstart alike
// whatever kyaml's global OpenAPI schema holds, and while a kustomize build
// has its turn (schema.WithBuiltIn): from inside that turn, under a document
// that knows no kind, a render that took the builds' lock would wait for
// itself, and one that read the global would replace the job's lists. Side
// by side with builds that switch the global, it renders the same again
// (go test -race: nothing shared unguarded).
func TestRenderReadsNoGlobalSchema(t *testing.T) {
	config, items := quickstartList(t, 0)
	// A sidecar, which a merge of the containers by name keeps.
	containers, err := items[0].Pipe(yaml.Lookup("spec", "mpiReplicaSpecs", "Worker", "template", "spec", "containers"))
	if err != nil || containers == nil {
		t.Fatalf("the quickstart's skeleton has no worker containers: %v", err)
	}
	if err := containers.PipeE(yaml.Append(yaml.MustParse("name: sidecar\nimage: sidecar-image\n").YNode())); err != nil {
		t.Fatal(err)
	}
	render := func() string {
		in := make([]*yaml.RNode, len(items))
		for i, it := range items {
			in[i] = it.Copy()
		}
		rl := &framework.ResourceList{FunctionConfig: config.Copy(), Items: in}
		if err := (Processor{}).Process(rl); err != nil {
			t.Error(err)
			return ""
		}
		var out []string
		for _, it := range rl.Items {
			out = append(out, it.MustString())
		}
		return strings.Join(out, "---\n")
	}
	want := render()
	if !strings.Contains(want, "image: sidecar-image") {
		t.Fatalf("the render lost the sidecar's image (the containers replaced, not merged by name):\n%s", want)
	}
	var inBuild string
	_ = schema.WithBuiltIn(func() error {
		if err := openapi.SetSchema(nil, noKinds, true); err != nil {
			t.Fatal(err)
		}
		inBuild = render()
		return nil
	})
	if diff := cmp.Diff(want, inBuild); diff != "" {
		t.Errorf("rendered during a build under a document that knows no kind (-alone +during):\n%s", diff)
	}

	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			for range 3 {
				if i%2 == 0 {
					_ = schema.WithBuiltIn(func() error { return openapi.SetSchema(nil, noKinds, true) })
				} else if got := render(); got != want {
					t.Errorf("rendered beside builds: differs from the render alone:\n%s", cmp.Diff(want, got))
				}
			}
		})
	}
	wg.Wait()
}
