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

// KindField is a spec field that only some kinds can carry (each kind lists
// those it does: jobkind.Facts.Carries), with the mlops.env keys that set it.
// Set in another kind it is refused, never dropped; its keys there are warned
// about (a site's mlops.env is shared).
type KindField struct {
	Path    []string
	EnvKeys []string
	set     func(*MLOpsJobSpec) bool
	// why says what the field is for, and where the kinds that lack it keep it.
	why string
}

// Anything else the spec holds every kind carries (runPolicy.activeDeadlineSeconds
// too: a Pod's, a TrainJob's own, the operators' runPolicy).
var kindFields = []KindField{
	{Path: []string{"imagePullPolicy"}, set: func(s *MLOpsJobSpec) bool { return s.ImagePullPolicy != "" },
		why: trainJobLacks + "the training runtime's container sets it"},
	{Path: []string{"workingDir"}, set: func(s *MLOpsJobSpec) bool { return s.WorkingDir != "" },
		why: trainJobLacks + "the training runtime's container sets it"},
	{Path: []string{"priorityClassName"}, set: func(s *MLOpsJobSpec) bool { return s.PriorityClassName != "" },
		why: trainJobLacks + "the training runtime's pod template sets it, or Kueue's priority-class label on the job: spec.workloadPriorityClass"},
	{Path: []string{"hostNetwork"}, set: func(s *MLOpsJobSpec) bool { return s.HostNetwork },
		why: trainJobLacks + "the training runtime's pod template sets it"},
	{Path: []string{"restartPolicy"}, set: func(s *MLOpsJobSpec) bool { return s.RestartPolicy != "" },
		why: "the pods' restart policy, which a TrainJob's training runtime sets"},
	{Path: []string{"workers"}, EnvKeys: []string{"WORKERS"}, set: func(s *MLOpsJobSpec) bool { return s.Workers != nil },
		why: "the number of worker pods; a single-node job is one Pod"},
	{Path: []string{"slotsPerWorker"}, EnvKeys: []string{"SLOTS_PER_WORKER"}, set: func(s *MLOpsJobSpec) bool { return s.SlotsPerWorker != nil },
		why: "the MPI ranks, or a TrainJob's processes, on each worker; a Pod runs its command once, an elastic job's torchrun takes spec.elastic.procsPerWorker"},
	{Path: []string{"launcherResources"}, set: func(s *MLOpsJobSpec) bool { return s.LauncherResources != nil },
		why: "the resources of an MPIJob's launcher, which runs mpirun; a TrainJob's MPI runtime sizes its own launcher"},
	// USER_NAME names the user in every kind's image too: a shared mlops.env keeps it unwarned.
	{Path: []string{"security", "home"}, set: func(s *MLOpsJobSpec) bool { return s.Security.Home != "" },
		why: "where the mpi-operator mounts an MPIJob's SSH keys; a TrainJob's MPI runtime sets its own in mlPolicy.mpi"},
	{Path: []string{"mpi"}, set: func(s *MLOpsJobSpec) bool { return !reflect.DeepEqual(s.MPI, MPI{}) },
		why: "mpirun and the workers' sshd of an MPIJob; a TrainJob's MPI runtime sets them in mlPolicy.mpi"},
	{Path: []string{"elastic"}, EnvKeys: []string{"MIN_WORKERS", "MAX_WORKERS", "RDZV_ENDPOINT"}, set: func(s *MLOpsJobSpec) bool { return !reflect.DeepEqual(s.Elastic, Elastic{}) },
		why: "torchrun's bounds and rendezvous in an elastic PyTorchJob; a TrainJob's runtime sets them in mlPolicy.torch"},
	{Path: []string{"trainer"}, set: func(s *MLOpsJobSpec) bool { return !reflect.DeepEqual(s.Trainer, Trainer{}) },
		why: "the runtime and replicated jobs of a TrainJob"},
	{Path: []string{"runPolicy", "cleanPodPolicy"}, set: func(s *MLOpsJobSpec) bool { return s.RunPolicy.CleanPodPolicy != "" },
		why: "the pods an operator deletes when its job ends; a TrainJob's runtime owns them"},
	{Path: []string{"runPolicy", "ttlSecondsAfterFinished"}, set: func(s *MLOpsJobSpec) bool { return s.RunPolicy.TTLSecondsAfterFinished != nil },
		why: "how long an operator keeps its finished job; a TrainJob's runtime owns it"},
	{Path: []string{"runPolicy", "backoffLimit"}, set: func(s *MLOpsJobSpec) bool { return s.RunPolicy.BackoffLimit != nil },
		why: "how often an operator retries its failed job; a Pod's containers restart by spec.restartPolicy, a TrainJob's runtime sets its own"},
	{Path: []string{"runPolicy", "schedulingPolicy"}, set: func(s *MLOpsJobSpec) bool { return s.RunPolicy.SchedulingPolicy != nil },
		why: "gang scheduling of a job's pods: a Pod has no gang, a TrainJob's runtime sets its podGroupPolicy"},
}

const trainJobLacks = "Kubeflow Trainer's TrainJob and its runtimePatches have no such field: "

// KindFields are the fields only some kinds carry (docs/job-spec.md's table).
func KindFields() []KindField { return slices.Clone(kindFields) }

// Carries says whether kind k carries the spec field at path (dotted,
// without "spec."): a field of the table that lists other kinds does not.
func Carries(k jobkind.Facts, path string) bool {
	for _, f := range kindFields {
		if strings.Join(f.Path, ".") == path {
			return slices.Contains(k.Carries, path)
		}
	}
	return true
}

// EnvKeysNotCarried are the mlops.env keys kind k renders nothing from: they
// set fields it cannot carry.
func EnvKeysNotCarried(k jobkind.Facts) []string {
	var keys []string
	for _, f := range kindFields {
		if !Carries(k, strings.Join(f.Path, ".")) {
			keys = append(keys, f.EnvKeys...)
		}
	}
	return keys
}

// notCarried refuses each field set that the spec's jobKind cannot carry.
func (s *MLOpsJobSpec) notCarried(p *field.Path, kinds jobkind.Table) field.ErrorList {
	k := kinds.Of(s.JobKind)
	if k.Kind == "" {
		return nil // an unknown jobKind, refused as such
	}
	var errs field.ErrorList
	for _, f := range kindFields {
		path := strings.Join(f.Path, ".")
		if Carries(k, path) || !f.set(s) {
			continue
		}
		fp := p.Child(f.Path[0], f.Path[1:]...)
		errs = append(errs, field.Forbidden(fp, fmt.Sprintf("jobKind %s cannot carry it (%s); accepted: no %s, or jobKind %s",
			s.JobKind, f.why, fp, orList(carriers(kinds, path)))))
	}
	return errs
}

// carriers are the kinds that carry the spec field at path.
func carriers(kinds jobkind.Table, path string) []string {
	var out []string
	for _, k := range kinds {
		if slices.Contains(k.Carries, path) {
			out = append(out, k.Kind)
		}
	}
	return out
}

// orList: "a", "a or b", "a, b or c".
func orList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}
