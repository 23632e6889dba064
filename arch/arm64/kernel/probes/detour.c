// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * arm64 kprobes backend: jump optimization.
 *
 * An optimized site trades its BRK for a B to a detour (opt_entry.S), so
 * that a hit costs no exception at all.  On arm64 this is simpler than
 * on x86-64 in one way and harder in two:
 *
 *  - The jump covers the probed instruction and nothing else: every A64
 *    instruction is four bytes, and so is a B.  No branch can land in the
 *    middle of the jump, so the function around it need not be decoded.
 *  - A B reaches 128 MiB either way.  Detours come from the module area
 *    (KPROBE_OPTINSN_EXECMEM), whose direct-branch window covers the
 *    kernel image and the modules placed in it; a site out of reach of
 *    its detour stays a breakpoint.
 *  - Nothing in the probed context may be clobbered, and no register is
 *    free: the detour saves what it needs below the context's stack
 *    pointer, where nothing is ever live on arm64.
 *
 * Writing the jump needs no stop_machine(): the architecture lets a
 * running CPU meet an instruction that changes between BRK and B
 * (ARM DDI 0487, concurrent modification and execution of instructions),
 * and an optimized site only ever goes from one to the other.  Arming
 * (the original instruction to BRK) and disarming (back) stay in
 * breakpoint.c's stop_machine() batches.  The core writes the jump only
 * after every CPU and task has left the instruction (kprobe_ool_sync());
 * a CPU that still meets the BRK afterwards, or meets the B after it was
 * taken out, does what the other would have: both run the handlers and
 * the probed instruction once.
 *
 * The detour does the probed instruction's work at its own address:
 *
 *  - an instruction we would step out of line, a hint, ftrace's
 *    mov x9, x30, PACIASP/AUTIASP (same sp, same key) and MRS and MSR of
 *    DAIF (which here read and write the context's own mask) run as they
 *    are;
 *  - ADR/ADRP and literal loads become a load of their result or address
 *    from the slot;
 *  - branches become branches from the slot: B and BL (with the link
 *    register loaded from the slot) go straight to the target, B.cond,
 *    CBZ/CBNZ and TBZ/TBNZ test the same condition between two Bs, BR and
 *    RET run as they are, BLR through any register but x30 loads the link
 *    register and becomes a BR.
 *
 * Not optimized: an instruction with an exception-table entry (its fixup
 * is keyed to the original address); with BTI enforced in the kernel, a
 * landing pad (BTI, PACIASP), which a B may not replace, and a BLR other
 * than through x16 or x17, whose BR would not be accepted at the callee's
 * BTI c; BLR x30, which needs the register it overwrites.
 *
 * arm64_kp_opt_handler() presents the registers as a breakpoint would
 * (regs->pc the probed address, regs->sp the context's) and runs the
 * pre_handlers with preemption off and interrupts as the probed context
 * had them, as on x86-64.  Changes to the general registers and the flags
 * are written back; a redirection (a handler moved regs->pc and returned
 * nonzero, as override_function_with_return() and fail_function do) is
 * honoured too, by one trap (opt_entry.S explains how).  regs->sp cannot
 * be changed, as for a breakpoint hit.
 */

#define pr_fmt(fmt) "kprobes: " fmt

#include <linux/extable.h>
#include <linux/kprobes.h>
#include <linux/kprobes_arch.h>
#include <linux/memory.h>
#include <linux/percpu.h>
#include <linux/perf_event.h>
#include <linux/ptrace.h>

#include <asm/daifflags.h>
#include <asm/debug-monitors.h>
#include <asm/insn.h>
#include <asm/patching.h>

#include "backend.h"
#include "decode-insn.h"

/* ---- Hit path --------------------------------------------------------- */

/* A redirection on its way to arm64_kp_opt_redirect_brk, on this CPU. */
struct arm64_kp_opt_redirection {
	unsigned long	pc;
	unsigned long	pstate;
	u64		pmr;	/* the context's priority mask (pseudo-NMI) */
	bool		pending;
};

static DEFINE_PER_CPU(struct arm64_kp_opt_redirection, arm64_kp_opt_redirection);

#define ARM64_KP_NZCV	(PSR_N_BIT | PSR_Z_BIT | PSR_C_BIT | PSR_V_BIT)

/*
 * A handler redirected the hit: mask every exception until the trap at
 * arm64_kp_opt_redirect_brk, so that this CPU is the one that takes it,
 * and put the new PC and the context's flags and mask aside for it.  The
 * mask is written raw: to lockdep and the IRQ tracer the context's state
 * never changed, and the trap's return puts the real one back.  With
 * pseudo-NMI the priority mask is raised too, as local_daif_mask() does:
 * irqs_disabled() reads that one, and the preempt_enable_notrace() that
 * follows must not see a CPU it may schedule from.
 */
static noinline void arm64_kp_opt_redirect_prepare(struct pt_regs *regs)
{
	struct arm64_kp_opt_redirection *r;

	asm volatile("msr daifset, #0xf" : : : "memory");
	if (system_uses_irq_prio_masking())
		gic_write_pmr(GIC_PRIO_IRQON | GIC_PRIO_PSR_I_SET);
	r = this_cpu_ptr(&arm64_kp_opt_redirection);
	r->pc = regs->pc;
	r->pstate = regs->pstate & (ARM64_KP_NZCV | DAIF_MASK);
	r->pmr = regs->pmr_save;
	r->pending = true;
}

NOKPROBE_SYMBOL(arm64_kp_opt_redirect_prepare);

/*
 * arm64_kp_opt_redirect - the trap that ends a redirected detour
 * @regs: the probed context, reloaded whole; regs->pc is
 * arm64_kp_opt_redirect_brk
 *
 * Called by kprobe_ss_brk_handler().  Return: DBG_HOOK_HANDLED, or
 * DBG_HOOK_ERROR if no redirection is pending on this CPU.
 */
int arm64_kp_opt_redirect(struct pt_regs *regs)
{
	struct arm64_kp_opt_redirection *r = this_cpu_ptr(&arm64_kp_opt_redirection);

	if (!r->pending)
		return DBG_HOOK_ERROR;
	r->pending = false;
	regs->pc = r->pc;
	regs->pstate = (regs->pstate & ~(ARM64_KP_NZCV | DAIF_MASK)) | r->pstate;
	if (system_uses_irq_prio_masking())
		regs->pmr_save = r->pmr;
	return DBG_HOOK_HANDLED;
}

NOKPROBE_SYMBOL(arm64_kp_opt_redirect);

/* Several probes on the site, or a hit while a probe runs. */
static noinline bool arm64_kp_opt_slow(struct kprobe_site *s,
				       struct pt_regs *regs)
{
	bool redirect;

	if (kprobe_running()) {
		kprobe_site_missed(s);
		return false;
	}
	kprobe_site_hit(s);
	redirect = kprobe_site_pre(s, regs, NULL);
	__this_cpu_write(current_kprobe, NULL);
	return redirect;
}

NOKPROBE_SYMBOL(arm64_kp_opt_slow);

/**
 * arm64_kp_opt_handler - run the handlers of an optimized site
 * @s: the site, read from the detour slot by arm64_kp_opt_entry
 * @regs: the probed context, saved by the slot and arm64_kp_opt_entry
 *
 * Runs the handlers with interrupts masked (by priority too, where
 * pseudo-NMIs mask that way), as a breakpoint hit's run in the debug
 * exception: handlers see the
 * same context whichever way their probe is hit, and an interrupt waits
 * for them to finish, rather than finding kprobe_running() and counting
 * its own hits as missed (a timer tick reading the counter, an RCU
 * callback: 2,822 of 2 million hits in make bench's figure 15 workload,
 * with interrupts left on).
 *
 * Return: nonzero when a handler redirected the hit; every exception is
 * then masked until arm64_kp_opt_redirect() has run.
 */
int arm64_kp_opt_handler(struct kprobe_site *s, struct pt_regs *regs)
{
	unsigned long flags = arch_local_irq_save();
	bool irqs_were_on = !arch_irqs_disabled_flags(flags);
	struct kprobe *p;
	bool redirect;

	/* lockdep is told, as an exception's entry would tell it. */
	if (irqs_were_on)
		lockdep_hardirqs_off(CALLER_ADDR0);
	preempt_disable_notrace();
	p = kprobe_site_solo(s);
	if (likely(p && !kprobe_running())) {
		kprobe_site_hit(s);
		__this_cpu_write(current_kprobe, p);
		redirect = p->pre_handler(p, regs);
		__this_cpu_write(current_kprobe, NULL);
	} else {
		redirect = arm64_kp_opt_slow(s, regs);
	}
	if (irqs_were_on) {
		lockdep_hardirqs_on_prepare();
		lockdep_hardirqs_on(CALLER_ADDR0);
	}
	/* A redirection keeps everything masked until its trap. */
	if (unlikely(redirect))
		arm64_kp_opt_redirect_prepare(regs);
	else
		arch_local_irq_restore(flags);
	preempt_enable_notrace();
	return redirect;
}

NOKPROBE_SYMBOL(arm64_kp_opt_handler);

/* ---- Building the detour ----------------------------------------------- */

#define ARM64_KP_NOP		0xd503201fU
#define ARM64_KP_LR		30

/* LDR Xt, <the slot's literal>, placed at @at in the slot. */
static u32 arm64_kp_ldr_lit(unsigned int at, u8 rt)
{
	return 0x58000000U | (((ARM64_KP_OPT_LIT - at) / 4) << 5) | rt;
}

/* LDR Wt / LDR Xt / LDRSW Xt, [Xt]: the load a literal load stands for. */
static u32 arm64_kp_ldr_reg(enum arm64_probe_how how, u8 rt)
{
	u32 op = how == ARM64_PROBE_LDR_X ? 0xf9400000U :
		 how == ARM64_PROBE_LDRSW ? 0xb9800000U : 0xb9400000U;

	return op | (rt << 5) | rt;
}

/* A conditional branch of @d's kind, taken to 8 bytes further on. */
static u32 arm64_kp_skip_one(const struct arm64_probe_insn *d)
{
	if (d->how == ARM64_PROBE_TBZ || d->how == ARM64_PROBE_TBNZ)
		return (d->insn & ~GENMASK(18, 5)) | (2 << 5);
	return (d->insn & ~GENMASK(23, 5)) | (2 << 5);
}

/* Is @d a landing pad that only BTI-enforcing kernels must keep? */
static bool arm64_kp_landing_pad(const struct arm64_probe_insn *d)
{
	return d->how == ARM64_PROBE_PACIASP ||
	       (d->how == ARM64_PROBE_NOP && (d->insn & 0xffffff3f) == 0xd503241f);
}

/*
 * Fill in the slot image @img (ARM64_KP_OPT_END bytes) for site @s, to
 * live at @base: what the probed instruction does, then where to go on.
 * Returns 0 or -EINVAL (the instruction stays a breakpoint), -ERANGE (a
 * branch cannot reach).
 */
static int arm64_kp_opt_build(struct kprobe_site *s, u32 *img, unsigned long base)
{
	const struct arm64_probe_insn *d = &s->arch.d;
	unsigned long addr = (unsigned long)s->addr;
	unsigned long next = addr + AARCH64_INSN_SIZE;
	/* A64 code is little-endian in memory, whatever the data's order. */
	__le32 *code = (__le32 *)img;
	u32 copy[2];
	u64 *lit = (u64 *)((u8 *)img + ARM64_KP_OPT_LIT);
	unsigned long back = next;
	bool bti = IS_ENABLED(CONFIG_ARM64_BTI_KERNEL);
	u32 insn;

	copy[0] = ARM64_KP_NOP;
	copy[1] = ARM64_KP_NOP;
	switch (d->how) {
	case ARM64_PROBE_STEP:
		if (search_exception_tables(addr))
			return -EINVAL;
		copy[0] = d->insn;
		break;
	case ARM64_PROBE_NOP:
	case ARM64_PROBE_PACIASP:
		if (bti && arm64_kp_landing_pad(d))
			return -EINVAL;
		/* A PRFM of a literal is not a hint: no use copying it. */
		if (d->how == ARM64_PROBE_PACIASP ||
		    (d->insn & 0xfffff01f) == 0xd503201f)
			copy[0] = d->insn;
		break;
	case ARM64_PROBE_AUTIASP:
	case ARM64_PROBE_MOV:
	case ARM64_PROBE_MRS_DAIF:
	case ARM64_PROBE_DAIFSET:
	case ARM64_PROBE_DAIFCLR:
	case ARM64_PROBE_MSR_DAIF:
		copy[0] = d->insn;
		break;
	case ARM64_PROBE_ADR:
		if (d->reg < 31) {
			copy[0] = arm64_kp_ldr_lit(ARM64_KP_OPT_COPY, d->reg);
			*lit = d->target;
		}
		break;
	case ARM64_PROBE_LDR_W:
	case ARM64_PROBE_LDR_X:
	case ARM64_PROBE_LDRSW:
		if (d->reg < 31) {
			copy[0] = arm64_kp_ldr_lit(ARM64_KP_OPT_COPY, d->reg);
			copy[1] = arm64_kp_ldr_reg(d->how, d->reg);
			*lit = d->target;
		}
		break;
	case ARM64_PROBE_B:
		back = d->target;
		break;
	case ARM64_PROBE_BL:
		copy[0] = arm64_kp_ldr_lit(ARM64_KP_OPT_COPY, ARM64_KP_LR);
		*lit = next;
		back = d->target;
		break;
	case ARM64_PROBE_BCOND:
	case ARM64_PROBE_CBZ:
	case ARM64_PROBE_CBNZ:
	case ARM64_PROBE_TBZ:
	case ARM64_PROBE_TBNZ:
		/* Taken: on to the B at ARM64_KP_OPT_BACK; not taken: on. */
		copy[0] = arm64_kp_skip_one(d);
		insn = aarch64_insn_gen_branch_imm(base + ARM64_KP_OPT_COPY + 4,
						   next, AARCH64_INSN_BRANCH_NOLINK);
		if (insn == AARCH64_BREAK_FAULT)
			return -ERANGE;
		copy[1] = insn;
		back = d->target;
		break;
	case ARM64_PROBE_BR:
	case ARM64_PROBE_RET:
		copy[0] = d->insn;
		back = 0;
		break;
	case ARM64_PROBE_BLR:
		if (d->reg == ARM64_KP_LR || (bti && d->reg != 16 && d->reg != 17))
			return -EINVAL;
		copy[0] = arm64_kp_ldr_lit(ARM64_KP_OPT_COPY, ARM64_KP_LR);
		copy[1] = 0xd61f0000U | (d->reg << 5);	/* BR Xn */
		*lit = next;
		back = 0;
		break;
	default:
		return -EINVAL;
	}

	if (back) {
		insn = aarch64_insn_gen_branch_imm(base + ARM64_KP_OPT_BACK, back,
						   AARCH64_INSN_BRANCH_NOLINK);
		if (insn == AARCH64_BREAK_FAULT)
			return -ERANGE;
		code[ARM64_KP_OPT_BACK / 4] = cpu_to_le32(insn);
	}
	code[ARM64_KP_OPT_COPY / 4] = cpu_to_le32(copy[0]);
	code[ARM64_KP_OPT_COPY / 4 + 1] = cpu_to_le32(copy[1]);
	*(u64 *)((u8 *)img + ARM64_KP_OPT_SITE) = (unsigned long)s;
	*(u64 *)((u8 *)img + ARM64_KP_OPT_ADDR) = addr;
	return 0;
}

/**
 * arch_optprobe_prepare - build the detour of a site
 * @s: an armed breakpoint site; kprobe_mutex is held
 *
 * Return: 0 (also when already done), -EINVAL (the instruction does not
 * allow it), -ERANGE (the detour would be out of a B's reach), -ENOMEM.
 */
int arch_optprobe_prepare(struct kprobe_site *s)
{
	struct arch_kprobe_site *a = &s->arch;
	u32 img[ARM64_KP_OPT_END / 4];
	unsigned long base;
	u32 *slot;
	int ret;

	BUILD_BUG_ON(ARM64_KP_OPT_END > KPROBE_OPTINSN_SLOT_SIZE);

	if (a->detour)
		return 0;
	slot = kprobe_optinsn_slot_alloc();
	if (!slot)
		return -ENOMEM;
	base = (unsigned long)slot;
	a->jump = aarch64_insn_gen_branch_imm((unsigned long)s->addr, base,
					      AARCH64_INSN_BRANCH_NOLINK);
	ret = -ERANGE;
	if (a->jump == AARCH64_BREAK_FAULT)
		goto fail;
	memcpy(img, arm64_kp_opt_template, sizeof(img));
	ret = arm64_kp_opt_build(s, img, base);
	if (ret)
		goto fail;

	aarch64_insn_copy(slot, img, sizeof(img));
	perf_event_text_poke(slot, NULL, 0, img, sizeof(img));
	a->detour = slot;
	return 0;
fail:
	kprobe_optinsn_slot_free(slot);
	return ret;
}

/**
 * arch_optprobe_region - how many bytes the jump of @s covers
 * @s: a site
 *
 * Return: AARCH64_INSN_SIZE once arch_optprobe_prepare() succeeded, or 0.
 */
unsigned int arch_optprobe_region(struct kprobe_site *s)
{
	return s->arch.detour ? AARCH64_INSN_SIZE : 0;
}

/* ---- Writing and removing the jump -------------------------------------- */

/*
 * BRK and B replace each other under running CPUs: one write each.  Perf
 * hears only of a write that happened.
 */
static int arm64_kp_opt_write(struct kprobe_site *s, u32 old, u32 insn)
{
	int ret = aarch64_insn_patch_text_nosync(s->addr, insn);

	if (!ret)
		perf_event_text_poke(s->addr, &old, AARCH64_INSN_SIZE, &insn,
				     AARCH64_INSN_SIZE);
	return ret;
}

/**
 * arch_optprobe_poke - replace the BRK of a prepared site with its B
 * @s: an armed site whose detour is built, and that no task can be inside
 *
 * Written at once: see the top of this file.  Caller holds text_mutex.
 *
 * Return: 0, or an error with the BRK left in place.
 */
int arch_optprobe_poke(struct kprobe_site *s)
{
	lockdep_assert_held(&text_mutex);
	if (WARN_ON_ONCE(!s->arch.detour))
		return -EINVAL;
	if (s->flags & KSITE_GONE)
		return -ENOENT;
	return arm64_kp_opt_write(s, BRK64_OPCODE_KPROBES, s->arch.jump);
}

/**
 * arch_optprobe_poke_finish - end a batch of arch_optprobe_poke()
 *
 * Each B was made visible as it was written.  Caller holds text_mutex.
 */
void arch_optprobe_poke_finish(void)
{
	lockdep_assert_held(&text_mutex);
}

/**
 * arch_optprobe_unpoke - turn optimized sites back into breakpoint sites
 * @sites: the sites, linked through their opt member
 *
 * A CPU that still meets a B afterwards runs the detour, which lives on
 * until the site is released.  A B that cannot be taken out (the write
 * fails only for an address that is not text, which a site never is)
 * keeps its detour for good: it is left out of the release.  Caller holds
 * text_mutex.
 */
void arch_optprobe_unpoke(struct list_head *sites)
{
	struct kprobe_site *s;
	int ret;

	lockdep_assert_held(&text_mutex);
	list_for_each_entry(s, sites, opt) {
		if (!(s->flags & KSITE_OPTIMIZED) || (s->flags & KSITE_GONE))
			continue;
		ret = arm64_kp_opt_write(s, s->arch.jump, BRK64_OPCODE_KPROBES);
		if (WARN_ONCE(ret, "kprobes: the jump at %pS stays: %d\n",
			      s->addr, ret))
			s->arch.detour = NULL;
	}
}

/* The site is being released: no B leads to its detour any more. */
void arm64_kp_opt_release(struct kprobe_site *s)
{
	if (s->arch.detour) {
		kprobe_optinsn_slot_free(s->arch.detour);
		s->arch.detour = NULL;
	}
}
