// SPDX-License-Identifier: Apache-2.0

package env

import (
	"cmp"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/api/resource"

	"k8s.io/apimachinery/pkg/util/validation"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
)

// Settings are the known keys, typed; nil or "" for a key absent (or invalid), so the job spec's value
// applies. Defaults are the renderer's, applied after the spec: a value in the spec beats one derived here.
type Settings struct {
	// REGISTRY, DATASET_DIR, MODEL_DIR, OUTPUT_DIR, MODEL_NAME, MODEL_SCRIPT and GROUP_NAME are checked but
	// set nothing: the job spec reads them as ${KEY}, and the containers from the env ConfigMap.
	NFSServer, NFSPath, NFSMountPath string
	UserName                         string
	// Without FS_GROUP and spec.security.fsGroup, the renderer uses the group the containers run as: a
	// non-root job needs it to write its volumes.
	UserID, GroupID, FSGroup *int64
	// Without SLOTS_PER_WORKER and spec.slotsPerWorker, the renderer uses one MPI rank per GPU (else 1).
	Workers, GPUsPerWorker, SlotsPerWorker *int32
	CPU, Memory                            *resource.Quantity
	// An elastic PyTorchJob's bounds and etcd rendezvous.
	MinWorkers, MaxWorkers *int32
	RendezvousEndpoint     string
	// GPUResource is what GPUS_PER_WORKER counts; ShmSize sizes /dev/shm; Queue is the Kueue LocalQueue.
	GPUResource string
	ShmSize     *resource.Quantity
	Queue       string
	// Topology is the node label of the level (rack, block) Kueue places all the job's pods in.
	Topology          string
	TopologyPreferred bool
}

// Problem is a finding about one key of the file.
type Problem struct {
	Source     string
	Line       int
	Key, Value string
	Message    string // says what is wrong and what is accepted
	Warning    bool   // true: a warning (e.g. a likely misspelt key); false: an error
}

// String reads like `mlops.env:7: WORKERS="four": must be a whole number from 1 to 10000` (no line: a ConfigMap).
func (p Problem) String() string {
	loc := p.Source
	if p.Line > 0 {
		loc = fmt.Sprintf("%s:%d", p.Source, p.Line)
	}
	return fmt.Sprintf("%s: %s=%q: %s", loc, p.Key, p.Value, p.Message)
}

// envReference is a ${KEY} in a value, which kustomize does not expand, or the same behind a second $, the
// job spec's escape.
var envReference = regexp.MustCompile(`\$?\$\{([-._a-zA-Z][-._a-zA-Z0-9]*)(?::-[^}]*)?\}`)

// trailingComment is a shell-style comment after a value: whitespace, then #.
var trailingComment = regexp.MustCompile("[ \t]+#")

// KeyDoc documents one known key for docs/mlops-env.md's table and --help; Description is one line of Markdown.
type KeyDoc struct{ Key, Type, Description string }

// keySpec is how Decode reads one known key.
type keySpec struct {
	KeyDoc
	accepted string // the accepted values, for messages
	// check says what is wrong with v ("" when "must be <accepted>" says it all), or, taking v, what is
	// unlikely about it (a warning).
	check func(v string) (msg string, ok bool)
	// set stores a value check took (nil: the key sets nothing).
	set func(s *Settings, v string)
}

var specs = map[string]keySpec{
	"REGISTRY": {KeyDoc{"REGISTRY", "registry", "Container image registry, for `${REGISTRY}` in the image, e.g. `ghcr.io/team`."},
		"an image registry such as docker.io, ghcr.io/team or registry.example.com:5000, without a scheme or whitespace", hostProblem, nil},
	"DATASET_DIR":  pathSpec("DATASET_DIR", "Where the training program reads the dataset, in the containers.", false, nil),
	"MODEL_DIR":    pathSpec("MODEL_DIR", "Where the training program reads and saves the model, in the containers.", false, nil),
	"OUTPUT_DIR":   pathSpec("OUTPUT_DIR", "Where the training program writes results and checkpoints, in the containers.", false, nil),
	"MODEL_NAME":   textSpec("MODEL_NAME", "Name of the model, for the training program.", "a model name such as resnet50"),
	"MODEL_SCRIPT": textSpec("MODEL_SCRIPT", "Training script name, for `${MODEL_SCRIPT}` in `spec.script`.", "a script path such as /opt/train/train.py"),
	"NFS_SERVER": {KeyDoc{"NFS_SERVER", "host", "NFS server of the shared `nfs` volume; needs `NFS_PATH`. Also the default server of `nfs` data volumes."},
		NFSServerAccepted, CheckNFSServer, func(s *Settings, v string) { s.NFSServer = v }},
	"NFS_PATH": pathSpec("NFS_PATH", "Export mounted as the shared `nfs` volume; needs `NFS_SERVER`.", true,
		func(s *Settings, v string) { s.NFSPath = v }),
	"NFS_MOUNT_PATH": pathSpec("NFS_MOUNT_PATH", "Where the shared `nfs` volume is mounted (read-write); required with `NFS_SERVER`.", false,
		func(s *Settings, v string) { s.NFSMountPath = v }),
	"USER_ID": intSpec("USER_ID", "`runAsUser`; not 0 adds `runAsNonRoot: true`. Or `spec.security.runAsUser` in the job spec, not both.", 0, api.MaxID,
		func(s *Settings, n *int64) { s.UserID = n }),
	"USER_NAME": {KeyDoc{"USER_NAME", "string",
		"The user's name in the image; the non-root home of a multi-node job is `/home/$USER_NAME` (where the SSH keys go)."},
		"a user name such as mpiuser: a lowercase letter or _, then up to 31 lowercase letters, digits, _ or -",
		// It becomes a path (/home/$USER_NAME/.ssh): no "/", "..", or spaces.
		func(v string) (string, bool) { return "", v == "" || userName.MatchString(v) }, func(s *Settings, v string) { s.UserName = v }},
	"GROUP_ID": intSpec("GROUP_ID", "`runAsGroup`. Or `spec.security.runAsGroup` in the job spec, not both.", 0, api.MaxID,
		func(s *Settings, n *int64) { s.GroupID = n }),
	"GROUP_NAME": textSpec("GROUP_NAME", "The group's name in the image.", "a group name such as mpiuser"),
	"FS_GROUP":   intSpec("FS_GROUP", "Pod `fsGroup` (never on a container). Or `spec.security.fsGroup` in the job spec, not both. Default: `GROUP_ID`.", 0, api.MaxID, func(s *Settings, n *int64) { s.FSGroup = n }),
	"WORKERS": intSpec("WORKERS", "Worker pods. Or `spec.workers` in the job spec, not both.", 1, api.MaxWorkers,
		func(s *Settings, n *int32) { s.Workers = n }),
	"GPUS_PER_WORKER":  intSpec("GPUS_PER_WORKER", "`GPU_RESOURCE` (default `nvidia.com/gpu`) limit per worker (and of the single-node Pod), 0 for none. Or `spec.gpusPerWorker` in the job spec, not both.", 0, api.MaxGPUs, func(s *Settings, n *int32) { s.GPUsPerWorker = n }),
	"SLOTS_PER_WORKER": intSpec("SLOTS_PER_WORKER", "MPI slots (ranks) per worker. Or `spec.slotsPerWorker` in the job spec, not both. Default: `GPUS_PER_WORKER` when above 0, else 1.", 1, api.MaxSlots, func(s *Settings, n *int32) { s.SlotsPerWorker = n }),
	"MIN_WORKERS":      intSpec("MIN_WORKERS", "Elastic: the fewest workers (≤ `WORKERS`). Or `spec.elastic.minWorkers` in the job spec, not both. Default: `WORKERS`.", 1, api.MaxWorkers, func(s *Settings, n *int32) { s.MinWorkers = n }),
	"MAX_WORKERS":      intSpec("MAX_WORKERS", "Elastic: the most workers (≥ `WORKERS`). Or `spec.elastic.maxWorkers` in the job spec, not both. Default: `WORKERS`.", 1, api.MaxWorkers, func(s *Settings, n *int32) { s.MaxWorkers = n }),
	"GPU_RESOURCE": {KeyDoc{"GPU_RESOURCE", "resource name", "The extended resource `GPUS_PER_WORKER` counts (`amd.com/gpu`, `gpu.intel.com/i915`, `habana.ai/gaudi`), as a container's limits name it: a ResourceQuota's key (`requests.nvidia.com/gpu`) is an error. Default: `nvidia.com/gpu`."},
		"an extended resource name such as nvidia.com/gpu, amd.com/gpu, gpu.intel.com/i915 or habana.ai/gaudi",
		func(v string) (string, bool) {
			for _, prefix := range []string{"requests.", "limits."} {
				if name, quota := strings.CutPrefix(v, prefix); quota {
					// A ResourceQuota's key: the resource is the rest.
					return fmt.Sprintf("has the prefix %q, which a ResourceQuota puts before a resource it counts; a container's limits name the resource itself, %s", prefix, name), false
				}
			}
			domain, _, found := strings.Cut(v, "/")
			return "", found && len(validation.IsQualifiedName(v)) == 0 && !strings.HasSuffix(domain, "kubernetes.io") && !strings.HasSuffix(domain, "k8s.io")
		}, func(s *Settings, v string) { s.GPUResource = v }},
	"SHM_SIZE": quantitySpec("SHM_SIZE", "A memory-backed `emptyDir` (`medium: Memory`, this `sizeLimit`) mounted at `/dev/shm` in every training container, for PyTorch DataLoader workers and NCCL; a spec volume there is an error; under 1 MiB is warned about. What is written there counts against the container's memory limit, and the kubelet sizes the volume at most the pod's memory limit: size `MEMORY` as the program's own memory plus `SHM_SIZE` (`MEMORY=16Gi`, `SHM_SIZE=4Gi`); `SHM_SIZE` above `MEMORY` is an error. Default: none (the runtime's 64 MiB).", UnlikelyMemory, func(s *Settings, q *resource.Quantity) { s.ShmSize = q }),
	"QUEUE": {KeyDoc{"QUEUE", "queue name", "The Kueue LocalQueue: the job's `kueue.x-k8s.io/queue-name` label, for every kind and runner (a queue-name label of the job spec's with another value is an error)."},
		"a LocalQueue name such as team-a: lowercase letters, digits, '-' and '.', at most 63 characters",
		func(v string) (string, bool) {
			return "", len(validation.IsDNS1123Subdomain(v)) == 0 && len(validation.IsValidLabelValue(v)) == 0
		},
		func(s *Settings, v string) { s.Queue = v }},
	"TOPOLOGY_REQUIRED":  topologySpec(false),
	"TOPOLOGY_PREFERRED": topologySpec(true),
	"RDZV_ENDPOINT": {KeyDoc{"RDZV_ENDPOINT", "host:port", "Elastic: the etcd server of an `etcd`/`etcd-v2` rendezvous (refused with `c10d`). Or `spec.elastic.rendezvousEndpoint` in the job spec, not both."},
		RendezvousAccepted, CheckRendezvous, func(s *Settings, v string) { s.RendezvousEndpoint = v }},
	"CPU":    quantitySpec("CPU", "CPU limit of each worker (or of the Pod), in cores or `m` (thousandths): `4`, `500m`; also its request, unless `spec.resources.requests.cpu` asks less (the scheduler and Kueue's quota count the request; request equal to limit makes the pod Guaranteed). `mlops-fn init` writes `250m`. Or `spec.resources.limits.cpu` in the job spec, not both. A unit of memory or of thousands (`16Gi`, `2k`) is warned about, as are a thousand cores or more (`1000` for `1000m`).", UnlikelyCPU, func(s *Settings, q *resource.Quantity) { s.CPU = q }),
	"MEMORY": quantitySpec("MEMORY", "Memory limit of each worker (or of the Pod): `16Gi`; also its request, as for `CPU`. `mlops-fn init` writes `512Mi`. Or `spec.resources.limits.memory` in the job spec, not both. Under 1 MiB (`16`: bytes; `500m`: half a byte) is warned about.", UnlikelyMemory, func(s *Settings, q *resource.Quantity) { s.Memory = q }),
}

// knownKeys are sorted: suggestions and KnownKeys are deterministic.
var knownKeys = slices.Sorted(maps.Keys(specs))

// IsKnownKey: key is one Decode understands.
func IsKnownKey(key string) bool {
	_, ok := specs[key]
	return ok
}

// KnownKeys documents the keys Decode understands, sorted.
func KnownKeys() []KeyDoc {
	docs := make([]KeyDoc, len(knownKeys))
	for i, k := range knownKeys {
		docs[i] = specs[k].KeyDoc
	}
	return docs
}

// Decode types the known keys of f, with every problem found sorted by line then key. A key one edit away
// from a known key is an error (its value would be lost) unless extraKeys names it: the user's own.
func Decode(f *File, extraKeys ...string) (Settings, []Problem) {
	var s Settings
	var problems []Problem
	report := func(e Entry, warning bool, msg string) {
		problems = append(problems, Problem{Source: f.Source, Line: e.Line, Key: e.Key, Value: e.Value, Message: msg, Warning: warning})
	}
	for _, e := range f.Entries {
		v := e.Value
		// A ConfigMap's keys are checked here, a file's by Parse already.
		if len(validation.IsEnvVarName(e.Key)) > 0 {
			report(e, false, "is not a valid key: "+envVarNameRule)
			continue
		}
		// The characters an environment variable cannot carry (tab it can).
		if i := strings.IndexFunc(v, func(r rune) bool { return r != '\t' && unicode.IsControl(r) }); i >= 0 {
			report(e, false, fmt.Sprintf("contains the control character %U: a container's environment cannot carry it; accepted: printable text", []rune(v[i:])[0]))
			continue
		}
		if msg, warning := referenceProblem(f, e); msg != "" {
			report(e, warning, msg)
			if !warning {
				continue
			}
		}
		if e.Bare {
			report(e, true, fmt.Sprintf(`%s has no "=": kustomize sets it to the empty string (it does not read your shell environment); write %s=value`, e.Key, e.Key))
		}
		spec, known := specs[e.Key]
		switch comment := trailingComment.FindStringIndex(v); {
		case !known:
			k := Closest(e.Key, knownKeys)
			// A short key one letter from a known one (GPU, NPU beside CPU) is another word, not a misspelling.
			otherWord := len(e.Key) == len(k) && len(k) <= 4 && !strings.EqualFold(e.Key, k)
			if k == "" || otherWord || slices.Contains(extraKeys, e.Key) {
				continue
			}
			msg := fmt.Sprintf("unknown key %s: did you mean %s?", e.Key, k)
			if strings.EqualFold(e.Key, k) {
				msg += " (keys are case-sensitive)"
			}
			report(e, false, fmt.Sprintf("%s; accepted: %s, or %s listed in the job spec's spec.envFile.extraKeys if it is a key of your own", msg, k, e.Key))
		case len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0]:
			report(e, false, fmt.Sprintf("is in quotes, which kustomize keeps in the value (it does not remove them); accepted: %s, written without quotes: %s=%s", spec.accepted, e.Key, v[1:len(v)-1]))
		case comment != nil:
			report(e, false, fmt.Sprintf("has a comment after the value (%q): kustomize keeps it in the value, only a line that starts with # is a comment; accepted: %s, with the comment on a line of its own", v[comment[0]:], spec.accepted))
		case strings.TrimSpace(v) != v:
			report(e, false, "has leading or trailing whitespace, which kustomize keeps in the value; accepted: "+spec.accepted)
		default:
			switch msg, ok := spec.check(v); {
			case !ok && msg == "":
				report(e, false, "must be "+spec.accepted)
			case !ok:
				report(e, false, msg+"; accepted: "+spec.accepted)
			default:
				if spec.set != nil {
					spec.set(&s, v)
				}
				if msg != "" {
					report(e, true, msg)
				}
			}
		}
	}
	// An NFS volume needs both halves; the spec's volumes name their own server.
	for _, pair := range [][2]string{{"NFS_PATH", "NFS_SERVER"}, {"NFS_SERVER", "NFS_PATH"}} {
		if e, ok := f.Lookup(pair[0]); ok {
			if _, both := f.Lookup(pair[1]); !both {
				report(e, false, pair[1]+" is missing: set both NFS_SERVER and NFS_PATH, or neither")
			}
		}
	}
	// One placement: Kueue reads one of the two annotations.
	if required, ok := f.Lookup("TOPOLOGY_REQUIRED"); ok {
		if _, both := f.Lookup("TOPOLOGY_PREFERRED"); both {
			report(required, false, "TOPOLOGY_PREFERRED is set too, and a job has one placement; accepted: one of TOPOLOGY_REQUIRED and TOPOLOGY_PREFERRED")
		}
	}
	slices.SortStableFunc(problems, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), strings.Compare(a.Key, b.Key))
	})
	return s, problems
}

// topologySpec is TOPOLOGY_REQUIRED or TOPOLOGY_PREFERRED: Kueue's Topology Aware Scheduling.
func topologySpec(preferred bool) keySpec {
	key, how, annotation := "TOPOLOGY_REQUIRED", "all the job's pods run in one domain of this level", "required"
	if preferred {
		key, how, annotation = "TOPOLOGY_PREFERRED", "Kueue tries one domain of this level for all the job's pods, else spreads them over as few as it can", "preferred"
	}
	return keySpec{KeyDoc{key, "label key", fmt.Sprintf("Kueue's topology-aware placement: %s, the level named by its node label (`cloud.provider.com/topology-block`): `kueue.x-k8s.io/podset-%s-topology` on every pod template (docs/sharing-a-cluster.md). Needs `QUEUE`; not with the other `TOPOLOGY_` key.", how, annotation)},
		"a node label key such as cloud.provider.com/topology-rack or kubernetes.io/hostname: an optional DNS prefix and /, then up to 63 letters, digits, '-', '_' or '.'",
		func(v string) (string, bool) {
			if len(validation.IsQualifiedName(v)) > 0 {
				return "is not a label key", false
			}
			return "", true
		}, func(s *Settings, v string) { s.Topology, s.TopologyPreferred = v, preferred }}
}

// referenceProblem says why e's value may not reference a key of f (kustomize does not expand them), "" when
// it references none. An escaped one ($${KEY}, as in the job spec) stays both dollars: only a warning.
func referenceProblem(f *File, e Entry) (msg string, warning bool) {
	refs := envReference.FindAllStringSubmatch(e.Value, -1)
	for _, m := range refs {
		if strings.HasPrefix(m[0], "$$") {
			return fmt.Sprintf("has %s, the job spec's escape, but kustomize writes mlops.env values as they are: the containers see the text %s, both dollars (nothing in mlops.env needs escaping)", m[0], m[0]), true
		}
	}
	for _, m := range refs {
		if m[1] == e.Key {
			return fmt.Sprintf("references itself, but kustomize writes mlops.env values as they are: the containers would see the text %s, not the variable's value before it; accepted: the whole value written out", m[0]), false
		}
	}
	for _, m := range refs {
		if v, defined := f.Lookup(m[1]); defined {
			written := envReference.ReplaceAllStringFunc(e.Value, func(ref string) string {
				if v, ok := f.Lookup(envReference.FindStringSubmatch(ref)[1]); ok {
					return v.Value
				}
				return ref
			})
			return fmt.Sprintf("references %s, but kustomize writes mlops.env values as they are: the containers would see the text %s, not %q; accepted: the value written out (%s=%s)", m[0], m[0], v.Value, e.Key, written), false
		}
	}
	return "", false
}

// Closest returns the candidate key most likely misspells, at most one edit (insertion, deletion,
// substitution, adjacent swap) away ignoring case: key itself first, then one differing in case only, then
// one edit away; among equals the alphabetically first; "" when none is that close.
func Closest(key string, candidates []string) string {
	folded := foldRunes(key)
	best, bestRank := "", 3
	for _, c := range candidates {
		rank := 3
		switch {
		case c == key:
			rank = 0
		case strings.EqualFold(c, key):
			rank = 1
		case withinOneEdit(folded, foldRunes(c)):
			rank = 2
		}
		if rank < bestRank || rank == bestRank && rank < 3 && c < best {
			best, bestRank = c, rank
		}
	}
	return best
}

// foldRunes replaces each rune by the smallest of its case-folding orbit: equal exactly when EqualFold.
func foldRunes(s string) []rune {
	rs := []rune(s)
	for i, r := range rs {
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			rs[i] = min(rs[i], f)
		}
	}
	return rs
}

// withinOneEdit reports whether a turns into b by at most one edit: what is left between common prefix and
// suffix.
func withinOneEdit(a, b []rune) bool {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	j, k := len(a), len(b)
	for j > i && k > i && a[j-1] == b[k-1] {
		j, k = j-1, k-1
	}
	return j-i <= 1 && k-i <= 1 || j-i == 2 && k-i == 2 && a[i] == b[i+1] && a[i+1] == b[i]
}

// wholeNumberText reports whether v is one or more ASCII digits.
func wholeNumberText(v string) bool {
	return v != "" && strings.TrimLeft(v, "0123456789") == ""
}

// wholeNumber parses v as digits only: strconv alone would take "+5" and "-0".
func wholeNumber(v string, lo, hi int64) (int64, bool) {
	if !wholeNumberText(v) {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil && lo <= n && n <= hi
}

func intSpec[T int32 | int64](key, desc string, lo, hi T, set func(*Settings, *T)) keySpec {
	return keySpec{KeyDoc{key, fmt.Sprintf("integer %d..%d", lo, hi), desc}, fmt.Sprintf("a whole number from %d to %d", lo, hi),
		func(v string) (string, bool) {
			_, ok := wholeNumber(v, int64(lo), int64(hi))
			return "", ok
		}, func(s *Settings, v string) {
			n, _ := wholeNumber(v, int64(lo), int64(hi))
			t := T(n)
			set(s, &t)
		}}
}

// quantitySpec reads a positive quantity, warning of one no training job means (a unit left out or mistaken).
func quantitySpec(key, desc string, unlikely func(resource.Quantity, string, func(string) string) string, set func(*Settings, *resource.Quantity)) keySpec {
	return keySpec{KeyDoc{key, "quantity", desc}, "a Kubernetes quantity such as 500m, 2 (cpu) or 4Gi (memory)",
		func(v string) (string, bool) {
			q, err := resource.ParseQuantity(v)
			switch {
			case err != nil:
				return "is not a Kubernetes quantity", false
			case q.Sign() <= 0:
				return "must be greater than 0", false
			case key == "CPU" && api.FinerThanMilli(q):
				return api.FinerThanMilliWrong, false
			}
			return unlikely(q, v, func(meant string) string { return key + "=" + meant }), true
		}, func(s *Settings, v string) { set(s, new(resource.MustParse(v))) }}
}

// minMemory: no container runs in less; below it a unit was left out (16: bytes) or m written for Mi.
var minMemory = resource.MustParse("1Mi")

// UnlikelyMemory says why a memory quantity, written v, is one no training job means, and what was probably
// meant (setting(value)); "" when it is likely.
func UnlikelyMemory(q resource.Quantity, v string, setting func(string) string) string {
	if q.Cmp(minMemory) >= 0 {
		return ""
	}
	number, suffix := splitQuantity(v)
	unit := "Mi"
	if suffix == "" && q.Value() < 1024 {
		unit = "Gi"
	}
	return fmt.Sprintf("is %s bytes, which no training job means; probably meant %s (a bare number counts bytes, m thousandths of a byte; Mi and Gi are MiB and GiB)", plain(q), setting(number+unit))
}

// UnlikelyCPU is UnlikelyMemory for a CPU quantity: CPUs count in cores or m (thousandths of one), so one in
// a unit of bytes or of thousands (Gi, k), or a thousand cores or more, which no node has (1000 for 1000m).
func UnlikelyCPU(q resource.Quantity, v string, setting func(string) string) string {
	number, suffix := splitQuantity(v)
	if (suffix == "" || suffix == "k") && q.Cmp(manyCores) >= 0 {
		// 1000 and 1k read alike once parsed (the job spec's are): both probably meant 1000m.
		cores := q.DeepCopy()
		cores.SetMilli(q.Value())
		unit := "cores"
		if cores.Cmp(resource.MustParse("1")) == 0 {
			unit = "core"
		}
		return fmt.Sprintf("is %s CPUs, more cores than a node has; probably meant %s, %s %s (m is thousandths of a core)", plain(q), setting(plain(q)+"m"), plain(cores), unit)
	}
	if suffix == "" || suffix == "m" {
		return ""
	}
	return fmt.Sprintf("is %s CPUs: %s is a unit of bytes or of thousands, not of cores; probably meant %s (cores; 500m is half a core)", plain(q), suffix, setting(number))
}

// manyCores is where a bare CPU count stops being a node's.
var manyCores = resource.MustParse("1000")

// splitQuantity cuts a quantity's text before its suffix ("500m": "500", "m"); an exponent (1e3) is written out.
func splitQuantity(v string) (number, suffix string) {
	i := strings.IndexFunc(v, func(r rune) bool { return !strings.ContainsRune("+-.0123456789", r) })
	if i < 0 {
		return v, ""
	}
	if rest := v[i:]; len(rest) > 1 && (rest[0] == 'e' || rest[0] == 'E') && strings.ContainsRune("+-0123456789", rune(rest[1])) {
		return plain(resource.MustParse(v)), ""
	}
	return v[:i], v[i:]
}

// plain writes q as a plain decimal number: 0.5, 17179869184.
func plain(q resource.Quantity) string {
	return strconv.FormatFloat(q.AsApproximateFloat64(), 'f', -1, 64)
}

// pathSpec reads an absolute path; an empty value counts as absent unless required (NFS_PATH: an empty export
// is a mistake, not a default).
func pathSpec(key, desc string, required bool, set func(*Settings, string)) keySpec {
	return keySpec{KeyDoc{key, "absolute path", desc}, `an absolute path without ".." elements, such as /mnt/data`,
		func(v string) (string, bool) {
			switch {
			case v == "" && required:
				return "is empty", false
			case v != "" && v[0] != '/':
				return "is not an absolute path", false
			case slices.Contains(strings.Split(v, "/"), ".."):
				return `has a ".." element`, false
			}
			return "", true
		}, set}
}

// userName is the portable user name of useradd(8) (NAME_REGEX's default).
var userName = regexp.MustCompile(`^[a-z_][a-z0-9_-]{0,31}$`)

// textSpec reads free text; Decode has already refused surrounding whitespace.
func textSpec(key, desc, accepted string) keySpec {
	return keySpec{KeyDoc{key, "string", desc}, accepted, func(string) (string, bool) { return "", true }, nil}
}

// RendezvousAccepted says what CheckRendezvous accepts.
const RendezvousAccepted = "host:port of the etcd server, such as etcd.example.com:2379 or 10.0.0.9:2379"

// CheckRendezvous tells whether v is a host:port an etcd rendezvous can use.
func CheckRendezvous(v string) (wrong string, ok bool) {
	if wrong, ok := hostProblem(v); !ok {
		return wrong, false
	}
	host, port, err := net.SplitHostPort(v)
	if err != nil || !wholeNumberText(port) {
		return "has no port", false
	}
	if n, _ := strconv.Atoi(port); n < 1 || n > 65535 {
		return "has a port outside 1 to 65535", false
	}
	_, err = netip.ParseAddr(host)
	return "", err == nil || dnsName(host)
}

// NFSServerAccepted says what CheckNFSServer accepts.
const NFSServerAccepted = "a hostname such as nfs.example.com or an IP address such as 10.0.0.5 or fd00::5, without scheme, port, path or spaces"

// CheckNFSServer tells whether v can be an nfs volume's server (NFS_SERVER's, the job spec's), and if not,
// what is wrong with it ("" when NFSServerAccepted says it all).
func CheckNFSServer(v string) (wrong string, ok bool) {
	if wrong, ok := hostProblem(v); !ok {
		return wrong, false
	}
	if strings.Contains(v, "/") {
		return "has a path; put the export in NFS_PATH (or the volume's nfs.path)", false
	}
	if addr, err := netip.ParseAddr(v); err == nil {
		if addr.Zone() != "" {
			return "has an IPv6 zone, which only means something on the host that wrote it", false
		}
		return "", true
	}
	if host, port, err := net.SplitHostPort(v); err == nil && host != "" && wholeNumberText(port) {
		return "has a port; an nfs volume takes the host only", false
	}
	if len(v) >= 2 && v[0] == '[' && v[len(v)-1] == ']' {
		if _, err := netip.ParseAddr(v[1 : len(v)-1]); err == nil {
			return "has brackets; write the IPv6 address without them, e.g. fd00::5", false
		}
	}
	return "", dnsName(v)
}

// dnsName: v is a hostname in any case, in ASCII: strings.ToLower would turn the Kelvin sign (U+212A) into "k".
func dnsName(v string) bool {
	return !strings.ContainsFunc(v, func(r rune) bool { return r > unicode.MaxASCII }) && len(validation.IsDNS1123Subdomain(strings.ToLower(v))) == 0
}

// hostProblem catches the mistakes REGISTRY and NFS_SERVER share.
func hostProblem(v string) (wrong string, ok bool) {
	switch {
	case v == "":
		return "is empty", false
	case strings.Contains(v, "://"):
		return "has a scheme", false
	case strings.IndexFunc(v, unicode.IsSpace) >= 0:
		return "contains whitespace", false
	}
	return "", true
}
