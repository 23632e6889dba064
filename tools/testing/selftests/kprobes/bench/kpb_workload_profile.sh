#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# How kpb_workload_funcs.h's list was computed, once, in the benchmark
# guest of the untouched tree (harness/bench.sh's image, booted with
# "harness/boot.sh upstream shell" and KTEST_PROFILE=bench): run
# kpb_workload under ftrace's function tracer, with the workload's own
# processes alone traced (set_ftrace_pid, function-fork), and count the
# calls of every function.  Prints "WLPROF <calls> <function>" for the
# 400 most called, the blacklist ("WLBL <function>"), and the ring
# buffer's overruns (none, or the counts are short).  The list keeps the
# 50 most called of them that both trees can probe with a kprobe and a
# kretprobe (not blacklisted, returning to their caller).
cd "$(dirname "$0")" || exit 1
T=/sys/kernel/tracing
mount -t tracefs none $T 2>/dev/null
mount -t debugfs none /sys/kernel/debug 2>/dev/null
echo 0 > $T/tracing_on
echo 65536 > $T/buffer_size_kb
echo function > $T/current_tracer
echo 1 > $T/options/function-fork
./kpb_workload warm 2 > /dev/null
echo > $T/trace
echo 1 > $T/tracing_on
sh -c "echo \$\$ > $T/set_ftrace_pid; exec ./kpb_workload prof 1"
echo 0 > $T/tracing_on
cat $T/per_cpu/cpu*/stats | grep -i overrun | sed 's/^/WLPROF-STAT /'
sed -n 's/.*: \([^ ]*\) <-.*/\1/p' $T/trace | sort | uniq -c | sort -rn |
	head -n 400 | sed 's/^ */WLPROF /'
cut -f 2 /sys/kernel/debug/kprobes/blacklist | sort -u | sed 's/^/WLBL /'
echo WLPROF-END
