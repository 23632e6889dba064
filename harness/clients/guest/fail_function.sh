#!/bin/bash
# fail_function (Documentation/fault-injection): -ENOMEM injected into the
# mkdir syscall through its kprobe, for one task (task-filter and
# /proc/self/make-it-fail); then removed, and the kprobes list is empty.
. /ktest/lib.sh
plan 6
FF=/sys/kernel/debug/fail_function
fresh_work
fn=$MKDIR_SYSCALL

check_eq injectable "$(grep -c "^$fn[[:space:]]" /sys/kernel/debug/error_injection/list)" 1 \
	"$fn in error_injection/list"
echo "$fn" > "$FF/inject"
printf '%#x' -12 > "$FF/$fn/retval"
echo Y > "$FF/task-filter"
echo 100 > "$FF/probability"
echo 1 > "$FF/interval"
echo -1 > "$FF/times"
echo 0 > "$FF/verbose"
grep "$fn" "$KPLIST" | show
check_eq armed "$(probes_on $fn k)" 1 "fail_function's kprobe on $fn in the list"

failing() { sh -c 'echo 1 > /proc/self/make-it-fail && exec "$@"' sh "$@"; }
out=$(failing mkdir "$WORK/f1" 2>&1)
echo "$out" | show
st=1
echo "$out" | grep -q "Cannot allocate memory" && [ ! -d "$WORK/f1" ] && st=0
check enomem $st "mkdir in a make-it-fail task failed with ENOMEM, nothing made"
mkdir "$WORK/f2" 2>&1 | show
st=1
[ -d "$WORK/f2" ] && st=0
check other_task $st "mkdir in another task made its directory (task-filter)"

echo "!$fn" > "$FF/inject"
out=$(failing mkdir "$WORK/f1" 2>&1)
st=1
[ -z "$out" ] && [ -d "$WORK/f1" ] && st=0
check removed $st "mkdir in a make-it-fail task after '!$fn' > inject made its directory"
done_checks
