#!/usr/bin/env bash
# make check: style and static checks of our kernel files (not part of
# make test).  Needs a prepared tree (harness/prepare.sh ours).
#  1. scripts/checkpatch.pl --strict over our .c/.h files;
#  2. a sparse (C=2) + W=1 rebuild of the objects built from our .c files
#     and of the test modules;
#  3. the suite built and installed as a kselftest.
. "$(dirname "$0")/common.sh" ours

[ -f "$OBJ/.config" ] || die "run harness/prepare.sh ours first"
mkdir -p "$LOGS"
rm -f "$LOGS"/sparse*.log "$LOGS/checkpatch.log"
mapfile -d '' files < <(tracked_files kernel include arch samples lib "$SUITE_DIR")
csrc=() objs=()
for f in "${files[@]}"; do
	case "$f" in
	*.c|*.h) csrc+=("$f") ;;
	esac
	# Objects: those the configuration builds (make test built them),
	# so the backend of this architecture only (make check ARCH=arm64
	# for the other) and no code of an option it leaves out.
	case "$f" in
	"$SUITE_DIR"/*) ;;
	*.c) [ -f "$OBJ/${f%.c}.o" ] && objs+=("${f%.c}.o") ;;
	esac
done
[ ${#csrc[@]} -gt 0 ] || { say "no C files of ours yet"; exit 0; }

rc=0
say "checkpatch --strict over ${#csrc[@]} files"
(cd "$TOP" && perl "$SRC/scripts/checkpatch.pl" --strict --no-tree --color=never \
	-f "${csrc[@]}") | tee "$LOGS/checkpatch.log" || rc=1

if [ ${#objs[@]} -gt 0 ]; then
	say "sparse + W=1 over: ${objs[*]}"
	kmake_logged "$LOGS/sparse.log" "${KMAKE[@]}" -k -j"$JOBS" C=2 W=1 "${objs[@]}" || rc=1
fi
if [ -f "$TDIR/suite/test_modules/Makefile" ]; then
	say "sparse + W=1 over the test modules"
	kmake_logged "$LOGS/sparse-suite.log" make -C "$OBJ" M="$TDIR/suite/test_modules" \
		"${KARGS[@]}" -k -j"$JOBS" C=2 W=1 modules || rc=1
fi
# The benchmark module, when `make bench` has built it.
if [ -f "$TDIR/suite-bench/Makefile" ] && [ -f "$TDIR/obj-bench/Module.symvers" ]; then
	say "sparse + W=1 over the benchmark module"
	kmake_logged "$LOGS/sparse-bench.log" make -C "$TDIR/obj-bench" M="$TDIR/suite-bench" \
		"${KARGS[@]}" -k -j"$JOBS" C=2 W=1 modules || rc=1
fi
# The suite as a kernel selftest: built and installed through
# tools/testing/selftests like any other, every area script listed.
if [ -f "$OBJ/Module.symvers" ]; then
	say "the suite as a kselftest (make -C tools/testing/selftests TARGETS=kprobes install)"
	inst=$(mktemp -d)
	if kmake_logged "$LOGS/kselftest-install.log" make -C "$SRC/tools/testing/selftests" \
		TARGETS=kprobes KDIR="$OBJ" ARCH="$KARCH" ${CROSS:+CROSS_COMPILE=$CROSS} \
		CC="${CROSS}gcc" INSTALL_PATH="$inst" install; then
		want=$(sed -n '/^TEST_PROGS :=/,/[^\\]$/p' "$SRC/$SUITE_DIR/Makefile" |
			sed -e 's/^TEST_PROGS :=//' -e 's/\\//g' | wc -w)
		got=$(grep -c '^kprobes:kprobes_.*\.sh$' "$inst/kselftest-list.txt")
		mods=$(find "$inst/kprobes/test_modules" -name '*.ko' | wc -l)
		say "kselftest: $got of $want scripts listed, $mods modules installed"
		[ "$got" -eq "$want" ] && [ "$want" -gt 0 ] && [ "$mods" -gt 0 ] || rc=1
	else
		say "kselftest install failed (build/logs/kselftest-install.log)"
		rc=1
	fi
	rm -rf "$inst"
	# Leave the tree as the overlay made it (series-check compares it).
	kmake_logged "$LOGS/kselftest-clean.log" make -C "$SRC/tools/testing/selftests" \
		TARGETS=kprobes KDIR="$OBJ" ARCH="$KARCH" ${CROSS:+CROSS_COMPILE=$CROSS} \
		CC="${CROSS}gcc" clean || rc=1
fi
# Count what is said of our files, and what names no file (cc1, modpost);
# an upstream file that a prepare step rebuilt (the arm64 vDSO) is not ours.
ours=$(printf '%s\n' "${files[@]}" | sed "s|^|$SRC/|; s|$|:|")
said=$(cat "$LOGS"/sparse*.log 2>/dev/null | grep -E '(warning|error):' || true)
n=$({ grep -vE "^$SRC/" <<<"$said"; grep -F "$ours" <<<"$said"; } | grep -c . || true)
[ "$n" -eq 0 ] || rc=1
say "sparse/W=1: $n warnings or errors (logs: ${LOGS#"$TOP"/}/sparse*.log, ${LOGS#"$TOP"/}/checkpatch.log)"
exit $rc
