// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * x86 kprobes backend: the call of a jprobe handler
 * (CONFIG_KPROBES_COMPAT, see kernel/kprobes/compat.c).
 *
 * At a function's entry the first arguments are in registers (x86-64:
 * %rdi, %rsi, %rdx, %rcx, %r8 and %r9; i386, built with -mregparm=3:
 * %eax, %edx and %ecx), and the others on the stack, right above the
 * return address that regs->sp points at (a breakpoint, a detour and the
 * ftrace hook all present it so).  kx_jprobe_call (jprobe_call.S) loads
 * the argument registers from regs, puts a copy of the stack words below
 * its own frame and calls the handler: an ordinary call, seen as such by
 * the unwinders, whose return comes back here.
 */

#include <linux/kprobes.h>
#include <linux/kprobes_arch.h>
#include <linux/uaccess.h>

#include <asm/stacktrace.h>

#include "backend.h"

/**
 * arch_jprobe_call - call a jprobe handler with the probed function's arguments
 * @entry: the handler
 * @regs: the probed context, on the function's first instruction
 *
 * The stack words are read raw (they may be the caller's locals, which
 * KASAN need not like being read), and only those below the top of the
 * stack the function runs on: a function entered at the top of a stack,
 * as call_on_irqstack() enters the IRQ stack's, has fewer than
 * KPROBE_JPROBE_STACK_WORDS above its return address, and past the top
 * is a guard page (VMAP_STACK) or other per-CPU data.  A fault there
 * would reach the site's fault_handler on every hit.  On a stack the
 * kernel does not know, no word is copied: the handler sees zeros.
 *
 * Context: a pre_handler's.
 */
void arch_jprobe_call(void *entry, struct pt_regs *regs)
{
	unsigned long stack[KX_JPROBE_STACK] = { };
	unsigned long *args = (unsigned long *)regs->sp + 1;
	struct stack_info info;
	long i, n = 0;

	/*
	 * The frame the probed function has not pushed yet, for i386's
	 * frame-pointer unwinder (see jprobe_call.S): the caller's frame
	 * pointer, and the return address at regs->sp, which is on the
	 * stack in any case.
	 */
	if (IS_ENABLED(CONFIG_X86_32)) {
		stack[KX_JPROBE_STACK - 2] = regs->bp;
		stack[KX_JPROBE_STACK - 1] = *(unsigned long *)regs->sp;
	}
	if (!get_stack_info((unsigned long *)regs->sp, current, &info, NULL))
		n = min_t(long, KPROBE_JPROBE_STACK_WORDS, info.end - args);
	for (i = 0; i < n; i++)
		__get_kernel_nofault(&stack[i], &args[i], unsigned long, out);
out:
	kx_jprobe_call(entry, regs, stack);
}

NOKPROBE_SYMBOL(arch_jprobe_call);
