/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * arm64 kprobes backend: the detour of an optimized probe.
 *
 * arm64_kp_opt_template is the image of a detour slot (backend.h has its
 * layout), copied into each slot by arch_optprobe_prepare().  The B that
 * replaced the probed instruction lands on its first instruction with the
 * probed context intact.  Nothing may be live below a kernel stack
 * pointer on arm64 (an exception taken here would write there), so the
 * slot builds a struct pt_regs right below it, saves the three registers
 * it needs and calls arm64_kp_opt_entry, which saves the rest, runs the
 * handlers through arm64_kp_opt_handler() (detour.c, with interrupts
 * masked) and reloads what they may have changed.  Back in the slot, the
 * last three registers are reloaded, the stack pointer is the probed
 * context's again, and the probed instruction's work is done at
 * ARM64_KP_OPT_COPY before a B goes on in the probed code.
 *
 * While the handlers run, the unwinder walks from their frames into
 * arm64_kp_opt_entry and from there through a frame record in the
 * pt_regs that names the probed address, then on through the probed
 * context's frame pointer: the probed function and its callers, as for a
 * breakpoint hit.
 *
 * A handler that moved regs->pc and returned nonzero wants the probed
 * code to go on there.  No register is free to branch through, so that
 * is done by an exception return: arm64_kp_opt_handler() masks every
 * exception and puts the new PC aside on this CPU, and the entry reloads
 * the whole context, the stack pointer included, and traps at
 * arm64_kp_opt_redirect_brk, whose handler (kprobe_ss_brk_handler() ->
 * arm64_kp_opt_redirect()) returns to the new PC with the context's own
 * interrupt mask and flags.  A redirection costs that one trap.
 */
#include <linux/linkage.h>
#include <asm/asm-offsets.h>
#include <asm/assembler.h>
#include <asm/brk-imm.h>
#include <asm/ptrace.h>
#include "backend.h"

	.pushsection .rodata, "a"
	.balign	8
SYM_DATA_START(arm64_kp_opt_template)
.Lkp_opt_slot:
	sub	sp, sp, #PT_REGS_SIZE
	stp	x0, x1, [sp, #S_X0]
	str	x30, [sp, #S_LR]
	adr	x0, .Lkp_opt_slot
	ldr	x1, .Lkp_opt_entry
	blr	x1
	ldp	x0, x1, [sp, #S_X0]
	ldr	x30, [sp, #S_LR]
	add	sp, sp, #PT_REGS_SIZE
	nop					/* ARM64_KP_OPT_COPY */
	nop
	brk	#FAULT_BRK_IMM			/* ARM64_KP_OPT_BACK */
.Lkp_opt_entry:
	.quad	arm64_kp_opt_entry		/* ARM64_KP_OPT_ENTRY */
	.quad	0				/* ARM64_KP_OPT_SITE */
	.quad	0				/* ARM64_KP_OPT_ADDR */
	.quad	0				/* ARM64_KP_OPT_LIT */
SYM_DATA_END(arm64_kp_opt_template)
	.popsection

	.pushsection .kprobes.text, "ax"
/*
 * x0: the slot; x1: free; x30: where to return in the slot; sp: the
 * struct pt_regs, with x0, x1 and x30 in it already.
 */
SYM_FUNC_START(arm64_kp_opt_entry)
	arm64_kp_x2_x29 stp
	mov	x19, x30
	add	x2, sp, #PT_REGS_SIZE
	str	x2, [sp, #S_SP]
	/* pc: the probed address; pstate: the context's flags and mask. */
	ldr	x2, [x0, #ARM64_KP_OPT_ADDR]
	arm64_kp_pstate x3, x4
	stp	x2, x3, [sp, #S_PC]
	arm64_kp_regs_rest x3
	stp	x29, x2, [sp, #S_STACKFRAME]
	add	x29, sp, #S_STACKFRAME

	ldr	x0, [x0, #ARM64_KP_OPT_SITE]
	mov	x1, sp
	bl	arm64_kp_opt_handler
	cbnz	w0, .Lkp_opt_redirect

	/* The flags a handler may have changed, then the registers. */
	ldr	x0, [sp, #S_PSTATE]
	msr	nzcv, x0
	mov	x30, x19
	arm64_kp_x2_x29 ldp
	ret

.Lkp_opt_redirect:
	/* Every exception is masked: nothing comes between here and the trap. */
	ldp	x0, x1, [sp, #S_X0]
	arm64_kp_x2_x29 ldp
	ldr	x30, [sp, #S_LR]
	add	sp, sp, #PT_REGS_SIZE
SYM_INNER_LABEL(arm64_kp_opt_redirect_brk, SYM_L_GLOBAL)
	brk	#KPROBES_BRK_SS_IMM
SYM_FUNC_END(arm64_kp_opt_entry)
	.popsection
