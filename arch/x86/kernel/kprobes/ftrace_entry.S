/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * x86 kprobes backend: where a hit on an entry probe's breakpoint runs
 * its handlers while the probe waits to be handed to ftrace (ftrace_site.c).
 *
 * The breakpoint handler does not run them in the trap: an entry probe's
 * handlers run as ftrace runs them, interrupts as they were and not in
 * NMI context.  It emulates a call to this code instead, from the site,
 * so that on entry the stack holds the address past ftrace's nop right
 * below the probed function's stack pointer, as ftrace's own call would
 * leave it.  We save the context as a struct pt_regs, with regs->ip that
 * address, and call kx_ftrace_bp_handler().  Whatever regs->ip holds
 * afterwards (a handler may redirect the call) is where RET goes, once
 * flags and general registers are reloaded.  Unless the handler returns
 * the target of a call that ftrace wrote behind the breakpoint for
 * another ftrace user: that call is made then, as from the site, by
 * RET into the target with the return address past the site below it,
 * the stack a call from the site would leave.
 */
#include <linux/linkage.h>
#include <linux/objtool.h>
#include <asm/asm-offsets.h>
#include <asm/ptrace-abi.h>
#include <asm/segment.h>
#include <asm/unwind_hints.h>
#include "asm_regs.S"

	.pushsection .kprobes.text, "ax"
SYM_CODE_START(kx_ftrace_bp_entry)
	UNWIND_HINT_FUNC
	ANNOTATE_NOENDBR
	KX_CALL_WITH_REGS kx_ftrace_bp_handler
	test	%_ASM_AX, %_ASM_AX
	jnz	.Lkx_ftrace_call_held
	KX_RESUME_AT_IP
.Lkx_ftrace_call_held:
	/* The target in the pt_regs' last word, which RET pops. */
	mov	%_ASM_AX, PTREGS_SIZE - KX_WORD(%_ASM_SP)
	KX_LOAD_FLAGS
	KX_LOAD_GPRS
	lea	PTREGS_SIZE - KX_WORD(%_ASM_SP), %_ASM_SP
	UNWIND_HINT_FUNC
	RET
SYM_CODE_END(kx_ftrace_bp_entry)
	.popsection
