#!/bin/bash
# perf's own test suite (linux-perf 6.12's `perf test`, make peer-tests):
# the cases that place kprobes or kretprobes, one check each, passed when
# perf says "Ok".  perf's verdict "Skip" is reported as a KTAP skip with
# perf's reason, for harness/clients/expected-peer to allow or not.  The
# uprobe cases (libc's inet_pton, a function of another compilation
# unit, SDT events) are not kprobes' and are left out.  Each case's own
# results (the probe testsuite's PASS/SKIP/FAIL lines) are shown; the
# whole output on failure.
. /ktest/lib.sh
tests=(
	"perftool-testsuite_probe"
	"Add vfs_getname probe to get syscall args filenames"
	"Use vfs_getname probe to get syscall args filenames"
	"Check open filename arg using perf trace + vfs_getname"
)
# The kernel's debug info, for the vfs_getname cases' perf probe -L
# (harness/clients/clients.sh copied it to the second disk).
[ -f /ktest/kbuild/vmlinux ] && ln -sfn /ktest/kbuild "/lib/modules/$(uname -r)/build"

plan $((${#tests[@]} + 1))
for t in "${tests[@]}"; do
	nchecks=$((nchecks + 1))
	name=$(echo "$t" | tr -c 'a-zA-Z0-9_\n' _)
	# -S: one after another; -vv: the case's own output, pass or fail,
	# its colours taken out.
	perf test -S -vv "$t" 2>&1 | sed 's/\x1b\[[0-9;]*m//g' > /tmp/perf_test.out
	line=$(grep -F ": $t " /tmp/perf_test.out | grep -v ': Running' | tail -1)
	verdict=$(echo "${line##*: }" | sed 's/^ *//')
	echo "    # $name: perf test: ${line:-no verdict line}"
	grep -E -- '(--|##) \[ (PASS|SKIP|FAIL) \] (--|##)' /tmp/perf_test.out | show
	case "$verdict" in
	Ok)
		echo "    ok $nchecks $name" ;;
	Skip*)
		tail -20 /tmp/perf_test.out | show
		echo "    ok $nchecks $name # SKIP perf: $verdict" ;;
	*)
		tail -60 /tmp/perf_test.out | show
		echo "    not ok $nchecks $name"
		nfailed=$((nfailed + 1)) ;;
	esac
done
done_checks
