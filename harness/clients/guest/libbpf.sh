#!/bin/bash
# libbpf-tools 0.31 (CO-RE programs relocated against the kernel's BTF):
# funclatency with -k (kprobe and kretprobe, not fentry) and ksnoop (kprobe
# and kretprobe, its arguments and return value described by BTF).
# opensnoop and execsnoop attach to syscall tracepoints, not kprobes: they
# are not here.
. /ktest/lib.sh
plan 6
fresh_work

start_tool funclatency 2 240 funclatency-libbpf -k do_mkdirat
got=$(probes_on do_mkdirat)
grep ' do_mkdirat+' "$KPLIST" | show
check_eq funclatency_attach "$got" 2 "kprobe and kretprobe of funclatency -k in the list"
workload
stop_tool
show < /tmp/funclatency.out
got=$(awk '$2 == "->" && $4 == ":" { n += $5 } END { print n + 0 }' /tmp/funclatency.out)
check_eq funclatency_count "$got" $WORKLOAD_CALLS "calls in funclatency's histogram"

fresh_work
# ksnoop's events are big (room for whole structures): with its default 8
# pages of perf buffer per CPU, a slow reader under TCG loses most of 25.
start_tool ksnoop 2 240 ksnoop-libbpf -P 512 trace 'do_mkdirat(mode, return)'
got=$(probes_on do_mkdirat)
check_eq ksnoop_attach "$got" 2 "kprobe and kretprobe of ksnoop in the list"
mkdir -m 0751 "$WORK"/d{1..20} "$WORK"/d{1..5} 2>/dev/null
printed() { [ "$(grep -c 'do_mkdirat($' /tmp/ksnoop.out)" -ge $((2 * WORKLOAD_CALLS)) ]; }
wait_for 60 printed
stop_tool
grep -m12 . /tmp/ksnoop.out | show
# An entry: "do_mkdirat(" then "mode = " then "(umode_t)489" and ");" on
# lines of their own; a return the same with "return = " and "(int)-17".
vals() { tr -d '\n' < /tmp/ksnoop.out | grep -o "$1 = *([a-z_ ]*)-*[0-9a-fx]*" |
	sed 's/.*)//' | sort | uniq -c | awk '{ printf "%s%s x%d", sep, $2, $1; sep = ", " }'; }
check_eq ksnoop_mode "$(vals mode)" "489 x$WORKLOAD_CALLS" "ksnoop's mode arguments (mkdir -m 0751)"
check_eq ksnoop_return "$(vals return)" "-17 x$WORKLOAD_EXIST, 0 x$WORKLOAD_NEW" "ksnoop's return values"
done_checks
