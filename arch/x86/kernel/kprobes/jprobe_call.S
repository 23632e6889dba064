/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * x86 kprobes backend: kx_jprobe_call(entry, regs, stack), see jprobe.c.
 *
 * A frame-pointer frame, then KPROBE_JPROBE_STACK_WORDS words copied from
 * @stack to the bottom of it, where the handler finds its stack arguments
 * once the call has pushed the return address; the argument registers
 * from @regs (six on x86-64, three on i386); the call through the
 * retpoline-safe macro.  A fixed frame size keeps the unwinders' view of
 * it simple.
 */
#include <linux/linkage.h>
#include <asm/asm.h>
#include <asm/asm-offsets.h>
#include <asm/nospec-branch.h>
#include <asm/ptrace-abi.h>
#include <asm/kprobes.h>

/* The stack words from \src to the bottom of the frame, through \tmp. */
.macro KX_COPY_STACK_WORDS src, tmp
	.set	.Lword, 0
	.rept	KPROBE_JPROBE_STACK_WORDS
	mov	.Lword(\src), \tmp
	mov	\tmp, .Lword(%_ASM_SP)
	.set	.Lword, .Lword + __SIZEOF_LONG__
	.endr
.endm

	.pushsection .kprobes.text, "ax"
SYM_FUNC_START(kx_jprobe_call)
#ifdef CONFIG_X86_64
	pushq	%rbp
	movq	%rsp, %rbp
	subq	$(KPROBE_JPROBE_STACK_WORDS * 8), %rsp
	KX_COPY_STACK_WORDS %rdx, %rax
	movq	%rdi, %r11
	movq	%rsi, %rax
	movq	RDI(%rax), %rdi
	movq	RSI(%rax), %rsi
	movq	RDX(%rax), %rdx
	movq	RCX(%rax), %rcx
	movq	R8(%rax), %r8
	movq	R9(%rax), %r9
	CALL_NOSPEC r11
	leave
	RET
#else
	/*
	 * @entry in %eax, @regs in %edx, @stack in %ecx.  The frame's
	 * saved frame pointer is the frame @stack ends with, not ours, so
	 * that the frame-pointer unwinder goes from here to the probed
	 * function's caller: at its first instruction the function has not
	 * linked a frame of its own.  Ours is kept below it and put back.
	 */
	pushl	%ebp
	movl	%esp, %ebp
	pushl	%ebx
	pushl	(%ebp)
	leal	(KPROBE_JPROBE_STACK_WORDS * 4)(%ecx), %ebx
	movl	%ebx, (%ebp)
	subl	$(KPROBE_JPROBE_STACK_WORDS * 4), %esp
	KX_COPY_STACK_WORDS %ecx, %ebx
	movl	%eax, %ebx
	movl	PT_EAX(%edx), %eax
	movl	PT_ECX(%edx), %ecx
	movl	PT_EDX(%edx), %edx
	CALL_NOSPEC ebx
	movl	-4(%ebp), %ebx
	movl	-8(%ebp), %ecx
	movl	%ebp, %esp
	movl	%ecx, %ebp
	addl	$4, %esp
	RET
#endif
SYM_FUNC_END(kx_jprobe_call)
	.popsection
