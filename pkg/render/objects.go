package render

import (
	"strconv"
	"strings"

	kubeflow "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
)

// Patch files of an overlay, in the order the kustomization lists them.
const (
	MPIJobPatchFile          = "mpijob-patch.yaml"
	PodPatchFile             = "pod-patch.yaml"
	SecurityContextPatchFile = "security-context-patch.yaml"
	NFSVolumePatchFile       = "nfs-volume-patch.yaml"
)

// Patch is one strategic-merge patch: a partial *kubeflow.MPIJob or *corev1.Pod.
type Patch struct {
	File   string
	Object any
	// Clear names container fields the patch deletes (null in the patch): a
	// target's own args would otherwise trail the command this patch sets.
	Clear []string
}

// role is the pod a template describes.
type role string

const (
	launcher role = "launcher"
	worker   role = "worker"
	single   role = "pod"
)

// Patches are the overlay's patches. Applied in order to Skeleton they give the full object.
func (p *Plan) Patches() []Patch {
	workload := MPIJobPatchFile
	if p.Mode == api.ModeSingleNode {
		workload = PodPatchFile
	}
	patches := []Patch{
		{File: workload, Object: p.object(p.fillWorkload, p.fillMPIJob), Clear: p.clearedArgs()},
		{File: SecurityContextPatchFile, Object: p.object(p.fillSecurity, func(s *kubeflow.MPIJobSpec) {
			s.SSHAuthMountPath = p.SSHAuthMountPath()
		})},
	}
	if len(p.Volumes) > 0 {
		patches = append(patches, Patch{File: NFSVolumePatchFile, Object: p.object(p.fillVolumes, nil)})
	}
	return patches
}

// clearedArgs: an MPIJob's command lines are wholly mlops-fn's (mpirun, sshd);
// a Pod's are when the spec gives a command without args.
func (p *Plan) clearedArgs() []string {
	if p.Mode == api.ModeMultiNode || (len(p.Command) > 0 && len(p.Args) == 0) {
		return []string{"args"}
	}
	return nil
}

// Skeleton is what a base holds: the object's identity and its container names.
func (p *Plan) Skeleton() any {
	obj := p.object(func(_ role, spec *corev1.PodSpec, c *corev1.Container) {}, nil)
	meta := metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, Labels: p.Labels, Annotations: p.Annotations}
	switch o := obj.(type) {
	case *kubeflow.MPIJob:
		o.ObjectMeta = meta
	case *corev1.Pod:
		o.ObjectMeta = meta
	}
	return obj
}

// ConfigMap carries every mlops.env key into the containers through envFrom.
func (p *Plan) ConfigMap(data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: p.ConfigMapName, Namespace: p.Namespace},
		Data:       data,
	}
}

// ContainerNames maps a role to the container the patches address; unset roles use ContainerName.
type ContainerNames map[kubeflow.MPIReplicaType]string

// object builds an MPIJob or a Pod whose pod specs are filled per role, each
// with exactly one container, the training container.
func (p *Plan) object(fill func(role, *corev1.PodSpec, *corev1.Container), fillJob func(*kubeflow.MPIJobSpec)) any {
	template := func(r role, name string) corev1.PodSpec {
		spec := corev1.PodSpec{}
		c := corev1.Container{Name: name}
		fill(r, &spec, &c)
		spec.Containers = []corev1.Container{c}
		return spec
	}
	if p.Mode == api.ModeSingleNode {
		return &corev1.Pod{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: p.Name},
			Spec:       template(single, p.containerName("")),
		}
	}
	job := &kubeflow.MPIJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: kubeflow.SchemeGroupVersion.String(), Kind: "MPIJob"},
		ObjectMeta: metav1.ObjectMeta{Name: p.Name},
		Spec: kubeflow.MPIJobSpec{MPIReplicaSpecs: map[kubeflow.MPIReplicaType]*kubeflow.ReplicaSpec{
			kubeflow.MPIReplicaTypeLauncher: {Template: corev1.PodTemplateSpec{Spec: template(launcher, p.containerName(kubeflow.MPIReplicaTypeLauncher))}},
			kubeflow.MPIReplicaTypeWorker:   {Template: corev1.PodTemplateSpec{Spec: template(worker, p.containerName(kubeflow.MPIReplicaTypeWorker))}},
		}},
	}
	if fillJob != nil {
		fillJob(&job.Spec)
	}
	return job
}

func (p *Plan) containerName(t kubeflow.MPIReplicaType) string {
	if n := p.Containers[t]; n != "" {
		return n
	}
	return p.ContainerName
}

func (p *Plan) fillMPIJob(s *kubeflow.MPIJobSpec) {
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
	for t, n := range map[kubeflow.MPIReplicaType]int32{kubeflow.MPIReplicaTypeLauncher: 1, kubeflow.MPIReplicaTypeWorker: p.Workers} {
		s.MPIReplicaSpecs[t].Replicas = ptr.To(n)
		s.MPIReplicaSpecs[t].RestartPolicy = kubeflow.RestartPolicy(p.RunPolicy.RestartPolicy)
	}
}

func (p *Plan) fillWorkload(r role, spec *corev1.PodSpec, c *corev1.Container) {
	c.Image = p.Image
	c.ImagePullPolicy = p.ImagePullPolicy
	c.WorkingDir = p.WorkingDir
	c.EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: p.ConfigMapName}}}}
	c.Env = p.Env
	c.Resources.Limits = p.Limits
	switch r {
	case launcher:
		c.Command = p.mpirun()
		if !p.MPI.RunLauncherAsWorker {
			c.Resources.Limits = p.LauncherLimits
		}
	case worker:
		c.Command = p.workerCommand()
	case single:
		c.Command, c.Args = p.Command, p.Args
		spec.RestartPolicy = p.RunPolicy.RestartPolicy
	}
	if len(c.Resources.Limits) == 0 {
		c.Resources.Limits = nil
	}
	spec.ServiceAccountName = p.ServiceAccountName
	spec.PriorityClassName = p.PriorityClassName
	for _, s := range p.ImagePullSecrets {
		spec.ImagePullSecrets = append(spec.ImagePullSecrets, corev1.LocalObjectReference{Name: s})
	}
	if r != launcher || p.MPI.RunLauncherAsWorker {
		spec.NodeSelector = p.NodeSelector
		spec.Tolerations = p.Tolerations
	}
}

// mpirun is the launcher's command: -np follows workers × slots.
func (p *Plan) mpirun() []string {
	cmd := []string{"mpirun"}
	np := strconv.Itoa(int(p.Ranks()))
	if p.MPI.Implementation == api.OpenMPI {
		if p.Root() {
			cmd = append(cmd, "--allow-run-as-root")
		}
		cmd = append(cmd, "-np", np)
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

func (p *Plan) fillSecurity(r role, spec *corev1.PodSpec, c *corev1.Container) {
	psc := &corev1.PodSecurityContext{RunAsUser: p.RunAsUser, RunAsGroup: p.RunAsGroup, FSGroup: p.FSGroup}
	if !p.Root() {
		psc.RunAsNonRoot = ptr.To(true)
	}
	if p.FSGroup != nil {
		// Walk volumes only when their root is not yet the group: large datasets stay fast.
		psc.FSGroupChangePolicy = ptr.To(corev1.FSGroupChangeOnRootMismatch)
	}
	csc := &corev1.SecurityContext{}
	if p.Hardening {
		psc.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
		csc.AllowPrivilegeEscalation = ptr.To(false)
		if !p.Root() {
			// A root sshd needs its default capabilities to switch users.
			csc.Capabilities = &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}
		}
	}
	spec.SecurityContext = psc
	c.SecurityContext = csc
}

func (p *Plan) fillVolumes(r role, spec *corev1.PodSpec, c *corev1.Container) {
	spec.Volumes = p.Volumes
	c.VolumeMounts = p.Mounts
}
