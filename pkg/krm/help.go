// SPDX-License-Identifier: Apache-2.0

package krm

import (
	"fmt"
	"strings"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/env"
	"github.com/mlops-fn/mlops-fn/pkg/kinds"
)

// jobKinds are the kinds' paragraphs, the default's first.
func jobKinds() string {
	var b strings.Builder
	for _, first := range []bool{true, false} {
		for _, k := range kinds.All {
			if k.Default == first {
				fmt.Fprintf(&b, "  %-12s %s\n", k.Kind, strings.ReplaceAll(k.Help, "\n", "\n"+strings.Repeat(" ", 15)))
			}
		}
	}
	return b.String()
}

// Help is the --help text, which `kpt fn doc` shows too.
func Help() string {
	var keys strings.Builder
	for _, k := range env.KnownKeys() {
		fmt.Fprintf(&keys, "  %-17s %-22s %s\n", k.Key, k.Type, strings.ReplaceAll(k.Description, "`", ""))
	}
	return fmt.Sprintf(`mlops-fn renders distributed-training manifests from two small files:
mlops.env (KEY=VALUE, the site and the user) and a job spec (the workload).

spec.jobKind is the kind the job becomes:
%sAll get USER_ID/GROUP_ID from mlops.env as integers at the pod level (and the
fsGroup, except on a root MPIJob, where it would expose the SSH key), the NFS
volume from NFS_SERVER/NFS_PATH, and every mlops.env key as an environment
variable through the ConfigMap of the same values.

Usage:
  mlops-fn                          KRM function: ResourceList on stdin, ResourceList on stdout
                                    (kustomize transformers:/generators:, kpt fn render/eval)
  mlops-fn JOB.yaml [INPUT.yaml|-]  standalone: print the objects as plain YAML; with inputs,
                                    patch their MPIJob/Pod/PyTorchJob/TrainJob/JobSet instead of generating new ones
  mlops-fn init DIR [-- CMD ARG...] write a new job's folder (mlops.env, job.yaml, base/), hydrated
  mlops-fn hydrate DIR...           write DIR's patches and kustomization for kubectl apply -k
  mlops-fn apply DIR [--replace]    hydrate, then apply with client-go (no kubectl needed): a live job
                                    the edit changes is left as it is (--replace: deleted, then applied anew)
  mlops-fn delete DIR               delete DIR's job and env ConfigMap, also after an edit not hydrated
  mlops-fn status DIR               where DIR's job is: phase, pods ready, and when it waits, why
  mlops-fn logs DIR [-f]            the log of DIR's training program (launcher, worker/node 0, the Pod)
  mlops-fn version                  the release, the commit and whether its tree was modified (or --version)

Existing jobs of spec.jobKind named like the job (or chosen by
spec.target) are patched; otherwise the objects are generated. Running it again
on its output changes nothing.

mlops.env is a file beside the job spec (spec.envFile.path), its text
(spec.envFile.inline), or, in a kpt package (Kptfile: exec: mlops-fn or the
image, configPath: job.yaml), a ConfigMap of the package annotated
config.kubernetes.io/local-config: "true" that spec.envFile.localConfigMap:
{name: NAME} names: then nothing outside the ResourceList is read. A runner
that reads no files may hand it the env ConfigMap (configMapGenerator); two
sources that disagree are an error (docs/mlops-env.md, "One source").

Job spec (function config):
  apiVersion: %s
  kind: %s
  metadata:
    name: resnet50                  # the job's name; pods NAME-launcher, NAME-worker-N
  spec:
    jobKind: MPIJob                 # the kind the job becomes: MPIJob (multi-node, default), Pod, PyTorchJob (elastic), TrainJob, JobSet
    image: ${REGISTRY}/model-zoo:2.1.0-image-recognition-${MODEL_NAME}
    script: ${MODEL_DIR}/quickstart/${MODEL_SCRIPT}   # or command: [python, train.py]
    # PyTorchJob: command: [torchrun, /workspace/train.py] and elastic: {minWorkers: 1, maxWorkers: 3}
    workingDir: ${MODEL_DIR}
    volumes:
    - name: datasets
      mountPath: ${DATASET_DIR}
      readOnly: true
      hostPath: {path: /datasets}   # or nfs: {path: /export/data}, pvc: {claimName: data}
  (all fields: see docs/job-spec.md)

mlops.env keys (a setting the spec can hold too goes in one of the two; every key
also becomes an env var):
%s
Errors name the file, line or field, the value and what is accepted; the
exit code is 1. Standalone and hydrate then write nothing; a KRM run returns
its items unchanged, with the errors as results (and on stderr).
`, jobKinds(), api.APIVersion, api.Kind, keys.String())
}
