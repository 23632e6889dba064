#!/usr/bin/env bash
# Build a prepared tree (harness/prepare.sh first): the kernel and its
# modules, the test modules of tools/testing/selftests/kprobes, and the
# initramfs that carries them.
#   harness/build.sh ours|upstream
. "$(dirname "$0")/common.sh" "${1:-}"

[ -f "$OBJ/.config" ] || die "${OBJ#$TOP/}/.config missing: run harness/prepare.sh $TREE"
start=$SECONDS

# ---- kernel --------------------------------------------------------------
say "building $NAME kernel in ${OBJ#$TOP/} (-j$JOBS, full log: ${LOGS#$TOP/}/build-$TREE$SFX.log)"
kmake_logged "$LOGS/build-$TREE$SFX.log" "${KMAKE[@]}" -j"$JOBS" all ||
	die "kernel build failed (full log: ${LOGS#$TOP/}/build-$TREE$SFX.log)"
say "kernel built in $((SECONDS - start)) s"

# The clients' kernel boots a Debian disk image, not an initramfs: its
# modules go to a staging directory that harness/clients/clients.sh puts
# on the guest's second disk.
if [ "$PROFILE" = clients ]; then
	rm -rf "$TDIR/modules$SFX"
	kmake_logged "$LOGS/modules-install-$TREE$SFX.log" "${KMAKE[@]}" \
		INSTALL_MOD_PATH="$TDIR/modules$SFX" INSTALL_MOD_STRIP=1 modules_install ||
		die "modules_install failed (full log: ${LOGS#$TOP/}/modules-install-$TREE$SFX.log)"
	exit 0
fi

# ---- test modules, initramfs ---------------------------------------------
# User space: the host's busybox on x86-64; for arm64 and i386 Debian's
# package of it for that architecture (DARCH), unpacked under
# build/userland-DARCH (harness/userland.sh): the host's busybox is
# x86-64 code, which a 32-bit kernel cannot run.
. "$TOP/harness/initramfs.sh"
SUITE=$TDIR/suite$SFX
suite_build "$SUITE" "$LOGS/suite-$TREE$SFX.log"
if [ -z "$DARCH" ]; then
	USERLAND=/
else
	USERLAND=$("$TOP/harness/userland.sh" "$DARCH")
fi
STAGE=$TDIR/initramfs$SFX
initramfs_stage "$STAGE" "$SUITE" "$USERLAND" "$LOGS/modules-install-$TREE$SFX.log"
initramfs_pack "$STAGE" "$INITRD"
say "initramfs: ${INITRD#$TOP/} ($(find "$STAGE/kprobes" -name '*.ko' | wc -l) modules); build step took $((SECONDS - start)) s"
