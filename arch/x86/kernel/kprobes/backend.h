/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Private to the x86 kprobes backend (core.c, ftrace.c).
 */
#ifndef _X86_KPROBES_BACKEND_H
#define _X86_KPROBES_BACKEND_H

/*
 * Values of arch_kprobe_site.how.  Everything from KX_JMP on is emulated
 * in the trap handler: those instructions either leave the straight line
 * (so an int3 placed after an out-of-line copy would never be reached) or
 * depend on where they sit (call pushes its own address).
 */
enum {
	KX_STEP,	/* run the copy out of line, trap after it */
	KX_STEP_PUSHF,	/* the same, then repair the IF bit pushf stored */
	KX_FTRACE,	/* carried by ftrace: never trapped, never stepped */
	KX_JMP,		/* jmp rel8/rel32 */
	KX_CALL,	/* call rel32 */
	KX_JCC,		/* jcc rel8/rel32, condition in .cc */
	KX_LOOP,	/* loop, loope, loopne, jrcxz: opcode in .cc */
	KX_RET,		/* ret, ret imm16 */
	KX_JMP_IND,	/* jmp through a register or memory (ff /4) */
	KX_CALL_IND,	/* call through a register or memory (ff /2) */
};

/* .cc of an indirect branch: operand in memory; low two bits: scale. */
#define KX_IND_MEM	0x80
/* .base / .index: no register. */
#define KX_NO_REG	0xff

/* Where the two copies sit inside a slot (see KPROBE_SLOT_SIZE). */
#define KX_TRAP_COPY	0
#define KX_LOOSE_COPY	32

#ifdef CONFIG_DYNAMIC_FTRACE
/* Ends of the ftrace trampoline templates, labels in ftrace_64.S. */
void ftrace_caller_end(void);
void ftrace_regs_caller_end(void);
#endif

#endif /* _X86_KPROBES_BACKEND_H */
