#!/bin/bash
# bpftrace 0.23: kprobe and kretprobe with retval and a histogram; a
# wildcard that attaches dozens of probes at once (one kprobe each when
# the kernel has no fprobe, one kprobe_multi link when it has); override()
# making mkdir fail with the errno chosen, and mkdir working again once
# bpftrace has gone.
. /ktest/lib.sh
plan 10
fresh_work
cmd="mkdir $(echo "$WORK"/d{1..20} "$WORK"/d{1..5})"

bpftrace -e '
kprobe:do_mkdirat /comm == "mkdir"/ { @calls = count(); @start[tid] = nsecs; }
kretprobe:do_mkdirat /comm == "mkdir"/ {
	@ret[(int32)retval] = count();
	@ns = hist(nsecs - @start[tid]);
	delete(@start[tid]);
}' -c "$cmd" > /tmp/bt.out 2>&1
show < /tmp/bt.out
check_eq attach "$(grep -o 'Attaching [0-9]* probes' /tmp/bt.out)" "Attaching 2 probes" \
	"bpftrace said"
check_eq kprobe_count "$(sed -n 's/^@calls: //p' /tmp/bt.out)" $WORKLOAD_CALLS "@calls"
check_eq kretprobe_retval "$(sed -n 's/^@ret\[\(.*\)\]: \(.*\)/\1:\2/p' /tmp/bt.out | sort -n | paste -sd' ')" \
	"-17:$WORKLOAD_EXIST 0:$WORKLOAD_NEW" "@ret[retval] (retval:count)"
got=$(awk '/^@ns:/ { h = 1; next } h && /^\[/ { sub(/^[^)]*\)/, ""); n += $1 }
	h && /^$/ { h = 0 } END { print n + 0 }' /tmp/bt.out)
check_eq histogram "$got" $WORKLOAD_CALLS "total of the @ns histogram's buckets"

# The wildcard: the workload runs while every probe is attached; it also
# counts the kprobes the kernel's list has then.
fresh_work
cat > /tmp/wild.sh <<EOS
grep -c . $KPLIST > /tmp/wild.kprobes
mkdir $WORK/w1 $WORK/w2 $WORK/w3
EOS
bpftrace -e 'kprobe:vfs_* /comm == "mkdir"/ { @[func] = count(); }' \
	-c "/bin/sh /tmp/wild.sh" > /tmp/wild.out 2>&1
grep -v '^@' /tmp/wild.out | show
grep -E '^@\[vfs_(mkdir|statx?)\]' /tmp/wild.out | show
listed=$(bpftrace -l 'kprobe:vfs_*' | wc -l)
n=$(sed -n 's/.*Attaching \([0-9]*\) probes*\.\.\..*/\1/p' /tmp/wild.out)
if grep -qw register_fprobe /proc/kallsyms; then
	# kprobe_multi goes through fprobe: one link, no kprobe at all.
	check_eq wildcard_attach "$n of $listed" "1 of $listed" \
		"bpftrace's attachments (one kprobe_multi link) for the functions kprobe:vfs_* lists"
	check_eq wildcard_kprobes "$(cat /tmp/wild.kprobes)" 0 \
		"kprobes in the list while attached (fprobe: one kprobe_multi link)"
else
	check_ge wildcard_attach "$n" 24 "probes bpftrace attached for kprobe:vfs_* ($listed functions listed)"
	check_eq wildcard_kprobes "$(cat /tmp/wild.kprobes)" "$listed" \
		"kprobes in the list while attached (no fprobe: one kprobe each)"
fi
check_eq wildcard_hits "$(sed -n 's/^@\[vfs_mkdir\]: //p' /tmp/wild.out)" 3 \
	"@[vfs_mkdir] for three new directories"

# override(): mkdir fails with EOPNOTSUPP (95) while bpftrace runs.
fresh_work
bpftrace --unsafe -e "$(printf 'kprobe:%s,' $MKDIR_SYSCALLS | sed 's/,$//')"'
	/comm == "mkdir"/ { override(-95); }' -c "mkdir $WORK/o1" > /tmp/ovr.out 2>&1
show < /tmp/ovr.out
st=1
grep -q "cannot create directory.*Operation not supported" /tmp/ovr.out && [ ! -d "$WORK/o1" ] && st=0
check override_errno $st "mkdir under override(-95) failed with EOPNOTSUPP, nothing made"
st=1
mkdir "$WORK/o1" 2>&1 | show
[ -d "$WORK/o1" ] && st=0
check override_gone $st "mkdir after bpftrace exited made the directory"
done_checks
