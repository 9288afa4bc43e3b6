# shellcheck shell=bash
# Shared settings and helpers for config/infra/{up,down,kafka}.sh.
# Sourced, not executed.
# shellcheck disable=SC2034  # variables are used by the sourcing scripts

INFRA_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$INFRA_DIR/../.." && pwd)"
KAFKA_CONF_DIR="$REPO_ROOT/config/kafka"

KAFKA_VERSION="${STREAMGATE_KAFKA_VERSION:-3.9.2}"
KAFKA_HOST=127.0.0.1
# Ports and the run dir can be moved by env so a second, private broker can
# run beside the shared one (e.g. to try a change to these scripts).
KAFKA_PORT="${STREAMGATE_KAFKA_PORT:-9092}"
KAFKA_SSL_PORT="${STREAMGATE_KAFKA_SSL_PORT:-9093}"
KAFKA_CONTROLLER_PORT="${STREAMGATE_KAFKA_CONTROLLER_PORT:-9094}"
KAFKA_BOOTSTRAP="$KAFKA_HOST:$KAFKA_PORT"
KAFKA_SSL_BOOTSTRAP="$KAFKA_HOST:$KAFKA_SSL_PORT"

CACHE_ROOT="${STREAMGATE_CACHE:-$HOME/.cache/streamgate}"
KAFKA_HOME="$CACHE_ROOT/kafka-$KAFKA_VERSION"
KAFKA_LIBS="$KAFKA_HOME/libs"
KAFKA_LIBS_MARKER="$KAFKA_LIBS/.complete"
# Everything of one broker instance (config, data, logs, pid); the jars above
# are shared by every instance of the version.
KAFKA_RUN="${STREAMGATE_KAFKA_RUN_DIR:-$KAFKA_HOME}"
KAFKA_DATA="$KAFKA_RUN/data"
KAFKA_LOGS="$KAFKA_RUN/logs"
KAFKA_PROPS="$KAFKA_RUN/server.properties"
KAFKA_CLUSTER_ID_FILE="$KAFKA_RUN/cluster-id"
KAFKA_PID_FILE="$KAFKA_RUN/kafka.pid"
KAFKA_OUT="$KAFKA_LOGS/kafka.out"
KAFKA_LOCK="$KAFKA_RUN/.lock"
# Records which SCRAM users the metadata of which cluster id already holds.
KAFKA_SCRAM_MARKER="$KAFKA_RUN/scram-users"

# The SASL_SSL listener's test PKI (config/infra/kafka-tls.sh), made once.
KAFKA_TLS_DIR="${STREAMGATE_KAFKA_TLS_DIR:-$CACHE_ROOT/kafka-tls}"
# Fixed test credentials: the broker is local and its CA throwaway.
KAFKA_SASL_USER=streamgate
KAFKA_SASL_PASSWORD=streamgate-test-secret
KAFKA_STORE_PASSWORD=streamgate-test-store

JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"

log() { printf '[infra] %s\n' "$*"; }
warn() { printf '[infra] WARNING: %s\n' "$*" >&2; }
die() { printf '[infra] ERROR: %s\n' "$*" >&2; exit 1; }

# Is something accepting TCP connections on host:port?
port_open() {
  # shellcheck disable=SC2016  # $1/$2 expand in the child bash
  timeout 2 bash -c 'exec 3<>"/dev/tcp/$1/$2"' _ "$1" "$2" 2>/dev/null
}

# Real Kafka round trip without a JVM: send ApiVersionsRequest v0
# (api_key 18, correlation id 1, null client id) and check that the response
# carries correlation id 1 and error_code 0.
kafka_answers() {
  local host="$KAFKA_HOST" port="$KAFKA_PORT" hex
  # shellcheck disable=SC2016  # $1/$2 expand in the child bash
  hex="$(timeout 3 bash -c '
    exec 3<>"/dev/tcp/$1/$2" || exit 1
    printf "\x00\x00\x00\x0a\x00\x12\x00\x00\x00\x00\x00\x01\xff\xff" >&3
    head -c 10 <&3 | od -An -tx1
  ' _ "$host" "$port" 2>/dev/null)" || return 1
  hex="${hex//[[:space:]]/}"
  # bytes: length(4) correlation_id(4) error_code(2)
  [[ "${hex:8:8}" == 00000001 && "${hex:16:4}" == 0000 ]]
}

# Prints the pid of the broker that up.sh started, if it is still running.
# Guards against pid reuse by checking the command line.
kafka_pid() {
  local pid
  [[ -f "$KAFKA_PID_FILE" ]] || return 1
  pid="$(cat "$KAFKA_PID_FILE" 2>/dev/null)" || return 1
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  [[ -r "/proc/$pid/cmdline" ]] || return 1
  local cmdline
  cmdline="$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" || return 1
  [[ "$cmdline" == *"kafka.Kafka $KAFKA_PROPS"* ]] || return 1
  printf '%s\n' "$pid"
}

# stop_kafka PID: SIGTERM, then waits for a clean shutdown; SIGKILL only after
# STREAMGATE_KAFKA_STOP_WAIT seconds (default 60). Caller holds the lock.
stop_kafka() {
  local pid="$1"
  log "Stopping Kafka broker (pid $pid)..."
  kill -TERM "$pid" 2>/dev/null || true
  local limit="${STREAMGATE_KAFKA_STOP_WAIT:-60}"
  local deadline=$((SECONDS + limit))
  # kafka_pid also treats a zombie (empty cmdline) as gone.
  while kafka_pid >/dev/null; do
    if (( SECONDS >= deadline )); then
      warn "broker did not stop within ${limit}s; sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      sleep 1
      break
    fi
    sleep 0.3
  done
  rm -f "$KAFKA_PID_FILE"
  log "Kafka broker stopped"
}
