#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# kprobes selftests, stress: probes changing while other CPUs run the
# probed code (the KUnit suite of kprobes_stress.ko), a probe on every
# instruction boundary of a function (kprobes_boundary.ko), probes on
# every probeable function through kprobe_events, and probes at random
# offsets inside functions.
# Prints KTAP; arguments name the cases to run (default: all).

cd "$(dirname "$0")" || exit 1
. ./kprobes_lib.sh

# The kprobes_stress KUnit suite of kprobes_stress.ko: probes registered,
# toggled and unregistered while two CPUs and a timer interrupt run the
# probed code.
t_stress_suite()
{
	on_x86 "kprobes_stress.ko (its targets are in kps_asm.S, kps_asm_32.S)" || return
	kunit_module kprobes_stress kprobes_stress $(cross_cpu_param) || return
	! suite_failed kprobes_stress || fail "suite kprobes_stress failed"
}

# The kprobes_boundaries KUnit suite of kprobes_boundary.ko: a probe on
# every instruction boundary of two target functions in turn, with and
# without a post handler, with one CPU and then two calling them, must
# not change any result.
t_boundary_suite()
{
	asm_targets "kprobes_boundary.ko (kpt_asm*.S, kpt_bnd_arm64.S)" || return
	kunit_module kprobes_boundary kprobes_boundaries $(cross_cpu_param) ||
		return
	! suite_failed kprobes_boundaries ||
		fail "suite kprobes_boundaries failed"
}

# ------------------------------------------ probes on every probeable function

# Where they keep their lists (a directory of their own).
PA_TMP=/tmp/kpall
# Functions per batch of t_probe_all_functions (each gets two probes).
PA_BATCH=300
# Functions the workload certainly calls: both their probes must fire.
PA_HOT="kernel_clone do_sys_openat2 vfs_read vfs_write bprm_execve load_module"
# How many FUNC+N probes t_probe_random_offsets tries, and where it finds
# them with objdump's answer for each (harness/offsets.py).
PR_COUNT=300
PR_OFFSETS=./offsets.txt
# The probes of t_probe_all_functions that must be refused, and why, read
# from vmlinux's and the modules' own tables on the host
# (harness/forbidden.py).
PA_FORBIDDEN=./forbidden.txt

# Centiseconds since boot, in $pa_t.
pa_now()
{
	read -r pa_t _ < /proc/uptime
	pa_t=${pa_t%.*}${pa_t#*.}
}

# The errno of a failed write, from the shell's message in file $1, in
# $pa_err.  Builtins only: where functions start with endbr64 (IBT) every
# FUNC+5 is refused first, and a fork per refusal, under TCG with the
# test kernels' debugging, made defining probe_all_functions' probes take
# four times as long.
pa_errno()
{
	read -r pa_msg < "$1"
	case $pa_msg in
	*"Invalid argument"*) pa_err=EINVAL ;;
	*multibyte*|*"byte sequence"*) pa_err=EILSEQ ;;
	*"No such file"*) pa_err=ENOENT ;;
	*"resource busy"*) pa_err=EBUSY ;;
	*"File exists"*) pa_err=EEXIST ;;
	*"not supported"*) pa_err=EOPNOTSUPP ;;
	*) pa_err=$pa_msg ;;
	esac
}

# The reason of the last error in tracing/error_log.
pa_reason()
{
	tail -n 3 "$TRACEFS/error_log" | sed -n 's/.*error: *//p' | head -n 1
}

# The workload the probes are to see: forks and execs, file I/O, a module
# loaded and unloaded, a call into kprobes_target.  Fails when one of them
# does.
pa_workload()
{
	for i in 1 2; do
		/bin/sh -c 'cat /proc/version' > /dev/null || return 1
	done
	echo "$1" > "$PA_TMP/io" && read -r x < "$PA_TMP/io" || return 1
	rm -f "$PA_TMP/io"
	modprobe trace-printk || return 1
	modprobe -r trace-printk || return 1
	trigger 1
}

# Disable and remove every event of group $1, and stop ftrace's function
# profiler; quiet when there is nothing to undo.
pa_cleanup()
{
	[ -e "$TRACEFS/events/$1/enable" ] &&
		echo 0 > "$TRACEFS/events/$1/enable"
	echo "-:$1/" >> "$TRACEFS/kprobe_events" 2> /dev/null
	[ -w "$TRACEFS/function_profile_enabled" ] &&
		echo 0 > "$TRACEFS/function_profile_enabled" &&
		: > "$TRACEFS/set_ftrace_filter"
	return 0
}

# What removing all of a case's probes must restore: kprobe_events, the
# debugfs kprobes list and ftrace's enabled_functions.
pa_state()
{
	cat "$TRACEFS/kprobe_events" "$KPDIR/list" "$TRACEFS/enabled_functions"
}

# The first three lines of pa_state that $1 does not have, on one line.
pa_state_diff()
{
	pa_state | grep -v -x -F "$1" | head -n 3 | tr '\n' ';'
}

# Is pa_state back to $1?  A removed probe's address leaves ftrace's
# filter in one update with the others a tenth of a second later
# (ftrace_lazy_work in kernel/kprobes/ftrace.c): allow two seconds
# (paced).
pa_restored()
{
	local i=0

	while [ "$(pa_state)" != "$1" ]; do
		[ $i -lt $(tenths 2) ] || return 1
		sleep 0.1
		i=$((i + 1))
	done
}

# The kprobe_profile lines of the events named $1*, summed up: "EVENTS
# HIT HITS MISSED" (how many, how many were hit, hits, misses).
pa_hits()
{
	awk -v p="$1" 'index($1, p) == 1 {
			n++; if ($2 > 0) h++; t += $2; m += $3 }
		END { print n + 0, h + 0, t + 0, m + 0 }' "$TRACEFS/kprobe_profile"
}

# The start of both cases, for event group $1: kprobes_target.ko loaded,
# the group gone; $ke is kprobe_events, $before the splat count, $state0
# pa_state, $nl0 the length of the debugfs list.  Returns 2 (skip) under
# multi-threaded TCG (TCG=multi): breakpoints go in and out of text the
# other vCPU runs, and under multi-threaded TCG it may go on running a
# stale copy (upstream oopsed on such an int3, ours hung).
pa_begin()
{
	grep -q 'ktest\.tcg=single' /proc/cmdline ||
		{ why="cross_cpu=0: multi-threaded TCG (TCG=multi)"; return 2; }
	ke=$TRACEFS/kprobe_events
	[ -w "$ke" ] || fail "no kprobe_events" || return
	[ -r "$TRACEFS/available_filter_functions_addrs" ] ||
		fail "no available_filter_functions_addrs" || return
	need_target || return
	pa_cleanup "$1"
	before=$(splat_count)
	state0=$(pa_state)
	nl0=$(grep -c . "$KPDIR/list")
}

# The functions to probe, in $PA_TMP/targets, one a line:
#	ENTRY OFFSET ALT NAME KEY
# what kprobe_events is to probe for the function's entry, for the
# instruction past its ftrace call (OFFSET, or ALT where that is refused
# with EILSEQ: past an endbr64 too; "-" for none), its name for
# diagnostics, and its key in $PA_FORBIDDEN (@ADDR, the call site, for
# vmlinux; MODULE:NAME).  The functions are the ftrace call sites of
# available_filter_functions_addrs ("ADDR NAME [MOD]"), the blacklisted
# ones included: $PA_FORBIDDEN says which probes must be refused.  On
# upstream, whose blacklist is not under test, the functions that
# $PA_FORBIDDEN blacklists are left out.  A name that /proc/kallsyms
# holds once (for a module's
# function: once in that module) is given as [MOD:]NAME, NAME+5, NAME+9;
# kprobe_events refuses other names as ambiguous, so those functions
# (static ones of the same name in several files) are given by the call
# site's address, and that plus 5 (which is past endbr64 already).  On
# arm64 the call site is the second of the entry's two patchable
# instructions: NAME and NAME+8, or the site's address less 4 and plus 4.
# $pa_nsites and $pa_nblack: the call sites, and how many of them the
# debugfs kprobes/blacklist ("0xSTART-0xEND NAME", END exclusive) covers.
pa_targets()
{
	local text

	rm -rf "$PA_TMP"
	mkdir -p "$PA_TMP" || return 1
	[ -s "$PA_FORBIDDEN" ] || fail "no $PA_FORBIDDEN in the initramfs" ||
		return
	# The keys are link-time addresses.
	text=$(awk '$3 == "_text" { print $1; exit }' /proc/kallsyms | sed 's/^0*//')
	[ "_text $text" = "$(head -n 1 "$PA_FORBIDDEN")" ] ||
		fail "_text is at $text, $PA_FORBIDDEN says" \
		     "'$(head -n 1 "$PA_FORBIDDEN")': the kernel was moved (KASLR)" ||
		return
	# One sweep in address order: blacklist range starts (1) and ends
	# (0), call sites (2); an end sorts before a site at its address,
	# a start before one at its own.
	{
		awk '{ split($1, r, "-"); s = substr(r[1], 3); e = substr(r[2], 3)
			while (length(s) < 16) s = "0" s
			while (length(e) < 16) e = "0" e
			print tolower(s) " 1"; print tolower(e) " 0" }' \
			"$KPDIR/blacklist"
		awk '{ print $1 " 2 " $2 " " $3 }' \
			"$TRACEFS/available_filter_functions_addrs"
	} | sort > "$PA_TMP/sweep" || return 1
	upstream && up=1 || up=0
	awk -v out="$PA_TMP/counts" -v arch="$KP_ARCH" -v up=$up \
		-v fb="$PA_FORBIDDEN" '
	function hexadd(h, n,   i, d, s) {
		s = ""
		for (i = length(h); i > 0; i--) {
			d = index(HEX, substr(h, i, 1)) - 1 + n
			n = int(d / 16)
			s = substr(HEX, d % 16 + 1, 1) s
		}
		return s
	}
	# h - 4, for a site that is at least 4 (a function address)
	function hexsub4(h,   i, d, s, b) {
		s = ""
		b = 4
		for (i = length(h); i > 0; i--) {
			d = index(HEX, substr(h, i, 1)) - 1 - b
			b = d < 0
			s = substr(HEX, d + 16 * b + 1, 1) s
		}
		return s
	}
	function unbracket(m) {
		sub(/^\[/, "", m)
		sub(/\]$/, "", m)
		return m
	}
	BEGIN { HEX = "0123456789abcdef" }
	FILENAME == fb {
		if ($2 == "entry")
			black[$1] = 1
		next
	}
	FILENAME == "/proc/kallsyms" {
		all[$3]++
		if ($4 != "")
			inmod[unbracket($4) ":" $3]++
		next
	}
	$2 == 1 { depth++; next }
	$2 == 0 { depth--; next }
	{
		sites++
		if (depth > 0)
			black++
		m = unbracket($4)
		key = m != "" ? m ":" $3 : $3
		a = $1
		sub(/^0+/, "", a)
		fkey = m != "" ? key : "@" a
		if (up && fkey in black)
			next
		uniq = m != "" ? inmod[key] == 1 : all[$3] == 1
		# arm64: the site is the second of the two patchable
		# instructions at the entry (a probe there is refused); the
		# entry is 4 bytes before it, the first instruction past it 4
		# bytes after.
		if (arch == "aarch64" && uniq)
			print key, key "+8", "-", key, fkey
		else if (arch == "aarch64")
			print "0x" hexsub4($1), "0x" hexadd($1, 4), "-", key "@" $1, fkey
		else if (uniq)
			print key, key "+5", key "+9", key, fkey
		else
			print "0x" $1, "0x" hexadd($1, 5), "-", key "@" $1, fkey
	}
	END { print sites + 0, black + 0 > out }
	' "$PA_FORBIDDEN" /proc/kallsyms "$PA_TMP/sweep" > "$PA_TMP/targets" ||
		return 1
	read -r pa_nsites pa_nblack < "$PA_TMP/counts"
	[ "$pa_nsites" -gt 0 ] && [ -s "$PA_TMP/targets" ] ||
		fail "no probeable function: $pa_nsites ftrace call sites, $pa_nblack blacklisted"
}

# Define the probes of batch file $1 in group kpall: kpa_eN on the entry
# of its Nth function, kpa_oN past its ftrace call.  Each refusal is a
# line "entry|offset ERRNO KEY NAME REASON" in $PA_TMP/refused.
# $PA_TMP/map: "EVENT KEY NAME" of every event defined, $pa_ndef their
# count.
pa_define()
{
	: > "$PA_TMP/map"
	pa_ndef=0
	n=0
	while read -r ent off alt name key; do
		n=$((n + 1))
		if echo "p:kpall/kpa_e$n $ent" >> "$TRACEFS/kprobe_events" \
			2> "$PA_TMP/err"; then
			echo "kpa_e$n $key $name" >> "$PA_TMP/map"
			pa_ndef=$((pa_ndef + 1))
		else
			pa_errno "$PA_TMP/err"
			echo "entry $pa_err $key $name $(pa_reason)" >> "$PA_TMP/refused"
		fi
		if echo "p:kpall/kpa_o$n $off" >> "$TRACEFS/kprobe_events" \
			2> "$PA_TMP/err" ||
		   { [ "$alt" != - ] &&
		     pa_errno "$PA_TMP/err" && [ "$pa_err" = EILSEQ ] &&
		     echo "p:kpall/kpa_o$n $alt" >> "$TRACEFS/kprobe_events" \
			2> "$PA_TMP/err"; }; then
			echo "kpa_o$n $key $name" >> "$PA_TMP/map"
			pa_ndef=$((pa_ndef + 1))
		else
			pa_errno "$PA_TMP/err"
			echo "offset $pa_err $key $name $(pa_reason)" >> "$PA_TMP/refused"
		fi
	done < "$1"
}

# Where batch $1 has got to, on the console: a splat or a hang is then
# placed in its phase.
pa_mark()
{
	echo "probe_all_functions: batch $1: $2" > /dev/kmsg
}

# Which functions t_probe_all_functions probes (ktest.probe_all=): "all",
# or K/N for those whose name hashes to K modulo N.  Default: a
# sixteenth, K/16 with K taken from the MD5 sum of /proc/version, so that
# each kernel build gets its own slice and a rerun of the same build the
# same one.  Every function at once takes about 16 times the default slice
# (half an hour on the base configuration under TCG).
# Sets $pa_k and $pa_n, and $pa_log with ktest.probe_all_log (each
# batch's functions on the console).
pa_slice()
{
	pa_k=
	pa_log=
	for arg in $(cat /proc/cmdline); do
		case $arg in
		ktest.probe_all_log) pa_log=1 ;;
		ktest.probe_all=all) pa_k=0 pa_n=1 ;;
		ktest.probe_all=*/*)
			pa_k=${arg#*=}
			pa_n=${pa_k#*/}
			pa_k=${pa_k%/*}
			;;
		esac
	done
	if [ -z "$pa_k" ]; then
		pa_n=16
		pa_k=$((0x$(md5sum < /proc/version | cut -c 1-6) % pa_n))
	fi
	[ "$pa_n" -gt 0 ] 2> /dev/null && [ "$pa_k" -ge 0 ] 2> /dev/null &&
		[ "$pa_k" -lt "$pa_n" ] ||
		fail "bad ktest.probe_all=$pa_k/$pa_n"
}

# ftrace's function profiler counts the calls of batch $1's functions
# while the workload runs, inside the time their probes are armed: each
# call it counts ran through both probes, so each probe's hits and
# misses add up to at least that count (pa_profile_stop).  Only the
# functions whose name /proc/kallsyms holds once are profiled: the
# profiler's filter and its counts go by name.  The filter is set before
# the probes are armed: ftrace matches each name against every function
# it knows through kallsyms, millions of calls that would hit the probes
# of a batch holding a kallsyms function.
pa_profile_filter()
{
	[ -w "$TRACEFS/function_profile_enabled" ] ||
		fail "no trace_stat function profiler (CONFIG_FUNCTION_PROFILER)" ||
		return
	awk '$1 !~ /^0x/ && $1 !~ /:/ { print $1 }' "$1" > "$PA_TMP/pnames"
	tr '\n' ' ' < "$PA_TMP/pnames" > "$TRACEFS/set_ftrace_filter" ||
		fail "cannot set the profiler's filter"
}

pa_profile_start()
{
	echo 1 > "$TRACEFS/function_profile_enabled" ||
		fail "cannot start the function profiler"
}

# After pa_profile_start, with the workload done: the profiler stopped,
# and in $pa_pcalled how many of the batch's functions it saw called, in
# $pa_pshort the probes (the first five) whose hits and misses fall short
# of their function's calls, as "NAME/KIND HITS+MISSED<CALLS;".  The
# names of the functions seen called are added to $PA_TMP/called.  The
# profiler prints a name cut to 30 characters (function_stat_show()):
# two names that begin alike are left out.
pa_profile_stop()
{
	echo 0 > "$TRACEFS/function_profile_enabled" ||
		fail "cannot stop the function profiler" || return
	set -- $(awk -v called="$PA_TMP/called" '
	FILENAME ~ /pnames$/ { cut[substr($1, 1, 30)]++; next }
	FILENAME ~ /function[0-9]+$/ {
		# NAME HITS, and the times where the graph tracer is built
		if ($2 ~ /^[0-9]+$/)
			calls[$1] += $2
		next
	}
	FILENAME ~ /kprobe_profile$/ { seen[$1] = $2 + $3; next }
	{
		c = substr($3, 1, 30)
		if (cut[c] != 1 || calls[c] + 0 == 0)
			next
		if (!($3 in done)) {
			done[$3] = 1
			n++
			print $3 >> called
		}
		if (seen[$1] < calls[c] && ns++ < 5)
			short = short $3 "/" ($1 ~ /^kpa_e/ ? "entry" : "offset") \
				" " seen[$1] "<" calls[c] ";"
	}
	END { print n + 0, short }' "$PA_TMP/pnames" \
		"$TRACEFS"/trace_stat/function[0-9]* \
		"$TRACEFS/kprobe_profile" "$PA_TMP/map")
	pa_pcalled=$1
	shift
	pa_pshort=$*
}

# Every refusal of t_probe_all_functions ($PA_TMP/refused) is one that
# $PA_FORBIDDEN names, with its errno, and no probe it names was defined
# ($PA_TMP/defined, the batches' maps).  Prints what is wrong, a line
# each, "F " before a failure and "D " before what upstream does
# otherwise (its blacklist, and EINVAL where ours says EBUSY: README,
# "Ours and upstream").
pa_refusals_check()
{
	upstream && up=1 || up=0
	awk -v up=$up -v fb="$PA_FORBIDDEN" -v rf="$PA_TMP/refused" '
	function kind(ev) { return ev ~ /^kpa_e/ ? "entry" : "offset" }
	FILENAME == fb {
		if ($1 != "_text") {
			k = $1 " " $2
			want[k] = $3
			why[k] = $0
			sub(/^[^ ]* [^ ]* [^ ]* /, "", why[k])
		}
		next
	}
	FILENAME == rf {
		k = $3 " " $1
		if (!(k in want))
			print (up ? "D " : "F ") $1 " probe of " $4 " (" $3 \
				") refused with " $2 ", for no reason on record"
		else if (want[k] != $2 &&
			 !(up && want[k] == "EBUSY" && $2 == "EINVAL"))
			print "F " $1 " probe of " $4 ": " $2 ", not " \
				want[k] " (" why[k] ")"
		next
	}
	(($2 " " kind($1)) in want) {
		k = $2 " " kind($1)
		print (up ? "D " : "F ") kind($1) " probe of " $3 " (" $2 \
			") defined, yet it must be refused with " want[k] ": " why[k]
	}' "$PA_FORBIDDEN" "$PA_TMP/refused" "$PA_TMP/defined"
}

# Probes on every function ftrace can trace (or on the slice pa_slice
# says, and the functions of $PA_HOT), $PA_BATCH functions at a time,
# every Nth function of the list in a batch so that each spans the whole
# kernel: for each function a kprobe event on its entry (ftrace-based on
# x86-64, a breakpoint or a jump once optimized on arm64) and one past its
# ftrace call (a breakpoint, or a jump once optimized), through
# kprobe_events.  Asserts, per batch: the debugfs list gains exactly the
# probes defined, none [DISABLED] once the group is enabled; every call
# that ftrace's function profiler counts while the workload (forks,
# execs, file I/O, a module load and unload) runs is counted by both
# probes of its function, as a hit or a miss (pa_profile_stop); disabled,
# they count no more; removed, kprobe_events, the debugfs list and
# enabled_functions are as before the case; no splat.  At the end: the
# probes refused are exactly those $PA_FORBIDDEN names, each with its
# errno (the blacklist, jump labels, static calls and BUG traps, read
# from vmlinux and the modules on the host); the profiler saw each
# function of $PA_HOT called, and both its probes fired.
t_probe_all_functions()
{
	pa_begin kpall || return
	pa_slice || return
	nd0=$(grep -c 'DISABLED' "$KPDIR/list")
	pa_now
	t0=$pa_t
	pa_targets || return
	ntgt=$(grep -c . "$PA_TMP/targets")
	naddr=$(grep -c '^0x' "$PA_TMP/targets")
	nmod=$(grep -c '^[^ ]*:' "$PA_TMP/targets")
	for h in $PA_HOT; do
		awk -v h=$h '$4 == h { f = 1 } END { exit !f }' "$PA_TMP/targets" ||
			fail "$h is not among the probeable functions" || return
	done
	# The slice by a hash of the name, so that a function is in the same
	# slice whatever else the kernel holds.
	awk -v k=$pa_k -v n=$pa_n -v hot=" $PA_HOT " '
	BEGIN { C = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:" }
	{
		s = $4
		sub(/@.*/, "", s)
		v = 0
		for (i = 1; i <= length(s); i++)
			v = (v * 31 + index(C, substr(s, i, 1))) % 65521
		if (v % n == k || index(hot, " " s " "))
			print
	}' "$PA_TMP/targets" > "$PA_TMP/slice"
	nsel=$(grep -c . "$PA_TMP/slice")
	nb=$(((nsel + PA_BATCH - 1) / PA_BATCH))
	awk -v nb=$nb -v d="$PA_TMP" '{ print > (d "/batch" (NR % nb)) }' \
		"$PA_TMP/slice"
	pa_now
	diag "$pa_nsites ftrace call sites, $pa_nblack in the blacklist:" \
	     "$ntgt functions ($nmod of modules, $naddr by address)," \
	     "listed in $(((pa_t - t0) / 100)) s"
	diag "slice $pa_k/$pa_n (ktest.probe_all=$pa_k/$pa_n to repeat it," \
	     "=all for every function): $nsel functions in $nb batches"
	: > "$PA_TMP/refused"
	: > "$PA_TMP/hot"
	: > "$PA_TMP/defined"
	: > "$PA_TMP/called"
	pcalled=0
	tdef=0 ten=0 twork=0 tdis=0 trm=0
	ndef=0 nhit=0 hits=0 missed=0
	b=0
	while [ $b -lt $nb ]; do
		echo "probe_all_functions: batch $b of $nb" > /dev/kmsg
		# ktest.probe_all_log: the batch's functions on the console
		# before their probes exist, for a batch that takes the
		# kernel down with it.
		if [ -n "$pa_log" ]; then
			while read -r x x x name x; do
				echo "probe_all_functions: $name" > /dev/kmsg
			done < "$PA_TMP/batch$b"
		fi
		pa_now
		t1=$pa_t
		tb=$pa_t
		pa_define "$PA_TMP/batch$b"
		pa_mark "$b" "defined, enabling"
		pa_now
		tdef=$((tdef + pa_t - t1))
		ndef=$((ndef + pa_ndef))
		nl=$(grep -c . "$KPDIR/list")
		[ "$nl" = $((nl0 + pa_ndef)) ] ||
			fail "batch $b: $pa_ndef probes defined," \
			     "the list went from $nl0 to $nl lines" ||
			{ pa_cleanup kpall; return 1; }
		pa_profile_filter "$PA_TMP/batch$b" ||
			{ pa_cleanup kpall; return 1; }
		pa_now
		t1=$pa_t
		echo 1 > "$TRACEFS/events/kpall/enable" ||
			fail "batch $b: cannot enable the group" ||
			{ pa_cleanup kpall; return 1; }
		pa_now
		ten=$((ten + pa_t - t1))
		t1=$pa_t
		pa_mark "$b" "enabled, running the workload"
		nd=$(grep -c 'DISABLED' "$KPDIR/list")
		[ "$nd" = "$nd0" ] ||
			fail "batch $b: $((nd - nd0)) probes [DISABLED] after enabling" ||
			{ pa_cleanup kpall; return 1; }
		pa_profile_start || { pa_cleanup kpall; return 1; }
		pa_workload "$b" ||
			fail "batch $b: the workload failed" ||
			{ pa_cleanup kpall; return 1; }
		pa_profile_stop || { pa_cleanup kpall; return 1; }
		[ -z "$pa_pshort" ] ||
			fail "batch $b: probes missed calls that ftrace's profiler" \
			     "counted: $pa_pshort" ||
			{ pa_cleanup kpall; return 1; }
		pcalled=$((pcalled + pa_pcalled))
		cat "$PA_TMP/map" >> "$PA_TMP/defined"
		pa_now
		twork=$((twork + pa_t - t1))
		pa_mark "$b" "workload done, disabling"
		t1=$pa_t
		echo 0 > "$TRACEFS/events/kpall/enable" ||
			fail "batch $b: cannot disable the group" ||
			{ pa_cleanup kpall; return 1; }
		pa_now
		tdis=$((tdis + pa_t - t1))
		set -- $(pa_hits kpa_)
		[ "$3" -gt 0 ] ||
			fail "batch $b: no hit on any of its $1 probes" ||
			{ pa_cleanup kpall; return 1; }
		nhit=$((nhit + $2))
		hits=$((hits + $3))
		missed=$((missed + $4))
		bhit="$2 of $1 probes hit ($3 hits, $4 missed)"
		# The busiest three, as a diagnostic: "NAME/KIND HITS MISSED".
		bhot=$(awk 'NR == FNR { hit[$1] = $2 " " $3; next }
			hit[$1] != "" {
				print $3 "/" ($1 ~ /^kpa_e/ ? "entry" : "offset"), hit[$1]
			}' \
			"$TRACEFS/kprobe_profile" "$PA_TMP/map" |
			sort -k 2 -n -r | head -n 3 | tr '\n' ';')
		awk 'NR == FNR { hit[$1] = $2; next }
			{ print $3, $1 ~ /^kpa_e/ ? "entry" : "offset", hit[$1] + 0 }' \
			"$TRACEFS/kprobe_profile" "$PA_TMP/map" |
			grep -E "^($(echo $PA_HOT | tr ' ' '|')) " >> "$PA_TMP/hot"
		# Disabled: no more hits.
		t=$3
		/bin/sh -c 'cat /proc/version' > /dev/null
		set -- $(pa_hits kpa_)
		[ "$3" = "$t" ] ||
			fail "batch $b: $(($3 - t)) hits while disabled" ||
			{ pa_cleanup kpall; return 1; }
		t1=$pa_t
		pa_mark "$b" "removing"
		echo "-:kpall/" >> "$ke" ||
			fail "batch $b: cannot remove the group" ||
			{ pa_cleanup kpall; return 1; }
		pa_now
		trm=$((trm + pa_t - t1))
		pa_restored "$state0" ||
			fail "batch $b: removed, yet kprobe_events, kprobes/list" \
			     "or enabled_functions differ: $(pa_state_diff "$state0")" ||
			{ pa_cleanup kpall; return 1; }
		[ "$(splat_count)" = "$before" ] ||
			fail "batch $b: kernel splat: $(dmesg | grep -E "$SPLAT" | tail -n 1)" ||
			return
		diag "batch $b: $bhit in $(((pa_t - tb) / 100)) s; busiest: $bhot"
		b=$((b + 1))
	done
	# Nothing left armed: a breakpoint left in the text would trap.
	pa_workload end || fail "the workload failed after the last batch" ||
		return
	[ "$(splat_count)" = "$before" ] ||
		fail "kernel splat after the last batch: $(dmesg | grep -E "$SPLAT" | tail -n 1)" ||
		return
	pa_now
	diag "$nb batches in $(((pa_t - t0) / 100)) s: define $((tdef / 100)) s," \
	     "enable $((ten / 100)) s, workload $((twork / 100)) s," \
	     "disable $((tdis / 100)) s, remove $((trm / 100)) s"
	diag "$ndef probes defined on $nsel functions, $nhit of them hit," \
	     "$hits hits, $missed missed"
	awk '{ n[$1 " " $2]++ } END { for (k in n) print k, n[k] }' \
		"$PA_TMP/refused" | sort | while read -r kind err cnt; do
		diag "refused: $cnt $kind probes with $err"
	done
	grep -E 'EBUSY|EOPNOTSUPP' "$PA_TMP/refused" | head -n 10 |
		sed 's/^/# refused: /'
	pa_refusals_check > "$PA_TMP/bad"
	grep '^D ' "$PA_TMP/bad" | head -n 20 | sed 's/^D /# upstream: /'
	nbad=$(grep -c '^F ' "$PA_TMP/bad")
	[ "$nbad" = 0 ] ||
		fail "$nbad refusals differ from $PA_FORBIDDEN:" \
		     "$(grep '^F ' "$PA_TMP/bad" | head -n 5 | cut -c 3- | tr '\n' ';')" ||
		return
	diag "ftrace's profiler saw $pcalled of the functions called in the" \
	     "workload: each of their probes counted every call"
	for h in $PA_HOT; do
		grep -q -x "$h" "$PA_TMP/called" ||
			fail "ftrace's profiler did not see $h called" || return
		for k in entry offset; do
			c=$(awk -v f=$h -v k=$k '$1 == f && $2 == k { print $3 }' "$PA_TMP/hot")
			[ -n "$c" ] && [ "$c" -gt 0 ] ||
				fail "the $k probe of $h: '$c' hits" || return
		done
	done
}

# Probes at pseudo-random offsets inside functions: the first $PR_COUNT
# FUNC+N of $PR_OFFSETS whose FUNC is a function given by name, off the
# blacklist of $PA_FORBIDDEN
# (as t_probe_all_functions finds them), through kprobe_events.  The
# harness drew them from vmlinux with a fixed seed (N from 1 to the
# function's size less one, for every other pick at most 63) and had
# objdump decode each function: "b", an instruction starts at FUNC+N; "i",
# FUNC+N is inside one; "x", in a return or retpoline site the kernel
# rewrites at boot (functions with alternatives, jump labels, static
# calls are not drawn).  Asserts: a "b" is defined or
# refused with EINVAL or EOPNOTSUPP (a BUG trap, an opcode the backend
# refuses), never EILSEQ; an "i" is refused with EILSEQ; an "x" is
# defined or refused with EILSEQ or EINVAL; both "b" and "i" occur.  The
# debugfs list gains exactly the probes defined; enabled all at once,
# through the workload, disabled and removed, they leave kprobe_events,
# the list and enabled_functions as they were, and no splat.  The hits
# are a diagnostic.
t_probe_random_offsets()
{
	pa_begin kprand || return
	pa_now
	t0=$pa_t
	[ -s "$PR_OFFSETS" ] ||
		fail "no $PR_OFFSETS: the harness writes it (harness/offsets.py)" ||
		return
	pa_targets || return
	# Functions given by name, and not on the blacklist.
	awk -v max=$PR_COUNT -v fb="$PA_FORBIDDEN" '
		FILENAME == fb { if ($2 == "entry") black[$1] = 1; next }
		FILENAME != ARGV[3] {
			if ($1 !~ /^0x/ && $1 !~ /:/ && !($5 in black))
				ok[$1] = 1
			next
		}
		($1 in ok) && n < max { print; n++ }' \
		"$PA_FORBIDDEN" "$PA_TMP/targets" "$PR_OFFSETS" > "$PA_TMP/picks"
	npick=$(grep -c . "$PA_TMP/picks")
	[ "$npick" = $PR_COUNT ] ||
		fail "$npick of the functions of $PR_OFFSETS probeable, want $PR_COUNT" ||
		return
	ndef=0 neilseq=0 neinval=0 n=0 nb=0 ni=0
	: > "$PA_TMP/map"
	: > "$PA_TMP/wrong"
	while read -r f o kind; do
		n=$((n + 1))
		p=$f+$o
		[ "$kind" = b ] && nb=$((nb + 1))
		[ "$kind" = i ] && ni=$((ni + 1))
		if echo "p:kprand/kpr_$n $p" >> "$ke" 2> "$PA_TMP/err"; then
			ndef=$((ndef + 1))
			echo "kpr_$n $p" >> "$PA_TMP/map"
			[ "$kind" = i ] &&
				echo "$p (inside an instruction) defined" >> "$PA_TMP/wrong"
			continue
		fi
		pa_errno "$PA_TMP/err"
		e=$pa_err
		case $kind/$e in
		i/EILSEQ|x/EILSEQ) neilseq=$((neilseq + 1)) ;;
		b/EINVAL|b/EOPNOTSUPP|x/EINVAL)
			neinval=$((neinval + 1))
			[ $neinval -le 10 ] && diag "$e: $p: $(pa_reason)"
			;;
		*)
			echo "$p ($kind) refused with $e ($(pa_reason))" >> "$PA_TMP/wrong"
			;;
		esac
	done < "$PA_TMP/picks"
	pa_now
	diag "$npick offsets ($nb at an instruction, $ni inside one, by objdump):" \
	     "$ndef defined, $neilseq EILSEQ, $neinval otherwise refused" \
	     "($(((pa_t - t0) / 100)) s)"
	[ -s "$PA_TMP/wrong" ] &&
		{ fail "$(grep -c . "$PA_TMP/wrong") answers differ from objdump's:" \
		       "$(head -n 5 "$PA_TMP/wrong" | tr '\n' ';')"
		  pa_cleanup kprand; return 1; }
	[ $nb -gt 0 ] && [ $ni -gt 0 ] && [ $ndef -gt 0 ] && [ $neilseq -gt 0 ] ||
		fail "$nb at an instruction, $ni inside, $ndef defined, $neilseq EILSEQ:" \
		     "random offsets are both" ||
		{ pa_cleanup kprand; return 1; }
	nl=$(grep -c . "$KPDIR/list")
	[ "$nl" = $((nl0 + ndef)) ] ||
		fail "$ndef probes defined, the list went from $nl0 to $nl lines" ||
		{ pa_cleanup kprand; return 1; }
	echo 1 > "$TRACEFS/events/kprand/enable" ||
		fail "cannot enable the group" || { pa_cleanup kprand; return 1; }
	pa_workload r || fail "the workload failed" ||
		{ pa_cleanup kprand; return 1; }
	echo 0 > "$TRACEFS/events/kprand/enable" ||
		fail "cannot disable the group" || { pa_cleanup kprand; return 1; }
	set -- $(pa_hits kpr_)
	awk 'NR == FNR { hit[$1] = $2; next } hit[$1] > 0 { print $2 }' \
		"$TRACEFS/kprobe_profile" "$PA_TMP/map" | head -n 10 |
		tr '\n' ' ' > "$PA_TMP/hitlist"
	diag "$2 of $1 probes hit, $3 hits, $4 missed; some hit: $(cat "$PA_TMP/hitlist")"
	echo "-:kprand/" >> "$ke" || fail "cannot remove the group" ||
		{ pa_cleanup kprand; return 1; }
	pa_workload r || fail "the workload failed after the removal" || return
	pa_restored "$state0" ||
		fail "removed, yet kprobe_events, kprobes/list or enabled_functions" \
		     "differ: $(pa_state_diff "$state0")" ||
		return
	pa_now
	diag "done in $(((pa_t - t0) / 100)) s"
	[ "$(splat_count)" = "$before" ] ||
		fail "kernel splat: $(dmesg | grep -E "$SPLAT" | tail -n 1)"
}

AREA_CASES="stress_suite boundary_suite probe_all_functions probe_random_offsets"
ktest_main "$@"
