# shellcheck shell=bash
# The real node of make e2e (sourced by run.sh): containerd with runc, the CNI bridge, a kubelet
# and CoreDNS, every one built from its pinned module (build.sh), and the images built offline
# from Debian's packages (images.sh) imported into containerd. Pods scheduled here run real
# processes; the fake kwok node stays for the object checks.
#
# Layout inside the harness's network namespace:
#   NODE_IP (on a veth of its own): the kubelet's address, and CoreDNS's, the cluster DNS server
#   POD_CIDR on the bridge e2e-cni0: the pods, on one L2 segment (no routing, no NAT, no kube-proxy:
#     the operators' and JobSet's Services are headless, so DNS names pod addresses directly)
# The node is tainted REAL_NODE_TAINT: only namespaces annotated by realNamespace (hack/e2e) get
# the toleration and the node selector, through the API server's PodTolerationRestriction and
# PodNodeSelector admission plugins, so the jobs run exactly as mlops-fn renders them.
# shellcheck disable=SC2034  # NODE_NAME, REAL_NODE_TAINT: for run.sh

NODE_NAME=e2e-node
NODE_IP=10.243.0.1
POD_CIDR=10.244.0.0/24
REAL_NODE_TAINT=mlops-fn.dev/real-node

# node_certs DIR: the kubelet's serving certificate (NODE_IP), and its client certificate as the
# Node authorizer expects it (system:node:NAME in system:nodes). Needs gen_certs' cert().
node_certs() {
  cert kubelet "/CN=$NODE_NAME" "subjectAltName=IP:$NODE_IP,DNS:$NODE_NAME
extendedKeyUsage=serverAuth"
  cert node "/O=system:nodes/CN=system:node:$NODE_NAME" "extendedKeyUsage=clientAuth"
}

# node_network: the node's address and the pods' bridge network (CNI: bridge, host-local).
node_network() {
  local d=$1
  ip link add e2e-node type veth peer name e2e-node-peer &&
    ip addr add "$NODE_IP/24" dev e2e-node && ip link set e2e-node up && ip link set e2e-node-peer up ||
    die "cannot give the node its address $NODE_IP"
  mkdir -p "$d/cni/net.d" "$d/cni/ipam"
  cat >"$d/cni/net.d/10-e2e.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "e2e",
  "plugins": [{
    "type": "bridge", "bridge": "e2e-cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
    "ipam": {"type": "host-local", "dataDir": "$d/cni/ipam", "ranges": [[{"subnet": "$POD_CIDR"}]],
      "routes": [{"dst": "0.0.0.0/0"}]}
  }]
}
EOF
}

# start_containerd DIR: containerd (CRI on, runc as its runtime, overlayfs snapshots) on a socket
# under DIR, then the images imported from IMAGES_DIR.
start_containerd() {
  local d=$1 img
  mkdir -p "$d/containerd"
  cat >"$d/containerd/config.toml" <<EOF
version = 3
root = "$d/containerd/root"
state = "$d/containerd/state"
[grpc]
  address = "$d/containerd.sock"
[plugins.'io.containerd.cri.v1.images']
  snapshotter = "overlayfs"
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = "$PAUSE_IMAGE"
[plugins.'io.containerd.cri.v1.runtime']
  # Root here lacks CAP_SYS_RESOURCE: runc may not lower a process's oom_score_adj below
  # containerd's own, which this keeps it from asking (docs/e2e.md, "The real node").
  restrict_oom_score_adj = true
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = ["$NODE_DIR/cni"]
    conf_dir = "$d/cni/net.d"
  [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v2"
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
      BinaryName = "$NODE_DIR/runc"
EOF
  PATH="$NODE_DIR:$PATH" start containerd "$NODE_DIR/containerd" --config "$d/containerd/config.toml"
  wait_until 60 "$NODE_DIR/ctr" --address "$d/containerd.sock" version || { alive containerd; die "containerd did not start"; }
  for img in "$IMAGES_DIR"/*.tar; do
    "$NODE_DIR/ctr" --address "$d/containerd.sock" -n k8s.io images import --local "$img" >/dev/null ||
      die "containerd cannot import $img"
  done
}

# start_coredns DIR: the cluster DNS on NODE_IP:53, answering cluster.local from the API server.
start_coredns() {
  local d=$1
  mkdir -p "$d/coredns"
  cat >"$d/coredns/Corefile" <<EOF
cluster.local:53 in-addr.arpa:53 {
  bind $NODE_IP
  errors
  kubernetes cluster.local in-addr.arpa {
    kubeconfig $KUBECONFIG e2e
    pods insecure
  }
}
EOF
  start coredns "$NODE_DIR/coredns" -conf "$d/coredns/Corefile"
}

# start_kubelet DIR: the kubelet, registered as NODE_NAME with the taint.
start_kubelet() {
  local d=$1 pki=$RUN/pki port
  free_port port
  mkdir -p "$d/kubelet" "$d/pod-logs"
  : >"$d/resolv.conf"
  KUBECONFIG="$d/kubelet.kubeconfig" kubectl config set-cluster e2e --server="https://127.0.0.1:$API_PORT" \
    --certificate-authority="$pki/ca.crt" --embed-certs >/dev/null
  KUBECONFIG="$d/kubelet.kubeconfig" kubectl config set-credentials node --client-certificate="$pki/node.crt" \
    --client-key="$pki/node.key" --embed-certs >/dev/null
  KUBECONFIG="$d/kubelet.kubeconfig" kubectl config set-context node --cluster=e2e --user=node >/dev/null
  KUBECONFIG="$d/kubelet.kubeconfig" kubectl config use-context node >/dev/null
  # cgroup v1 here: failCgroupV1 false keeps the kubelet running on it; without QoS cgroups
  # (cgroupsPerQOS false) node allocatable is not enforced.
  cat >"$d/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupsPerQOS: false
enforceNodeAllocatable: []
containerRuntimeEndpoint: unix://$d/containerd.sock
address: $NODE_IP
port: $port
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 0
tlsCertFile: $pki/kubelet.crt
tlsPrivateKeyFile: $pki/kubelet.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $pki/ca.crt}
authorization: {mode: Webhook}
clusterDNS: [$NODE_IP]
clusterDomain: cluster.local
resolvConf: $d/resolv.conf
podLogsDir: $d/pod-logs
registerWithTaints: [{key: $REAL_NODE_TAINT, value: "true", effect: NoSchedule}]
failSwapOn: false
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
EOF
  start kubelet "$K8S_DIR/kubelet" --config="$d/kubelet.yaml" --kubeconfig="$d/kubelet.kubeconfig" \
    --root-dir="$d/kubelet" --cert-dir="$d/kubelet/pki" --hostname-override="$NODE_NAME" --node-ip="$NODE_IP"
}

node_ready() {
  [ "$(kubectl get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" == True ]
}

# start_node: the real node, or nothing (with the reason) outside a network namespace of its own.
start_node() {
  local d=$RUN/node t=$SECONDS
  if [ "${E2E_IN_NETNS:-0}" != 1 ]; then
    log "no real node: it needs the harness's own network namespace (E2E_NETNS=0 given, or unshare refused)"
    return 0
  fi
  mkdir -p "$d"
  node_network "$d"
  start_containerd "$d"
  start_coredns "$d"
  start_kubelet "$d"
  wait_until 120 node_ready || { alive containerd; alive kubelet; die "the real node did not become Ready"; }
  E2E_REAL_NODE=$NODE_NAME
  log "real node $NODE_NAME Ready in $((SECONDS - t)) s"
}
