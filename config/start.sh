#!/usr/bin/env bash
# `npm start`: installs dependencies and builds when needed, then runs every
# role in one process. With no DATABASE_URL, REDIS_URL or KAFKA_BROKERS set it
# runs on the embedded backends (data under ./.streamgate) and, on the first
# run, prints keys and a curl command for a first event.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [[ ! -d node_modules ]] || [[ package-lock.json -nt node_modules/.package-lock.json ]]; then
  # `npm install`, not `npm ci`: msgpackr-extract lists prebuilt binaries for
  # other platforms as optional dependencies, some of which the registry here
  # does not serve; npm ci refuses a lock without them, npm install skips them
  # (versions still come from package-lock.json).
  echo "[start] installing dependencies (npm install)"
  npm install --no-audit --no-fund
fi
if [[ ! -f dist/cli.js ]] || [[ -n "$(find src -newer dist/cli.js -print -quit)" ]]; then
  echo "[start] building"
  npm run --silent build
fi
exec node dist/cli.js start "$@"
