# shellcheck shell=bash
# The real node's images (sourced by build.sh: build_images). No image registry is reachable, so
# they are built from Debian's packages with debootstrap, as root (it chroots and makes device
# nodes), and written as OCI image archives for `ctr -n k8s.io images import --local` (node.sh).
# Given the same packages, the same bytes: every mtime is IMAGES_EPOCH, the layer tar is sorted
# with numeric owners, .pyc files are hash-checked (SOURCE_DATE_EPOCH), and what differs from one
# install to the next (logs, apt lists, caches, /etc/machine-id, ssh host keys, password-change
# dates, the build host's hostname and resolv.conf) is removed or fixed. The .debs are kept in
# $CACHE/debs (only those in use): a rebuild downloads only Debian's package index, and what a
# point release changed.
#
#   mpi.tar    mpi-operator v0.8.2's own images rebuilt from its module (build/base/Dockerfile,
#              openmpi.Dockerfile, examples/v2beta1/pi): openssh, OpenMPI 5 (openmpi-bin), user
#              mpiuser 1000:1000 (useradd -m: home 0700, shell /bin/sh) with the non-root sshd's
#              ~/.sshd_config, port 2222, /home/mpiuser/pi compiled from pi.cc in a builder root
#              whose compilers stay out; plus python3-mpi4py, procps and iproute2. Named
#              MPI_PI_IMAGE, so mpi-operator's published pi.yaml runs as is, and MPI_IMAGE.
#   mpich.tar  the same for MPICH 4 (Debian's mpich, its Hydra mpiexec as mpirun): openssh, the
#              same mpiuser and ~/.sshd_config, procps: MPICH_IMAGE.
#   torch.tar  python3-torch 2.6 with procps and the same mpiuser: TORCH_IMAGE. Debian's package
#              has /usr/bin/torchrun (and python3 -m torch.distributed.run). It pulls in
#              libopenmpi40, not mpirun, ssh or mpi4py, and is 2.5 times mpi.tar: one image for
#              both would make every MPI pod a torch one, so they stay apart.
#   pause.tar  the pod sandbox: the k8s.io/kubernetes module's build/pause/linux/pause.c compiled
#              statically (in the builder root) with its Makefile's flags, as its Dockerfile
#              packs it: PAUSE_IMAGE, the sandbox image containerd v2.4 defaults to.
#   packages.txt  "IMAGE PACKAGE VERSION" of each image (and of the builder), sorted.
# Every image but pause has /usr/local/bin/mlops-fn-conformance, the e2e's workload
# (hack/e2e/conformance, built here with CGO_ENABLED=0: static, the same binary in each).
#
# Each archive is an OCI image layout (oci-layout, index.json naming the manifest with
# io.containerd.image.name and org.opencontainers.image.ref.name, blobs/sha256) with docker
# save's manifest.json beside, as Docker 25's docker save writes them: containerd reads the
# layout, older Docker's docker load the manifest.json. One uncompressed layer: containerd
# unpacks it as fast as it copies it, nothing goes over a network, and gzip would cost the build
# about a minute of one core.
#
# Cold on 2 cores (empty $CACHE/debs, 2026-11-24, beside an e2e run): 245 s, 325 MB downloaded;
# with the .debs cached 150-210 s. mpi.tar 481 MB, torch.tar 1.22 GB, pause.tar 0.8 MB.
# Needs root, GNU tar and, on the host: apt-get install debootstrap debian-archive-keyring (and
# gpgv, which Debian and Ubuntu have).
# shellcheck disable=SC2034  # MPI_IMAGE, TORCH_IMAGE, PAUSE_IMAGE: for node.sh and the checks

MPI_IMAGE=localhost/mlops-fn-e2e/mpi:trixie
MPI_PI_IMAGE=docker.io/mpioperator/mpi-pi:openmpi
MPICH_IMAGE=localhost/mlops-fn-e2e/mpich:trixie
TORCH_IMAGE=localhost/mlops-fn-e2e/torch:trixie
PAUSE_IMAGE=registry.k8s.io/pause:3.10.2
: "${DEBIAN_SUITE:=trixie}"
DEBIAN_MIRROR=http://deb.debian.org/debian
DEBIAN_KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
IMAGES_EPOCH=1795478400 # 2026-11-24, the recipe's date: every file's mtime, the images' date
IMAGES_RECIPE=$(realpath "${BASH_SOURCE[0]}")
CONFORMANCE_SRC=${IMAGES_RECIPE%/*}/conformance/main.go
IMAGES_PATH=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

# in_root ROOT COMMAND...: COMMAND chrooted in ROOT, with a clean environment (the host's
# variables, PYTHON* for one, would reach the packages' scripts).
in_root() { env -i "$IMAGES_PATH" HOME=/root LC_ALL=C SOURCE_DATE_EPOCH="$IMAGES_EPOCH" chroot "$@"; }

# debian_root DIR PACKAGES: a minimal Debian DEBIAN_SUITE in DIR with PACKAGES (comma-separated).
# SOURCE_DATE_EPOCH makes the packages' scripts write hash-checked .pyc files: the mtime-checked
# kind would be stale once every mtime is IMAGES_EPOCH, and a non-root process cannot rewrite
# them (importing torch then takes 3.3 s instead of 1.9).
debian_root() {
  local e=("$IMAGES_PATH" LC_ALL=C SOURCE_DATE_EPOCH="$IMAGES_EPOCH") v
  for v in http_proxy https_proxy no_proxy; do [ -z "${!v:-}" ] || e+=("$v=${!v}"); done
  env -i "${e[@]}" debootstrap --variant=minbase --include="$2" --keyring="$DEBIAN_KEYRING" \
    --cache-dir="$CACHE/debs" "$DEBIAN_SUITE" "$1" "$DEBIAN_MIRROR" >"$1.log" 2>&1 ||
    { tail -n 20 "$1.log" >&2; die "debootstrap of $1 failed (log: $1.log)"; }
}

# unmount_under PREFIX: a build killed inside debootstrap can leave /proc, /sys or /dev/pts
# mounted in its root: unmount them before anything removes the folder.
unmount_under() {
  local m
  for m in $(awk -v p="$1" 'index($5, p) == 1 {print $5}' /proc/self/mountinfo | sort -r); do
    umount -l "$m" || die "cannot unmount $m"
  done
}

# add_mpiuser ROOT: mpi-operator's `useradd -m mpiuser` (the first user: 1000:1000), and the
# conformance program.
add_mpiuser() {
  in_root "$1" useradd -m mpiuser || die "useradd mpiuser failed"
  [ "$(in_root "$1" id -u mpiuser):$(in_root "$1" id -g mpiuser)" == 1000:1000 ] || die "mpiuser is not 1000:1000"
  install -m 0755 "$CONFORMANCE" "$1/usr/local/bin/mlops-fn-conformance"
}

# mpi_ssh ROOT: build/base/Dockerfile's ssh settings and the non-root sshd's ~/.sshd_config for
# mpiuser (add_mpiuser first).
mpi_ssh() {
  local r=$1
  # Its ssh settings: no host key checks, no known_hosts (the .ssh it mounts is read-only),
  # port 2222, no StrictModes.
  sed -i "s/[ #]\(.*StrictHostKeyChecking \).*/ \1no/g" "$r/etc/ssh/ssh_config"
  echo "    UserKnownHostsFile /dev/null" >>"$r/etc/ssh/ssh_config"
  sed -i "s/[ #]\(.*Port \).*/ \12222/g" "$r/etc/ssh/ssh_config"
  sed -i "s/#\(StrictModes \).*/\1no/g; s/#\(Port \).*/\12222/g" "$r/etc/ssh/sshd_config"
  grep -qx 'Port 2222' "$r/etc/ssh/sshd_config" && grep -qx 'StrictModes no' "$r/etc/ssh/sshd_config" ||
    die "sshd_config no longer has the lines build/base/Dockerfile edits"
  # Its privilege separation directory for a root sshd. Its setcap CAP_NET_BIND_SERVICE on sshd
  # is left out: port 2222 needs none, and a file capability makes exec fail (EPERM) in a
  # container that drops all capabilities, as mlops-fn's hardening does.
  mkdir -p "$r/run/sshd"
  # The host keys its apt install generated would differ every build: none. A root sshd (the
  # default sshAuthMountPath /root/.ssh) uses the job's key, as the non-root .sshd_config does.
  echo "HostKey /root/.ssh/id_rsa" >"$r/etc/ssh/sshd_config.d/mlops-fn-e2e.conf"
  install -o 1000 -g 1000 -m 0644 "$MPI_SRC/build/base/sshd_config" "$r/home/mpiuser/.sshd_config"
  echo "Port 2222" >>"$r/home/mpiuser/.sshd_config"
}

# normalize ROOT: what differs between two installs of the same packages, removed or fixed.
normalize() {
  local r=$1 f
  [[ $r == "$CACHE"/images-*/* ]] || die "normalize: $r is not a build's root"
  unmount_under "$r/"
  rm -rf "${r:?}"/var/lib/apt/lists/* "${r:?}"/var/cache/apt/* "${r:?}"/var/cache/ldconfig/aux-cache \
    "${r:?}"/var/log/* "${r:?}"/var/cache/debconf/*-old "${r:?}"/var/lib/dpkg/*-old "${r:?}"/etc/*- \
    "${r:?}"/debootstrap "${r:?}"/etc/ssh/ssh_host_* "${r:?}"/dev/* "${r:?}"/proc/* "${r:?}"/sys/* \
    "${r:?}"/tmp/* "${r:?}"/var/tmp/*
  # Empty: the runtime mounts its own (debootstrap copies the build host's hostname and resolv.conf).
  for f in machine-id hostname resolv.conf; do rm -f "$r/etc/$f"; : >"$r/etc/$f"; done
  # The last password change (days since 1970) is the build's day: the epoch's day instead.
  sed -i "s/^\([^:]*:[^:]*:\)[0-9]*:/\1$((IMAGES_EPOCH / 86400)):/" "$r/etc/shadow"
  # The mtime-checked .pyc files imports wrote during the install (py3compile's own modules,
  # setuptools' _distutils_hack) are stale now: hash-checked ones instead.
  if [ -x "$r/usr/bin/python3" ]; then
    in_root "$r" python3 -c 'import pathlib, py_compile
for p in pathlib.Path("/usr").rglob("__pycache__/*.pyc"):
    if p.read_bytes()[4:8] == bytes(4):
        src = p.parent.parent / (p.name.split(".")[0] + ".py")
        if src.exists() and ".opt-" not in p.name:
            py_compile.compile(str(src), str(p), doraise=True)
        else:
            p.unlink()' || die "cannot recompile the stale .pyc files of $r"
  fi
}

# oci_archive ROOT OUT CONFIG NAME...: ROOT as a one-layer image archive OUT (an OCI image layout
# with docker save's manifest.json) whose image config's "config" is CONFIG (JSON), named NAME...
oci_archive() {
  local root=$1 out=$2 config=$3 lay=$2.layout layer size cfg man created name names="" tags=""
  rm -rf "$lay"; mkdir -p "$lay/blobs/sha256"
  # File capabilities are kept (none is set now); the build host's SELinux labels and such are not.
  tar -C "$root" --sort=name --mtime="@$IMAGES_EPOCH" --numeric-owner --format=posix \
    --xattrs --xattrs-include=security.capability \
    --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime -cf "$lay/layer" . ||
    die "cannot write the layer of $out"
  layer=$(sha256sum "$lay/layer" | cut -d' ' -f1)
  size=$(stat -c %s "$lay/layer")
  mv "$lay/layer" "$lay/blobs/sha256/$layer"
  created=$(date -u -d "@$IMAGES_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
  cfg='{"architecture":"amd64","config":'$config',"created":"'$created'","os":"linux","rootfs":{"diff_ids":["sha256:'$layer'"],"type":"layers"}}'
  blob "$lay" "$cfg" cfg
  man='{"config":{"digest":"sha256:'${cfg%% *}'","mediaType":"application/vnd.oci.image.config.v1+json","size":'${cfg##* }'},"layers":[{"digest":"sha256:'$layer'","mediaType":"application/vnd.oci.image.layer.v1.tar","size":'$size'}],"mediaType":"application/vnd.oci.image.manifest.v1+json","schemaVersion":2}'
  blob "$lay" "$man" man
  for name in "${@:4}"; do
    names+=${names:+,}'{"annotations":{"io.containerd.image.name":"'$name'","org.opencontainers.image.ref.name":"'${name##*:}'"},"digest":"sha256:'${man%% *}'","mediaType":"application/vnd.oci.image.manifest.v1+json","size":'${man##* }'}'
    tags+=${tags:+,}'"'$name'"'
  done
  printf '{"manifests":[%s],"mediaType":"application/vnd.oci.image.index.v1+json","schemaVersion":2}' "$names" >"$lay/index.json"
  printf '{"imageLayoutVersion":"1.0.0"}' >"$lay/oci-layout"
  printf '[{"Config":"blobs/sha256/%s","RepoTags":[%s],"Layers":["blobs/sha256/%s"]}]' "${cfg%% *}" "$tags" "$layer" >"$lay/manifest.json"
  tar -C "$lay" --sort=name --mtime="@$IMAGES_EPOCH" --owner=0 --group=0 --numeric-owner --mode=u=rwX,go=rX \
    --format=gnu -cf "$out" blobs index.json manifest.json oci-layout || die "cannot write $out"
  rm -rf "$lay"
}

# blob LAYOUT TEXT VAR: TEXT stored as a blob of LAYOUT; VAR gets "DIGEST SIZE".
blob() {
  local d
  d=$(printf %s "$2" | sha256sum | cut -d' ' -f1)
  printf %s "$2" >"$1/blobs/sha256/$d"
  printf -v "$3" '%s %s' "$d" "${#2}"
}

# packages ROOT NAME: "NAME PACKAGE VERSION" of ROOT's packages. debs ROOT: the names of their
# .debs as debootstrap's cache has them.
packages() { in_root "$1" dpkg-query -W -f "$2 \${Package} \${Version}\n"; }
debs() { in_root "$1" dpkg-query -W -f '${Package}_${Version}_${Architecture}.deb\n' | sed 's/:/%3a/'; }

# images_pin: what the images depend on beside their recipe. images_built: they are cached.
images_pin() { echo "$DEBIAN_MIRROR $MPI_OPERATOR_VERSION $KUBERNETES_VERSION"; }
images_built() { is_built "$(cache_dir images "$DEBIAN_SUITE" "$IMAGES_RECIPE" "$CONFORMANCE_SRC" <(images_pin))"; }

build_images() {
  command -v debootstrap >/dev/null || die "building the real node's images needs debootstrap (apt-get install debootstrap)"
  [ -e "${DEBOOTSTRAP_DIR:-/usr/share/debootstrap}/scripts/$DEBIAN_SUITE" ] ||
    die "this debootstrap does not know Debian $DEBIAN_SUITE: a newer one is needed (Debian 12's 1.0.128 does)"
  [ -f "$DEBIAN_KEYRING" ] || die "debootstrap needs Debian's archive keys: apt-get install debian-archive-keyring"
  [ "$(id -u)" == 0 ] || die "building the real node's images needs root (debootstrap, chroot)"
  unmount_under "$CACHE/images-"
  start_build IMAGES_DIR images "$DEBIAN_SUITE" "$IMAGES_RECIPE" "$CONFORMANCE_SRC" <(images_pin) || return 0
  # In a subshell for the umask and locale (what the build makes is 0644 or 0755, sorted
  # bytewise, whatever the caller's), which stops at the first failure even where its caller
  # does not.
  local rc=0
  (set -eo pipefail; umask 022; export LC_ALL=C; make_images "$IMAGES_DIR.tmp")
  rc=$?
  [ "$rc" == 0 ] || die "building the images failed"
  finish "$IMAGES_DIR"
}

# make_images DIR: the archives and packages.txt into DIR.
make_images() {
  local out=$1 w=$1/work mpi k8s tag config
  mkdir -p "$w" "$CACHE/debs"
  log "building the real node's images from Debian $DEBIAN_SUITE into ${out%.tmp} (~5 min cold)"
  mpi=$(mod_dir "$TOOLS/operators" "github.com/kubeflow/mpi-operator@$MPI_OPERATOR_VERSION")
  k8s=$(mod_dir "$TOOLS" "k8s.io/kubernetes@$KUBERNETES_VERSION")
  [ -f "$mpi/examples/v2beta1/pi/pi.cc" ] && [ -f "$k8s/build/pause/linux/pause.c" ] ||
    die "pi.cc or pause.c not found in the module cache"
  MPI_SRC=$mpi CONFORMANCE=$w/mlops-fn-conformance
  # No VCS stamp: the same source gives the same bytes from any commit or worktree.
  (cd "${CONFORMANCE_SRC%/*}" && go build -buildvcs=false -ldflags "-s -w" -o "$CONFORMANCE" .) ||
    die "the conformance program does not build"

  # openmpi-builder.Dockerfile, then pi's Dockerfile (mpic++ /src/pi.cc -o /pi), and the pause
  # binary as build/pause/Makefile compiles it (REV, its git describe, is the release here).
  # automake: libltdl-dev (libopenmpi-dev's) needs the virtual automake-1.17, which debootstrap's
  # resolver does not look up.
  timed builder-root debian_root "$w/builder" g++,libopenmpi-dev,automake
  mkdir -p "$w/builder/src"
  cp "$mpi/examples/v2beta1/pi/pi.cc" "$k8s/build/pause/linux/pause.c" "$w/builder/src/"
  in_root "$w/builder" mpic++ /src/pi.cc -o /pi || die "pi.cc does not compile"
  tag=$(sed -n 's/^TAG ?= *//p' "$k8s/build/pause/Makefile")
  in_root "$w/builder" gcc -Os -Wall -Werror -static -DVERSION="v$tag-$KUBERNETES_VERSION" -o /pause /src/pause.c ||
    die "pause.c does not compile"
  packages "$w/builder" builder >"$w/packages"
  debs "$w/builder" >"$w/debs"

  # build/base/Dockerfile with openmpi.Dockerfile's openmpi-bin, and pi's /home/mpiuser/pi.
  timed mpi-root debian_root "$w/mpi" openssh-server,openssh-client,openmpi-bin,python3-mpi4py,procps,iproute2
  local r=$w/mpi
  add_mpiuser "$r"
  mpi_ssh "$r"
  install -m 0755 "$w/builder/pi" "$r/home/mpiuser/pi"
  packages "$r" mpi >>"$w/packages"
  debs "$r" >>"$w/debs"
  normalize "$r"
  config='{"Cmd":["/bin/bash"],"Env":["'$IMAGES_PATH'"],"WorkingDir":"/home/mpiuser"}'
  timed mpi.tar oci_archive "$r" "$out/mpi.tar" "$config" "$MPI_PI_IMAGE" "$MPI_IMAGE"

  # The same for MPICH: its package makes mpirun and mpiexec Hydra's (update-alternatives).
  timed mpich-root debian_root "$w/mpich" openssh-server,openssh-client,mpich,procps
  r=$w/mpich
  add_mpiuser "$r"
  mpi_ssh "$r"
  [[ $(in_root "$r" mpirun --version) == *HYDRA* ]] || die "mpirun in the MPICH image is not Hydra's"
  packages "$r" mpich >>"$w/packages"
  debs "$r" >>"$w/debs"
  normalize "$r"
  timed mpich.tar oci_archive "$r" "$out/mpich.tar" "$config" "$MPICH_IMAGE"

  timed torch-root debian_root "$w/torch" python3-torch,procps
  r=$w/torch
  add_mpiuser "$r"
  # Debian builds torch without libuv, yet its TCPStore asks for libuv unless told otherwise, and
  # torchrun's rendezvous never tells it: every torchrun fails with "use_libuv was requested but
  # PyTorch was build without libuv support" (USE_LIBUV=0 reaches only some of its stores; an
  # init_method tcp:// asks for it explicitly). The image makes every store use torch's other
  # backend, as a site would patch its own image.
  cat >>"$r/usr/lib/python3/dist-packages/torch/distributed/__init__.py" <<'EOF'

if is_available():  # mlops-fn e2e image: Debian's torch has no libuv
    _tcpstore_init = TCPStore.__init__

    def _tcpstore_without_libuv(self, *args, **kwargs):
        kwargs["use_libuv"] = False
        _tcpstore_init(self, *args, **kwargs)

    TCPStore.__init__ = _tcpstore_without_libuv
EOF
  in_root "$r" python3 -m py_compile /usr/lib/python3/dist-packages/torch/distributed/__init__.py ||
    die "the patched torch/distributed/__init__.py does not compile"
  packages "$r" torch >>"$w/packages"
  debs "$r" >>"$w/debs"
  normalize "$r"
  config='{"Cmd":["/bin/bash"],"Env":["'$IMAGES_PATH'"]}'
  timed torch.tar oci_archive "$r" "$out/torch.tar" "$config" "$TORCH_IMAGE"

  # build/pause/Dockerfile: FROM scratch, /pause, USER 65535:65535.
  mkdir -p "$w/pause"
  install -m 0755 "$w/builder/pause" "$w/pause/pause"
  config='{"Entrypoint":["/pause"],"Env":["'$IMAGES_PATH'"],"User":"65535:65535"}'
  timed pause.tar oci_archive "$w/pause" "$out/pause.tar" "$config" "$PAUSE_IMAGE"

  sort "$w/packages" >"$out/packages.txt"
  # Only the .debs in use stay cached: point releases would otherwise pile up.
  sort -u "$w/debs" >"$w/debs.sorted"
  find "$CACHE/debs" -maxdepth 1 -name '*.deb' -printf '%f\n' | sort | comm -23 - "$w/debs.sorted" |
    while read -r f; do rm -f "$CACHE/debs/$f"; done
  rm -rf "$w"
}
