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

# ---- test modules --------------------------------------------------------
# Built from a copy under build/ so that no artifact lands in the repo.
SUITE=$TDIR/suite$SFX
new_list=$(mktemp)
trap 'rm -f "$new_list"' EXIT
# (The benchmark module in bench/ is built only by the bench profile; the
# test targets share its function generators, bench/kpb_gen.S and
# bench/kpb_gen_arm64.S.)
tracked_files "$SUITE_DIR" | tr '\0' '\n' | sed "s|^$SUITE_DIR/||" |
	{ if [ "$PROFILE" = test ]; then awk '!/^bench\// || $0 ~ /^bench\/kpb_gen(_arm64)?\.S$/'; else cat; fi; } |
	sort > "$new_list"
if [ -s "$new_list" ]; then
	# A file removed from the repo: start the copy afresh.
	if [ -f "$TDIR/suite$SFX.list" ] && [ -n "$(comm -23 "$TDIR/suite$SFX.list" "$new_list")" ]; then
		rm -rf "$SUITE"
	fi
	mkdir -p "$SUITE"
	tr '\n' '\0' < "$new_list" |
		rsync -r --perms --checksum --from0 --files-from=- "$TOP/$SUITE_DIR/" "$SUITE/"
	cp "$new_list" "$TDIR/suite$SFX.list"
	# The suite's modules: in test_modules/ (its TEST_GEN_MODS_DIR), or
	# at the top (the benchmark's).
	MODS=$SUITE
	[ -d "$SUITE/test_modules" ] && MODS=$SUITE/test_modules
	if [ -f "$MODS/Makefile" ] || [ -f "$MODS/Kbuild" ]; then
		say "building the test modules of $SUITE_DIR against $NAME tree"
		kmake_logged "$LOGS/suite-$TREE$SFX.log" make -C "$OBJ" M="$MODS" \
			"${KARGS[@]}" -j"$JOBS" modules ||
			die "test modules failed to build (full log: ${LOGS#$TOP/}/suite-$TREE$SFX.log)"
	fi
	# Its helper programs (TEST_GEN_PROGS_EXTENDED), static, as the
	# suite's lib.mk Makefile builds them (for arm64 with
	# aarch64-linux-gnu-gcc and libc6-dev-arm64-cross).
	progs=$(sed -n 's/^TEST_GEN_PROGS_EXTENDED[[:space:]]*:=//p' "$SUITE/Makefile" 2>/dev/null)
	for prog in $progs; do
		"${CROSS}gcc" -O2 -Wall -static -o "$SUITE/$prog" "$SUITE/$prog.c" \
			>> "$LOGS/suite-$TREE$SFX.log" 2>&1 ||
			die "$prog failed to build (full log: ${LOGS#$TOP/}/suite-$TREE$SFX.log)"
	done
else
	rm -rf "$SUITE" "$TDIR/suite$SFX.list"
fi

# ---- initramfs -----------------------------------------------------------
# User space: the host's busybox on x86-64; for arm64 Debian's arm64
# package of it, unpacked under build/userland-arm64
# (harness/userland.sh).  An arm64 busybox cannot list its applets on
# this host: the image gets /bin/sh only, and harness/init links the
# others (busybox --install -s) before it uses them.
if [ "$KTEST_ARCH" = x86_64 ]; then
	USERLAND=/
else
	USERLAND=$("$TOP/harness/userland.sh" "$KARCH")
fi
STAGE=$TDIR/initramfs$SFX
rm -rf "$STAGE"
mkdir -p "$STAGE"/{bin,dev,proc,sys,tmp,kprobes/samples}
cp "$USERLAND/bin/busybox" "$STAGE/bin/busybox"
if [ "$KTEST_ARCH" = x86_64 ]; then
	for app in $(/bin/busybox --list); do
		[ "$app" = busybox ] || ln -s busybox "$STAGE/bin/$app"
	done
else
	ln -s busybox "$STAGE/bin/sh"
fi
mknod -m 600 "$STAGE/dev/console" c 5 1 2>/dev/null || true
install -m 755 "$TOP/harness/init" "$STAGE/init"

if [ -d "$SUITE" ]; then
	# Built modules and every file that is not a source or build file,
	# at the same relative paths.
	(cd "$SUITE" && find . -type f \( -name '*.ko' -o ! \( \
		-name '*.[chSo]' -o -name '*.mod' -o -name '*.mod.c' -o -name '.*' \
		-o -name Makefile -o -name Kbuild -o -name modules.order \
		-o -name Module.symvers -o -name '*.a' \) \) -print0 |
	 rsync -r --perms --from0 --files-from=- ./ "$STAGE/kprobes/")
fi
# Every function of the kprobes implementation (ours, or upstream's with
# its rethook and objpool): the kmemleak case counts a leak as a kprobes
# one when any frame of its allocation backtrace is one of them.
(cd "$OBJ" && "${CROSS}nm" --defined-only $(ls kernel/kprobes*.o kernel/kprobes/*.o \
	arch/x86/kernel/kprobes/*.o arch/arm64/kernel/probes/*.o \
	kernel/trace/rethook.o lib/objpool.o 2>/dev/null) 2>/dev/null) |
	awk 'NF == 3 && $2 ~ /^[tTwW]$/ { print $3 }' | sort -u > "$STAGE/kprobes/ours.syms"
[ -s "$STAGE/kprobes/ours.syms" ] || die "no kprobes functions found in ${OBJ#$TOP/}"
find "$OBJ/samples/kprobes" -maxdepth 1 -name '*.ko' -exec cp {} "$STAGE/kprobes/samples/" \; 2>/dev/null || true

# The benchmark's initramfs needs only busybox and its module.
if [ "$PROFILE" = test ]; then
	# All modules of the kernel (the samples) under /lib/modules, with their
	# modules.dep, for modprobe (upstream's kprobe_module.tc loads trace-printk).
	kmake_logged "$LOGS/modules-install-$TREE$SFX.log" "${KMAKE[@]}" \
		INSTALL_MOD_PATH="$STAGE" INSTALL_MOD_STRIP=1 modules_install ||
		die "modules_install failed (full log: ${LOGS#$TOP/}/modules-install-$TREE$SFX.log)"

	# Upstream's ftrace selftests, unmodified from this tree: the runner, its
	# helpers and the kprobe cases, at /ftrace, next to /kprobes as in
	# tools/testing/selftests/.  run_tests.sh runs them with /bin/sh, as
	# ftracetest's first line says (busybox's).
	FTRACE=$SRC/tools/testing/selftests/ftrace
	if [ -f "$FTRACE/ftracetest" ]; then
		mkdir -p "$STAGE/ftrace/test.d"
		cp -p "$FTRACE/ftracetest" "$STAGE/ftrace/"
		cp -p "$FTRACE/test.d/functions" "$STAGE/ftrace/test.d/"
		cp -rp "$FTRACE/test.d/kprobe" "$STAGE/ftrace/test.d/"
		# Ours among them (already there in our tree; the upstream one
		# runs them too).
		tracked_files tools/testing/selftests/ftrace/test.d/kprobe |
			tr '\0' '\n' | while read -r tc; do
			cp -p "$TOP/$tc" "$STAGE/ftrace/test.d/kprobe/"
		done
	fi
fi

(cd "$STAGE" && find . -print0 | cpio --null -o -H newc --owner=0:0 --quiet) |
	gzip -1 > "$INITRD"
say "initramfs: ${INITRD#$TOP/} ($(find "$STAGE/kprobes" -name '*.ko' | wc -l) modules); build step took $((SECONDS - start)) s"
