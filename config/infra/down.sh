#!/usr/bin/env bash
# Stops the Kafka broker started by config/infra/up.sh (SIGTERM, then waits
# for a clean shutdown; SIGKILL only after STREAMGATE_KAFKA_STOP_WAIT seconds,
# default 60). PostgreSQL and Redis are left running. Takes the same
# STREAMGATE_KAFKA_* environment as up.sh (a private broker's run dir).
#
#   config/infra/down.sh          stop Kafka, keep its data (topics, offsets)
#   config/infra/down.sh --wipe   stop Kafka and delete its data dir; the next
#                                 up.sh formats fresh storage
set -euo pipefail

# shellcheck source=lib.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

wipe=0
for arg in "$@"; do
  case "$arg" in
    --wipe) wipe=1 ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $arg (usage: down.sh [--wipe])" ;;
  esac
done

if [[ ! -d "$KAFKA_RUN" ]]; then
  log "Nothing to do: $KAFKA_RUN does not exist"
  exit 0
fi

exec 9>"$KAFKA_LOCK"
flock -w 180 9 || die "could not lock $KAFKA_LOCK"

pid="$(kafka_pid)" || pid=""
if [[ -z "$pid" ]]; then
  # Pid file lost? Look for a broker running with exactly our config file.
  pid="$(pgrep -f -- "kafka\\.Kafka $KAFKA_PROPS\$" | head -n 1)" || pid=""
  [[ -n "$pid" ]] && printf '%s\n' "$pid" >"$KAFKA_PID_FILE"
fi

if [[ -n "$pid" ]]; then
  stop_kafka "$pid"
else
  log "No Kafka broker started by up.sh is running"
  if kafka_answers; then
    log "(something else answers Kafka on $KAFKA_BOOTSTRAP; left alone)"
  fi
fi
rm -f "$KAFKA_PID_FILE"

if (( wipe )); then
  log "Wiping Kafka data in $KAFKA_DATA"
  rm -rf "$KAFKA_DATA" "$KAFKA_CLUSTER_ID_FILE" "$KAFKA_SCRAM_MARKER"
fi
