// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// unset unsets the variables for the test (t.Setenv restores them after it).
func unset(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		t.Setenv(n, "")
		if err := os.Unsetenv(n); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSee: the rank from each launcher's variables, the variables asked for (unset ones null),
// the mounts as mountinfo lists them (escapes decoded, the last mount over a path, ro or rw) with
// their owner and mode, and the cgroup limits of v1 and v2.
func TestSee(t *testing.T) {
	dir := t.TempDir()
	shared := filepath.Join(dir, "a shared")
	if err := os.Mkdir(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, os.ModeSetgid|0o775); err != nil {
		t.Fatal(err)
	}
	esc := filepath.Join(dir, `a\040shared`)
	write(t, dir, map[string]string{"mountinfo": "22 1 0:21 / / rw,relatime - overlay overlay rw\n" +
		"30 22 0:30 / " + esc + " ro,nosuid - tmpfs tmpfs rw\n" +
		"31 22 0:31 / " + esc + " rw,nosuid - tmpfs tmpfs rw\n" +
		"32 22 0:32 / /nonexistent-mount ro - tmpfs tmpfs ro\n" +
		// The kernel's own trees, left out.
		"33 22 0:33 / /proc rw - proc proc rw\n34 33 0:33 /sys /proc/sys ro - proc proc rw\n" +
		"35 22 0:35 / /sys ro - sysfs sysfs ro\n36 22 0:36 / /dev/pts rw - devpts devpts rw\n",
		"v1/cpu,cpuacct/cpu.cfs_quota_us": "25000\n", "v1/cpu,cpuacct/cpu.cfs_period_us": "100000\n",
		"v1/memory/memory.limit_in_bytes": "268435456\n",
		"v2/cpu.max":                      "150000 100000\n", "v2/memory.max": "max\n",
		"none/memory/memory.limit_in_bytes": "9223372036854771712\n", "none/cpu/cpu.cfs_quota_us": "-1\n", "none/cpu/cpu.cfs_period_us": "100000\n",
	})
	unset(t, "OMPI_COMM_WORLD_RANK", "PMI_RANK", "RANK", "UNSET_KEY")
	t.Setenv("MY_KEY", "hello")
	t.Setenv("EMPTY", "")
	t.Setenv("PMI_RANK", "2")
	t.Setenv("PMI_SIZE", "3")
	t.Setenv("MPI_LOCALRANKID", "0")
	t.Setenv("MPI_LOCALNRANKS", "1")
	t.Setenv("RANK", "7") // an operator's variable under Hydra's: Hydra's rank wins

	r := see([]string{"MY_KEY", "EMPTY", "UNSET_KEY"}, filepath.Join(dir, "mountinfo"), filepath.Join(dir, "v1"))
	hello, empty := "hello", ""
	if want := map[string]*string{"MY_KEY": &hello, "EMPTY": &empty, "UNSET_KEY": nil}; !reflect.DeepEqual(r.Env, want) {
		t.Errorf("Env = %v, want %v", r.Env, want)
	}
	if r.RankFrom != "Hydra" || r.Rank != 2 || r.Size != 3 || r.LocalRank != 0 || r.LocalSize != 1 {
		t.Errorf("rank = %s %d of %d, local %d of %d; want Hydra 2 of 3, local 0 of 1", r.RankFrom, r.Rank, r.Size, r.LocalRank, r.LocalSize)
	}
	uid, gid := os.Getuid(), os.Getgid()
	want := []Mount{{Path: "/", UID: 0, GID: 0, Mode: "0755"}, {Path: shared, UID: uid, GID: gid, Mode: "2775"},
		{Path: "/nonexistent-mount", ReadOnly: true, UID: -1, GID: -1}}
	if !reflect.DeepEqual(r.Mounts, want) {
		t.Errorf("Mounts = %+v, want %+v", r.Mounts, want)
	}
	if r.CPUMax != 250 || r.MemoryMax != 256<<20 {
		t.Errorf("cgroup v1: CPUMax %d, MemoryMax %d; want 250, %d", r.CPUMax, r.MemoryMax, 256<<20)
	}
	if r.Cwd == "" || r.Host == "" || r.ShmSize <= 0 || len(r.Errors) != 0 {
		t.Errorf("cwd %q host %q shm %d errors %v", r.Cwd, r.Host, r.ShmSize, r.Errors)
	}
	if r := see(nil, filepath.Join(dir, "mountinfo"), filepath.Join(dir, "v2")); r.CPUMax != 1500 || r.MemoryMax != -1 {
		t.Errorf("cgroup v2: CPUMax %d, MemoryMax %d; want 1500, -1", r.CPUMax, r.MemoryMax)
	}
	if r := see(nil, filepath.Join(dir, "mountinfo"), filepath.Join(dir, "none")); r.CPUMax != -1 || r.MemoryMax != -1 {
		t.Errorf("no limits: CPUMax %d, MemoryMax %d; want -1, -1", r.CPUMax, r.MemoryMax)
	}
	unset(t, "PMI_RANK", "RANK")
	if r := see(nil, filepath.Join(dir, "mountinfo"), filepath.Join(dir, "none")); r.RankFrom != "" || r.Rank != 0 || r.Size != 1 {
		t.Errorf("a lone process: %s %d of %d, want 0 of 1", r.RankFrom, r.Rank, r.Size)
	}
	if r := see(nil, filepath.Join(dir, "missing"), filepath.Join(dir, "missing")); len(r.Errors) != 3 {
		t.Errorf("unreadable mountinfo and cgroups: errors %v, want 3", r.Errors)
	}
}
