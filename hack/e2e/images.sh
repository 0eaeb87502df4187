# shellcheck shell=bash
# The real node's images (sourced by build.sh): no image registry is reachable here, so they are
# built from Debian's packages with debootstrap, as root, and written as OCI image archives that
# `ctr images import` loads. Given the same packages, the same bytes: no mtime is after
# IMAGES_EPOCH, the layer tar is sorted with numeric owners, and what differs from one install to the next
# (logs, caches, /etc/machine-id, ssh host keys, password-change dates) is removed or fixed.
#
#   mpi.tar    mpi-operator v0.8.2's own images rebuilt (build/base/Dockerfile, openmpi.Dockerfile
#              and examples/v2beta1/pi of its module): Debian with openssh, OpenMPI 5 (openmpi-bin)
#              and python3-mpi4py, user mpiuser (1000:1000) with the non-root sshd_config, and
#              /home/mpiuser/pi compiled from the module's pi.cc in a builder root of its own.
#              Named docker.io/mpioperator/mpi-pi:openmpi (the published pi.yaml runs as written)
#              and MPI_IMAGE.
#   torch.tar  Debian with python3-torch (2.6, with its torchrun) and the same mpiuser: TORCH_IMAGE.
#   pause.tar  the pod sandbox: Kubernetes' own pause.c (build/pause/linux of the k8s.io/kubernetes
#              module) compiled statically, named PAUSE_IMAGE, containerd v2.4's default.
#   packages.txt  every image's Debian packages and versions.
# Debian's .debs are kept in $CACHE/debs, so a rebuild downloads nothing.
# shellcheck disable=SC2034  # MPI_IMAGE, TORCH_IMAGE, PAUSE_IMAGE: for node.sh and the checks

MPI_IMAGE=localhost/mlops-fn-e2e/mpi:trixie
TORCH_IMAGE=localhost/mlops-fn-e2e/torch:trixie
PAUSE_IMAGE=registry.k8s.io/pause:3.10.2
IMAGES_EPOCH=1793491200 # 2026-11-01: the latest mtime of any file
DEBIAN_MIRROR=http://deb.debian.org/debian

# debian_root DIR PACKAGES: a minimal Debian DEBIAN_SUITE in DIR with PACKAGES (comma-separated).
debian_root() {
  debootstrap --variant=minbase --include="$2" --cache-dir="$CACHE/debs" "$DEBIAN_SUITE" "$1" "$DEBIAN_MIRROR" \
    >"$1.log" 2>&1 || { tail -n 20 "$1.log" >&2; die "debootstrap of $1 failed (log: $1.log)"; }
}

# add_mpiuser ROOT: mpi-operator's user (useradd -m mpiuser there), written out so no date differs.
add_mpiuser() {
  echo 'mpiuser:x:1000:1000::/home/mpiuser:/bin/bash' >>"$1/etc/passwd"
  echo 'mpiuser:x:1000:' >>"$1/etc/group"
  echo 'mpiuser:!:0:0:99999:7:::' >>"$1/etc/shadow"
  echo 'mpiuser:!::' >>"$1/etc/gshadow"
  mkdir -p "$1/home/mpiuser"
  cp -a "$1/etc/skel/." "$1/home/mpiuser/"
  chown -R 1000:1000 "$1/home/mpiuser"
}

# normalize ROOT: what differs between two installs of the same packages, removed or fixed.
normalize() {
  local r=$1
  rm -rf "$r"/var/lib/apt/lists/* "$r"/var/cache/apt/* "$r"/var/cache/ldconfig/* "$r"/var/log/* \
    "$r"/var/cache/debconf/*-old "$r"/var/lib/dpkg/*-old "$r"/debootstrap "$r"/etc/ssh/ssh_host_* \
    "$r"/dev/* "$r"/proc/* "$r"/sys/* "$r"/tmp/* "$r"/var/tmp/*
  : >"$r/etc/machine-id"
  # The last password change (days since 1970) is the day of the build: the epoch's day instead.
  sed -i "s/^\([^:]*:[^:]*:\)[0-9]*:/\1$((IMAGES_EPOCH / 86400)):/" "$r/etc/shadow"
}

# oci_archive ROOT OUT CONFIG NAME...: ROOT as a one-layer OCI image archive OUT whose image
# config's "config" is CONFIG (JSON), named NAME... (containerd reads io.containerd.image.name).
oci_archive() {
  local root=$1 out=$2 config=$3 layout=$2.layout layer digest size cfg man name manifests=""
  rm -rf "$layout"; mkdir -p "$layout/blobs/sha256"
  # Uncompressed: containerd unpacks it as fast as it copies, and nothing is pulled over a network.
  # --clamp-mtime: the packages' own files keep their mtimes, which their .pyc files record.
  tar -C "$root" --sort=name --mtime="@$IMAGES_EPOCH" --clamp-mtime --numeric-owner --xattrs --format=posix \
    --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime -cf "$layout/layer.tar" . ||
    die "cannot write the layer of $out"
  layer=$(sha256sum "$layout/layer.tar" | cut -d' ' -f1)
  size=$(stat -c %s "$layout/layer.tar")
  mv "$layout/layer.tar" "$layout/blobs/sha256/$layer"
  cfg='{"architecture":"amd64","config":'$config',"os":"linux","rootfs":{"diff_ids":["sha256:'$layer'"],"type":"layers"}}'
  blob "$layout" "$cfg" digest
  man='{"config":{"digest":"sha256:'$digest'","mediaType":"application/vnd.oci.image.config.v1+json","size":'${#cfg}'},"layers":[{"digest":"sha256:'$layer'","mediaType":"application/vnd.oci.image.layer.v1.tar","size":'$size'}],"mediaType":"application/vnd.oci.image.manifest.v1+json","schemaVersion":2}'
  blob "$layout" "$man" digest
  for name in "${@:4}"; do
    manifests+=${manifests:+,}'{"annotations":{"io.containerd.image.name":"'$name'","org.opencontainers.image.ref.name":"'${name##*:}'"},"digest":"sha256:'$digest'","mediaType":"application/vnd.oci.image.manifest.v1+json","size":'${#man}'}'
  done
  printf '{"manifests":[%s],"mediaType":"application/vnd.oci.image.index.v1+json","schemaVersion":2}' "$manifests" >"$layout/index.json"
  printf '{"imageLayoutVersion":"1.0.0"}' >"$layout/oci-layout"
  tar -C "$layout" --sort=name --mtime="@$IMAGES_EPOCH" --owner=0 --group=0 --numeric-owner -cf "$out" oci-layout index.json blobs ||
    die "cannot write $out"
  rm -rf "$layout"
}

# blob LAYOUT TEXT VAR: TEXT stored as a blob of LAYOUT; VAR gets its digest.
blob() {
  local d
  d=$(printf %s "$2" | sha256sum | cut -d' ' -f1)
  printf %s "$2" >"$1/blobs/sha256/$d"
  printf -v "$3" %s "$d"
}

# packages ROOT NAME: the image's packages, for packages.txt.
packages() { chroot "$1" dpkg-query -W -f "$2 \${Package} \${Version}\n" | sort; }

build_images() {
  start_build IMAGES_DIR images "$DEBIAN_SUITE" "$ROOT/hack/e2e/images.sh" "$ROOT/hack/e2e/versions.env" || return 0
  local dir=$IMAGES_DIR w=$IMAGES_DIR.tmp/work mpi src k8s path='"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]'
  command -v debootstrap >/dev/null || die "building the real node's images needs debootstrap (apt-get install debootstrap)"
  [ "$(id -u)" == 0 ] || die "building the real node's images needs root (debootstrap, chroot)"
  mkdir -p "$w" "$CACHE/debs"
  log "building the real node's images from Debian $DEBIAN_SUITE into $dir"
  mpi=$(mod_dir "$TOOLS/mpi-operator" "github.com/kubeflow/mpi-operator@$MPI_OPERATOR_VERSION")
  k8s=$(mod_dir "$TOOLS" "k8s.io/kubernetes@$KUBERNETES_VERSION")

  # mpi-operator's base and openmpi images, then its pi example compiled in a builder root.
  timed debian_root "$w/mpi" openssh-server,openssh-client,openmpi-bin,python3-mpi4py,procps
  timed debian_root "$w/builder" libopenmpi-dev,g++,automake
  cp "$mpi/examples/v2beta1/pi/pi.cc" "$w/builder/pi.cc"
  chroot "$w/builder" mpic++ /pi.cc -o /pi || die "pi.cc does not compile"
  add_mpiuser "$w/mpi"
  install -o 1000 -g 1000 -m 0755 "$w/builder/pi" "$w/mpi/home/mpiuser/pi"
  # build/base/Dockerfile's ssh settings, port 2222, and its sshd_config for the non-root sshd.
  sed -i "s/[ #]\(.*StrictHostKeyChecking \).*/ \1no/g" "$w/mpi/etc/ssh/ssh_config"
  echo "    UserKnownHostsFile /dev/null" >>"$w/mpi/etc/ssh/ssh_config"
  sed -i "s/[ #]\(.*Port \).*/ \12222/g" "$w/mpi/etc/ssh/ssh_config"
  sed -i "s/#\(StrictModes \).*/\1no/g; s/#\(Port \).*/\12222/g" "$w/mpi/etc/ssh/sshd_config"
  # No host keys are generated (they would differ every build): a root sshd uses the job's key,
  # as the non-root sshd_config below does.
  echo "HostKey /root/.ssh/id_rsa" >"$w/mpi/etc/ssh/sshd_config.d/mlops-fn-e2e.conf"
  mkdir -p "$w/mpi/run/sshd"
  install -o 1000 -g 1000 -m 0644 "$mpi/build/base/sshd_config" "$w/mpi/home/mpiuser/.sshd_config"
  echo "Port 2222" >>"$w/mpi/home/mpiuser/.sshd_config"
  packages "$w/mpi" mpi >"$dir.tmp/packages.txt"
  normalize "$w/mpi"
  timed oci_archive "$w/mpi" "$dir.tmp/mpi.tar" "{$path,\"WorkingDir\":\"/home/mpiuser\",\"Cmd\":[\"/bin/bash\"]}" \
    docker.io/mpioperator/mpi-pi:openmpi "$MPI_IMAGE"

  timed debian_root "$w/torch" python3-torch,procps
  add_mpiuser "$w/torch"
  # Debian builds torch without libuv, yet its TCPStore asks for libuv unless told otherwise, and
  # torchrun's rendezvous never tells it: every torchrun fails with "use_libuv was requested but
  # PyTorch was build without libuv support" (USE_LIBUV=0 reaches only some of its stores). The
  # image makes the store default to torch's other backend, as a site would patch its own image.
  cat >>"$w/torch/usr/lib/python3/dist-packages/torch/distributed/__init__.py" <<'EOF'

if is_available():  # mlops-fn e2e image: Debian's torch has no libuv
    _tcpstore_init = TCPStore.__init__

    def _tcpstore_without_libuv(self, *args, **kwargs):
        kwargs.setdefault("use_libuv", False)
        _tcpstore_init(self, *args, **kwargs)

    TCPStore.__init__ = _tcpstore_without_libuv
EOF
  packages "$w/torch" torch >>"$dir.tmp/packages.txt"
  normalize "$w/torch"
  timed oci_archive "$w/torch" "$dir.tmp/torch.tar" "{$path,\"Cmd\":[\"/bin/bash\"]}" "$TORCH_IMAGE"

  mkdir -p "$w/pause"
  src=$(sed -n 's/^TAG ?= *//p' "$k8s/build/pause/Makefile" 2>/dev/null || true)
  gcc -Os -Wall -Werror -static -DVERSION="v${src:-${PAUSE_IMAGE##*:}}" -o "$w/pause/pause" "$k8s/build/pause/linux/pause.c" ||
    die "pause.c does not compile"
  strip "$w/pause/pause"
  timed oci_archive "$w/pause" "$dir.tmp/pause.tar" '{"Entrypoint":["/pause"]}' "$PAUSE_IMAGE"

  rm -rf "$w"
  finish "$dir"
}
