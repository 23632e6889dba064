// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Jump optimization through the bridge (CONFIG_KPROBES_BRIDGE with
 * CONFIG_OPTPROBES: arm, powerpc): the optimizer's side of the contract
 * (<linux/kprobes_arch.h>) on the optprobe code the architecture already
 * has, which stays as it is.  That code optimizes one struct
 * optimized_kprobe per probed address: each site's is its proxy
 * (<linux/kprobes_bridge.h>), prepared, patched and freed here.
 *
 *   arch_optprobe_prepare()      arch_prepare_optimized_kprobe(op, proxy)
 *   arch_optprobe_poke()         op onto the batch
 *   arch_optprobe_poke_finish()  arch_optimize_kprobes(batch)
 *   arch_optprobe_unpoke()       arch_unoptimize_kprobes(): the breakpoint
 *                                back
 *   kpb_opt_release()            arch_remove_optimized_kprobe()
 *   a hit                        the detour, the backend's callback,
 *                                opt_pre_handler(proxy)
 *
 * Both backends jump over a single instruction.  No CPU can be inside it
 * while the jump goes in, so a breakpoint hit on a site the optimizer has
 * committed to (KSITE_OPT_READY) steps it as any other hit does.
 *
 * The backend's callback decides how a hit runs: arm's with interrupts
 * off, powerpc's as the probed code had them; both count a hit that
 * comes while another probe runs as missed.  Neither can follow a
 * pre_handler's change of the PC: see opt_pre_handler().
 */

#define pr_fmt(fmt) "kprobes: " fmt

#include <linux/kprobes.h>
#include <linux/kprobes_arch.h>
#include <linux/cpu.h>
#include <linux/execmem.h>
#include <linux/memory.h>

#include "internal.h"

/* The sites of the write in progress, through op.list; text_mutex. */
static LIST_HEAD(kpb_opt_batch);

static struct optimized_kprobe *kpb_op(struct kprobe_site *s)
{
	return &s->arch.op;
}

/**
 * opt_pre_handler() - an optimized site was hit
 * @p: the site's proxy, which the backend's detour passes
 * @regs: the registers at the probed instruction
 *
 * Called by the backend's detour callback with current_kprobe pointing at
 * @p, and interrupts (arm) or preemption (powerpc) off; runs the site's
 * probes as a breakpoint hit does.
 */
void opt_pre_handler(struct kprobe *p, struct pt_regs *regs)
{
	struct kprobe_site *s = container_of(p, struct kprobe_site,
					     arch.op.kp);
	unsigned long pc = instruction_pointer(regs);

	/* Handlers run with preemption off; arm's callback only masks IRQs. */
	preempt_disable_notrace();
	kprobe_site_hit(s);
	/*
	 * The detour goes on to the instruction after the site whatever the
	 * PC says, and arm's would emulate the probed instruction at the new
	 * PC: put the PC back, so that a redirection is ignored, not
	 * half followed.
	 */
	if (kprobe_site_pre(s, regs, NULL)) {
		instruction_pointer_set(regs, pc);
		pr_warn_once("%pS: a pre_handler's change of the PC is ignored on an optimized probe; a post_handler keeps a probe from being optimized\n",
			     p->addr);
	}
	/* The callback resets it; handlers may have pointed it elsewhere. */
	__this_cpu_write(current_kprobe, p);
	preempt_enable_notrace();
}

NOKPROBE_SYMBOL(opt_pre_handler);

/**
 * get_optinsn_slot() - a detour slot for a bridged backend
 *
 * Called from arch_prepare_optimized_kprobe() (kprobe_mutex held).
 *
 * Return: KPROBE_OPTINSN_SLOT_SIZE bytes of executable memory in a page
 * from alloc_optinsn_page(), or NULL.
 */
kprobe_opcode_t *get_optinsn_slot(void)
{
	return kprobe_optinsn_slot_alloc();
}

/**
 * free_optinsn_slot() - give back a slot from get_optinsn_slot()
 * @slot: the slot
 * @dirty: unused: a slot is reused only after the wait that ends every
 *	run of it, dirty or not
 */
void free_optinsn_slot(kprobe_opcode_t *slot, int dirty)
{
	kprobe_optinsn_slot_free(slot);
}

/*
 * Detour pages where the backend has no place of its own for them
 * (powerpc keeps them in the kernel image, within a branch's reach).
 */
void * __weak alloc_optinsn_page(void)
{
	return execmem_alloc(EXECMEM_KPROBES, PAGE_SIZE);
}

void __weak free_optinsn_page(void *page)
{
	execmem_free(page);
}

/*
 * Build the site's detour once.  The backends write it with the text
 * patching calls (powerpc) and read neighbouring text, as their
 * arch_prepare_kprobe() does: under the same locks.
 */
int arch_optprobe_prepare(struct kprobe_site *s)
{
	struct optimized_kprobe *op = kpb_op(s);
	int ret;

	if (arch_prepared_optinsn(&op->optinsn))
		return 0;
	INIT_LIST_HEAD(&op->list);
	ret = arch_check_optimized_kprobe(op);
	if (ret)
		return ret;
	cpus_read_lock();
	mutex_lock(&text_mutex);
	ret = arch_prepare_optimized_kprobe(op, &op->kp);
	mutex_unlock(&text_mutex);
	cpus_read_unlock();
	return ret;
}

unsigned int arch_optprobe_region(struct kprobe_site *s)
{
	return arch_prepared_optinsn(&kpb_op(s)->optinsn) ?
	       MAX_OPTIMIZED_LENGTH : 0;
}

/*
 * The hotplug lock and text_mutex held (KPROBE_POKE_CPUS_LOCKED).  The
 * backend's arch_optimize_kprobes() has no way to say it failed.
 */
int arch_optprobe_poke(struct kprobe_site *s)
{
	list_add_tail(&kpb_op(s)->list, &kpb_opt_batch);
	return 0;
}

/* The backend writes each jump and takes its op off the batch. */
void arch_optprobe_poke_finish(void)
{
	arch_optimize_kprobes(&kpb_opt_batch);
	if (WARN_ON_ONCE(!list_empty(&kpb_opt_batch)))
		INIT_LIST_HEAD(&kpb_opt_batch);
}

/* @sites linked through s->opt; the hotplug lock and text_mutex held. */
void arch_optprobe_unpoke(struct list_head *sites)
{
	struct kprobe_site *s;
	LIST_HEAD(done);

	list_for_each_entry(s, sites, opt)
		list_add_tail(&kpb_op(s)->list, &kpb_opt_batch);
	arch_unoptimize_kprobes(&kpb_opt_batch, &done);
	while (!list_empty(&done))
		list_del_init(done.next);
}

/* From arch_kprobe_site_release(): the site's detour, if it has one. */
void kpb_opt_release(struct kprobe_site *s)
{
	struct optimized_kprobe *op = kpb_op(s);

	if (arch_prepared_optinsn(&op->optinsn))
		arch_remove_optimized_kprobe(op);
}
