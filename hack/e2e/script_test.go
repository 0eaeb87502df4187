//go:build e2e

// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// rankProgram: every rank reports its rank, host and the variables that mlops.env and spec.env
// give the job (as "-" when unset), and an allreduce of rank+1.
const rankProgram = `import os, socket
from mpi4py import MPI
c = MPI.COMM_WORLD
r, n = c.Get_rank(), c.Get_size()
s = c.allreduce(r + 1)
env = " ".join("%s=%s" % (k, os.environ.get(k, "-")) for k in ("MY_KEY", "DATASET_DIR", "OUTPUT_DIR", "WORKERS", "USER_ID", "RUN_ID"))
print("mlops-fn-e2e rank=%d size=%d host=%s uid=%d gid=%d sum=%d %s" % (r, n, socket.gethostname(), os.getuid(), os.getgid(), s, env), flush=True)
`

// The seed's way: the launcher runs the model package's script, which checks its variables
// (the package's multi-instance scripts exit 1 without OUTPUT_DIR or DATASET_DIR) and starts
// mpirun itself, with a rank count of its own and no flags for hosts or the environment.
const (
	launchingScript = `#!/bin/sh
set -eu
: "${OUTPUT_DIR:?OUTPUT_DIR is not set}" "${DATASET_DIR:?DATASET_DIR is not set}"
echo "mlops-fn-e2e role=script host=$(hostname) ranks=$MLOPS_FN_RANKS MY_KEY=${MY_KEY:--}"
exec mpirun -np "$MLOPS_FN_RANKS" python3 /shared/rank.py
`
	onceScript = `#!/bin/sh
echo "mlops-fn-e2e role=script host=$(hostname) ranks=$MLOPS_FN_RANKS MY_KEY=${MY_KEY:--} DATASET_DIR=${DATASET_DIR:--}"
`
)

// keptLineJob is a team's MPIJob (name, image) whose launcher runs its own mpirun line.
const keptLineJob = `apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: %[1]s}
spec:
  slotsPerWorker: 1
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - {name: launcher, image: %[2]s, command: [mpirun], args: [-n, "1", python3, /shared/rank.py]}
    Worker:
      replicas: 1
      template:
        spec:
          containers:
          - {name: worker, image: %[2]s, command: [/usr/sbin/sshd], args: [-De, -f, /home/mpiuser/.sshd_config]}
`

// TestRealMPIJobEnv: what an MPIJob's script and its ranks see of mlops.env and spec.env, on the
// real node, OpenMPI 5, non-root (TestConformance checks spec.command's ranks, under mlops-fn's
// own mpirun line).
//   - spec.script that starts mpirun itself (the seed's quickstart): the launcher runs it once,
//     its mpirun places the ranks on the workers and forwards the same names, from the
//     environment mlops-fn gives the launcher;
//   - a team's MPIJob whose launcher keeps its own mpirun line: its ranks see the same;
//   - spec.script that does not: it runs once, on the launcher, with mlops.env and the rank count.
func TestRealMPIJobEnv(t *testing.T) {
	section("real node: what an MPIJob's ranks see of mlops.env and spec.env")
	c := newCheck(t, "real MPIJob env")
	if realNode() == "" {
		c.skip("no real node (make e2e starts one inside its own network namespace; E2E_NETNS=0 runs without)")
		return
	}
	defer took(time.Now())
	const workers, uid, gid = 2, 1000, 1000
	// The programs, on the real node (this machine), for every pod through a hostPath volume.
	programs := t.TempDir()
	if err := os.Chmod(programs, 0o755); err != nil {
		c.fail("a folder for the programs", err.Error())
		return
	}
	for name, text := range map[string]string{"rank.py": rankProgram, "launch.sh": launchingScript, "once.sh": onceScript} {
		if err := os.WriteFile(filepath.Join(programs, name), []byte(text), 0o755); err != nil {
			c.fail("the programs", err.Error())
			return
		}
	}
	env := fmt.Sprintf("USER_ID=%d\nGROUP_ID=%d\nUSER_NAME=mpiuser\nWORKERS=%d\nCPU=250m\nMEMORY=256Mi\nMY_KEY=hello\nDATASET_DIR=/datasets\nOUTPUT_DIR=/shared/out\n", uid, gid, workers)
	want := map[string]string{"MY_KEY": "hello", "DATASET_DIR": "/datasets", "OUTPUT_DIR": "/shared/out", "WORKERS": fmt.Sprint(workers), "USER_ID": fmt.Sprint(uid)}
	volume := "  volumes: [{name: programs, mountPath: /shared, readOnly: true, hostPath: {path: " + programs + "}}]\n"

	{
		j := realJob{name: "env-launching-script", jobKind: "MPIJob", spec: "  image: " + mpiImage + "\n  script: /shared/launch.sh\n  env: [{name: RUN_ID, value: \"7\"}]\n" + volume, env: env}
		guarded(c, func() {
			log, ok := runToEnd(t, c, j)
			if !ok {
				return
			}
			wantRank := maps.Clone(want)
			wantRank["RUN_ID"] = "7"
			var ranks []report
			for _, r := range reports(log) {
				if r["role"] == "script" {
					c.eq(j.name+": the script ran on the launcher, given the rank count and mlops.env", "launcher ranks=2 MY_KEY=hello",
						launcherOf(r["host"], j.name)+" ranks="+r["ranks"]+" MY_KEY="+r["MY_KEY"])
					continue
				}
				ranks = append(ranks, r)
			}
			c.eq(j.name+": WORKERS ranks", workers, len(ranks))
			for _, r := range ranks {
				got := map[string]string{}
				for k := range wantRank {
					got[k] = r[k]
				}
				c.eq(fmt.Sprintf("%s: rank %s on %s sees mlops.env's keys and spec.env's entries", j.name, r["rank"], r["host"]), wantRank, got)
				c.that(fmt.Sprintf("%s: rank %s ran on a worker, as %d:%d", j.name, r["rank"], uid, gid),
					strings.Contains(r["host"], "-worker-") && r.int("uid") == uid && r.int("gid") == gid, fmt.Sprint(r))
			}
		})
	}

	guarded(c, func() {
		// A team's own MPIJob whose launcher keeps its mpirun line: mlops-fn sets its rank count and
		// adds --hostfile and the forwarding flags after it.
		const name = "env-kept"
		ns := "real-" + name
		if err := realNamespace(t, ns); err != nil {
			c.fail("a namespace on the real node", err.Error())
			return
		}
		spec := "apiVersion: mlops-fn.dev/v1alpha1\nkind: MLOpsJob\nmetadata:\n  name: " + name + "\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n" +
			"spec:\n  jobKind: MPIJob\n  env: [{name: RUN_ID, value: \"7\"}]\n" + volume
		dir, err := overlayOver("mpijob.yaml", fmt.Sprintf(keptLineJob, name, mpiImage), spec, env, t.TempDir())
		if err != nil {
			c.fail("hydrated over the team's MPIJob", err.Error())
			return
		}
		if out, err := kubectl("", "apply", "-k", dir, "-n", ns, "--server-side"); err != nil {
			c.fail("kubectl apply -k", out)
			return
		}
		finished := jobFinished("kubeflow.org/v2beta1", "MPIJob", ns, name, "Succeeded")
		var log string
		for _, p := range pods(ns, "training.kubeflow.org/job-name="+name+",training.kubeflow.org/job-role=launcher") {
			log += logsOf(ns, p.Name, "")
		}
		if !c.eq("the MPIJob "+name+" Succeeded", "Succeeded", finished) {
			note("%s\n%s\nlauncher log:\n%s", podTable(ns), recentEvents(ns, 10), log)
			return
		}
		wantRank := maps.Clone(want)
		wantRank["RUN_ID"] = "7"
		ranks := reports(log)
		c.eq(name+": WORKERS ranks from the kept line's mpirun", workers, len(ranks))
		for _, r := range ranks {
			got := map[string]string{}
			for k := range wantRank {
				got[k] = r[k]
			}
			c.eq(fmt.Sprintf("%s: rank %s on %s sees mlops.env's keys and spec.env's entries", name, r["rank"], r["host"]), wantRank, got)
		}
	})

	j := realJob{name: "env-once", jobKind: "MPIJob", spec: "  image: " + mpiImage + "\n  script: /shared/once.sh\n" + volume, env: env}
	guarded(c, func() {
		log, ok := runToEnd(t, c, j)
		if !ok {
			return
		}
		rs := reports(log)
		c.eq("a script that starts no mpirun runs once", 1, len(rs))
		for _, r := range rs {
			c.eq("... on the launcher, with mlops.env and the rank count", "launcher ranks=2 MY_KEY=hello DATASET_DIR=/datasets",
				launcherOf(r["host"], j.name)+" ranks="+r["ranks"]+" MY_KEY="+r["MY_KEY"]+" DATASET_DIR="+r["DATASET_DIR"])
		}
	})
}

// runToEnd applies the MPIJob in a namespace of its own on the real node, waits for it to end
// and returns its launcher's log; ok when it Succeeded.
func runToEnd(t *testing.T, c *check, j realJob) (log string, ok bool) {
	ns := "real-" + j.name
	if _, ok := applyOnRealNode(t, c, j, ns); !ok {
		return "", false
	}
	finished := jobFinished("kubeflow.org/v2beta1", "MPIJob", ns, j.name, "Succeeded")
	for _, p := range pods(ns, "training.kubeflow.org/job-name="+j.name+",training.kubeflow.org/job-role=launcher") {
		log += logsOf(ns, p.Name, "")
	}
	if !c.eq("the MPIJob "+j.name+" Succeeded", "Succeeded", finished) {
		note("%s", podTable(ns))
		note("%s", recentEvents(ns, 10))
		note("launcher log:\n%s", log)
		return log, false
	}
	return log, true
}

// launcherOf is "launcher" when host is a launcher pod of the MPIJob job, else host.
func launcherOf(host, job string) string {
	if strings.HasPrefix(host, job+"-launcher") {
		return "launcher"
	}
	return host
}
