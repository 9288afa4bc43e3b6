#!/usr/bin/env bash
# Runs a command with a supported Node.js first on PATH (lib.sh's use_node),
# for package.json scripts that run node, e.g.
#   bash config/runtime/with-node.sh node bench/run.mjs
# npm runs scripts on whatever node started it; this moves them to Node 24
# (or 22.22+). Says which node only when it had to change PATH, so nested
# scripts (build runs build:console) print it once.
set -euo pipefail
# shellcheck source=config/runtime/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
first="$(command -v node 2>/dev/null || true)"
if [[ -n "$first" ]] && node_supported "$(node_version_of "$first")" \
    && { [[ -z "${STREAMGATE_NODE:-}" ]] || [[ "$first" -ef "$STREAMGATE_NODE" ]]; }; then
  exec "$@"
fi
use_node "[node]"
exec "$@"
