#!/usr/bin/env bash
# Boot a built tree (harness/build.sh first) in QEMU.
#   harness/boot.sh ours|upstream test    run the tests, judge the logs
#   harness/boot.sh ours|upstream run     load the kprobe samples, show them
#   harness/boot.sh ours|upstream shell   interactive shell (humans only)
# Logs: build/logs/<mode>-<tree>.log (kernel console, ttyS0) and
#       build/logs/<mode>-<tree>.out (user space in the guest, ttyS1).
. "$(dirname "$0")/common.sh" "${1:-}"
MODE=${2:-test}

KERNEL=$OBJ/arch/x86/boot/bzImage
INITRD=$TDIR/initramfs.cpio.gz
[ -f "$KERNEL" ] && [ -f "$INITRD" ] || die "no kernel or initramfs: run harness/build.sh $TREE"

append="console=ttyS0 loglevel=7 printk.time=0 panic=-1 ktest.tree=$TREE ktest.mode=$MODE"
[ -n "${SYMBOL:-}" ] && append+=" ktest.symbol=$SYMBOL"
[ -n "${FTRACETEST:-}" ] && append+=" ktest.ftracetest=$FTRACETEST"
# Two sockets of one core: without ACPI the kernel finds the CPUs in
# SeaBIOS's MP table, which lists one CPU per socket.
qemu=(qemu-system-x86_64 -accel tcg -smp 2,sockets=2,cores=1,threads=1 -m 1G -nodefaults -no-user-config
      -display none -no-reboot -kernel "$KERNEL" -initrd "$INITRD" -append "$append")

if [ "$MODE" = shell ]; then
	say "booting $NAME kernel; leave with 'exit' (or Ctrl-A X)"
	exec "${qemu[@]}" -serial mon:stdio -serial null
fi

case "$MODE" in
test) limit=${KTEST_TIMEOUT:-900} ;;
run)  limit=${KTEST_TIMEOUT:-300} ;;
*)    die "unknown mode $MODE" ;;
esac
mkdir -p "$LOGS"
log=$LOGS/$MODE-$TREE.log out=$LOGS/$MODE-$TREE.out
rm -f "$log" "$out"
say "booting $NAME kernel ($MODE, at most $limit s)"
start=$SECONDS
status=0
timeout -k 10 "$limit" "${qemu[@]}" -monitor none \
	-serial file:"$log" -serial file:"$out" < /dev/null || status=$?
say "guest ran $((SECONDS - start)) s (VM exit status $status); logs: ${log#$TOP/}, ${out#$TOP/}"

if [ "$MODE" = run ]; then
	echo
	sed -e 's/\r$//' -e '/^KTEST-END$/d' "$out"
	echo
	exec python3 "$TOP/harness/ktap.py" --splats-only --console "$log" --output "$out" \
		--status "$status" --timeout "$limit"
fi

if [ "$TREE" = ours ] && ! grep -q '^CONFIG_KRETPROBES=y' "$OBJ/.config"; then
	say "note: CONFIG_KRETPROBES is not set: the kretprobe cases of upstream's" \
	    "lib/test_kprobes.c are compiled out until return probes land (issue 3)"
fi
exec python3 "$TOP/harness/ktap.py" --console "$log" --output "$out" \
	--status "$status" --timeout "$limit"
