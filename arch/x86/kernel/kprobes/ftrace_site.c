// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * x86 kprobes backend: sites carried by ftrace.
 *
 * A probe on a function's fentry call site cannot use a breakpoint: ftrace
 * owns those five bytes.  The core instead filters an ftrace_ops to such
 * sites (and a second one, which only claims IPMODIFY, to those with a
 * post_handler), and ftrace calls the handler below from
 * ftrace_regs_caller with a full pt_regs.  Until ftrace carries a new
 * site, a call of our own over ftrace's nop arms it, and kx_ftrace_call_entry
 * (ftrace_entry.S) calls the same hit code with the same pt_regs.  There
 * is nothing to step: the "probed instruction" is ftrace's own nop, and
 * executing it means going on at the next instruction.
 *
 * In ftrace_regs_caller, regs->ip starts as the return address of the
 * fentry call (ip + MCOUNT_INSN_SIZE), unless another ftrace user ran
 * first and moved it (a livepatch sends it to the new function), and
 * whatever it holds afterwards is where execution resumes.  The handlers,
 * though, expect to see what a breakpoint would show them: regs->ip just
 * past an int3 at the probed address.  We present that, move regs->ip
 * past the nop for the post handlers, and put back what we found, unless
 * a pre_handler redirected execution.  The common case, nobody moved it,
 * needs nothing kept: it goes back to ip + MCOUNT_INSN_SIZE.
 */

#include <linux/kprobes.h>
#include <linux/kprobes_arch.h>
#include <linux/ftrace.h>
#include <linux/compiler.h>

#include <asm/text-patching.h>

#include "backend.h"

/*
 * Redirected: ftrace resumes wherever regs->ip now points.  A handler that
 * claimed a redirection but left regs->ip where we put it would send the
 * CPU into the middle of the nop; resume where we would have anyway.
 */
static nokprobe_inline void kx_ftrace_redirected(unsigned long ip,
						 unsigned long orig,
						 struct pt_regs *regs)
{
	if (regs->ip == ip + INT3_INSN_SIZE)
		regs->ip = orig;
}

/*
 * Several probes on the site, a hit while a probe runs, or regs->ip moved
 * by another ftrace user.
 */
static noinline void kx_ftrace_slow(struct kprobe_site *s, unsigned long ip,
				    struct pt_regs *regs)
{
	unsigned long orig = regs->ip;
	struct kprobe_frame *f = NULL;
	struct kprobe_hit_posts hp;

	if (kprobe_running()) {
		kprobe_site_missed(s);
		return;
	}
	kprobe_site_hit(s);
	/* A fault_handler must know a fault in the handlers for theirs. */
	if (READ_ONCE(s->flags) & KSITE_FAULT)
		f = kx_frame_enter(s);
	/*
	 * kprobe_site_pre() points current_kprobe at each probe before its
	 * handler runs.  Nothing here needs it set before that: there is no
	 * step to protect, and an interrupt that comes first is not nested
	 * in any handler.
	 */
	regs->ip = ip + INT3_INSN_SIZE;
	if (kprobe_site_pre(s, regs, &hp)) {
		kx_ftrace_redirected(ip, orig, regs);
	} else {
		/* The nop has "run": post handlers see the next instruction. */
		if (kprobe_hit_posts_due(&hp)) {
			regs->ip = ip + MCOUNT_INSN_SIZE;
			kprobe_site_post(s, NULL, &hp, regs);
		}
		regs->ip = orig;
	}
	__this_cpu_write(current_kprobe, NULL);
	kx_frame_leave(f);
}

NOKPROBE_SYMBOL(kx_ftrace_slow);

/*
 * Two probes with pre_handlers only (kprobe_site_duo()), nothing running,
 * regs->ip as ftrace set it: run both, as the slow path would, without
 * walking the list.  False when the shortcut does not apply.
 */
static __always_inline bool kx_ftrace_duo(struct kprobe_site *s,
					  unsigned long ip,
					  struct pt_regs *regs)
{
	struct kprobe *p = kprobe_site_duo(s), *q;
	struct list_head *next;

	if (!p)
		return false;
	next = rcu_dereference_raw(list_next_rcu(&p->list));
	if (unlikely(next == &s->probes))
		return false;
	kprobe_site_hit(s);
	q = list_entry(next, struct kprobe, list);
	regs->ip = ip + INT3_INSN_SIZE;
	/* After the handlers, q->addr is the site's address, that is @ip. */
	__this_cpu_write(current_kprobe, p);
	if (!p->pre_handler(p, regs)) {
		__this_cpu_write(current_kprobe, q);
		if (!q->pre_handler(q, regs)) {
			regs->ip = (unsigned long)q->addr + MCOUNT_INSN_SIZE;
			return true;
		}
	}
	kx_ftrace_redirected((unsigned long)q->addr,
			     (unsigned long)q->addr + MCOUNT_INSN_SIZE, regs);
	return true;
}

/*
 * A call of ftrace site @s at @ip, regs->ip past it: run the probes, or
 * count a miss when this CPU is already inside one.  The common case, one
 * probe (or two, kx_ftrace_duo()), nothing running, regs->ip as the call
 * left it, walks no list.  After its pre_handler only p and regs are
 * needed: p->addr is the site's address, that is @ip.  Preemption is off.
 */
static __always_inline void kx_ftrace_hit(struct kprobe_site *s,
					  unsigned long ip,
					  struct pt_regs *regs)
{
	struct kprobe *p;

	if (unlikely(kprobe_running() || regs->ip != ip + MCOUNT_INSN_SIZE))
		goto slow;
	p = kprobe_site_solo(s);
	if (unlikely(!p)) {
		if (!kx_ftrace_duo(s, ip, regs))
			goto slow;
		goto done;
	}
	kprobe_site_hit(s);
	regs->ip = ip + INT3_INSN_SIZE;
	__this_cpu_write(current_kprobe, p);
	if (p->pre_handler(p, regs)) {
		kx_ftrace_redirected((unsigned long)p->addr,
				     (unsigned long)p->addr + MCOUNT_INSN_SIZE, regs);
	} else {
		regs->ip = (unsigned long)p->addr + MCOUNT_INSN_SIZE;
		if (p->post_handler) {
			__this_cpu_write(current_kprobe, p);
			p->post_handler(p, regs, 0);
		}
	}
done:
	__this_cpu_write(current_kprobe, NULL);
	return;
slow:
	kx_ftrace_slow(s, ip, regs);
}

/*
 * Our call's hit when the shortcut below does not apply: no lone probe
 * with a pre_handler, a hit inside a probe, or ftrace declared dead.
 * Returns what kx_ftrace_call_handler() returns.
 */
static noinline unsigned long kx_ftrace_call_slow(struct kprobe_site *s,
						  unsigned long ip,
						  struct pt_regs *regs)
{
	/* Written once while hits run: either value is one a hit may see. */
	if (likely(!data_race(kprobe_ftrace_disabled)))
		kx_ftrace_hit(s, ip, regs);
	if (regs->ip != ip + MCOUNT_INSN_SIZE)
		return 0;
	return READ_ONCE(s->arch.target);
}

NOKPROBE_SYMBOL(kx_ftrace_call_slow);

/*
 * Called by kx_ftrace_call_entry, from our call that arms an ftrace site
 * until ftrace carries it (arch_kprobe_ftrace_call()), with the probed
 * context, regs->ip just past the call: the same hit as ftrace's.
 * Returns the call that ftrace meant to write there for another ftrace
 * user (arch_kprobe_ftrace_hold()), which kx_ftrace_call_entry makes next
 * as if from the site, or 0: none, or a handler redirected the call, and
 * that user misses it.  A site gone meanwhile (unregistered) gives 0 too:
 * the call is missed by that user only if it raced with the
 * unregistration.  Once ftrace is dead (kprobe_ftrace_kill()), its entry
 * probes are, those still waiting for it too: only that call is made.
 *
 * The common case, a lone probe with a pre_handler and nothing running,
 * is kx_ftrace_hit()'s shortcut written for this caller: regs->ip is
 * known to be past our call, and the call to make next is read before
 * the handler runs (a hit may see the value from before or after a
 * change that races with it either way), so that only the probe and
 * regs need keeping across the handler.
 */
unsigned long kx_ftrace_call_handler(struct pt_regs *regs)
{
	unsigned long ip = regs->ip - MCOUNT_INSN_SIZE;
	unsigned long target = 0;
	struct kprobe_site *s;
	struct kprobe *p;

	preempt_disable_notrace();
	s = kprobe_site_find(ip);
	if (unlikely(!s))
		goto out;
	p = kprobe_site_solo(s);
	/* Written once while hits run: either value is one a hit may see. */
	if (unlikely(!p || kprobe_running() || data_race(kprobe_ftrace_disabled))) {
		target = kx_ftrace_call_slow(s, ip, regs);
		goto out;
	}
	kprobe_site_hit(s);
	target = READ_ONCE(s->arch.target);
	regs->ip = ip + INT3_INSN_SIZE;
	__this_cpu_write(current_kprobe, p);
	if (unlikely(p->pre_handler(p, regs))) {
		ip = (unsigned long)p->addr;
		kx_ftrace_redirected(ip, ip + MCOUNT_INSN_SIZE, regs);
		if (regs->ip != ip + MCOUNT_INSN_SIZE)
			target = 0;
	} else {
		regs->ip = (unsigned long)p->addr + MCOUNT_INSN_SIZE;
		if (p->post_handler) {
			__this_cpu_write(current_kprobe, p);
			p->post_handler(p, regs, 0);
			if (regs->ip != (unsigned long)p->addr + MCOUNT_INSN_SIZE)
				target = 0;
		}
	}
	__this_cpu_write(current_kprobe, NULL);
out:
	preempt_enable_notrace();
	return target;
}

NOKPROBE_SYMBOL(kx_ftrace_call_handler);

/**
 * kprobe_ftrace_handler - ftrace callback of the kprobes ftrace_ops
 * @ip: address of the fentry call site (the site's address)
 * @parent_ip: return address of the traced function
 * @ops: the kprobes ftrace_ops that called us
 * @fregs: the saved registers
 *
 * Runs the site's handlers like a breakpoint hit would, or counts a miss
 * when this CPU is already inside a probe.  Calls for a site that is no
 * longer armed (s->fops is NULL) are ignored: its address may stay in
 * the filter a while after.  Does nothing once ftrace has been declared
 * dead (kprobe_ftrace_kill()).
 *
 * Recursion needs no lock of its own here: everything this runs before
 * current_kprobe is set is NOKPROBE (no probe of ours can be on it), and
 * from then on a hit in a handler, or in an interrupt, finds
 * kprobe_running() and only counts as missed.  Preemption is off for
 * current_kprobe's sake.
 */
void kprobe_ftrace_handler(unsigned long ip, unsigned long parent_ip,
			   struct ftrace_ops *ops, struct ftrace_regs *fregs)
{
	struct pt_regs *regs = &arch_ftrace_regs(fregs)->regs;
	struct kprobe_site *s;

	/*
	 * x86's callers always pass their fregs (ftrace_get_regs() would
	 * test it for NULL).  The pt_regs in it is partial, with cs zero as
	 * arch_ftrace_get_regs() tests, only while ftrace moves a site
	 * between its callers.  Plain reads of the two values written while
	 * hits run: either value read is one a hit may see.  First: ftrace
	 * declared dead.
	 */
	if (unlikely(!regs->cs || data_race(kprobe_ftrace_disabled)))
		return;

	preempt_disable_notrace();
	s = kprobe_site_find(ip);
	/* Then: the site is armed, carried by this ops. */
	if (likely(s && data_race(s->fops) == ops))
		kx_ftrace_hit(s, ip, regs);
	preempt_enable_notrace();
}

NOKPROBE_SYMBOL(kprobe_ftrace_handler);
