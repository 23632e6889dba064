#!/usr/bin/env bash
# The clients' Debian disk image: a minbase trixie with the tracing tools
# (harness/clients/packages), made by mmdebstrap into build/clients/rootfs
# (also the host-side chroot, see clients.sh), then turned into an ext4
# image, build/clients/rootfs.img, that QEMU boots with snapshot=on.  Both
# are cached and made again only when the package list, /sbin/ktest-init
# or this script changes.
#   harness/clients/rootfs.sh [image]
#   harness/clients/rootfs.sh toolchain
# toolchain: build/clients/toolchain, a host-side chroot only (no image)
# with the compilers BPF's selftests want (harness/clients/packages-
# toolchain), for make peer-tests.
set -euo pipefail
H=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$H/../.." && pwd)
say() { echo "ktest: $*"; }
die() { echo "ktest: ERROR: $*" >&2; exit 1; }
OUT=$TOP/build/clients
SUITE=trixie
# The image's architecture: the host's, or arm64's packages for make
# clients ARCH=arm64 (build/clients-arm64; mmdebstrap runs their
# maintainer scripts through qemu-user, harness/deps.sh).  The toolchain
# tree is always the host's.
DARCH=
case "${KTEST_ARCH:-x86_64}" in
x86_64) ;;
arm64|aarch64) DARCH=arm64 ;;
*) die "no clients image for ${KTEST_ARCH}" ;;
esac
MIRROR=${KTEST_MIRROR:-http://deb.debian.org/debian}

what=${1:-image}
case "$what" in
image) list=$H/packages ;;
toolchain) list=$H/packages-toolchain ;;
*) die "usage: $0 [image|toolchain]" ;;
esac
pkgs=$(sed -e 's/#.*//' "$list" | tr -s ' \n' '\n' | grep . | paste -sd,)
arch=()
if [ "$what" = image ] && [ -n "$DARCH" ]; then
	OUT=$OUT-$DARCH
	arch=(--architectures="$DARCH")
fi
# The toolchain tree also holds arm64's libraries, to link BPF's
# selftests for an arm64 guest (packages-toolchain's NAME:arm64).
[ "$what" = toolchain ] && arch=(--architectures=amd64,arm64)
stamp=$(printf '%s\n' "$SUITE $MIRROR $pkgs ${arch[*]}"; sha256sum "$H/ktest-init" "$H/rootfs.sh" | cut -d' ' -f1)

# The tree (and for the image, the disk image made from it), cached
# under a stamp of everything it is made from.
tree=$OUT/rootfs name=${OUT#$TOP/}/rootfs.img hooks=()
if [ "$what" = toolchain ]; then
	tree=$OUT/toolchain name=${OUT#$TOP/}/toolchain
elif [ ! -f "$OUT/rootfs.img" ]; then
	rm -f "$tree.stamp"
fi
if [ -f "$tree.stamp" ] && [ "$stamp" = "$(cat "$tree.stamp")" ]; then
	say "$name is up to date"
	exit 0
fi

start=$SECONDS
# Another architecture's maintainer scripts run through qemu-user: its
# binfmt_misc handler registered (harness/deps.sh installs it).  This
# registers it for the whole machine.  (The toolchain's arm64 packages
# are libraries and headers: nothing of them runs.)
if [ "$what" = image ] && [ -n "$DARCH" ]; then
	mountpoint -q /proc/sys/fs/binfmt_misc ||
		mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
	update-binfmts --enable "qemu-${KTEST_ARCH/arm64/aarch64}" 2>/dev/null || true
	arch-test "$DARCH" > /dev/null ||
		die "this machine cannot run $DARCH programs (qemu-user-static, binfmt_misc)"
fi
mkdir -p "$OUT" "$TOP/build/logs"
rm -rf "$tree" "$tree.stamp" "$OUT/rootfs.img"
[ "$what" = image ] &&
	hooks=(--customize-hook='install -m 755 '"$H"'/ktest-init "$1/sbin/ktest-init"'
	       --customize-hook='echo ktest > "$1/etc/hostname"')
# The toolchain tree is one for every guest: amd64, with arm64's
# libraries beside.
log=build/logs/clients-toolchain.log tarch=amd64+arm64
[ "$what" = image ] &&
	log=build/logs/clients-rootfs${DARCH:+-$DARCH}.log tarch=${DARCH:-amd64}
say "mmdebstrap: minbase $SUITE $tarch with $pkgs (log: $log)"
mmdebstrap --variant=minbase "${arch[@]}" --include="$pkgs" "${hooks[@]}" \
	"$SUITE" "$tree" "$MIRROR" > "$TOP/$log" 2>&1 ||
	{ tail -20 "$TOP/$log" >&2; die "mmdebstrap failed"; }
if [ "$what" = toolchain ]; then
	printf '%s\n' "$stamp" > "$tree.stamp"
	say "$name made in $((SECONDS - start)) s"
	exit 0
fi

# The image: the tree's size plus room for what the clients write (the
# guest's writes go to QEMU's snapshot, not to this file).
mb=$(( $(du -sm "$OUT/rootfs" | cut -f1) * 5 / 4 + 1024 ))
mkfs.ext4 -q -F -L ktest-root -d "$OUT/rootfs" "$OUT/rootfs.img" "${mb}M" ||
	die "mkfs.ext4 -d failed"
printf '%s\n' "$stamp" > "$tree.stamp"
say "disk image $name (${mb} MB) made in $((SECONDS - start)) s"
