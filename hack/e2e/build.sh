#!/usr/bin/env bash
# Builds (or finds in the cache) every upstream binary `make e2e` runs, pinned in
# hack/e2e/versions.env, and prints the cache folder they are in. Run on its own to warm the
# cache: hack/e2e/build.sh
#
# Cache: .cache/e2e/<name>-<version>-<hash of the tools module's go.mod and go.sum>/. A folder is
# reused as long as its version and module pins match; a build goes to a temporary name and is
# renamed when complete, so an interrupted build is redone, not reused.
#
#   kubernetes-*/   kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, and the real
#                   node's kubelet (hack/tools)
#   etcd-*/         etcd (go.etcd.io/etcd/server/v3, the version Kubernetes requires; hack/tools)
#   mpi-operator-*/ mpi-operator and the MPIJob CRD from the same module (hack/tools/mpi-operator)
#   kwok-*/         kwok and its stage files (go install sigs.k8s.io/kwok/cmd/kwok@version)
#   training-operator-*/  training-operator (cmd/training-operator.v1) and the PyTorchJob CRD
#                   from the same module (hack/tools/training-operator)
#   trainer-*/      Kubeflow Trainer's trainer-controller-manager, its CRDs (TrainJob,
#                   TrainingRuntime, ClusterTrainingRuntime) and runtimes (torch-distributed,
#                   deepspeed-distributed), and the JobSet controller (`jobset`: the main
#                   package at its module root) and JobSet CRD, built in hack/tools/trainer
#   kueue-*/        Kueue's manager (cmd/kueue) and its CRDs (hack/tools/kueue)
#   node-*/         the real node's containerd, containerd-shim-runc-v2, ctr (hack/tools/containerd),
#                   runc with seccomp (hack/tools/runc; cgo, Debian's libseccomp-dev), the CNI
#                   plugins cni/{bridge,host-local,loopback} (hack/tools/cni-plugins) and coredns
#                   (hack/tools/coredns)
#   images-*/       the real node's images, built offline from Debian's packages (images.sh)
#
# Cold, measured with these pins on a 2-core machine (empty Go build cache, module cache and
# .cache/e2e, 2026-11-23): 989 s in all (etcd 45 s; kube-apiserver 250, kube-controller-manager 84,
# kube-scheduler 11, kubectl 21; mpi-operator 121; kwok 66; training-operator 82; jobset 86 and
# trainer-controller-manager 16, which shares jobset's packages; Kueue 207, whose k8s.io and
# controller-runtime releases are its own), downloads included; a whole cold .ci/run took 31 min.
# The real node adds, cold (empty Go build cache, 2026-11-24): kubelet 268 s; containerd 80, its
# shim 2, ctr 4, runc 12, the CNI plugins 6, CoreDNS 109 (213 s in all); the images 210-245 s
# (images.sh). Warm (everything cached), make e2e took 15 min on 2026-11-25 (8.5 min the day before, without
# TestEditRunning and the team jobs), the real node's runs included.
# shellcheck disable=SC2034  # K8S_DIR, ETCD_DIR, MPI_DIR, KWOK_DIR, TRAINING_DIR, TRAINER_DIR, KUEUE_DIR, NODE_DIR: for run.sh
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
source "$ROOT/hack/e2e/lib.sh"
source "$ROOT/hack/e2e/versions.env"
source "$ROOT/hack/e2e/images.sh"
CACHE="${E2E_CACHE:-$ROOT/.cache/e2e}"
TOOLS="$ROOT/hack/tools"
export GOWORK=off GOFLAGS="-mod=readonly -trimpath" CGO_ENABLED=0
# Two compile jobs at a time: kube-apiserver's link peaks at about 2.2 GB.
GO_BUILD=(go build -p 2 -ldflags "-s -w")

modhash() { cat "$@" | sha256sum | cut -c1-12; }
# mod_dir DIR MODULE@VERSION: where the module's source is in the module cache (downloaded
# from DIR's point of view: its go.sum checks it).
mod_dir() { (cd "$1" && GOFLAGS='' go mod download -json "$2" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p'); }

# cache_dir NAME VERSION PINFILE...: the cache folder of a build, named after the version and
# a hash of the files that pin it. is_built DIR: it was built completely.
cache_dir() { echo "$CACHE/$1-$2-$(modhash "${@:3}")"; }
is_built() { [ -f "$1/.complete" ]; }
# start_build VAR NAME VERSION PINFILE...: sets VAR to the build's cache folder DIR; fails when
# it is built already, else gives the build an empty DIR.tmp (finish DIR completes it).
start_build() {
  local dir
  dir=$(cache_dir "${@:2}")
  printf -v "$1" %s "$dir"
  is_built "$dir" && return 1
  rm -rf "$dir.tmp"; mkdir -p "$dir.tmp"
}
# finish DIR: marks a build complete (atomically) and removes older builds of the same name
# (NAME-VERSION-HASH, finished or not).
finish() {
  local dir=$1 name=${1##*/}
  name=${name%-*}; name=${name%-*}
  touch "$dir.tmp/.complete"
  rm -rf "$dir"; mv "$dir.tmp" "$dir"
  find "$CACHE" -mindepth 1 -maxdepth 1 -type d -name "$name-*" ! -path "$dir" -exec rm -rf {} +
}
timed() { local t=$SECONDS; "$@"; log "  ... ${1##*/} ${*: -1}: $((SECONDS - t)) s"; }

build_kubernetes() {
  local cmd
  start_build K8S_DIR kubernetes "$KUBERNETES_VERSION" "$TOOLS/go.mod" "$TOOLS/go.sum" || return 0
  local dir=$K8S_DIR minor=${KUBERNETES_VERSION#v1.}; minor=${minor%%.*}
  # kubectl refuses a server without a proper version: stamp what `make release` would.
  local ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$KUBERNETES_VERSION"
  ldflags+=" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
  ldflags+=" -X k8s.io/component-base/version.gitTreeState=clean"
  log "building Kubernetes $KUBERNETES_VERSION into $dir (5-10 min cold on 2 cores)"
  for cmd in kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet; do
    (cd "$TOOLS" && timed go build -p 2 -ldflags "$ldflags" -o "$dir.tmp/$cmd" "k8s.io/kubernetes/cmd/$cmd")
  done
  finish "$dir"
}

build_etcd() {
  start_build ETCD_DIR etcd "$ETCD_VERSION" "$TOOLS/go.mod" "$TOOLS/go.sum" || return 0
  local dir=$ETCD_DIR
  log "building etcd $ETCD_VERSION into $dir"
  (cd "$TOOLS" && timed "${GO_BUILD[@]}" -o "$dir.tmp/etcd" go.etcd.io/etcd/server/v3)
  finish "$dir"
}

# build_operator VAR NAME VERSION MODULE_DIR PACKAGE CRD: an operator built in its own tools
# module (each pins its own k8s.io release), with its CRD copied from the same module; VAR
# gets the cache folder.
build_operator() {
  local var=$1 name=$2 version=$3 mod=$4 pkg=$5 crd=$6 src
  start_build "$var" "$name" "$version" "$mod/go.mod" "$mod/go.sum" || return 0
  local dir=${!var}
  log "building $name $version into $dir"
  (cd "$mod" && timed "${GO_BUILD[@]}" -o "$dir.tmp/$name" "$pkg")
  src=$(mod_dir "$mod" "${pkg%%/cmd/*}@$version")
  cp "$src/$crd" "$dir.tmp/"
  finish "$dir"
}

build_mpi_operator() {
  build_operator MPI_DIR mpi-operator "$MPI_OPERATOR_VERSION" "$TOOLS/mpi-operator" \
    github.com/kubeflow/mpi-operator/cmd/mpi-operator manifests/base/kubeflow.org_mpijobs.yaml
}

# build_scheduler_plugins: the gang scheduler (its cmd/scheduler, a kube-scheduler with the
# Coscheduling plugin) and its PodGroup CRD.
build_scheduler_plugins() {
  build_operator SCHED_DIR scheduler-plugins "$SCHEDULER_PLUGINS_VERSION" "$TOOLS/scheduler-plugins" \
    sigs.k8s.io/scheduler-plugins/cmd/scheduler manifests/coscheduling/crd.yaml
}

build_kwok() {
  local src f
  start_build KWOK_DIR kwok "$KWOK_VERSION" "$ROOT/hack/e2e/kwok/pod-complete.yaml" || return 0
  local dir=$KWOK_DIR
  log "building kwok $KWOK_VERSION into $dir"
  GOFLAGS=-trimpath GOBIN="$dir.tmp" timed go install -p 2 -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
  # Stages: kwok's own for the node and for pods becoming Running and being deleted, and ours
  # for completing a pod on request (hack/e2e/kwok/pod-complete.yaml).
  src=$(mod_dir / "sigs.k8s.io/kwok@$KWOK_VERSION")/kustomize/stage
  for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
    pod/fast/pod-ready.yaml pod/fast/pod-delete.yaml; do
    cat "$src/$f"; echo "---"
  done >"$dir.tmp/stages.yaml"
  cat "$ROOT/hack/e2e/kwok/pod-complete.yaml" >>"$dir.tmp/stages.yaml"
  finish "$dir"
}

build_training_operator() {
  build_operator TRAINING_DIR training-operator "$TRAINING_OPERATOR_VERSION" "$TOOLS/training-operator" \
    github.com/kubeflow/training-operator/cmd/training-operator.v1 manifests/base/crds/kubeflow.org_pytorchjobs.yaml
}

build_trainer() {
  local mod=$TOOLS/trainer src
  start_build TRAINER_DIR trainer "$TRAINER_VERSION" "$mod/go.mod" "$mod/go.sum" || return 0
  local dir=$TRAINER_DIR
  log "building Kubeflow Trainer $TRAINER_VERSION and JobSet $JOBSET_VERSION into $dir"
  (cd "$mod" && timed "${GO_BUILD[@]}" -o "$dir.tmp/jobset" sigs.k8s.io/jobset)
  (cd "$mod" && timed "${GO_BUILD[@]}" -o "$dir.tmp/trainer-controller-manager" \
    github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager)
  src=$(mod_dir "$mod" "github.com/kubeflow/trainer/v2@$TRAINER_VERSION")
  cp "$src"/manifests/base/crds/trainer.kubeflow.org_*.yaml "$dir.tmp/"
  cp "$src/manifests/base/runtimes/torch_distributed.yaml" "$src/manifests/base/runtimes/deepspeed_distributed.yaml" "$dir.tmp/"
  src=$(mod_dir "$mod" "sigs.k8s.io/jobset@$JOBSET_VERSION")
  cp "$src/config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml" "$dir.tmp/"
  finish "$dir"
}

# build_node: the real node's parts beside the kubelet, each from its own tools module. runc
# links libseccomp statically (the containers' RuntimeDefault seccomp profile needs it), so it
# runs on any Linux; everything else is pure Go, as containerd's static release builds are.
build_node() {
  local pins=() m
  for m in containerd runc cni-plugins coredns; do pins+=("$TOOLS/$m/go.mod" "$TOOLS/$m/go.sum"); done
  start_build NODE_DIR node "$CONTAINERD_VERSION" "${pins[@]}" || return 0
  local dir=$NODE_DIR cmd
  [ -n "$(find /usr/lib /usr/lib64 -name libseccomp.a -print -quit 2>/dev/null)" ] ||
    die "runc needs libseccomp.a: apt-get install libseccomp-dev"
  log "building the real node (containerd $CONTAINERD_VERSION, runc $RUNC_VERSION, CNI plugins $CNI_PLUGINS_VERSION, CoreDNS $COREDNS_VERSION) into $dir"
  for cmd in containerd containerd-shim-runc-v2 ctr; do
    (cd "$TOOLS/containerd" && timed "${GO_BUILD[@]}" -tags "urfave_cli_no_docs osusergo netgo static_build no_btrfs" \
      -o "$dir.tmp/$cmd" "github.com/containerd/containerd/v2/cmd/$cmd")
  done
  (cd "$TOOLS/runc" && CGO_ENABLED=1 timed go build -p 2 -tags "seccomp urfave_cli_no_docs netgo osusergo" \
    -ldflags "-s -w -extldflags -static" -o "$dir.tmp/runc" github.com/opencontainers/runc)
  mkdir -p "$dir.tmp/cni"
  for cmd in main/bridge ipam/host-local main/loopback; do
    (cd "$TOOLS/cni-plugins" && timed "${GO_BUILD[@]}" -o "$dir.tmp/cni/${cmd#*/}" \
      "github.com/containernetworking/plugins/plugins/$cmd")
  done
  (cd "$TOOLS/coredns" && timed "${GO_BUILD[@]}" -o "$dir.tmp/coredns" github.com/coredns/coredns)
  finish "$dir"
}

# build_kueue: Kueue's manager (cmd/kueue) and its CRDs (ClusterQueue, LocalQueue,
# ResourceFlavor, Workload, ...), from the same module (hack/tools/kueue).
build_kueue() {
  local mod=$TOOLS/kueue src
  start_build KUEUE_DIR kueue "$KUEUE_VERSION" "$mod/go.mod" "$mod/go.sum" || return 0
  local dir=$KUEUE_DIR
  log "building Kueue $KUEUE_VERSION into $dir"
  (cd "$mod" && timed "${GO_BUILD[@]}" -o "$dir.tmp/kueue" sigs.k8s.io/kueue/cmd/kueue)
  src=$(mod_dir "$mod" "sigs.k8s.io/kueue@$KUEUE_VERSION")
  cp "$src"/config/components/crd/bases/kueue.x-k8s.io_*.yaml "$dir.tmp/"
  finish "$dir"
}

build_all() {
  mkdir -p "$CACHE"
  local t=$SECONDS images
  # The images are network and disk bound, the binaries CPU bound: they build side by side.
  build_images >"$CACHE/images.log" 2>&1 &
  images=$!
  build_etcd
  build_kubernetes
  build_mpi_operator
  build_kwok
  build_training_operator
  build_trainer
  build_kueue
  build_scheduler_plugins
  build_node
  wait "$images" || { cat "$CACHE/images.log" >&2; die "building the real node's images failed"; }
  cat "$CACHE/images.log" >&2
  build_images # built by now: this sets IMAGES_DIR here, not in the background shell
  log "binaries ready in $((SECONDS - t)) s: $CACHE"
}

if [ "${BASH_SOURCE[0]}" == "$0" ]; then
  build_all
  echo "$CACHE"
fi
