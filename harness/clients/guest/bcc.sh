#!/bin/bash
# bcc 0.31's python tools, which compile their BPF programs at run time
# with clang against the kernel's headers (CONFIG_IKHEADERS): funccount
# (a kprobe) and trace (a kretprobe with its return value).
. /ktest/lib.sh
plan 5
fresh_work

# The tools are python: started in the background by a script, they
# ignore SIGINT, so each is told when to stop instead: funccount after its
# -d seconds, trace after -M events.  clang compiles each first.
t=$SECONDS
start_tool funccount 1 1600 funccount-bpfcc -d 20 do_mkdirat
check_eq funccount_attach "$(probes_on do_mkdirat k)" 1 \
	"funccount's kprobe in the list ($((SECONDS - t)) s to compile and attach)"
workload
stop_tool_by_itself
show < /tmp/funccount.out
check_eq funccount_count "$(awk '$1 == "do_mkdirat" { print $2 }' /tmp/funccount.out)" \
	$WORKLOAD_CALLS "funccount's count of do_mkdirat"

fresh_work
t=$SECONDS
start_tool trace 1 1600 trace-bpfcc -M $WORKLOAD_CALLS 'r::do_mkdirat "ret=%d", retval'
check_eq trace_attach "$(probes_on do_mkdirat r)" 1 \
	"trace's kretprobe in the list ($((SECONDS - t)) s to compile and attach)"
workload
stop_tool_by_itself
grep -m6 . /tmp/trace.out | show
got=$(awk '$3 == "mkdir" && $4 == "do_mkdirat" { n[$5]++ }
	END { printf "%d, %d", n["ret=0"], n["ret=-17"] }' /tmp/trace.out)
check_eq trace_retval "$got" "$WORKLOAD_NEW, $WORKLOAD_EXIST" "trace's lines by mkdir with ret=0, ret=-17"
done_checks
