#!/bin/sh
# Broker entry point: format storage once (idempotent), then exec the broker as PID 1 so that it
# receives SIGTERM from `docker stop`.
set -eu
KAFKA_HOME=/opt/kafka
CONF=$KAFKA_HOME/config/server.properties
CLUSTER_ID=${CLUSTER_ID:?CLUSTER_ID must be a 22-character base64url UUID}
LOG_OPTS="-Dlog4j2.configurationFile=$KAFKA_HOME/config/log4j2.properties"
CP="$KAFKA_HOME/libs/*"
# SCRAM users to create at format (one "SCRAM-SHA-512=[name=u,password=p]" per line), if the
# harness copied the file in: a file, so that no password is in the container's environment
SCRAM_USERS=$KAFKA_HOME/config/scram-users
set --
if [ -f "$SCRAM_USERS" ]; then
  while IFS= read -r user; do [ -n "$user" ] && set -- "$@" --add-scram "$user"; done <"$SCRAM_USERS"
fi
java -Xshare:auto $LOG_OPTS -cp "$CP" kafka.tools.StorageTool format -t "$CLUSTER_ID" -c "$CONF" --ignore-formatted "$@"
set -- "$CONF"
if [ -n "${ADVERTISED_LISTENERS:-}" ]; then set -- "$@" --override "advertised.listeners=$ADVERTISED_LISTENERS"; fi
exec java ${KAFKA_HEAP_OPTS:--Xms384m -Xmx384m} -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -Djava.awt.headless=true \
  -Dkafka.logs.dir=/tmp $LOG_OPTS -cp "$CP" kafka.Kafka "$@"
