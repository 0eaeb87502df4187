// SPDX-License-Identifier: Apache-2.0

package mpijob

import (
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

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

// Resolve checks the program and mpirun's flags against mlops-fn's line and forwarding, gives the launcher its
// resources, and leaves out of a root job what would expose its SSH keys.
func (Kind) Resolve(p *render.Plan, in render.Input) ([]render.Warning, field.ErrorList) {
	s, spec := in.Spec, field.NewPath("spec")
	var errs field.ErrorList
	if len(s.Command) > 0 && len(p.Command) > 0 {
		if program := p.Command[0]; strings.IndexFunc(program, unicode.IsSpace) < 0 && isMPILauncher(program) {
			errs = append(errs, field.Invalid(spec.Child("command").Index(0), program,
				"mlops-fn writes the launcher's mpirun line itself (mpirun -np WORKERS × SLOTS_PER_WORKER …) and runs the command under it: mpirun would run mpirun; "+
					"accepted: the program alone (python train.py), its ranks set by WORKERS and SLOTS_PER_WORKER and mpirun's flags by spec.mpi.args; "+
					"or no spec.command, to keep a base's own mpirun line"))
		}
	}
	if i := slices.IndexFunc(p.MPI.Args, isHostFlag); i >= 0 {
		errs = append(errs, field.Invalid(spec.Child("mpi", "args").Index(i), p.MPI.Args[i],
			"names mpirun's hosts, beside the operator's hostfile, which lists the workers and their slots: mpirun would get two host lists; "+
				"accepted: mpirun's other flags"))
	}
	errs = append(errs, unforwardable(p, spec, in.EnvKey)...)
	if p.Script && !slices.Equal(p.MPI.Args, api.DefaultMPIArgs) && (p.MPI.Implementation == api.OpenMPI || len(p.MPI.Args) > 0) {
		errs = append(errs, field.Invalid(spec.Child("mpi", "args"), p.MPI.Args,
			"are flags of mlops-fn's mpirun line, and spec.script is the launcher's own program, which starts mpirun itself with its own flags: they would be lost; "+
				"accepted: the flags in the script's mpirun line, or spec.command (the program each rank runs, under mlops-fn's mpirun line with spec.mpi.args)"))
	}
	for i, v := range p.MPI.ForwardEnv {
		// The default NCCL_DEBUG=INFO gives way to mlops.env's (rankEnv); a pair of the user's is refused.
		if name, _, set := strings.Cut(v, "="); set && !slices.Equal(p.MPI.ForwardEnv, api.DefaultForwardEnv) && slices.Contains(envNames(p), name) {
			errs = append(errs, field.Invalid(spec.Child("mpi", "forwardEnv").Index(i), v, fmt.Sprintf(
				"sets %s, which every rank already gets from %s or spec.env (mlops-fn forwards each of their names): the ranks would see this value and the containers the other; accepted: the value in one place, or the name alone", name, in.Env.Source)))
		}
	}

	if r := s.LauncherResources; r != nil {
		p.LauncherLimits, p.LauncherRequests = maps.Clone(r.Limits), maps.Clone(r.Requests)
	} else {
		d := api.DefaultLauncherResources()
		p.LauncherLimits, p.LauncherRequests, p.LauncherLimitsDefault = d.Limits, d.Requests, true
	}

	var warnings []render.Warning
	if !p.Root() {
		return warnings, errs
	}
	if p.FSGroup != nil {
		if _, explicit := in.Env.Lookup("FS_GROUP"); explicit || s.Security.FSGroup != nil {
			warnings = append(warnings, render.Warning{Field: in.EnvKey("FS_GROUP"),
				Message: "fsGroup is left out: on a root MPIJob it makes the SSH key in /root/.ssh group-readable (mode 0640) and ssh refuses it; " +
					"to have the volumes owned by that group, run as a non-root USER_ID"})
		}
		p.FSGroup = nil
	}
	if name := in.Set.UserName; name != "" && name != "root" && s.Security.Home == "" {
		warnings = append(warnings, render.Warning{Field: in.EnvKey("USER_NAME"),
			Message: fmt.Sprintf("names %s, but the job runs as root, whose SSH keys go to /root/.ssh, not /home/%s; "+
				"accepted: USER_NAME left out (or root), or the job run as %s's uid in the image (USER_ID, or spec.security.runAsUser)", name, name, name)})
	}
	return warnings, errs
}

// forwardableName is what OpenMPI's -x and Hydra's -genvlist carry to a rank: on OpenMPI 5.0.7 and MPICH 4.2.1
// a name with "." or "-" reaches none.
var forwardableName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// unforwardable: every rank reads mlops.env and spec.env through mpirun's forwarding.
func unforwardable(p *render.Plan, spec *field.Path, envKey func(string) *field.Path) field.ErrorList {
	var errs field.ErrorList
	refuse := func(at *field.Path, value, name string) {
		if !forwardableName.MatchString(name) {
			errs = append(errs, field.Invalid(at, value, fmt.Sprintf("reaches every rank only through mpirun's environment forwarding "+
				"(OpenMPI's -x, Hydra's -genvlist), which carries no name with \".\" or \"-\": the ranks would run without it; "+
				"accepted: letters, digits and _, not starting with a digit (e.g. %s)", strings.NewReplacer(".", "_", "-", "_").Replace(name))))
		}
	}
	for _, k := range p.EnvKeys {
		refuse(envKey(k), k, k)
	}
	for i, e := range p.Env {
		refuse(spec.Child("env").Index(i).Child("name"), e.Name, e.Name)
	}
	for i, v := range p.MPI.ForwardEnv {
		if name, _, _ := strings.Cut(v, "="); len(validation.IsEnvVarName(name)) == 0 {
			refuse(spec.Child("mpi", "forwardEnv").Index(i), v, name)
		}
	}
	return errs
}
