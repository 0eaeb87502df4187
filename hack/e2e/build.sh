#!/usr/bin/env bash
# Builds (or finds in the cache) every upstream binary `make e2e` runs, pinned in
# hack/e2e/versions.env, and prints the cache folder they are in. Run on its own to warm the
# cache: hack/e2e/build.sh
#
# Cache: outside the clone, so that every clone and worktree on the machine shares it:
# ${XDG_CACHE_HOME:-~/.cache}/mlops-fn/e2e (E2E_CACHE overrides it), one folder a build,
# <name>-<version>-<hash of the tools module's go.mod and go.sum>/. A folder is reused as long as
# its version and module pins match; a build goes to a temporary name and is renamed when
# complete, so an interrupted build is redone, not reused; older builds of a name are removed.
# Clear it with `rm -rf ~/.cache/mlops-fn/e2e` (the Go build cache, `go clean -cache`, holds the
# compiled packages the binaries were linked from).
#
#   kubernetes-*/   kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, the real
#                   node's kubelet and etcd (go.etcd.io/etcd/server/v3, the version Kubernetes
#                   requires): one module (hack/tools), one `go build`
#   operators-*/    mpi-operator, the training-operator (cmd/training-operator.v1), Kubeflow
#                   Trainer's trainer-controller-manager, the JobSet controller (`jobset`), Kueue's
#                   manager and kwok, with the CRDs and runtimes of each from the same module, and
#                   kwok's stage files: one module (hack/tools/operators), one `go build`
#   scheduler-plugins-*/  the gang scheduler (its cmd/scheduler, a kube-scheduler of v1.34 with
#                   the Coscheduling plugin) and its PodGroup CRD (hack/tools/scheduler-plugins)
#   node-*/         the real node's containerd, containerd-shim-runc-v2, ctr (hack/tools/containerd),
#                   runc with seccomp (hack/tools/runc; cgo, Debian's libseccomp-dev), the CNI
#                   plugins cni/{bridge,host-local,loopback} (hack/tools/cni-plugins) and coredns
#                   (hack/tools/coredns)
#   images-*/       the real node's images, built offline from Debian's packages (images.sh)
#
# Cold on a 2-core machine, the parts build side by side: the images (network and disk bound)
# in the background throughout, Kubernetes in one lane, the operators, the gang scheduler and the
# node in another,
# so that one lane's links and long single packages leave the cores to the other. Times: docs/e2e.md.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
source "$ROOT/hack/e2e/lib.sh"
source "$ROOT/hack/e2e/versions.env"
source "$ROOT/hack/e2e/images.sh"
CACHE="${E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mlops-fn/e2e}"
TOOLS="$ROOT/hack/tools"
export GOWORK=off GOFLAGS="-mod=readonly -trimpath" CGO_ENABLED=0
# Two compile jobs a lane: kube-apiserver's link peaks at about 2.2 GB.
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
# timed WHAT COMMAND...: runs COMMAND and logs how long WHAT took.
timed() { local t=$SECONDS; "${@:2}"; log "  ... $1: $((SECONDS - t)) s"; }

# The pins of each folder: its tools modules (and, for the operators, kwok's stage of ours).
KUBERNETES_PINS=("$TOOLS/go.mod" "$TOOLS/go.sum")
SCHED_PINS=("$TOOLS/scheduler-plugins/go.mod" "$TOOLS/scheduler-plugins/go.sum")
OPERATORS_PINS=("$TOOLS/operators/go.mod" "$TOOLS/operators/go.sum" "$ROOT/hack/e2e/kwok/pod-complete.yaml")
NODE_PINS=()
for m in containerd runc cni-plugins coredns; do NODE_PINS+=("$TOOLS/$m/go.mod" "$TOOLS/$m/go.sum"); done

# cache_dirs: sets K8S_DIR, OPS_DIR, SCHED_DIR and NODE_DIR (IMAGES_DIR: build_images) without
# building.
cache_dirs() {
  K8S_DIR=$(cache_dir kubernetes "$KUBERNETES_VERSION" "${KUBERNETES_PINS[@]}")
  SCHED_DIR=$(cache_dir scheduler-plugins "$SCHEDULER_PLUGINS_VERSION" "${SCHED_PINS[@]}")
  OPS_DIR=$(cache_dir operators "$MPI_OPERATOR_VERSION" "${OPERATORS_PINS[@]}")
  NODE_DIR=$(cache_dir node "$CONTAINERD_VERSION" "${NODE_PINS[@]}")
}

# build_kubernetes: Kubernetes' commands and etcd, in one `go build` of hack/tools (they share
# most packages).
build_kubernetes() {
  start_build K8S_DIR kubernetes "$KUBERNETES_VERSION" "${KUBERNETES_PINS[@]}" || return 0
  local dir=$K8S_DIR minor=${KUBERNETES_VERSION#v1.} cmd pkgs=()
  minor=${minor%%.*}
  # kubectl refuses a server without a proper version: stamp what `make release` would.
  local ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$KUBERNETES_VERSION"
  ldflags+=" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
  ldflags+=" -X k8s.io/component-base/version.gitTreeState=clean"
  for cmd in kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet; do pkgs+=("k8s.io/kubernetes/cmd/$cmd"); done
  log "building Kubernetes $KUBERNETES_VERSION and etcd $ETCD_VERSION into $dir"
  (cd "$TOOLS" && timed kubernetes go build -p 2 -ldflags "$ldflags" -o "$dir.tmp/" "${pkgs[@]}" go.etcd.io/etcd/server/v3)
  mv "$dir.tmp/server" "$dir.tmp/etcd"
  finish "$dir"
}

# build_scheduler_plugins: the gang scheduler and its PodGroup CRD.
build_scheduler_plugins() {
  local mod=$TOOLS/scheduler-plugins src
  start_build SCHED_DIR scheduler-plugins "$SCHEDULER_PLUGINS_VERSION" "${SCHED_PINS[@]}" || return 0
  local dir=$SCHED_DIR
  log "building scheduler-plugins $SCHEDULER_PLUGINS_VERSION into $dir"
  (cd "$mod" && timed scheduler-plugins "${GO_BUILD[@]}" -o "$dir.tmp/scheduler-plugins" sigs.k8s.io/scheduler-plugins/cmd/scheduler)
  src=$(mod_dir "$mod" "sigs.k8s.io/scheduler-plugins@$SCHEDULER_PLUGINS_VERSION")
  cp "$src/manifests/coscheduling/crd.yaml" "$dir.tmp/"
  finish "$dir"
}

# build_operators: every operator, each with its CRDs from its own module, in one `go build`
# of hack/tools/operators (they share client-go and controller-runtime), and kwok's stages.
build_operators() {
  local mod=$TOOLS/operators src f
  start_build OPS_DIR operators "$MPI_OPERATOR_VERSION" "${OPERATORS_PINS[@]}" || return 0
  local dir=$OPS_DIR
  log "building mpi-operator $MPI_OPERATOR_VERSION, training-operator $TRAINING_OPERATOR_VERSION, Trainer $TRAINER_VERSION, JobSet $JOBSET_VERSION, Kueue $KUEUE_VERSION and kwok $KWOK_VERSION into $dir"
  (cd "$mod" && timed operators "${GO_BUILD[@]}" -o "$dir.tmp/" \
    github.com/kubeflow/mpi-operator/cmd/mpi-operator \
    github.com/kubeflow/training-operator/cmd/training-operator.v1 \
    github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager \
    sigs.k8s.io/jobset sigs.k8s.io/kueue/cmd/kueue sigs.k8s.io/kwok/cmd/kwok)
  mv "$dir.tmp/training-operator.v1" "$dir.tmp/training-operator"
  src=$(mod_dir "$mod" "github.com/kubeflow/mpi-operator@$MPI_OPERATOR_VERSION")
  cp "$src/manifests/base/kubeflow.org_mpijobs.yaml" "$dir.tmp/"
  src=$(mod_dir "$mod" "github.com/kubeflow/training-operator@$TRAINING_OPERATOR_VERSION")
  cp "$src/manifests/base/crds/kubeflow.org_pytorchjobs.yaml" "$dir.tmp/"
  src=$(mod_dir "$mod" "github.com/kubeflow/trainer/v2@$TRAINER_VERSION")
  cp "$src"/manifests/base/crds/trainer.kubeflow.org_*.yaml "$dir.tmp/"
  cp "$src/manifests/base/runtimes/torch_distributed.yaml" "$src/manifests/base/runtimes/deepspeed_distributed.yaml" "$dir.tmp/"
  src=$(mod_dir "$mod" "sigs.k8s.io/jobset@$JOBSET_VERSION")
  cp "$src/config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml" "$dir.tmp/"
  src=$(mod_dir "$mod" "sigs.k8s.io/kueue@$KUEUE_VERSION")
  cp "$src"/config/components/crd/bases/kueue.x-k8s.io_*.yaml "$dir.tmp/"
  # kwok's stages: its own for the node and for pods becoming Running and being deleted, and
  # ours for completing a pod on request (hack/e2e/kwok/pod-complete.yaml).
  src=$(mod_dir "$mod" "sigs.k8s.io/kwok@$KWOK_VERSION")/kustomize/stage
  for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
    pod/fast/pod-ready.yaml pod/fast/pod-delete.yaml; do
    cat "$src/$f"; echo "---"
  done >"$dir.tmp/kwok-stages.yaml"
  cat "$ROOT/hack/e2e/kwok/pod-complete.yaml" >>"$dir.tmp/kwok-stages.yaml"
  finish "$dir"
}

# build_node: the real node's parts beside the kubelet, each from its own tools module. runc
# links libseccomp statically (the containers' RuntimeDefault seccomp profile needs it), so it
# runs on any Linux; everything else is pure Go, as containerd's static release builds are.
build_node() {
  start_build NODE_DIR node "$CONTAINERD_VERSION" "${NODE_PINS[@]}" || return 0
  local dir=$NODE_DIR
  [ -n "$(find /usr/lib /usr/lib64 -name libseccomp.a -print -quit 2>/dev/null)" ] ||
    die "runc needs libseccomp.a: apt-get install libseccomp-dev"
  log "building the real node (containerd $CONTAINERD_VERSION, runc $RUNC_VERSION, CNI plugins $CNI_PLUGINS_VERSION, CoreDNS $COREDNS_VERSION) into $dir"
  (cd "$TOOLS/containerd" && timed containerd "${GO_BUILD[@]}" -tags "urfave_cli_no_docs osusergo netgo static_build no_btrfs" \
    -o "$dir.tmp/" github.com/containerd/containerd/v2/cmd/{containerd,containerd-shim-runc-v2,ctr})
  (cd "$TOOLS/runc" && CGO_ENABLED=1 timed runc go build -p 2 -tags "seccomp urfave_cli_no_docs netgo osusergo" \
    -ldflags "-s -w -extldflags -static" -o "$dir.tmp/runc" github.com/opencontainers/runc)
  mkdir -p "$dir.tmp/cni"
  (cd "$TOOLS/cni-plugins" && timed cni-plugins "${GO_BUILD[@]}" -o "$dir.tmp/cni/" \
    github.com/containernetworking/plugins/plugins/{main/bridge,ipam/host-local,main/loopback})
  (cd "$TOOLS/coredns" && timed coredns "${GO_BUILD[@]}" -o "$dir.tmp/coredns" github.com/coredns/coredns)
  finish "$dir"
}

# download_modules: every tools module's dependencies, side by side (network bound), so that
# the builds find them in the module cache.
download_modules() {
  local m
  for m in "$TOOLS" "$TOOLS"/*/; do
    [ -f "$m/go.mod" ] && (cd "$m" && go mod download) &
  done
  wait
}

# lane NAME STEP...: runs the steps one after the other, output to $CACHE/NAME.log; run in the
# background, so a failing command ends it (errexit holds: no step is called under || or &&).
lane() {
  local name=$1 step
  shift
  for step in "$@"; do "$step"; done >"$CACHE/$name.log" 2>&1
}

build_all() {
  mkdir -p "$CACHE"
  # One build at a time in the cache (clones and worktrees share it).
  exec {lock}>"$CACHE/.lock"
  flock "$lock"
  local t=$SECONDS pids=() names=(images modules kubernetes others) i failed=()
  cache_dirs
  if ! is_built "$K8S_DIR" || ! is_built "$OPS_DIR" || ! is_built "$SCHED_DIR" || ! is_built "$NODE_DIR" || ! images_built; then
    lane images build_images & pids+=($!)
    lane modules download_modules & pids+=($!)
    lane kubernetes build_kubernetes & pids+=($!)
    lane others build_operators build_scheduler_plugins build_node & pids+=($!)
    for i in "${!pids[@]}"; do
      wait "${pids[$i]}" || failed+=("${names[$i]}")
      cat "$CACHE/${names[$i]}.log" >&2
    done
    [ ${#failed[@]} -eq 0 ] || die "building ${failed[*]} failed (logs above)"
  fi
  build_images # built by now: this sets IMAGES_DIR in this shell
  flock -u "$lock"
  log "binaries ready in $((SECONDS - t)) s: $CACHE"
}

if [ "${BASH_SOURCE[0]}" == "$0" ]; then
  build_all
  echo "$CACHE"
fi
