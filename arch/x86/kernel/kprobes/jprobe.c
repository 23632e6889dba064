// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * x86-64 kprobes backend: the call of a jprobe handler
 * (CONFIG_KPROBES_COMPAT, see kernel/kprobes/compat.c).
 *
 * At a function's entry the first six arguments are in %rdi, %rsi, %rdx,
 * %rcx, %r8 and %r9, and the others on the stack, right above the return
 * address that regs->sp points at (a breakpoint, a detour and the ftrace
 * hook all present it so).  kx_jprobe_call (jprobe_call.S) loads the six
 * registers from regs, puts a copy of the stack words below its own frame
 * and calls the handler: an ordinary call, seen as such by the unwinders,
 * whose return comes back here.
 */

#include <linux/kprobes.h>
#include <linux/kprobes_arch.h>
#include <linux/uaccess.h>

#include "backend.h"

/**
 * arch_jprobe_call - call a jprobe handler with the probed function's arguments
 * @entry: the handler
 * @regs: the probed context, on the function's first instruction
 *
 * The stack words are read one by one, raw (they may be the caller's
 * locals, which KASAN need not like being read), up to the first that
 * cannot be: the top of a stack may come before KPROBE_JPROBE_STACK_WORDS.
 *
 * Context: a pre_handler's.
 */
void arch_jprobe_call(void *entry, struct pt_regs *regs)
{
	unsigned long stack[KPROBE_JPROBE_STACK_WORDS] = { };
	unsigned long *args = (unsigned long *)regs->sp + 1;
	int i;

	for (i = 0; i < KPROBE_JPROBE_STACK_WORDS; i++)
		__get_kernel_nofault(&stack[i], &args[i], unsigned long, out);
out:
	kx_jprobe_call(entry, regs, stack);
}

NOKPROBE_SYMBOL(arch_jprobe_call);
