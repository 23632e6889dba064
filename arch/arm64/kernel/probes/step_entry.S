/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * arm64 kprobes backend: where an out-of-line step ends.
 *
 * arm64_kp_step_template is the image of half a step slot (backend.h has
 * the layout): arch_kprobe_site_prepare() copies the probed instruction
 * into each half, this template behind each copy, and points the second
 * half's call at arm64_kp_step_entry_post.  A hit that owes post_handlers
 * steps the second half, any other the first (breakpoint.c).  The copy
 * runs with every exception masked and falls through into the template,
 * which makes room for a struct pt_regs below the probed context's stack
 * pointer (nothing is ever live there on arm64), saves x0, x1 and x30
 * and calls its entry through a literal: slots lie anywhere in vmalloc
 * space, out of a BL's reach.  The call's return address names the slot.
 *
 * arm64_kp_step_entry saves only what a C call may clobber, x2 to x18,
 * with the flags the copy left, and calls arm64_kp_step_done(), which
 * fills in regs->pc and regs->pstate as the probed instruction leaves
 * them.  arm64_kp_step_entry_post saves the whole context, for the
 * handlers to see and change, and arm64_kp_step_done_post() runs them
 * too.  Neither returns to the slot: no register is free to branch
 * through, so each goes on at regs->pc by an exception return, which
 * also gives the context its flags and interrupt mask back.  Every
 * exception is masked until then, so nothing can overwrite ELR_EL1 and
 * SPSR_EL1 once they are written.
 *
 * Compared with ending the step with a second BRK, this skips an
 * exception entry and the kernel's whole debug-exception path.  While the
 * handlers run, the unwinder walks from their frames into
 * arm64_kp_step_entry_post and from there through a frame record in the
 * pt_regs that names the probed address, then on through the probed
 * context's frame pointer.
 */
#include <linux/linkage.h>
#include <asm/asm-offsets.h>
#include <asm/assembler.h>
#include <asm/brk-imm.h>
#include <asm/ptrace.h>
#include "backend.h"

	.pushsection .rodata, "a"
	.balign	8
SYM_DATA_START(arm64_kp_step_template)
	sub	sp, sp, #PT_REGS_SIZE		/* ARM64_KP_STEP_TAIL */
	stp	x0, x1, [sp, #S_X0]
	str	x30, [sp, #S_LR]
	ldr	x1, .Lkp_step_entry
	blr	x1
.Lkp_step_entry:
	.quad	arm64_kp_step_entry		/* ARM64_KP_STEP_ENTRY */
SYM_DATA_END(arm64_kp_step_template)
	.popsection

/*
 * Go on at regs->pc with regs->pstate and the registers the pt_regs at
 * sp holds, x0-x18 and x30 (x19-x29 are the caller's to reload).
 */
	.macro	arm64_kp_step_resume
	ldp	x0, x1, [sp, #S_PC]
	msr	elr_el1, x0
	msr	spsr_el1, x1
	ldp	x0, x1, [sp, #S_X0]
	arm64_kp_x2_x17 ldp
	ldr	x18, [sp, #S_X18]
	ldr	x30, [sp, #S_LR]
	add	sp, sp, #PT_REGS_SIZE
	eret
	sb
	.endm

	.pushsection .kprobes.text, "ax"
/*
 * Both entries: x0, x1 free; x30 the slot + ARM64_KP_STEP_ENTRY (plus
 * ARM64_KP_STEP_POST for the second); sp the struct pt_regs, with x0, x1
 * and x30 in it already.  Every exception masked.
 *
 * No post_handler owed: what a C call may clobber, and the copy's flags,
 * which arm64_kp_step_done() keeps.
 */
SYM_FUNC_START(arm64_kp_step_entry)
	arm64_kp_x2_x17 stp
	str	x18, [sp, #S_X18]
	mrs	x3, nzcv
	str	x3, [sp, #S_PSTATE]
	sub	x0, x30, #ARM64_KP_STEP_ENTRY
	mov	x1, sp
	bl	arm64_kp_step_done
	arm64_kp_step_resume
SYM_FUNC_END(arm64_kp_step_entry)

/*
 * post_handlers owed: the whole context, for them to see and change, with
 * a frame record that arm64_kp_step_done_post() points at the probed
 * address; the priority mask field is that function's too.
 */
SYM_FUNC_START(arm64_kp_step_entry_post)
	arm64_kp_x2_x29 stp
	add	x2, sp, #PT_REGS_SIZE
	str	x2, [sp, #S_SP]
	mrs	x3, nzcv
	str	x3, [sp, #S_PSTATE]
	arm64_kp_regs_tail x3
	stp	x29, xzr, [sp, #S_STACKFRAME]
	add	x29, sp, #S_STACKFRAME
	/*
	 * No handler runs with user access open, as in a trap, which sets
	 * PAN: the copy may sit in uaccess_enable_privileged()'s window.
	 * The exception return puts the context's PAN back.
	 */
alternative_if ARM64_HAS_PAN
	SET_PSTATE_PAN(1)
alternative_else_nop_endif
	sub	x0, x30, #ARM64_KP_STEP_POST + ARM64_KP_STEP_ENTRY
	mov	x1, sp
	bl	arm64_kp_step_done_post
	ldr	x19, [sp, #S_X18 + 8]
	arm64_kp_x20_x29 ldp
	arm64_kp_step_resume
SYM_FUNC_END(arm64_kp_step_entry_post)
	.popsection
