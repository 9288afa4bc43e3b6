# shellcheck shell=bash
# Finds a Node.js the project supports (package.json engines: 22.22+ on the
# 22 line, or 24+), bringing the pinned Node 24 from the npm registry when the
# machine has none: the registry serves the official binaries as packages
# node-<os>-<arch> (bin/node inside). Sourced by node.sh, with-node.sh,
# config/start.sh and test/run.sh; defines functions, runs nothing.
#
# Where the node comes from, first match wins:
#   1. STREAMGATE_NODE: a node binary you chose (it must be in range)
#   2. `node` on PATH, when in range: nothing is fetched
#   3. the cache, ${STREAMGATE_CACHE:-${XDG_CACHE_HOME:-~/.cache}/streamgate}/node/<version>-<os>-<arch>/
#   4. `npm pack node-<os>-<arch>@<version>` into that cache (once, ~50 MB)
# STREAMGATE_NODE_VERSION overrides the pinned version fetched in 4.

# Is $1 (24.21.0 or v24.21.0) in the supported range? Mirrors package.json
# "engines" (test/unit/runtime.test.ts checks that the two agree).
node_supported() {
  local major minor rest
  IFS=. read -r major minor rest <<<"${1#v}"
  [[ "$major" =~ ^[0-9]+$ && "$minor" =~ ^[0-9]+$ ]] || return 1
  ((major >= 24 || (major == 22 && minor >= 22)))
}

# The version a node binary reports, or nothing if it does not run here
# (wrong architecture, a libc too old for the official build).
node_version_of() {
  "$1" --version 2>/dev/null || true
}

# node-<os>-<arch> as the registry names them, and the Node 24 pinned for each
# with the sha512 (hex) of its package. darwin-x64 stops at 24.18.1 there;
# there is no darwin-arm64 build of 24 on the registry (its line ends at 18).
node_platform() {
  local os arch
  case "$(uname -s)" in
    Linux) os=linux ;;
    Darwin) os=darwin ;;
    *) os="$(uname -s | tr '[:upper:]' '[:lower:]')" ;;
  esac
  case "$(uname -m)" in
    x86_64 | amd64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) arch="$(uname -m)" ;;
  esac
  printf '%s-%s\n' "$os" "$arch"
}

node_pin() {
  case "$1" in
    linux-x64) echo "24.21.0 de750bb336795f47dc898a46d2de93add029273027f3e16520d3fa3a2317ed5f07aefa404cf37ddfa5352e545e389ae22d16b87bcc84a900580a72f23cd02ced" ;;
    linux-arm64) echo "24.21.0 1692513c4cf63afbd32df8c83a5346158f492cf30a825e66f9de2819804b836e242759a6bcdd5997f1cf2601781c3689e752127afd65d5c459fc333e91e5d6e6" ;;
    darwin-x64) echo "24.18.1 b424f98b62da086fbd8fb1d7945d62a0f7d549b1d14e9dcc8160e49c9d287c6f15d9e443344a6a842df2f432e6bd4a533d8b12c0705271c21e077ca5f7685321" ;;
    *) return 1 ;;
  esac
}

node_cache_root() {
  printf '%s/node\n' "${STREAMGATE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/streamgate}"
}

node_die() {
  printf '[node] ERROR: %s\n' "$*" >&2
  printf '[node] Install Node.js 24 LTS (or 22.22+) and put it first on PATH, or set STREAMGATE_NODE to its node binary.\n' >&2
  exit 1
}

# Renames directory $1 to $2 in one step, unless $2 exists already (a
# concurrent run got there first: its copy is as good). Leaves $1 otherwise.
publish_dir() {
  if mv --version >/dev/null 2>&1; then
    mv -T "$1" "$2" 2>/dev/null || true # GNU: -T never moves into an existing $2
  elif [[ ! -e "$2" ]]; then
    mv "$1" "$2" 2>/dev/null || true
  fi
}

# sha512 of a file, in hex.
sha512_of() {
  if command -v sha512sum >/dev/null 2>&1; then sha512sum "$1" | cut -d' ' -f1; else shasum -a 512 "$1" | cut -d' ' -f1; fi
}

# Fetches node-<platform>@<version> into <cache>/<version>-<platform>/ and
# prints that directory. Downloads and unpacks in a temporary directory
# beside it and renames it into place only once its node ran: an interrupted
# fetch leaves no half directory to be taken for a good one later.
fetch_node() {
  local platform="$1" version="$2" sha="$3" root dest tmp tgz got
  root="$(node_cache_root)"
  dest="$root/$version-$platform"
  command -v npm >/dev/null 2>&1 || node_die "this machine's Node ($(node_version_of node)) is too old and there is no npm to fetch Node $version with"
  mkdir -p "$root"
  # Leftovers of fetches killed mid-way (the trap below did not run).
  find "$root" -maxdepth 1 -name '.fetch.*' -mmin +60 -exec rm -rf {} + 2>/dev/null || true
  tmp="$(mktemp -d "$root/.fetch.XXXXXX")"
  # shellcheck disable=SC2064  # expand $tmp now: the traps run after this function returns
  trap "rm -rf '$tmp'" EXIT
  # shellcheck disable=SC2064
  trap "rm -rf '$tmp'; exit 1" INT TERM HUP
  printf '[node] fetching node-%s@%s from the npm registry into %s (once, ~50 MB)\n' "$platform" "$version" "$dest" >&2
  tgz="$(cd "$tmp" && npm pack --silent --pack-destination "$tmp" "node-$platform@$version" 2>"$tmp/npm.log" | tail -n 1)" \
    || { cat "$tmp/npm.log" >&2; node_die "npm could not fetch node-$platform@$version"; }
  [[ -f "$tmp/$tgz" ]] || { cat "$tmp/npm.log" >&2; node_die "npm pack node-$platform@$version left no package"; }
  if [[ -n "$sha" ]]; then
    got="$(sha512_of "$tmp/$tgz")"
    [[ "$got" == "$sha" ]] || node_die "node-$platform@$version: sha512 $got, expected $sha (config/runtime/lib.sh)"
  fi
  tar -xzf "$tmp/$tgz" -C "$tmp"
  got="$(node_version_of "$tmp/package/bin/node")"
  [[ "$got" == "v$version" ]] || node_die "the fetched node-$platform@$version does not run on this machine (it said: ${got:-nothing})"
  publish_dir "$tmp/package" "$dest"
  rm -rf "$tmp"
  trap - EXIT INT TERM HUP
  [[ "$(node_version_of "$dest/bin/node")" == "v$version" ]] || node_die "$dest holds no working node $version"
  printf '%s\n' "$dest"
}

# Sets STREAMGATE_NODE_BIN (a directory holding `node`) and
# STREAMGATE_NODE_ORIGIN (where it came from, for one line of output).
resolve_node() {
  local found version platform pin pinned_version sha dest
  if [[ -n "${STREAMGATE_NODE:-}" ]]; then
    version="$(node_version_of "$STREAMGATE_NODE")"
    node_supported "$version" || node_die "STREAMGATE_NODE=$STREAMGATE_NODE is Node ${version:-(does not run)}; streamgate needs 22.22+ or 24+"
    STREAMGATE_NODE_BIN="$(cd "$(dirname "$STREAMGATE_NODE")" && pwd)"
    STREAMGATE_NODE_ORIGIN="STREAMGATE_NODE"
    return
  fi
  found="$(command -v node 2>/dev/null || true)"
  if [[ -n "$found" ]] && node_supported "$(node_version_of "$found")"; then
    STREAMGATE_NODE_BIN="$(cd "$(dirname "$found")" && pwd)"
    STREAMGATE_NODE_ORIGIN="on PATH"
    return
  fi
  platform="$(node_platform)"
  pin="$(node_pin "$platform")" \
    || node_die "no Node 24 for $platform on the npm registry (node-$platform); this machine's node: ${found:-none}${found:+ $(node_version_of "$found")}"
  read -r pinned_version sha <<<"$pin"
  version="${STREAMGATE_NODE_VERSION:-$pinned_version}"
  # The pinned checksum is of the pinned version only.
  [[ "$version" == "$pinned_version" ]] || sha=""
  node_supported "$version" || node_die "STREAMGATE_NODE_VERSION=$version is outside the supported range (22.22+ or 24+)"
  dest="$(node_cache_root)/$version-$platform"
  if [[ "$(node_version_of "$dest/bin/node")" == "v$version" ]]; then
    STREAMGATE_NODE_ORIGIN="from the npm registry, cached in $dest"
  else
    dest="$(fetch_node "$platform" "$version" "$sha")"
    STREAMGATE_NODE_ORIGIN="fetched from the npm registry into $dest"
  fi
  STREAMGATE_NODE_BIN="$dest/bin"
}

# Puts the resolved node first on PATH for this shell and all it starts
# (npm, npx, tsc, vite, tap, the service) and prints one line naming it.
# $1: the caller's tag, e.g. [test].
use_node() {
  resolve_node
  export PATH="$STREAMGATE_NODE_BIN:$PATH"
  hash -r
  # `npm start`/`npm test` were started by an npm on the machine's node, which
  # exported that node's path and headers dir; npm, node-gyp and tools read
  # these, so point them at the node in use (headers: the fetched package has
  # include/node; a machine npmrc may say nodedir=/usr, the older node's).
  export NODE="$STREAMGATE_NODE_BIN/node" npm_node_execpath="$STREAMGATE_NODE_BIN/node"
  if [[ -d "$STREAMGATE_NODE_BIN/../include/node" ]]; then
    npm_config_nodedir="$(cd "$STREAMGATE_NODE_BIN/.." && pwd)"
    export npm_config_nodedir
  fi
  printf '%s node %s (%s)\n' "$1" "$(node --version)" "$STREAMGATE_NODE_ORIGIN" >&2
}
