// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * x86 kprobes backend: the probed instruction.  Reading it (as it was
 * before kprobes wrote into the text), deciding how a hit executes it,
 * building the out-of-line copy it is stepped from, and emulating the
 * instructions that cannot be stepped.
 *
 * Which way an instruction goes is decided once, when its site is
 * prepared, by the first row of kx_rules[] that matches it; the hit path
 * only switches on the result (arch_kprobe_site.how).  A refused
 * instruction's row says why, and arch_kprobe_site_prepare() passes that
 * on in a pr_debug().  Refusing one more instruction is one more row, and
 * one more case in decode_test.c.  The table is written for 64-bit and
 * 32-bit code alike (the decoder knows the mode); rows that hold in
 * 32-bit mode only say so, and decode_test.c checks both modes.
 */

#define pr_fmt(fmt) "kprobes: " fmt

#include <linux/init.h>
#include <linux/kprobes.h>
#include <linux/kprobes_arch.h>
#include <linux/perf_event.h>
#include <linux/uaccess.h>
#include <linux/unaligned.h>

#include <asm/ibt.h>
#include <asm/insn.h>
#include <asm/text-patching.h>

#include "backend.h"

/* ---- Reading the text ------------------------------------------------ */

/*
 * Copy the text at @addr into @buf, as much of MAX_INSN_SIZE as is mapped
 * (an instruction may end right before an unmapped page).  Returns the
 * number of bytes read.
 */
int kx_fetch(unsigned long addr, u8 *buf)
{
	int n = min_t(int, MAX_INSN_SIZE, PAGE_SIZE - offset_in_page(addr));

	if (copy_from_kernel_nofault(buf, (void *)addr, n))
		return 0;
	if (n < MAX_INSN_SIZE &&
	    !copy_from_kernel_nofault(buf + n, (void *)(addr + n), MAX_INSN_SIZE - n))
		n = MAX_INSN_SIZE;
	return n;
}

/**
 * kx_fetch_orig - read text as it was before kprobes changed it
 * @ov: the caller's overlay state, zeroed before the first call of a walk
 * @pos: where to read; successive calls walk forward instruction by
 *	 instruction from the start of a function
 * @buf: MAX_INSN_SIZE bytes
 *
 * Like kx_fetch(), but an armed site's int3 reads as the byte it replaced,
 * and the jump of an optimized site as the bytes it replaced: the jump
 * covers the start of the instructions after the first one, so the
 * overlay remembers it while the walk goes through them.  Called with
 * kprobe_mutex held, so that sites stay as they are.
 *
 * Return: the number of bytes read, 0 if none.
 */
int kx_fetch_orig(struct kx_overlay *ov, unsigned long pos, u8 *buf)
{
	struct kprobe_site *s;
	int n = kx_fetch(pos, buf), i;

	if (!n)
		return 0;
	if (buf[0] == INT3_INSN_OPCODE || buf[0] == JMP32_INSN_OPCODE ||
	    buf[0] == CALL_INSN_OPCODE) {
		preempt_disable();
		s = kprobe_site_find(pos);
		/* ftrace's site, whoever's call is there: its nop */
		if (s && s->arch.how == KX_FTRACE && n >= KX_FENTRY_SIZE) {
			memcpy(buf, x86_nops[KX_FENTRY_SIZE], KX_FENTRY_SIZE);
		} else if (s && s->arch.how != KX_FTRACE) {
			if (kx_jumped(s)) {
				ov->at = pos;
				memcpy(ov->bytes, kx_orig_bytes(s), JMP32_INSN_SIZE);
			} else if (buf[0] == INT3_INSN_OPCODE) {
				buf[0] = s->arch.opcode;
			}
		}
		preempt_enable();
	}
	if (ov->at && pos >= ov->at && pos < ov->at + JMP32_INSN_SIZE) {
		for (i = 0; i < n && pos + i < ov->at + JMP32_INSN_SIZE; i++)
			buf[i] = ov->bytes[pos + i - ov->at];
	}
	return n;
}

/* ---- Classifying: the rule table ------------------------------------- */

/* kx_rule.map: where the opcode byte is. */
enum {
	KX_MAP_ONE,		/* a one-byte opcode */
	KX_MAP_0F,		/* the second byte of a 0f xx opcode */
};

/* kx_rule.prefixes: legacy prefixes, any one of which makes the row match. */
#define KX_PFX_66	BIT(0)		/* operand size */
#define KX_PFX_67	BIT(1)		/* address size */
#define KX_PFX_F2	BIT(2)
#define KX_PFX_F3	BIT(3)
#define KX_PFX_FS	BIT(4)
#define KX_PFX_GS	BIT(5)

/* kx_rule.when: the row only holds ... */
#define KX_IF_IBT	BIT(0)		/* on a kernel with indirect branch tracking */
#define KX_IF_32	BIT(1)		/* in 32-bit mode (i386) */

/*
 * One class of instructions: opcode byte @lo to @hi in @map, whose ModRM
 * byte ANDed with @modrm_mask is @modrm (a mask of 0 takes any, and
 * instructions without ModRM), with one of @prefixes if that is not 0,
 * where @when holds.  @how is what a hit does (KX_STEP and the other
 * values of arch_kprobe_site.how), or KX_REFUSED with the reason in @why.
 */
struct kx_rule {
	u8		map;
	u8		lo, hi;
	u8		modrm_mask, modrm;
	u8		prefixes;
	u8		when;
	u8		how;
	const char	*why;
};

#define KX_ONE(l, h, how)	{ KX_MAP_ONE, l, h, 0, 0, 0, 0, how }
#define KX_0F(l, h, how)	{ KX_MAP_0F, l, h, 0, 0, 0, 0, how }
#define KX_REFUSE(map, l, h, mask, m, pfx, when, why)	\
	{ KX_MAP_##map, l, h, mask, m, pfx, when, KX_REFUSED, why }

/* ModRM masks: the reg field (/digit), and the whole byte. */
#define KX_REG		0x38
#define KX_BYTE		0xff
#define KX_SLASH(n)	((n) << 3)

#define KX_BRANCH_PFX	(KX_PFX_66 | KX_PFX_67 | KX_PFX_FS | KX_PFX_GS)

/*
 * First match wins: the refusals that depend on a prefix or a ModRM come
 * before the rows that give the same opcodes a way to run.  What no row
 * matches is stepped.  Instructions the trap handler emulates either leave
 * the straight line, depend on where they sit, or change IF (a tracked
 * step holds it clear); the rest run from a copy.  Reads of segment
 * registers, moves to %cr/%dr, wrmsr, in/out and the like are copied: at
 * CPL 0 they do the same at any address, and a #GP from a *_safe MSR
 * access goes back to its own exception-table entry (see
 * kprobe_fault_handler()).
 */
static const struct kx_rule kx_rules[] = {
	/* Branches with a prefix that changes them. */
	KX_REFUSE(ONE, 0x70, 0x7f, 0, 0, KX_PFX_66, 0,
		  "jcc with an operand-size prefix: a 16-bit target, or vendors disagree"),
	KX_REFUSE(0F, 0x80, 0x8f, 0, 0, KX_PFX_66, 0,
		  "jcc with an operand-size prefix: a 16-bit target, or vendors disagree"),
	KX_REFUSE(ONE, 0xe8, 0xe9, 0, 0, KX_PFX_66, 0,
		  "call or jmp with an operand-size prefix: a 16-bit target, or vendors disagree"),
	KX_REFUSE(ONE, 0xeb, 0xeb, 0, 0, KX_PFX_66, 0,
		  "jmp with an operand-size prefix: a 16-bit target, or vendors disagree"),
	KX_REFUSE(ONE, 0xe0, 0xe3, 0, 0, KX_PFX_66, 0,
		  "loop or jrcxz with an operand-size prefix: a 16-bit target"),
	KX_REFUSE(ONE, 0xe0, 0xe3, 0, 0, KX_PFX_67, 0,
		  "loop or jrcxz with an address-size prefix: counts in a narrower register"),
	KX_REFUSE(ONE, 0xc2, 0xc3, 0, 0, KX_PFX_66, 0,
		  "ret with an operand-size prefix: pops two bytes"),
	KX_REFUSE(ONE, 0xff, 0xff, KX_REG, KX_SLASH(2), KX_BRANCH_PFX, 0,
		  "indirect call with a size override or %fs/%gs: the trap has no segment bases"),
	KX_REFUSE(ONE, 0xff, 0xff, KX_REG, KX_SLASH(4), KX_BRANCH_PFX, 0,
		  "indirect jmp with a size override or %fs/%gs: the trap has no segment bases"),
	KX_REFUSE(ONE, 0x9d, 0x9d, 0, 0, KX_PFX_66, 0,
		  "popf with a 16-bit operand"),

	/* One-byte opcodes that no copy and no emulation can run. */
	KX_REFUSE(ONE, 0xcf, 0xcf, 0, 0, 0, 0,
		  "iret: returns through a frame the trap has replaced"),
	KX_REFUSE(ONE, 0xcc, 0xce, 0, 0, 0, 0,
		  "int3, int n or into: a trap inside the trap's own handling"),
	KX_REFUSE(ONE, 0xf1, 0xf1, 0, 0, 0, 0,
		  "int1: a debug trap inside the trap's own handling"),
	KX_REFUSE(ONE, 0xf4, 0xf4, 0, 0, 0, 0,
		  "hlt: a step holds IF clear, so nothing would wake the CPU"),
	KX_REFUSE(ONE, 0x9a, 0x9a, 0, 0, 0, 0, "far call: changes %cs"),
	KX_REFUSE(ONE, 0xea, 0xea, 0, 0, 0, 0, "far jmp: changes %cs"),
	KX_REFUSE(ONE, 0xca, 0xcb, 0, 0, 0, 0, "far ret: changes %cs"),
	KX_REFUSE(ONE, 0xff, 0xff, KX_REG, KX_SLASH(3), 0, 0,
		  "far indirect call: changes %cs"),
	KX_REFUSE(ONE, 0xff, 0xff, KX_REG, KX_SLASH(5), 0, 0,
		  "far indirect jmp: changes %cs"),
	KX_REFUSE(ONE, 0x8e, 0x8e, 0, 0, 0, 0,
		  "mov to a segment register: %ss masks interrupts, %fs/%gs is the per-CPU base"),
	KX_REFUSE(ONE, 0xc7, 0xc7, KX_BYTE, 0xf8, 0, 0,
		  "xbegin: its abort path is relative to where it sits"),
	/* Only in 32-bit mode: 64-bit mode has none of them (c4, c5: VEX). */
	KX_REFUSE(ONE, 0x07, 0x07, 0, 0, 0, KX_IF_32, "pop %es: loads a segment register"),
	KX_REFUSE(ONE, 0x17, 0x17, 0, 0, 0, KX_IF_32,
		  "pop %ss: loads a segment register and masks interrupts"),
	KX_REFUSE(ONE, 0x1f, 0x1f, 0, 0, 0, KX_IF_32, "pop %ds: loads a segment register"),
	KX_REFUSE(ONE, 0xc4, 0xc5, 0, 0, 0, KX_IF_32, "les or lds: loads a segment register"),

	/* Two-byte opcodes. */
	KX_REFUSE(0F, 0x05, 0x05, 0, 0, 0, 0, "syscall: enters the kernel again"),
	KX_REFUSE(0F, 0x07, 0x07, 0, 0, 0, 0, "sysret: returns to user mode"),
	KX_REFUSE(0F, 0x34, 0x35, 0, 0, 0, 0,
		  "sysenter or sysexit: switches privilege level"),
	KX_REFUSE(0F, 0x0b, 0x0b, 0, 0, 0, 0,
		  "ud2: BUG() and WARN() find it by its address, which a copy has not"),
	KX_REFUSE(0F, 0xb9, 0xb9, 0, 0, 0, 0,
		  "ud1: BUG() and WARN() find it by its address, which a copy has not"),
	KX_REFUSE(0F, 0xff, 0xff, 0, 0, 0, 0,
		  "ud0: BUG() and WARN() find it by its address, which a copy has not"),
	KX_REFUSE(0F, 0xa1, 0xa1, 0, 0, 0, 0, "pop %fs: loads a segment register"),
	KX_REFUSE(0F, 0xa9, 0xa9, 0, 0, 0, 0,
		  "pop %gs: replaces the trap's per-CPU base"),
	KX_REFUSE(0F, 0xb2, 0xb2, 0, 0, 0, 0, "lss: loads %ss"),
	KX_REFUSE(0F, 0xb4, 0xb5, 0, 0, 0, 0, "lfs or lgs: loads a segment register"),
	KX_REFUSE(0F, 0xaa, 0xaa, 0, 0, 0, 0, "rsm: leaves system management mode"),
	KX_REFUSE(0F, 0x37, 0x37, 0, 0, 0, 0, "getsec: enters a measured environment"),
	KX_REFUSE(0F, 0x01, 0x01, KX_BYTE, 0xf8, 0, 0,
		  "swapgs: swaps the GS base the trap runs on"),
	KX_REFUSE(0F, 0x01, 0x01, KX_BYTE, 0xc2, 0, 0, "vmlaunch: enters a guest"),
	KX_REFUSE(0F, 0x01, 0x01, KX_BYTE, 0xc3, 0, 0, "vmresume: enters a guest"),
	KX_REFUSE(0F, 0x01, 0x01, KX_BYTE, 0xd8, 0, 0, "vmrun: enters a guest"),
	KX_REFUSE(0F, 0x01, 0x01, KX_BYTE, 0xdc, 0, 0,
		  "stgi: sets the global interrupt flag"),
	KX_REFUSE(0F, 0x01, 0x01, KX_BYTE, 0xdd, 0, 0,
		  "clgi: clears the global interrupt flag"),
	KX_REFUSE(0F, 0x01, 0x01, KX_BYTE, 0xc9, 0, 0,
		  "mwait: a step holds IF clear, so no interrupt would wake it"),
	KX_REFUSE(0F, 0x01, 0x01, KX_BYTE, 0xfb, 0, 0,
		  "mwaitx: a step holds IF clear, so no interrupt would wake it"),
	KX_REFUSE(0F, 0x01, 0x01, KX_BYTE, 0xca, KX_PFX_F2 | KX_PFX_F3, 0,
		  "erets or eretu: returns from a FRED event"),
	KX_REFUSE(0F, 0xae, 0xae, 0xf8, 0xd8, KX_PFX_F3, 0,
		  "wrgsbase: replaces the trap's per-CPU base"),
	KX_REFUSE(0F, 0x1e, 0x1e, KX_BYTE, 0xfa, KX_PFX_F3, KX_IF_IBT,
		  "endbr64: an indirect branch must land on it, not on int3"),

	/* Emulated. */
	KX_ONE(0x70, 0x7f, KX_JCC),		/* jcc rel8 */
	KX_0F(0x80, 0x8f, KX_JCC),		/* jcc rel32 */
	KX_ONE(0xeb, 0xeb, KX_JMP),		/* jmp rel8 */
	KX_ONE(0xe9, 0xe9, KX_JMP),		/* jmp rel32 */
	KX_ONE(0xe8, 0xe8, KX_CALL),		/* call rel32 */
	KX_ONE(0xe0, 0xe3, KX_LOOP),		/* loopne, loope, loop, jrcxz */
	KX_ONE(0xc2, 0xc3, KX_RET),		/* ret imm16, ret */
	{ KX_MAP_ONE, 0xff, 0xff, KX_REG, KX_SLASH(2), 0, 0, KX_CALL_IND },
	{ KX_MAP_ONE, 0xff, 0xff, KX_REG, KX_SLASH(4), 0, 0, KX_JMP_IND },
	KX_ONE(0x9d, 0x9d, KX_POPF),
	KX_ONE(0xfa, 0xfa, KX_CLI),
	KX_ONE(0xfb, 0xfb, KX_STI),

	/* Stepped, with the IF bit that pushf stored put right. */
	KX_ONE(0x9c, 0x9c, KX_STEP_PUSHF),
};

/* The legacy prefixes of @insn, as KX_PFX_* bits. */
static u8 kx_prefixes(struct insn *insn)
{
	insn_byte_t p;
	u8 pfx = 0;
	int i;

	for_each_insn_prefix(insn, i, p) {
		switch (p) {
		case 0x66:
			pfx |= KX_PFX_66;
			break;
		case 0x67:
			pfx |= KX_PFX_67;
			break;
		case 0xf2:
			pfx |= KX_PFX_F2;
			break;
		case 0xf3:
			pfx |= KX_PFX_F3;
			break;
		case 0x64:
			pfx |= KX_PFX_FS;
			break;
		case 0x65:
			pfx |= KX_PFX_GS;
			break;
		}
	}
	return pfx;
}

/*
 * The rows that name each opcode, in table order, filled at boot: a
 * lookup reads only those (none for the mov, push, add... most probes
 * land on, a few for a branch).  kx_rule_at[] holds, for each opcode of
 * each map, where its run of row numbers starts in kx_rule_rows[]; the
 * run ends where the next opcode's starts.  Until the index is built,
 * every lookup walks the whole table.
 */
#define KX_RULE_OPS		(2 * 256)
#define KX_RULE_ROWS_MAX	256

static u16 kx_rule_at[KX_RULE_OPS + 1];
static u8 kx_rule_rows[KX_RULE_ROWS_MAX];
static bool kx_rule_index_ready;

static int __init kx_rule_index_init(void)
{
	unsigned int op, i, n = 0;
	const struct kx_rule *r;

	BUILD_BUG_ON(ARRAY_SIZE(kx_rules) > U8_MAX + 1);
	for (op = 0; op < KX_RULE_OPS; op++) {
		kx_rule_at[op] = n;
		for (i = 0; i < ARRAY_SIZE(kx_rules); i++) {
			r = &kx_rules[i];
			if (r->map != op / 256 || op % 256 < r->lo || op % 256 > r->hi)
				continue;
			/* A table this big keeps the walk, which is still right. */
			if (WARN_ON_ONCE(n == KX_RULE_ROWS_MAX))
				return 0;
			kx_rule_rows[n++] = i;
		}
	}
	kx_rule_at[KX_RULE_OPS] = n;
	/* Pairs with kx_rule_find(): the index is whole once this is seen. */
	smp_store_release(&kx_rule_index_ready, true);
	return 0;
}
core_initcall(kx_rule_index_init);

static bool kx_rule_matches(const struct kx_rule *r, u8 map, u8 op, u8 modrm,
			    u8 pfx, u8 when)
{
	return r->map == map && op >= r->lo && op <= r->hi &&
	       (modrm & r->modrm_mask) == r->modrm &&
	       (!r->prefixes || (pfx & r->prefixes)) &&
	       (r->when & when) == r->when;
}

static const struct kx_rule *kx_rule_find(struct insn *insn)
{
	const struct kx_rule *r;
	u8 map, op, modrm = insn->modrm.bytes[0], pfx = kx_prefixes(insn);
	u8 when = (HAS_KERNEL_IBT ? KX_IF_IBT : 0) | (insn->x86_64 ? 0 : KX_IF_32);
	unsigned int i;

	if (insn->opcode.bytes[0] != 0x0f) {
		map = KX_MAP_ONE;
		op = insn->opcode.bytes[0];
	} else if (insn->opcode.nbytes == 2) {
		map = KX_MAP_0F;
		op = insn->opcode.bytes[1];
	} else {
		return NULL;		/* 0f 38 and 0f 3a: no branches there */
	}

	/* Pairs with kx_rule_index_init()'s release. */
	if (smp_load_acquire(&kx_rule_index_ready)) {
		unsigned int at = map * 256 + op;

		for (i = kx_rule_at[at]; i < kx_rule_at[at + 1]; i++) {
			r = &kx_rules[kx_rule_rows[i]];
			if (kx_rule_matches(r, map, op, modrm, pfx, when))
				return r;
		}
		return NULL;
	}
	for (r = kx_rules; r < kx_rules + ARRAY_SIZE(kx_rules); r++) {
		if (kx_rule_matches(r, map, op, modrm, pfx, when))
			return r;
	}
	return NULL;
}

/*
 * sti holds interrupts off for one more instruction, which emulation
 * cannot do: "sti; hlt" (or mwait) would then take the wakeup interrupt
 * before halting, and halt with nothing left to wake it.  Is the
 * instruction at @next one of those?
 */
static bool kx_sti_shadow_needed(unsigned long next)
{
	u8 b[3];

	if (copy_from_kernel_nofault(b, (void *)next, sizeof(b)))
		return true;
	return b[0] == 0xf4 ||					/* hlt */
	       (b[0] == 0x0f && b[1] == 0x01 &&
		(b[2] == 0xc9 || b[2] == 0xfb));		/* mwait(x) */
}

/*
 * jmp/call through a register or memory (ff /4, ff /2).  Decode the
 * operand once so that the trap handler only has to add registers:
 * .target gets the constant part (displacement, or the absolute address of
 * a RIP-relative operand), .base/.index the registers, .cc the scale.
 */
static void kx_indirect(struct arch_kprobe_site *a, struct insn *insn,
			unsigned long next)
{
	insn_byte_t modrm = insn->modrm.bytes[0];
	insn_byte_t rex = insn->rex_prefix.nbytes ? insn->rex_prefix.bytes[0] : 0;
	u8 rm = X86_MODRM_RM(modrm) | (X86_REX_B(rex) ? 8 : 0);

	a->base = KX_NO_REG;
	a->index = KX_NO_REG;
	a->cc = 0;
	a->target = 0;

	if (X86_MODRM_MOD(modrm) == 3) {
		a->base = rm;
		return;
	}

	a->cc = KX_IND_MEM;
	if (insn_rip_relative(insn)) {
		a->target = next + (long)insn->displacement.value;
		return;
	}

	a->target = (long)insn->displacement.value;
	/* 32-bit mode's mod 00, r/m 101: disp32 alone (64-bit's is RIP-relative) */
	if (X86_MODRM_MOD(modrm) == 0 && X86_MODRM_RM(modrm) == 5)
		return;
	if (X86_MODRM_RM(modrm) == 4) {
		insn_byte_t sib = insn->sib.bytes[0];
		u8 idx = X86_SIB_INDEX(sib) | (X86_REX_X(rex) ? 8 : 0);

		/* index 100b without REX.X means "no index" */
		if (idx != 4)
			a->index = idx;
		a->cc |= X86_SIB_SCALE(sib);
		/* base 101b with mod 00 means "disp32, no base" */
		if (X86_SIB_BASE(sib) != 5 || X86_MODRM_MOD(modrm) != 0)
			a->base = X86_SIB_BASE(sib) | (X86_REX_B(rex) ? 8 : 0);
	} else {
		a->base = rm;
	}
}

/**
 * kx_classify - decide how a hit executes an instruction
 * @a: where to record it (how, len, and what emulation needs)
 * @insn: the instruction, decoded
 * @addr: where it sits
 * @why: set to the reason when it is refused, else to NULL
 *
 * Return: 0, or -EINVAL if no probe may sit on it.
 */
int kx_classify(struct arch_kprobe_site *a, struct insn *insn,
		unsigned long addr, const char **why)
{
	unsigned long next = addr + insn->length;
	const struct kx_rule *r;

	a->len = insn->length;
	a->how = KX_STEP;
	*why = NULL;

	if (insn_is_rex2(insn)) {
		*why = "APX (REX2) encoding: the kernel emits none, its branches are not handled";
		return -EINVAL;
	}
	/* VEX/EVEX/XOP encode no branches and nothing that touches IF. */
	if (insn->vex_prefix.nbytes)
		return 0;

	r = kx_rule_find(insn);
	if (!r)
		return 0;
	if (r->how == KX_REFUSED) {
		*why = r->why;
		return -EINVAL;
	}
	if (r->how == KX_STI && kx_sti_shadow_needed(next)) {
		*why = "sti right before hlt or mwait: emulation cannot hold its interrupt shadow";
		return -EINVAL;
	}

	a->how = r->how;
	switch (r->how) {
	case KX_JCC:
		a->cc = insn->opcode.bytes[insn->opcode.nbytes - 1] & 0xf;
		a->target = next + (long)insn->immediate.value;
		break;
	case KX_LOOP:
		a->cc = insn->opcode.bytes[0];
		a->target = next + (long)insn->immediate.value;
		break;
	case KX_JMP:
	case KX_CALL:
		a->target = next + (long)insn->immediate.value;
		break;
	case KX_RET:
		a->ret_pop = insn->opcode.bytes[0] == 0xc2 ?
			     (u16)insn->immediate.value : 0;
		break;
	case KX_CALL_IND:
	case KX_JMP_IND:
		kx_indirect(a, insn, next);
		break;
	}
	return 0;
}

/* ---- The out-of-line copy -------------------------------------------- */

/*
 * Put a copy of the instruction (@orig, decoded as @insn, from @addr) at
 * @img, which will live at @at.  A RIP-relative operand keeps pointing at
 * the same byte.  Returns false if it cannot reach it from there.
 */
bool kx_place_copy(u8 *img, unsigned long at, struct insn *insn,
		   const u8 *orig, unsigned long addr)
{
	long disp;

	memcpy(img, orig, insn->length);
	if (!insn_rip_relative(insn))
		return true;

	disp = (long)insn->displacement.value + (long)(addr - at);
	if (disp != (s32)disp)
		return false;
	put_unaligned_le32((s32)disp, img + insn_offset_displacement(insn));
	return true;
}

/* A jmp or call rel32 at @img (living at @at) to @dest; false if too far. */
static bool kx_place_rel32(u8 *img, u8 opcode, unsigned long at,
			   unsigned long dest)
{
	long rel = (long)(dest - (at + JMP32_INSN_SIZE));

	BUILD_BUG_ON(JMP32_INSN_SIZE != CALL_INSN_SIZE);
	if (rel != (s32)rel)
		return false;
	img[0] = opcode;
	put_unaligned_le32((s32)rel, img + 1);
	return true;
}

bool kx_place_jmp(u8 *img, unsigned long at, unsigned long dest)
{
	return kx_place_rel32(img, JMP32_INSN_OPCODE, at, dest);
}

/*
 * Fill a new slot for a stepped instruction:
 *   KX_TRAP_COPY:  <copy> call kx_step_entry    (the tracked step)
 *   KX_LOOSE_COPY: <copy> jmp <addr + len>      (the untracked one)
 * and int3 everywhere else.  The slot is read-only, so the image is built
 * here and written with text_poke_copy().
 */
int kx_build_slot(struct arch_kprobe_site *a, struct insn *insn,
		  const u8 *orig, unsigned long addr)
{
	u8 img[KPROBE_SLOT_SIZE];
	unsigned long base;
	u8 *slot;

	BUILD_BUG_ON(KX_TRAP_COPY + MAX_INSN_SIZE + CALL_INSN_SIZE > KX_LOOSE_COPY);
	BUILD_BUG_ON(KX_LOOSE_COPY + MAX_INSN_SIZE + JMP32_INSN_SIZE > KPROBE_SLOT_SIZE);

	slot = kprobe_slot_alloc();
	if (!slot)
		return -ENOMEM;
	base = (unsigned long)slot;

	memset(img, INT3_INSN_OPCODE, sizeof(img));
	if (!kx_place_copy(img + KX_TRAP_COPY, base + KX_TRAP_COPY,
			   insn, orig, addr) ||
	    !kx_place_rel32(img + KX_TRAP_COPY + insn->length, CALL_INSN_OPCODE,
			    base + KX_TRAP_COPY + insn->length,
			    (unsigned long)kx_step_entry) ||
	    !kx_place_copy(img + KX_LOOSE_COPY, base + KX_LOOSE_COPY,
			   insn, orig, addr) ||
	    !kx_place_jmp(img + KX_LOOSE_COPY + insn->length,
			  base + KX_LOOSE_COPY + insn->length,
			  addr + insn->length)) {
		kprobe_slot_free(slot);
		return -EINVAL;
	}

	text_poke_copy(slot, img, sizeof(img));
	/* A trace decoder (Intel PT) must see what the slot now holds. */
	perf_event_text_poke(slot, NULL, 0, img, sizeof(img));
	a->slot = slot;
	return 0;
}

/* ---- Where instructions start ---------------------------------------- */

/**
 * arch_kprobe_on_insn_boundary - does an instruction start at @addr?
 * @addr: the address to check
 * @offset: its distance from the start of its function
 *
 * Decodes forward from the start of the function, reading the text as it
 * was before kprobes wrote breakpoints and jumps into it (kx_fetch_orig()).
 * The caller holds kprobe_mutex, so those sites stay put while we look at
 * them.
 *
 * Return: true if decoding lands exactly on @addr.
 */
bool arch_kprobe_on_insn_boundary(unsigned long addr, unsigned long offset)
{
	unsigned long pos = addr - offset;
	struct kx_overlay ov = {};
	u8 buf[MAX_INSN_SIZE];
	struct insn insn;
	int len;

	while (pos < addr) {
		len = kx_fetch_orig(&ov, pos, buf);
		if (!len)
			return false;

		/*
		 * An int3 that is not a kprobe: ftrace may be rewriting its
		 * call site right now (text_poke_bp() leaves int3 in front
		 * of it for a while).  The site is 5 bytes either way.
		 */
		if (buf[0] == INT3_INSN_OPCODE && ftrace_location(pos) == pos) {
			pos += KX_FENTRY_SIZE;
			continue;
		}

		if (insn_decode(&insn, buf, len, INSN_MODE_KERN) < 0 ||
		    !insn.length)
			return false;
		pos += insn.length;
	}
	return pos == addr;
}

/* ---- Emulation (the hit path) ---------------------------------------- */

/* pt_regs offsets of the general registers, in encoding order. */
static const u8 kx_gpr_offset[] = {
	offsetof(struct pt_regs, ax),  offsetof(struct pt_regs, cx),
	offsetof(struct pt_regs, dx),  offsetof(struct pt_regs, bx),
	offsetof(struct pt_regs, sp),  offsetof(struct pt_regs, bp),
	offsetof(struct pt_regs, si),  offsetof(struct pt_regs, di),
#ifdef CONFIG_X86_64
	offsetof(struct pt_regs, r8),  offsetof(struct pt_regs, r9),
	offsetof(struct pt_regs, r10), offsetof(struct pt_regs, r11),
	offsetof(struct pt_regs, r12), offsetof(struct pt_regs, r13),
	offsetof(struct pt_regs, r14), offsetof(struct pt_regs, r15),
#endif
};

static nokprobe_inline unsigned long kx_gpr(struct pt_regs *regs, u8 nr)
{
	return *(unsigned long *)((u8 *)regs + kx_gpr_offset[nr % ARRAY_SIZE(kx_gpr_offset)]);
}

/*
 * Destination of an indirect branch.  The operand is read with an
 * exception-table protected load; false if it cannot be read.
 */
static nokprobe_inline bool kx_indirect_dest(struct arch_kprobe_site *a,
					     struct pt_regs *regs,
					     unsigned long *dest)
{
	unsigned long ea;

	if (!(a->cc & KX_IND_MEM)) {
		*dest = kx_gpr(regs, a->base);
		return true;
	}

	ea = a->target;
	if (a->base != KX_NO_REG)
		ea += kx_gpr(regs, a->base);
	if (a->index != KX_NO_REG)
		ea += kx_gpr(regs, a->index) << (a->cc & 3);

	__get_kernel_nofault(dest, (void *)ea, unsigned long, unreadable);
	return true;
unreadable:
	return false;
}

/* The flags popf can change at CPL 0; RF is cleared, VM, VIF, VIP kept. */
#define KX_POPF_FLAGS	(X86_EFLAGS_CF | X86_EFLAGS_PF | X86_EFLAGS_AF | \
			 X86_EFLAGS_ZF | X86_EFLAGS_SF | X86_EFLAGS_TF | \
			 X86_EFLAGS_IF | X86_EFLAGS_DF | X86_EFLAGS_OF | \
			 X86_EFLAGS_IOPL | X86_EFLAGS_NT | X86_EFLAGS_AC | \
			 X86_EFLAGS_ID)

/*
 * Execute an emulated instruction of @s on @regs, as the CPU would have at
 * s->addr.  Pushes go below regs->sp: the int3 entry code leaves a gap
 * there for exactly this.  Returns false if it could not be done.
 */
bool kx_emulate(struct kprobe_site *s, struct pt_regs *regs)
{
	struct arch_kprobe_site *a = &s->arch;
	unsigned long next = (unsigned long)s->addr + a->len;
	unsigned long dest;
	bool taken;

	switch (a->how) {
	case KX_JMP:
		int3_emulate_jmp(regs, a->target);
		return true;
	case KX_CALL:
		int3_emulate_push(regs, next);
		int3_emulate_jmp(regs, a->target);
		return true;
	case KX_JCC:
		int3_emulate_jcc(regs, a->cc, next, a->target - next);
		return true;
	case KX_LOOP:
		if (a->cc == 0xe3) {			/* jrcxz */
			taken = !regs->cx;
		} else {
			regs->cx--;
			taken = regs->cx != 0;
			if (a->cc == 0xe0)		/* loopne */
				taken = taken && !(regs->flags & X86_EFLAGS_ZF);
			else if (a->cc == 0xe1)		/* loope */
				taken = taken && (regs->flags & X86_EFLAGS_ZF);
		}
		int3_emulate_jmp(regs, taken ? a->target : next);
		return true;
	case KX_RET:
		int3_emulate_ret(regs);
		regs->sp += a->ret_pop;
		return true;
	case KX_JMP_IND:
	case KX_CALL_IND:
		if (!kx_indirect_dest(a, regs, &dest))
			return false;
		if (a->how == KX_CALL_IND)
			int3_emulate_push(regs, next);
		int3_emulate_jmp(regs, dest);
		return true;
	case KX_CLI:
		regs->flags &= ~X86_EFLAGS_IF;
		break;
	case KX_STI:
		regs->flags |= X86_EFLAGS_IF;
		break;
	case KX_POPF:
		dest = int3_emulate_pop(regs);
		regs->flags = (regs->flags & ~(KX_POPF_FLAGS | X86_EFLAGS_RF)) |
			      (dest & KX_POPF_FLAGS);
		break;
	default:
		return false;
	}
	int3_emulate_jmp(regs, next);
	return true;
}

NOKPROBE_SYMBOL(kx_emulate);
