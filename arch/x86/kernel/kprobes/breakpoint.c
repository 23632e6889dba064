// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * x86-64 kprobes backend: breakpoint sites.
 *
 * A site is armed by writing int3 over the first byte of the probed
 * instruction.  When a CPU reaches it, kprobe_int3_handler() runs the
 * pre_handlers (through the core) and then has to execute the instruction
 * that the int3 covers.  There are two ways of doing that, chosen once, when
 * the site is prepared:
 *
 *  - Emulation, for instructions whose effect depends on where they sit or
 *    which leave the straight line: relative jmp/jcc/call/loop/jrcxz, ret,
 *    and jmp/call through a register or memory.  The trap handler computes
 *    the new %rip (and pushes or pops the return address) itself.
 *
 *  - Stepping out of line, for everything else.  A slot near kernel text
 *    holds a copy of the instruction, its RIP-relative displacement (if
 *    any) rewritten so that it still reaches the same byte, followed by
 *    a call to kx_step_entry (step_entry.S).  The trap handler points
 *    regs->ip at the copy and returns; the copy runs in the probed
 *    context, and the call saves the registers and comes back to
 *    kx_step_done(), which runs the post_handlers and resumes after the
 *    original instruction.  IF is cleared in the probed context's flags
 *    for the duration, so no interrupt (and no preemption) can come
 *    between the trap and the call; only NMIs and machine checks can.
 *
 *  - Boosting, for stepped instructions when no probe at the site has a
 *    post_handler: the slot holds a second copy followed by a jmp back to
 *    the original text, and the trap handler sends the CPU there and is
 *    done: one trap per hit.  The copy runs with the probed context's
 *    flags untouched, interrupts included; the core frees a slot only when
 *    no CPU (or, on a preemptible kernel, no preempted task) can still be
 *    in it (see kprobe_slot_free()).  Instructions with an exception-table
 *    entry are never boosted.
 *
 *  - Jump optimization (detour.c) replaces the int3 of a qualifying site with
 *    a jmp to a detour.  While a site is on its way there or back
 *    (KSITE_OPT_READY), a breakpoint hit runs the detour's copy of the
 *    whole region, like a boosted hit runs its slot's copy.
 *
 * What a CPU is doing with a hit lives in a small per-CPU stack of frames.
 * A frame is pushed for every hit that has to come back (handlers running
 * or a step in flight) and popped when the hit is over.  Nesting comes from
 * two sources only: a handler that reaches another probe (that hit is
 * counted as missed and only executes its instruction) and an NMI or #MC
 * that reaches a probe while this CPU is inside one.  Missed hits never run
 * handlers, so they never nest further by themselves; an NMI cannot nest in
 * an NMI.  That bounds the depth by four: a hit, a missed hit from its
 * handlers, one from an NMI, one from a #MC.
 *
 * Should the stack still be full (it cannot, short of a bug elsewhere), a
 * hit is treated as missed and its instruction is run without a frame:
 * emulated instructions need none, and the others run the boosted copy.
 * For an instruction that is not boostable (it has an exception-table
 * entry) that is only done with interrupts already off there, which every
 * context that can hit a probe while the stack is in use has (the int3
 * handler, a step, NMI, #MC); otherwise the hit is refused (the trap is
 * reported as not ours and the kernel dies on it).
 *
 * Nothing on the hit path takes a lock or allocates, and everything it runs
 * is NOKPROBE or always inlined.
 */

#define pr_fmt(fmt) "kprobes: " fmt

#include <linux/kprobes.h>
#include <linux/kprobes_arch.h>
#include <linux/export.h>
#include <linux/extable.h>
#include <linux/memory.h>
#include <linux/preempt.h>
#include <linux/lockdep.h>
#include <linux/uaccess.h>
#include <linux/unaligned.h>
#include <linux/sched.h>
#include <linux/ftrace.h>
#include <linux/hardirq.h>
#include <linux/irqflags.h>
#include <linux/perf_event.h>
#include <linux/set_memory.h>

#include <asm/alternative.h>
#include <asm/nops.h>
#include <asm/text-patching.h>
#include <asm/insn.h>
#include <asm/ibt.h>
#include <asm/extable.h>
#include <linux/processor.h>
#include <asm/traps.h>

#include "backend.h"

/* ---- Per-CPU bookkeeping ------------------------------------------- */

#define KX_NEST		4

enum {
	KX_FRAME_FREE,		/* not in use (also what a stale frame reads as) */
	KX_FRAME_BUSY,		/* handlers or emulation running for this hit */
	KX_FRAME_STEPPING,	/* the out-of-line copy is executing */
	KX_FRAME_FAULT,		/* a fault_handler runs (CONFIG_KPROBES_COMPAT) */
};

struct kx_frame {
	struct kprobe_site	*site;
	struct kprobe		*prev;		/* current_kprobe before the hit */
	struct kprobe		*solo;		/* kprobe_site_solo() at the hit */
	unsigned long		if_flag;	/* X86_EFLAGS_IF of the probed context */
	unsigned int		ctx;		/* irq_count() of the handlers */
	u8			phase;
	bool			missed;		/* a re-entry: no handlers */
};

struct kx_cpu {
	unsigned int		depth;
	struct kx_frame		frame[KX_NEST];
};

static DEFINE_PER_CPU(struct kx_cpu, kx_cpu);

/* The probe being handled on this CPU (<linux/kprobes.h>); the hits keep it. */
DEFINE_PER_CPU(struct kprobe *, current_kprobe);
EXPORT_PER_CPU_SYMBOL_GPL(current_kprobe);

/*
 * Only NMIs and machine checks can interleave with the code below on the
 * same CPU, and they always leave the depth as they found it.  A frame is
 * reserved before it is filled, and a frame only starts to matter to a
 * nested trap once its phase is set, which is done last.
 */
static nokprobe_inline struct kx_frame *kx_push(struct kx_cpu *c,
						struct kprobe_site *s,
						struct kprobe *prev, bool missed)
{
	unsigned int d = c->depth;
	struct kx_frame *f;

	if (d >= KX_NEST)
		return NULL;
	c->depth = d + 1;
	barrier();
	f = &c->frame[d];
	f->site = s;
	f->prev = prev;
	f->solo = NULL;
	f->missed = missed;
	f->if_flag = 0;
	f->ctx = irq_count();
	barrier();
	f->phase = KX_FRAME_BUSY;
	return f;
}

static nokprobe_inline void kx_pop(struct kx_cpu *c, struct kx_frame *f)
{
	f->phase = KX_FRAME_FREE;
	__this_cpu_write(current_kprobe, f->prev);
	barrier();
	c->depth--;
}

static nokprobe_inline struct kx_frame *kx_top(struct kx_cpu *c)
{
	return c->depth ? &c->frame[c->depth - 1] : NULL;
}

/*
 * A frame around handlers run from elsewhere than the trap (the ftrace
 * path of a KSITE_FAULT site), so that kprobe_fault_handler() knows
 * their faults.  NULL when the stack is full: then it will not.
 */
struct kx_frame *kx_frame_enter(struct kprobe_site *s)
{
	return kx_push(this_cpu_ptr(&kx_cpu), s, kprobe_running(), false);
}

NOKPROBE_SYMBOL(kx_frame_enter);

void kx_frame_leave(struct kx_frame *f)
{
	if (f)
		kx_pop(this_cpu_ptr(&kx_cpu), f);
}

NOKPROBE_SYMBOL(kx_frame_leave);

/* The return address of the call that ends the tracked copy of @s. */
static nokprobe_inline unsigned long kx_step_end(struct kprobe_site *s)
{
	return (unsigned long)s->arch.slot + KX_TRAP_COPY + s->arch.len +
	       CALL_INSN_SIZE;
}

/* ---- Reading and classifying the probed instruction ----------------- */

/*
 * Copy the text at @addr into @buf, as much of MAX_INSN_SIZE as is mapped
 * (an instruction may end right before an unmapped page).  Returns the
 * number of bytes read.
 */
static int kx_fetch(unsigned long addr, u8 *buf)
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
	if (buf[0] == INT3_INSN_OPCODE || buf[0] == JMP32_INSN_OPCODE) {
		preempt_disable();
		s = kprobe_site_find(pos);
		/* our breakpoint on ftrace's nop */
		if (s && s->arch.how == KX_FTRACE && buf[0] == INT3_INSN_OPCODE) {
			buf[0] = x86_nops[KX_FENTRY_SIZE][0];
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

static bool kx_has_prefix(struct insn *insn, insn_byte_t want)
{
	insn_byte_t p;
	int i;

	for_each_insn_prefix(insn, i, p)
		if (p == want)
			return true;
	return false;
}

/*
 * A relative branch: record its destination.  Operand-size prefixes are
 * refused, since vendors disagree on what 0x66 does to a 64-bit branch,
 * and so are 32-bit address-size prefixes on loop/jrcxz (they would count
 * in %ecx).
 */
static int kx_relative(struct arch_kprobe_site *a, struct insn *insn,
		       unsigned long next, u8 how, u8 cc)
{
	if (kx_has_prefix(insn, 0x66) ||
	    (how == KX_LOOP && insn->addr_bytes != 8))
		return -EINVAL;
	a->how = how;
	a->cc = cc;
	a->target = next + (long)insn->immediate.value;
	return 0;
}

/*
 * jmp/call through a register or memory (ff /4, ff /2).  Decode the
 * operand once so that the trap handler only has to add registers:
 * .target gets the constant part (displacement, or the absolute address of
 * a RIP-relative operand), .base/.index the registers, .cc the scale.
 * Operand- and address-size overrides and %fs/%gs-based operands are
 * refused: the kernel does not emit them for branches, and supporting them
 * would need segment bases on the hit path.
 */
static int kx_indirect(struct arch_kprobe_site *a, struct insn *insn,
		       unsigned long next, u8 how)
{
	insn_byte_t modrm = insn->modrm.bytes[0];
	insn_byte_t rex = insn->rex_prefix.nbytes ? insn->rex_prefix.bytes[0] : 0;
	u8 rm = X86_MODRM_RM(modrm) | (X86_REX_B(rex) ? 8 : 0);

	if (kx_has_prefix(insn, 0x66) || insn->addr_bytes != 8 ||
	    kx_has_prefix(insn, 0x64) || kx_has_prefix(insn, 0x65))
		return -EINVAL;

	a->how = how;
	a->base = KX_NO_REG;
	a->index = KX_NO_REG;
	a->cc = 0;
	a->target = 0;

	if (X86_MODRM_MOD(modrm) == 3) {
		a->base = rm;
		return 0;
	}

	a->cc = KX_IND_MEM;
	if (insn_rip_relative(insn)) {
		a->target = next + (long)insn->displacement.value;
		return 0;
	}

	a->target = (long)insn->displacement.value;
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
	return 0;
}

/*
 * Group 7 (0f 01) with a register operand: a mixed bag of system
 * instructions.  Refuse those that change the GS base (swapgs), enter or
 * leave a guest or change GIF (vmlaunch, vmresume, vmrun, stgi, clgi),
 * return from an event (FRED erets/eretu share 0f 01 ca with clac), or
 * wait for an interrupt that the cleared IF would hold back (mwait,
 * mwaitx).
 */
static bool kx_grp7_refused(struct insn *insn, insn_byte_t modrm)
{
	switch (modrm) {
	case 0xf8:		/* swapgs */
	case 0xc2:		/* vmlaunch */
	case 0xc3:		/* vmresume */
	case 0xd8:		/* vmrun */
	case 0xdc:		/* stgi */
	case 0xdd:		/* clgi */
	case 0xc9:		/* mwait */
	case 0xfb:		/* mwaitx */
		return true;
	case 0xca:		/* clac, or erets/eretu with f2/f3 */
		return kx_has_prefix(insn, 0xf2) || kx_has_prefix(insn, 0xf3);
	}
	return false;
}

/*
 * Two-byte opcodes (0f xx).  Besides jcc rel32, which is emulated, refuse
 * the system-call family, the deliberate #UD encodings (the kernel's BUG()
 * and WARN() machinery finds them by address, which a copy would not
 * have), segment-register loads, rsm, getsec, xbegin's relative fallback
 * (c7 f8 is one byte, below), wrgsbase, endbr64 under IBT (an indirect
 * branch must land on the real thing, not on int3), and the group 7 cases
 * above.
 */
static int kx_classify_0f(struct arch_kprobe_site *a, struct insn *insn,
			  unsigned long next)
{
	insn_byte_t op = insn->opcode.bytes[1];
	insn_byte_t modrm = insn->modrm.bytes[0];

	if (op >= 0x80 && op <= 0x8f)
		return kx_relative(a, insn, next, KX_JCC, op & 0xf);

	switch (op) {
	case 0x05:		/* syscall */
	case 0x07:		/* sysret */
	case 0x34:		/* sysenter */
	case 0x35:		/* sysexit */
	case 0x0b:		/* ud2 */
	case 0xb9:		/* ud1 */
	case 0xff:		/* ud0 */
	case 0xa1:		/* pop %fs */
	case 0xa9:		/* pop %gs */
	case 0xb2:		/* lss */
	case 0xb4:		/* lfs */
	case 0xb5:		/* lgs */
	case 0xaa:		/* rsm */
	case 0x37:		/* getsec */
		return -EINVAL;
	case 0x01:
		if (X86_MODRM_MOD(modrm) == 3 && kx_grp7_refused(insn, modrm))
			return -EINVAL;
		break;
	case 0xae:		/* f3 0f ae /3, register form: wrgsbase */
		if (X86_MODRM_MOD(modrm) == 3 && X86_MODRM_REG(modrm) == 3 &&
		    kx_has_prefix(insn, 0xf3))
			return -EINVAL;
		break;
	case 0x1e:		/* f3 0f 1e fa: endbr64 */
		if (HAS_KERNEL_IBT && modrm == 0xfa && kx_has_prefix(insn, 0xf3))
			return -EINVAL;
		break;
	}
	return 0;
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
 * Decide how a hit executes @insn (found at @addr) and record what that
 * needs in @a.  Returns 0 or -EINVAL.
 *
 * cli, sti and popf are emulated: they change IF, which a step holds
 * clear.  Refused one-byte opcodes: iret, sti right before hlt or mwait
 * (see kx_sti_shadow_needed()), popf with a 16-bit operand, software
 * interrupts (int3, int n, into, int1), hlt (it would halt with IF
 * cleared), far branches and far returns, and moves to segment registers
 * (a write to %ss holds off interrupts for one instruction, one to %gs
 * replaces the per-CPU base the trap path relies on).  Reads of segment
 * registers, moves to %cr/%dr, wrmsr, in/out and the like are copied: at
 * CPL 0 they behave the same at any address, and a #GP from a *_safe MSR
 * access is sent back to its own exception-table entry (see
 * kprobe_fault_handler()).
 */
int kx_classify(struct arch_kprobe_site *a, struct insn *insn,
		unsigned long addr)
{
	unsigned long next = addr + insn->length;
	insn_byte_t op = insn->opcode.bytes[0];
	insn_byte_t reg = X86_MODRM_REG(insn->modrm.bytes[0]);

	a->len = insn->length;
	a->how = KX_STEP;

	/* APX is not used by the kernel; its branch forms are not handled. */
	if (insn_is_rex2(insn))
		return -EINVAL;
	/* VEX/EVEX/XOP encode no branches and nothing that touches IF. */
	if (insn->vex_prefix.nbytes)
		return 0;

	if (op == 0x0f)
		return insn->opcode.nbytes == 2 ? kx_classify_0f(a, insn, next) : 0;

	if (op >= 0x70 && op <= 0x7f)
		return kx_relative(a, insn, next, KX_JCC, op & 0xf);

	switch (op) {
	case 0xeb:		/* jmp rel8 */
	case 0xe9:		/* jmp rel32 */
		return kx_relative(a, insn, next, KX_JMP, 0);
	case 0xe8:		/* call rel32 */
		return kx_relative(a, insn, next, KX_CALL, 0);
	case 0xe0:		/* loopne */
	case 0xe1:		/* loope */
	case 0xe2:		/* loop */
	case 0xe3:		/* jrcxz */
		return kx_relative(a, insn, next, KX_LOOP, op);
	case 0xc2:		/* ret imm16 */
	case 0xc3:		/* ret */
		if (kx_has_prefix(insn, 0x66))
			return -EINVAL;
		a->how = KX_RET;
		a->ret_pop = op == 0xc2 ? (u16)insn->immediate.value : 0;
		return 0;
	case 0xff:
		if (reg == 2)
			return kx_indirect(a, insn, next, KX_CALL_IND);
		if (reg == 4)
			return kx_indirect(a, insn, next, KX_JMP_IND);
		if (reg == 3 || reg == 5)	/* far call, far jmp */
			return -EINVAL;
		return 0;
	case 0xc7:		/* c7 f8: xbegin rel32 */
		if (insn->modrm.bytes[0] == 0xf8)
			return -EINVAL;
		return 0;
	case 0x9c:		/* pushf */
		a->how = KX_STEP_PUSHF;
		return 0;
	case 0x9d:		/* popf */
		if (kx_has_prefix(insn, 0x66))
			return -EINVAL;
		a->how = KX_POPF;
		return 0;
	case 0xfa:		/* cli */
		a->how = KX_CLI;
		return 0;
	case 0xfb:		/* sti */
		if (kx_sti_shadow_needed(next))
			return -EINVAL;
		a->how = KX_STI;
		return 0;
	case 0xcf:		/* iret */
	case 0xcc:		/* int3 */
	case 0xcd:		/* int n */
	case 0xce:		/* into */
	case 0xf1:		/* int1 */
	case 0xf4:		/* hlt */
	case 0x9a:		/* far call */
	case 0xea:		/* far jmp */
	case 0xca:		/* far ret imm16 */
	case 0xcb:		/* far ret */
	case 0x8e:		/* mov to a segment register */
		return -EINVAL;
	}
	return 0;
}

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
static int kx_build_slot(struct arch_kprobe_site *a, struct insn *insn,
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

/**
 * arch_kprobe_site_prepare - check and prepare the instruction of a site
 * @s: the site; s->addr is the probed address, s->flags says KSITE_FTRACE
 * @opcode: where to store the first byte of the instruction
 *
 * Decodes the instruction, decides whether it is emulated or stepped out
 * of line and, for the latter, builds its slot.  Sites carried by ftrace
 * only record their first byte.
 *
 * Return: 0, -EINVAL if the instruction cannot be probed, -EILSEQ if it
 * does not decode, -ENOMEM if no slot is left.
 */
int arch_kprobe_site_prepare(struct kprobe_site *s, kprobe_opcode_t *opcode)
{
	struct arch_kprobe_site *a = &s->arch;
	unsigned long addr = (unsigned long)s->addr;
	u8 buf[MAX_INSN_SIZE];
	struct insn insn;
	int len, ret;

	memset(a, 0, sizeof(*a));

	len = kx_fetch(addr, buf);
	if (!len)
		return -EINVAL;

	if (s->flags & KSITE_FTRACE) {
		a->how = KX_FTRACE;
		a->len = KX_FENTRY_SIZE;
		a->opcode = buf[0];
		*opcode = buf[0];
		/* A breakpoint there (arch_kprobe_ftrace_bp()) has no copy. */
		s->flags |= KSITE_ARCH_SLOW;
		return 0;
	}

	/* Someone else's breakpoint (kgdb, a text_poke_bp() in flight...). */
	if (buf[0] == INT3_INSN_OPCODE) {
		pr_debug("%pS: already an int3 there\n", s->addr);
		return -EINVAL;
	}

	if (insn_decode(&insn, buf, len, INSN_MODE_KERN) < 0 || !insn.length)
		return -EILSEQ;

	/*
	 * SMP alternatives rewrite lock prefixes when CPUs come and go; they
	 * must never find our int3 (or we their old byte in a copy).
	 */
	mutex_lock(&text_mutex);
	ret = alternatives_text_reserved(s->addr, s->addr + insn.length - 1);
	mutex_unlock(&text_mutex);
	if (ret) {
		pr_debug("%pS: patched by SMP alternatives\n", s->addr);
		return -EINVAL;
	}

	ret = kx_classify(a, &insn, addr);
	if (ret) {
		pr_debug("%pS: instruction cannot be probed (%*ph)\n",
			 s->addr, insn.length, buf);
		return ret;
	}

	if (a->how == KX_STEP || a->how == KX_STEP_PUSHF) {
		ret = kx_build_slot(a, &insn, buf, addr);
		if (ret)
			return ret;
		/*
		 * Boosting: a hit with no post_handler to run sends the CPU
		 * to the copy that jumps back by itself, with its flags as
		 * they are (so pushf needs no repair), and the hit is over
		 * with no frame and no call back.  Not for an instruction
		 * with an exception-table entry: the fixup is keyed to its
		 * address and a fault in an untracked copy could not be
		 * sent back.
		 */
		if (!search_exception_tables(addr))
			a->boost_ip = (unsigned long)a->slot + KX_LOOSE_COPY;
	}
	/* kprobe_int3_handler()'s shortcut needs a boosted copy. */
	if (!a->boost_ip)
		s->flags |= KSITE_ARCH_SLOW;

	a->opcode = buf[0];
	*opcode = buf[0];
	return 0;
}

/**
 * arch_kprobe_site_release - free what arch_kprobe_site_prepare() took
 * @s: the site; no CPU can be executing its slot any more
 */
void arch_kprobe_site_release(struct kprobe_site *s)
{
	if (s->arch.slot) {
		kprobe_slot_free(s->arch.slot);
		s->arch.slot = NULL;
	}
	kx_opt_release(s);
}

/**
 * arch_kprobe_slot_page_init - make a new slot page trap everywhere
 * @page: PAGE_SIZE writable bytes from execmem
 *
 * Fills it with int3, so that a stray jump into the page cannot run
 * garbage, then makes it read-only and executable.
 */
void arch_kprobe_slot_page_init(void *page)
{
	memset(page, INT3_INSN_OPCODE, PAGE_SIZE);
	set_memory_rox((unsigned long)page, 1);
}

/* ---- Placement -------------------------------------------------------- */

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

/**
 * arch_adjust_kprobe_addr - move a probe off a function's ENDBR
 * @addr: the function's start
 * @offset: offset into the function
 * @on_func_entry: set to whether the result is the function's entry
 *
 * With IBT, a function that can be reached indirectly starts with ENDBR64
 * (or, once sealed, a 4-byte nop in its place).  The breakpoint must not
 * replace it, so a probe on the symbol itself goes right after it, and
 * both offsets count as the function's entry.
 *
 * Return: the address to probe.
 */
kprobe_opcode_t *arch_adjust_kprobe_addr(unsigned long addr,
					 unsigned long offset,
					 bool *on_func_entry)
{
	u32 head;

	*on_func_entry = !offset;
	if (HAS_KERNEL_IBT &&
	    (offset == 0 || offset == ENDBR_INSN_SIZE) &&
	    !copy_from_kernel_nofault(&head, (void *)addr, sizeof(head)) &&
	    is_endbr(head)) {
		*on_func_entry = true;
		if (!offset)
			offset = ENDBR_INSN_SIZE;
	}
	return (kprobe_opcode_t *)(addr + offset);
}

/**
 * arch_populate_kprobe_blacklist - x86 text that must never be probed
 *
 * The core already refuses the entry text (which runs before the kernel's
 * own stack, GS base and CR3 are in place), noinstr and the irq entry
 * text.  What is left on x86 are the ftrace trampoline templates: ftrace
 * copies them byte for byte into every trampoline it allocates, so a
 * breakpoint in them would be copied along as a stray int3 that no site
 * owns.
 *
 * Return: 0 or the error from kprobe_add_area_blacklist().
 */
int arch_populate_kprobe_blacklist(void)
{
	int ret = 0;

#ifdef CONFIG_DYNAMIC_FTRACE
	ret = kprobe_add_area_blacklist((unsigned long)ftrace_caller,
					(unsigned long)ftrace_caller_end);
	if (!ret)
		ret = kprobe_add_area_blacklist((unsigned long)ftrace_regs_caller,
						(unsigned long)ftrace_regs_caller_end);
#endif
	return ret;
}

/* ---- Arming -------------------------------------------------------------- */

/* Did this batch write anything?  Protected by text_mutex. */
static bool kx_batch_dirty;

/**
 * arch_kprobe_poke - plant or remove the breakpoint of a site
 * @s: a breakpoint site
 * @arm: true to write int3, false to put the original byte back
 *
 * A single-byte write is atomic with respect to instruction fetch: every
 * CPU sees either the old instruction or int3.  Other CPUs are only
 * guaranteed to stop using stale bytes after arch_kprobe_poke_finish().
 * Each write is reported to perf (PERF_RECORD_TEXT_POKE), for decoders of
 * instruction traces.  Caller holds text_mutex.
 */
void arch_kprobe_poke(struct kprobe_site *s, bool arm)
{
	u8 old = arm ? s->arch.opcode : INT3_INSN_OPCODE;
	u8 byte = arm ? INT3_INSN_OPCODE : s->arch.opcode;

	lockdep_assert_held(&text_mutex);
	if (WARN_ON_ONCE(s->flags & KSITE_FTRACE) || WARN_ON_ONCE(kx_jumped(s)) ||
	    (s->flags & KSITE_GONE))
		return;
	text_poke(s->addr, &byte, INT3_INSN_SIZE);
	perf_event_text_poke(s->addr, &old, INT3_INSN_SIZE, &byte, INT3_INSN_SIZE);
	kx_batch_dirty = true;
}

#ifdef CONFIG_KPROBES_ON_FTRACE
/**
 * arch_kprobe_ftrace_bp - arm an ftrace site with a breakpoint, or disarm it
 * @s: the site, on a function's ftrace call site
 * @arm: write the breakpoint (true) or put the nop's first byte back
 *
 * Only over ftrace's nop, untouched (or our breakpoint on it): anything
 * else there belongs to ftrace.  Caller holds text_mutex.
 *
 * Return: true if the byte was written.
 */
bool arch_kprobe_ftrace_bp(struct kprobe_site *s, bool arm)
{
	const u8 *nop = x86_nops[KX_FENTRY_SIZE];
	u8 cur[KX_FENTRY_SIZE];
	u8 old = arm ? nop[0] : INT3_INSN_OPCODE;
	u8 byte = arm ? INT3_INSN_OPCODE : nop[0];

	lockdep_assert_held(&text_mutex);
	if ((s->flags & KSITE_GONE) ||
	    copy_from_kernel_nofault(cur, s->addr, KX_FENTRY_SIZE) ||
	    cur[0] != old || memcmp(cur + 1, nop + 1, KX_FENTRY_SIZE - 1))
		return false;
	text_poke(s->addr, &byte, INT3_INSN_SIZE);
	perf_event_text_poke(s->addr, &old, INT3_INSN_SIZE, &byte, INT3_INSN_SIZE);
	kx_batch_dirty = true;
	return true;
}
#endif

/**
 * arch_kprobe_poke_finish - make a batch of pokes visible everywhere
 *
 * One serializing IPI round for the whole batch.  Caller holds text_mutex.
 */
void arch_kprobe_poke_finish(void)
{
	lockdep_assert_held(&text_mutex);
	if (!kx_batch_dirty)
		return;
	kx_batch_dirty = false;
	text_poke_sync();
}

/* ---- Hit path ---------------------------------------------------------- */

/* pt_regs offsets of the general registers, in encoding order. */
static const u8 kx_gpr_offset[16] = {
	offsetof(struct pt_regs, ax),  offsetof(struct pt_regs, cx),
	offsetof(struct pt_regs, dx),  offsetof(struct pt_regs, bx),
	offsetof(struct pt_regs, sp),  offsetof(struct pt_regs, bp),
	offsetof(struct pt_regs, si),  offsetof(struct pt_regs, di),
	offsetof(struct pt_regs, r8),  offsetof(struct pt_regs, r9),
	offsetof(struct pt_regs, r10), offsetof(struct pt_regs, r11),
	offsetof(struct pt_regs, r12), offsetof(struct pt_regs, r13),
	offsetof(struct pt_regs, r14), offsetof(struct pt_regs, r15),
};

static nokprobe_inline unsigned long kx_gpr(struct pt_regs *regs, u8 nr)
{
	return *(unsigned long *)((u8 *)regs + kx_gpr_offset[nr & 15]);
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
static bool kx_emulate(struct kprobe_site *s, struct pt_regs *regs)
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

static nokprobe_inline bool kx_is_emulated(struct kprobe_site *s)
{
	return s->arch.how >= KX_JMP;
}

/*
 * An emulation failed: only an indirect branch through unreadable memory
 * can do that, and the real instruction would have oopsed on it.  Leave
 * %rip on the probed instruction and report the trap as not handled, so
 * the kernel dies there with the probed context's registers.
 */
static int kx_emulation_failed(struct kprobe_site *s, struct pt_regs *regs)
{
	regs->ip = (unsigned long)s->addr;
	pr_emerg("cannot emulate the branch at %pS: its operand is unreadable\n",
		 s->addr);
	return 0;
}

NOKPROBE_SYMBOL(kx_emulation_failed);

/* Send the CPU to the tracked copy of @s, with interrupts held off. */
static nokprobe_inline int kx_start_step(struct kx_frame *f, struct pt_regs *regs)
{
	f->if_flag = regs->flags & X86_EFLAGS_IF;
	regs->flags &= ~X86_EFLAGS_IF;
	regs->ip = (unsigned long)f->site->arch.slot + KX_TRAP_COPY;
	barrier();
	f->phase = KX_FRAME_STEPPING;
	return 1;
}

/*
 * The list walks of the breakpoint paths, kept out of line: they are the
 * rare case there, and inlined they would cost the common cases their
 * registers.
 */
static noinline bool kx_site_pre(struct kprobe_site *s, struct pt_regs *regs)
{
	return kprobe_site_pre(s, regs);
}

NOKPROBE_SYMBOL(kx_site_pre);

static noinline void kx_site_post(struct kx_frame *f, struct pt_regs *regs)
{
	kprobe_site_post(f->site, f->solo, regs);
}

NOKPROBE_SYMBOL(kx_site_post);

/*
 * Must @f's hit come back after its instruction: for a post_handler, or
 * for a fault_handler (KSITE_FAULT, which rules the shortcut out)?  Asked
 * of the probe whose pre_handler ran when the hit took the shortcut: see
 * kprobe_site_solo().
 */
static nokprobe_inline bool kx_hit_comes_back(struct kx_frame *f)
{
	if (f->solo)
		return f->solo->post_handler;
	return READ_ONCE(f->site->flags) & (KSITE_POST | KSITE_FAULT);
}

/*
 * The post_handlers of a step.  They run from a call at the end of the
 * copy, not from an exception, so they enter the same context as the
 * pre_handlers before them (and upstream's #DB path) the way
 * irqentry_nmi_enter() does: NMI-like, in_nmi() true, lockdep told that
 * interrupts are off, which they are.  The exit puts back what lockdep
 * thought before, whatever a handler did with local_irq_disable() and
 * friends.  Unlike an exception, this comes from the probed code, which
 * is never noinstr: RCU is watching, and nothing needs telling that a
 * CPU left an idle or user context.
 */
static nokprobe_inline void kx_step_post(struct kx_frame *f,
					 struct pt_regs *regs)
{
	bool irqs_were_on = lockdep_hardirqs_enabled();

	__nmi_enter();
	lockdep_hardirqs_off(CALLER_ADDR0);
	lockdep_hardirq_enter();
	kx_site_post(f, regs);
	lockdep_hardirq_exit();
	if (irqs_were_on) {
		lockdep_hardirqs_on_prepare();
		lockdep_hardirqs_on(CALLER_ADDR0);
	}
	__nmi_exit();
}

/* The tracked copy has run: finish the hit. */
static nokprobe_inline void kx_end_step(struct kx_cpu *c, struct kx_frame *f,
					struct pt_regs *regs)
{
	struct kprobe_site *s = f->site;

	f->phase = KX_FRAME_BUSY;
	regs->ip = (unsigned long)s->addr + s->arch.len;
	regs->flags = (regs->flags & ~X86_EFLAGS_IF) | f->if_flag;

	/* pushf stored the IF we had cleared: store the real one. */
	if (s->arch.how == KX_STEP_PUSHF) {
		u16 *word = (u16 *)regs->sp;

		*word = (*word & ~X86_EFLAGS_IF) | f->if_flag;
	}

	if (!f->missed && (!f->solo || f->solo->post_handler))
		kx_step_post(f, regs);
	kx_pop(c, f);
}

/**
 * kx_step_done - the tracked copy of a step has run
 * @regs: the probed context, saved by kx_step_entry; regs->ip is the
 *	  return address of the call that follows the copy
 *
 * Called from kx_step_entry (step_entry.S) with interrupts off.  The step
 * is the top frame of this CPU's stack: anything nested in it (an NMI or
 * #MC reaching a probe) has finished by the time its copy returns here.
 * Puts regs->ip after the probed instruction, gives the context its
 * interrupt flag back and runs the post_handlers.
 */
void kx_step_done(struct pt_regs *regs)
{
	struct kx_cpu *c = this_cpu_ptr(&kx_cpu);
	struct kx_frame *f = kx_top(c);

	if (unlikely(!f || f->phase != KX_FRAME_STEPPING ||
		     regs->ip != kx_step_end(f->site)))
		panic("kprobes: a step ended at %pS with no step in flight\n",
		      (void *)regs->ip);
	kx_end_step(c, f, regs);
}

NOKPROBE_SYMBOL(kx_step_done);

/*
 * No frame left: run the instruction without one (see the top of this
 * file).  Only reached with the stack full, which nesting cannot do.
 */
static int kx_run_unframed(struct kprobe_site *s, struct pt_regs *regs)
{
	if (kx_is_emulated(s))
		return kx_emulate(s, regs) ? 1 : kx_emulation_failed(s, regs);

	if (kx_opt_ready(s)) {
		regs->ip = kx_opt_copy(s);
		return 1;
	}
	if (s->arch.boost_ip || !(regs->flags & X86_EFLAGS_IF)) {
		regs->ip = (unsigned long)s->arch.slot + KX_LOOSE_COPY;
		return 1;
	}

	pr_emerg("probe at %pS hit %u deep with interrupts on; cannot step it\n",
		 s->addr, KX_NEST);
	return 0;
}

NOKPROBE_SYMBOL(kx_run_unframed);

/* A hit while this CPU already runs a probe: execute, count, no handlers. */
static int kx_reenter(struct kx_cpu *c, struct kprobe_site *s,
		      struct pt_regs *regs, struct kprobe *running)
{
	struct kx_frame *f;

	kprobe_site_missed(s);

	if (kx_is_emulated(s))
		return kx_emulate(s, regs) ? 1 : kx_emulation_failed(s, regs);
	if (kx_opt_ready(s)) {
		regs->ip = kx_opt_copy(s);
		return 1;
	}
	if (s->arch.boost_ip) {
		regs->ip = s->arch.boost_ip;
		return 1;
	}

	f = kx_push(c, s, running, true);
	if (!f)
		return kx_run_unframed(s, regs);
	return kx_start_step(f, regs);
}

NOKPROBE_SYMBOL(kx_reenter);

/*
 * Everything but kprobe_int3_handler()'s shortcut: a hit while a probe
 * runs, several probes or a post_handler, an instruction that is stepped
 * or emulated, a site on its way to or from jump optimization, and
 * breakpoints that are not (or no longer) ours.  @s is the site at @addr,
 * or NULL.
 */
static noinline int kx_int3_slow(struct pt_regs *regs, unsigned long addr,
				 struct kprobe_site *s)
{
	struct kx_cpu *c = this_cpu_ptr(&kx_cpu);
	struct kprobe *running;
	struct kx_frame *f;

	if (user_mode(regs))
		return 0;
	if (!s || s->arch.how == KX_FTRACE) {
		/*
		 * The site went away while we were trapping: once the int3
		 * is gone from the text, run what is there now.
		 */
		if (READ_ONCE(*(u8 *)addr) != INT3_INSN_OPCODE) {
			regs->ip = addr;
			return 1;
		}
		/* Our breakpoint on ftrace's nop (arch_kprobe_ftrace_bp()). */
		if (s)
			return kx_ftrace_int3(s, regs);
		return 0;
	}

	running = kprobe_running();
	if (running)
		return kx_reenter(c, s, regs, running);

	f = kx_push(c, s, NULL, false);
	if (!f) {
		kprobe_site_missed(s);
		return kx_run_unframed(s, regs);
	}
	kprobe_site_hit(s);

	/*
	 * current_kprobe must stay non-NULL until the hit is over: that is
	 * what sends faults in the copy to kprobe_fault_handler() and makes
	 * nested hits count as missed.  kprobe_site_first() never returns
	 * NULL, but a handler may have reset it.
	 */
	running = kprobe_site_solo(s);
	if (running) {
		f->solo = running;
		__this_cpu_write(current_kprobe, running);
		if (running->pre_handler(running, regs)) {
			/* A handler moved regs->ip: the instruction is skipped. */
			kx_pop(c, f);
			return 1;
		}
	} else {
		running = kprobe_site_first(s);
		__this_cpu_write(current_kprobe, running);
		if (kx_site_pre(s, regs)) {
			kx_pop(c, f);
			return 1;
		}
	}
	if (!kprobe_running())
		__this_cpu_write(current_kprobe, running);

	/*
	 * A site on its way to (or back from) jump optimization runs the
	 * detour's copy of the whole region: the bytes after the first
	 * instruction may be half rewritten.  That wins over a post_handler
	 * being added right now.
	 */
	if (kx_opt_ready(s)) {
		kx_pop(c, f);
		regs->ip = kx_opt_copy(s);
		return 1;
	}
	if (s->arch.boost_ip && !kx_hit_comes_back(f)) {
		kx_pop(c, f);
		regs->ip = s->arch.boost_ip;
		return 1;
	}
	if (!kx_is_emulated(s))
		return kx_start_step(f, regs);

	if (!kx_emulate(s, regs)) {
		kx_pop(c, f);
		return kx_emulation_failed(s, regs);
	}
	kx_site_post(f, regs);
	kx_pop(c, f);
	return 1;
}

NOKPROBE_SYMBOL(kx_int3_slow);

/**
 * kprobe_int3_handler - take a breakpoint that may belong to kprobes
 * @regs: the trapped context; regs->ip is just past the int3
 *
 * Two kinds of int3 are ours: the breakpoint of a site, and a breakpoint
 * that was removed while this CPU was trapping on it.
 *
 * Return: 1 if handled (regs say where to resume), 0 if not ours.
 */
int kprobe_int3_handler(struct pt_regs *regs)
{
	unsigned long addr = regs->ip - INT3_INSN_SIZE;
	struct kprobe_site *s;
	unsigned long ip;
	struct kprobe *p;

	/*
	 * The common case, kept short: no probe running on this CPU (which
	 * also rules out a hit inside a step or a handler), one enabled
	 * probe, no post_handler, an instruction that runs from the slot and
	 * jumps back by itself, a site not on its way to or from jump
	 * optimization: kprobe_site_bp_solo() says all that in one pointer,
	 * which the core updates with the flags under kprobe_mutex; either
	 * state read here is one that a hit may see.  No frame: nothing is
	 * tracked once the handler has returned.
	 * A user-mode int3 finds no site (sites are kernel addresses) and
	 * is turned away by kx_int3_slow().
	 */
	s = kprobe_site_find(addr);
	if (unlikely(!s))
		return kx_int3_slow(regs, addr, NULL);
	p = kprobe_site_bp_solo(s);
	if (likely(p && !kprobe_running())) {
		ip = s->arch.boost_ip;
		kprobe_site_hit(s);
		__this_cpu_write(current_kprobe, p);
		if (p->pre_handler(p, regs))
			ip = regs->ip;	/* redirected: the instruction is skipped */
		__this_cpu_write(current_kprobe, NULL);
		regs->ip = ip;
		return 1;
	}
	return kx_int3_slow(regs, addr, s);
}

NOKPROBE_SYMBOL(kprobe_int3_handler);

/*
 * A fault in the tracked copy of @f's step: put the context back on the
 * original instruction, as if the probe were not there, let the site's
 * fault_handlers (if any) deal with it there, and forget the step.
 * Otherwise whatever fixup the original instruction has applies.  The
 * page-fault path consults us before its own fixups, so returning 0 is
 * enough there; the #GP path has already tried the exception table,
 * against the copy's address, so we try it again for the original one.
 */
static int kx_step_fault(struct kx_cpu *c, struct kx_frame *f,
			 struct pt_regs *regs, int trapnr)
{
	struct kprobe_site *s = f->site;
	int handled = 0;

	regs->ip = (unsigned long)s->addr;
	regs->flags = (regs->flags & ~X86_EFLAGS_IF) | f->if_flag;
	if (!f->missed && (READ_ONCE(s->flags) & KSITE_FAULT)) {
		f->phase = KX_FRAME_FAULT;
		handled = kprobe_site_fault(s, regs, trapnr);
	}
	kx_pop(c, f);
	if (handled)
		return 1;
	if (trapnr == X86_TRAP_GP)
		return fixup_exception(regs, trapnr, current->thread.error_code, 0);
	return 0;
}

NOKPROBE_SYMBOL(kx_step_fault);

/*
 * A fault while @f's handlers run.  It is theirs only if it comes at the
 * interrupt nesting they run at: an NMI (or, on the ftrace path, an
 * interrupt) that came in the middle and faults is none of their
 * business.  A fault in the fault_handler itself is left alone.
 */
static int kx_handler_fault(struct kx_frame *f, struct pt_regs *regs,
			    int trapnr)
{
	int handled;

	if (f->missed || f->ctx != irq_count() ||
	    !(READ_ONCE(f->site->flags) & KSITE_FAULT))
		return 0;
	f->phase = KX_FRAME_FAULT;
	handled = kprobe_fault_notify(kprobe_running(), regs, trapnr);
	f->phase = KX_FRAME_BUSY;
	return handled;
}

NOKPROBE_SYMBOL(kx_handler_fault);

/**
 * kprobe_fault_handler - a fault while this CPU runs a probe
 * @regs: the faulting context
 * @trapnr: X86_TRAP_PF or X86_TRAP_GP
 *
 * Two faults are ours: one in the out-of-line copy of the step in flight
 * (kx_step_fault()), and, for sites with a fault_handler, one in the
 * handlers of the hit in progress (kx_handler_fault()).  Faults anywhere
 * else (in an NMI that came during the step, say) are left alone.
 *
 * Return: 1 only if the fault was dealt with here.
 */
int kprobe_fault_handler(struct pt_regs *regs, int trapnr)
{
	struct kx_cpu *c = this_cpu_ptr(&kx_cpu);
	struct kx_frame *f = kx_top(c);
	unsigned long copy;

	if (user_mode(regs) || !f)
		return 0;
	if (f->phase == KX_FRAME_BUSY)
		return kx_handler_fault(f, regs, trapnr);
	if (f->phase != KX_FRAME_STEPPING)
		return 0;

	copy = (unsigned long)f->site->arch.slot + KX_TRAP_COPY;
	if (regs->ip < copy || regs->ip >= copy + f->site->arch.len)
		return 0;
	return kx_step_fault(c, f, regs, trapnr);
}

NOKPROBE_SYMBOL(kprobe_fault_handler);

#ifdef CONFIG_KRETPROBES
/*
 * Return probes.  The trampoline is in trampoline.S; the hijack and the
 * restore of the return address are inlined from asm/kprobes_arch.h.
 */

/* Functions that return to someone other than their caller, or never. */
const char * const arch_kretprobe_refused[] = {
	"__switch_to",		/* returns on the next task's stack */
	"__switch_to_asm",
	"ret_from_fork",	/* "returns" to a new task's user space */
	"ret_from_fork_asm",
	"rewind_stack_and_make_dead",
	NULL
};
#endif /* CONFIG_KRETPROBES */
