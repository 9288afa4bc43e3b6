#!/usr/bin/env bash
# The test command (`npm test`): installs what is missing, brings up Postgres,
# Redis and Kafka (config/infra/up.sh starts only what is not running), builds
# dist/ (crash tests run the real CLI as a child process) and runs tap.
# Extra arguments go to tap, e.g. `npm test -- test/unit`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [[ ! -d node_modules ]] || [[ package-lock.json -nt node_modules/.package-lock.json ]]; then
  echo "[test] installing dependencies (npm ci)"
  npm ci --no-audit --no-fund
fi
STREAMGATE_INSTALL_KCAT="${STREAMGATE_INSTALL_KCAT:-0}" bash config/infra/up.sh
echo "[test] building"
npm run --silent build
exec npx tap "$@"
