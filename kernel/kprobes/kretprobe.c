// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Return probes (CONFIG_KRETPROBES).
 *
 * A kretprobe is a kprobe on the function's entry whose pre_handler,
 * kretprobe_enter(), gets an instance from the kretprobe's pool
 * (kretprobe_pool.h), lets the backend redirect the call's return to the
 * trampoline and pushes the instance on the task's list of pending
 * returns.  The trampoline comes back to kretprobe_trampoline_handler(),
 * which pops the instances of the returning frame, runs the handlers and
 * puts the instances back.
 */

#define pr_fmt(fmt) "kprobes: " fmt

#include <linux/kprobes.h>
#include <linux/kprobes_arch.h>
#include <linux/kallsyms.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <asm/sections.h>

#include "internal.h"
#include "kretprobe_pool.h"

/*
 * The trampoline's text address, which return addresses are compared
 * with.  Where a C function pointer is the address of a descriptor
 * (ppc64 ELF ABI v1, parisc64), the text address is read from the
 * descriptor once, by kretprobe_init(): the return path and the unwinders
 * make the comparison, and must not call out to make it.
 */
static unsigned long kretprobe_tramp_text __ro_after_init;

static nokprobe_inline unsigned long kretprobe_trampoline_text(void)
{
	if (!IS_ENABLED(CONFIG_HAVE_FUNCTION_DESCRIPTORS))
		return (unsigned long)arch_kretprobe_trampoline;
	return kretprobe_tramp_text;
}

void __init kretprobe_init(void)
{
	kretprobe_tramp_text = (unsigned long)
		dereference_kernel_function_descriptor(arch_kretprobe_trampoline);
}

/* Unregistering, before the grace period: no return handler after it. */
void kretprobe_detach(struct kprobe *p)
{
	struct kretprobe *rp = container_of(p, struct kretprobe, kp);

	kretprobe_pool_detach(rp->pool);
}

/* Unregistering, after the grace period: let go of the pool. */
void kretprobe_release(struct kprobe *p)
{
	struct kretprobe *rp = container_of(p, struct kretprobe, kp);
	struct kretprobe_pool *pool = rp->pool;

	/* The pool's work item may be growing the backend's store. */
	rp->pool = NULL;
	kretprobe_pool_release(pool);
	arch_kretprobe_free(rp);
}

/* Make the call @ri was taken for return through the trampoline. */
static nokprobe_inline void kretprobe_follow(struct kretprobe *rp,
					     struct kretprobe_instance *ri,
					     struct pt_regs *regs)
{
	struct llist_head *pending = &current->kretprobe_instances;

	if (unlikely(!arch_kretprobe_hijack(ri, regs))) {
		rp->nmissed++;
		kretprobe_pool_put(ri);
		return;
	}
	/*
	 * Only this task (and interrupts on its CPU, which pop what they
	 * push before returning) changes its list: no atomics needed.
	 */
	ri->llist.next = pending->first;
	WRITE_ONCE(pending->first, &ri->llist);
}

/*
 * kretprobe_enter() for a kretprobe with an entry_handler, which may turn
 * the call down.  Out of line, so that the common case makes no call.
 */
static noinline notrace int kretprobe_enter_handler(struct kretprobe *rp,
						    struct kretprobe_instance *ri,
						    struct pt_regs *regs)
{
	if (rp->entry_handler(ri, regs))
		kretprobe_pool_put(ri);
	else
		kretprobe_follow(rp, ri, regs);
	return 0;
}

NOKPROBE_SYMBOL(kretprobe_enter_handler);

/* Follow the call with @ri, unless the entry_handler turns it down. */
static nokprobe_inline int kretprobe_start(struct kretprobe *rp,
					   struct kretprobe_instance *ri,
					   struct pt_regs *regs)
{
	if (rp->entry_handler)
		return kretprobe_enter_handler(rp, ri, regs);
	kretprobe_follow(rp, ri, regs);
	return 0;
}

/* kretprobe_enter() when this CPU's cache is empty: from the chunks. */
static noinline notrace int kretprobe_enter_slow(struct kretprobe *rp,
						 struct pt_regs *regs)
{
	struct kretprobe_instance *ri = kretprobe_pool_get(rp->pool);

	if (unlikely(!ri)) {
		rp->nmissed++;
		return 0;
	}
	return kretprobe_start(rp, ri, regs);
}

NOKPROBE_SYMBOL(kretprobe_enter_slow);

/*
 * The pre_handler of every kretprobe (hit path: no ftrace call either).
 * Its common case calls nothing but tail calls, so it saves no register.
 */
notrace int kretprobe_enter(struct kprobe *p, struct pt_regs *regs)
{
	struct kretprobe *rp = container_of(p, struct kretprobe, kp);
	struct kretprobe_instance *ri = kretprobe_pool_get_cached(rp->pool);

	if (unlikely(!ri))
		return kretprobe_enter_slow(rp, regs);
	return kretprobe_start(rp, ri, regs);
}

NOKPROBE_SYMBOL(kretprobe_enter);

static struct kretprobe_instance *kretprobe_instance_of(struct llist_node *node)
{
	return container_of(node, struct kretprobe_instance, llist);
}

/*
 * A return came through the trampoline and the task has no instance for
 * its frame: the real return address is lost, so this context cannot go
 * on.  Say which probe and where, then stop, rather than return anywhere.
 */
static void __noreturn kretprobe_bug(void *fp, struct kretprobe_instance *ri)
{
	struct kretprobe *rp = ri ? kretprobe_pool_owner(ri->pool) : NULL;

	pr_emerg("kretprobe BUG!: Processing kretprobe %p @ %pS (stack slot %p, task %s/%d)\n",
		 rp, rp ? rp->kp.addr : NULL, fp, current->comm, current->pid);
	panic("kretprobe: the return address of a probed call was lost\n");
}

NOKPROBE_SYMBOL(kretprobe_bug);

/* Run @ri's return handler, if any; the caller resets current_kprobe. */
static nokprobe_inline void kretprobe_call(struct kretprobe_instance *ri,
					   struct pt_regs *regs)
{
	struct kretprobe *rp = kretprobe_pool_owner(ri->pool);

	if (!rp || !rp->handler || kprobe_disabled(&rp->kp))
		return;
	kprobe_running_set(&rp->kp);
	rp->handler(ri, regs);
}

/*
 * The general case of kretprobe_trampoline_handler().  The task's pending
 * instances are a stack: the frame returning now owns the topmost
 * instances recorded for @fp (several when several kretprobes share the
 * function: all but the oldest saw the trampoline as their return
 * address).  Instances above them belong to frames that were left without
 * returning; they are dropped, counted as missed.
 */
static noinline unsigned long kretprobe_return_slow(struct pt_regs *regs,
						    void *fp)
{
	struct llist_head *pending = &current->kretprobe_instances;
	struct llist_node *node, *mine, *rest, *next;
	struct kretprobe_instance *ri = NULL;
	unsigned long flags, ret = 0;
	struct kprobe *prev;
	bool ours = false;

	preempt_disable();
	/* Probes hit from here on (even from this walk) count as missed. */
	prev = __this_cpu_read(current_kprobe);
	kprobe_running_set(&kprobe_busy);
	raw_local_irq_save(flags);
	for (mine = pending->first; mine; mine = mine->next) {
		if (kretprobe_instance_of(mine)->fp == fp)
			break;
	}
	for (rest = mine; rest; ) {
		ri = kretprobe_instance_of(rest);
		if (ri->fp != fp)
			break;
		rest = rest->next;
		ret = (unsigned long)ri->ret_addr;
		if (ret != kretprobe_trampoline_text())
			break;
		ret = 0;
	}
	if (unlikely(!ret))
		kretprobe_bug(fp, mine ? kretprobe_instance_of(mine) : NULL);
	arch_kretprobe_restore(regs, fp, ret);
	node = pending->first;
	WRITE_ONCE(pending->first, rest);
	raw_local_irq_restore(flags);

	/* [node, rest) is ours alone now; handlers run with interrupts on. */
	for (; node != rest; node = next) {
		next = node->next;
		ri = kretprobe_instance_of(node);
		ours |= node == mine;
		if (ours) {
			kretprobe_call(ri, regs);
			kprobe_running_set(&kprobe_busy);
		} else {
			struct kretprobe *rp = kretprobe_pool_owner(ri->pool);

			if (rp)
				rp->nmissed++;
		}
		kretprobe_pool_put(ri);
	}
	__this_cpu_write(current_kprobe, prev);
	preempt_enable();
	return ret;
}

NOKPROBE_SYMBOL(kretprobe_return_slow);

/**
 * kretprobe_trampoline_handler() - a kretprobe'd call has returned
 * @regs: registers at the return, built by the trampoline
 * @fp: the key arch_kretprobe_hijack() recorded for the call (ri->fp)
 *
 * Puts the real return address back (before any handler runs, so stack
 * traces taken by the handlers show it), pops the task's instances for
 * the returning frame, runs the return handlers and puts the instances
 * back.
 *
 * Return: the real return address.
 */
unsigned long notrace kretprobe_trampoline_handler(struct pt_regs *regs, void *fp)
{
	struct llist_head *pending = &current->kretprobe_instances;
	struct kretprobe_instance *ri;
	struct llist_node *node;
	unsigned long ret;

	/*
	 * The common case: the newest instance is this frame's and holds the
	 * real return address (one kretprobe on the function, no frame above
	 * it left without returning), and no probe is running on this CPU
	 * (none ever is when a probed call returns; the general case keeps
	 * whatever it finds), which is only worth asking with preemption
	 * off.  Nothing here can be probed, and interrupts need not be held
	 * off: one that comes between our read and our write may push
	 * instances, but it pops them before it returns, so the list is back
	 * as we read it.  current_kprobe is set only while the handler runs:
	 * an interrupt before or after that is in no handler, and a probe it
	 * hits runs.
	 */
	preempt_disable();
	node = READ_ONCE(pending->first);
	if (unlikely(!node))
		goto slow;
	ri = kretprobe_instance_of(node);
	ret = (unsigned long)ri->ret_addr;
	if (unlikely(ri->fp != fp ||
		     ret == kretprobe_trampoline_text() ||
		     kprobe_running()))
		goto slow;

	arch_kretprobe_restore(regs, fp, ret);
	/*
	 * Where the backend's unwinder looks the instance up from the
	 * handler's stack traces, it stays on the list until the handler is
	 * done.  No instance is pushed meanwhile: a probe hit while the
	 * handler runs is missed.
	 */
	if (!KRETPROBE_POP_AFTER_HANDLER)
		WRITE_ONCE(pending->first, node->next);
	kretprobe_call(ri, regs);
	if (KRETPROBE_POP_AFTER_HANDLER)
		WRITE_ONCE(pending->first, node->next);
	__this_cpu_write(current_kprobe, NULL);
	kretprobe_pool_put(ri);
	preempt_enable();
	return ret;
slow:
	preempt_enable();
	return kretprobe_return_slow(regs, fp);
}

NOKPROBE_SYMBOL(kretprobe_trampoline_handler);

/**
 * is_kretprobe_trampoline() - is @addr the return-probe trampoline?
 * @addr: a return address found on a stack
 *
 * Return: true if a kretprobe replaced the real return address with it.
 */
bool is_kretprobe_trampoline(unsigned long addr)
{
	return addr == kretprobe_trampoline_text();
}
EXPORT_SYMBOL_GPL(is_kretprobe_trampoline);
NOKPROBE_SYMBOL(is_kretprobe_trampoline);

/**
 * kretprobe_find_ret_addr() - the real return address behind the trampoline
 * @tsk: the task whose stack is being unwound (NULL: current)
 * @fp: what the backend keyed the instance on (arch_kretprobe_hijack()): the
 *	stack slot of the return address on x86-64, the frame pointer on arm64
 * @cur: the unwinder's cursor, NULL at the start of an unwind
 *
 * For unwinders, which meet a task's frames innermost first: the search
 * starts after the instance found last time, and falls back to the whole
 * list.  A task other than current must not be running: its list changes
 * under us as it calls and returns, and an instance it puts back may be
 * on another task's list by the time we follow it, so no answer is given
 * (the unwinder then shows the trampoline).  Instances are freed only
 * after a grace period, and the walk is bounded.
 *
 * Return: the address, or 0 if @tsk has no instance for @fp or is running.
 */
unsigned long kretprobe_find_ret_addr(struct task_struct *tsk, void *fp,
				      struct llist_node **cur)
{
	struct llist_node *start, *node, *from;
	unsigned long ret = 0;
	int pass, budget;

	/* Some unwinders start from a pt_regs of current's with no task. */
	if (!tsk)
		tsk = current;
	if (tsk != current && task_is_running(tsk))
		return 0;
	start = *cur ? READ_ONCE((*cur)->next) : NULL;
	from = start;
	rcu_read_lock();
	for (pass = 0; pass < 2 && !ret; pass++) {
		if (!from)
			from = READ_ONCE(tsk->kretprobe_instances.first);
		budget = 4096;
		for (node = from; node && budget--; node = READ_ONCE(node->next)) {
			struct kretprobe_instance *ri = kretprobe_instance_of(node);
			unsigned long addr = (unsigned long)READ_ONCE(ri->ret_addr);

			if (READ_ONCE(ri->fp) != fp || is_kretprobe_trampoline(addr))
				continue;
			ret = addr;
			*cur = node;
			break;
		}
		if (!start)
			break;
		from = NULL;
	}
	rcu_read_unlock();
	return ret;
}
EXPORT_SYMBOL_GPL(kretprobe_find_ret_addr);
NOKPROBE_SYMBOL(kretprobe_find_ret_addr);

/**
 * kprobe_flush_task() - a task is being freed: put its instances back
 * @tk: the dead task
 *
 * Instances still on a dead task's list belong to calls that never
 * returned (the task exited inside them).  Called from the RCU callback
 * that frees the task_struct.
 */
void kprobe_flush_task(struct task_struct *tk)
{
	struct llist_node *node = tk->kretprobe_instances.first, *next;

	tk->kretprobe_instances.first = NULL;
	preempt_disable();
	for (; node; node = next) {
		next = node->next;
		kretprobe_pool_put(kretprobe_instance_of(node));
	}
	preempt_enable();
}

NOKPROBE_SYMBOL(kprobe_flush_task);

static bool kretprobe_refused(kprobe_opcode_t *addr)
{
	struct kprobe_func f;
	int i;

	if (kprobe_func_find((unsigned long)addr, &f, false))
		return false;
	for (i = 0; arch_kretprobe_refused[i]; i++) {
		if (kallsyms_lookup_name(arch_kretprobe_refused[i]) == f.start)
			return true;
	}
	return false;
}

static int kretprobe_check(struct kretprobe *rp)
{
	struct kprobe *p = &rp->kp;
	kprobe_opcode_t *addr;
	int ret;

	if (rp->data_size > KRETPROBE_MAX_DATA_SIZE) {
		pr_warn("kretprobe data_size %zu: at most %d\n", rp->data_size,
			KRETPROBE_MAX_DATA_SIZE);
		return -E2BIG;
	}
	if (rp->maxactive > KRETPROBE_MAXACTIVE_LIMIT) {
		pr_warn("kretprobe maxactive %d: at most %d (the pool grows by itself)\n",
			rp->maxactive, KRETPROBE_MAXACTIVE_LIMIT);
		return -E2BIG;
	}
	ret = kprobe_on_func_entry(p->addr, p->symbol_name, p->offset);
	if (ret) {
		if (ret == -EINVAL && p->symbol_name)
			pr_warn("kretprobe on %s+0x%x: not a function entry\n",
				p->symbol_name, p->offset);
		else if (ret == -EINVAL)
			pr_warn("kretprobe on %pS: not a function entry\n",
				(void *)p->addr + p->offset);
		return ret;
	}
	addr = p->symbol_name ? kprobe_lookup_name(p->symbol_name, 0) : p->addr;
	addr = (void *)addr + p->offset;
	if (kretprobe_refused(addr)) {
		pr_warn("kretprobe on %pS: it does not return to its caller\n",
			addr);
		return -EINVAL;
	}
	return 0;
}

/**
 * register_kretprobes() - register an array of return probes, all or nothing
 * @rps: the kretprobes; each names a function entry and has a handler
 * @num: how many
 *
 * Each kretprobe gets a pool of @maxactive instances (a default when
 * @maxactive <= 0), which grows when calls in flight need more.  All entry probes are armed
 * in one pass, as by register_kprobes().
 *
 * Return: 0, or -EINVAL (bad spec, not a function entry, a function that
 * does not return to its caller, already registered), -E2BIG (data_size
 * or maxactive too large), -ENOENT, -ENOMEM, or what register_kprobes()
 * returns.
 */
int register_kretprobes(struct kretprobe **rps, int num)
{
	struct kprobe **kps;
	int i, ret = 0;

	if (num <= 0 || !rps)
		return -EINVAL;
	for (i = 0; i < num && !ret; i++)
		ret = rps[i] ? kretprobe_check(rps[i]) : -EINVAL;
	if (ret)
		return ret;

	mutex_lock(&kprobe_mutex);
	for (i = 0; i < num && !ret; i++) {
		if (kprobe_site_of(&rps[i]->kp)) {
			pr_warn("%pS: this struct kretprobe is already registered\n",
				rps[i]->kp.addr);
			ret = -EINVAL;
		}
	}
	mutex_unlock(&kprobe_mutex);
	if (ret)
		return ret;

	kps = kprobe_array_of((void * const *)rps, num,
			      offsetof(struct kretprobe, kp), GFP_KERNEL);
	if (!kps)
		return -ENOMEM;
	for (i = 0; i < num; i++) {
		struct kretprobe *rp = rps[i];

		/* The documented default, left in the struct for all to see. */
		if (rp->maxactive <= 0)
			rp->maxactive = max_t(unsigned int, 10, 2 * num_possible_cpus());
		rp->pool = kretprobe_pool_new(rp);
		if (!rp->pool) {
			ret = -ENOMEM;
			break;
		}
		ret = arch_kretprobe_alloc(rp);
		if (ret) {
			/* Its pool goes with the others below. */
			i++;
			break;
		}
		rp->nmissed = 0;
		rp->kp.pre_handler = kretprobe_enter;
		rp->kp.post_handler = NULL;
	}
	if (!ret)
		ret = register_kprobes(kps, num);
	if (ret) {
		/* Instances may be out if the batch was briefly armed. */
		while (i-- > 0) {
			if (!rps[i]->pool)
				continue;
			kretprobe_detach(&rps[i]->kp);
			kretprobe_release(&rps[i]->kp);
		}
	}
	kvfree(kps);
	return ret;
}
EXPORT_SYMBOL_GPL(register_kretprobes);

/**
 * register_kretprobe() - register one return probe
 * @rp: the kretprobe
 *
 * Return: as register_kretprobes().
 */
int register_kretprobe(struct kretprobe *rp)
{
	return register_kretprobes(&rp, 1);
}
EXPORT_SYMBOL_GPL(register_kretprobe);

/**
 * unregister_kretprobes() - unregister an array of return probes
 * @rps: the kretprobes
 * @num: how many
 *
 * When this returns, no handler of these kretprobes is running or will
 * run, and the structs may be freed.  Calls still in flight return to
 * their callers without a handler; their instances outlive the struct
 * and are freed when the last one comes back.
 */
void unregister_kretprobes(struct kretprobe **rps, int num)
{
	kprobe_unregister_embedded((void * const *)rps, num,
				   offsetof(struct kretprobe, kp));
}
EXPORT_SYMBOL_GPL(unregister_kretprobes);

/**
 * unregister_kretprobe() - unregister one return probe
 * @rp: the kretprobe
 */
void unregister_kretprobe(struct kretprobe *rp)
{
	unregister_kretprobes(&rp, 1);
}
EXPORT_SYMBOL_GPL(unregister_kretprobe);
