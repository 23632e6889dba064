#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Run in the guest by /init in ktest.mode=bench (harness/bench.sh): load
# kprobes_bench.ko, take every figure in turn, print the BENCH lines the
# module logged.  The optimized figure is taken first, in the boot's
# default state (debug.kprobes-optimization=1), the breakpoint figures
# with jump optimization off (and figures 9 and 10 once that way too),
# the registration figures with it on again.  Where there is no jump
# optimization (arm64), the module reports those figures as not
# applicable (BENCH-NA) and the sysctl is left alone; arm64 also takes
# the hit on a C function's entry (a breakpoint there, not ftrace's) and
# figure 12's hits.
cd "$(dirname "$0")" || exit 1
opt=/proc/sys/debug/kprobes-optimization
run=/sys/module/kprobes_bench/parameters/run
list=/sys/kernel/debug/kprobes/list

echo "BENCH-INFO kernel $(uname -r), $(grep -c ^processor /proc/cpuinfo) CPUs"
if [ ! -f ./kprobes_bench.ko ]; then
	echo "BENCH-ERROR kprobes_bench.ko (its targets are assembly: x86's" \
		"kpb_asm.S, arm64's kpb_asm_arm64.S) is not built for $(uname -m)"
	exit 1
fi
entry= entry_fresh= shape_hits=
if [ "$(uname -m)" = aarch64 ]; then
	entry=entry entry_fresh=entry_fresh shape_hits=shape_hits
fi
if ! insmod ./kprobes_bench.ko; then
	echo "BENCH-ERROR insmod kprobes_bench.ko failed"
	exit 1
fi

take() {
	echo "$1" > "$run" || echo "BENCH-ERROR $1 write to $run failed"
}

dmesg -c > /dev/null
for f in calibrate call_asm call_c call_c_nop; do
	take "$f"
done
# Fresh probes: the first loop of calls right after registration, with
# jump optimization as the boot has it (on): what a tool's probe costs
# before the kernel has settled it (an entry probe's hand-off to ftrace,
# a breakpoint's optimization).
for f in bp_fresh ftrace_fresh $entry_fresh kretprobe_fresh; do
	take "$f"
done
if [ -f "$opt" ]; then
	take optimized_arm
	# Up to 10 s for the optimizer to take the probe, then one more
	# second: upstream shows [OPTIMIZED] as soon as the probe is queued,
	# before the jump is written.
	i=0
	while ! grep -q 'kpb_asm_target+0x0.*OPTIMIZED' "$list" && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	grep -q 'kpb_asm_target+0x0.*OPTIMIZED' "$list" ||
		echo "BENCH-ERROR optimized the probe was not optimized within 10 s"
	sleep 1
fi
take optimized
# arm64: the entry of a C function, optimized (there a breakpoint site).
if [ -n "$entry" ]; then
	take entry_opt_arm
	i=0
	while ! grep -q 'kpb_c_target+0x0.*OPTIMIZED' "$list" && [ $i -lt 100 ] &&
	      [ -f "$opt" ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ -f "$opt" ] && { grep -q 'kpb_c_target+0x0.*OPTIMIZED' "$list" ||
		echo "BENCH-ERROR entry_opt the probe was not optimized within 10 s"; }
	take entry_opt
fi
[ -f "$opt" ] && echo 0 > "$opt"
for f in post post_c boosted ftrace $entry kretprobe kprobe_kretprobe lookup smp \
	single_noopt batch_noopt; do
	take "$f"
done
# Figure 4c: the entry probe on a function that the function tracer
# traces too (a second ftrace user), against the same call traced alone.
tr=/sys/kernel/tracing
if echo kpb_c_target > "$tr/set_ftrace_filter" &&
   echo function > "$tr/current_tracer"; then
	take call_c_traced
	take "${entry:-ftrace}_traced"
else
	echo "BENCH-ERROR ${entry:-ftrace}_traced cannot start the function" \
		"tracer on kpb_c_target"
fi
# Either way, so that no later figure runs under a half-set tracer.
echo nop > "$tr/current_tracer" 2> /dev/null
: > "$tr/set_ftrace_filter" 2> /dev/null
[ -f "$opt" ] && echo 1 > "$opt"
for f in single batch; do
	take "$f"
done
# Figure 11 probes the functions of a second module, and figure 13 at
# scale their C functions' entries.  Upstream takes about 2 to 5 ms per
# probe one at a time and 16 to 20 ms to unregister one: there both are
# taken for register_kprobes() up to 1000 probes only.
if grep -q ktest.tree=upstream /proc/cmdline; then
	echo 1000 > /sys/module/kprobes_bench/parameters/scale_max
	echo N > /sys/module/kprobes_bench/parameters/scale_single
fi
if insmod ./kprobes_bench_funcs.ko; then
	take scale
	take shapes
	[ -z "$shape_hits" ] || take "$shape_hits"
	take entries
	take entries_scale
	# Figure 14: the same entries, attached from user space the way
	# tools do: kprobe_events lines, and the perf kprobe PMU.
	./kpb_attach events
	./kpb_attach pmu
	rmmod kprobes_bench_funcs
else
	echo "BENCH-ERROR scale insmod kprobes_bench_funcs.ko failed"
fi
# Figure 15: what a workload pays for probes on the kernel functions it
# calls (kpb_workload_funcs.h): kpb_workload's loop with no probes, then
# with an entry kprobe on each of them, then with a kretprobe on each,
# jump optimization on as the boot has it.  Each set is given 2 s to
# settle before the loop (ours hands entry probes to ftrace 0.1 s after
# registration), and the loop runs only if all were registered: with
# none its figure would look free.
wl_iters=200
./kpb_workload none "$wl_iters"
for kind in entry ret; do
	if echo "workload_$kind" > "$run"; then
		sleep 2
		./kpb_workload "$kind" "$wl_iters"
		take workload_off
	else
		echo "BENCH-ERROR workload_$kind write to $run failed"
	fi
done
rmmod kprobes_bench
dmesg | sed -n 's/^.*kprobes_bench: \(BENCH.*\)$/\1/p'
