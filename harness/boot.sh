#!/usr/bin/env bash
# Boot a built tree (harness/build.sh first) in QEMU.
#   harness/boot.sh ours|upstream test    run the tests, judge the logs
#   harness/boot.sh ours|upstream run     load the kprobe samples, show them
#   harness/boot.sh ours|upstream bench   the benchmark (KTEST_PROFILE=bench
#                                         build; harness/bench.sh)
#   harness/boot.sh ours|upstream shell   interactive shell (humans only)
# Logs: build/logs/<mode>-<tree>.log (kernel console, ttyS0) and
#       build/logs/<mode>-<tree>.out (user space in the guest, ttyS1);
#       test-preempt-<tree>.* for the preempt configuration's test boot.
#       arm64 (KTEST_ARCH=arm64): build/logs-arm64/, the same names; the
#       console is virt's PL011 (ttyAMA0), user space a virtio console
#       (hvc0).  i386 (KTEST_ARCH=i386): build/logs-i386/, a PC as on
#       x86-64 (ttyS0, ttyS1).
# Environment: FTRACETEST, PROBE_ALL, PROBE_ALL_LOG, SYMBOL (passed to the guest),
# KTEST_QEMU_EXTRA (more QEMU arguments, one-off looks such as "-s"),
# TCG=multi and KTEST_ONLY=case,case (one-off runs), KTEST_TIMEOUT (seconds
# per boot, as given), KTEST_BASE_LIMIT (seconds per boot on the tuned
# machine, scaled by the pace), KTEST_PACE, KTEST_CPU_QUOTA (common.sh,
# "pace"), KTEST_VARIANTS (the configurations test mode boots, default
# "base preempt"; the others boot base).
. "$(dirname "$0")/common.sh" "${1:-}"
MODE=${2:-test}

# Every configuration a test run boots must have been built.
for v in $([ "$MODE" = test ] && echo "$KTEST_VARIANTS" || echo base); do
	variant_set "$v"
	[ -f "$OBJ/$KIMAGE" ] && [ -f "$INITRD" ] ||
		die "no kernel or initramfs of the $v configuration: run harness/build.sh $TREE"
done
variant_set base

CPUS=${KTEST_CPUS:-2}

# qemu_cmd TCGMODE ONLY: fill qemu[] for one boot.  Both vCPUs run on one
# host thread (single-threaded TCG): code that one vCPU patches while the
# other runs it is then coherent, which multi-threaded TCG (QEMU 7.2) does
# not guarantee.  The kernel's own patching hit that too: with jump labels
# on, a multi-threaded boot hung in text_poke_bp() for good, its other
# vCPU stuck with interrupts off at the sched_switch jump label just
# turned back into a nop.  The guest sees ktest.tcg=single and runs its
# cross-CPU patching cases.  TCGMODE "multi" (TCG=multi, a one-off run)
# gives each vCPU its own thread; those cases then skip.  ONLY limits
# run_tests.sh to those cases.
qemu_cmd()
{
	local accel=tcg append
	local loglevel=7 icount=()
	# The benchmark: the guest clock counts instructions (QEMU then runs
	# the vCPUs in turn on one thread), and no console output between
	# figures.
	if [ "$MODE" = bench ]; then
		loglevel=5
		icount=(-icount shift=0,sleep=off)
		# arm64's "max" CPU has RNDR, which QEMU answers from the
		# host's entropy: the guest's random numbers, and with them
		# some figures, would change from boot to boot.  Seeded, they
		# repeat.  (x86-64's qemu64 has no RDRAND.)
		[ "$KTEST_ARCH" = arm64 ] && icount+=(-seed 1)
	fi
	local console=ttyS0
	[ "$KTEST_ARCH" = arm64 ] && console="ttyAMA0 ktest.out=hvc0"
	append="console=$console loglevel=$loglevel printk.time=0 panic=-1 ktest.tree=$TREE ktest.mode=$MODE"
	append+=" ktest.config=$VARIANT ktest.cpus=$CPUS ktest.pace=${PACE:-100}${VCMDLINE:+ $VCMDLINE}"
	[ -n "${SYMBOL:-}" ] && append+=" ktest.symbol=$SYMBOL"
	[ -n "${FTRACETEST:-}" ] && append+=" ktest.ftracetest=$FTRACETEST"
	[ -n "${PROBE_ALL:-}" ] && append+=" ktest.probe_all=$PROBE_ALL"
	[ -n "${PROBE_ALL_LOG:-}" ] && append+=" ktest.probe_all_log"
	[ -n "$2" ] && append+=" ktest.only=$2"
	# (The benchmark's icount runs the vCPUs on one thread anyway.)
	if [ "$1" != multi ] && [ "$MODE" != bench ]; then
		accel=tcg,thread=single
		append+=" ktest.tcg=single"
	fi
	# Two sockets of one core: without ACPI the kernel finds the CPUs in
	# SeaBIOS's MP table, which lists one CPU per socket.
	# The tests run on a vCPU with SMAP, so that user access regions
	# (stac ... clac) are real and handlers can be checked to run outside
	# them; the benchmark keeps the plain model its figures were taken on.
	cpu=qemu64,+smap
	[ "$MODE" = bench ] && cpu=qemu64
	if [ "$KTEST_ARCH" = x86_64 ]; then
		qemu=(qemu-system-x86_64 -accel "$accel" -cpu "$cpu"
		      -smp $CPUS,sockets=$CPUS,cores=1,threads=1 -m 1G)
	elif [ "$KTEST_ARCH" = i386 ]; then
		# The same PC and CPU model, less what only long mode has
		# (qemu-system-i386 drops it anyway, warning about each).
		qemu=(qemu-system-i386 -accel "$accel" -cpu "$cpu,-lm,-syscall"
		      -smp $CPUS,sockets=$CPUS,cores=1,threads=1 -m 1G)
	else
		# arm64: QEMU's virt board; the "max" CPU has pointer
		# authentication (and BTI), its implementation-defined
		# algorithm being far cheaper to emulate than QARMA.  CPUs
		# come from the device tree, brought up through PSCI.  A GICv3,
		# for pseudo-NMI (harness/config/arm64.config).
		qemu=(qemu-system-aarch64 -M virt,gic-version=3 -accel "$accel"
		      -cpu max,pauth-impdef=on -smp $CPUS -m 1G)
	fi
	qemu+=(-nodefaults -no-user-config -display none -no-reboot
	       "${icount[@]}" -kernel "$OBJ/$KIMAGE" -initrd "$INITRD"
	       -append "$append")
	# A one-off look inside a guest (for example "-s" for a gdb stub in
	# shell mode): never set by make.
	# shellcheck disable=SC2206
	[ -n "${KTEST_QEMU_EXTRA:-}" ] && qemu+=($KTEST_QEMU_EXTRA)
	return 0
}

# qemu_out LOG OUT: fill qout[] with the arguments that send the kernel
# console to LOG and the guest's output channel to OUT (QEMU character
# backends: file:PATH, mon:stdio, null).  x86-64 and i386: two serial
# ports.  arm64's virt has one usable UART (the kernel console): the
# output goes to a virtio console on virtio-mmio, /dev/hvc0 in the guest.
qemu_out()
{
	if [ "$KTEST_ARCH" != arm64 ]; then
		qout=(-serial "$1" -serial "$2")
		return
	fi
	local backend=${2%%:*} path=
	[ "$backend" = file ] && path=,path=${2#file:}
	qout=(-serial "$1" -chardev "$backend,id=ktout$path"
	      -device virtio-serial-device -device virtconsole,chardev=ktout)
}

if [ "$MODE" = shell ]; then
	qemu_cmd "${TCG:-}" "${KTEST_ONLY:-}"
	say "booting $NAME kernel; leave with 'exit' (or Ctrl-A X)"
	qemu_out mon:stdio null
	exec "${qemu[@]}" "${qout[@]}"
fi

# Each boot's limit on the machine the harness was tuned on (a quiet host
# whose calibration guest takes PACE_REF_MS), scaled by the pace measured
# right before the boot (boot_once).  Upstream's test boots take longer:
# probe_all_functions costs it an ftrace update per probe (its preempt
# boot ran 1,138 s of 1,200 with one other guest on the host, and ran out
# with two): it gets 1,800 s.  arm64 emulates more slowly per case (its
# ftrace selftests alone took 200 s on a quiet host, 350 to 490 s beside
# two other guests, in both trees) and runs the same cases now: 2,400 s
# for either tree.  KTEST_TIMEOUT gives the limit itself, not scaled.
case "$MODE" in
test) if [ "$KTEST_ARCH" = arm64 ]; then
	base_limit=2400
      elif [ "$TREE" = upstream ]; then
	base_limit=1800
      else
	base_limit=1200
      fi ;;
run)  base_limit=300 ;;
bench) base_limit=900 ;;
*)    die "unknown mode $MODE" ;;
esac
base_limit=${KTEST_BASE_LIMIT:-$base_limit}
mkdir -p "$LOGS"

# What a boot must have run and may have skipped (harness/expected-TREE,
# harness/expected-run for make run),
# for whole runs: a one-off run (ONLY given by hand, TCG) is judged by its
# own plan only.
expect_file()
{
	local f=$TOP/harness/expected-$TREE
	[ "$MODE" = run ] && f=$TOP/harness/expected-run
	if [ -n "${KTEST_ONLY:-}" ] || [ -n "${TCG:-}" ] || [ ! -f "$f" ]; then
		echo -
	else
		echo "$f"
	fi
}

# boot_once TAG TCGMODE ONLY: one boot, logs in $LOGS/TAG-$TREE.{log,out};
# appends the ktap.py arguments that judge it to judge[].  The expectation
# files have rows for one architecture only ("LABEL@ARCH"): ktap.py is
# told which one ran.
judge=()
[ "$KTEST_ARCH" = x86_64 ] || judge+=(--arch "$KTEST_ARCH")
boot_once()
{
	local log=$LOGS/$1-$TREE.log out=$LOGS/$1-$TREE.out start status=0
	rm -f "$log" "$out"
	pace_measure
	limit=${KTEST_TIMEOUT:-$(paced "$base_limit")}
	qemu_cmd "$2" "$3"
	say "booting $NAME kernel ($1${2:+, $2-threaded TCG}${3:+, only $3}, at most $limit s)"
	start=$SECONDS
	qemu_out file:"$log" file:"$out"
	throttled timeout -k 10 "$limit" "${qemu[@]}" -monitor none "${qout[@]}" \
		< /dev/null || status=$?
	say "guest ran $((SECONDS - start)) s (VM exit status $status); logs: ${log#$TOP/}, ${out#$TOP/}"
	judge+=(--label "$1" --console "$log" --output "$out" --status "$status"
		--timeout "$limit" --expect "$(expect_file "$3")")
	last_out=$out
}

if [ "$MODE" = run ]; then
	boot_once run "${TCG:-}" "${KTEST_ONLY:-}"
	echo
	sed -e 's/\r$//' -e '/^KTEST-END$/d' "$last_out"
	echo
	# The samples report as KTAP: one that is missing, does not load or
	# does not fire fails the run (harness/expected-run needs both).
	exec python3 "$TOP/harness/ktap.py" "${judge[@]}"
fi

if [ "$MODE" = bench ]; then
	boot_once bench "" ""
	grep -q '^KTEST-END' "$last_out" ||
		die "the benchmark did not finish (logs: ${last_out#$TOP/}, ${last_out%.out}.log)"
	exec python3 "$TOP/harness/ktap.py" --splats-only "${judge[@]}"
fi

# Each configuration: the whole suite, in one boot.
for v in $KTEST_VARIANTS; do
	variant_set "$v"
	tag=
	[ "$v" = base ] || tag=-$v
	boot_once "test$tag" "${TCG:-}" "${KTEST_ONLY:-}"
done
exec python3 "$TOP/harness/ktap.py" "${judge[@]}"
