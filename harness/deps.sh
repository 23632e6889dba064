#!/usr/bin/env bash
# Install the Debian packages the harness needs, only those missing.
#   harness/deps.sh          packages for build, boot and test
#   harness/deps.sh check    the same plus what `make check` needs
#   harness/deps.sh bench    the same plus gnuplot for `make bench`
#   harness/deps.sh clients  the same plus what `make clients` needs: pahole
#                            (BTF), mmdebstrap, mkfs.ext4 -d
#   harness/deps.sh arches   the same plus the cross compilers and QEMUs
#                            of `make arches` (harness/arches.sh)
# KTEST_ARCH=arm64 (make ARCH=arm64) adds the cross compiler, its static C
# library (the suite's helper programs) and qemu-system-aarch64;
# KTEST_ARCH=i386 the same for i386 (qemu-system-i386 is in
# qemu-system-x86).  The guest's busybox comes later, as a package
# downloaded without installing it (harness/userland.sh).
set -euo pipefail

pkgs=(
	linux-source-6.12 qemu-system-x86
	gcc make libc6-dev flex bison bc libelf-dev libssl-dev
	ccache python3 perl git patch rsync tar xz-utils gzip cpio
	busybox-static kmod coreutils
)
case "${KTEST_ARCH:-x86_64}" in
arm64|aarch64) pkgs+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-system-arm
		      debian-archive-keyring) ;;
i386|i686|x86_32) pkgs+=(gcc-i686-linux-gnu libc6-dev-i386-cross debian-archive-keyring) ;;
esac
[ "${1:-}" = check ] && pkgs+=(sparse)
[ "${1:-}" = bench ] && pkgs+=(gnuplot-nox)
[ "${1:-}" = clients ] && pkgs+=(dwarves mmdebstrap e2fsprogs util-linux)
# arm64's clients image: its packages' scripts run under qemu-user.
[ "${1:-}" = clients ] && [ "${KTEST_ARCH:-x86_64}" = arm64 ] &&
	pkgs+=(qemu-user-static binfmt-support arch-test)
[ "${1:-}" = arches ] && pkgs+=(gcc-i686-linux-gnu gcc-arm-linux-gnueabihf
	gcc-mips-linux-gnu gcc-mips64el-linux-gnuabi64 gcc-powerpc-linux-gnu
	gcc-powerpc64le-linux-gnu gcc-powerpc64-linux-gnu gcc-s390x-linux-gnu
	gcc-riscv64-linux-gnu gcc-sparc64-linux-gnu gcc-hppa-linux-gnu
	gcc-hppa64-linux-gnu gcc-sh4-linux-gnu gcc-arc-linux-gnu
	qemu-system-arm qemu-system-mips qemu-system-ppc qemu-system-misc
	qemu-system-sparc
	# The static C libraries of the suite's helper programs, where the
	# suite boots (arches.sh, suite_darch): only recommended by the
	# compilers, and installed without recommendations here.
	libc6-dev-armhf-cross libc6-dev-mips64el-cross libc6-dev-ppc64el-cross
	libc6-dev-s390x-cross libc6-dev-riscv64-cross debian-archive-keyring)

if ! command -v dpkg-query >/dev/null; then
	echo "ktest: not a Debian system, not installing anything" >&2
	exit 0
fi

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "ktest: installing: ${missing[*]}"
[ "$(id -u)" -eq 0 ] || { echo "ktest: ERROR: need root to install packages" >&2; exit 1; }
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
