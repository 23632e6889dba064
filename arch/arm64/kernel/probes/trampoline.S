/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * arm64 kprobes backend: the return-probe trampoline.
 *
 * At a kretprobe'd function's entry, arch_kretprobe_hijack() put our
 * address in the link register, so the function's RET lands here with the
 * caller's stack pointer and frame pointer back in place and the return
 * value in x0-x7.  We save the registers as a struct pt_regs, make its
 * stackframe member a frame record that links to the caller's (so that a
 * handler's stack trace walks through us) and call the core with x29 as
 * the instance key.  The core writes the real return address into that
 * frame record and regs->pc (arch_kretprobe_restore()), runs the handlers
 * and returns the address; we reload the registers a handler may have
 * changed and return there.  Reached by RET only, which BTI does not
 * check, so there is no landing pad.
 */
#include <linux/linkage.h>
#include <asm/asm-offsets.h>
#include <asm/assembler.h>
#include <asm/ptrace.h>
#include "backend.h"

	.pushsection .kprobes.text, "ax"
SYM_CODE_START(arch_kretprobe_trampoline)
	sub	sp, sp, #PT_REGS_SIZE
	stp	x0, x1, [sp, #S_X0]
	arm64_kp_x2_x29 stp
	/* regs[30] and sp: the link register still holds our own address. */
	add	x0, sp, #PT_REGS_SIZE
	stp	x30, x0, [sp, #S_LR]
	/* pc (ours until the core puts the real one) and pstate. */
	adr	x1, arch_kretprobe_trampoline
	arm64_kp_pstate x2, x3
	stp	x1, x2, [sp, #S_PC]
	arm64_kp_regs_rest x2
	/* The frame record: the caller's frame, then our return address. */
	stp	x29, x1, [sp, #S_STACKFRAME]
	add	x29, sp, #S_STACKFRAME

	mov	x0, sp
	ldr	x1, [sp, #S_FP]
	bl	kretprobe_trampoline_handler
	mov	x30, x0

	ldp	x0, x1, [sp, #S_X0]
	arm64_kp_x2_x29 ldp
	add	sp, sp, #PT_REGS_SIZE
	ret
SYM_CODE_END(arch_kretprobe_trampoline)
	.popsection
