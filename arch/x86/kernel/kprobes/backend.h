/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Private to the x86 kprobes backend (breakpoint.c, decode.c, ftrace_site.c,
 * detour.c, jprobe.c).
 */
#ifndef _X86_KPROBES_BACKEND_H
#define _X86_KPROBES_BACKEND_H

#include <linux/kprobes_arch.h>
#include <asm/text-patching.h>

/*
 * Values of arch_kprobe_site.how.  Everything from KX_JMP on is emulated
 * in the trap handler: those instructions either leave the straight line
 * (so a call placed after an out-of-line copy would never be reached),
 * depend on where they sit (call pushes its own address), or change the
 * interrupt flag, which a tracked step holds clear and then restores.
 */
enum {
	KX_STEP,	/* run the copy out of line, call back after it */
	KX_STEP_PUSHF,	/* the same, then repair the IF bit pushf stored */
	KX_FTRACE,	/* carried by ftrace: never trapped, never stepped */
	KX_JMP,		/* jmp rel8/rel32 */
	KX_CALL,	/* call rel32 */
	KX_JCC,		/* jcc rel8/rel32, condition in .cc */
	KX_LOOP,	/* loop, loope, loopne, jrcxz: opcode in .cc */
	KX_RET,		/* ret, ret imm16 */
	KX_JMP_IND,	/* jmp through a register or memory (ff /4) */
	KX_CALL_IND,	/* call through a register or memory (ff /2) */
	KX_CLI,		/* cli */
	KX_STI,		/* sti, not right before hlt or mwait */
	KX_POPF,	/* popf (64-bit operand) */
	KX_REFUSED,	/* decode.c's rule table only: never a site's */
};

/* .cc of an indirect branch: operand in memory; low two bits: scale. */
#define KX_IND_MEM	0x80
/* .base / .index: no register. */
#define KX_NO_REG	0xff

/*
 * An ftrace call site: the 5-byte call to __fentry__ or the nop ftrace
 * puts there (MCOUNT_INSN_SIZE, which only kernels with ftrace define;
 * the breakpoint code meets such sites in every configuration).
 */
#define KX_FENTRY_SIZE	CALL_INSN_SIZE

/* Where the two copies sit inside a slot (see KPROBE_SLOT_SIZE). */
#define KX_TRAP_COPY	0
#define KX_LOOSE_COPY	32

/* Where our call over ftrace's nop goes (ftrace_entry.S, ftrace_site.c). */
void kx_ftrace_call_entry(void);
unsigned long kx_ftrace_call_handler(struct pt_regs *regs);

/* The end of a tracked step (step_entry.S) and its C half (breakpoint.c). */
void kx_step_entry(void);
void kx_step_done(struct pt_regs *regs);

/*
 * jprobe_call.S (CONFIG_KPROBES_COMPAT).  @stack holds the stack words of
 * the arguments, then on i386 a frame for the unwinder (jprobe.c).
 */
#ifdef CONFIG_X86_32
#define KX_JPROBE_STACK	(KPROBE_JPROBE_STACK_WORDS + 2)
#else
#define KX_JPROBE_STACK	KPROBE_JPROBE_STACK_WORDS
#endif
void kx_jprobe_call(void *entry, struct pt_regs *regs,
		    const unsigned long *stack);

/* breakpoint.c: a frame of this CPU's hit stack for other hit paths. */
struct kprobe_frame;
struct kprobe_frame *kx_frame_enter(struct kprobe_site *s);
void kx_frame_leave(struct kprobe_frame *f);

/* decode.c: reading, classifying, copying and emulating instructions. */
struct insn;
struct kx_overlay {
	unsigned long	at;		/* an optimized site being walked through */
	u8		bytes[JMP32_INSN_SIZE];	/* what its jump replaced */
};

int kx_fetch(unsigned long addr, u8 *buf);
int kx_fetch_orig(struct kx_overlay *ov, unsigned long pos, u8 *buf);
int kx_classify(struct arch_kprobe_site *a, struct insn *insn,
		unsigned long addr, const char **why);
bool kx_place_copy(u8 *img, unsigned long at, struct insn *insn,
		   const u8 *orig, unsigned long addr);
bool kx_place_jmp(u8 *img, unsigned long at, unsigned long dest);
int kx_build_slot(struct arch_kprobe_site *a, struct insn *insn,
		  const u8 *orig, unsigned long addr);
bool kx_emulate(struct kprobe_site *s, struct pt_regs *regs);

/*
 * Jump optimization (detour.c).  A detour slot holds, from its start: a call
 * to kx_opt_entry (opt_entry.S), the copied region followed by a jmp back
 * (KX_OPT_COPY, where breakpoint hits go while KSITE_OPT_READY is set),
 * and in its last sixteen bytes the value regs->ip shows to handlers
 * (KX_OPT_IP: the probed address + 1) and the site's address
 * (KX_OPT_SITE).  opt_entry.S knows these offsets too.
 */
#define KX_OPT_COPY	CALL_INSN_SIZE
#define KX_OPT_IP	(KPROBE_OPTINSN_SLOT_SIZE - 16)
#define KX_OPT_SITE	(KPROBE_OPTINSN_SLOT_SIZE - 8)

#ifdef CONFIG_OPTPROBES
void kx_opt_release(struct kprobe_site *s);
void kx_opt_entry(void);
void kx_opt_handler(struct kprobe_site *s, struct pt_regs *regs);

static __always_inline bool kx_opt_ready(struct kprobe_site *s)
{
	return READ_ONCE(s->flags) & KSITE_OPT_READY;
}

static __always_inline unsigned long kx_opt_copy(struct kprobe_site *s)
{
	return (unsigned long)s->arch.detour + KX_OPT_COPY;
}

/* Is the jump in the text?  The core sets KSITE_OPTIMIZED once it is. */
static __always_inline bool kx_jumped(struct kprobe_site *s)
{
	return READ_ONCE(s->flags) & KSITE_OPTIMIZED;
}

static __always_inline const u8 *kx_orig_bytes(struct kprobe_site *s)
{
	return s->arch.orig;
}
#else
static inline void kx_opt_release(struct kprobe_site *s) { }

static __always_inline bool kx_opt_ready(struct kprobe_site *s)
{
	return false;
}

static __always_inline unsigned long kx_opt_copy(struct kprobe_site *s)
{
	return 0;
}

static __always_inline bool kx_jumped(struct kprobe_site *s)
{
	return false;
}

static __always_inline const u8 *kx_orig_bytes(struct kprobe_site *s)
{
	return NULL;
}
#endif

#if defined(CONFIG_X86_64) && defined(CONFIG_DYNAMIC_FTRACE)
/* Ends of the ftrace trampoline templates, labels in ftrace_64.S. */
void ftrace_caller_end(void);
void ftrace_regs_caller_end(void);
#endif

#endif /* _X86_KPROBES_BACKEND_H */
