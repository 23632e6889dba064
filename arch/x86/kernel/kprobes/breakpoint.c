// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * x86 kprobes backend: breakpoint sites.
 *
 * A site is armed by writing int3 over the first byte of the probed
 * instruction.  When a CPU reaches it, kprobe_int3_handler() runs the
 * pre_handlers (through the core) and then has to execute the instruction
 * that the int3 covers.  How is chosen once, when the site is prepared, by
 * the rule table in decode.c, which also builds copies and emulates:
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
#include <linux/kprobes_frame.h>
#include <linux/export.h>
#include <linux/extable.h>
#include <linux/memory.h>
#include <linux/preempt.h>
#include <linux/lockdep.h>
#include <linux/uaccess.h>
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

/*
 * The frames of this CPU's hits (<linux/kprobes_frame.h>).  Besides the
 * hit itself, only NMIs and machine checks can interleave with them here.
 * frame.saved is X86_EFLAGS_IF of the probed context while it steps.
 */
static DEFINE_PER_CPU(struct kprobe_frames, kx_cpu);

/* The probe being handled on this CPU (<linux/kprobes.h>); the hits keep it. */
DEFINE_PER_CPU(struct kprobe *, current_kprobe);
EXPORT_PER_CPU_SYMBOL_GPL(current_kprobe);

/*
 * A frame around handlers run from elsewhere than the trap (the ftrace
 * path of a KSITE_FAULT site), so that kprobe_fault_handler() knows
 * their faults.  NULL when the stack is full: then it will not.
 */
struct kprobe_frame *kx_frame_enter(struct kprobe_site *s)
{
	return kprobe_frame_push(this_cpu_ptr(&kx_cpu), s, kprobe_running(), false);
}

NOKPROBE_SYMBOL(kx_frame_enter);

void kx_frame_leave(struct kprobe_frame *f)
{
	if (f)
		kprobe_frame_pop(this_cpu_ptr(&kx_cpu), f);
}

NOKPROBE_SYMBOL(kx_frame_leave);

/* The return address of the call that ends the tracked copy of @s. */
static nokprobe_inline unsigned long kx_step_end(struct kprobe_site *s)
{
	return (unsigned long)s->arch.slot + KX_TRAP_COPY + s->arch.len +
	       CALL_INSN_SIZE;
}

/* ---- Preparing a site ------------------------------------------------ */

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
	const char *why;
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
		/* Our call there (arch_kprobe_ftrace_call()) has no copy. */
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

	ret = kx_classify(a, &insn, addr, &why);
	if (ret) {
		pr_debug("%pS: cannot be probed (%*ph): %s\n",
			 s->addr, insn.length, buf, why);
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
 * arch_kprobe_entry_frame - is @addr where a return probe still works?
 * @func: the function's start
 * @addr: an instruction in it, past its entry
 *
 * On x86 the tools put return probes on the entry (or right after its
 * ENDBR, which arch_adjust_kprobe_addr() already counts), so nothing
 * further in is taken as one.
 *
 * Return: false.
 */
bool arch_kprobe_entry_frame(unsigned long func, unsigned long addr)
{
	return false;
}

/**
 * arch_populate_kprobe_blacklist - x86 text that must never be probed
 *
 * The core already refuses the entry text (which runs before the kernel's
 * own stack, GS base and CR3 are in place), noinstr and the irq entry
 * text.  What is left on x86 are the ftrace trampoline templates: ftrace
 * copies them byte for byte into every trampoline it allocates, so a
 * breakpoint in them would be copied along as a stray int3 that no site
 * owns.  (i386 has no such copies: its calls go to ftrace_caller
 * itself.)
 *
 * Return: 0 or the error from kprobe_add_area_blacklist().
 */
int arch_populate_kprobe_blacklist(void)
{
	int ret = 0;

#if defined(CONFIG_X86_64) && defined(CONFIG_DYNAMIC_FTRACE)
	ret = kprobe_add_area_blacklist((unsigned long)ftrace_caller,
					(unsigned long)ftrace_caller_end);
	if (!ret)
		ret = kprobe_add_area_blacklist((unsigned long)ftrace_regs_caller,
						(unsigned long)ftrace_regs_caller_end);
#endif
	return ret;
}

/* ---- Arming -------------------------------------------------------------- */

/* Did this batch write a breakpoint?  Protected by text_mutex. */
static bool kx_batch_dirty;
/* Or queue an ftrace site's call (arch_kprobe_ftrace_call())? */
static bool kx_calls_queued;

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
/* What ftrace last wrote at ftrace site @s: its nop, or a call we keep. */
static void kx_ftrace_insn(struct kprobe_site *s, u8 *insn)
{
	if (s->arch.target)
		memcpy(insn, text_gen_insn(CALL_INSN_OPCODE, s->addr,
					   (void *)s->arch.target), KX_FENTRY_SIZE);
	else
		memcpy(insn, x86_nops[KX_FENTRY_SIZE], KX_FENTRY_SIZE);
}

/* The call that arms ftrace site @s until ftrace carries it. */
static void kx_ftrace_our_call(struct kprobe_site *s, u8 *insn)
{
	memcpy(insn, text_gen_insn(CALL_INSN_OPCODE, s->addr,
				   kx_ftrace_call_entry), KX_FENTRY_SIZE);
}

/* Is the text at ftrace site @s exactly @insn? */
static bool kx_ftrace_text_is(struct kprobe_site *s, const u8 *insn)
{
	u8 cur[KX_FENTRY_SIZE];

	return !(s->flags & KSITE_GONE) &&
	       !copy_from_kernel_nofault(cur, s->addr, KX_FENTRY_SIZE) &&
	       !memcmp(cur, insn, KX_FENTRY_SIZE);
}

/**
 * arch_kprobe_ftrace_call - arm an ftrace site with our call, or disarm it
 * @s: the site, on a function's ftrace call site
 * @arm: replace ftrace's nop with a call to kx_ftrace_call_entry (true),
 *	 or put back what ftrace wrote there last (its nop, or the call
 *	 arch_kprobe_ftrace_hold() kept)
 *
 * Five bytes are not written atomically: the write is queued for
 * text_poke_finish(), whose breakpoint stands in for the instruction
 * until all of it is in place and runs the new one meanwhile.  So the
 * site is live, or gone, once arch_kprobe_poke_finish() returns.  Only
 * over the text expected there: anything else belongs to ftrace.  Caller
 * holds text_mutex.
 *
 * Return: true if the write was queued.
 */
bool arch_kprobe_ftrace_call(struct kprobe_site *s, bool arm)
{
	u8 ftrace[KX_FENTRY_SIZE], ours[KX_FENTRY_SIZE];
	bool ok;

	lockdep_assert_held(&text_mutex);
	kx_ftrace_insn(s, ftrace);
	kx_ftrace_our_call(s, ours);
	ok = kx_ftrace_text_is(s, arm ? ftrace : ours);
	if (ok) {
		text_poke_queue(s->addr, arm ? ours : ftrace, KX_FENTRY_SIZE,
				NULL);
		kx_calls_queued = true;
	}
	if (!arm)
		WRITE_ONCE(s->arch.target, 0);
	return ok;
}

/**
 * arch_kprobe_ftrace_hold - ftrace means to write over our call
 * @s: the ftrace site, armed by our call
 * @insn: the five bytes ftrace is about to write there: its nop or a call
 *
 * Keeps our call, and has kx_ftrace_call_handler() make the call @insn
 * makes after the probes' handlers from now on.  Nothing is written: a
 * hit reads the new target with one load.  Caller holds text_mutex.
 *
 * Return: true if done; false for anything but the nop or a call, or when
 * our call is not there.
 */
bool arch_kprobe_ftrace_hold(struct kprobe_site *s, const void *insn)
{
	u8 ours[KX_FENTRY_SIZE];
	const u8 *new = insn;
	unsigned long target = 0;
	s32 rel;

	lockdep_assert_held(&text_mutex);
	memcpy(&rel, new + 1, sizeof(rel));
	if (new[0] == CALL_INSN_OPCODE)
		target = (unsigned long)s->addr + KX_FENTRY_SIZE + rel;
	else if (memcmp(new, x86_nops[KX_FENTRY_SIZE], KX_FENTRY_SIZE))
		return false;
	kx_ftrace_our_call(s, ours);
	if (!kx_ftrace_text_is(s, ours))
		return false;
	WRITE_ONCE(s->arch.target, target);
	return true;
}
#endif

/**
 * arch_kprobe_poke_finish - make a batch of pokes visible everywhere
 *
 * One serializing IPI round for the breakpoints of the batch; the queued
 * calls of ftrace sites take text_poke_finish()'s three.  Caller holds
 * text_mutex.
 */
void arch_kprobe_poke_finish(void)
{
	lockdep_assert_held(&text_mutex);
	if (kx_calls_queued) {
		kx_calls_queued = false;
		text_poke_finish();
	}
	if (!kx_batch_dirty)
		return;
	kx_batch_dirty = false;
	text_poke_sync();
}

/* ---- Hit path ---------------------------------------------------------- */

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
static nokprobe_inline int kx_start_step(struct kprobe_frame *f, struct pt_regs *regs)
{
	f->saved = regs->flags & X86_EFLAGS_IF;
	regs->flags &= ~X86_EFLAGS_IF;
	regs->ip = (unsigned long)f->site->arch.slot + KX_TRAP_COPY;
	barrier();
	f->phase = KPROBE_FRAME_STEPPING;
	return 1;
}

/*
 * The list walks of the breakpoint paths, kept out of line: they are the
 * rare case there, and inlined they would cost the common cases their
 * registers.
 */
static noinline bool kx_site_pre(struct kprobe_frame *f, struct pt_regs *regs)
{
	return kprobe_site_pre(f->site, regs, &f->posts);
}

NOKPROBE_SYMBOL(kx_site_pre);

static noinline void kx_site_post(struct kprobe_frame *f, struct pt_regs *regs)
{
	kprobe_site_post(f->site, f->solo, &f->posts, regs);
}

NOKPROBE_SYMBOL(kx_site_post);

/*
 * Must @f's hit come back after its instruction: for a post_handler, or
 * for a fault_handler (KSITE_FAULT, which rules the shortcut out)?  Asked
 * of the probes whose pre_handlers ran: the one the hit took the shortcut
 * for (see kprobe_site_solo()), or those kprobe_site_pre() noted.
 */
static nokprobe_inline bool kx_hit_comes_back(struct kprobe_frame *f)
{
	if (f->solo)
		return f->solo->post_handler;
	return kprobe_hit_posts_due(&f->posts) ||
	       (READ_ONCE(f->site->flags) & KSITE_FAULT);
}

/*
 * The post_handlers of a step, run from the call at the end of the copy
 * in the context kprobe_frame_post_enter() sets up, the one a trap would
 * give them.  @post is @solo's post_handler, read once, when there is a
 * solo probe.
 */
static nokprobe_inline void kx_step_post(struct kprobe_frame *f,
					 struct kprobe *solo,
					 kprobe_post_handler_t post,
					 struct pt_regs *regs)
{
	bool irqs_were_on = kprobe_frame_post_enter(true);

	/* The one probe the hit took the shortcut for: no list, no call. */
	if (solo) {
		__this_cpu_write(current_kprobe, solo);
		post(solo, regs, 0);
	} else {
		kx_site_post(f, regs);
	}
	kprobe_frame_post_exit(true, irqs_were_on);
}

/* The tracked copy has run: finish the hit. */
static nokprobe_inline void kx_end_step(struct kprobe_frames *c, struct kprobe_frame *f,
					struct pt_regs *regs)
{
	struct kprobe_site *s = f->site;
	struct kprobe *solo = f->solo;
	kprobe_post_handler_t post = solo ? solo->post_handler : NULL;

	f->phase = KPROBE_FRAME_BUSY;
	regs->ip = (unsigned long)s->addr + s->arch.len;
	regs->flags = (regs->flags & ~X86_EFLAGS_IF) | f->saved;

	/* pushf stored the IF we had cleared: store the real one. */
	if (s->arch.how == KX_STEP_PUSHF) {
		u16 *word = (u16 *)regs->sp;

		*word = (*word & ~X86_EFLAGS_IF) | f->saved;
	}

	if (!f->missed && (!solo || post))
		kx_step_post(f, solo, post, regs);
	kprobe_frame_pop(c, f);
}

/* A call from a copy that no step of this CPU is waiting for. */
static void __noreturn kx_step_lost(struct pt_regs *regs)
{
	panic("kprobes: a step ended at %pS with no step in flight\n",
	      (void *)regs->ip);
}

NOKPROBE_SYMBOL(kx_step_lost);

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
	struct kprobe_frames *c = this_cpu_ptr(&kx_cpu);
	unsigned int depth = c->depth;
	struct kprobe_frame *f;

	if (unlikely(!depth))
		kx_step_lost(regs);
	f = &c->frame[depth - 1];
	OPTIMIZER_HIDE_VAR(f);
	if (unlikely(f->phase != KPROBE_FRAME_STEPPING ||
		     regs->ip != kx_step_end(f->site)))
		kx_step_lost(regs);
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
		 s->addr, KPROBE_FRAME_NEST);
	return 0;
}

NOKPROBE_SYMBOL(kx_run_unframed);

/* A hit while this CPU already runs a probe: execute, count, no handlers. */
static int kx_reenter(struct kprobe_frames *c, struct kprobe_site *s,
		      struct pt_regs *regs, struct kprobe *running)
{
	struct kprobe_frame *f;

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

	f = kprobe_frame_push(c, s, running, true);
	if (!f)
		return kx_run_unframed(s, regs);
	return kx_start_step(f, regs);
}

NOKPROBE_SYMBOL(kx_reenter);

/*
 * The task runs the instruction of @s again after a fault in its copy
 * was fixed (see kprobe_replay_expect()): the hit was counted and its
 * pre_handlers ran the first time.  Step it again, tracked, so that a
 * second fault is taken back the same way; only the post_handlers are
 * left, unless the first hit was itself a missed one.
 */
static int kx_replay(struct kprobe_frames *c, struct kprobe_site *s,
		     struct pt_regs *regs)
{
	struct kprobe *running = kprobe_running();
	struct kprobe_frame *f;

	f = kprobe_frame_push(c, s, running, !!running);
	if (!f)
		return kx_run_unframed(s, regs);
	if (!running) {
		f->posts.overflow = true;	/* those of the probes now */
		__this_cpu_write(current_kprobe, kprobe_site_first(s));
	}
	return kx_start_step(f, regs);
}

NOKPROBE_SYMBOL(kx_replay);

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
	struct kprobe_frames *c = this_cpu_ptr(&kx_cpu);
	struct kprobe *running;
	struct kprobe_frame *f;

	if (!s || s->arch.how == KX_FTRACE) {
		/* A user-mode int3 finds no site: sites are kernel text. */
		if (user_mode(regs))
			return 0;
		/*
		 * The site went away while we were trapping: once the int3
		 * is gone from the text, run what is there now.  An int3 on
		 * an ftrace site is text_poke_finish()'s, whose handler has
		 * had its say already.
		 */
		if (READ_ONCE(*(u8 *)addr) != INT3_INSN_OPCODE) {
			regs->ip = addr;
			return 1;
		}
		return 0;
	}

	if (unlikely(kprobe_replay_take(s)))
		return kx_replay(c, s, regs);

	running = kprobe_running();
	if (running)
		return kx_reenter(c, s, regs, running);

	f = kprobe_frame_push(c, s, NULL, false);
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
			kprobe_frame_pop(c, f);
			return 1;
		}
	} else {
		running = kprobe_site_first(s);
		__this_cpu_write(current_kprobe, running);
		if (kx_site_pre(f, regs)) {
			kprobe_frame_pop(c, f);
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
		kprobe_frame_pop(c, f);
		regs->ip = kx_opt_copy(s);
		return 1;
	}
	if (s->arch.boost_ip && !kx_hit_comes_back(f)) {
		kprobe_frame_pop(c, f);
		regs->ip = s->arch.boost_ip;
		return 1;
	}
	if (!kx_is_emulated(s))
		return kx_start_step(f, regs);

	if (!kx_emulate(s, regs)) {
		kprobe_frame_pop(c, f);
		return kx_emulation_failed(s, regs);
	}
	kx_site_post(f, regs);
	kprobe_frame_pop(c, f);
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
 * A page fault may instead be fixed, and the instruction run again: that
 * is no new hit (kprobe_replay_expect()).  A boosted site's shortcut
 * would not see the note, so it gets none.
 */
static int kx_step_fault(struct kprobe_frames *c, struct kprobe_frame *f,
			 struct pt_regs *regs, int trapnr)
{
	struct kprobe_site *s = f->site;
	int handled = 0;

	regs->ip = (unsigned long)s->addr;
	regs->flags = (regs->flags & ~X86_EFLAGS_IF) | f->saved;
	if (!f->missed && (READ_ONCE(s->flags) & KSITE_FAULT)) {
		f->phase = KPROBE_FRAME_FAULT;
		handled = kprobe_site_fault(s, regs, trapnr);
	}
	kprobe_frame_pop(c, f);
	if (handled)
		return 1;
	if (trapnr == X86_TRAP_PF && !s->arch.boost_ip)
		kprobe_replay_expect(s);
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
static int kx_handler_fault(struct kprobe_frame *f, struct pt_regs *regs,
			    int trapnr)
{
	int handled;

	if (f->missed || f->ctx != irq_count() ||
	    !(READ_ONCE(f->site->flags) & KSITE_FAULT))
		return 0;
	f->phase = KPROBE_FRAME_FAULT;
	handled = kprobe_fault_notify(kprobe_running(), regs, trapnr);
	f->phase = KPROBE_FRAME_BUSY;
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
	struct kprobe_frames *c = this_cpu_ptr(&kx_cpu);
	struct kprobe_frame *f = kprobe_frame_top(c);
	unsigned long copy;

	if (user_mode(regs) || !f)
		return 0;
	if (f->phase == KPROBE_FRAME_BUSY)
		return kx_handler_fault(f, regs, trapnr);
	if (f->phase != KPROBE_FRAME_STEPPING)
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
