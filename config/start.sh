#!/usr/bin/env bash
# `npm start`: installs dependencies and builds when needed, then runs every
# role in one process. With no DATABASE_URL, REDIS_URL or KAFKA_BROKERS set it
# runs on the embedded backends (data under ./.streamgate) and, on the first
# run, prints keys and a curl command for a first event. Arguments go to
# `streamgate start` (`npm start -- --threads 2`; env STREAMGATE_THREADS too).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# Node 24 (or 22.22+) first on PATH before anything runs node: npm install,
# the build and the service. An older system Node gets the pinned Node 24
# from the npm registry (cached; config/runtime/lib.sh).
# shellcheck source=config/runtime/lib.sh
source config/runtime/lib.sh
use_node "[start]"
if [[ ! -d node_modules ]] || [[ package-lock.json -nt node_modules/.package-lock.json ]]; then
  # `npm install`, not `npm ci`: msgpackr-extract lists prebuilt binaries for
  # other platforms as optional dependencies, some of which the registry here
  # does not serve; npm ci refuses a lock without them, npm install skips them
  # (versions still come from package-lock.json).
  echo "[start] installing dependencies (npm install)"
  npm install --no-audit --no-fund
fi
if [[ ! -f dist/cli.js ]] || [[ -n "$(find src -newer dist/cli.js -print -quit)" ]] \
    || [[ ! -f dist/console/index.html ]] || [[ -n "$(find console -newer dist/console/index.html -print -quit)" ]]; then
  echo "[start] building"
  npm run --silent build
fi
# The V8 heap of each thread (MB; 0: Node's own limit, a quarter of the machine's
# memory up to 4 GB). V8 lets garbage pile up to near its limit before a full
# collection: with Node's limit a 1,000,000-event backlog peaked at 548 MB RSS
# with 314 MB of heap "used", 131 MB under a 160 MB cap (bench/results/results-backlog-1m.md).
heap=()
if [[ "${STREAMGATE_MAX_HEAP_MB:-256}" != 0 ]]; then heap=(--max-old-space-size="${STREAMGATE_MAX_HEAP_MB:-256}"); fi
# The young generation (MB per semi-space; 0: V8's choice). V8 sizes it from
# the heap cap, ~2 MB under a 256 MB one: every request's short-lived objects
# then meet a scavenge several times as often and more of them are promoted to
# the old generation, whose marking runs on helper threads. 16 MB (what V8
# gives an uncapped heap) cut ingress CPU per event by 14 % and halved its p99
# (bench/results/server-ab.md); 32 MB, with pretenuring off (below), cut a
# backlog drain's CPU per delivered event by ~11 % and end to end by ~11 %
# (bench/results/cpu-ab.md, 2026-11-28), for up to ~96 MB of young generation per thread (48 more than at 16 MB;
# measured: +70 MB peak RSS in a 2-thread backlog drain, none at 1 thread).
if [[ "${STREAMGATE_SEMI_SPACE_MB:-32}" != 0 ]]; then heap+=(--max-semi-space-size="${STREAMGATE_SEMI_SPACE_MB:-32}"); fi
# V8's allocation-site pretenuring (1: on, V8's default; 0: off). V8 allocates
# objects of a site whose objects mostly survived a scavenge straight in the
# old generation: here that is records and delivery rows that wait a few
# hundred ms and then die, so they filled the old generation and it was marked
# every ~0.7 s in a backlog drain. Off: they die young or are promoted by a
# scavenge; with 32 MB semi-spaces, backlog CPU per delivered event 53-54 -> 46-48 µs
# (median of 4 alternated rounds each, bench/results/cpu-ab.md, 2026-11-28).
if [[ "${STREAMGATE_PRETENURING:-0}" == 0 ]]; then heap+=(--no-allocation-site-pretenuring); fi
# How far the old generation may grow past what a full collection left alive
# before the next one (percent; 0: V8's own factor). V8 starts marking once the
# room left is under the young generation's size, so with a 16 MB semi-space and
# its own factor (~1.6 here) a node marked its ~50 MB live heap about every
# second on the helper threads (a fifth of its CPU end to end). 100 (grow to 2x)
# marks about every 2.5 s: the helpers' CPU 9-14 -> 8 % of a core at 3,000
# ev/s, ~5 % less CPU per delivered event, ~30 MB more peak RSS
# (bench/results/cpu-ab.md, 2026-11-27).
if [[ "${STREAMGATE_HEAP_GROWING_PERCENT:-100}" != 0 ]]; then heap+=(--heap-growing-percent="${STREAMGATE_HEAP_GROWING_PERCENT:-100}"); fi
exec node "${heap[@]}" dist/cli.js start "$@"
