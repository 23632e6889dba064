# shellcheck shell=bash
# The test initramfs: the suite's modules and helper programs built
# against a kernel, and the image that carries them.  Sourced (after
# common.sh) by harness/build.sh, for x86-64, arm64 and i386, and by
# harness/arches.sh, for the other architectures.  Both functions use
# the caller's OBJ (the kernel's object directory), KARGS (its make's
# ARCH=, CROSS_COMPILE=, CC=), KMAKE (make -C src O=obj with KARGS),
# CROSS, SRC, PROFILE and JOBS.

# suite_build DIR LOG: copy the suite (tools/testing/selftests/kprobes,
# or the benchmark under it) to DIR, build its modules against OBJ and
# its helper programs, static.  Built from a copy under build/ so that no
# artifact lands in the repo.
suite_build()
{
	local suite=$1 log=$2 new_list mods progs prog
	new_list=$(mktemp)
	# (The benchmark module in bench/ is built only by the bench
	# profile; the test targets share its function generators,
	# bench/kpb_gen.S and bench/kpb_gen_arm64.S.)
	tracked_files "$SUITE_DIR" | tr '\0' '\n' | sed "s|^$SUITE_DIR/||" |
		{ if [ "$PROFILE" = test ]; then awk '!/^bench\// || $0 ~ /^bench\/kpb_gen(_arm64)?\.S$/'; else cat; fi; } |
		sort > "$new_list"
	if [ ! -s "$new_list" ]; then
		rm -rf "$suite" "$suite.list" "$new_list"
		return 0
	fi
	# A file removed from the repo: start the copy afresh.
	if [ -f "$suite.list" ] && [ -n "$(comm -23 "$suite.list" "$new_list")" ]; then
		rm -rf "$suite"
	fi
	mkdir -p "$suite"
	tr '\n' '\0' < "$new_list" |
		rsync -r --perms --checksum --from0 --files-from=- "$TOP/$SUITE_DIR/" "$suite/"
	mv "$new_list" "$suite.list"
	# The suite's modules: in test_modules/ (its TEST_GEN_MODS_DIR), or
	# at the top (the benchmark's).
	mods=$suite
	[ -d "$suite/test_modules" ] && mods=$suite/test_modules
	if [ -f "$mods/Makefile" ] || [ -f "$mods/Kbuild" ]; then
		say "building the test modules of $SUITE_DIR against ${OBJ#$TOP/}"
		kmake_logged "$log" make -C "$OBJ" M="$mods" "${KARGS[@]}" -j"$JOBS" modules ||
			die "test modules failed to build (full log: ${log#$TOP/})"
	fi
	# Its helper programs (TEST_GEN_PROGS_EXTENDED), static, as the
	# suite's lib.mk Makefile builds them (for another architecture with
	# its cross compiler and Debian's libc6-dev-<arch>-cross).
	progs=$(sed -n 's/^TEST_GEN_PROGS_EXTENDED[[:space:]]*:=//p' "$suite/Makefile" 2>/dev/null)
	for prog in $progs; do
		"${CROSS}gcc" -O2 -Wall -static -o "$suite/$prog" "$suite/$prog.c" >> "$log" 2>&1 ||
			die "$prog failed to build (full log: ${log#$TOP/})"
	done
}

# initramfs_stage STAGE SUITE USERLAND LOG: fill directory STAGE with the
# image's files: busybox from USERLAND ("/", the host's, or a root that
# harness/userland.sh unpacked), harness/init, the built suite SUITE at
# /kprobes, and for the test profile the kernel's modules (LOG is
# modules_install's) and upstream's ftrace selftests.  A busybox of
# another architecture cannot list its applets on this host: the image
# gets /bin/sh only, and harness/init links the others (busybox
# --install -s) before it uses them.
initramfs_stage()
{
	local stage=$1 suite=$2 userland=$3 log=$4 app ftrace
	rm -rf "$stage"
	mkdir -p "$stage"/{bin,dev,proc,sys,tmp,kprobes/samples}
	cp "$userland/bin/busybox" "$stage/bin/busybox"
	if [ "$userland" = / ]; then
		for app in $(/bin/busybox --list); do
			[ "$app" = busybox ] || ln -s busybox "$stage/bin/$app"
		done
	else
		ln -s busybox "$stage/bin/sh"
	fi
	mknod -m 600 "$stage/dev/console" c 5 1 2>/dev/null || true
	install -m 755 "$TOP/harness/init" "$stage/init"

	if [ -d "$suite" ]; then
		# Built modules and every file that is not a source or build
		# file, at the same relative paths.
		(cd "$suite" && find . -type f \( -name '*.ko' -o ! \( \
			-name '*.[chSo]' -o -name '*.mod' -o -name '*.mod.c' -o -name '.*' \
			-o -name Makefile -o -name Kbuild -o -name modules.order \
			-o -name Module.symvers -o -name '*.a' \) \) -print0 |
		 rsync -r --perms --from0 --files-from=- ./ "$stage/kprobes/")
	fi
	# Every function of the kprobes implementation (ours, the bridge
	# included, or upstream's with its rethook and objpool): the
	# kmemleak case counts a leak as a kprobes one when any frame of its
	# allocation backtrace is one of them.
	(cd "$OBJ" && "${CROSS}nm" --defined-only $(ls kernel/kprobes*.o kernel/kprobes/*.o \
		arch/*/kernel/kprobes/*.o arch/*/kernel/probes/*.o arch/*/probes/kprobes/*.o \
		arch/*/kernel/kprobes*.o \
		kernel/trace/rethook.o lib/objpool.o 2>/dev/null) 2>/dev/null) |
		awk 'NF == 3 && $2 ~ /^[tTwW]$/ { print $3 }' | sort -u > "$stage/kprobes/ours.syms"
	[ -s "$stage/kprobes/ours.syms" ] || die "no kprobes functions found in ${OBJ#$TOP/}"
	find "$OBJ/samples/kprobes" -maxdepth 1 -name '*.ko' -exec cp {} "$stage/kprobes/samples/" \; 2>/dev/null || true

	# The benchmark's initramfs needs only busybox and its module.
	[ "$PROFILE" = test ] || return 0
	# probe_random_offsets' sites, each with objdump's decode of it.
	python3 "$TOP/harness/offsets.py" "$OBJ/vmlinux" \
		"$stage/kprobes/offsets.txt" "$CROSS" > "$log.offsets" 2>&1 ||
		{ cat "$log.offsets" >&2; die "harness/offsets.py failed"; }
	say "$(cat "$log.offsets")"
	# All modules of the kernel (the samples) under /lib/modules, with
	# their modules.dep, for modprobe (upstream's kprobe_module.tc loads
	# trace-printk).
	kmake_logged "$log" "${KMAKE[@]}" INSTALL_MOD_PATH="$stage" INSTALL_MOD_STRIP=1 \
		modules_install || die "modules_install failed (full log: ${log#$TOP/})"
	# probe_all_functions' probes that must be refused, and why, from
	# the tables of vmlinux and of every module the image holds.
	python3 "$TOP/harness/forbidden.py" "$OBJ/vmlinux" "$OBJ/.config" \
		"$stage/kprobes/forbidden.txt" "$CROSS" \
		$(find "$stage" -name '*.ko' | sort) > "$log.forbidden" 2>&1 ||
		{ cat "$log.forbidden" >&2; die "harness/forbidden.py failed"; }
	say "$(cat "$log.forbidden")"

	# Upstream's ftrace selftests, unmodified from this tree: the runner,
	# its helpers and the kprobe cases, at /ftrace, next to /kprobes as in
	# tools/testing/selftests/.  run_tests.sh runs them with /bin/sh, as
	# ftracetest's first line says (busybox's).
	ftrace=$SRC/tools/testing/selftests/ftrace
	[ -f "$ftrace/ftracetest" ] || return 0
	mkdir -p "$stage/ftrace/test.d"
	cp -p "$ftrace/ftracetest" "$stage/ftrace/"
	cp -p "$ftrace/test.d/functions" "$stage/ftrace/test.d/"
	cp -rp "$ftrace/test.d/kprobe" "$stage/ftrace/test.d/"
	# Ours among them (already there in our tree; the upstream one runs
	# them too).
	tracked_files tools/testing/selftests/ftrace/test.d/kprobe |
		tr '\0' '\n' | while read -r tc; do
		cp -p "$TOP/$tc" "$stage/ftrace/test.d/kprobe/"
	done
}

# initramfs_pack STAGE OUT: the image of directory STAGE, a gzipped cpio
# archive owned by root, in file OUT.
initramfs_pack()
{
	(cd "$1" && find . -print0 | cpio --null -o -H newc --owner=0:0 --quiet) |
		gzip -1 > "$2"
}
