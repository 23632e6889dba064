// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Out-of-line instruction slots: the pages that hold the copies of probed
 * instructions and the optimizer's detours, and the wait that proves no
 * CPU is still running such code before any of it is freed.
 */

#define pr_fmt(fmt) "kprobes: " fmt

#include <linux/kprobes.h>
#include <linux/kprobes_arch.h>
#include <linux/execmem.h>
#include <linux/kallsyms.h>
#include <linux/llist.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/perf_event.h>
#include <linux/set_memory.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "internal.h"

/*
 * Slots are carved out of whole pages taken from the kprobes execmem
 * range (on x86-64 close enough to kernel text for rel32 addressing),
 * which the backend fills with traps and makes read-only and executable
 * (arch_kprobe_slot_page_init()); it writes a slot through the
 * text-patching primitive.  A page is returned as soon as its
 * last slot is freed.  There are two pools: instruction slots (the
 * out-of-line copies of breakpoint sites) and, with jump optimization,
 * detour slots, each pool with its own pages so that kallsyms and the
 * unwinder can tell them apart.  The page lists are read locklessly by the
 * unwinder and kallsyms (is_kprobe_insn_slot(), is_kprobe_optinsn_slot(),
 * kprobe_get_kallsym()).  Perf learns of pages coming and going through
 * PERF_RECORD_KSYMBOL (out-of-line code), and of what is written into them
 * through the backend's PERF_RECORD_TEXT_POKE.
 */
#define SLOTS_MAX	(PAGE_SIZE / 16)

struct kprobe_slot_pool {
	struct list_head	pages;		/* kprobe_slot_page.list, RCU */
	unsigned int		size;		/* bytes per slot */
	const char		*sym;		/* the pages' name in kallsyms */
	enum execmem_type	type;		/* where its pages come from */
	/* Or the backend's own pages, left as it makes them. */
	void			*(*page_alloc)(void);
	void			(*page_free)(void *page);
};

/*
 * Detours may need to be closer to the text than kprobes' own execmem
 * range (arm64: within a B's reach), and come from the range the backend
 * names.  Pages from a range other than EXECMEM_KPROBES are made
 * read-only and executable here, once filled with traps.
 */
#ifndef KPROBE_OPTINSN_EXECMEM
#define KPROBE_OPTINSN_EXECMEM	EXECMEM_KPROBES
#endif

struct kprobe_slot_page {
	struct list_head	list;
	void			*base;
	unsigned int		used;
	DECLARE_BITMAP(busy, SLOTS_MAX);
	struct rcu_head		rcu;
};

static DEFINE_MUTEX(kprobe_slot_mutex);

static struct kprobe_slot_pool kprobe_insn_slots = {
	.pages	= LIST_HEAD_INIT(kprobe_insn_slots.pages),
	.size	= KPROBE_SLOT_SIZE,
	.sym	= KPROBE_INSN_PAGE_SYM,
	.type	= EXECMEM_KPROBES,
};

#ifdef CONFIG_OPTPROBES
/* .size: kprobe_slots_init(), since some backends learn it at link time. */
static struct kprobe_slot_pool kprobe_optinsn_slots = {
	.pages	= LIST_HEAD_INIT(kprobe_optinsn_slots.pages),
	.sym	= KPROBE_OPTINSN_PAGE_SYM,
	.type	= KPROBE_OPTINSN_EXECMEM,
#ifdef KPROBE_OPTINSN_PAGE_ALLOC
	.page_alloc	= KPROBE_OPTINSN_PAGE_ALLOC,
	.page_free	= KPROBE_OPTINSN_PAGE_FREE,
#endif
};
#endif

/* Before the first probe: the slot sizes the pools cut their pages into. */
void __init kprobe_slots_init(void)
{
#ifdef CONFIG_OPTPROBES
	unsigned int size = ALIGN(KPROBE_OPTINSN_SLOT_SIZE, 16);

	/* The bitmap of a page holds PAGE_SIZE / 16 slots. */
	if (WARN_ON(size > PAGE_SIZE))
		size = 0;
	kprobe_optinsn_slots.size = size;
#endif
}

static struct kprobe_slot_page *kprobe_slot_pool_page_new(struct kprobe_slot_pool *pool)
{
	struct kprobe_slot_page *sp;

	sp = kzalloc(sizeof(*sp), GFP_KERNEL);
	if (!sp)
		return NULL;
	if (pool->page_alloc) {
		sp->base = pool->page_alloc();
		if (!sp->base) {
			kfree(sp);
			return NULL;
		}
		goto out;
	}
	sp->base = execmem_alloc(pool->type, PAGE_SIZE);
	if (!sp->base) {
		kfree(sp);
		return NULL;
	}
	/* Unused bytes trap: a stray jump into the page cannot run garbage. */
	arch_kprobe_slot_page_init(sp->base);
	if (pool->type != EXECMEM_KPROBES &&
	    set_memory_rox((unsigned long)sp->base, 1)) {
		execmem_free(sp->base);
		kfree(sp);
		return NULL;
	}
out:
	list_add_rcu(&sp->list, &pool->pages);
	perf_event_ksymbol(PERF_RECORD_KSYMBOL_TYPE_OOL, (unsigned long)sp->base,
			   PAGE_SIZE, false, pool->sym);
	return sp;
}

static void *kprobe_slot_pool_alloc(struct kprobe_slot_pool *pool)
{
	unsigned int per_page;
	struct kprobe_slot_page *sp;
	void *slot = NULL;
	unsigned int i;

	if (!pool->size)
		return NULL;
	per_page = PAGE_SIZE / pool->size;
	mutex_lock(&kprobe_slot_mutex);
	list_for_each_entry(sp, &pool->pages, list) {
		if (sp->used < per_page)
			goto found;
	}
	sp = kprobe_slot_pool_page_new(pool);
	if (!sp)
		goto out;
found:
	i = find_first_zero_bit(sp->busy, per_page);
	__set_bit(i, sp->busy);
	sp->used++;
	slot = sp->base + i * pool->size;
out:
	mutex_unlock(&kprobe_slot_mutex);
	return slot;
}

static void kprobe_slot_pool_free_now(struct kprobe_slot_pool *pool, void *slot)
{
	struct kprobe_slot_page *sp;

	mutex_lock(&kprobe_slot_mutex);
	list_for_each_entry(sp, &pool->pages, list) {
		if (slot < sp->base || slot >= sp->base + PAGE_SIZE)
			continue;
		__clear_bit((slot - sp->base) / pool->size, sp->busy);
		if (--sp->used == 0) {
			list_del_rcu(&sp->list);
			perf_event_ksymbol(PERF_RECORD_KSYMBOL_TYPE_OOL,
					   (unsigned long)sp->base, PAGE_SIZE, true,
					   pool->sym);
			/* Nobody runs this page any more; readers only see sp. */
			if (pool->page_free)
				pool->page_free(sp->base);
			else
				execmem_free(sp->base);
			kfree_rcu(sp, rcu);
		}
		break;
	}
	mutex_unlock(&kprobe_slot_mutex);
}

/*
 * Out-of-line text is code a CPU runs with interrupts as they were, and
 * with preemption possible: a boosted hit leaves the trap with the CPU
 * about to run its slot's copy and the jump back, and an optimized
 * probe's jump sends CPUs into its detour, whose call to the handler, copy
 * of the region and jump back all run before (or after) preemption is
 * disabled.  The same holds for the original instructions a jump is about
 * to replace.  RCU does not see such a CPU as busy: with PREEMPT_COUNT,
 * even on a kernel that does not preempt, an interrupt that finds the
 * preempt count at zero (the tick, the expedited grace period's IPI)
 * reports a quiescent state, and a task preempted there is simply not
 * running.  kprobe_ool_sync() is the wait that does prove such a CPU has left:
 *
 *  - with CONFIG_TASKS_RCU (any preemptible kernel, PREEMPT_DYNAMIC in
 *    every mode included): an RCU-tasks grace period, in which every task
 *    goes through a voluntary context switch, user mode or idle, none of
 *    which can happen in the middle of such code (it calls nothing that
 *    sleeps), and which ends with a normal grace period for the
 *    preempt-disabled parts;
 *  - otherwise the kernel never preempts: a task leaves straight-line code
 *    before it can be switched out, so once every online CPU has switched
 *    to a work item queued now, none is inside any.
 *
 * Either may take a while, so releases wait for it in batches, from a work
 * item: slots, detours, and the sites that detours name.
 */
static DEFINE_PER_CPU(struct work_struct, kprobe_ool_sync_work);

static void kprobe_ool_sync_fn(struct work_struct *work)
{
}

void kprobe_ool_sync(void)
{
	unsigned int cpu;

	if (IS_ENABLED(CONFIG_TASKS_RCU)) {
		synchronize_rcu_tasks();
		return;
	}
	/*
	 * A work item already pending has not run yet, so it will only run
	 * after a context switch that comes after now: flushing it does.
	 */
	cpus_read_lock();
	for_each_online_cpu(cpu)
		queue_work_on(cpu, system_highpri_wq, per_cpu_ptr(&kprobe_ool_sync_work, cpu));
	for_each_online_cpu(cpu)
		flush_work(per_cpu_ptr(&kprobe_ool_sync_work, cpu));
	cpus_read_unlock();
}

void __init kprobe_ool_sync_init(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		INIT_WORK(per_cpu_ptr(&kprobe_ool_sync_work, cpu), kprobe_ool_sync_fn);
}

struct kprobe_dead {
	struct llist_node	node;
	void			*ptr;
	struct kprobe_slot_pool	*pool;	/* NULL: ptr is a kmalloc()ed site */
};

static LLIST_HEAD(kprobe_dead_list);

static void kprobe_ool_free_fn(struct work_struct *work)
{
	struct llist_node *list = llist_del_all(&kprobe_dead_list);
	struct kprobe_dead *d, *tmp;

	if (!list)
		return;
	kprobe_ool_sync();
	llist_for_each_entry_safe(d, tmp, list, node) {
		if (d->pool)
			kprobe_slot_pool_free_now(d->pool, d->ptr);
		else
			kprobe_site_free(d->ptr);
		kfree(d);
	}
}

static DECLARE_WORK(kprobe_dead_work, kprobe_ool_free_fn);

/*
 * Free @ptr (a slot of @pool, or a site) once no CPU can be running it.
 * Callers may hold text_mutex (a bridged backend frees its slots under
 * it), so this never waits: the record is small enough to insist on.
 */
void kprobe_ool_free_later(struct kprobe_slot_pool *pool, void *ptr)
{
	struct kprobe_dead *d;

	d = kmalloc(sizeof(*d), GFP_KERNEL | __GFP_NOFAIL);
	d->ptr = ptr;
	d->pool = pool;
	llist_add(&d->node, &kprobe_dead_list);
	schedule_work(&kprobe_dead_work);
}

/**
 * kprobe_slot_alloc() - get an out-of-line instruction slot
 *
 * Return: KPROBE_SLOT_SIZE bytes of read-only executable memory within
 * rel32 reach of kernel text, or NULL.
 */
void *kprobe_slot_alloc(void)
{
	return kprobe_slot_pool_alloc(&kprobe_insn_slots);
}

/**
 * kprobe_slot_free() - return a slot from kprobe_slot_alloc()
 * @slot: the slot; no CPU may be trapping in it any more (an RCU grace
 *	  period has passed since its site was disarmed)
 */
void kprobe_slot_free(void *slot)
{
	if (slot)
		kprobe_ool_free_later(&kprobe_insn_slots, slot);
}

static bool kprobe_slot_pool_has(struct kprobe_slot_pool *pool, unsigned long addr)
{
	struct kprobe_slot_page *sp;
	bool found = false;

	rcu_read_lock();
	list_for_each_entry_rcu(sp, &pool->pages, list) {
		if (addr >= (unsigned long)sp->base &&
		    addr < (unsigned long)sp->base + PAGE_SIZE) {
			found = true;
			break;
		}
	}
	rcu_read_unlock();
	return found;
}

/**
 * is_kprobe_insn_slot() - is @addr inside an out-of-line slot page?
 * @addr: an address, e.g. from a stack trace
 *
 * Return: true if @addr lies in a page holding kprobes' instruction copies.
 */
bool is_kprobe_insn_slot(unsigned long addr)
{
	return kprobe_slot_pool_has(&kprobe_insn_slots, addr);
}

NOKPROBE_SYMBOL(is_kprobe_insn_slot);

#ifdef CONFIG_OPTPROBES
/**
 * kprobe_optinsn_slot_alloc() - get a detour slot for an optimized probe
 *
 * Return: KPROBE_OPTINSN_SLOT_SIZE bytes of read-only executable memory
 * within rel32 reach of kernel text, or NULL.
 */
void *kprobe_optinsn_slot_alloc(void)
{
	return kprobe_slot_pool_alloc(&kprobe_optinsn_slots);
}

/**
 * kprobe_optinsn_slot_free() - return a slot from kprobe_optinsn_slot_alloc()
 * @slot: the slot; no jump leads to it any more
 */
void kprobe_optinsn_slot_free(void *slot)
{
	if (slot)
		kprobe_ool_free_later(&kprobe_optinsn_slots, slot);
}

/**
 * is_kprobe_optinsn_slot() - is @addr inside a detour page?
 * @addr: an address, e.g. from a stack trace
 *
 * Return: true if @addr lies in a page holding optimized probes' detours.
 */
bool is_kprobe_optinsn_slot(unsigned long addr)
{
	return kprobe_slot_pool_has(&kprobe_optinsn_slots, addr);
}

NOKPROBE_SYMBOL(is_kprobe_optinsn_slot);
#endif

static int kprobe_slot_pool_kallsym(struct kprobe_slot_pool *pool,
				    unsigned int *symnum, unsigned long *value,
			     char *type, char *sym)
{
	struct kprobe_slot_page *sp;
	int ret = -ERANGE;

	rcu_read_lock();
	list_for_each_entry_rcu(sp, &pool->pages, list) {
		if ((*symnum)--)
			continue;
		*value = (unsigned long)sp->base;
		*type = 't';
		strscpy(sym, pool->sym, KSYM_NAME_LEN);
		ret = 0;
		break;
	}
	rcu_read_unlock();
	return ret;
}

/**
 * kprobe_get_kallsym() - describe kprobes' code pages to kallsyms
 * @symnum: index of the page to describe
 * @value: its address
 * @type: its symbol type ('t')
 * @sym: its name
 *
 * Instruction-slot pages come first, then detour pages.
 *
 * Return: 0 if @symnum names a page, -ERANGE past the last one.
 */
int kprobe_get_kallsym(unsigned int symnum, unsigned long *value, char *type,
		       char *sym)
{
	int ret = kprobe_slot_pool_kallsym(&kprobe_insn_slots, &symnum, value, type, sym);

#ifdef CONFIG_OPTPROBES
	if (ret)
		ret = kprobe_slot_pool_kallsym(&kprobe_optinsn_slots, &symnum, value, type, sym);
#endif
	return ret;
}

