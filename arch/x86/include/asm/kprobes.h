/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * x86-64 kprobes: what the generic code and the trap handlers need to see
 * of the backend in arch/x86/kernel/kprobes/.  The per-site state below is
 * filled once when a site is prepared and only read on the hit path.
 */
#ifndef _ASM_X86_KPROBES_H
#define _ASM_X86_KPROBES_H

/* NOKPROBE_SYMBOL(), nokprobe_inline, __kprobes: needed even without kprobes. */
#include <asm-generic/kprobes.h>

/*
 * Bytes per detour slot of an optimized probe: a call to the common entry
 * code, the copied region (at most four bytes of instructions before the
 * fifth byte plus one whole instruction), a jmp back, and two words for
 * the entry code in the last sixteen bytes.  See arch/x86/kernel/kprobes/detour.c
 * (opt_entry.S needs it too).
 */
#define KPROBE_OPTINSN_SLOT_SIZE	64

/*
 * Words of stack arguments a jprobe handler gets copies of
 * (CONFIG_KPROBES_COMPAT): those of functions with up to 14 arguments.
 */
#define KPROBE_JPROBE_STACK_WORDS	8

#ifndef __ASSEMBLY__

#include <linux/types.h>

#ifdef CONFIG_KPROBES

/*
 * The unit of text a probe replaces: the first byte of the instruction,
 * overwritten with int3.
 */
typedef u8 kprobe_opcode_t;

#include <asm/insn.h>		/* MAX_INSN_SIZE */

struct pt_regs;

/*
 * Bytes per out-of-line slot.  A slot holds two copies of the probed
 * instruction: at offset 0 one followed by a call into the backend (the
 * tracked step, when post_handlers must run after it), at offset 32 one
 * followed by a jmp back to the original text (the boosted step, which
 * needs no per-CPU bookkeeping).  32 + MAX_INSN_SIZE + 5 fits in 64.
 */
#define KPROBE_SLOT_SIZE	64

/* The longest region a jump can cover: four bytes, then one instruction. */
#define KPROBE_OPT_REGION_MAX		(4 + MAX_INSN_SIZE)

/*
 * How a hit executes the probed instruction (arch_kprobe_site.how) and what
 * it needs to do so.  @target is the absolute destination of a relative
 * branch, or the constant part of an indirect branch's memory operand
 * (its displacement, or the absolute address of a RIP-relative operand).
 * On an ftrace site (KX_FTRACE) armed by its breakpoint, @target is the
 * call ftrace wrote behind it (arch_kprobe_ftrace_hold()), or 0 for its
 * nop: read by hits, written under text_mutex.
 * @base and @index name general registers in hardware order (0 = %rax,
 * 4 = %rsp, 8 = %r8 ...) or are 0xff when absent; @cc is the jcc condition,
 * the loop opcode, or the scale of an indirect operand.
 */
struct arch_kprobe_site {
	kprobe_opcode_t	*slot;		/* out-of-line copies, NULL if emulated */
	unsigned long	boost_ip;	/* the boosted copy, or 0 */
	unsigned long	target;
	u16		ret_pop;	/* extra bytes released by "ret imm16" */
	u8		opcode;		/* the original first byte */
	u8		len;		/* length of the probed instruction */
	u8		how;
	u8		cc;
	u8		base;
	u8		index;
#ifdef CONFIG_OPTPROBES
	/* Jump optimization: filled by arch_optprobe_prepare(). */
	kprobe_opcode_t	*detour;	/* detour slot, NULL if none */
	u8		region;		/* bytes the jump's region covers */
	u8		orig[5];	/* the bytes the jump replaces */
#endif
};

/* Called from do_int3() for every kernel or user int3; returns 1 if it was ours. */
int kprobe_int3_handler(struct pt_regs *regs);

/* Stepping never uses the trap flag, so #DB has nothing for kprobes. */
static inline int kprobe_debug_handler(struct pt_regs *regs)
{
	return 0;
}

#endif /* CONFIG_KPROBES */
#endif /* __ASSEMBLY__ */
#endif /* _ASM_X86_KPROBES_H */
