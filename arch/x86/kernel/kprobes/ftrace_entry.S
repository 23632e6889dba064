/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * x86 kprobes backend: where our call over ftrace's nop goes while an entry
 * probe waits to be handed to ftrace (arch_kprobe_ftrace_call(),
 * ftrace_site.c).
 *
 * On entry the stack holds the address past the call right below the
 * probed function's stack pointer, as ftrace's own call leaves it.  We save
 * the context as a struct pt_regs, with regs->ip that address, and call
 * kx_ftrace_call_handler(), which runs the probes as the ftrace handler
 * does: interrupts as they were, not in NMI context.  Whatever regs->ip
 * holds afterwards (a handler may redirect the call) is where RET goes,
 * once flags and general registers are reloaded.  Unless the handler
 * returns the target of the call that ftrace meant to write at the site
 * for another ftrace user: that call is made then, as from the site, by
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
SYM_CODE_START(kx_ftrace_call_entry)
	UNWIND_HINT_FUNC
	ANNOTATE_NOENDBR
	KX_CALL_WITH_REGS kx_ftrace_call_handler
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
SYM_CODE_END(kx_ftrace_call_entry)
	.popsection
