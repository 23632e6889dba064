/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * x86-64 kprobes backend: the part of the core/backend contract
 * (linux/kprobes_arch.h) that the core's hit paths inline.  Included by
 * linux/kprobes_arch.h only, after its declarations.
 */
#ifndef _ASM_X86_KPROBES_ARCH_H
#define _ASM_X86_KPROBES_ARCH_H

#include <asm/ptrace.h>

#ifdef CONFIG_KRETPROBES
/*
 * On x86-64 the return address of a call sits at the stack pointer on the
 * function's first instruction, which is where both a breakpoint and the
 * ftrace hook present regs->sp: that slot is the instance's fp.
 */
static __always_inline bool arch_kretprobe_hijack(struct kretprobe_instance *ri,
						  struct pt_regs *regs)
{
	unsigned long *slot = (unsigned long *)regs->sp;

	ri->ret_addr = (kprobe_opcode_t *)*slot;
	ri->fp = slot;
	*slot = (unsigned long)arch_kretprobe_trampoline;
	return true;
}

static __always_inline void arch_kretprobe_restore(struct pt_regs *regs,
						   void *fp, unsigned long ret)
{
	*(unsigned long *)fp = ret;
	regs->ip = ret;
}
#endif /* CONFIG_KRETPROBES */

#endif /* _ASM_X86_KPROBES_ARCH_H */
