// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * arm64 kprobes backend: breakpoint sites.
 *
 * A probed instruction is replaced by BRK #KPROBES_BRK_IMM.  A hit runs the
 * site's pre_handlers from the debug exception, then executes the probed
 * instruction in one of two ways the decoder (decode.c) chose when the
 * site was prepared:
 *
 *  - simulated, for what reads the PC or branches (and a few more): the
 *    trap does its work on pt_regs, runs the post_handlers and returns
 *    past it.  One trap per hit.
 *  - stepped: the CPU returns to an out-of-line copy with every
 *    exception masked, so that nothing but a fault in the copy comes
 *    before its end.  The copy is followed by a call to step_entry.S,
 *    which saves the context and calls arm64_kp_step_done(): that moves
 *    the PC past the original instruction, and the entry goes on there
 *    with an exception return that unmasks what was unmasked.  A hit
 *    that owes post_handlers steps a second copy, whose call saves the
 *    whole context for them (arm64_kp_step_done_post()).  One trap per
 *    hit, and a call.
 *
 * A64 has no trap flag to step with in the kernel that would not clash
 * with debuggers, and the copy runs at EL1 with the probed context's
 * stack pointer: a trap taken in the kernel and returned from puts SP_EL1
 * back where it was, so instructions that use or move SP step as they
 * are.  (The flip side: a handler cannot move regs->sp.)
 *
 * Each CPU keeps a small stack of the hits in progress (struct kprobe_frame):
 * a hit from a handler, or from the copy's fault path, nests in the one
 * running, and the end of a step must find its own.
 */

#define pr_fmt(fmt) "kprobes: " fmt

#include <linux/cpu.h>
#include <linux/export.h>
#include <linux/extable.h>
#include <linux/ftrace.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/kprobes_arch.h>
#include <linux/kprobes_frame.h>
#include <linux/memory.h>
#include <linux/perf_event.h>
#include <linux/ptrace.h>
#include <linux/set_memory.h>
#include <linux/uaccess.h>

#include <asm/daifflags.h>
#include <asm/debug-monitors.h>
#include <asm/insn.h>
#include <asm/patching.h>
#include <asm/sections.h>

#include "backend.h"
#include "decode-insn.h"

/* ---- Per-CPU bookkeeping ------------------------------------------- */

/*
 * The frames of this CPU's hits (<linux/kprobes_frame.h>).  Besides the
 * hit itself, only a fault in the copy or a debug exception nested in a
 * handler can interleave with them.  frame.saved is the probed context's
 * PSTATE (its low 32 bits, all there are, less a pending branch type)
 * while it steps and, with pseudo-NMI, its interrupt priority mask from
 * bit ARM64_KP_PMR_SHIFT up.
 */
static DEFINE_PER_CPU(struct kprobe_frames, arm64_kp_cpu);

/* The probe being handled on this CPU (<linux/kprobes.h>); the hits keep it. */
DEFINE_PER_CPU(struct kprobe *, current_kprobe);
EXPORT_PER_CPU_SYMBOL_GPL(current_kprobe);

/*
 * The step runs with all of DAIF masked: no interrupt, no SError, and no
 * watchpoint or hardware breakpoint (D) taken with the PC in the copy,
 * whose handler would then step the slot with our call still to come.  A
 * watchpoint on the stepped access is therefore not reported.
 */
#define ARM64_KP_STEP_MASK	DAIF_MASK

/*
 * Where pseudo-NMI masks interrupts by priority (ICC_PMR_EL1), the step
 * also masks them that way, as local_daif_mask() does: the trap's return
 * loads the priority mask from regs->pmr_save, and irqs_disabled() reads
 * that mask, not PSTATE.I.  Left as the context had it, a fault in the
 * copy would find the CPU preemptible: kprobe_page_fault() would pass it
 * by, and a fault that can be fixed could sleep and move the task to a
 * CPU with no step in flight.
 */
#define ARM64_KP_PMR_SHIFT	32

/* PSTATE's condition flags, N, Z, C and V. */
#define ARM64_KP_FLAGS		(PSR_N_BIT | PSR_Z_BIT | PSR_C_BIT | PSR_V_BIT)

/* ---- Preparing a site ------------------------------------------------ */

/*
 * Is the instruction at @addr between a load-exclusive and its
 * store-exclusive?  A trap there clears the exclusive monitor, so the
 * store would fail every time and the loop around it never end.  Looks
 * back a few instructions, not past the start of the function (found by
 * the core's bisection, not a linear kallsyms walk).
 */
static bool arm64_kp_in_exclusive(unsigned long addr)
{
	struct kprobe_func f;
	unsigned long pos;
	u32 insn;
	int n;

	if (kprobe_func_find(addr, &f, false))
		return false;
	pos = addr;
	for (n = 0; n < 16 && pos > f.start; n++) {
		pos -= AARCH64_INSN_SIZE;
		if (aarch64_insn_read((void *)pos, &insn))
			return false;
		if (arm64_probe_is_ldx(insn))
			return true;
		if (arm64_probe_is_stx(insn))
			return false;
	}
	return false;
}

/**
 * arch_kprobe_site_prepare - decode the probed instruction, build its copy
 * @s: the new site; s->addr is the probed instruction
 * @opcode: where to store the instruction
 *
 * Simulated instructions need nothing more.  Stepped ones get a slot
 * holding their copy and the call that ends the step
 * (arm64_kp_step_template), and are marked KSITE_ARCH_SLOW: the hit
 * path's shortcut only knows how to simulate.
 *
 * Return: 0, -EINVAL if the instruction cannot be probed (the reason is
 * logged at debug level), -ENOMEM if no slot is left.
 */
int arch_kprobe_site_prepare(struct kprobe_site *s, kprobe_opcode_t *opcode)
{
	struct arch_kprobe_site *a = &s->arch;
	unsigned long addr = (unsigned long)s->addr;
	__le32 copy[2 * ARM64_KP_STEP_END / AARCH64_INSN_SIZE];
	unsigned long post = (unsigned long)arm64_kp_step_entry_post;
	const char *why;
	u32 insn;

	memset(a, 0, sizeof(*a));
	if (!IS_ALIGNED(addr, AARCH64_INSN_SIZE) ||
	    aarch64_insn_read(s->addr, &insn))
		return -EINVAL;

	if (arm64_probe_decode(insn, addr, &a->d, &why) == ARM64_PROBE_REFUSED) {
		pr_debug("%pS: %s\n", s->addr, why);
		return -EINVAL;
	}
	a->d.guarded = system_supports_bti_kernel();
	if (arm64_kp_in_exclusive(addr)) {
		pr_debug("%pS: inside an exclusive load/store sequence\n", s->addr);
		return -EINVAL;
	}

	if (a->d.how == ARM64_PROBE_STEP) {
		a->slot = kprobe_slot_alloc();
		if (!a->slot)
			return -ENOMEM;
		/*
		 * Code is little-endian in memory, whatever the data's order:
		 * the template is code already, the copy is turned into it.
		 * The entry's address is data, in the kernel's order.
		 */
		BUILD_BUG_ON(sizeof(copy) > KPROBE_SLOT_SIZE);
		copy[0] = cpu_to_le32(insn);
		memcpy(&copy[1], arm64_kp_step_template,
		       ARM64_KP_STEP_END - ARM64_KP_STEP_TAIL);
		memcpy((u8 *)copy + ARM64_KP_STEP_POST, copy, ARM64_KP_STEP_END);
		memcpy((u8 *)copy + ARM64_KP_STEP_POST + ARM64_KP_STEP_ENTRY,
		       &post, sizeof(post));
		aarch64_insn_copy(a->slot, copy, sizeof(copy));
		s->flags |= KSITE_ARCH_SLOW;
	}
	*opcode = insn;
	return 0;
}

/**
 * arch_kprobe_site_release - free what arch_kprobe_site_prepare() took
 * @s: the site; no CPU can be executing its slot any more
 */
void arch_kprobe_site_release(struct kprobe_site *s)
{
	arm64_kp_opt_release(s);
	if (s->arch.slot) {
		kprobe_slot_free(s->arch.slot);
		s->arch.slot = NULL;
	}
}

/**
 * arch_kprobe_slot_page_init - make a new slot page trap everywhere
 * @page: PAGE_SIZE bytes from execmem, read-only and executable already
 *
 * Unused slots hold BRK #FAULT_BRK_IMM: a stray branch into the page
 * stops there.
 */
void arch_kprobe_slot_page_init(void *page)
{
	/* aarch64_insn_set() stores the word as it is given: in code order. */
	aarch64_insn_set(page, (__force u32)cpu_to_le32(AARCH64_BREAK_FAULT),
			 PAGE_SIZE);
}

/**
 * arch_kprobe_on_insn_boundary - does an instruction start at @addr?
 * @addr: the address to check
 * @offset: its distance from the start of its function
 *
 * Return: true when @addr is instruction-aligned: A64 instructions are
 * all four bytes long.
 */
bool arch_kprobe_on_insn_boundary(unsigned long addr, unsigned long offset)
{
	return IS_ALIGNED(addr, AARCH64_INSN_SIZE);
}

/**
 * arch_adjust_kprobe_addr - where a probe on a function + @offset goes
 * @addr: the function's start
 * @offset: offset into the function
 * @on_func_entry: set to whether @addr is the function's entry
 *
 * Nothing moves on arm64: a BRK may replace a BTI or PACIASP landing pad
 * (a breakpoint exception is taken before the branch target check).
 *
 * Return: @addr + @offset.
 */
kprobe_opcode_t *arch_adjust_kprobe_addr(unsigned long addr,
					 unsigned long offset,
					 bool *on_func_entry)
{
	*on_func_entry = !offset;
	return (kprobe_opcode_t *)(addr + offset);
}

/**
 * arch_kprobe_entry_frame - is @addr where a return probe still works?
 * @func: the function's start
 * @addr: an instruction in it, past its first
 *
 * ftrace's patchable entry opens the function with MOV X9, X30 and a BL
 * that returns with X30 put back (or replaced by the graph tracer's
 * return handler, which a return probe then chains to).  The instruction
 * after that BL is the first the compiler wrote: the frame is still the
 * caller's and the link register is not yet signed.  SystemTap puts its
 * return probes there, clear of ftrace's instructions.
 *
 * Return: true when @addr is the instruction after @func's ftrace call.
 */
bool arch_kprobe_entry_frame(unsigned long func, unsigned long addr)
{
	unsigned long call = ftrace_location(func);

	return call && addr == call + AARCH64_INSN_SIZE;
}

/*
 * Without hardware PAN, kernel_entry and kernel_exit call entry.S's
 * software-PAN helpers before pt_regs is whole and after it is spent: a
 * BRK there would be taken again from inside the same helper, for ever.
 * They are local symbols of .text, outside every range the core knows,
 * so they are found by name.  __swpan_entry_el0 is an inner label of
 * __swpan_entry_el1, and kallsyms ends the latter's size there.
 */
static int arm64_kp_blacklist_swpan(void)
{
	static const char * const names[] = {
		"__swpan_entry_el1", "__swpan_entry_el0",
		"__swpan_exit_el1", "__swpan_exit_el0",
	};
	unsigned long addr;
	unsigned int i;
	int ret;

	if (!IS_ENABLED(CONFIG_ARM64_SW_TTBR0_PAN))
		return 0;
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		addr = kallsyms_lookup_name(names[i]);
		if (!addr) {
			pr_warn("%s not found: incomplete blacklist\n", names[i]);
			continue;
		}
		ret = kprobe_add_ksym_blacklist(addr);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/**
 * arch_populate_kprobe_blacklist - arm64 text that must never be probed
 *
 * The core already refuses the entry text (the exception vectors and
 * their C halves are noinstr or in .entry.text), the debug-exception path
 * (NOKPROBE) and .kprobes.text.  Left are the texts that run with another
 * address space or at another exception level: the identity-mapped text,
 * the KVM hypervisor's, hibernation's exit and the entry trampoline; and
 * the software-PAN helpers, which entry.S keeps in plain .text.
 *
 * Return: 0 or the error from adding to the blacklist.
 */
int arch_populate_kprobe_blacklist(void)
{
	static const struct {
		char *start, *end;
	} areas[] = {
		{ __idmap_text_start, __idmap_text_end },
#ifdef CONFIG_KVM
		{ __hyp_idmap_text_start, __hyp_idmap_text_end },
		{ __hyp_text_start, __hyp_text_end },
#endif
#ifdef CONFIG_HIBERNATION
		{ __hibernate_exit_text_start, __hibernate_exit_text_end },
#endif
#ifdef CONFIG_UNMAP_KERNEL_AT_EL0
		{ __entry_tramp_text_start, __entry_tramp_text_end },
#endif
	};
	unsigned int i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(areas); i++) {
		ret = kprobe_add_area_blacklist((unsigned long)areas[i].start,
						(unsigned long)areas[i].end);
		if (ret)
			return ret;
	}
	return arm64_kp_blacklist_swpan();
}

/* ---- Arming ------------------------------------------------------------ */

/*
 * The writes of the batch in progress, made by arch_kprobe_poke_finish()
 * (or when the array is full) in one stop_machine().  text_mutex.
 */
#define ARM64_KP_POKES	128

static void *arm64_kp_poke_addr[ARM64_KP_POKES];
static u32 arm64_kp_poke_insn[ARM64_KP_POKES];
static unsigned int arm64_kp_pokes;

static void arm64_kp_poke_flush(void)
{
	int ret;

	if (!arm64_kp_pokes)
		return;
	lockdep_assert_cpus_held();
	ret = aarch64_insn_patch_text(arm64_kp_poke_addr, arm64_kp_poke_insn,
				      arm64_kp_pokes);
	WARN_ONCE(ret, "kprobes: text patching failed: %d\n", ret);
	arm64_kp_pokes = 0;
}

/**
 * arch_kprobe_poke - queue the breakpoint of a site, or its removal
 * @s: a breakpoint site
 * @arm: true to write BRK #KPROBES_BRK_IMM, false to put the instruction back
 *
 * Nothing is written until arch_kprobe_poke_finish(), which the core calls
 * before it drops text_mutex, after arming as after disarming
 * (KPROBE_POKE_IN_FINISH).  Each write is reported to perf
 * (PERF_RECORD_TEXT_POKE).  Caller holds the CPU hotplug lock and
 * text_mutex (KPROBE_POKE_CPUS_LOCKED).
 */
void arch_kprobe_poke(struct kprobe_site *s, bool arm)
{
	u32 old = arm ? s->arch.d.insn : BRK64_OPCODE_KPROBES;
	u32 insn = arm ? BRK64_OPCODE_KPROBES : s->arch.d.insn;

	lockdep_assert_held(&text_mutex);
	if (s->flags & KSITE_GONE)
		return;
	if (arm64_kp_pokes == ARM64_KP_POKES)
		arm64_kp_poke_flush();
	arm64_kp_poke_addr[arm64_kp_pokes] = s->addr;
	arm64_kp_poke_insn[arm64_kp_pokes] = insn;
	arm64_kp_pokes++;
	perf_event_text_poke(s->addr, &old, AARCH64_INSN_SIZE, &insn,
			     AARCH64_INSN_SIZE);
}

/**
 * arch_kprobe_poke_finish - make the queued writes, all at once
 *
 * One stop_machine() for the whole batch: every other CPU waits in the
 * stopper while the instructions are replaced and the instruction cache
 * cleaned, then synchronises its context.  Caller holds the CPU hotplug
 * lock and text_mutex.
 */
void arch_kprobe_poke_finish(void)
{
	lockdep_assert_held(&text_mutex);
	arm64_kp_poke_flush();
}

/* ---- Hit path ---------------------------------------------------------- */

/*
 * The list walks, kept out of line: they are the rare case, and inlined
 * they would cost the common one its registers.
 */
static noinline bool arm64_kp_site_pre(struct kprobe_frame *f,
				       struct pt_regs *regs)
{
	return kprobe_site_pre(f->site, regs, &f->posts);
}

NOKPROBE_SYMBOL(arm64_kp_site_pre);

static noinline void arm64_kp_site_post(struct kprobe_frame *f,
					struct pt_regs *regs)
{
	kprobe_site_post(f->site, f->solo, &f->posts, regs);
}

NOKPROBE_SYMBOL(arm64_kp_site_post);

/*
 * The post_handlers of @f's hit: the one probe it took the shortcut for
 * (see kprobe_site_solo()) without a call or a list, or those it noted.
 */
static nokprobe_inline void arm64_kp_post(struct kprobe_frame *f,
					  struct pt_regs *regs)
{
	struct kprobe *solo = f->solo;
	kprobe_post_handler_t post;

	if (!solo) {
		arm64_kp_site_post(f, regs);
		return;
	}
	post = solo->post_handler;
	if (post) {
		__this_cpu_write(current_kprobe, solo);
		post(solo, regs, 0);
	}
}

/* Does the hit of @f owe post_handlers once its instruction has run? */
static nokprobe_inline bool arm64_kp_posts_owed(struct kprobe_frame *f)
{
	if (f->missed)
		return false;
	if (f->solo)
		return f->solo->post_handler;
	return kprobe_hit_posts_due(&f->posts);
}

/*
 * Send the CPU to the copy of @f's site, every exception masked: the
 * slot's second half if post_handlers are owed (backend.h).
 */
static nokprobe_inline int arm64_kp_start_step(struct kprobe_frame *f,
					       struct pt_regs *regs)
{
	/*
	 * A BRK on a landing pad is taken with the branch's type pending;
	 * the copy is no branch target, and the context goes on past it.
	 */
	u64 pstate = regs->pstate & ~PSR_BTYPE_MASK;

	f->saved = lower_32_bits(pstate);
	if (system_uses_irq_prio_masking()) {
		f->saved |= regs->pmr_save << ARM64_KP_PMR_SHIFT;
		regs->pmr_save = GIC_PRIO_IRQON | GIC_PRIO_PSR_I_SET;
	}
	regs->pstate = pstate | ARM64_KP_STEP_MASK;
	regs->pc = (unsigned long)f->site->arch.slot;
	if (arm64_kp_posts_owed(f))
		regs->pc += ARM64_KP_STEP_POST;
	barrier();
	f->phase = KPROBE_FRAME_STEPPING;
	return DBG_HOOK_HANDLED;
}

/* Put the probed context's mask back after a step. */
static nokprobe_inline void arm64_kp_unmask(struct kprobe_frame *f,
					    struct pt_regs *regs)
{
	regs->pstate = (regs->pstate & ~ARM64_KP_STEP_MASK) |
		       (f->saved & ARM64_KP_STEP_MASK);
	if (system_uses_irq_prio_masking())
		regs->pmr_save = f->saved >> ARM64_KP_PMR_SHIFT;
}

/* Execute the instruction of @s for a hit whose handlers are done. */
static nokprobe_inline int arm64_kp_execute(struct kprobe_frames *c,
					    struct kprobe_frame *f,
					    struct pt_regs *regs)
{
	struct kprobe_site *s = f->site;

	if (s->arch.slot)
		return arm64_kp_start_step(f, regs);
	arm64_probe_simulate(&s->arch.d, regs);
	if (!f->missed)
		arm64_kp_post(f, regs);
	kprobe_frame_pop(c, f);
	return DBG_HOOK_HANDLED;
}

/*
 * A BRK #KPROBES_BRK_IMM with no site: if it has left the text meanwhile
 * (the site was disarmed while this CPU trapped), run what is there now.
 */
static int arm64_kp_stray(unsigned long addr)
{
	u32 insn;

	if (aarch64_insn_read((void *)addr, &insn) || insn == BRK64_OPCODE_KPROBES)
		return DBG_HOOK_ERROR;
	return DBG_HOOK_HANDLED;
}

NOKPROBE_SYMBOL(arm64_kp_stray);

/* A hit while this CPU already runs a probe: execute, count, no handlers. */
static noinline int arm64_kp_reenter(struct kprobe_frames *c,
				     struct kprobe_site *s,
				     struct pt_regs *regs,
				     struct kprobe *running)
{
	struct kprobe_frame *f;

	kprobe_site_missed(s);
	if (!s->arch.slot) {
		arm64_probe_simulate(&s->arch.d, regs);
		return DBG_HOOK_HANDLED;
	}
	f = kprobe_frame_push(c, s, running, true);
	if (!f) {
		pr_emerg("probe at %pS hit %u deep; cannot step it\n", s->addr,
			 KPROBE_FRAME_NEST);
		return DBG_HOOK_ERROR;
	}
	return arm64_kp_start_step(f, regs);
}

NOKPROBE_SYMBOL(arm64_kp_reenter);

/*
 * The task runs the instruction of @s again after a fault in its copy
 * was fixed (see kprobe_replay_expect()): the hit was counted and its
 * pre_handlers ran the first time.  Step it again, so that a second
 * fault is taken back the same way; only the post_handlers are left,
 * unless the first hit was itself a missed one.  Only stepped sites
 * fault in a copy.
 */
static noinline int arm64_kp_replay(struct kprobe_frames *c,
				    struct kprobe_site *s,
				    struct pt_regs *regs)
{
	struct kprobe *running = kprobe_running();
	struct kprobe_frame *f;

	f = kprobe_frame_push(c, s, running, !!running);
	if (!f) {
		pr_emerg("probe at %pS hit %u deep; cannot step it\n", s->addr,
			 KPROBE_FRAME_NEST);
		return DBG_HOOK_ERROR;
	}
	if (!running) {
		f->posts.overflow = true;	/* those of the probes now */
		__this_cpu_write(current_kprobe, kprobe_site_first(s));
	}
	return arm64_kp_start_step(f, regs);
}

NOKPROBE_SYMBOL(arm64_kp_replay);

/*
 * A hit with nothing running on this CPU and no fault to replay: a
 * frame, the pre_handlers, then the instruction.  Inlined into
 * kprobe_brk_handler(): a stepped instruction's hit and a post_handler's,
 * the common cases past its shortcut, pay no call for it.
 */
static nokprobe_inline int arm64_kp_fresh(struct kprobe_frames *c,
					  struct kprobe_site *s,
					  struct pt_regs *regs)
{
	struct kprobe_frame *f;
	struct kprobe *p;

	f = kprobe_frame_push(c, s, NULL, false);
	if (unlikely(!f))	/* cannot happen: no probe is running */
		return DBG_HOOK_ERROR;
	kprobe_site_hit(s);

	/*
	 * current_kprobe stays non-NULL until the hit is over: that is what
	 * sends a fault in the copy to kprobe_fault_handler() and makes
	 * nested hits count as missed.  A handler may have reset it.
	 */
	p = kprobe_site_solo(s);
	if (likely(p)) {
		f->solo = p;
		__this_cpu_write(current_kprobe, p);
		if (p->pre_handler(p, regs))
			goto redirected;
	} else {
		p = kprobe_site_first(s);
		__this_cpu_write(current_kprobe, p);
		if (arm64_kp_site_pre(f, regs))
			goto redirected;
	}
	if (!kprobe_running())
		__this_cpu_write(current_kprobe, p);
	return arm64_kp_execute(c, f, regs);

redirected:
	/*
	 * A handler moved the PC: the instruction is skipped, and no branch
	 * type is pending at the new address.
	 */
	regs->pstate &= ~PSR_BTYPE_MASK;
	kprobe_frame_pop(c, f);
	return DBG_HOOK_HANDLED;
}

/**
 * kprobe_brk_handler - a BRK #KPROBES_BRK_IMM was hit
 * @regs: the trapped context; regs->pc is the BRK's address
 * @esr: the exception syndrome
 *
 * Called from the debug-exception path with interrupts masked, in the
 * NMI-like context arm64 gives debug exceptions.
 *
 * Return: DBG_HOOK_HANDLED, or DBG_HOOK_ERROR if the BRK is not ours.
 */
int kprobe_brk_handler(struct pt_regs *regs, unsigned long esr)
{
	unsigned long addr = instruction_pointer(regs);
	struct kprobe_frames *c;
	struct kprobe *p, *running;
	struct kprobe_site *s;

	if (user_mode(regs))
		return DBG_HOOK_ERROR;
	s = kprobe_site_find(addr);
	if (unlikely(!s))
		return arm64_kp_stray(addr);

	/*
	 * The common case, kept short: no probe running on this CPU, one
	 * enabled probe without a post_handler, a simulated instruction
	 * (kprobe_site_bp_solo() says all but the first in one pointer).
	 * No frame: nothing is left to track once the simulation is done.
	 */
	running = kprobe_running();
	p = kprobe_site_bp_solo(s);
	if (likely(p && !running)) {
		kprobe_site_hit(s);
		__this_cpu_write(current_kprobe, p);
		if (!p->pre_handler(p, regs))
			arm64_probe_simulate(&s->arch.d, regs);
		else
			regs->pstate &= ~PSR_BTYPE_MASK;
		__this_cpu_write(current_kprobe, NULL);
		return DBG_HOOK_HANDLED;
	}

	c = this_cpu_ptr(&arm64_kp_cpu);
	if (unlikely(kprobe_replay_take(s)))
		return arm64_kp_replay(c, s, regs);
	if (unlikely(running))
		return arm64_kp_reenter(c, s, regs, running);
	return arm64_kp_fresh(c, s, regs);
}

NOKPROBE_SYMBOL(kprobe_brk_handler);

/* A call from a slot that no step of this CPU is waiting for. */
static void __noreturn arm64_kp_step_lost(u32 *slot)
{
	panic("kprobes: a step ended in slot %pS with no step in flight\n",
	      slot);
}

NOKPROBE_SYMBOL(arm64_kp_step_lost);

/*
 * The copy of a step has run: check that this CPU's top frame is that
 * step, and put regs->pc past the original instruction and regs->pstate
 * as the context had it, with the flags the copy left.  The priority
 * mask to give back goes in regs->pmr_save.
 */
static nokprobe_inline struct kprobe_frame *
arm64_kp_step_end(struct kprobe_frames *c, u32 *slot, struct pt_regs *regs)
{
	unsigned int depth = c->depth;
	struct kprobe_frame *f;

	if (unlikely(!depth))
		arm64_kp_step_lost(slot);
	f = &c->frame[depth - 1];
	OPTIMIZER_HIDE_VAR(f);
	if (unlikely(f->phase != KPROBE_FRAME_STEPPING ||
		     f->site->arch.slot != slot))
		arm64_kp_step_lost(slot);

	f->phase = KPROBE_FRAME_BUSY;
	regs->pc = (unsigned long)f->site->addr + AARCH64_INSN_SIZE;
	/*
	 * The copy can change no PSTATE field but the flags (decode.c
	 * refuses the rest, or simulates it); f->saved has no branch type.
	 */
	regs->pstate = (f->saved & ~ARM64_KP_FLAGS) |
		       (regs->pstate & ARM64_KP_FLAGS);
	/* Zero without pseudo-NMI, as a trap's pt_regs has it. */
	regs->pmr_save = f->saved >> ARM64_KP_PMR_SHIFT;
	return f;
}

/* The hit of @f, the top frame of @c, is over: unmask as it was. */
static nokprobe_inline void arm64_kp_step_over(struct kprobe_frames *c,
					       struct kprobe_frame *f,
					       struct pt_regs *regs)
{
	kprobe_frame_pop(c, f);
	/* Every exception stays masked until the exception return. */
	if (system_uses_irq_prio_masking()) {
		gic_write_pmr(regs->pmr_save);
		pmr_sync();
	}
}

/**
 * arm64_kp_step_done - the copy of a step that owes no post_handler has run
 * @slot: the slot whose copy it was
 * @regs: the probed context as arm64_kp_step_entry (step_entry.S) saved
 *	  it: x0 to x18, x30, and in regs->pstate the flags the copy left
 *
 * Called with every exception masked.  The step is the top frame of this
 * CPU's stack: anything nested in it has finished by the time its copy
 * is done.  Ends the hit and gives the context its interrupt priority
 * mask back where pseudo-NMI keeps one; the entry's exception return
 * does the rest from regs->pc and regs->pstate, set here.
 */
void arm64_kp_step_done(u32 *slot, struct pt_regs *regs)
{
	struct kprobe_frames *c = this_cpu_ptr(&arm64_kp_cpu);

	arm64_kp_step_over(c, arm64_kp_step_end(c, slot, regs), regs);
}

NOKPROBE_SYMBOL(arm64_kp_step_done);

/**
 * arm64_kp_step_done_post - the copy of a step that owes post_handlers has run
 * @slot: the slot whose copy it was (the start of the slot)
 * @regs: the whole probed context, saved by arm64_kp_step_entry_post
 *
 * As arm64_kp_step_done(), and runs the post_handlers before the hit
 * ends, as in a debug exception (kprobe_frame_post_enter()), with the
 * frame record in @regs naming the probed address for the unwinder.
 */
void arm64_kp_step_done_post(u32 *slot, struct pt_regs *regs)
{
	struct kprobe_frames *c = this_cpu_ptr(&arm64_kp_cpu);
	struct kprobe_frame *f = arm64_kp_step_end(c, slot, regs);
	bool irqs_were_on;

	regs->stackframe[1] = regs->pc;
	irqs_were_on = kprobe_frame_post_enter(false);
	arm64_kp_post(f, regs);
	kprobe_frame_post_exit(false, irqs_were_on);
	arm64_kp_step_over(c, f, regs);
}

NOKPROBE_SYMBOL(arm64_kp_step_done_post);

/**
 * kprobe_ss_brk_handler - BRK #KPROBES_BRK_SS_IMM was hit
 * @regs: the trapped context
 * @esr: the exception syndrome
 *
 * Only the end of an optimized probe's redirected detour (detour.c) uses
 * it: steps end with a call (arm64_kp_step_done()).
 *
 * Return: DBG_HOOK_HANDLED, or DBG_HOOK_ERROR if the BRK is not ours.
 */
int kprobe_ss_brk_handler(struct pt_regs *regs, unsigned long esr)
{
	if (arm64_kp_is_opt_redirect(regs))
		return arm64_kp_opt_redirect(regs);
	return DBG_HOOK_ERROR;
}

NOKPROBE_SYMBOL(kprobe_ss_brk_handler);

/**
 * kprobe_fault_handler - a fault while this CPU runs a probe
 * @regs: the faulting context
 * @trapnr: the exception syndrome (arm64 passes the ESR)
 *
 * A fault in the copy of the step in flight is the probed instruction's
 * own: the context goes back on the original instruction with its own
 * mask, as if the probe were not there, and the fault path carries on
 * from there (an exception-table fixup is keyed to that address).  That
 * path inherited the copy's masked interrupts on entry, so they are
 * inherited again from the context.  If the fault is fixed instead, the
 * instruction runs again, which is no new hit (kprobe_replay_expect();
 * stepped sites never take the shortcut).  Faults in handlers, or
 * anywhere else, are left alone.
 *
 * Return: 0: the fault path goes on.
 */
int kprobe_fault_handler(struct pt_regs *regs, int trapnr)
{
	struct kprobe_frames *c = this_cpu_ptr(&arm64_kp_cpu);
	struct kprobe_frame *f = kprobe_frame_top(c);
	unsigned long slot;

	if (user_mode(regs) || !f || f->phase != KPROBE_FRAME_STEPPING)
		return 0;
	/* The copy in either half of the slot (backend.h). */
	slot = (unsigned long)f->site->arch.slot;
	if (regs->pc != slot && regs->pc != slot + ARM64_KP_STEP_POST)
		return 0;

	regs->pc = (unsigned long)f->site->addr;
	arm64_kp_unmask(f, regs);
	kprobe_replay_expect(f->site);
	kprobe_frame_pop(c, f);
	local_daif_inherit(regs);
	return 0;
}

NOKPROBE_SYMBOL(kprobe_fault_handler);

#ifdef CONFIG_KRETPROBES
/* Functions that return to someone other than their caller, or never. */
const char * const arch_kretprobe_refused[] = {
	"cpu_switch_to",	/* returns on the next task's stack */
	"__switch_to",		/* returns with another current */
	"ret_from_fork",	/* "returns" to a new task */
	"call_on_irq_stack",	/* its frame record is on another stack */
	NULL
};
#endif /* CONFIG_KRETPROBES */
