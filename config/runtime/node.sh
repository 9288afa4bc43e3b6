#!/usr/bin/env bash
# Prints the bin directory of a Node.js in the supported range (22.22+ or
# 24+), fetching the pinned Node 24 from the npm registry into the cache when
# the machine has none (see lib.sh for the order). Progress goes to stderr,
# so `PATH="$(bash config/runtime/node.sh):$PATH"` works. The CLI's launcher
# (src/cli.ts) runs this when `npx streamgate` starts on an older Node.
#   node.sh --supports VERSION   exit 0 if VERSION is in the range, else 1
set -euo pipefail
# shellcheck source=config/runtime/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if [[ "${1:-}" == --supports ]]; then
  node_supported "${2:?usage: node.sh --supports VERSION}"
  exit
fi
resolve_node
printf '%s\n' "$STREAMGATE_NODE_BIN"
