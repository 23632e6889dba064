/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * x86-64 kprobes backend: kx_jprobe_call(entry, regs, stack), see jprobe.c.
 *
 * A frame-pointer frame, then KPROBE_JPROBE_STACK_WORDS words copied from
 * @stack to the bottom of it, where the handler finds its stack arguments
 * once the call has pushed the return address; the six argument registers
 * from @regs; the call through the retpoline-safe macro.  A fixed frame
 * size keeps the unwinders' view of it simple.
 */
#include <linux/linkage.h>
#include <asm/asm-offsets.h>
#include <asm/nospec-branch.h>
#include <asm/ptrace-abi.h>
#include <asm/kprobes.h>

	.pushsection .kprobes.text, "ax"
SYM_FUNC_START(kx_jprobe_call)
	pushq	%rbp
	movq	%rsp, %rbp
	subq	$(KPROBE_JPROBE_STACK_WORDS * 8), %rsp
	.set	.Lword, 0
	.rept	KPROBE_JPROBE_STACK_WORDS
	movq	.Lword(%rdx), %rax
	movq	%rax, .Lword(%rsp)
	.set	.Lword, .Lword + 8
	.endr
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
SYM_FUNC_END(kx_jprobe_call)
	.popsection
