#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# kprobes selftests, probes on module text: on a module's own __init code, on a module
# that goes away ([GONE]), on a module not loaded yet, and a module going
# after ftrace died (ftrace_kill, which leaves ftrace dead until reboot:
# it runs only with KPROBES_FTRACE_KILL=1, as run_tests.sh sets it).
# Prints KTAP; arguments name the cases to run (default: all).

cd "$(dirname "$0")" || exit 1
. ./kprobes_lib.sh

# The target module probes its own __init function from its init and
# keeps the probe: it fired during init and is [GONE] once init is over.
t_init_probe_gone()
{
	need_target || return
	[ "$(cat $TGT/init_reg_ret)" = 0 ] ||
		fail "register_kprobe on own __init: $(cat $TGT/init_reg_ret)" ||
		return
	[ "$(cat $TGT/init_hits)" = 1 ] ||
		fail "init probe hits: $(cat $TGT/init_hits), want 1" || return
	addr=$(cat $TGT/init_probe_addr)
	line=$(list_line "$addr")
	[ -n "$line" ] || fail "no list line for $addr" || return
	# powerpc keeps a module's __init text with the rest of it
	# (module_init_section() says no section is init): its symbols stay
	# in kallsyms, and so does the probe, live.
	if grep -q -E '^[0-9a-f]+ t kpt_init_func[[:space:]]+\[kprobes_target\]' \
		/proc/kallsyms; then
		if echo "$line" | grep -q '\[GONE\]'; then
			fail "gone, yet its text is kept: $line"
			return
		fi
		return 0
	fi
	echo "$line" | grep -q '\[GONE\]' || fail "not gone: $line"
}

# A probe on a module function fires, count exact, while the module lives.
t_module_probe()
{
	holder sym=kprobes_target:kpt_shell_a sym2=kprobes_target:kpt_shell_b ||
		fail "insmod kprobes_holder.ko failed" || return
	trigger 10
	[ "$(hld hits)" = 10 ] && [ "$(hld hits2)" = 10 ] ||
		fail "hits $(hld hits)/$(hld hits2), want 10/10"
}

# rmmod of a probed module: the probe stays registered, shows [GONE], and
# unregistering it later is quiet.
t_module_unload_gone()
{
	holder sym=kprobes_target:kpt_shell_a ||
		fail "insmod kprobes_holder.ko failed" || return
	trigger 2
	[ "$(hld hits)" = 2 ] || fail "hits $(hld hits), want 2" || return
	target_gone "$(hld addr)" "$(splat_count)"
}

# A kprobe event on a module function with a static branch, defined while
# the module is not loaded: it takes effect whenever the module is, across
# insmod/rmmod rounds, counting every call with the branch either way (the
# key flipped while the probe is on), and leaves no trace when the module
# goes.
t_pending_module()
{
	[ -w "$TRACEFS/kprobe_events" ] || fail "no kprobe_events" || return
	unload kprobes_target || fail "cannot unload kprobes_target" || return
	ev_cleanup
	before=$(splat_count)
	echo 'p:kpk_pend kprobes_target:kpt_static_fn' >> "$TRACEFS/kprobe_events" ||
		fail "cannot define p:kpk_pend kprobes_target:kpt_static_fn" || return
	echo 1 > "$TRACEFS/events/kprobes/kpk_pend/enable" ||
		fail "cannot enable the pending event" || return
	rc=0
	for round in 1 2 3; do
		insmod $MODS/kprobes_target.ko pace=$PACE ||
			{ fail "round $round: insmod kprobes_target.ko failed"; rc=1; break; }
		h0=$(ev_hits kpk_pend)
		trigger 3
		echo 1 > "$TGT/static_on"
		trigger 2
		echo 0 > "$TGT/static_on"
		h1=$(ev_hits kpk_pend)
		unload kprobes_target ||
			{ fail "round $round: rmmod kprobes_target failed"; rc=1; break; }
		[ "$((h1 - h0))" = 5 ] ||
			{ fail "round $round: $((h1 - h0)) hits for 5 calls"; rc=1; break; }
	done
	echo 0 > "$TRACEFS/events/kprobes/kpk_pend/enable"
	echo '-:kpk_pend' >> "$TRACEFS/kprobe_events"
	[ $rc -eq 0 ] || return $rc
	grep -q kpt_static_fn "$KPDIR/list" &&
		{ fail "left in the list: $(grep kpt_static_fn "$KPDIR/list")"; return; }
	[ "$(splat_count)" = "$before" ] || fail "kernel splat"
}

# rmmod of a module whose function carries an ftrace-based kprobe, after
# ftrace declared itself dead: the probe stops firing, the module goes,
# the probe shows [GONE] and is unregistered quietly.  Ftrace stays dead:
# the last case of a run.  On x86-64 ftrace dies as it does in the field,
# of a bug found in the middle of an update (kprobes_holder's
# ftrace_bug): that update had already met kprobes' own call over
# kpt_shell_b's nop, and unregistering the probe must still put the nop
# back (and leave no int3, on which kpt_shell_b's next call would die).  The
# bug's two warnings (ftrace_verify_code(), ftrace_bug()) are the only
# splats allowed, so no_splat runs before this case.
t_ftrace_kill()
{
	[ "$KPROBES_FTRACE_KILL" = 1 ] ||
		{ why="leaves ftrace dead until reboot: set KPROBES_FTRACE_KILL=1"; return 2; }
	need_target || return
	holder sym=kprobes_target:kpt_shell_a ||
		fail "insmod kprobes_holder.ko failed" || return
	trigger 2
	[ "$(hld hits)" = 2 ] || fail "hits $(hld hits), want 2" || return
	a=$(hld addr)
	# Only a probe that ftrace carries stops with it.  Outside x86-64 a
	# kernel may have no kprobes on ftrace (arm64 6.12): its entry probes
	# are breakpoints, which ftrace_kill() leaves alone.
	if [ "$KP_ARCH" != x86_64 ]; then
		i=0
		while ! list_line "$a" | grep -q FTRACE && [ $i -lt $(tenths 1) ]; do
			sleep 0.1
			i=$((i + 1))
		done
		list_line "$a" | grep -q FTRACE ||
			{ why="no kprobes on ftrace: the probe on kpt_shell_a is a breakpoint"
			  return 2; }
	fi
	before=$(splat_count)
	if [ "$KP_ARCH" = x86_64 ]; then
		echo 1 > "$HLD/ftrace_bug" || fail "ftrace_bug failed" || return
		b=$(hld bug_byte0)
		# Upstream puts an entry probe in ftrace's filter at once.
		upstream || [ "$(hld bug_pending)" = Y ] ||
			fail "kpt_shell_b's probe was never kprobes' call over the nop (its first byte at the end: $b)" ||
			return
		# 0xcc = 204: do not call kpt_shell_b, it would oops.
		[ "$b" != 204 ] ||
			fail "an int3 stays on kpt_shell_b after its probe went" ||
			return
		# Ours: the nop5's first byte (0x0f); upstream: ftrace's call.
		want=15
		upstream && want=232
		[ "$b" = "$want" ] ||
			fail "kpt_shell_b's first byte is $b, want $want" || return
		dmesg | grep -E "$SPLAT" | tail -n +$((before + 1)) > /tmp/kp_bug
		[ -s /tmp/kp_bug ] || fail "no ftrace bug: ftrace lived" || return
		# An out-of-tree build (O=) prints the paths with a prefix.
		own=' at ([^ ]*/)?arch/x86/kernel/ftrace\.c:[0-9]+ ftrace_verify_code'
		own="$own| at ([^ ]*/)?kernel/trace/ftrace\.c:[0-9]+ ftrace_bug"
		if grep -v -E "$own" /tmp/kp_bug > /tmp/kp_bug_other; then
			fail "a splat besides ftrace's own: $(head -n 1 /tmp/kp_bug_other)"
			return
		fi
		before=$(splat_count)
	else
		echo 1 > "$HLD/ftrace_kill" || fail "cannot call ftrace_kill()" ||
			return
	fi
	trigger 2
	[ "$(hld hits)" = 2 ] || fail "fired after ftrace_kill(): $(hld hits)" ||
		return
	target_gone "$a" "$before"
}

# A return probe on a function of kprobes_target, held by kprobes_holder
# (which does not link against the target), while a call is in flight:
# rmmod kprobes_target then lets the call return from the module's exit.
# Asserts: no crash; the return is caught exactly once, with the value the
# function returned (x + KPT_KRET_UNLOAD_ADD, 0x7700 in kprobes_target.h)
# and nothing missed; the probe shows [GONE]; rmmod kprobes_holder then
# unregisters it quietly, without a splat (kmemleak, later, finds no leak).
t_kretprobe_gone_in_flight()
{
	have_kret || { why=$NO_KRET; return 2; }
	need_target || return
	holder kret=1 sym=kprobes_target:kpt_kret_unload_wait ||
		fail "insmod kprobes_holder.ko kret=1 failed" || return
	splats=$(splat_count)
	addr=$(hld addr)
	line=$(list_line "$addr")
	set -- $line
	[ "$2" = r ] && echo "$3" | grep -q -x -E "kpt_kret_unload_wait\+$ENTRY" ||
		fail "not listed as a return probe on its entry: '$line'" || return
	echo 5 > "$TGT/unload_call" || fail "cannot start the call" || return
	i=0
	while [ "$(cat "$TGT/unload_inside")" != 1 ] && [ $i -lt $(tenths 10) ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ "$(cat "$TGT/unload_inside")" = 1 ] ||
		fail "the call did not start within $(paced 10) s" || return
	[ "$(hld hits)" = 1 ] && [ "$(hld returns)" = 0 ] ||
		fail "in flight: entries $(hld hits), returns $(hld returns), want 1, 0" ||
		return
	rmmod kprobes_target || fail "rmmod kprobes_target failed" || return
	loaded kprobes_target && { fail "kprobes_target still loaded"; return; }
	[ "$(hld returns)" = 1 ] ||
		fail "returns $(hld returns) after the unload, want 1" || return
	[ "$(hld retval)" = $((5 + 0x7700)) ] ||
		fail "return value $(hld retval), want $((5 + 0x7700))" || return
	[ "$(hld hits)" = 1 ] && [ "$(hld nmissed)" = 0 ] ||
		fail "entries $(hld hits), nmissed $(hld nmissed), want 1, 0" ||
		return
	line=$(list_line "$addr")
	echo "$line" | grep -q '\[GONE\]' || fail "not gone: '$line'" || return
	rmmod kprobes_holder || fail "rmmod kprobes_holder failed" || return
	[ -z "$(list_line "$addr")" ] || fail "still listed after unregister" ||
		return
	[ "$(splat_count)" = "$splats" ] || fail "kernel splat"
}

AREA_CASES="init_probe_gone module_probe module_unload_gone kretprobe_gone_in_flight"
AREA_CASES="$AREA_CASES pending_module ftrace_kill"
ktest_main "$@"
