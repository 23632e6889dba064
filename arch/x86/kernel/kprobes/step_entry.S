/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * x86 kprobes backend: where a tracked step ends.
 *
 * The tracked copy of a stepped instruction (see breakpoint.c) is followed by a
 * call to this code, so we arrive with interrupts off, the registers as
 * the instruction left them, and our return address (just past that call,
 * in the slot) below the probed context's stack pointer.  We save the
 * context as a struct pt_regs and call kx_step_done(), which sets regs->ip
 * to the instruction after the probed one, gives the context its interrupt
 * flag back and runs the post_handlers.  Then regs->ip goes over our
 * return address, the flags and general registers are reloaded (handlers
 * may have changed them) and RET resumes the probed code.
 *
 * Compared with ending the step on a second int3, this skips a whole
 * exception entry and exit.  While the handlers run, the unwinder sees a
 * pt_regs frame whose next frame is the probed function at regs->ip.
 * Nothing before the flags are saved may change them, hence lea.
 */
#include <linux/linkage.h>
#include <linux/objtool.h>
#include <asm/asm-offsets.h>
#include <asm/ptrace-abi.h>
#include <asm/segment.h>
#include <asm/unwind_hints.h>
#include "asm_regs.S"

	.pushsection .kprobes.text, "ax"
SYM_CODE_START(kx_step_entry)
	UNWIND_HINT_FUNC
	ANNOTATE_NOENDBR
	/* regs->ip starts as our return address; kx_step_done() moves it */
	KX_CALL_AND_RESUME_AT_IP kx_step_done
SYM_CODE_END(kx_step_entry)
	.popsection
