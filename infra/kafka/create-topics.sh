#!/bin/sh
# The records topic, partitioned by businessId (events of one business stay in order).
set -e
/opt/kafka/bin/kafka-topics.sh --bootstrap-server kafka:9092 --create --if-not-exists \
  --topic crm.records.v1 --partitions 12 --replication-factor 1 --config retention.ms=604800000
