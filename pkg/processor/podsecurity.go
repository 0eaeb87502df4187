// SPDX-License-Identifier: Apache-2.0

package processor

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	psa "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/jobnode"
	"github.com/mlops-fn/mlops-fn/pkg/kinds"
	"github.com/mlops-fn/mlops-fn/pkg/render"
)

// Pod is a pod spec of a job as rendered, as Pod Security admission sees it.
type Pod = jobnode.PodTemplate

// Pods are every pod spec of job, as rendered (a TrainJob's runtime patches merged per replicated job), job read
// leniently into its upstream Go type (a base's: Check reads the rendered strictly).
func Pods(job *yaml.RNode) []Pod {
	k, ok := kinds.All.ForKind(job.GetKind())
	if !ok {
		return nil
	}
	obj := k.New()
	if b, err := jobnode.JSON(job); err != nil || json.Unmarshal(b, obj) != nil {
		return nil
	}
	return podsOf(job.GetKind(), obj)
}

// podsOf are every pod spec of job, of kind, in its upstream Go type, as the kind lists them.
func podsOf(kind string, obj any) []Pod {
	if k := kinds.Of(jobkind.JobKind(kind)); k != nil {
		return k.PodTemplates(obj)
	}
	return nil
}

// evaluator is the API server's own Pod Security evaluator, its default checks.
var evaluator = sync.OnceValue(func() policy.Evaluator {
	e, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		panic(err) // the module's own checks are valid
	}
	return e
})

// podSecurityVersion is what an enforce label means without an enforce-version label: latest, here the newest policy
// of k8s.io/pod-security-admission, which go.mod keeps with the k8s.io/api mlops-fn renders (v0.36: Kubernetes 1.36).
var podSecurityVersion = psa.LatestVersion()

// levels are the Pod Security Standards' levels, strictest first: a pod a level refuses needs the next one.
var levels = []psa.Level{psa.LevelRestricted, psa.LevelBaseline, psa.LevelPrivileged}

// Refusal is Pod Security admission refusing a pod of a job at a level.
type Refusal struct {
	Level psa.Level
	// Path is the pod spec's field path in the job.
	Path string
	// Message is the API server's words: violates PodSecurity "LEVEL:VERSION": reasons (details).
	Message string
	// Reasons are the checks' forbidden reasons, as in Message; Details their details ("" where a check gives none).
	Reasons, Details []string
}

// PodSecurity evaluates job's pods as the API server's admission does: the strictest level admitting all, each refusal.
func PodSecurity(job *yaml.RNode) (psa.Level, []Refusal) {
	return podSecurity(Pods(job))
}

func podSecurity(pods []Pod) (psa.Level, []Refusal) {
	needs := 0
	var refused []Refusal
	for _, pod := range pods {
		for i, level := range levels[:len(levels)-1] {
			lv := psa.LevelVersion{Level: level, Version: podSecurityVersion}
			r := policy.AggregateCheckResults(evaluator().EvaluatePod(lv, &pod.Meta, &pod.Spec))
			if r.Allowed {
				break
			}
			refused = append(refused, Refusal{Level: level, Path: pod.Path,
				Message: fmt.Sprintf("violates PodSecurity %q: %s", lv.String(), r.ForbiddenDetail()), Reasons: r.ForbiddenReasons, Details: r.ForbiddenDetails})
			needs = max(needs, i+1)
		}
	}
	return levels[needs], refused
}

// settingFor names what in mlops.env or the job spec sets what a Pod Security check (by forbidden reason) looks at.
var settingFor = map[string]string{
	"runAsNonRoot != true":              "a non-root USER_ID (or spec.security.runAsUser) sets runAsNonRoot",
	"runAsUser=0":                       "USER_ID=0 runs the pods as root",
	"unrestricted capabilities":         "capabilities are dropped for a non-root USER_ID, with spec.security.hardening",
	"allowPrivilegeEscalation != false": "spec.security.hardening (on by default) sets allowPrivilegeEscalation",
	"seccompProfile":                    "spec.security.hardening (on by default) sets the seccomp profile",
	"restricted volume types":           "NFS_SERVER and spec.volumes' nfs are inline volumes: a pvc bound to an NFS PersistentVolume is allowed",
	"hostPath volumes":                  "spec.volumes' hostPath is one",
	"non-default capabilities":          "spec.rdma adds IPC_LOCK",
}

// hostNamespaces says what sets each host namespace a pod spec shares: spec.hostNetwork, or for PID and IPC the base.
func hostNamespaces(spec corev1.PodSpec) []string {
	var out []string
	if spec.HostNetwork {
		out = append(out, "spec.hostNetwork sets hostNetwork")
	}
	switch {
	case spec.HostPID && spec.HostIPC:
		out = append(out, "hostPID and hostIPC are the base's: no setting of mlops-fn's sets them")
	case spec.HostPID:
		out = append(out, "hostPID is the base's: no setting of mlops-fn's sets it")
	case spec.HostIPC:
		out = append(out, "hostIPC is the base's: no setting of mlops-fn's sets it")
	}
	return out
}

// podSecurityNotice is the warning about a job whose pods restricted refuses ("" if none): the level they need and
// what needs it; verbose, what the API server says of each pod at the level above (pods it says the same of
// together), with the settings of mlops-fn's that bear on it.
func podSecurityNotice(id string, pods []Pod, verbose bool) string {
	level, refused := podSecurity(pods)
	if level == psa.LevelRestricted {
		return ""
	}
	above := levels[slices.Index(levels, level)-1]
	specs := map[string]corev1.PodSpec{}
	for _, p := range pods {
		specs[p.Path] = p.Spec
	}
	paths := map[string][]string{}
	var messages, settings, needs []string
	for _, r := range refused {
		if r.Level != above {
			continue
		}
		if paths[r.Message] == nil {
			messages = append(messages, r.Message)
		}
		paths[r.Message] = append(paths[r.Message], r.Path)
		for i, reason := range r.Reasons {
			found := []string{settingFor[reason]}
			if reason == "host namespaces" {
				found = hostNamespaces(specs[r.Path])
			}
			for _, s := range found {
				if s != "" && !slices.Contains(settings, s) {
					settings = append(settings, s)
				}
			}
			if n := need(reason, r.Details[i]); !slices.Contains(needs, n) {
				needs = append(needs, n)
			}
		}
	}
	if !verbose {
		return fmt.Sprintf("%s: the pods need Pod Security level %s: %s (more: --verbose, docs/job-spec.md#pod-security)", id, level, strings.Join(needs, ", "))
	}
	var why []string
	for _, m := range messages {
		why = append(why, strings.Join(paths[m], ", ")+": "+m)
	}
	note := ""
	if len(settings) > 0 {
		note = " (" + strings.Join(settings, "; ") + ")"
	}
	return fmt.Sprintf("%s: the pods need Pod Security level %s: %s; "+
		"the namespace's pod-security.kubernetes.io/enforce label must allow it%s", id, level, strings.Join(why, "; "), note)
}

// need is what a Pod Security check refused, in a few words: a volume's details name it; others' list every
// container (too long for one line) or repeat the reason.
func need(reason, detail string) string {
	switch {
	case detail == "" || strings.Contains(detail, reason):
		return reason
	case reason == "restricted volume types":
		return detail // volume "nfs" uses restricted volume type "nfs"
	case reason == "hostPath volumes":
		return "hostPath " + detail
	case len(detail) <= 40:
		return reason + " (" + detail + ")"
	}
	return reason
}

// hostNetworkDNS checks the target's pods on the node's network (the base's hostNetwork; the spec's sets dnsPolicy
// too): without ClusterFirstWithHostNet they get the node's resolver, so a job's pods cannot resolve each other and
// it fails once running. An error, but a notice for a Pod, which has no peers (Default or None: the user's choice).
func hostNetworkDNS(target *yaml.RNode, q *render.Plan) error {
	for _, pod := range Pods(target) {
		s := pod.Spec
		if !s.HostNetwork || s.DNSPolicy != "" && s.DNSPolicy != corev1.DNSClusterFirst || pod.Filled && q.HostNetwork {
			continue
		}
		policy := "no dnsPolicy"
		if s.DNSPolicy != "" {
			policy = "dnsPolicy ClusterFirst"
		}
		if !kindOf(target).CarriesField("workers") {
			q.Notices = append(q.Notices, fmt.Sprintf("%s: %s.hostNetwork: true with %s: the Pod resolves names as its node does, so not the cluster's services (Kubernetes' ClusterFirst falls back to Default on the node's network); if it reaches any, add dnsPolicy: ClusterFirstWithHostNet, or set spec.hostNetwork: true in the job spec, which sets both", identify(target), pod.Path, policy))
			return nil
		}
		return fmt.Errorf("%s.hostNetwork: true with %s: on the node's network Kubernetes gives the pods the node's resolver (its ClusterFirst falls back to Default), so they cannot resolve each other's names (the workers the launcher or the rendezvous reaches) and the job fails once running; accepted: dnsPolicy: ClusterFirstWithHostNet beside it, spec.hostNetwork: true in the job spec (mlops-fn then sets both), or no hostNetwork", pod.Path, policy)
	}
	return nil
}
