#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# kprobes selftests, jump optimization: the sysctl debug.kprobes-optimization, the states
# an optimized probe goes through (the KUnit suite of kprobes_opt.ko), and
# a kprobe event optimized, unoptimized and optimized again.
# Prints KTAP; arguments name the cases to run (default: all).

cd "$(dirname "$0")" || exit 1
. ./kprobes_lib.sh

# Jump optimization is on by default: the sysctl reads 1 before any case
# has written it (this case runs first, after cpus).
t_opt_sysctl_default()
{
	[ -e "$OPT_SYSCTL" ] || { why="$NO_OPT"; return 2; }
	v=$(cat "$OPT_SYSCTL")
	[ "$v" = 1 ] || fail "$OPT_SYSCTL reads $v at boot, want 1"
}

# The kprobes_optimizer KUnit suite of kprobes_opt.ko: the states of an
# optimized probe in the list, the registers handlers see on each path
# (breakpoint, boosted, optimized, ftrace), optimization while two CPUs
# call.  Its cases that need jump optimization skip themselves without
# the sysctl; the others run anyway.  On x86 and arm64, each with its
# own targets (kpt_asm.S, kpt_asm_32.S, kpt_opt_arm64.S).
t_opt_suite()
{
	asm_targets "kprobes_opt.ko (kpt_asm*.S, kpt_opt_arm64.S)" || return
	kunit_module kprobes_opt kprobes_optimizer $(cross_cpu_param) || return
	! suite_failed kprobes_optimizer || fail "suite kprobes_optimizer failed"
}

# $1 calls of the target must be $1 more hits of kpk_optev.
opt_hits()
{
	h0=$(ev_hits kpk_optev)
	trigger "$1"
	h1=$(ev_hits kpk_optev)
	[ "$((h1 - h0))" = "$1" ] ||
		fail "$2: $((h1 - h0)) hits for $1 calls ($opt_line)"
}

t_opt_events_steps()
{
	# The first instruction after the ftrace call site (5 bytes, 9 with
	# endbr64; arm64: 8, its two patchable instructions): kprobe events
	# only go on functions ftrace can trace.
	off=5
	while ! echo "p:kpk_optev kprobes_target:kpt_opt_c+$off" \
		> "$TRACEFS/kprobe_events" 2>/dev/null; do
		off=$((off + 1))
		[ $off -le 16 ] ||
			fail "no offset in 5..16 of kpt_opt_c accepted" || return
	done
	sym="kpt_opt_c\\+0x$(printf %x $off)"
	diag "p:kpk_optev kprobes_target:kpt_opt_c+$off"
	echo 1 > "$TRACEFS/events/kprobes/kpk_optev/enable" ||
		fail "cannot enable" || return
	opt_wait "$sym" yes ||
		fail "not [OPTIMIZED] after $(paced 10) s: '$opt_line'" || return
	opt_hits 10 "optimized" || return
	# Its detour lives in a page kallsyms (and so perf) can name.
	grep -q -E '^[0-9a-f]+ t kprobe_optinsn_page[[:space:]]+\[__builtin__kprobes\]$' \
		/proc/kallsyms ||
		fail "no kprobe_optinsn_page [__builtin__kprobes] in /proc/kallsyms" ||
		return
	echo 0 > "$OPT_SYSCTL"
	[ "$(cat "$OPT_SYSCTL")" = 0 ] ||
		fail "the sysctl reads '$(cat "$OPT_SYSCTL")' after writing 0" ||
		return
	opt_wait "$sym" no ||
		fail "still [OPTIMIZED] $(paced 10) s after writing 0: '$opt_line'" ||
		return
	opt_hits 10 "sysctl 0" || return
	echo 1 > "$OPT_SYSCTL"
	opt_wait "$sym" yes ||
		fail "not [OPTIMIZED] again $(paced 10) s after writing 1: '$opt_line'" ||
		return
	opt_hits 10 "sysctl 1" || return
	echo 0 > "$TRACEFS/events/kprobes/kpk_optev/enable"
	grep -q "kpk_optev: (kpt_opt_c+0x$(printf %x $off)" "$TRACEFS/trace" ||
		fail "no kpk_optev: line in trace" || return
	echo '-:kpk_optev' >> "$TRACEFS/kprobe_events" ||
		fail "cannot remove" || return
	grep -q -E "[[:space:]]$sym([[:space:]]|\$)" "$KPDIR/list" &&
		{ fail "still listed: $(grep kpt_opt_c "$KPDIR/list")"; return; }
	return 0
}

# The optimization sysctl with a kprobe event: p: on an instruction that
# can be optimized (the first after the entry of kpt_opt_c, straight-line
# code, see kprobes_target.h; x86-64: past the five-byte call, or nine
# with endbr64; arm64: +8, past ftrace's two instructions, the offsets
# before it refused) is [OPTIMIZED] in the list once enabled;
# writing 0 to the sysctl takes the mark away, writing 1 brings it back;
# every call is one hit all along.  The sysctl is put back as it was.
# Skipped on a kernel without the sysctl.
t_opt_sysctl_events()
{
	[ -e "$OPT_SYSCTL" ] || { why=$NO_OPT; return 2; }
	opt_in_modules || { why=$NO_OPT_MOD; return 2; }
	[ -w "$TRACEFS/kprobe_events" ] || fail "no kprobe_events" || return
	need_target || return
	ev_cleanup
	opt_old=$(cat "$OPT_SYSCTL")
	echo 1 > "$OPT_SYSCTL" || fail "cannot write 1 to $OPT_SYSCTL" || return
	t_opt_events_steps
	rc=$?
	ev_cleanup
	echo "$opt_old" > "$OPT_SYSCTL"
	return $rc
}

# A probe born while the sysctl is 0 (the kprobe_opt_types pattern, turned
# around): p: on the optimizable instruction of kpt_opt_c, enabled while
# jump optimization is off, stays a breakpoint (never [OPTIMIZED], every
# call a hit); writing 1 optimizes it within 10 s, and every call is still
# a hit.  The sysctl is put back by the reset.
t_opt_sysctl_reopt()
{
	[ -e "$OPT_SYSCTL" ] || { why=$NO_OPT; return 2; }
	opt_in_modules || { why=$NO_OPT_MOD; return 2; }
	[ -w "$TRACEFS/kprobe_events" ] || fail "no kprobe_events" || return
	need_target || return
	echo 0 > "$OPT_SYSCTL" || fail "cannot write 0 to $OPT_SYSCTL" || return
	off=$(opt_c_offset) || fail "no offset in 5..16 of kpt_opt_c accepted" ||
		return
	sym="kpt_opt_c\\+0x$(printf %x "$off")"
	echo 1 > "$TRACEFS/events/kprobes/kpk_optev/enable" ||
		fail "cannot enable" || return
	# Give the optimizer the time it would take to act, had it to.
	sleep 1
	opt_wait "$sym" no || fail "[OPTIMIZED] with the sysctl at 0: '$opt_line'" ||
		return
	opt_hits 10 "born with the sysctl at 0" || return
	echo 1 > "$OPT_SYSCTL" || fail "cannot write 1 to $OPT_SYSCTL" || return
	opt_wait "$sym" yes ||
		fail "not [OPTIMIZED] $(paced 10) s after writing 1: '$opt_line'" || return
	opt_hits 10 "optimized after 0 -> 1"
}

AREA_CASES="opt_sysctl_default opt_suite opt_sysctl_events opt_sysctl_reopt"
ktest_main "$@"
