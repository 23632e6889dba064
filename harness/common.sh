# Shared settings for the harness scripts.  Source it with the tree name:
#   . harness/common.sh ours|upstream
# "ours" is the overlaid tree (build/ours), "upstream" the untouched
# baseline (build/baseline), "series" the tree make series-check builds
# patch by patch (build/series-tree).  KTEST_PROFILE=bench (harness/bench.sh)
# selects the benchmark build of the same source tree: its own object
# directory, configuration, module directory and initramfs;
# KTEST_PROFILE=clients (harness/clients/clients.sh) the distribution-like
# kernel the tracing tools run on, which boots a Debian disk image instead.
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$TOP/build

# The architecture built and booted (make ARCH=..., passed as KTEST_ARCH):
# x86_64, the default, natively; arm64, cross-built with
# aarch64-linux-gnu-gcc and booted under qemu-system-aarch64; or i386,
# cross-built with i686-linux-gnu-gcc (the host's gcc -m32 would need
# 32-bit C libraries for the suite's static helpers, which the cross
# compiler's libc6-dev-i386-cross brings) and booted under
# qemu-system-i386.  x86_64 keeps the directories it always had; the
# others carry the suffix -ARCH (ASFX): build/ours-arm64,
# build/baseline-i386, build/logs-i386 and so on.
#   KARCH    the kernel's ARCH= (i386: the 32-bit kernel of arch/x86)
#   CROSS    the cross toolchain's prefix (CROSS_COMPILE=), empty natively
#   KIMAGE   the kernel image QEMU boots, relative to the object directory
#   DARCH    the Debian architecture of the guest's busybox
#            (harness/userland.sh); empty: the host's
KTEST_ARCH=${KTEST_ARCH:-x86_64}
case "$KTEST_ARCH" in
x86_64|x86) KTEST_ARCH=x86_64 ASFX= KARCH=x86_64 CROSS= KIMAGE=arch/x86/boot/bzImage DARCH= ;;
arm64|aarch64) KTEST_ARCH=arm64 ASFX=-arm64 KARCH=arm64 CROSS=aarch64-linux-gnu-
	KIMAGE=arch/arm64/boot/Image DARCH=arm64 ;;
i386|i686|x86_32) KTEST_ARCH=i386 ASFX=-i386 KARCH=i386 CROSS=i686-linux-gnu-
	KIMAGE=arch/x86/boot/bzImage DARCH=i386 ;;
*) echo "unknown ARCH=$KTEST_ARCH (x86_64, arm64 or i386)" >&2; exit 2 ;;
esac
export KTEST_ARCH
LOGS=$BUILD/logs$ASFX
TARBALL=${KTEST_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
SUITE_DIR=tools/testing/selftests/kprobes	# relative to $TOP

TREE=${1:-}
case "$TREE" in
ours)     TDIR=$BUILD/ours$ASFX NAME="our" ;;
upstream) TDIR=$BUILD/baseline$ASFX NAME="the upstream" ;;
# The tree `make series-check` makes by git am of the series
# (harness/series/check.sh): src is that git tree, obj its builds.
series)   TDIR=$BUILD/series-tree NAME="the series'"
	[ "$KTEST_ARCH" = x86_64 ] ||
		{ echo "the series is checked on x86_64 only" >&2; exit 2; } ;;
*) echo "usage: $0 ours|upstream ..." >&2; exit 2 ;;
esac
SRC=$TDIR/src
PROFILE=${KTEST_PROFILE:-test}

# The configurations `make test` builds and boots, each a variant of the
# test profile with its own object directory, initramfs and module build:
#   base      harness/config/test.config on tinyconfig: not preemptible,
#             but with PREEMPT_COUNT (DEBUG_ATOMIC_SLEEP turns it on)
#   preempt   the same plus harness/config/preempt.config: PREEMPT_DYNAMIC
#             booted preempt=full, DEBUG_PREEMPT, and IBT on x86-64
#             (preempt-x86_64.config); arm64 has pointer authentication
#             in both configurations (arm64.config), i386 neither
# Each fragment F.config may have an architecture's part beside it,
# F-$KTEST_ARCH.config, applied right after it (harness/prepare.sh);
# base.config's are x86_64.config, arm64.config and i386.config.
# KTEST_VARIANTS lists those a test target runs (default: both).
# The clients profile has base (harness/config/clients.config, fprobe off),
# fprobe (plus clients-fprobe.config), bpf (plus BPF's selftests'
# tools/testing/selftests/bpf/config, for make peer-tests) and
# bpf-noibt (bpf without X86_KERNEL_IBT); arm64 has base and bpf.
KTEST_VARIANTS=${KTEST_VARIANTS:-base preempt}

# variant_set NAME: point SFX, OBJ, INITRD, VFRAGMENTS, VESSENTIAL and
# VCMDLINE at configuration NAME of the current profile.
variant_set()
{
	VARIANT=${1:-base}
	VFRAGMENTS=() VESSENTIAL=() VCMDLINE=
	case "$PROFILE" in
	test)  SFX= ;;
	bench) SFX=-bench SUITE_DIR=tools/testing/selftests/kprobes/bench ;;
	clients) SFX=-clients
		# A Debian disk image of the architecture's packages: x86-64
		# and arm64 (harness/clients/rootfs.sh).
		case "$KTEST_ARCH" in
		x86_64|arm64) ;;
		*) echo "the clients profile is for x86_64 and arm64" >&2; exit 2 ;;
		esac ;;
	*) echo "unknown KTEST_PROFILE=$PROFILE (test, bench or clients)" >&2; exit 2 ;;
	esac
	case "$KTEST_ARCH/$PROFILE/$VARIANT" in
	arm64/clients/fprobe)
		echo "no $VARIANT configuration on arm64: FPROBE needs DYNAMIC_FTRACE_WITH_REGS" \
		     "and HAVE_RETHOOK, which arm64 6.12 does not have" >&2
		exit 2 ;;
	arm64/clients/bpf-noibt)
		echo "no $VARIANT configuration on arm64: it turns x86-64's IBT off;" \
		     "arm64 runs the bpf configuration" >&2
		exit 2 ;;
	esac
	case "$PROFILE/$VARIANT" in
	*/base) ;;
	test/preempt)
		SFX=-preempt
		VFRAGMENTS=("$TOP/harness/config/preempt.config")
		VCMDLINE="preempt=full"
		# What makes the configuration: besides preemption, functions
		# that start with a landing pad (endbr64) on x86-64, with
		# paciasp on arm64 (base has it too; see arm64.config); i386
		# has no landing pads.  On x86-64 also Debian's mitigations
		# (return thunks, __pfx_ padding) and UBSAN, KFENCE and
		# DEBUG_LIST (preempt-x86_64.config).
		case "$KTEST_ARCH" in
		x86_64) VESSENTIAL=(PREEMPT_DYNAMIC DEBUG_PREEMPT X86_KERNEL_IBT
				    CALL_PADDING PREFIX_SYMBOLS MITIGATION_RETHUNK
				    UBSAN UBSAN_BOUNDS KFENCE DEBUG_LIST) ;;
		arm64)  VESSENTIAL=(PREEMPT_DYNAMIC DEBUG_PREEMPT ARM64_PTR_AUTH_KERNEL
				    ARM64_PSEUDO_NMI)
			# Interrupts masked by priority (the registration
			# suite's irq_masking checks that they are).
			VCMDLINE+=" irqchip.gicv3_pseudo_nmi=1" ;;
		i386)   VESSENTIAL=(PREEMPT_DYNAMIC DEBUG_PREEMPT) ;;
		esac
		;;
	clients/fprobe)
		SFX=-clients-fprobe
		VFRAGMENTS=("$TOP/harness/config/clients-fprobe.config")
		VESSENTIAL=(FPROBE)
		;;
	clients/bpf|clients/bpf-noibt)
		# make peer-tests: what BPF's selftests ask of a kernel (their
		# own fragment, in the tree being built) on top of the
		# clients' configuration; fprobe for their kprobe_multi tests.
		# bpf-noibt: the same without indirect branch tracking, so
		# that functions start at their ftrace call, not at an endbr64
		# before it, which moves where a probe on the entry or at an
		# offset lands (bpf_get_func_ip(), fill_link_info's addresses).
		SFX=-clients-$VARIANT
		VFRAGMENTS=("$SRC/tools/testing/selftests/bpf/config"
			    "$TOP/harness/config/clients-bpf.config")
		[ "$VARIANT" = bpf-noibt ] &&
			VFRAGMENTS+=("$TOP/harness/config/clients-noibt.config")
		# arm64 6.12 has no fprobe (see fprobe above): its
		# kprobe_multi tests skip there, saying so.
		VESSENTIAL=(DEBUG_INFO_BTF_MODULES)
		[ "$KTEST_ARCH" = x86_64 ] && VESSENTIAL+=(FPROBE)
		;;
	*) echo "unknown configuration $VARIANT for the $PROFILE profile" >&2; exit 2 ;;
	esac
	OBJ=$TDIR/obj$SFX
	INITRD=$TDIR/initramfs$SFX.cpio.gz
}
variant_set "${KTEST_VARIANT:-base}"

# The top-level make's job server and flags must not leak into the
# kernel's own make.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES GNUMAKEFLAGS

export CCACHE_DIR=${CCACHE_DIR:-$HOME/.ccache}
JOBS=$(( $(nproc) + 1 ))
# The kernel make's architecture and compiler; the test modules are built
# with the same.
KARGS=(ARCH=$KARCH ${CROSS:+CROSS_COMPILE=$CROSS} CC="ccache ${CROSS}gcc" HOSTCC=gcc)
KMAKE=(make -C "$SRC" O="$OBJ" "${KARGS[@]}")

say()  { echo "ktest: $*"; }
die()  { echo "ktest: ERROR: $*" >&2; exit 1; }

# Print the files of the repo under the given paths that git tracks and
# that exist in the work tree, NUL-separated and relative to $TOP.
tracked_files() {
	if git -C "$TOP" rev-parse --git-dir >/dev/null 2>&1; then
		git -C "$TOP" ls-files -z -- "$@" |
		while IFS= read -r -d '' f; do
			[ -f "$TOP/$f" ] && printf '%s\0' "$f"
		done
	else
		(cd "$TOP" && for p in "$@"; do
			[ -e "$p" ] && find "$p" -type f -print0
		done)
	fi
}

# ---------------------------------------------------------------- pace
# Machines of the kind the harness runs on differ in speed by 2.5 times
# or more (the same test boot took 400 s on one and 1,045 s on another,
# both idle), and a guest beside other work runs slower still.  So no
# time limit is a constant: each is the limit for the machine the harness
# was tuned on, scaled by PACE, a percentage measured on this host just
# before each boot:
#   pace_measure   runs the calibration guest (harness/pace.S, a fixed
#                  piece of TCG work, about a second) five times and sets
#                  PACE to the median time against PACE_REF_MS (one run
#                  alone varies by a fifth either way), clamped to
#                  [PACE_MIN, PACE_MAX]: never a tighter limit than the
#                  tuned one, never one so long that a hang goes unseen
#                  for hours.  KTEST_PACE=percent sets it instead.
#   paced SECONDS  that limit here: SECONDS * PACE / 100
# The guest is told (ktest.pace=PACE) and scales its own limits by it:
# harness/init's watchdog and the hung-task timeout, the suite's waits
# and ftracetest's limit, the test modules' (kprobes_target's pace=).
# KUnit's 300 s per case is fixed in 6.12 (lib/kunit/try-catch.c): the
# cases stay far below it (README, "Time limits").
#
# PACE_REF_MS is the calibration guest's median on the machine where the
# limits were tuned, idle.
PACE_REF_MS=420
PACE_MIN=100
PACE_MAX=400
PACE=${KTEST_PACE:-}

pace_measure()
{
	if [ -n "${KTEST_PACE:-}" ]; then
		PACE=$KTEST_PACE
		say "pace: $PACE% (KTEST_PACE): time limits are ${PACE}% of the tuned ones"
		return
	fi
	local dir=$BUILD/pace elf ms=() i t raw st
	elf=$dir/pace.elf
	mkdir -p "$dir"
	if [ ! -f "$elf" ] || [ "$TOP/harness/pace.S" -nt "$elf" ]; then
		as --32 -o "$dir/pace.o" "$TOP/harness/pace.S" &&
			ld -m elf_i386 -Ttext=0x100000 -o "$elf" "$dir/pace.o" ||
			die "cannot build the calibration guest (harness/pace.S)"
	fi
	for i in 1 2 3 4 5; do
		t=$(date +%s%N)
		throttled qemu-system-x86_64 -accel tcg -nodefaults -no-user-config \
			-display none -m 64 -device isa-debug-exit,iobase=0xf4,iosize=4 \
			-kernel "$elf" < /dev/null && st=0 || st=$?
		# isa-debug-exit: QEMU's status is (value << 1) | 1.
		[ "$st" = 1 ] || die "the calibration guest failed (QEMU exit status $st)"
		ms+=($(( ($(date +%s%N) - t) / 1000000 )))
	done
	raw=$(printf '%s\n' "${ms[@]}" | sort -n | sed -n 3p)
	PACE=$(( (raw * 100 + PACE_REF_MS / 2) / PACE_REF_MS ))
	[ "$PACE" -ge "$PACE_MIN" ] || PACE=$PACE_MIN
	if [ "$PACE" -gt "$PACE_MAX" ]; then
		say "pace: WARNING: this host runs guests $((raw * 100 / PACE_REF_MS))% as slowly" \
		    "as the tuned machine; limits stop at ${PACE_MAX}%, and may not hold"
		PACE=$PACE_MAX
	fi
	say "pace: calibration guest ${ms[*]} ms (tuned machine: $PACE_REF_MS ms):" \
	    "time limits are ${PACE}% of the tuned ones"
}

paced()
{
	echo $(( $1 * ${PACE:-100} / 100 ))
}

# throttled CMD...: run CMD as a host that has only KTEST_CPU_QUOTA
# percent of a CPU to give it (a cgroup's CPU quota; KTEST_CPU_QUOTA=40
# makes a guest about 2.5 times slower).  Unset, CMD just runs.  For
# trying the limits on a slow machine from a quick one.
throttled()
{
	[ -n "${KTEST_CPU_QUOTA:-}" ] || { "$@"; return; }
	local q=$((KTEST_CPU_QUOTA * 1000)) cg rc=0
	if [ -d /sys/fs/cgroup/cpu ] && [ -f /sys/fs/cgroup/cpu/cgroup.procs ]; then
		cg=/sys/fs/cgroup/cpu/ktest-$BASHPID
		mkdir -p "$cg" && echo 100000 > "$cg/cpu.cfs_period_us" &&
			echo "$q" > "$cg/cpu.cfs_quota_us"
	elif grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
		grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control ||
			echo +cpu > /sys/fs/cgroup/cgroup.subtree_control
		cg=/sys/fs/cgroup/ktest-$BASHPID
		mkdir -p "$cg" && echo "$q 100000" > "$cg/cpu.max"
	else
		false
	fi || die "KTEST_CPU_QUOTA: no cgroup CPU controller to set a quota with"
	sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$cg" "$@" ||
		rc=$?
	rmdir "$cg" 2>/dev/null || true
	return $rc
}

# Run a kernel make; keep the whole output in a log file and show only
# what is not a progress line (warnings, errors, notes).
kmake_logged() {
	local log=$1; shift
	mkdir -p "$LOGS"
	local rc=0
	"$@" > >(tee "$log" | grep --line-buffered -vE \
		'^  [A-Z0-9_]+( \[M\])? +[^ ]|^make(\[[0-9]+\])?: (Entering|Leaving) directory' \
		|| true) 2>&1 || rc=$?
	wait
	return $rc
}
