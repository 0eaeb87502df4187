// SPDX-License-Identifier: Apache-2.0

package mpijob

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	kubeflow "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/jobnode"
	"github.com/mlops-fn/mlops-fn/pkg/render"
)

// Narrow: a launcher's own resources stay over the default; a non-root target needs its uid; a kept mpirun
// line gets its rank count.
func (Kind) Narrow(target *yaml.RNode, q *render.Plan, _ string) error {
	if q.LauncherLimitsDefault && ownResources(target, q.ContainerOf(jobkind.Launcher)) {
		q.LauncherLimits, q.LauncherRequests = nil, nil
	}
	if nonRoot, uid := targetNonRoot(target); q.RunAsUser == nil && nonRoot != "" {
		accepted := "USER_ID"
		if uid != "" {
			accepted += "=" + uid
		}
		return fmt.Errorf("%s, but USER_ID is not set, so mlops-fn would render root's SSH setup (/root/.ssh, a root sshd); accepted: %s (and USER_NAME) in mlops.env, or spec.security.runAsUser", nonRoot, accepted)
	}
	if !q.KeepsProgram() {
		return nil
	}
	if err := keptProgram(target, q); err != nil {
		return err
	}
	ref, line, err := launcherRanks(target, q.Containers[jobkind.Launcher], q.Sidecars[jobkind.Launcher], Ranks(q))
	if err != nil {
		return err
	}
	kept := &keptLine{ranks: ref}
	if q.MPI.Implementation == api.OpenMPI && !namesHosts(line) {
		// OpenMPI 5 ignores the operator's hostfile variable.
		kept.insert = []string{"--hostfile", OperatorHostfile}
	}
	kept.insert = append(kept.insert, forwardFlagsBeyond(q, line)...)
	q.Kept = kept
	return nil
}

// keptLine is where a kept launcher line holds its rank count, and what mlops-fn inserts after it.
type keptLine struct {
	ranks  ArgumentRef
	insert []string
}

// AfterPatch sets the rank count of a kept launcher line, and inserts what it adds after it.
func (Kind) AfterPatch(job *yaml.RNode, q *render.Plan) error {
	kept, ok := q.Kept.(*keptLine)
	if !ok {
		return nil
	}
	ref := kept.ranks
	list, err := job.Pipe(yaml.Lookup(append(launcherPodSpec(), "containers", "[name="+q.Containers[jobkind.Launcher]+"]", ref.Field)...))
	if err != nil || list == nil || ref.Index >= len(list.Content()) {
		return fmt.Errorf("the launcher's %s[%d] is gone: %v", ref.Field, ref.Index, err)
	}
	n := list.Content()[ref.Index]
	n.Value, n.Tag, n.Style = strconv.Itoa(int(Ranks(q))), yaml.NodeTagString, yaml.DoubleQuotedStyle
	for i, item := range kept.insert {
		list.YNode().Content = slices.Insert(list.Content(), ref.Index+1+i, yaml.NewStringRNode(item).YNode())
	}
	return nil
}

// ownResources: the target's launcher container has limits or requests of its own.
func ownResources(target *yaml.RNode, container string) bool {
	c, err := target.Pipe(yaml.Lookup(append(launcherPodSpec(), "containers", "[name="+container+"]", "resources")...))
	if err != nil || c == nil {
		return false
	}
	for _, f := range []string{"limits", "requests"} {
		if v := c.Field(f); v != nil && len(v.Value.YNode().Content) > 0 {
			return true
		}
	}
	return false
}

// keptProgram refuses what a kept launcher line would lose (spec args and mpirun flags) or contradict (the
// target's MPI implementation, slots or launcher-as-worker).
func keptProgram(target *yaml.RNode, q *render.Plan) error {
	switch {
	case len(q.Args) > 0:
		return fmt.Errorf("keeps its launcher's mpirun line (the spec has no command), so spec.args %q would be lost; accepted: spec.command with them (mlops-fn then writes the mpirun line), or no spec.args", q.Args)
	case !slices.Equal(q.MPI.Args, api.DefaultMPIArgs) && q.MPI.Implementation == api.OpenMPI || q.MPI.Implementation != api.OpenMPI && len(q.MPI.Args) > 0:
		return fmt.Errorf("keeps its launcher's mpirun line (the spec has no command), so spec.mpi.args %q would be lost; accepted: spec.command (mlops-fn then writes the mpirun line), or no spec.mpi.args", q.MPI.Args)
	}
	for _, f := range []struct{ field, have, want, fix string }{
		{"mpiImplementation", jobnode.Scalar(target, "spec", "mpiImplementation"), string(q.MPI.Implementation), "spec.mpi.implementation: %s"},
		{"slotsPerWorker", jobnode.Scalar(target, "spec", "slotsPerWorker"), strconv.Itoa(int(q.SlotsPerWorker)), "SLOTS_PER_WORKER=%s in mlops.env (or spec.slotsPerWorker)"},
		{"runLauncherAsWorker", jobnode.Scalar(target, "spec", "runLauncherAsWorker"), strconv.FormatBool(q.MPI.RunLauncherAsWorker),
			"spec.mpi.runLauncherAsWorker: %s"},
	} {
		if f.have != "" && f.have != f.want {
			return fmt.Errorf("has %s: %s, and mlops-fn would render %s (its rank count and the operator's hostfile follow it); accepted: "+f.fix, f.field, f.have, f.want, f.have)
		}
	}
	return nil
}

// orSpecCommand ends what a kept launcher line may be instead.
const orSpecCommand = "or spec.command (mlops-fn then writes the mpirun line)"

// launcherRanks finds the rank count in the kept mpirun line of the target's launcher container, and the line;
// others are the launcher's other containers.
func launcherRanks(target *yaml.RNode, container string, others []string, ranks int32) (ArgumentRef, []string, error) {
	c, err := target.Pipe(yaml.Lookup(append(launcherPodSpec(), "containers", "[name="+container+"]")...))
	if err != nil || c == nil {
		return ArgumentRef{}, nil, fmt.Errorf("has no launcher container %q; accepted: an MPIJob with a launcher, or spec.command", container)
	}
	commandList, _ := c.GetSlice("command")
	argsList, _ := c.GetSlice("args")
	command, args := toStrings(commandList), toStrings(argsList)
	line := slices.Concat(command, args)
	text := strings.Join(line, " ")
	// The rank counts as written ("-np 4"): a line with two runs with whichever mpirun reads last.
	var counts []string
	for _, i := range rankCounts(line) {
		counts = append(counts, line[i-1]+" "+line[i])
	}
	_, unknown := mpirunFlags(line)
	ref, found := RanksArgument(command, args)
	switch joined := joinedRankCount(line); {
	case text == "":
		err = fmt.Errorf("the launcher's container %s has no command or args, so no mpirun line whose ranks mlops-fn could set to workers × slots (%d); accepted: %s", container, ranks, launcherLineWaysOut(container, others))
	case joined != "":
		err = fmt.Errorf("the launcher runs %q, whose rank count is written in one item with its flag (%s), where mlops-fn cannot set it to workers × slots (%d); accepted: the flag and the count as two items (-np, \"4\"), %s", text, joined, ranks, orSpecCommand)
	case len(counts) > 1:
		err = fmt.Errorf("the launcher runs %q, whose mpirun has %d rank counts (%s): mlops-fn sets one, and mpirun would read another; accepted: one -np N (or -n N) in the launcher's command or args, %s", text, len(counts), strings.Join(counts, ", "), orSpecCommand)
	case unknown != "":
		// Where it takes values, mpirun's options end somewhere mlops-fn cannot tell.
		err = fmt.Errorf("the launcher runs %q, whose mpirun option %s is none of OpenMPI 5's or MPICH Hydra's (docs/job-spec.md, \"A launcher's own mpirun line\"): mlops-fn cannot tell how many values it takes, so where mpirun's options end and its rank count is; accepted: mpirun's own options, each as one item or with its values as the next items, %s", text, strconv.Quote(unknown), orSpecCommand)
	case found:
		return ref, line, nil
	case slices.ContainsFunc(line, func(tok string) bool { return strings.Contains(tok, " ") && strings.Contains(tok, "mpirun") }):
		err = fmt.Errorf("the launcher runs mpirun inside a shell string (%s), which mlops-fn does not edit, so its ranks would not follow workers × slots (%d); accepted: mpirun and -np N as items of the launcher's command or args, where mlops-fn sets N, %s", strconv.Quote(text), ranks, orSpecCommand)
	default:
		err = fmt.Errorf("the launcher's container %s runs %q, with no -np N among mpirun's own options (before the program), so its ranks would not follow workers × slots (%d); accepted: %s", container, text, ranks, launcherLineWaysOut(container, others))
	}
	return ArgumentRef{}, nil, err
}

// launcherLineWaysOut is what is accepted instead of a launcher container that runs no mpirun -np N: where a
// sidecar comes first, spec.containerName naming the container that runs mpirun.
func launcherLineWaysOut(container string, others []string) string {
	naming := ""
	switch len(others) {
	case 0:
	case 1:
		naming = fmt.Sprintf("spec.containerName: %s, if that container runs mpirun (the patch then moves it first), ", others[0])
	default:
		naming = fmt.Sprintf("spec.containerName naming the one of %s that runs mpirun (the patch then moves it first), ", strings.Join(others, ", "))
	}
	return fmt.Sprintf("%smpirun -np N (or -n N) in the command or args of container %s, where mlops-fn sets N, %s", naming, container, orSpecCommand)
}

func toStrings(list []any) []string {
	out := make([]string, len(list))
	for i, v := range list {
		out[i] = fmt.Sprint(v)
	}
	return out
}

func launcherPodSpec() []string { return facts.PodSpecPath(jobkind.Launcher) }

// targetNonRoot says where the target's securityContexts ask for a non-root user, and the uid if given.
func targetNonRoot(target *yaml.RNode) (where, uid string) {
	for _, spec := range jobnode.PodSpecs(facts, target) {
		contexts := []*yaml.RNode{spec}
		if list, _ := spec.Pipe(yaml.Lookup("containers")); list != nil {
			elems, _ := list.Elements()
			contexts = append(contexts, elems...)
		}
		for _, n := range contexts {
			sc := n.Field("securityContext")
			if sc == nil || sc.Value.YNode().Kind != yaml.MappingNode {
				continue
			}
			if v := sc.Value.Field("runAsUser"); v != nil && v.Value.YNode().Kind == yaml.ScalarNode && v.Value.YNode().Value != "0" {
				return "the pods run as runAsUser " + v.Value.YNode().Value, v.Value.YNode().Value
			}
			if v := sc.Value.Field("runAsNonRoot"); v != nil && v.Value.YNode().Value == "true" {
				return "the pods ask for runAsNonRoot", ""
			}
		}
	}
	return "", ""
}

// JSONPatch is AfterPatch for a hydrated overlay: it tests that the launcher container and the flag stand
// where the patches put them, so that a base edited since fails loudly.
func (Kind) JSONPatch(q *render.Plan) (string, []any) {
	kept, ok := q.Kept.(*keptLine)
	if !ok {
		return "", nil
	}
	ref := kept.ranks
	at := fmt.Sprintf("/%s/containers/%d", strings.Join(launcherPodSpec(), "/"), render.TrainingContainerIndex)
	ops := []any{
		map[string]any{"op": "test", "path": at + "/name", "value": q.Containers[jobkind.Launcher]},
		map[string]any{"op": "test", "path": fmt.Sprintf("%s/%s/%d", at, ref.FlagAt.Field, ref.FlagAt.Index), "value": ref.Flag},
		map[string]any{"op": "replace", "path": fmt.Sprintf("%s/%s/%d", at, ref.Field, ref.Index), "value": strconv.Itoa(int(Ranks(q)))},
	}
	for i, v := range kept.insert {
		ops = append(ops, map[string]any{"op": "add", "path": fmt.Sprintf("%s/%s/%d", at, ref.Field, ref.Index+1+i), "value": v})
	}
	return "launcher-ranks-patch.yaml", ops
}

// PodTemplates are an MPIJob's pod specs, by replica type.
func (Kind) PodTemplates(obj any) []jobnode.PodTemplate {
	o, ok := obj.(*kubeflow.MPIJob)
	if !ok {
		return nil
	}
	var pods []jobnode.PodTemplate
	for _, rt := range slices.Sorted(maps.Keys(o.Spec.MPIReplicaSpecs)) {
		if r := o.Spec.MPIReplicaSpecs[rt]; r != nil { // not Master: Check refuses it
			role := jobkind.Role(rt)
			pods = append(pods, jobnode.PodTemplate{Path: "spec.mpiReplicaSpecs." + string(rt) + ".template.spec", Meta: r.Template.ObjectMeta,
				Spec: r.Template.Spec, Filled: role == jobkind.Launcher || role == jobkind.Worker, Role: role})
		}
	}
	return pods
}
