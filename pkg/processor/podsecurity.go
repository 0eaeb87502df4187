package processor

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	kubeflow "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	kubeflowv1 "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/render"
)

// The Pod Security Standards' levels, strictest first: a pod a level
// forbids needs the next one.
const (
	restricted = "restricted"
	baseline   = "baseline"
	privileged = "privileged"
)

// podAt is a pod spec of a job as rendered, with where it stands.
type podAt struct {
	// path is the pod spec's field path; meta its template's metadata's.
	path, meta  string
	annotations map[string]string
	spec        corev1.PodSpec
	// filled: mlops-fn fills this pod spec; role is its role then.
	filled bool
	role   jobkind.Role
	// partial: a TrainJob's runtime patch, whose pods the runtime completes:
	// a field it leaves out may be the runtime's.
	partial bool
}

// decoded is a job read into its upstream Go type, unknown fields ignored
// (a base's job: Check decodes the job as rendered strictly); nil when it does
// not decode.
func decoded(job *yaml.RNode) any {
	k, ok := jobkind.ForKind(job.GetKind())
	if !ok {
		return nil
	}
	b, err := job.MarshalJSON()
	if err != nil {
		return nil
	}
	obj := k.New()
	if json.Unmarshal(b, obj) != nil {
		return nil
	}
	return obj
}

// podsOf are every pod spec of job, of kind, in its upstream Go type (an
// operator's replica types mlops-fn does not fill among them).
func podsOf(kind string, obj any) []podAt {
	k, ok := jobkind.ForKind(kind)
	if !ok {
		return nil
	}
	var pods []podAt
	template := func(prefix string, t corev1.PodTemplateSpec, filled bool, role jobkind.Role) {
		filled = filled && k.PodSpecPath(role) != nil
		pods = append(pods, podAt{path: prefix + ".spec", meta: prefix + ".metadata", annotations: t.Annotations, spec: t.Spec, filled: filled, role: role})
	}
	switch o := obj.(type) {
	case *corev1.Pod:
		pods = append(pods, podAt{path: "spec", meta: "metadata", annotations: o.Annotations, spec: o.Spec, filled: true})
	case *kubeflow.MPIJob:
		for _, rt := range slices.Sorted(maps.Keys(o.Spec.MPIReplicaSpecs)) {
			if r := o.Spec.MPIReplicaSpecs[rt]; r != nil {
				template("spec.mpiReplicaSpecs."+string(rt)+".template", r.Template, true, jobkind.Role(rt)) // not Master: Check refuses it
			}
		}
	case *kubeflowv1.PyTorchJob:
		for _, rt := range slices.Sorted(maps.Keys(o.Spec.PyTorchReplicaSpecs)) {
			if r := o.Spec.PyTorchReplicaSpecs[rt]; r != nil {
				template("spec.pytorchReplicaSpecs."+string(rt)+".template", r.Template, rt == kubeflowv1.PyTorchJobReplicaTypeWorker, "")
			}
		}
	case *trainer.TrainJob:
		for i, patch := range o.Spec.RuntimePatches {
			if patch.TrainingRuntimeSpec == nil || patch.TrainingRuntimeSpec.Template == nil || patch.TrainingRuntimeSpec.Template.Spec == nil {
				continue
			}
			for j, rj := range patch.TrainingRuntimeSpec.Template.Spec.ReplicatedJobs {
				if rj.Template == nil || rj.Template.Spec == nil || rj.Template.Spec.Template == nil {
					continue
				}
				t := rj.Template.Spec.Template
				prefix := fmt.Sprintf("spec.runtimePatches[%d].trainingRuntimeSpec.template.spec.replicatedJobs[%d].template.spec.template", i, j)
				pod := podAt{path: prefix + ".spec", meta: prefix + ".metadata", partial: true,
					filled: patch.Manager == jobkind.RuntimePatchManager, role: jobkind.Role(rj.Name)}
				if t.Metadata != nil {
					pod.annotations = t.Metadata.Annotations
				}
				if s := t.Spec; s != nil {
					pod.spec.Volumes, pod.spec.SecurityContext = s.Volumes, s.SecurityContext
					for _, c := range s.InitContainers {
						pod.spec.InitContainers = append(pod.spec.InitContainers, corev1.Container{Name: c.Name, SecurityContext: c.SecurityContext})
					}
					for _, c := range s.Containers {
						pod.spec.Containers = append(pod.spec.Containers, corev1.Container{Name: c.Name, SecurityContext: c.SecurityContext})
					}
				}
				pods = append(pods, pod)
			}
		}
	}
	return pods
}

// podFinding is what keeps a pod from a Pod Security level.
type podFinding struct {
	// forbids is the level that forbids it: baseline (the pod needs
	// privileged) or restricted (it needs baseline).
	forbids string
	what    string
	// planned: the job spec or mlops.env asks for it, and render's own
	// warning (Plan.PodSecurityLevel) names it already.
	planned bool
}

// baselineCapabilities are the capabilities baseline lets a container add
// (the container runtime's defaults); restricted lets it add only
// NET_BIND_SERVICE, and it must drop ALL.
var baselineCapabilities = []corev1.Capability{"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"}

// safeSysctls are those baseline allows (Kubernetes 1.32 to 1.36).
var safeSysctls = []string{"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range",
	"net.ipv4.ip_unprivileged_port_start", "net.ipv4.ip_local_reserved_ports", "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout",
	"net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes", "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"}

// seLinuxTypes are the SELinux types baseline allows.
var seLinuxTypes = []string{"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"}

// appArmorAnnotation prefixes the (deprecated) per-container AppArmor annotation.
const appArmorAnnotation = "container.apparmor.security.beta.kubernetes.io/"

// podSecurity checks the pods of a job as rendered against the Pod Security
// Standards' controls (pod-security-admission's checks, by the same rules)
// and finds what keeps them from restricted, with each field's path.
func podSecurity(pods []podAt, q *render.Plan) []podFinding {
	var out []podFinding
	add := func(forbids string, planned bool, format string, args ...any) {
		out = append(out, podFinding{forbids, fmt.Sprintf(format, args...), planned})
	}
	ours := map[string]*corev1.Volume{}
	for i := range q.Volumes {
		ours[q.Volumes[i].Name] = &q.Volumes[i]
	}
	hardened := q.Hardening
	nonRoot := q.RunAsUser != nil && *q.RunAsUser != 0
	for _, pod := range pods {
		s, at := pod.spec, pod.path
		for _, ns := range []struct {
			on   bool
			name string
			why  string
		}{{s.HostNetwork, "hostNetwork", "the node's network"}, {s.HostPID, "hostPID", "the node's processes"}, {s.HostIPC, "hostIPC", "the node's IPC"}} {
			if ns.on {
				add(baseline, ns.name == "hostNetwork" && q.HostNetwork && pod.filled, "%s.%s: true (%s), which baseline forbids", at, ns.name, ns.why)
			}
		}
		for i, v := range s.Volumes {
			mine := ours[v.Name]
			switch src := volumeSource(v.VolumeSource); {
			case v.HostPath != nil:
				add(baseline, mine != nil && mine.HostPath != nil && pod.filled, "%s.volumes[%d]: volume %q is a hostPath, which baseline forbids", at, i, v.Name)
			case src != "" && !slices.Contains([]string{"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "image", "persistentVolumeClaim", "projected", "secret"}, src):
				add(restricted, mine != nil && mine.NFS != nil && v.NFS != nil && pod.filled, "%s.volumes[%d]: volume %q is an inline %s volume, which restricted forbids (a pvc is allowed)", at, i, v.Name, src)
			}
		}
		if sc := s.SecurityContext; sc != nil {
			if sc.WindowsOptions != nil && sc.WindowsOptions.HostProcess != nil && *sc.WindowsOptions.HostProcess {
				add(baseline, false, "%s.securityContext.windowsOptions.hostProcess: true, which baseline forbids", at)
			}
			if sc.SeccompProfile != nil && sc.SeccompProfile.Type == corev1.SeccompProfileTypeUnconfined {
				add(baseline, false, "%s.securityContext.seccompProfile.type: Unconfined, which baseline forbids", at)
			}
			if sc.AppArmorProfile != nil && sc.AppArmorProfile.Type == corev1.AppArmorProfileTypeUnconfined {
				add(baseline, false, "%s.securityContext.appArmorProfile.type: Unconfined, which baseline forbids", at)
			}
			if o := sc.SELinuxOptions; o != nil && (!slices.Contains(seLinuxTypes, o.Type) || o.User != "" || o.Role != "") {
				add(baseline, false, "%s.securityContext.seLinuxOptions: %s, which baseline forbids", at, seLinux(o))
			}
			for _, sysctl := range sc.Sysctls {
				if !slices.Contains(safeSysctls, sysctl.Name) {
					add(baseline, false, "%s.securityContext.sysctls: %s, which baseline forbids", at, sysctl.Name)
				}
			}
			if sc.RunAsUser != nil && *sc.RunAsUser == 0 {
				add(restricted, !nonRoot, "%s.securityContext.runAsUser: 0 (root), which restricted forbids", at)
			}
			if sc.RunAsNonRoot != nil && !*sc.RunAsNonRoot {
				add(restricted, !nonRoot, "%s.securityContext.runAsNonRoot: false, which restricted forbids", at)
			}
		}
		for _, name := range slices.Sorted(maps.Keys(pod.annotations)) {
			if c, ok := strings.CutPrefix(name, appArmorAnnotation); ok {
				if v := pod.annotations[name]; v != "" && v != "runtime/default" && !strings.HasPrefix(v, "localhost/") {
					add(baseline, false, "%s.annotations[%s]: %s (container %s's AppArmor profile), which baseline forbids", pod.meta, name, v, c)
				}
			}
		}
		podNonRoot := s.SecurityContext != nil && s.SecurityContext.RunAsNonRoot != nil && *s.SecurityContext.RunAsNonRoot
		podSeccomp := s.SecurityContext != nil && s.SecurityContext.SeccompProfile != nil &&
			(s.SecurityContext.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault || s.SecurityContext.SeccompProfile.Type == corev1.SeccompProfileTypeLocalhost)
		training := ""
		if pod.filled {
			training = q.ContainerOf(pod.role)
		}
		for _, list := range []struct {
			field string
			cs    []corev1.Container
		}{{"initContainers", s.InitContainers}, {"containers", s.Containers}} {
			for i, c := range list.cs {
				cat := fmt.Sprintf("%s.%s[%d]", at, list.field, i)
				who := fmt.Sprintf("container %s", c.Name)
				for j, p := range c.Ports {
					if p.HostPort != 0 {
						add(baseline, false, "%s.ports[%d].hostPort: %d (%s), which baseline forbids", cat, j, p.HostPort, who)
					}
				}
				for _, probe := range []struct {
					name string
					p    *corev1.Probe
				}{{"livenessProbe", c.LivenessProbe}, {"readinessProbe", c.ReadinessProbe}, {"startupProbe", c.StartupProbe}} {
					if p := probe.p; p != nil && p.HTTPGet != nil && p.HTTPGet.Host != "" {
						add(baseline, false, "%s.%s.httpGet.host: %s (%s), which baseline forbids", cat, probe.name, p.HTTPGet.Host, who)
					}
					if p := probe.p; p != nil && p.TCPSocket != nil && p.TCPSocket.Host != "" {
						add(baseline, false, "%s.%s.tcpSocket.host: %s (%s), which baseline forbids", cat, probe.name, p.TCPSocket.Host, who)
					}
				}
				if l := c.Lifecycle; l != nil {
					for _, h := range []struct {
						name string
						h    *corev1.LifecycleHandler
					}{{"postStart", l.PostStart}, {"preStop", l.PreStop}} {
						if h.h != nil && h.h.HTTPGet != nil && h.h.HTTPGet.Host != "" {
							add(baseline, false, "%s.lifecycle.%s.httpGet.host: %s (%s), which baseline forbids", cat, h.name, h.h.HTTPGet.Host, who)
						}
						if h.h != nil && h.h.TCPSocket != nil && h.h.TCPSocket.Host != "" {
							add(baseline, false, "%s.lifecycle.%s.tcpSocket.host: %s (%s), which baseline forbids", cat, h.name, h.h.TCPSocket.Host, who)
						}
					}
				}
				sc := c.SecurityContext
				if sc == nil {
					sc = &corev1.SecurityContext{}
				}
				csc := cat + ".securityContext"
				if sc.Privileged != nil && *sc.Privileged {
					add(baseline, false, "%s.privileged: true (%s), which baseline forbids", csc, who)
				}
				if sc.WindowsOptions != nil && sc.WindowsOptions.HostProcess != nil && *sc.WindowsOptions.HostProcess {
					add(baseline, false, "%s.windowsOptions.hostProcess: true (%s), which baseline forbids", csc, who)
				}
				if sc.ProcMount != nil && *sc.ProcMount != corev1.DefaultProcMount {
					add(baseline, false, "%s.procMount: %s (%s), which baseline forbids", csc, *sc.ProcMount, who)
				}
				if sc.SeccompProfile != nil && sc.SeccompProfile.Type == corev1.SeccompProfileTypeUnconfined {
					add(baseline, false, "%s.seccompProfile.type: Unconfined (%s), which baseline forbids", csc, who)
				}
				if sc.AppArmorProfile != nil && sc.AppArmorProfile.Type == corev1.AppArmorProfileTypeUnconfined {
					add(baseline, false, "%s.appArmorProfile.type: Unconfined (%s), which baseline forbids", csc, who)
				}
				if o := sc.SELinuxOptions; o != nil && (!slices.Contains(seLinuxTypes, o.Type) || o.User != "" || o.Role != "") {
					add(baseline, false, "%s.seLinuxOptions: %s (%s), which baseline forbids", csc, seLinux(o), who)
				}
				var added, dropped []corev1.Capability
				if sc.Capabilities != nil {
					added, dropped = sc.Capabilities.Add, sc.Capabilities.Drop
				}
				for _, capability := range added {
					rdma := capability == "IPC_LOCK" && q.RDMAResource != "" && c.Name == training
					switch {
					case !slices.Contains(baselineCapabilities, capability):
						add(baseline, rdma, "%s.capabilities.add: %s (%s), which baseline forbids", csc, capability, who)
					case capability != "NET_BIND_SERVICE":
						add(restricted, false, "%s.capabilities.add: %s (%s), which restricted forbids (it lets a container add NET_BIND_SERVICE alone)", csc, capability, who)
					}
				}
				// What restricted requires of every container, which a runtime patch
				// may leave to its runtime.
				if sc.AllowPrivilegeEscalation != nil && *sc.AllowPrivilegeEscalation || sc.AllowPrivilegeEscalation == nil && !pod.partial {
					add(restricted, !hardened, "%s.allowPrivilegeEscalation: not false (%s), which restricted forbids", csc, who)
				}
				if !slices.Contains(dropped, "ALL") && !pod.partial {
					add(restricted, !hardened || !nonRoot, "%s.capabilities.drop: not ALL (%s), which restricted forbids", csc, who)
				}
				if sc.RunAsUser != nil && *sc.RunAsUser == 0 {
					add(restricted, !nonRoot, "%s.runAsUser: 0 (%s, root), which restricted forbids", csc, who)
				}
				switch {
				case sc.RunAsNonRoot != nil && !*sc.RunAsNonRoot:
					add(restricted, !nonRoot, "%s.runAsNonRoot: false (%s), which restricted forbids", csc, who)
				case sc.RunAsNonRoot == nil && !podNonRoot && !pod.partial:
					add(restricted, !nonRoot, "%s.runAsNonRoot: unset, and so is the pod's (%s), which restricted forbids", csc, who)
				}
				if !podSeccomp && !pod.partial && (sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault && sc.SeccompProfile.Type != corev1.SeccompProfileTypeLocalhost) {
					add(restricted, !hardened, "%s.seccompProfile: neither RuntimeDefault nor Localhost, nor the pod's (%s), which restricted forbids", csc, who)
				}
			}
		}
	}
	return out
}

// seLinux writes SELinux options for a message.
func seLinux(o *corev1.SELinuxOptions) string {
	var parts []string
	for _, kv := range [][2]string{{"user", o.User}, {"role", o.Role}, {"type", o.Type}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+" "+kv[1])
		}
	}
	return strings.Join(parts, ", ")
}

// baseLevelNotice is the warning about what the job as rendered brings below
// restricted beyond what the job spec and mlops.env ask for (render's own
// warning names those): the level it needs, and each field, "" when none.
func baseLevelNotice(kind string, job any, id string, q *render.Plan) string {
	level := restricted
	var reasons []string
	for _, f := range podSecurity(podsOf(kind, job), q) {
		if f.planned {
			continue
		}
		switch {
		case f.forbids == baseline:
			level = privileged
		case level == restricted:
			level = baseline
		}
		reasons = append(reasons, f.what)
	}
	if len(reasons) == 0 {
		return ""
	}
	return fmt.Sprintf("%s: the pods need Pod Security level %s for what the base brings, beyond what the job spec and mlops.env ask for: %s; the namespace's pod-security.kubernetes.io/enforce label must allow it",
		id, level, strings.Join(reasons, "; "))
}

// hostNetworkDNS checks the target's pods on the node's network (hostNetwork
// of the base's, not the spec's, whose patch sets both): without dnsPolicy
// ClusterFirstWithHostNet, Kubernetes gives them the node's resolver (its
// ClusterFirst falls back to Default there), so the pods of a job cannot
// resolve each other's names and the job fails once running: an error for
// the operators' kinds, a notice for a Pod, which has no peers (an explicit
// Default or None is the user's choice).
func hostNetworkDNS(target *yaml.RNode, q *render.Plan) (string, error) {
	for _, pod := range podsOf(target.GetKind(), decoded(target)) {
		s := pod.spec
		if !s.HostNetwork || s.DNSPolicy != "" && s.DNSPolicy != corev1.DNSClusterFirst || pod.filled && q.HostNetwork {
			continue
		}
		policy := "no dnsPolicy"
		if s.DNSPolicy != "" {
			policy = "dnsPolicy ClusterFirst"
		}
		if target.GetKind() == "Pod" {
			return fmt.Sprintf("%s.hostNetwork: true with %s: the Pod resolves names as its node does, so not the cluster's services (Kubernetes' ClusterFirst falls back to Default on the node's network); if it reaches any, add dnsPolicy: ClusterFirstWithHostNet, or set spec.hostNetwork: true in the job spec, which sets both", pod.path, policy), nil
		}
		return "", fmt.Errorf("%s.hostNetwork: true with %s: on the node's network Kubernetes gives the pods the node's resolver (its ClusterFirst falls back to Default), so they cannot resolve each other's names (the workers the launcher or the rendezvous reaches) and the job fails once running; accepted: dnsPolicy: ClusterFirstWithHostNet beside it, spec.hostNetwork: true in the job spec (mlops-fn then sets both), or no hostNetwork", pod.path, policy)
	}
	return "", nil
}
