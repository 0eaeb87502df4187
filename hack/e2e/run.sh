#!/usr/bin/env bash
# make e2e: mlops-fn's overlays against a real control plane.
#
# Builds (once, cached in .cache/e2e) etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler and kubectl of the pinned Kubernetes, the pinned mpi-operator and its MPIJob
# CRD, the pinned training-operator and its PyTorchJob CRD, Kubeflow Trainer and JobSet with
# their CRDs and Trainer's torch-distributed ClusterTrainingRuntime, kwok as a fake kubelet,
# and Kueue with its CRDs (hack/e2e/build.sh, versions in hack/e2e/versions.env); starts
# them on 127.0.0.1 inside a network namespace of their own (E2E_NETNS=0: on the host's
# loopback); then, for the quickstart overlays and every example (each folder with a job.yaml):
#
#   1. kubectl apply -k --server-side --dry-run=server, and --dry-run=client, accept every
#      object; deliberately broken objects are rejected;
#   2. applied for real, mpi-operator creates the launcher and exactly WORKERS workers, the
#      hostfile has SLOTS slots a worker, the pods carry mlops.env's ids, NFS volume, GPU limits
#      and envFrom; the pods run, and the job succeeds when kwok completes the launcher;
#   3. the Pod Security level mlops-fn names (its warning "needs Pod Security level LEVEL";
#      none = restricted) is the lowest that admits the pods, with the real PodSecurity
#      admission; under restricted, mpi-operator's pods (or the Pod) of a job needing more
#      are refused;
#   4. single-node: the Pod is admitted, runs and succeeds.
# A PyTorchJob (elastic) gets check 2 from training-operator (its PyTorchJob controller, and its
# validating webhook): exactly WORKERS workers <job>-worker-N whose pytorch container carries
# the PET_* variables torchrun reads (nnodes MIN:MAX, rendezvous backend, endpoint and id,
# procs per node, max restarts), with the same pod checks; the pods run and the job is Running.
# A TrainJob (Kubeflow Trainer v2: its webhooks, TrainJob controller and torch plugin, then
# JobSet, then the Job controller) gets check_trainjob: the JobSet, exactly numNodes node pods
# carrying the runtime patches' securityContext, ServiceAccount, volumes and mounts, the
# trainer's image, env and resourcesPerNode, and the PET_* variables torchrun reads; they run,
# and completing them completes the TrainJob; then its pods' Pod Security level (check 3). The
# hand-written hack/e2e/manifests/trainjob runs so, and broken copies of it must be refused.
# Kueue runs throughout (its webhooks see every job and pod; none of the above has a queue, so it
# must hold none of them); check_kueue then takes each quickstart kind (MPIJob, PyTorchJob,
# TrainJob, Pod) with QUEUE in mlops.env through a ClusterQueue whose quota it sets: created held
# with its Workload, admitted and running, a second one held until the first is deleted, and the
# overlay without QUEUE not held (see check_kueue).
#
# Prints PASS/FAIL a check, then "N passed, N failed"; exits 1 on any failure. Every process it
# starts is stopped at the end, failure or not; logs are kept in .cache/e2e/logs.
#
# Usage: hack/e2e/run.sh [OVERLAY_DIR...]   (default: all of them; the Kueue checks run with all
# of them, or with E2E_KUEUE=1)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT"
source hack/e2e/build.sh   # also lib.sh and versions.env
MLOPS_FN=${MLOPS_FN:-$ROOT/bin/mlops-fn}  # (another build: MLOPS_FN=path)
LEVELS=(restricted baseline privileged)

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

  start etcd "$ETCD_DIR/etcd" --name e2e --data-dir "$RUN/etcd" --log-level warn --unsafe-no-fsync \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
    --initial-cluster "e2e=http://127.0.0.1:$peer_port"
  wait_until 30 curl -sf "http://127.0.0.1:$etcd_port/health" || { alive etcd; die "etcd did not start"; }

  # PodSecurity admission is on by default in v1.33; naming it keeps that explicit.
  start kube-apiserver "$K8S_DIR/kube-apiserver" \
    --etcd-servers="http://127.0.0.1:$etcd_port" \
    --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$API_PORT" \
    --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
    --client-ca-file="$pki/ca.crt" --cert-dir="$RUN/apiserver" \
    --service-account-issuer=https://kubernetes.default.svc \
    --service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
    --service-cluster-ip-range=10.96.0.0/16 --endpoint-reconciler-type=none \
    --authorization-mode=RBAC --enable-admission-plugins=PodSecurity
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
  kubectl apply --server-side -f "$MPI_DIR/kubeflow.org_mpijobs.yaml" -f "$TRAINING_DIR/kubeflow.org_pytorchjobs.yaml" \
    -f "$TRAINER_DIR/jobset.x-k8s.io_jobsets.yaml" -f "$TRAINER_DIR/trainer.kubeflow.org_trainjobs.yaml" \
    -f "$TRAINER_DIR/trainer.kubeflow.org_trainingruntimes.yaml" -f "$TRAINER_DIR/trainer.kubeflow.org_clustertrainingruntimes.yaml" >/dev/null
  wait_until 60 kubectl wait --for=condition=Established --timeout=5s crd/mpijobs.kubeflow.org crd/pytorchjobs.kubeflow.org \
    crd/jobsets.jobset.x-k8s.io crd/trainjobs.trainer.kubeflow.org crd/trainingruntimes.trainer.kubeflow.org \
    crd/clustertrainingruntimes.trainer.kubeflow.org ||
    die "the CRDs did not become Established"
  # mpi-operator takes a leader-election lease in its lock namespace, which must exist.
  # Its health endpoint is :8080 on every interface, not configurable (hence the netns).
  kubectl create namespace mpi-operator >/dev/null
  if [ "${E2E_IN_NETNS:-0}" != 1 ] && port_open 8080; then die "port 8080 is taken: mpi-operator needs it"; fi
  start mpi-operator "$MPI_DIR/mpi-operator" --kubeConfig="$KUBECONFIG" \
    --lock-namespace=mpi-operator --threadiness=4 --kube-api-qps=50 --kube-api-burst=100
  wait_until 60 curl -sf http://127.0.0.1:8080/healthz || { alive mpi-operator; die "mpi-operator not healthy"; }

  start_training_operator
  start_jobset
  start_trainer
  start_kueue

  start kwok "$KWOK_DIR/kwok" --kubeconfig="$KUBECONFIG" --config="$KWOK_DIR/stages.yaml" \
    --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake --node-lease-duration-seconds=40
  kubectl apply --server-side -f hack/e2e/manifests/node.yaml >/dev/null
  wait_until 60 node_schedulable || { alive kwok; die "the fake node did not become Ready"; }
  wait_until 60 kubectl get serviceaccount default -n default || die "no default ServiceAccount"
  log "control plane up in $((SECONDS - t)) s"
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
  MY_POD_NAMESPACE=kubeflow start training-operator "$TRAINING_DIR/training-operator" \
    --enable-scheme=pytorchjob --controller-threads=4 --leader-elect=false \
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
  start jobset "$TRAINER_DIR/jobset" --config="$d/config.yaml" --kubeconfig="$KUBECONFIG" --metrics-bind-address=0
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
  TMPDIR=$d/tmp start trainer "$TRAINER_DIR/trainer-controller-manager" --config="$d/config.yaml" --kubeconfig="$KUBECONFIG"
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
  out=$(kubectl apply --server-side -f "$TRAINER_DIR/torch_distributed.yaml" 2>&1) ||
    die "the torch-distributed ClusterTrainingRuntime was refused: $out"
}

# KUEUE_METRICS_CERTS: where Kueue v0.19 reads its metrics server's certificate whenever its own
# certificate management is off (fixed in cmd/kueue; read at start, even with metrics off).
KUEUE_METRICS_CERTS=/etc/kueue/metrics/certs
# KUEUE_NS: the namespaces Kueue's release exempts: the namespaceSelector on its job and pod
# webhooks (register_webhooks' "ns:" form), and our managedJobsNamespaceSelector, which is what
# exempts a namespace from the Pod integration.
KUEUE_NS=kube-system,kueue-system

# start_kueue: Kueue's manager and webhooks, with the integrations of the kinds mlops-fn renders:
# kubeflow.org/mpijob, kubeflow.org/pytorchjob (off by default in v0.19), trainer.kubeflow.org/
# trainjob and pod; manageJobsWithoutQueueName false (a job without the queue-name label is not
# Kueue's). Its certificate management is off (internalCertManagement.enable: false): its
# webhook server serves our certificate from webhook.certDir, and it reads the same as its metrics
# certificate from KUEUE_METRICS_CERTS: in an overlay over /etc in our mount namespace (without
# one, on the host: created, and removed at exit, if /etc/kueue did not exist). Metrics, the
# visibility API server (VisibilityOnDemand: a port of its own and a certificate under /visibility)
# and leader election off. Its CRDs get the conversion webhook its release configures (v1beta1
# <-> v1beta2 of localqueues, clusterqueues, cohorts, workloads, multikueueclusters) at our URL.
start_kueue() {
  local d=$RUN/kueue hook_port probe_port ca crd f crds=() names=()
  free_port hook_port; free_port probe_port
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
  for f in "$KUEUE_DIR"/kueue.x-k8s.io_*.yaml; do
    crds+=(-f "$f"); f=${f##*/kueue.x-k8s.io_}; names+=("crd/${f%.yaml}.kueue.x-k8s.io")
  done
  kubectl apply --server-side "${crds[@]}" >/dev/null
  for crd in localqueues clusterqueues cohorts workloads multikueueclusters; do
    kubectl patch crd "$crd.kueue.x-k8s.io" --type=merge -p '{"spec": {"conversion": {"strategy": "Webhook", "webhook": {
      "conversionReviewVersions": ["v1"], "clientConfig": {"url": "https://127.0.0.1:'"$hook_port"'/convert", "caBundle": "'"$ca"'"}}}}}' >/dev/null
  done
  wait_until 60 kubectl wait --for=condition=Established --timeout=5s "${names[@]}" || die "Kueue's CRDs did not become Established"

  kubectl create namespace kueue-system >/dev/null
  cat >"$d/config.yaml" <<EOF
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: kueue-system
webhook: {host: 127.0.0.1, port: $hook_port, certDir: $d/certs}
health: {healthProbeBindAddress: "127.0.0.1:$probe_port"}
metrics: {bindAddress: "0"}
leaderElection: {leaderElect: false}
internalCertManagement: {enable: false}
manageJobsWithoutQueueName: false
managedJobsNamespaceSelector:
  matchExpressions: [{key: kubernetes.io/metadata.name, operator: NotIn, values: [${KUEUE_NS//,/, }]}]
featureGates: {VisibilityOnDemand: false}
integrations:
  frameworks: [kubeflow.org/mpijob, kubeflow.org/pytorchjob, trainer.kubeflow.org/trainjob, pod]
EOF
  start kueue "$KUEUE_DIR/kueue" --config="$d/config.yaml" --kubeconfig="$KUBECONFIG"
  wait_until 90 curl -sf "http://127.0.0.1:$probe_port/readyz" || { alive kueue; die "kueue not ready"; }
  # Its release's webhooks (config/components/webhook): its own objects', and those of the
  # integrations enabled above, with the namespaceSelector the release gives the latter.
  local ns="ns:kubernetes.io/metadata.name!=$KUEUE_NS" p="$hook_port /mutate-" v="$hook_port /validate-"
  register_webhooks Mutating e2e-kueue \
    "mclusterqueue.kb.io ${p}kueue-x-k8s-io-v1beta2-clusterqueue kueue.x-k8s.io v1beta2 clusterqueues CREATE" \
    "mresourceflavor.kb.io ${p}kueue-x-k8s-io-v1beta2-resourceflavor kueue.x-k8s.io v1beta2 resourceflavors CREATE" \
    "mworkload.kb.io ${p}kueue-x-k8s-io-v1beta2-workload kueue.x-k8s.io v1beta2 workloads CREATE" \
    "mmpijob.kb.io ${p}kubeflow-org-v2beta1-mpijob kubeflow.org v2beta1 mpijobs CREATE $ns" \
    "mpytorchjob.kb.io ${p}kubeflow-org-v1-pytorchjob kubeflow.org v1 pytorchjobs CREATE $ns" \
    "mtrainjob.kb.io ${p}trainer-kubeflow-org-v1alpha1-trainjob trainer.kubeflow.org v1alpha1 trainjobs CREATE $ns" \
    "mpod.kb.io ${p}-v1-pod - v1 pods CREATE $ns"
  register_webhooks Validating e2e-kueue \
    "vclusterqueue.kb.io ${v}kueue-x-k8s-io-v1beta2-clusterqueue kueue.x-k8s.io v1beta2 clusterqueues CREATE,UPDATE" \
    "vcohort.kb.io ${v}kueue-x-k8s-io-v1beta2-cohort kueue.x-k8s.io v1beta2 cohorts CREATE,UPDATE" \
    "vresourceflavor.kb.io ${v}kueue-x-k8s-io-v1beta2-resourceflavor kueue.x-k8s.io v1beta2 resourceflavors CREATE,UPDATE" \
    "vworkload.kb.io ${v}kueue-x-k8s-io-v1beta2-workload kueue.x-k8s.io v1beta2 workloads,workloads/status CREATE,UPDATE" \
    "vmpijob.kb.io ${v}kubeflow-org-v2beta1-mpijob kubeflow.org v2beta1 mpijobs CREATE,UPDATE $ns" \
    "vpytorchjob.kb.io ${v}kubeflow-org-v1-pytorchjob kubeflow.org v1 pytorchjobs CREATE,UPDATE $ns" \
    "vtrainjob.kb.io ${v}trainer-kubeflow-org-v1alpha1-trainjob trainer.kubeflow.org v1alpha1 trainjobs CREATE,UPDATE $ns" \
    "vpod.kb.io ${v}-v1-pod - v1 pods CREATE,UPDATE $ns"
}

node_schedulable() {
  [ "$(kubectl get node kwok-gpu-0 -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" == True ] &&
    [ -z "$(kubectl get node kwok-gpu-0 -o jsonpath='{.spec.taints}')" ]
}

# ---------------------------------------------------------------- overlays

# load_overlay DIR: what the overlay's inputs say the output must be (O_* variables). A folder
# without job.yaml is a hand-written fixture (hack/e2e/manifests/*): no mlops.env to compare
# with, the checks go by its objects alone.
load_overlay() {
  O_DIR=${1%/}
  O_SLUG=$(echo "$O_DIR" | sed 's#^quickstart/k8s/mlops/#qs-#; s#^examples/##; s#^hack/e2e/manifests/#fixture-#; s#/#-#g')
  RENDERED=$RUN/$O_SLUG.yaml
  kubectl kustomize "$O_DIR" >"$RENDERED"
  # The same as JSON (kubectl fills in the namespace it would use: dropped).
  kubectl create --dry-run=client -o json -f "$RENDERED" | jq -s '{kind: "List", apiVersion: "v1",
    items: [.[] | if .kind == "List" then .items[] else . end | del(.metadata.namespace)]}' >"$RUN/$O_SLUG.json"
  O_KIND=$(jq -r '[.items[].kind | select(. == "MPIJob" or . == "Pod" or . == "PyTorchJob" or . == "TrainJob")][0] // "none"' "$RUN/$O_SLUG.json")
  O_ENV=$O_DIR/mlops.env
  if [ ! -f "$O_DIR/job.yaml" ]; then
    # Its Pod Security level: a comment in its kustomization.yaml, worded as mlops-fn's warning.
    O_ENV="" O_MODE=fixture O_WARNINGS=$(grep -o 'needs Pod Security level [a-z]*' "$O_DIR/kustomization.yaml" || true)
    O_CLAIMED=${O_WARNINGS##* }; O_CLAIMED=${O_CLAIMED:-restricted}
    O_JOB=$(jq -r --arg k "$O_KIND" '[.items[] | select(.kind == $k) | .metadata.name][0] // ""' "$RUN/$O_SLUG.json")
    O_WORKERS="" O_GPUS=0 O_SLOTS="" O_UID="" O_GID="" O_FSGROUP="" O_CPU="" O_MEMORY="" O_NFS_SERVER=""
    [ "$O_KIND" != TrainJob ] || load_trainjob
    return 0
  fi
  local env=$O_ENV job=$O_DIR/job.yaml
  O_JOB=$(meta_name "$job")
  O_MODE=$(spec_get "$job" mode); O_MODE=${O_MODE:-multi-node}
  O_WORKERS=$(env_get "$env" WORKERS); O_WORKERS=${O_WORKERS:-$(spec_get "$job" workers)}; O_WORKERS=${O_WORKERS:-1}
  O_GPUS=$(env_get "$env" GPUS_PER_WORKER); O_GPUS=${O_GPUS:-$(spec_get "$job" gpusPerWorker)}; O_GPUS=${O_GPUS:-0}
  O_SLOTS=$(env_get "$env" SLOTS_PER_WORKER); O_SLOTS=${O_SLOTS:-$(spec_get "$job" slotsPerWorker)}
  if [ -z "$O_SLOTS" ]; then if [ "$O_GPUS" -gt 0 ]; then O_SLOTS=$O_GPUS; else O_SLOTS=1; fi; fi
  O_UID=$(env_get "$env" USER_ID); O_GID=$(env_get "$env" GROUP_ID); O_FSGROUP=$(env_get "$env" FS_GROUP)
  O_CPU=$(env_get "$env" CPU); O_MEMORY=$(env_get "$env" MEMORY)
  O_NFS_SERVER=$(env_get "$env" NFS_SERVER); O_NFS_PATH=$(env_get "$env" NFS_PATH)
  O_NFS_MOUNT=$(env_get "$env" NFS_MOUNT_PATH)
  O_MPI=$(awk '/^  mpi:/ {m=1; next} /^  [^ ]/ {m=0} m && $1 == "implementation:" {print $2}' "$job")
  O_MPI=${O_MPI:-OpenMPI}
  O_LAUNCHER_WORKER=$(awk '/^  mpi:/ {m=1; next} /^  [^ ]/ {m=0} m && $1 == "runLauncherAsWorker:" {print $2}' "$job")
  # Elastic: the torchrun settings (PET_*) the operator must derive from what mlops-fn renders
  # (README, "Elastic"; render.Plan: MIN/MAX_WORKERS default to WORKERS, procs per worker to
  # max(GPUs, 1), the etcd rendezvous id to runId, else the job's name).
  elastic() { awk -v f="$1:" '/^  elastic:/ {m=1; next} /^  [^ ]/ {m=0} m && $1 == f {v=$2; gsub(/"/, "", v); print v}' "$job"; }
  X_MIN=$(env_get "$env" MIN_WORKERS); X_MIN=${X_MIN:-$(elastic minWorkers)}; X_MIN=${X_MIN:-$O_WORKERS}
  X_MAX=$(env_get "$env" MAX_WORKERS); X_MAX=${X_MAX:-$(elastic maxWorkers)}; X_MAX=${X_MAX:-$O_WORKERS}
  X_BACKEND=$(elastic rendezvousBackend); X_BACKEND=${X_BACKEND:-c10d}
  X_ENDPOINT="$O_JOB-worker-0:23456" X_RDZV_ID=""
  if [ "$X_BACKEND" != c10d ]; then
    X_ENDPOINT=$(env_get "$env" RDZV_ENDPOINT); X_ENDPOINT=${X_ENDPOINT:-$(elastic rendezvousEndpoint)}
    X_RDZV_ID=$(elastic runId); X_RDZV_ID=${X_RDZV_ID:-$O_JOB}
  fi
  X_NPROC=$(elastic procsPerWorker); X_NPROC=${X_NPROC:-$((O_GPUS > 0 ? O_GPUS : 1))}
  X_MAX_RESTARTS=$(elastic maxRestarts)
  # What the pod securityContext must hold ("" = absent): README, "The job spec".
  X_UID=$O_UID X_GID=$O_GID X_NONROOT=""
  [ -n "$O_UID" ] && [ "$O_UID" != 0 ] && X_NONROOT=true
  X_FSGROUP=${O_FSGROUP:-$O_GID}
  if [ "$O_MODE" == multi-node ] && [ "${O_UID:-0}" == 0 ]; then X_FSGROUP=""; fi  # root MPIJob: no fsGroup
  # The Pod Security level mlops-fn says the job needs: its warning, else restricted.
  O_WARNINGS=$("$MLOPS_FN" hydrate --check "$O_DIR" 2>&1 >/dev/null || true)
  O_CLAIMED=$(echo "$O_WARNINGS" | sed -n 's/.*needs Pod Security level \([a-z]*\).*/\1/p' | head -n 1)
  O_CLAIMED=${O_CLAIMED:-restricted}
  [ "$O_KIND" != TrainJob ] || load_trainjob
  return 0
}

# load_trainjob: what the rendered TrainJob asks Trainer for (T_* variables), whoever wrote it;
# check_trainjob compares the pods Trainer, JobSet and the Job controller make with it.
#   T_NODES   trainer.numNodes (the runtime's mlPolicy.numNodes, 1 for torch-distributed, if unset)
#   T_POD     the runtime patches' pod spec for the replicated job "node", merged in order
#   T_NODE    the same patches' container "node" (volumeMounts, securityContext)
#   T_NPROC   PET_NPROC_PER_NODE as Trainer's torch plugin derives it (plugins/torch/torch.go):
#             numProcPerNode; else "auto" with a GPU in resourcesPerNode (any resource named
#             *gpu*, requests before limits); else the CPU request (else limit) rounded up, at least 1
load_trainjob() {
  T_JSON=$(jq -c '[.items[] | select(.kind == "TrainJob")][0]' "$RUN/$O_SLUG.json")
  T_NODES=$(echo "$T_JSON" | jq -r '.spec.trainer.numNodes // 1')
  T_POD=$(echo "$T_JSON" | jq -c '[.spec.runtimePatches[]?.trainingRuntimeSpec.template.spec.replicatedJobs[]? |
    select(.name == "node") | .template.spec.template.spec // {}] | reduce .[] as $p ({}; . * ($p | del(.containers)) +
    {volumes: ((.volumes // []) + ($p.volumes // []))})')
  T_NODE=$(echo "$T_JSON" | jq -c '[.spec.runtimePatches[]?.trainingRuntimeSpec.template.spec.replicatedJobs[]? |
    select(.name == "node") | .template.spec.template.spec.containers[]? | select(.name == "node")] |
    reduce .[] as $c ({}; . * ($c | del(.volumeMounts)) + {volumeMounts: ((.volumeMounts // []) + ($c.volumeMounts // []))})')
  T_NPROC=$(echo "$T_JSON" | jq -r 'def gpus: [(. // {}) | to_entries[] | select(.key | ascii_downcase | contains("gpu")) |
      .value | tonumber][0] // 0;
    def cpus: if . == null then 0 else tostring | if endswith("m") then .[:-1] | tonumber / 1000 else tonumber end | ceil end;
    .spec.trainer as $t | ($t.resourcesPerNode // {}) as $r |
    if $t.numProcPerNode != null then $t.numProcPerNode | tostring
    elif ([($r.requests | gpus), ($r.limits | gpus)] | max) > 0 then "auto"
    else [1, (if ($r.requests.cpu | cpus) > 0 then $r.requests.cpu | cpus else $r.limits.cpu | cpus end)] | max | tostring end')
}

# apply_service_accounts NAMESPACE: creates the overlay's ServiceAccounts there.
apply_service_accounts() {
  if [ "$(jq '[.items[] | select(.kind == "ServiceAccount")] | length' "$RUN/$O_SLUG.json")" -gt 0 ]; then
    jq '.items |= map(select(.kind == "ServiceAccount"))' "$RUN/$O_SLUG.json" | kubectl apply -f - -n "$1" --server-side >/dev/null
  fi
}

# new_ns NAME [LEVEL]: a namespace (enforcing Pod Security LEVEL), once its default
# ServiceAccount exists (pods without one are refused).
new_ns() {
  local labels=""
  [ -n "${2:-}" ] && labels="\"pod-security.kubernetes.io/enforce\": \"$2\", \"pod-security.kubernetes.io/warn\": \"$2\""
  echo "{\"apiVersion\": \"v1\", \"kind\": \"Namespace\", \"metadata\": {\"name\": \"$1\", \"labels\": {$labels}}}" |
    kubectl create -f - >/dev/null
  wait_until 30 kubectl get serviceaccount default -n "$1" || die "namespace $1 got no default ServiceAccount"
}

# Check 1: server and client dry runs accept every object; broken objects are refused.
check_dry_run() {
  local ns=dry-$O_SLUG out want got others
  new_ns "$ns"
  want=$(grep -c '^kind:' "$RENDERED")
  # In a fresh namespace a server dry run cannot admit a Pod whose ServiceAccount the same apply
  # creates (a dry run stores nothing; ServiceAccount admission looks it up): every other
  # object must be accepted, and all of them once the ServiceAccounts exist.
  if out=$(kubectl apply -k "$O_DIR" -n "$ns" --server-side --dry-run=server 2>&1); then
    got=$(echo "$out" | grep -c 'serverside-applied (server dry run)' || true)
    expect_eq "$O_DIR: apply -k --server-side --dry-run=server accepts all $want objects in a fresh namespace" "$want" "$got"
  else
    others=$(echo "$out" | grep -v 'serverside-applied (server dry run)' |
      grep -v "error looking up service account $ns/.*: serviceaccount \".*\" not found" || true)
    if [ -z "$others" ]; then
      pass "$O_DIR: apply -k --server-side --dry-run=server in a fresh namespace refuses only Pods whose new ServiceAccount a dry run cannot see"
      echo "$out" | grep 'not found' | cut -c1-250 | sed 's/^/        /'
    else
      fail "$O_DIR: apply -k --server-side --dry-run=server accepts all objects in a fresh namespace" "$out"
    fi
    apply_service_accounts "$ns"
    if out=$(kubectl apply -k "$O_DIR" -n "$ns" --server-side --dry-run=server 2>&1); then
      got=$(echo "$out" | grep -c 'serverside-applied (server dry run)' || true)
      expect_eq "$O_DIR: apply -k --server-side --dry-run=server accepts all $want objects once its ServiceAccounts exist" "$want" "$got"
    else
      fail "$O_DIR: apply -k --server-side --dry-run=server accepts all objects once its ServiceAccounts exist" "$out"
    fi
  fi
  if out=$(kubectl apply -k "$O_DIR" -n "$ns" --dry-run=client 2>&1); then
    got=$(echo "$out" | grep -c '(dry run)' || true)
    expect_eq "$O_DIR: apply -k --dry-run=client accepts all $want objects" "$want" "$got"
  else
    fail "$O_DIR: apply -k --dry-run=client accepts all objects" "$out"
  fi
}

# expect_rejected DESCRIPTION NAMESPACE PATTERN SED_EXPR: the rendered overlay, broken by
# SED_EXPR, is refused by a server dry run with an error matching PATTERN.
expect_rejected() {
  local broken out
  broken=$(sed "$4" "$RENDERED")
  if [ "$broken" == "$(cat "$RENDERED")" ]; then fail "$1" "the edit '$4' changed nothing"; return; fi
  if out=$(echo "$broken" | kubectl apply -f - -n "$2" --server-side --dry-run=server 2>&1); then
    fail "$1" "accepted:" "$out"
  elif echo "$out" | grep -q "$3"; then
    pass "$1"; echo "$out" | grep "$3" | head -n 2 | cut -c1-300 | sed 's/^/        /'
  else
    fail "$1" "refused, but not for $3:" "$out"
  fi
}

# The checks above can fail: the same quickstart output, broken, is refused.
check_broken_objects() {
  new_ns broken
  load_overlay quickstart/k8s/mlops/multi-node
  expect_rejected "negative: an MPIJob with replicas: \"two\" is refused" broken 'replicas' \
    '/Worker:/,/replicas:/ s/replicas: [0-9]*/replicas: "two"/'
  expect_rejected "negative: an MPIJob with a misspelt field is refused" broken 'slotPerWorker' \
    's/^  slotsPerWorker:/  slotPerWorker:/'
  load_overlay quickstart/k8s/mlops/single-node
  expect_rejected "negative: a Pod with runAsUser: \"1000\" (a string) is refused" broken 'runAsUser' \
    's/runAsUser: \([0-9]*\)/runAsUser: "\1"/'
  load_overlay quickstart/k8s/mlops/elastic
  expect_rejected "negative: training-operator's webhook refuses a PyTorchJob without a pytorch container" broken \
    'must have at least one container with name pytorch' 's/^\( *\)name: pytorch$/\1name: trainer/'
}

# TRAINJOB_FIXTURE: the hand-written TrainJob check_trainjob runs like an overlay, and
# check_broken_trainjob breaks.
TRAINJOB_FIXTURE=hack/e2e/manifests/trainjob

# The TrainJob fixture, broken: Trainer's validating webhook (named in the refusal, so the
# refusal is its and not the CRD schema's) refuses each of its rules mlops-fn's output must keep;
# the schema refuses a misspelt field. What Trainer v2.3.0 admits although it cannot
# run, so that mlops-fn must refuse it itself: numNodes 0 (the TrainJob completes at once,
# without a pod) or below, numProcPerNode 0, and a runtime patch of a container the runtime
# does not have (its Job is then invalid: a container without image).
check_broken_trainjob() {
  local hook='admission webhook "validator.trainjob.trainer.kubeflow.org" denied the request: '
  load_overlay "$TRAINJOB_FIXTURE"
  # In a namespace Kueue's webhooks exempt (its own): elsewhere its TrainJob webhook, which works
  # out the pod sets of any TrainJob, queued or not, refuses the same (runtime '...' not found),
  # and whichever webhook answers first is the refusal kubectl shows.
  expect_rejected "negative: Trainer's webhook refuses a TrainJob whose runtimeRef names no ClusterTrainingRuntime" kueue-system \
    "$hook.*specified clusterTrainingRuntime must be created before the TrainJob is created" \
    '/^  runtimeRef:/,/^  [a-z]/ s/^    name: torch-distributed$/    name: no-such-runtime/'
  expect_rejected "negative: Trainer's webhook refuses a TrainJob setting a torchrun variable (PET_NNODES) in trainer.env" broken \
    "$hook.*must not have reserved envs" 's/^    - name: WORKERS$/    - name: PET_NNODES/'
  expect_rejected "negative: Trainer's webhook refuses env in the runtime patch of container node (only trainer.env may set it)" broken \
    "$hook.*must not have envs for the" 's/^\(                    - name: node\)$/\1\n                      env: [{name: EXTRA, value: "1"}]/'
  expect_rejected "negative: Trainer's webhook refuses a runtime patch whose manager is no domain-prefixed path" broken \
    "$hook.*manager" 's#^  - manager: mlops-fn.dev/mlops-fn$#  - manager: mlops-fn#'
  expect_rejected "negative: a TrainJob with a misspelt field (runtimePatch) is refused" broken \
    '.spec.runtimePatch: field not declared in schema' 's/^  runtimePatches:$/  runtimePatch:/'
}

# psa_probe LEVEL: the overlay's pods (for an MPIJob: its pod templates as Pods) in a server
# dry run in a namespace enforcing LEVEL. Prints the admission's answer; fails if refused.
psa_probe() {
  local ns=psa-$1-$O_SLUG
  new_ns "$ns" "$1"
  # The pods' ServiceAccount must exist for admission to get as far as Pod Security.
  apply_service_accounts "$ns"
  kubectl create -f "$RUN/$O_SLUG.pods.json" -n "$ns" --dry-run=server 2>&1
}

# Check 3: the level mlops-fn names admits the pods, the one below refuses them.
# A TrainJob's pods exist only once Trainer has merged its runtime and patches: POD (one of
# them, in $NS) is then the probe, as created (its spec, without what the scheduler and the
# kubelet filled in).
check_pod_security() {
  local level out i
  if [ -n "${1:-}" ]; then
    kubectl get -n "$NS" "$1" -o json | jq --arg job "$O_JOB" '{kind: "List", apiVersion: "v1", items: [
      {apiVersion: "v1", kind: "Pod", metadata: {name: ($job + "-node-psa-probe")}, spec: (.spec | del(.nodeName))}]}' \
      >"$RUN/$O_SLUG.pods.json"
  else
    jq --arg job "$O_JOB" '{kind: "List", apiVersion: "v1", items: (
        [.items[] | select(.kind == "MPIJob" or .kind == "PyTorchJob") |
          (.spec.mpiReplicaSpecs // .spec.pytorchReplicaSpecs) | to_entries[] |
          {apiVersion: "v1", kind: "Pod", metadata: {name: ($job + "-" + (.key | ascii_downcase) + "-psa-probe")},
           spec: .value.template.spec}] +
        [.items[] | select(.kind == "Pod")])}' "$RUN/$O_SLUG.json" >"$RUN/$O_SLUG.pods.json"
  fi
  [ -n "$O_WARNINGS" ] && [ -n "$O_ENV" ] && printf '        mlops-fn hydrate --check %s says:\n%s\n' "$O_DIR" "$(echo "$O_WARNINGS" | sed 's/^/          /')"
  O_ADMITTED=""
  for i in "${!LEVELS[@]}"; do
    level=${LEVELS[$i]}
    if out=$(psa_probe "$level"); then
      O_ADMITTED=$level
      break
    fi
    PSA_REFUSAL[$level]=$(echo "$out" | grep -o 'violates PodSecurity.*' | head -n 1 | cut -c1-400 || true)
  done
  O_RUN_LEVEL=${O_ADMITTED:-privileged}
  if [ -z "$O_ADMITTED" ]; then
    fail "$O_DIR: Pod Security: no level admits the pods" "$out"
    return
  fi
  local below="" j
  for ((j = 0; j < i; j++)); do below+="${LEVELS[$j]}: ${PSA_REFUSAL[${LEVELS[$j]}]}"$'\n'; done
  local who="what mlops-fn says the job needs"
  [ -n "$O_ENV" ] || who="what the fixture is written for"
  if [ "$O_ADMITTED" == "$O_CLAIMED" ]; then
    pass "$O_DIR: Pod Security '$O_CLAIMED' ($who) admits the pods"
    for ((j = 0; j < i; j++)); do
      pass "$O_DIR: Pod Security '${LEVELS[$j]}' refuses the pods"
      printf '        %s\n' "${PSA_REFUSAL[${LEVELS[$j]}]}"
    done
  else
    below=${below%$'\n'}
    fail "$O_DIR: Pod Security: $who is '$O_CLAIMED', it needs '$O_ADMITTED'" \
      "${O_WARNINGS:-mlops-fn: no warning (restricted)}" "${below:-$O_ADMITTED admits the pods}"
  fi
}

# job_pods ROLE: names of the MPIJob's pods of that role (launcher, worker), or of the
# PyTorchJob's of that replica type (worker).
job_pods() {
  local by=job-role
  [ "$O_KIND" == PyTorchJob ] && by=replica-type
  kubectl get pods -n "$NS" -l "training.kubeflow.org/job-name=$O_JOB,training.kubeflow.org/$by=$1" -o name
}
count() { if [ -z "$1" ]; then echo 0; else echo "$1" | wc -l; fi; }
all_phase() { # PHASE POD...: each POD exists and is in PHASE.
  local p=$1 phases; shift
  phases=$(kubectl get -n "$NS" "$@" -o jsonpath='{.items[*].status.phase}{.status.phase}') || return 1
  [ "$(echo "$phases" | wc -w)" -eq $# ] && [ -z "$(echo "$phases" | tr ' ' '\n' | grep -vx "$p")" ]
}

# check_pod_spec POD ROLE: the pod carries what mlops.env says (ROLE: launcher, worker, pod).
check_pod_spec() {
  local pod=$1 role=$2 json what="$O_DIR: $1"
  json=$(kubectl get -n "$NS" "$pod" -o json 2>&1) || { fail "$what: exists" "$json"; return 0; }
  q() { echo "$json" | jq -r "$@"; }
  expect_eq "$what: runAsUser" "${X_UID:-unset}" "$(q '.spec.securityContext.runAsUser // "unset"')"
  expect_eq "$what: runAsGroup" "${X_GID:-unset}" "$(q '.spec.securityContext.runAsGroup // "unset"')"
  expect_eq "$what: fsGroup" "${X_FSGROUP:-unset}" "$(q '.spec.securityContext.fsGroup // "unset"')"
  expect_eq "$what: runAsNonRoot" "${X_NONROOT:-unset}" "$(q '.spec.securityContext.runAsNonRoot // "unset"')"
  if [ "$O_KIND" == TrainJob ]; then
    # mlops-fn sets the ids on the trainer's container node too: a runtime's container ids would
    # win over the pod's.
    expect_eq "$what: container node runs as mlops.env's user and group (runAsUser, runAsGroup)" "${X_UID:-unset} ${X_GID:-unset}" \
      "$(q '[.spec.containers[] | select(.name == "node") | .securityContext // {} | "\(.runAsUser // "unset") \(.runAsGroup // "unset")"][0]')"
  fi
  expect_eq "$what: no container overrides the pod's user or group" "" \
    "$(q --arg k "$O_KIND" '[.spec.containers[] | select($k != "TrainJob" or .name != "node") | .securityContext // {} | {runAsUser, runAsGroup} |
      select(.runAsUser != null or .runAsGroup != null)] | if length > 0 then tostring else "" end')"
  if [ "$O_KIND" == TrainJob ]; then
    # The Trainer API has no envFrom: every key of mlops.env, one configMapKeyRef each.
    expect_eq "$what: container node reads each key of mlops.env from the job's env ConfigMap $(env_configmap)" \
      "$(env_keys | jq -r --arg cm "$(env_configmap)" 'keys[] | "\(.)=\($cm)/\(.)"')" \
      "$(q -r --arg cm "$(env_configmap)" '[.spec.containers[] | select(.name == "node") | .env[]? |
        select(.valueFrom.configMapKeyRef.name == $cm) | "\(.name)=\(.valueFrom.configMapKeyRef.name)/\(.valueFrom.configMapKeyRef.key)"] | sort[]')"
  else
    expect_eq "$what: every container has envFrom the job's env ConfigMap $(env_configmap)" true \
      "$(q --arg cm "$(env_configmap)" '[.spec.containers[] | [.envFrom[]?.configMapRef.name] | index($cm) != null] | all')"
  fi
  if [ -n "$O_NFS_SERVER" ]; then
    expect_eq "$what: NFS volume nfs (server path)" "$O_NFS_SERVER $O_NFS_PATH" \
      "$(q '.spec.volumes[]? | select(.name == "nfs") | "\(.nfs.server) \(.nfs.path)"')"
    expect_eq "$what: every container mounts nfs at NFS_MOUNT_PATH" "$O_NFS_MOUNT" \
      "$(q '[.spec.containers[] | [.volumeMounts[]? | select(.name == "nfs") | .mountPath][0] // "missing"] | unique | join(",")')"
  fi
  if [ "$role" == launcher ] && [ "$O_MPI" == OpenMPI ]; then
    # OpenMPI 5 ignores the operator's OMPI_MCA_orte_default_hostfile: mlops-fn passes the file itself.
    expect_eq "$what: mpirun reads the operator's hostfile (--hostfile /etc/mpi/hostfile)" true \
      "$(q '[.spec.containers[0].command // [] | join(" ") | contains("--hostfile /etc/mpi/hostfile")] | all')"
    expect_eq "$what: /etc/mpi/hostfile is mounted" true \
      "$(q '[.spec.containers[0].volumeMounts[]? | select(.mountPath == "/etc/mpi")] | length > 0')"
  fi
  local gpus=$O_GPUS cpu=$O_CPU memory=$O_MEMORY
  if [ "$role" == launcher ] && [ "$O_LAUNCHER_WORKER" != true ]; then gpus=0 cpu="" memory=""; fi
  expect_eq "$what: nvidia.com/gpu limit" "$gpus" "$(q '.spec.containers[0].resources.limits["nvidia.com/gpu"] // "0"')"
  [ -n "$cpu" ] && expect_eq "$what: cpu limit" "$cpu" "$(q '.spec.containers[0].resources.limits.cpu // "unset"')"
  [ -n "$memory" ] && expect_eq "$what: memory limit" "$memory" "$(q '.spec.containers[0].resources.limits.memory // "unset"')"
  return 0
}

# env_configmap: the job's env ConfigMap, NAME-KIND-env (README: one per job).
env_configmap() { echo "$O_JOB-$(echo "$O_KIND" | tr '[:upper:]' '[:lower:]')-env"; }

# env_keys: mlops.env as a JSON object, as kustomize's envs: reads it.
env_keys() {
  jq -Rn '[inputs | select(test("^\\s*(#|$)") | not) | sub("^\\s+"; "") |
    capture("^(?<k>[^=]+)(=(?<v>.*))?$") | {(.k): (.v // "")}] | add // {}' <"$O_DIR/mlops.env" | jq -S -c .
}

check_env_configmap() {
  local want got
  want=$(env_keys)
  got=$(kubectl get configmap "$(env_configmap)" -n "$NS" -o json | jq -S -c '.data // {}')
  expect_eq "$O_DIR: ConfigMap $(env_configmap) holds mlops.env's keys and values" "$want" "$got"
}

# pvc_fixtures: a bound PersistentVolume and claim for each claim the rendered objects' pods
# mount, wherever their volumes are (a TrainJob's in its runtime patches) (the examples expect the
# user's claims to exist; without them the scheduler leaves the pods Pending).
pvc_fixtures() {
  local claim
  for claim in $(jq -r '[.. | objects | .persistentVolumeClaim?.claimName // empty] | unique[]' "$RUN/$O_SLUG.json"); do
    kubectl apply --server-side -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolume
metadata: {name: $NS-$claim}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteMany]
  storageClassName: ""
  claimRef: {namespace: $NS, name: $claim}
  hostPath: {path: /tmp/$NS-$claim}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: $claim, namespace: $NS}
spec:
  accessModes: [ReadWriteMany]
  storageClassName: ""
  volumeName: $NS-$claim
  resources: {requests: {storage: 1Gi}}
EOF
    wait_until 30 eval "[ \"\$(kubectl get pvc $claim -n $NS -o jsonpath='{.status.phase}')\" == Bound ]" ||
      fail "$O_DIR: fixture claim $claim did not bind"
  done
}

# apply_for_real NOTE CONDITION: applies the overlay in a fresh namespace enforcing its
# Pod Security level, then waits up to 60 s for CONDITION (the operator's pods); fails
# the check and returns 1 when the apply is refused.
apply_for_real() {
  local out
  NS=run-$O_SLUG
  new_ns "$NS" "$O_RUN_LEVEL"
  pvc_fixtures
  if ! out=$(kubectl apply -k "$O_DIR" -n "$NS" --server-side 2>&1); then
    fail "$O_DIR: apply -k in a namespace enforcing '$O_RUN_LEVEL'$1" "$out"; return 1
  fi
  pass "$O_DIR: apply -k in a namespace enforcing '$O_RUN_LEVEL'$1"
  if wait_until 60 eval "$2"; then
    sleep 2
  else
    kubectl get events -n "$NS" --sort-by=.lastTimestamp | tail -n 5 | sed 's/^/        /'
  fi
}

# Check 2: the MPIJob applied for real.
check_mpijob() {
  local workers launcher i want got np
  apply_for_real "" '[ "$(count "$(job_pods worker)")" -ge "$O_WORKERS" ] && [ "$(count "$(job_pods launcher)")" -ge 1 ]' || return
  workers=$(job_pods worker); launcher=$(job_pods launcher)
  expect_eq "$O_DIR: mpi-operator creates exactly WORKERS=$O_WORKERS worker pods" "$O_WORKERS" "$(count "$workers")"
  expect_eq "$O_DIR: mpi-operator creates one launcher pod" 1 "$(count "$launcher")"

  want=""
  for ((i = 0; i < O_WORKERS; i++)); do
    if [ "$O_MPI" == OpenMPI ]; then
      want+="$O_JOB-worker-$i.$O_JOB.$NS.svc slots=$O_SLOTS"$'\n'
    else
      want+="$O_JOB-worker-$i.$O_JOB.$NS.svc:$O_SLOTS"$'\n'
    fi
  done
  got=$(kubectl get configmap "$O_JOB-config" -n "$NS" -o jsonpath='{.data.hostfile}' 2>&1 || true)
  expect_eq "$O_DIR: hostfile lists $O_WORKERS workers with slots=$O_SLOTS" "$(printf %s "$want")" "$got"
  check_env_configmap

  [ -n "$launcher$workers" ] || return 0
  local procs=$O_WORKERS
  [ "$O_LAUNCHER_WORKER" == true ] && procs=$((procs + 1))
  if [ -n "$launcher" ]; then
    np=$(kubectl get -n "$NS" "$launcher" -o json | jq -r '.spec.containers[0].command as $c | ($c | index("-np")) as $i | if $i then $c[$i + 1] else "none" end')
    expect_eq "$O_DIR: mpirun -np = $procs x $O_SLOTS slots" "$((procs * O_SLOTS))" "$np"
    check_pod_spec "$launcher" launcher
  fi
  for i in $workers; do check_pod_spec "$i" worker; done

  # shellcheck disable=SC2086  # $launcher and $workers are lists of pod/NAME
  if wait_until 60 all_phase Running $launcher $workers; then
    pass "$O_DIR: the launcher and $O_WORKERS workers are scheduled on the fake node and Running"
  else
    fail "$O_DIR: the job's pods reach Running" "$(kubectl get pods -n "$NS" -o wide 2>&1)"
    return
  fi
  [ -n "$launcher" ] || return 0
  kubectl annotate -n "$NS" "$launcher" e2e.mlops-fn.dev/complete=true >/dev/null
  if wait_until 60 eval "[ \"\$(kubectl get mpijob $O_JOB -n $NS -o jsonpath='{.status.conditions[?(@.type==\"Succeeded\")].status}')\" == True ]"; then
    pass "$O_DIR: the MPIJob is Succeeded once the launcher completes"
  else
    fail "$O_DIR: the MPIJob is Succeeded once the launcher completes" \
      "$(kubectl get mpijob "$O_JOB" -n "$NS" -o jsonpath='{.status}' 2>&1)"
  fi
}

# Check 2, elastic: the PyTorchJob applied for real.
check_pytorchjob() {
  local workers i pod env want
  apply_for_real " (training-operator's webhook validates the PyTorchJob)" '[ "$(count "$(job_pods worker)")" -ge "$O_WORKERS" ]' || return
  workers=$(job_pods worker)
  expect_eq "$O_DIR: training-operator creates exactly WORKERS=$O_WORKERS worker pods" "$O_WORKERS" "$(count "$workers")"
  want=""
  for ((i = 0; i < O_WORKERS; i++)); do want+="pod/$O_JOB-worker-$i"$'\n'; done
  expect_eq "$O_DIR: the worker pods are $O_JOB-worker-0..$((O_WORKERS - 1))" "$(printf %s "$want")" "$(echo "$workers" | sort -V)"
  expect_eq "$O_DIR: no master pod (elastic: workers only)" 0 "$(count "$(job_pods master)")"
  check_env_configmap
  [ -n "$workers" ] || return 0

  # What torchrun reads: the operator's PET_* variables in the pytorch container.
  want="PET_NNODES=$X_MIN:$X_MAX"$'\n'"PET_RDZV_BACKEND=$X_BACKEND"$'\n'"PET_RDZV_ENDPOINT=$X_ENDPOINT"
  want+=$'\n'"PET_NPROC_PER_NODE=$X_NPROC"
  [ -n "$X_MAX_RESTARTS" ] && want+=$'\n'"PET_MAX_RESTARTS=$X_MAX_RESTARTS"
  [ -n "$X_RDZV_ID" ] && want+=$'\n'"PET_RDZV_ID=$X_RDZV_ID"
  want=$(echo "$want" | sort)
  for pod in $workers; do
    env=$(kubectl get -n "$NS" "$pod" -o json |
      jq -r '.spec.containers[] | select(.name == "pytorch") | .env[]? | select(.name | startswith("PET_")) | "\(.name)=\(.value)"' | sort)
    expect_eq "$O_DIR: $pod: the pytorch container's PET_* variables (torchrun's nnodes, rendezvous, procs, restarts)" "$want" "$env"
    [ "$pod" == "${workers%%$'\n'*}" ] && echo "$env" | sed 's/^/        /'
    check_pod_spec "$pod" worker
  done

  # shellcheck disable=SC2086  # $workers is a list of pod/NAME
  if wait_until 60 all_phase Running $workers; then
    pass "$O_DIR: the $O_WORKERS workers are scheduled on the fake node and Running"
  else
    fail "$O_DIR: the job's pods reach Running" "$(kubectl get pods -n "$NS" -o wide 2>&1)"
    return
  fi
  if wait_until 60 eval "[ \"\$(kubectl get pytorchjob $O_JOB -n $NS -o jsonpath='{.status.conditions[?(@.type==\"Running\")].status}')\" == True ]"; then
    pass "$O_DIR: the PyTorchJob is Running"
  else
    fail "$O_DIR: the PyTorchJob is Running" "$(kubectl get pytorchjob "$O_JOB" -n "$NS" -o jsonpath='{.status}' 2>&1)"
  fi
}

# trainjob_pods: the TrainJob's node pods (JobSet labels them with its name, which is the
# TrainJob's, and with the replicated job's).
trainjob_pods() {
  kubectl get pods -n "$NS" -l "jobset.sigs.k8s.io/jobset-name=$O_JOB,jobset.sigs.k8s.io/replicatedjob-name=node" -o name
}

# subset_jq: a jq function, subset(a; b): every field a sets, b sets to the same (arrays: the
# same length, element by element); what the API server defaults in b is not compared.
subset_jq='def subset(a; b): if (a | type) == "object" then (b | type) == "object" and
  all(a | keys[]; . as $k | subset(a[$k]; b[$k]))
  elif (a | type) == "array" then (b | type) == "array" and (a | length) == (b | length) and
  all(range(a | length); . as $i | subset(a[$i]; b[$i]))
  else a == b end;'

# Check 2, TrainJob: the TrainJob applied for real (check_trainjob_pod: each pod). Trainer's
# webhooks default and validate it, Trainer merges runtime, trainer fields and runtime patches
# into a JobSet, JobSet makes the Job of the replicated job `node`, the Job controller its
# numNodes pods, kwok runs them; completing them completes the TrainJob.
check_trainjob() {
  local pods pod json got want
  apply_for_real " (Trainer's webhooks default and validate the TrainJob)" '[ "$(count "$(trainjob_pods)")" -ge "$T_NODES" ]' || return
  if ! json=$(kubectl get jobset "$O_JOB" -n "$NS" -o json 2>&1); then
    fail "$O_DIR: Trainer creates the JobSet $O_JOB" "$json" "$(kubectl get trainjob "$O_JOB" -n "$NS" -o jsonpath='{.status}' 2>&1)"
    return
  fi
  expect_eq "$O_DIR: Trainer creates the JobSet $O_JOB, owned by the TrainJob" "TrainJob/$O_JOB" \
    "$(echo "$json" | jq -r '[.metadata.ownerReferences[]? | select(.controller) | "\(.kind)/\(.name)"] | join(",")')"
  expect_eq "$O_DIR: the JobSet's replicated job node runs numNodes=$T_NODES pods at once (parallelism, completions)" \
    "$T_NODES $T_NODES" "$(echo "$json" | jq -r '.spec.replicatedJobs[] | select(.name == "node") | .template.spec | "\(.parallelism) \(.completions)"')"
  pods=$(trainjob_pods)
  expect_eq "$O_DIR: exactly numNodes=$T_NODES node pods" "$T_NODES" "$(count "$pods")"
  if [ -n "$O_ENV" ]; then
    expect_eq "$O_DIR: the TrainJob's numNodes is WORKERS=$O_WORKERS" "$O_WORKERS" "$T_NODES"
    check_env_configmap
  fi
  # kwok does not start containers: a kubelet would refuse one whose configMapKeyRef is missing.
  got=$(echo "$T_JSON" | jq -r '.spec.trainer.env[]?.valueFrom.configMapKeyRef // empty | select(.optional != true) | "\(.name) \(.key)"' |
    while read -r cm key; do
      kubectl get configmap "$cm" -n "$NS" -o json 2>/dev/null | jq -e --arg k "$key" '.data | has($k)' >/dev/null || echo "$cm/$key"
    done)
  expect_eq "$O_DIR: every configMapKeyRef of the trainer's env names a key of a ConfigMap in the namespace" "" "$got"
  [ -n "$pods" ] || return 0
  # PET_NODE_RANK is the Job's completion index: one pod of each, 0..numNodes-1.
  want=$(seq 0 $((T_NODES - 1)))
  # shellcheck disable=SC2086  # $pods is a list of pod/NAME
  got=$(kubectl get -n "$NS" $pods -o json | jq -r '[.items // [.] | .[] |
    .metadata.annotations["batch.kubernetes.io/job-completion-index"]] | sort_by(tonumber) | .[]')
  expect_eq "$O_DIR: the pods' completion indexes (PET_NODE_RANK) are 0..$((T_NODES - 1)), once each" "$want" "$got"
  for pod in $pods; do
    check_trainjob_pod "$pod"
    [ -z "$O_ENV" ] || check_pod_spec "$pod" node
  done
  # PET_MASTER_ADDR is rank 0's DNS name: its hostname and subdomain, and the JobSet's headless Service.
  # shellcheck disable=SC2086
  got=$(kubectl get -n "$NS" $pods -o json | jq -r '[.items // [.] | .[] |
    select(.metadata.annotations["batch.kubernetes.io/job-completion-index"] == "0") | "\(.spec.hostname).\(.spec.subdomain)"] | join(",")')
  expect_eq "$O_DIR: PET_MASTER_ADDR is rank 0's pod: its hostname.subdomain" "$O_JOB-node-0-0.$O_JOB" "$got"
  expect_eq "$O_DIR: JobSet's headless Service $O_JOB selects the node pods (their DNS names)" "None $O_JOB" \
    "$(kubectl get service "$O_JOB" -n "$NS" -o jsonpath='{.spec.clusterIP} {.spec.selector.jobset\.sigs\.k8s\.io/jobset-name}' 2>&1)"

  # shellcheck disable=SC2086
  if wait_until 60 all_phase Running $pods; then
    pass "$O_DIR: the $T_NODES node pods are scheduled on the fake node and Running"
  else
    fail "$O_DIR: the TrainJob's pods reach Running" "$(kubectl get pods -n "$NS" -o wide 2>&1)"
    return
  fi
  # shellcheck disable=SC2086
  kubectl annotate -n "$NS" $pods e2e.mlops-fn.dev/complete=true >/dev/null
  if wait_until 60 eval "[ \"\$(kubectl get trainjob $O_JOB -n $NS -o jsonpath='{.status.conditions[?(@.type==\"Complete\")].status}')\" == True ]"; then
    pass "$O_DIR: the TrainJob is Complete once its node pods complete (Jobs, then JobSet, succeeded)"
  else
    fail "$O_DIR: the TrainJob is Complete once its node pods complete" \
      "$(kubectl get trainjob "$O_JOB" -n "$NS" -o jsonpath='{.status}' 2>&1)" "$(kubectl get jobset "$O_JOB" -n "$NS" -o jsonpath='{.status}' 2>&1)"
  fi
}

# check_trainjob_pod POD: the pod carries what the TrainJob says (T_*): the runtime patches'
# pod securityContext, ServiceAccount, volumes, and the container node's volumeMounts and
# securityContext; the trainer's image, command, args, env and resourcesPerNode; the PET_*
# variables Trainer's torch plugin sets for torchrun.
check_trainjob_pod() {
  local pod=$1 json node what="$O_DIR: $1" want got
  json=$(kubectl get -n "$NS" "$pod" -o json 2>&1) || { fail "$what: exists" "$json"; return 0; }
  node=$(echo "$json" | jq -c '[.spec.containers[] | select(.name == "node")][0]')
  if [ "$node" == null ]; then fail "$what: has the runtime's container node" "$(echo "$json" | jq -c '[.spec.containers[].name]')"; return 0; fi
  sub() { jq -n --argjson a "$1" --argjson b "$2" "$subset_jq subset(\$a; \$b)"; }
  expect_eq "$what: pod securityContext runAsUser/runAsGroup/fsGroup/runAsNonRoot (the runtime patch's)" \
    "$(echo "$T_POD" | jq -c '.securityContext // {} | [.runAsUser, .runAsGroup, .fsGroup, .runAsNonRoot]')" \
    "$(echo "$json" | jq -c '.spec.securityContext // {} | [.runAsUser, .runAsGroup, .fsGroup, .runAsNonRoot]')"
  expect_eq "$what: the runtime patch's whole pod securityContext is the pod's" true \
    "$(sub "$(echo "$T_POD" | jq -c '.securityContext // {}')" "$(echo "$json" | jq -c '.spec.securityContext // {}')")"
  if [ "$(echo "$T_POD" | jq -r '.serviceAccountName // ""')" != "" ]; then
    expect_eq "$what: runs as the runtime patch's ServiceAccount" "$(echo "$T_POD" | jq -r .serviceAccountName)" \
      "$(echo "$json" | jq -r '.spec.serviceAccountName // "default"')"
  fi
  want=$(echo "$T_POD" | jq -r '[.volumes[].name] | join(",")')
  got=$(jq -rn --argjson p "$T_POD" --argjson pod "$json" "$subset_jq"'
    [$p.volumes[] | . as $v | select(([$pod.spec.volumes[]? | select(.name == $v.name)][0]) as $w | subset($v; $w)) | .name] | join(",")')
  expect_eq "$what: the runtime patch's volumes are the pod's (${want:-none})" "$want" "$got"
  want=$(echo "$T_NODE" | jq -r '[.volumeMounts[] | .name + ":" + .mountPath] | join(",")')
  got=$(jq -rn --argjson p "$T_NODE" --argjson c "$node" "$subset_jq"'
    [$p.volumeMounts[] | . as $m | select(([$c.volumeMounts[]? | select(.name == $m.name)][0]) as $w | subset($m; $w)) |
     .name + ":" + .mountPath] | join(",")')
  expect_eq "$what: container node has the runtime patch's volumeMounts (${want:-none})" "$want" "$got"
  expect_eq "$what: container node has the runtime patch's securityContext" true \
    "$(sub "$(echo "$T_NODE" | jq -c '.securityContext // {}')" "$(echo "$node" | jq -c '.securityContext // {}')")"
  expect_eq "$what: container node runs the trainer's image, command and args" \
    "$(echo "$T_JSON" | jq -c '.spec.trainer | [.image, .command, .args]')" "$(echo "$node" | jq -c '[.image, .command, .args]')"
  want=$(echo "$T_JSON" | jq -c '[.spec.trainer.env[]?]')
  got=$(jq -n --argjson w "$want" --argjson c "$node" "$subset_jq"'
    [$w[] | . as $e | select(([$c.env[]? | select(.name == $e.name)][0]) as $x | subset($e; $x))] | length')
  expect_eq "$what: container node has the trainer's $(echo "$want" | jq length) env variables (values and configMapKeyRefs)" \
    "$(echo "$want" | jq length)" "$got"
  # (the API server defaults a request that is not set to the limit)
  expect_eq "$what: container node's resources are the trainer's resourcesPerNode" \
    "$(echo "$T_JSON" | jq -S -c '.spec.trainer.resourcesPerNode // {} | {limits, requests: ((.limits // {}) + (.requests // {}))} |
      with_entries(select(.value != null and .value != {}))')" \
    "$(echo "$node" | jq -S -c '.resources // {} | {limits, requests} | with_entries(select(.value != null and .value != {}))')"
  expect_eq "$what: nvidia.com/gpu limit" "$(echo "$T_JSON" | jq -r '.spec.trainer.resourcesPerNode.limits["nvidia.com/gpu"] // "0"')" \
    "$(echo "$node" | jq -r '.resources.limits["nvidia.com/gpu"] // "0"')"
  # What torchrun reads: plugins/torch/torch.go (the node rank is the Job's completion index).
  want="PET_MASTER_ADDR=$O_JOB-node-0-0.$O_JOB"$'\n'"PET_MASTER_PORT=29500"$'\n'"PET_NNODES=$T_NODES"
  want+=$'\n'"PET_NODE_RANK=fieldRef:metadata.annotations['batch.kubernetes.io/job-completion-index']"$'\n'"PET_NPROC_PER_NODE=$T_NPROC"
  got=$(echo "$node" | jq -r '.env[]? | select(.name | startswith("PET_")) |
    "\(.name)=\(.value // ("fieldRef:" + .valueFrom.fieldRef.fieldPath))"' | sort)
  want=$(echo "$want" | sort)
  expect_eq "$what: the PET_* variables of Trainer's torch plugin (nnodes, procs per node, node rank, master address and port)" "$want" "$got"
  [ "$pod" == "${pods%%$'\n'*}" ] && echo "$got" | sed 's/^/        /'
  expect_eq "$what: container node exposes the master port 29500" true \
    "$(echo "$node" | jq '[.ports[]?.containerPort] | index(29500) != null')"
  return 0
}

# Check 4: the single-node Pod applied for real.
check_pod() {
  local out
  NS=run-$O_SLUG
  new_ns "$NS" "$O_RUN_LEVEL"
  pvc_fixtures
  if ! out=$(kubectl apply -k "$O_DIR" -n "$NS" --server-side 2>&1); then
    fail "$O_DIR: apply -k in a namespace enforcing '$O_RUN_LEVEL': the Pod is admitted" "$out"; return
  fi
  pass "$O_DIR: apply -k in a namespace enforcing '$O_RUN_LEVEL': the Pod is admitted"
  check_env_configmap
  check_pod_spec "pod/$O_JOB" pod
  if wait_until 60 all_phase Running "pod/$O_JOB"; then
    pass "$O_DIR: the Pod is scheduled on the fake node and Running"
  else
    fail "$O_DIR: the Pod reaches Running" "$(kubectl get pod "$O_JOB" -n "$NS" -o wide 2>&1)"; return
  fi
  kubectl annotate -n "$NS" "pod/$O_JOB" e2e.mlops-fn.dev/complete=true >/dev/null
  if wait_until 60 all_phase Succeeded "pod/$O_JOB"; then
    pass "$O_DIR: the Pod is Succeeded once it completes"
  else
    fail "$O_DIR: the Pod is Succeeded once it completes"
  fi
}

# Check 3, for real: under 'restricted', a job that needs more is refused when its pods are
# created (by mpi-operator for an MPIJob, training-operator for a PyTorchJob, the Job controller
# for a TrainJob's JobSet, at apply for a Pod).
check_refused_for_real() {
  local out
  NS=restricted-$O_SLUG
  new_ns "$NS" restricted
  if [ "$O_KIND" == Pod ]; then
    if out=$(kubectl apply -k "$O_DIR" -n "$NS" --server-side 2>&1); then
      fail "$O_DIR: apply -k under 'restricted' refuses the Pod" "$out"
    elif echo "$out" | grep -q 'violates PodSecurity'; then
      pass "$O_DIR: apply -k under 'restricted' refuses the Pod"
    else
      fail "$O_DIR: apply -k under 'restricted' refuses the Pod, for Pod Security" "$out"
    fi
    return
  fi
  kubectl apply -k "$O_DIR" -n "$NS" --server-side >/dev/null
  if wait_until 60 eval "kubectl get events -n $NS -o jsonpath='{.items[*].message}' | grep -q 'violates PodSecurity'"; then
    if [ "$O_KIND" == TrainJob ]; then
      expect_eq "$O_DIR: under 'restricted' the Job controller's pods of the TrainJob are refused (violates PodSecurity)" 0 "$(count "$(trainjob_pods)")"
      return
    fi
    expect_eq "$O_DIR: under 'restricted' the operator's worker pods are refused (violates PodSecurity)" 0 "$(count "$(job_pods worker)")"
  else
    fail "$O_DIR: under 'restricted' the operator's worker pods are refused" "$(kubectl get pods,events -n "$NS" 2>&1)"
  fi
}

run_overlay() {
  local pod
  section "$1"
  load_overlay "$1"
  log "$O_DIR: $O_KIND $O_JOB, $O_MODE, workers=${O_WORKERS:-none} slots=${O_SLOTS:-none} gpus=$O_GPUS uid=${O_UID:-unset}"
  check_dry_run
  if [ "$O_KIND" == TrainJob ]; then
    # Its pods exist only once Trainer has merged runtime and patches: applied for real under the
    # level it claims (the pods must be admitted), then one of them probes each level.
    O_RUN_LEVEL=$O_CLAIMED
    [ "$O_RUN_LEVEL" == restricted ] || check_refused_for_real
    check_trainjob
    pod=$(trainjob_pods | sed -n 1p)
    if [ -n "$pod" ]; then check_pod_security "$pod"; else skip "$O_DIR: Pod Security: no pod of the TrainJob to probe"; fi
    return 0
  fi
  check_pod_security
  case $O_KIND in
    MPIJob | Pod | PyTorchJob)
      [ "$O_RUN_LEVEL" != restricted ] && check_refused_for_real
      case $O_KIND in
        Pod) check_pod ;;
        MPIJob) check_mpijob ;;
        PyTorchJob) check_pytorchjob ;;
      esac ;;
    *) skip "$O_DIR: a $O_KIND is not applied for real: the harness runs no controller for it" ;;
  esac
}

# check_renamed DIR: an overlay of the user's over the hydrated DIR renames everything
# (namePrefix, nameSuffix); the job the operator runs must name the renamed ConfigMap and
# ServiceAccount (the API server refuses pods whose ServiceAccount does not exist), which
# takes the hydrated component's crd-name-references.yaml (README, "What mlops-fn hydrate
# writes").
check_renamed() {
  local dir=$RUN/renamed-${1//\//-} out pods pod json sa cms cm
  load_overlay "$1"
  mkdir -p "$dir"
  printf 'namePrefix: dev-\nnameSuffix: -v2\nresources:\n- %s\n' "$(realpath --relative-to="$dir" "$O_DIR")" >"$dir/kustomization.yaml"
  O_JOB=dev-$O_JOB-v2
  NS=renamed-$O_SLUG
  new_ns "$NS" privileged
  if ! out=$(kubectl apply -k "$dir" -n "$NS" --server-side 2>&1); then
    fail "$O_DIR under namePrefix/nameSuffix: apply -k" "$out"; return
  fi
  local n=$O_WORKERS  # the pods to wait for (read in the eval below)
  if [ "$O_KIND" == TrainJob ]; then
    # shellcheck disable=SC2034
    n=$T_NODES
    renamed_pods() { trainjob_pods; }
  else
    renamed_pods() { job_pods worker; }
  fi
  if ! wait_until 60 eval '[ "$(count "$(renamed_pods)")" -ge "$n" ]'; then
    fail "$O_DIR under namePrefix/nameSuffix: the operator creates the renamed job's worker pods" \
      "$(kubectl get events -n "$NS" --sort-by=.lastTimestamp 2>&1 | tail -n 5)"
    return
  fi
  pass "$O_DIR under namePrefix/nameSuffix: the operator creates the pods of $O_JOB (their ServiceAccount exists)"
  pods=$(renamed_pods)
  if [ "$O_KIND" == MPIJob ]; then
    wait_until 60 eval '[ "$(count "$(job_pods launcher)")" -ge 1 ]' || true
    pods+=$'\n'$(job_pods launcher)
  fi
  for pod in $pods; do
    json=$(kubectl get -n "$NS" "$pod" -o json)
    sa=$(echo "$json" | jq -r '.spec.serviceAccountName // "default"')
    expect_eq "$O_DIR under namePrefix/nameSuffix: $pod runs as the renamed ServiceAccount" "dev-model-service-v2" "$sa"
    cms=$(echo "$json" | jq -r '[.spec.containers[] | (.envFrom[]?.configMapRef.name), (.env[]?.valueFrom.configMapKeyRef.name // empty)] | unique[]')
    [ -n "$cms" ] || fail "$O_DIR under namePrefix/nameSuffix: $pod reads the env ConfigMap (envFrom or configMapKeyRef)" "$json"
    for cm in $cms; do
      if kubectl get configmap "$cm" -n "$NS" >/dev/null 2>&1; then
        pass "$O_DIR under namePrefix/nameSuffix: $pod's env ConfigMap $cm exists"
      else
        fail "$O_DIR under namePrefix/nameSuffix: $pod's env ConfigMap $cm exists" "$(kubectl get configmaps -n "$NS" 2>&1)"
      fi
    done
  done
}

# check_edited: a user edits the multi-node quickstart's mlops.env and runs kubectl apply -k
# without hydrating again: the API server gets nothing, and kubectl says to run hydrate.
# After hydrate, the job the operator runs has the new worker count.
check_edited() {
  local root=$RUN/edited dir out want=5
  rm -rf "$root" && mkdir -p "$root" && cp -r quickstart "$root/"
  dir=$root/quickstart/k8s/mlops/multi-node
  load_overlay "$dir"
  sed -i "s/^WORKERS=.*/WORKERS=$want/" "$dir/mlops.env"
  NS=edited
  new_ns "$NS" privileged
  if out=$(kubectl apply -k "$dir" -n "$NS" --server-side 2>&1); then
    fail "edited mlops.env, not hydrated: kubectl apply -k fails" "$out"
  elif grep -q "run mlops-fn hydrate on this folder" <<<"$out"; then
    pass "edited mlops.env, not hydrated: kubectl apply -k fails, saying to run mlops-fn hydrate"
  else
    fail "edited mlops.env, not hydrated: kubectl apply -k says to run mlops-fn hydrate" "$out"
  fi
  expect_eq "edited mlops.env, not hydrated: nothing reached the API server" "" \
    "$(kubectl get mpijobs,configmaps -n "$NS" -o name 2>&1 | grep -v kube-root-ca.crt)"
  if ! out=$("$MLOPS_FN" hydrate "$dir" 2>&1); then fail "edited mlops.env: mlops-fn hydrate" "$out"; return; fi
  if ! out=$(kubectl apply -k "$dir" -n "$NS" --server-side 2>&1); then
    fail "edited mlops.env, hydrated: kubectl apply -k" "$out"; return
  fi
  pass "edited mlops.env, hydrated: kubectl apply -k succeeds"
  O_WORKERS=$want
  if wait_until 60 eval '[ "$(count "$(job_pods worker)")" -ge "$O_WORKERS" ]'; then
    pass "edited mlops.env, hydrated: the operator creates $want worker pods"
  else
    fail "edited mlops.env, hydrated: the operator creates $want worker pods" "$(kubectl get pods -n "$NS" 2>&1)"
  fi
}

# ---------------------------------------------------------------- Kueue

# The ClusterQueue every check_kueue shares, its one ResourceFlavor, and the LocalQueue each of
# their namespaces gets. Not "default": Kueue puts the jobs of a namespace that has a LocalQueue
# named default in it, queue label or not, which check (d) must not see.
KUEUE_CQ=e2e-cluster-queue
KUEUE_QUEUE=e2e-queue
# kueue_qty: a jq function, a resource quantity ("8", "500m", "16Gi") as a number.
kueue_qty='def qty: tostring | capture("^(?<n>[0-9.]+)(?<s>[a-zA-Z]*)$") | (.n | tonumber) * ({"": 1, "m": 0.001,
  "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "Ki": 1024, "Mi": 1048576, "Gi": 1073741824, "Ti": 1099511627776}[.s]);'

kueue_setup() {
  local out
  out=$(kubectl apply --server-side -f - 2>&1 <<EOF
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: e2e-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: $KUEUE_CQ}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: e2e-flavor
      resources: [{name: cpu, nominalQuota: 0}, {name: memory, nominalQuota: 0}, {name: nvidia.com/gpu, nominalQuota: 0}]
EOF
  ) || { fail "Kueue: the ResourceFlavor and ClusterQueue $KUEUE_CQ are created (through Kueue's webhooks)" "$out"; return 1; }
  if wait_until 30 eval "[ \"\$(kubectl get clusterqueue $KUEUE_CQ -o jsonpath='{.status.conditions[?(@.type==\"Active\")].status}')\" == True ]"; then
    pass "Kueue: ResourceFlavor e2e-flavor and ClusterQueue $KUEUE_CQ (cpu, memory, nvidia.com/gpu) are created, through Kueue's webhooks, and Active"
  else
    fail "Kueue: the ClusterQueue $KUEUE_CQ is Active" "$(kubectl get clusterqueue "$KUEUE_CQ" -o jsonpath='{.status}' 2>&1)"
    return 1
  fi
}

# kueue_quota JSON: the ClusterQueue's nominal quotas, {"cpu": "8", "memory": ..., ...}; the
# resources it covers that JSON does not name get 0.
kueue_quota() {
  local value
  value=$(jq -c '. as $q | [("cpu", "memory", "nvidia.com/gpu") | {name: ., nominalQuota: ($q[.] // "0" | tostring)}]' <<<"$1")
  kubectl patch clusterqueue "$KUEUE_CQ" --type=json \
    -p "[{\"op\": \"replace\", \"path\": \"/spec/resourceGroups/0/flavors/0/resources\", \"value\": $value}]" >/dev/null
}

# kueue_ns NAME: a namespace with the LocalQueue KUEUE_QUEUE of the ClusterQueue, once Kueue has it.
kueue_ns() {
  new_ns "$1"
  printf 'apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: %s, namespace: %s}\nspec: {clusterQueue: %s}\n' \
    "$KUEUE_QUEUE" "$1" "$KUEUE_CQ" | kubectl apply --server-side -f - >/dev/null
  wait_until 30 eval "[ \"\$(kubectl get localqueue $KUEUE_QUEUE -n $1 -o jsonpath='{.status.conditions[?(@.type==\"Active\")].status}')\" == True ]" ||
    fail "Kueue: the LocalQueue $1/$KUEUE_QUEUE is Active" "$(kubectl get localqueue "$KUEUE_QUEUE" -n "$1" -o jsonpath='{.status}' 2>&1)"
}

# kueue_workload: the Workload of the job in NS, as JSON (empty if none); each check_kueue job
# has a namespace of its own.
kueue_workload() { kubectl get workloads.kueue.x-k8s.io -n "$NS" -o json | jq -c '.items[0] // empty'; }
# kueue_wl_cond TYPE: that condition's status on the Workload (empty if none).
kueue_wl_cond() { kueue_workload | jq -r --arg t "$1" '[.status.conditions[]? | select(.type == $t) | .status][0] // ""'; }
# kueue_pending: Kueue has looked at the Workload and found no quota for it (QuotaReserved False).
kueue_pending() { [ "$(kueue_wl_cond QuotaReserved)" == False ]; }
kueue_admitted() { [ "$(kueue_wl_cond Admitted)" == True ]; }
# kueue_held: how Kueue holds the job: the suspend field (runPolicy.suspend of MPIJob and
# PyTorchJob, spec.suspend of a TrainJob; empty if absent); for a Pod, "gated" if it has Kueue's
# scheduling gate kueue.x-k8s.io/admission (Kueue v0.19 adds kueue.x-k8s.io/topology too, its
# TopologyAwareScheduling being on by default, and removes both on admission), else its gates.
kueue_held() {
  case $O_KIND in
    MPIJob | PyTorchJob) kubectl get "$K_RES" "$O_JOB" -n "$NS" -o jsonpath='{.spec.runPolicy.suspend}' ;;
    TrainJob) kubectl get "$K_RES" "$O_JOB" -n "$NS" -o jsonpath='{.spec.suspend}' ;;
    Pod) kubectl get pod "$O_JOB" -n "$NS" -o json |
      jq -r '[.spec.schedulingGates[]?.name] | if index("kueue.x-k8s.io/admission") != null then "gated" else join(",") end' ;;
  esac
}
# kueue_pods: the pods in NS; kueue_running: K_PODS of them, all Running on the fake node.
kueue_pods() { kubectl get pods -n "$NS" -o name; }
kueue_running() {
  local pods
  pods=$(kueue_pods)
  # shellcheck disable=SC2086
  [ "$(count "$pods")" -eq "$K_PODS" ] && all_phase Running $pods
}

# kueue_apply DIR WHAT: applies DIR in NS (a fresh namespace with the LocalQueue).
kueue_apply() {
  local out
  kueue_ns "$NS"
  pvc_fixtures
  if ! out=$(kubectl apply -k "$1" -n "$NS" --server-side 2>&1); then
    fail "$2: apply -k in namespace $NS" "$out"; return 1
  fi
}

# expect_kueue_held WHEN: the job Kueue has not admitted is held: a Pod keeps Kueue's
# scheduling gate and no node, another kind stays suspended without pods.
expect_kueue_held() {
  if [ "$O_KIND" == Pod ]; then
    expect_eq "$1: the Pod has Kueue's scheduling gate kueue.x-k8s.io/admission" gated "$(kueue_held)"
    expect_eq "$1: the Pod is not scheduled (no nodeName)" "" "$(kubectl get pod "$O_JOB" -n "$NS" -o jsonpath='{.spec.nodeName}')"
  else
    expect_eq "$1: the $O_KIND is suspended" true "$(kueue_held)"
    expect_eq "$1: no pods" 0 "$(count "$(kueue_pods)")"
  fi
}

# check_kueue OVERLAY: the quickstart overlay with QUEUE=KUEUE_QUEUE in a copy of its mlops.env,
# hydrated, against Kueue (quota per resource: the ClusterQueue's, changed here):
#   (a) quota 0: the job is created held (MPIJob, PyTorchJob: runPolicy.suspend true; TrainJob:
#       spec.suspend true; Pod: Kueue's scheduling gate kueue.x-k8s.io/admission) with its
#       Workload in the LocalQueue, which Kueue finds no quota for; no pods (Pod: not scheduled);
#   (b) quota = exactly what Kueue counts for the job (the Workload's status.resourceRequests):
#       the Workload is admitted, the job released (suspend false; the gate removed), its pods
#       created and Running;
#   (c) the same job in a second namespace, same ClusterQueue: its Workload stays pending
#       (QuotaReserved False), the job held, no pods (Pod: gated, not scheduled); deleting the
#       first job admits it and its pods run;
#   (d) the overlay itself (no QUEUE) in a third namespace with the LocalQueue, while the
#       ClusterQueue is full: no Workload, not held, its pods run.
check_kueue() {
  local src=${1%/} dir what ns want got out req wl
  load_overlay "$src"
  dir=$KUEUE_TREE/$src
  what="$src with QUEUE=$KUEUE_QUEUE"
  case $O_KIND in
    MPIJob) K_RES=mpijobs.kubeflow.org K_PODS=$((O_WORKERS + 1)) ;;
    PyTorchJob) K_RES=pytorchjobs.kubeflow.org K_PODS=$O_WORKERS ;;
    TrainJob) K_RES=trainjobs.trainer.kubeflow.org K_PODS=$T_NODES ;;
    Pod) K_RES=pods K_PODS=1 ;;
    *) skip "$src: a $O_KIND is not a kind Kueue runs here"; return 0 ;;
  esac
  echo "QUEUE=$KUEUE_QUEUE" >>"$dir/mlops.env"
  if ! out=$("$MLOPS_FN" hydrate "$dir" 2>&1); then fail "$what: mlops-fn hydrate" "$out"; return; fi
  expect_eq "$what: the rendered $O_KIND has the label kueue.x-k8s.io/queue-name=$KUEUE_QUEUE" "$KUEUE_QUEUE" \
    "$(kubectl kustomize "$dir" | kubectl create --dry-run=client -o json -f - | jq -rs --arg k "$O_KIND" \
      '[.[] | if .kind == "List" then .items[] else . end | select(.kind == $k) | .metadata.labels["kueue.x-k8s.io/queue-name"] // "none"][0]')"

  # (a) no quota
  kueue_quota '{}'
  NS=kueue-$O_SLUG-1
  kueue_apply "$dir" "$what" || return
  if ! wait_until 60 kueue_pending; then
    fail "$what: Kueue creates the $O_KIND's Workload and finds no quota for it (quota 0)" "$(kubectl get workloads.kueue.x-k8s.io -n "$NS" -o yaml 2>&1 | tail -n 30)"
    return
  fi
  wl=$(kueue_workload)
  expect_eq "$what, quota 0: Kueue creates a Workload for the $O_KIND in LocalQueue $KUEUE_QUEUE, owned by it" \
    "$KUEUE_QUEUE $O_KIND/$O_JOB" "$(echo "$wl" | jq -r '"\(.spec.queueName) \([.metadata.ownerReferences[]? | "\(.kind)/\(.name)"] | join(","))"')"
  pass "$what, quota 0: the Workload is not admitted: $(echo "$wl" | jq -r '[.status.conditions[]? | select(.type == "QuotaReserved") | .message][0]' | cut -c1-200)"
  expect_kueue_held "$what, quota 0"
  if ! wait_until 30 eval '[ -n "$(kueue_workload | jq -r ".status.resourceRequests // empty")" ]'; then
    fail "$what: Kueue reports the Workload's resource requests" "$(kueue_workload)"; return
  fi
  # What Kueue counts: each resource summed over the pod sets.
  req=$(kueue_workload | jq -c "$kueue_qty"'[.status.resourceRequests[].resources | to_entries[] | {k: .key, v: (.value | qty)}] |
    group_by(.k) | map({(.[0].k): ((map(.v) | add) as $v | if .[0].k == "cpu" then ($v * 1000 | round | tostring) + "m"
      elif $v >= 1073741824 and ($v % 1073741824) == 0 then ($v / 1073741824 | tostring) + "Gi" else ($v | ceil | tostring) end)}) | add')
  echo "        Kueue counts the job as $req"
  local nodes=$O_WORKERS
  [ "$O_KIND" != Pod ] || nodes=1
  expect_eq "$what: Kueue counts WORKERS x GPUS_PER_WORKER nvidia.com/gpu ($nodes x $O_GPUS)" "$((nodes * O_GPUS))" \
    "$(echo "$req" | jq -r '.["nvidia.com/gpu"] // "0"')"

  # (b) quota for exactly one such job
  kueue_quota "$req"
  if wait_until 60 kueue_admitted; then
    pass "$what, quota = the job's requests: Kueue admits the Workload"
  else
    fail "$what, quota = the job's requests: Kueue admits the Workload" "$(kueue_workload | jq -c .status)"; return
  fi
  if [ "$O_KIND" == Pod ]; then
    wait_until 30 eval '[ -z "$(kueue_held)" ]' || true
    expect_eq "$what, admitted: Kueue removes its scheduling gates" "" "$(kueue_held)"
  else
    wait_until 30 eval '[ "$(kueue_held)" == false ]' || true
    expect_eq "$what, admitted: Kueue unsuspends the $O_KIND" false "$(kueue_held)"
  fi
  if wait_until 60 kueue_running; then
    pass "$what, admitted: its $K_PODS pods are created and Running"
  else
    fail "$what, admitted: its $K_PODS pods are created and Running" "$(kubectl get pods -n "$NS" -o wide 2>&1)"
  fi
  if [ "$O_KIND" == TrainJob ]; then
    # Kueue's TrainJob integration (built against Trainer v2.2.1's API) writes the pod sets' admission
    # into a runtime patch of its own and updates the TrainJob: mlops-fn's must be left as rendered
    # (but for its time, which Trainer's defaulting stamps).
    want=$(kubectl kustomize "$dir" | kubectl create --dry-run=client -o json -f - | jq -S -c -s \
      '[.[] | if .kind == "List" then .items[] else . end | select(.kind == "TrainJob") | .spec.runtimePatches[] | del(.time)]')
    got=$(kubectl get "$K_RES" "$O_JOB" -n "$NS" -o json | jq -S -c '.spec.runtimePatches')
    expect_eq "$what, admitted: the TrainJob's other runtime patches are as rendered, Kueue's own (kueue.x-k8s.io/manager) added" \
      "$want" "$(echo "$got" | jq -S -c '[.[] | select(.manager != "kueue.x-k8s.io/manager") | del(.time)]')"
    echo "        Kueue's runtime patch, for each replicated job: $(echo "$got" | jq -c '[.[] | select(.manager == "kueue.x-k8s.io/manager") |
      .trainingRuntimeSpec.template.spec.replicatedJobs[]? | {name} + (.template.spec.template | {labels: (.metadata.labels // {} | keys),
      annotations: (.metadata.annotations // {} | keys), spec: (.spec // {} | keys)})]')"
  fi

  # (c) a second job of the same size
  ns=$NS
  NS=kueue-$O_SLUG-2
  kueue_apply "$dir" "$what (second)" || return
  if wait_until 60 kueue_pending; then
    pass "$what, a second one in $NS while the first runs: its Workload waits: $(kueue_workload | jq -r '[.status.conditions[]? | select(.type == "QuotaReserved") | .message][0]' | cut -c1-200)"
  else
    fail "$what, a second one in $NS while the first runs: its Workload waits (QuotaReserved False)" "$(kueue_workload | jq -c .status)"
  fi
  expect_eq "$what, the second one: its Workload is not admitted" "" "$(kueue_wl_cond Admitted | grep -x True || true)"
  expect_kueue_held "$what, the second one"
  kubectl delete "$K_RES" "$O_JOB" -n "$ns" --wait=false >/dev/null
  if wait_until 90 kueue_admitted; then
    pass "$what, the second one: admitted once the first is deleted"
  else
    fail "$what, the second one: admitted once the first is deleted" "$(kueue_workload | jq -c .status)" \
      "$(kubectl get clusterqueue "$KUEUE_CQ" -o jsonpath='{.status}')"
  fi
  if wait_until 60 kueue_running; then
    pass "$what, the second one: its $K_PODS pods are created and Running"
  else
    fail "$what, the second one: its $K_PODS pods are created and Running" "$(kubectl get pods -n "$NS" -o wide 2>&1)"
  fi

  # (d) no QUEUE, the ClusterQueue full
  ns=$NS
  NS=kueue-$O_SLUG-noqueue
  kueue_apply "$O_DIR" "$src without QUEUE" || return
  if wait_until 60 kueue_running; then
    pass "$src without QUEUE, the ClusterQueue full, a LocalQueue in the namespace: its $K_PODS pods are created and Running"
  else
    fail "$src without QUEUE: its $K_PODS pods are created and Running (not held by Kueue)" "$(kubectl get pods -n "$NS" -o wide 2>&1)"
  fi
  expect_eq "$src without QUEUE: Kueue creates no Workload" "" "$(kueue_workload)"
  if [ "$O_KIND" == Pod ]; then
    expect_eq "$src without QUEUE: the Pod has no scheduling gate" "" "$(kueue_held)"
  else
    expect_eq "$src without QUEUE: the $O_KIND is not suspended" false "$([ "$(kueue_held)" == true ] && echo true || echo false)"
    [ "$O_KIND" != TrainJob ] || echo "        its runtime patches' managers: $(kubectl get "$K_RES" "$O_JOB" -n "$NS" -o json |
      jq -c '[.spec.runtimePatches[]?.manager]')"
  fi

  # Free the ClusterQueue for the next kind.
  kubectl delete "$K_RES" "$O_JOB" -n "$NS" --wait=false >/dev/null
  kubectl delete "$K_RES" "$O_JOB" -n "$ns" --wait=false >/dev/null
  NS=$ns
  wait_until 60 eval '[ -z "$(kueue_workload)" ]' ||
    log "the Workload in $NS is still there: $(kueue_workload | jq -c '.status.conditions')"
}

# check_kueue_all: the ClusterQueue, then check_kueue for each quickstart overlay, in copies of the
# quickstart tree (the overlays' bases are outside their folders).
check_kueue_all() {
  local d t=$SECONDS
  KUEUE_TREE=$RUN/kueue-tree
  mkdir -p "$KUEUE_TREE" && cp -r quickstart "$KUEUE_TREE/"
  kueue_setup || return 0
  for d in $(find quickstart/k8s/mlops -name job.yaml | sort); do
    [ -f "$(dirname "$d")/kustomization.yaml" ] && check_kueue "$(dirname "$d")"
  done
  log "the Kueue checks took $((SECONDS - t)) s"
}

# on_exit: a run that stops before its summary says so, and which component had died.
on_exit() {
  local rc=$? name
  if [ -z "${SUMMARY_DONE:-}" ]; then
    log "ERROR: the harness stopped early (status $rc); component logs: .cache/e2e/logs"
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
  declare -gA PSA_REFUSAL=()
  start_cluster

  section "control plane"
  expect_eq "kubectl talks to kube-apiserver $KUBERNETES_VERSION" "$KUBERNETES_VERSION" \
    "$(kubectl version -o json | jq -r .serverVersion.gitVersion)"

  local overlays=("${@:2}") d
  if [ ${#overlays[@]} -eq 0 ]; then
    overlays=()
    for d in $(find quickstart/k8s/mlops -name job.yaml | sort) $(find examples -name job.yaml | sort); do
      [ -f "$(dirname "$d")/kustomization.yaml" ] && overlays+=("$(dirname "$d")")
    done
    overlays+=("$TRAINJOB_FIXTURE")
  fi
  section "broken objects"
  check_broken_objects
  check_broken_trainjob

  for d in "${overlays[@]}"; do run_overlay "$d"; done
  section "renamed by an overlay on top"
  if [ $# -le 1 ]; then
    check_renamed quickstart/k8s/mlops/multi-node
    check_renamed quickstart/k8s/mlops/elastic
    [ ! -f quickstart/k8s/mlops/trainjob/job.yaml ] || check_renamed quickstart/k8s/mlops/trainjob
  else
    skip "the quickstarts under namePrefix/nameSuffix: only the overlays named on the command line run"
  fi
  section "edited, then applied without and with mlops-fn hydrate"
  if [ $# -le 1 ]; then check_edited; else skip "the edited quickstart: only the overlays named on the command line run"; fi
  section "Kueue: each quickstart kind queued, admitted, held by quota, and not held without QUEUE"
  if [ $# -le 1 ] || [ -n "${E2E_KUEUE:-}" ]; then check_kueue_all; else skip "Kueue: only the overlays named on the command line run"; fi

  SUMMARY_DONE=1
  section "summary"
  [ "$FAILED" -eq 0 ] || printf 'failed: %s\n' "${FAILURES[@]}"
  echo "e2e: $PASSED passed, $FAILED failed, $SKIPPED skipped"
  [ "$FAILED" -eq 0 ]
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
  local t=$SECONDS rc=0 netns=(env) child
  [ -x "$MLOPS_FN" ] || die "$MLOPS_FN missing: run make build (make e2e does)"
  build_all
  export PATH="$K8S_DIR:$PATH"   # the pinned kubectl first
  RUN=$(mktemp -d "${TMPDIR:-/tmp}/mlops-fn-e2e.XXXXXX")
  trap 'rm -rf "$CACHE/logs"; cp -r "$RUN/logs" "$CACHE/logs" 2>/dev/null; rm -rf "$RUN"' EXIT
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
  log "e2e took $((SECONDS - t)) s; component logs: .cache/e2e/logs"
  return "$rc"
}

if [ "${1:-}" == --inside ]; then
  shift
  build_all >/dev/null 2>&1 || die "the binaries are not built"  # cached: only finds them
  inside "$@"
else
  main "$@"
fi
