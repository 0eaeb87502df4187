// SPDX-License-Identifier: Apache-2.0

package mpijob

import (
	"path"
	"slices"
	"strings"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/render"
)

// OperatorHostfile is where the mpi-operator mounts the hostfile it writes (v0.8: its ConfigMap at /etc/mpi).
const OperatorHostfile = "/etc/mpi/hostfile"

// forwardFlagsBeyond are the flags that forward what the line (a kept launcher's command and args) does not
// forward yet: a second run over its own output adds nothing, nor does a line that forwards a name itself.
func forwardFlagsBeyond(p *render.Plan, command, args []string) []string {
	line := append(append([]string(nil), command...), args...)
	flags, _ := mpirunFlags(line)
	forwarded := map[string]bool{}
	for _, i := range flags {
		if i+1 >= len(line) {
			continue
		}
		switch strings.ToLower(strings.TrimLeft(line[i], "-")) {
		case "x", "genv":
			name, _, _ := strings.Cut(line[i+1], "=")
			forwarded[name] = true
		case "genvlist":
			for _, name := range strings.Split(line[i+1], ",") {
				forwarded[name] = true
			}
		}
	}
	return forwardFlags(p, func(name string) bool { return !forwarded[name] })
}

// forwardFlags forward the launcher's environment to every rank: ranks that mpirun starts through the
// workers' sshd get none of their container's environment. Forwarded by name: spec.mpi.forwardEnv's,
// mlops.env's keys and spec.env's names, each once; a forwardEnv NAME=VALUE sets its value (OpenMPI 5's -x,
// Hydra's -genv and -genvlist, as each documents them). Only the names keep accepts (all, with keep nil).
func forwardFlags(p *render.Plan, keep func(string) bool) []string {
	names, pairs := rankEnv(p)
	if keep != nil {
		names = slices.DeleteFunc(names, func(n string) bool { return !keep(n) })
		pairs = slices.DeleteFunc(pairs, func(v string) bool { n, _, _ := strings.Cut(v, "="); return !keep(n) })
	}
	var flags []string
	if p.MPI.Implementation == api.OpenMPI {
		for _, v := range pairs {
			flags = append(flags, "-x", v)
		}
		for _, name := range names {
			flags = append(flags, "-x", name)
		}
		return flags
	}
	for _, v := range pairs {
		name, value, _ := strings.Cut(v, "=")
		flags = append(flags, "-genv", name, value)
	}
	if len(names) > 0 {
		flags = append(flags, "-genvlist", strings.Join(names, ","))
	}
	return flags
}

// rankEnv is what reaches every rank: names whose values are the launcher's (spec.mpi.forwardEnv's names,
// mlops.env's keys, spec.env's names, in that order, each once) and forwardEnv's NAME=VALUE pairs. A pair of
// a name that mlops.env or spec.env sets gives way to it (the default NCCL_DEBUG=INFO; a pair of the user's
// is refused when resolved).
func rankEnv(p *render.Plan) (names, pairs []string) {
	fromEnv := envNames(p)
	for _, v := range p.MPI.ForwardEnv {
		name, _, set := strings.Cut(v, "=")
		switch {
		case !set:
			names = append(names, name)
		case !slices.Contains(fromEnv, name):
			pairs = append(pairs, v)
		}
	}
	for _, name := range fromEnv {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names, pairs
}

// envNames are the variables the containers get from the job: mlops.env's keys, then spec.env's names.
func envNames(p *render.Plan) []string {
	names := slices.Clone(p.EnvKeys)
	for _, e := range p.Env {
		names = append(names, e.Name)
	}
	return names
}

// ScriptRanks is the launcher's variable that holds the rank count, workers × slots, for a script that starts
// mpirun itself.
const ScriptRanks = "MLOPS_FN_RANKS"

// ArgumentRef is one element of a container's command or args.
type ArgumentRef struct {
	Field string // "command" or "args"
	Index int
	Flag  string // the flag before it, as written: -np, -n, --np, --n or -c
	// FlagAt is where the flag stands: the end of command when the count begins args.
	FlagAt *ArgumentRef
}

// rankFlags set mpirun's number of ranks.
var rankFlags = []string{"-np", "-n", "--np", "--n", "-c"}

// mpirunOptions are mpirun's options, by name without its dashes, with how many items after each are its
// values (a value after "=" is in the item). Both launchers read one dash or two alike; Hydra ignores case,
// so a name is looked up as written, then in lower case. Taken whole from:
//   - OpenMPI 5's mpirun, PRRTE's ompi personality: ompioptions[] in src/mca/schizo/ompi/schizo_ompi.c (PRRTE
//     v3, with the names of src/util/prte_cmd_line.h); PMIX_ARG_REQD is one value, PMIX_ARG_NONE none,
//     PMIX_ARG_OPTIONAL none (getopt_long takes an optional value only after "="), and an option ending in
//     "mca" (mca, gmca, omca, gomca, prtemca, pmixmca, amca) two, as its parse_cli skips them.
//   - MPICH's Hydra mpiexec: match_table[] of src/pm/hydra/ui/mpich/utils.c and `mpiexec.hydra -help` (MPICH
//     4.0): an option takes a value where its handler advances argv; -genv and -env take NAME VALUE, or one
//     NAME=VALUE item (hydraPairs).
//
// The two tables agree where they share a name.
var mpirunOptions = map[string]int{
	// OpenMPI 5 (PRRTE): basic, MCA and DVM options.
	"h": 0, "help": 0, "V": 0, "version": 0, "v": 0, "verbose": 0, "p": 0, "parseable": 0, "parsable": 0,
	"report-pid": 1, "report-uri": 1, "personality": 1, "dvm": 1, "tune": 1,
	"launch-agent": 1, "max-vm-size": 1, "debug-daemons": 0, "debug-daemons-file": 0, "leave-session-attached": 0,
	"tmpdir": 1, "prefix": 1, "noprefix": 0, "forward-signals": 1, "allow-run-as-root": 0, "report-child-jobs-separately": 0,
	// debugging
	"xterm": 1, "stop-on-exec": 0, "stop-in-init": 0, "stop-in-app": 0, "timeout": 1, "report-state-on-timeout": 0,
	"get-stack-traces": 0, "spawn-timeout": 1, "no-aggregate-help": 0,
	// processes, I/O, launch, placement, display, runtime
	"np": 1, "n": 1, "c": 1, "N": 1, "app": 1, "output": 1, "stdin": 1, "preload-files": 1, "s": 0, "preload-binary": 0,
	"x": 1, "wdir": 1, "wd": 1, "path": 1, "show-progress": 0, "pset": 1, "hostfile": 1, "machinefile": 1,
	"default-hostfile": 1, "H": 1, "host": 1, "fwd-environment": 0, "map-by": 1, "rank-by": 1, "bind-to": 1, "display": 1,
	"do-not-launch": 0, "runtime-options": 1, "enable-recovery": 0, "max-restarts": 1, "disable-recovery": 0,
	"continuous": 0, "with-ft": 1, "initial-errhandler": 1, "display-comm": 0, "display-comm-finalize": 0,
	"soft": 0, "arch": 1, "file": 1,
	// deprecated, still read
	"xml": 0, "tag-output": 0, "timestamp-output": 0, "output-directory": 1, "output-filename": 1,
	"merge-stderr-to-stdout": 0, "display-devel-map": 0, "display-topo": 1, "report-bindings": 0, "display-map": 0,
	"display-allocation": 0, "nolocal": 0, "oversubscribe": 0, "nooversubscribe": 0, "use-hwthread-cpus": 0,
	"cpu-set": 1, "cpu-list": 1, "bind-to-core": 0, "bynode": 0, "bycore": 0, "byslot": 0, "cpus-per-proc": 1,
	"cpus-per-rank": 1, "npernode": 1, "pernode": 0, "npersocket": 1, "ppr": 1, "am": 1, "rankfile": 1,
	"output-proctable": 0, "debug": 0, "stream-buffering": 1,

	// MPICH's Hydra: global and local options.
	"genv": 2, "genvlist": 1, "genvnone": 0, "genvall": 0, "f": 1, "machine": 1, "machines": 1, "machinelist": 1,
	"hosts": 1, "hostlist": 1, "ppn": 1, "profile": 0, "prepend-rank": 0, "l": 0, "prepend-pattern": 1,
	"outfile-pattern": 1, "errfile-pattern": 1, "outfile": 1, "errfile": 1, "configfile": 1,
	"env": 2, "envlist": 1, "envnone": 0, "envall": 0,
	// Hydra's own
	"launcher": 1, "launcher-exec": 1, "bootstrap": 1, "bootstrap-exec": 1, "enable-x": 0, "disable-x": 0, "rmk": 1,
	"topolib": 1, "binding": 1, "membind": 1, "demux": 1, "info": 0, "print-all-exitcodes": 0, "iface": 1,
	"nameserver": 1, "disable-auto-cleanup": 0, "dac": 0, "enable-auto-cleanup": 0, "disable-hostname-propagation": 0,
	"enable-hostname-propagation": 0, "order-nodes": 1, "localhost": 1, "usize": 1, "pmi-port": 0,
	"skip-launch-node": 0, "gpus-per-proc": 1,
}

// hydraPairs take NAME VALUE, or NAME=VALUE in one item.
var hydraPairs = []string{"genv", "env"}

// valuesAfter is how many items after mpirun's option arg (line[i]) are its values; known is false for an
// option neither table holds.
func valuesAfter(line []string, i int) (n int, known bool) {
	name, _, joined := strings.Cut(strings.TrimLeft(line[i], "-"), "=")
	n, known = mpirunOptions[name]
	if !known {
		name = strings.ToLower(name)
		n, known = mpirunOptions[name]
	}
	if !known && strings.HasSuffix(name, "mca") {
		return 2, true
	}
	switch {
	case joined:
		return 0, known
	case slices.Contains(hydraPairs, name) && i+1 < len(line) && strings.Contains(line[i+1], "="):
		return 1, true
	}
	return n, known
}

// isMPILauncher: tok runs mpirun, mpiexec (mpiexec.hydra, mpirun.openmpi) or horovodrun, whose -np counts
// ranks alike.
func isMPILauncher(tok string) bool {
	b := path.Base(tok)
	return strings.HasPrefix(b, "mpirun") || strings.HasPrefix(b, "mpiexec") || b == "horovodrun"
}

// RanksArgument finds the rank count of an mpirun (or mpiexec) line given as a container's command and args:
// the value after -np, -n, --np, --n or -c among mpirun's own options, before the program it starts (whose
// own -n or -c is not mpirun's).
func RanksArgument(command, args []string) (ArgumentRef, bool) {
	line := append(append([]string(nil), command...), args...)
	at := func(i int) ArgumentRef {
		if i < len(command) {
			return ArgumentRef{Field: "command", Index: i}
		}
		return ArgumentRef{Field: "args", Index: i - len(command)}
	}
	counts := rankCounts(line)
	if len(counts) == 0 {
		return ArgumentRef{}, false
	}
	i := counts[0]
	ref, flag := at(i), at(i-1)
	ref.Flag, ref.FlagAt = line[i-1], &flag
	return ref, true
}

// writtenRankCounts are the rank counts of an mpirun line with their flags, as written ("-np 4"): a line with
// two runs with whichever mpirun reads last, not the one mlops-fn sets.
func writtenRankCounts(command, args []string) []string {
	line := append(append([]string(nil), command...), args...)
	var out []string
	for _, i := range rankCounts(line) {
		out = append(out, line[i-1]+" "+line[i])
	}
	return out
}

// joinedRankCount is a rank count written in one item with its flag among mpirun's own options (--np=4,
// -np=4, -n4), "" when there is none.
func joinedRankCount(command, args []string) string {
	line := append(append([]string(nil), command...), args...)
	flags, _ := mpirunFlags(line)
	for _, i := range flags {
		for _, f := range rankFlags {
			rest, ok := strings.CutPrefix(line[i], f)
			if ok && rest != "" && strings.Trim(strings.TrimPrefix(rest, "="), "0123456789") == "" {
				return line[i]
			}
		}
	}
	return ""
}

// rankCounts are the positions in line of the values of mpirun's own rank flags.
func rankCounts(line []string) []int {
	var at []int
	flags, _ := mpirunFlags(line)
	for _, i := range flags {
		if slices.Contains(rankFlags, line[i]) && i+1 < len(line) {
			at = append(at, i+1)
		}
	}
	return at
}

// hostFlags are the names of the flags that give mpirun its hosts, as a list or in a file, for each
// implementation mlops-fn renders:
//   - OpenMPI 5 (PRRTE's ompi personality, schizo_ompi.c): --host (-H), --hostfile, --machinefile,
//     --default-hostfile; one dash or two.
//   - Hydra, the mpiexec of MPICH and Intel MPI (MPICH's mpiexec/options.c, Intel MPI's Global and Local
//     Hydra Options): -f, -hostfile, -machinefile, -machine, -machines, -machinelist, -host, -hosts,
//     -hostlist; Hydra drops any number of leading dashes and ignores case (lib/utils/args.c).
//
// Each takes one value, after "=" or as the next item.
var hostFlags = []string{"host", "hostfile", "machinefile", "default-hostfile", "f", "hosts", "hostlist", "machine", "machines", "machinelist"}

// isHostFlag: arg is one of hostFlags as either implementation reads it, or -H, OpenMPI's --host.
func isHostFlag(arg string) bool {
	flag, _, _ := strings.Cut(arg, "=")
	name := strings.TrimLeft(flag, "-")
	return flag == "-H" || (name != flag && slices.Contains(hostFlags, strings.ToLower(name)))
}

// namesHosts reports whether an mpirun line (command, args) names its hosts among mpirun's own options: a
// hostfile, a machine file or a host list.
func namesHosts(command, args []string) bool {
	line := append(append([]string(nil), command...), args...)
	flags, _ := mpirunFlags(line)
	return slices.ContainsFunc(flags, func(i int) bool { return isHostFlag(line[i]) })
}

// mpirunFlags are the positions of mpirun's own options in line, up to the program it starts ("--" ends them
// too); none when line runs no mpirun. unknown is the first option mpirunOptions does not hold, taken to have
// no value.
func mpirunFlags(line []string) (flags []int, unknown string) {
	start := slices.IndexFunc(line, isMPILauncher)
	if start < 0 {
		return nil, ""
	}
	for i := start + 1; i < len(line) && strings.HasPrefix(line[i], "-") && line[i] != "--"; i++ {
		flags = append(flags, i)
		n, known := valuesAfter(line, i)
		if !known && unknown == "" {
			unknown = line[i]
		}
		i += n
	}
	return flags, unknown
}

// unknownMPIRunOption is the first of mpirun's own options in a line (command, args) that neither OpenMPI 5's
// nor Hydra's option table holds, "" when there is none: where it takes values, mpirun's options end
// somewhere mlops-fn cannot tell.
func unknownMPIRunOption(command, args []string) string {
	_, unknown := mpirunFlags(append(append([]string(nil), command...), args...))
	return unknown
}
