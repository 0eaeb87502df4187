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
func forwardFlagsBeyond(p *render.Plan, line []string) []string {
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
		for _, v := range slices.Concat(pairs, names) {
			flags = append(flags, "-x", v)
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
var mpirunOptions = func() map[string]int {
	options := map[string]int{}
	for _, group := range []struct {
		values int
		names  string
	}{
		// OpenMPI 5 (PRRTE): basic, MCA, DVM, debugging, processes, I/O, launch, placement, display and
		// runtime options, and the deprecated ones it still reads.
		{0, `h help V version v verbose p parseable parsable debug-daemons debug-daemons-file leave-session-attached
			noprefix allow-run-as-root report-child-jobs-separately stop-on-exec stop-in-init stop-in-app
			report-state-on-timeout get-stack-traces no-aggregate-help s preload-binary show-progress fwd-environment
			do-not-launch enable-recovery disable-recovery continuous display-comm display-comm-finalize soft xml
			tag-output timestamp-output merge-stderr-to-stdout display-devel-map report-bindings display-map
			display-allocation nolocal oversubscribe nooversubscribe use-hwthread-cpus bind-to-core bynode bycore
			byslot pernode output-proctable debug`},
		{1, `report-pid report-uri personality dvm tune launch-agent max-vm-size tmpdir prefix forward-signals xterm
			timeout spawn-timeout np n c N app output stdin preload-files x wdir wd path pset hostfile machinefile
			default-hostfile H host map-by rank-by bind-to display runtime-options max-restarts with-ft
			initial-errhandler arch file output-directory output-filename display-topo cpu-set cpu-list cpus-per-proc
			cpus-per-rank npernode npersocket ppr am rankfile stream-buffering`},
		// MPICH's Hydra: global and local options, and Hydra's own.
		{0, `genvnone genvall profile prepend-rank l envnone envall enable-x disable-x info print-all-exitcodes
			disable-auto-cleanup dac enable-auto-cleanup disable-hostname-propagation enable-hostname-propagation
			pmi-port skip-launch-node`},
		{1, `genvlist f machine machines machinelist hosts hostlist ppn prepend-pattern outfile-pattern errfile-pattern
			outfile errfile configfile envlist launcher launcher-exec bootstrap bootstrap-exec rmk topolib binding
			membind demux iface nameserver order-nodes localhost usize gpus-per-proc`},
		{2, "genv env"},
	} {
		for _, name := range strings.Fields(group.names) {
			options[name] = group.values
		}
	}
	return options
}()

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
	line := slices.Concat(command, args)
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

// joinedRankCount is a rank count written in one item with its flag among mpirun's own options (--np=4,
// -np=4, -n4), "" when there is none.
func joinedRankCount(line []string) string {
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

// namesHosts reports whether an mpirun line names its hosts among mpirun's own options: a hostfile, a
// machine file or a host list.
func namesHosts(line []string) bool {
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
