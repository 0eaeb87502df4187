// SPDX-License-Identifier: Apache-2.0

package processor

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	psa "k8s.io/pod-security-admission/api"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// hardenedPod is a Pod as mlops-fn renders a non-root, hardened job: it
// meets restricted.
const hardenedPod = `apiVersion: v1
kind: Pod
metadata:
  name: x
spec:
  securityContext: {runAsUser: 1000, runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
  containers:
  - name: x
    securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
`

// hardenedTrainJob is a TrainJob whose node pods mlops-fn's runtime patch
// hardens, and PATCH another manager's runtime patch of them.
const hardenedTrainJob = `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: x}
spec:
  runtimeRef: {name: torch-distributed}
  runtimePatches:
  - manager: mlops-fn.dev/mlops-fn
    trainingRuntimeSpec: {template: {spec: {replicatedJobs: [{name: node, template: {spec: {template: {spec: {
      securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}},
      containers: [{name: node, securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}}]}}}}}]}}}
  - manager: example.io/platform
    trainingRuntimeSpec: {template: {spec: {replicatedJobs: [{name: node, template: {spec: {template: {spec: PATCH}}}}]}}}
`

// TestPodSecurity: the level each pod of a job as rendered needs, and the
// API server's words for each level that refuses it.
func TestPodSecurity(t *testing.T) {
	t.Parallel()
	const trainJobNode = "spec.runtimePatches[0,1].trainingRuntimeSpec.template.spec.replicatedJobs[name=node].template.spec.template.spec"
	for _, c := range []struct {
		name, job string
		want      psa.Level
		refused   []string
	}{
		{name: "restricted as rendered", job: hardenedPod, want: psa.LevelRestricted},
		{name: "root", job: strings.Replace(hardenedPod, "runAsUser: 1000, runAsNonRoot: true", "runAsUser: 0", 1), want: psa.LevelBaseline, refused: []string{
			`restricted spec: violates PodSecurity "restricted:latest": runAsNonRoot != true (pod or container "x" must set securityContext.runAsNonRoot=true), runAsUser=0 (pod must not set runAsUser=0)`}},
		{name: "host namespaces and a hostPath", job: strings.Replace(hardenedPod, "spec:\n", "spec:\n  hostNetwork: true\n  hostPID: true\n  volumes: [{name: h, hostPath: {path: /}}]\n", 1), want: psa.LevelPrivileged, refused: []string{
			`restricted spec: violates PodSecurity "restricted:latest": host namespaces (hostNetwork=true, hostPID=true), restricted volume types (volume "h" uses restricted volume type "hostPath")`,
			`baseline spec: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true, hostPID=true), hostPath volumes (volume "h")`}},
		// In a user namespace (hostUsers: false) Kubernetes 1.35's policy lets
		// root and an unmasked /proc through baseline; restricted still
		// refuses the /proc. The hand-written checks called it privileged.
		{name: "a user namespace", job: strings.Replace(strings.Replace(strings.Replace(hardenedPod, "runAsUser: 1000, runAsNonRoot: true", "runAsUser: 0", 1), "spec:\n", "spec:\n  hostUsers: false\n", 1), "drop: [ALL]}", "drop: [ALL]}, procMount: Unmasked", 1),
			want: psa.LevelBaseline, refused: []string{
				`restricted spec: violates PodSecurity "restricted:latest": procMount (container "x" must not set securityContext.procMount to "Unmasked")`}},
		{name: "an MPIJob's roles", job: `apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: x}
spec:
  mpiReplicaSpecs:
    Launcher: {template: {spec: {containers: [{name: l, securityContext: {privileged: true}}]}}}
    Worker: {template: {spec: {containers: [{name: w}]}}}
`, want: psa.LevelPrivileged, refused: []string{
			`restricted spec.mpiReplicaSpecs.Launcher.template.spec: violates PodSecurity "restricted:latest": privileged (container "l" must not set securityContext.privileged=true), allowPrivilegeEscalation != false (container "l" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "l" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "l" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "l" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`,
			`baseline spec.mpiReplicaSpecs.Launcher.template.spec: violates PodSecurity "baseline:latest": privileged (container "l" must not set securityContext.privileged=true)`,
			`restricted spec.mpiReplicaSpecs.Worker.template.spec: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "w" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "w" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "w" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "w" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`}},
		// A TrainJob's runtime patches of one replicated job make one pod.
		{name: "runtime patches merged", job: strings.Replace(hardenedTrainJob, "PATCH", "{containers: [{name: node, env: [{name: A, value: b}]}]}", 1), want: psa.LevelRestricted},
		{name: "a later runtime patch's field wins", job: strings.Replace(hardenedTrainJob, "PATCH", "{containers: [{name: node, securityContext: {allowPrivilegeEscalation: true}}]}", 1), want: psa.LevelBaseline, refused: []string{
			`restricted ` + trainJobNode + `: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "node" must set securityContext.allowPrivilegeEscalation=false)`}},
		{name: "another manager's hostPath", job: strings.Replace(hardenedTrainJob, "PATCH", "{volumes: [{name: nvme, hostPath: {path: /mnt}}]}", 1), want: psa.LevelPrivileged, refused: []string{
			`restricted ` + trainJobNode + `: violates PodSecurity "restricted:latest": restricted volume types (volume "nvme" uses restricted volume type "hostPath")`,
			`baseline ` + trainJobNode + `: violates PodSecurity "baseline:latest": hostPath volumes (volume "nvme")`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			level, refusals := PodSecurity(yaml.MustParse(c.job))
			var got []string
			for _, r := range refusals {
				got = append(got, string(r.Level)+" "+r.Path+": "+r.Message)
			}
			if level != c.want {
				t.Errorf("level %s, want %s", level, c.want)
			}
			if diff := cmp.Diff(c.refused, got); diff != "" {
				t.Errorf("refusals (-want +got):\n%s\n%s", diff, c.job)
			}
		})
	}
}

// TestPodSecurityNotice names the level the pods need and what the level
// above it refuses, pods refused alike together, with mlops-fn's settings
// that bear on it.
func TestPodSecurityNotice(t *testing.T) {
	t.Parallel()
	job := yaml.MustParse(`apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: x}
spec:
  mpiReplicaSpecs:
    Launcher: {template: {spec: {hostNetwork: true, containers: [{name: x}], volumes: [{name: h, hostPath: {path: /}}]}}}
    Worker: {template: {spec: {hostNetwork: true, containers: [{name: x}], volumes: [{name: h, hostPath: {path: /}}]}}}
`)
	got := podSecurityNotice("MPIJob/x", Pods(job), true)
	want := `MPIJob/x: the pods need Pod Security level privileged: spec.mpiReplicaSpecs.Launcher.template.spec, spec.mpiReplicaSpecs.Worker.template.spec: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true), hostPath volumes (volume "h"); ` +
		`the namespace's pod-security.kubernetes.io/enforce label must allow it (spec.hostNetwork sets hostNetwork; spec.volumes' hostPath is one)`
	if got != want {
		t.Errorf("verbose:\ngot  %s\nwant %s", got, want)
	}
	// One short line: the level, what needs it, once for all pods.
	got = podSecurityNotice("MPIJob/x", Pods(job), false)
	want = `MPIJob/x: the pods need Pod Security level privileged: host namespaces (hostNetwork=true), hostPath volume "h" (more: --verbose, docs/job-spec.md#pod-security)`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// The host namespace the base shares is named, not the one it does not.
	hostPID := yaml.MustParse(strings.Replace(hardenedPod, "spec:\n  securityContext", "spec:\n  hostPID: true\n  securityContext", 1))
	got = podSecurityNotice("Pod/x", Pods(hostPID), true)
	if !strings.HasSuffix(got, "host namespaces (hostPID=true); the namespace's pod-security.kubernetes.io/enforce label must allow it (hostPID is the base's: no setting of mlops-fn's sets it)") {
		t.Errorf("hostPID: %s", got)
	}
	root := yaml.MustParse(strings.Replace(hardenedPod, "runAsUser: 1000, runAsNonRoot: true", "runAsUser: 0", 1))
	got = podSecurityNotice("Pod/x", Pods(root), true)
	if !strings.Contains(got, "level baseline: spec: violates PodSecurity \"restricted:latest\": runAsNonRoot != true") || !strings.Contains(got, "a non-root USER_ID") {
		t.Errorf("root, verbose: %s", got)
	}
	if got = podSecurityNotice("Pod/x", Pods(root), false); got != "Pod/x: the pods need Pod Security level baseline: runAsNonRoot != true, runAsUser=0 (more: --verbose, docs/job-spec.md#pod-security)" {
		t.Errorf("root: %s", got)
	}
	if job := yaml.MustParse(hardenedPod); podSecurityNotice("Pod/x", Pods(job), true) != "" {
		t.Error("a notice for a pod restricted admits")
	}
}

// TestPodsMergeRuntimePatchesAsTrainer: a later runtime patch's volume of the
// same name merges into the earlier one, its tolerations replace the
// earlier ones, as in Trainer's strategic merge (not appended).
func TestPodsMergeRuntimePatchesAsTrainer(t *testing.T) {
	t.Parallel()
	job := strings.Replace(strings.Replace(hardenedTrainJob, "securityContext: {runAsNonRoot: true,",
		"volumes: [{name: data, nfs: {server: a, path: /}}], tolerations: [{key: a, operator: Exists}], securityContext: {runAsNonRoot: true,", 1),
		"PATCH", "{volumes: [{name: data, nfs: {server: b, path: /}}], tolerations: [{key: b, operator: Exists}]}", 1)
	pods := Pods(yaml.MustParse(job))
	if len(pods) != 1 {
		t.Fatalf("%d pods, want 1", len(pods))
	}
	s := pods[0].Spec
	if len(s.Volumes) != 1 || s.Volumes[0].NFS.Server != "b" || len(s.Tolerations) != 1 || s.Tolerations[0].Key != "b" || s.SecurityContext.SeccompProfile == nil {
		t.Errorf("merged pod spec: volumes %+v, tolerations %+v, securityContext %+v", s.Volumes, s.Tolerations, s.SecurityContext)
	}
}
