// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/mlops-fn/mlops-fn/internal/testutil"
)

// TestRunnersAgreeOnPublishedJobs: on bases the project did not write (the
// operators' published examples, and jobs written as teams write them), the
// hydrated overlay that kubectl applies, kustomize with the function as an
// exec transformer or in its image, the function on a ResourceList, kpt fn
// eval and the standalone command give the same
// objects, the user's containers patched where they stand.
func TestRunnersAgreeOnPublishedJobs(t *testing.T) {
	kubectl := tool(t, "kubectl", "install kubectl v1.32")
	binary(t)
	fn, err := filepath.Abs(filepath.Join(repoRoot, "bin", "mlops-fn"))
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := testutil.UserJobs()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range jobs {
		name := p.Name()
		if !strings.Contains(p.Spec, "image:") {
			name += ", site settings only"
		}
		t.Run(name, func(t *testing.T) {
			job, err := p.Read()
			if err != nil {
				t.Fatal(err)
			}
			root := t.TempDir()
			files := map[string]string{
				"base/job.yaml":                string(job),
				"base/kustomization.yaml":      "resources:\n- job.yaml\n",
				"overlay/job.yaml":             p.JobSpec(),
				"overlay/mlops.env":            p.Env,
				"exec/kustomization.yaml":      "resources:\n- ../base\ntransformers:\n- fn.yaml\n",
				"exec/fn.yaml":                 "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: mlops-fn\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: " + fn + "\ndata:\n  job: ../overlay/job.yaml\n",
				"kpt/" + filepath.Base(p.File): string(job),
			}
			if strings.Contains(p.Spec, "namespace: hpc") {
				// The spec's namespace: the base (or the kustomization) puts the job there.
				files["base/kustomization.yaml"] = "namespace: hpc\nresources:\n- job.yaml\n"
				files["exec/kustomization.yaml"] = "namespace: hpc\nresources:\n- job.yaml\ntransformers:\n- fn.yaml\n"
				files["exec/job.yaml"] = string(job)
				files["kpt/"+filepath.Base(p.File)] = strings.Replace(string(job), "metadata:\n  name: pi\n", "metadata:\n  name: pi\n  namespace: hpc\n", 1)
			}
			for name, text := range files {
				path := filepath.Join(root, name)
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			overlay := filepath.Join(root, "overlay")
			run(t, fn, "hydrate", "--resources", "../base", overlay)
			want := objects(t, run(t, kubectl, "kustomize", overlay))
			check := func(t *testing.T, out string) {
				t.Helper()
				if diff := cmp.Diff(want, objects(t, out)); diff != "" {
					t.Errorf("differs from kubectl apply -k of the hydrated overlay (-kubectl +runner):\n%s", diff)
				}
			}
			t.Run("kustomize exec", func(t *testing.T) {
				check(t, run(t, kustomizeBin(t), "build", "--enable-alpha-plugins", "--enable-exec", filepath.Join(root, "exec")))
			})
			t.Run("kpt eval exec", func(t *testing.T) {
				kpt := kptBin(t)
				pkg := filepath.Join(root, "kpt")
				run(t, kpt, "fn", "eval", "--exec", fn, pkg, "--", "job="+filepath.Join(overlay, "job.yaml"))
				check(t, readPackage(t, pkg))
			})
			t.Run("KRM, spec as function config", func(t *testing.T) {
				// As a container runner calls it: the spec is the function config,
				// mlops.env arrives as a local-config ConfigMap it names.
				var items []*yaml.RNode
				for _, f := range []string{filepath.Join(root, "kpt", filepath.Base(p.File))} {
					items = append(items, readNodes(t, f)...)
				}
				for id, obj := range want {
					if strings.HasPrefix(id, "ConfigMap/") {
						cm, err := yaml.FromMap(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": obj["data"],
							"metadata": map[string]any{"name": "mlops-env", "annotations": map[string]any{"config.kubernetes.io/local-config": "true"}}})
						if err != nil {
							t.Fatal(err)
						}
						items = append(items, cm)
					}
				}
				config, err := yaml.ReadFile(filepath.Join(overlay, "job.yaml"))
				if err == nil {
					err = config.PipeE(yaml.LookupCreate(yaml.MappingNode, "spec", "envFile", "localConfigMap"), yaml.SetField("name", yaml.NewStringRNode("mlops-env")))
				}
				if err != nil {
					t.Fatal(err)
				}
				out, stderr, err := runResourceList(t, root, items, config)
				if err != nil {
					t.Fatalf("%v\n%s", err, stderr)
				}
				list, err := out.Pipe(yaml.Lookup("items"))
				if err != nil {
					t.Fatal(err)
				}
				elems, err := list.Elements()
				if err != nil {
					t.Fatal(err)
				}
				text, err := kio.StringAll(elems)
				if err != nil {
					t.Fatal(err)
				}
				check(t, text)
			})
			t.Run("kustomize container", func(t *testing.T) {
				image(t)
				dir := filepath.Join(root, "container")
				name := strings.Fields(strings.SplitN(p.Spec, "\n", 2)[0])[1]
				ns, specNS := "", ""
				if strings.Contains(p.Spec, "namespace: hpc") {
					ns, specNS = "namespace: hpc\n", "      namespace: hpc\n"
				}
				for file, text := range map[string]string{
					"kustomization.yaml":        ns + "resources:\n- ../base\nconfigMapGenerator:\n- name: mlops-env\n  envs: [../overlay/mlops.env]\n  options: {disableNameSuffixHash: true, annotations: {config.kubernetes.io/local-config: \"true\"}}\ntransformers:\n- config\n",
					"config/kustomization.yaml": "resources:\n- ../../overlay/job.yaml\npatches:\n- patch: |\n    apiVersion: mlops-fn.dev/v1alpha1\n    kind: MLOpsJob\n    metadata:\n      name: " + name + "\n" + specNS + "      annotations:\n        config.kubernetes.io/function: |\n          container:\n            image: localhost/mlops-fn:dev\n    spec:\n      envFile:\n        localConfigMap: {name: mlops-env}\n",
				} {
					path := filepath.Join(dir, file)
					if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				check(t, run(t, kustomizeBin(t), "build", "--enable-alpha-plugins", "--load-restrictor", "LoadRestrictionsNone", dir))
			})
			t.Run("standalone", func(t *testing.T) {
				check(t, run(t, fn, filepath.Join(overlay, "job.yaml"), filepath.Join(root, "kpt", filepath.Base(p.File))))
			})
			// The user's containers carry the site settings; no second container.
			for _, obj := range want {
				if obj["kind"] == "ConfigMap" {
					continue
				}
				text := run(t, kubectl, "kustomize", overlay)
				// Counted in the base as kustomize reads it: YAML aliases expanded.
				images := strings.Count(run(t, kubectl, "kustomize", filepath.Join(root, "base")), "image:")
				if images == 0 && strings.Contains(p.Spec, "image:") {
					images = 1 // a TrainJob that left the image to its runtime
				}
				if strings.Count(text, "- name: mpi-launcher") > 1 || strings.Count(text, "image:") != images {
					t.Errorf("the hydrated job has another container than the published one's:\n%s", text)
				}
				envFrom := "envFrom:"
				if obj["kind"] == "TrainJob" {
					envFrom = "configMapKeyRef:" // its trainer has no envFrom
				}
				if !strings.Contains(text, envFrom) {
					t.Errorf("the user's containers got no %s\n%s", envFrom, text)
				}
				// The accelerator and /dev/shm of mlops.env reach the job.
				for _, line := range strings.Split(p.Env, "\n") {
					key, value, _ := strings.Cut(line, "=")
					want := map[string]string{"GPU_RESOURCE": value + ": ", "SHM_SIZE": "sizeLimit: " + value}[key]
					if want != "" && !strings.Contains(text, want) {
						t.Errorf("%s=%s: the job has no %q:\n%s", key, value, want, text)
					}
				}
			}
		})
	}
}
