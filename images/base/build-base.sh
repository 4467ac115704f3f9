#!/bin/sh
# Build the sluice base image (Debian bookworm + OpenJDK 17 JRE) without any container
# registry: debootstrap a rootfs, then `docker import` it. Needs root, a running dockerd and
# http access to a Debian mirror. Called by scripts/bootstrap.sh, which decides whether the
# image is missing or stale (label sluice.inputs differs from the inputs hash it passes in).
#   INPUTS_HASH=... TAG=sluice/base:jre17-bookworm images/base/build-base.sh
set -eu
MIRROR=${MIRROR:-http://deb.debian.org/debian}
SEC_MIRROR=${SEC_MIRROR:-http://deb.debian.org/debian-security}
SUITE=${SUITE:-bookworm}
PACKAGES=${PACKAGES:-openjdk-17-jre-headless}
TAG=${TAG:-sluice/base:jre17-bookworm}
INPUTS_HASH=${INPUTS_HASH:-unknown}
WORK=${WORK:-/var/tmp/sluice-base-build}
DOCKER=${DOCKER:-/usr/bin/docker}
ROOTFS=$WORK/rootfs

command -v debootstrap >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap

cleanup() { umount "$ROOTFS/proc" 2>/dev/null || true; }
trap cleanup EXIT
cleanup
rm -rf "$ROOTFS"
mkdir -p "$WORK"

echo "   debootstrap $SUITE ($PACKAGES) from $MIRROR"
debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$ROOTFS" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 ||
  { tail -n 30 "$WORK/debootstrap.log" >&2; exit 1; }

cat >"$ROOTFS/etc/apt/sources.list" <<SRC
deb $MIRROR $SUITE main
deb $MIRROR $SUITE-updates main
deb $SEC_MIRROR $SUITE-security main
SRC
# As in Debian's official images: never start services from maintainer scripts, keep no .debs.
printf '#!/bin/sh\nexit 101\n' >"$ROOTFS/usr/sbin/policy-rc.d"
chmod 755 "$ROOTFS/usr/sbin/policy-rc.d"
cat >"$ROOTFS/etc/apt/apt.conf.d/docker-clean" <<'CONF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
CONF
echo "   security and updates upgrade"
mount -t proc proc "$ROOTFS/proc" # java and some postinst scripts need /proc
chroot "$ROOTFS" sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get -y -qq upgrade && apt-get clean' \
  >"$WORK/upgrade.log" 2>&1 || { tail -n 30 "$WORK/upgrade.log" >&2; exit 1; }
chroot "$ROOTFS" java -version 2>&1 | head -n 1
umount "$ROOTFS/proc"

rm -rf "$ROOTFS"/var/lib/apt/lists/* "$ROOTFS"/var/cache/apt/* "$ROOTFS"/tmp/* \
  "$ROOTFS"/var/log/*.log "$ROOTFS"/var/cache/debconf/*-old
: >"$ROOTFS/etc/resolv.conf" # docker bind-mounts its own
: >"$ROOTFS/etc/hostname"

echo "   docker import as $TAG"
tar --numeric-owner -C "$ROOTFS" -c . | "$DOCKER" import \
  -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  -c 'ENV LANG=C.UTF-8' \
  -c 'ENV JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64' \
  -c "LABEL sluice.image=base sluice.inputs=$INPUTS_HASH sluice.base.suite=$SUITE sluice.base.mirror=$MIRROR sluice.base.packages=$PACKAGES" \
  -c 'CMD ["/bin/bash"]' \
  - "$TAG" >/dev/null
rm -rf "$ROOTFS"
"$DOCKER" run --rm "$TAG" java -version 2>&1 | head -n 1
