#!/usr/bin/env bash
# make e2e: mlops-fn's overlays against a real control plane.
#
# Builds (once, cached outside the clone: hack/e2e/build.sh) etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler and kubectl of the pinned Kubernetes, the pinned mpi-operator and its MPIJob
# CRD, the pinned training-operator and its PyTorchJob CRD, Kubeflow Trainer and JobSet with
# their CRDs and Trainer's torch-distributed ClusterTrainingRuntime, kwok as a fake kubelet,
# Kueue with its CRDs, scheduler-plugins' gang scheduler with the PodGroup CRD, and a real node: kubelet, containerd, runc, the CNI bridge, CoreDNS and
# images built from Debian's packages (hack/e2e/build.sh, images.sh, node.sh; versions in
# hack/e2e/versions.env); starts them inside a network namespace of their own (E2E_NETNS=0: on
# the host's loopback, without the real node), with every webhook registered as the components'
# releases register them; then
# runs the checks, which are Go (hack/e2e/*_test.go, build tag e2e; what each one checks is
# written there): for the quickstart overlays, every example and the TrainJob fixture, the
# dry runs, the broken objects the API server and the webhooks refuse, the Pod Security level,
# each job run for real by its operator (MPIJob, PyTorchJob, TrainJob through Trainer and
# JobSet, Pod), the quickstarts renamed by an overlay on top and edited without hydrate, and
# each quickstart kind queued through Kueue. What they expect comes from mlops-fn's own
# resolved plan of each overlay. Last, Kueue is restarted with its release's own configuration
# for TestKueueDefault.
#
# The checks print PASS/FAIL a check, then "e2e: N passed, N failed, N skipped"; the run exits 1
# on any failure. Every process it starts is stopped at the end, failure or not; logs are kept
# in .cache/e2e-logs in the clone.
#
# Usage: hack/e2e/run.sh [OVERLAY_DIR...]   (default: all of them; naming some leaves out the
# renamed, edited and Kueue checks, E2E_KUEUE=1 keeps the Kueue ones; E2E_RUN=REGEXP runs only
# the Go tests it matches, e.g. E2E_RUN=TestReal the real node's)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT"
source hack/e2e/build.sh   # also lib.sh and versions.env
source hack/e2e/node.sh
MLOPS_FN=${MLOPS_FN:-$ROOT/bin/mlops-fn}  # (another build: MLOPS_FN=path)
LOGS=$ROOT/.cache/e2e-logs  # the components' logs of the last run

# ---------------------------------------------------------------- the control plane

gen_certs() {
  local d=$RUN/pki
  mkdir -p "$d"
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=mlops-fn-e2e-ca \
    -keyout "$d/ca.key" -out "$d/ca.crt" 2>/dev/null
  cert() { # NAME SUBJECT EXTENSIONS
    openssl req -newkey rsa:2048 -nodes -subj "$2" -keyout "$d/$1.key" -out "$d/$1.csr" 2>/dev/null
    openssl x509 -req -in "$d/$1.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial -days 2 \
      -extfile <(printf '%s\n' "$3") -out "$d/$1.crt" 2>/dev/null
  }
  cert apiserver /CN=kube-apiserver "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc
extendedKeyUsage=serverAuth"
  cert admin "/O=system:masters/CN=e2e-admin" "extendedKeyUsage=clientAuth"
  # training-operator's webhook server: the name its own cert rotator would use, and the
  # address kube-apiserver calls it at.
  cert training-operator /CN=training-operator "subjectAltName=IP:127.0.0.1,DNS:training-operator.kubeflow.svc
extendedKeyUsage=serverAuth"
  # Trainer's and JobSet's webhook servers: the names of their Services in their release
  # manifests, and the address kube-apiserver calls them at.
  cert trainer /CN=kubeflow-trainer-controller-manager "subjectAltName=IP:127.0.0.1,DNS:kubeflow-trainer-controller-manager.kubeflow-system.svc
extendedKeyUsage=serverAuth"
  cert jobset /CN=jobset-webhook-service "subjectAltName=IP:127.0.0.1,DNS:jobset-webhook-service.jobset-system.svc
extendedKeyUsage=serverAuth"
  # Kueue's webhook server (the Service name of its release), also the certificate of the
  # metrics server it will not start without.
  cert kueue /CN=kueue-webhook-service "subjectAltName=IP:127.0.0.1,DNS:kueue-webhook-service.kueue-system.svc
extendedKeyUsage=serverAuth"
  node_certs
  openssl genrsa -out "$d/sa.key" 2048 2>/dev/null
  openssl rsa -in "$d/sa.key" -pubout -out "$d/sa.pub" 2>/dev/null
}

write_kubeconfig() {
  export KUBECONFIG=$RUN/kubeconfig
  kubectl config set-cluster e2e --server="https://127.0.0.1:$API_PORT" \
    --certificate-authority="$RUN/pki/ca.crt" --embed-certs >/dev/null
  kubectl config set-credentials admin --client-certificate="$RUN/pki/admin.crt" \
    --client-key="$RUN/pki/admin.key" --embed-certs >/dev/null
  kubectl config set-context e2e --cluster=e2e --user=admin >/dev/null
  kubectl config use-context e2e >/dev/null
}

# https_healthy PORT: a component's /healthz answers ok.
https_healthy() { curl -ksf "https://127.0.0.1:$1/healthz" | grep -qx ok; }

start_cluster() {
  local etcd_port peer_port kcm_port sched_port pki=$RUN/pki t=$SECONDS
  free_port etcd_port; free_port peer_port; free_port API_PORT
  free_port kcm_port; free_port sched_port
  gen_certs
  write_kubeconfig

  start etcd "$K8S_DIR/etcd" --name e2e --data-dir "$RUN/etcd" --log-level warn --unsafe-no-fsync \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
    --initial-cluster "e2e=http://127.0.0.1:$peer_port"
  wait_until 30 curl -sf "http://127.0.0.1:$etcd_port/health" || { alive etcd; die "etcd did not start"; }

  # PodSecurity admission is on by default in v1.33; naming it keeps that explicit.
  # PodNodeSelector and PodTolerationRestriction place the pods of the namespaces annotated for
  # the real node there (node.sh); Node and NodeRestriction authorize its kubelet as a node.
  # --allow-privileged as kubeadm and kind start it, so that Pod Security, not the API server's
  # own flag, is what refuses a privileged container (TestGoldenPodSecurity).
  start kube-apiserver "$K8S_DIR/kube-apiserver" \
    --etcd-servers="http://127.0.0.1:$etcd_port" \
    --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$API_PORT" \
    --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
    --client-ca-file="$pki/ca.crt" --cert-dir="$RUN/apiserver" \
    --service-account-issuer=https://kubernetes.default.svc \
    --service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
    --service-cluster-ip-range=10.96.0.0/16 --endpoint-reconciler-type=none \
    --kubelet-client-certificate="$pki/admin.crt" --kubelet-client-key="$pki/admin.key" \
    --kubelet-certificate-authority="$pki/ca.crt" --kubelet-preferred-address-types=InternalIP \
    --authorization-mode=Node,RBAC --allow-privileged=true \
    --enable-admission-plugins=PodSecurity,NodeRestriction,PodNodeSelector,PodTolerationRestriction
  wait_until 90 kubectl get --raw /readyz || { alive kube-apiserver; die "kube-apiserver not ready"; }

  start kube-controller-manager "$K8S_DIR/kube-controller-manager" \
    --kubeconfig="$KUBECONFIG" --authentication-kubeconfig="$KUBECONFIG" --authorization-kubeconfig="$KUBECONFIG" \
    --bind-address=127.0.0.1 --secure-port="$kcm_port" --leader-elect=false \
    --service-account-private-key-file="$pki/sa.key" --root-ca-file="$pki/ca.crt"
  start kube-scheduler "$K8S_DIR/kube-scheduler" \
    --kubeconfig="$KUBECONFIG" --authentication-kubeconfig="$KUBECONFIG" --authorization-kubeconfig="$KUBECONFIG" \
    --bind-address=127.0.0.1 --secure-port="$sched_port" --leader-elect=false
  wait_until 60 https_healthy "$kcm_port" || { alive kube-controller-manager; die "kube-controller-manager not healthy"; }
  wait_until 60 https_healthy "$sched_port" || { alive kube-scheduler; die "kube-scheduler not healthy"; }

  # The MPIJob, PyTorchJob, JobSet, TrainJob and (Cluster)TrainingRuntime CRDs; "Established"
  # can lag the create by a moment, and `kubectl wait` can fail once right after the create: poll.
  kubectl apply --server-side -f "$OPS_DIR/kubeflow.org_mpijobs.yaml" -f "$OPS_DIR/kubeflow.org_pytorchjobs.yaml" \
    -f "$OPS_DIR/jobset.x-k8s.io_jobsets.yaml" -f "$OPS_DIR/trainer.kubeflow.org_trainjobs.yaml" \
    -f "$OPS_DIR/trainer.kubeflow.org_trainingruntimes.yaml" -f "$OPS_DIR/trainer.kubeflow.org_clustertrainingruntimes.yaml" \
    -f "$SCHED_DIR/crd.yaml" >/dev/null
  wait_until 60 kubectl wait --for=condition=Established --timeout=5s crd/mpijobs.kubeflow.org crd/pytorchjobs.kubeflow.org \
    crd/jobsets.jobset.x-k8s.io crd/trainjobs.trainer.kubeflow.org crd/trainingruntimes.trainer.kubeflow.org \
    crd/clustertrainingruntimes.trainer.kubeflow.org crd/podgroups.scheduling.x-k8s.io ||
    die "the CRDs did not become Established"
  # The policy this project ships for cluster admins (deploy/admission): a running job's spec is
  # not changed in place. Every check runs under it, as on a cluster that has it (TestRunningPolicy).
  kubectl apply -k deploy/admission >/dev/null || die "deploy/admission: the ValidatingAdmissionPolicy is refused"
  start_gang_scheduler
  # mpi-operator takes a leader-election lease in its lock namespace, which must exist.
  # Its health endpoint is :8080 on every interface, not configurable (hence the netns).
  kubectl create namespace mpi-operator >/dev/null
  if [ "${E2E_IN_NETNS:-0}" != 1 ] && port_open 8080; then die "port 8080 is taken: mpi-operator needs it"; fi
  start mpi-operator "$OPS_DIR/mpi-operator" --kubeConfig="$KUBECONFIG" \
    --lock-namespace=mpi-operator --threadiness=4 --kube-api-qps=50 --kube-api-burst=100 --gang-scheduling="$GANG_SCHEDULER"
  wait_until 60 curl -sf http://127.0.0.1:8080/healthz || { alive mpi-operator; die "mpi-operator not healthy"; }

  start_training_operator
  start_jobset
  start_trainer
  start_kueue

  start kwok "$OPS_DIR/kwok" --kubeconfig="$KUBECONFIG" --config="$OPS_DIR/kwok-stages.yaml" \
    --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake --node-lease-duration-seconds=40
  kubectl apply --server-side -f hack/e2e/manifests/node.yaml >/dev/null
  wait_until 60 node_schedulable || { alive kwok; die "the fake node did not become Ready"; }
  start_node
  wait_until 60 kubectl get serviceaccount default -n default || die "no default ServiceAccount"
  log "control plane up in $((SECONDS - t)) s"
}

# GANG_SCHEDULER: the gang scheduler's name. mpi-operator (--gang-scheduling) and the
# training-operator (--gang-scheduler-name) create a PodGroup for every job and name it as the
# pods' scheduler (mpi-operator over any other; the training-operator where none is set); a
# training runtime with podGroupPolicy.coscheduling names it in its pod templates.
GANG_SCHEDULER=scheduler-plugins-scheduler

# start_gang_scheduler: scheduler-plugins' kube-scheduler, beside kube-scheduler, with one
# profile, GANG_SCHEDULER: Coscheduling at every extension point and as the queue's order, as its
# release's manifests/coscheduling configures it. Its controller (PodGroup status) is not
# started: the scheduler counts the pods itself. A group short of room waits 5 s in Permit,
# then its pods go back to the queue. A pod the group's rejection sent there waits for an event
# Coscheduling registers (a new pod of the group, the PodGroup changed), which freed room is not,
# or 5 min by default: 5 s here.
start_gang_scheduler() {
  local d=$RUN/gang-scheduler port
  free_port port
  mkdir -p "$d"
  cat >"$d/config.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection: {leaderElect: false}
clientConnection: {kubeconfig: $KUBECONFIG}
podInitialBackoffSeconds: 1
podMaxBackoffSeconds: 2
profiles:
- schedulerName: $GANG_SCHEDULER
  plugins:
    multiPoint: {enabled: [{name: Coscheduling}]}
    queueSort: {enabled: [{name: Coscheduling}], disabled: [{name: "*"}]}
  pluginConfig:
  - name: Coscheduling
    args: {permitWaitingTimeSeconds: 5}
EOF
  start gang-scheduler "$SCHED_DIR/scheduler-plugins" --config="$d/config.yaml" \
    --authentication-kubeconfig="$KUBECONFIG" --authorization-kubeconfig="$KUBECONFIG" \
    --bind-address=127.0.0.1 --secure-port="$port" --pod-max-in-unschedulable-pods-duration=5s
  wait_until 60 https_healthy "$port" || { alive gang-scheduler; die "the gang scheduler not healthy"; }
}

# TRAINING_CERT_DIR: where training-operator v1.8.1 reads its webhook server's certificate
# (fixed: its cert rotator waits for a file there, as a kubelet would mount the rotator's Secret).
TRAINING_CERT_DIR=/tmp/k8s-webhook-server/serving-certs

# start_training_operator: the PyTorchJob controller of training-operator, with its validating
# webhook registered for pytorchjobs. It will not start its controllers before its cert
# rotator has a Secret in its namespace (MY_POD_NAMESPACE) and the certificate is in
# TRAINING_CERT_DIR: it gets an empty Secret (the rotator fills it; nothing reads it) and our
# certificate, which the webhook configuration below trusts.
start_training_operator() {
  local hook_port probe_port metrics_port ca
  free_port hook_port; free_port probe_port; free_port metrics_port
  if [ "${E2E_IN_NETNS:-0}" == 1 ]; then
    # A mount namespace of our own (unshare --mount-proc): a private tmpfs over the folder.
    mkdir -p "${TRAINING_CERT_DIR%/*}"
    mount -t tmpfs -o size=1m,mode=0700 e2e-training-operator "${TRAINING_CERT_DIR%/*}" ||
      die "cannot mount a tmpfs on ${TRAINING_CERT_DIR%/*}"
  fi
  mkdir -p "$TRAINING_CERT_DIR"
  cp "$RUN/pki/training-operator.crt" "$TRAINING_CERT_DIR/tls.crt"
  cp "$RUN/pki/training-operator.key" "$TRAINING_CERT_DIR/tls.key"
  kubectl create namespace kubeflow >/dev/null
  kubectl create secret generic training-operator-webhook-cert -n kubeflow >/dev/null
  MY_POD_NAMESPACE=kubeflow start training-operator "$OPS_DIR/training-operator" \
    --enable-scheme=pytorchjob --controller-threads=4 --leader-elect=false --gang-scheduler-name="$GANG_SCHEDULER" \
    --metrics-bind-address="127.0.0.1:$metrics_port" --health-probe-bind-address="127.0.0.1:$probe_port" \
    --webhook-server-port="$hook_port" --webhook-service-name=training-operator --webhook-secret-name=training-operator-webhook-cert
  # Ready: certificates in place, controllers set up, webhook server listening.
  wait_until 90 curl -sf "http://127.0.0.1:$probe_port/readyz" || { alive training-operator; die "training-operator not ready"; }
  # Its own ValidatingWebhookConfiguration (validator.training-operator.kubeflow.org) would get
  # the rotator's CA: ours has another name, our CA and a URL (no Service routing here).
  register_webhooks Validating e2e-training-operator \
    "validator.pytorchjob.training-operator.kubeflow.org $hook_port /validate-kubeflow-org-v1-pytorchjob kubeflow.org v1 pytorchjobs CREATE,UPDATE"
}

# register_webhooks Validating|Mutating NAME "WEBHOOK PORT PATH GROUP VERSION RESOURCE OPERATIONS [SELECTOR_KEY]"...:
# a webhook configuration NAME whose webhooks call https://127.0.0.1:PORT/PATH and trust our CA
# (no Service routing here), as the component's release manifests register them (rules,
# failurePolicy: Fail, sideEffects: None). GROUP "-": the core group. RESOURCE and OPERATIONS:
# comma-separated lists. SELECTOR_KEY: the objectSelector the release adds, "key" (Exists) or
# "key!=value" (NotIn); "ns:key!=value,value...": a namespaceSelector (NotIn those values).
register_webhooks() {
  local kind=$1 name=$2 ca hook port path group version resource ops selector
  ca=$(base64 -w0 <"$RUN/pki/ca.crt")
  shift 2
  {
    printf 'apiVersion: admissionregistration.k8s.io/v1\nkind: %sWebhookConfiguration\nmetadata: {name: %s}\nwebhooks:\n' "$kind" "$name"
    for hook in "$@"; do
      read -r hook port path group version resource ops selector <<<"$hook"
      [ "$group" != - ] || group=""
      printf -- '- name: %s\n  admissionReviewVersions: [v1]\n  sideEffects: None\n  failurePolicy: Fail\n' "$hook"
      printf '  clientConfig: {url: "https://127.0.0.1:%s%s", caBundle: %s}\n' "$port" "$path" "$ca"
      printf '  rules: [{apiGroups: ["%s"], apiVersions: [%s], resources: [%s], operations: [%s]}]\n' \
        "$group" "$version" "${resource//,/, }" "${ops//,/, }"
      case $selector in
        "") ;;
        ns:*!=*) selector=${selector#ns:}
          printf '  namespaceSelector: {matchExpressions: [{key: "%s", operator: NotIn, values: [%s]}]}\n' \
            "${selector%%!=*}" "${selector#*!=}" ;;
        *!=*) printf '  objectSelector: {matchExpressions: [{key: "%s", operator: NotIn, values: ["%s"]}]}\n' "${selector%%!=*}" "${selector#*!=}" ;;
        *) printf '  objectSelector: {matchExpressions: [{key: "%s", operator: Exists}]}\n' "$selector" ;;
      esac
    done
  } | kubectl apply --server-side -f - >/dev/null
}

# start_jobset: the JobSet controller TrainJobs run through, with its webhooks: JobSet defaulting
# and validation, and the pod webhooks of its exclusive placement. Its certificate management is
# off (internalCertManagement.enable: false, read from its Configuration file): it serves our
# certificate from webhook.certDir. Metrics off; no leader election.
start_jobset() {
  local d=$RUN/jobset hook_port probe_port
  free_port hook_port; free_port probe_port
  mkdir -p "$d/certs"
  cp "$RUN/pki/jobset.crt" "$d/certs/tls.crt"
  cp "$RUN/pki/jobset.key" "$d/certs/tls.key"
  cat >"$d/config.yaml" <<EOF
apiVersion: config.jobset.x-k8s.io/v1alpha1
kind: Configuration
webhook: {host: 127.0.0.1, port: $hook_port, certDir: $d/certs}
health: {healthProbeBindAddress: "127.0.0.1:$probe_port"}
leaderElection: {leaderElect: false}
internalCertManagement: {enable: false}
EOF
  start jobset "$OPS_DIR/jobset" --config="$d/config.yaml" --kubeconfig="$KUBECONFIG" --metrics-bind-address=0
  wait_until 90 curl -sf "http://127.0.0.1:$probe_port/readyz" || { alive jobset; die "jobset not ready"; }
  register_webhooks Mutating e2e-jobset \
    "mjobset.kb.io $hook_port /mutate-jobset-x-k8s-io-v1alpha2-jobset jobset.x-k8s.io v1alpha2 jobsets CREATE" \
    "mpod.kb.io $hook_port /mutate--v1-pod - v1 pods CREATE jobset.sigs.k8s.io/jobset-name"
  register_webhooks Validating e2e-jobset \
    "vjobset.kb.io $hook_port /validate-jobset-x-k8s-io-v1alpha2-jobset jobset.x-k8s.io v1alpha2 jobsets CREATE,UPDATE" \
    "vpod.kb.io $hook_port /validate--v1-pod - v1 pods CREATE jobset.sigs.k8s.io/jobset-name"
}

# start_trainer: Kubeflow Trainer's controller manager (TrainJob, TrainingRuntime and
# ClusterTrainingRuntime controllers) with its webhooks, then the torch-distributed
# ClusterTrainingRuntime of its release. Its certificate management is off
# (certManagement.enable: false in its Configuration file); its webhook server reads
# controller-runtime's default folder under $TMPDIR, which is ours. Metrics off; no leader election.
start_trainer() {
  local d=$RUN/trainer hook_port probe_port out
  free_port hook_port; free_port probe_port
  mkdir -p "$d/tmp/k8s-webhook-server/serving-certs"
  cp "$RUN/pki/trainer.crt" "$d/tmp/k8s-webhook-server/serving-certs/tls.crt"
  cp "$RUN/pki/trainer.key" "$d/tmp/k8s-webhook-server/serving-certs/tls.key"
  cat >"$d/config.yaml" <<EOF
apiVersion: config.trainer.kubeflow.org/v1alpha1
kind: Configuration
webhook: {host: 127.0.0.1, port: $hook_port}
metrics: {bindAddress: "0"}
health: {healthProbeBindAddress: "127.0.0.1:$probe_port"}
certManagement: {enable: false}
EOF
  TMPDIR=$d/tmp start trainer "$OPS_DIR/trainer-controller-manager" --config="$d/config.yaml" --kubeconfig="$KUBECONFIG"
  wait_until 90 curl -sf "http://127.0.0.1:$probe_port/readyz" || { alive trainer; die "trainer not ready"; }
  # Its release's defaulter.trainer.kubeflow.org and validator.trainer.kubeflow.org, with the
  # objectSelector its release patches in for the runtimes.
  register_webhooks Mutating e2e-trainer \
    "defaulter.trainjob.trainer.kubeflow.org $hook_port /mutate-trainer-kubeflow-org-v1alpha1-trainjob trainer.kubeflow.org v1alpha1 trainjobs CREATE,UPDATE"
  register_webhooks Validating e2e-trainer \
    "validator.clustertrainingruntime.trainer.kubeflow.org $hook_port /validate-trainer-kubeflow-org-v1alpha1-clustertrainingruntime trainer.kubeflow.org v1alpha1 clustertrainingruntimes CREATE,UPDATE trainer.kubeflow.org/webhook-validation!=disabled" \
    "validator.trainingruntime.trainer.kubeflow.org $hook_port /validate-trainer-kubeflow-org-v1alpha1-trainingruntime trainer.kubeflow.org v1alpha1 trainingruntimes CREATE,UPDATE trainer.kubeflow.org/webhook-validation!=disabled" \
    "validator.trainjob.trainer.kubeflow.org $hook_port /validate-trainer-kubeflow-org-v1alpha1-trainjob trainer.kubeflow.org v1alpha1 trainjobs CREATE,UPDATE"
  # The runtime TrainJobs name, through Trainer's ClusterTrainingRuntime webhook.
  out=$(kubectl apply --server-side -f "$OPS_DIR/torch_distributed.yaml" 2>&1) ||
    die "the torch-distributed ClusterTrainingRuntime was refused: $out"
}

# KUEUE_METRICS_CERTS: where Kueue v0.19 reads its metrics server's certificate whenever its own
# certificate management is off (fixed in cmd/kueue; read at start, even with metrics off).
KUEUE_METRICS_CERTS=/etc/kueue/metrics/certs
# KUEUE_NS: the namespaces Kueue's release exempts: the namespaceSelector on its job and pod
# webhooks (register_webhooks' "ns:" form), and our managedJobsNamespaceSelector (Kueue's default
# one too), which is what exempts a namespace from the Pod integration.
KUEUE_NS=kube-system,kueue-system

# start_kueue: Kueue's CRDs, its manager with the harness's configuration (kueue_config e2e) and
# its webhooks. Its certificate management is off (internalCertManagement.enable: false): its
# webhook server serves our certificate from webhook.certDir, and it reads the same as its metrics
# certificate from KUEUE_METRICS_CERTS: in an overlay over /etc in our mount namespace (without
# one, on the host: created, and removed at exit, if /etc/kueue did not exist). Its CRDs get the
# conversion webhook its release configures (v1beta1 <-> v1beta2 of localqueues, clusterqueues,
# cohorts, workloads, multikueueclusters) at our URL. Its ports are fixed for the run, so that
# restart_kueue_release leaves the webhooks and the conversion registered.
start_kueue() {
  local d=$RUN/kueue ca crd f crds=() names=()
  free_port KUEUE_HOOK_PORT; free_port KUEUE_PROBE_PORT
  mkdir -p "$d/certs"
  cp "$RUN/pki/kueue.crt" "$d/certs/tls.crt"
  cp "$RUN/pki/kueue.key" "$d/certs/tls.key"
  if [ "${E2E_IN_NETNS:-0}" == 1 ]; then
    # (the upper layer must not be on the overlay filesystem a container's / may be)
    { mkdir -p "$d/etc" && mount -t tmpfs -o size=1m,mode=0700 e2e-kueue-etc "$d/etc" && mkdir "$d/etc/up" "$d/etc/work" &&
      mount -t overlay e2e-kueue-etc -o "lowerdir=/etc,upperdir=$d/etc/up,workdir=$d/etc/work" /etc; } ||
      die "cannot mount an overlay over /etc for $KUEUE_METRICS_CERTS"
  elif [ ! -e /etc/kueue ]; then
    KUEUE_CREATED_ETC=1
  fi
  mkdir -p "$KUEUE_METRICS_CERTS" || die "cannot create $KUEUE_METRICS_CERTS (Kueue reads its metrics certificate there)"
  cp "$d/certs/tls.crt" "$d/certs/tls.key" "$KUEUE_METRICS_CERTS/"

  ca=$(base64 -w0 <"$RUN/pki/ca.crt")
  for f in "$OPS_DIR"/kueue.x-k8s.io_*.yaml; do
    crds+=(-f "$f"); f=${f##*/kueue.x-k8s.io_}; names+=("crd/${f%.yaml}.kueue.x-k8s.io")
  done
  kubectl apply --server-side "${crds[@]}" >/dev/null
  for crd in localqueues clusterqueues cohorts workloads multikueueclusters; do
    kubectl patch crd "$crd.kueue.x-k8s.io" --type=merge -p '{"spec": {"conversion": {"strategy": "Webhook", "webhook": {
      "conversionReviewVersions": ["v1"], "clientConfig": {"url": "https://127.0.0.1:'"$KUEUE_HOOK_PORT"'/convert", "caBundle": "'"$ca"'"}}}}}' >/dev/null
  done
  wait_until 60 kubectl wait --for=condition=Established --timeout=5s "${names[@]}" || die "Kueue's CRDs did not become Established"

  kubectl create namespace kueue-system >/dev/null
  start_kueue_manager e2e || die "kueue not ready"
  # Its release's webhooks (config/components/webhook): its own objects', and those of the kinds
  # mlops-fn renders, with the namespaceSelector the release gives the latter (an integration its
  # configuration leaves out gets a webhook that changes nothing).
  local ns="ns:kubernetes.io/metadata.name!=$KUEUE_NS" p="$KUEUE_HOOK_PORT /mutate-" v="$KUEUE_HOOK_PORT /validate-"
  register_webhooks Mutating e2e-kueue \
    "mclusterqueue.kb.io ${p}kueue-x-k8s-io-v1beta2-clusterqueue kueue.x-k8s.io v1beta2 clusterqueues CREATE" \
    "mresourceflavor.kb.io ${p}kueue-x-k8s-io-v1beta2-resourceflavor kueue.x-k8s.io v1beta2 resourceflavors CREATE" \
    "mworkload.kb.io ${p}kueue-x-k8s-io-v1beta2-workload kueue.x-k8s.io v1beta2 workloads CREATE" \
    "mmpijob.kb.io ${p}kubeflow-org-v2beta1-mpijob kubeflow.org v2beta1 mpijobs CREATE $ns" \
    "mpytorchjob.kb.io ${p}kubeflow-org-v1-pytorchjob kubeflow.org v1 pytorchjobs CREATE $ns" \
    "mtrainjob.kb.io ${p}trainer-kubeflow-org-v1alpha1-trainjob trainer.kubeflow.org v1alpha1 trainjobs CREATE $ns" \
    "mjobset.kb.io ${p}jobset-x-k8s-io-v1alpha2-jobset jobset.x-k8s.io v1alpha2 jobsets CREATE $ns" \
    "mpod.kb.io ${p}-v1-pod - v1 pods CREATE $ns"
  register_webhooks Validating e2e-kueue \
    "vclusterqueue.kb.io ${v}kueue-x-k8s-io-v1beta2-clusterqueue kueue.x-k8s.io v1beta2 clusterqueues CREATE,UPDATE" \
    "vcohort.kb.io ${v}kueue-x-k8s-io-v1beta2-cohort kueue.x-k8s.io v1beta2 cohorts CREATE,UPDATE" \
    "vresourceflavor.kb.io ${v}kueue-x-k8s-io-v1beta2-resourceflavor kueue.x-k8s.io v1beta2 resourceflavors CREATE,UPDATE" \
    "vworkload.kb.io ${v}kueue-x-k8s-io-v1beta2-workload kueue.x-k8s.io v1beta2 workloads,workloads/status CREATE,UPDATE" \
    "vmpijob.kb.io ${v}kubeflow-org-v2beta1-mpijob kubeflow.org v2beta1 mpijobs CREATE,UPDATE $ns" \
    "vpytorchjob.kb.io ${v}kubeflow-org-v1-pytorchjob kubeflow.org v1 pytorchjobs CREATE,UPDATE $ns" \
    "vtrainjob.kb.io ${v}trainer-kubeflow-org-v1alpha1-trainjob trainer.kubeflow.org v1alpha1 trainjobs CREATE,UPDATE $ns" \
    "vjobset.kb.io ${v}jobset-x-k8s-io-v1alpha2-jobset jobset.x-k8s.io v1alpha2 jobsets CREATE,UPDATE $ns" \
    "vpod.kb.io ${v}-v1-pod - v1 pods CREATE,UPDATE $ns"
}

# kueue_config e2e|release: Kueue's Configuration. Both: our addresses and certificates; metrics,
# the visibility API server (VisibilityOnDemand: a port of its own and a certificate under
# /visibility) and leader election off. e2e: the integrations of the kinds mlops-fn renders,
# kubeflow.org/mpijob, kubeflow.org/pytorchjob (off by default in v0.19), trainer.kubeflow.org/
# trainjob, jobset.x-k8s.io/jobset and pod; manageJobsWithoutQueueName false (a job without the
# queue-name label is not Kueue's); the namespaces KUEUE_NS exempts. release: everything else as its
# release ships it ($RUN/kueue-release-config.yaml, from its module: its integrations.frameworks as
# they are), the rest Kueue's defaults; the file's own blocks of the keys set above are left out
# (Kueue decodes strictly: a key twice is an error).
kueue_config() {
  cat <<EOF
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: kueue-system
webhook: {host: 127.0.0.1, port: $KUEUE_HOOK_PORT, certDir: $RUN/kueue/certs}
health: {healthProbeBindAddress: "127.0.0.1:$KUEUE_PROBE_PORT"}
metrics: {bindAddress: "0"}
leaderElection: {leaderElect: false}
internalCertManagement: {enable: false}
featureGates: {VisibilityOnDemand: false}
EOF
  if [ "$1" == release ]; then
    awk '/^[^ #]/ { skip = $1 ~ /^(apiVersion|kind|namespace|webhook|health|metrics|leaderElection|internalCertManagement|featureGates):$/ } !skip' \
      "$RUN/kueue-release-config.yaml"
    return
  fi
  cat <<EOF
manageJobsWithoutQueueName: false
managedJobsNamespaceSelector:
  matchExpressions: [{key: kubernetes.io/metadata.name, operator: NotIn, values: [${KUEUE_NS//,/, }]}]
integrations:
  frameworks: [kubeflow.org/mpijob, kubeflow.org/pytorchjob, trainer.kubeflow.org/trainjob, jobset.x-k8s.io/jobset, pod]
EOF
}

# start_kueue_manager e2e|release: Kueue's manager with that configuration (kueue_config), started
# as kueue (e2e) or kueue-release, until it is ready.
start_kueue_manager() {
  local name=kueue
  [ "$1" == e2e ] || name=kueue-$1
  kueue_config "$1" >"$RUN/kueue/$1.yaml"
  start "$name" "$OPS_DIR/kueue" --config="$RUN/kueue/$1.yaml" --kubeconfig="$KUBECONFIG"
  wait_until 90 curl -sf "http://127.0.0.1:$KUEUE_PROBE_PORT/readyz" || { alive "$name"; return 1; }
}

# restart_kueue_release: Kueue's manager stopped, then started with its release's configuration,
# on the same ports: its webhooks and its CRDs' conversion stay registered.
restart_kueue_release() {
  local t=$SECONDS
  stop kueue && start_kueue_manager release || return 1
  log "Kueue restarted with its release's configuration in $((SECONDS - t)) s"
}

node_schedulable() {
  [ "$(kubectl get node kwok-gpu-0 -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" == True ] &&
    [ -z "$(kubectl get node kwok-gpu-0 -o jsonpath='{.spec.taints}')" ]
}

on_exit() {
  local rc=$? name
  if [ -z "${SUMMARY_DONE:-}" ]; then
    log "ERROR: the harness stopped early (status $rc); component logs: $LOGS"
    for name in "${STARTED_NAMES[@]}"; do alive "$name" >/dev/null || true; done
  fi
  stop_all
  # On the host's /tmp (no namespace of our own): training-operator's certificate and key; and
  # Kueue's metrics certificate, if the harness created /etc/kueue.
  [ "${E2E_IN_NETNS:-0}" == 1 ] || rm -rf "$TRAINING_CERT_DIR"
  [ -z "${KUEUE_CREATED_ETC:-}" ] || rm -rf /etc/kueue
}

inside() {
  RUN=$1
  mkdir -p "$RUN/logs"
  trap on_exit EXIT
  trap 'exit 130' INT TERM
  start_cluster
  OVERLAYS="${*:2}"
  local rc=0 t kueue=release
  if ! release_phase; then
    checks ${E2E_RUN:+"-test.run=$E2E_RUN"} || rc=$?
  else
    # TestKueueDefault last, once Kueue runs its release's configuration; its summary counts both.
    E2E_TALLY_TO=$RUN/tally.json checks -test.skip='^TestKueueDefault$' ${E2E_RUN:+"-test.run=$E2E_RUN"} || rc=$?
    t=$SECONDS
    restart_kueue_release || kueue="not ready with its release's configuration (log: $LOGS/kueue-release.log)"
    E2E_TALLY_FROM=$RUN/tally.json E2E_KUEUE_CONFIG=$kueue checks -test.run='^TestKueueDefault$' || rc=$?
    log "TestKueueDefault and Kueue's restart: $((SECONDS - t)) s"
  fi
  SUMMARY_DONE=1
  return "$rc"
}

# checks FLAG...: the checks (hack/e2e/*_test.go, built by main) of OVERLAYS, with those go test
# flags. They print PASS/FAIL a check and the summary (E2E_TALLY_TO: write its counts there instead).
checks() {
  KUBERNETES_VERSION=$KUBERNETES_VERSION GANG_SCHEDULER=$GANG_SCHEDULER MLOPS_FN=$MLOPS_FN E2E_OVERLAYS="$OVERLAYS" E2E_REAL_NODE=${E2E_REAL_NODE:-} \
    "$RUN/e2e.test" -test.timeout=60m -test.count=1 "$@"
}

# release_phase: TestKueueDefault runs: E2E_RUN selects it (matched as bash matches a regular
# expression) and so do OVERLAYS (none named, or E2E_KUEUE=1).
release_phase() {
  { [ -z "$OVERLAYS" ] || [ "${E2E_KUEUE:-}" == 1 ]; } && [[ TestKueueDefault =~ ${E2E_RUN:-.} ]]
}

# stop_harness PID NETNS_WORDS: TERMs the harness started as PID (or unshare's child, when
# started through it), then KILLs it after 30 s.
stop_harness() {
  local target=$1
  [ "$2" -gt 1 ] && target=$(pgrep -P "$1" || echo "$1")
  kill -TERM "$target" 2>/dev/null || true
  for _ in $(seq 300); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$target" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}

main() {
  local t=$SECONDS rc=0 netns=(env) child src
  [ -x "$MLOPS_FN" ] || die "$MLOPS_FN missing: run make build (make e2e does)"
  build_all
  export PATH="$K8S_DIR:$PATH"   # the pinned kubectl first
  RUN=$(mktemp -d "${TMPDIR:-/tmp}/mlops-fn-e2e.XXXXXX")
  trap 'rm -rf "$LOGS"; mkdir -p "${LOGS%/*}"; cp -r "$RUN/logs" "$LOGS" 2>/dev/null; rm -rf "$RUN"' EXIT
  # Kueue's release configuration (kueue_config release), from its module.
  src=$(mod_dir "$TOOLS/operators" "sigs.k8s.io/kueue@$KUEUE_VERSION") &&
    cp "$src/config/components/manager/controller_manager_config.yaml" "$RUN/kueue-release-config.yaml" ||
    die "no config/components/manager/controller_manager_config.yaml in Kueue $KUEUE_VERSION's module"
  # The checks, built here: inside the namespace there is no network for the module proxy.
  (cd "$ROOT" && GOFLAGS=-mod=readonly go test -c -tags e2e -o "$RUN/e2e.test" ./hack/e2e) ||
    die "the checks (hack/e2e/*_test.go) do not build"
  # A network namespace of its own (with a PID namespace, so nothing it started can outlive
  # it): only its loopback, nothing listening on the host's, no port conflicts.
  if [ "${E2E_NETNS:-1}" != 0 ] && unshare --net --pid --fork --mount-proc true 2>/dev/null; then
    netns=(env E2E_IN_NETNS=1 unshare --net --pid --fork --kill-child --mount-proc
      bash -c 'ip link set lo up && exec "$@"' e2e)
  else
    log "no network namespace (E2E_NETNS=0 or unshare not permitted): using the host's 127.0.0.1"
  fi
  "${netns[@]}" "$0" --inside "$RUN" "$@" &
  child=$!
  # Interrupted: TERM the harness, which stops what it started. Inside unshare (which ignores
  # TERM) that is unshare's child; the namespace dies with it, whatever it left.
  trap 'stop_harness "$child" ${#netns[@]}; exit 130' INT TERM
  wait "$child" || rc=$?
  log "e2e took $((SECONDS - t)) s; component logs: $LOGS"
  return "$rc"
}

if [ "${1:-}" == --inside ]; then
  shift
  build_all >/dev/null 2>&1 || die "the binaries are not built"  # cached: only finds them
  inside "$@"
else
  main "$@"
fi
