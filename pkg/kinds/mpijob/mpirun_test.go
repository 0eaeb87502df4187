// SPDX-License-Identifier: Apache-2.0

package mpijob

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/render"
)

// TestJoinedRankCount finds a count joined to mpirun's own rank flag, not
// a flag that merely starts alike, nor the program's.
func TestJoinedRankCount(t *testing.T) {
	for _, c := range []struct {
		line []string
		want string
	}{
		{[]string{"mpirun", "--np=4", "prog"}, "--np=4"},
		{[]string{"mpirun", "-x", "A", "-np=8", "prog"}, "-np=8"},
		{[]string{"mpiexec", "-n4", "prog"}, "-n4"},
		{[]string{"mpirun", "-npernode", "2", "-np", "4", "prog"}, ""},
		{[]string{"mpirun", "-np", "4", "prog", "--np=2"}, ""},
		{[]string{"python", "--np=2"}, ""},
	} {
		if got := joinedRankCount(c.line); got != c.want {
			t.Errorf("JoinedRankCount(%q) = %q, want %q", c.line, got, c.want)
		}
	}
}

// TestRanksArgument finds mpirun's own -np, not the program's.
func TestRanksArgument(t *testing.T) {
	for _, c := range []struct {
		name          string
		command, args []string
		want          *ArgumentRef
	}{
		{"in command", []string{"mpirun", "-n", "2", "/home/mpiuser/pi"}, nil, &ArgumentRef{Field: "command", Index: 2, Flag: "-n"}},
		{"count begins args", []string{"mpirun", "-np"}, []string{"4", "python", "train.py"}, &ArgumentRef{Field: "args", Index: 0, Flag: "-np"}},
		{"after options with values", []string{"mpirun", "-x", "PATH", "--mca", "btl", "tcp", "-np", "8", "prog"}, nil, &ArgumentRef{Field: "command", Index: 7, Flag: "-np"}},
		{"after Hydra's host list", []string{"mpiexec", "-hosts", "a,b", "-n", "4", "prog"}, nil, &ArgumentRef{Field: "command", Index: 4, Flag: "-n"}},
		{"the program's own -n", []string{"mpirun", "python", "train.py", "-n", "5"}, nil, nil},
		{"no mpirun", []string{"python", "-n", "3"}, nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := RanksArgument(c.command, c.args)
			if ok != (c.want != nil) {
				t.Fatalf("found %v (%+v), want %v", ok, got, c.want != nil)
			}
			if c.want != nil && (got.Field != c.want.Field || got.Index != c.want.Index || got.Flag != c.want.Flag) {
				t.Errorf("got %+v, want %+v", got, *c.want)
			}
		})
	}
}

// TestNamesHosts: a kept OpenMPI line that names its hosts keeps them; one
// that does not gets mlops-fn's --hostfile. Hydra's spellings (any dashes,
// any case, "=") name hosts too.
func TestNamesHosts(t *testing.T) {
	for _, c := range []struct {
		name          string
		command, args []string
		want          bool
	}{
		{"count only", []string{"mpirun", "-n", "2", "/home/mpiuser/pi"}, nil, false},
		{"--hostfile", []string{"mpirun", "-n", "2", "--hostfile", "/etc/mpi/hostfile", "prog"}, nil, true},
		{"--hostfile=", []string{"mpirun"}, []string{"-np", "4", "--hostfile=/etc/mpi/hostfile", "prog"}, true},
		{"a host list", []string{"mpirun", "-H", "a,b", "-np", "2", "prog"}, nil, true},
		{"the program's own --host", []string{"mpirun", "-np", "2", "python", "serve.py", "--host", "0.0.0.0"}, nil, false},
		{"a value that looks like a flag", []string{"mpirun", "-x", "-H", "-np", "2", "prog"}, nil, false},
		{"Hydra's -hosts", []string{"mpiexec", "-n", "2", "-hosts", "a,b", "prog"}, nil, true},
		{"Hydra's --hosts=", []string{"mpirun", "-n", "2", "--hosts=a", "prog"}, nil, true},
		{"Hydra's -machine", []string{"mpirun", "-machine", "/x", "-n", "2", "prog"}, nil, true},
		{"Hydra reads any case", []string{"mpirun", "-n", "2", "-HostList", "a", "prog"}, nil, true},
		{"OpenMPI's --default-hostfile", []string{"mpirun", "--default-hostfile", "/x", "-np", "2", "prog"}, nil, true},
		{"Hydra's -hybrid-hosts, no list", []string{"mpiexec", "-hybrid-hosts", "-n", "2", "prog"}, nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := namesHosts(slices.Concat(c.command, c.args)); got != c.want {
				t.Errorf("NamesHosts(%q, %q) = %v, want %v", c.command, c.args, got, c.want)
			}
		})
	}
}

// TestForwardFlagsBeyond: a kept line gets the flags for what it does not
// forward yet, so a second run over its own output adds none.
func TestForwardFlagsBeyond(t *testing.T) {
	for _, c := range []struct {
		name string
		impl api.MPIImplementation
		line []string
		want []string
	}{
		{"OpenMPI, none yet", api.OpenMPI, []string{"mpirun", "-n", "2", "pi"}, []string{"-x", "NCCL_DEBUG=INFO", "-x", "LD_LIBRARY_PATH", "-x", "PATH", "-x", "WORKERS"}},
		{"OpenMPI, some its own", api.OpenMPI, []string{"mpirun", "-x", "PATH", "-x", "NCCL_DEBUG=WARN", "-n", "2", "pi"}, []string{"-x", "LD_LIBRARY_PATH", "-x", "WORKERS"}},
		{"OpenMPI, a second run", api.OpenMPI, []string{"mpirun", "-n", "2", "-x", "NCCL_DEBUG=INFO", "-x", "LD_LIBRARY_PATH", "-x", "PATH", "-x", "WORKERS", "pi"}, nil},
		{"a program's -x is not mpirun's", api.OpenMPI, []string{"mpirun", "-n", "2", "pi", "-x", "PATH"}, []string{"-x", "NCCL_DEBUG=INFO", "-x", "LD_LIBRARY_PATH", "-x", "PATH", "-x", "WORKERS"}},
		{"Hydra, a second run", api.MPICH, []string{"mpiexec", "-n", "2", "-genv", "NCCL_DEBUG", "INFO", "-genvlist", "LD_LIBRARY_PATH,PATH,WORKERS", "pi"}, nil},
		{"Hydra, some its own", api.MPICH, []string{"mpiexec", "-genv", "LD_LIBRARY_PATH", "/opt", "-n", "2", "pi"}, []string{"-genv", "NCCL_DEBUG", "INFO", "-genvlist", "PATH,WORKERS"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := &render.Plan{MPI: api.MPI{Implementation: c.impl, ForwardEnv: api.DefaultForwardEnv}, EnvKeys: []string{"WORKERS"}}
			if diff := cmp.Diff(c.want, forwardFlagsBeyond(p, c.line)); diff != "" {
				t.Errorf("forwardFlagsBeyond(%q) (-want +got):\n%s", c.line, diff)
			}
		})
	}
}
