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
 * flags and general registers are reloaded.
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
	KX_CALL_AND_RESUME_AT_IP kx_ftrace_bp_handler
SYM_CODE_END(kx_ftrace_bp_entry)
	.popsection
