#!/usr/bin/env bash
# sluice bootstrap: brings up everything sluice needs on a machine with no container registry.
# Idempotent and safe to re-run; each step prints what it did and how long it took.
#
#   scripts/bootstrap.sh           # install/start/build whatever is missing
#   scripts/bootstrap.sh --check   # only report what is missing; exit 1 if anything is
#
# Steps: Deno (pinned, inside the repository) · Docker Engine · base image (Debian + Java 17,
# debootstrap + docker import) · Kafka jars (Maven Central) and broker image · Kafka Connect
# jars (Maven Central) and worker image · runner image · PostgreSQL · Deno dependency cache.
#
# Environment: DOCKER_HOST (a daemon to use instead of the default socket), SLUICE_PG_URL
# (default postgres://postgres@127.0.0.1:5432/postgres), SLUICE_DEBIAN_MIRROR.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
CHECK=0
SKIP_RUNNER=0
for arg in "$@"; do
  case "$arg" in
  --check) CHECK=1 ;;
  --no-runner) SKIP_RUNNER=1 ;;
  -h | --help)
    sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  *)
    echo "bootstrap: unknown argument '$arg' (expected --check or --no-runner)" >&2
    exit 2
    ;;
  esac
done

# shellcheck source=scripts/versions.sh
. "$ROOT/scripts/versions.sh"
DOCKER=${SLUICE_DOCKER_CLI:-/usr/bin/docker}
PG_URL=${SLUICE_PG_URL:-postgres://postgres@127.0.0.1:5432/postgres}
MISSING=()

now_ms() { date +%s%3N; }
step_start() {
  STEP_NAME=$1
  STEP_T0=$(now_ms)
}
step_end() { # $1 = outcome text
  local dt=$(($(now_ms) - STEP_T0))
  printf '[bootstrap] %-16s %-46s %6.1fs\n' "$STEP_NAME" "$1" "$(echo "$dt" | awk '{printf "%.1f", $1/1000}')"
}
missing() { # record something absent in --check mode
  MISSING+=("$STEP_NAME: $1")
  step_end "MISSING: $1"
}
die() {
  echo "[bootstrap] $STEP_NAME: $*" >&2
  exit 1
}
is_root() { [ "$(id -u)" = 0 ]; }
is_debian() { [ -f /etc/debian_version ]; }
apt_install() {
  is_root && is_debian || die "need root on Debian to install: $*"
  if [ ! -f /var/tmp/sluice-apt-updated ] || [ -n "$(find /var/tmp/sluice-apt-updated -mmin +360 2>/dev/null)" ]; then
    apt-get update -qq >/dev/null && touch /var/tmp/sluice-apt-updated
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
hash_inputs() { # sha256 over the named files' contents and the extra words given after --
  local files=() extra=() seen=0
  for a in "$@"; do
    if [ "$a" = -- ]; then seen=1; elif [ $seen = 0 ]; then files+=("$a"); else extra+=("$a"); fi
  done
  { cat "${files[@]}"; printf '%s\n' "${extra[@]}"; } | sha256sum | cut -c1-64
}
image_label() { # image label -> value, empty when the image or label is absent
  "$DOCKER" image inspect "$1" --format "{{index .Config.Labels \"$2\"}}" 2>/dev/null || true
}

# ---------------------------------------------------------------------------------------------
step_start deno
DENO="$ROOT/tools/deno/node_modules/deno/deno"
if [ -x "$DENO" ] && [ "$("$DENO" --version | head -n1 | cut -d' ' -f2)" = "$DENO_VERSION" ]; then
  step_end "deno $DENO_VERSION present"
elif [ $CHECK = 1 ]; then
  missing "deno $DENO_VERSION (npm package deno, installed in tools/deno)"
else
  command -v npm >/dev/null || die "npm is required to install Deno from the npm registry"
  (cd tools/deno && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  [ -x "$DENO" ] || die "npm installed the deno package but $DENO is missing"
  step_end "installed deno $("$DENO" --version | head -n1 | cut -d' ' -f2)"
fi

# ---------------------------------------------------------------------------------------------
step_start docker
docker_ping() {
  timeout 10 "$DOCKER" version --format '{{.Server.APIVersion}}' >/dev/null 2>&1
}
if [ ! -x "$DOCKER" ] && [ $CHECK = 0 ] && is_root && is_debian; then
  apt_install docker.io
fi
if [ -x "$DOCKER" ] && docker_ping; then
  step_end "daemon answers (API $("$DOCKER" version --format '{{.Server.APIVersion}}'))"
elif [ $CHECK = 1 ]; then
  missing "no Docker daemon answers at ${DOCKER_HOST:-unix:///var/run/docker.sock}"
elif [ -n "${DOCKER_HOST:-}" ]; then
  die "DOCKER_HOST=$DOCKER_HOST is set but no daemon answers there; start it or unset DOCKER_HOST"
elif is_root && is_debian; then
  [ -x /usr/sbin/dockerd ] || apt_install docker.io
  "$ROOT/scripts/dockerd-ctl.sh" start >/dev/null || die "dockerd did not become ready; see /var/log/dockerd.log"
  docker_ping || die "dockerd started but $DOCKER cannot reach it"
  step_end "started dockerd (API $("$DOCKER" version --format '{{.Server.APIVersion}}'))"
else
  die "no Docker daemon answers and this is not root on Debian: start Docker (or set DOCKER_HOST) and re-run"
fi

# ---------------------------------------------------------------------------------------------
step_start base-image
BASE_INPUTS=$(hash_inputs images/base/build-base.sh -- "$DEBIAN_SUITE" "$DEBIAN_MIRROR" "$BASE_PACKAGES")
if [ "$(image_label "$BASE_IMAGE" sluice.inputs)" = "$BASE_INPUTS" ]; then
  step_end "$BASE_IMAGE up to date"
elif [ $CHECK = 1 ]; then
  missing "$BASE_IMAGE (absent or built from other inputs)"
else
  is_root || die "building the base image needs root (debootstrap, chroot)"
  command -v debootstrap >/dev/null || apt_install debootstrap
  TAG=$BASE_IMAGE INPUTS_HASH=$BASE_INPUTS MIRROR=$DEBIAN_MIRROR SUITE=$DEBIAN_SUITE \
    PACKAGES=$BASE_PACKAGES DOCKER=$DOCKER images/base/build-base.sh | sed 's/^/[bootstrap]   /'
  step_end "built $BASE_IMAGE"
fi

# ---------------------------------------------------------------------------------------------
step_start kafka-jars
KAFKA_LIBS="$ROOT/.cache/kafka-libs/$KAFKA_VERSION"
KAFKA_POM_HASH=$(hash_inputs images/kafka/pom.xml -- "$KAFKA_VERSION")
if [ -f "$KAFKA_LIBS/.complete" ] && [ "$(cat "$KAFKA_LIBS/.complete")" = "$KAFKA_POM_HASH" ]; then
  step_end "$(find "$KAFKA_LIBS" -name '*.jar' | wc -l) jars cached for Kafka $KAFKA_VERSION"
elif [ $CHECK = 1 ]; then
  missing "Kafka $KAFKA_VERSION jars in .cache/kafka-libs"
else
  command -v mvn >/dev/null || apt_install maven
  rm -rf "$KAFKA_LIBS.tmp" && mkdir -p "$KAFKA_LIBS.tmp"
  mvn -B -q -f images/kafka/pom.xml -Dkafka.version="$KAFKA_VERSION" dependency:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$KAFKA_LIBS.tmp" >"$ROOT/.cache/kafka-mvn.log" 2>&1 ||
    { tail -n 20 "$ROOT/.cache/kafka-mvn.log" >&2; die "mvn could not resolve Kafka $KAFKA_VERSION"; }
  echo "$KAFKA_POM_HASH" >"$KAFKA_LIBS.tmp/.complete"
  rm -rf "$KAFKA_LIBS" && mv "$KAFKA_LIBS.tmp" "$KAFKA_LIBS"
  step_end "$(find "$KAFKA_LIBS" -name '*.jar' | wc -l) jars for Kafka $KAFKA_VERSION"
fi

# ---------------------------------------------------------------------------------------------
step_start kafka-image
KAFKA_FILES=(images/kafka/Dockerfile images/kafka/server.properties images/kafka/log4j2.properties images/kafka/tools-log4j2.properties images/kafka/kafka-start.sh images/kafka/kafka-run-class.sh)
KAFKA_INPUTS=$(hash_inputs "${KAFKA_FILES[@]}" images/kafka/pom.xml -- "$KAFKA_VERSION" "$BASE_INPUTS")
if [ "$(image_label "$KAFKA_IMAGE" sluice.inputs)" = "$KAFKA_INPUTS" ]; then
  step_end "$KAFKA_IMAGE up to date"
elif [ $CHECK = 1 ]; then
  missing "$KAFKA_IMAGE (absent or built from other inputs)"
else
  ctx=$(mktemp -d)
  cp "${KAFKA_FILES[@]}" "$ctx/"
  cp -r "$KAFKA_LIBS" "$ctx/libs"
  "$DOCKER" build -q --build-arg "BASE=$BASE_IMAGE" --label "sluice.inputs=$KAFKA_INPUTS" \
    --label "sluice.kafka.version=$KAFKA_VERSION" -t "$KAFKA_IMAGE" "$ctx" >/dev/null ||
    { rm -rf "$ctx"; die "docker build of $KAFKA_IMAGE failed"; }
  rm -rf "$ctx"
  step_end "built $KAFKA_IMAGE"
fi

# ---------------------------------------------------------------------------------------------
step_start connect-jars
CONNECT_LIBS="$ROOT/.cache/connect-libs/$KAFKA_VERSION"
CONNECT_POM_HASH=$(hash_inputs images/connect/pom.xml -- "$KAFKA_VERSION")
connect_jar_count() { find "$CONNECT_LIBS" -name '*.jar' | wc -l; }
if [ -f "$CONNECT_LIBS/.complete" ] && [ "$(cat "$CONNECT_LIBS/.complete")" = "$CONNECT_POM_HASH" ]; then
  step_end "$(connect_jar_count) jars cached for Connect $KAFKA_VERSION"
elif [ $CHECK = 1 ]; then
  missing "Kafka Connect $KAFKA_VERSION jars in .cache/connect-libs"
else
  command -v mvn >/dev/null || apt_install maven
  rm -rf "$CONNECT_LIBS.tmp" && mkdir -p "$CONNECT_LIBS.tmp/libs" "$CONNECT_LIBS.tmp/plugins/file"
  mvn -B -q -f images/connect/pom.xml -Dkafka.version="$KAFKA_VERSION" dependency:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$CONNECT_LIBS.tmp/libs" >"$ROOT/.cache/connect-mvn.log" 2>&1 ||
    { tail -n 20 "$ROOT/.cache/connect-mvn.log" >&2; die "mvn could not resolve Kafka Connect $KAFKA_VERSION"; }
  # the FileStream connectors go on the plugin path, not the worker's classpath
  mv "$CONNECT_LIBS.tmp/libs/connect-file-$KAFKA_VERSION.jar" "$CONNECT_LIBS.tmp/plugins/file/" ||
    die "connect-file-$KAFKA_VERSION.jar was not resolved"
  echo "$CONNECT_POM_HASH" >"$CONNECT_LIBS.tmp/.complete"
  rm -rf "$CONNECT_LIBS" && mv "$CONNECT_LIBS.tmp" "$CONNECT_LIBS"
  step_end "$(connect_jar_count) jars for Connect $KAFKA_VERSION"
fi

# ---------------------------------------------------------------------------------------------
step_start connect-image
CONNECT_FILES=(images/connect/Dockerfile images/connect/connect-distributed.properties images/connect/log4j2.properties images/connect/connect-start.sh)
CONNECT_INPUTS=$(hash_inputs "${CONNECT_FILES[@]}" images/connect/pom.xml -- "$KAFKA_VERSION" "$BASE_INPUTS")
if [ "$(image_label "$CONNECT_IMAGE" sluice.inputs)" = "$CONNECT_INPUTS" ]; then
  step_end "$CONNECT_IMAGE up to date"
elif [ $CHECK = 1 ]; then
  missing "$CONNECT_IMAGE (absent or built from other inputs)"
else
  ctx=$(mktemp -d)
  cp "${CONNECT_FILES[@]}" "$ctx/"
  cp -r "$CONNECT_LIBS/libs" "$CONNECT_LIBS/plugins" "$ctx/"
  "$DOCKER" build -q --build-arg "BASE=$BASE_IMAGE" --label "sluice.inputs=$CONNECT_INPUTS" \
    --label "sluice.kafka.version=$KAFKA_VERSION" -t "$CONNECT_IMAGE" "$ctx" >/dev/null ||
    { rm -rf "$ctx"; die "docker build of $CONNECT_IMAGE failed"; }
  rm -rf "$ctx"
  step_end "built $CONNECT_IMAGE"
fi

# ---------------------------------------------------------------------------------------------
if [ $SKIP_RUNNER = 0 ] && [ -f runner/build.sh ]; then
  step_start runner-image
  if [ $CHECK = 1 ]; then
    if out=$(runner/build.sh --check 2>&1); then step_end "$out"; else missing "$out"; fi
  else
    out=$(runner/build.sh) || die "runner image build failed"
    step_end "$out"
  fi
fi

# ---------------------------------------------------------------------------------------------
step_start postgres
pg_ready() { command -v pg_isready >/dev/null && pg_isready -q -d "$PG_URL" -t 3; }
if pg_ready; then
  step_end "answers at $(echo "$PG_URL" | sed -E 's#//[^@]*@#//#')"
elif [ $CHECK = 1 ]; then
  missing "no PostgreSQL answers at $PG_URL"
elif [ -n "${SLUICE_PG_URL:-}" ]; then
  die "SLUICE_PG_URL=$SLUICE_PG_URL does not answer; start that server or unset SLUICE_PG_URL"
else
  is_root && is_debian || die "no PostgreSQL at $PG_URL and cannot install one (need root on Debian)"
  if ! ls /etc/postgresql/*/main >/dev/null 2>&1; then apt_install postgresql; fi
  ver=$(ls /etc/postgresql | sort -n | tail -n1)
  pg_ctlcluster --skip-systemctl-redirect "$ver" main start 2>/dev/null || pg_ctlcluster "$ver" main start
  # trust auth on loopback for the local test database, as on this machine kind
  for _ in $(seq 1 50); do pg_ready && break; sleep 0.2; done
  pg_ready || die "PostgreSQL $ver started but does not answer at $PG_URL"
  step_end "started PostgreSQL $ver"
fi

# ---------------------------------------------------------------------------------------------
step_start deno-deps
if [ -x "$DENO" ]; then
  if [ $CHECK = 1 ]; then
    step_end "(fetched on first use)"
  else
    (cd "$ROOT" && "$DENO" install --quiet >/dev/null 2>"$ROOT/.cache/deno-install.log") ||
      { cat "$ROOT/.cache/deno-install.log" >&2; die "deno install failed"; }
    step_end "npm dependencies cached"
  fi
fi

if [ ${#MISSING[@]} -gt 0 ]; then
  echo "[bootstrap] missing:" >&2
  printf '  - %s\n' "${MISSING[@]}" >&2
  exit 1
fi
echo "[bootstrap] ready"
