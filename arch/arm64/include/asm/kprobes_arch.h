/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * arm64 kprobes backend: the part of the core/backend contract
 * (linux/kprobes_arch.h) that the core's hit paths inline.  Included by
 * linux/kprobes_arch.h only, after its declarations.
 */
#ifndef _ASM_ARM64_KPROBES_ARCH_H
#define _ASM_ARM64_KPROBES_ARCH_H

#include <asm/ptrace.h>

#ifdef CONFIG_KRETPROBES
/*
 * On a function's first instruction the return address is in the link
 * register, and the frame pointer is still the caller's: that is what
 * the instance is keyed on (ri->fp), because it is also what the arm64
 * unwinder holds when it meets the trampoline in a frame record, and
 * what the trampoline finds in x29 once the function has returned.  The
 * link register is replaced before any PACIASP of the function signs it,
 * so the function's AUTIASP authenticates the trampoline's address.
 */
static __always_inline bool arch_kretprobe_hijack(struct kretprobe_instance *ri,
						  struct pt_regs *regs)
{
	ri->ret_addr = (kprobe_opcode_t *)regs->regs[30];
	ri->fp = (void *)regs->regs[29];
	regs->regs[30] = (unsigned long)arch_kretprobe_trampoline;
	return true;
}

/*
 * @regs are the trampoline's: its frame record is regs->stackframe, so
 * putting the real return address there makes stack traces taken by the
 * return handlers show it.
 */
static __always_inline void arch_kretprobe_restore(struct pt_regs *regs,
						   void *fp, unsigned long ret)
{
	regs->stackframe[1] = ret;
	regs->regs[30] = ret;
	regs->pc = ret;
}
#endif /* CONFIG_KRETPROBES */

#endif /* _ASM_ARM64_KPROBES_ARCH_H */
