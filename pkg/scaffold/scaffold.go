// SPDX-License-Identifier: Apache-2.0

// Package scaffold writes a new job's folder: a commented mlops.env, the job spec, and a base whose skeleton
// is named like the job, ready for hydrate.
package scaffold

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/jobnode"
	"github.com/mlops-fn/mlops-fn/pkg/jobspec"
	"github.com/mlops-fn/mlops-fn/pkg/kinds"
	"github.com/mlops-fn/mlops-fn/pkg/processor"
	"github.com/mlops-fn/mlops-fn/pkg/schema"
)

// BaseDir is the base in the new folder; its kustomization lists the skeleton.
const BaseDir = "base"

// Options say what job to start.
type Options struct {
	Name    string
	JobKind jobkind.JobKind
	Image   string   // "" : the jobKind's demo image
	Command []string // nil: the demo's command (with the demo image), else none
	// Dir is the folder the files go to, as messages name it ("": none).
	Dir string
}

// Files are the new folder's files, by path in it.
func Files(o Options) (map[string][]byte, error) {
	o.JobKind = cmp.Or(o.JobKind, kinds.All.Default())
	jk := kinds.All.Of(o.JobKind)
	d := jk.Demo
	if jk.Kind == "" {
		return nil, fmt.Errorf("--kind %q: accepted: %s", o.JobKind, strings.Join(kinds.All.Names(), ", "))
	}
	for _, msg := range validation.IsDNS1035Label(o.Name) {
		return nil, fmt.Errorf("the job's name %q (--name, else the folder's name): %s; accepted: a DNS label, lowercase letters, digits and '-', starting with a letter, e.g. --name my-job", o.Name, msg)
	}
	if o.Image != "" && o.Command == nil && jk.Starter != "" {
		return nil, fmt.Errorf("--image %s without --command: %s needs the program %s starts; accepted: --command python,train.py (comma-separated)",
			o.Image, o.JobKind, jk.Starter)
	}
	// YAML and a Kubernetes object (JSON) carry only text.
	if !utf8.ValidString(o.Image) {
		return nil, fmt.Errorf("--image %s is not UTF-8 text, which a Kubernetes object cannot carry; accepted: UTF-8 text", strconv.Quote(o.Image))
	}
	for i, arg := range o.Command {
		if !utf8.ValidString(arg) {
			return nil, fmt.Errorf("argument %d of the command, %s, is not UTF-8 text, which a Kubernetes object cannot carry; accepted: UTF-8 text",
				i+1, strconv.Quote(arg))
		}
	}
	image, command, comment := o.Image, o.Command, "your training image"
	if image == "" {
		image, comment = d.Image, d.About+": put your training image here"
		if command == nil {
			command = d.Command
		}
	}
	spec := fmt.Sprintf(`# yaml-language-server: $schema=%s
# The workload's shape. mlops.env holds the site and you; a setting both can
# hold (WORKERS, CPU, ...) goes in one. After editing either file, run mlops-fn hydrate on this folder.
apiVersion: %s
kind: %s
metadata:
  name: %s
  annotations:
    config.kubernetes.io/local-config: "true"
spec:
  jobKind: %s
  image: %s # %s
`, SchemaURL(release()), api.APIVersion, api.Kind, o.Name, o.JobKind, scalar(image), comment)
	spec += d.Spec
	if len(command) > 0 {
		quoted := make([]string, len(command)) // a YAML flow list, each item quoted where YAML needs it
		for i, arg := range command {
			quoted[i] = scalar(arg)
		}
		spec += "  command: [" + strings.Join(quoted, ", ") + "] # " + d.CommandNote + "\n"
	}
	if err := readsBack(spec, image, command); err != nil {
		return nil, err
	}
	files := map[string][]byte{
		"job.yaml":  []byte(spec),
		"mlops.env": []byte(envFile(o.JobKind, d.Shape)),
	}
	skeleton, kind, err := skeletonOf(files, o.Dir)
	if err != nil {
		return nil, err
	}
	for name, b := range baseFiles(skeleton, kind) {
		files[filepath.Join(BaseDir, name)] = b
	}
	return files, nil
}

// SchemaURL is where yaml-language-server reads the job spec's JSON Schema, for job.yaml's first line: raw
// from the repository at the release tag version (a new folder is rarely inside a clone), so the schema is
// the writer's; main's for a build of no release (pseudo-version, (devel), modified).
func SchemaURL(version string) string {
	ref := "main"
	if releaseTag.MatchString(version) && !pseudoVersion.MatchString(version) {
		ref = version
	}
	return "https://raw.githubusercontent.com/mlops-fn/mlops-fn/" + ref + "/" + schema.JobSchemaFile
}

var (
	releaseTag    = regexp.MustCompile(`^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`)
	pseudoVersion = regexp.MustCompile(`\d{14}-[0-9a-f]{12}$`)
)

// release is the running binary's module version (internal/version).
func release() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		return bi.Main.Version
	}
	return ""
}

// baseFiles are the base init writes for a skeleton of kind, by name in BaseDir.
func baseFiles(skeleton []byte, kind string) map[string][]byte {
	name := strings.ToLower(kind) + ".yaml"
	return map[string][]byte{
		name:                 skeleton,
		"kustomization.yaml": []byte(baseKustomization + name + "\n"),
	}
}

const baseKustomization = "# The job's skeleton: the overlay above patches it (mlops-fn hydrate).\nresources:\n- "

// NewBase is the base a folder init wrote needs to follow its job spec.
type NewBase struct {
	Files map[string][]byte // replace BaseDir whole: its files, by name in it
	Note  string            // what changed, once the files are written
}

// Folders are the new base as hydrate.Options.Folders takes it: BaseDir, replaced whole.
func (b *NewBase) Folders() map[string]map[string][]byte {
	return map[string]map[string][]byte{BaseDir: b.Files}
}

// Follow is the new base of a folder init wrote, nil when it keeps its own: when job.yaml (config, in dir)
// renames the job or changes its jobKind and dir/base is still init's skeleton (its header's fingerprint
// matches, the kustomization is init's), the skeleton for the new ones, which hydrate writes with the
// overlay. Any other base, or a spec that does not resolve, it leaves to hydrate, which names what differs.
func Follow(dir, config string) *NewBase {
	base := filepath.Join(dir, BaseDir)
	entries, err := os.ReadDir(base)
	if err != nil || len(entries) != 2 {
		return nil
	}
	k, err := os.ReadFile(filepath.Join(base, "kustomization.yaml"))
	file, ok := strings.CutPrefix(string(k), baseKustomization)
	if err != nil || !ok {
		return nil
	}
	old, err := os.ReadFile(filepath.Join(base, strings.TrimSuffix(file, "\n")))
	m := skeletonHeader.FindSubmatch(old)
	if err != nil || m == nil || fingerprint(string(old[len(m[0]):])) != string(m[3]) || file != strings.ToLower(string(m[1]))+".yaml\n" {
		return nil // not init's, or edited since: the user's base
	}
	oldKind, oldName := string(m[1]), string(m[2])
	spec, specErr := os.ReadFile(filepath.Join(dir, config))
	envText, envErr := os.ReadFile(filepath.Join(dir, "mlops.env"))
	if specErr != nil || envErr != nil {
		return nil
	}
	skeleton, kind, err := skeletonOf(map[string][]byte{"job.yaml": spec, "mlops.env": envText}, dir)
	if err != nil {
		return nil // hydrate says what is wrong with the spec
	}
	n := skeletonHeader.FindSubmatch(skeleton)
	if n == nil || (string(n[1]) == oldKind && string(n[2]) == oldName) {
		return nil // the same job: hydrate patches it
	}
	return &NewBase{
		Files: baseFiles(skeleton, kind),
		Note: fmt.Sprintf("%s: the skeleton init wrote, %s/%s, follows %s: now %s/%s (%s)", base, oldKind, oldName,
			filepath.Join(dir, config), n[1], n[2], filepath.Join(base, strings.ToLower(kind)+".yaml")),
	}
}

// scalar writes s as a YAML scalar that reads back as the string s, in a flow list or as a map's value, a
// comment after it: plain where that is safe, else double-quoted with YAML's escapes (for UTF-8 text, Go's:
// \n, \t, \xHH, \uHHHH). A newline in a plain scalar would start a block scalar, or fold into a space.
func scalar(s string) string {
	plain := s != "" && !strings.ContainsAny(s, ",[]{}#&*!|>'\"%@` ") && strings.IndexFunc(s, func(r rune) bool {
		return r > unicode.MaxASCII || !unicode.IsPrint(r)
	}) < 0
	if plain {
		var v any
		if err := yaml.Unmarshal([]byte("["+s+"]"), &v); err == nil && reflect.DeepEqual(v, []any{s}) {
			return s // a string, not a number, a boolean or null
		}
	}
	return strconv.Quote(s)
}

// readsBack checks that the job spec init writes reads back with the image and the command it was given,
// whole: a quoting mistake would change them silently.
func readsBack(spec, image string, command []string) error {
	var doc struct {
		Spec struct {
			Image   string   `json:"image"`
			Command []string `json:"command"`
		} `json:"spec"`
	}
	if err := sigsyaml.Unmarshal([]byte(spec), &doc); err != nil {
		return fmt.Errorf("mlops-fn init wrote a job.yaml that does not read back (a bug; please report it with the command line): %w", err)
	}
	if doc.Spec.Image != image || !slices.Equal(doc.Spec.Command, command) && len(command) > 0 {
		return fmt.Errorf("mlops-fn init wrote a job.yaml that reads back as image %q, command %q, not %q, %q (a bug; please report it with the command line)", doc.Spec.Image, doc.Spec.Command, image, command)
	}
	return nil
}

func envFile(jobKind jobkind.JobKind, shape string) string {
	who, ids := "your uid and gid (id -u, id -g)", "USER_ID=1000\nGROUP_ID=1000\n"
	if kinds.All.Of(jobKind).Demo.UserName {
		who, ids = who+", your user name in the image", ids+"USER_NAME=mpiuser\n"
	}
	return `# mlops.env: your site and you. Every key is also an environment variable of the
# training containers. After editing, run mlops-fn hydrate on this folder, then
# kubectl apply -k it (until then the build fails, saying so).

# Who the job runs as: ` + who + `.
` + ids + `
# The shape of the job.
` + shape + `
# A shared NFS folder, mounted read-write in every container (all three or none):
# NFS_SERVER=nfs.example.com
# NFS_PATH=/export/users
# NFS_MOUNT_PATH=/workspace

# Where images come from, for ${REGISTRY} in job.yaml's image:
# REGISTRY=ghcr.io/your-team
`
}

// skeletonOf renders the skeleton the spec's job patches (its kind, name and container names); its messages
// name the files in folder, where they go, not the temporary folder it reads them from.
func skeletonOf(files map[string][]byte, folder string) ([]byte, string, error) {
	dir, err := os.MkdirTemp("", "mlops-fn-init-")
	if err != nil {
		return nil, "", err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return nil, "", err
		}
	}
	config, err := jobspec.Read(filepath.Join(dir, "job.yaml"))
	if err != nil {
		return nil, "", inFolder(err, dir, folder)
	}
	resolved, results := processor.Processor{ConfigDir: dir, ConfigFile: filepath.Join(dir, "job.yaml")}.Resolve(config, nil)
	if resolved == nil {
		return nil, "", inFolder(results, dir, folder)
	}
	n, err := jobnode.Encode(resolved.Plan.Skeleton())
	if err != nil {
		return nil, "", err
	}
	s, err := n.String()
	return []byte(fmt.Sprintf(skeletonHeaderFormat, n.GetKind(), n.GetName(), fingerprint(s)) + s), n.GetKind(), err
}

// inFolder is err about the files of the temporary folder tmp, about the same files in folder: a temporary
// path would mean nothing to the user.
func inFolder(err error, tmp, folder string) error {
	in := filepath.Clean(folder) + string(filepath.Separator) // what goes before a file's name in folder
	if filepath.Clean(folder) == "." {
		in = ""
	}
	rename := func(s string) string {
		return strings.ReplaceAll(strings.ReplaceAll(s, tmp+string(filepath.Separator), in), tmp, filepath.Clean(folder))
	}
	if results, ok := err.(framework.Results); ok {
		return Renamed(results, rename)
	}
	return errors.New(rename(err.Error()))
}

// Renamed are copies of results with rename applied to their messages and file paths.
func Renamed(results framework.Results, rename func(string) string) framework.Results {
	var out framework.Results
	for _, r := range results {
		m := *r
		m.Message = rename(m.Message)
		if r.File != nil {
			f := *r.File
			f.Path = rename(f.Path)
			m.File = &f
		}
		out = append(out, &m)
	}
	return out
}

// skeletonHeaderFormat heads the skeleton init writes: its kind, name, and the fingerprint of what follows,
// by which Follow knows it unedited.
const skeletonHeaderFormat = "# %s %s: the names mlops-fn's patches find; they fill in the rest.\n" +
	"# Written by mlops-fn init (%s): while unedited, hydrate rewrites it when job.yaml renames the job or changes its jobKind.\n"

// skeletonHeader reads that header.
var skeletonHeader = regexp.MustCompile(`^# ([A-Za-z]+) ([a-z0-9-]+): the names mlops-fn's patches find; they fill in the rest\.\n` +
	`# Written by mlops-fn init \(([0-9a-f]{16})\): [^\n]*\n`)

func fingerprint(body string) string {
	sum := sha256.Sum256([]byte(body))
	return hex.EncodeToString(sum[:8])
}

// Write puts files into dir, which must not exist or be empty, all or nothing: staged in a temporary folder
// that finish completes (it hydrates), then renamed to a new dir in one step, or, into an empty dir (init .:
// it cannot be replaced, and keeps its mode and owner), moved entry by entry, moved back on a failure.
func Write(dir string, files map[string][]byte, finish func(staged string) error) error {
	entries, err := os.ReadDir(dir)
	exists := err == nil
	switch {
	case exists && len(entries) > 0:
		return fmt.Errorf("%s exists and is not empty (it holds %s); accepted: a new or empty folder (mlops-fn init writes a whole job's folder); to rename a job init wrote or change its jobKind, edit its job.yaml and run mlops-fn hydrate %s", named(dir), holds(entries), dir)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		if info, serr := os.Stat(dir); serr == nil && !info.IsDir() {
			return fmt.Errorf("%s exists and is a file, not a folder; accepted: a new or empty folder", named(dir))
		}
		return fmt.Errorf("%s: %w", named(dir), cause(err))
	case err != nil:
		// A dangling symbolic link: ReadDir follows it, a rename would not.
		if target, lerr := os.Readlink(dir); lerr == nil {
			return fmt.Errorf("%s is a symbolic link to %s, which does not exist; accepted: a new or empty folder (create %s first, or remove the link)",
				named(dir), target, target)
		}
	}
	// Staged on the folder's own file system, so that the renames stay there.
	parent := filepath.Dir(filepath.Clean(dir))
	if exists {
		parent = dir
	}
	staged, err := os.MkdirTemp(parent, ".mlops-fn-tmp-init-")
	if err != nil {
		return fmt.Errorf("cannot write in %s: %w", named(parent), cause(err))
	}
	defer func() { _ = os.RemoveAll(staged) }()
	for name, b := range files {
		path := filepath.Join(staged, name)
		if err := errors.Join(os.MkdirAll(filepath.Dir(path), 0o755), os.WriteFile(path, b, 0o644)); err != nil {
			return fmt.Errorf("writing %s: %w", filepath.Join(dir, name), cause(err))
		}
	}
	if err := os.Chmod(staged, 0o755); err != nil {
		return err
	}
	if err := finish(staged); err != nil {
		return err
	}
	if !exists {
		if err := os.Rename(staged, dir); err != nil {
			return fmt.Errorf("writing %s: %w; nothing was written", named(dir), cause(err))
		}
		return nil
	}
	return moveInto(staged, dir)
}

// moveInto moves the entries of staged into dir, none of whose names dir holds; on failure it moves back
// those already moved.
func moveInto(staged, dir string) error {
	entries, err := os.ReadDir(staged)
	if err != nil {
		return err
	}
	var moved []string
	undo := func(err error) error {
		for _, name := range moved {
			_ = os.Rename(filepath.Join(dir, name), filepath.Join(staged, name))
		}
		return err
	}
	for _, e := range entries {
		to := filepath.Join(dir, e.Name())
		if _, err := os.Lstat(to); err == nil {
			return undo(fmt.Errorf("%s appeared while init wrote the folder; nothing was written: run mlops-fn init again on an empty folder", to))
		}
		if err := os.Rename(filepath.Join(staged, e.Name()), to); err != nil {
			return undo(fmt.Errorf("moving %s into %s: %w", e.Name(), named(dir), cause(err)))
		}
		moved = append(moved, e.Name())
	}
	return nil
}

// named names a folder in messages: as given, and its absolute path where the name alone says little ("." or
// "..").
func named(dir string) string {
	if base := filepath.Base(filepath.Clean(dir)); base == "." || base == ".." {
		if abs, err := filepath.Abs(dir); err == nil {
			return fmt.Sprintf("%s (%s)", dir, abs)
		}
	}
	return dir
}

func holds(entries []fs.DirEntry) string {
	var names []string
	for _, e := range entries[:min(len(entries), 3)] {
		names = append(names, e.Name())
	}
	if len(entries) > 3 {
		names = append(names, fmt.Sprintf("and %d more", len(entries)-3))
	}
	return strings.Join(names, ", ")
}

// cause is an error without the path a *fs.PathError or *os.LinkError names, which may be a temporary one.
func cause(err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return pe.Err
	case errors.As(err, &le):
		return le.Err
	}
	return err
}
