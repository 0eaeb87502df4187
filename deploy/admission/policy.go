// SPDX-License-Identifier: Apache-2.0

// Package admission writes policy.yaml, the ValidatingAdmissionPolicy a
// cluster admin applies (kubectl apply -k deploy/admission), from the job
// kinds' facts (kinds.All): each operator's kind is matched, is running
// unless suspended (SuspendPath) or finished (FinalConditions), and keeps
// its spec but for what its in-place rule lets change (Facts.InPlace, here
// in CEL). TestPolicyIsCurrent keeps the committed file current.
//
//go:generate go run generate.go
package admission

import (
	"bytes"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"text/template"

	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/kinds"
)

// File is the policy's file, beside this one.
const File = "policy.yaml"

var tmpl = template.Must(template.New(File).Funcs(template.FuncMap{
	"indent":  func(s string) string { return strings.ReplaceAll(s, "\n", "\n      ") },
	"article": jobkind.WithArticle,
	"wrap":    wrap,
}).Parse(text))

// wrap is text as a comment's lines of at most 120 characters, the lines
// after the first indented under a list item's text.
func wrap(text string) string {
	var lines []string
	line := "#"
	for _, w := range strings.Fields(text) {
		if len(line)+1+len(w) > 120 {
			lines = append(lines, line)
			line = "#  "
		}
		line += " " + w
	}
	return strings.Join(append(lines, line), "\n")
}

// kind is what the template says of one kind.
type kind struct {
	Kind string
	// Suspended and WasSuspended are CEL of whether the job is suspended,
	// after the update (object) and before it (oldObject).
	Suspended, WasSuspended string
	// Scale is the in-place rule's text ("": nothing changes in place), with
	// Var, the prefix of its variables: Scaled, CEL of a scale within the
	// bounds, and Rest, CEL of the spec (old, new) without the fields a
	// scale may change.
	Scale, Var, Scaled, Rest string
}

type group struct{ Group, Resources string }

// Policy is policy.yaml as the kinds give it.
func Policy() ([]byte, error) {
	var out []kind
	var names, groups []string
	resources := map[string][]string{}
	scales := false
	for _, k := range kinds.All {
		if k.BuiltIn() {
			continue // the API server refuses a change of a Pod's spec itself
		}
		c, err := kindOf(k)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k.Kind, err)
		}
		out, names, scales = append(out, c), append(names, k.Kind), scales || c.Scale != ""
		g, _, _ := strings.Cut(k.APIVersion, "/")
		if resources[g] == nil {
			groups = append(groups, g)
		}
		// The CRDs' plural: the kind in lower case, and an s.
		resources[g] = append(resources[g], `"`+strings.ToLower(k.Kind)+`s"`)
	}
	var rules []group
	for _, g := range groups {
		rules = append(rules, group{g, strings.Join(resources[g], ", ")})
	}
	last := len(names) - 1
	var b bytes.Buffer
	err := tmpl.Execute(&b, map[string]any{"Kinds": out, "Groups": rules, "Final": quoted(jobkind.FinalConditions),
		"Names": strings.Join(names[:last], ", ") + " or " + names[last], "Scales": scales})
	return b.Bytes(), err
}

func kindOf(k jobkind.Facts) (kind, error) {
	if len(k.SuspendPath) == 0 {
		return kind{}, fmt.Errorf("no SuspendPath: the policy lets Kueue admit and suspend a job by it")
	}
	paths := append(k.Free(), k.SuspendPath)
	if k.Scale != nil {
		paths = append(paths, k.Scale.Min, k.Scale.Max)
	}
	for _, p := range paths {
		for _, f := range p {
			if f != "*" && !identifier.MatchString(f) {
				return kind{}, fmt.Errorf("field %q of %s: accepted: CEL identifiers, and * for a list's items", f, strings.Join(p, "."))
			}
		}
	}
	out := kind{Kind: k.Kind, Suspended: optional("object", k.SuspendPath) + ".orValue(false)",
		WasSuspended: optional("oldObject", k.SuspendPath) + ".orValue(false)"}
	s := k.Scale
	if s == nil {
		return out, nil
	}
	out.Var = strings.ToLower(k.Kind)
	// The bounds' common prefix once: spec.elasticPolicy.minReplicas..maxReplicas.
	lo, hi := strings.Join(s.Min, "."), strings.Join(s.Max, ".")
	for i := range min(len(s.Min), len(s.Max)) - 1 {
		if s.Min[i] != s.Max[i] {
			break
		}
		hi = strings.Join(s.Max[i+1:], ".")
	}
	n := "object." + strings.Join(s.Replicas, ".")
	out.Scale = fmt.Sprintf("%s within %s..%s", strings.Join(s.Replicas, "."), lo, hi)
	out.Scaled = strings.Join([]string{
		"object.kind == '" + k.Kind + "' &&",
		optional("object", s.Replicas) + ".hasValue() &&",
		optional("object", s.Min) + ".hasValue() &&",
		optional("object", s.Max) + ".hasValue() &&",
		n + " != " + optional("oldObject", s.Replicas) + ".orValue(-1) &&",
		"object." + strings.Join(s.Min, ".") + " <= " + n + " &&",
		n + " <= object." + strings.Join(s.Max, "."),
	}, "\n")
	tree := &node{}
	for _, p := range k.Free() {
		if p[0] != "spec" {
			return kind{}, fmt.Errorf("%s is not in the spec", strings.Join(p, "."))
		}
		tree.add(p[1:])
	}
	rest, err := tree.strip("s", "")
	if err != nil {
		return kind{}, err
	}
	out.Rest = "[oldObject.spec, object.spec].map(s, " + rest + ")"
	return out, nil
}

// identifier is a field CEL selects by name.
var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// optional is CEL of job's field at path as an optional value (absent: none).
func optional(job string, path []string) string {
	return job + "." + path[0] + ".?" + strings.Join(path[1:], ".?")
}

func quoted(s []string) string {
	var q []string
	for _, v := range s {
		q = append(q, "'"+v+"'")
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// node is a tree of fields, whose leaves are the fields a scale may change;
// "*" is each item of a list.
type node struct{ next map[string]*node }

func (n *node) add(path []string) {
	if len(path) == 0 {
		return
	}
	if n.next == nil {
		n.next = map[string]*node{}
	}
	if n.next[path[0]] == nil {
		n.next[path[0]] = &node{}
	}
	n.next[path[0]].add(path[1:])
}

// strip is CEL of v without n's leaves: each map copied without them
// (transformMap), each field on the way to one copied the same way, the
// other fields as they are. indent is the line's.
func (n *node) strip(v, indent string) (string, error) {
	if item, ok := n.next["*"]; ok {
		if len(n.next) != 1 || item.next == nil {
			return "", fmt.Errorf(`"*" (a list's items) is a field's only sibling, and fields of the items follow it`)
		}
		s, err := item.strip("v", indent)
		return v + ".transformList(i, v, " + s + ")", err
	}
	var free []string
	ways := map[string][]string{} // the fields' CEL, by the fields that have it
	for _, f := range slices.Sorted(maps.Keys(n.next)) {
		if n.next[f].next == nil {
			free = append(free, f)
			continue
		}
		s, err := n.next[f].strip("v", indent+"  ")
		if err != nil {
			return "", err
		}
		ways[s] = append(ways[s], f)
	}
	out := v + ".transformMap(k, v,"
	switch len(free) {
	case 0:
	case 1:
		out += " k != '" + free[0] + "',"
	default:
		out += " !(k in " + quoted(free) + "),"
	}
	if len(ways) == 0 {
		return out + " v)", nil
	}
	for _, s := range slices.SortedFunc(maps.Keys(ways), func(a, b string) int { return strings.Compare(ways[a][0], ways[b][0]) }) {
		is := "k == '" + ways[s][0] + "'"
		if len(ways[s]) > 1 {
			is = "k in " + quoted(ways[s])
		}
		out += "\n" + indent + "  " + is + " ? " + s + " :"
	}
	return out + "\n" + indent + "  v)", nil
}

// text is policy.yaml's template: the comments say what the kinds' facts
// give the CEL.
const text = `# Code generated by go generate ./deploy/admission from the job kinds' facts (pkg/jobkind); DO NOT EDIT.
#
# A running {{.Names}} keeps its spec: the operators do not restart pods for a new spec, they add
# and remove pods of the new one beside the old (pods at two CPU sizes, a launcher's mpirun with the old rank count).
#
# Running (matchConditions): the job as it is (oldObject) is not suspended and has no final condition, and the update
# does not suspend it. A job queued by Kueue is suspended until admitted, so Kueue's admission and its eviction are
# allowed, and so is suspending a running job (the operator stops all its pods) and any change of a suspended or
# finished job.
# Allowed on a running job besides: an update that leaves the spec as it is (metadata, an unchanged re-apply), and
# what the kind's in-place rule lets change (jobkind's Facts.InPlace, which mlops-fn apply follows too):
{{- range .Kinds}}
{{if .Scale}}{{wrap (print "- " .Kind ": a scale of " .Scale "; with it, and only with it, the names of the ConfigMaps its pods' containers read (the env ConfigMap's hash, which WORKERS changes). A new name without a scale (an edit of OUTPUT_DIR alone) is refused, and so is any other change. The policy cannot read a ConfigMap: mlops-fn apply compares their data.")}}
{{- else}}# - {{.Kind}}: nothing.{{end}}
{{- end}}
# A Pod needs no policy: the API server refuses a change of its spec.
# mlops-fn apply --replace deletes the job and creates the new one: no update, nothing here refuses it.
# Kubernetes 1.33 or later: the CEL of its API server's new expressions has optional fields, transformMap and
# transformList.
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: mlops-fn-running-job
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
{{- range .Groups}}
    - apiGroups: ["{{.Group}}"]
      apiVersions: ["*"]
      resources: [{{.Resources}}]
      operations: ["UPDATE"]
{{- end}}
  matchConditions:
  - name: not-suspended
    expression: >-
      !(
{{- range $i, $k := .Kinds}}{{if $i}} ||{{end}}
      object.kind == '{{$k.Kind}}' && {{$k.WasSuspended}}
{{- end}})
  - name: not-finished
    expression: >-
      !oldObject.?status.?conditions.orValue([]).exists(c,
      c.type in {{.Final}} && c.status == 'True')
  - name: not-suspending
    expression: >-
      !(
{{- range $i, $k := .Kinds}}{{if $i}} ||{{end}}
      object.kind == '{{$k.Kind}}' && {{$k.Suspended}}
{{- end}})
{{- if .Scales}}
  variables:
{{- range .Kinds}}{{if .Scale}}
  # {{.Kind}}: a scale of {{.Scale}}.
  - name: {{.Var}}Scaled
    expression: |-
      {{.Scaled | indent}}
  # {{.Kind}}: the spec, old and new, without the fields a scale may change: each map on the way to one copied
  # without it (transformMap's filter), every other field as it is (v).
  - name: {{.Var}}Rest
    expression: |-
      {{.Rest | indent}}
{{- end}}{{end}}
{{- end}}
  validations:
  - expression: >-
      object.spec == oldObject.spec
{{- range .Kinds}}{{if .Scale}} ||
      variables.{{.Var}}Scaled && variables.{{.Var}}Rest[0] == variables.{{.Var}}Rest[1]
{{- end}}{{end}}
    messageExpression: >-
      object.kind + '/' + object.metadata.name + ' is running, and this update changes its spec: the operator would
      run a mix of the old and the new render, so the ValidatingAdmissionPolicy mlops-fn-running-job refuses it' +
{{- range .Kinds}}{{if .Scale}}
      (object.kind == '{{.Kind}}' ? ' ({{article .Kind}} may scale
      {{.Scale}}, and change nothing else)' : '') +
{{- end}}{{end}}
      '. Run mlops-fn apply --replace DIR: it deletes the job, waits for its pods to go, and applies the new one'
    reason: Forbidden
`
