#!/usr/bin/env bash
# `bash bench/backlog-ab.sh ROUNDS NAME...`: CPU µs per delivered event of a
# backlog drain (bench/run.mjs's backlog phase, receiver answering at once)
# for builds kept aside with bench/keep-build.sh under /tmp/ab/NAME, alternated
# (each round the other order), then the median per build. A build dir may hold
# a `nodeargs` file: node flags for that build (e.g. a V8 flag to A/B on the
# same dist). BENCH_THREADS (default 1), BENCH_BACKLOG_EVENTS as for the bench.
# Lines go to stdout and to /tmp/backlog-ab.txt; bench/results/results.md is
# restored after (each drain rewrites it).
set -euo pipefail
rounds=${1:?usage: backlog-ab.sh ROUNDS NAME...}
shift
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
out=$(mktemp)
for r in $(seq 1 "$rounds"); do
  if (( r % 2 == 1 )); then order=("$@"); else order=(); for ((i = $#; i >= 1; i--)); do order+=("${!i}"); done; fi
  for b in "${order[@]}"; do
    args=$(cat "/tmp/ab/$b/nodeargs" 2>/dev/null || true)
    line=$(BENCH_NODE_ARGS="$args" BENCH_DIST="/tmp/ab/$b/dist" BENCH_SKIP=baseline,ingress,end-to-end,latency \
      BENCH_THREADS="${BENCH_THREADS:-1}" BENCH_RECEIVER_DELAYS=0 node bench/run.mjs 2>&1 | grep "ev/s delivered" | head -1 || true)
    # "[bench]    19143 ev/s delivered (…), 52 µs CPU/event, peak RSS … (largest heap used 129 MB, …)"
    v=$(sed -E 's/.*\] +([0-9]+) ev\/s.* ([0-9]+) µs CPU\/event.*largest heap used ([0-9]+) MB.*/\1 \2 \3/' <<<"$line")
    echo "$r $b $v" | tee -a "$out" /tmp/backlog-ab.txt
  done
done
git checkout -q -- bench/results/results.md bench/results/results.svg
echo "| build | µs / delivered event, median (range) | delivered ev/s, median |"
echo "|---|---:|---:|"
for b in "$@"; do
  awk -v b="$b" '$2 == b { u[++n] = $4; e[n] = $3 } END { asort(u); asort(e); m = int((n + 1) / 2); printf "| %s | %s (%s–%s) | %s |\n", b, u[m], u[1], u[n], e[m] }' "$out"
done
rm -f "$out"
