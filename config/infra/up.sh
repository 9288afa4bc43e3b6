#!/usr/bin/env bash
# Brings up streamgate's local infrastructure, idempotently:
#   - PostgreSQL on 127.0.0.1:5432 (+ database "streamgate")
#   - Redis on 127.0.0.1:6379
#   - Apache Kafka (single-node KRaft broker+controller) on 127.0.0.1:9092
#     (PLAINTEXT), 127.0.0.1:9093 (SASL_SSL: a local test CA, SCRAM-SHA-256/512,
#     PLAIN and unsecured OAUTHBEARER for user "streamgate"), controller on
#     127.0.0.1:9094, run from jars fetched with Maven into
#     ${STREAMGATE_CACHE:-$HOME/.cache/streamgate}/kafka-<ver>/; the test CA
#     and certificates are made once in .../kafka-tls/ (config/infra/kafka-tls.sh)
#   - A broker this script started before the SASL_SSL listener existed is
#     restarted once with the new config (its data is kept; the SCRAM users are
#     added over PLAINTEXT).
# A second run when everything is already up takes well under a second
# (no JVM and no Maven are started then).
#
# Environment:
#   STREAMGATE_CACHE          cache root (default: $HOME/.cache/streamgate)
#   STREAMGATE_KAFKA_VERSION  Kafka version from Maven Central (default 3.9.2)
#   STREAMGATE_KAFKA_WAIT     seconds to wait for the broker (default 90)
#   STREAMGATE_KAFKA_HEAP     max heap of the broker (default 1g)
#   STREAMGATE_KAFKA_PORT, STREAMGATE_KAFKA_SSL_PORT, STREAMGATE_KAFKA_CONTROLLER_PORT
#                             listener ports (default 9092, 9093, 9094)
#   STREAMGATE_KAFKA_RUN_DIR  config, data, logs and pid of the broker
#                             (default: the cache's kafka-<ver>/)
#   STREAMGATE_KAFKA_TLS_DIR  the test CA and certificates (default: <cache>/kafka-tls)
#   (the last four let a second, private broker run beside the shared one)
#   STREAMGATE_DB_NAME        database to create (default streamgate)
#   STREAMGATE_INSTALL_KCAT   1: try to install kcat (apt) even when not root;
#                             0: never try. Unset: try once if root and missing.
#
# Stop Kafka with config/infra/down.sh (Postgres/Redis are left running).
# Run Kafka's CLI tools with config/infra/kafka.sh.
set -euo pipefail

# shellcheck source=lib.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

START_NS="$(date +%s%N)"
elapsed() { printf '%d.%01d' $(( ($(date +%s%N) - START_NS) / 1000000000 )) $(( ($(date +%s%N) - START_NS) / 100000000 % 10 )); }

PG_HOST=127.0.0.1
PG_USER=postgres
DB_NAME="${STREAMGATE_DB_NAME:-streamgate}"
REDIS_HOST=127.0.0.1
REDIS_PORT=6379

# wait_for SECONDS WHAT CMD... : polls CMD until it succeeds.
wait_for() {
  local secs="$1" what="$2"; shift 2
  local deadline=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    (( SECONDS < deadline )) || die "$what did not come up within ${secs}s"
    sleep 0.3
  done
}

# ---------------------------------------------------------------- PostgreSQL
pg_up() { pg_isready -h "$PG_HOST" -t 2 -q; }

ensure_postgres() {
  command -v pg_isready >/dev/null || die "pg_isready not found (install postgresql-client)"
  if pg_up; then return 0; fi
  log "PostgreSQL is not answering on $PG_HOST:5432; starting it..."
  local ver
  ver="$(find /etc/postgresql -mindepth 1 -maxdepth 1 -type d -printf '%f\n' 2>/dev/null | sort -V | tail -n 1)"
  [[ -n "$ver" ]] || die "no cluster under /etc/postgresql; cannot start PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$ver" main start \
    || warn "pg_ctlcluster start returned non-zero (maybe already starting); waiting anyway"
  wait_for 60 "PostgreSQL" pg_up
  log "PostgreSQL is up ($(elapsed)s)"
}

psql_admin() { psql -h "$PG_HOST" -U "$PG_USER" -d postgres -X -q -A -t -v ON_ERROR_STOP=1 "$@"; }

ensure_database() {
  local exists
  exists="$(psql_admin -c "select 1 from pg_database where datname = '$DB_NAME'")" \
    || die "cannot connect: psql -h $PG_HOST -U $PG_USER (is trust auth configured?)"
  [[ "$exists" == 1 ]] && return 0
  log "Creating database $DB_NAME"
  if ! psql_admin -c "create database \"$DB_NAME\"" 2>/tmp/streamgate-createdb.$$; then
    # Lost a race with a concurrent run? Then it exists now.
    exists="$(psql_admin -c "select 1 from pg_database where datname = '$DB_NAME'")"
    if [[ "$exists" != 1 ]]; then
      cat /tmp/streamgate-createdb.$$ >&2; rm -f /tmp/streamgate-createdb.$$
      die "could not create database $DB_NAME"
    fi
  fi
  rm -f /tmp/streamgate-createdb.$$
}

# --------------------------------------------------------------------- Redis
redis_up() { [[ "$(redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" ping 2>/dev/null)" == PONG ]]; }

ensure_redis() {
  command -v redis-cli >/dev/null || die "redis-cli not found (install redis-tools)"
  if redis_up; then return 0; fi
  log "Redis is not answering on $REDIS_HOST:$REDIS_PORT; starting it..."
  command -v redis-server >/dev/null || die "redis-server not found"
  mkdir -p /var/lib/redis /var/log/redis 2>/dev/null || true
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port "$REDIS_PORT" --save "" \
    --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log \
    || warn "redis-server returned non-zero; waiting anyway"
  wait_for 30 "Redis" redis_up
  log "Redis is up ($(elapsed)s)"
}

# --------------------------------------------------------------------- Kafka
kafka_java() {
  "$JAVA" -Dlog4j.configuration="file:$KAFKA_CONF_DIR/tools-log4j.properties" \
    -cp "$KAFKA_LIBS/*" "$@"
}

fetch_kafka_jars() {
  local want
  want="$KAFKA_VERSION $(sha256sum "$KAFKA_CONF_DIR/pom.xml" | cut -c1-64)"
  if [[ -f "$KAFKA_LIBS_MARKER" && "$(cat "$KAFKA_LIBS_MARKER")" == "$want" ]]; then
    return 0
  fi
  command -v mvn >/dev/null || die "mvn not found; it is needed once to fetch the Kafka jars"
  log "Fetching Kafka $KAFKA_VERSION jars from Maven Central into $KAFKA_LIBS (one-time, ~10-60 s)..."
  local tmp="$KAFKA_HOME/libs.tmp.$$"
  rm -rf "$tmp"
  if ! mvn -q -B -f "$KAFKA_CONF_DIR/pom.xml" -Dkafka.version="$KAFKA_VERSION" \
      dependency:copy-dependencies -DoutputDirectory="$tmp" >"$KAFKA_HOME/mvn.log" 2>&1; then
    tail -n 40 "$KAFKA_HOME/mvn.log" >&2
    rm -rf "$tmp"
    die "Maven could not fetch the Kafka jars (full log: $KAFKA_HOME/mvn.log)"
  fi
  [[ -f "$tmp/kafka_2.13-$KAFKA_VERSION.jar" ]] || die "kafka_2.13-$KAFKA_VERSION.jar missing after Maven run"
  printf '%s\n' "$want" >"$tmp/.complete"
  rm -rf "$KAFKA_LIBS"
  mv "$tmp" "$KAFKA_LIBS"
  log "Kafka jars ready ($(find "$KAFKA_LIBS" -name '*.jar' | wc -l) jars, $(elapsed)s)"
}

# server.properties = config/kafka/server.properties with its @NAME@
# placeholders filled in + the dynamic log.dirs.
render_kafka_props() {
  local -a subst=(
    -e "s|@PORT@|$KAFKA_PORT|g" -e "s|@SSL_PORT@|$KAFKA_SSL_PORT|g"
    -e "s|@CONTROLLER_PORT@|$KAFKA_CONTROLLER_PORT|g" -e "s|@TLS_DIR@|$KAFKA_TLS_DIR|g"
    -e "s|@STORE_PASSWORD@|$KAFKA_STORE_PASSWORD|g" -e "s|@SASL_USER@|$KAFKA_SASL_USER|g"
    -e "s|@SASL_PASSWORD@|$KAFKA_SASL_PASSWORD|g"
  )
  sed "${subst[@]}" "$KAFKA_CONF_DIR/server.properties"
  printf '\n# ---- added by config/infra/up.sh ----\nlog.dirs=%s\n' "$KAFKA_DATA"
}

# Was the running broker's config written before the SASL_SSL listener?
props_lack_sasl_ssl() {
  [[ -f "$KAFKA_PROPS" ]] && ! grep -q '^listeners=.*SASL_SSL://' "$KAFKA_PROPS"
}

write_kafka_config() {
  mkdir -p "$KAFKA_DATA" "$KAFKA_LOGS"
  render_kafka_props >"$KAFKA_PROPS.tmp" && mv "$KAFKA_PROPS.tmp" "$KAFKA_PROPS"
  # The broker reads its log4j config from the cache, so a running broker
  # does not depend on this work tree still existing.
  cp "$KAFKA_CONF_DIR/log4j.properties" "$KAFKA_RUN/log4j.properties.tmp"
  mv "$KAFKA_RUN/log4j.properties.tmp" "$KAFKA_RUN/log4j.properties"
}

format_kafka_storage() {
  [[ -f "$KAFKA_DATA/meta.properties" ]] && return 0
  local cid
  if [[ -s "$KAFKA_CLUSTER_ID_FILE" ]]; then
    cid="$(cat "$KAFKA_CLUSTER_ID_FILE")"
  else
    cid="$(kafka_java kafka.tools.StorageTool random-uuid | tail -n 1)"
    [[ "$cid" =~ ^[A-Za-z0-9_-]{22}$ ]] || die "StorageTool random-uuid gave an unexpected id: '$cid'"
    printf '%s\n' "$cid" >"$KAFKA_CLUSTER_ID_FILE"
  fi
  log "Formatting KRaft storage in $KAFKA_DATA (cluster id $cid)..."
  # The SCRAM users go into the first metadata records, so a new broker
  # accepts them from its first start.
  kafka_java kafka.tools.StorageTool format -t "$cid" -c "$KAFKA_PROPS" --ignore-formatted \
    --add-scram "SCRAM-SHA-256=[name=$KAFKA_SASL_USER,password=$KAFKA_SASL_PASSWORD]" \
    --add-scram "SCRAM-SHA-512=[name=$KAFKA_SASL_USER,password=$KAFKA_SASL_PASSWORD]" \
    >"$KAFKA_LOGS/format.log" 2>&1 || { cat "$KAFKA_LOGS/format.log" >&2; die "kafka-storage format failed"; }
  scram_marker_want >"$KAFKA_SCRAM_MARKER"
  log "KRaft storage formatted ($(elapsed)s)"
}

# What $KAFKA_SCRAM_MARKER holds once the users exist: the cluster id (a wiped
# and re-formatted data dir has another) and a digest of the credentials.
scram_marker_want() {
  local cid
  cid="$(sed -n 's/^cluster\.id=//p' "$KAFKA_DATA/meta.properties" 2>/dev/null)"
  printf '%s %s\n' "$cid" "$(printf '%s:%s' "$KAFKA_SASL_USER" "$KAFKA_SASL_PASSWORD" | sha256sum | cut -c1-16)"
}

# Storage formatted before the SASL_SSL listener has no SCRAM users: add them
# through the running broker (PLAINTEXT listener). Runs a JVM only when the
# marker says the users are missing, so reruns stay fast.
ensure_scram_users() {
  local want
  want="$(scram_marker_want)"
  [[ -f "$KAFKA_SCRAM_MARKER" && "$(cat "$KAFKA_SCRAM_MARKER")" == "$want" ]] && return 0
  log "Adding SCRAM-SHA-256/512 user $KAFKA_SASL_USER through $KAFKA_BOOTSTRAP..."
  # One mechanism per call: the broker refuses two changes to one user's
  # credentials in a single request (DuplicateResourceException).
  local mech
  : >"$KAFKA_LOGS/scram.log"
  for mech in "SCRAM-SHA-256=[iterations=8192,password=$KAFKA_SASL_PASSWORD]" "SCRAM-SHA-512=[password=$KAFKA_SASL_PASSWORD]"; do
    kafka_java kafka.admin.ConfigCommand --bootstrap-server "$KAFKA_BOOTSTRAP" --alter --add-config "$mech" \
      --entity-type users --entity-name "$KAFKA_SASL_USER" >>"$KAFKA_LOGS/scram.log" 2>&1 \
      || { cat "$KAFKA_LOGS/scram.log" >&2; die "kafka-configs could not add the ${mech%%=*} user"; }
  done
  printf '%s\n' "$want" >"$KAFKA_SCRAM_MARKER"
  log "SCRAM user $KAFKA_SASL_USER added ($(elapsed)s)"
}

# kafka_failed OFFSET MESSAGE: prints what the broker logged since byte
# OFFSET of server.log (plus its stdout/stderr), then exits non-zero.
kafka_failed() {
  local offset="$1"; shift
  printf '[infra] ---- %s (this start) ----\n' "$KAFKA_LOGS/server.log" >&2
  if (( $(stat -c %s "$KAFKA_LOGS/server.log" 2>/dev/null || echo 0) > offset )); then
    tail -c "+$((offset + 1))" "$KAFKA_LOGS/server.log" | tail -n 40 >&2
  else
    printf '(nothing logged)\n' >&2
  fi
  printf '[infra] ---- %s (last lines) ----\n' "$KAFKA_OUT" >&2
  tail -n 15 "$KAFKA_OUT" >&2 2>/dev/null || true
  die "$*"
}

# Waits until the broker logs "Kafka Server started" (after byte $2 of
# server.log) and answers an ApiVersions request.
wait_for_kafka() {
  local pid="$1" offset="$2"
  local limit="${STREAMGATE_KAFKA_WAIT:-90}"
  local deadline=$((SECONDS + limit)) next_note=$((SECONDS + 10))
  while :; do
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$KAFKA_PID_FILE"
      kafka_failed "$offset" "Kafka broker (pid $pid) exited during startup"
    fi
    local size
    size="$(stat -c %s "$KAFKA_LOGS/server.log" 2>/dev/null || echo 0)"
    (( size >= offset )) || offset=0   # log was rolled
    # (process substitution, not a pipe: grep -q exiting early would make
    # tail die of SIGPIPE and, under pipefail, the test fail)
    if grep -q 'Kafka Server started' < <(tail -c "+$((offset + 1))" "$KAFKA_LOGS/server.log" 2>/dev/null) \
        && kafka_answers && port_open "$KAFKA_HOST" "$KAFKA_SSL_PORT"; then
      return 0
    fi
    if (( SECONDS >= deadline )); then
      kafka_failed "$offset" "Kafka broker (pid $pid, still running) not ready after ${limit}s; stop it with config/infra/down.sh"
    fi
    if (( SECONDS >= next_note )); then
      log "  ...still waiting for Kafka ($(elapsed)s)"
      next_note=$((SECONDS + 10))
    fi
    sleep 0.3
  done
}

start_kafka() {
  command -v "$JAVA" >/dev/null || die "java not found (Kafka $KAFKA_VERSION needs Java 11+, 17 recommended)"
  local offset
  offset="$(stat -c %s "$KAFKA_LOGS/server.log" 2>/dev/null || echo 0)"
  log "Starting Kafka $KAFKA_VERSION broker on $KAFKA_BOOTSTRAP (logs: $KAFKA_LOGS)..."
  printf '\n==== %s up.sh starting broker ====\n' "$(date -Is)" >>"$KAFKA_OUT"
  # setsid+nohup: own session, survives this script and its terminal.
  # 9>&- : do not let the broker inherit (and hold) up.sh's lock fd.
  (
    cd "$KAFKA_RUN"
    exec nohup setsid "$JAVA" \
      -Xms256m -Xmx"${STREAMGATE_KAFKA_HEAP:-1g}" \
      -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 \
      -XX:+ExplicitGCInvokesConcurrent -XX:+ExitOnOutOfMemoryError \
      -Djava.awt.headless=true \
      -Dkafka.logs.dir="$KAFKA_LOGS" \
      -Dlog4j.configuration="file:$KAFKA_RUN/log4j.properties" \
      -cp "$KAFKA_LIBS/*" \
      kafka.Kafka "$KAFKA_PROPS"
  ) </dev/null >>"$KAFKA_OUT" 2>&1 9>&- &
  local pid=$!
  printf '%s\n' "$pid" >"$KAFKA_PID_FILE"
  printf '%s\n' "$offset" >"$KAFKA_RUN/kafka.log-offset"
  wait_for_kafka "$pid" "$offset"
  log "Kafka is ready on $KAFKA_BOOTSTRAP and $KAFKA_SSL_BOOTSTRAP (SASL_SSL) (pid $pid, $(elapsed)s)"
}

ensure_kafka() {
  mkdir -p "$KAFKA_HOME" "$KAFKA_RUN"
  # Serialise concurrent up.sh/down.sh runs on the Kafka part.
  exec 9>"$KAFKA_LOCK"
  flock -w 180 9 || die "could not lock $KAFKA_LOCK (another up.sh/down.sh stuck?)"

  local pid=""
  pid="$(kafka_pid)" || pid=""

  if kafka_answers; then
    if [[ -z "$pid" ]]; then
      log "Something already answers Kafka on $KAFKA_BOOTSTRAP (not started by up.sh, e.g. docker compose); using it"
      exec 9>&-
      return 0
    fi
    if props_lack_sasl_ssl; then
      # Started before the SASL_SSL listener existed: a listener can only be
      # added by a restart. Data and topics stay; clients reconnect.
      log "The running broker has no SASL_SSL listener (older config): restarting it with the new one"
      stop_kafka "$pid"
      pid=""
    else
      if [[ -f "$KAFKA_PROPS" ]] && ! render_kafka_props | cmp -s - "$KAFKA_PROPS"; then
        warn "config/kafka/server.properties changed since the broker started;" \
             "run config/infra/down.sh && config/infra/up.sh to apply it"
      fi
      ensure_scram_users
      exec 9>&-
      return 0
    fi
  fi

  if [[ -n "$pid" ]]; then
    # Our broker is running but not answering yet (starting, e.g. a
    # concurrent run started it): wait for it instead of starting another.
    log "Kafka broker (pid $pid) is running but not ready yet; waiting..."
    wait_for_kafka "$pid" "$(cat "$KAFKA_RUN/kafka.log-offset" 2>/dev/null || echo 0)"
    log "Kafka is ready on $KAFKA_BOOTSTRAP (pid $pid, $(elapsed)s)"
    ensure_scram_users
    exec 9>&-
    return 0
  fi

  if port_open "$KAFKA_HOST" "$KAFKA_PORT"; then
    die "port $KAFKA_BOOTSTRAP is taken by something that does not speak Kafka"
  fi
  if port_open "$KAFKA_HOST" "$KAFKA_SSL_PORT"; then
    die "SASL_SSL port $KAFKA_SSL_BOOTSTRAP is already in use"
  fi
  if port_open "$KAFKA_HOST" "$KAFKA_CONTROLLER_PORT"; then
    die "controller port $KAFKA_HOST:$KAFKA_CONTROLLER_PORT is already in use"
  fi

  fetch_kafka_jars
  bash "$INFRA_DIR/kafka-tls.sh"
  write_kafka_config
  format_kafka_storage
  start_kafka
  ensure_scram_users
  exec 9>&-
}

# ------------------------------------------------------------ kcat (optional)
# Best effort, never fatal: kcat is only for humans poking at topics.
install_kcat_best_effort() {
  command -v kcat >/dev/null 2>&1 && return 0
  local mode="${STREAMGATE_INSTALL_KCAT:-}"
  [[ "$mode" == 0 ]] && return 0
  local failed_marker="$CACHE_ROOT/.kcat-install-failed"
  if [[ "$mode" != 1 ]]; then
    [[ "$(id -u)" == 0 ]] || return 0
    [[ -f "$failed_marker" ]] && return 0   # tried before; keep reruns fast
  fi
  command -v apt-get >/dev/null 2>&1 || return 0
  log "Installing kcat with apt-get (best effort; set STREAMGATE_INSTALL_KCAT=0 to skip)..."
  local -a sudo=()
  [[ "$(id -u)" == 0 ]] || sudo=(sudo -n)
  local apt_log="$CACHE_ROOT/kcat-install.log"
  if (
    export DEBIAN_FRONTEND=noninteractive
    apt_get() { timeout 300 "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=60 "$@"; }
    apt_get install -y -q --no-install-recommends kcat \
      || { apt_get update -q && apt_get install -y -q --no-install-recommends kcat; }
  ) >"$apt_log" 2>&1; then
    rm -f "$failed_marker"
    log "kcat installed"
  else
    touch "$failed_marker" 2>/dev/null || true
    warn "could not install kcat (non-fatal; see $apt_log)"
  fi
  return 0
}

# ---------------------------------------------------------------------- main
main() {
  mkdir -p "$CACHE_ROOT"
  ensure_postgres
  ensure_database
  ensure_redis
  ensure_kafka
  install_kcat_best_effort || true
  log "All up ($(elapsed)s): DATABASE_URL=postgres://$PG_USER@$PG_HOST:5432/$DB_NAME" \
      "REDIS_URL=redis://$REDIS_HOST:$REDIS_PORT KAFKA_BROKERS=$KAFKA_BOOTSTRAP"
  # Only when the broker is ours: one started elsewhere has no such listener.
  if [[ -f "$KAFKA_TLS_DIR/ca.pem" ]] && port_open "$KAFKA_HOST" "$KAFKA_SSL_PORT"; then
    log "Kafka SASL_SSL (test CA: $KAFKA_TLS_DIR/ca.pem): KAFKA_SSL_BROKERS=$KAFKA_SSL_BOOTSTRAP" \
        "KAFKA_SSL=true KAFKA_SSL_CA_FILE=$KAFKA_TLS_DIR/ca.pem KAFKA_SASL_MECHANISM=SCRAM-SHA-256" \
        "KAFKA_SASL_USERNAME=$KAFKA_SASL_USER KAFKA_SASL_PASSWORD=$KAFKA_SASL_PASSWORD" \
        "(client certificate: $KAFKA_TLS_DIR/client.pem, client.key)"
  fi
}

main "$@"
