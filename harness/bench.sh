#!/usr/bin/env bash
# make bench: build our tree and upstream's with the benchmark profile
# (harness/config/bench.config instead of test.config), boot each under
# QEMU TCG with -icount shift=0,sleep=off, take the figures of
# tools/testing/selftests/kprobes/bench in both, and report them side by
# side (harness/bench.py): build/bench/bench.{txt,csv,png}.
# KTEST_ARCH (make ARCH=) arm64 or i386: that architecture's trees, logs
# and table (build/bench-ARCH/); i386 takes x86-64's figures, on the
# same targets built as 32-bit code (bench/kpb_asm.S, kpb_funcs.S,
# kpb_gen.S).
#   harness/bench.sh [ours|upstream]   rebuild and rerun one tree only,
#                                      reusing the other's last log
set -euo pipefail
H=$(cd "$(dirname "$0")" && pwd)
export KTEST_PROFILE=bench
. "$H/common.sh" ours

"$H/deps.sh" bench
trees=(upstream ours)
[ $# -gt 0 ] && trees=("$@")
for t in "${trees[@]}"; do
	"$H/prepare.sh" "$t"
	"$H/build.sh" "$t"
done
for t in "${trees[@]}"; do
	"$H/boot.sh" "$t" bench
done
exec python3 "$H/bench.py" --upstream "$LOGS/bench-upstream.out" \
	--ours "$LOGS/bench-ours.out" --out "$BUILD/bench$ASFX" --arch "$KTEST_ARCH"
