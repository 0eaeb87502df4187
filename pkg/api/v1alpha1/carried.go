// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
)

// ModeField is a spec field that only some modes' kinds can carry, with the
// mlops.env keys that set it. Set in another mode it is refused, never
// dropped; its keys there are warned about (a site's mlops.env is shared).
type ModeField struct {
	Path    []string
	EnvKeys []string
	Modes   []Mode
	set     func(*MLOpsJobSpec) bool
	// why says what the field is for, and where the kinds that lack it keep it.
	why string
}

// Anything else the spec holds every mode carries (runPolicy.activeDeadlineSeconds
// too: a Pod's, a TrainJob's own, the operators' runPolicy).
var modeFields = []ModeField{
	{Path: []string{"imagePullPolicy"}, Modes: podTemplateModes, set: func(s *MLOpsJobSpec) bool { return s.ImagePullPolicy != "" },
		why: trainJobLacks + "the training runtime's container sets it"},
	{Path: []string{"workingDir"}, Modes: podTemplateModes, set: func(s *MLOpsJobSpec) bool { return s.WorkingDir != "" },
		why: trainJobLacks + "the training runtime's container sets it"},
	{Path: []string{"priorityClassName"}, Modes: podTemplateModes, set: func(s *MLOpsJobSpec) bool { return s.PriorityClassName != "" },
		why: trainJobLacks + "the training runtime's pod template sets it, or Kueue's priority-class label on the job: spec.workloadPriorityClass"},
	{Path: []string{"hostNetwork"}, Modes: podTemplateModes, set: func(s *MLOpsJobSpec) bool { return s.HostNetwork },
		why: trainJobLacks + "the training runtime's pod template sets it"},
	{Path: []string{"restartPolicy"}, Modes: podTemplateModes, set: func(s *MLOpsJobSpec) bool { return s.RestartPolicy != "" },
		why: "the pods' restart policy, which a TrainJob's training runtime sets"},
	{Path: []string{"workers"}, EnvKeys: []string{"WORKERS"}, Modes: []Mode{ModeMultiNode, ModeElastic, ModeTrainJob}, set: func(s *MLOpsJobSpec) bool { return s.Workers != nil },
		why: "the number of worker pods; a single-node job is one Pod"},
	{Path: []string{"slotsPerWorker"}, EnvKeys: []string{"SLOTS_PER_WORKER"}, Modes: []Mode{ModeMultiNode, ModeTrainJob}, set: func(s *MLOpsJobSpec) bool { return s.SlotsPerWorker != nil },
		why: "the MPI ranks, or a TrainJob's processes, on each worker; a Pod runs its command once, an elastic job's torchrun takes spec.elastic.procsPerWorker"},
	{Path: []string{"launcherResources"}, Modes: []Mode{ModeMultiNode}, set: func(s *MLOpsJobSpec) bool { return s.LauncherResources != nil },
		why: "the resources of an MPIJob's launcher, which runs mpirun; a TrainJob's MPI runtime sizes its own launcher"},
	// USER_NAME names the user in every mode's image too: a shared mlops.env keeps it unwarned.
	{Path: []string{"security", "home"}, Modes: []Mode{ModeMultiNode}, set: func(s *MLOpsJobSpec) bool { return s.Security.Home != "" },
		why: "where the mpi-operator mounts an MPIJob's SSH keys; a TrainJob's MPI runtime sets its own in mlPolicy.mpi"},
	{Path: []string{"mpi"}, Modes: []Mode{ModeMultiNode}, set: func(s *MLOpsJobSpec) bool { return !reflect.DeepEqual(s.MPI, MPI{}) },
		why: "mpirun and the workers' sshd of an MPIJob; a TrainJob's MPI runtime sets them in mlPolicy.mpi"},
	{Path: []string{"elastic"}, EnvKeys: []string{"MIN_WORKERS", "MAX_WORKERS", "RDZV_ENDPOINT"}, Modes: []Mode{ModeElastic}, set: func(s *MLOpsJobSpec) bool { return !reflect.DeepEqual(s.Elastic, Elastic{}) },
		why: "torchrun's bounds and rendezvous in an elastic PyTorchJob; a TrainJob's runtime sets them in mlPolicy.torch"},
	{Path: []string{"trainer"}, Modes: []Mode{ModeTrainJob}, set: func(s *MLOpsJobSpec) bool { return !reflect.DeepEqual(s.Trainer, Trainer{}) },
		why: "the runtime and replicated jobs of a TrainJob"},
	{Path: []string{"runPolicy", "cleanPodPolicy"}, Modes: operated, set: func(s *MLOpsJobSpec) bool { return s.RunPolicy.CleanPodPolicy != "" },
		why: "the pods an operator deletes when its job ends; a TrainJob's runtime owns them"},
	{Path: []string{"runPolicy", "ttlSecondsAfterFinished"}, Modes: operated, set: func(s *MLOpsJobSpec) bool { return s.RunPolicy.TTLSecondsAfterFinished != nil },
		why: "how long an operator keeps its finished job; a TrainJob's runtime owns it"},
	{Path: []string{"runPolicy", "backoffLimit"}, Modes: operated, set: func(s *MLOpsJobSpec) bool { return s.RunPolicy.BackoffLimit != nil },
		why: "how often an operator retries its failed job; a Pod's containers restart by spec.restartPolicy, a TrainJob's runtime sets its own"},
	{Path: []string{"runPolicy", "schedulingPolicy"}, Modes: operated, set: func(s *MLOpsJobSpec) bool { return s.RunPolicy.SchedulingPolicy != nil },
		why: "gang scheduling of a job's pods: a Pod has no gang, a TrainJob's runtime sets its podGroupPolicy"},
}

var (
	// podTemplateModes are the modes whose kinds hold their pod templates (a
	// TrainJob's are its training runtime's).
	podTemplateModes = []Mode{ModeSingleNode, ModeMultiNode, ModeElastic}
	// operated are the modes whose kind has the operators' runPolicy.
	operated = []Mode{ModeMultiNode, ModeElastic}
)

const trainJobLacks = "Kubeflow Trainer's TrainJob and its runtimePatches have no such field: "

// ModeFields are the fields only some modes carry (docs/job-spec.md's table).
func ModeFields() []ModeField { return slices.Clone(modeFields) }

// Carries says whether mode's kind carries the spec field at path (dotted,
// without "spec."): a field of the table that lists other modes does not.
func Carries(mode Mode, path string) bool {
	for _, f := range modeFields {
		if strings.Join(f.Path, ".") == path {
			return slices.Contains(f.Modes, mode)
		}
	}
	return true
}

// EnvKeysNotCarried are the mlops.env keys mode renders nothing from: they
// set fields its kind cannot carry.
func EnvKeysNotCarried(mode Mode) []string {
	var keys []string
	for _, f := range modeFields {
		if !slices.Contains(f.Modes, mode) {
			keys = append(keys, f.EnvKeys...)
		}
	}
	return keys
}

// notCarried refuses each field set that the spec's mode cannot carry.
func (s *MLOpsJobSpec) notCarried(p *field.Path) field.ErrorList {
	k := jobkind.ForMode(s.JobKind)
	if k.Kind == "" {
		return nil // an unknown mode, refused as such
	}
	var errs field.ErrorList
	for _, f := range modeFields {
		if slices.Contains(f.Modes, s.JobKind) || !f.set(s) {
			continue
		}
		fp := p.Child(f.Path[0], f.Path[1:]...)
		errs = append(errs, field.Forbidden(fp, fmt.Sprintf("jobKind %s cannot carry it (%s); accepted: no %s, or jobKind %s",
			s.JobKind, f.why, fp, orList(f.Modes))))
	}
	return errs
}

// orList: "a", "a or b", "a, b or c".
func orList(modes []Mode) string {
	s := make([]string, len(modes))
	for i, m := range modes {
		s[i] = string(m)
	}
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}
