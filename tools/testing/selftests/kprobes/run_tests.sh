#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# kprobes selftests, shell-level cases.  Runs from the directory that holds
# the built modules (busybox ash is enough) and prints KTAP on stdout.
# The KUnit cases of kprobes_kunit.ko, kprobes_stress.ko,
# kprobes_kretprobe.ko, kprobes_boundary.ko and kprobes_opt.ko report to
# the kernel log; the "kunit_suites", "stress_suite", "kretprobe_suite",
# "boundary_suite" and "opt_suite" cases below sum them up.  The return
# probe cases are skipped on a kernel without CONFIG_KRETPROBES, the jump
# optimization cases on a kernel without its sysctl.
# The "ftracetest" case runs upstream's ftrace selftests for kprobes with
# their own runner, after the final unloads; its cases are nested under it.
# The "kmemleak" case runs after all others.
#
# Every wait and loop here is bounded.

cd "$(dirname "$0")" || exit 1

DEBUGFS=/sys/kernel/debug
TRACEFS=/sys/kernel/tracing
KPDIR=$DEBUGFS/kprobes
TGT=/sys/module/kprobes_target/parameters
HLD=/sys/module/kprobes_holder/parameters
SUITES="kprobes_api kprobes_errors kprobes_handlers kprobes_blacklist"
SPLAT='WARNING: CPU|BUG: |Oops|general protection fault|Kernel panic|kretprobe BUG!|printk messages dropped|sleeping function called from invalid context'
KMEMLEAK=$DEBUGFS/kmemleak
# A leak is ours when its allocation backtrace names kprobes or one of the
# test modules, or has a frame that no longer resolves to a symbol: code of
# an unloaded module, and only the test modules are ever loaded here.
# (Frames read "    symbol+off/size", or "    [<address>] symbol+off/size"
# on kernels that show the address too.)
LEAK_OURS='kprobe|kp[bhkrst]_|^ +(\[<[0-9a-f]+>\] )?0x[0-9a-f]+$'
EVENTS="kpk_myprobe kpk_offprobe kpk_myret kpk_myret2 kpk_listent kpk_listret kpk_cofn kpk_corfn kpk_optev kpk_enopt kpk_enret kpk_enlate"
OPT_SYSCTL=/proc/sys/debug/kprobes-optimization
# A probe on a function's entry, as the list and the trace show it (ERE):
# +0x0, or +0x4 past an endbr64 (kernels built with IBT).
ENTRY='0x[04]'


# Upstream's ftrace selftests (tools/testing/selftests/ftrace, at the same
# place relative to this directory as in the kernel tree): the kprobe cases
# run by the "ftracetest" case, names of test.d/kprobe/*.tc.  Not run:
# uprobe_syntax_errors (uprobe_events' parser, no kprobe involved).  The
# kernel command line can name others: ktest.ftracetest=NAME,NAME,... or
# ktest.ftracetest=none.
FTRACE_DIR=../ftrace
FT_TESTS="add_and_remove busy_check kprobe_args kprobe_args_char
	kprobe_args_comm kprobe_args_string kprobe_args_symbol
	kprobe_args_syntax kprobe_args_type kprobe_args_user kprobe_args_vfs
	kprobe_eventname kprobe_ftrace kprobe_insn_boundary kprobe_module
	kprobe_multiprobe kprobe_non_uniq_symbol kprobe_opt_types
	kprobe_syntax_errors kretprobe_args kretprobe_entry_arg
	kretprobe_maxactive kretprobe_return_suffix multiple_kprobes
	probepoint profile"
# ktest.only=NAME,NAME,... runs only those cases (the harness's second
# pass, under single-threaded TCG, runs the cross-CPU patching cases).
ONLY=
# The CPUs the harness gave the guest (ktest.cpus=N): all must be online.
CPUS=
for arg in $(cat /proc/cmdline); do
	case $arg in
	ktest.ftracetest=none) FT_TESTS= ;;
	ktest.ftracetest=*) FT_TESTS=$(echo "${arg#*=}" | tr ',' ' ') ;;
	ktest.only=*) ONLY=$(echo "${arg#*=}" | tr ',' ' ') ;;
	ktest.cpus=*) CPUS=${arg#*=} ;;
	esac
done
FT_TIMEOUT=480

num=0
nfail=0
why=

# ---------------------------------------------------------------- helpers

diag()
{
	echo "# $*"
}

# Is case $1 to run (ktest.only)?
selected()
{
	[ -z "$ONLY" ] && return 0
	for c in $ONLY; do
		[ "$c" = "$1" ] && return 0
	done
	return 1
}

# run NAME FUNCTION: 0 passes, 2 skips, anything else fails; $why explains.
# Cases left out by ktest.only are not reported at all.
run()
{
	selected "$1" || return 0
	num=$((num + 1))
	why=
	echo "$1" > /tmp/ktest.case
	"$2"
	rc=$?
	if [ $rc -eq 0 ]; then
		echo "ok $num $1"
	elif [ $rc -eq 2 ]; then
		echo "ok $num $1 # SKIP $why"
	else
		[ -n "$why" ] && diag "$why"
		echo "not ok $num $1"
		nfail=$((nfail + 1))
	fi
}

fail()
{
	why="$*"
	return 1
}

splat_count()
{
	dmesg | grep -c -E "$SPLAT"
}

upstream()
{
	grep -q 'ktest\.tree=upstream' /proc/cmdline
}

loaded()
{
	[ -d "/sys/module/$1" ]
}

unload()
{
	loaded "$1" && rmmod "$1"
	! loaded "$1"
}

# The line of debugfs kprobes/list for the probe at address $1 (hex).
list_line()
{
	grep -i "^0*$1 " "$KPDIR/list" | head -n 1
}

trigger()
{
	echo "$1" > "$TGT/trigger"
}

hld()
{
	cat "$HLD/$1"
}

# Load kprobes_holder.ko with the given parameters.
holder()
{
	unload kprobes_holder || return 1
	insmod ./kprobes_holder.ko "$@" 2>/dev/null
}

# The kernel has return probes (CONFIG_KRETPROBES): register_kretprobe()
# is a function then, not an inline stub.
have_kret()
{
	grep -q ' register_kretprobe$' /proc/kallsyms
}

NO_KRET="no return probes in this kernel (CONFIG_KRETPROBES is off)"
NO_OPT="no $OPT_SYSCTL (jump optimization, CONFIG_OPTPROBES, is not there yet)"

mount_fs()
{
	[ -d "$KPDIR" ] || mount -t debugfs nodev "$DEBUGFS" 2>/dev/null
	[ -e "$TRACEFS/kprobe_events" ] ||
		mount -t tracefs nodev "$TRACEFS" 2>/dev/null
}

# ------------------------------------------------------------------ cases

# Every CPU the harness gave the guest (ktest.cpus) is online, and there
# are at least two: the cross-CPU cases would otherwise pass on one CPU
# without testing anything.
t_cpus()
{
	[ -n "$CPUS" ] || fail "no ktest.cpus=N on the kernel command line" || return
	online=$(grep -c '^processor' /proc/cpuinfo)
	[ "$online" = "$CPUS" ] ||
		fail "$online CPU(s) online, the harness gave $CPUS" || return
	[ "$online" -ge 2 ] || fail "only $online CPU: the cross-CPU cases need two" ||
		return
	diag "$online CPUs online"
}

# Jump optimization is on by default: the sysctl reads 1 before any case
# has written it (this case runs first, after cpus).
t_opt_sysctl_default()
{
	[ -e "$OPT_SYSCTL" ] || { why="$NO_OPT"; return 2; }
	v=$(cat "$OPT_SYSCTL")
	[ "$v" = 1 ] || fail "$OPT_SYSCTL reads $v at boot, want 1"
}

# The target module probes its own __init function from its init and
# keeps the probe: it fired during init and is [GONE] once init is over.
t_init_probe_gone()
{
	loaded kprobes_target || insmod ./kprobes_target.ko ||
		fail "insmod kprobes_target.ko failed" || return
	[ "$(cat $TGT/init_reg_ret)" = 0 ] ||
		fail "register_kprobe on own __init: $(cat $TGT/init_reg_ret)" ||
		return
	[ "$(cat $TGT/init_hits)" = 1 ] ||
		fail "init probe hits: $(cat $TGT/init_hits), want 1" || return
	addr=$(cat $TGT/init_probe_addr)
	line=$(list_line "$addr")
	[ -n "$line" ] || fail "no list line for $addr" || return
	echo "$line" | grep -q '\[GONE\]' || fail "not gone: $line"
}

# Runs the KUnit suites of kprobes_kunit.ko (their KTAP goes to the
# kernel log) and checks each suite's top-level result there.
t_kunit_suites()
{
	loaded kprobes_target || fail "kprobes_target not loaded" || return
	unload kprobes_kunit || fail "cannot unload kprobes_kunit" || return
	param=
	upstream && param="upstream=1"
	insmod ./kprobes_kunit.ko $param ||
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

# Load KUnit module $1 (with kprobes_target.ko under it) with parameters
# $3..., unload it, and judge its suite $2 from the kernel log, where its
# KTAP goes.  Leaves that log in $log.  Under multi-threaded TCG, code
# patched while another vCPU runs it can stay stale for that vCPU: the
# cases that do this take cross_cpu=0 unless the harness says its vCPUs
# take turns on one host thread.
kunit_module()
{
	m=$1 suite=$2
	shift 2
	loaded kprobes_target || insmod ./kprobes_target.ko ||
		fail "insmod kprobes_target.ko failed" || return
	unload $m || fail "cannot unload $m" || return
	insmod ./$m.ko "$@" || fail "insmod $m.ko failed" || return
	log=$(dmesg)
	unload $m || fail "rmmod $m failed" || return
	echo "$log" | grep -q -E "ok [0-9]+ $suite( |\$)" ||
		fail "no result line for $suite"
}

suite_failed()
{
	echo "$log" | grep -q -E "not ok [0-9]+ $1( |\$)"
}

cross_cpu_param()
{
	grep -q 'ktest\.tcg=single' /proc/cmdline || echo cross_cpu=0
	upstream && echo upstream=1
}

# The kprobes_stress KUnit suite of kprobes_stress.ko: probes registered,
# toggled and unregistered while two CPUs and a timer interrupt run the
# probed code.
t_stress_suite()
{
	kunit_module kprobes_stress kprobes_stress $(cross_cpu_param) || return
	! suite_failed kprobes_stress || fail "suite kprobes_stress failed"
}

# The kprobes_boundaries KUnit suite of kprobes_boundary.ko: a probe on
# every instruction boundary of two target functions in turn, with and
# without a post handler, with one CPU and then two calling them, must
# not change any result.
t_boundary_suite()
{
	kunit_module kprobes_boundary kprobes_boundaries $(cross_cpu_param) ||
		return
	! suite_failed kprobes_boundaries ||
		fail "suite kprobes_boundaries failed"
}

# The kprobes_kretprobe KUnit suite of kprobes_kretprobe.ko (its KTAP goes
# to the kernel log).  On upstream one case, kpr_no_miss, is expected to
# fail (upstream misses returns once maxactive calls are in flight; see
# the module): there the suite passes when every other case does.
t_kretprobe_suite()
{
	s=kprobes_kretprobe
	have_kret || { why=$NO_KRET; return 2; }
	param=
	upstream && param="upstream=1"
	kunit_module $s $s $param || return
	if upstream; then
		bad=$(echo "$log" |
			sed -n 's/^ *not ok [0-9]* \(kpr_[a-z0-9_]*\).*/\1/p' |
			grep -v -x kpr_no_miss | tr '\n' ' ')
		[ -z "$bad" ] || fail "failed cases: $bad" || return
		echo "$log" | grep -q -E '^ *not ok [0-9]+ kpr_no_miss' &&
			diag "kpr_no_miss failed, as expected on upstream"
		return 0
	fi
	! suite_failed $s || fail "suite $s failed"
}

# The kprobes_optimizer KUnit suite of kprobes_opt.ko: the states of an
# optimized probe in the list, the registers handlers see on each path
# (breakpoint, boosted, optimized, ftrace), optimization while two CPUs
# call.  Its cases that need jump optimization skip themselves without
# the sysctl; the others run anyway.
t_opt_suite()
{
	kunit_module kprobes_opt kprobes_optimizer $(cross_cpu_param) || return
	! suite_failed kprobes_optimizer || fail "suite kprobes_optimizer failed"
}

# debugfs kprobes/blacklist: "0x<start>-0x<end>\t<symbol>" lines that
# name known unprobeable functions.
t_blacklist_file()
{
	f=$KPDIR/blacklist
	[ -r "$f" ] || fail "no $f" || return
	total=$(grep -c . "$f")
	good=$(grep -c -E '^0x[0-9a-f]+-0x[0-9a-f]+	[^ ]+$' "$f")
	[ "$total" -gt 0 ] && [ "$total" = "$good" ] ||
		fail "$good of $total lines well-formed" || return
	for s in notify_die kprobe_int3_handler; do
		grep -q "	$s\$" "$f" || fail "$s not listed" || return
	done
	# Ranges are real: start < end on the notify_die line.
	range=$(grep "	notify_die\$" "$f" | head -n 1 | cut -f 1)
	s=${range%-*}
	e=${range#*-}
	[ "${#s}" = "${#e}" ] && expr "$s" \< "$e" > /dev/null ||
		fail "bad range $range"
}

# A probe on a module function fires, count exact, while the module lives.
t_module_probe()
{
	holder sym=kprobes_target:kpt_shell_a sym2=kprobes_target:kpt_shell_b ||
		fail "insmod kprobes_holder.ko failed" || return
	trigger 10
	[ "$(hld hits)" = 10 ] && [ "$(hld hits2)" = 10 ] ||
		fail "hits $(hld hits)/$(hld hits2), want 10/10"
}

# debugfs kprobes/list: "<addr>  k  <sym>+<off>  <module> <marks>"; the
# module name may be bracketed ("[mod]", ours) or bare (upstream).
t_list_format()
{
	loaded kprobes_holder || fail "kprobes_holder not loaded" || return
	a1=$(hld addr)
	a2=$(hld addr2)
	l1=$(list_line "$a1")
	[ -n "$l1" ] || fail "no list line for $a1" || return
	set -- $l1
	[ "$2" = k ] || fail "type '$2' in: $l1" || return
	echo "$3" | grep -q -E '^kpt_shell_a\+0x[0-9a-f]+$' ||
		fail "symbol '$3' in: $l1" || return
	[ "$4" = kprobes_target ] || [ "$4" = "[kprobes_target]" ] ||
		fail "module '$4' in: $l1" || return
	echo "$l1" | grep -q -E '\[(GONE|DISABLED)\]' &&
		{ fail "unexpected mark: $l1"; return; }
	echo 1 > "$HLD/disabled2" || fail "disable_kprobe failed" || return
	l2=$(list_line "$a2")
	echo "$l2" | grep -q 'kpt_shell_b+0x.*\[DISABLED\]' ||
		fail "no [DISABLED] mark: $l2" || return
	l1=$(list_line "$a1")
	echo "$l1" | grep -q '\[DISABLED\]' &&
		{ fail "both disabled: $l1"; return; }
	echo 0 > "$HLD/disabled2" || fail "enable_kprobe failed" || return
	l2=$(list_line "$a2")
	echo "$l2" | grep -q '\[DISABLED\]' &&
		{ fail "still disabled: $l2"; return; }
	return 0
}

# debugfs kprobes/enabled: 0 silences every probe, 1 re-arms them, and a
# probe disabled on its own stays disabled across the two.
t_enabled_file()
{
	f=$KPDIR/enabled
	loaded kprobes_holder || fail "kprobes_holder not loaded" || return
	[ "$(cat $f)" = 1 ] || fail "enabled reads '$(cat $f)'" || return
	echo 1 > "$HLD/disabled2" || fail "disable_kprobe failed" || return
	h1=$(hld hits)
	h2=$(hld hits2)
	echo 0 > "$f"
	v=$(cat $f)
	trigger 5
	n1=$(hld hits)
	n2=$(hld hits2)
	echo 1 > "$f"
	[ "$v" = 0 ] || fail "enabled reads '$v' after writing 0" || return
	[ "$n1" = "$h1" ] && [ "$n2" = "$h2" ] ||
		fail "fired while disarmed: $h1/$h2 -> $n1/$n2" || return
	[ "$(cat $f)" = 1 ] || fail "enabled reads '$(cat $f)'" || return
	trigger 5
	[ "$(hld hits)" = $((h1 + 5)) ] ||
		fail "re-armed probe: $(hld hits), want $((h1 + 5))" || return
	[ "$(hld hits2)" = "$h2" ] ||
		fail "individually disabled probe fired after re-arm" || return
	list_line "$(hld addr2)" | grep -q '\[DISABLED\]' ||
		fail "[DISABLED] mark lost across 0/1" || return
	echo 0 > "$HLD/disabled2" || fail "enable_kprobe failed" || return
	trigger 1
	[ "$(hld hits2)" = $((h2 + 1)) ] ||
		fail "enabled probe: $(hld hits2), want $((h2 + 1))"
}

# The hits, in order, of: the holder's breakpoint probe (on the ret of
# kpt_asm_add, kpt_asm_add_next: never optimized), its disabled probe
# (kpt_shell_b), the optimized event kpk_enopt, the return probe event
# kpk_enret, the event kpk_enlate, the holder's late probe (on the entry
# of kpt_opt_c, an ftrace site: never optimized either).
en_hits()
{
	echo "$(hld hits) $(hld hits2) $(ev_hits kpk_enopt) $(ev_hits kpk_enret) $(ev_hits kpk_enlate) $(hld hits3)"
}

# Checks that $1 calls of each target took the hits from "$2" to "$3",
# each counter going up by the matching factor in "$4" (0 or 1 per call).
en_expect()
{
	i=1
	for want in $4; do
		a=$(echo "$2" | cut -d' ' -f$i)
		b=$(echo "$3" | cut -d' ' -f$i)
		[ "$((${b:-0} - ${a:-0}))" = "$(($1 * want))" ] ||
			fail "$5: hits '$2' -> '$3', want +$1 times '$4' (breakpoint, disabled, optimized, return, late event, late probe)" ||
			return
		i=$((i + 1))
	done
}

# debugfs kprobes/enabled with a breakpoint probe, a disabled one, an
# optimized one and a return probe: 0 disarms all of them (no hit, nothing
# left [OPTIMIZED]), probes that arrive meanwhile stay unarmed (an event
# added and enabled, which registers its probe disabled and then enables
# it, and a probe registered enabled, the holder's late one), 1 arms them
# all again, the optimized one optimized again, and the disabled one stays
# [DISABLED] and silent throughout.
t_enabled_switch()
{
	f=$KPDIR/enabled
	[ -w "$TRACEFS/kprobe_events" ] || fail "no kprobe_events" || return
	[ -e "$OPT_SYSCTL" ] || { why="$NO_OPT"; return 2; }
	have_kret || { why="$NO_KRET"; return 2; }
	loaded kprobes_target || insmod ./kprobes_target.ko ||
		fail "insmod kprobes_target.ko failed" || return
	[ "$(cat $f)" = 1 ] || fail "enabled reads '$(cat $f)'" || return
	ev_cleanup
	echo 1 > "$OPT_SYSCTL"
	holder sym=kprobes_target:kpt_asm_add_next sym2=kprobes_target:kpt_shell_b ||
		fail "insmod kprobes_holder.ko failed" || return
	echo 1 > "$HLD/disabled2" || fail "disable_kprobe failed" || return
	off=$(opt_c_offset) || fail "no offset in 5..16 of kpt_opt_c accepted" || return
	echo '-:kpk_optev' >> "$TRACEFS/kprobe_events"
	E=$TRACEFS/events/kprobes
	echo "p:kpk_enopt kprobes_target:kpt_opt_c+$off" >> "$TRACEFS/kprobe_events" &&
		echo 'r:kpk_enret kprobes_target:kpt_static_fn' >> "$TRACEFS/kprobe_events" &&
		echo 1 > "$E/kpk_enopt/enable" && echo 1 > "$E/kpk_enret/enable" ||
		fail "cannot add and enable kpk_enopt and kpk_enret" || return
	opt_wait "kpt_opt_c\+0x$(printf %x $off)" yes ||
		fail "kpt_opt_c+$off not optimized: $opt_line" || return
	list_line "$(hld addr)" | grep -q OPTIMIZED &&
		{ fail "the breakpoint probe is optimized: $(list_line "$(hld addr)")"; return; }
	h0=$(en_hits)
	trigger 2
	h1=$(en_hits)
	en_expect 2 "$h0" "$h1" "1 0 1 1 0 0" "all armed" || return

	echo 0 > "$f"
	rc=0
	[ "$(cat $f)" = 0 ] || { fail "enabled reads '$(cat $f)' after 0"; rc=1; }
	if [ $rc = 0 ]; then
		echo 'p:kpk_enlate kprobes_target:kpt_shell_a' >> "$TRACEFS/kprobe_events" &&
			echo 1 > "$E/kpk_enlate/enable" ||
			{ fail "cannot add kpk_enlate while disarmed"; rc=1; }
	fi
	if [ $rc = 0 ]; then
		echo kprobes_target:kpt_opt_c > "$HLD/late" ||
			{ fail "cannot register the holder's late probe while disarmed"; rc=1; }
	fi
	if [ $rc = 0 ]; then
		grep -q OPTIMIZED "$KPDIR/list" &&
			{ fail "[OPTIMIZED] while disarmed: $(grep OPTIMIZED "$KPDIR/list")"; rc=1; }
	fi
	if [ $rc = 0 ]; then
		h1=$(en_hits)
		trigger 3
		h2=$(en_hits)
		en_expect 3 "$h1" "$h2" "0 0 0 0 0 0" "all disarmed" || rc=1
	fi
	echo 1 > "$f"
	[ $rc = 0 ] || return $rc

	opt_wait "kpt_opt_c\+0x$(printf %x $off)" yes ||
		fail "kpt_opt_c+$off not optimized again: $opt_line" || return
	list_line "$(hld addr2)" | grep -q '\[DISABLED\]' ||
		fail "the disabled probe lost [DISABLED]: $(list_line "$(hld addr2)")" || return
	h2=$(en_hits)
	trigger 2
	h3=$(en_hits)
	en_expect 2 "$h2" "$h3" "1 0 1 1 1 1" "armed again" || return
	for e in kpk_enopt kpk_enret kpk_enlate; do
		echo 0 > "$E/$e/enable"
		echo "-:$e" >> "$TRACEFS/kprobe_events"
	done
	unload kprobes_holder
}

# A breakpoint probe that is not on a function entry runs its instruction
# from a slot page, shown by /proc/kallsyms.
t_kallsyms_insn_page()
{
	holder sym=kprobes_target:kpt_asm_add_insn ||
		fail "insmod kprobes_holder.ko (kpt_asm_add_insn) failed" ||
		return
	trigger 3
	[ "$(hld hits)" = 3 ] || fail "hits $(hld hits), want 3" || return
	grep -q -E '^[0-9a-f]+ t kprobe_insn_page[[:space:]]+\[__builtin__kprobes\]$' \
		/proc/kallsyms ||
		fail "no kprobe_insn_page [__builtin__kprobes] in /proc/kallsyms"
}

# Probes registered and unregistered over and over by loading and
# unloading kprobes_holder.ko, and registrations that fail, also half-way
# through (the second probe is bad, the first is unregistered again).  Each
# round counts right; no probe stays behind, nor memory (see kmemleak).
t_holder_loop()
{
	loaded kprobes_target || insmod ./kprobes_target.ko ||
		fail "insmod kprobes_target.ko failed" || return
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
		holder sym=kpk_no_such_symbol &&
			{ fail "round $i: unknown symbol accepted"; return; }
		holder sym=kprobes_target:kpt_asm_add offset=1 &&
			{ fail "round $i: kpt_asm_add+1 accepted"; return; }
		holder sym=kprobes_target:kpt_shell_a sym2=kpk_no_such_symbol &&
			{ fail "round $i: bad second probe accepted"; return; }
		i=$((i + 1))
	done
	grep -q -E 'kpt_shell_[ab]\+' "$KPDIR/list" &&
		{ fail "left in the list: $(grep kpt_shell "$KPDIR/list")"; return; }
	return 0
}

# The holder's probe at $1 on kprobes_target: rmmod kprobes_target leaves
# it [GONE] in the list, rmmod kprobes_holder takes it out, quietly (no
# splat since the count $2).
target_gone()
{
	rmmod kprobes_target || fail "rmmod kprobes_target failed" || return
	l=$(list_line "$1")
	echo "$l" | grep -q '\[GONE\]' || fail "not gone: '$l'" || return
	rmmod kprobes_holder || fail "rmmod kprobes_holder failed" || return
	[ -z "$(list_line "$1")" ] || fail "still listed after unregister" ||
		return
	[ "$(splat_count)" = "$2" ] || fail "kernel splat"
}

# rmmod of a probed module: the probe stays registered, shows [GONE], and
# unregistering it later is quiet.
t_module_unload_gone()
{
	unload kprobes_kunit
	holder sym=kprobes_target:kpt_shell_a ||
		fail "insmod kprobes_holder.ko failed" || return
	trigger 2
	[ "$(hld hits)" = 2 ] || fail "hits $(hld hits), want 2" || return
	target_gone "$(hld addr)" "$(splat_count)"
}

ev_cleanup()
{
	for e in $EVENTS; do
		[ -e "$TRACEFS/events/kprobes/$e/enable" ] &&
			echo 0 > "$TRACEFS/events/kprobes/$e/enable"
		echo "-:$e" >> "$TRACEFS/kprobe_events" 2>/dev/null
	done
	echo 0 > "$TRACEFS/tracing_on"
	echo > "$TRACEFS/trace"
	echo 1 > "$TRACEFS/tracing_on"
}

# Cause some reads.
do_reads()
{
	i=0
	while [ $i -lt 5 ]; do
		read -r x < /proc/version
		i=$((i + 1))
	done
	grep -q . /proc/cmdline
}

# kprobe_events: define, enable, hit, see it in trace and kprobe_profile,
# disable, remove.
t_kprobe_events()
{
	[ -w "$TRACEFS/kprobe_events" ] || fail "no kprobe_events" || return
	ev_cleanup
	echo 'p:kpk_myprobe vfs_read' > "$TRACEFS/kprobe_events" ||
		fail "cannot define p:kpk_myprobe vfs_read" || return
	grep -q '^p:kprobes/kpk_myprobe vfs_read' "$TRACEFS/kprobe_events" ||
		fail "not in kprobe_events: $(cat $TRACEFS/kprobe_events)" ||
		return
	grep -q 'vfs_read+0x' "$KPDIR/list" ||
		fail "no vfs_read probe in debugfs list" || return
	echo 1 > "$TRACEFS/events/kprobes/kpk_myprobe/enable" ||
		fail "cannot enable" || return
	do_reads
	echo 0 > "$TRACEFS/events/kprobes/kpk_myprobe/enable"
	grep -q 'kpk_myprobe: (vfs_read+' "$TRACEFS/trace" ||
		fail "no kpk_myprobe: line in trace" || return
	hits=$(awk '$1 == "kpk_myprobe" { print $2 }' \
		"$TRACEFS/kprobe_profile")
	[ -n "$hits" ] && [ "$hits" -gt 0 ] ||
		fail "kprobe_profile hits '$hits'" || return
	echo '-:kpk_myprobe' >> "$TRACEFS/kprobe_events" ||
		fail "cannot remove" || return
	grep -q kpk_myprobe "$TRACEFS/kprobe_events" &&
		{ fail "still defined after removal"; return; }
	[ -e "$TRACEFS/events/kprobes/kpk_myprobe" ] &&
		{ fail "event directory left behind"; return; }
	return 0
}

# kprobe_events at vfs_read+<offset>: offsets inside an instruction are
# refused, the first instruction boundary after the entry is accepted.
t_kprobe_events_offset()
{
	[ -w "$TRACEFS/kprobe_events" ] || fail "no kprobe_events" || return
	ev_cleanup
	echo "p:kpk_offprobe vfs_read+1" > "$TRACEFS/kprobe_events" \
		2>/dev/null && { fail "vfs_read+1 was accepted"; return; }
	# The first boundary past the entry (5: after the ftrace call site,
	# 9: after endbr64 and the call site).
	refused=0
	off=5
	found=
	while [ $off -le 32 ]; do
		if echo "p:kpk_offprobe vfs_read+$off" \
			> "$TRACEFS/kprobe_events" 2>/dev/null; then
			found=$off
			break
		fi
		refused=$((refused + 1))
		off=$((off + 1))
	done
	[ -n "$found" ] || fail "no offset in 5..32 accepted" || return
	echo 1 > "$TRACEFS/events/kprobes/kpk_offprobe/enable" ||
		fail "cannot enable" || return
	do_reads
	echo 0 > "$TRACEFS/events/kprobes/kpk_offprobe/enable"
	grep -q "kpk_offprobe: (vfs_read+0x" "$TRACEFS/trace" ||
		fail "no trace line for vfs_read+$found" || return
	echo '-:kpk_offprobe' >> "$TRACEFS/kprobe_events" ||
		fail "cannot remove" || return
	diag "vfs_read+$found accepted after $refused refused"
}

# The function tracer and kprobes on the same function: both see every
# call, through one ftrace call site ([FTRACE] in the list); turning the
# tracer off leaves the probes working.
t_ftrace_coexist()
{
	[ -w "$TRACEFS/set_ftrace_filter" ] || fail "no set_ftrace_filter" ||
		return
	ev_cleanup
	echo 'p:kpk_cofn vfs_read' > "$TRACEFS/kprobe_events" ||
		fail "cannot define p:kpk_cofn vfs_read" || return
	if have_kret; then
		echo 'r:kpk_corfn vfs_read' >> "$TRACEFS/kprobe_events" ||
			fail "cannot define r:kpk_corfn vfs_read" || return
	fi
	echo vfs_read > "$TRACEFS/set_ftrace_filter" ||
		fail "cannot filter the function tracer" || return
	echo function > "$TRACEFS/current_tracer" ||
		fail "cannot start the function tracer" || return
	for e in kpk_cofn kpk_corfn; do
		[ -e "$TRACEFS/events/kprobes/$e/enable" ] &&
			echo 1 > "$TRACEFS/events/kprobes/$e/enable"
	done
	do_reads
	echo 0 > "$TRACEFS/tracing_on"
	tr=$(cat "$TRACEFS/trace")
	echo 1 > "$TRACEFS/tracing_on"
	echo nop > "$TRACEFS/current_tracer"
	echo > "$TRACEFS/set_ftrace_filter"
	fn=$(echo "$tr" | grep -c ' vfs_read <-')
	kp=$(echo "$tr" | grep -c -E "kpk_cofn: \\(vfs_read\\+$ENTRY")
	diag "function tracer: $fn vfs_read lines, kprobe: $kp"
	[ "$fn" -ge 5 ] || fail "function tracer saw $fn calls" || return
	[ "$kp" -ge 5 ] || fail "kprobe saw $kp calls" || return
	if have_kret; then
		kr=$(echo "$tr" | grep -c 'kpk_corfn: (.* <- vfs_read)')
		[ "$kr" -ge 5 ] || fail "kretprobe saw $kr returns" || return
	fi
	grep -E "vfs_read\\+$ENTRY" "$KPDIR/list" | grep -q FTRACE ||
		fail "vfs_read probe not [FTRACE]: $(grep vfs_read "$KPDIR/list")" ||
		return
	# Tracer off: the probe still fires.
	echo > "$TRACEFS/trace"
	do_reads
	grep -q -E "kpk_cofn: \\(vfs_read\\+$ENTRY" "$TRACEFS/trace" ||
		fail "probe silent after the tracer stopped" || return
	ev_cleanup
	return 0
}

# Whether the list line of the probe on $1 (symbol+offset, an ERE) says
# [OPTIMIZED]: "yes" or "no" as $2 wants, within 10 s.  $opt_line is the
# line last read.
opt_wait()
{
	i=0
	while :; do
		opt_line=$(grep -E "[[:space:]]$1([[:space:]]|\$)" "$KPDIR/list")
		got=no
		echo "$opt_line" | grep -q '\[OPTIMIZED\]' && got=yes
		[ "$got" = "$2" ] && return 0
		[ $i -lt 100 ] || return 1
		sleep 0.1
		i=$((i + 1))
	done
}

# The hits of kprobe event $1 in kprobe_profile.
ev_hits()
{
	awk -v e="$1" '$1 == e { print $2 }' "$TRACEFS/kprobe_profile"
}

# $1 calls of the target must be $1 more hits of kpk_optev.
opt_hits()
{
	h0=$(ev_hits kpk_optev)
	trigger "$1"
	h1=$(ev_hits kpk_optev)
	[ "$((h1 - h0))" = "$1" ] ||
		fail "$2: $((h1 - h0)) hits for $1 calls ($opt_line)"
}

t_opt_events_steps()
{
	# The first instruction after the ftrace call site (5 bytes, 9 with
	# endbr64): kprobe events only go on functions ftrace can trace.
	off=5
	while ! echo "p:kpk_optev kprobes_target:kpt_opt_c+$off" \
		> "$TRACEFS/kprobe_events" 2>/dev/null; do
		off=$((off + 1))
		[ $off -le 16 ] ||
			fail "no offset in 5..16 of kpt_opt_c accepted" || return
	done
	sym="kpt_opt_c\\+0x$(printf %x $off)"
	diag "p:kpk_optev kprobes_target:kpt_opt_c+$off"
	echo 1 > "$TRACEFS/events/kprobes/kpk_optev/enable" ||
		fail "cannot enable" || return
	opt_wait "$sym" yes ||
		fail "not [OPTIMIZED] after 10 s: '$opt_line'" || return
	opt_hits 10 "optimized" || return
	# Its detour lives in a page kallsyms (and so perf) can name.
	grep -q -E '^[0-9a-f]+ t kprobe_optinsn_page[[:space:]]+\[__builtin__kprobes\]$' \
		/proc/kallsyms ||
		fail "no kprobe_optinsn_page [__builtin__kprobes] in /proc/kallsyms" ||
		return
	echo 0 > "$OPT_SYSCTL"
	[ "$(cat "$OPT_SYSCTL")" = 0 ] ||
		fail "the sysctl reads '$(cat "$OPT_SYSCTL")' after writing 0" ||
		return
	opt_wait "$sym" no ||
		fail "still [OPTIMIZED] 10 s after writing 0: '$opt_line'" ||
		return
	opt_hits 10 "sysctl 0" || return
	echo 1 > "$OPT_SYSCTL"
	opt_wait "$sym" yes ||
		fail "not [OPTIMIZED] again 10 s after writing 1: '$opt_line'" ||
		return
	opt_hits 10 "sysctl 1" || return
	echo 0 > "$TRACEFS/events/kprobes/kpk_optev/enable"
	grep -q "kpk_optev: (kpt_opt_c+0x$(printf %x $off)" "$TRACEFS/trace" ||
		fail "no kpk_optev: line in trace" || return
	echo '-:kpk_optev' >> "$TRACEFS/kprobe_events" ||
		fail "cannot remove" || return
	grep -q -E "[[:space:]]$sym([[:space:]]|\$)" "$KPDIR/list" &&
		{ fail "still listed: $(grep kpt_opt_c "$KPDIR/list")"; return; }
	return 0
}

# The optimization sysctl with a kprobe event: p: on an instruction that
# can be optimized (the first after the entry of kpt_opt_c, straight-line
# code, see kprobes_target.h) is [OPTIMIZED] in the list once enabled;
# writing 0 to the sysctl takes the mark away, writing 1 brings it back;
# every call is one hit all along.  The sysctl is put back as it was.
# Skipped on a kernel without the sysctl.
t_opt_sysctl_events()
{
	[ -e "$OPT_SYSCTL" ] || { why=$NO_OPT; return 2; }
	[ -w "$TRACEFS/kprobe_events" ] || fail "no kprobe_events" || return
	loaded kprobes_target || insmod ./kprobes_target.ko ||
		fail "insmod kprobes_target.ko failed" || return
	ev_cleanup
	opt_old=$(cat "$OPT_SYSCTL")
	echo 1 > "$OPT_SYSCTL" || fail "cannot write 1 to $OPT_SYSCTL" || return
	t_opt_events_steps
	rc=$?
	ev_cleanup
	echo "$opt_old" > "$OPT_SYSCTL"
	return $rc
}

# perf_event_open() with the kprobe PMU, by the static helper program.
t_perf_kprobe_pmu()
{
	[ -r /sys/bus/event_source/devices/kprobe/type ] ||
		{ why="no kprobe PMU"; return 2; }
	[ -x ./kprobes_perf ] || { why="kprobes_perf not built"; return 2; }
	out=$(./kprobes_perf vfs_read 2>&1)
	rc=$?
	[ $rc -eq 0 ] || fail "kprobes_perf: $out" || return
	diag "$out"
}

# kprobe_events return probes on vfs_read: "r:" with $retval and "r16:"
# (maxactive 16).  A dd of /proc/version reads it whole in one vfs_read(),
# whose return value, the file's size, must show up in the trace.
t_kretprobe_events()
{
	[ -w "$TRACEFS/kprobe_events" ] || fail "no kprobe_events" || return
	have_kret || { why=$NO_KRET; return 2; }
	ev_cleanup
	ev=$TRACEFS/events/kprobes
	echo 'r:kpk_myret vfs_read ret=$retval' >> "$TRACEFS/kprobe_events" ||
		fail 'cannot define r:kpk_myret vfs_read ret=$retval' || return
	echo 'r16:kpk_myret2 vfs_read' >> "$TRACEFS/kprobe_events" ||
		fail "cannot define r16:kpk_myret2 vfs_read" || return
	# A plain "r:" may be listed with the maxactive the kernel chose.
	grep -q -E '^r[0-9]*:kprobes/kpk_myret vfs_read ret=\$retval' \
		"$TRACEFS/kprobe_events" &&
		grep -q '^r16:kprobes/kpk_myret2 vfs_read' "$TRACEFS/kprobe_events" ||
		fail "not in kprobe_events: $(cat $TRACEFS/kprobe_events)" ||
		return
	size=$(wc -c < /proc/version)
	echo 1 > "$ev/kpk_myret/enable" && echo 1 > "$ev/kpk_myret2/enable" ||
		fail "cannot enable" || return
	dd if=/proc/version of=/dev/null bs=4096 count=1 2>/dev/null
	do_reads
	echo 0 > "$ev/kpk_myret/enable"
	echo 0 > "$ev/kpk_myret2/enable"
	t=$(cat "$TRACEFS/trace")
	echo "$t" | grep -q 'kpk_myret: (.* <- vfs_read) ret=0x' ||
		fail "no kpk_myret: line in trace" || return
	echo "$t" | grep -q -E "kpk_myret: \(.* <- vfs_read\) ret=0x$(printf %x "$size")\$" ||
		fail "no return of $size bytes: $(echo "$t" | grep kpk_myret: | head -n 3)" ||
		return
	echo "$t" | grep -q 'kpk_myret2: (.* <- vfs_read)' ||
		fail "no kpk_myret2: line in trace" || return
	# kprobe_profile: "<event> <hits> <misses>"
	prof=$(awk '$1 == "kpk_myret" { print $2, $3 }' "$TRACEFS/kprobe_profile")
	set -- $prof
	[ -n "$1" ] && [ "$1" -gt 0 ] && [ "$2" = 0 ] ||
		fail "kprobe_profile hits/misses '$prof'" || return
	echo '-:kpk_myret' >> "$TRACEFS/kprobe_events" &&
		echo '-:kpk_myret2' >> "$TRACEFS/kprobe_events" ||
		fail "cannot remove" || return
	grep -q kpk_myret "$TRACEFS/kprobe_events" &&
		{ fail "still defined after removal"; return; }
	return 0
}

# debugfs kprobes/list: a return probe is listed with type "r", next to a
# kprobe ("k") on the same function.
t_kretprobe_list()
{
	[ -r "$KPDIR/list" ] || { why="no $KPDIR/list"; return 2; }
	[ -w "$TRACEFS/kprobe_events" ] || fail "no kprobe_events" || return
	have_kret || { why=$NO_KRET; return 2; }
	ev_cleanup
	echo 'r:kpk_listret vfs_read' >> "$TRACEFS/kprobe_events" &&
		echo 'p:kpk_listent vfs_read' >> "$TRACEFS/kprobe_events" ||
		fail "cannot define the events" || return
	lines=$(grep -E "[[:space:]]vfs_read\\+$ENTRY([[:space:]]|\$)" "$KPDIR/list")
	types=$(echo "$lines" | awk '{ print $2 }' | sort | tr '\n' ' ')
	echo '-:kpk_listret' >> "$TRACEFS/kprobe_events"
	echo '-:kpk_listent' >> "$TRACEFS/kprobe_events"
	[ "$types" = "k r " ] || fail "types '$types' in: $lines" || return
	grep -q -E "[[:space:]]vfs_read\\+$ENTRY([[:space:]]|\$)" "$KPDIR/list" &&
		{ fail "still listed: $(grep vfs_read "$KPDIR/list")"; return; }
	return 0
}

# perf_event_open() with the kprobe PMU and its retprobe bit: a return
# probe counts each read's return.
t_perf_kretprobe_pmu()
{
	[ -r /sys/bus/event_source/devices/kprobe/type ] ||
		{ why="no kprobe PMU"; return 2; }
	have_kret || { why=$NO_KRET; return 2; }
	[ -x ./kprobes_perf ] || { why="kprobes_perf not built"; return 2; }
	f=/sys/bus/event_source/devices/kprobe/format/retprobe
	[ "$(cat $f 2>/dev/null)" = config:0 ] ||
		fail "$f reads '$(cat $f 2>/dev/null)'" || return
	out=$(./kprobes_perf -r vfs_read 2>&1)
	rc=$?
	[ $rc -eq 0 ] || fail "kprobes_perf -r: $out" || return
	diag "$out"
}

# The first offset into kpt_opt_c past its ftrace call (5, or 9 after
# endbr64) that kprobe_events accepts for event kpk_optev; the event stays
# defined.  Prints the offset, or nothing.
opt_c_offset()
{
	off=5
	while ! echo "p:kpk_optev kprobes_target:kpt_opt_c+$off" \
		>> "$TRACEFS/kprobe_events" 2>/dev/null; do
		off=$((off + 1))
		[ $off -le 16 ] || return 1
	done
	echo $off
}

# Lines of kprobe code pages in /proc/kallsyms.
ool_pages()
{
	grep -c -E ' t kprobe_(opt)?insn_page' /proc/kallsyms
}

# What perf tells a trace decoder (Intel PT with perf record --kcore)
# about a kprobe event's life, read by kprobes_textpoke with perf events
# that ask for PERF_RECORD_TEXT_POKE and PERF_RECORD_KSYMBOL on every CPU:
# p: on an instruction of kpt_opt_c that can be optimized, enabled until
# the record of its jump comes in, disabled, removed.  Every change to the
# text must come with its record: the breakpoint in and out, the jump in
# and out, the out-of-line copy and the detour filled, the pages they live
# in registered, and unregistered once gone.
t_text_poke()
{
	[ -x ./kprobes_textpoke ] || fail "kprobes_textpoke not built" || return
	[ -w "$TRACEFS/kprobe_events" ] || fail "no kprobe_events" || return
	loaded kprobes_target || insmod ./kprobes_target.ko ||
		fail "insmod kprobes_target.ko failed" || return
	ev_cleanup
	off=$(opt_c_offset) || fail "no offset in 5..16 of kpt_opt_c accepted" ||
		return
	addr=$(grep -E "[[:space:]]kpt_opt_c\+0x$(printf %x $off)[[:space:]]" \
		"$KPDIR/list" | cut -d' ' -f1)
	echo '-:kpk_optev' >> "$TRACEFS/kprobe_events"
	[ -n "$addr" ] || fail "no list line for kpt_opt_c+$off" || return
	opt=
	opt_old=
	if [ -e "$OPT_SYSCTL" ]; then
		opt=-o
		opt_old=$(cat "$OPT_SYSCTL")
		echo 1 > "$OPT_SYSCTL"
	fi
	ev=$TRACEFS/events/kprobes/kpk_optev
	pages=$(ool_pages)
	up="echo 'p:kpk_optev kprobes_target:kpt_opt_c+$off' >> $TRACEFS/kprobe_events &&
		echo 1 > $ev/enable"
	down="echo 0 > $ev/enable && echo '-:kpk_optev' >> $TRACEFS/kprobe_events ||
			exit 1
		# Out-of-line code is freed once no CPU can be in it: wait for it.
		i=0
		while [ \$i -lt 100 ] &&
		      [ \$(grep -c -E ' t kprobe_(opt)?insn_page' /proc/kallsyms) -gt $pages ]; do
			sleep 0.1; i=\$((i + 1))
		done"
	out=$(./kprobes_textpoke $opt "$addr" "$up" "$down" 2>&1)
	rc=$?
	[ -n "$opt_old" ] && echo "$opt_old" > "$OPT_SYSCTL"
	echo "$out" | sed 's/^/# /'
	[ $rc -eq 0 ] || fail "kprobes_textpoke: $(echo "$out" | tail -n 1)"
}

LP=/sys/kernel/livepatch/livepatch_sample
LP_TEXT="this has been live patched"

# Wait until the sample livepatch has no transition under way (and, with
# $1 = gone, until it is gone): at most 30 s.
lp_wait()
{
	i=0
	while [ $i -lt 300 ]; do
		if [ "$1" = gone ]; then
			[ -e "$LP" ] || return 0
		elif [ -e "$LP/transition" ] && [ "$(cat "$LP/transition")" = 0 ]; then
			return 0
		fi
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

lp_load()
{
	modprobe livepatch-sample || return 1
	lp_wait
}

lp_unload()
{
	[ -e "$LP/enabled" ] && echo 0 > "$LP/enabled"
	lp_wait gone || return 1
	unload livepatch_sample
}

# /proc/cmdline shows the livepatched text, and kpk_lp counts each read.
lp_probe_reads()
{
	h0=$(ev_hits kpk_lp)
	for i in 1 2 3; do
		grep -q "$LP_TEXT" /proc/cmdline ||
			fail "$1: /proc/cmdline reads '$(cat /proc/cmdline)'" || return
	done
	h1=$(ev_hits kpk_lp)
	[ "$((h1 - h0))" = 3 ] || fail "$1: $((h1 - h0)) hits for 3 reads"
}

lp_event_on()
{
	echo 'p:kpk_lp cmdline_proc_show' >> "$TRACEFS/kprobe_events" &&
		echo 1 > "$TRACEFS/events/kprobes/kpk_lp/enable"
}

lp_event_off()
{
	echo 0 > "$TRACEFS/events/kprobes/kpk_lp/enable"
	echo '-:kpk_lp' >> "$TRACEFS/kprobe_events"
}

# A livepatch and a kprobe on one function (cmdline_proc_show, which the
# livepatch sample replaces): both hook the function's ftrace call site,
# the livepatch moving the ip, the probe only looking.  In either order
# both must go in, /proc/cmdline must show the patched text while the
# probe counts every read, and each must go away without the other.
t_livepatch_kprobe()
{
	# Livepatch transitions and ftrace rewrite text the other vCPU runs:
	# under multi-threaded TCG that hung a preempt guest twice (a task
	# never switching, RCU tasks stalled on it, user space starved), so
	# the case runs in the single-threaded second pass.
	grep -q 'ktest\.tcg=single' /proc/cmdline ||
		{ why="cross_cpu=0: runs in the single-threaded TCG pass"; return 2; }
	[ -w "$TRACEFS/kprobe_events" ] || fail "no kprobe_events" || return
	[ -d /sys/kernel/livepatch ] || fail "no /sys/kernel/livepatch (CONFIG_LIVEPATCH)" ||
		return
	ev_cleanup
	lp_load || fail "livepatch-sample did not load" || return
	lp_event_on || { lp_unload; fail "livepatch first: the kprobe event refused"; return; }
	lp_probe_reads "livepatch first"
	rc=$?
	lp_event_off
	lp_unload || fail "livepatch-sample did not unload" || return
	[ $rc -eq 0 ] || return $rc
	grep -q "$LP_TEXT" /proc/cmdline && { fail "still patched after unload"; return; }

	lp_event_on || fail "kprobe first: the kprobe event refused" || return
	lp_load || { lp_event_off; fail "kprobe first: livepatch-sample did not load"; return; }
	lp_probe_reads "kprobe first"
	rc=$?
	lp_unload || { lp_event_off; fail "livepatch-sample did not unload"; return; }
	h0=$(ev_hits kpk_lp)
	read -r x < /proc/cmdline
	h1=$(ev_hits kpk_lp)
	lp_event_off
	[ $rc -eq 0 ] || return $rc
	[ "$((h1 - h0))" = 1 ] || fail "the probe alone again: $((h1 - h0)) hits for 1 read"
}

# Addresses that are not text, given to kprobe_events (p: at an address)
# and to the perf kprobe PMU (kprobe_addr): data, an unmapped address, a
# user address, and __pfx_/__cfi_ symbols where the configuration has
# them.  Each is refused, and nothing oopses.
t_bad_address()
{
	[ -w "$TRACEFS/kprobe_events" ] || fail "no kprobe_events" || return
	ev_cleanup
	before=$(splat_count)
	data=$(awk '$3 == "jiffies" && ($2 == "D" || $2 == "d") { print $1; exit }' \
		/proc/kallsyms)
	[ -n "$data" ] || fail "no address for jiffies in /proc/kallsyms" || return
	for a in $data ffffffffdead0000 1000; do
		echo "p:kpk_bad 0x$a" >> "$TRACEFS/kprobe_events" 2>/dev/null &&
			{ fail "kprobe_events took p: at 0x$a"; return; }
		if [ -x ./kprobes_perf ] &&
		   [ -r /sys/bus/event_source/devices/kprobe/type ]; then
			out=$(./kprobes_perf -a "$a" 2>&1) ||
				fail "perf kprobe PMU at 0x$a: $out" || return
		fi
	done
	n=0
	for s in __pfx_vfs_read __cfi_vfs_read; do
		grep -q " $s\$" /proc/kallsyms || continue
		n=$((n + 1))
		echo "p:kpk_bad $s" >> "$TRACEFS/kprobe_events" 2>/dev/null &&
			{ fail "kprobe_events took p: on $s"; return; }
	done
	[ $n -gt 0 ] || diag "no __pfx_ or __cfi_ symbols in this configuration"
	[ "$(splat_count)" = "$before" ] || fail "kernel splat"
}

# A kprobe event on a module function with a static branch, defined while
# the module is not loaded: it takes effect whenever the module is, across
# insmod/rmmod rounds, counting every call with the branch either way (the
# key flipped while the probe is on), and leaves no trace when the module
# goes.
t_pending_module()
{
	[ -w "$TRACEFS/kprobe_events" ] || fail "no kprobe_events" || return
	unload kprobes_target || fail "cannot unload kprobes_target" || return
	ev_cleanup
	before=$(splat_count)
	echo 'p:kpk_pend kprobes_target:kpt_static_fn' >> "$TRACEFS/kprobe_events" ||
		fail "cannot define p:kpk_pend kprobes_target:kpt_static_fn" || return
	echo 1 > "$TRACEFS/events/kprobes/kpk_pend/enable" ||
		fail "cannot enable the pending event" || return
	rc=0
	for round in 1 2 3; do
		insmod ./kprobes_target.ko ||
			{ fail "round $round: insmod kprobes_target.ko failed"; rc=1; break; }
		h0=$(ev_hits kpk_pend)
		trigger 3
		echo 1 > "$TGT/static_on"
		trigger 2
		echo 0 > "$TGT/static_on"
		h1=$(ev_hits kpk_pend)
		unload kprobes_target ||
			{ fail "round $round: rmmod kprobes_target failed"; rc=1; break; }
		[ "$((h1 - h0))" = 5 ] ||
			{ fail "round $round: $((h1 - h0)) hits for 5 calls"; rc=1; break; }
	done
	echo 0 > "$TRACEFS/events/kprobes/kpk_pend/enable"
	echo '-:kpk_pend' >> "$TRACEFS/kprobe_events"
	[ $rc -eq 0 ] || return $rc
	grep -q kpt_static_fn "$KPDIR/list" &&
		{ fail "left in the list: $(grep kpt_static_fn "$KPDIR/list")"; return; }
	[ "$(splat_count)" = "$before" ] || fail "kernel splat"
}

# rmmod of a module whose function carries an ftrace-based kprobe, after
# ftrace declared itself dead (ftrace_kill(), as on an ftrace bug): the
# probe stops firing, the module goes, the probe shows [GONE] and is
# unregistered quietly.  Ftrace stays dead: the last case of a run.
t_ftrace_kill()
{
	loaded kprobes_target || insmod ./kprobes_target.ko ||
		fail "insmod kprobes_target.ko failed" || return
	holder sym=kprobes_target:kpt_shell_a ||
		fail "insmod kprobes_holder.ko failed" || return
	trigger 2
	[ "$(hld hits)" = 2 ] || fail "hits $(hld hits), want 2" || return
	a=$(hld addr)
	before=$(splat_count)
	echo 1 > "$HLD/ftrace_kill" || fail "cannot call ftrace_kill()" || return
	trigger 2
	[ "$(hld hits)" = 2 ] || fail "fired after ftrace_kill(): $(hld hits)" ||
		return
	target_gone "$a" "$before"
}

# The kernel log since the marker $1 was written to it (kmsg_mark).
kmsg_since()
{
	dmesg | sed -n "/ktest-mark $1\$/,\$p" | sed 1d
}

kmsg_mark()
{
	echo "ktest-mark $1" > /dev/kmsg
}

# Three forks from a shell named ktest_fork: each a kernel_clone() call.
fork3()
{
	for i in 1 2 3; do
		sh -c 'exec true'
	done
}

# Load sample module $1 (samples/$1.ko) on its default symbol, fork three
# times, unload it; what it printed meanwhile is left in $log.
sample_run()
{
	ko=samples/$1.ko
	[ -f "$ko" ] || fail "no $ko" || return
	kmsg_mark "$1"
	insmod "$ko" || fail "insmod $ko failed: $(kmsg_since "$1" | tail -n 1)" ||
		return
	fork3
	rmmod "$1" || fail "rmmod $1 failed" || return
	log=$(kmsg_since "$1")
}

# The kprobe sample (samples/kprobes/kprobe_example.ko) on its default
# symbol, kernel_clone: it loads, each fork fires its pre and post
# handler, and its unload message counts every hit and no miss.
sample_kprobe()
{
	sample_run kprobe_example || return
	if upstream; then
		pre=$(echo "$log" | grep -c '<kernel_clone> p->addr = .*, ip = ')
		post=$(echo "$log" | grep -c '<kernel_clone> p->addr = 0x[0-9a-f]*, flags = ')
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
	diag "kprobe_example: $pre pre and $post post lines, fired $fired, missed $missed"
	[ "$pre" -ge 3 ] && [ "$post" -ge 3 ] ||
		fail "kprobe_example: $pre pre and $post post handler lines for 3 forks" ||
		return
	[ "$fired" = "$pre" ] && [ "$missed" = 0 ] ||
		fail "kprobe_example: fired '$fired' and missed '$missed' on unload, $pre hits logged"
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
		missed=$(echo "$bye" | sed -n 's/.*missed \([0-9]*\), entry missed \([0-9]*\)$/\1, entry missed \2/p')
		[ -n "$bye" ] || fail "no unload line" || return
	fi
	diag "kretprobe_example: $n returns logged, $back counted, missed $missed"
	[ "$n" -ge 3 ] || fail "kretprobe_example: $n return lines for 3 forks" || return
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

# Why the ftrace selftest $1 is not to run on this kernel (nothing: run it).
ft_skip_reason()
{
	case $1 in
	kprobe_opt_types)
		# Without the sysctl the test fails rather than reporting
		# itself unsupported.
		[ -e /proc/sys/debug/kprobes-optimization ] ||
			echo "no /proc/sys/debug/kprobes-optimization (jump optimization, CONFIG_OPTPROBES, is not there yet)"
		;;
	kretprobe_maxactive)
		# It probes a networking function; it fails (upstream's
		# kprobes too) on a kernel without one.
		grep -q ' inet_csk_accept$' /proc/kallsyms ||
			echo "it probes inet_csk_accept, not in this kernel (no CONFIG_INET)"
		;;
	esac
}

# The log ftracetest kept of its case number $1 (in $ft_logs), as
# diagnostics: the part from the test script on, at most 150 lines.
ft_log()
{
	for f in "$ft_logs/$1"-*-log.*; do
		[ -f "$f" ] || continue
		echo "# log of ${f##*/}, from the test script on:"
		if grep -q '^+ \. .*\.tc$' "$f"; then
			sed -n '/^+ \. .*\.tc$/,$p' "$f"
		else
			cat "$f"
		fi | tail -n 150 | sed 's/^/# | /'
	done
}

# ftracetest's KTAP output, indented as a subtest, without its own header
# lines (t_ftracetest prints them); a case that did not pass is preceded by
# its log.
ft_filter()
{
	while IFS= read -r line; do
		case $line in
		"TAP version "*|1..*)
			continue
			;;
		"not ok "*)
			n=${line#not ok }
			ft_log "${n%% *}" | sed 's/^/    /'
			;;
		esac
		echo "    $line"
	done
}

# Upstream's ftrace selftests for kprobes, unmodified, run by upstream's
# runner ftracetest (under bash when there is one).  Its KTAP is nested
# under this case, so each of its cases counts once, named by its
# description: [PASS] passes, [UNSUPPORTED] and [UNTESTED] skip, [FAIL],
# [UNRESOLVED] and [UNDEFINED] fail.  The cases ft_skip_reason rules out
# are reported as skipped, after the others.
t_ftracetest()
{
	[ -n "$FT_TESTS" ] || { why="ktest.ftracetest=none"; return 2; }
	[ -f "$FTRACE_DIR/ftracetest" ] ||
		{ why="no $FTRACE_DIR/ftracetest"; return 2; }
	ft_shell=$(command -v bash) || ft_shell=sh
	ft_logs=/tmp/ftracetest-logs
	ft_run=
	ft_skip=
	for t in $FT_TESTS; do
		[ -f "$FTRACE_DIR/test.d/kprobe/$t.tc" ] ||
			fail "no $FTRACE_DIR/test.d/kprobe/$t.tc" || return
		if [ -n "$(ft_skip_reason $t)" ]; then
			ft_skip="$ft_skip $t"
		else
			ft_run="$ft_run test.d/kprobe/$t.tc"
		fi
	done
	nrun=$(echo $ft_run | wc -w)
	nskip=$(echo $ft_skip | wc -w)
	echo "    # Subtest: ftracetest"
	echo "    KTAP version 1"
	echo "    1..$((nrun + nskip))"
	echo "    # cases: $(for t in $ft_run $ft_skip; do basename "$t" .tc; done | tr '\n' ' ')"
	rm -rf "$ft_logs"
	echo 0 > /tmp/ftracetest.rc
	t0=$(date +%s)
	if [ "$nrun" -gt 0 ]; then
		(cd "$FTRACE_DIR" &&
		 timeout $FT_TIMEOUT $ft_shell ./ftracetest --ktap \
			-l "$ft_logs" $ft_run 2>&1
		 echo $? > /tmp/ftracetest.rc) | ft_filter
	fi
	t1=$(date +%s)
	n=$nrun
	for t in $ft_skip; do
		n=$((n + 1))
		desc=$(sed -n 's/^#[[:space:]]*description:[[:space:]]*//p' \
			"$FTRACE_DIR/test.d/kprobe/$t.tc")
		echo "    ok $n $desc # SKIP $t.tc: $(ft_skip_reason $t)"
	done
	echo "    # ftracetest ran $nrun cases in $((t1 - t0)) s"
	rc=$(cat /tmp/ftracetest.rc)
	[ "$rc" = 0 ] || fail "ftracetest exited with status $rc"
}

# Print one kmemleak report ($1) as diagnostics, without its hex dump.
leak_diag()
{
	echo "$1" | grep -v -E '^ *(hex dump|[0-9a-f]{2}( [0-9a-f]{2})+ )' |
		sed 's/^/# /'
}

# Was the object of kmemleak report $1 allocated by the kprobes code:
# is any frame of its backtrace a function of it (ours.syms, listed at
# build time)?  Catches what kprobes allocates from its own workers
# (return-instance pools, module symbol indexes, slot pages), whose
# backtraces name no test module and need not say "kprobe".
leak_by_us()
{
	[ -s ./ours.syms ] || return 1
	echo "$1" | sed -n '/^ *backtrace/,$p' | sed 1d |
		sed -e 's/^ *//' -e 's/^\[<[0-9a-f]*>\] //' -e 's/+0x.*//' |
		grep -q -x -F -f ./ours.syms
}

# After every other case (bad input, module loads and unloads, probe
# loops), nothing they allocated is unreferenced.  kmemleak reports an
# object only when two scans in a row found it unreferenced, and never one
# younger than five seconds.  Leaks not involving kprobes (boot-time
# noise) are only mentioned.
t_kmemleak()
{
	[ -e "$KMEMLEAK" ] || { why="no $KMEMLEAK (no CONFIG_DEBUG_KMEMLEAK)"; return 2; }
	sleep 6
	for n in 1 2; do
		echo scan > "$KMEMLEAK" 2>/dev/null ||
			fail "kmemleak is off: $(dmesg | grep kmemleak | tail -n 1)" ||
			return
	done
	# One line per report, its lines joined by tabs.
	reports=$(awk '
		/^unreferenced object/ { if (r != "") print r; r = $0; next }
		{ r = r "\t" $0 }
		END { if (r != "") print r }' "$KMEMLEAK")
	ours=0
	others=0
	first=
	while IFS= read -r r; do
		[ -n "$r" ] || continue
		lines=$(echo "$r" | tr '\t' '\n')
		if echo "$lines" | grep -q -E "$LEAK_OURS" || leak_by_us "$lines"; then
			ours=$((ours + 1))
			[ $ours -le 3 ] && leak_diag "$lines"
			continue
		fi
		others=$((others + 1))
		[ -n "$first" ] && continue
		# The first frame past the allocator.
		first=$(echo "$lines" | sed -n '/^ *backtrace/,$p' | sed 1d |
			grep -v -E '_noprof|kmalloc|kmem_cache|slab|kmemleak' |
			head -n 1 | sed -e 's/^ *//' -e 's/^\[<[0-9a-f]*>\] //')
	done <<EOF
$reports
EOF
	[ $others -eq 0 ] ||
		diag "kmemleak: $others unreferenced object(s) unrelated to kprobes, the first from ${first:-?}"
	[ $ours -eq 0 ] ||
		fail "kmemleak: $ours unreferenced object(s) from kprobes or the test modules"
}

# No warning, BUG or oops in the kernel log during this run.
t_no_splat()
{
	n=$(splat_count)
	[ "$n" = "$splat0" ] || fail "$((n - splat0)) splat(s) in the kernel log"
}

# ------------------------------------------------------------------- main

mount_fs
splat0=$(splat_count)

# The plan: every case this script runs (the "run NAME" lines below), or
# those ktest.only names, in order, declared before the first one runs.
cases=
for c in $(sed -n 's/^run \([a-z0-9_]*\) .*/\1/p' "$0"); do
	selected "$c" && cases="$cases $c"
done
echo "KTAP version 1"
echo "1..$(echo $cases | wc -w)"
echo "# cases:$cases"
[ -n "$ONLY" ] && diag "only: $ONLY"
upstream && diag "baseline: upstream kprobes"

run cpus t_cpus
run opt_sysctl_default t_opt_sysctl_default
run init_probe_gone t_init_probe_gone
run kunit_suites t_kunit_suites
run stress_suite t_stress_suite
run kretprobe_suite t_kretprobe_suite
run boundary_suite t_boundary_suite
run opt_suite t_opt_suite
run blacklist_file t_blacklist_file
run module_probe t_module_probe
run list_format t_list_format
run enabled_file t_enabled_file
run enabled_switch t_enabled_switch
run kallsyms_insn_page t_kallsyms_insn_page
run holder_loop t_holder_loop
run module_unload_gone t_module_unload_gone
run kprobe_events t_kprobe_events
run kprobe_events_offset t_kprobe_events_offset
run perf_kprobe_pmu t_perf_kprobe_pmu
run kretprobe_events t_kretprobe_events
run kretprobe_list t_kretprobe_list
run perf_kretprobe_pmu t_perf_kretprobe_pmu
run ftrace_coexist t_ftrace_coexist
run opt_sysctl_events t_opt_sysctl_events
run livepatch_kprobe t_livepatch_kprobe
run bad_address t_bad_address
run samples t_samples

# Everything unloaded and removed before the leak check, which so also
# covers the return probe cases.
unload kprobes_holder
unload kprobes_kunit
unload kprobes_stress
unload kprobes_kretprobe
unload kprobes_boundary
unload kprobes_opt
ev_cleanup 2>/dev/null
run text_poke t_text_poke
run pending_module t_pending_module
unload kprobes_target
ev_cleanup 2>/dev/null
run ftracetest t_ftracetest
run kmemleak t_kmemleak
run ftrace_kill t_ftrace_kill
run no_splat t_no_splat
[ $nfail -eq 0 ]
