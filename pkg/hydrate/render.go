// SPDX-License-Identifier: Apache-2.0

package hydrate

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/env"
	"github.com/mlops-fn/mlops-fn/pkg/jobspec"
	"github.com/mlops-fn/mlops-fn/pkg/processor"
	"github.com/mlops-fn/mlops-fn/pkg/render"
)

// Render computes the overlay without touching the disk, and refuses one whose build would differ from the
// function's run on the same base.
func Render(o Options) (*Overlay, error) {
	if o.Config == "" {
		o.Config = "job.yaml"
	}
	// Held until Write, or Unlock: what Render reads, nobody else writes.
	unlock, err := Lock(o.Dir)
	if err != nil {
		return nil, err
	}
	r := &rendering{o: o, configPath: filepath.Join(o.Dir, o.Config)}
	for _, step := range []func() error{
		r.readSpec,
		r.readKustomization,
		r.buildBase,
		r.renderComponent,
		r.componentKustomization,
		r.check, // the overlay's build equals the function's run
	} {
		if err := step(); err != nil {
			unlock()
			if changed := r.inputChanged(); changed != "" {
				return nil, fmt.Errorf("%s: %s changed while hydrate ran, so hydrate writes nothing: run it again (an editor that takes the folder's lock never meets this); what it met: %w", o.Dir, changed, err)
			}
			return nil, err
		}
	}
	r.out.unlock = unlock
	for _, msg := range r.restored {
		r.out.Warnings = append(r.out.Warnings, &framework.Result{Severity: framework.Info, Message: msg})
	}
	return r.out, nil
}

// rendering is one Render in progress: what each step found.
type rendering struct {
	o          Options
	configPath string
	specText   []byte // read once: the guard compares the very text the patches come from
	config     *yaml.RNode
	p          processor.Processor
	resolved   *processor.Overlay
	plan       *render.Plan
	envFile    string // mlops.env's path in the overlay, as the kustomization names it
	header     string
	out        *Overlay

	k         *yaml.RNode // the kustomization, hydrate's entries set
	oldText   []byte      // the kustomization's text before, nil for a new one
	form      textForm
	kname     string // the kustomization's path in the resolved overlay folder
	e         entries
	preText   string            // the kustomization the base is built from
	builtSpec *yaml.RNode       // the job spec as the guard reads it in the build
	base      []*yaml.RNode     // the base, the env ConfigMap included
	items     []*yaml.RNode     // the base, without the env ConfigMap
	envData   map[string]string // the env ConfigMap's data as generated, nil: none
	envExtras bool              // envData is not mlops.env's keys and values alone
	restored  []string          // hydrate's fields of the env generator an edit had changed

	targets   []*yaml.RNode    // the objects the patches address, one each
	patches   []map[string]any // the component's transformers that apply them
	generated string           // the component's file with the generated job
	jobParts  []*yaml.RNode    // what the job is built from: the targets and their patches, or the generated job
}

// inputChanged is job.yaml or mlops.env when its text on disk is no longer what readSpec read ("": neither, or
// readSpec failed): kustomize reads both again, so an edit mid-run fails a later step.
func (r *rendering) inputChanged() string {
	if r.out == nil {
		return ""
	}
	if text, err := os.ReadFile(r.configPath); err != nil || !bytes.Equal(text, r.specText) {
		return r.configPath
	}
	path := filepath.Join(r.o.Dir, r.envFile)
	text, err := os.ReadFile(path)
	if err != nil {
		return path
	}
	if f, err := env.Parse(path, text); err != nil || !maps.Equal(f.Map(), r.resolved.Env.Map()) {
		return path
	}
	return ""
}

// readSpec reads the job spec and its mlops.env, resolves the plan, and checks both lie in the overlay folder,
// where kubectl reads them.
func (r *rendering) readSpec() error {
	o := r.o
	var err error
	if r.specText, err = os.ReadFile(r.configPath); err != nil {
		return err
	}
	if r.config, err = jobspec.Parse(r.configPath, r.specText); err != nil {
		return err
	}
	if n, _ := r.config.Pipe(yaml.Lookup("spec", "envFile", "localConfigMap")); n != nil {
		// A kpt package's form: the overlay has no inputs but its files.
		return fmt.Errorf("%s: spec.envFile.localConfigMap is set, which names a ConfigMap among a kpt package's inputs, but kubectl apply -k reads mlops.env from disk; accepted: no localConfigMap, and the file %s (or spec.envFile.path)", r.configPath, filepath.Join(o.Dir, api.DefaultEnvPath))
	}
	r.p = processor.Processor{ConfigDir: o.Dir, ConfigFile: r.configPath, Verbose: o.Verbose}
	resolved, results := r.p.Resolve(r.config, nil)
	if resolved == nil {
		return results
	}
	r.resolved, r.plan = resolved, resolved.Plan
	if resolved.EnvOrigin != processor.FromDisk {
		return fmt.Errorf("%s: spec.envFile.inline is set, but kubectl apply -k reads mlops.env from disk: move the text to %s", r.configPath, filepath.Join(o.Dir, api.DefaultEnvPath))
	}
	if r.envFile, err = fileInside(o.Dir, resolved.Env.Source); err != nil {
		value := resolved.Env.Source
		if n, _ := r.config.Pipe(yaml.Lookup("spec", "envFile", "path")); n != nil && n.YNode().Value != "" {
			value = n.YNode().Value
		}
		return fmt.Errorf("%s: spec.envFile.path: %q is not inside the overlay folder %s; accepted: a file in or below %s (kubectl's kustomize reads only files in or below the kustomization), e.g. %s", r.configPath, value, o.Dir, o.Dir, api.DefaultEnvPath)
	}
	dir, err := realDir(o.Dir)
	if err != nil {
		return err
	}
	r.header = fmt.Sprintf(Header, o.Config, r.envFile)
	for rel := range o.Folders {
		if !filepath.IsLocal(rel) || filepath.Clean(rel) == ComponentDir {
			return fmt.Errorf("hydrate cannot replace %s: accepted: a folder in %s other than %s", rel, o.Dir, ComponentDir)
		}
	}
	r.out = &Overlay{Component: map[string][]byte{}, dir: dir, folders: o.Folders}
	return nil
}

// readKustomization reads the user's kustomization, or seeds a new one, and sets hydrate's entries in it.
func (r *rendering) readKustomization() error {
	o, plan := r.o, r.plan
	kpath, kreal, err := kustomizationFile(o.Dir)
	if err != nil {
		return err
	}
	if _, err := fileInside(o.Dir, kpath); kpath != "" && err != nil {
		// The staged builds read it at its link's path, which kustomize, resolving the link, does not.
		return fmt.Errorf("%s is a symbolic link to %s, outside the overlay folder %s, and kubectl's kustomize then finds no kustomization in %s; accepted: the file itself in %s, or a link to a file in or below it", kpath, kreal, o.Dir, o.Dir, o.Dir)
	}
	r.kname = filepath.Join(r.out.dir, "kustomization.yaml")
	r.out.kustomizationPath = r.kname
	if kpath != "" {
		r.kname, r.out.kustomizationPath = filepath.Join(r.out.dir, filepath.Base(kpath)), kreal
	} else if len(o.Resources) == 0 {
		return fmt.Errorf("%s does not exist: pass --resources with the base that holds the %s skeleton named %s",
			filepath.Join(o.Dir, "kustomization.yaml"), plan.Facts().Kind, plan.Name)
	}
	seedHeader := fmt.Sprintf("# After editing %s or %s, run `mlops-fn hydrate` on this folder, then\n"+
		"# `kubectl apply -k` it: until hydrate has run, the build fails and says so.\n"+
		"# Lines you add here stay; the entries marked `# mlops-fn hydrate` are hydrate's.", o.Config, r.envFile)
	if r.k, r.oldText, r.form, err = readKustomization(kpath, o.Resources, seedHeader); err != nil {
		return err
	}
	if c := filepath.Join(o.Dir, ComponentDir); exists(c) && !ownedByUs(filepath.Join(c, componentFile)) {
		return fmt.Errorf("%s exists and mlops-fn did not write it (its %s lacks mlops-fn's header); accepted: no %s folder in the overlay, or one mlops-fn hydrate wrote: move it away", c, componentFile, ComponentDir)
	}
	if len(plan.Target.Labels) > 0 {
		// An object given the labels after hydrate would go unpatched, unnoticed.
		return fmt.Errorf("%s: spec.target.labels: a hydrated overlay patches the objects it found when hydrate ran and cannot notice one that matches later; accepted: spec.target.name (the function, as a kustomize or kpt transformer, takes labels)", r.configPath)
	}
	if _, err := fileInside(o.Dir, r.configPath); err != nil {
		return fmt.Errorf("%s: the job spec is not inside the overlay folder %s (its file or a symbolic link's target); accepted: a job spec in or below %s, where kubectl's kustomize reads it for the guard", r.configPath, o.Dir, o.Dir)
	}
	r.e = entries{envName: plan.ConfigMapName, envNamespace: plan.Namespace, envFile: r.envFile,
		inputsName: plan.JobName + api.GuardInputsSuffix, specFile: o.Config}
	r.restored, err = setEntries(r.k, r.e, filepath.Join(o.Dir, filepath.Base(r.kname)))
	return err
}

// buildBase builds the items the component patches: the base, before the overlay's own transformers, with the
// env ConfigMap the function reads; when the user's literals or files add keys to mlops.env's, the job is
// rendered from it, as the function run by kustomize renders it.
func (r *rendering) buildBase() error {
	pre, err := withoutEntries(r.k, r.e, true)
	if err != nil {
		return err
	}
	if r.preText, err = pre.String(); err != nil {
		return err
	}
	// The job spec too, as the guard reads it: after the components listed before mlops-fn (a component's
	// commonAnnotations reach it), staged without local-config, which would keep it out of the build's output.
	spec, err := jobspec.Parse(r.configPath, r.specText)
	if err != nil {
		return err
	}
	local, isLocal := spec.GetAnnotations()[processor.LocalConfig]
	if _, err := spec.Pipe(yaml.ClearAnnotation(processor.LocalConfig)); err != nil {
		return err
	}
	resources, err := listField(pre, "resources")
	if err != nil {
		return err
	}
	resources.YNode().Content = append(resources.YNode().Content, &yaml.Node{Kind: yaml.ScalarNode, Value: filepath.ToSlash(r.o.Config)})
	preText, err := pre.String()
	if err != nil {
		return err
	}
	files := map[string][]byte{filepath.Base(r.kname): []byte(preText), r.o.Config: []byte(spec.MustString())}
	items, err := stagedBuild(r.out.dir, files, r.out.folders)
	if err != nil {
		return fmt.Errorf("%s: building the base: %w", r.o.Dir, err)
	}
	s := slices.IndexFunc(items, func(n *yaml.RNode) bool {
		return n.GetApiVersion() == api.APIVersion && n.GetKind() == specKind && n.GetName() == spec.GetName()
	})
	if s < 0 {
		return fmt.Errorf("%s: building the base: the job spec %s is not in the build's output", r.o.Dir, r.o.Config)
	}
	r.builtSpec = items[s]
	items = slices.Delete(items, s, s+1)
	if isLocal {
		if err := r.builtSpec.PipeE(yaml.SetAnnotation(processor.LocalConfig, local)); err != nil {
			return err
		}
	}
	r.base, r.items = items, items
	var cm *yaml.RNode
	if i := slices.IndexFunc(items, func(n *yaml.RNode) bool {
		return n.GetKind() == "ConfigMap" && n.GetName() == r.plan.ConfigMapName && n.GetApiVersion() == "v1"
	}); i >= 0 {
		cm, r.items = items[i], slices.Delete(slices.Clone(items), i, i+1)
		if data := cm.GetDataMap(); len(data) > 0 {
			r.envData = data
		}
	}
	// mlops.env's keys are unique (env.Parse refuses a repeated one): its map holds every entry.
	if r.envExtras = !maps.Equal(r.envData, r.resolved.Env.Map()); cm == nil || !r.envExtras {
		return nil
	}
	withExtras, results := r.p.Resolve(r.config, []*yaml.RNode{cm})
	if withExtras == nil {
		return results
	}
	r.plan = withExtras.Plan
	return nil
}
