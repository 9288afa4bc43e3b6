# shellcheck shell=bash
# Shared settings and helpers for config/infra/{up,down,kafka}.sh.
# Sourced, not executed.
# shellcheck disable=SC2034  # variables are used by the sourcing scripts

INFRA_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$INFRA_DIR/../.." && pwd)"
KAFKA_CONF_DIR="$REPO_ROOT/config/kafka"

KAFKA_VERSION="${STREAMGATE_KAFKA_VERSION:-3.9.2}"
KAFKA_HOST=127.0.0.1
KAFKA_PORT=9092
KAFKA_CONTROLLER_PORT=9093
KAFKA_BOOTSTRAP="$KAFKA_HOST:$KAFKA_PORT"

CACHE_ROOT="${STREAMGATE_CACHE:-$HOME/.cache/streamgate}"
KAFKA_HOME="$CACHE_ROOT/kafka-$KAFKA_VERSION"
KAFKA_LIBS="$KAFKA_HOME/libs"
KAFKA_LIBS_MARKER="$KAFKA_LIBS/.complete"
KAFKA_DATA="$KAFKA_HOME/data"
KAFKA_LOGS="$KAFKA_HOME/logs"
KAFKA_PROPS="$KAFKA_HOME/server.properties"
KAFKA_CLUSTER_ID_FILE="$KAFKA_HOME/cluster-id"
KAFKA_PID_FILE="$KAFKA_HOME/kafka.pid"
KAFKA_OUT="$KAFKA_LOGS/kafka.out"
KAFKA_LOCK="$KAFKA_HOME/.lock"

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
