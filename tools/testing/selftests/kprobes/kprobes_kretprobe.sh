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

AREA_CASES="kretprobe_suite perf_kretprobe_pmu"
ktest_main "$@"
