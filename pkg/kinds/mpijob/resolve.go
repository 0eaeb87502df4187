// SPDX-License-Identifier: Apache-2.0

package mpijob

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/render"
)

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
