// Package processor is mlops-fn's ResourceList processor: it reads the job spec
// and mlops.env, renders the overlay patches, and applies them to the matching
// jobs (MPIJob, Pod, PyTorchJob or TrainJob, by mode), or generates the
// objects when there is none.
package processor

import (
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	kubeflow "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio/filters"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/kustomize/kyaml/yaml/merge2"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/env"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/jobnode"
	"github.com/mlops-fn/mlops-fn/pkg/jobspec"
	"github.com/mlops-fn/mlops-fn/pkg/render"
	"github.com/mlops-fn/mlops-fn/pkg/schema"
)

// GeneratedBy marks the objects mlops-fn wrote, so the next run replaces them
// instead of adding a second copy.
const GeneratedBy = "mlops-fn.dev/generated-by"

// Processor is the KRM function.
type Processor struct {
	// ConfigDir is where a relative spec.envFile.path is resolved: the job
	// spec's folder when run standalone, else the working directory.
	ConfigDir string
	// ConfigFile names the job spec in messages; by default the runner's path annotation.
	ConfigFile string

	// outputDir is where generated objects are filed: the config's folder in the runner's package.
	outputDir string
}

// Process renders into rl. On any error it changes no item and returns the
// error results, which are also in rl.Results.
func (p Processor) Process(rl *framework.ResourceList) error {
	// Generated objects go next to the function config, wherever the runner keeps it.
	p.outputDir = "."
	if at := configPath(rl.FunctionConfig); at != "" {
		p.outputDir = path.Dir(at)
		if p.ConfigFile == "" {
			p.ConfigFile = at
		}
	}
	config, p, err := p.dereference(rl.FunctionConfig)
	if err != nil {
		rl.Results = append(rl.Results, errorResult(err))
		return framework.Results{errorResult(err)}
	}
	items, results := p.render(config, rl.Items)
	rl.Results = append(rl.Results, results...)
	if results.ExitCode() != 0 {
		return errorsOnly(results)
	}
	rl.Items = items
	return nil
}

// maxConfigMap is the API server's limit on a ConfigMap's data.
const maxConfigMap = 1 << 20

func envSize(f *env.File) int {
	n := 0
	for _, e := range f.Entries {
		n += len(e.Key) + len(e.Value)
	}
	return n
}

// Overlay is what one run computes: the settled plan and the mlops.env it read.
type Overlay struct {
	Plan      *render.Plan
	Env       *env.File
	EnvOrigin EnvOrigin
	Warnings  framework.Results
}

// Resolve reads and checks the job spec and its mlops.env. It is the first half
// of Process, shared with hydration, which writes the patches instead of applying them.
func (p Processor) Resolve(config *yaml.RNode, items []*yaml.RNode) (*Overlay, framework.Results) {
	var results framework.Results
	job, errs := jobspec.Decode(config)
	if job == nil || len(errs) > 0 {
		return nil, p.fieldResults(errs, "")
	}
	job.Default()
	if errs := job.Validate(); len(errs) > 0 {
		return nil, p.fieldResults(errs, "")
	}
	file, origin, err := p.loadEnv(job, items)
	if err != nil {
		return nil, framework.Results{{Severity: framework.Error, Message: err.Error(), File: &framework.File{Path: p.envPath(err)}}}
	}
	if size := envSize(file); size > maxConfigMap {
		return nil, framework.Results{{Severity: framework.Error, File: &framework.File{Path: file.Source},
			Message: fmt.Sprintf("%s: holds %d bytes of keys and values; the ConfigMap that carries them into the containers takes at most %d (1 MiB)", file.Source, size, maxConfigMap)}}
	}
	settings, problems := env.Decode(file, job.Spec.EnvFile.ExtraKeys...)
	for _, pr := range problems {
		results = append(results, &framework.Result{
			Severity: severity(pr.Warning), Message: pr.String(),
			Field: &framework.Field{Path: pr.Key, CurrentValue: pr.Value}, File: &framework.File{Path: pr.Source},
		})
	}
	if results.ExitCode() != 0 {
		return nil, results
	}
	plan, warnings, errs := render.Resolve(job, file, settings)
	results = append(results, p.fieldResults(errs, file.Source)...)
	results = append(results, p.warningResults(warnings, file.Source)...)
	if results.ExitCode() != 0 {
		return nil, results
	}
	return &Overlay{Plan: plan, Env: file, EnvOrigin: origin, Warnings: results}, nil
}

func (p Processor) render(config *yaml.RNode, input []*yaml.RNode) ([]*yaml.RNode, framework.Results) {
	input = slices.Clone(input) // a failure changes no item of the caller's
	for i, it := range input {
		if it.YNode().Kind != yaml.MappingNode {
			return nil, framework.Results{errorResult(fmt.Errorf("input item %d is a YAML %s; accepted: Kubernetes objects (YAML maps)", i+1, jobspec.NodeKind(it)))}
		}
		expanded, err := ExpandAliases(it)
		if err != nil {
			return nil, framework.Results{errorResult(fmt.Errorf("input item %d (%s): %w", i+1, identify(it), err))}
		}
		input[i], it = expanded, expanded
		if err := CheckMetadata(it); err != nil {
			return nil, framework.Results{errorResult(fmt.Errorf("input item %d: %w", i+1, err))}
		}
		if it.GetApiVersion() == "" || it.GetKind() == "" {
			return nil, framework.Results{errorResult(fmt.Errorf("input item %d (%s): has no apiVersion or kind; accepted: Kubernetes objects", i+1, identify(it)))}
		}
	}
	o, results := p.Resolve(config, input)
	if o == nil {
		return nil, results
	}
	results = o.Warnings
	schema.Register()
	items := append([]*yaml.RNode(nil), input...)
	// A namePrefix or nameSuffix of kustomize's renamed the objects the job
	// refers to before this function ran: refer to them by their new names,
	// in a copy (the resolved plan stays as settled).
	renamed := *o.Plan
	plan := &renamed
	if i := findItem(items, "ServiceAccount", plan.ServiceAccountName); i >= 0 {
		plan.ServiceAccountName = items[i].GetName()
	}
	if i := findItem(items, "ConfigMap", plan.ConfigMapName); i >= 0 && o.EnvOrigin == FromConfigMap {
		plan.ConfigMapName = items[i].GetName()
	}

	targets, err := p.targets(plan, items)
	if err != nil {
		return nil, append(results, errorResult(err))
	}
	for _, i := range targets {
		patched, q, err := p.patch(plan, items[i])
		if err != nil {
			return nil, append(results, errorResult(err))
		}
		results = append(results, noticeResults(q.Notices)...)
		// A target is the user's: check the result as the API server and the
		// operators will. Generated objects are typed through and through.
		job, errs := Check(patched)
		if len(errs) > 0 {
			return nil, append(results, errorResult(objectError(identify(items[i]), errs)))
		}
		// What the base brings below Pod Security restricted, in the job as
		// rendered (render's warning names what the spec and mlops.env ask for).
		if n := baseLevelNotice(patched.GetKind(), job, identify(items[i]), q); n != "" {
			results = append(results, noticeResults([]string{n})...)
		}
		items[i] = patched
	}
	namespaces := configMapNamespaces(plan, items, targets) // before pruning moves the targets
	var job *yaml.RNode
	if len(targets) == 0 {
		if job, err = p.generate(plan, plan.Skeleton()); err != nil {
			return nil, append(results, errorResult(err))
		}
	}
	// The ConfigMaps this run writes, by namespace/name.
	written := map[string]bool{}
	for _, ns := range namespaces {
		written[ns+"/"+plan.ConfigMapName] = o.EnvOrigin != FromConfigMap
	}
	items = pruneStale(items, plan, job, written)
	if job != nil {
		items = upsert(items, job)
	}
	if o.EnvOrigin != FromConfigMap {
		for _, ns := range namespaces {
			q := *plan
			q.Namespace = ns
			for _, it := range items {
				if it.GetKind() == "ConfigMap" && it.GetName() == plan.ConfigMapName && it.GetNamespace() == ns && !generated(it) {
					return nil, append(results, errorResult(fmt.Errorf("%s: spec.envFile.inline is set and ConfigMap %q is among the inputs: remove one of them", p.configName(), plan.ConfigMapName)))
				}
			}
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

// configMapNamespaces: the ConfigMap goes where its readers are, the targets'
// namespaces (a kustomization's namespace: reached them first), else the job's.
func configMapNamespaces(plan *render.Plan, items []*yaml.RNode, targets []int) []string {
	if len(targets) == 0 {
		return []string{plan.Namespace}
	}
	var namespaces []string
	for _, i := range targets {
		namespaces = append(namespaces, items[i].GetNamespace())
	}
	slices.Sort(namespaces)
	return slices.Compact(namespaces)
}

// pruneStale drops what an earlier run of this spec generated that this run
// does not: the job generated in another mode, or before a target came, which
// would run beside this one (job, generated again, stays to be replaced where
// it stands), and the ConfigMaps it no longer writes. Only in the
// namespace the spec generates into: a same-named spec of another namespace
// owns its own objects.
func pruneStale(items []*yaml.RNode, plan *render.Plan, job *yaml.RNode, written map[string]bool) []*yaml.RNode {
	owner := api.Kind + "/" + plan.JobName
	return slices.DeleteFunc(items, func(it *yaml.RNode) bool {
		if it.GetAnnotations()[GeneratedBy] != owner || it.GetNamespace() != plan.Namespace {
			return false
		}
		switch {
		case jobkind.Is(it.GetKind()):
			return !sameObject(it, job)
		case it.GetKind() == "ConfigMap":
			return !written[it.GetNamespace()+"/"+it.GetName()]
		}
		return false
	})
}

// Targets are the items the function patches, each with the plan narrowed
// to it; none when it generates the job instead.
func (p Processor) Targets(plan *render.Plan, items []*yaml.RNode) ([]*yaml.RNode, []*render.Plan, error) {
	found, err := p.targets(plan, items)
	if err != nil {
		return nil, nil, err
	}
	var targets []*yaml.RNode
	var plans []*render.Plan
	for _, i := range found {
		q, err := p.Narrow(plan, items[i])
		if err != nil {
			return nil, nil, err
		}
		// The job as the patches render it, for what it brings below Pod
		// Security restricted; a patch that fails, the function's run on
		// the overlay reports. The patches merge by the CRDs' merge keys.
		schema.Register()
		if out, err := p.applyPatches(q, items[i], identify(items[i])); err == nil {
			if job, errs := Check(out); len(errs) == 0 {
				if n := baseLevelNotice(out.GetKind(), job, identify(items[i]), q); n != "" {
					q.Notices = append(slices.Clone(q.Notices), n)
				}
			}
		}
		targets, plans = append(targets, items[i]), append(plans, q)
	}
	return targets, plans, nil
}

// targets finds the items to patch: the objects named like the job (or
// selected by spec.target) that mlops-fn did not generate itself.
func (p Processor) targets(plan *render.Plan, items []*yaml.RNode) ([]int, error) {
	kind, apiVersion := plan.JobKind().Kind, plan.JobKind().APIVersion
	sel := plan.Target
	explicit := sel.Name != plan.JobName || len(sel.Labels) > 0
	var found []int
	// By the name first, else by a name kustomize's namePrefix or nameSuffix replaced.
	for _, named := range []func(*yaml.RNode) bool{
		func(it *yaml.RNode) bool { return it.GetName() == sel.Name },
		func(it *yaml.RNode) bool { return slices.Contains(previousNames(it), sel.Name) },
	} {
		for i, it := range items {
			if it.GetKind() != kind || generated(it) || (sel.Name != "" && !named(it)) || !hasLabels(it, sel.Labels) {
				continue
			}
			if ns := it.GetNamespace(); plan.Namespace != "" && ns != "" && ns != plan.Namespace {
				continue // the same-named job of another namespace
			}
			if it.GetApiVersion() != apiVersion {
				return nil, fmt.Errorf("%s/%s is %s; mlops-fn patches %s %s", kind, it.GetName(), it.GetApiVersion(), apiVersion, kind)
			}
			found = append(found, i)
		}
		if len(found) > 0 || sel.Name == "" {
			break
		}
	}
	if len(found) == 0 && explicit {
		seen := []string{}
		for _, it := range items {
			if it.GetKind() == kind {
				seen = append(seen, describe(it.GetName(), it.GetLabels()))
			}
		}
		if len(seen) == 0 {
			seen = []string{"none"}
		}
		return nil, fmt.Errorf("%s: spec.target: %s matches no %s among the inputs; the inputs' %ss: %s",
			p.configName(), describe(sel.Name, sel.Labels), kind, kind, strings.Join(seen, ", "))
	}
	if len(found) == 0 {
		// A job of another kind under the job's name would go out unpatched beside a new job.
		for _, it := range items {
			if other, ok := jobkind.ForKind(it.GetKind()); ok && other.Kind != kind && it.GetName() == sel.Name && !generated(it) {
				return nil, fmt.Errorf("%s: %s/%s among the inputs is named like the job, but mode %s renders %s: it would go out unpatched beside a new %s; accepted: mode %s (for the %s), or another name for one of the two",
					p.configName(), it.GetKind(), it.GetName(), plan.Mode, jobkind.WithArticle(kind), kind, other.Mode, it.GetKind())
			}
		}
	}
	return found, nil
}

// CheckMetadata refuses a metadata that is not shaped as Kubernetes' (kyaml's
// accessors index it as a map of strings and maps of strings).
func CheckMetadata(n *yaml.RNode) error {
	meta := n.Field("metadata")
	if meta == nil || meta.Value.IsNil() {
		return nil
	}
	if meta.Value.YNode().Kind != yaml.MappingNode {
		return fmt.Errorf("metadata is a YAML %s; accepted: a map (name, namespace, labels, annotations)", jobspec.NodeKind(meta.Value))
	}
	for _, f := range []string{"name", "namespace"} {
		if v := meta.Value.Field(f); v != nil && !v.Value.IsNil() && v.Value.YNode().Kind != yaml.ScalarNode {
			return fmt.Errorf("metadata.%s is a YAML %s; accepted: a string", f, jobspec.NodeKind(v.Value))
		}
	}
	for _, f := range []string{"labels", "annotations"} {
		v := meta.Value.Field(f)
		if v == nil || v.Value.IsNil() {
			continue
		}
		if v.Value.YNode().Kind != yaml.MappingNode {
			return fmt.Errorf("metadata.%s is a YAML %s; accepted: a map of strings", f, jobspec.NodeKind(v.Value))
		}
		for i := 1; i < len(v.Value.YNode().Content); i += 2 {
			if c := v.Value.YNode().Content[i]; c.Kind != yaml.ScalarNode {
				return fmt.Errorf("metadata.%s.%s is a YAML %s; accepted: a string", f, v.Value.YNode().Content[i-1].Value, jobspec.NodeKind(yaml.NewRNode(c)))
			}
		}
	}
	return nil
}

// identify names an input object in messages: its file, when the runner
// says, and kind/name.
func identify(n *yaml.RNode) string {
	id := n.GetKind() + "/" + n.GetName()
	if n.GetKind() == "" {
		id = "named " + strconv.Quote(n.GetName())
	}
	if file, _, _ := kioutil.GetFileAnnotations(n); file != "" {
		return file + ": " + id
	}
	return id
}

// describe names an object or a selector: `name` with labels a=b,c=d.
func describe(name string, labels map[string]string) string {
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		kv = append(kv, k+"="+labels[k])
	}
	switch {
	case name == "":
		return "labels " + strings.Join(kv, ",")
	case len(kv) == 0:
		return fmt.Sprintf("%q", name)
	}
	return fmt.Sprintf("%q with labels %s", name, strings.Join(kv, ","))
}

func hasLabels(n *yaml.RNode, want map[string]string) bool {
	have := n.GetLabels()
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// Narrow is plan as it applies to target: the target's name, namespace and
// containers. It refuses a target the plan cannot serve: a non-root target
// without USER_ID, or one in another namespace than the spec names (a patch
// cannot move an object, in kustomize or here).
func (p Processor) Narrow(plan *render.Plan, target *yaml.RNode) (*render.Plan, error) {
	id := identify(target)
	if err := uniqueContainerNames(target); err != nil {
		return nil, fmt.Errorf("%s: %w", id, err)
	}
	if err := envShadowsKeys(target, plan); err != nil {
		return nil, fmt.Errorf("%s: %w", id, err)
	}
	dnsNotice, err := hostNetworkDNS(target, plan)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", id, err)
	}
	q := *plan
	q.Name, q.Namespace = target.GetName(), target.GetNamespace()
	q.Containers = containerNames(target, plan)
	q.Sidecars = sidecars(target, q.Containers, plan)
	q.InitContainers = names(jobnode.InitContainerLists(target))
	q.Notices = movedFirst(target, id, &q)
	if dnsNotice != "" {
		q.Notices = append(q.Notices, id+": "+dnsNotice)
	}
	if q.OwnEnvFrom, err = ownEnvFrom(target, &q); err != nil {
		return nil, fmt.Errorf("%s: %w", id, err)
	}
	if err := mountsTaken(target, &q); err != nil {
		return nil, fmt.Errorf("%s: %w", id, err)
	}
	if err := baseVolumesClash(target, &q); err != nil {
		return nil, fmt.Errorf("%s: %w", id, err)
	}
	if q.LauncherLimitsDefault && ownResources(target, q.ContainerOf(kubeflow.MPIReplicaTypeLauncher)) {
		// What the user wrote and no setting names stays.
		q.LauncherLimits = nil
	}
	if plan.Namespace != "" && q.Namespace != plan.Namespace {
		in := fmt.Sprintf("namespace %q", q.Namespace)
		if q.Namespace == "" {
			in = "no namespace"
		}
		return nil, fmt.Errorf("%s: metadata.namespace: %q, but the target %s has %s, and a patch cannot move an object; accepted: the target in namespace %q (in the base, or through `namespace: %s` in the kustomization), or no metadata.namespace in the spec", p.configName(), plan.Namespace, id, in, plan.Namespace, plan.Namespace)
	}
	if nonRoot, uid := targetNonRoot(target); q.Mode == api.ModeMultiNode && q.RunAsUser == nil && nonRoot != "" {
		// Without a uid mlops-fn renders root's SSH setup: it would not work for this user.
		accepted := "USER_ID"
		if uid != "" {
			accepted += "=" + uid
		}
		return nil, fmt.Errorf("%s: %s, but USER_ID is not set, so mlops-fn would render root's SSH setup (/root/.ssh, a root sshd); accepted: %s (and USER_NAME) in mlops.env, or spec.security.runAsUser", id, nonRoot, accepted)
	}
	if errs := q.CheckName(); len(errs) > 0 {
		return nil, objectError(id, errs)
	}
	if q.Mode == api.ModeTrainJob && q.Trainer.Runtime == "" && valueAt(target, "spec", "runtimeRef", "name") == "" {
		// A default here would be written into a hydrated overlay and win over
		// a runtimeRef the base gains later, unnoticed by the guard.
		return nil, fmt.Errorf("%s: names no training runtime (spec.runtimeRef), and neither does the job spec; accepted: spec.trainer.runtime in %s (e.g. %s), or runtimeRef in the TrainJob", id, p.configName(), api.DefaultTrainerRuntime)
	}
	if q.Mode == api.ModeTrainJob {
		if err := trainerEnvKept(target, &q); err != nil {
			return nil, fmt.Errorf("%s: %w", id, err)
		}
		if err := laterRuntimePatches(target, &q); err != nil {
			return nil, fmt.Errorf("%s: %w", id, err)
		}
	}
	if c := privilegedContainer(target); c != "" && q.Hardening {
		return nil, fmt.Errorf("%s: container %s is privileged (or adds capabilities), and the API server refuses such a container with the allowPrivilegeEscalation: false mlops-fn's hardening sets on every container; accepted: no privileged container in the job, or spec.security.hardening: false (the job then needs Pod Security level privileged)", id, c)
	}
	if q.Mode == api.ModeMultiNode && q.KeepsProgram() {
		if err := p.keptProgram(target, &q); err != nil {
			return nil, fmt.Errorf("%s: %w", id, err)
		}
		ref, namesHosts, err := launcherRanks(target, q.Containers[kubeflow.MPIReplicaTypeLauncher], q.Ranks())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", id, err)
		}
		q.LauncherRanks = &ref
		q.LauncherHostfile = q.MPI.Implementation == api.OpenMPI && !namesHosts
	}
	return &q, nil
}

// movedFirst tells of each pod template whose training container is not
// first: the patches move it there (render.TrainingContainerIndex).
func movedFirst(target *yaml.RNode, id string, q *render.Plan) []string {
	var notices []string
	lists := jobnode.ContainerLists(target)
	kind, _ := jobkind.ForKind(target.GetKind())
	for _, role := range slices.Sorted(maps.Keys(lists)) {
		name := q.ContainerOf(role)
		i := slices.IndexFunc(lists[role], func(c *yaml.RNode) bool { n, _ := c.GetString("name"); return n == name })
		if i <= render.TrainingContainerIndex {
			continue
		}
		var before []string
		for _, c := range lists[role][:i] {
			n, _ := c.GetString("name")
			before = append(before, strconv.Quote(n))
		}
		why := "kubectl logs and exec default to the first container"
		if kind.Mode == api.ModeMultiNode {
			why = "the mpi-operator sets up SSH and the hostfile in the first container"
		}
		notices = append(notices, fmt.Sprintf("%s: %s.containers[%d]: the training container %q moves first, before %s: mlops-fn puts it first in every pod (%s); the others keep their order",
			id, strings.Join(kind.PodSpecPath(role), "."), i, name, strings.Join(before, ", "), why))
	}
	return notices
}

// ownEnvFrom are the envFrom sources of the target's containers and init
// containers other than the env ConfigMap, by role and container.
func ownEnvFrom(target *yaml.RNode, q *render.Plan) (map[kubeflow.MPIReplicaType]map[string][]corev1.EnvFromSource, error) {
	out := map[kubeflow.MPIReplicaType]map[string][]corev1.EnvFromSource{}
	for _, byRole := range []map[kubeflow.MPIReplicaType][]*yaml.RNode{jobnode.ContainerLists(target), jobnode.InitContainerLists(target)} {
		for role, list := range byRole {
			for _, c := range list {
				from := c.Field("envFrom")
				if from == nil || from.Value.IsNil() {
					continue
				}
				name, _ := c.GetString("name")
				b, err := from.Value.MarshalJSON()
				var sources []corev1.EnvFromSource
				if err == nil {
					err = json.Unmarshal(b, &sources)
				}
				if err != nil {
					return nil, fmt.Errorf("container %s: envFrom: %v; accepted: a list of configMapRef and secretRef sources", name, err)
				}
				sources = slices.DeleteFunc(sources, func(s corev1.EnvFromSource) bool {
					return s.ConfigMapRef != nil && s.ConfigMapRef.Name == q.ConfigMapName && s.Prefix == ""
				})
				if len(sources) > 0 {
					if out[role] == nil {
						out[role] = map[string][]corev1.EnvFromSource{}
					}
					out[role][name] = sources
				}
			}
		}
	}
	return out, nil
}

// ownResources: the target's launcher container has limits or requests of its own.
func ownResources(target *yaml.RNode, container string) bool {
	c, err := target.Pipe(yaml.Lookup(append(launcherPodSpec(), "containers", "[name="+container+"]", "resources")...))
	if err != nil || c == nil {
		return false
	}
	for _, f := range []string{"limits", "requests"} {
		if v := c.Field(f); v != nil && len(v.Value.YNode().Content) > 0 {
			return true
		}
	}
	return false
}

// keptProgram refuses what would be lost or wrong when an MPIJob's launcher
// keeps its own mpirun line: the spec's args and mpirun flags (only a spec
// command carries them), and a target whose MPI implementation, slots or
// launcher-as-worker differ from the plan's (the rank count and the
// operator's hostfile follow the plan).
func (p Processor) keptProgram(target *yaml.RNode, q *render.Plan) error {
	switch {
	case len(q.Args) > 0:
		return fmt.Errorf("keeps its launcher's mpirun line (the spec has no command), so spec.args %q would be lost; accepted: spec.command with them (mlops-fn then writes the mpirun line), or no spec.args", q.Args)
	case !slices.Equal(q.MPI.Args, api.DefaultMPIArgs) && q.MPI.Implementation == api.OpenMPI || q.MPI.Implementation != api.OpenMPI && len(q.MPI.Args) > 0:
		return fmt.Errorf("keeps its launcher's mpirun line (the spec has no command), so spec.mpi.args %q would be lost; accepted: spec.command (mlops-fn then writes the mpirun line), or no spec.mpi.args", q.MPI.Args)
	case !slices.Equal(q.MPI.ForwardEnv, api.DefaultForwardEnv):
		return fmt.Errorf("keeps its launcher's mpirun line (the spec has no command), so spec.mpi.forwardEnv %q would be lost; accepted: spec.command (mlops-fn then writes the mpirun line), or no spec.mpi.forwardEnv", q.MPI.ForwardEnv)
	}
	for _, f := range []struct{ field, have, want, fix string }{
		{"mpiImplementation", valueAt(target, "spec", "mpiImplementation"), string(q.MPI.Implementation), "spec.mpi.implementation: %s"},
		{"slotsPerWorker", valueAt(target, "spec", "slotsPerWorker"), strconv.Itoa(int(q.SlotsPerWorker)), "SLOTS_PER_WORKER=%s in mlops.env (or spec.slotsPerWorker)"},
		{"runLauncherAsWorker", valueAt(target, "spec", "runLauncherAsWorker"), strconv.FormatBool(q.MPI.RunLauncherAsWorker), "spec.mpi.runLauncherAsWorker: %s"},
	} {
		if f.have != "" && f.have != f.want {
			return fmt.Errorf("has %s: %s, and mlops-fn would render %s (its rank count and the operator's hostfile follow it); accepted: "+f.fix, f.field, f.have, f.want, f.have)
		}
	}
	return nil
}

// trainerEnvKept refuses a TrainJob whose own trainer env names an mlops.env
// key: mlops-fn's entry for it (valueFrom the env ConfigMap) would merge with
// the target's value into a variable the API server refuses.
func trainerEnvKept(target *yaml.RNode, q *render.Plan) error {
	list, err := target.Pipe(yaml.Lookup("spec", "trainer", "env"))
	if err != nil || list == nil {
		return nil
	}
	elems, _ := list.Elements()
	for i, e := range elems {
		name, _ := e.GetString("name")
		if slices.Contains(q.EnvKeys, name) && !ownEnvEntry(e, name, q) { // an entry of an earlier run is mlops-fn's own
			return fmt.Errorf("spec.trainer.env[%d]: %s is a key of mlops.env too, whose value mlops-fn takes from the env ConfigMap; the TrainJob's own entry would merge with it into one the API server refuses; accepted: the value in mlops.env only (remove the entry from the TrainJob), or another name", i, name)
		}
	}
	return nil
}

// laterRuntimePatches refuses another manager's runtime patch that sets a
// pod field mlops-fn sets for the same replicated job: Trainer applies the
// patches in list order, mlops-fn's first, so theirs would silently win.
func laterRuntimePatches(target *yaml.RNode, q *render.Plan) error {
	patches, err := target.Pipe(yaml.Lookup("spec", "runtimePatches"))
	if err != nil || patches == nil {
		return nil
	}
	ours := map[string]bool{
		"serviceAccountName": q.ServiceAccountName != "", "nodeSelector": len(q.NodeSelector) > 0,
		"tolerations": len(q.Tolerations) > 0, "imagePullSecrets": len(q.ImagePullSecrets) > 0,
	}
	ids := map[string]bool{"runAsUser": q.RunAsUser != nil, "runAsGroup": q.RunAsGroup != nil, "fsGroup": q.FSGroup != nil, "runAsNonRoot": true}
	elems, _ := patches.Elements()
	for i, patch := range elems {
		manager, _ := patch.GetString("manager")
		if manager == jobkind.RuntimePatchManager {
			continue
		}
		for _, job := range q.Trainer.ReplicatedJobs {
			spec, _ := patch.Pipe(yaml.Lookup("trainingRuntimeSpec", "template", "spec", "replicatedJobs", "[name="+job+"]", "template", "spec", "template", "spec"))
			if spec == nil {
				continue
			}
			var clash []string
			for _, f := range slices.Sorted(maps.Keys(ours)) {
				if ours[f] && spec.Field(f) != nil {
					clash = append(clash, f)
				}
			}
			for _, f := range slices.Sorted(maps.Keys(ids)) {
				if ids[f] && valueAt(spec, "securityContext", f) != "" {
					clash = append(clash, "securityContext."+f)
				}
			}
			if len(clash) > 0 {
				return fmt.Errorf("spec.runtimePatches[%d] (manager %s) sets %s of replicated job %s, which mlops-fn sets from the job spec and mlops.env; Trainer applies the patches in order and that one, after mlops-fn's, would win; accepted: the setting in one place only (that patch, or the job spec and mlops.env)", i, manager, strings.Join(clash, ", "), job)
			}
		}
	}
	return nil
}

// valueAt is the scalar at path in n, "" when there is none.
func valueAt(n *yaml.RNode, path ...string) string {
	v, err := n.Pipe(yaml.Lookup(path...))
	if err != nil || v == nil || v.YNode().Kind != yaml.ScalarNode {
		return ""
	}
	return v.YNode().Value
}

// privilegedContainer names a container of the target that runs privileged
// or adds capabilities, "" when none does.
func privilegedContainer(target *yaml.RNode) string {
	for _, c := range jobnode.Containers(target) {
		{
			if valueAt(c, "securityContext", "privileged") == "true" || lookupList(c, "securityContext", "capabilities", "add") > 0 {
				name, _ := c.GetString("name")
				return name
			}
		}
	}
	return ""
}

// lookupList is the length of the list at path in n, 0 when there is none.
func lookupList(n *yaml.RNode, path ...string) int {
	v, err := n.Pipe(yaml.Lookup(path...))
	if err != nil || v == nil || v.YNode().Kind != yaml.SequenceNode {
		return 0
	}
	return len(v.YNode().Content)
}

// launcherRanks finds the rank count in the mpirun line of the target's
// launcher container, which mlops-fn keeps when the spec names no command,
// and whether the line names its hosts.
func launcherRanks(target *yaml.RNode, container string, ranks int32) (render.ArgumentRef, bool, error) {
	c, err := target.Pipe(yaml.Lookup(append(launcherPodSpec(), "containers", "[name="+container+"]")...))
	if err != nil || c == nil {
		return render.ArgumentRef{}, false, fmt.Errorf("has no launcher container %q; accepted: an MPIJob with a launcher, or spec.command", container)
	}
	command, _ := c.GetSlice("command")
	args, _ := c.GetSlice("args")
	line := strings.Join(append(toStrings(command), toStrings(args)...), " ")
	if line == "" {
		return render.ArgumentRef{}, false, fmt.Errorf("the launcher's container %s has no command or args, so no mpirun line whose ranks mlops-fn could set to workers × slots (%d); accepted: the container that runs mpirun first in the launcher, or spec.command (mlops-fn then writes the mpirun line)", container, ranks)
	}
	if joined := render.JoinedRankCount(toStrings(command), toStrings(args)); joined != "" {
		return render.ArgumentRef{}, false, fmt.Errorf("the launcher runs %q, whose rank count is written in one item with its flag (%s), where mlops-fn cannot set it to workers × slots (%d); accepted: the flag and the count as two items (-np, \"4\"), or spec.command (mlops-fn then writes the mpirun line)", line, joined, ranks)
	}
	if counts := render.RankCounts(toStrings(command), toStrings(args)); len(counts) > 1 {
		return render.ArgumentRef{}, false, fmt.Errorf("the launcher runs %q, whose mpirun has %d rank counts (%s): mlops-fn sets one, and mpirun would read another; accepted: one -np N (or -n N) in the launcher's command or args, or spec.command (mlops-fn then writes the mpirun line)", line, len(counts), strings.Join(counts, ", "))
	}
	if ref, ok := render.RanksArgument(toStrings(command), toStrings(args)); ok {
		return ref, render.NamesHosts(toStrings(command), toStrings(args)), nil
	}
	if slices.ContainsFunc(append(toStrings(command), toStrings(args)...), func(tok string) bool { return strings.Contains(tok, " ") && strings.Contains(tok, "mpirun") }) {
		return render.ArgumentRef{}, false, fmt.Errorf("the launcher runs mpirun inside a shell string (%s), which mlops-fn does not edit, so its ranks would not follow workers × slots (%d); accepted: mpirun and -np N as items of the launcher's command or args, where mlops-fn sets N, or spec.command (mlops-fn then writes the mpirun line)", strconv.Quote(line), ranks)
	}
	return render.ArgumentRef{}, false, fmt.Errorf("the launcher runs %q, with no -np N among mpirun's own options (before the program), so its ranks would not follow workers × slots (%d); accepted: mpirun -np N (or -n N) in the launcher's command or args, where mlops-fn sets N, or spec.command (mlops-fn then writes the mpirun line)", line, ranks)
}

func toStrings(list []any) []string {
	out := make([]string, len(list))
	for i, v := range list {
		out[i] = fmt.Sprint(v)
	}
	return out
}

// launcherPodSpec is where an MPIJob keeps its launcher's pod spec.
func launcherPodSpec() []string {
	return jobkind.ForMode(api.ModeMultiNode).PodSpecPath(kubeflow.MPIReplicaTypeLauncher)
}

// setLauncherRanks writes the rank count where q.LauncherRanks says, and
// --hostfile after it when q.LauncherHostfile.
func setLauncherRanks(job *yaml.RNode, q *render.Plan) error {
	ref := q.LauncherRanks
	path := append(launcherPodSpec(), "containers", "[name="+q.Containers[kubeflow.MPIReplicaTypeLauncher]+"]", ref.Field)
	list, err := job.Pipe(yaml.Lookup(path...))
	if err != nil || list == nil || ref.Index >= len(list.Content()) {
		return fmt.Errorf("the launcher's %s[%d] is gone: %v", ref.Field, ref.Index, err)
	}
	n := list.Content()[ref.Index]
	n.Value, n.Tag, n.Style = strconv.Itoa(int(q.Ranks())), yaml.NodeTagString, yaml.DoubleQuotedStyle
	if q.LauncherHostfile {
		at := ref.Index + 1
		list.YNode().Content = slices.Insert(list.Content(), at, yaml.NewStringRNode("--hostfile").YNode(), yaml.NewStringRNode(render.OperatorHostfile).YNode())
	}
	return nil
}

// patch applies the overlay's patches to a copy of target, as kustomize's
// patches: field would, and tells what it changed beyond what the user wrote.
func (p Processor) patch(plan *render.Plan, target *yaml.RNode) (*yaml.RNode, *render.Plan, error) {
	id := identify(target)
	q, err := p.Narrow(plan, target)
	if err != nil {
		return nil, nil, err
	}
	out, err := p.applyPatches(q, target, id)
	if err != nil {
		return nil, nil, err
	}
	return out, q, nil
}

// applyPatches applies the patches of q, a plan narrowed to target, to a copy
// of target.
func (p Processor) applyPatches(q *render.Plan, target *yaml.RNode, id string) (*yaml.RNode, error) {
	out := target.Copy()
	for _, patch := range q.Patches() {
		node, err := jobnode.EncodePatch(patch)
		if err != nil {
			return nil, err
		}
		if out, err = merge2.Merge(node, out, yaml.MergeOptions{ListIncreaseDirection: yaml.MergeOptionsListPrepend}); err != nil {
			// kyaml's message goes on to print the whole patch: its first line says what clashed.
			first, _, _ := strings.Cut(err.Error(), "\n")
			first = strings.TrimSuffix(first, ": node contents:")
			return nil, fmt.Errorf("%s: applying %s: %s; accepted: a target whose fields have the types of %s", id, patch.File, first, jobkind.WithArticle(target.GetKind()))
		}
	}
	if q.LauncherRanks != nil {
		if err := setLauncherRanks(out, q); err != nil {
			return nil, fmt.Errorf("%s: %w", id, err)
		}
	}
	if q.Mode == api.ModeTrainJob {
		dropStaleTrainerEnv(out, q)
	}
	if err := requestsAboveLimits(out); err != nil {
		return nil, fmt.Errorf("%s: %w", id, err)
	}
	return out, nil
}

// dropStaleTrainerEnv removes the trainer env entries an earlier run wrote
// for keys mlops.env no longer has: a target patched in place (a kpt
// package) keeps them, and the pods would not start on a ConfigMap key that
// is gone.
func dropStaleTrainerEnv(job *yaml.RNode, q *render.Plan) {
	list, err := job.Pipe(yaml.Lookup("spec", "trainer", "env"))
	if err != nil || list == nil || list.YNode().Kind != yaml.SequenceNode {
		return
	}
	list.YNode().Content = slices.DeleteFunc(list.YNode().Content, func(n *yaml.Node) bool {
		e := yaml.NewRNode(n)
		name, _ := e.GetString("name")
		return ownEnvEntry(e, name, q) && !slices.Contains(q.EnvKeys, name)
	})
}

// ownEnvEntry: e is what mlops-fn writes for key name, its value taken from the env ConfigMap.
func ownEnvEntry(e *yaml.RNode, name string, q *render.Plan) bool {
	return valueAt(e, "valueFrom", "configMapKeyRef", "name") == q.ConfigMapName && valueAt(e, "valueFrom", "configMapKeyRef", "key") == name && valueAt(e, "value") == ""
}

// targetNonRoot says where the target asks for a non-root user, in a pod's or
// a container's securityContext (a runAsUser other than 0, or runAsNonRoot),
// and the uid if one is given; "" when it does not.
func targetNonRoot(target *yaml.RNode) (where, uid string) {
	for _, spec := range jobnode.PodSpecs(target) {
		contexts := []*yaml.RNode{spec}
		if list, _ := spec.Pipe(yaml.Lookup("containers")); list != nil {
			elems, _ := list.Elements()
			contexts = append(contexts, elems...)
		}
		for _, n := range contexts {
			sc := n.Field("securityContext")
			if sc == nil || sc.Value.YNode().Kind != yaml.MappingNode {
				continue
			}
			if v := sc.Value.Field("runAsUser"); v != nil && v.Value.YNode().Kind == yaml.ScalarNode && v.Value.YNode().Value != "0" {
				return "the pods run as runAsUser " + v.Value.YNode().Value, v.Value.YNode().Value
			}
			if v := sc.Value.Field("runAsNonRoot"); v != nil && v.Value.YNode().Value == "true" {
				return "the pods ask for runAsNonRoot", ""
			}
		}
	}
	return "", ""
}

// Generate builds the job the function generates when the inputs hold no
// target: the skeleton with the patches applied, marked as mlops-fn's.
func (p Processor) Generate(plan *render.Plan) (*yaml.RNode, error) {
	schema.Register()
	return p.generate(plan, plan.Skeleton())
}

// generate builds the full object from the skeleton, by the same patches.
// With no target to take them from, the spec must name the image, and for an
// MPIJob or a PyTorchJob the command.
func (p Processor) generate(plan *render.Plan, skeleton any) (*yaml.RNode, error) {
	missing := ""
	switch {
	case plan.Image == "":
		missing = "image"
	case plan.KeepsProgram() && plan.Mode != api.ModeSingleNode:
		missing = "command (or script)"
	}
	if missing != "" {
		return nil, fmt.Errorf("%s: spec.%s: Required value: the inputs hold no %s named %s whose %s mlops-fn could keep, so it generates the job; accepted: spec.%s, or the job among the inputs (spec.target selects it)", p.configName(), strings.Fields(missing)[0], plan.JobKind().Kind, plan.Target.Name, strings.Fields(missing)[0], strings.Fields(missing)[0])
	}
	node, err := jobnode.Encode(skeleton)
	if err != nil {
		return nil, err
	}
	if plan.Mode == api.ModeTrainJob && plan.Trainer.Runtime == "" {
		// A new TrainJob runs on the default runtime.
		q := *plan
		q.Trainer.Runtime, q.Trainer.RuntimeKind = api.DefaultTrainerRuntime, api.ClusterTrainingRuntime
		plan = &q
	}
	out, _, err := p.patch(plan, node) // a skeleton holds the training containers alone
	if err != nil {
		return nil, err
	}
	return out, p.annotate(plan, out)
}

// annotate marks a generated object as mlops-fn's and gives it a file: next to
// the job spec, named kind_name.yaml as kpt names new files, or
// kind_namespace_name.yaml for a namespaced one, so that no two objects share
// a file (kpt refuses that): same-named jobs of two namespaces, or a ConfigMap
// beside targets in several.
func (p Processor) annotate(plan *render.Plan, n *yaml.RNode) error {
	base := strings.ToLower(n.GetKind()) + "_" + n.GetName() + ".yaml"
	if ns := n.GetNamespace(); ns != "" {
		base = strings.ToLower(n.GetKind()) + "_" + ns + "_" + n.GetName() + ".yaml"
	}
	file := path.Join(p.outputDir, base)
	for _, a := range [][2]string{{GeneratedBy, api.Kind + "/" + plan.JobName}, {kioutil.PathAnnotation, file}} {
		// Plain style: yaml.SetAnnotation would quote the value.
		if err := n.PipeE(yaml.LookupCreate(yaml.MappingNode, "metadata", "annotations"), yaml.SetField(a[0], yaml.NewStringRNode(a[1]))); err != nil {
			return err
		}
	}
	// Conventional field order: apiVersion, kind, metadata, spec; name first.
	_, err := filters.FormatFilter{UseSchema: true}.Filter([]*yaml.RNode{n})
	return err
}

func generated(n *yaml.RNode) bool {
	_, ok := n.GetAnnotations()[GeneratedBy]
	return ok
}

// findItem finds the item of that kind called name, now or, failing that,
// before kustomize renamed it.
func findItem(items []*yaml.RNode, kind, name string) int {
	for i, it := range items {
		if it.GetKind() == kind && it.GetName() == name {
			return i
		}
	}
	for i, it := range items {
		if it.GetKind() == kind && slices.Contains(previousNames(it), name) {
			return i
		}
	}
	return -1
}

// previousNamesAnnotation is where kustomize keeps the names its namePrefix,
// nameSuffix and patches replaced; it hands the annotation to functions.
const previousNamesAnnotation = "internal.config.kubernetes.io/previousNames"

func previousNames(n *yaml.RNode) []string {
	v := n.GetAnnotations()[previousNamesAnnotation]
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

func sameObject(a, b *yaml.RNode) bool {
	return a != nil && b != nil && a.GetKind() == b.GetKind() && a.GetName() == b.GetName() && a.GetNamespace() == b.GetNamespace()
}

// upsert replaces the item of the same kind, name and namespace, else appends.
func upsert(items []*yaml.RNode, n *yaml.RNode) []*yaml.RNode {
	for i, it := range items {
		if sameObject(it, n) {
			items[i] = n
			return items
		}
	}
	return append(items, n)
}

// names are the containers' names by role.
func names(byRole map[kubeflow.MPIReplicaType][]*yaml.RNode) map[kubeflow.MPIReplicaType][]string {
	out := map[kubeflow.MPIReplicaType][]string{}
	for role, list := range byRole {
		for _, c := range list {
			if name, _ := c.GetString("name"); name != "" {
				out[role] = append(out[role], name)
			}
		}
	}
	return out
}

// sidecars are the containers of each pod template other than the training
// container the patches address.
func sidecars(target *yaml.RNode, training render.ContainerNames, plan *render.Plan) map[kubeflow.MPIReplicaType][]string {
	out := map[kubeflow.MPIReplicaType][]string{}
	for role, list := range jobnode.ContainerLists(target) {
		main := training[role]
		if main == "" {
			main = plan.ContainerName
		}
		for _, c := range list {
			if name, _ := c.GetString("name"); name != main && name != "" {
				out[role] = append(out[role], name)
			}
		}
	}
	return out
}

// containerNames takes the training container of each pod template of the
// target: the one named like the spec's container, else the first, which is
// the one the mpi-operator treats as main.
func containerNames(target *yaml.RNode, plan *render.Plan) render.ContainerNames {
	names := render.ContainerNames{}
	for role, list := range jobnode.ContainerLists(target) {
		for i, c := range list {
			name, _ := c.GetString("name")
			if i == 0 || name == plan.ContainerName {
				names[role] = name
			}
			if name == plan.ContainerName {
				break
			}
		}
	}
	return names
}

// configPath is where the runner says the function config lives, if it says.
func configPath(config *yaml.RNode) string {
	if config == nil {
		return ""
	}
	path, _, _ := kioutil.GetFileAnnotations(config)
	return path
}
