#!/usr/bin/env bash
# make e2e: mlops-fn's overlays against a real control plane.
#
# Builds (once, cached in .cache/e2e) etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler and kubectl of the pinned Kubernetes, the pinned mpi-operator and its MPIJob
# CRD, the pinned training-operator and its PyTorchJob CRD, and kwok as a fake kubelet
# (hack/e2e/build.sh, versions in hack/e2e/versions.env); starts
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
#
# Prints PASS/FAIL a check, then "N passed, N failed"; exits 1 on any failure. Every process it
# starts is stopped at the end, failure or not; logs are kept in .cache/e2e/logs.
#
# Usage: hack/e2e/run.sh [OVERLAY_DIR...]   (default: all of them)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT"
source hack/e2e/build.sh   # also lib.sh and versions.env
MLOPS_FN="$ROOT/bin/mlops-fn"
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

  # The MPIJob and PyTorchJob CRDs; "Established" can lag the create by a moment, and
  # `kubectl wait` can fail once right after the create: poll.
  kubectl apply --server-side -f "$MPI_DIR/kubeflow.org_mpijobs.yaml" -f "$TRAINING_DIR/kubeflow.org_pytorchjobs.yaml" >/dev/null
  wait_until 60 kubectl wait --for=condition=Established --timeout=5s crd/mpijobs.kubeflow.org crd/pytorchjobs.kubeflow.org ||
    die "the CRDs did not become Established"
  # mpi-operator takes a leader-election lease in its lock namespace, which must exist.
  # Its health endpoint is :8080 on every interface, not configurable (hence the netns).
  kubectl create namespace mpi-operator >/dev/null
  if [ "${E2E_IN_NETNS:-0}" != 1 ] && port_open 8080; then die "port 8080 is taken: mpi-operator needs it"; fi
  start mpi-operator "$MPI_DIR/mpi-operator" --kubeConfig="$KUBECONFIG" \
    --lock-namespace=mpi-operator --threadiness=4 --kube-api-qps=50 --kube-api-burst=100
  wait_until 60 curl -sf http://127.0.0.1:8080/healthz || { alive mpi-operator; die "mpi-operator not healthy"; }

  start_training_operator

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
  ca=$(base64 -w0 <"$RUN/pki/ca.crt")
  kubectl apply --server-side -f - >/dev/null <<EOF
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: e2e-training-operator}
webhooks:
- name: validator.pytorchjob.training-operator.kubeflow.org
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Fail
  clientConfig:
    url: https://127.0.0.1:$hook_port/validate-kubeflow-org-v1-pytorchjob
    caBundle: $ca
  rules:
  - apiGroups: [kubeflow.org]
    apiVersions: [v1]
    operations: [CREATE, UPDATE]
    resources: [pytorchjobs]
EOF
}

node_schedulable() {
  [ "$(kubectl get node kwok-gpu-0 -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" == True ] &&
    [ -z "$(kubectl get node kwok-gpu-0 -o jsonpath='{.spec.taints}')" ]
}

# ---------------------------------------------------------------- overlays

# load_overlay DIR: what the overlay's inputs say the output must be (O_* variables).
load_overlay() {
  O_DIR=${1%/}
  local env=$O_DIR/mlops.env job=$O_DIR/job.yaml
  O_JOB=$(meta_name "$job")
  O_MODE=$(spec_get "$job" mode); O_MODE=${O_MODE:-multi-node}
  O_SLUG=$(echo "$O_DIR" | sed 's#^quickstart/k8s/mlops/#qs-#; s#^examples/##; s#/#-#g')
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
  RENDERED=$RUN/$O_SLUG.yaml
  kubectl kustomize "$O_DIR" >"$RENDERED"
  # The same as JSON (kubectl fills in the namespace it would use: dropped).
  kubectl create --dry-run=client -o json -f "$RENDERED" | jq -s '{kind: "List", apiVersion: "v1",
    items: [.[] | if .kind == "List" then .items[] else . end | del(.metadata.namespace)]}' >"$RUN/$O_SLUG.json"
  O_KIND=$(jq -r '[.items[].kind | select(. == "MPIJob" or . == "Pod" or . == "PyTorchJob")][0] // "none"' "$RUN/$O_SLUG.json")
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
check_pod_security() {
  local level out i
  jq --arg job "$O_JOB" '{kind: "List", apiVersion: "v1", items: (
      [.items[] | select(.kind == "MPIJob" or .kind == "PyTorchJob") |
        (.spec.mpiReplicaSpecs // .spec.pytorchReplicaSpecs) | to_entries[] |
        {apiVersion: "v1", kind: "Pod", metadata: {name: ($job + "-" + (.key | ascii_downcase) + "-psa-probe")},
         spec: .value.template.spec}] +
      [.items[] | select(.kind == "Pod")])}' "$RUN/$O_SLUG.json" >"$RUN/$O_SLUG.pods.json"
  [ -n "$O_WARNINGS" ] && printf '        mlops-fn hydrate --check %s says:\n%s\n' "$O_DIR" "$(echo "$O_WARNINGS" | sed 's/^/          /')"
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
  if [ "$O_ADMITTED" == "$O_CLAIMED" ]; then
    pass "$O_DIR: Pod Security '$O_CLAIMED' (what mlops-fn says the job needs) admits the pods"
    for ((j = 0; j < i; j++)); do
      pass "$O_DIR: Pod Security '${LEVELS[$j]}' refuses the pods"
      printf '        %s\n' "${PSA_REFUSAL[${LEVELS[$j]}]}"
    done
  else
    below=${below%$'\n'}
    fail "$O_DIR: Pod Security: mlops-fn says the job needs '$O_CLAIMED', it needs '$O_ADMITTED'" \
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
  expect_eq "$what: no container overrides the pod's user or group" "" \
    "$(q '[.spec.containers[] | .securityContext // {} | {runAsUser, runAsGroup} | select(.runAsUser != null or .runAsGroup != null)] | if length > 0 then tostring else "" end')"
  expect_eq "$what: every container has envFrom the job's env ConfigMap $(env_configmap)" true \
    "$(q --arg cm "$(env_configmap)" '[.spec.containers[] | [.envFrom[]?.configMapRef.name] | index($cm) != null] | all')"
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

check_env_configmap() {
  local want got
  want=$(jq -Rn '[inputs | select(test("^\\s*(#|$)") | not) | sub("^\\s+"; "") |
    capture("^(?<k>[^=]+)(=(?<v>.*))?$") | {(.k): (.v // "")}] | add // {}' <"$O_DIR/mlops.env" | jq -S -c .)
  got=$(kubectl get configmap "$(env_configmap)" -n "$NS" -o json | jq -S -c '.data // {}')
  expect_eq "$O_DIR: ConfigMap $(env_configmap) holds mlops.env's keys and values" "$want" "$got"
}

# pvc_fixtures: a bound PersistentVolume and claim for each claim the pods mount (the examples
# expect the user's claims to exist; without them the scheduler leaves the pods Pending).
pvc_fixtures() {
  local claim
  for claim in $(jq -r '[.items[].spec.volumes[]?.persistentVolumeClaim.claimName // empty] | unique[]' "$RUN/$O_SLUG.pods.json"); do
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
# created (by mpi-operator for an MPIJob, training-operator for a PyTorchJob, at apply for a Pod).
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
    expect_eq "$O_DIR: under 'restricted' the operator's worker pods are refused (violates PodSecurity)" 0 "$(count "$(job_pods worker)")"
  else
    fail "$O_DIR: under 'restricted' the operator's worker pods are refused" "$(kubectl get pods,events -n "$NS" 2>&1)"
  fi
}

run_overlay() {
  section "$1"
  load_overlay "$1"
  log "$O_DIR: job $O_JOB, $O_MODE, workers=$O_WORKERS slots=$O_SLOTS gpus=$O_GPUS uid=${O_UID:-unset}"
  check_dry_run
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
  if ! wait_until 60 eval '[ "$(count "$(job_pods worker)")" -ge "$O_WORKERS" ]'; then
    fail "$O_DIR under namePrefix/nameSuffix: the operator creates the renamed job's worker pods" \
      "$(kubectl get events -n "$NS" --sort-by=.lastTimestamp 2>&1 | tail -n 5)"
    return
  fi
  pass "$O_DIR under namePrefix/nameSuffix: the operator creates the pods of $O_JOB (their ServiceAccount exists)"
  pods=$(job_pods worker)
  if [ "$O_KIND" == MPIJob ]; then
    wait_until 60 eval '[ "$(count "$(job_pods launcher)")" -ge 1 ]' || true
    pods+=$'\n'$(job_pods launcher)
  fi
  for pod in $pods; do
    json=$(kubectl get -n "$NS" "$pod" -o json)
    sa=$(echo "$json" | jq -r '.spec.serviceAccountName // "default"')
    expect_eq "$O_DIR under namePrefix/nameSuffix: $pod runs as the renamed ServiceAccount" "dev-model-service-v2" "$sa"
    cms=$(echo "$json" | jq -r '[.spec.containers[].envFrom[]?.configMapRef.name] | unique[]')
    [ -n "$cms" ] || fail "$O_DIR under namePrefix/nameSuffix: $pod has envFrom" "$json"
    for cm in $cms; do
      if kubectl get configmap "$cm" -n "$NS" >/dev/null 2>&1; then
        pass "$O_DIR under namePrefix/nameSuffix: $pod's envFrom ConfigMap $cm exists"
      else
        fail "$O_DIR under namePrefix/nameSuffix: $pod's envFrom ConfigMap $cm exists" "$(kubectl get configmaps -n "$NS" 2>&1)"
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

# on_exit: a run that stops before its summary says so, and which component had died.
on_exit() {
  local rc=$? name
  if [ -z "${SUMMARY_DONE:-}" ]; then
    log "ERROR: the harness stopped early (status $rc); component logs: .cache/e2e/logs"
    for name in "${STARTED_NAMES[@]}"; do alive "$name" >/dev/null || true; done
  fi
  stop_all
  # On the host's /tmp (no namespace of our own): training-operator's certificate and key.
  [ "${E2E_IN_NETNS:-0}" == 1 ] || rm -rf "$TRAINING_CERT_DIR"
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
  fi
  section "broken objects"
  check_broken_objects

  for d in "${overlays[@]}"; do run_overlay "$d"; done
  section "renamed by an overlay on top"
  if [ $# -le 1 ]; then
    check_renamed quickstart/k8s/mlops/multi-node
    check_renamed quickstart/k8s/mlops/elastic
  else
    skip "the quickstarts under namePrefix/nameSuffix: only the overlays named on the command line run"
  fi
  section "edited, then applied without and with mlops-fn hydrate"
  if [ $# -le 1 ]; then check_edited; else skip "the edited quickstart: only the overlays named on the command line run"; fi

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
