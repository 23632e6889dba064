#!/usr/bin/env bash
# The clients' Debian disk image: a minbase trixie with the tracing tools
# (harness/clients/packages), made by mmdebstrap into build/clients/rootfs
# (also the host-side chroot, see clients.sh), then turned into an ext4
# image, build/clients/rootfs.img, that QEMU boots with snapshot=on.  Both
# are cached and made again only when the package list, /sbin/ktest-init
# or this script changes.
#   harness/clients/rootfs.sh
set -euo pipefail
H=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$H/../.." && pwd)
OUT=$TOP/build/clients
SUITE=trixie
MIRROR=${KTEST_MIRROR:-http://deb.debian.org/debian}
say() { echo "ktest: $*"; }
die() { echo "ktest: ERROR: $*" >&2; exit 1; }

pkgs=$(sed -e 's/#.*//' "$H/packages" | tr -s ' \n' '\n' | grep . | paste -sd,)
stamp=$(printf '%s\n' "$SUITE $MIRROR $pkgs"; sha256sum "$H/ktest-init" "$H/rootfs.sh" | cut -d' ' -f1)
if [ -f "$OUT/rootfs.img" ] && [ -f "$OUT/rootfs.stamp" ] &&
   [ "$stamp" = "$(cat "$OUT/rootfs.stamp")" ]; then
	say "disk image build/clients/rootfs.img is up to date"
	exit 0
fi

start=$SECONDS
mkdir -p "$OUT"
rm -rf "$OUT/rootfs" "$OUT/rootfs.img" "$OUT/rootfs.stamp"
say "mmdebstrap: minbase $SUITE with $pkgs (log: build/logs/clients-rootfs.log)"
mkdir -p "$TOP/build/logs"
mmdebstrap --variant=minbase --include="$pkgs" \
	--customize-hook='install -m 755 '"$H"'/ktest-init "$1/sbin/ktest-init"' \
	--customize-hook='echo ktest > "$1/etc/hostname"' \
	"$SUITE" "$OUT/rootfs" "$MIRROR" > "$TOP/build/logs/clients-rootfs.log" 2>&1 ||
	{ tail -20 "$TOP/build/logs/clients-rootfs.log" >&2; die "mmdebstrap failed"; }

# The image: the tree's size plus room for what the clients write (the
# guest's writes go to QEMU's snapshot, not to this file).
mb=$(( $(du -sm "$OUT/rootfs" | cut -f1) * 5 / 4 + 1024 ))
mkfs.ext4 -q -F -L ktest-root -d "$OUT/rootfs" "$OUT/rootfs.img" "${mb}M" ||
	die "mkfs.ext4 -d failed"
printf '%s\n' "$stamp" > "$OUT/rootfs.stamp"
say "disk image build/clients/rootfs.img (${mb} MB) made in $((SECONDS - start)) s"
