#!/bin/sh
# Run a Kafka tool class with the broker's classpath, e.g.
#   kafka-run-class.sh org.apache.kafka.tools.consumer.ConsoleConsumer --bootstrap-server kafka:9092 --topic t --from-beginning
#   kafka-run-class.sh org.apache.kafka.tools.consumer.group.ConsumerGroupCommand --bootstrap-server kafka:9092 --describe --group g --state
set -eu
exec java -Xshare:auto -Xmx256m -Dlog4j2.configurationFile=/opt/kafka/config/tools-log4j2.properties \
  -cp "/opt/kafka/libs/*" "$@"
