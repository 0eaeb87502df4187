// SPDX-License-Identifier: Apache-2.0

// Package pytorchjob is the elastic job, training-operator v1.9's PyTorchJob: its facts, webhook, rendering and patching.
package pytorchjob

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	kubeflowv1 "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
)

var facts = jobkind.Facts{
	Kind: string(jobkind.PyTorchJob), APIVersion: kubeflowv1.SchemeGroupVersion.String(), PatchFile: "pytorchjob-patch.yaml",
	PodSpecs:          []jobkind.PodSpec{{Role: jobkind.Single, Path: []string{"spec", "pytorchReplicaSpecs", "Worker", "template", "spec"}}},
	ReferencePodSpecs: []string{"spec/pytorchReplicaSpecs/Master/template/spec", "spec/pytorchReplicaSpecs/Worker/template/spec"},
	// The training-operator sets the rendezvous variables in the container of this name only.
	ContainerName:    kubeflowv1.PyTorchJobDefaultContainerName,
	ContainerNameWhy: "the training-operator admits a PyTorchJob only with a container named " + kubeflowv1.PyTorchJobDefaultContainerName,
	Operator:         "the training-operator",
	Install:          []string{`kubectl apply --server-side -k "github.com/kubeflow/training-operator.git/manifests/overlays/standalone?ref=v1.9.4"`},
	Starter:          "torchrun",
	Brief:            "elastic",
	LogsFrom:         "its master, else worker 0 (an elastic job has no master)",
	Help:             "(elastic) a kubeflow.org/v1 PyTorchJob of workers with an\nelasticPolicy: torchrun between MIN_WORKERS and MAX_WORKERS",
	Carries:          []string{"imagePullPolicy", "workingDir", "priorityClassName", "hostNetwork", "restartPolicy", "workers", "elastic", "runPolicy.cleanPodPolicy", "runPolicy.ttlSecondsAfterFinished", "runPolicy.backoffLimit", "runPolicy.schedulingPolicy"},
	Fields: []jobkind.Field{{Path: "elastic", EnvKeys: []string{"MIN_WORKERS", "MAX_WORKERS", "RDZV_ENDPOINT"},
		Why: "torchrun's bounds and rendezvous in an elastic PyTorchJob; a TrainJob's runtime sets them in mlPolicy.torch"}},
	// The training-operator and torchrun re-form the group, as for a lost worker.
	Scale: &jobkind.Scale{
		Replicas: []string{"spec", "pytorchReplicaSpecs", "Worker", "replicas"},
		Min:      []string{"spec", "elasticPolicy", "minReplicas"},
		Max:      []string{"spec", "elasticPolicy", "maxReplicas"},
	},
	// An elastic group survives a lost worker only if its pod comes back.
	RestartPolicy: corev1.RestartPolicyOnFailure,
	// training-operator v1.9.4 marks an elastic PyTorchJob Succeeded when any worker completes; Running would
	// then delete the workers still finishing, rank 0 writing its checkpoint among them (seen in make e2e).
	CleanPodPolicy: string(kubeflowv1.CleanPodPolicyNone),
	PodsLabel:      kubeflowv1.JobNameLabel,
	ProgramPods: []string{
		kubeflowv1.ReplicaTypeLabel + "=master," + kubeflowv1.ReplicaIndexLabel + "=0",
		kubeflowv1.ReplicaTypeLabel + "=worker," + kubeflowv1.ReplicaIndexLabel + "=0",
	},
	PodNames: func(s jobkind.Shape) []string {
		return []string{fmt.Sprintf("%s-worker-%d", s.Name, max(s.MaxWorkers, s.Workers)-1)}
	},
	PodCount: func(obj map[string]any) int {
		return jobkind.Count(jobkind.ReplicaPods(obj, "spec", "pytorchReplicaSpecs"))
	},
	Pods: func(obj map[string]any) []jobkind.Pods {
		pods := jobkind.ReplicaPods(obj, "spec", "pytorchReplicaSpecs")
		// An elastic group starts with its minimum of workers.
		if least, ok := jobkind.Nested(obj, "spec", "elasticPolicy", "minReplicas").(int64); ok {
			for i := range pods {
				if pods[i].Role == string(kubeflowv1.PyTorchJobReplicaTypeWorker) {
					pods[i].Count = min(pods[i].Count, int(least))
				}
			}
		}
		return pods
	},
	SuspendPath:    []string{"spec", "runPolicy", "suspend"},
	KueueFramework: "kubeflow.org/pytorchjob",
	KueueOff:       true,
	Demo: jobkind.Demo{
		Image: "kubeflow/pytorch-elastic-example-echo:latest", About: "the training-operator's own example", Command: []string{"python", "-m", "torch.distributed.run", "/workspace/echo.py"},
		CommandNote: "the torchrun line; the training-operator passes it the rendezvous",
		Shape:       "WORKERS=2\nMIN_WORKERS=1\nMAX_WORKERS=3\n" + jobkind.DemoResources,
	},
	New:      func() any { return &kubeflowv1.PyTorchJob{} },
	Validate: func(obj any) field.ErrorList { return pyTorchJobWebhook(obj.(*kubeflowv1.PyTorchJob)) },
}

// Default: torchrun's own c10d rendezvous, on worker 0.
func (Kind) Default(s *api.MLOpsJobSpec) {
	s.Elastic.RendezvousBackend = cmp.Or(s.Elastic.RendezvousBackend, "c10d")
}

// Validate checks spec.elastic: its bounds, backend and run id.
func (Kind) Validate(s *api.MLOpsJobSpec, spec *field.Path) field.ErrorList {
	e, p := s.Elastic, spec.Child("elastic")
	var errs field.ErrorList
	errs = append(errs, api.IntRange(p.Child("minWorkers"), e.MinWorkers, 1, api.MaxWorkers)...)
	errs = append(errs, api.IntRange(p.Child("maxWorkers"), e.MaxWorkers, 1, api.MaxWorkers)...)
	errs = append(errs, api.IntRange(p.Child("maxRestarts"), e.MaxRestarts, 0, 1000)...)
	errs = append(errs, api.IntRange(p.Child("procsPerWorker"), e.ProcsPerWorker, 1, api.MaxSlots)...)
	errs = append(errs, api.OneOf(p.Child("rendezvousBackend"), e.RendezvousBackend, "c10d", "etcd", "etcd-v2")...)
	errs = append(errs, api.IfSet(p.Child("runId"), e.RunID, validation.IsDNS1123Subdomain)...)
	return errs
}

// pyTorchJobWebhook is training-operator v1.9.4's validatePyTorchJob. Its exported ValidateCreate would link
// controller-runtime and client-go's typed clients (11 MB) into the image: TestPyTorchJobWebhookAgrees runs it beside this.
func pyTorchJobWebhook(job *kubeflowv1.PyTorchJob) field.ErrorList {
	errs := jobkind.NameIsDNS1035Label(job.Name)
	spec := field.NewPath("spec")
	managers := []string{kubeflowv1.KubeflowJobsController, kubeflowv1.MultiKueueController}
	if m := job.Spec.RunPolicy.ManagedBy; m != nil && !slices.Contains(managers, *m) {
		errs = append(errs, field.NotSupported(spec.Child("runPolicy", "managedBy"), *m, managers))
	}
	replicas := spec.Child("pytorchReplicaSpecs")
	if e := job.Spec.ElasticPolicy; e != nil {
		if _, ok := job.Spec.PyTorchReplicaSpecs[kubeflowv1.PyTorchJobReplicaTypeWorker]; !ok {
			errs = append(errs, field.Required(replicas.Key(string(kubeflowv1.PyTorchJobReplicaTypeWorker)), "a Worker replica spec, as spec.elasticPolicy scales the workers"))
		}
		if e.NProcPerNode != nil && job.Spec.NprocPerNode != nil {
			errs = append(errs, field.Forbidden(spec.Child("elasticPolicy", "nProcPerNode"), "must not be used with spec.nprocPerNode"))
		}
	}
	if job.Spec.PyTorchReplicaSpecs == nil {
		errs = append(errs, field.Required(replicas, "a Worker (and optionally a Master) replica spec"))
	}
	for _, t := range slices.Sorted(maps.Keys(job.Spec.PyTorchReplicaSpecs)) {
		r, role := job.Spec.PyTorchReplicaSpecs[t], replicas.Key(string(t))
		containers := role.Child("template", "spec", "containers")
		if t != kubeflowv1.PyTorchJobReplicaTypeWorker && t != kubeflowv1.PyTorchJobReplicaTypeMaster {
			errs = append(errs, field.NotSupported(role, string(t), []string{"Master", "Worker"}))
		}
		if r == nil || len(r.Template.Spec.Containers) == 0 {
			errs = append(errs, field.Required(containers, "a container named "+kubeflowv1.PyTorchJobDefaultContainerName))
			continue
		}
		var names []string
		for i, c := range r.Template.Spec.Containers {
			if c.Image == "" {
				errs = append(errs, field.Required(containers.Index(i).Child("image"), "an image reference"))
			}
			names = append(names, c.Name)
		}
		if !slices.Contains(names, kubeflowv1.PyTorchJobDefaultContainerName) {
			errs = append(errs, field.Invalid(containers, strings.Join(names, ", "), "the training-operator admits a PyTorchJob only with a container named "+
				kubeflowv1.PyTorchJobDefaultContainerName+"; accepted: the training container named "+kubeflowv1.PyTorchJobDefaultContainerName))
		}
		switch {
		case t == kubeflowv1.PyTorchJobReplicaTypeMaster && (r.Replicas == nil || *r.Replicas != 1):
			errs = append(errs, field.Forbidden(role.Child("replicas"), "a Master has exactly 1 replica"))
		case t != kubeflowv1.PyTorchJobReplicaTypeMaster && r.Replicas != nil && *r.Replicas < 1:
			errs = append(errs, field.Forbidden(role.Child("replicas"), "at least 1 replica"))
		}
	}
	return errs
}
