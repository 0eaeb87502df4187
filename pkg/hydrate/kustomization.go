// SPDX-License-Identifier: Apache-2.0

package hydrate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/jobspec"
	"github.com/mlops-fn/mlops-fn/pkg/kinds"
)

// ownedMark ends the line of each entry hydrate keeps, so a later run finds it again after a rename.
const ownedMark = "mlops-fn hydrate"

// Entry is one of hydrate's entries in the user's kustomization: its field, and what it is.
type Entry struct{ Field, What string }

// KustomizationEntries are the entries setEntries keeps, marked with ownedMark, as `hydrate --help` lists them.
var KustomizationEntries = []Entry{
	{"configMapGenerator", "the env ConfigMap's generator"},
	{"configMapGenerator", "the guard's inputs: mlops.env's generator (local-config)"},
	{"resources", "the guard's inputs: the job spec (local-config: never applied)"},
	{"components", ComponentDir + ", the component"},
	{"patches", listedPath + ": fails the build when components: lacks " + ComponentDir},
}

// entries are what hydrate keeps in the user's kustomization (KustomizationEntries); all else is the user's.
type entries struct {
	envName, envNamespace, envFile string
	inputsName, specFile           string
}

// token identifies the entries: the guard checks the kustomization still has them.
func (e entries) token() string {
	sum := sha256.Sum256([]byte(strings.Join([]string{e.envName, e.envNamespace, e.envFile, e.inputsName, e.specFile, ComponentDir}, "\x00")))
	return hex.EncodeToString(sum[:8])
}

// kustomizationFile finds the overlay's one kustomization (kustomization.yaml, .yml or Kustomization) and the
// file it really is, through a symbolic link; path "": none.
func kustomizationFile(dir string) (path, real string, err error) {
	var found []string
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			found = append(found, name)
		}
	}
	if len(found) == 0 {
		return "", "", nil
	} else if len(found) > 1 {
		return "", "", fmt.Errorf("%s holds %s: kustomize refuses a folder with more than one; accepted: one of them", dir, strings.Join(found, " and "))
	}
	path = filepath.Join(dir, found[0])
	if real, err = filepath.EvalSymlinks(path); err != nil {
		return "", "", fmt.Errorf("%s: %w", path, err)
	}
	return path, real, nil
}

// readKustomization parses the user's kustomization at path, or, path "", seeds one with resources under
// header, and tells how it is written.
func readKustomization(path string, resources []string, header string) (*yaml.RNode, []byte, textForm, error) {
	if path == "" {
		k := yaml.MustParse("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n")
		k.YNode().HeadComment = header
		return k, nil, textForm{}, k.PipeE(yaml.SetField("resources", yaml.NewListRNode(resources...)))
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, textForm{}, err
	}
	text := string(data)
	if len(strings.TrimSpace(text)) == 0 {
		return nil, nil, textForm{}, fmt.Errorf("%s is empty; accepted: a kustomization (apiVersion: kustomize.config.k8s.io/v1beta1, kind: Kustomization, resources: [the base])", path)
	}
	// A file that mixes line ends is refused, as hydrate writes its lines with one.
	crlf := strings.Count(text, "\r\n")
	if lf := strings.Count(text, "\n") - crlf; crlf > 0 && lf > 0 {
		return nil, nil, textForm{}, fmt.Errorf("%s mixes line ends: %d lines end in CRLF (\\r\\n), %d in LF (\\n), and hydrate writes its entries with one kind; accepted: one kind throughout (unix2dos or dos2unix makes it so)", path, crlf, lf)
	}
	// Parsed as LF text: yaml.v3 keeps a CR in a comment, and writes it as a line break.
	k, err := yaml.Parse(strings.ReplaceAll(strings.TrimPrefix(text, byteOrderMark), "\r\n", "\n"))
	if err != nil {
		return nil, nil, textForm{}, fmt.Errorf("%s: %w", path, err)
	}
	if k.YNode().Kind != yaml.MappingNode {
		return nil, nil, textForm{}, fmt.Errorf("%s is a YAML %s; accepted: a kustomization, a YAML map", path, jobspec.NodeKind(k))
	}
	// yaml.v3's nodes keep a repeated key, which kustomize's build then reads one way and hydrate another.
	first := map[string]int{}
	content := k.YNode().Content
	for i := 0; i+1 < len(content); i += 2 {
		key := content[i]
		if line, seen := first[key.Value]; seen {
			return nil, nil, textForm{}, fmt.Errorf("%s:%d: %s: is written twice, first on line %d; accepted: each field once (one %s list holding every entry)", path, key.Line, key.Value, line, key.Value)
		}
		first[key.Value] = key.Line
	}
	return k, data, textForm{bom: strings.HasPrefix(text, byteOrderMark), crlf: crlf > 0}, nil
}

// textForm is what YAML drops and hydrate writes back: a byte order mark, CRLF line ends.
type textForm struct{ bom, crlf bool }

const byteOrderMark = "\ufeff"

// apply writes text, as kyaml writes it, in form f.
func (f textForm) apply(text string) string {
	if f.crlf {
		text = strings.ReplaceAll(text, "\n", "\r\n")
	}
	if f.bom {
		text = byteOrderMark + text
	}
	return text
}

// setEntries puts hydrate's entries into k, keeping every other line, the user's fields of the env generator
// too, and returns what it set back there that an edit had changed.
func setEntries(k *yaml.RNode, e entries, path string) ([]string, error) {
	// kustomize forces a global true onto every generator, over the env generator's own false.
	if h, _ := k.Pipe(yaml.Lookup("generatorOptions", "disableNameSuffixHash")); h != nil && strings.EqualFold(h.YNode().Value, "true") {
		return nil, fmt.Errorf("%s:%d: generatorOptions.disableNameSuffixHash: %s takes kustomize's hash off the name of every ConfigMap the kustomization "+
			"generates, and the job's env ConfigMap %s must keep it: an edit of mlops.env then makes a new ConfigMap beside the old one, and a running job keeps "+
			"reading its own; accepted: no disableNameSuffixHash under generatorOptions (or false), and options: {disableNameSuffixHash: true} on each of your "+
			"own generators whose name must stay as written", path, h.YNode().Line, h.YNode().Value, e.envName)
	}
	gens, err := listField(k, "configMapGenerator")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var kept []*yaml.Node
	var env, earlier *yaml.RNode
	for _, n := range gens.YNode().Content {
		g := yaml.NewRNode(n)
		switch name := g.Field("name"); {
		case name == nil:
		case name.Value.YNode().Value == e.envName:
			env = g
		case isInputs(g):
			continue // the guard's inputs, written anew below
		case earlier == nil && hydrates(g, e):
			// hydrate's env generator under an earlier name (job renamed, another jobKind): renamed in place.
			earlier = g
		}
		kept = append(kept, n)
	}
	owned := env != nil && strings.Contains(env.Field("name").Value.YNode().LineComment, ownedMark)
	if env == nil && earlier != nil {
		env, owned = earlier, true
	}
	if env == nil {
		env, owned = yaml.NewMapRNode(nil), true
		kept = append(kept, env.YNode())
	}
	where := fmt.Sprintf("%s: configMapGenerator %s: ", path, e.envName)
	restored, err := setEnvGenerator(env, e, owned, where)
	if err != nil {
		return nil, fmt.Errorf("%s%w", where, err)
	}
	inputs, err := yaml.Parse(fmt.Sprintf(`name: %s
envs:
- %s
literals:
- %s=%s
options:
  disableNameSuffixHash: true
  annotations:
    config.kubernetes.io/local-config: "true"
`, e.inputsName, e.envFile, tokenKey, e.token()))
	if err != nil {
		return nil, err
	}
	inputs.Field("name").Value.YNode().LineComment = ownedMark + ": mlops.env as the guard compares it"
	gens.YNode().Content = append(kept, inputs.YNode())
	blockStyle(k, "configMapGenerator")

	err = setEntry(k, "resources", e.isSpecEntry, e.specFile, ownedMark+": the job spec, which the guard compares (local-config: never applied)")
	if err == nil {
		err = setEntry(k, "components", isComponentEntry, ComponentDir, ownedMark+": the job's patches, written by mlops-fn hydrate")
	}
	// The check that the component ran: a patch of the kustomization's own, after its components.
	var patches *yaml.RNode
	if err == nil {
		patches, err = listField(k, "patches")
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	i := slices.IndexFunc(patches.YNode().Content, isListedEntry)
	if i < 0 {
		i = len(patches.YNode().Content)
		patches.YNode().Content = append(patches.YNode().Content, yaml.NewMapRNode(&map[string]string{"path": listedPath}).YNode())
		blockStyle(k, "patches")
	}
	p := yaml.NewRNode(patches.YNode().Content[i])
	if err := p.PipeE(yaml.SetField("target", yaml.NewMapRNode(&map[string]string{"kind": specKind}))); err != nil {
		return nil, err
	}
	if f := p.Field("path"); f.Value.YNode().LineComment == "" {
		f.Value.YNode().LineComment = ownedMark + ": fails the build when components: lacks " + ComponentDir
	}
	return restored, nil
}

// listedPath is the check's patch file, as the kustomization names it.
var listedPath = ComponentDir + "/" + ListedFile

func isListedEntry(n *yaml.Node) bool {
	if n.Kind != yaml.MappingNode {
		return false
	}
	p := yaml.NewRNode(n).Field("path")
	return p != nil && path.Clean(p.Value.YNode().Value) == listedPath
}

// setEntry marks hydrate's item of k's list field where a formatter or `kustomize edit` dropped the mark from a
// block list (a user's comment stays), or appends value with the mark.
func setEntry(k *yaml.RNode, field string, is func(*yaml.Node) bool, value, mark string) error {
	list, err := listField(k, field)
	if err != nil {
		return err
	}
	if i := slices.IndexFunc(list.YNode().Content, is); i >= 0 {
		if item := list.YNode().Content[i]; list.YNode().Style&yaml.FlowStyle == 0 && item.LineComment == "" {
			item.LineComment = mark
		}
		return nil
	}
	n := yaml.NewStringRNode(value).YNode()
	n.LineComment = mark
	list.YNode().Content = append(list.YNode().Content, n)
	blockStyle(k, field)
	return nil
}

// listField is k's list under field, created where there is none or an empty value (`components:` whose last
// item was deleted); a value of another kind is an error.
func listField(k *yaml.RNode, field string) (*yaml.RNode, error) {
	if f := k.Field(field); f != nil && f.Value.YNode().Kind == yaml.ScalarNode && (f.Value.YNode().Tag == yaml.NodeTagNull || f.Value.YNode().Value == "") {
		comment := f.Value.YNode().LineComment
		*f.Value.YNode() = yaml.Node{Kind: yaml.SequenceNode, Tag: yaml.NodeTagSeq}
		if f.Key.YNode().LineComment == "" {
			f.Key.YNode().LineComment = comment
		}
	}
	list, err := k.Pipe(yaml.LookupCreate(yaml.SequenceNode, field))
	if err == nil && list.YNode().Kind != yaml.SequenceNode {
		err = fmt.Errorf("%s is a YAML %s; accepted: a list", field, jobspec.NodeKind(list))
	}
	return list, err
}

// isInputs: g is the guard's inputs generator, written anew on every run: named NAME-mlops-fn-inputs with
// hydrate's mark, or, the mark gone (a formatter, `kustomize edit`), with the token's literal.
func isInputs(g *yaml.RNode) bool {
	name := g.Field("name")
	if name == nil || !strings.HasSuffix(name.Value.YNode().Value, api.GuardInputsSuffix) {
		return false
	}
	literals, _ := g.GetSlice("literals")
	return strings.Contains(name.Value.YNode().LineComment, ownedMark) || slices.ContainsFunc(literals, func(l any) bool {
		s, _ := l.(string)
		return strings.HasPrefix(s, tokenKey+"=")
	})
}

func isComponentEntry(n *yaml.Node) bool { return path.Clean(n.Value) == ComponentDir }

func (e entries) isSpecEntry(n *yaml.Node) bool { return path.Clean(n.Value) == path.Clean(e.specFile) }

// hydrates: g is an env generator hydrate wrote under another name: marked, or NAME-KIND-env with mlops.env first.
func hydrates(g *yaml.RNode, e entries) bool {
	name := g.Field("name")
	if strings.Contains(name.Value.YNode().LineComment, ownedMark) {
		return true
	}
	if envs, _ := g.GetSlice("envs"); len(envs) == 0 || envs[0] != e.envFile {
		return false
	}
	return slices.ContainsFunc(kinds.All.Names(), func(m string) bool {
		prefix, ok := strings.CutSuffix(name.Value.YNode().Value, "-"+strings.ToLower(m)+"-env")
		return ok && prefix != ""
	})
}

// blockStyle writes field's list in block style, so hydrate's entries can carry comments; the flow list's
// comment moves to the key.
func blockStyle(k *yaml.RNode, field string) {
	if f := k.Field(field); f != nil && f.Value.YNode().Style&yaml.FlowStyle != 0 {
		key, list := f.Key.YNode(), f.Value.YNode()
		list.Style = 0
		if key.LineComment == "" {
			key.LineComment, list.LineComment = list.LineComment, ""
		}
	}
}

// setEnvGenerator makes g generate the env ConfigMap from the env file, as the job names it, beside the job,
// hashed (the component's name references carry the hash into a CRD's envFrom): an edit makes a new ConfigMap,
// and a job still running, or whose update is refused, keeps reading its own. where prefixes what it sets back.
func setEnvGenerator(g *yaml.RNode, e entries, owned bool, where string) ([]string, error) {
	comment := ""
	if name := g.Field("name"); name != nil {
		comment = name.Value.YNode().LineComment
	}
	if err := g.PipeE(yaml.SetField("name", yaml.NewStringRNode(e.envName))); err != nil {
		return nil, err
	}
	// The user's comment on their own entry stays, the mark after it.
	switch mark := ownedMark + ": mlops.env for the job's containers"; {
	case comment == "":
		comment = mark
	case !strings.Contains(comment, ownedMark):
		comment += "; " + mark
	}
	g.Field("name").Value.YNode().LineComment = comment
	var namespace yaml.Filter = yaml.Clear("namespace")
	if e.envNamespace != "" {
		namespace = yaml.SetField("namespace", yaml.NewStringRNode(e.envNamespace))
	}
	if err := g.PipeE(namespace); err != nil {
		return nil, err
	}
	envs, err := listField(g, "envs")
	if err != nil {
		return nil, err
	}
	// In hydrate's entry the first env file is mlops-fn's (it follows spec.envFile.path); more are the
	// user's. In the user's own entry mlops.env is put first, the user's files kept.
	var restored []string
	c := envs.YNode().Content
	switch {
	case slices.ContainsFunc(c, func(n *yaml.Node) bool { return n.Value == e.envFile }):
	case owned && len(c) > 0:
		restored = append(restored, where+fmt.Sprintf("envs[0]: %s is hydrate's place: it writes %s there, the env file the job spec names (spec.envFile.path); list your own files after it", c[0].Value, e.envFile))
		c[0].Value = e.envFile
	default:
		envs.YNode().Content = append([]*yaml.Node{yaml.NewStringRNode(e.envFile).YNode()}, c...)
	}
	if h, _ := g.Pipe(yaml.Lookup("options", "disableNameSuffixHash")); h != nil && !strings.EqualFold(h.YNode().Value, "false") {
		restored = append(restored, where+fmt.Sprintf("options.disableNameSuffixHash: %s is hydrate's: it writes false, so that an edit of mlops.env makes a new ConfigMap beside the old one and a running job keeps reading its own", h.YNode().Value))
	}
	hash := yaml.NewRNode(&yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagBool, Value: "false"})
	return restored, g.PipeE(yaml.LookupCreate(yaml.MappingNode, "options"), yaml.SetField("disableNameSuffixHash", hash))
}

// transformerFields act after resources, generators and components, so after what the component sees.
var transformerFields = []string{"namespace", "namePrefix", "nameSuffix", "commonLabels", "labels", "commonAnnotations",
	"patches", "patchesStrategicMerge", "patchesJson6902", "images", "replicas", "replacements", "transformers",
	"validators", "vars", "sortOptions", "buildMetadata"}

// withoutEntries is a copy of k without hydrate's entries but the env generator, unhashed as a transformer
// sees it (unhashedEnv); with beforeTransformers, also without the fields that act after the component.
func withoutEntries(k *yaml.RNode, e entries, beforeTransformers bool) (*yaml.RNode, error) {
	c := k.Copy()
	if list := c.Field("components"); beforeTransformers && list != nil {
		// Components listed after mlops-fn act after its patches.
		if i := slices.IndexFunc(list.Value.YNode().Content, isComponentEntry); i >= 0 {
			list.Value.YNode().Content = list.Value.YNode().Content[:i]
		}
	}
	for field, drop := range map[string]func(*yaml.Node) bool{
		"configMapGenerator": func(n *yaml.Node) bool {
			name := yaml.NewRNode(n).Field("name")
			return name != nil && name.Value.YNode().Value == e.inputsName
		},
		"components": isComponentEntry,
		"resources":  e.isSpecEntry,
		"patches":    isListedEntry,
	} {
		list := c.Field(field)
		if list == nil {
			continue
		}
		list.Value.YNode().Content = slices.DeleteFunc(list.Value.YNode().Content, drop)
		if len(list.Value.YNode().Content) == 0 {
			// An empty list under a commented key would not parse again.
			if err := c.PipeE(yaml.Clear(field)); err != nil {
				return nil, err
			}
		}
	}
	if list := c.Field("configMapGenerator"); list != nil {
		for _, n := range list.Value.YNode().Content {
			g := yaml.NewRNode(n)
			if name := g.Field("name"); name == nil || name.Value.YNode().Value != e.envName {
				continue
			}
			if err := g.PipeE(yaml.LookupCreate(yaml.MappingNode, "options"), yaml.SetField("disableNameSuffixHash", yaml.NewScalarRNode("true"))); err != nil {
				return nil, err
			}
		}
	}
	if beforeTransformers {
		for _, f := range transformerFields {
			if err := c.PipeE(yaml.Clear(f)); err != nil {
				return nil, err
			}
		}
	}
	return c, nil
}
