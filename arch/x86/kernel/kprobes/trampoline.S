/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * x86 kprobes backend: the return-probe trampoline.
 *
 * At a kretprobe'd function's entry, arch_kretprobe_hijack() replaced the
 * return address on the stack with the address of this code, so the
 * function's RET lands here with the stack pointer just above that slot.
 * We take the slot back (it becomes our own return address), save the
 * registers as a struct pt_regs below it and call the core, which writes
 * the real return address into the slot, runs the return handlers and
 * gives the instances back.  Then the registers are reloaded (a handler
 * may have changed the return value), with SMAP the flags too, and RET
 * goes to the real caller.
 *
 * To the unwinder this is an ordinary call frame whose return address is
 * whatever the slot holds: the trampoline's own address until the core
 * has put the real one back, which asm/unwind.h maps through
 * kretprobe_find_ret_addr().  On the first instruction the slot is just
 * below the stack pointer, after it at the stack pointer.
 */
#include <linux/linkage.h>
#include <linux/objtool.h>
#include <asm/asm-offsets.h>
#include <asm/frame.h>
#include <linux/stringify.h>
#include <asm/alternative.h>
#include <asm/cpufeatures.h>
#include <asm/ptrace-abi.h>
#include <asm/segment.h>
#include <asm/smap.h>
#include <asm/unwind_hints.h>
#include "asm_regs.S"

	.pushsection .kprobes.text, "ax"
SYM_CODE_START(arch_kretprobe_trampoline)
	/*
	 * Reached by RET, never by an indirect branch.  Here the return
	 * address (our own, until the core has put the real one back) is
	 * in the slot just below the stack pointer.
	 */
	UNWIND_HINT type=UNWIND_HINT_TYPE_CALL sp_reg=ORC_REG_SP sp_offset=0
	ANNOTATE_NOENDBR
	KX_SAVE_REGS (PTREGS_SIZE + KX_WORD)
	/*
	 * A few functions are called inside user access regions (stac ...
	 * clac), rep_movs_alternative for one: the handlers must not run
	 * with user memory open.  The flags come back whole below.
	 */
	ASM_CLAC
	/* The probed function's stack pointer after its RET. */
	lea	PTREGS_SIZE + KX_WORD(%_ASM_SP), %_ASM_AX
	mov	%_ASM_AX, KX_PT_SP(%_ASM_SP)
	/* The core sets regs->ip to the real return address. */
	_ASM_MOV	$arch_kretprobe_trampoline, KX_PT_IP(%_ASM_SP)
	ENCODE_FRAME_POINTER

	lea	PTREGS_SIZE(%_ASM_SP), %_ASM_ARG2
	mov	%_ASM_SP, %_ASM_ARG1
	call	kretprobe_trampoline_handler

	/* AC back as it was: only a CPU with SMAP can have had it set. */
	ALTERNATIVE "", "KX_LOAD_FLAGS", X86_FEATURE_SMAP
	KX_LOAD_GPRS
	lea	PTREGS_SIZE(%_ASM_SP), %_ASM_SP
	RET
SYM_CODE_END(arch_kretprobe_trampoline)
	.popsection
