/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * arm64 kprobes backend: where an out-of-line step ends.
 *
 * arm64_kp_step_template is the image of a step slot (backend.h has its
 * layout), copied into each slot behind the probed instruction's copy by
 * arch_kprobe_site_prepare().  The copy runs with every exception masked
 * (breakpoint.c) and falls through into the template, which makes room
 * for a struct pt_regs below the probed context's stack pointer (nothing
 * is ever live there on arm64), saves x0, x1 and x30 and calls
 * arm64_kp_step_entry through a literal: slots lie anywhere in vmalloc
 * space, out of a BL's reach.  The call's return address names the slot.
 *
 * arm64_kp_step_entry saves the rest of the context, with the flags the
 * copy left, and calls arm64_kp_step_done() (breakpoint.c), which fills
 * in regs->pc and regs->pstate as the probed instruction leaves them and
 * runs the post_handlers.  It never returns to the slot: no register is
 * free to branch through, so it goes on at regs->pc by an exception
 * return, which also gives the context its flags and interrupt mask
 * back.  Every exception is masked until then, so nothing can overwrite
 * ELR_EL1 and SPSR_EL1 once they are written.
 *
 * Compared with ending the step with a second BRK, this skips an
 * exception entry and the kernel's whole debug-exception path.  While the
 * handlers run, the unwinder walks from their frames into
 * arm64_kp_step_entry and from there through a frame record in the
 * pt_regs that names the probed address (filled by arm64_kp_step_done()),
 * then on through the probed context's frame pointer.
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

	.pushsection .kprobes.text, "ax"
/*
 * x0, x1: free; x30: the slot + ARM64_KP_STEP_ENTRY; sp: the struct
 * pt_regs, with x0, x1 and x30 in it already.  Every exception masked.
 */
SYM_FUNC_START(arm64_kp_step_entry)
	arm64_kp_x2_x29 stp
	add	x2, sp, #PT_REGS_SIZE
	str	x2, [sp, #S_SP]
	/* pstate: the copy's flags, which arm64_kp_step_done() keeps. */
	mrs	x3, nzcv
	str	x3, [sp, #S_PSTATE]
	arm64_kp_regs_rest x3
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

	sub	x0, x30, #ARM64_KP_STEP_ENTRY
	mov	x1, sp
	bl	arm64_kp_step_done

	/* Go on at regs->pc with regs->pstate, the registers as left. */
	ldp	x0, x1, [sp, #S_PC]
	msr	elr_el1, x0
	msr	spsr_el1, x1
	ldp	x0, x1, [sp, #S_X0]
	arm64_kp_x2_x29 ldp
	ldr	x30, [sp, #S_LR]
	add	sp, sp, #PT_REGS_SIZE
	eret
	sb
SYM_FUNC_END(arm64_kp_step_entry)
	.popsection
