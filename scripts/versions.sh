# Pinned inputs of the environment; sourced by scripts/bootstrap.sh and read by harness/images.ts.
# Changing a value here rebuilds what depends on it (images carry a sluice.inputs label).
DENO_VERSION=2.9.6
KAFKA_VERSION=4.1.2
DEBIAN_SUITE=bookworm
DEBIAN_MIRROR=${SLUICE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
BASE_PACKAGES=openjdk-17-jre-headless
BASE_IMAGE=sluice/base:jre17-bookworm
KAFKA_IMAGE=sluice/kafka:4.1.2
# Kafka Connect worker: the same Kafka version as the broker (images/connect/)
CONNECT_IMAGE=sluice/connect:4.1.2
