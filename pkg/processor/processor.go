// SPDX-License-Identifier: Apache-2.0

// Package processor is mlops-fn's ResourceList processor: it renders the job spec and mlops.env into patches of the
// matching jobs, or generates the job when there is none.
package processor

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/api/hasher"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/env"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/jobnode"
	"github.com/mlops-fn/mlops-fn/pkg/jobspec"
	"github.com/mlops-fn/mlops-fn/pkg/kinds"
	"github.com/mlops-fn/mlops-fn/pkg/render"
	"github.com/mlops-fn/mlops-fn/pkg/schema"
)

// GeneratedBy marks the objects mlops-fn wrote, so the next run replaces them instead of adding a copy.
const GeneratedBy = "mlops-fn.dev/generated-by"

// JobKey is the one key of a ConfigMap function config: the job spec's path from the working directory, so that exec
// runners read the same files as `kubectl apply -k`: `kpt fn eval --exec mlops-fn PKG -- job=path/job.yaml`.
const JobKey = "job"

// Processor is the KRM function.
type Processor struct {
	// ConfigDir resolves a relative spec.envFile.path: the job spec's folder standalone, else the working directory.
	ConfigDir string
	// ConfigFile names the job spec in messages; by default the runner's path annotation.
	ConfigFile string
	// Verbose gives warnings their long form: Pod Security's says what the API server says of each pod.
	Verbose bool

	// outputDir is where generated objects are filed: the config's folder in the runner's package.
	outputDir string
}

// Process renders into rl. On any error it changes no item and returns the error results (in rl.Results too).
func (p Processor) Process(rl *framework.ResourceList) error {
	p.outputDir = "."
	if at, _, _ := kioutil.GetFileAnnotations(rl.FunctionConfig); at != "" {
		p.outputDir, p.ConfigFile = path.Dir(at), cmp.Or(p.ConfigFile, at)
	}
	config, err := p.dereference(rl.FunctionConfig)
	if err != nil {
		rl.Results = append(rl.Results, errorResult(err))
		return framework.Results{errorResult(err)}
	}
	items, results := p.render(config, rl.Items)
	rl.Results = append(rl.Results, results...)
	if results.ExitCode() != 0 {
		return slices.DeleteFunc(results, func(r *framework.Result) bool { return r.Severity != framework.Error })
	}
	rl.Items = items
	return nil
}

// dereference replaces a ConfigMap config by the job spec it names, whose folder then anchors mlops.env.
func (p *Processor) dereference(config *yaml.RNode) (*yaml.RNode, error) {
	if config == nil || config.YNode().Kind != yaml.MappingNode || config.GetKind() != "ConfigMap" || config.GetApiVersion() != "v1" {
		return config, nil
	}
	name := "ConfigMap/" + config.GetName()
	data := config.GetDataMap()
	for _, k := range slices.Sorted(maps.Keys(data)) {
		if k != JobKey {
			return nil, fmt.Errorf("%s: data.%s: unknown key; accepted: %s, the path of the MLOpsJob file", name, k, JobKey)
		}
	}
	job := data[JobKey]
	if job == "" {
		return nil, fmt.Errorf("%s: data.%s: Required value: the path of the MLOpsJob file, relative to the working directory", name, JobKey)
	}
	if info, err := os.Stat(job); err != nil {
		wd, _ := os.Getwd()
		return nil, fmt.Errorf("%s: data.%s: %w (the working directory is %s)", name, JobKey, err, wd)
	} else if info.IsDir() {
		return nil, fmt.Errorf("%s: data.%s: %q is a folder; accepted: the path of the MLOpsJob file, such as %s", name, JobKey, job, filepath.Join(job, "job.yaml"))
	}
	p.ConfigDir, p.ConfigFile = filepath.Dir(job), job
	return jobspec.Read(job)
}

// maxConfigMap is the API server's limit on a ConfigMap's data.
const maxConfigMap = 1 << 20

// Overlay is what one run computes: the settled plan and the mlops.env it read.
type Overlay struct {
	Plan      *render.Plan
	Env       *env.File
	EnvOrigin EnvOrigin
	Warnings  framework.Results
}

// Resolve reads and checks the job spec and mlops.env: Process's first half, which hydration shares to write the patch.
func (p Processor) Resolve(config *yaml.RNode, items []*yaml.RNode) (*Overlay, framework.Results) {
	job, errs := jobspec.Decode(config)
	if job == nil || len(errs) > 0 {
		return nil, p.fieldResults(errs, "")
	}
	conflicts := envSources(job.Spec.EnvFile)
	kinds.Default(job)
	if errs := append(conflicts, kinds.Validate(job)...); len(errs) > 0 {
		return nil, p.fieldResults(errs, "")
	}
	file, origin, err := p.loadEnv(job, items)
	if err != nil {
		at := p.configName()
		if pe, ok := errors.AsType[*env.ParseError](err); ok {
			at = pe.Source
		}
		return nil, framework.Results{{Severity: framework.Error, Message: err.Error(), File: &framework.File{Path: at}}}
	}
	size := 0
	for _, e := range file.Entries {
		size += len(e.Key) + len(e.Value)
	}
	if size > maxConfigMap {
		return nil, framework.Results{{Severity: framework.Error, File: &framework.File{Path: file.Source},
			Message: fmt.Sprintf("%s: holds %d bytes of keys and values; "+
				"the ConfigMap that carries them into the containers takes at most %d (1 MiB)", file.Source, size, maxConfigMap)}}
	}
	settings, problems := env.Decode(file, job.Spec.EnvFile.ExtraKeys...)
	var results framework.Results
	for _, pr := range problems {
		r := &framework.Result{Severity: framework.Error, Message: pr.String(),
			Field: &framework.Field{Path: pr.Key, CurrentValue: pr.Value}, File: &framework.File{Path: pr.Source}}
		if pr.Warning {
			r.Severity = framework.Warning
		}
		results = append(results, r)
	}
	if results.ExitCode() != 0 {
		return nil, results
	}
	plan, warnings, errs := render.Resolve(job, kinds.Of(job.Spec.JobKind), file, settings)
	for _, k := range kinds.All.EnvKeysNotCarried(plan.Facts()) {
		if _, set := file.Lookup(k); set {
			warnings = append(warnings, render.Warning{Field: field.NewPath(file.Source).Key(k),
				Message: fmt.Sprintf("jobKind %s does not use %s: the value only reaches the containers' environment", plan.JobKind, k)})
		}
	}
	results = append(results, p.fieldResults(errs, file.Source)...)
	for _, w := range warnings {
		at, fieldPath := p.locate(w.Field.String(), file.Source)
		results = append(results, &framework.Result{Severity: framework.Warning, Message: at + ": " + fieldPath + ": " + w.Message,
			File: &framework.File{Path: at}, Field: &framework.Field{Path: fieldPath}})
	}
	if results.ExitCode() != 0 {
		return nil, results
	}
	return &Overlay{Plan: plan, Env: file, EnvOrigin: origin, Warnings: results}, nil
}

func (p Processor) render(config *yaml.RNode, items []*yaml.RNode) ([]*yaml.RNode, framework.Results) {
	items = slices.Clone(items) // a failure changes no item of the caller's
	for i, it := range items {
		if it.YNode().Kind != yaml.MappingNode {
			return nil, framework.Results{errorResult(fmt.Errorf("input item %d is a YAML %s; accepted: Kubernetes objects (YAML maps)", i+1, jobspec.NodeKind(it)))}
		}
		expanded, err := ExpandAliases(it)
		if err != nil {
			return nil, framework.Results{errorResult(fmt.Errorf("input item %d (%s): %w", i+1, identify(it), err))}
		}
		items[i], it = expanded, expanded
		if err := CheckMetadata(it); err != nil {
			return nil, framework.Results{errorResult(fmt.Errorf("input item %d: %w", i+1, err))}
		}
		if it.GetApiVersion() == "" || it.GetKind() == "" {
			return nil, framework.Results{errorResult(fmt.Errorf("input item %d (%s): has no apiVersion or kind; accepted: Kubernetes objects", i+1, identify(it)))}
		}
	}
	if err := onePerName(items); err != nil {
		return nil, framework.Results{errorResult(err)}
	}
	o, results := p.Resolve(config, items)
	if o == nil {
		return nil, results
	}
	results, writes := o.Warnings, o.EnvOrigin != FromConfigMap
	// kustomize's namePrefix or nameSuffix may have renamed the objects the job refers to: use their new names, in a copy.
	plan := new(*o.Plan)
	if i := findItem(items, "ServiceAccount", plan.ServiceAccountName); i >= 0 {
		plan.ServiceAccountName = items[i].GetName()
	}
	if i := findItem(items, "ConfigMap", plan.ConfigMapName); i >= 0 && !writes {
		plan.ConfigMapName = items[i].GetName()
	}
	if writes {
		// Named with its data's hash, as a hydrated overlay's configMapGenerator does: every runner gives the same objects.
		cm, err := jobnode.Encode(plan.ConfigMap(o.Env.Map()))
		var hash string
		if err == nil {
			hash, err = new(hasher.Hasher).Hash(cm)
		}
		if err != nil {
			return nil, append(results, errorResult(err))
		}
		plan.HashedFrom, plan.ConfigMapName = plan.ConfigMapName, plan.ConfigMapName+"-"+hash
	}

	targets, err := p.targets(plan, items)
	if err != nil {
		return nil, append(results, errorResult(err))
	}
	// The ConfigMap goes where its readers are, the targets' namespaces (a kustomization's namespace: reached them
	// first), else the job's.
	var namespaces []string
	for _, i := range targets {
		patched, q, err := p.patch(plan, items[i])
		if err != nil {
			return nil, append(results, errorResult(err))
		}
		results = append(results, noticeResults(q.Notices...)...)
		// Check the user's target as the API server will. The patches reorder lists, so a field that does not decode,
		// which only the target can have brought, is named at its path in the target.
		job, errs := Check(patched)
		if job == nil && len(errs) > 0 {
			if _, _, inTarget := decode(items[i]); len(inTarget) > 0 {
				errs = inTarget
			}
		}
		if len(errs) > 0 {
			return nil, append(results, errorResult(objectError(identify(items[i]), errs)))
		}
		results = append(results, noticeResults(podSecurityNotice(identify(items[i]), podsOf(patched.GetKind(), job), p.Verbose))...)
		namespaces = append(namespaces, items[i].GetNamespace())
		items[i] = patched
	}
	slices.Sort(namespaces)
	namespaces = slices.Compact(namespaces)
	var job *yaml.RNode
	if len(targets) == 0 {
		namespaces = []string{plan.Namespace}
		if job, err = p.Generate(plan); err != nil {
			return nil, append(results, errorResult(err))
		}
		results = append(results, noticeResults(podSecurityNotice(p.configName()+": "+job.GetKind()+"/"+job.GetName(), Pods(job), p.Verbose))...)
	}
	doomed := p.doomed(items, plan, job, writes && slices.Contains(namespaces, plan.Namespace))
	if job != nil {
		items = upsert(items, job) // before pruning: its old self reads what it no longer does
	}
	items, pruned := prune(items, doomed)
	results = append(results, noticeResults(pruned...)...)
	if writes {
		for _, ns := range namespaces {
			q := *plan
			q.Namespace = ns
			cm, err := jobnode.Encode(q.ConfigMap(o.Env.Map()))
			if err == nil {
				err = p.annotate(plan, cm)
			}
			if err != nil {
				return nil, append(results, errorResult(err))
			}
			items = upsert(items, cm)
		}
	}
	return items, results
}

// patch applies the plan's patch to a copy of target as kustomize's patches: would, with the plan narrowed to target.
func (p Processor) patch(plan *render.Plan, target *yaml.RNode) (*yaml.RNode, *render.Plan, error) {
	id := identify(target)
	q, err := p.Narrow(plan, target)
	if err != nil {
		return nil, nil, err
	}
	patch := q.Patch()
	node, err := patch.Encode()
	if err != nil {
		return nil, nil, err
	}
	out, err := schema.Merge(node, target.Copy(), yaml.MergeOptions{ListIncreaseDirection: yaml.MergeOptionsListPrepend})
	if err != nil {
		// kyaml's message goes on to print the whole patch: its first line says what clashed.
		first, _, _ := strings.Cut(err.Error(), "\n")
		first = strings.TrimSuffix(first, ": node contents:")
		return nil, nil, fmt.Errorf("%s: applying %s: %s; accepted: a target whose fields have the types of %s",
			id, patch.File, first, jobkind.WithArticle(target.GetKind()))
	}
	if a, ok := q.Kind().(render.AfterPatcher); ok {
		if err := a.AfterPatch(out, q); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", id, err)
		}
	}
	if err := requestsAboveLimits(out); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", id, err)
	}
	return out, q, nil
}

// Generate builds the job when the inputs hold no target: the skeleton, patched and marked as mlops-fn's. With no
// target to take them from, the spec must name the image, and the command or script when the kind has a Starter.
func (p Processor) Generate(plan *render.Plan) (*yaml.RNode, error) {
	if plan.Image == "" || plan.KeepsProgram() && plan.Facts().Starter != "" {
		missing := "command"
		if plan.Image == "" {
			missing = "image"
		}
		return nil, fmt.Errorf("%s: spec.%s: Required value: the inputs hold no %s named %s whose %[2]s mlops-fn could keep, so it generates the job; "+
			"accepted: spec.%[2]s, or the job among the inputs (spec.target selects it)", p.configName(), missing, plan.Facts().Kind, plan.Target.Name)
	}
	node, err := jobnode.Encode(plan.Skeleton())
	if err != nil {
		return nil, err
	}
	if n, ok := plan.Kind().(render.NewJob); ok {
		plan = new(*plan)
		n.NewJob(plan)
	}
	out, _, err := p.patch(plan, node) // a skeleton holds the training containers alone
	if err != nil {
		return nil, err
	}
	return out, p.annotate(plan, out)
}

// annotate marks n as mlops-fn's and files it beside the job spec as kpt names new files, kind_name.yaml, with the
// namespace before the name if any: kpt refuses two objects in a file (same-named jobs of two namespaces).
func (p Processor) annotate(plan *render.Plan, n *yaml.RNode) error {
	base := strings.ToLower(n.GetKind()) + "_"
	if ns := n.GetNamespace(); ns != "" {
		base += ns + "_"
	}
	file := path.Join(p.outputDir, base+n.GetName()+".yaml")
	for _, a := range [][2]string{{GeneratedBy, api.Kind + "/" + plan.JobName}, {kioutil.PathAnnotation, file}} {
		// Plain style: yaml.SetAnnotation would quote the value.
		if err := n.PipeE(yaml.LookupCreate(yaml.MappingNode, "metadata", "annotations"), yaml.SetField(a[0], yaml.NewStringRNode(a[1]))); err != nil {
			return err
		}
	}
	n.YNode().HeadComment = fmt.Sprintf("Generated by mlops-fn for %s %s: the next run replaces this\nobject; "+
		"change the job spec or mlops.env instead.", api.Kind, plan.JobName)
	return schema.Format(n)
}

// configName names the job spec in messages.
func (p Processor) configName() string { return cmp.Or(p.ConfigFile, "functionConfig") }

// fieldResults turns field errors into results naming their file: the job spec, or mlops.env for paths FILE[KEY].
func (p Processor) fieldResults(errs field.ErrorList, envSource string) framework.Results {
	var out framework.Results
	for _, e := range errs {
		file, fieldPath := p.locate(e.Field, envSource)
		where := file + ": "
		if fieldPath != "" {
			where += fieldPath + ": "
		}
		r := &framework.Result{Severity: framework.Error, Message: where + e.ErrorBody(),
			File: &framework.File{Path: file}, Field: &framework.Field{Path: fieldPath}}
		if e.Type == field.ErrorTypeInvalid || e.Type == field.ErrorTypeNotSupported {
			r.Field.CurrentValue = e.BadValue
		}
		out = append(out, r)
	}
	return out
}

// locate splits a field path into its file and the field or key in it.
func (p Processor) locate(path, envSource string) (file, fieldPath string) {
	if key, ok := strings.CutPrefix(path, envSource+"["); ok && envSource != "" {
		return envSource, strings.TrimSuffix(key, "]")
	}
	return p.configName(), path
}

// noticeResults are notices (a target's render.Plan.Notices, Pod Security's, pruning's) as warnings, "" none.
func noticeResults(notices ...string) framework.Results {
	var out framework.Results
	for _, n := range notices {
		if n != "" {
			out = append(out, &framework.Result{Severity: framework.Warning, Message: n})
		}
	}
	return out
}

func errorResult(err error) *framework.Result {
	return &framework.Result{Severity: framework.Error, Message: err.Error()}
}

// objectError names the object whose rendered form is invalid.
func objectError(id string, errs field.ErrorList) error {
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = id + ": " + e.Error()
	}
	return errors.New(strings.Join(msgs, "\n"))
}
