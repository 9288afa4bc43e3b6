#!/usr/bin/env bash
# Runs Kafka's command-line tools from the jars that config/infra/up.sh
# fetched, against the local broker (no Kafka install or kcat needed).
#
#   config/infra/kafka.sh topics --list
#   config/infra/kafka.sh topics --create --topic demo --partitions 3
#   config/infra/kafka.sh topics --describe --topic demo
#   echo hello | config/infra/kafka.sh produce --topic demo
#   config/infra/kafka.sh consume --topic demo --from-beginning --max-messages 1
#   config/infra/kafka.sh groups --list
#   config/infra/kafka.sh offsets --topic demo
#   config/infra/kafka.sh quorum describe --status
#   config/infra/kafka.sh class <fully.qualified.Main> [args...]
#
# --bootstrap-server 127.0.0.1:9092 is added automatically for the named tools.
set -euo pipefail

# shellcheck source=lib.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ -f "$KAFKA_LIBS_MARKER" ]] || die "Kafka jars not fetched yet; run config/infra/up.sh first"
[[ $# -ge 1 ]] || { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }

tool="$1"; shift
bs=(--bootstrap-server "$KAFKA_BOOTSTRAP")
case "$tool" in
  topics)  set -- org.apache.kafka.tools.TopicCommand "${bs[@]}" "$@" ;;
  produce) set -- kafka.tools.ConsoleProducer "${bs[@]}" "$@" ;;
  consume) set -- org.apache.kafka.tools.consumer.ConsoleConsumer "${bs[@]}" "$@" ;;
  groups)  set -- org.apache.kafka.tools.consumer.group.ConsumerGroupCommand "${bs[@]}" "$@" ;;
  offsets) set -- org.apache.kafka.tools.GetOffsetShell "${bs[@]}" "$@" ;;
  quorum)  set -- org.apache.kafka.tools.MetadataQuorumCommand "${bs[@]}" "$@" ;;
  class)   [[ $# -ge 1 ]] || die "usage: kafka.sh class <main class> [args...]" ;;
  -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) die "unknown tool '$tool' (topics|produce|consume|groups|offsets|quorum|class)" ;;
esac

exec "$JAVA" -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
  -Dlog4j.configuration="file:$KAFKA_CONF_DIR/tools-log4j.properties" \
  -cp "$KAFKA_LIBS/*" "$@"
