#!/bin/bash
# perf (linux-perf 6.12): perf probe's entry and %return probes, seen by
# perf record -a / perf script and counted by perf stat; a line probe and a
# local-variable probe that the host made from the kernel's debug info
# (perf probe -k vmlinux -D, harness/clients/clients.sh), written to
# kprobe_events here; perf probe -d.
. /ktest/lib.sh
plan 8
fresh_work

perf probe -q -a do_mkdirat 2>&1 | show
perf probe -q -a 'do_mkdirat%return ret=$retval:s32' 2>&1 | show
n=0
for e in do_mkdirat do_mkdirat__return; do
	[ -d "$TR/events/probe/$e" ] && n=$((n + 1))
done
check_eq probe_add "$n" 2 "perf probe events in $TR/events/probe"
grep . "$TR/kprobe_events" | show

perf record -q -a -e probe:do_mkdirat -e probe:do_mkdirat__return \
	-o /tmp/perf.data -- mkdir "$WORK"/d{1..20} "$WORK"/d{1..5} 2>&1 | show
perf script -i /tmp/perf.data -F comm,event,trace 2>/dev/null > /tmp/perf.script
grep -m4 . /tmp/perf.script | show
got=$(awk '$1 == "mkdir" && $2 == "probe:do_mkdirat:"' /tmp/perf.script | wc -l)
check_eq record_entry "$got" $WORKLOAD_CALLS "perf script: probe:do_mkdirat hits by mkdir"
got=$(awk '$1 == "mkdir" && $2 == "probe:do_mkdirat__return:" {
		for (i = 3; i <= NF; i++) if ($i ~ /^ret=/) n[substr($i, 5)]++ }
	END { printf "ret=0 x%d, ret=-17 x%d", n["0"], n["-17"] }' /tmp/perf.script)
check_eq record_return "$got" "ret=0 x$WORKLOAD_NEW, ret=-17 x$WORKLOAD_EXIST" \
	"perf script: probe:do_mkdirat__return \$retval by mkdir"

fresh_work
perf stat -x, -e probe:do_mkdirat -o /tmp/perf.stat -- \
	mkdir "$WORK"/d{1..20} "$WORK"/d{1..5} 2>/dev/null
show < /tmp/perf.stat
got=$(awk -F, '$3 == "probe:do_mkdirat" { print $1 }' /tmp/perf.stat)
check_eq stat_count "$got" $WORKLOAD_CALLS "perf stat -e probe:do_mkdirat over the mkdir process"

# The host's definitions: kt_line on the line that calls vfs_mkdir() (only
# the 20 new directories get there), kt_var at putname() with the local
# variable error (0 or -EEXIST).
fresh_work
show < /ktest/perf-probes.txt
while read -r def; do
	if ! echo "$def" >> "$TR/kprobe_events"; then
		echo "    # kprobe_events refused: $def (tracing's error_log:)"
		show < "$TR/error_log"
	fi
done < /ktest/perf-probes.txt
echo 1 > "$TR/events/probe/enable"
echo 0 > "$TR/events/probe/do_mkdirat/enable"
echo 0 > "$TR/events/probe/do_mkdirat__return/enable"
echo > "$TR/trace"
workload
echo 0 > "$TR/events/probe/enable"
grep -E ' kt_(line|var):' "$TR/trace" | grep -m3 . | show
# perf may give the line more than one address (kt_line, kt_line_1, ...):
# each must be passed once per new directory.
got=$(grep -oE '^ *mkdir-[0-9]+ .* kt_line(_[0-9]+)?:' "$TR/trace" |
	awk '{ print $NF }' | sort | uniq -c | awk '{ print $1 }' | sort -u | paste -sd' ')
check_eq line_probe "$got" $WORKLOAD_NEW \
	"hits by mkdir of each of the $(grep -c kt_line /ktest/perf-probes.txt) addresses of the line (do_mkdirat;*vfs_mkdir*)"
got=$(grep -E '^ *mkdir-[0-9]+ .* kt_var:' "$TR/trace" |
	sed -n 's/.* err=\(-*[0-9]*\).*/\1/p' | sort -n | uniq -c |
	awk '{ printf "%serr=%s x%d", sep, $2, $1; sep = ", " }')
check_eq local_var "$got" "err=-17 x$WORKLOAD_EXIST, err=0 x$WORKLOAD_NEW" \
	"local variable error at putname() by mkdir"

perf probe -q -d 'probe:*' 2>&1 | show
got=$(grep -c . "$TR/kprobe_events")
check_eq probe_delete "$got" 0 "lines in kprobe_events after perf probe -d 'probe:*'"
done_checks
