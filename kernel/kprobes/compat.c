// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The older kprobes API (CONFIG_KPROBES_COMPAT): jprobes, and the
 * fault_handler of struct kprobe.
 *
 * A jprobe is a kprobe on a function's entry whose pre_handler is
 * kprobe_jprobe_pre().  That asks the backend (arch_jprobe_call()) to call
 * the user's handler with the probed function's arguments, as an ordinary
 * call from the pre_handler's context, and returns 0: the probed function
 * then runs as usual, with its own arguments, since the handler only had
 * copies.  The kernels that had jprobes instead ran the handler in place
 * of the function, on a copy of its stack, and jumped back from
 * jprobe_return(); nothing here touches the probed function's frame, so
 * stack protectors, shadow stacks and the unwinders see ordinary calls.
 *
 * A fault_handler is called by the backend (see kprobe_fault_handler() of
 * the architecture) when the probe's own handlers fault, or the probed
 * instruction faults while it runs out of line for the probe.  The core
 * keeps sites whose probes have one on the paths where the backend can
 * tell those faults apart: tracked steps (never boosted, never optimized)
 * and no shortcut (KSITE_FAULT).
 */

#define pr_fmt(fmt) "kprobes: " fmt

#include <linux/kprobes.h>
#include <linux/kprobes_arch.h>
#include <linux/slab.h>

#include "internal.h"

/* ---- jprobes -------------------------------------------------------- */

static int kprobe_jprobe_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct jprobe *jp = container_of(p, struct jprobe, kp);

	arch_jprobe_call(jp->entry, regs);
	return 0;
}

NOKPROBE_SYMBOL(kprobe_jprobe_pre);

bool kprobe_is_jprobe(struct kprobe *p)
{
	return p->pre_handler == kprobe_jprobe_pre;
}

/* A jprobe that can be registered: a handler, on a function's entry. */
static int kprobe_jprobe_check(struct jprobe *jp)
{
	struct kprobe *p = &jp->kp;
	int ret;

	if (!jp->entry)
		return -EINVAL;
	ret = kprobe_on_func_entry(p->addr, p->symbol_name, p->offset);
	if (ret != -EINVAL)
		return ret;
	if (p->symbol_name)
		pr_warn("%s+%u: a jprobe must be on a function's entry\n",
			p->symbol_name, p->offset);
	else
		pr_warn("%pS: a jprobe must be on a function's entry\n",
			(void *)p->addr + p->offset);
	return ret;
}

/**
 * register_jprobes() - register an array of jprobes, all or nothing
 * @jps: the jprobes; each names a function's entry in @kp and its handler
 *	 in @entry
 * @num: how many
 *
 * Like register_kprobes(): either every jprobe is registered, in one
 * text-patching pass, or none is and the first error is returned.
 * kp.pre_handler is ours to set.
 *
 * Context: process, may sleep.
 * Return: 0, -EINVAL (no handler, not on a function's entry, already
 * registered), -ENOENT (unknown symbol) or another registration error.
 */
int register_jprobes(struct jprobe **jps, int num)
{
	struct kprobe **kps;
	int i, ret = 0;

	if (num <= 0 || !jps)
		return -EINVAL;
	for (i = 0; i < num && !ret; i++)
		ret = jps[i] ? kprobe_jprobe_check(jps[i]) : -EINVAL;
	if (ret)
		return ret;

	kps = kprobe_array_of((void * const *)jps, num,
			      offsetof(struct jprobe, kp), GFP_KERNEL);
	if (!kps)
		return -ENOMEM;
	for (i = 0; i < num; i++)
		kps[i]->pre_handler = kprobe_jprobe_pre;
	ret = register_kprobes(kps, num);
	kvfree(kps);
	return ret;
}
EXPORT_SYMBOL_GPL(register_jprobes);

/**
 * register_jprobe() - register one jprobe
 * @jp: the jprobe
 *
 * Context: process, may sleep.
 * Return: as register_jprobes().
 */
int register_jprobe(struct jprobe *jp)
{
	return register_jprobes(&jp, 1);
}
EXPORT_SYMBOL_GPL(register_jprobe);

/**
 * unregister_jprobes() - unregister an array of jprobes
 * @jps: jprobes registered with register_jprobe(s)(); NULL entries are
 *	 skipped
 * @num: how many
 *
 * Context: process, may sleep.  No handler of these jprobes runs any more
 * once this returns.
 */
void unregister_jprobes(struct jprobe **jps, int num)
{
	kprobe_unregister_embedded((void * const *)jps, num,
				   offsetof(struct jprobe, kp));
}
EXPORT_SYMBOL_GPL(unregister_jprobes);

/**
 * unregister_jprobe() - unregister one jprobe
 * @jp: the jprobe
 *
 * Context: process, may sleep.
 */
void unregister_jprobe(struct jprobe *jp)
{
	unregister_jprobes(&jp, 1);
}
EXPORT_SYMBOL_GPL(unregister_jprobe);

/**
 * jprobe_return() - what a jprobe handler used to end with
 *
 * In the kernels that had jprobes, this jumped back into the probe's trap
 * and never returned.  Here a jprobe handler is an ordinary function that
 * returns when it is done: this does nothing, and is kept so that handlers
 * written for those kernels build and run unchanged.
 *
 * Context: a jprobe handler.
 */
void jprobe_return(void)
{
}
EXPORT_SYMBOL_GPL(jprobe_return);

/* ---- fault_handler -------------------------------------------------- */

/**
 * kprobe_fault_notify() - a fault in a handler of @p
 * @p: the probe whose pre_handler or post_handler faulted (current_kprobe)
 * @regs: the faulting context
 * @trapnr: the trap
 *
 * Called by the backend's fault handler, interrupts off, when it has told
 * the fault apart from one of an interrupt nested in the handler.
 * Return probes have no fault_handler (their kp is ours).
 *
 * Return: 1 if @p's fault_handler dealt with the fault.
 */
int kprobe_fault_notify(struct kprobe *p, struct pt_regs *regs, int trapnr)
{
	if (!p || !kprobe_wants_faults(p))
		return 0;
	return p->fault_handler(p, regs, trapnr) == 1;
}

NOKPROBE_SYMBOL(kprobe_fault_notify);

/**
 * kprobe_site_fault() - the probed instruction of @s faulted out of line
 * @s: the site whose step faulted
 * @regs: the faulting context, put back on the probed instruction
 * @trapnr: the trap
 *
 * Called by the backend's fault handler, interrupts off.  Asks the
 * fault_handler of each enabled probe of @s, in registration order, with
 * current_kprobe pointing at it, until one deals with the fault.
 *
 * Return: 1 if one did.
 */
int kprobe_site_fault(struct kprobe_site *s, struct pt_regs *regs, int trapnr)
{
	struct kprobe *p;

	list_for_each_entry_rcu(p, &s->probes, list) {
		if (kprobe_disabled(p) || !kprobe_wants_faults(p))
			continue;
		__this_cpu_write(current_kprobe, p);
		if (p->fault_handler(p, regs, trapnr) == 1)
			return 1;
	}
	return 0;
}

NOKPROBE_SYMBOL(kprobe_site_fault);
