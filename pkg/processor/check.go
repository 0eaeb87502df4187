package processor

import (
	kubeflow "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	"github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/validation"
	kubeflowv1 "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// check decodes a patched object into its upstream Go type, unknown fields
// disallowed, and runs the mpi-operator's own validation on an MPIJob: what
// the API server and the operator would refuse is refused here, with its field.
func check(n *yaml.RNode) field.ErrorList {
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
		errs := strictDecode(b, job, "kubeflow.org/v1 PyTorchJob")
		for t := range job.Spec.PyTorchReplicaSpecs {
			if t != kubeflowv1.PyTorchJobReplicaTypeWorker && t != kubeflowv1.PyTorchJobReplicaTypeMaster {
				errs = append(errs, field.NotSupported(field.NewPath("spec", "pytorchReplicaSpecs"), string(t), []string{"Master", "Worker"}))
			}
		}
		return errs
	}
	return nil
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
