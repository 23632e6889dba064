#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# kprobes selftests, the API and its errors, handlers and the blacklist (the KUnit suites of
# kprobes_kunit.ko), the two sample modules, addresses that are not text,
# probes registered and unregistered over and over through a module.
# Prints KTAP; arguments name the cases to run (default: all).

cd "$(dirname "$0")" || exit 1
. ./kprobes_lib.sh

# Every CPU is online, and there are at least two: the cross-CPU cases
# would otherwise pass on one CPU without testing anything.  Under the
# harness, the CPUs are those it gave the guest (ktest.cpus); elsewhere,
# those present.
t_cpus()
{
	online=$(grep -c '^processor' /proc/cpuinfo)
	want=$CPUS
	if [ -z "$want" ]; then
		want=$(tr ',' '\n' < /sys/devices/system/cpu/present |
			awk -F- '{ n += NF == 2 ? $2 - $1 + 1 : 1 } END { print n }')
		[ "$want" -ge 2 ] ||
			{ why="one CPU: the cross-CPU cases need two"; return 2; }
	fi
	[ "$online" = "$want" ] ||
		fail "$online CPU(s) online of $want" || return
	[ "$online" -ge 2 ] || fail "only $online CPU: the cross-CPU cases need two" ||
		return
	diag "$online CPUs online"
}

# Interrupts are masked the way the command line asks: with
# irqchip.gicv3_pseudo_nmi=1 (arm64), by GIC priority, which the kernel
# says as it sets it up.  Otherwise the cases would run without it and
# prove nothing about it.
t_irq_masking()
{
	grep -q 'irqchip.gicv3_pseudo_nmi=1' /proc/cmdline ||
		{ why="not booted with irqchip.gicv3_pseudo_nmi=1"; return 2; }
	dmesg | grep -q 'Pseudo-NMIs enabled' ||
		fail "irqchip.gicv3_pseudo_nmi=1, but the GIC does not say 'Pseudo-NMIs enabled'"
}

# Runs the KUnit suites of kprobes_kunit.ko (their KTAP goes to the
# kernel log) and checks each suite's top-level result there.
t_kunit_suites()
{
	need_target || return
	unload kprobes_kunit || fail "cannot unload kprobes_kunit" || return
	param=
	upstream && param="upstream=1"
	insmod $MODS/kprobes_kunit.ko $param ||
		fail "insmod kprobes_kunit.ko failed" || return
	log=$(dmesg)
	bad=
	for s in $SUITES; do
		if echo "$log" | grep -q -E "not ok [0-9]+ $s( |\$)"; then
			bad="$bad $s"
		elif ! echo "$log" | grep -q -E "ok [0-9]+ $s( |\$)"; then
			bad="$bad $s(no-result)"
		fi
	done
	unload kprobes_kunit || fail "rmmod kprobes_kunit failed" || return
	[ -z "$bad" ] || fail "failed suites:$bad"
}

# Probes registered and unregistered over and over by loading and
# unloading kprobes_holder.ko, and registrations that fail, also half-way
# through (the second probe is bad, the first is unregistered again).  Each
# round counts right; no probe stays behind, nor memory (see kmemleak).
t_holder_loop()
{
	need_target || return
	i=0
	while [ $i -lt 5 ]; do
		holder sym=kprobes_target:kpt_shell_a \
			sym2=kprobes_target:kpt_shell_b ||
			fail "round $i: insmod kprobes_holder.ko failed" || return
		trigger 3
		[ "$(hld hits)" = 3 ] && [ "$(hld hits2)" = 3 ] ||
			fail "round $i: hits $(hld hits)/$(hld hits2), want 3/3" ||
			return
		unload kprobes_holder || fail "round $i: rmmod failed" || return
		# The errnos the documentation gives: ENOENT for a symbol
		# that does not exist, EILSEQ inside an instruction.
		refused kpk_no_such_symbol+0 ENOENT sym=kpk_no_such_symbol ||
			fail "round $i: unknown symbol: $why" || return
		# Inside kpt_asm_add's first instruction: one byte into
		# x86-64's two-byte mov, two into arm64's four-byte one.
		# (Only where kpt_asm_add is: elsewhere the symbol is missing.)
		off=1
		[ "$KP_ARCH" = aarch64 ] && off=2
		! asm_targets ||
		refused kprobes_target:kpt_asm_add+$off EILSEQ \
			sym=kprobes_target:kpt_asm_add offset=$off ||
			fail "round $i: kpt_asm_add+$off: $why" || return
		refused kpk_no_such_symbol+0 ENOENT sym=kprobes_target:kpt_shell_a \
			sym2=kpk_no_such_symbol ||
			fail "round $i: bad second probe: $why" || return
		i=$((i + 1))
	done
	grep -q -E 'kpt_shell_[ab]\+' "$KPDIR/list" &&
		{ fail "left in the list: $(grep kpt_shell "$KPDIR/list")"; return; }
	return 0
}

# Addresses that are not text, given to kprobe_events (p: at an address)
# and to the perf kprobe PMU (kprobe_addr): data, an unmapped address, a
# user address, and __pfx_/__cfi_ symbols where the configuration has
# them (these also to register_kprobe(), which must warn that they are a
# preamble).  Each is refused with EINVAL, and nothing oopses.
t_bad_address()
{
	[ -w "$TRACEFS/kprobe_events" ] || fail "no kprobe_events" || return
	ev_cleanup
	before=$(splat_count)
	data=$(awk '$3 == "jiffies" && ($2 == "D" || $2 == "d") { print $1; exit }' \
		/proc/kallsyms)
	[ -n "$data" ] || fail "no address for jiffies in /proc/kallsyms" || return
	for a in $data ffffffffdead0000 1000; do
		echo "p:kpk_bad 0x$a" >> "$TRACEFS/kprobe_events" \
			2> /tmp/ktest.err &&
			{ fail "kprobe_events took p: at 0x$a"; return; }
		grep -q "Invalid argument" /tmp/ktest.err ||
			fail "p: at 0x$a: $(cat /tmp/ktest.err), want EINVAL" ||
			return
		if [ -x ./kprobes_perf ] &&
		   [ -r /sys/bus/event_source/devices/kprobe/type ]; then
			out=$(./kprobes_perf -a "$a" 2>&1) ||
				fail "perf kprobe PMU at 0x$a: $out" || return
		fi
	done
	# A configuration with function padding or CFI hashes has them for
	# vfs_read too (test-preempt on x86-64 has __pfx_: the build checks
	# that its config kept CALL_PADDING).
	n=0
	for s in __pfx_vfs_read __cfi_vfs_read; do
		if ! grep -q " $s\$" /proc/kallsyms; then
			p=${s%vfs_read}
			! grep -q " $p" /proc/kallsyms ||
				fail "$p symbols, but no $s" || return
			continue
		fi
		n=$((n + 1))
		echo "p:kpk_bad $s" >> "$TRACEFS/kprobe_events" \
			2> /tmp/ktest.err &&
			{ fail "kprobe_events took p: on $s"; return; }
		grep -q "Invalid argument" /tmp/ktest.err ||
			fail "p: on $s: $(cat /tmp/ktest.err), want EINVAL" ||
			return
		# kprobe_events turns it down itself (not a function ftrace
		# lists): register_kprobe() through kprobes_holder must too.
		w="$s+0x0/0x[0-9a-f]* is a function's preamble"
		n0=$(dmesg | grep -c "$w")
		refused "$s+0" EINVAL sym=$s ||
			fail "register_kprobe() on $s: $why" || return
		upstream || [ "$(dmesg | grep -c "$w")" -gt "$n0" ] ||
			fail "no warning that $s is a preamble" || return
	done
	[ $n -gt 0 ] || diag "no __pfx_ or __cfi_ symbols in this configuration"
	# vmlinux's init text, freed after boot, is refused as no text to
	# probe, before anything reads the poison left there (int3s on
	# x86-64, which the decoder refuses too, with the same errno: only
	# the warning tells the two apart).  Through kprobes_holder: the
	# tracing front ends refuse a function ftrace no longer knows
	# before kprobes sees it.
	if grep -q " start_kernel\$" /proc/kallsyms; then
		w='start_kernel+0x0/0x[0-9a-f]* is not kernel or module text'
		n0=$(dmesg | grep -c "$w")
		refused start_kernel+0 EINVAL sym=start_kernel ||
			fail "a probe on start_kernel (init text): $why" || return
		upstream || [ "$(dmesg | grep -c "$w")" -gt "$n0" ] ||
			fail "no warning that start_kernel is no text to probe" ||
			return
	fi
	[ "$(splat_count)" = "$before" ] || fail "kernel splat"
}

# The compiler's copies of a function (foo.constprop.0, foo.isra.0,
# foo.part.0, foo.cold) are refused where foo carries NOKPROBE_SYMBOL():
# they run its code, often in its stead.  Which functions carry it comes
# from kallsyms (the _kbl_addr_foo record the macro leaves, with
# KALLSYMS_ALL), not from the blacklist under test.  vmlinux has such
# copies or not, as the compiler chose (arm64's debug_exception_exit.
# constprop.0, on the debug exception's own path); kprobes_target has one
# named by hand, and the copy of an unlisted function that must be taken.
t_blacklist_clones()
{
	need_target || return
	clones=$(awk 'NF == 3 && $3 ~ /^_kbl_addr_/ { b[substr($3, 11)] = 1; next }
	     NF == 3 && $2 ~ /^[tT]$/ && index($3, ".") > 1 { c[$3] = 1 }
	     END {
		for (s in c) {
			x = s
			sub(/\..*/, "", x)
			if (x in b)
				print s
		}
	     }' /proc/kallsyms)
	grep -q '^[0-9a-f]* [dD] _kbl_addr_kpt_bl_nokprobe	\[kprobes_target\]' \
		/proc/kallsyms ||
		fail "no _kbl_addr_kpt_bl_nokprobe in /proc/kallsyms" || return
	nv=$(echo $clones | wc -w)
	before=$(splat_count)
	# The warning names the address's first name in kallsyms, which may
	# be another copy at the same address (trace_hardirqs_off.part.0 for
	# trace_hardirqs_off_finish.part.0): any such warning counts.  With
	# IBT the probe sits past the ENDBR, at +0x4.
	w='+0x[0-9a-f]*/0x[0-9a-f]* .*is on the blacklist'
	for s in $clones kprobes_target:kpt_bl_nokprobe.constprop.0; do
		n0=$(dmesg | grep -c "$w")
		refused "$s+0" EINVAL sym=$s || fail "a probe on $s: $why" ||
			return
		upstream || [ "$(dmesg | grep -c "$w")" -gt "$n0" ] ||
			fail "no warning that $s is on the blacklist" || return
	done
	holder sym=kprobes_target:kpt_shell_a.part.0 ||
		fail "a probe on kpt_shell_a.part.0 (unlisted) was refused" ||
		return
	unload kprobes_holder
	diag "$nv copies of NOKPROBE_SYMBOL() functions in vmlinux:" \
	     "$(echo ${clones:-none})"
	[ "$(splat_count)" = "$before" ] || fail "kernel splat"
}

# Three forks from a shell named ktest_fork: each a kernel_clone() call.
fork3()
{
	for i in 1 2 3; do
		sh -c 'exec true'
	done
}

# The processes forked since boot (/proc/stat's "processes": one per
# kernel_clone() that made a task), in $forks.  Builtins only: no fork.
forks_now()
{
	while read -r k v; do
		[ "$k" = processes ] && { forks=$v; return 0; }
	done < /proc/stat
	fail "no processes line in /proc/stat"
}

# Load sample module $1 on its default symbol (samples/$1.ko where the
# harness put it, else the installed module), fork three times, unload
# it; what it printed meanwhile is left in $log.  The kernel's own count
# of forks bounds the hits on kernel_clone, independently of kprobes:
# at least those forked while the probe was surely live (after the load,
# before the unload: $fmin), at most those forked from before the load
# to after the unload ($fmax).
sample_run()
{
	ko=samples/$1.ko
	if [ -f "$ko" ]; then
		load="insmod $ko"
	elif modprobe -n "$1" 2>/dev/null; then
		load="modprobe $1"
	else
		fail "no $ko, and modprobe finds no $1 (CONFIG_SAMPLE_KPROBES=m)" ||
			return
	fi
	kmsg_mark "$1"
	forks_now || return
	f0=$forks
	$load || fail "$load failed: $(kmsg_since "$1" | tail -n 1)" || return
	forks_now || return
	f1=$forks
	fork3
	forks_now || return
	fmin=$((forks - f1))
	rmmod "$1" || fail "rmmod $1 failed" || return
	forks_now || return
	fmax=$((forks - f0))
	log=$(kmsg_since "$1")
}

# The kprobe sample (samples/kprobes/kprobe_example.ko) on its default
# symbol, kernel_clone: it loads, each fork fires its pre and post
# handler, and its unload message counts every hit and no miss.
sample_kprobe()
{
	sample_run kprobe_example || return
	if upstream; then
		# What upstream's handlers print of the registers, per
		# architecture: the program counter and the status word
		# (s390's line has "p->addr, 0x..." where the others have
		# "p->addr = 0x...").
		case $KP_ARCH in
		aarch64) ip=pc flags=pstate ;;
		arm*)    ip=pc flags=cpsr ;;
		mips*)   ip=epc flags=status ;;
		ppc*)    ip=nip flags=msr ;;
		riscv*)  ip=pc flags=status ;;
		*)       ip=ip flags=flags ;;
		esac
		pre=$(echo "$log" | grep -c -E "<kernel_clone> p->addr( =|,) .*, $ip = ")
		# The post line has the flags right after the address (the
		# pre line has the program counter between them).
		post=$(echo "$log" | grep -c -E "<kernel_clone> p->addr( =|,) 0x[0-9a-f]*, $flags = ")
		echo "$log" | grep -q 'Planted kprobe at' ||
			fail "no 'Planted kprobe' line" || return
		echo "$log" | grep -q 'kprobe at .* unregistered' ||
			fail "no 'unregistered' line" || return
		fired=$pre
		missed=0
	else
		pre=$(echo "$log" | grep -c -E "pre  kernel_clone at kernel_clone\+$ENTRY/")
		post=$(echo "$log" | grep -c -E "post kernel_clone at kernel_clone\+$ENTRY/")
		echo "$log" | grep -q -E "probe planted on kernel_clone at kernel_clone\+$ENTRY/" ||
			fail "no 'probe planted' line" || return
		bye=$(echo "$log" | grep 'probe on kernel_clone removed: fired')
		fired=$(echo "$bye" | sed -n 's/.*fired \([0-9]*\) times.*/\1/p')
		missed=$(echo "$bye" | sed -n 's/.*missed \([0-9]*\)$/\1/p')
	fi
	diag "kprobe_example: $pre pre and $post post lines, fired $fired," \
	     "missed $missed; $fmin to $fmax forks"
	[ "$pre" -ge "$fmin" ] && [ "$pre" -le "$fmax" ] &&
	[ "$post" = "$pre" ] ||
		fail "kprobe_example: $pre pre and $post post handler lines" \
		     "for $fmin to $fmax forks" ||
		return
	[ "$fired" = "$pre" ] && [ "$missed" = 0 ] ||
		fail "kprobe_example: fired '$fired' and missed '$missed' on unload," \
		     "$pre hits logged"
}

# The kretprobe sample on kernel_clone: each fork's return is reported
# with the child's pid (a positive return value), and on unload every
# return is counted and none was missed.
sample_kretprobe()
{
	have_kret || { why="$NO_KRET"; return 2; }
	sample_run kretprobe_example || return
	if upstream; then
		rets=$(echo "$log" | grep 'kernel_clone returned [0-9]* and took')
		pids=$(echo "$rets" | sed -n 's/.*returned \([0-9]*\) and.*/\1/p')
		n=$(echo "$log" | grep -c 'kernel_clone returned')
		back=$n
		missed=$(echo "$log" | sed -n 's/.*Missed probing \([0-9]*\) instances.*/\1/p')
	else
		rets=$(echo "$log" | grep 'kernel_clone returned -\{0,1\}[0-9]* to ')
		pids=$(echo "$rets" | sed -n 's/.*returned \(-\{0,1\}[0-9]*\) to .*/\1/p')
		n=$(echo "$rets" | grep -c .)
		bye=$(echo "$log" | grep 'return probe on kernel_clone removed:')
		back=$(echo "$bye" | sed -n 's/.*removed: \([0-9]*\) returns.*/\1/p')
		missed=$(echo "$bye" | sed -n 's/.*missed \([0-9]*, entry missed [0-9]*\)$/\1/p')
		[ -n "$bye" ] || fail "no unload line" || return
	fi
	diag "kretprobe_example: $n returns logged, $back counted," \
	     "missed $missed; $fmin to $fmax forks"
	[ "$n" -ge "$fmin" ] && [ "$n" -le "$fmax" ] ||
		fail "kretprobe_example: $n return lines for $fmin to $fmax forks" ||
		return
	for pid in $pids; do
		[ "$pid" -gt 0 ] || fail "kernel_clone returned $pid" || return
	done
	[ "$back" = "$n" ] || fail "kretprobe_example: $back returns counted, $n logged" ||
		return
	[ "$missed" = 0 ] || [ "$missed" = "0, entry missed 0" ] ||
		fail "kretprobe_example: missed '$missed' on unload"
}

# Both sample modules load, fire and report what their comments promise.
t_samples()
{
	sample_kprobe || return
	sample_kretprobe
}

AREA_CASES="cpus irq_masking kunit_suites holder_loop bad_address blacklist_clones"
AREA_CASES="$AREA_CASES samples"
ktest_main "$@"
