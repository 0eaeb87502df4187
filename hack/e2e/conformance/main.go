// SPDX-License-Identifier: Apache-2.0

// Command conformance is the e2e's workload (hack/e2e/conformance_test.go): run in every rank or
// process of a job, it prints one line, "mlops-fn-conformance " and a JSON object of what the
// process sees, and exits 0. Its arguments are the environment variables to report. It reads
// only what any workload reads (its environment, ids, /proc, statfs, the cgroup files), so it
// needs no MPI or torch library, and it is static (CGO_ENABLED=0), so every e2e image carries the
// same binary (hack/e2e/images.sh).
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// Prefix starts the report line; the e2e finds the lines by it among mpirun's and torchrun's own.
const Prefix = "mlops-fn-conformance "

// Report is what one process sees.
type Report struct {
	// Rank and Size are the process's rank and world size, as RankFrom sets them: "OpenMPI"
	// (OMPI_COMM_WORLD_*), "Hydra" (MPICH's PMI_*), "torchrun" (RANK, WORLD_SIZE) or "" (a
	// lone process: 0 of 1). LocalRank and LocalSize are its rank among those on its host.
	Rank, Size           int
	LocalRank, LocalSize int
	RankFrom             string
	Host                 string
	UID, GID             int
	Groups               []int
	// Env is the value of each variable asked for, null when unset.
	Env     map[string]*string
	Cwd     string
	Mounts  []Mount
	ShmSize int64 `json:",omitempty"` // /dev/shm's size in bytes (statfs)
	// CPUMax is the cgroup's CPU limit in millicores, MemoryMax its memory limit in bytes; -1:
	// no limit, -2: not readable.
	CPUMax, MemoryMax int64
	Errors            []string `json:",omitempty"`
}

// Mount is one mount point of the process's mount namespace.
type Mount struct {
	Path     string
	ReadOnly bool
	UID, GID int
	Mode     string // the mount point's permission bits, octal, with setgid as 2000
}

// pipeBuf is Linux's PIPE_BUF: a write to a pipe of at most this many bytes is atomic.
const pipeBuf = 4096

// kernelTrees are the mount points of the kernel's own file systems, which no job's volume is
// under: left out of the report, which keeps it within pipeBuf.
var kernelTrees = []string{"/proc", "/sys", "/dev/pts", "/dev/mqueue"}

// rankVariables are the variables each launcher sets: rank, size, local rank, local size.
var rankVariables = []struct{ from, rank, size, localRank, localSize string }{
	{"OpenMPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
	{"Hydra", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"},
	{"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"},
}

func main() {
	r := see(os.Args[1:], "/proc/self/mountinfo", "/sys/fs/cgroup")
	b, err := json.Marshal(r)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// One write of at most PIPE_BUF bytes, which a pipe takes whole: the lines of the ranks one
	// launcher forwards do not interleave (a longer one did, under mpirun on the real node).
	line := append([]byte(Prefix), append(b, '\n')...)
	if len(line) > pipeBuf {
		fmt.Fprintf(os.Stderr, "conformance: the report is %d bytes, over the %d a pipe writes whole: report fewer variables\n", len(line), pipeBuf)
		os.Exit(1)
	}
	if _, err := os.Stdout.Write(line); err != nil {
		os.Exit(1)
	}
}

// see is the report, given the variables to report, the mountinfo file and the cgroup root.
func see(names []string, mountinfo, cgroup string) Report {
	r := Report{Rank: 0, Size: 1, LocalRank: 0, LocalSize: 1, UID: os.Getuid(), GID: os.Getgid(), Env: map[string]*string{}}
	fail := func(err error) { r.Errors = append(r.Errors, err.Error()) }
	for _, v := range rankVariables {
		if _, ok := os.LookupEnv(v.rank); !ok {
			continue
		}
		r.RankFrom = v.from
		r.Rank, r.Size = envInt(v.rank, &r.Errors), envInt(v.size, &r.Errors)
		r.LocalRank, r.LocalSize = envInt(v.localRank, &r.Errors), envInt(v.localSize, &r.Errors)
		break
	}
	var err error
	if r.Host, err = os.Hostname(); err != nil {
		fail(err)
	}
	if r.Groups, err = os.Getgroups(); err != nil {
		fail(err)
	}
	sort.Ints(r.Groups)
	for _, n := range names {
		if v, ok := os.LookupEnv(n); ok {
			r.Env[n] = &v
		} else {
			r.Env[n] = nil
		}
	}
	if r.Cwd, err = os.Getwd(); err != nil {
		fail(err)
	}
	if r.Mounts, err = mounts(mountinfo); err != nil {
		fail(err)
	}
	var fs syscall.Statfs_t
	if err := syscall.Statfs("/dev/shm", &fs); err != nil {
		fail(fmt.Errorf("statfs /dev/shm: %w", err))
	} else {
		r.ShmSize = int64(fs.Blocks) * fs.Bsize
	}
	r.CPUMax, r.MemoryMax = cpuMax(cgroup, &r.Errors), memoryMax(cgroup, &r.Errors)
	return r
}

// envInt is the variable's value as a number, -1 (and an error) when it is not one.
func envInt(name string, errs *[]string) int {
	n, err := strconv.Atoi(os.Getenv(name))
	if err != nil {
		*errs = append(*errs, fmt.Sprintf("%s=%q is not a number", name, os.Getenv(name)))
		return -1
	}
	return n
}

// mounts are the mount points of a mountinfo file (proc(5)): field 5 the path (octal escapes
// decoded), field 6 the per-mount options, whose first is ro or rw. A path mounted twice is
// listed once, as the last mount over it, which is the one the process sees.
func mounts(mountinfo string) ([]Mount, error) {
	text, err := os.ReadFile(mountinfo)
	if err != nil {
		return nil, err
	}
	var out []Mount
	at := map[string]int{}
	for line := range strings.Lines(string(text)) {
		f := strings.Fields(line)
		if len(f) < 6 {
			return nil, fmt.Errorf("%s: a line of %d fields: %q", mountinfo, len(f), line)
		}
		m := Mount{Path: unescape(f[4]), ReadOnly: strings.Split(f[5], ",")[0] == "ro", UID: -1, GID: -1}
		if slices.ContainsFunc(kernelTrees, func(t string) bool { return m.Path == t || strings.HasPrefix(m.Path, t+"/") }) {
			continue
		}
		var st syscall.Stat_t
		if err := syscall.Stat(m.Path, &st); err == nil {
			m.UID, m.GID = int(st.Uid), int(st.Gid)
			m.Mode = fmt.Sprintf("%04o", st.Mode&0o7777)
		}
		if i, ok := at[m.Path]; ok {
			out[i] = m
			continue
		}
		at[m.Path] = len(out)
		out = append(out, m)
	}
	return out, nil
}

// unescape decodes mountinfo's octal escapes (\040 for a space).
func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// cpuMax is the CPU limit in millicores: cgroup v2's cpu.max ("QUOTA PERIOD" or "max PERIOD"),
// else cgroup v1's cpu.cfs_quota_us over cpu.cfs_period_us (-1 quota: none).
func cpuMax(root string, errs *[]string) int64 {
	if b, err := os.ReadFile(root + "/cpu.max"); err == nil {
		f := strings.Fields(string(b))
		if len(f) == 2 && f[0] == "max" {
			return -1
		}
		if len(f) == 2 {
			return ratio(f[0], f[1], errs)
		}
		*errs = append(*errs, fmt.Sprintf("%s/cpu.max: %q", root, b))
		return -2
	}
	for _, dir := range []string{root + "/cpu", root + "/cpu,cpuacct"} {
		q, err := os.ReadFile(dir + "/cpu.cfs_quota_us")
		if err != nil {
			continue
		}
		p, err := os.ReadFile(dir + "/cpu.cfs_period_us")
		if err != nil {
			continue
		}
		if strings.TrimSpace(string(q)) == "-1" {
			return -1
		}
		return ratio(string(q), string(p), errs)
	}
	*errs = append(*errs, "no cgroup CPU limit file under "+root)
	return -2
}

func ratio(quota, period string, errs *[]string) int64 {
	q, err1 := strconv.ParseInt(strings.TrimSpace(quota), 10, 64)
	p, err2 := strconv.ParseInt(strings.TrimSpace(period), 10, 64)
	if err1 != nil || err2 != nil || p <= 0 {
		*errs = append(*errs, fmt.Sprintf("cgroup CPU quota %q period %q", quota, period))
		return -2
	}
	return q * 1000 / p
}

// memoryMax is the memory limit in bytes: cgroup v2's memory.max ("max": none), else cgroup
// v1's memory.limit_in_bytes (no limit is a number near 2^63, rounded to the page: -1).
func memoryMax(root string, errs *[]string) int64 {
	for _, f := range []string{root + "/memory.max", root + "/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		s := strings.TrimSpace(string(b))
		if s == "max" {
			return -1
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			*errs = append(*errs, fmt.Sprintf("%s: %q", f, s))
			return -2
		}
		if n >= 1<<62 {
			return -1
		}
		return n
	}
	*errs = append(*errs, "no cgroup memory limit file under "+root)
	return -2
}
