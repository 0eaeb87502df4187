package processor

import (
	"maps"
	"slices"
	"strings"

	kubeflow "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	"github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/validation"
	kubeflowv1 "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Check decodes a patched object into its upstream Go type, unknown fields
// disallowed, and runs the mpi-operator's validation on an MPIJob and the
// training-operator's webhook rules on a PyTorchJob: what the API server and
// the operators would refuse is refused here, with its field.
func Check(n *yaml.RNode) field.ErrorList {
	b, err := n.MarshalJSON()
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	switch n.GetKind() {
	case "MPIJob":
		job := &kubeflow.MPIJob{}
		if errs := strictDecode(b, job, "kubeflow.org/v2beta1 MPIJob"); len(errs) > 0 {
			return errs
		}
		errs := validation.ValidateMPIJob(job)
		for t := range job.Spec.MPIReplicaSpecs {
			if t != kubeflow.MPIReplicaTypeLauncher && t != kubeflow.MPIReplicaTypeWorker {
				errs = append(errs, field.NotSupported(field.NewPath("spec", "mpiReplicaSpecs"), string(t), []string{"Launcher", "Worker"}))
			}
		}
		return errs
	case "Pod":
		return strictDecode(b, &corev1.Pod{}, "v1 Pod")
	case kubeflowv1.PyTorchJobKind:
		job := &kubeflowv1.PyTorchJob{}
		if errs := strictDecode(b, job, "kubeflow.org/v1 PyTorchJob"); len(errs) > 0 {
			return errs
		}
		return pyTorchJobWebhook(job)
	}
	return nil
}

// pyTorchJobWebhook is the admission check of training-operator v1.8.1
// (pkg/webhooks/pytorch/pytorchjob_webhook.go, unexported there).
func pyTorchJobWebhook(job *kubeflowv1.PyTorchJob) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range apivalidation.NameIsDNS1035Label(job.Name, false) {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), job.Name, msg))
	}
	spec := field.NewPath("spec")
	if e := job.Spec.ElasticPolicy; e != nil && e.NProcPerNode != nil && job.Spec.NprocPerNode != nil {
		errs = append(errs, field.Forbidden(spec.Child("elasticPolicy", "nProcPerNode"), "must not be used with spec.nprocPerNode"))
	}
	replicas := spec.Child("pytorchReplicaSpecs")
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
		if t == kubeflowv1.PyTorchJobReplicaTypeMaster && (r.Replicas == nil || *r.Replicas != 1) {
			errs = append(errs, field.Forbidden(role.Child("replicas"), "a Master has exactly 1 replica"))
		}
	}
	return errs
}

func strictDecode(b []byte, into any, kind string) field.ErrorList {
	accepted := "the fields of " + kind
	strict, err := sigsjson.UnmarshalStrict(b, into)
	if err != nil {
		return field.ErrorList{decodeError(err, accepted)}
	}
	var errs field.ErrorList
	for _, e := range strict {
		errs = append(errs, decodeError(e, accepted))
	}
	return errs
}
