package processor

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/mlops-fn/mlops-fn/pkg/render"
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

// TestPodSecurityControls: each Pod Security control a base can break is
// found in the job as rendered, with its path and the level that forbids
// it; what the job spec and mlops.env ask for is render's to name.
func TestPodSecurityControls(t *testing.T) {
	t.Parallel()
	plan := func() *render.Plan {
		return &render.Plan{Hardening: true, RunAsUser: ptr.To[int64](1000), ContainerName: "x"}
	}
	for _, c := range []struct {
		name, pod, spec, container string
		plan                       func(*render.Plan)
		want                       []string
	}{
		{name: "restricted as rendered"},
		{name: "host namespaces", spec: "hostNetwork: true\n  hostPID: true\n  hostIPC: true", want: []string{
			"baseline spec.hostNetwork: true (the node's network), which baseline forbids",
			"baseline spec.hostPID: true (the node's processes), which baseline forbids",
			"baseline spec.hostIPC: true (the node's IPC), which baseline forbids"}},
		{name: "the spec's hostNetwork is render's", spec: "hostNetwork: true", plan: func(p *render.Plan) { p.HostNetwork = true }},
		{name: "volumes", spec: "volumes: [{name: h, hostPath: {path: /}}, {name: share, nfs: {server: a, path: /}}, {name: e, emptyDir: {}}, {name: i, iscsi: {targetPortal: a, iqn: b, lun: 0}}]", want: []string{
			`baseline spec.volumes[0]: volume "h" is a hostPath, which baseline forbids`,
			`restricted spec.volumes[1]: volume "share" is an inline nfs volume, which restricted forbids (a pvc is allowed)`,
			`restricted spec.volumes[3]: volume "i" is an inline iscsi volume, which restricted forbids (a pvc is allowed)`}},
		{name: "the spec's volumes are render's", spec: "volumes: [{name: h, hostPath: {path: /}}, {name: share, nfs: {server: a, path: /}}]", plan: func(p *render.Plan) {
			p.Volumes = yamlVolumes(t, "[{name: h, hostPath: {path: /}}, {name: share, nfs: {server: a, path: /}}]")
		}},
		{name: "pod security context", pod: strings.Replace(hardenedPod, "seccompProfile: {type: RuntimeDefault}}", "seccompProfile: {type: Unconfined}, appArmorProfile: {type: Unconfined}, seLinuxOptions: {type: spc_t}, sysctls: [{name: kernel.msgmax, value: '1'}, {name: net.ipv4.tcp_syncookies, value: '1'}], windowsOptions: {hostProcess: true}}", 1), want: []string{
			"baseline spec.securityContext.windowsOptions.hostProcess: true, which baseline forbids",
			"baseline spec.securityContext.seccompProfile.type: Unconfined, which baseline forbids",
			"baseline spec.securityContext.appArmorProfile.type: Unconfined, which baseline forbids",
			"baseline spec.securityContext.seLinuxOptions: type spc_t, which baseline forbids",
			"baseline spec.securityContext.sysctls: kernel.msgmax, which baseline forbids",
			// No seccomp profile of the pod's (Unconfined) nor the container's.
			"restricted spec.containers[0].securityContext.seccompProfile: neither RuntimeDefault nor Localhost, nor the pod's (container x), which restricted forbids"}},
		{name: "a container", container: "privileged: true, procMount: Unmasked, seccompProfile: {type: Unconfined}, seLinuxOptions: {user: u}, capabilities: {add: [SYS_ADMIN, CHOWN, NET_BIND_SERVICE], drop: [ALL]}, allowPrivilegeEscalation: true, runAsUser: 0", want: []string{
			"baseline spec.containers[0].securityContext.privileged: true (container x), which baseline forbids",
			"baseline spec.containers[0].securityContext.procMount: Unmasked (container x), which baseline forbids",
			"baseline spec.containers[0].securityContext.seccompProfile.type: Unconfined (container x), which baseline forbids",
			"baseline spec.containers[0].securityContext.seLinuxOptions: user u (container x), which baseline forbids",
			"baseline spec.containers[0].securityContext.capabilities.add: SYS_ADMIN (container x), which baseline forbids",
			"restricted spec.containers[0].securityContext.capabilities.add: CHOWN (container x), which restricted forbids (it lets a container add NET_BIND_SERVICE alone)",
			"restricted spec.containers[0].securityContext.allowPrivilegeEscalation: not false (container x), which restricted forbids",
			"restricted spec.containers[0].securityContext.runAsUser: 0 (container x, root), which restricted forbids"}},
		{name: "rdma's IPC_LOCK is render's", container: "allowPrivilegeEscalation: false, capabilities: {add: [IPC_LOCK], drop: [ALL]}", plan: func(p *render.Plan) { p.RDMAResource = "rdma/hca" }},
		{name: "IPC_LOCK without rdma", container: "allowPrivilegeEscalation: false, capabilities: {add: [IPC_LOCK], drop: [ALL]}", want: []string{
			"baseline spec.containers[0].securityContext.capabilities.add: IPC_LOCK (container x), which baseline forbids"}},
		{name: "root and hardening off are render's", pod: "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers: [{name: x}]\n", plan: func(p *render.Plan) {
			p.Hardening, p.RunAsUser = false, ptr.To[int64](0)
		}},
		{name: "host ports, probes, AppArmor", pod: strings.Replace(hardenedPod, "  name: x\n", "  name: x\n  annotations: {container.apparmor.security.beta.kubernetes.io/x: unconfined, container.apparmor.security.beta.kubernetes.io/y: runtime/default}\n", 1) +
			"    ports: [{containerPort: 80, hostPort: 80}]\n    livenessProbe: {httpGet: {host: 10.0.0.1, port: 80}}\n    lifecycle: {preStop: {tcpSocket: {host: 10.0.0.2, port: 80}}}\n", want: []string{
			"baseline metadata.annotations[container.apparmor.security.beta.kubernetes.io/x]: unconfined (container x's AppArmor profile), which baseline forbids",
			"baseline spec.containers[0].ports[0].hostPort: 80 (container x), which baseline forbids",
			"baseline spec.containers[0].livenessProbe.httpGet.host: 10.0.0.1 (container x), which baseline forbids",
			"baseline spec.containers[0].lifecycle.preStop.tcpSocket.host: 10.0.0.2 (container x), which baseline forbids"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			text := c.pod
			if text == "" {
				text = hardenedPod
				if c.spec != "" {
					text = strings.Replace(text, "spec:\n", "spec:\n  "+c.spec+"\n", 1)
				}
				if c.container != "" {
					text = strings.Replace(text, "    securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}\n", "    securityContext: {"+c.container+"}\n", 1)
				}
			}
			q := plan()
			if c.plan != nil {
				c.plan(q)
			}
			var got []string
			job := yaml.MustParse(text)
			for _, f := range podSecurity(podsOf(job.GetKind(), decoded(job)), q) {
				if !f.planned {
					got = append(got, f.forbids+" "+f.what)
				}
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s\n%s", diff, text)
			}
		})
	}
}

func yamlVolumes(t *testing.T, text string) []corev1.Volume {
	t.Helper()
	var v []corev1.Volume
	if err := sigsyaml.Unmarshal([]byte(text), &v); err != nil {
		t.Fatal(err)
	}
	return v
}
