// SPDX-License-Identifier: Apache-2.0

package status

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/mlops-fn/mlops-fn/pkg/cluster"
	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
	"github.com/mlops-fn/mlops-fn/pkg/jobnode"
	"github.com/mlops-fn/mlops-fn/pkg/kinds"
)

// LogOptions say what Logs prints.
type LogOptions struct {
	// Follow streams the log until the program ends, waiting for its pod to start, and follows a launcher the
	// operator starts again.
	Follow   bool
	Out, Err io.Writer // the log; what Logs waits for
}

// programPod is the newest pod running job's training program, nil if there is none yet.
func programPod(ctx context.Context, c *cluster.Cluster, job jobnode.Job, ns string) (*corev1.Pod, error) {
	jk, _ := kinds.All.ForKind(job.Kind)
	if jk.PodsLabel == "" {
		pods, err := jobPods(ctx, c, jk, ns, job.Name)
		if err != nil || len(pods) == 0 {
			return nil, err
		}
		return &pods[0], nil
	}
	for _, program := range jk.ProgramPods { // best first
		pods, err := cluster.List[corev1.Pod](ctx, c, "pods", ns, jk.PodsLabel+"="+job.Name+","+program)
		if err != nil {
			return nil, fmt.Errorf("listing the pods of %s/%s in namespace %s: %w", job.Kind, job.Name, ns, err)
		}
		if len(pods) == 0 {
			continue
		}
		slices.SortStableFunc(pods, func(a, b corev1.Pod) int { return b.CreationTimestamp.Compare(a.CreationTimestamp.Time) })
		return &pods[0], nil
	}
	return nil, nil
}

// trainingContainer is the container of pod that runs the program: the one that reads mlops.env's ConfigMap,
// else kubectl's default container, else the first.
func trainingContainer(pod *corev1.Pod, envConfigMaps []string) string {
	for _, k := range pod.Spec.Containers {
		for _, e := range k.EnvFrom {
			if e.ConfigMapRef != nil && slices.Contains(envConfigMaps, e.ConfigMapRef.Name) {
				return k.Name
			}
		}
		for _, e := range k.Env {
			if r := e.ValueFrom; r != nil && r.ConfigMapKeyRef != nil && slices.Contains(envConfigMaps, r.ConfigMapKeyRef.Name) {
				return k.Name
			}
		}
	}
	if name := pod.Annotations["kubectl.kubernetes.io/default-container"]; name != "" {
		return name
	}
	if len(pod.Spec.Containers) == 0 {
		return ""
	}
	return pod.Spec.Containers[0].Name
}

// started: the container runs or ran, so it has a log.
func started(pod *corev1.Pod, container string) (bool, string) {
	for _, s := range pod.Status.ContainerStatuses {
		switch {
		case s.Name != container:
		case s.State.Running != nil || s.State.Terminated != nil || s.LastTerminationState.Terminated != nil:
			return true, ""
		case s.State.Waiting != nil && s.State.Waiting.Reason != "":
			return false, s.State.Waiting.Reason
		}
	}
	return false, string(pod.Status.Phase)
}

// Logs prints the log of job's training program, from the container and the pod that run it (its kind's
// ProgramPods). Without Follow, a program not yet started is an error naming what it waits for; with Follow,
// it waits, and after the log ends follows a new run (a launcher started again, a container restarted) until
// the job has finished.
func Logs(ctx context.Context, c *cluster.Cluster, job jobnode.Job, o LogOptions) error {
	ns, err := c.Of(job.Namespace)
	if err != nil {
		return err
	}
	done, said := "", "" // the run whose log was printed to its end; the last wait said
	for {
		pod, err := programPod(ctx, c, job, ns)
		if err != nil {
			return err
		}
		container, why, ready := "", "no pod runs its program yet", false
		if pod != nil {
			container = trainingContainer(pod, job.EnvConfigMaps)
			ready, why = started(pod, container)
			why = fmt.Sprintf("pod %s, container %s: %s", pod.Name, container, why)
			if run(pod, container) == done {
				ready, why = false, "its log ended; waiting for another run or the job's end"
			}
		}
		if !ready {
			if !o.Follow {
				return fmt.Errorf("%s/%s in namespace %s: %s; mlops-fn status says why, mlops-fn logs -f waits for it", job.Kind, job.Name, ns, why)
			}
			if done != "" {
				if end, err := finished(ctx, c, job, ns); err != nil || end {
					return err
				}
			}
			if why != said {
				fmt.Fprintf(o.Err, "mlops-fn logs: %s/%s: %s\n", job.Kind, job.Name, why)
				said = why
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Second): // Follow asks for the pod again
			}
			continue
		}
		if done != "" {
			fmt.Fprintf(o.Err, "mlops-fn logs: %s/%s: following its new run in pod %s\n", job.Kind, job.Name, pod.Name)
		}
		r, err := c.Log(ctx, ns, pod.Name, container, o.Follow)
		if err != nil {
			return fmt.Errorf("reading the log of pod %s, container %s, in namespace %s: %w", pod.Name, container, ns, err)
		}
		_, err = io.Copy(o.Out, r)
		_ = r.Close()
		if err != nil {
			return fmt.Errorf("reading the log of pod %s, container %s: %w", pod.Name, container, err)
		}
		if !o.Follow {
			return nil
		}
		// The run as it was before its log: a restart after it is a new run.
		done, said = run(pod, container), ""
	}
}

// run names one run of a pod's container: the pod and its count of restarts.
func run(pod *corev1.Pod, container string) string {
	for _, s := range pod.Status.ContainerStatuses {
		if s.Name == container {
			return fmt.Sprintf("%s/%d", pod.UID, s.RestartCount)
		}
	}
	return string(pod.UID)
}

// finished: the job has ended (or is gone): no run of its program follows.
func finished(ctx context.Context, c *cluster.Cluster, job jobnode.Job, ns string) (bool, error) {
	jk, _ := kinds.All.ForKind(job.Kind)
	u, _, err := readJob(ctx, c, jk, ns, job.Name)
	if err != nil || u == nil {
		return true, err
	}
	pods, err := jobPods(ctx, c, jk, ns, job.Name)
	if err != nil {
		return true, err
	}
	return slices.Contains(jobkind.FinalConditions, phase(jk, u, pods)), nil
}
