#!/usr/bin/env bash
# The test command (`npm test`): installs what is missing, brings up Postgres,
# Redis and Kafka (config/infra/up.sh starts only what is not running), builds
# dist/ (crash tests run the real CLI as a child process) and runs tap.
#
# Without arguments it runs the backend matrix:
#   1. kafka:    test/unit, test/adapters (adapter internals), test/cluster
#                (several nodes), test/integration against Kafka + Redis,
#                test/e2e (the console in headless Chromium)
#   2. embedded: test/integration again (but the backend-blind areas, see
#                below), against the embedded log and the in-process cache
# With arguments they go to tap as they are, against STREAMGATE_TEST_BACKEND
# (kafka by default), e.g. `npm test -- test/unit`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# Node 24 (or 22.22+) first on PATH before anything runs node: npm install,
# tsc, vite, tap and the nodes the tests start. An older system Node gets the
# pinned Node 24 from the npm registry (cached; config/runtime/lib.sh).
# shellcheck source=config/runtime/lib.sh
source config/runtime/lib.sh
use_node "[test]"

if [[ ! -d node_modules ]] || [[ package-lock.json -nt node_modules/.package-lock.json ]]; then
  # `npm install`, not `npm ci`: msgpackr-extract lists prebuilt binaries for
  # other platforms as optional dependencies, some of which the registry here
  # does not serve; npm ci refuses a lock without them, npm install skips them
  # (versions still come from package-lock.json).
  echo "[test] installing dependencies (npm install)"
  npm install --no-audit --no-fund
fi
STREAMGATE_INSTALL_KCAT="${STREAMGATE_INSTALL_KCAT:-0}" bash config/infra/up.sh
# The HTTPS delivery tests make a throwaway CA and certificates with openssl.
if ! command -v openssl >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  echo "[test] installing openssl (apt-get)"
  (export DEBIAN_FRONTEND=noninteractive; apt-get install -y -q --no-install-recommends openssl || { apt-get update -q && apt-get install -y -q --no-install-recommends openssl; }) >/dev/null
fi
# The console's browser tests (test/e2e) drive Debian's Chromium headless; no
# browser download is possible, so install the distribution's package. Best
# effort: without it those tests fail with a message that says so.
if [[ ! -x /usr/bin/chromium ]] && command -v apt-get >/dev/null 2>&1; then
  echo "[test] installing chromium (apt-get) for test/e2e"
  (export DEBIAN_FRONTEND=noninteractive; apt-get install -y -q --no-install-recommends chromium || { apt-get update -q && apt-get install -y -q --no-install-recommends chromium; }) >/dev/null 2>&1 \
    || echo "[test] could not install chromium: test/e2e will fail (install Debian's chromium package, or set STREAMGATE_CHROMIUM)"
fi
echo "[test] building"
npm run --silent build
# tap runs the .ts tests without checking types: check them here, strictly, as src is.
typecheck=0
echo "[test] type-checking the tests (test/tsconfig.json)"
npx tsc -p test/tsconfig.json || { echo "[test] the test files do not type-check (see above)"; typecheck=1; }

# Node strips the types itself (erasable TypeScript, test/helpers/ts-resolve.mjs
# maps ./x.js imports to ./x.ts): no ts-node transpiling in every test process.
export TAP_TYPE_STRIP_ONLY=1

if [[ $# -gt 0 ]]; then
  exec npx tap "$@"
fi

status=$typecheck
dirs=(test/unit test/adapters test/integration)
[[ -n "$(find test/cluster -name '*.test.ts' 2>/dev/null)" ]] && dirs+=(test/cluster)
# The console in a real browser (Chromium): one browser per file.
[[ -n "$(find test/e2e -name '*.test.ts' 2>/dev/null)" ]] && dirs+=(test/e2e)
echo "[test] backend: kafka (Kafka + Redis + PostgreSQL)"
STREAMGATE_TEST_BACKEND=kafka npx tap "${dirs[@]}" || status=1
# The embedded phase runs what the backend decides: everything in
# test/integration except the areas that never touch the event log or the
# cache beyond starting a node (the HTTP server as attackers see it, tracing
# and metrics, the console's sign-in and static files, the OpenAPI document,
# the deploy CLI). Those run once, in the kafka phase; see docs/testing.md.
mapfile -t embedded < <(find test/integration -name '*.test.ts' \
  -not -path 'test/integration/http/*' \
  -not -path 'test/integration/observability/*' \
  -not -path 'test/integration/api/console-*' \
  -not -path 'test/integration/api/openapi.test.ts' \
  -not -path 'test/integration/node/deploy.test.ts' | sort)
echo "[test] backend: embedded (embedded log + in-process cache + PostgreSQL): ${#embedded[@]} files"
STREAMGATE_TEST_BACKEND=embedded npx tap "${embedded[@]}" || status=1
exit "$status"
