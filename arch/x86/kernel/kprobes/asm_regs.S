/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Included by the assembly of the x86 kprobes backend (trampoline.S,
 * opt_entry.S, step_entry.S, ftrace_entry.S): fill and reload the struct
 * pt_regs that %rsp points at.
 */
#ifndef _X86_KPROBES_ASM_REGS_S
#define _X86_KPROBES_ASM_REGS_S

#include <linux/linkage.h>
#include <asm/asm-offsets.h>
#include <asm/frame.h>
#include <asm/segment.h>
#include <asm/smap.h>
#include <asm/unwind_hints.h>

/*
 * Make room for a struct pt_regs that starts \below bytes under the stack
 * pointer and fill it: every general register, the flags, and the
 * constant cs, ss and orig_ax; sp and ip are the caller's to fill.  The
 * flags are pushed straight into their place, and lea changes none of
 * them before.  %rsp points at the pt_regs afterwards.
 */
.macro KX_SAVE_REGS below
	leaq	-(\below - EFLAGS - 8)(%rsp), %rsp
	pushfq
	leaq	-EFLAGS(%rsp), %rsp
	movq	%rdi, RDI(%rsp)
	movq	%rsi, RSI(%rsp)
	movq	%rdx, RDX(%rsp)
	movq	%rcx, RCX(%rsp)
	movq	%rax, RAX(%rsp)
	movq	%r8, R8(%rsp)
	movq	%r9, R9(%rsp)
	movq	%r10, R10(%rsp)
	movq	%r11, R11(%rsp)
	movq	%rbx, RBX(%rsp)
	movq	%rbp, RBP(%rsp)
	movq	%r12, R12(%rsp)
	movq	%r13, R13(%rsp)
	movq	%r14, R14(%rsp)
	movq	%r15, R15(%rsp)
	movq	$__KERNEL_CS, CS(%rsp)
	movq	$__KERNEL_DS, SS(%rsp)
	movq	$-1, ORIG_RAX(%rsp)
.endm

/* Reload every general register (handlers may have changed them). */
.macro KX_LOAD_GPRS
	movq	R15(%rsp), %r15
	movq	R14(%rsp), %r14
	movq	R13(%rsp), %r13
	movq	R12(%rsp), %r12
	movq	RBP(%rsp), %rbp
	movq	RBX(%rsp), %rbx
	movq	R11(%rsp), %r11
	movq	R10(%rsp), %r10
	movq	R9(%rsp), %r9
	movq	R8(%rsp), %r8
	movq	RAX(%rsp), %rax
	movq	RCX(%rsp), %rcx
	movq	RDX(%rsp), %rdx
	movq	RSI(%rsp), %rsi
	movq	RDI(%rsp), %rdi
.endm

/*
 * For code reached by a call from a slot (opt_entry.S, step_entry.S):
 * below our return address, make room for a pt_regs and fill it, sp being
 * the probed context's (just above the return address).  ip is left to
 * the caller; %rax is free afterwards.  The probed instruction may sit
 * between stac and clac (a user access): handlers must not run with user
 * memory open, so AC is cleared once saved; the flags are put back whole
 * on the way out.  With frame pointers, %rbp then points at the pt_regs,
 * marked as such, so that a handler's stack trace goes through the probed
 * function (the probed context's %rbp comes back from the pt_regs).
 */
.macro KX_ENTER_FROM_SLOT
	KX_SAVE_REGS PTREGS_SIZE
	ASM_CLAC
	leaq	PTREGS_SIZE + 8(%rsp), %rax
	movq	%rax, RSP(%rsp)
	ENCODE_FRAME_POINTER
.endm

/* The way back: flags and general registers from the pt_regs, then RET. */
.macro KX_RETURN_TO_SLOT_CALLER
	pushq	EFLAGS(%rsp)
	popfq
	KX_LOAD_GPRS
	leaq	PTREGS_SIZE(%rsp), %rsp
	UNWIND_HINT_FUNC
	RET
.endm

/*
 * The body of code reached by a call whose return address is also where
 * the context resumes unless a handler says otherwise (step_entry.S,
 * ftrace_entry.S): save the context with regs->ip that return address,
 * call \handler with the pt_regs, then return to whatever regs->ip holds.
 */
.macro KX_CALL_AND_RESUME_AT_IP handler
	KX_ENTER_FROM_SLOT
	movq	PTREGS_SIZE(%rsp), %rax
	movq	%rax, RIP(%rsp)
	movq	%rsp, %rdi
	UNWIND_HINT_REGS
	call	\handler
	movq	RIP(%rsp), %rax
	movq	%rax, PTREGS_SIZE(%rsp)
	KX_RETURN_TO_SLOT_CALLER
.endm

#endif /* _X86_KPROBES_ASM_REGS_S */
