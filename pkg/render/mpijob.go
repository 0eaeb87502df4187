package render

import (
	"path"
	"slices"
	"strconv"
	"strings"

	kubeflow "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
)

// mpiJobRenderer: a multi-node job is an MPIJob, a launcher running mpirun
// over ssh to the workers.
type mpiJobRenderer struct{}

func (mpiJobRenderer) object(p *Plan, template func(role, string) corev1.PodTemplateSpec) job {
	return &kubeflow.MPIJob{Spec: kubeflow.MPIJobSpec{MPIReplicaSpecs: map[kubeflow.MPIReplicaType]*kubeflow.ReplicaSpec{
		kubeflow.MPIReplicaTypeLauncher: {Template: template(launcher, p.ContainerOf(jobkind.Launcher))},
		kubeflow.MPIReplicaTypeWorker:   {Template: template(worker, p.ContainerOf(jobkind.Worker))},
	}}}
}

func (mpiJobRenderer) fillSecurity(p *Plan, obj job) {
	obj.(*kubeflow.MPIJob).Spec.SSHAuthMountPath = p.SSHAuthMountPath()
}

// operatorVolumes are the mpi-operator v0.8's (pkg/controller's sshAuthVolume
// and configVolumeName).
func (mpiJobRenderer) operatorVolumes(p *Plan) []operatorVolume {
	return []operatorVolume{
		{"ssh-auth", p.SSHAuthMountPath(), "the mpi-operator mounts the SSH keys"},
		{"mpi-job-config", path.Dir(OperatorHostfile), "the mpi-operator mounts the hostfile it writes"},
	}
}

// gang: the workers and the launcher, but with WaitForWorkersReady the
// launcher is created only once the workers run, so the group is the workers.
func (mpiJobRenderer) gang(p *Plan) (int32, string, int32, bool) {
	if p.MPI.LauncherCreationPolicy == api.WaitForWorkersReady {
		return p.Workers, "the workers (WORKERS); the launcher is created once they run (spec.mpi.launcherCreationPolicy WaitForWorkersReady, the default; AtStartup creates it with them), so it cannot be one of the group", p.Workers, true
	}
	return p.Workers + 1, "the workers (WORKERS) and the launcher", 0, true
}

// fillJob sets the MPIJob's own fields: slots, MPI implementation, launcher
// creation, runPolicy and the replicas of its launcher and workers.
func (mpiJobRenderer) fillJob(p *Plan, obj job) {
	s := &obj.(*kubeflow.MPIJob).Spec
	s.SlotsPerWorker = ptr.To(p.SlotsPerWorker)
	if p.MPI.RunLauncherAsWorker {
		s.RunLauncherAsWorker = ptr.To(true)
	}
	s.MPIImplementation = kubeflow.MPIImplementation(p.MPI.Implementation)
	s.LauncherCreationPolicy = kubeflow.LauncherCreationPolicy(p.MPI.LauncherCreationPolicy)
	s.RunPolicy = kubeflow.RunPolicy{
		CleanPodPolicy:          ptr.To(kubeflow.CleanPodPolicy(p.RunPolicy.CleanPodPolicy)),
		TTLSecondsAfterFinished: p.RunPolicy.TTLSecondsAfterFinished,
		ActiveDeadlineSeconds:   p.RunPolicy.ActiveDeadlineSeconds,
		BackoffLimit:            p.RunPolicy.BackoffLimit,
	}
	if sp := p.RunPolicy.SchedulingPolicy; sp != nil {
		s.RunPolicy.SchedulingPolicy = &kubeflow.SchedulingPolicy{MinAvailable: sp.MinAvailable, Queue: sp.Queue,
			PriorityClass: sp.PriorityClass, ScheduleTimeoutSeconds: sp.ScheduleTimeoutSeconds}
	}
	for t, n := range map[kubeflow.MPIReplicaType]int32{kubeflow.MPIReplicaTypeLauncher: 1, kubeflow.MPIReplicaTypeWorker: p.Workers} {
		s.MPIReplicaSpecs[t].Replicas = ptr.To(n)
		s.MPIReplicaSpecs[t].RestartPolicy = kubeflow.RestartPolicy(p.RestartPolicy)
	}
}

// OperatorHostfile is where the mpi-operator mounts the hostfile it writes
// (v0.8: its ConfigMap at /etc/mpi).
const OperatorHostfile = "/etc/mpi/hostfile"

// mpirun is the launcher's command: -np follows workers × slots.
func (p *Plan) mpirun() []string {
	cmd := []string{"mpirun"}
	np := strconv.Itoa(int(p.Ranks()))
	if p.MPI.Implementation == api.OpenMPI {
		if p.Root() {
			cmd = append(cmd, "--allow-run-as-root")
		}
		// The operator sets only OpenMPI 4's OMPI_MCA_orte_default_hostfile;
		// OpenMPI 5 (PRRTE, the operator's own images) ignores it and would start
		// every rank on the launcher. The flag reads the same file under both.
		cmd = append(cmd, "-np", np, "--hostfile", OperatorHostfile)
		cmd = append(cmd, p.MPI.Args...)
		for _, v := range p.MPI.ForwardEnv {
			cmd = append(cmd, "-x", v)
		}
	} else {
		// Intel MPI and MPICH share the Hydra launcher's flags.
		cmd = append(cmd, "-n", np)
		cmd = append(cmd, p.MPI.Args...)
		var names []string
		for _, v := range p.MPI.ForwardEnv {
			if name, value, set := strings.Cut(v, "="); set {
				cmd = append(cmd, "-genv", name, value)
			} else {
				names = append(names, name)
			}
		}
		if len(names) > 0 {
			cmd = append(cmd, "-genvlist", strings.Join(names, ","))
		}
	}
	cmd = append(cmd, p.Command...)
	return append(cmd, p.Args...)
}

// ArgumentRef is one element of a container's command or args.
type ArgumentRef struct {
	Field string // "command" or "args"
	Index int
	Flag  string // the flag before it, as written: -np, -n, --np, --n or -c
	// FlagAt is where the flag stands: the end of command when the count
	// begins args.
	FlagAt *ArgumentRef
}

// rankFlags set mpirun's number of ranks; mpirunValues are the other mpirun
// (OpenMPI, Hydra) options that take values, by how many (hostFlags take
// one).
var (
	rankFlags    = []string{"-np", "-n", "--np", "--n", "-c"}
	mpirunValues = map[string]int{
		"-x": 1, "-wdir": 1, "--wdir": 1, "-bind-to": 1, "--bind-to": 1, "-map-by": 1, "--map-by": 1, "-rank-by": 1, "--rank-by": 1,
		"-npernode": 1, "--npernode": 1, "-N": 1, "-ppn": 1, "-perhost": 1, "-genvlist": 1, "-envlist": 1, "-iface": 1,
		"-mca": 2, "--mca": 2, "-gmca": 2, "--gmca": 2, "-genv": 2, "-env": 2,
	}
)

// valuesAfter is how many items after mpirun's flag arg are its values.
func valuesAfter(arg string) int {
	if slices.Contains(rankFlags, arg) || (isHostFlag(arg) && !strings.Contains(arg, "=")) {
		return 1
	}
	return mpirunValues[arg]
}

// isMPILauncher: tok runs mpirun, mpiexec (mpiexec.hydra, mpirun.openmpi)
// or horovodrun, whose -np counts ranks alike.
func isMPILauncher(tok string) bool {
	b := path.Base(tok)
	return strings.HasPrefix(b, "mpirun") || strings.HasPrefix(b, "mpiexec") || b == "horovodrun"
}

// RanksArgument finds the rank count of an mpirun (or mpiexec) line given as
// a container's command and args: the value after -np, -n, --np, --n or -c
// among mpirun's own options, before the program it starts (whose own -n or
// -c is not mpirun's).
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

// RankCounts are the rank counts of an mpirun line with their flags, as
// written ("-np 4"): a line with two runs with whichever mpirun reads last,
// not the one mlops-fn sets.
func RankCounts(command, args []string) []string {
	line := append(append([]string(nil), command...), args...)
	var out []string
	for _, i := range rankCounts(line) {
		out = append(out, line[i-1]+" "+line[i])
	}
	return out
}

// JoinedRankCount is a rank count written in one item with its flag among
// mpirun's own options (--np=4, -np=4, -n4), "" when there is none.
func JoinedRankCount(command, args []string) string {
	line := append(append([]string(nil), command...), args...)
	for _, i := range mpirunFlags(line) {
		for _, f := range rankFlags {
			rest, ok := strings.CutPrefix(line[i], f)
			if ok && rest != "" && strings.Trim(strings.TrimPrefix(rest, "="), "0123456789") == "" {
				return line[i]
			}
		}
	}
	return ""
}

// rankCounts are the positions in line of the values of mpirun's own rank
// flags.
func rankCounts(line []string) []int {
	var at []int
	for _, i := range mpirunFlags(line) {
		if slices.Contains(rankFlags, line[i]) && i+1 < len(line) {
			at = append(at, i+1)
		}
	}
	return at
}

// hostFlags are the names of the flags that give mpirun its hosts, as a
// list or in a file, for each implementation mlops-fn renders:
//   - OpenMPI 5 (PRRTE's ompi personality, schizo_ompi.c): --host (-H),
//     --hostfile, --machinefile, --default-hostfile; one dash or two.
//   - Hydra, the mpiexec of MPICH and Intel MPI (MPICH's mpiexec/options.c,
//     Intel MPI's Global and Local Hydra Options): -f, -hostfile,
//     -machinefile, -machine, -machines, -machinelist, -host, -hosts,
//     -hostlist; Hydra drops any number of leading dashes and ignores case
//     (lib/utils/args.c).
//
// Each takes one value, after "=" or as the next item.
var hostFlags = []string{"host", "hostfile", "machinefile", "default-hostfile", "f", "hosts", "hostlist", "machine", "machines", "machinelist"}

// isHostFlag: arg is one of hostFlags as either implementation reads it, or
// -H, OpenMPI's --host.
func isHostFlag(arg string) bool {
	flag, _, _ := strings.Cut(arg, "=")
	name := strings.TrimLeft(flag, "-")
	return flag == "-H" || (name != flag && slices.Contains(hostFlags, strings.ToLower(name)))
}

// NamesHosts reports whether an mpirun line (command, args) names its hosts
// among mpirun's own options: a hostfile, a machine file or a host list.
func NamesHosts(command, args []string) bool {
	line := append(append([]string(nil), command...), args...)
	return slices.ContainsFunc(mpirunFlags(line), func(i int) bool { return isHostFlag(line[i]) })
}

// mpirunFlags are the positions of mpirun's own flags in line, up to the
// program it starts; none when line runs no mpirun.
func mpirunFlags(line []string) []int {
	start := slices.IndexFunc(line, isMPILauncher)
	if start < 0 {
		return nil
	}
	var flags []int
	for i := start + 1; i < len(line) && strings.HasPrefix(line[i], "-"); i++ {
		flags = append(flags, i)
		i += valuesAfter(line[i])
	}
	return flags
}

// workerCommand runs sshd in the foreground; a non-root user brings its own config.
func (p *Plan) workerCommand() []string {
	if p.MPI.WorkerCommand != nil {
		return p.MPI.WorkerCommand
	}
	if p.Root() {
		return []string{"/usr/sbin/sshd", "-De"}
	}
	return []string{"/usr/sbin/sshd", "-De", "-f", p.Home + "/.sshd_config"}
}
