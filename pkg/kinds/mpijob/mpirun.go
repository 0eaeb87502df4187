// SPDX-License-Identifier: Apache-2.0

package mpijob

import (
	"path"
	"slices"
	"strings"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/render"
)

// OperatorHostfile is where the mpi-operator v0.8 mounts the hostfile it writes.
const OperatorHostfile = "/etc/mpi/hostfile"

// forwardFlagsBeyond are the flags that forward what a kept launcher line does not forward yet (a second run
// over its own output adds nothing).
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
	return forwardFlags(p, forwarded)
}

// forwardFlags forward rankEnv to every rank, which mpirun starts through the workers' sshd without their
// container's environment; but the names forwarded already.
func forwardFlags(p *render.Plan, forwarded map[string]bool) []string {
	names, pairs := rankEnv(p)
	names = slices.DeleteFunc(names, func(n string) bool { return forwarded[n] })
	pairs = slices.DeleteFunc(pairs, func(v string) bool { n, _, _ := strings.Cut(v, "="); return forwarded[n] })
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

// rankEnv is what reaches every rank: forwardEnv's names then envNames, each once, and forwardEnv's pairs but
// for a name envNames sets (the default NCCL_DEBUG=INFO).
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

// ScriptRanks is the launcher's variable with the rank count, for a script that starts mpirun itself.
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

// mpirunOptions are mpirun's options, by name without dashes, with how many items after each are its values.
// Hydra ignores case: a name is looked up as written, then in lower case. Taken whole from:
//   - OpenMPI 5 (PRRTE v3): ompioptions[] in src/mca/schizo/ompi/schizo_ompi.c; PMIX_ARG_REQD is one value,
//     PMIX_ARG_NONE and PMIX_ARG_OPTIONAL none (an optional value comes only after "="), and an option
//     ending in "mca" two, as its parse_cli skips them.
//   - MPICH 4.0's Hydra: match_table[] of src/pm/hydra/ui/mpich/utils.c: an option takes a value where its
//     handler advances argv; -genv and -env take NAME VALUE, or one NAME=VALUE item.
var mpirunOptions = func() map[string]int {
	options := map[string]int{}
	for _, group := range []struct {
		values int
		names  string
	}{
		// OpenMPI 5, its deprecated options too.
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
		// MPICH's Hydra.
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

// valuesAfter is how many items after mpirun's option line[i] are its values; known: a table holds it.
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
	case (name == "genv" || name == "env") && i+1 < len(line) && strings.Contains(line[i+1], "="): // NAME=VALUE in one item
		return 1, true
	}
	return n, known
}

// isMPILauncher: tok runs mpirun, mpiexec (mpiexec.hydra, mpirun.openmpi) or horovodrun, whose -np is alike.
func isMPILauncher(tok string) bool {
	b := path.Base(tok)
	return strings.HasPrefix(b, "mpirun") || strings.HasPrefix(b, "mpiexec") || b == "horovodrun"
}

// RanksArgument finds the rank count of an mpirun line given as a container's command and args: the value
// after a rank flag among mpirun's own options, before the program (whose own -n is not mpirun's).
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

// joinedRankCount is a rank count in one item with its flag among mpirun's options (--np=4, -n4), else "".
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

// hostFlags give mpirun its hosts, in OpenMPI 5 (schizo_ompi.c: --host, -H, --hostfile, --machinefile,
// --default-hostfile) or Hydra, MPICH's and Intel MPI's (the rest; any dashes, any case: lib/utils/args.c).
var hostFlags = []string{"host", "hostfile", "machinefile", "default-hostfile", "f", "hosts", "hostlist", "machine", "machines", "machinelist"}

// isHostFlag: arg is one of hostFlags as either implementation reads it, or -H, OpenMPI's --host.
func isHostFlag(arg string) bool {
	flag, _, _ := strings.Cut(arg, "=")
	name := strings.TrimLeft(flag, "-")
	return flag == "-H" || (name != flag && slices.Contains(hostFlags, strings.ToLower(name)))
}

// namesHosts reports whether an mpirun line names its hosts among mpirun's own options.
func namesHosts(line []string) bool {
	flags, _ := mpirunFlags(line)
	return slices.ContainsFunc(flags, func(i int) bool { return isHostFlag(line[i]) })
}

// mpirunFlags are the positions of mpirun's own options in line, up to the program or "--"; unknown is the
// first option mpirunOptions lacks, taken to have no value.
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
