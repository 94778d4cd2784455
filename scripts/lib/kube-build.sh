# shellcheck shell=bash
# Sourced by scripts/k8s-apiserver-test: builds kube-apiserver and kube-controller-manager from
# the k8s.io/kubernetes module and etcd from go.etcd.io/etcd/server/v3, with Go, from the Go
# module proxy, into the tool cache (scripts/lib/tool-cache.sh).
#
# Neither builds with `go install module@version`: both main modules replace their sibling
# modules with local paths (k8s.io/kubernetes its staging modules, ./staging/src/k8s.io/*;
# etcd's server its ../api, ../client/... modules). So each is built from a small module made
# here that requires it and points every one of those replaced modules at its published
# version: k8s.io/api v0.37.2 for Kubernetes v1.37.2, go.etcd.io/etcd/api/v3 v3.7.3 for etcd
# v3.7.3.

KUBERNETES_VERSION="${KUBERNETES_VERSION:-v1.37.2}"
ETCD_VERSION="${ETCD_VERSION:-v3.7.3}"

kube_bin_dir() { echo "$MONAPI_CACHE_DIR/kubernetes-$KUBERNETES_VERSION/bin"; }
etcd_bin_dir() { echo "$MONAPI_CACHE_DIR/etcd-$ETCD_VERSION/bin"; }

# go_mod_file MODULE@VERSION: the path of that version's go.mod in the module cache.
go_mod_file() {
  local json
  json="$(GOFLAGS=-mod=mod go mod download -json "$1")" || die "go mod download $1 failed (it needs the Go module proxy)"
  sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p' <<<"$json" | head -n 1
}

# replaced_paths GO_MOD: the module paths a go.mod replaces with local directories.
replaced_paths() {
  awk '
    /^replace \($/ { inside = 1; next }
    inside && /^\)$/ { inside = 0; next }
    inside && $2 == "=>" && $3 ~ /^\.\.?\// { print $1 }
    /^replace / && $3 == "=>" && $4 ~ /^\.\.?\// { print $2 }
  ' "$1"
}

# build_wrapped TITLE MODULE VERSION SIBLING_VERSION OUT_DIR LDFLAGS PACKAGE...
build_wrapped() {
  local title="$1" module="$2" version="$3" sibling_version="$4" out="$5" ldflags="$6"
  shift 6
  require_go
  local mod_file
  mod_file="$(go_mod_file "$module@$version")"
  [ -f "$mod_file" ] || die "no go.mod for $module@$version in the module cache"
  local work
  work="$(mktemp -d "${TMPDIR:-/tmp}/monapi-kube-build.XXXXXX")"
  {
    echo "module monapi-exporter.test/build-$title"
    echo
    echo "go $(go env GOVERSION | sed 's/^go\([0-9]*\.[0-9]*\).*/\1/').0"
    echo
    echo "require $module $version"
    echo
    echo "replace ("
    replaced_paths "$mod_file" | while read -r path; do echo "	$path => $path $sibling_version"; done
    echo ")"
  } >"$work/go.mod"
  {
    echo "//go:build tools"
    echo
    echo "package tools"
    echo
    echo "import ("
    for package in "$@"; do echo "	_ \"$package\""; done
    echo ")"
  } >"$work/tools.go"
  echo "building $title ($module $version, $(grep -c ' => ' "$work/go.mod") replaced modules pinned to $sibling_version) with $(go version | cut -d' ' -f3)" >&2
  local started=$SECONDS
  (cd "$work" && go mod tidy >&2) || die "go mod tidy for $title failed; the module made for it is in $work"
  mkdir -p "$work/bin"
  (cd "$work" && GOFLAGS="${GOFLAGS:-} -buildvcs=false" go build -trimpath -ldflags "$ldflags" -o "$work/bin/" "$@" >&2) ||
    die "go build of $title failed; the module made for it is in $work"
  echo "built $title in $((SECONDS - started)) s" >&2
  chmod 0755 "$work/bin"
  publish_dir "$work/bin" "$out"
  rm -rf "$work"
}

ensure_kube_binaries() {
  local kube etcd
  kube="$(kube_bin_dir)"
  etcd="$(etcd_bin_dir)"
  if [ ! -x "$kube/kube-apiserver" ] || [ ! -x "$kube/kube-controller-manager" ]; then
    local minor="${KUBERNETES_VERSION#v1.}"
    minor="${minor%%.*}"
    # What `kube-apiserver --version` and /version report; kubectl and helm read it.
    local version_pkg="k8s.io/component-base/version"
    local ldflags="-X $version_pkg.gitVersion=$KUBERNETES_VERSION -X $version_pkg.gitMajor=1 -X $version_pkg.gitMinor=$minor -X $version_pkg.gitTreeState=clean"
    build_wrapped kubernetes k8s.io/kubernetes "$KUBERNETES_VERSION" "v0.${KUBERNETES_VERSION#v1.}" "$kube" "$ldflags" \
      k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager
  fi
  if [ ! -x "$etcd/etcd" ]; then
    build_wrapped etcd go.etcd.io/etcd/server/v3 "$ETCD_VERSION" "$ETCD_VERSION" "$etcd.tmp" "" go.etcd.io/etcd/server/v3
    # The package is the module root, so go build names the binary after the module (server).
    local built
    built="$(find "$etcd.tmp" -maxdepth 1 -type f -perm -u+x | head -n 1)"
    [ -n "$built" ] || die "the etcd build left no binary in $etcd.tmp"
    [ "$built" = "$etcd.tmp/etcd" ] || mv "$built" "$etcd.tmp/etcd"
    publish_dir "$etcd.tmp" "$etcd"
  fi
}
