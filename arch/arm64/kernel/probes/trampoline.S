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

	.pushsection .kprobes.text, "ax"
SYM_CODE_START(arch_kretprobe_trampoline)
	sub	sp, sp, #PT_REGS_SIZE
	stp	x0, x1, [sp, #S_X0]
	stp	x2, x3, [sp, #S_X2]
	stp	x4, x5, [sp, #S_X4]
	stp	x6, x7, [sp, #S_X6]
	stp	x8, x9, [sp, #S_X8]
	stp	x10, x11, [sp, #S_X10]
	stp	x12, x13, [sp, #S_X12]
	stp	x14, x15, [sp, #S_X14]
	stp	x16, x17, [sp, #S_X16]
	stp	x18, x19, [sp, #S_X18]
	stp	x20, x21, [sp, #S_X20]
	stp	x22, x23, [sp, #S_X22]
	stp	x24, x25, [sp, #S_X24]
	stp	x26, x27, [sp, #S_X26]
	stp	x28, x29, [sp, #S_X28]
	/* regs[30] and sp: the link register still holds our own address. */
	add	x0, sp, #PT_REGS_SIZE
	stp	x30, x0, [sp, #S_LR]
	/* pc (ours until the core puts the real one) and pstate. */
	adr	x1, arch_kretprobe_trampoline
	mrs	x2, nzcv
	mrs	x3, daif
	orr	x2, x2, x3
	mov	x3, #PSR_MODE_EL1h
	orr	x2, x2, x3
	stp	x1, x2, [sp, #S_PC]
	/* The frame record: the caller's frame, then our return address. */
	stp	x29, x1, [sp, #S_STACKFRAME]
	add	x29, sp, #S_STACKFRAME

	mov	x0, sp
	ldr	x1, [sp, #S_FP]
	bl	kretprobe_trampoline_handler
	mov	x30, x0

	ldp	x0, x1, [sp, #S_X0]
	ldp	x2, x3, [sp, #S_X2]
	ldp	x4, x5, [sp, #S_X4]
	ldp	x6, x7, [sp, #S_X6]
	ldp	x8, x9, [sp, #S_X8]
	ldp	x10, x11, [sp, #S_X10]
	ldp	x12, x13, [sp, #S_X12]
	ldp	x14, x15, [sp, #S_X14]
	ldp	x16, x17, [sp, #S_X16]
	ldp	x18, x19, [sp, #S_X18]
	ldp	x20, x21, [sp, #S_X20]
	ldp	x22, x23, [sp, #S_X22]
	ldp	x24, x25, [sp, #S_X24]
	ldp	x26, x27, [sp, #S_X26]
	ldp	x28, x29, [sp, #S_X28]
	add	sp, sp, #PT_REGS_SIZE
	ret
SYM_CODE_END(arch_kretprobe_trampoline)
	.popsection
