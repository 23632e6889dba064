/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Included by the assembly of the x86 kprobes backend (trampoline.S,
 * opt_entry.S, step_entry.S, ftrace_entry.S): fill and reload the struct
 * pt_regs that the stack pointer points at.  The code between the
 * macros is written for both widths (asm/asm.h's register names and
 * __ASM_SIZE()); only the register lists differ.
 */
#ifndef _X86_KPROBES_ASM_REGS_S
#define _X86_KPROBES_ASM_REGS_S

#include <linux/linkage.h>
#include <asm/asm.h>
#include <asm/asm-offsets.h>
#include <asm/frame.h>
#include <asm/segment.h>
#include <asm/smap.h>
#include <asm/unwind_hints.h>

/*
 * The fields of struct pt_regs that the code of both widths names, and
 * the word size: asm-offsets gives them different names on i386.
 */
#ifdef CONFIG_X86_64
#define KX_PT_IP	RIP
#define KX_PT_SP	RSP
#define KX_PT_FLAGS	EFLAGS
#define KX_WORD		8
#define KX_UNWIND_HINT_REGS	UNWIND_HINT_REGS
#else
#define KX_PT_IP	PT_EIP
#define KX_PT_SP	PT_OLDESP
#define KX_PT_FLAGS	PT_EFLAGS
#define KX_WORD		4
/* ORC, and so objtool's hints, are 64-bit only. */
#define KX_UNWIND_HINT_REGS
#endif

/*
 * Make room for a struct pt_regs that starts \below bytes under the stack
 * pointer and fill it: every general register, the flags, and the
 * constant cs, ss and orig_ax; sp and ip are the caller's to fill.  The
 * flags are pushed straight into their place, and lea changes none of
 * them before.  The stack pointer points at the pt_regs afterwards.
 */
.macro KX_SAVE_REGS below
	lea	-(\below - KX_PT_FLAGS - KX_WORD)(%_ASM_SP), %_ASM_SP
	pushf
	lea	-KX_PT_FLAGS(%_ASM_SP), %_ASM_SP
#ifdef CONFIG_X86_64
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
#else
	movl	%eax, PT_EAX(%esp)
	movl	%ebx, PT_EBX(%esp)
	movl	%ecx, PT_ECX(%esp)
	movl	%edx, PT_EDX(%esp)
	movl	%esi, PT_ESI(%esp)
	movl	%edi, PT_EDI(%esp)
	movl	%ebp, PT_EBP(%esp)
	/*
	 * The data segments as they are (a handler only reads them; they
	 * are not reloaded): a store of a segment register writes 16 bits,
	 * so each slot is cleared first.
	 */
	movl	$0, PT_DS(%esp)
	movl	$0, PT_ES(%esp)
	movl	$0, PT_FS(%esp)
	movl	$0, PT_GS(%esp)
	movw	%ds, PT_DS(%esp)
	movw	%es, PT_ES(%esp)
	movw	%fs, PT_FS(%esp)
	movw	%gs, PT_GS(%esp)
	movl	$__KERNEL_CS, PT_CS(%esp)
	movl	$__KERNEL_DS, PT_OLDSS(%esp)
	movl	$-1, PT_ORIG_EAX(%esp)
#endif
.endm

/* Reload every general register (handlers may have changed them). */
.macro KX_LOAD_GPRS
#ifdef CONFIG_X86_64
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
#else
	movl	PT_EBP(%esp), %ebp
	movl	PT_EBX(%esp), %ebx
	movl	PT_EAX(%esp), %eax
	movl	PT_ECX(%esp), %ecx
	movl	PT_EDX(%esp), %edx
	movl	PT_ESI(%esp), %esi
	movl	PT_EDI(%esp), %edi
#endif
.endm

/*
 * For code reached by a call from a slot (opt_entry.S, step_entry.S):
 * below our return address, make room for a pt_regs and fill it, sp being
 * the probed context's (just above the return address).  ip is left to
 * the caller; the accumulator is free afterwards.  The probed instruction
 * may sit between stac and clac (a user access): handlers must not run
 * with user memory open, so AC is cleared once saved; the flags are put
 * back whole on the way out.  With frame pointers, the frame pointer then
 * points at the pt_regs, marked as such, so that a handler's stack trace
 * goes through the probed function (the probed context's frame pointer
 * comes back from the pt_regs).
 */
.macro KX_ENTER_FROM_SLOT
	KX_SAVE_REGS PTREGS_SIZE
	ASM_CLAC
	lea	PTREGS_SIZE + KX_WORD(%_ASM_SP), %_ASM_AX
	mov	%_ASM_AX, KX_PT_SP(%_ASM_SP)
	ENCODE_FRAME_POINTER
.endm

/* The flags from the pt_regs at the stack pointer. */
.macro KX_LOAD_FLAGS
	__ASM_SIZE(push)	KX_PT_FLAGS(%_ASM_SP)
	popf
.endm

/* The way back: flags and general registers from the pt_regs, then RET. */
.macro KX_RETURN_TO_SLOT_CALLER
	KX_LOAD_FLAGS
	KX_LOAD_GPRS
	lea	PTREGS_SIZE(%_ASM_SP), %_ASM_SP
	UNWIND_HINT_FUNC
	RET
.endm

/*
 * The body of code reached by a call whose return address is also where
 * the context resumes unless a handler says otherwise (step_entry.S,
 * ftrace_entry.S): save the context with regs->ip that return address,
 * call \handler with the pt_regs (KX_CALL_WITH_REGS), then return to
 * whatever regs->ip holds (KX_RESUME_AT_IP).
 */
.macro KX_CALL_WITH_REGS handler
	KX_ENTER_FROM_SLOT
	mov	PTREGS_SIZE(%_ASM_SP), %_ASM_AX
	mov	%_ASM_AX, KX_PT_IP(%_ASM_SP)
	mov	%_ASM_SP, %_ASM_ARG1
	KX_UNWIND_HINT_REGS
	call	\handler
.endm

.macro KX_RESUME_AT_IP
	mov	KX_PT_IP(%_ASM_SP), %_ASM_AX
	mov	%_ASM_AX, PTREGS_SIZE(%_ASM_SP)
	KX_RETURN_TO_SLOT_CALLER
.endm

.macro KX_CALL_AND_RESUME_AT_IP handler
	KX_CALL_WITH_REGS \handler
	KX_RESUME_AT_IP
.endm

#endif /* _X86_KPROBES_ASM_REGS_S */
