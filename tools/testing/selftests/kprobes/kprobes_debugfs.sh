#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# kprobes selftests, the debugfs files: kprobes/list, kprobes/enabled and kprobes/blacklist,
# and the out-of-line pages /proc/kallsyms names.
# Prints KTAP; arguments name the cases to run (default: all).

cd "$(dirname "$0")" || exit 1
. ./kprobes_lib.sh

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
	# The breakpoint's handler: kprobes' own on x86-64; arm64's BRK
	# dispatcher, kprobes' caller there; the bridged backends' own
	# handlers elsewhere (arm's undefined-instruction hook).
	case $KP_ARCH in
	aarch64)  bp=do_el1_brk64 ;;
	arm*)     bp=kprobe_trap_handler ;;
	mips*|ppc*|s390*) bp=kprobe_handler ;;
	riscv*)   bp=kprobe_breakpoint_handler ;;
	*)        bp=kprobe_int3_handler ;;
	esac
	for s in notify_die $bp; do
		grep -q "	$s\$" "$f" || fail "$s not listed" || return
	done
	# Ranges are real: start < end on the notify_die line.
	range=$(grep "	notify_die\$" "$f" | head -n 1 | cut -f 1)
	s=${range%-*}
	e=${range#*-}
	[ "${#s}" = "${#e}" ] && expr "$s" \< "$e" > /dev/null ||
		fail "bad range $range"
}

# debugfs kprobes/list: "<addr>  k  <sym>+<off>  <module> <marks>"; the
# module name may be bracketed ("[mod]", ours) or bare (upstream).
t_list_format()
{
	holder sym=kprobes_target:kpt_shell_a sym2=kprobes_target:kpt_shell_b ||
		fail "insmod kprobes_holder.ko failed" || return
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

# kptr_restrict=2 hides kernel addresses from every reader, root too
# (kallsyms_show_value()): the list, stats and blacklist files then print
# zeros where an address goes.  Set back, the list shows the real one.
t_kptr_restrict()
{
	kr=/proc/sys/kernel/kptr_restrict
	[ -w "$kr" ] || { why="no $kr"; return 2; }
	holder sym=kprobes_target:kpt_shell_a ||
		fail "insmod kprobes_holder.ko failed" || return
	a=$(hld addr)
	[ -n "$(list_line "$a")" ] || fail "no list line for $a" || return
	old=$(cat "$kr")
	echo 2 > "$kr" || fail "cannot write $kr" || return
	l=$(grep ' kpt_shell_a+0x' "$KPDIR/list" | head -n 1)
	s=
	[ ! -r "$KPDIR/stats" ] ||
		s=$(grep ' kpt_shell_a+0x' "$KPDIR/stats" | head -n 1)
	shown=$(grep -c -v -E '^0x0+-0x0+	' "$KPDIR/blacklist")
	echo "$old" > "$kr"
	echo "$l" | grep -q -E '^0+  k  kpt_shell_a\+0x' ||
		fail "kptr_restrict=2, list: $l" || return
	[ ! -r "$KPDIR/stats" ] || echo "$s" | grep -q -E '^0+  k  kpt_shell_a\+0x' ||
		fail "kptr_restrict=2, stats: $s" || return
	[ "$shown" = 0 ] ||
		fail "kptr_restrict=2: $shown blacklist lines show addresses" || return
	[ -n "$(list_line "$a")" ] || fail "kptr_restrict=$old: no list line for $a"
}

# debugfs kprobes/enabled: 0 silences every probe, 1 re-arms them, and a
# probe disabled on its own stays disabled across the two.
t_enabled_file()
{
	f=$KPDIR/enabled
	holder sym=kprobes_target:kpt_shell_a sym2=kprobes_target:kpt_shell_b ||
		fail "insmod kprobes_holder.ko failed" || return
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
# (kpt_shell_b), the optimized event kpk_enopt (a breakpoint where the
# kernel has no jump optimization), the return probe event kpk_enret, the
# event kpk_enlate, the holder's late probe (on the entry of kpt_opt_c,
# an ftrace site: never optimized either).
en_hits()
{
	echo "$(hld hits) $(hld hits2) $(ev_hits kpk_enopt)" \
	     "$(ev_hits kpk_enret) $(ev_hits kpk_enlate) $(hld hits3)"
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
			fail "$5: hits '$2' -> '$3', want +$1 times '$4'" \
			     "(breakpoint, disabled, optimized, return, late event, late probe)" ||
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
# [DISABLED] and silent throughout.  Where the kernel has no jump
# optimization (upstream's arm64) the optimized one is one more
# breakpoint; on x86-64 it is what the case is about, and the case skips
# without it.  The breakpoint probe is on an instruction that is never
# optimized: kpt_asm_add's ret on x86-64 (too short for the jump at the
# end of its function), a blr x30 on arm64 (see kpt_opt_arm64.S), a
# function's entry elsewhere, on arm with a post_handler (which no
# kernel optimizes).
t_enabled_switch()
{
	f=$KPDIR/enabled
	[ -w "$TRACEFS/kprobe_events" ] || fail "no kprobe_events" || return
	opt=yes
	[ -e "$OPT_SYSCTL" ] || opt=no
	opt_in_modules || opt=no
	[ $opt = yes ] || [ "$KP_ARCH" != x86_64 ] || { why="$NO_OPT"; return 2; }
	have_kret || { why="$NO_KRET"; return 2; }
	need_target || return
	[ "$(cat $f)" = 1 ] || fail "enabled reads '$(cat $f)'" || return
	ev_cleanup
	[ $opt = no ] || echo 1 > "$OPT_SYSCTL"
	post=
	case $KP_ARCH in
	x86_64)  bp=kpt_asm_add_next ;;
	aarch64) bp=kpt_opt_ref_blr_lr_p ;;
	# Any function the trigger calls; on arm, which optimizes it, with
	# a post_handler.
	arm*)    bp=kpt_static_fn post=post=1 ;;
	*)       bp=kpt_static_fn ;;
	esac
	holder sym=kprobes_target:$bp sym2=kprobes_target:kpt_shell_b $post ||
		fail "insmod kprobes_holder.ko failed" || return
	echo 1 > "$HLD/disabled2" || fail "disable_kprobe failed" || return
	off=$(opt_c_offset) || fail "no offset in 5..16 of kpt_opt_c accepted" || return
	echo '-:kpk_optev' >> "$TRACEFS/kprobe_events"
	E=$TRACEFS/events/kprobes
	echo "p:kpk_enopt kprobes_target:kpt_opt_c+$off" >> "$TRACEFS/kprobe_events" &&
		echo 'r:kpk_enret kprobes_target:kpt_static_fn' >> "$TRACEFS/kprobe_events" &&
		echo 1 > "$E/kpk_enopt/enable" && echo 1 > "$E/kpk_enret/enable" ||
		fail "cannot add and enable kpk_enopt and kpk_enret" || return
	[ $opt = no ] || opt_wait "kpt_opt_c\+0x$(printf %x $off)" yes ||
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
		# Ours only: a backend's return trampoline probe (powerpc's
		# on arch_rethook_trampoline) stays armed, and may stay a jump.
		grep OPTIMIZED "$KPDIR/list" | grep -q '\[kprobes_target\]' &&
			{ fail "[OPTIMIZED] while disarmed:" \
			       "$(grep OPTIMIZED "$KPDIR/list")"; rc=1; }
	fi
	if [ $rc = 0 ]; then
		h1=$(en_hits)
		trigger 3
		h2=$(en_hits)
		en_expect 3 "$h1" "$h2" "0 0 0 0 0 0" "all disarmed" || rc=1
	fi
	echo 1 > "$f"
	[ $rc = 0 ] || return $rc

	[ $opt = no ] || opt_wait "kpt_opt_c\+0x$(printf %x $off)" yes ||
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
# from a slot page, shown by /proc/kallsyms: kpt_asm_add's add, stepped out
# of line on x86-64 (kpt_asm.S) and arm64 (kpt_asm_arm64.S).
t_kallsyms_insn_page()
{
	asm_targets "kpt_asm_add_insn (kpt_asm.S, kpt_asm_arm64.S)" || return
	holder sym=kprobes_target:kpt_asm_add_insn ||
		fail "insmod kprobes_holder.ko (kpt_asm_add_insn) failed" ||
		return
	trigger 3
	[ "$(hld hits)" = 3 ] || fail "hits $(hld hits), want 3" || return
	grep -q -E '^[0-9a-f]+ t kprobe_insn_page[[:space:]]+\[__builtin__kprobes\]$' \
		/proc/kallsyms ||
		fail "no kprobe_insn_page [__builtin__kprobes] in /proc/kallsyms"
}

AREA_CASES="blacklist_file list_format kptr_restrict enabled_file enabled_switch kallsyms_insn_page"
ktest_main "$@"
