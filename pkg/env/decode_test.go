// SPDX-License-Identifier: Apache-2.0

package env

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
)

var equateQuantity = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

func i64(v int64) *int64 { return &v }
func i32(v int32) *int32 { return &v }
func qty(s string) *resource.Quantity {
	q := resource.MustParse(s)
	return &q
}

// render shows a problem with its kind, so tests check Warning too.
func render(ps []Problem) []string {
	var out []string
	for _, p := range ps {
		kind := "E "
		if p.Warning {
			kind = "W "
		}
		out = append(out, kind+p.String())
	}
	return out
}

// decodeText parses in as mlops.env and decodes it.
func decodeText(t *testing.T, in string, extraKeys ...string) (Settings, []Problem) {
	t.Helper()
	f, err := Parse("mlops.env", []byte(in))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return Decode(f, extraKeys...)
}

func TestDecode(t *testing.T) {
	const (
		ws       = "has leading or trailing whitespace, which kustomize keeps in the value; "
		idRange  = "a whole number from 0 to 2147483647"
		qtyOK    = "accepted: a Kubernetes quantity such as 500m, 2 (cpu) or 4Gi (memory)"
		pathOK   = `accepted: an absolute path without ".." elements, such as /mnt/data`
		hostOK   = "accepted: a hostname such as nfs.example.com or an IP address such as 10.0.0.5 or fd00::5, without scheme, port, path or spaces"
		regOK    = "accepted: an image registry such as docker.io, ghcr.io/team or registry.example.com:5000, without a scheme or whitespace"
		gpuOK    = "accepted: an extended resource name such as nvidia.com/gpu, amd.com/gpu, gpu.intel.com/i915 or habana.ai/gaudi"
		memUnits = "(a bare number counts bytes, m thousandths of a byte; Mi and Gi are MiB and GiB)"
	)
	tests := []struct {
		name      string
		in        string
		extraKeys []string
		want      Settings
		problems  []string
	}{
		{name: "empty file"},
		{
			name: "every key",
			in: `REGISTRY=ghcr.io/acme
DATASET_DIR=/mnt/nfs/data
MODEL_DIR=/mnt/nfs/models
OUTPUT_DIR=/mnt/nfs/out
MODEL_NAME=resnet50
MODEL_SCRIPT=/opt/train/train.py
NFS_SERVER=nfs.example.com
NFS_PATH=/export/mlops
NFS_MOUNT_PATH=/mnt/nfs
USER_ID=1000
USER_NAME=alice
GROUP_ID=1001
GROUP_NAME=ml
FS_GROUP=2000
WORKERS=4
GPUS_PER_WORKER=8
SLOTS_PER_WORKER=4
CPU=16
MEMORY=64Gi
HOROVOD_FUSION_THRESHOLD=0
`,
			want: Settings{
				NFSServer: "nfs.example.com", NFSPath: "/export/mlops", NFSMountPath: "/mnt/nfs",
				UserName: "alice",
				UserID:   i64(1000), GroupID: i64(1001), FSGroup: i64(2000),
				Workers: i32(4), GPUsPerWorker: i32(8), SlotsPerWorker: i32(4),
				CPU: qty("16"), Memory: qty("64Gi"),
			},
		},

		// Integers.
		{name: "USER_ID 0", in: "USER_ID=0", want: Settings{UserID: i64(0)}},
		{name: "USER_ID max", in: "USER_ID=2147483647", want: Settings{UserID: i64(2147483647)}},
		{name: "USER_ID leading zeros", in: "USER_ID=0042", want: Settings{UserID: i64(42)}},
		{name: "USER_ID too big", in: "USER_ID=2147483648", problems: []string{`E mlops.env:1: USER_ID="2147483648": must be ` + idRange}},
		{name: "USER_ID overflows int64", in: "USER_ID=99999999999999999999", problems: []string{`E mlops.env:1: USER_ID="99999999999999999999": must be ` + idRange}},
		{name: "USER_ID decimal", in: "USER_ID=1000.0", problems: []string{`E mlops.env:1: USER_ID="1000.0": must be ` + idRange}},
		{name: "USER_ID negative", in: "USER_ID=-1", problems: []string{`E mlops.env:1: USER_ID="-1": must be ` + idRange}},
		{name: "USER_ID plus sign", in: "USER_ID=+5", problems: []string{`E mlops.env:1: USER_ID="+5": must be ` + idRange}},
		{name: "USER_ID word", in: "USER_ID=abc", problems: []string{`E mlops.env:1: USER_ID="abc": must be ` + idRange}},
		{name: "USER_ID empty", in: "USER_ID=", problems: []string{`E mlops.env:1: USER_ID="": must be ` + idRange}},
		{name: "USER_ID leading space", in: "USER_ID= 1000", problems: []string{`E mlops.env:1: USER_ID=" 1000": ` + ws + "accepted: " + idRange}},
		{name: "USER_ID trailing space", in: "USER_ID=1000 ", problems: []string{`E mlops.env:1: USER_ID="1000 ": ` + ws + "accepted: " + idRange}},
		{name: "GROUP_ID invalid", in: "GROUP_ID=staff", problems: []string{`E mlops.env:1: GROUP_ID="staff": must be ` + idRange}},
		{name: "FS_GROUP invalid", in: "FS_GROUP=-5", problems: []string{`E mlops.env:1: FS_GROUP="-5": must be ` + idRange}},
		{name: "WORKERS bounds", in: "WORKERS=1", want: Settings{Workers: i32(1)}},
		{name: "WORKERS max", in: "WORKERS=10000", want: Settings{Workers: i32(10000)}},
		{name: "WORKERS zero", in: "WORKERS=0", problems: []string{`E mlops.env:1: WORKERS="0": must be a whole number from 1 to 10000`}},
		{name: "WORKERS too many", in: "WORKERS=10001", problems: []string{`E mlops.env:1: WORKERS="10001": must be a whole number from 1 to 10000`}},
		{name: "WORKERS word", in: "WORKERS=four", problems: []string{`E mlops.env:1: WORKERS="four": must be a whole number from 1 to 10000`}},
		{name: "WORKERS quoted", in: `WORKERS="4"`, problems: []string{`E mlops.env:1: WORKERS="\"4\"": is in quotes, which kustomize keeps in the value (it does not remove them); accepted: a whole number from 1 to 10000, written without quotes: WORKERS=4`}},
		{name: "REGISTRY quoted", in: `REGISTRY='docker.io'`, problems: []string{`E mlops.env:1: REGISTRY="'docker.io'": is in quotes, which kustomize keeps in the value (it does not remove them); ` + regOK + `, written without quotes: REGISTRY=docker.io`}},
		{name: "GPUS_PER_WORKER 0 sets no slots", in: "GPUS_PER_WORKER=0", want: Settings{GPUsPerWorker: i32(0)}},
		{name: "GPUS_PER_WORKER max", in: "GPUS_PER_WORKER=64", want: Settings{GPUsPerWorker: i32(64)}},
		{name: "GPUS_PER_WORKER too many", in: "GPUS_PER_WORKER=65", problems: []string{`E mlops.env:1: GPUS_PER_WORKER="65": must be a whole number from 0 to 64`}},
		{name: "SLOTS_PER_WORKER max", in: "SLOTS_PER_WORKER=1024", want: Settings{SlotsPerWorker: i32(1024)}},
		{name: "SLOTS_PER_WORKER zero", in: "SLOTS_PER_WORKER=0", problems: []string{`E mlops.env:1: SLOTS_PER_WORKER="0": must be a whole number from 1 to 1024`}},
		{name: "SLOTS_PER_WORKER too many", in: "SLOTS_PER_WORKER=1025", problems: []string{`E mlops.env:1: SLOTS_PER_WORKER="1025": must be a whole number from 1 to 1024`}},

		// No defaults: the renderer applies them after the job spec, which
		// beats anything derived from mlops.env.
		{name: "GROUP_ID leaves FS_GROUP unset", in: "GROUP_ID=100", want: Settings{GroupID: i64(100)}},
		{name: "FS_GROUP is read as written", in: "GROUP_ID=100\nFS_GROUP=200", want: Settings{GroupID: i64(100), FSGroup: i64(200)}},
		{name: "FS_GROUP alone", in: "FS_GROUP=0", want: Settings{FSGroup: i64(0)}},
		{
			name:     "invalid FS_GROUP stays unset",
			in:       "GROUP_ID=100\nFS_GROUP=x",
			want:     Settings{GroupID: i64(100)},
			problems: []string{`E mlops.env:2: FS_GROUP="x": must be ` + idRange},
		},
		{name: "GPUS_PER_WORKER leaves SLOTS_PER_WORKER unset", in: "GPUS_PER_WORKER=4", want: Settings{GPUsPerWorker: i32(4)}},
		{name: "SLOTS_PER_WORKER is read as written", in: "SLOTS_PER_WORKER=1\nGPUS_PER_WORKER=4", want: Settings{GPUsPerWorker: i32(4), SlotsPerWorker: i32(1)}},
		{
			name:     "invalid SLOTS_PER_WORKER stays unset",
			in:       "SLOTS_PER_WORKER=0\nGPUS_PER_WORKER=4",
			want:     Settings{GPUsPerWorker: i32(4)},
			problems: []string{`E mlops.env:1: SLOTS_PER_WORKER="0": must be a whole number from 1 to 1024`},
		},

		// Quantities.
		{name: "CPU millicores", in: "CPU=500m", want: Settings{CPU: qty("500m")}},
		{name: "MEMORY Gi", in: "MEMORY=4Gi", want: Settings{Memory: qty("4Gi")}},
		{name: "CPU zero", in: "CPU=0", problems: []string{`E mlops.env:1: CPU="0": must be greater than 0; ` + qtyOK}},
		{name: "CPU negative", in: "CPU=-1", problems: []string{`E mlops.env:1: CPU="-1": must be greater than 0; ` + qtyOK}},
		{name: "CPU word", in: "CPU=lots", problems: []string{`E mlops.env:1: CPU="lots": is not a Kubernetes quantity; ` + qtyOK}},
		{name: "CPU empty", in: "CPU=", problems: []string{`E mlops.env:1: CPU="": is not a Kubernetes quantity; ` + qtyOK}},
		{name: "MEMORY GB", in: "MEMORY=4GB", problems: []string{`E mlops.env:1: MEMORY="4GB": is not a Kubernetes quantity; ` + qtyOK}},
		{name: "MEMORY trailing space", in: "MEMORY=4Gi ", problems: []string{`E mlops.env:1: MEMORY="4Gi ": ` + ws + qtyOK}},
		// GPU_RESOURCE names the resource itself, not a ResourceQuota's key for it.
		{name: "GPU_RESOURCE", in: "GPU_RESOURCE=amd.com/gpu", want: Settings{GPUResource: "amd.com/gpu"}},
		{name: "GPU_RESOURCE as a quota's requests", in: "GPU_RESOURCE=requests.nvidia.com/gpu", problems: []string{`E mlops.env:1: GPU_RESOURCE="requests.nvidia.com/gpu": has the prefix "requests.", which a ResourceQuota puts before a resource it counts; a container's limits name the resource itself, nvidia.com/gpu; ` + gpuOK}},
		{name: "GPU_RESOURCE as a quota's limits", in: "GPU_RESOURCE=limits.amd.com/gpu", problems: []string{`E mlops.env:1: GPU_RESOURCE="limits.amd.com/gpu": has the prefix "limits.", which a ResourceQuota puts before a resource it counts; a container's limits name the resource itself, amd.com/gpu; ` + gpuOK}},

		// Quantities no training job means: a warning naming what was probably meant.
		{name: "MEMORY in bytes", in: "MEMORY=16", want: Settings{Memory: qty("16")}, problems: []string{`W mlops.env:1: MEMORY="16": is 16 bytes, which no training job means; probably meant MEMORY=16Gi ` + memUnits}},
		{name: "MEMORY in thousandths", in: "MEMORY=500m", want: Settings{Memory: qty("500m")}, problems: []string{`W mlops.env:1: MEMORY="500m": is 0.5 bytes, which no training job means; probably meant MEMORY=500Mi ` + memUnits}},
		{name: "MEMORY in bytes, a larger number", in: "MEMORY=4096", want: Settings{Memory: qty("4096")}, problems: []string{`W mlops.env:1: MEMORY="4096": is 4096 bytes, which no training job means; probably meant MEMORY=4096Mi ` + memUnits}},
		{name: "MEMORY in bytes, an exponent", in: "MEMORY=2e3", want: Settings{Memory: qty("2e3")}, problems: []string{`W mlops.env:1: MEMORY="2e3": is 2000 bytes, which no training job means; probably meant MEMORY=2000Mi ` + memUnits}},
		{name: "SHM_SIZE in bytes", in: "SHM_SIZE=2", want: Settings{ShmSize: qty("2")}, problems: []string{`W mlops.env:1: SHM_SIZE="2": is 2 bytes, which no training job means; probably meant SHM_SIZE=2Gi ` + memUnits}},
		{name: "MEMORY of 1Mi and in bytes are fine", in: "MEMORY=1Mi\nSHM_SIZE=68719476736", want: Settings{Memory: qty("1Mi"), ShmSize: qty("64Gi")}},
		{name: "CPU in a unit of memory", in: "CPU=16Gi", want: Settings{CPU: qty("16Gi")}, problems: []string{`W mlops.env:1: CPU="16Gi": is 17179869184 CPUs: Gi is a unit of bytes or of thousands, not of cores; probably meant CPU=16 (cores; 500m is half a core)`}},
		{name: "CPU in thousands", in: "CPU=2k", want: Settings{CPU: qty("2k")}, problems: []string{`W mlops.env:1: CPU="2k": is 2000 CPUs, more cores than a node has; probably meant CPU=2000m, 2 cores (m is thousandths of a core)`}},
		{name: "CPU in thousandths without the m", in: "CPU=1000", want: Settings{CPU: qty("1000")}, problems: []string{`W mlops.env:1: CPU="1000": is 1000 CPUs, more cores than a node has; probably meant CPU=1000m, 1 core (m is thousandths of a core)`}},
		{name: "CPU of 999 cores is a node's", in: "CPU=999", want: Settings{CPU: qty("999")}},
		{name: "CPU cores, thousandths and an exponent are fine", in: "CPU=1.5\nMEMORY=4Gi", want: Settings{CPU: qty("1.5"), Memory: qty("4Gi")}},
		{name: "CPU exponent", in: "CPU=2e0", want: Settings{CPU: qty("2")}},
		{name: "CPU finer than 1m", in: "CPU=0.0001", problems: []string{`E mlops.env:1: CPU="0.0001": is finer than 1m (a thousandth of a core), which Kubernetes does not allow; accepted: a Kubernetes quantity such as 500m, 2 (cpu) or 4Gi (memory)`}},
		{name: "CPU of 1m", in: "CPU=0.001", want: Settings{CPU: qty("1m")}},

		// Paths.
		{name: "empty dirs are absent", in: "DATASET_DIR=\nMODEL_DIR=\nOUTPUT_DIR=\nNFS_MOUNT_PATH="},
		{name: "path with spaces inside", in: "OUTPUT_DIR=/mnt/my runs"},
		{name: "relative DATASET_DIR", in: "DATASET_DIR=data", problems: []string{`E mlops.env:1: DATASET_DIR="data": is not an absolute path; ` + pathOK}},
		{name: "MODEL_DIR with ..", in: "MODEL_DIR=/mnt/../etc", problems: []string{`E mlops.env:1: MODEL_DIR="/mnt/../etc": has a ".." element; ` + pathOK}},
		{name: "OUTPUT_DIR ending in ..", in: "OUTPUT_DIR=/mnt/..", problems: []string{`E mlops.env:1: OUTPUT_DIR="/mnt/..": has a ".." element; ` + pathOK}},
		{name: "dotted names are not ..", in: "OUTPUT_DIR=/mnt/..out/a..b"},
		{name: "relative NFS_MOUNT_PATH", in: "NFS_MOUNT_PATH=mnt/nfs", problems: []string{`E mlops.env:1: NFS_MOUNT_PATH="mnt/nfs": is not an absolute path; ` + pathOK}},
		{name: "MODEL_DIR trailing space", in: "MODEL_DIR=/m ", problems: []string{`E mlops.env:1: MODEL_DIR="/m ": ` + ws + pathOK}},

		// NFS.
		{name: "NFS IPv4", in: "NFS_SERVER=10.0.0.5\nNFS_PATH=/export", want: Settings{NFSServer: "10.0.0.5", NFSPath: "/export"}},
		{name: "NFS IPv6", in: "NFS_SERVER=fd00::5\nNFS_PATH=/export", want: Settings{NFSServer: "fd00::5", NFSPath: "/export"}},
		{name: "NFS short hostname", in: "NFS_SERVER=nfs\nNFS_PATH=/", want: Settings{NFSServer: "nfs", NFSPath: "/"}},
		{name: "NFS_PATH empty", in: "NFS_SERVER=nfs\nNFS_PATH=", want: Settings{NFSServer: "nfs"}, problems: []string{`E mlops.env:2: NFS_PATH="": is empty; ` + pathOK}},
		{name: "NFS_PATH relative", in: "NFS_SERVER=nfs\nNFS_PATH=export", want: Settings{NFSServer: "nfs"}, problems: []string{`E mlops.env:2: NFS_PATH="export": is not an absolute path; ` + pathOK}},
		{name: "NFS_PATH without server", in: "NFS_PATH=/export", want: Settings{NFSPath: "/export"}, problems: []string{`E mlops.env:1: NFS_PATH="/export": NFS_SERVER is missing: set both NFS_SERVER and NFS_PATH, or neither`}},
		{name: "NFS_SERVER without path", in: "NFS_SERVER=nfs", want: Settings{NFSServer: "nfs"}, problems: []string{`E mlops.env:1: NFS_SERVER="nfs": NFS_PATH is missing: set both NFS_SERVER and NFS_PATH, or neither`}},
		{name: "NFS_SERVER scheme", in: "NFS_SERVER=nfs://nfs.example.com\nNFS_PATH=/e", want: Settings{NFSPath: "/e"}, problems: []string{`E mlops.env:1: NFS_SERVER="nfs://nfs.example.com": has a scheme; ` + hostOK}},
		{name: "NFS_SERVER with path", in: "NFS_SERVER=nfs.example.com:/export\nNFS_PATH=/e", want: Settings{NFSPath: "/e"}, problems: []string{`E mlops.env:1: NFS_SERVER="nfs.example.com:/export": has a path; put the export in NFS_PATH (or the volume's nfs.path); ` + hostOK}},
		{name: "NFS_SERVER uppercase", in: "NFS_SERVER=NFS.Example.COM\nNFS_PATH=/e", want: Settings{NFSServer: "NFS.Example.COM", NFSPath: "/e"}},
		{name: "NFS_SERVER uppercase short name", in: "NFS_SERVER=FILER01\nNFS_PATH=/e", want: Settings{NFSServer: "FILER01", NFSPath: "/e"}},
		{name: "NFS IPv6 uppercase hex", in: "NFS_SERVER=FD00::A\nNFS_PATH=/e", want: Settings{NFSServer: "FD00::A", NFSPath: "/e"}},
		{name: "NFS IPv4-mapped IPv6", in: "NFS_SERVER=::ffff:10.0.0.5\nNFS_PATH=/e", want: Settings{NFSServer: "::ffff:10.0.0.5", NFSPath: "/e"}},
		{name: "NFS_SERVER with port", in: "NFS_SERVER=nfs.example.com:2049\nNFS_PATH=/e", want: Settings{NFSPath: "/e"}, problems: []string{`E mlops.env:1: NFS_SERVER="nfs.example.com:2049": has a port; an nfs volume takes the host only; ` + hostOK}},
		{name: "NFS_SERVER uppercase with port", in: "NFS_SERVER=NFS:2049\nNFS_PATH=/e", want: Settings{NFSPath: "/e"}, problems: []string{`E mlops.env:1: NFS_SERVER="NFS:2049": has a port; an nfs volume takes the host only; ` + hostOK}},
		{name: "NFS_SERVER IPv4 with port", in: "NFS_SERVER=10.0.0.5:2049\nNFS_PATH=/e", want: Settings{NFSPath: "/e"}, problems: []string{`E mlops.env:1: NFS_SERVER="10.0.0.5:2049": has a port; an nfs volume takes the host only; ` + hostOK}},
		{name: "NFS_SERVER bracketed IPv6 with port", in: "NFS_SERVER=[fd00::5]:2049\nNFS_PATH=/e", want: Settings{NFSPath: "/e"}, problems: []string{`E mlops.env:1: NFS_SERVER="[fd00::5]:2049": has a port; an nfs volume takes the host only; ` + hostOK}},
		{name: "NFS_SERVER bracketed IPv6", in: "NFS_SERVER=[fd00::5]\nNFS_PATH=/e", want: Settings{NFSPath: "/e"}, problems: []string{`E mlops.env:1: NFS_SERVER="[fd00::5]": has brackets; write the IPv6 address without them, e.g. fd00::5; ` + hostOK}},
		{name: "NFS_SERVER empty port", in: "NFS_SERVER=nfs:\nNFS_PATH=/e", want: Settings{NFSPath: "/e"}, problems: []string{`E mlops.env:1: NFS_SERVER="nfs:": must be ` + hostOK[len("accepted: "):]}},
		{name: "NFS_SERVER IPv6 zone", in: "NFS_SERVER=fe80::1%eth0\nNFS_PATH=/e", want: Settings{NFSPath: "/e"}, problems: []string{`E mlops.env:1: NFS_SERVER="fe80::1%eth0": has an IPv6 zone, which only means something on the host that wrote it; ` + hostOK}},
		{name: "NFS_SERVER underscore", in: "NFS_SERVER=nfs_server\nNFS_PATH=/e", want: Settings{NFSPath: "/e"}, problems: []string{`E mlops.env:1: NFS_SERVER="nfs_server": must be ` + hostOK[len("accepted: "):]}},
		{name: "NFS_SERVER trailing dot", in: "NFS_SERVER=nfs.example.com.\nNFS_PATH=/e", want: Settings{NFSPath: "/e"}, problems: []string{`E mlops.env:1: NFS_SERVER="nfs.example.com.": must be ` + hostOK[len("accepted: "):]}},
		{name: "NFS_SERVER Kelvin sign is not k", in: "NFS_SERVER=\u212aube\nNFS_PATH=/e", want: Settings{NFSPath: "/e"}, problems: []string{"E mlops.env:1: NFS_SERVER=\"\u212aube\": must be " + hostOK[len("accepted: "):]}},
		{name: "NFS_SERVER inner space", in: "NFS_SERVER=nfs server\nNFS_PATH=/e", want: Settings{NFSPath: "/e"}, problems: []string{`E mlops.env:1: NFS_SERVER="nfs server": contains whitespace; ` + hostOK}},
		{name: "NFS_SERVER empty", in: "NFS_SERVER=\nNFS_PATH=/e", want: Settings{NFSPath: "/e"}, problems: []string{`E mlops.env:1: NFS_SERVER="": is empty; ` + hostOK}},

		// Registry and text.
		{name: "REGISTRY with port and path", in: "REGISTRY=registry.example.com:5000/team"},
		{name: "REGISTRY scheme", in: "REGISTRY=https://docker.io", problems: []string{`E mlops.env:1: REGISTRY="https://docker.io": has a scheme; ` + regOK}},
		{name: "REGISTRY empty", in: "REGISTRY=", problems: []string{`E mlops.env:1: REGISTRY="": is empty; ` + regOK}},
		{name: "REGISTRY inner space", in: "REGISTRY=my registry", problems: []string{`E mlops.env:1: REGISTRY="my registry": contains whitespace; ` + regOK}},
		{name: "REGISTRY trailing space", in: "REGISTRY=docker.io ", problems: []string{`E mlops.env:1: REGISTRY="docker.io ": ` + ws + regOK}},
		{name: "text keys", in: "MODEL_NAME=bert large\nUSER_NAME=alice\nGROUP_NAME=\n", want: Settings{UserName: "alice"}},
		{name: "MODEL_NAME trailing space", in: "MODEL_NAME=bert ", problems: []string{`E mlops.env:1: MODEL_NAME="bert ": ` + ws + `accepted: a model name such as resnet50`}},
		{name: "MODEL_SCRIPT leading tab", in: "MODEL_SCRIPT=\t/train.py", problems: []string{`E mlops.env:1: MODEL_SCRIPT="\t/train.py": ` + ws + `accepted: a script path such as /opt/train/train.py`}},

		// Bare keys.
		{
			name: "bare unknown key",
			in:   "FOO\n",
			problems: []string{
				`W mlops.env:1: FOO="": FOO has no "=": kustomize sets it to the empty string (it does not read your shell environment); write FOO=value`,
			},
		},
		{
			name: "bare known key is also invalid",
			in:   "USER_NAME=x\nWORKERS\n",
			want: Settings{UserName: "x"},
			problems: []string{
				`W mlops.env:2: WORKERS="": WORKERS has no "=": kustomize sets it to the empty string (it does not read your shell environment); write WORKERS=value`,
				`E mlops.env:2: WORKERS="": must be a whole number from 1 to 10000`,
			},
		},

		// Misspelt keys.
		{name: "missing letter", in: "WORKER=4", problems: []string{`E mlops.env:1: WORKER="4": unknown key WORKER: did you mean WORKERS?; accepted: WORKERS, or WORKER listed in the job spec's spec.envFile.extraKeys if it is a key of your own`}},
		{name: "missing S inside", in: "GPU_PER_WORKER=2", problems: []string{`E mlops.env:1: GPU_PER_WORKER="2": unknown key GPU_PER_WORKER: did you mean GPUS_PER_WORKER?; accepted: GPUS_PER_WORKER, or GPU_PER_WORKER listed in the job spec's spec.envFile.extraKeys if it is a key of your own`}},
		{name: "lower case", in: "workers=4", problems: []string{`E mlops.env:1: workers="4": unknown key workers: did you mean WORKERS? (keys are case-sensitive); accepted: WORKERS, or workers listed in the job spec's spec.envFile.extraKeys if it is a key of your own`}},
		{name: "lower case and an edit", in: "worker=4", problems: []string{`E mlops.env:1: worker="4": unknown key worker: did you mean WORKERS?; accepted: WORKERS, or worker listed in the job spec's spec.envFile.extraKeys if it is a key of your own`}},
		{name: "missing underscore", in: "USERID=1000", problems: []string{`E mlops.env:1: USERID="1000": unknown key USERID: did you mean USER_ID?; accepted: USER_ID, or USERID listed in the job spec's spec.envFile.extraKeys if it is a key of your own`}},
		{name: "missing R", in: "NFS_SEVER=nfs", problems: []string{`E mlops.env:1: NFS_SEVER="nfs": unknown key NFS_SEVER: did you mean NFS_SERVER?; accepted: NFS_SERVER, or NFS_SEVER listed in the job spec's spec.envFile.extraKeys if it is a key of your own`}},
		{name: "swapped letters", in: "WOKRERS=4", problems: []string{`E mlops.env:1: WOKRERS="4": unknown key WOKRERS: did you mean WORKERS?; accepted: WORKERS, or WOKRERS listed in the job spec's spec.envFile.extraKeys if it is a key of your own`}},
		{name: "wrong letter", in: "MEMORU=4Gi", problems: []string{`E mlops.env:1: MEMORU="4Gi": unknown key MEMORU: did you mean MEMORY?; accepted: MEMORY, or MEMORU listed in the job spec's spec.envFile.extraKeys if it is a key of your own`}},
		{name: "declared as the user's own", in: "GPU_PER_WORKER=2", extraKeys: []string{"GPU_PER_WORKER"}},
		{name: "comment after a path", in: "NFS_PATH=/export/users   # team share\nNFS_SERVER=nfs", want: Settings{NFSServer: "nfs"}, problems: []string{`E mlops.env:1: NFS_PATH="/export/users   # team share": has a comment after the value ("   # team share"): kustomize keeps it in the value, only a line that starts with # is a comment; accepted: ` + strings.TrimPrefix(pathOK, "accepted: ") + `, with the comment on a line of its own`}},
		{name: "a # inside a value", in: "NFS_MOUNT_PATH=/mnt/resnet#50", want: Settings{NFSMountPath: "/mnt/resnet#50"}},
		{name: "a short key of the user's, one letter from CPU", in: "GPU=a100\nNPU=1"},
		{name: "a value referencing itself", in: "PATH=${PATH}:/opt/bin", problems: []string{`E mlops.env:1: PATH="${PATH}:/opt/bin": references itself, but kustomize writes mlops.env values as they are: the containers would see the text ${PATH}, not the variable's value before it; accepted: the whole value written out`}},
		// Every reference is checked, not the first alone.
		{name: "a key referenced after another reference", in: "MODEL_NAME=bert\nRUN_NAME=${RUN_ID}-${MODEL_NAME}-${MODEL_NAME}", problems: []string{`E mlops.env:2: RUN_NAME="${RUN_ID}-${MODEL_NAME}-${MODEL_NAME}": references ${MODEL_NAME}, but kustomize writes mlops.env values as they are: the containers would see the text ${MODEL_NAME}, not "bert"; accepted: the value written out (RUN_NAME=${RUN_ID}-bert-bert)`}},
		{name: "an escaped reference is written as it is", in: "RUN=m\nOUT=/out/$${RUN}", problems: []string{`W mlops.env:2: OUT="/out/$${RUN}": has $${RUN}, the job spec's escape, but kustomize writes mlops.env values as they are: the containers see the text $${RUN}, both dollars (nothing in mlops.env needs escaping)`}},
		{name: "itself referenced after another reference", in: "PATH=${HOME}/bin:${PATH}", problems: []string{`E mlops.env:1: PATH="${HOME}/bin:${PATH}": references itself, but kustomize writes mlops.env values as they are: the containers would see the text ${PATH}, not the variable's value before it; accepted: the whole value written out`}},
		{name: "references to no key of the file", in: "RUN_NAME=${RUN_ID}-${HOSTNAME}"},
		{name: "extra letter", in: "CPUS=4", problems: []string{`E mlops.env:1: CPUS="4": unknown key CPUS: did you mean CPU?; accepted: CPU, or CPUS listed in the job spec's spec.envFile.extraKeys if it is a key of your own`}},
		{name: "two edits away is just an extra variable", in: "WORKERS_X=4\nNCCL_DEBUG=INFO\nOMP_NUM_THREADS=1"},

		// Several at once.
		{
			name: "all problems sorted by line",
			in: `# site settings
NFS_PATH=/export/../x
WORKER=2
CPU=0
GROUP_ID=100
MEMORY=lots
USER_ID=-1
REGISTRY=https://docker.io
workers=4
`,
			want: Settings{GroupID: i64(100)},
			problems: []string{
				`E mlops.env:2: NFS_PATH="/export/../x": has a ".." element; ` + pathOK,
				`E mlops.env:2: NFS_PATH="/export/../x": NFS_SERVER is missing: set both NFS_SERVER and NFS_PATH, or neither`,
				`E mlops.env:3: WORKER="2": unknown key WORKER: did you mean WORKERS?; accepted: WORKERS, or WORKER listed in the job spec's spec.envFile.extraKeys if it is a key of your own`,
				`E mlops.env:4: CPU="0": must be greater than 0; ` + qtyOK,
				`E mlops.env:6: MEMORY="lots": is not a Kubernetes quantity; ` + qtyOK,
				`E mlops.env:7: USER_ID="-1": must be ` + idRange,
				`E mlops.env:8: REGISTRY="https://docker.io": has a scheme; ` + regOK,
				`E mlops.env:9: workers="4": unknown key workers: did you mean WORKERS? (keys are case-sensitive); accepted: WORKERS, or workers listed in the job spec's spec.envFile.extraKeys if it is a key of your own`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, problems := decodeText(t, tt.in, tt.extraKeys...)
			if diff := cmp.Diff(tt.want, got, equateQuantity); diff != "" {
				t.Errorf("settings (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.problems, render(problems)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			for _, p := range problems {
				if p.Source != "mlops.env" {
					t.Errorf("problem Source = %q", p.Source)
				}
			}
		})
	}
}

func TestDecodeFromMap(t *testing.T) {
	f := FromMap("ConfigMap/mlops-env", map[string]string{"WORKERS": "x", "CPU": "2", "NFS_SERVER": "nfs"})
	s, problems := Decode(f)
	want := []string{
		`E ConfigMap/mlops-env: NFS_SERVER="nfs": NFS_PATH is missing: set both NFS_SERVER and NFS_PATH, or neither`,
		`E ConfigMap/mlops-env: WORKERS="x": must be a whole number from 1 to 10000`,
	}
	if diff := cmp.Diff(want, render(problems)); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Settings{CPU: qty("2"), NFSServer: "nfs"}, s, equateQuantity); diff != "" {
		t.Errorf("settings (-want +got):\n%s", diff)
	}
}

func TestKnownKeys(t *testing.T) {
	want := []string{
		"CPU", "DATASET_DIR", "FS_GROUP", "GPUS_PER_WORKER", "GPU_RESOURCE", "GROUP_ID", "GROUP_NAME", "MAX_WORKERS", "MEMORY",
		"MIN_WORKERS", "MODEL_DIR", "MODEL_NAME", "MODEL_SCRIPT", "NFS_MOUNT_PATH", "NFS_PATH", "NFS_SERVER",
		"OUTPUT_DIR", "QUEUE", "RDZV_ENDPOINT", "REGISTRY", "SHM_SIZE", "SLOTS_PER_WORKER", "TOPOLOGY_PREFERRED", "TOPOLOGY_REQUIRED", "USER_ID", "USER_NAME", "WORKERS",
	}
	docs := KnownKeys()
	var keys []string
	for _, d := range docs {
		keys = append(keys, d.Key)
		if _, ok := specs[d.Key]; !ok {
			t.Errorf("%s: documented under another key than it is decoded", d.Key)
		}
		if d.Type == "" || d.Description == "" || strings.Contains(d.Description, "\n") {
			t.Errorf("%s: want a type and a one-line description, got %+v", d.Key, d)
		}
	}
	if diff := cmp.Diff(want, keys); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
	if !slices.IsSorted(keys) {
		t.Errorf("keys not sorted: %v", keys)
	}
	if got := docs[slices.Index(keys, "WORKERS")].Type; got != "integer 1..10000" {
		t.Errorf("WORKERS type = %q", got)
	}
	// The renderer applies these defaults; the descriptions still say them.
	for key, def := range map[string]string{"FS_GROUP": "Default: `GROUP_ID`.", "SLOTS_PER_WORKER": "Default: `GPUS_PER_WORKER` when above 0, else 1."} {
		if d := docs[slices.Index(keys, key)].Description; !strings.HasSuffix(d, def) {
			t.Errorf("%s description %q does not end in %q", key, d, def)
		}
	}
}

func TestClosest(t *testing.T) {
	refs := []string{"REGISTRY", "MODEL_SCRIPT", "DATASET_DIR", "region"}
	tests := []struct {
		name       string
		key        string
		candidates []string
		want       string
	}{
		{name: "no candidates", key: "REGISTRY"},
		{name: "nothing close", key: "IMAGE", candidates: refs},
		{name: "two edits away", key: "REGSTRYX", candidates: refs},
		{name: "swapped letters", key: "REGSITRY", candidates: refs, want: "REGISTRY"},
		{name: "missing letter", key: "REGISTY", candidates: refs, want: "REGISTRY"},
		{name: "extra letter", key: "REGISTRYY", candidates: refs, want: "REGISTRY"},
		{name: "wrong letter", key: "MODEL_SCRIPY", candidates: refs, want: "MODEL_SCRIPT"},
		{name: "case only", key: "registry", candidates: refs, want: "REGISTRY"},
		{name: "case and an edit", key: "Model_Scrpt", candidates: refs, want: "MODEL_SCRIPT"},
		{name: "lowercase candidate", key: "REGON", candidates: refs, want: "region"},
		{name: "key itself", key: "region", candidates: refs, want: "region"},
		{name: "key itself beats a case match", key: "ab", candidates: []string{"AB", "ab"}, want: "ab"},
		{name: "case match beats an edit", key: "_x", candidates: []string{"-x", "_X"}, want: "_X"},
		{name: "ties go to the alphabetically first", key: "AC", candidates: []string{"ACD", "ABC", "AD"}, want: "ABC"},
		{name: "ties among case matches", key: "Ab", candidates: []string{"ab", "AB"}, want: "AB"},
		{name: "transposition at the end", key: "WORKESR", candidates: []string{"WORKERS"}, want: "WORKERS"},
		{name: "one letter apart", key: "X", candidates: []string{"Y"}, want: "Y"},
		{name: "non-ASCII counts one rune", key: "NAÏVE", candidates: []string{"naïv"}, want: "naïv"},
		{name: "non-ASCII substitution", key: "NAÏVE", candidates: []string{"naive"}, want: "naive"},
		{name: "non-ASCII case folding", key: "ΣΟΦΙΑ", candidates: []string{"σοφια"}, want: "σοφια"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Closest(tt.key, tt.candidates); got != tt.want {
				t.Errorf("Closest(%q, %q) = %q, want %q", tt.key, tt.candidates, got, tt.want)
			}
		})
	}
}

func TestWithinOneEdit(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"", "", true},
		{"", "A", true},
		{"ABC", "ABC", true},
		{"AB", "ABC", true},
		{"ABC", "AB", true},
		{"AC", "ABC", true},
		{"XBC", "ABC", true},
		{"ABX", "ABC", true},
		{"BAC", "ABC", true},
		{"ACB", "ABC", true},
		{"日本", "日木", true},
		{"日本語", "本日語", true},
		{"A", "ABC", false},
		{"XYC", "ABC", false},
		{"CBA", "ABC", false},
		{"BCA", "ABC", false},
		{"ABCD", "BACE", false},
		{"日本語", "語本日", false},
	}
	for _, tt := range tests {
		for _, args := range [][2]string{{tt.a, tt.b}, {tt.b, tt.a}} {
			if got := withinOneEdit([]rune(args[0]), []rune(args[1])); got != tt.want {
				t.Errorf("withinOneEdit(%q, %q) = %v, want %v", args[0], args[1], got, tt.want)
			}
		}
	}
}

// TestDecodeRefusesWhatAContainerCannotCarry: keys from a ConfigMap are held
// to the file's rule, and no value may hold a control character.
func TestDecodeRefusesWhatAContainerCannotCarry(t *testing.T) {
	_, problems := Decode(FromMap("ConfigMap/mlops-env", map[string]string{"9LIVES": "1", "NAME": "a\x00b", "DEL": "x\x7f", "TAB": "a\tb"}))
	want := []string{
		`E ConfigMap/mlops-env: 9LIVES="1": is not a valid key: ` + envVarNameRule,
		`E ConfigMap/mlops-env: DEL="x\x7f": contains the control character U+007F: a container's environment cannot carry it; accepted: printable text`,
		`E ConfigMap/mlops-env: NAME="a\x00b": contains the control character U+0000: a container's environment cannot carry it; accepted: printable text`,
	}
	if diff := cmp.Diff(want, render(problems)); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

func TestCheckRendezvous(t *testing.T) {
	for _, c := range []struct {
		in, wrong string
		ok        bool
	}{
		{"etcd.example.com:2379", "", true},
		{"10.0.0.9:2379", "", true},
		{"[fd00::9]:2379", "", true},
		{"etcd.example.com", "has no port", false},
		{"etcd:0", "has a port outside 1 to 65535", false},
		{"http://etcd:2379", "has a scheme", false},
		{"etcd_1:2379", "", false},
	} {
		wrong, ok := CheckRendezvous(c.in)
		if wrong != c.wrong || ok != c.ok {
			t.Errorf("%q: got (%q, %v), want (%q, %v)", c.in, wrong, ok, c.wrong, c.ok)
		}
	}
}

func TestTopology(t *testing.T) {
	for _, tc := range []struct {
		in        string
		topology  string
		preferred bool
		problem   string
	}{
		{in: "TOPOLOGY_REQUIRED=cloud.provider.com/topology-block", topology: "cloud.provider.com/topology-block"},
		{in: "TOPOLOGY_PREFERRED=kubernetes.io/hostname", topology: "kubernetes.io/hostname", preferred: true},
		{in: "TOPOLOGY_REQUIRED=topology block", problem: `mlops.env:1: TOPOLOGY_REQUIRED="topology block": is not a label key; accepted: a node label key`},
		{in: "TOPOLOGY_PREFERRED=-rack", problem: "is not a label key"},
		{in: "TOPOLOGY_REQUIRED=a/b\nTOPOLOGY_PREFERRED=a/c", topology: "a/c", preferred: true,
			problem: `mlops.env:1: TOPOLOGY_REQUIRED="a/b": TOPOLOGY_PREFERRED is set too, and a job has one placement`},
	} {
		f, err := Parse("mlops.env", []byte(tc.in+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		s, problems := Decode(f)
		if s.Topology != tc.topology || s.TopologyPreferred != tc.preferred {
			t.Errorf("%q: Topology %q preferred %v, want %q %v", tc.in, s.Topology, s.TopologyPreferred, tc.topology, tc.preferred)
		}
		switch {
		case tc.problem == "" && len(problems) > 0:
			t.Errorf("%q: unexpected problems %v", tc.in, problems)
		case tc.problem != "" && (len(problems) != 1 || problems[0].Warning || !strings.Contains(problems[0].String(), tc.problem)):
			t.Errorf("%q: problems %v, want one error containing %q", tc.in, problems, tc.problem)
		}
	}
}
