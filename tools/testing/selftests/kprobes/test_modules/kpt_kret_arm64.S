/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arm64's return-probe targets that a task stays in (kprobes_target.h;
 * x86-64's are in kpt_asm.S).  Each notes in kpt_kret_fp the frame
 * pointer it was entered with: x29 on the first instruction, its
 * caller's frame record.  That is what a return probe's instance is keyed
 * on (arch_kretprobe_hijack(): ri->fp), and what the unwinder holds when
 * it meets the trampoline in kpt_kret_park()'s own frame record, so
 * kretprobe_find_ret_addr(task, kpt_kret_fp) asks what it asks.
 *
 * int kpt_kret_spin(int x): spins while kpt_kret_spinning is set, returns
 * x.  A leaf: it leaves the link register (the trampoline, while probed)
 * where it is.
 *
 * int kpt_kret_park(int x): returns kpt_gate_wait(x), asleep at the gate
 * until it opens.  Its frame record holds the link register as signed by
 * paciasp after the return probe's entry replaced it: its autiasp checks
 * the trampoline's address, signed here.
 */
#include <linux/export.h>
#include <linux/linkage.h>
#include <asm/assembler.h>

	.text

SYM_FUNC_START(kpt_kret_spin)
	str_l	x29, kpt_kret_fp, x9
.Lkpt_spin:
	yield
	ldr_l	w9, kpt_kret_spinning, x9
	cbnz	w9, .Lkpt_spin
	ret
SYM_FUNC_END(kpt_kret_spin)
EXPORT_SYMBOL_GPL(kpt_kret_spin)

SYM_FUNC_START(kpt_kret_park)
	str_l	x29, kpt_kret_fp, x9
	paciasp
	stp	x29, x30, [sp, #-16]!
	mov	x29, sp
	bl	kpt_gate_wait
	ldp	x29, x30, [sp], #16
	autiasp
	ret
SYM_FUNC_END(kpt_kret_park)
EXPORT_SYMBOL_GPL(kpt_kret_park)
