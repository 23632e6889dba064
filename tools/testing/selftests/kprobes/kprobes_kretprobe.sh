#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# kprobes selftests, return probes: the KUnit suite of kprobes_kretprobe.ko, r: events in
# kprobe_events and the list, and the perf PMU's retprobe.  Skipped on a
# kernel without CONFIG_KRETPROBES.
# Prints KTAP; arguments name the cases to run (default: all).

cd "$(dirname "$0")" || exit 1
. ./kprobes_lib.sh

# The kprobes_kretprobe KUnit suite of kprobes_kretprobe.ko (its KTAP goes
# to the kernel log).  On upstream one case, kpr_no_miss, is expected to
# fail (upstream misses returns once maxactive calls are in flight; see
# the module): there the suite passes when every other case does.
t_kretprobe_suite()
{
	s=kprobes_kretprobe
	have_kret || { why=$NO_KRET; return 2; }
	param=
	upstream && param="upstream=1"
	kunit_module $s $s $param || return
	if upstream; then
		bad=$(echo "$log" |
			sed -n 's/^ *not ok [0-9]* \(kpr_[a-z0-9_]*\).*/\1/p' |
			grep -v -x kpr_no_miss | tr '\n' ' ')
		[ -z "$bad" ] || fail "failed cases: $bad" || return
		echo "$log" | grep -q -E '^ *not ok [0-9]+ kpr_no_miss' &&
			diag "kpr_no_miss failed, as expected on upstream"
		return 0
	fi
	! suite_failed $s || fail "suite $s failed"
}

# perf_event_open() with the kprobe PMU and its retprobe bit: a return
# probe counts each read's return once, and is sampled where vfs_read
# returns to, in its caller.
t_perf_kretprobe_pmu()
{
	[ -r /sys/bus/event_source/devices/kprobe/type ] ||
		{ why="no kprobe PMU"; return 2; }
	have_kret || { why=$NO_KRET; return 2; }
	[ -x ./kprobes_perf ] || { why="kprobes_perf not built"; return 2; }
	f=/sys/bus/event_source/devices/kprobe/format/retprobe
	[ "$(cat $f 2>/dev/null)" = config:0 ] ||
		fail "$f reads '$(cat $f 2>/dev/null)'" || return
	out=$(./kprobes_perf -r vfs_read 2>&1)
	rc=$?
	[ $rc -eq 0 ] || fail "kprobes_perf -r: $out" || return
	diag "$out"
}

# Undo t_fgraph_kretprobe: its event gone, the nop tracer, no filters.
fg_cleanup()
{
	[ -e "$TRACEFS/events/kpfg/enable" ] &&
		echo 0 > "$TRACEFS/events/kpfg/enable"
	echo nop > "$TRACEFS/current_tracer"
	echo 0 > "$TRACEFS/options/funcgraph-tail"
	: > "$TRACEFS/set_graph_function"
	: > "$TRACEFS/set_ftrace_filter"
	ev_cleanup
}

# Wait (10 s, paced) for the return probe on kpt_shell_a to be carried by
# ftrace's call where entry probes are (x86): a fresh probe is a call
# of kprobes' own over ftrace's NOP until its hand-off to ftrace, which puts
# the function in enabled_functions.
fg_on_ftrace()
{
	local i=0

	on_x86 || return 0
	while ! grep -q '^kpt_shell_a ' "$TRACEFS/enabled_functions"; do
		[ $i -lt $(tenths 10) ] || return 1
		sleep 0.1
		i=$((i + 1))
	done
}

# A return probe and the function-graph tracer on one function, both of
# which take over its return address: kpt_shell_a(x), which returns
# x + 9, called by kprobes_target's trigger with x = 0..N-1.  Where entry
# probes are carried by ftrace, ftrace calls the newest of its users
# first, so the two orders differ: "kretprobe-first" waits for the probe
# to be handed to ftrace before the graph tracer starts (the graph
# tracer takes the return address first, the probe then takes it from
# the graph tracer's hook); "graph-first" calls the function right after
# the probe is registered (its own call runs first, then the graph
# tracer's entry).  In either, the N calls return to their caller (the
# trigger goes on to its next target and returns success), the return
# probe reports each return once with the value the function returns
# (x + 9, known from the target's source), the graph trace shows the N
# calls and their N returns (with funcgraph-tail, a return reads
# "} /* kpt_shell_a */" where it is not folded into "kpt_shell_a();"),
# and nothing is missed.
FG_CALLS=5
t_fgraph_kretprobe()
{
	have_kret || { why=$NO_KRET; return 2; }
	grep -q -w function_graph "$TRACEFS/available_tracers" ||
		{ why="no function_graph tracer (CONFIG_FUNCTION_GRAPH_TRACER)"; return 2; }
	need_target || return
	fg_cleanup
	before=$(splat_count)
	want=$(seq 9 $((FG_CALLS + 8)) | tr '\n' ' ')
	for order in kretprobe-first graph-first; do
		echo > "$TRACEFS/trace"
		echo kpt_shell_a > "$TRACEFS/set_ftrace_filter" &&
			echo kpt_shell_a > "$TRACEFS/set_graph_function" &&
			echo 1 > "$TRACEFS/options/funcgraph-tail" ||
			fail "cannot filter the graph tracer on kpt_shell_a" ||
			{ fg_cleanup; return 1; }
		[ $order = graph-first ] &&
			{ echo function_graph > "$TRACEFS/current_tracer" ||
			  fail "cannot start function_graph" || { fg_cleanup; return 1; }; }
		echo "r:kpfg/kpfg_ret kprobes_target:kpt_shell_a rv=\$retval:s32" \
			>> "$TRACEFS/kprobe_events" &&
			echo 1 > "$TRACEFS/events/kpfg/enable" ||
			fail "cannot define and enable kpfg/kpfg_ret" ||
			{ fg_cleanup; return 1; }
		if [ $order = kretprobe-first ]; then
			fg_on_ftrace ||
				fail "the return probe is not handed to ftrace after" \
				     "$(paced 10) s: $(grep kpt_shell_a "$KPDIR/list")" ||
				{ fg_cleanup; return 1; }
			echo function_graph > "$TRACEFS/current_tracer" ||
				fail "cannot start function_graph" || { fg_cleanup; return 1; }
		fi
		trigger $FG_CALLS || fail "$order: the trigger failed" ||
			{ fg_cleanup; return 1; }
		echo 0 > "$TRACEFS/tracing_on"
		got=$(sed -n 's/.* kpfg_ret: (.*<- kpt_shell_a) rv=\(-*[0-9]*\).*/\1/p' \
			"$TRACEFS/trace" | sort -n | tr '\n' ' ')
		[ "$got" = "$want" ] ||
			fail "$order: the return probe saw '$got', want '$want'" ||
			{ fg_cleanup; return 1; }
		n=$(grep -c -E 'kpt_shell_a( \[kprobes_target\])?\(\)' "$TRACEFS/trace")
		r=$(grep -c -E 'kpt_shell_a( \[kprobes_target\])?\(\);|\} /\* kpt_shell_a' \
			"$TRACEFS/trace")
		[ "$n" = $FG_CALLS ] && [ "$r" = $FG_CALLS ] ||
			fail "$order: the graph trace shows $n calls of kpt_shell_a" \
			     "and $r returns, want $FG_CALLS each:" \
			     "$(grep kpt_shell_a "$TRACEFS/trace" | grep -v kpfg_ret | head -n 3)" ||
			{ fg_cleanup; return 1; }
		m=$(awk '$1 == "kpfg_ret" { print $3 }' "$TRACEFS/kprobe_profile")
		[ "$m" = 0 ] || fail "$order: $m returns missed" ||
			{ fg_cleanup; return 1; }
		echo 1 > "$TRACEFS/tracing_on"
		fg_cleanup
	done
	[ "$(splat_count)" = "$before" ] ||
		fail "kernel splat: $(dmesg | grep -E "$SPLAT" | tail -n 1)"
}

AREA_CASES="kretprobe_suite perf_kretprobe_pmu fgraph_kretprobe"
ktest_main "$@"
