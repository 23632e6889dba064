#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Every kprobes selftest as one KTAP stream: the cases of each area script
# (kprobes_*.sh, see the Makefile), in that order, then the checks that
# look at the whole run.  The kprobes harness boots a kernel and runs this
# from the directory of the installed tests; ktest.only=NAME,NAME,... on
# the kernel command line limits it to those cases.
#
# The KUnit suites report to the kernel log; the *_suite cases and
# kunit_suites sum each one up.  ftracetest's cases are nested under its
# case.  At the end:
#   kmemleak     nothing the cases allocated is unreferenced
#   no_splat     no warning, BUG or oops in the kernel log all along
#   ftrace_kill  a probed module going after ftrace died (ftrace stays
#                dead: hence last; it checks its own splats, which are
#                ftrace's warnings about the bug it provokes on x86-64)
#   kmemleak_last  kmemleak again, after ftrace_kill, once kprobes'
#                deferred work and RCU frees have run

cd "$(dirname "$0")" || exit 1
KTEST_ALL=1
KPROBES_FTRACE_KILL=1
. ./kprobes_lib.sh

all=
for area in registration debugfs modules events optimization kretprobe \
	stress compat; do
	. ./kprobes_$area.sh
	all="$all $AREA_CASES"
done
cases=
for c in $all; do
	[ "$c" = ftrace_kill ] || cases="$cases $c"
done

ktest_begin
ktest_cases $cases kmemleak no_splat ftrace_kill kmemleak_last
[ $nfail -eq 0 ]
