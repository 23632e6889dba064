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
stamp=$(printf '%s\n' "$SUITE $MIRROR $pkgs ${arch[*]}"; sha256sum "$H/ktest-init" "$H/rootfs.sh" | cut -d' ' -f1)

if [ "$what" = toolchain ]; then
	T=$OUT/toolchain
	if [ -f "$T.stamp" ] && [ "$stamp" = "$(cat "$T.stamp")" ]; then
		say "toolchain tree build/clients/toolchain is up to date"
		exit 0
	fi
	start=$SECONDS
	mkdir -p "$OUT" "$TOP/build/logs"
	rm -rf "$T" "$T.stamp"
	say "mmdebstrap: minbase $SUITE with $pkgs (log: build/logs/clients-toolchain.log)"
	mmdebstrap --variant=minbase --include="$pkgs" "$SUITE" "$T" "$MIRROR" \
		> "$TOP/build/logs/clients-toolchain.log" 2>&1 ||
		{ tail -20 "$TOP/build/logs/clients-toolchain.log" >&2; die "mmdebstrap failed"; }
	printf '%s\n' "$stamp" > "$T.stamp"
	say "toolchain tree build/clients/toolchain made in $((SECONDS - start)) s"
	exit 0
fi

if [ -f "$OUT/rootfs.img" ] && [ -f "$OUT/rootfs.stamp" ] &&
   [ "$stamp" = "$(cat "$OUT/rootfs.stamp")" ]; then
	say "disk image ${OUT#$TOP/}/rootfs.img is up to date"
	exit 0
fi

start=$SECONDS
# Another architecture's maintainer scripts run through qemu-user: its
# binfmt_misc handler registered (harness/deps.sh installs it).  This
# registers it for the whole machine.
if [ -n "$DARCH" ]; then
	mountpoint -q /proc/sys/fs/binfmt_misc ||
		mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
	update-binfmts --enable "qemu-${KTEST_ARCH/arm64/aarch64}" 2>/dev/null || true
	arch-test "$DARCH" > /dev/null ||
		die "this machine cannot run $DARCH programs (qemu-user-static, binfmt_misc)"
fi
mkdir -p "$OUT"
rm -rf "$OUT/rootfs" "$OUT/rootfs.img" "$OUT/rootfs.stamp"
log=build/logs/clients-rootfs${DARCH:+-$DARCH}.log
say "mmdebstrap: minbase $SUITE ${DARCH:-amd64} with $pkgs (log: $log)"
mkdir -p "$TOP/build/logs"
mmdebstrap --variant=minbase "${arch[@]}" --include="$pkgs" \
	--customize-hook='install -m 755 '"$H"'/ktest-init "$1/sbin/ktest-init"' \
	--customize-hook='echo ktest > "$1/etc/hostname"' \
	"$SUITE" "$OUT/rootfs" "$MIRROR" > "$TOP/$log" 2>&1 ||
	{ tail -20 "$TOP/$log" >&2; die "mmdebstrap failed"; }

# The image: the tree's size plus room for what the clients write (the
# guest's writes go to QEMU's snapshot, not to this file).
mb=$(( $(du -sm "$OUT/rootfs" | cut -f1) * 5 / 4 + 1024 ))
mkfs.ext4 -q -F -L ktest-root -d "$OUT/rootfs" "$OUT/rootfs.img" "${mb}M" ||
	die "mkfs.ext4 -d failed"
printf '%s\n' "$stamp" > "$OUT/rootfs.stamp"
say "disk image ${OUT#$TOP/}/rootfs.img (${mb} MB) made in $((SECONDS - start)) s"
