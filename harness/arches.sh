#!/usr/bin/env bash
# Build the tree for every architecture that has kprobes and a Debian 12
# cross compiler, twice: with kprobes off, and with everything of ours
# the architecture can have (harness/config/arches/kprobes-on.config).
#   harness/arches.sh ours|upstream [ARCH...]
# ARCH names a row of the table below (default: all of them).  The
# object directories are build/arches-<tree>/<arch>-{off,on}; the result
# table goes to build/logs/arches-<tree>.txt, one line per build:
#   <arch> <off|on> <ok|FAILED|NOCC> <seconds> <what the config has>
# Exit status 1 if any build failed.
. "$(dirname "$0")/common.sh" "${1:-}"
. "$TOP/harness/initramfs.sh"
shift

# arch  ARCH=  compiler prefix  Debian package of the compiler  what our
# kprobes-on build must have (upstream's must have KPROBES and KRETPROBES
# everywhere).  The bridged architectures whose return trampoline is
# rethook's have their return probes through it (KRETPROBE_ON_RETHOOK).  ppc64 (big-endian,
# ELF ABI v1) and parisc64 have function descriptors: a C function
# pointer is the address of a descriptor, not of the function's text.
ARCH_TABLE="
i386      i386    i686-linux-gnu-          gcc-i686-linux-gnu          KPROBES,KRETPROBES,OPTPROBES,KPROBES_ON_FTRACE
arm64be   arm64   aarch64-linux-gnu-       gcc-aarch64-linux-gnu       KPROBES,KRETPROBES,OPTPROBES
arm       arm     arm-linux-gnueabihf-     gcc-arm-linux-gnueabihf     KPROBES,KRETPROBES,OPTPROBES,KPROBES_BRIDGE
mips      mips    mips-linux-gnu-          gcc-mips-linux-gnu          KPROBES,KRETPROBES,KPROBES_BRIDGE
mips64el  mips    mips64el-linux-gnuabi64- gcc-mips64el-linux-gnuabi64 KPROBES,KRETPROBES,KPROBES_BRIDGE
powerpc   powerpc powerpc-linux-gnu-       gcc-powerpc-linux-gnu       KPROBES,KRETPROBES,OPTPROBES,KRETPROBE_ON_RETHOOK,KPROBES_ON_FTRACE,KPROBES_BRIDGE
ppc64le   powerpc powerpc64le-linux-gnu-   gcc-powerpc64le-linux-gnu   KPROBES,KRETPROBES,OPTPROBES,KRETPROBE_ON_RETHOOK,KPROBES_ON_FTRACE,KPROBES_BRIDGE
ppc64     powerpc powerpc64-linux-gnu-     gcc-powerpc64-linux-gnu     KPROBES,KRETPROBES,OPTPROBES,KRETPROBE_ON_RETHOOK,KPROBES_BRIDGE,HAVE_FUNCTION_DESCRIPTORS
s390x     s390    s390x-linux-gnu-         gcc-s390x-linux-gnu         KPROBES,KRETPROBES,KRETPROBE_ON_RETHOOK,KPROBES_ON_FTRACE,KPROBES_BRIDGE
riscv64   riscv   riscv64-linux-gnu-       gcc-riscv64-linux-gnu       KPROBES,KRETPROBES,KRETPROBE_ON_RETHOOK,KPROBES_BRIDGE
sparc64   sparc   sparc64-linux-gnu-       gcc-sparc64-linux-gnu       KPROBES,KRETPROBES,KPROBES_BRIDGE
hppa      parisc  hppa-linux-gnu-          gcc-hppa-linux-gnu          KPROBES,KRETPROBES,KPROBES_ON_FTRACE,KPROBES_BRIDGE
parisc64  parisc  hppa64-linux-gnu-        gcc-hppa64-linux-gnu        KPROBES,KRETPROBES,KPROBES_ON_FTRACE,KPROBES_BRIDGE,HAVE_FUNCTION_DESCRIPTORS
sh4       sh      sh4-linux-gnu-           gcc-sh4-linux-gnu           KPROBES,KRETPROBES,KPROBES_BRIDGE
arc       arc     arc-linux-gnu-           gcc-arc-linux-gnu           KPROBES,KRETPROBES,KPROBES_BRIDGE
"
# How QEMU boots an architecture's kprobes-on kernel: machine and CPU
# options, the image (relative to the object directory), the console,
# and OUT, the device of the guest's second channel for the shell suite's
# output: "virtio" (a virtio console, hvc0, on virtio-mmio), "serial"
# (the second UART, ttyS1), "vty" (pseries' second vterm, hvc1), or
# none; TCG1, what the kernel is told when the recipe asks for
# single-threaded TCG.  Without an initramfs the KUnit suites run while
# the kernel boots, and the kernel then stops, finding no root file
# system (panic=-1 reboots, and -no-reboot ends QEMU there).
qemu_recipe()
{
	OUT= NCPUS=2 TCG1=
	case "$1" in
	# A PC; the suite's output on the second serial port.  Two sockets
	# of one core: without ACPI the kernel finds the CPUs in SeaBIOS's
	# MP table, which lists one CPU per socket.  Single-threaded TCG, as
	# make test ARCH=i386 boots it (harness/boot.sh says why): with a
	# thread per vCPU, both vCPUs of kpr_two_cpus kept taking an int3
	# at kpt_kret_a that memory no longer had (two boots of two), and
	# the kernel resumed them there for ever.
	i386)     QEMU=(qemu-system-i386 -m 1024 -smp 2,sockets=2,cores=1,threads=1
			-accel tcg,thread=single)
		  IMAGE=arch/x86/boot/bzImage CONSOLE=ttyS0 OUT=serial
		  TCG1=" ktest.tcg=single" ;;
	# Big-endian arm64: the kernel switches the CPU's data order itself.
	arm64be)  QEMU=(qemu-system-aarch64 -M virt -cpu max -m 1024 -smp 2)
		  IMAGE=arch/arm64/boot/Image CONSOLE=ttyAMA0 ;;
	arm)      QEMU=(qemu-system-arm -M virt -cpu cortex-a15 -m 1024 -smp 2)
		  IMAGE=arch/arm/boot/zImage CONSOLE=ttyAMA0 OUT=virtio ;;
	# The early UART until the 8250 driver takes over (each line once:
	# with keep_bootcon both print it).
	riscv64)  QEMU=(qemu-system-riscv64 -M virt -m 512 -smp 2 -bios default)
		  IMAGE=arch/riscv/boot/Image OUT=virtio
		  CONSOLE="ttyS0 earlycon=uart8250,mmio,0x10000000" ;;
	# The SCLP's VT220 console: QEMU's standard output.
	s390x)    QEMU=(qemu-system-s390x -M s390-ccw-virtio -cpu max -m 512 -smp 2)
		  IMAGE=arch/s390/boot/bzImage CONSOLE=ttysclp0 OUT=ccw ;;
	ppc64le)  QEMU=(qemu-system-ppc64 -M pseries -cpu power9 -m 1024 -smp 2)
		  IMAGE=vmlinux CONSOLE=hvc0 OUT=vty ;;
	ppc64)    QEMU=(qemu-system-ppc64 -M pseries -cpu power9 -m 1024 -smp 2)
		  IMAGE=vmlinux CONSOLE=hvc0 ;;
	# malta's CPUs here have no multi-threading ASE: one CPU.
	mips64el) QEMU=(qemu-system-mips64el -M malta -cpu MIPS64R2-generic -m 512)
		  IMAGE=vmlinux CONSOLE=ttyS0 OUT=serial NCPUS=1 ;;
	mips)     QEMU=(qemu-system-mips -M malta -m 512)
		  IMAGE=vmlinux CONSOLE=ttyS0 NCPUS=1 ;;
	# No recipe for sh4 yet: under r2d (its 64 MiB at 0x0c000000,
	# sh4.config; console on the SCIF, QEMU's second serial port:
	# -serial null -serial mon:stdio, console=ttySC1) the boot wrapper
	# stops in its decompressor's error loop, before the kernel runs
	# (README, "Every architecture": a branch on a flag never set).
	powerpc)  QEMU=(qemu-system-ppc -M ppce500 -m 512 -smp 2)
		  IMAGE=vmlinux CONSOLE=ttyS0 ;;
	*) return 1 ;;
	esac
}

# The Debian architecture whose busybox-static (bookworm) runs on the
# kprobes-on kernel: there the boot carries an initramfs and runs the
# shell suite (tools/testing/selftests/kprobes/run_tests.sh) once the
# KUnit suites are done (riscv64's busybox-static is trixie's:
# harness/userland.sh).  mips is big-endian, which Debian 12 no longer
# builds.
suite_darch()
{
	case "$1" in
	i386)     echo i386 ;;
	arm)      echo armhf ;;
	mips64el) echo mips64el ;;
	ppc64le)  echo ppc64el ;;
	riscv64)  echo riscv64 ;;
	s390x)    echo s390x ;;
	*) return 1 ;;
	esac
}

# qemu_out PATH: the QEMU arguments of the second channel (OUT) into
# file PATH, and the guest's name for it in OUTNAME.
qemu_out()
{
	case "$OUT" in
	virtio) OUTARGS=(-chardev "file,id=ktout,path=$1" -device virtio-serial-device
			 -device virtconsole,chardev=ktout) OUTNAME=hvc0 ;;
	ccw)    OUTARGS=(-chardev "file,id=ktout,path=$1" -device virtio-serial-ccw
			 -device virtconsole,chardev=ktout) OUTNAME=hvc0 ;;
	serial) OUTARGS=(-serial mon:stdio -serial "file:$1") OUTNAME=ttyS1 ;;
	vty)    OUTARGS=(-chardev "file,id=ktout,path=$1" -device spapr-vty,chardev=ktout)
		OUTNAME=hvc1 ;;
	esac
}

# KUnit cases that fail on both trees for a reason outside kprobes, as
# SUITE:CASE lines: harness/expected-arches' "fail | kunit:SUITE.CASE"
# rows for ARCH, with their reasons there.  A boot may fail these and no
# others; each one it fails is counted as declared.
kunit_known_fail()
{
	awk -F'|' -v arch="$1" '
		{ gsub(/^[ \t]+|[ \t]+$/, "", $2); gsub(/^[ \t]+|[ \t]+$/, "", $3) }
		$2 == "fail" && $3 ~ /^kunit:/ &&
		("," $1 ",") ~ ("[, ]arches(@" arch ")?[ ,]") {
			c = substr($3, 7); sub(/\./, ":", c); print c
		}' "$TOP/harness/expected-arches"
}

# What a boot must show: each KUnit suite and its number of cases.
# kprobes_test is lib/test_kprobes.c (KPROBES_SANITY_TEST); kretprobe_pool
# is ours, and runs wherever there are return probes; kprobes_entry is
# ours (four cases, one more with jump optimization, two more with
# return probes).
BOOT_SUITES="kprobes_test:- kretprobe_pool:5 kprobes_entry:-"

# boot ARCH OBJ LOG [INITRD OUTLOG]: boot and judge; prints "N/M" (KUnit
# cases passed of those required), and with an initramfs the shell
# suite's "suite=P/F/S" (passed, failed, skipped, as harness/ktap.py
# judged both logs against harness/expected-arches); returns non-zero
# unless all passed.
boot()
{
	local arch=$1 obj=$2 log=$3 initrd=${4:-} outlog=${5:-} limit pass=0 need=0
	local suite n got bad c append expect judged= declared=0
	qemu_recipe "$arch" || { echo "-"; return 0; }
	command -v "${QEMU[0]}" >/dev/null || { echo "noqemu"; return 1; }
	append="console=$CONSOLE panic=-1 ktest.pace=$PACE$TCG1"
	OUTARGS=()
	if [ -n "$initrd" ]; then
		# The whole shell suite, after the KUnit suites: longer than
		# arm64's make test boot (2,400 s).
		limit=$(paced 3000)
		qemu_out "$outlog"
		: > "$outlog"
		append+=" ktest.mode=test ktest.tree=$TREE ktest.out=$OUTNAME"
		# (With one CPU the suite's cpus case skips, saying so.)
		[ "$NCPUS" -lt 2 ] || append+=" ktest.cpus=$NCPUS"
		append+=" printk.time=0"
		[ -n "${FTRACETEST:-}" ] && append+=" ktest.ftracetest=$FTRACETEST"
		[ -n "${KTEST_ONLY:-}" ] && append+=" ktest.only=$KTEST_ONLY"
		OUTARGS+=(-initrd "$initrd")
	else
		limit=$(paced 600)
	fi
	# QEMU's own choice of TCG threads (one per vCPU where it can): with
	# a single thread for both, arm's stop_machine() (its text patching,
	# and mark_rodata_ro()) kept both CPUs in multi_cpu_stop() for
	# minutes, RCU reporting stalls, and user space never started.  The
	# suite's cases that patch code under a running CPU then skip
	# (i386's recipe asks for one thread and runs them).
	# (Created here: the loop below reads it before QEMU may have.)
	: > "$log"
	timeout -k 10 "$limit" "${QEMU[@]}" -nographic -no-reboot \
		-kernel "$obj/$IMAGE" "${OUTARGS[@]}" -append "$append" \
		< /dev/null > "$log" 2>&1 &
	qpid=$!
	# Some machines cannot reboot (malta halts): the panic that ends a
	# boot without an initramfs, or the suite's end marker, ends QEMU.
	while kill -0 "$qpid" 2>/dev/null; do
		if grep -q "Kernel panic - not syncing" "$log" ||
		   { [ -n "$outlog" ] && grep -q "^KTEST-END" "$outlog"; }; then
			sleep 5
			kill "$qpid" 2>/dev/null || true
			break
		fi
		sleep 2
	done
	wait "$qpid" 2>/dev/null || true
	if [ -n "$initrd" ]; then
		# Every result of both logs, the splats, the end marker, and
		# what harness/expected-arches says this architecture must run
		# and may skip.
		# Upstream's boot is counted, not held to expected-arches,
		# which describes our kernel: its failures are listed, and
		# the README says why each differs.
		expect=$TOP/harness/expected-arches
		[ "$TREE" = ours ] || expect=-
		python3 "$TOP/harness/ktap.py" --label arches --arch "$arch" \
			--console "$log" --output "$outlog" --timeout "$limit" \
			--expect "$expect" > "${outlog%.out}.judge" 2>&1 ||
			judged=FAILED
		judged=" suite=$(tail -1 "${outlog%.out}.judge" |
			sed -E 's/([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped.*/\1\/\2\/\3/')${judged:+,FAILED}"
	fi
	for suite in $BOOT_SUITES; do
		n=${suite#*:} suite=${suite%%:*}
		# test_kprobes: three kprobe cases, two kretprobe ones, two more
		# where the architecture's stack traces go through the trampoline.
		if [ "$suite" = kprobes_test ]; then
			n=3
			if grep -q "^CONFIG_KRETPROBES=y" "$obj/.config"; then
				n=5
				grep -q "^CONFIG_ARCH_CORRECT_STACKTRACE_ON_KRETPROBE=y" "$obj/.config" &&
					n=7
			fi
		fi
		if [ "$suite" = kprobes_entry ]; then
			[ "$TREE" = ours ] || continue
			n=4
			grep -q "^CONFIG_OPTPROBES=y" "$obj/.config" && n=$((n + 1))
			grep -q "^CONFIG_KRETPROBES=y" "$obj/.config" && n=$((n + 2))
		fi
		# Ours has it wherever it has return probes; upstream never.
		if [ "$suite" = kretprobe_pool ]; then
			[ "$TREE" = ours ] && grep -q "^CONFIG_KRETPROBES=y" "$obj/.config" ||
				continue
		fi
		need=$((need + n))
		# KUnit's per-suite line: "# <suite>: pass:P fail:F skip:S total:T"
		got=$(sed -n "s/.*# $suite: pass:\([0-9]*\) fail:\([0-9]*\) skip:0 total:$n.*/\1 \2/p" "$log" | tail -1)
		[ -n "$got" ] || continue
		set -- $got
		got=$1 bad=$2
		# Failures count only where each is a declared one.
		for c in $(kunit_known_fail "$arch" | sed -n "s/^$suite://p"); do
			grep -q "not ok [0-9]* $c\b" "$log" && bad=$((bad - 1))
		done
		if [ "$bad" -eq 0 ]; then
			pass=$((pass + got))
			declared=$((declared + n - got))
		fi
	done
	[ "$declared" -eq 0 ] || judged=" +$declared declared$judged"
	echo "$pass/$need$judged"
	[ $((pass + declared)) -eq "$need" ] && [[ "$judged" != *FAILED* ]]
}

# suite_stage ARCH OBJ KARCH CROSS DARCH INITRD: the shell suite built
# against the kprobes-on kernel in OBJ, and the initramfs INITRD that
# carries it with Debian's busybox-static for DARCH (harness/initramfs.sh,
# as make test's).
suite_stage()
{
	local arch=$1 darch=$5 initrd=$6 userland stage=$ADIR/$1-initramfs
	local log=$LOGS/arches-$TREE-$arch-suite.log
	OBJ=$2 CROSS=$4 PROFILE=test
	KARGS=(ARCH="$3" CROSS_COMPILE="$CROSS" CC="ccache ${CROSS}gcc" HOSTCC=gcc)
	KMAKE=(make -C "$SRC" O="$OBJ" "${KARGS[@]}")
	: > "$log"
	userland=$("$TOP/harness/userland.sh" "$darch" 2>> "$log") ||
		{ say "$arch: no busybox-static for $darch (${log#$TOP/})"; return 1; }
	( suite_build "$ADIR/$arch-suite" "$log" &&
	  initramfs_stage "$stage" "$ADIR/$arch-suite" "$userland" "$log" ) >> "$log" 2>&1 ||
		{ tail -5 "$log" | sed 's/^/    /' >&2; return 1; }
	initramfs_pack "$stage" "$initrd"
	say "$arch: initramfs ${initrd#$TOP/} ($(find "$stage/kprobes" -name '*.ko' | wc -l) test modules, busybox $darch)"
}

# A compiler warning located in one of our files.
OURS_WARN='(kernel/kprobes/|include/linux/kprobes[a-z_]*\.h|samples/kprobes/)[^ ]*: warning:'

# The options a kprobes-on build reports (what the architecture offers).
REPORT=(KPROBES KRETPROBES KRETPROBE_ON_RETHOOK OPTPROBES KPROBES_ON_FTRACE
	KPROBE_EVENTS KPROBES_SANITY_TEST KPROBES_BRIDGE HAVE_FUNCTION_DESCRIPTORS)

# All of it in one function, read whole before it runs: the script may
# be edited while a long run is under way.
main()
{
want=("$@")
ADIR=$BUILD/arches-$TREE
CFGDIR=$TOP/harness/config/arches
RESULT=$LOGS/arches-$TREE.txt
mkdir -p "$ADIR" "$LOGS"
# One line per architecture and mode, kept across runs: a run replaces
# the lines of the builds it makes.
touch "$RESULT"

"$TOP/harness/prepare.sh" "$TREE" > "$LOGS/arches-prepare-$TREE.log" 2>&1 ||
	{ cat "$LOGS/arches-prepare-$TREE.log" >&2; die "preparing the $TREE tree failed"; }

pace_measure
failed=0
while read -r arch karch cross pkg must; do
	[ -n "$arch" ] || continue
	if [ ${#want[@]} -gt 0 ] && [[ " ${want[*]} " != *" $arch "* ]]; then
		continue
	fi
	if ! command -v "${cross}gcc" >/dev/null; then
		sed -i "/^$arch /d" "$RESULT"
		echo "$arch - NOCC 0 ${pkg} not installed" >> "$RESULT"
		say "$arch: ${cross}gcc missing (apt-get install $pkg)"
		failed=1
		continue
	fi
	# A compiler that is there now: no "NOCC" line left from before.
	sed -i "/^$arch - NOCC /d" "$RESULT"
	for mode in ${ARCHES_MODES:-off on}; do
		obj=$ADIR/$arch-$mode
		log=$LOGS/arches-$TREE-$arch-$mode.log
		mkdir -p "$obj"
		amake=(make -C "$SRC" O="$obj" ARCH="$karch" CROSS_COMPILE="$cross"
		       CC="ccache ${cross}gcc" HOSTCC=gcc)
		start=$SECONDS
		frags=("$CFGDIR/common.config" "$CFGDIR/$arch.config" "$CFGDIR/kprobes-$mode.config")
		cfg=$obj/.config.arches
		if ! "${amake[@]}" KCONFIG_CONFIG=.config.arches tinyconfig > "$log" 2>&1; then
			sed -i "/^$arch $mode /d" "$RESULT"
			echo "$arch $mode FAILED 0 tinyconfig" >> "$RESULT"
			say "$arch $mode: tinyconfig failed (${log#$TOP/})"
			failed=1
			continue
		fi
		syms=$(sed -nE 's/^(# )?(CONFIG_[A-Za-z0-9_]+)[= ].*/\2/p' "${frags[@]}" | sort -u | paste -sd'|')
		{ grep -vE "^(# )?($syms)[= ]" "$cfg" || true; cat "${frags[@]}"; } > "$cfg.tmp"
		mv "$cfg.tmp" "$cfg"
		"${amake[@]}" KCONFIG_CONFIG=.config.arches olddefconfig >> "$log" 2>&1
		if cmp -s "$cfg" "$obj/.config"; then rm -f "$cfg"; else mv "$cfg" "$obj/.config"; fi
		have=
		for o in "${REPORT[@]}"; do
			grep -q "^CONFIG_$o=y" "$obj/.config" && have+="${have:+,}$o"
		done
		# A configuration that lost an option it must have fails.
		[ "$TREE" = upstream ] && must=KPROBES,KRETPROBES
		lost=
		if [ "$mode" = on ]; then
			for o in ${must//,/ }; do
				[ "$o" = - ] || [[ ",$have," == *",$o,"* ]] || lost+="${lost:+,}$o"
			done
		fi
		say "$arch $mode: building (${have:-no kprobes}; log ${log#$TOP/})"
		# The kprobes-on kernel's modules too: the samples and, with the
		# shell suite, its test modules are built against them.
		targets=(vmlinux)
		[ "$mode" = on ] && targets+=(modules)
		if "${amake[@]}" -j"$JOBS" "${targets[@]}" >> "$log" 2>&1; then
			st=ok
		else
			st=FAILED failed=1
			grep -m5 -E 'error:|Error [0-9]' "$log" | sed 's/^/    /' >&2 || true
		fi
		# Our files build without a warning, wherever they are included.
		if grep -qE "$OURS_WARN" "$log"; then
			grep -E "$OURS_WARN" "$log" | sed 's/^/    /' >&2
			st=FAILED failed=1
			say "$arch $mode: warnings in our files"
		fi
		if [ -n "$lost" ]; then
			st=FAILED failed=1
			say "$arch $mode: the configuration lacks $lost"
		fi
		booted=
		# The boot image (make all) only where there is a recipe that
		# needs more than vmlinux: some images need host tools beyond
		# the compiler (powerpc's uImage, mkimage).
		if [ "$mode" = on ] && [ "$st" = ok ] && [ -z "${ARCHES_NO_BOOT:-}" ] &&
		   qemu_recipe "$arch"; then
			[ "$IMAGE" = vmlinux ] ||
				"${amake[@]}" -j"$JOBS" all >> "$log" 2>&1 || st=FAILED failed=1
			initrd=
			if [ "$st" = ok ] && [ -z "${ARCHES_NO_SUITE:-}" ] &&
			   darch=$(suite_darch "$arch"); then
				initrd=$ADIR/$arch-initramfs.cpio.gz
				suite_stage "$arch" "$obj" "$karch" "$cross" "$darch" "$initrd" ||
					st=FAILED failed=1 initrd=
			fi
			if [ "$st" = ok ]; then
				say "$arch: booting (console: build/logs/arches-$TREE-$arch-boot.log${initrd:+, suite output: build/logs/arches-$TREE-$arch-boot.out})"
				booted=" kunit=$(boot "$arch" "$obj" "$LOGS/arches-$TREE-$arch-boot.log" \
					${initrd:+"$initrd" "$LOGS/arches-$TREE-$arch-boot.out"})" ||
					{ failed=1; [[ "$booted" == *FAILED* ]] || booted+=",FAILED"; }
			fi
		fi
		sed -i "/^$arch $mode /d" "$RESULT"
		echo "$arch $mode $st $((SECONDS - start)) ${have:--}${lost:+ lacks=$lost}$booted" >> "$RESULT"
		say "$arch $mode: $st in $((SECONDS - start)) s${booted}"
	done
done <<< "$ARCH_TABLE"

say "results (${RESULT#$TOP/}):"
column -t "$RESULT"
return $failed
}

# On one line: parsed with it before main() runs, whatever an edit of the
# file during the run moves.
main "$@"; exit
