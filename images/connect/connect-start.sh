#!/bin/sh
# Kafka Connect distributed worker entry point: write the worker properties for this
# environment, then exec the worker as PID 1 so that it receives SIGTERM from `docker stop`.
#   BOOTSTRAP_SERVERS  the broker as containers reach it (required), e.g. kafka:9092
#   CONNECT_GROUP_ID   the worker group (default sluice-connect)
#   CONNECT_TOPIC_PREFIX  prefix of the config/offset/status topics (default: the group ID)
#   ADVERTISED_HOST    the worker's network alias (default: its hostname)
#   CONNECT_EXTRA_PROPERTIES  a properties file appended last, so its keys win (optional; e.g. an
#                      HTTPS listener, a REST login, SASL_SSL clients: its secrets stay in files,
#                      never in the container's environment)
#   CONNECT_JAAS_FILE  a JAAS file for the REST login (optional): java.security.auth.login.config
set -eu
HOME_DIR=/opt/connect
BOOTSTRAP_SERVERS=${BOOTSTRAP_SERVERS:?BOOTSTRAP_SERVERS must name the broker, e.g. kafka:9092}
GROUP=${CONNECT_GROUP_ID:-sluice-connect}
PREFIX=${CONNECT_TOPIC_PREFIX:-$GROUP}
CONF=/tmp/connect-distributed.properties
{
  cat "$HOME_DIR/config/connect-distributed.properties"
  echo "bootstrap.servers=$BOOTSTRAP_SERVERS"
  echo "group.id=$GROUP"
  echo "config.storage.topic=$PREFIX-configs"
  echo "offset.storage.topic=$PREFIX-offsets"
  echo "status.storage.topic=$PREFIX-status"
  echo "rest.advertised.host.name=${ADVERTISED_HOST:-$(hostname)}"
  if [ -n "${CONNECT_EXTRA_PROPERTIES:-}" ]; then cat "$CONNECT_EXTRA_PROPERTIES"; fi
} >"$CONF"
JAAS=
if [ -n "${CONNECT_JAAS_FILE:-}" ]; then JAAS="-Djava.security.auth.login.config=$CONNECT_JAAS_FILE"; fi
exec java ${CONNECT_HEAP_OPTS:--Xms256m -Xmx512m} -XX:+UseG1GC -XX:MaxGCPauseMillis=20 \
  -Djava.awt.headless=true -Dlog4j2.configurationFile=$HOME_DIR/config/log4j2.properties $JAAS \
  -cp "$HOME_DIR/libs/*" org.apache.kafka.connect.cli.ConnectDistributed "$CONF"
