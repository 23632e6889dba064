#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# kprobes selftests, probes as tracing tools make them: kprobe_events and the trace, the
# perf kprobe PMU and the records perf gives trace decoders, the function
# tracer and a livepatch on a probed function, and upstream's ftrace
# selftests for kprobes (ftracetest, ../ftrace), nested under one case.
# Prints KTAP; arguments name the cases to run (default: all).

cd "$(dirname "$0")" || exit 1
. ./kprobes_lib.sh

# perf_event_open() with the kprobe PMU, by the static helper program:
# vfs_read by name and by address (kprobe_addr), each read counted once
# and sampled inside vfs_read; and inside vfs_read's first instruction
# (probe_offset: one byte into x86's call or endbr64, two into arm64's
# four-byte instruction), refused with EILSEQ.
t_perf_kprobe_pmu()
{
	[ -r /sys/bus/event_source/devices/kprobe/type ] ||
		{ why="no kprobe PMU"; return 2; }
	[ -x ./kprobes_perf ] || { why="kprobes_perf not built"; return 2; }
	off=1
	[ "$KP_ARCH" = aarch64 ] && off=2
	for args in vfs_read "-A vfs_read" "-o $off vfs_read"; do
		out=$(./kprobes_perf $args 2>&1) ||
			fail "kprobes_perf $args: $out" || return
		diag "$out"
	done
}

# Lines of kprobe code pages in /proc/kallsyms.
ool_pages()
{
	grep -c -E ' t kprobe_(opt)?insn_page' /proc/kallsyms
}

# What perf tells a trace decoder (Intel PT with perf record --kcore)
# about a kprobe event's life, read by kprobes_textpoke with perf events
# that ask for PERF_RECORD_TEXT_POKE and PERF_RECORD_KSYMBOL on every CPU:
# p: on an instruction of kpt_opt_c that can be optimized, enabled until
# the record of its jump comes in, disabled, removed.  Every change to the
# text must come with its record: the breakpoint in and out, the jump in
# and out, the out-of-line copy and the detour filled, the pages they live
# in registered, and unregistered once gone.
t_text_poke()
{
	on_x86 "PERF_RECORD_TEXT_POKE, which only x86 reports" || return
	[ -x ./kprobes_textpoke ] || fail "kprobes_textpoke not built" || return
	[ -w "$TRACEFS/kprobe_events" ] || fail "no kprobe_events" || return
	need_target || return
	ev_cleanup
	off=$(opt_c_offset) || fail "no offset in 5..16 of kpt_opt_c accepted" ||
		return
	addr=$(grep -E "[[:space:]]kpt_opt_c\+0x$(printf %x $off)[[:space:]]" \
		"$KPDIR/list" | cut -d' ' -f1)
	echo '-:kpk_optev' >> "$TRACEFS/kprobe_events"
	[ -n "$addr" ] || fail "no list line for kpt_opt_c+$off" || return
	opt=
	opt_old=
	if [ -e "$OPT_SYSCTL" ]; then
		opt=-o
		opt_old=$(cat "$OPT_SYSCTL")
		echo 1 > "$OPT_SYSCTL"
	fi
	ev=$TRACEFS/events/kprobes/kpk_optev
	pages=$(ool_pages)
	up="echo 'p:kpk_optev kprobes_target:kpt_opt_c+$off' >> $TRACEFS/kprobe_events &&
		echo 1 > $ev/enable"
	down="echo 0 > $ev/enable && echo '-:kpk_optev' >> $TRACEFS/kprobe_events ||
			exit 1
		# Out-of-line code is freed once no CPU can be in it: wait for it.
		i=0
		while [ \$i -lt $(tenths 10) ] &&
		      [ \$(grep -c -E ' t kprobe_(opt)?insn_page' /proc/kallsyms) -gt $pages ]; do
			sleep 0.1; i=\$((i + 1))
		done"
	out=$(./kprobes_textpoke $opt "$addr" "$up" "$down" 2>&1)
	rc=$?
	[ -n "$opt_old" ] && echo "$opt_old" > "$OPT_SYSCTL"
	echo "$out" | sed 's/^/# /'
	[ $rc -eq 0 ] || fail "kprobes_textpoke: $(echo "$out" | tail -n 1)"
}

LP=/sys/kernel/livepatch/livepatch_sample
LP_TEXT="this has been live patched"

# Wait until the sample livepatch has no transition under way (and, with
# $1 = gone, until it is gone): at most 30 s (paced).
lp_wait()
{
	i=0
	while [ $i -lt $(tenths 30) ]; do
		if [ "$1" = gone ]; then
			[ -e "$LP" ] || return 0
		elif [ -e "$LP/transition" ] && [ "$(cat "$LP/transition")" = 0 ]; then
			return 0
		fi
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

lp_load()
{
	modprobe livepatch-sample || return 1
	lp_wait
}

lp_unload()
{
	[ -e "$LP/enabled" ] && echo 0 > "$LP/enabled"
	lp_wait gone || return 1
	unload livepatch_sample
}

# /proc/cmdline shows the livepatched text, and kpk_lp counts each read.
lp_probe_reads()
{
	h0=$(ev_hits kpk_lp)
	for i in 1 2 3; do
		grep -q "$LP_TEXT" /proc/cmdline ||
			fail "$1: /proc/cmdline reads '$(cat /proc/cmdline)'" || return
	done
	h1=$(ev_hits kpk_lp)
	[ "$((h1 - h0))" = 3 ] || fail "$1: $((h1 - h0)) hits for 3 reads"
}

lp_event_on()
{
	echo 'p:kpk_lp cmdline_proc_show' >> "$TRACEFS/kprobe_events" &&
		echo 1 > "$TRACEFS/events/kprobes/kpk_lp/enable"
}

lp_event_off()
{
	echo 0 > "$TRACEFS/events/kprobes/kpk_lp/enable"
	echo '-:kpk_lp' >> "$TRACEFS/kprobe_events"
}

# A livepatch and a kprobe on one function (cmdline_proc_show, which the
# livepatch sample replaces): both hook the function's ftrace call site,
# the livepatch moving the ip, the probe only looking.  In either order
# both must go in, /proc/cmdline must show the patched text while the
# probe counts every read, and each must go away without the other.
t_livepatch_kprobe()
{
	x86_64_only "livepatch (i386 and arm64 have none in 6.12)" || return
	# Livepatch transitions and ftrace rewrite text the other vCPU runs:
	# under multi-threaded TCG that hung a preempt guest twice (a task
	# never switching, RCU tasks stalled on it, user space starved), so
	# the case runs under single-threaded TCG only (every make test boot).
	grep -q 'ktest\.tcg=single' /proc/cmdline ||
		{ why="cross_cpu=0: multi-threaded TCG (TCG=multi)"; return 2; }
	[ -w "$TRACEFS/kprobe_events" ] || fail "no kprobe_events" || return
	[ -d /sys/kernel/livepatch ] || fail "no /sys/kernel/livepatch (CONFIG_LIVEPATCH)" ||
		return
	ev_cleanup
	lp_load || fail "livepatch-sample did not load" || return
	lp_event_on || { lp_unload; fail "livepatch first: the kprobe event refused"; return; }
	lp_probe_reads "livepatch first"
	rc=$?
	lp_event_off
	lp_unload || fail "livepatch-sample did not unload" || return
	[ $rc -eq 0 ] || return $rc
	grep -q "$LP_TEXT" /proc/cmdline && { fail "still patched after unload"; return; }

	lp_event_on || fail "kprobe first: the kprobe event refused" || return
	lp_load || { lp_event_off; fail "kprobe first: livepatch-sample did not load"; return; }
	lp_probe_reads "kprobe first"
	rc=$?
	lp_unload || { lp_event_off; fail "livepatch-sample did not unload"; return; }
	h0=$(ev_hits kpk_lp)
	read -r x < /proc/cmdline
	h1=$(ev_hits kpk_lp)
	lp_event_off
	[ $rc -eq 0 ] || return $rc
	[ "$((h1 - h0))" = 1 ] || fail "the probe alone again: $((h1 - h0)) hits for 1 read"
}

# Is a kprobe on a function's entry carried by ftrace here (kprobes on
# ftrace, [FTRACE] in the debugfs list within a second of enabling it)?
# Asked once (t_ftracetest, before ft_skip_reason's subshells), outside
# x86-64 only (arm64 6.12 has no kprobes on ftrace): on x86-64 the cases
# that need it must fail, not skip, without it.
ft_on_ftrace=
ft_entry_on_ftrace()
{
	if [ -z "$ft_on_ftrace" ]; then
		ft_on_ftrace=no
		if echo 'p:kpk_ftchk vfs_read' >> "$TRACEFS/kprobe_events" 2>/dev/null; then
			echo 1 > "$TRACEFS/events/kprobes/kpk_ftchk/enable"
			i=0
			while [ $i -lt $(tenths 1) ]; do
				grep -q -E '[[:space:]]vfs_read\+0x[0-9a-f]+[[:space:]].*FTRACE' \
					"$KPDIR/list" && { ft_on_ftrace=yes; break; }
				sleep 0.1
				i=$((i + 1))
			done
			echo 0 > "$TRACEFS/events/kprobes/kpk_ftchk/enable"
			echo '-:kpk_ftchk' >> "$TRACEFS/kprobe_events"
		fi
	fi
	[ "$ft_on_ftrace" = yes ]
}

# Why the ftrace selftest $1 is not to run on this kernel (nothing: run it).
ft_skip_reason()
{
	# riscv runs a breakpoint's handlers in NMI context, where the
	# trace ring buffer takes nothing without an NMI-safe cmpxchg
	# (ARCH_HAVE_NMI_SAFE_CMPXCHG, which riscv 6.12 does not select):
	# a kprobe event counts its hits (kprobe_profile) but writes no
	# trace entry.  The trap is riscv's own, the same under upstream's
	# kprobes.  Return probes are not hit through a breakpoint there,
	# and trace.
	case $KP_ARCH:$1 in
	riscv*:kprobe_args|riscv*:kprobe_args_comm|riscv*:kprobe_args_symbol|\
	riscv*:kprobe_args_type|riscv*:kprobe_args_user|riscv*:kprobe_args_vfs|\
	riscv*:kprobe_module|riscv*:kprobe_trace_profile)
		echo "riscv: no trace entries from breakpoint handlers (NMI context)"
		return
		;;
	esac
	# QEMU's TCG (7.2) computes the address of s390's relative-long
	# instructions (LARL, LGRL and the like) with a 32-bit sum: one
	# stepped out of line from a slot more than 2 GiB from what it
	# addresses reads elsewhere.  kprobe_insn_boundary probes every
	# instruction of kernel_clone, an LGRL of the GOT among them, 2 GiB
	# and more from the module area that holds the slots: the CPU then
	# looped in the probe's single-step traps (RCU stalls, the case
	# never ended).  On real machines it runs.
	case $KP_ARCH:$1 in
	s390*:kprobe_insn_boundary)
		grep -q '^Manufacturer: *QEMU' /proc/sysinfo 2>/dev/null &&
			echo "s390 under QEMU: TCG reads relative-long operands 4 GiB off"
		return
		;;
	esac
	case $1 in
	kprobe_opt_types)
		# Without the sysctl the test fails rather than reporting
		# itself unsupported.  It runs on the machines it names
		# (uname -m), and reports the others unsupported, without a
		# reason: i386 (i686) among them.
		if [ ! -e /proc/sys/debug/kprobes-optimization ]; then
			echo "no /proc/sys/debug/kprobes-optimization" \
			     "(jump optimization, CONFIG_OPTPROBES, is not there yet)"
		else
			case $KP_ARCH in
			x86_64|arm*|ppc*) ;;
			*) echo "kprobe_opt_types.tc runs on x86_64, arm" \
				"and ppc only, not $KP_ARCH" ;;
			esac
		fi
		;;
	kretprobe_maxactive)
		# It probes a networking function; it fails (upstream's
		# kprobes too) on a kernel without one.
		grep -q ' inet_csk_accept$' /proc/kallsyms ||
			echo "it probes inet_csk_accept, not in this kernel (no CONFIG_INET)"
		;;
	kprobe_offset_boundary)
		# Ours: the offsets of x86's instructions at vfs_read's entry
		# (both widths: a 5-byte ftrace call).
		case $KP_ARCH in
		x86_64|i?86) ;;
		*) echo "x86-only: the offsets of x86's ftrace call in vfs_read" ;;
		esac
		;;
	kprobe_args_user|kprobe_args_vfs|kretprobe_entry_arg)
		# They fetch $argN, which tracefs offers only where the
		# architecture says where arguments are
		# (HAVE_FUNCTION_ARG_ACCESS_API: not arm, not mips); they fail
		# without it, upstream's kprobes too.
		grep -q 'stack, \$retval, \$comm, \$arg<N>' "$TRACEFS/README" ||
			echo "no \$arg<N> fetch arguments on this architecture (tracefs README)"
		;;
	kprobe_eventname)
		# Its last part probes a .isra. function, and is unresolved
		# without one.
		grep -q ' [tT] .*\.isra\.' /proc/kallsyms ||
			echo "no .isra. function in this kernel"
		;;
	kprobe_non_uniq_symbol)
		# It skips, saying nothing, where name_show is unique.
		[ "$(grep -c -E '[[:alnum:]]+ t name_show$' /proc/kallsyms)" -gt 1 ] ||
			echo "name_show is not a duplicate symbol in this kernel"
		;;
	kprobe_args_char|kprobe_args_string|kprobe_ftrace)
		# They need the function tracer (mips64el's configuration
		# has none), and say only "unsupported" without it.
		[ -e "$TRACEFS/available_filter_functions" ] ||
			echo "no function tracer in this kernel"
		;;
	multiple_kprobes)
		# It probes the first 256 text symbols of kallsyms.  On mips
		# those are the exception vectors and handlers, which no
		# section marks as entry code: a breakpoint there hangs the
		# guest.  On ppc64 one of them is do_program_check(), on
		# powerpc's own breakpoint path.  Upstream's kprobes accept
		# them; the bridge refuses them (bridge.c, the trap path).
		case $KP_ARCH in
		mips*)
			why="mips' exception handlers, which hangs the guest"
			upstream && echo "upstream's kprobes take probes on $why"
			;;
		ppc64*)
			why="do_program_check(), which hangs the guest"
			upstream && echo "upstream's kprobes take a probe on $why"
			;;
		esac
		;;
	kprobe_function_tracer)
		# Ours: it wants the probe on vfs_read carried by ftrace.
		[ "$KP_ARCH" = x86_64 ] || ft_entry_on_ftrace ||
			echo "no kprobes on ftrace: the probe on vfs_read is a breakpoint"
		;;
	esac
}

# The log ftracetest kept of its case number $1 (in $ft_logs), as
# diagnostics: the part from the test script on, at most 150 lines.
ft_log()
{
	for f in "$ft_logs/$1"-*-log.*; do
		[ -f "$f" ] || continue
		echo "# log of ${f##*/}, from the test script on:"
		if grep -q '^+ \. .*\.tc$' "$f"; then
			sed -n '/^+ \. .*\.tc$/,$p' "$f"
		else
			cat "$f"
		fi | tail -n 150 | sed 's/^/# | /'
	done
}

# ftracetest's KTAP output, indented as a subtest, without its own header
# lines (t_ftracetest prints them); a case that did not pass is preceded by
# its log, and each result followed by the seconds its case took.
ft_filter()
{
	ft_t=$(date +%s)
	while IFS= read -r line; do
		case $line in
		"TAP version "*|1..*)
			continue
			;;
		"not ok "*)
			n=${line#not ok }
			ft_log "${n%% *}" | sed 's/^/    /'
			;;
		esac
		echo "    $line"
		case $line in
		"ok "*|"not ok "*)
			ft_now=$(date +%s)
			echo "    # $((ft_now - ft_t)) s"
			ft_t=$ft_now
			n=${line#not }
			n=${n#ok }
			echo "${n%% *}" > /tmp/ftracetest.last
			;;
		esac
	done
}

# The description of ftrace selftest file $1, as ftracetest names its case.
ft_desc()
{
	sed -n 's/^#[[:space:]]*description:[[:space:]]*//p' "$FTRACE_DIR/$1"
}

# Upstream's ftrace selftests for kprobes, unmodified, run by upstream's
# runner ftracetest under /bin/sh, as its first line asks.  (Under TCG a
# dynamically linked bash makes them half as slow again: every command
# substitution forks it, and its mappings with it.)  Its KTAP is nested
# under this case, so each of its cases counts once, named by its
# description: [PASS] passes, [UNSUPPORTED] and [UNTESTED] skip, [FAIL],
# [UNRESOLVED] and [UNDEFINED] fail.  The cases ft_skip_reason rules out
# are reported as skipped, after the others.
t_ftracetest()
{
	[ -n "$FT_TESTS" ] || { why="ktest.ftracetest=none"; return 2; }
	[ -f "$FTRACE_DIR/ftracetest" ] ||
		{ why="no $FTRACE_DIR/ftracetest"; return 2; }
	ft_logs=/tmp/ftracetest-logs
	ft_run=
	ft_skip=
	[ "$KP_ARCH" = x86_64 ] || ft_entry_on_ftrace
	for t in $FT_TESTS; do
		[ -f "$FTRACE_DIR/test.d/kprobe/$t.tc" ] ||
			fail "no $FTRACE_DIR/test.d/kprobe/$t.tc" || return
		if [ -n "$(ft_skip_reason $t)" ]; then
			ft_skip="$ft_skip $t"
		else
			ft_run="$ft_run test.d/kprobe/$t.tc"
		fi
	done
	nrun=$(echo $ft_run | wc -w)
	nskip=$(echo $ft_skip | wc -w)
	echo "    # Subtest: ftracetest"
	echo "    KTAP version 1"
	echo "    1..$((nrun + nskip))"
	echo "    # cases: $(for t in $ft_run $ft_skip; do basename "$t" .tc; done | tr '\n' ' ')"
	rm -rf "$ft_logs"
	echo 0 > /tmp/ftracetest.rc
	echo 0 > /tmp/ftracetest.last
	t0=$(date +%s)
	if [ "$nrun" -gt 0 ]; then
		(cd "$FTRACE_DIR" &&
		 timeout $FT_TIMEOUT sh ./ftracetest --ktap \
			-l "$ft_logs" $ft_run 2>&1
		 echo $? > /tmp/ftracetest.rc) | ft_filter
	fi
	t1=$(date +%s)
	rc=$(cat /tmp/ftracetest.rc)
	# Stopped at its limit (timeout's status, or the time it took): the
	# case that was running timed out, those after it did not run.
	stopped=
	case $rc in
	124|137|143) stopped=1 ;;
	esac
	[ "$rc" != 0 ] && [ $((t1 - t0)) -ge $FT_TIMEOUT ] && stopped=1
	if [ -n "$stopped" ]; then
		last=$(cat /tmp/ftracetest.last)
		n=0
		for t in $ft_run; do
			n=$((n + 1))
			[ $n -gt "$last" ] || continue
			if [ $n = $((last + 1)) ]; then
				running=${t##*/}
				echo "    not ok $n $(ft_desc $t) # TIMEOUT $running" \
				     "was running when ftracetest reached its limit" \
				     "of $FT_TIMEOUT s"
			else
				echo "    not ok $n $(ft_desc $t) # not run:" \
				     "ftracetest had stopped at its time limit"
			fi
		done
	fi
	n=$nrun
	for t in $ft_skip; do
		n=$((n + 1))
		echo "    ok $n $(ft_desc test.d/kprobe/$t.tc)" \
		     "# SKIP $t.tc: $(ft_skip_reason $t)"
	done
	echo "    # ftracetest ran $nrun cases in $((t1 - t0)) s"
	if [ -n "$stopped" ]; then
		tuned=$((FT_TIMEOUT * 100 / PACE))
		fail "ftracetest timed out: $running was running at its limit of" \
		     "$FT_TIMEOUT s ($PACE% of the tuned machine's $tuned s);" \
		     "each case's time is after its result above"
		return
	fi
	[ "$rc" = 0 ] || fail "ftracetest exited with status $rc"
}

HP_ON=/sys/devices/system/cpu/cpu1/online
HP_FIFO=/tmp/kphp.fifo

# After t_cpu_hotplug, whatever happened: CPU 1 online, its reader gone,
# the events removed.
hp_cleanup()
{
	echo 1 > "$HP_ON" 2> /dev/null
	echo 0 > "$TRACEFS/events/kphp/enable" 2> /dev/null
	[ -n "$hp_rd" ] && kill "$hp_rd" 2> /dev/null
	hp_rd=
	rm -f "$HP_FIFO"
	ev_cleanup
}

# CPU hotplug with probes armed: kprobe events on vfs_read's entry
# (ftrace-based where the architecture has kprobes on ftrace), inside
# vfs_read (a breakpoint, a jump once optimized) and on pipe_read's
# return, with a call in flight: a shell bound to CPU 1 sleeps in
# pipe_read on a FIFO while CPU 1 goes offline.  Asserts: CPU 1 goes
# offline and online again; the reader, moved to CPU 0, gets the byte
# written after the offlining, and the return probe reports that one
# return of its (retval 1) exactly once; after the onlining, a read bound
# to CPU 1 hits both vfs_read probes on CPU 1; nothing missed; no splat.
# The trace is read with tracing off: reading it calls vfs_read.
t_cpu_hotplug()
{
	[ -e "$HP_ON" ] ||
		{ why="no CPU hotplug in this configuration (HOTPLUG_CPU)"; return 2; }
	[ -w "$TRACEFS/kprobe_events" ] || fail "no kprobe_events" || return
	ev_cleanup
	before=$(splat_count)
	ke=$TRACEFS/kprobe_events
	ev=$TRACEFS/events/kphp
	hp_rd=
	echo "p:kphp/kphp_ent vfs_read" >> "$ke" || fail "cannot define kphp/kphp_ent" || return
	# Past the entry's ftrace site (x86: endbr64 and a call; arm64 two
	# instructions): the first offset kprobes takes.
	off=
	for o in $(seq 12 64); do
		echo "p:kphp/kphp_mid vfs_read+$o" >> "$ke" 2> /dev/null &&
			{ off=$o; break; }
	done
	[ -n "$off" ] || fail "no probe taken in vfs_read+12..64" ||
		{ hp_cleanup; return 1; }
	echo "r:kphp/kphp_ret pipe_read ret=\$retval" >> "$ke" ||
		fail "cannot define kphp/kphp_ret" || { hp_cleanup; return 1; }
	echo 1 > "$ev/enable" || fail "cannot enable kphp" || { hp_cleanup; return 1; }

	rm -f "$HP_FIFO" /tmp/kphp.out
	mkfifo "$HP_FIFO" || fail "mkfifo failed" || { hp_cleanup; return 1; }
	# O_RDWR: the open does not wait for a writer; the read then sleeps
	# in pipe_read for the one byte.  taskset and the shell exec, so the
	# reader keeps the pid of the background job.
	# dd's read() is the first thing it does on the FIFO (the shell's
	# read builtin polls first).
	taskset -c 1 sh -c "exec 3<> $HP_FIFO; exec dd bs=1 count=1 <&3 > /tmp/kphp.out 2> /dev/null" &
	hp_rd=$!
	i=0
	while [ "$(cat /proc/$hp_rd/wchan 2> /dev/null)" != pipe_read ] &&
	      [ $i -lt $(tenths 10) ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ "$(cat /proc/$hp_rd/wchan 2> /dev/null)" = pipe_read ] ||
		fail "the reader is not asleep in pipe_read after $(paced 10) s:" \
		     "$(cat /proc/$hp_rd/wchan 2> /dev/null)" ||
		{ hp_cleanup; return 1; }
	echo > "$TRACEFS/trace"

	echo 0 > "$HP_ON" || fail "cannot offline CPU 1" || { hp_cleanup; return 1; }
	[ "$(cat "$HP_ON")" = 0 ] || fail "CPU 1 still online" ||
		{ hp_cleanup; return 1; }
	printf z > "$HP_FIFO"
	wait "$hp_rd"
	[ "$(cat /tmp/kphp.out 2> /dev/null)" = z ] ||
		fail "the reader got '$(cat /tmp/kphp.out 2> /dev/null)', want 'z'" ||
		{ hp_cleanup; return 1; }
	# Reading the trace reads files: with tracing on it would grow under
	# the reader for as long as it reads.
	echo 0 > "$TRACEFS/tracing_on"
	n=$(grep -c " dd-$hp_rd .* kphp_ret: (.*<- pipe_read) ret=0x1\$" "$TRACEFS/trace")
	[ "$n" = 1 ] ||
		fail "$n returns of the reader's pipe_read traced, want 1:" \
		     "$(grep ' kphp_ret: ' "$TRACEFS/trace" | head -n 3)" ||
		{ hp_cleanup; return 1; }
	hp_rd=

	echo 1 > "$HP_ON" || fail "cannot online CPU 1" || { hp_cleanup; return 1; }
	[ "$(cat "$HP_ON")" = 1 ] || fail "CPU 1 still offline" ||
		{ hp_cleanup; return 1; }
	echo > "$TRACEFS/trace"
	echo 1 > "$TRACEFS/tracing_on"
	# dd, for its read(): busybox's cat copies with sendfile().
	taskset -c 1 dd if=/proc/version of=/dev/null 2> /dev/null ||
		fail "cannot run on CPU 1" || { hp_cleanup; return 1; }
	echo 0 > "$TRACEFS/tracing_on"
	# /proc/version is shorter than dd's 512-byte block: two read()s,
	# the text and the end of file.
	n=$(grep -c -E " dd-[0-9]+ +\[001\] .* kphp_ent: " "$TRACEFS/trace")
	[ "$n" = 2 ] ||
		fail "kphp_ent hit $n times by dd on CPU 1 once online, want 2" ||
		{ hp_cleanup; return 1; }
	n=$(grep -c -E " dd-[0-9]+ +\[001\] .* kphp_mid: " "$TRACEFS/trace")
	[ "$n" -gt 0 ] ||
		fail "kphp_mid (vfs_read+$off) never hit on CPU 1 once online" ||
		{ hp_cleanup; return 1; }
	echo 0 > "$ev/enable"
	m=$(awk '$1 ~ /^kphp_/ { s += $3 } END { print s + 0 }' "$TRACEFS/kprobe_profile")
	[ "$m" = 0 ] || fail "$m hits missed: $(grep kphp_ "$TRACEFS/kprobe_profile")" ||
		{ hp_cleanup; return 1; }
	hp_cleanup
	[ "$(splat_count)" = "$before" ] ||
		fail "kernel splat: $(dmesg | grep -E "$SPLAT" | tail -n 1)"
}

AREA_CASES="perf_kprobe_pmu text_poke livepatch_kprobe ftracetest cpu_hotplug"
ktest_main "$@"
