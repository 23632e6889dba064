#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# kprobes selftests, the older API and the hit counts: the KUnit suites of
# kprobes_compat.ko (jprobes and fault_handler, CONFIG_KPROBES_COMPAT:
# skipped where the kernel has no jprobes, as upstream) and of
# kprobes_stats.ko (debugfs kprobes/stats: skipped without that file),
# and the jprobe sample.
# Prints KTAP; arguments name the cases to run (default: all).

cd "$(dirname "$0")" || exit 1
. ./kprobes_lib.sh

NO_COMPAT="no jprobes in this kernel (CONFIG_KPROBES_COMPAT off, or upstream)"

t_compat_suite()
{
	# A kernel with jprobes but no kprobes_compat.ko: built on x86 only.
	if [ ! -f $MODS/kprobes_compat.ko ] && grep -q ' register_jprobe$' /proc/kallsyms; then
		on_x86 "kprobes_compat.ko (x86 registers)" || return
	fi
	[ -f $MODS/kprobes_compat.ko ] || { why=$NO_COMPAT; return 2; }
	kunit_module kprobes_compat kprobes_compat || return
	! suite_failed kprobes_compat || fail "suite kprobes_compat failed"
}

t_stats_suite()
{
	[ -e "$DEBUGFS/kprobes/stats" ] ||
		{ why="no debugfs kprobes/stats (upstream)"; return 2; }
	kunit_module kprobes_stats kprobes_stats || return
	! suite_failed kprobes_stats || fail "suite kprobes_stats failed"
}

# The jprobe sample (samples/kprobes/jprobe_example.ko) on kernel_clone:
# it is listed as 'j', logs each fork's arguments, and its unload message
# counts every call it logged.
t_jprobe_sample()
{
	ko=samples/jprobe_example.ko
	[ -f $ko ] || { why=$NO_COMPAT; return 2; }
	kmsg_mark jprobe_example
	insmod $ko || fail "insmod $ko failed" || return
	for i in 1 2 3; do
		sh -c 'exec true'
	done
	l=$(grep ' j  kernel_clone+0x' "$DEBUGFS/kprobes/list")
	rmmod jprobe_example || fail "rmmod jprobe_example failed" || return
	log=$(kmsg_since jprobe_example)
	[ -n "$l" ] || fail "no 'j' line for kernel_clone in the list" || return
	n=$(echo "$log" | grep -c 'kernel_clone(flags=')
	bye=$(echo "$log" | grep 'jprobe on kernel_clone removed:')
	calls=$(echo "$bye" | sed -n 's/.*removed: \([0-9]*\) calls.*/\1/p')
	diag "jprobe_example: $n calls logged, $calls counted; list: $l"
	[ "$n" -ge 3 ] || fail "$n calls logged for 3 forks" || return
	[ "$calls" = "$n" ] || fail "$calls calls counted on unload, $n logged"
}

AREA_CASES="compat_suite stats_suite jprobe_sample"
ktest_main "$@"
