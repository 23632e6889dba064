#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# What the kprobes selftest scripts share, sourced by each of them (from
# their own directory): settings, helpers, the whole-run checks
# (kmemleak, no_splat) and the runner.  A script defines its cases as
# functions t_NAME, lists their names in AREA_CASES and ends with
# "ktest_main "$@"": run alone, it prints one KTAP stream of those cases
# (or of the ones named as arguments), then no_splat.  run_tests.sh
# sources every script for its cases and runs them all as one stream.
#
# Every case starts from the same state (ktest_reset): no test module
# loaded, no kprobe event defined, the optimization sysctl and
# kprobes/enabled as they were when the script started.  So none depends
# on another having run before it.  Every wait and loop is bounded.

[ -n "$KPROBES_LIB" ] && return 0
KPROBES_LIB=1

DEBUGFS=/sys/kernel/debug
TRACEFS=/sys/kernel/tracing
KPDIR=$DEBUGFS/kprobes
TGT=/sys/module/kprobes_target/parameters
HLD=/sys/module/kprobes_holder/parameters
SUITES="kprobes_api kprobes_errors kprobes_handlers kprobes_blacklist"
SPLAT='WARNING: CPU|BUG: |Oops|general protection fault|Kernel panic|kretprobe BUG!'
SPLAT="$SPLAT|printk messages dropped|sleeping function called from invalid context"
SPLAT="$SPLAT|UBSAN: "
KMEMLEAK=$DEBUGFS/kmemleak
# A leak is ours when its allocation backtrace names kprobes or one of the
# test modules, or has a frame that no longer resolves to a symbol: code of
# an unloaded module, and only the test modules are ever loaded here.
# (Frames read "    symbol+off/size", or "    [<address>] symbol+off/size"
# on kernels that show the address too.)
LEAK_OURS='kprobe|kp[bhkrst]_|^ +(\[<[0-9a-f]+>\] )?0x[0-9a-f]+$'
# The modules (built from test_modules/).
MODS=./test_modules
OPT_SYSCTL=/proc/sys/debug/kprobes-optimization
# The architecture the suite runs on (uname -m: x86_64, i686, aarch64).
# Some cases need what only some architectures have: hand-written probe
# targets (test_modules/kpt_asm.S and kps_asm.S, their i386 and arm64
# twins) and the modules built on them (test_modules/Makefile), x86's
# instruction encodings, or x86-64's livepatch.  Elsewhere they skip,
# through asm_targets, on_x86 or x86_64_only, saying what they need; once
# an architecture has it, the case leaves that gating for it.
KP_ARCH=$(uname -m)
# A probe on a function's entry by name, as the list and the trace show
# it (ERE): +0x0, or +0x4 past an endbr64 (kernels built with IBT).  On
# ppc64 ELFv2 a name means the entry past the TOC set-up: the ftrace call
# after "mflr r0" (+0x4 without the set-up, +0xc with it), or the local
# entry point (+0x8).
ENTRY='0x[04]'
[ "$KP_ARCH" = ppc64le ] && ENTRY='0x[048c]'


# Upstream's ftrace selftests (tools/testing/selftests/ftrace, at the same
# place relative to this directory as in the kernel tree): the kprobe cases
# run by the "ftracetest" case, names of test.d/kprobe/*.tc; the last five
# are ours, the tracefs cases that need no test module.  Not run:
# uprobe_syntax_errors (uprobe_events' parser, no kprobe involved).  The
# kernel command line can name others: ktest.ftracetest=NAME,NAME,... or
# ktest.ftracetest=none.
FTRACE_DIR=../ftrace
FT_TESTS="add_and_remove busy_check kprobe_args kprobe_args_char
	kprobe_args_comm kprobe_args_string kprobe_args_symbol
	kprobe_args_syntax kprobe_args_type kprobe_args_user kprobe_args_vfs
	kprobe_eventname kprobe_ftrace kprobe_insn_boundary kprobe_module
	kprobe_multiprobe kprobe_non_uniq_symbol kprobe_opt_types
	kprobe_syntax_errors kretprobe_args kretprobe_entry_arg
	kretprobe_maxactive kretprobe_return_suffix multiple_kprobes
	probepoint profile
	kprobe_trace_profile kprobe_offset_boundary kprobe_function_tracer
	kretprobe_retval_size kretprobe_list_type"
# ktest.only=NAME,NAME,... runs only those cases (KTEST_ONLY, one-off
# runs).
ONLY=
# The CPUs the harness gave the guest (ktest.cpus=N): all must be online.
CPUS=
# How much slower than the machine the limits were tuned on this one runs
# guests, in percent (ktest.pace=N, measured by the harness before the
# boot; 100 when run otherwise): every time limit here is scaled by it
# (paced), the test modules' too (kprobes_target's pace=).
PACE=100
for arg in $(cat /proc/cmdline); do
	case $arg in
	ktest.ftracetest=none) FT_TESTS= ;;
	ktest.ftracetest=*) FT_TESTS=$(echo "${arg#*=}" | tr ',' ' ') ;;
	ktest.only=*) ONLY=$(echo "${arg#*=}" | tr ',' ' ') ;;
	ktest.cpus=*) CPUS=${arg#*=} ;;
	ktest.pace=*) PACE=${arg#*=} ;;
	esac
done

# The helper programs (kprobes_textpoke) scale their limits too.
export KTEST_PACE=$PACE

# paced SECONDS: that limit on this machine.
paced()
{
	echo $(($1 * PACE / 100))
}

# tenths SECONDS: that limit on this machine, in waits of 0.1 s.
tenths()
{
	echo $(($1 * PACE / 10))
}

# ftracetest's limit: arm64 under TCG is about twice as slow per case.
FT_TIMEOUT=$(paced 480)
[ "$KP_ARCH" = aarch64 ] && FT_TIMEOUT=$(paced 960)

num=0
nfail=0
why=

# ---------------------------------------------------------------- helpers

# KTAP diagnostics: "# " before each line (a fork only for several).
diag()
{
	case $* in
	*"
"*)	echo "$*" | sed 's/^/# /' ;;
	*)	echo "# $*" ;;
	esac
}

# Is case $1 to run (ktest.only)?
selected()
{
	[ -z "$ONLY" ] && return 0
	for c in $ONLY; do
		[ "$c" = "$1" ] && return 0
	done
	return 1
}

# The guest's uptime in whole seconds.
uptime_s()
{
	up_s=$(cut -d' ' -f1 /proc/uptime)
	echo "${up_s%.*}"
}

# run NAME FUNCTION: 0 passes, 2 skips, anything else fails; $why explains.
# Cases left out by ktest.only are not reported at all.  Each starts from
# ktest_reset's state, except no_splat, which looks at the whole run.
# Before its result, "# time: NAME N s, at U s" says how long it took
# and the guest's uptime when it ended: when the guest is stopped at its
# time limit, the harness names the case that was running and what each
# before it took.
run()
{
	selected "$1" || return 0
	num=$((num + 1))
	why=
	echo "$1" > /tmp/ktest.case
	case_t0=$(uptime_s)
	if [ "$1" = no_splat ]; then
		"$2"
	else
		ktest_reset && "$2"
	fi
	rc=$?
	case_t1=$(uptime_s)
	diag "time: $1 $((case_t1 - case_t0)) s, at $case_t1 s"
	if [ $rc -eq 0 ]; then
		echo "ok $num $1"
	elif [ $rc -eq 2 ]; then
		echo "ok $num $1 # SKIP $why"
	else
		[ -n "$why" ] && diag "$why"
		echo "not ok $num $1"
		nfail=$((nfail + 1))
	fi
}

fail()
{
	why="$*"
	return 1
}

splat_count()
{
	dmesg | grep -c -E "$SPLAT"
}

upstream()
{
	grep -q 'ktest\.tree=upstream' /proc/cmdline
}

# x86_64_only WHAT: true on x86-64; elsewhere the case is to skip, saying
# "x86-64-only: WHAT" (what it needs):
#	x86_64_only "what the case needs" || return
x86_64_only()
{
	[ "$KP_ARCH" = x86_64 ] && return 0
	why="x86-64-only: $*"
	return 2
}

# on_x86 WHAT: the same for what both x86 widths have (x86-64 and i386),
# saying "x86-only: WHAT" elsewhere.
on_x86()
{
	case $KP_ARCH in
	x86_64|i?86) return 0 ;;
	esac
	why="x86-only: $*"
	return 2
}

# asm_targets WHAT: true where kprobes_target.ko has its hand-written
# targets (x86-64: kpt_asm.S; i386: kpt_asm_32.S; arm64: kpt_*_arm64.S)
# and the modules built on them (kprobes_opt.ko, kprobes_boundary.ko);
# elsewhere the case is to skip, saying "no hand-written targets here:
# WHAT":
#	asm_targets "what the case needs" || return
asm_targets()
{
	case $KP_ARCH in
	x86_64|i?86|aarch64) return 0 ;;
	esac
	why="no hand-written targets here: $*"
	return 2
}

loaded()
{
	[ -d "/sys/module/$1" ]
}

unload()
{
	loaded "$1" && rmmod "$1"
	! loaded "$1"
}

# The line of debugfs kprobes/list for the probe at address $1 (hex).
list_line()
{
	grep -i "^0*$1 " "$KPDIR/list" | head -n 1
}

trigger()
{
	echo "$1" > "$TGT/trigger"
}

hld()
{
	cat "$HLD/$1"
}

# Load kprobes_holder.ko with the given parameters.
holder()
{
	unload kprobes_holder || return 1
	case "$*" in
	*kprobes_target:*) need_target || return ;;
	esac
	insmod $MODS/kprobes_holder.ko "$@" 2>/dev/null
}

# The number of errno $1 (ENOENT, EINVAL or EILSEQ) on this architecture.
errno_num()
{
	case $1:$KP_ARCH in
	ENOENT:*) echo 2 ;;
	EINVAL:*) echo 22 ;;
	EILSEQ:mips*) echo 88 ;;
	EILSEQ:parisc*) echo 47 ;;
	EILSEQ:sparc*) echo 122 ;;
	EILSEQ:*) echo 84 ;;
	esac
}

# refused WHAT ERRNO PARAMS...: kprobes_holder.ko with PARAMS must fail to
# load because registering the probe on WHAT ("sym+off", as the holder
# names it) returned -ERRNO (a name: errno_num), which the holder logs.
# Any other outcome fails, in $why.
refused()
{
	rf_line="kprobes_holder: cannot probe $1: -$(errno_num "$2")\$"
	rf_n0=$(dmesg | grep -c "$rf_line")
	shift 2
	if holder "$@"; then
		unload kprobes_holder
		why="taken"
		return 1
	fi
	[ "$(dmesg | grep -c "$rf_line")" -gt "$rf_n0" ] && return 0
	why="refused otherwise: $(dmesg | grep 'kprobes_holder: cannot probe' | tail -n 1)"
	return 1
}

# The kernel has return probes (CONFIG_KRETPROBES): register_kretprobe()
# is a function then, not an inline stub.
have_kret()
{
	grep -q ' register_kretprobe$' /proc/kallsyms
}

NO_KRET="no return probes in this kernel (CONFIG_KRETPROBES is off)"
NO_OPT="no $OPT_SYSCTL (jump optimization, CONFIG_OPTPROBES, is not there yet)"

# Does the kernel optimize probes in module text?  powerpc's backend
# keeps its detours in the kernel image and reaches them with a branch
# (32 MiB): it optimizes probes there only, and those on kprobes_target
# (kpt_opt_c) stay breakpoints.
NO_OPT_MOD="powerpc optimizes probes in the kernel image only, and kpt_opt_c is a module's"
opt_in_modules()
{
	case $KP_ARCH in
	ppc*) return 1 ;;
	esac
	return 0
}

mount_fs()
{
	[ -d "$KPDIR" ] || mount -t debugfs nodev "$DEBUGFS" 2>/dev/null
	[ -e "$TRACEFS/kprobe_events" ] ||
		mount -t tracefs nodev "$TRACEFS" 2>/dev/null
}


# The test module kprobes_target.ko is loaded (probe targets, triggers).
need_target()
{
	loaded kprobes_target || insmod $MODS/kprobes_target.ko pace=$PACE ||
		fail "insmod kprobes_target.ko failed"
}

# The state every case starts from.  Fails (naming what is left) when a
# module cannot be unloaded or an event removed.
ktest_reset()
{
	for m in kprobes_holder kprobes_kunit kprobes_stress kprobes_kretprobe \
		kprobes_boundary kprobes_opt kprobes_target; do
		unload $m || fail "cannot unload $m" || return
	done
	if [ -e "$TRACEFS/kprobe_events" ]; then
		# Every group of events off ("p:GROUP/EVENT ..." lines).
		for g in $(sed 's|^[^:]*:\([^/]*\)/.*|\1|' \
			"$TRACEFS/kprobe_events" | sort -u); do
			[ -e "$TRACEFS/events/$g/enable" ] &&
				echo 0 > "$TRACEFS/events/$g/enable"
		done
		echo > "$TRACEFS/kprobe_events" ||
			fail "cannot remove the kprobe events: $(cat "$TRACEFS/kprobe_events")" ||
			return
		echo > "$TRACEFS/trace"
	fi
	[ -n "$opt0" ] && echo "$opt0" > "$OPT_SYSCTL"
	[ -n "$enabled0" ] && echo "$enabled0" > "$KPDIR/enabled"
	return 0
}

# Before the first case: the file systems, the kernel log's splat count and
# the settings ktest_reset puts back.
ktest_begin()
{
	mount_fs
	splat0=$(splat_count)
	opt0=$(cat "$OPT_SYSCTL" 2>/dev/null)
	enabled0=$(cat "$KPDIR/enabled" 2>/dev/null)
}

# ktest_cases NAME...: the KTAP plan of the named cases (those ktest.only
# selects), declared before the first one runs, then each case, from the
# reset state.
ktest_cases()
{
	cases=
	for c in "$@"; do
		selected "$c" && cases="$cases $c"
	done
	echo "KTAP version 1"
	echo "1..$(echo $cases | wc -w)"
	echo "# cases:$cases"
	[ -n "$ONLY" ] && diag "only: $ONLY"
	upstream && diag "baseline: upstream kprobes"
	for c in $cases; do
		run "$c" "t_$c"
	done
}

# The end of an area script: its cases (all of AREA_CASES, or those named
# as arguments), then no_splat; exits 0 when all passed, 4 (kselftest's
# skip) when nothing ran, 1 otherwise.  Does nothing when run_tests.sh
# sourced the script.
ktest_main()
{
	[ -n "$KTEST_ALL" ] && return 0
	for c in "$@"; do
		case " $AREA_CASES " in
		*" $c "*) ;;
		*) echo "no case $c here; the cases:$AREA_CASES" >&2; exit 1 ;;
		esac
	done
	ktest_begin
	ktest_cases ${*:-$AREA_CASES} no_splat
	[ $nfail -eq 0 ] || exit 1
	[ $num -gt 0 ] || exit 4
	exit 0
}

# Load KUnit module $1 (with kprobes_target.ko under it) with parameters
# $3..., unload it, and judge its suite $2 from the kernel log, where its
# KTAP goes.  Leaves that log in $log.  Under multi-threaded TCG, code
# patched while another vCPU runs it can stay stale for that vCPU: the
# cases that do this take cross_cpu=0 unless the harness says its vCPUs
# take turns on one host thread.
kunit_module()
{
	m=$1 suite=$2
	shift 2
	need_target || return
	unload $m || fail "cannot unload $m" || return
	insmod $MODS/$m.ko "$@" || fail "insmod $m.ko failed" || return
	log=$(dmesg)
	unload $m || fail "rmmod $m failed" || return
	echo "$log" | grep -q -E "ok [0-9]+ $suite( |\$)" ||
		fail "no result line for $suite"
}

suite_failed()
{
	echo "$log" | grep -q -E "not ok [0-9]+ $1( |\$)"
}

cross_cpu_param()
{
	grep -q 'ktest\.tcg=single' /proc/cmdline || echo cross_cpu=0
	upstream && echo upstream=1
}

# The holder's probe at $1 on kprobes_target: rmmod kprobes_target leaves
# it [GONE] in the list, rmmod kprobes_holder takes it out, quietly (no
# splat since the count $2).
target_gone()
{
	rmmod kprobes_target || fail "rmmod kprobes_target failed" || return
	l=$(list_line "$1")
	echo "$l" | grep -q '\[GONE\]' || fail "not gone: '$l'" || return
	rmmod kprobes_holder || fail "rmmod kprobes_holder failed" || return
	[ -z "$(list_line "$1")" ] || fail "still listed after unregister" ||
		return
	[ "$(splat_count)" = "$2" ] || fail "kernel splat"
}

# Every kprobe event off and removed, the trace emptied.
ev_cleanup()
{
	[ -e "$TRACEFS/events/kprobes/enable" ] &&
		echo 0 > "$TRACEFS/events/kprobes/enable"
	echo > "$TRACEFS/kprobe_events"
	echo 0 > "$TRACEFS/tracing_on"
	echo > "$TRACEFS/trace"
	echo 1 > "$TRACEFS/tracing_on"
}

# Whether the list line of the probe on $1 (symbol+offset, an ERE) says
# [OPTIMIZED]: "yes" or "no" as $2 wants, within 10 s (paced).  $opt_line
# is the line last read.
opt_wait()
{
	i=0
	while :; do
		opt_line=$(grep -E "[[:space:]]$1([[:space:]]|\$)" "$KPDIR/list")
		got=no
		echo "$opt_line" | grep -q '\[OPTIMIZED\]' && got=yes
		[ "$got" = "$2" ] && return 0
		[ $i -lt $(tenths 10) ] || return 1
		sleep 0.1
		i=$((i + 1))
	done
}

# The hits of kprobe event $1 in kprobe_profile.
ev_hits()
{
	awk -v e="$1" '$1 == e { print $2 }' "$TRACEFS/kprobe_profile"
}

# The first offset into kpt_opt_c past its ftrace call (5, or 9 after
# endbr64) that kprobe_events accepts for event kpk_optev; the event stays
# defined.  Prints the offset, or nothing.
opt_c_offset()
{
	off=5
	while ! echo "p:kpk_optev kprobes_target:kpt_opt_c+$off" \
		>> "$TRACEFS/kprobe_events" 2>/dev/null; do
		off=$((off + 1))
		[ $off -le 16 ] || return 1
	done
	echo $off
}

# The kernel log since the marker $1 was written to it (kmsg_mark).
kmsg_since()
{
	dmesg | sed -n "/ktest-mark $1\$/,\$p" | sed 1d
}

kmsg_mark()
{
	echo "ktest-mark $1" > /dev/kmsg
}

# Print one kmemleak report ($1) as diagnostics, without its hex dump.
leak_diag()
{
	echo "$1" | grep -v -E '^ *(hex dump|[0-9a-f]{2}( [0-9a-f]{2})+ )' |
		sed 's/^/# /'
}

# Was the object of kmemleak report $1 allocated by the kprobes code:
# is any frame of its backtrace a function of it (ours.syms, listed at
# build time)?  Catches what kprobes allocates from its own workers
# (return-instance pools, module symbol indexes, slot pages), whose
# backtraces name no test module and need not say "kprobe".
leak_by_us()
{
	[ -s ./ours.syms ] || return 1
	echo "$1" | sed -n '/^ *backtrace/,$p' | sed 1d |
		sed -e 's/^ *//' -e 's/^\[<[0-9a-f]*>\] //' -e 's/+0x.*//' |
		grep -q -x -F -f ./ours.syms
}

# After every other case (bad input, module loads and unloads, probe
# loops), nothing they allocated is unreferenced.  kmemleak reports an
# object only when two scans in a row found it unreferenced, and never one
# younger than five seconds.  Leaks not involving kprobes (boot-time
# noise) are only mentioned.
t_kmemleak()
{
	leak_scan
}

# The same once more after the last case (ftrace_kill), when kprobes has
# had its deferred work done: the optimizer's and the lazy ftrace
# update's delays (a second at most), then the RCU frees queued so far
# (kprobes_holder's quiesce).  The first scan's reports stay listed:
# they failed that case already, and are cleared first.
t_kmemleak_last()
{
	[ -e "$KMEMLEAK" ] || { why="no $KMEMLEAK (no CONFIG_DEBUG_KMEMLEAK)"; return 2; }
	echo clear > "$KMEMLEAK" 2>/dev/null
	sleep "$(paced 2)"
	holder || fail "insmod kprobes_holder.ko failed" || return
	echo 1 > "$HLD/quiesce" || fail "kprobes_holder: quiesce failed" || return
	unload kprobes_holder || fail "rmmod kprobes_holder failed" || return
	leak_scan
}

# leak_scan: fails on objects kmemleak finds unreferenced that involve
# kprobes or the test modules.
leak_scan()
{
	[ -e "$KMEMLEAK" ] || { why="no $KMEMLEAK (no CONFIG_DEBUG_KMEMLEAK)"; return 2; }
	sleep 6
	for n in 1 2; do
		echo scan > "$KMEMLEAK" 2>/dev/null ||
			fail "kmemleak is off: $(dmesg | grep kmemleak | tail -n 1)" ||
			return
	done
	# One line per report, its lines joined by tabs.
	reports=$(awk '
		/^unreferenced object/ { if (r != "") print r; r = $0; next }
		{ r = r "\t" $0 }
		END { if (r != "") print r }' "$KMEMLEAK")
	ours=0
	others=0
	first=
	while IFS= read -r r; do
		[ -n "$r" ] || continue
		lines=$(echo "$r" | tr '\t' '\n')
		if echo "$lines" | grep -q -E "$LEAK_OURS" || leak_by_us "$lines"; then
			ours=$((ours + 1))
			[ $ours -le 3 ] && leak_diag "$lines"
			continue
		fi
		others=$((others + 1))
		[ -n "$first" ] && continue
		# The first frame past the allocator.
		first=$(echo "$lines" | sed -n '/^ *backtrace/,$p' | sed 1d |
			grep -v -E '_noprof|kmalloc|kmem_cache|slab|kmemleak' |
			head -n 1 | sed -e 's/^ *//' -e 's/^\[<[0-9a-f]*>\] //')
	done <<EOF
$reports
EOF
	[ $others -eq 0 ] ||
		diag "kmemleak: $others unreferenced object(s) unrelated to kprobes," \
		     "the first from ${first:-?}"
	[ $ours -eq 0 ] ||
		fail "kmemleak: $ours unreferenced object(s) from kprobes or the test modules"
}

# No warning, BUG or oops in the kernel log during this run.  The count
# holds only while the log still has the boot's first lines: once the
# buffer has wrapped, splats may have scrolled out (CONFIG_LOG_BUF_SHIFT).
t_no_splat()
{
	dmesg | grep -q 'Kernel command line:' ||
		fail "the kernel log buffer wrapped: splats may have scrolled out" ||
		return
	n=$(splat_count)
	[ "$n" = "$splat0" ] || fail "$((n - splat0)) splat(s) in the kernel log"
}
