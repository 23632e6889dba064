#!/bin/bash
# SystemTap 5.1: mkdir.stp (kernel.function and .return), compiled on the
# host against this kernel's build tree (harness/clients/clients.sh),
# loaded by staprun around the workload.
. /ktest/lib.sh
plan 4
fresh_work
ko=/ktest/stap/ktest_stap.ko
st=1
[ -f "$ko" ] && st=0
check module $st "$ko built on the host (its log: build/logs/clients-host-TREE.log)"
cmd="mkdir $(echo "$WORK"/d{1..20} "$WORK"/d{1..5})"
[ -f "$ko" ] && staprun -c "$cmd" "$ko" > /tmp/stap.out 2>&1
show < /tmp/stap.out
check_eq calls "$(sed -n 's/^calls //p' /tmp/stap.out)" $WORKLOAD_CALLS \
	"kernel.function(\"do_mkdirat\") hits by mkdir"
check_eq returns "$(sed -n 's/^ret //p' /tmp/stap.out | paste -sd' ')" \
	"-17 x$WORKLOAD_EXIST 0 x$WORKLOAD_NEW" ".return \$return values by mkdir"
done_checks
