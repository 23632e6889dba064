// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Return probes on a bridged backend whose return trampoline is rethook's
 * (CONFIG_KRETPROBE_ON_RETHOOK: loongarch, powerpc, riscv, s390).
 *
 * The core keeps its instances and each task's list of pending returns
 * as on every architecture (kretprobe.c); only the return goes through
 * rethook.  A hit takes a node, which points at the hit's instance, and
 * rethook_hook() makes the call return to the backend's trampoline.  The
 * instance is keyed on its node (ri->fp), so each call in flight has its
 * own key.  When the call returns, rethook calls kpb_rethook_return() for
 * each node of the returning frame, newest first (several kretprobes on
 * one function), with the real return address already in the PC; the
 * core then finds the instance on top of the task's list.
 *
 * A rethook's node pool has a fixed size, and the instance pool grows
 * (kretprobe_pool.c): so each kretprobe has a chain of rethooks, and its
 * pool's work item adds one as big as each chunk of instances it adds
 * (kprobe_bridge_rethook_grow()), before the chunk is used.  rp->rh is
 * the newest; each rethook's data, which rethook hands to the handler
 * unused here, is the next older one.  The first has a node more per CPU
 * than maxactive: an instance goes back to its pool inside the handler,
 * while its node goes back to its rethook only after it, so another CPU
 * may take that instance while the node is still out.  A hit tries the
 * rethooks newest first; the chain is only added to while the kretprobe
 * is registered, and freed whole after.  Unwinders of these
 * architectures ask rethook, not the core, for the address behind the
 * trampoline.
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

/*
 * rethook's handler: rethook_trampoline_handler(), preemption off.  @data
 * is the next older rethook of the chain.
 */
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
	struct rethook_node *node = NULL;
	struct rethook *rh;

	/* Preemption is off: the chain outlives this hit. */
	for (rh = rcu_dereference_sched(rp->rh); rh; rh = rh->data) {
		node = rethook_try_get(rh);
		if (node)
			break;
	}
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

static struct rethook *kpb_rethook_new(struct rethook *older, unsigned int nr)
{
	return rethook_alloc(older, kpb_rethook_return,
			     sizeof(struct kpb_rethook_node), nr);
}

/**
 * kprobe_bridge_rethook_alloc() - the first rethook of a kretprobe
 * @rp: the kretprobe being registered; maxactive is already set
 *
 * Context: process context, may sleep.
 * Return: 0, or -ENOMEM.
 */
int kprobe_bridge_rethook_alloc(struct kretprobe *rp)
{
	struct rethook *rh = kpb_rethook_new(NULL, rp->maxactive +
					     num_possible_cpus());

	if (IS_ERR(rh)) {
		RCU_INIT_POINTER(rp->rh, NULL);
		return PTR_ERR(rh);
	}
	RCU_INIT_POINTER(rp->rh, rh);
	return 0;
}

/**
 * kprobe_bridge_rethook_grow() - nodes for @nr more calls in flight
 * @rp: the kretprobe, registered
 * @nr: how many instances its pool is adding
 *
 * Context: the pool's work item, may sleep; never two at once for @rp.
 * Return: 0, or -ENOMEM (the pool then does not grow).
 */
int kprobe_bridge_rethook_grow(struct kretprobe *rp, unsigned int nr)
{
	struct rethook *older = rcu_dereference_protected(rp->rh, 1);
	struct rethook *rh;

	/* A pool without a rethook (kretprobe_pool's own KUnit test). */
	if (!older)
		return 0;
	rh = kpb_rethook_new(older, nr);
	if (IS_ERR(rh))
		return PTR_ERR(rh);
	rcu_assign_pointer(rp->rh, rh);
	return 0;
}

/**
 * kprobe_bridge_rethook_free() - let go of a kretprobe's rethooks
 * @rp: the kretprobe, unregistered, its handlers over, its pool's work
 *	item done
 *
 * rethook frees each one's nodes once none is in flight.
 *
 * Context: process context.
 */
void kprobe_bridge_rethook_free(struct kretprobe *rp)
{
	struct rethook *rh = rcu_dereference_protected(rp->rh, 1);
	struct rethook *older;

	RCU_INIT_POINTER(rp->rh, NULL);
	for (; rh; rh = older) {
		older = rh->data;
		rethook_free(rh);
	}
}
