/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The arm64 probes decoder (decode.c), shared by kprobes (breakpoint.c)
 * and uprobes (uprobes.c, which knows it by this file's name and by
 * arm_probe_decode_insn()).
 */
#ifndef _ARM64_PROBES_DECODE_INSN_H
#define _ARM64_PROBES_DECODE_INSN_H

#include <asm/kprobes.h>
#include <asm/probes.h>

/*
 * How a hit executes an instruction (arm64_probe_insn.how).  Everything
 * but ARM64_PROBE_STEP is simulated from the trap: those instructions
 * read the PC, leave the straight line, or read or write the interrupt
 * mask a step runs with.
 */
enum arm64_probe_how {
	ARM64_PROBE_STEP,	/* run a copy out of line, trap back after it */
	ARM64_PROBE_NOP,	/* NOP, BTI, PRFM (literal): move on */
	ARM64_PROBE_B,
	ARM64_PROBE_BL,
	ARM64_PROBE_BCOND,	/* B.cond and BC.cond: condition in .cond */
	ARM64_PROBE_CBZ,	/* .cond: test all 64 bits */
	ARM64_PROBE_CBNZ,
	ARM64_PROBE_TBZ,	/* .cond: the bit tested */
	ARM64_PROBE_TBNZ,
	ARM64_PROBE_BR,
	ARM64_PROBE_BLR,
	ARM64_PROBE_RET,
	ARM64_PROBE_ADR,	/* ADR and ADRP: .target is the result */
	ARM64_PROBE_LDR_W,	/* LDR Wt, literal: .target is its address */
	ARM64_PROBE_LDR_X,	/* LDR Xt, literal */
	ARM64_PROBE_LDRSW,	/* LDRSW Xt, literal */
	ARM64_PROBE_MRS_DAIF,	/* MRS Xt, DAIF */
	ARM64_PROBE_DAIFSET,	/* MSR DAIFSet, #imm: .cond is imm */
	ARM64_PROBE_DAIFCLR,	/* MSR DAIFClr, #imm: .cond is imm */
	ARM64_PROBE_MSR_DAIF,	/* MSR DAIF, Xt */
	ARM64_PROBE_MOV,	/* MOV Xd, Xm (ORR Xd, XZR, Xm): ftrace's mov x9, x30 */
	ARM64_PROBE_PACIASP,	/* sign or authenticate the link register */
	ARM64_PROBE_AUTIASP,	/* with the kernel's A key (kprobes only) */
	ARM64_PROBE_REFUSED,	/* never probed */
};

/*
 * Decode @insn found at @pc into @d.  Returns @d->how; for
 * ARM64_PROBE_REFUSED, *@why says why in a few words.
 */
enum arm64_probe_how arm64_probe_decode(u32 insn, unsigned long pc,
					struct arm64_probe_insn *d,
					const char **why);

/*
 * Carry out a simulated instruction on @regs, which are at its address,
 * PSTATE's branch type included.  A literal load reads kernel memory:
 * kprobes only.
 */
void arm64_probe_simulate(const struct arm64_probe_insn *d,
			  struct pt_regs *regs);

/* Load/store exclusive, register or pair (bit 22 set: a load). */
static inline bool arm64_probe_is_ldx(u32 insn)
{
	return (insn & 0x3fc00000) == 0x08400000;
}

static inline bool arm64_probe_is_stx(u32 insn)
{
	return (insn & 0x3fc00000) == 0x08000000;
}

/* For uprobes.c: what it may probe, and how. */
enum probe_insn {
	INSN_REJECTED,
	INSN_GOOD_NO_SLOT,	/* simulated: asi->handler does it */
	INSN_GOOD,		/* stepped out of line */
};

enum probe_insn arm_probe_decode_insn(probe_opcode_t insn,
				      struct arch_probe_insn *asi);

#endif /* _ARM64_PROBES_DECODE_INSN_H */
