/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * x86 kprobes backend: the common entry of optimized probes' detours.
 *
 * An optimized site's jmp leads to its detour slot, whose first
 * instruction calls this code.  So on entry the stack holds our return
 * address (the slot's copy of the region, see detour.c) right below the
 * probed context's stack pointer.  We save that context as a struct
 * pt_regs, fetch the site's address from the slot's last bytes and
 * call kx_opt_handler().  Then flags and general registers are reloaded
 * (handlers may have changed them) and RET goes on in the slot.
 *
 * While the handlers run, the unwinder sees a pt_regs frame, exactly as
 * for a breakpoint: the next frame is the probed function at regs->ip,
 * with regs->sp.  Nothing before the first store may change the flags,
 * hence lea rather than sub.
 */
#include <linux/linkage.h>
#include <linux/objtool.h>
#include <asm/asm-offsets.h>
#include <asm/ptrace-abi.h>
#include <asm/segment.h>
#include <asm/unwind_hints.h>
#include "asm_regs.S"
#include <asm/kprobes.h>

/*
 * What the slot keeps for us in its last sixteen bytes, relative to our
 * return address (the slot + 5): the value regs->ip is to show (the
 * probed address + 1), then the site.
 */
#define IP_FROM_RET	(KPROBE_OPTINSN_SLOT_SIZE - 16 - 5)
#define SITE_FROM_RET	(KPROBE_OPTINSN_SLOT_SIZE - 8 - 5)

	.pushsection .kprobes.text, "ax"
SYM_CODE_START(kx_opt_entry)
	UNWIND_HINT_FUNC
	ANNOTATE_NOENDBR
	KX_ENTER_FROM_SLOT
	mov	PTREGS_SIZE(%_ASM_SP), %_ASM_DX
	mov	IP_FROM_RET(%_ASM_DX), %_ASM_AX
	mov	%_ASM_AX, KX_PT_IP(%_ASM_SP)
	mov	SITE_FROM_RET(%_ASM_DX), %_ASM_ARG1
	mov	%_ASM_SP, %_ASM_ARG2
	KX_UNWIND_HINT_REGS
	call	kx_opt_handler
	KX_RETURN_TO_SLOT_CALLER
SYM_CODE_END(kx_opt_entry)
	.popsection
