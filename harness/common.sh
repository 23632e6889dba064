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
# x86_64, the default, natively; or arm64, cross-built with
# aarch64-linux-gnu-gcc and booted under qemu-system-aarch64.  x86_64
# keeps the directories it always had; arm64's carry the suffix -arm64
# (ASFX): build/ours-arm64, build/baseline-arm64, build/logs-arm64.
#   KARCH    the kernel's ARCH=
#   CROSS    the cross toolchain's prefix (CROSS_COMPILE=), empty natively
#   KIMAGE   the kernel image QEMU boots, relative to the object directory
KTEST_ARCH=${KTEST_ARCH:-x86_64}
case "$KTEST_ARCH" in
x86_64|x86) KTEST_ARCH=x86_64 ASFX= KARCH=x86_64 CROSS= KIMAGE=arch/x86/boot/bzImage ;;
arm64|aarch64) KTEST_ARCH=arm64 ASFX=-arm64 KARCH=arm64 CROSS=aarch64-linux-gnu-
	KIMAGE=arch/arm64/boot/Image ;;
*) echo "unknown ARCH=$KTEST_ARCH (x86_64 or arm64)" >&2; exit 2 ;;
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
#             in both configurations (arm64.config)
# Each fragment F.config may have an architecture's part beside it,
# F-$KTEST_ARCH.config, applied right after it (harness/prepare.sh);
# base.config's are x86_64.config and arm64.config.
# KTEST_VARIANTS lists those a test target runs (default: both).
# The clients profile has base (harness/config/clients.config, fprobe off)
# and fprobe (plus clients-fprobe.config).
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
		# A Debian x86-64 disk image and x86-only options (clients.config).
		[ "$KTEST_ARCH" = x86_64 ] ||
			{ echo "the clients profile is x86_64 only" >&2; exit 2; } ;;
	*) echo "unknown KTEST_PROFILE=$PROFILE (test, bench or clients)" >&2; exit 2 ;;
	esac
	case "$PROFILE/$VARIANT" in
	*/base) ;;
	test/preempt)
		SFX=-preempt
		VFRAGMENTS=("$TOP/harness/config/preempt.config")
		VCMDLINE="preempt=full"
		# What makes the configuration: besides preemption, functions
		# that start with a landing pad (endbr64) on x86-64, with
		# paciasp on arm64 (base has it too; see arm64.config).
		case "$KTEST_ARCH" in
		x86_64) VESSENTIAL=(PREEMPT_DYNAMIC DEBUG_PREEMPT X86_KERNEL_IBT) ;;
		arm64)  VESSENTIAL=(PREEMPT_DYNAMIC DEBUG_PREEMPT ARM64_PTR_AUTH_KERNEL) ;;
		esac
		;;
	clients/fprobe)
		SFX=-clients-fprobe
		VFRAGMENTS=("$TOP/harness/config/clients-fprobe.config")
		VESSENTIAL=(FPROBE)
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
