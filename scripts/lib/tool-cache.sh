# shellcheck shell=bash
# Sourced by the scripts that fetch or build test tools (Node.js 24 from npm; Prometheus 3 and
# the Kubernetes API server from the Go module proxy). The binaries are cached outside the
# repository, one directory per version, so a machine gets each version once; a new machine
# gets them again.

MONAPI_CACHE_DIR="${MONAPI_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/monapi-exporter}"

die() {
  echo "$(basename "$0"): $*" >&2
  exit 1
}

require_go() {
  command -v go >/dev/null 2>&1 || die "go is not installed: these test tools are built from the Go module proxy with Go 1.26"
}

# publish_dir TMP FINAL: moves a finished build into place; another run may have won the race,
# either copy will do.
publish_dir() {
  mkdir -p "$(dirname "$2")"
  mv -T "$1" "$2" 2>/dev/null || { [ -d "$2" ] && rm -rf "$1"; }
}
