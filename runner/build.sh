#!/usr/bin/env bash
# Builds the sluice runner image (`sluice runtime build`).
#
#   runner/build.sh           build the jar (host Maven) and the image unless an image built from
#                             the same inputs exists; prints the image ID (sha256:...) as the only
#                             stdout line
#   runner/build.sh --check   print the ID and exit 0 when the up-to-date image exists; otherwise
#                             print what is missing and exit 1
#
# Inputs (label sluice.inputs): sha256 over runner/pom.xml, runner/Dockerfile, runner/build.sh,
# every file under runner/src/main (path and content, in byte order) and the base image ID.
# Environment: SLUICE_DOCKER_CLI (default /usr/bin/docker), SLUICE_RUNNER_BASE (default
# BASE_IMAGE from scripts/versions.sh).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=scripts/versions.sh
. "$ROOT/scripts/versions.sh"
DOCKER=${SLUICE_DOCKER_CLI:-/usr/bin/docker}
BASE=${SLUICE_RUNNER_BASE:-$BASE_IMAGE}
CHECK=0
case "${1:-}" in
"") ;;
--check) CHECK=1 ;;
*)
  echo "runner/build.sh: unknown argument '$1' (expected --check)" >&2
  exit 2
  ;;
esac

base_id=$("$DOCKER" image inspect --format '{{.Id}}' "$BASE" 2>/dev/null) || {
  echo "base image $BASE is missing (run scripts/bootstrap.sh)"
  exit 1
}
version=$(sed -n 's:^  <version>\(.*\)</version>$:\1:p' runner/pom.xml | head -n1)
[ -n "$version" ] || { echo "runner/build.sh: cannot read the version from runner/pom.xml" >&2; exit 1; }

inputs=$(
  {
    find runner/src/main -type f -print0 | LC_ALL=C sort -z | while IFS= read -r -d '' f; do
      printf '%s\0%s\0' "$f" "$(sha256sum <"$f" | cut -c1-64)"
    done
    for f in runner/pom.xml runner/Dockerfile runner/build.sh; do
      printf '%s\0%s\0' "$f" "$(sha256sum <"$f" | cut -c1-64)"
    done
    printf 'base\0%s\0' "$base_id"
  } | sha256sum | cut -c1-64
)

# Found by the tag this script gives, never by labels alone: an image committed from a runner
# container (a test's `docker commit`) inherits the labels but not the tag.
find_image() {
  local id
  id=$("$DOCKER" image inspect --format '{{.Id}} {{index .Config.Labels "sluice.inputs"}}' \
    "sluice/runner:${inputs:0:12}" 2>/dev/null) || return 0
  [ "${id#* }" = "$inputs" ] && echo "${id%% *}"
  return 0
}

existing=$(find_image)
if [ -n "$existing" ]; then
  echo "$existing"
  exit 0
fi
if [ $CHECK = 1 ]; then
  echo "runner image for inputs ${inputs:0:12} (version $version, base $BASE) is missing: run runner/build.sh"
  exit 1
fi

command -v mvn >/dev/null || { echo "runner/build.sh: mvn is required on the host" >&2; exit 1; }
rm -rf runner/target/lib
mvn -B -q -Dstyle.color=never -f runner/pom.xml package -DskipTests >&2 || { echo "runner/build.sh: maven build failed" >&2; exit 1; }

ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
cp runner/Dockerfile "$ctx/"
cp -r runner/target/lib "$ctx/lib"
cp runner/target/sluice-runner.jar "$ctx/lib/sluice-runner.jar"
id=$(DOCKER_BUILDKIT=0 "$DOCKER" build -q --build-arg "BASE=$BASE" \
  --label sluice.image=runner --label "sluice.runner.version=$version" --label "sluice.inputs=$inputs" \
  -t "sluice/runner:${inputs:0:12}" "$ctx") || { echo "runner/build.sh: docker build failed" >&2; exit 1; }
case "$id" in
sha256:*) echo "$id" ;;
*)
  echo "runner/build.sh: docker build printed '$id', expected an image ID" >&2
  exit 1
  ;;
esac
