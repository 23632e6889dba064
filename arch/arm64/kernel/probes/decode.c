// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * arm64 probes decoder: which A64 instructions a probe may sit on, and how
 * a hit executes each one.
 *
 * Most instructions run unchanged from an out-of-line copy, after which
 * the CPU comes back to the probes code (ARM64_PROBE_STEP).  A copy runs
 * at another address, though, so whatever reads the PC is simulated
 * instead: branches, ADR/ADRP and literal loads.  So are MRS and MSR of
 * DAIF, since a step runs with interrupts masked and would read that mask
 * rather than the probed code's, and the end of the step puts the probed
 * code's mask back over whatever the copy wrote.  And some instructions
 * can be neither: their refusals below give one reason each.  The
 * decoding is done once, when a site is prepared; the hit path only
 * switches on the result.
 */

#define pr_fmt(fmt) "kprobes: " fmt

#include <linux/bits.h>
#include <linux/bitfield.h>
#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/ptrace.h>
#include <asm/daifflags.h>
#include <asm/insn.h>

#include "decode-insn.h"

/* One A64 encoding class: @insn & @mask == @value. */
struct arm64_probe_rule {
	u32		mask;
	u32		value;
	u8		how;
	const char	*why;		/* for ARM64_PROBE_REFUSED */
};

#define HINT(imm)	(0xd503201fU | ((imm) << 5))

/* First match wins: the exact encodings come before the classes. */
static const struct arm64_probe_rule arm64_probe_rules[] = {
	/* Hints that do nothing a probe must reproduce. */
	{ 0xffffffff, HINT(0),    ARM64_PROBE_NOP },	/* NOP */
	{ 0xffffff3f, HINT(32),   ARM64_PROBE_NOP },	/* BTI, BTI c/j/jc */
	/* CSDB: skipping it would drop the barrier; the copy keeps it. */
	{ 0xffffffff, HINT(20),   ARM64_PROBE_STEP },
	{ 0xffffffff, HINT(25),   ARM64_PROBE_PACIASP },
	{ 0xffffffff, HINT(29),   ARM64_PROBE_AUTIASP },
	{ 0xffe0ffe0, 0xaa0003e0, ARM64_PROBE_MOV },
	/* Immediate branches. */
	{ 0xfc000000, 0x14000000, ARM64_PROBE_B },
	{ 0xfc000000, 0x94000000, ARM64_PROBE_BL },
	{ 0xff000000, 0x54000000, ARM64_PROBE_BCOND },
	{ 0x7f000000, 0x34000000, ARM64_PROBE_CBZ },
	{ 0x7f000000, 0x35000000, ARM64_PROBE_CBNZ },
	{ 0x7f000000, 0x36000000, ARM64_PROBE_TBZ },
	{ 0x7f000000, 0x37000000, ARM64_PROBE_TBNZ },
	/* Register branches, without pointer authentication. */
	{ 0xfffffc1f, 0xd61f0000, ARM64_PROBE_BR },
	{ 0xfffffc1f, 0xd63f0000, ARM64_PROBE_BLR },
	{ 0xfffffc1f, 0xd65f0000, ARM64_PROBE_RET },
	/* PC-relative addresses and literal loads. */
	{ 0x1f000000, 0x10000000, ARM64_PROBE_ADR },	/* ADR, ADRP */
	{ 0xff000000, 0x18000000, ARM64_PROBE_LDR_W },
	{ 0xff000000, 0x58000000, ARM64_PROBE_LDR_X },
	{ 0xff000000, 0x98000000, ARM64_PROBE_LDRSW },
	{ 0xff000000, 0xd8000000, ARM64_PROBE_NOP },	/* PRFM (literal) */
	{ 0xffffffe0, 0xd53b4220, ARM64_PROBE_MRS_DAIF },
	/* Interrupt masking, local_irq_*()'s: the step masks, then unmasks. */
	{ 0xfffff0ff, 0xd50340df, ARM64_PROBE_DAIFSET },
	{ 0xfffff0ff, 0xd50340ff, ARM64_PROBE_DAIFCLR },
	{ 0xffffffe0, 0xd51b4220, ARM64_PROBE_MSR_DAIF },
	/* MSR NZCV: the end of the step keeps the flags the copy wrote. */
	{ 0xffffffe0, 0xd51b4200, ARM64_PROBE_STEP },

	/* Refused. */
	{ 0x3b000000, 0x18000000, ARM64_PROBE_REFUSED,
	  "FP/SIMD literal load (PC-relative, into a vector register)" },
	{ 0x3f800000, 0x08000000, ARM64_PROBE_REFUSED,
	  "exclusive load/store: the trap clears the exclusive monitor" },
	{ 0xfe000000, 0xd6000000, ARM64_PROBE_REFUSED,
	  "authenticated branch, ERET or DRPS: needs keys or state a copy has not" },
	{ 0xff000000, 0xd4000000, ARM64_PROBE_REFUSED,
	  "exception-generating instruction (SVC, HVC, SMC, BRK, HLT)" },
	{ 0xfff8f01f, 0xd500401f, ARM64_PROBE_REFUSED,
	  "MSR to a PSTATE field but DAIF (SPSel, PAN...): changes how the trap runs" },
	{ 0xfff0f000, 0xd5104000, ARM64_PROBE_REFUSED,
	  "MSR to a register the trap saves or restores (ELR, SPSR, SP_EL0, PMR...)" },
	{ 0xffffffc0, 0xd5384000, ARM64_PROBE_REFUSED,
	  "MRS of SPSR_EL1 or ELR_EL1: holds the trap's state, not the probed code's" },
	{ 0xffff0000, 0x00000000, ARM64_PROBE_REFUSED,
	  "UDF: permanently undefined" },
	{ 0x3b200c00, 0x19000400, ARM64_PROBE_REFUSED,
	  "memory copy or set (CPY*, SET*): its three parts must run back to back" },
};

/* The signed field of @insn at bits [@lo, @lo + @bits), times @scale. */
static long arm64_probe_simm(u32 insn, unsigned int lo, unsigned int bits,
			     unsigned int scale)
{
	return sign_extend64((insn >> lo) & GENMASK(bits - 1, 0), bits - 1) * scale;
}

enum arm64_probe_how arm64_probe_decode(u32 insn, unsigned long pc,
					struct arm64_probe_insn *d,
					const char **why)
{
	const struct arm64_probe_rule *r;
	long imm;

	*d = (struct arm64_probe_insn){ .insn = insn, .how = ARM64_PROBE_STEP };
	*why = NULL;
	for (r = arm64_probe_rules; r < arm64_probe_rules + ARRAY_SIZE(arm64_probe_rules); r++) {
		if ((insn & r->mask) == r->value) {
			d->how = r->how;
			*why = r->why;
			break;
		}
	}

	switch (d->how) {
	case ARM64_PROBE_B:
	case ARM64_PROBE_BL:
		d->target = pc + arm64_probe_simm(insn, 0, 26, 4);
		break;
	case ARM64_PROBE_BCOND:
		d->target = pc + arm64_probe_simm(insn, 5, 19, 4);
		d->cond = insn & 0xf;
		break;
	case ARM64_PROBE_CBZ:
	case ARM64_PROBE_CBNZ:
		d->target = pc + arm64_probe_simm(insn, 5, 19, 4);
		d->reg = insn & 0x1f;
		d->cond = !!(insn & BIT(31));
		break;
	case ARM64_PROBE_TBZ:
	case ARM64_PROBE_TBNZ:
		d->target = pc + arm64_probe_simm(insn, 5, 14, 4);
		d->reg = insn & 0x1f;
		d->cond = ((insn >> 26) & 0x20) | ((insn >> 19) & 0x1f);
		break;
	case ARM64_PROBE_BR:
	case ARM64_PROBE_BLR:
	case ARM64_PROBE_RET:
		d->reg = (insn >> 5) & 0x1f;
		break;
	case ARM64_PROBE_ADR:
		/* immhi:immlo, in bytes (ADR) or 4 KiB pages (ADRP). */
		imm = (arm64_probe_simm(insn, 5, 19, 1) << 2) | ((insn >> 29) & 3);
		if (insn & BIT(31))
			d->target = (pc & ~0xfffUL) + (imm << 12);
		else
			d->target = pc + imm;
		d->reg = insn & 0x1f;
		break;
	case ARM64_PROBE_LDR_W:
	case ARM64_PROBE_LDR_X:
	case ARM64_PROBE_LDRSW:
		d->target = pc + arm64_probe_simm(insn, 5, 19, 4);
		d->reg = insn & 0x1f;
		break;
	case ARM64_PROBE_MRS_DAIF:
	case ARM64_PROBE_MSR_DAIF:
		d->reg = insn & 0x1f;
		break;
	case ARM64_PROBE_DAIFSET:
	case ARM64_PROBE_DAIFCLR:
		d->cond = (insn >> 8) & 0xf;
		break;
	case ARM64_PROBE_MOV:
		d->reg = insn & 0x1f;
		d->cond = (insn >> 16) & 0x1f;
		break;
	default:
		break;
	}
	return d->how;
}

NOKPROBE_SYMBOL(arm64_probe_decode);

/*
 * PACIASP and AUTIASP are PACIA1716 and AUTIA1716 with the link register
 * and the stack pointer as operands.  Those two are hints too: where the
 * CPU has no pointer authentication, or the kernel does not use it, they
 * do nothing, as the probed instruction would have done.  The key is the
 * one the probed code runs with: the trap came from the same task at the
 * same exception level.  A failed AUTIASP on a CPU with FPAC faults here
 * instead of at the probed address.
 */
static nokprobe_inline u64 arm64_probe_pac(u64 ptr, u64 mod, bool auth)
{
	register u64 x17 asm("x17") = ptr;
	register u64 x16 asm("x16") = mod;

	if (auth)
		asm volatile("hint #12" : "+r" (x17) : "r" (x16));
	else
		asm volatile("hint #8" : "+r" (x17) : "r" (x16));
	return x17;
}

/* Register @n of @regs as an operand: 31 is the zero register here. */
static nokprobe_inline u64 arm64_probe_reg(struct pt_regs *regs, u8 n)
{
	return n < 31 ? regs->regs[n] : 0;
}

static nokprobe_inline void arm64_probe_set_reg(struct pt_regs *regs, u8 n,
						u64 val)
{
	if (n < 31)
		regs->regs[n] = val;
}

void arm64_probe_simulate(const struct arm64_probe_insn *d,
			  struct pt_regs *regs)
{
	unsigned long pc = regs->pc, next = pc + AARCH64_INSN_SIZE;
	pstate_check_t *check;
	bool taken;
	u64 val;

	/*
	 * The branch type a BTI landing pad is checked against: the one the
	 * trap was taken with is the probed instruction's own (BRK accepts
	 * any), and only BR and BLR leave one for the next.
	 */
	regs->pstate &= ~PSR_BTYPE_MASK;
	switch (d->how) {
	case ARM64_PROBE_BL:
		regs->regs[30] = next;
		fallthrough;
	case ARM64_PROBE_B:
		next = d->target;
		break;
	case ARM64_PROBE_BCOND:
		check = aarch32_opcode_cond_checks[d->cond];
		if (check(regs->pstate))
			next = d->target;
		break;
	case ARM64_PROBE_CBZ:
	case ARM64_PROBE_CBNZ:
		val = arm64_probe_reg(regs, d->reg);
		if (!d->cond)
			val = (u32)val;
		taken = d->how == ARM64_PROBE_CBZ ? !val : !!val;
		if (taken)
			next = d->target;
		break;
	case ARM64_PROBE_TBZ:
	case ARM64_PROBE_TBNZ:
		val = arm64_probe_reg(regs, d->reg) & BIT_ULL(d->cond);
		taken = d->how == ARM64_PROBE_TBZ ? !val : !!val;
		if (taken)
			next = d->target;
		break;
	case ARM64_PROBE_BLR:
		val = arm64_probe_reg(regs, d->reg);
		regs->regs[30] = next;
		next = val;
		regs->pstate |= PSR_BTYPE_C;
		break;
	case ARM64_PROBE_BR:
		next = arm64_probe_reg(regs, d->reg);
		/*
		 * A BR may land on a BTI c as well as a BTI j when it comes
		 * from an unguarded page, or through x16 or x17.
		 */
		regs->pstate |= !d->guarded || d->reg == 16 || d->reg == 17 ?
				PSR_BTYPE_JC : PSR_BTYPE_J;
		break;
	case ARM64_PROBE_RET:
		next = arm64_probe_reg(regs, d->reg);
		break;
	case ARM64_PROBE_ADR:
		arm64_probe_set_reg(regs, d->reg, d->target);
		break;
	case ARM64_PROBE_LDR_W:
		arm64_probe_set_reg(regs, d->reg, *(u32 *)d->target);
		break;
	case ARM64_PROBE_LDR_X:
		arm64_probe_set_reg(regs, d->reg, *(u64 *)d->target);
		break;
	case ARM64_PROBE_LDRSW:
		arm64_probe_set_reg(regs, d->reg, (s64)*(s32 *)d->target);
		break;
	case ARM64_PROBE_MRS_DAIF:
		arm64_probe_set_reg(regs, d->reg, regs->pstate & DAIF_MASK);
		break;
	/* D, A, I and F are bits 3 to 0 of the immediate, 9 to 6 of PSTATE. */
	case ARM64_PROBE_DAIFSET:
		regs->pstate |= (u64)d->cond << 6;
		break;
	case ARM64_PROBE_DAIFCLR:
		regs->pstate &= ~((u64)d->cond << 6);
		break;
	case ARM64_PROBE_MSR_DAIF:
		regs->pstate = (regs->pstate & ~DAIF_MASK) |
			       (arm64_probe_reg(regs, d->reg) & DAIF_MASK);
		break;
	case ARM64_PROBE_MOV:
		arm64_probe_set_reg(regs, d->reg, arm64_probe_reg(regs, d->cond));
		break;
	case ARM64_PROBE_PACIASP:
	case ARM64_PROBE_AUTIASP:
		regs->regs[30] = arm64_probe_pac(regs->regs[30], regs->sp,
						 d->how == ARM64_PROBE_AUTIASP);
		break;
	default:	/* ARM64_PROBE_NOP */
		break;
	}
	regs->pc = next;
}

NOKPROBE_SYMBOL(arm64_probe_simulate);

#ifdef CONFIG_UPROBES
/*
 * uprobes' simulation: decoded at each hit, since uprobes keeps only the
 * handler.  Its pc is the user address the instruction came from.
 */
static void arm64_uprobe_simulate(u32 insn, long addr, struct pt_regs *regs)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	struct arm64_probe_insn d;
	const char *why;

	/* Task context, after the handlers: the mmap lock may be taken. */
	if (arm64_probe_decode(insn, addr, &d, &why) == ARM64_PROBE_BR &&
	    system_supports_bti()) {
		mmap_read_lock(mm);
		vma = vma_lookup(mm, addr);
		d.guarded = vma && (vma->vm_flags & VM_ARM64_BTI);
		mmap_read_unlock(mm);
	}
	arm64_probe_simulate(&d, regs);
}

/**
 * arm_probe_decode_insn() - may uprobes probe @insn, and how?
 * @insn: the instruction
 * @asi: where to put the simulation handler
 *
 * Literal loads, MRS and MSR of DAIF and PACIASP/AUTIASP are simulated
 * for kprobes with kernel memory, the kernel's mask and the kernel's key:
 * not for user space, where they are refused or stepped.
 *
 * Return: INSN_REJECTED, INSN_GOOD_NO_SLOT (simulated) or INSN_GOOD.
 */
enum probe_insn arm_probe_decode_insn(probe_opcode_t insn,
				      struct arch_probe_insn *asi)
{
	struct arm64_probe_insn d;
	const char *why;

	switch (arm64_probe_decode(insn, 0, &d, &why)) {
	case ARM64_PROBE_STEP:
	case ARM64_PROBE_PACIASP:
	case ARM64_PROBE_AUTIASP:
		return INSN_GOOD;
	case ARM64_PROBE_REFUSED:
	case ARM64_PROBE_LDR_W:
	case ARM64_PROBE_LDR_X:
	case ARM64_PROBE_LDRSW:
	case ARM64_PROBE_MRS_DAIF:
	case ARM64_PROBE_DAIFSET:
	case ARM64_PROBE_DAIFCLR:
	case ARM64_PROBE_MSR_DAIF:
		return INSN_REJECTED;
	default:
		asi->handler = arm64_uprobe_simulate;
		return INSN_GOOD_NO_SLOT;
	}
}
#endif /* CONFIG_UPROBES */
