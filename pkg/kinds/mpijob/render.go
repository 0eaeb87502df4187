// SPDX-License-Identifier: Apache-2.0

package mpijob

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
	"github.com/mlops-fn/mlops-fn/pkg/render"
)

// Kind is the multi-node job: an MPIJob, a launcher running mpirun over ssh to the workers.
type Kind struct{}

var (
	_ render.Resolver     = Kind{}
	_ render.JobFiller    = Kind{}
	_ render.Operated     = Kind{}
	_ render.Gang         = Kind{}
	_ render.Apart        = Kind{}
	_ render.Clearer      = Kind{}
	_ render.Grouper      = Kind{}
	_ api.Defaulter       = Kind{}
	_ api.Validator       = Kind{}
	_ render.Narrower     = Kind{}
	_ render.AfterPatcher = Kind{}
	_ render.JSONPatcher  = Kind{}
)

// Clear: the command lines are mlops-fn's (mpirun, sshd) unless the target keeps its own; a root MPIJob keeps
// no fsGroup (it would make /root/.ssh group-readable), and its sshd its capabilities.
func (Kind) Clear(p *render.Plan, d *render.Deletions) {
	if !p.KeepsProgram() && d.Container == nil {
		d.Container = []string{"args"}
	}
	if p.Root() {
		if p.FSGroup == nil {
			d.PodSecurity = append(d.PodSecurity, "fsGroup", "fsGroupChangePolicy")
		}
		d.ContainerSecurity = append(d.ContainerSecurity, "capabilities")
	}
}

func (Kind) Facts() jobkind.Facts { return facts }

func (Kind) Object(_ *render.Plan, template render.Template) render.Job {
	return &kubeflow.MPIJob{Spec: kubeflow.MPIJobSpec{MPIReplicaSpecs: map[kubeflow.MPIReplicaType]*kubeflow.ReplicaSpec{
		kubeflow.MPIReplicaTypeLauncher: {Template: template(jobkind.Launcher)},
		kubeflow.MPIReplicaTypeWorker:   {Template: template(jobkind.Worker)},
	}}}
}

// FillProgram: the launcher runs mlops-fn's mpirun line or the script, with its own resources unless it takes
// part; the workers run sshd.
func (Kind) FillProgram(p *render.Plan, role jobkind.Role, _ *corev1.PodSpec, c *corev1.Container) {
	switch role {
	case jobkind.Launcher:
		switch {
		case p.Script:
			c.Command = append(slices.Clone(p.Command), p.Args...)
			c.Env = append(slices.Clone(c.Env), scriptEnv(p)...)
		case !p.KeepsProgram():
			c.Command = mpirun(p)
		}
		if !p.MPI.RunLauncherAsWorker {
			c.Resources.Limits, c.Resources.Requests = p.LauncherLimits, p.LauncherRequests
		}
	case jobkind.Worker:
		// sshd in the foreground; a non-root user brings its own config.
		switch {
		case p.MPI.WorkerCommand != nil:
			c.Command = p.MPI.WorkerCommand
		case p.KeepsProgram():
		case p.Root():
			c.Command = []string{"/usr/sbin/sshd", "-De"}
		default:
			c.Command = []string{"/usr/sbin/sshd", "-De", "-f", p.Home + "/.sshd_config"}
		}
	}
}

// PodSetGroup puts an MPIJob's launcher in its workers' topology domain: mpirun reaches each over ssh.
const PodSetGroup = "launcher-and-workers"

func (Kind) Group(*render.Plan, jobkind.Role) string { return PodSetGroup }

// Apart: the launcher, unless it takes part, only runs mpirun.
func (Kind) Apart(p *render.Plan, role jobkind.Role) bool {
	return role == jobkind.Launcher && !p.MPI.RunLauncherAsWorker
}

// OperatorVolumes are the mpi-operator v0.8's (pkg/controller's sshAuthVolume and configVolumeName).
func (Kind) OperatorVolumes(p *render.Plan) []render.OperatorVolume {
	return []render.OperatorVolume{
		{Name: "ssh-auth", Path: sshAuthMountPath(p), Owner: "the mpi-operator mounts the SSH keys"},
		{Name: "mpi-job-config", Path: path.Dir(OperatorHostfile), Owner: "the mpi-operator mounts the hostfile it writes"},
	}
}

// Gang: the workers and the launcher, but a WaitForWorkersReady launcher is created once the workers run.
func (Kind) Gang(p *render.Plan) (int32, string, int32) {
	if p.MPI.LauncherCreationPolicy == api.WaitForWorkersReady {
		return p.Workers, "the workers (WORKERS); the launcher is created once they run (spec.mpi.launcherCreationPolicy WaitForWorkersReady, the default; AtStartup creates it with them), so it cannot be one of the group", p.Workers
	}
	return p.Workers + 1, "the workers (WORKERS) and the launcher", 0
}

// FillJob sets the MPIJob's own fields.
func (Kind) FillJob(p *render.Plan, obj render.Job) {
	s := &obj.(*kubeflow.MPIJob).Spec
	s.SSHAuthMountPath = sshAuthMountPath(p)
	s.SlotsPerWorker = ptr.To(p.SlotsPerWorker)
	if p.MPI.RunLauncherAsWorker {
		s.RunLauncherAsWorker = ptr.To(true)
	}
	s.MPIImplementation = kubeflow.MPIImplementation(p.MPI.Implementation)
	s.LauncherCreationPolicy = kubeflow.LauncherCreationPolicy(p.MPI.LauncherCreationPolicy)
	p.FillRunPolicy(&s.RunPolicy)
	for t, n := range map[kubeflow.MPIReplicaType]int32{kubeflow.MPIReplicaTypeLauncher: 1, kubeflow.MPIReplicaTypeWorker: p.Workers} {
		s.MPIReplicaSpecs[t].Replicas = ptr.To(n)
		s.MPIReplicaSpecs[t].RestartPolicy = kubeflow.RestartPolicy(p.RestartPolicy)
	}
}

// sshAuthMountPath follows the mpi-operator's non-root pattern.
func sshAuthMountPath(p *render.Plan) string {
	if p.Root() {
		return "/root/.ssh"
	}
	return p.Home + "/.ssh"
}

// Ranks is mpirun's -np: every slot of every worker, and the launcher's when it takes part.
func Ranks(p *render.Plan) int32 {
	hosts := p.Workers
	if p.MPI.RunLauncherAsWorker {
		hosts++
	}
	return hosts * p.SlotsPerWorker
}

// mpirun is the launcher's command.
func mpirun(p *render.Plan) []string {
	np := strconv.Itoa(int(Ranks(p)))
	// Intel MPI and MPICH share the Hydra launcher's flags.
	cmd := []string{"mpirun", "-n", np}
	if p.MPI.Implementation == api.OpenMPI {
		// The operator sets only OpenMPI 4's OMPI_MCA_orte_default_hostfile, which OpenMPI 5 ignores: it would
		// start every rank on the launcher.
		cmd = []string{"mpirun", "-np", np, "--hostfile", OperatorHostfile}
		if p.Root() {
			cmd = slices.Insert(cmd, 1, "--allow-run-as-root")
		}
	}
	return slices.Concat(cmd, p.MPI.Args, forwardFlags(p, nil), p.Command, p.Args)
}

// scriptEnv is the launcher's environment for a script that starts mpirun itself, whatever its flags: the rank
// count, forwardEnv's pairs, and for OpenMPI 5 the hostfile, the names to forward and root's leave. Hydra reads
// the operator's HYDRA_HOST_FILE and forwards the whole environment by default.
func scriptEnv(p *render.Plan) []corev1.EnvVar {
	env := []corev1.EnvVar{{Name: ScriptRanks, Value: strconv.Itoa(int(Ranks(p)))}}
	// Only names the job sets: OpenMPI 5.0.7 aborts on an unset one (forwardEnv's LD_LIBRARY_PATH may be).
	names := envNames(p)
	_, pairs := rankEnv(p)
	for _, v := range pairs {
		name, value, _ := strings.Cut(v, "=")
		env = append(env, corev1.EnvVar{Name: name, Value: value})
		names = append(names, name)
	}
	if p.MPI.Implementation != api.OpenMPI {
		return env
	}
	env = append(env,
		corev1.EnvVar{Name: "PRTE_MCA_prte_default_hostfile", Value: OperatorHostfile},
		corev1.EnvVar{Name: "OMPI_MCA_mca_base_env_list", Value: strings.Join(names, ";")})
	if p.Root() {
		env = append(env, corev1.EnvVar{Name: "OMPI_ALLOW_RUN_AS_ROOT", Value: "1"}, corev1.EnvVar{Name: "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", Value: "1"})
	}
	return env
}
