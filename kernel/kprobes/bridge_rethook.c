// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Return probes on a bridged backend whose return trampoline is rethook's
 * (CONFIG_KRETPROBE_ON_RETHOOK: loongarch, powerpc, riscv, s390).
 *
 * The core keeps its instances and each task's list of pending returns
 * as on every architecture (kretprobe.c); only the return goes through
 * rethook.  Each kretprobe has a rethook of maxactive nodes (rp->rh).  A
 * hit takes a node, which points at the hit's instance, and
 * rethook_hook() makes the call return to the backend's trampoline.  The
 * instance is keyed on its node (ri->fp), so each call in flight has its
 * own key.  When the call returns, rethook calls kpb_rethook_return() for
 * each node of the returning frame, newest first (several kretprobes on
 * one function), with the real return address already in the PC; the
 * core then finds the instance on top of the task's list.
 *
 * A rethook does not grow: a call that finds no free node is missed.
 * Unwinders of these architectures ask rethook, not the core, for the
 * address behind the trampoline.
 */

#define pr_fmt(fmt) "kprobes: " fmt

#include <linux/kprobes.h>
#include <linux/kprobes_arch.h>
#include <linux/err.h>
#include <linux/rethook.h>

struct kpb_rethook_node {
	struct rethook_node	node;
	struct kretprobe_instance *ri;	/* the call's instance */
};

/* rethook's handler: rethook_trampoline_handler(), preemption off. */
static void kpb_rethook_return(struct rethook_node *node, void *data,
			       unsigned long ret_addr, struct pt_regs *regs)
{
	struct kpb_rethook_node *kn = container_of(node, struct kpb_rethook_node,
						   node);

	/* The node may have seen the trampoline, if it was not the first. */
	kn->ri->ret_addr = (kprobe_opcode_t *)ret_addr;
	kretprobe_trampoline_handler(regs, node);
}

NOKPROBE_SYMBOL(kpb_rethook_return);

/**
 * kprobe_bridge_rethook_hook() - make a probed call return through rethook
 * @ri: the call's instance, from its kretprobe's pool
 * @regs: registers at the function's entry
 *
 * Context: the kretprobe's entry hit, interrupts off.
 * Return: false if all of the kretprobe's nodes are in flight.
 */
bool kprobe_bridge_rethook_hook(struct kretprobe_instance *ri,
				struct pt_regs *regs)
{
	struct kretprobe *rp = get_kretprobe(ri);
	struct rethook_node *node = rethook_try_get(rp->rh);

	if (!node)
		return false;
	container_of(node, struct kpb_rethook_node, node)->ri = ri;
	/* From an ftrace site, @regs are ftrace's (mcount-style). */
	rethook_hook(node, regs, kprobe_ftrace(&rp->kp));
	ri->ret_addr = (kprobe_opcode_t *)node->ret_addr;
	ri->fp = node;
	return true;
}

NOKPROBE_SYMBOL(kprobe_bridge_rethook_hook);

/**
 * kprobe_bridge_rethook_alloc() - the rethook of a kretprobe being registered
 * @rp: the kretprobe; maxactive is already set
 *
 * Context: process context, may sleep.
 * Return: 0, or -ENOMEM.
 */
int kprobe_bridge_rethook_alloc(struct kretprobe *rp)
{
	struct rethook *rh = rethook_alloc(rp, kpb_rethook_return,
					   sizeof(struct kpb_rethook_node),
					   rp->maxactive);

	if (IS_ERR(rh)) {
		rp->rh = NULL;
		return PTR_ERR(rh);
	}
	rp->rh = rh;
	return 0;
}

/**
 * kprobe_bridge_rethook_free() - let go of a kretprobe's rethook
 * @rp: the kretprobe, unregistered, its handlers over
 *
 * rethook frees the nodes once none is in flight.
 *
 * Context: process context.
 */
void kprobe_bridge_rethook_free(struct kretprobe *rp)
{
	if (rp->rh)
		rethook_free(rp->rh);
	rp->rh = NULL;
}
