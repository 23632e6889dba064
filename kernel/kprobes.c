// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Kprobes: the generic core.
 *
 * The core keeps one struct kprobe_site per probed address.  Every
 * struct kprobe registered at that address is linked on the site's list in
 * registration order and shares the site's breakpoint and out-of-line copy;
 * the architecture backend (see <linux/kprobes_arch.h>) takes the trap,
 * looks the site up and calls back here to run the handlers.
 *
 * The file is laid out one mechanism per section:
 *
 *   1. site hash and hit-path helpers      (lookup, pre/post, missed)
 *   2. out-of-line instruction slots       (pages, kallsyms)
 *   3. blacklist
 *   4. arming and disarming, in batches    (text poke, ftrace)
 *   5. jump optimization                   (optimizer queue, sysctl)
 *   6. address resolution and checks       (reserved-text index)
 *   7. registration / unregistration
 *   8. enable / disable, and the global "enabled" switch
 *   9. text that goes away                 (modules, __init)
 *  10. return probes                      (instance pools, trampoline side)
 *  11. debugfs
 *  12. initialisation
 *
 * Locking: kprobe_mutex serialises every change of sites and probes.  The
 * hit path runs with interrupts (breakpoint) or preemption (ftrace) off and
 * only reads RCU-protected lists; a site or a probe leaves those lists and
 * is only reused or freed after a grace period.
 */

#define pr_fmt(fmt) "kprobes: " fmt

#include <linux/kprobes.h>
#include <linux/kprobes_arch.h>
#include <linux/hash.h>
#include <linux/init.h>
#include <linux/slab.h>
#include <linux/module.h>
#include <linux/moduleloader.h>
#include <linux/kallsyms.h>
#include <linux/module_symbol.h>
#include <linux/sort.h>
#include <linux/stringhash.h>
#include <linux/ftrace.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/memory.h>
#include <linux/execmem.h>
#include <linux/jump_label.h>
#include <linux/static_call.h>
#include <linux/bug.h>
#include <linux/set_memory.h>
#include <linux/uaccess.h>
#include <linux/sched.h>
#include <linux/sysctl.h>
#include <linux/perf_event.h>
#include <asm/sections.h>

/* Serialises all changes to sites, probes and the blacklist. */
static DEFINE_MUTEX(kprobe_mutex);

/* "enabled" debugfs switch: when true, no site is armed. */
static bool kprobes_all_disarmed;

static bool kprobes_initialized;

DEFINE_PER_CPU(struct kprobe *, current_kprobe);
EXPORT_PER_CPU_SYMBOL_GPL(current_kprobe);

/* ------------------------------------------------------------------ */
/* 1. Site hash and hit-path helpers                                    */
/* ------------------------------------------------------------------ */

/*
 * A fixed table large enough that thousands of probes keep chains short:
 * the hit path walks one chain, so its length is the lookup cost.  The hit
 * paths read it through kprobe_site_find() (kprobes_arch.h).
 */
struct hlist_head kprobe_site_hash[1 << KPROBE_SITE_HASH_BITS];

/* Sites whose text went away: out of the hash, still owning their probes. */
static LIST_HEAD(kprobe_gone_sites);

/* Stands in for "a probe is running" when no real probe is at hand. */
static struct kprobe kprobe_busy = {
	.symbol_name = "kprobe_busy",
};

/**
 * kprobe_site_lookup() - find the site at an address
 * @addr: the probed instruction's address
 *
 * Called from the hit path with interrupts or preemption disabled, and
 * under kprobe_mutex from registration.
 *
 * Return: the site, or NULL.
 */
struct kprobe_site *kprobe_site_lookup(unsigned long addr)
{
	struct kprobe_site *s;

	hlist_for_each_entry_rcu(s, kprobe_site_bucket(addr), node,
				 lockdep_is_held(&kprobe_mutex)) {
		if ((unsigned long)s->addr == addr)
			return s;
	}
	return NULL;
}

NOKPROBE_SYMBOL(kprobe_site_lookup);

/**
 * kprobe_site_first() - the probe to show as running while @s is handled
 * @s: a site
 *
 * Return: the first probe of @s, or a placeholder when the site is being
 * emptied; never NULL, so kprobe_running() stays true during the hit.
 */
struct kprobe *kprobe_site_first(struct kprobe_site *s)
{
	struct kprobe *p;

	p = list_first_or_null_rcu(&s->probes, struct kprobe, list);
	return p ? p : &kprobe_busy;
}

NOKPROBE_SYMBOL(kprobe_site_first);

/**
 * kprobe_site_missed() - account a hit that could not run its handlers
 * @s: the site that was hit while another probe was running
 */
void kprobe_site_missed(struct kprobe_site *s)
{
	struct kprobe *p;

	list_for_each_entry_rcu(p, &s->probes, list) {
		if (!kprobe_disabled(p))
			p->nmissed++;
	}
}

NOKPROBE_SYMBOL(kprobe_site_missed);

/**
 * kprobe_busy_begin() - make probes hit on this CPU count as missed
 *
 * Disables preemption until kprobe_busy_end().
 */
void kprobe_busy_begin(void)
{
	preempt_disable();
	__this_cpu_write(current_kprobe, &kprobe_busy);
}

NOKPROBE_SYMBOL(kprobe_busy_begin);

/**
 * kprobe_busy_end() - end a kprobe_busy_begin() section
 */
void kprobe_busy_end(void)
{
	__this_cpu_write(current_kprobe, NULL);
	preempt_enable();
}

NOKPROBE_SYMBOL(kprobe_busy_end);

/* ------------------------------------------------------------------ */
/* 2. Out-of-line instruction slots                                    */
/* ------------------------------------------------------------------ */

/*
 * Slots are carved out of whole pages taken from the kprobes execmem
 * range (close enough to kernel text for rel32 addressing), filled with
 * int3 and then made read-only and executable; the backend writes a slot
 * through the text-patching primitive.  A page is returned as soon as its
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
};

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
};

#ifdef CONFIG_OPTPROBES
static struct kprobe_slot_pool kprobe_optinsn_slots = {
	.pages	= LIST_HEAD_INIT(kprobe_optinsn_slots.pages),
	.size	= KPROBE_OPTINSN_SLOT_SIZE,
	.sym	= KPROBE_OPTINSN_PAGE_SYM,
};
#endif

static struct kprobe_slot_page *slot_page_new(struct kprobe_slot_pool *pool)
{
	struct kprobe_slot_page *sp;

	sp = kzalloc(sizeof(*sp), GFP_KERNEL);
	if (!sp)
		return NULL;
	sp->base = execmem_alloc(EXECMEM_KPROBES, PAGE_SIZE);
	if (!sp->base) {
		kfree(sp);
		return NULL;
	}
	/* Unused bytes trap: a stray jump into the page cannot run garbage. */
	memset(sp->base, 0xcc, PAGE_SIZE);
	set_memory_rox((unsigned long)sp->base, 1);
	list_add_rcu(&sp->list, &pool->pages);
	perf_event_ksymbol(PERF_RECORD_KSYMBOL_TYPE_OOL, (unsigned long)sp->base,
			   PAGE_SIZE, false, pool->sym);
	return sp;
}

static void *slot_alloc(struct kprobe_slot_pool *pool)
{
	unsigned int per_page = PAGE_SIZE / pool->size;
	struct kprobe_slot_page *sp;
	void *slot = NULL;
	unsigned int i;

	mutex_lock(&kprobe_slot_mutex);
	list_for_each_entry(sp, &pool->pages, list) {
		if (sp->used < per_page)
			goto found;
	}
	sp = slot_page_new(pool);
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

static void slot_free_now(struct kprobe_slot_pool *pool, void *slot)
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
 * running.  ool_sync() is the wait that does prove such a CPU has left:
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
static DEFINE_PER_CPU(struct work_struct, ool_sync_work);

static void ool_sync_fn(struct work_struct *work)
{
}

static void ool_sync(void)
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
		queue_work_on(cpu, system_highpri_wq, per_cpu_ptr(&ool_sync_work, cpu));
	for_each_online_cpu(cpu)
		flush_work(per_cpu_ptr(&ool_sync_work, cpu));
	cpus_read_unlock();
}

static void __init ool_sync_init(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		INIT_WORK(per_cpu_ptr(&ool_sync_work, cpu), ool_sync_fn);
}

struct kprobe_dead {
	struct llist_node	node;
	void			*ptr;
	struct kprobe_slot_pool	*pool;	/* NULL: ptr is a kmalloc()ed site */
};

static LLIST_HEAD(kprobe_dead_list);

static void dead_fn(struct work_struct *work)
{
	struct llist_node *list = llist_del_all(&kprobe_dead_list);
	struct kprobe_dead *d, *tmp;

	if (!list)
		return;
	ool_sync();
	llist_for_each_entry_safe(d, tmp, list, node) {
		if (d->pool)
			slot_free_now(d->pool, d->ptr);
		else
			kfree(d->ptr);
		kfree(d);
	}
}

static DECLARE_WORK(kprobe_dead_work, dead_fn);

/* Free @ptr (a slot of @pool, or a site) once no CPU can be running it. */
static void free_after_ool(struct kprobe_slot_pool *pool, void *ptr)
{
	struct kprobe_dead *d;

	d = kmalloc(sizeof(*d), GFP_KERNEL);
	if (!d) {
		ool_sync();
		if (pool)
			slot_free_now(pool, ptr);
		else
			kfree(ptr);
		return;
	}
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
	return slot_alloc(&kprobe_insn_slots);
}

/**
 * kprobe_slot_free() - return a slot from kprobe_slot_alloc()
 * @slot: the slot; no CPU may be trapping in it any more (an RCU grace
 *	  period has passed since its site was disarmed)
 */
void kprobe_slot_free(void *slot)
{
	if (slot)
		free_after_ool(&kprobe_insn_slots, slot);
}

static bool pool_has(struct kprobe_slot_pool *pool, unsigned long addr)
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
	return pool_has(&kprobe_insn_slots, addr);
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
	return slot_alloc(&kprobe_optinsn_slots);
}

/**
 * kprobe_optinsn_slot_free() - return a slot from kprobe_optinsn_slot_alloc()
 * @slot: the slot; no jump leads to it any more
 */
void kprobe_optinsn_slot_free(void *slot)
{
	if (slot)
		free_after_ool(&kprobe_optinsn_slots, slot);
}

/**
 * is_kprobe_optinsn_slot() - is @addr inside a detour page?
 * @addr: an address, e.g. from a stack trace
 *
 * Return: true if @addr lies in a page holding optimized probes' detours.
 */
bool is_kprobe_optinsn_slot(unsigned long addr)
{
	return pool_has(&kprobe_optinsn_slots, addr);
}

NOKPROBE_SYMBOL(is_kprobe_optinsn_slot);
#endif

static int pool_kallsym(struct kprobe_slot_pool *pool, unsigned int *symnum,
			unsigned long *value, char *type, char *sym)
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
	int ret = pool_kallsym(&kprobe_insn_slots, &symnum, value, type, sym);

#ifdef CONFIG_OPTPROBES
	if (ret)
		ret = pool_kallsym(&kprobe_optinsn_slots, &symnum, value, type, sym);
#endif
	return ret;
}

/* ------------------------------------------------------------------ */
/* 3. Blacklist                                                        */
/* ------------------------------------------------------------------ */

/*
 * Address ranges nobody may probe: the hit path itself and whatever it
 * calls (NOKPROBE_SYMBOL() and .kprobes.text), entry and exception code,
 * noinstr code, and the architecture's own list.  One entry per function
 * so that the debugfs file names them.  Written under kprobe_mutex,
 * read under RCU (within_kprobe_blacklist() is also used by
 * hw_breakpoint and kgdb).
 */
struct kprobe_blacklist_entry {
	struct list_head	list;
	unsigned long		start;
	unsigned long		end;
	struct rcu_head		rcu;
};

static LIST_HEAD(kprobe_blacklist);

static int blacklist_add(unsigned long start, unsigned long end)
{
	struct kprobe_blacklist_entry *e;

	e = kmalloc(sizeof(*e), GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	e->start = start;
	e->end = end;
	list_add_tail_rcu(&e->list, &kprobe_blacklist);
	return 0;
}

/**
 * kprobe_add_ksym_blacklist() - forbid probes in the function at @entry
 * @entry: an address inside a function known to kallsyms
 *
 * Return: the size of the function, or a negative errno.
 */
int kprobe_add_ksym_blacklist(unsigned long entry)
{
	unsigned long size, offset;
	int ret;

	if (!kallsyms_lookup_size_offset(entry, &size, &offset))
		return -EINVAL;
	ret = blacklist_add(entry - offset, entry - offset + size);
	return ret ? ret : size;
}

/**
 * kprobe_add_area_blacklist() - forbid probes in [@start, @end)
 * @start: first address
 * @end: first address past the area
 *
 * Each function of the area gets its own entry.
 *
 * Return: 0 or a negative errno.
 */
int kprobe_add_area_blacklist(unsigned long start, unsigned long end)
{
	unsigned long addr = start, size, offset;
	int ret;

	while (addr < end) {
		if (!kallsyms_lookup_size_offset(addr, &size, &offset) || !size)
			return blacklist_add(addr, end);	/* no symbols: whole */
		ret = blacklist_add(addr - offset, addr - offset + size);
		if (ret)
			return ret;
		addr = addr - offset + size;
	}
	return 0;
}

static bool in_section(unsigned long addr, const char *start, const char *end)
{
	return addr >= (unsigned long)start && addr < (unsigned long)end;
}

/**
 * within_kprobe_blacklist() - may @addr not be probed?
 * @addr: an address of kernel or module text
 *
 * Return: true if probing @addr is forbidden.
 */
bool within_kprobe_blacklist(unsigned long addr)
{
	struct kprobe_blacklist_entry *e;
	bool hit = false;

	if (in_section(addr, __kprobes_text_start, __kprobes_text_end) ||
	    in_section(addr, __entry_text_start, __entry_text_end) ||
	    in_section(addr, __irqentry_text_start, __irqentry_text_end) ||
	    in_section(addr, __softirqentry_text_start, __softirqentry_text_end) ||
	    in_section(addr, __noinstr_text_start, __noinstr_text_end))
		return true;

	rcu_read_lock();
	list_for_each_entry_rcu(e, &kprobe_blacklist, list) {
		if (addr >= e->start && addr < e->end) {
			hit = true;
			break;
		}
	}
	rcu_read_unlock();
	return hit;
}

static void __init blacklist_init(void)
{
	unsigned long *entry;
	int ret;

	for (entry = __start_kprobe_blacklist; entry < __stop_kprobe_blacklist;
	     entry++) {
		ret = kprobe_add_ksym_blacklist(*entry);
		if (ret < 0 && ret != -EINVAL)
			pr_err("cannot build the blacklist: %d\n", ret);
	}
	ret = kprobe_add_area_blacklist((unsigned long)__kprobes_text_start,
					(unsigned long)__kprobes_text_end);
	if (!ret)
		ret = kprobe_add_area_blacklist((unsigned long)__entry_text_start,
						(unsigned long)__entry_text_end);
	if (!ret)
		ret = kprobe_add_area_blacklist((unsigned long)__irqentry_text_start,
						(unsigned long)__irqentry_text_end);
	if (!ret)
		ret = kprobe_add_area_blacklist((unsigned long)__softirqentry_text_start,
						(unsigned long)__softirqentry_text_end);
	if (!ret)
		ret = kprobe_add_area_blacklist((unsigned long)__noinstr_text_start,
						(unsigned long)__noinstr_text_end);
	if (!ret)
		ret = arch_populate_kprobe_blacklist();
	if (ret)
		pr_err("incomplete blacklist: %d\n", ret);
}

#ifdef CONFIG_MODULES
static void blacklist_add_module(struct module *mod)
{
	unsigned long start, i;

	for (i = 0; i < mod->num_kprobe_blacklist; i++)
		kprobe_add_ksym_blacklist(mod->kprobe_blacklist[i]);
	start = (unsigned long)mod->kprobes_text_start;
	if (start)
		kprobe_add_area_blacklist(start, start + mod->kprobes_text_size);
	start = (unsigned long)mod->noinstr_text_start;
	if (start)
		kprobe_add_area_blacklist(start, start + mod->noinstr_text_size);
}

static void blacklist_remove_module(struct module *mod)
{
	struct kprobe_blacklist_entry *e, *tmp;

	list_for_each_entry_safe(e, tmp, &kprobe_blacklist, list) {
		if (within_module(e->start, mod)) {
			list_del_rcu(&e->list);
			kfree_rcu(e, rcu);
		}
	}
}
#endif

/* ------------------------------------------------------------------ */
/* 4. Arming and disarming, in batches                                 */
/* ------------------------------------------------------------------ */

/*
 * Callers collect the sites whose armed state must change on a list
 * (linked through site->batch) and apply it in one go: one ftrace filter
 * update for the ftrace sites, and for breakpoint sites one text_mutex
 * section with one cross-CPU synchronisation (for arming, shared between
 * batches: see arm_sync_work).
 */

/* Jump optimization (section 5) follows every change of armed state. */
static void opt_leave(struct kprobe_site *s, struct list_head *unopt);
static void opt_unoptimize(struct list_head *unopt);
static void opt_consider(struct kprobe_site *s);

static bool site_has_enabled(struct kprobe_site *s)
{
	struct kprobe *p;

	list_for_each_entry(p, &s->probes, list) {
		if (!kprobe_disabled(p))
			return true;
	}
	return false;
}

/*
 * Recompute KSITE_POST and the hit paths' shortcut, s->solo; say whether
 * the site should be armed.
 */
static bool site_want_armed(struct kprobe_site *s)
{
	struct kprobe *p, *solo = NULL, *duo = NULL;
	bool post = false, pres = true;
	int enabled = 0, n = 0;

	list_for_each_entry(p, &s->probes, list) {
		n++;
		if (kprobe_disabled(p))
			continue;
		if (p->post_handler)
			post = true;
		if (!p->pre_handler)
			pres = false;
		duo = duo ?: p;
		solo = p;
		enabled++;
	}
	if (post)
		s->flags |= KSITE_POST;
	else
		s->flags &= ~KSITE_POST;
	WRITE_ONCE(s->solo, enabled == 1 && solo->pre_handler ? solo : NULL);
	WRITE_ONCE(s->duo, n == 2 && enabled == 2 && pres && !post ? duo : NULL);

	return !kprobes_all_disarmed && !(s->flags & KSITE_GONE) &&
	       site_has_enabled(s);
}

#ifdef CONFIG_KPROBES_ON_FTRACE
/*
 * Ftrace sites are carried by one of two ftrace_ops.  A pre_handler may
 * move regs->ip through either (fail_function and BPF's override do), but
 * FTRACE_OPS_FL_IPMODIFY is also a claim: ftrace lets only one such ops
 * onto a function, and livepatch is one.  Only a site with a post_handler
 * makes that claim (the post_handler runs as if ftrace's nop, not a
 * patched function, came next), so that a livepatch and a probe can share
 * a function.  site->fops says which ops carries an armed site; when its
 * post_handlers come or go it moves to the other one: first into the new
 * ops' filter, then site->fops, then out of the old one.  While it is in
 * both, the handler ignores the call from the ops site->fops does not
 * name, so that no hit is lost or run twice.
 */
struct kprobe_ftrace_ops {
	struct ftrace_ops	ops;
	unsigned int		armed;	/* sites in its filter */
};

static struct kprobe_ftrace_ops kprobe_ftrace_ops[2] __read_mostly = {
	{ .ops = { .func = kprobe_ftrace_handler,
		   .flags = FTRACE_OPS_FL_SAVE_REGS } },
	{ .ops = { .func = kprobe_ftrace_handler,
		   .flags = FTRACE_OPS_FL_SAVE_REGS | FTRACE_OPS_FL_IPMODIFY } },
};

/* Set by kprobe_ftrace_kill(); the backend's ftrace handler checks it. */
bool kprobe_ftrace_disabled __read_mostly;

/**
 * kprobe_ftrace_kill() - ftrace is dead: stop handling probes through it
 */
void kprobe_ftrace_kill(void)
{
	WRITE_ONCE(kprobe_ftrace_disabled, true);
}

/* Add @n ftrace sites whose addresses are in @ips to @kf (or remove them). */
static int ftrace_ops_set(struct kprobe_ftrace_ops *kf, unsigned long *ips,
			  unsigned int n, bool add)
{
	int ret;

	if (!n)
		return 0;
	if (add) {
		ret = ftrace_set_filter_ips(&kf->ops, ips, n, 0, 0);
		if (ret)
			return ret;
		if (!kf->armed) {
			ret = register_ftrace_function(&kf->ops);
			if (ret) {
				ftrace_set_filter_ips(&kf->ops, ips, n, 1, 0);
				return ret;
			}
		}
		kf->armed += n;
		return 0;
	}
	/* An ops with an empty filter would trace everything: unhook first. */
	if (kf->armed == n)
		unregister_ftrace_function(&kf->ops);
	kf->armed -= n;
	return ftrace_set_filter_ips(&kf->ops, ips, n, 1, 0);
}

/*
 * Taking an address out of an ftrace_ops' filter costs a pass over every
 * ftrace record in the kernel, milliseconds, where the rest of
 * unregistering a probe costs microseconds.  So a site disarmed from the
 * plain ops (kprobe_ftrace_ops[0]) leaves its address in the filter for a
 * while: the handler ignores calls for an address whose site is gone or
 * no longer names that ops, and ftrace_lazy_work takes out everything
 * left there in one update, HZ / 10 later.  A site armed again at such
 * an address in the meantime takes it back without any update.  The
 * IPMODIFY ops is always left at once: the claim it makes on a function
 * would keep a livepatch out of it.  Text that is about to be freed
 * flushes the lot first (kill_sites_in()).
 */
struct ftrace_lazy_ip {
	struct hlist_node	node;
	unsigned long		ip;
};

#define FTRACE_LAZY_BITS	8
static struct hlist_head ftrace_lazy_hash[1 << FTRACE_LAZY_BITS];
static unsigned int ftrace_lazy_count;

static void ftrace_lazy_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(ftrace_lazy_work, ftrace_lazy_fn);

static struct hlist_head *ftrace_lazy_bucket(unsigned long ip)
{
	return &ftrace_lazy_hash[hash_long(ip, FTRACE_LAZY_BITS)];
}

/* Keep @ip in the plain ops' filter for now; false if that cannot be. */
static bool ftrace_lazy_add(unsigned long ip)
{
	struct ftrace_lazy_ip *l = kmalloc(sizeof(*l), GFP_KERNEL);

	if (!l)
		return false;
	l->ip = ip;
	hlist_add_head(&l->node, ftrace_lazy_bucket(ip));
	ftrace_lazy_count++;
	schedule_delayed_work(&ftrace_lazy_work, HZ / 10);
	return true;
}

/* Is @ip still in the plain ops' filter, left there by a disarmed site? */
static bool ftrace_lazy_has(unsigned long ip)
{
	struct ftrace_lazy_ip *l;

	hlist_for_each_entry(l, ftrace_lazy_bucket(ip), node) {
		if (l->ip == ip)
			return true;
	}
	return false;
}

/* Take @ip back for a site armed in the plain ops: is it still there? */
static bool ftrace_lazy_get(unsigned long ip)
{
	struct ftrace_lazy_ip *l;

	hlist_for_each_entry(l, ftrace_lazy_bucket(ip), node) {
		if (l->ip == ip) {
			hlist_del(&l->node);
			kfree(l);
			ftrace_lazy_count--;
			return true;
		}
	}
	return false;
}

/* Take every address left in the plain ops' filter out, in one update. */
static void ftrace_lazy_flush(void)
{
	struct ftrace_lazy_ip *l;
	struct hlist_node *tmp;
	unsigned long *ips;
	unsigned int i, n = 0;

	lockdep_assert_held(&kprobe_mutex);
	if (!ftrace_lazy_count)
		return;
	ips = kmalloc_array(ftrace_lazy_count, sizeof(*ips), GFP_KERNEL);
	for (i = 0; i < ARRAY_SIZE(ftrace_lazy_hash); i++) {
		hlist_for_each_entry_safe(l, tmp, &ftrace_lazy_hash[i], node) {
			if (ips)
				ips[n++] = l->ip;
			hlist_del(&l->node);
			kfree(l);
		}
	}
	ftrace_lazy_count = 0;
	/* Once ftrace is dead its filters no longer matter. */
	if (READ_ONCE(kprobe_ftrace_disabled)) {
		kfree(ips);
		return;
	}
	if (!ips || ftrace_ops_set(&kprobe_ftrace_ops[0], ips, n, false))
		pr_warn("ftrace kept disarmed probes in its filter\n");
	kfree(ips);
}

/* Is @s carried by the ftrace_ops that claims IPMODIFY? */
static bool ftrace_site_ipmod(struct kprobe_site *s)
{
	return s->fops == &kprobe_ftrace_ops[1].ops;
}

/* The ftrace_ops an armed ftrace site is in (0 or 1), -1 when disarmed. */
static int ftrace_site_at(struct kprobe_site *s)
{
	if (!(s->flags & KSITE_ARMED))
		return -1;
	return ftrace_site_ipmod(s);
}

/* Where the handler is to take hits of @s from: ops @at, or none. */
static void ftrace_site_carry(struct kprobe_site *s, int at)
{
	if (at < 0)
		s->flags &= ~KSITE_ARMED;
	else
		s->flags |= KSITE_ARMED;
	WRITE_ONCE(s->fops, at < 0 ? NULL : &kprobe_ftrace_ops[at].ops);
}

/* Where it should be, armed (@arm) or not. */
static int ftrace_site_want(struct kprobe_site *s, bool arm)
{
	return arm ? !!(s->flags & KSITE_POST) : -1;
}

/*
 * Entry probes go live at once.  Registering one probe on a function's
 * entry would otherwise cost a whole ftrace update, milliseconds, before
 * register_kprobe() returns.  So a site that wants the plain ops, while
 * ftrace's nop is there untouched, is first armed with a breakpoint on the
 * nop's first byte, like any other site: the breakpoint handler runs its
 * probes as the ftrace handler would and resumes past the nop.
 * ftrace_lazy_work later hands all such sites to ftrace in one update of
 * the plain ops' filter.  Ftrace's own write takes the int3 over: it
 * expects its nop there, and kprobe_ftrace_yield() tells it the breakpoint
 * is ours to give up; ftrace then rewrites the site through
 * text_poke_bp(), whose own breakpoint handler emulates the new call, so
 * every call is seen, by one path or the other.  site->ftrace_bp says
 * where a site is in this (under text_mutex): KSITE_BP_OURS, our int3 is
 * there; KSITE_BP_YIELDED, ftrace took it over.  Another ftrace user that
 * enables the function in the meantime takes it over too; its call does
 * not reach our handler until the hand-off, which it therefore brings
 * forward to at once.
 */
static unsigned int ftrace_bp_count;	/* sites with ftrace_bp set */
static struct delayed_work arm_sync_work;

/*
 * @s, armed by a breakpoint, leaves that state: ftrace carries it now, or
 * it is being disarmed.  Our int3, if ftrace did not take it over, goes.
 * text_mutex held; arch_kprobe_poke_finish() to follow.
 */
static void ftrace_site_bp_drop(struct kprobe_site *s)
{
	lockdep_assert_held(&text_mutex);
	if (s->ftrace_bp == KSITE_BP_OURS)
		arch_kprobe_ftrace_bp(s, false);
	s->ftrace_bp = KSITE_BP_NONE;
	ftrace_bp_count--;
}

/*
 * Sites of @batch armed by a breakpoint that ftrace_sites_set_armed()
 * moved away from the plain ops (disarmed, or carried by the other ops
 * now) leave the breakpoint state.
 */
static void ftrace_sites_bp_settle(struct list_head *batch)
{
	struct kprobe_site *s;

	if (!ftrace_bp_count)
		return;
	mutex_lock(&text_mutex);
	list_for_each_entry(s, batch, batch) {
		if (s->ftrace_bp && ftrace_site_at(s) != 0)
			ftrace_site_bp_drop(s);
	}
	arch_kprobe_poke_finish();
	mutex_unlock(&text_mutex);
}

/* Arm the sites of @batch that can go live as breakpoints, as above. */
static void ftrace_sites_bp_arm(struct list_head *batch)
{
	struct kprobe_site *s;
	unsigned int n = 0;

	if (READ_ONCE(kprobe_ftrace_disabled))
		return;
	mutex_lock(&text_mutex);
	list_for_each_entry(s, batch, batch) {
		if (!(s->flags & KSITE_FTRACE) || ftrace_site_at(s) >= 0 ||
		    ftrace_site_want(s, true) != 0 ||
		    ftrace_lazy_has((unsigned long)s->addr) ||
		    !arch_kprobe_ftrace_bp(s, true))
			continue;
		s->ftrace_bp = KSITE_BP_OURS;
		ftrace_site_carry(s, 0);
		n++;
	}
	if (n) {
		ftrace_bp_count += n;
		schedule_delayed_work(&arm_sync_work, 1);
		schedule_delayed_work(&ftrace_lazy_work, HZ / 10);
	}
	mutex_unlock(&text_mutex);
}

/* Hand every site armed by a breakpoint over to ftrace, in one update. */
static void ftrace_bp_hand_off(void)
{
	struct kprobe_site *s;
	unsigned long *ips;
	unsigned int i, n = 0;
	int err;

	lockdep_assert_held(&kprobe_mutex);
	if (!ftrace_bp_count || READ_ONCE(kprobe_ftrace_disabled))
		return;
	ips = kmalloc_array(ftrace_bp_count, sizeof(*ips), GFP_KERNEL);
	if (!ips)
		goto retry;
	for (i = 0; i < ARRAY_SIZE(kprobe_site_hash) && n < ftrace_bp_count; i++) {
		hlist_for_each_entry(s, &kprobe_site_hash[i], node) {
			if (s->ftrace_bp && n < ftrace_bp_count)
				ips[n++] = (unsigned long)s->addr;
		}
	}
	err = ftrace_ops_set(&kprobe_ftrace_ops[0], ips, n, true);
	kfree(ips);
	if (err) {
		pr_warn("ftrace refused to take over %u entry probe(s): %d\n",
			n, err);
		goto retry;
	}
	mutex_lock(&text_mutex);
	for (i = 0; i < ARRAY_SIZE(kprobe_site_hash) && ftrace_bp_count; i++) {
		hlist_for_each_entry(s, &kprobe_site_hash[i], node) {
			if (s->ftrace_bp)
				ftrace_site_bp_drop(s);
		}
	}
	arch_kprobe_poke_finish();
	mutex_unlock(&text_mutex);
	return;
retry:
	/* The breakpoints keep working meanwhile. */
	schedule_delayed_work(&ftrace_lazy_work, HZ);
}

/**
 * kprobe_ftrace_yield() - ftrace found an int3 where it expects its nop
 * @ip: the ftrace call site
 *
 * Called by ftrace, under text_mutex, as it is about to rewrite @ip: is
 * the breakpoint there one that kprobes armed on ftrace's nop ("Entry
 * probes go live at once", section 4)?  If so, it is ftrace's from now on.
 *
 * Return: true if it was ours and ftrace may write over it.
 */
bool kprobe_ftrace_yield(unsigned long ip)
{
	struct kprobe_site *s;
	bool ours = false;

	lockdep_assert_held(&text_mutex);
	rcu_read_lock();
	s = kprobe_site_lookup(ip);
	if (s && s->ftrace_bp == KSITE_BP_OURS) {
		s->ftrace_bp = KSITE_BP_YIELDED;
		ours = true;
		/* Someone else's update: let ours carry the probe at once. */
		mod_delayed_work(system_wq, &ftrace_lazy_work, 0);
	}
	rcu_read_unlock();
	return ours;
}

static void ftrace_lazy_fn(struct work_struct *work)
{
	mutex_lock(&kprobe_mutex);
	ftrace_lazy_flush();
	ftrace_bp_hand_off();
	mutex_unlock(&kprobe_mutex);
}

/*
 * Arm (@arm) the ftrace sites of @batch in the ftrace_ops their probes
 * call for, moving those armed in the other one, or disarm them.  On
 * failure (another IPMODIFY user on the function, no memory) the sites
 * concerned stay as they were and the error is returned.  Once ftrace is
 * dead nothing reaches the handler any more: sites are only marked.
 */
static int ftrace_sites_set_armed(struct list_head *batch, bool arm)
{
	unsigned int nadd[2] = {}, ndel[2] = {}, n = 0, i;
	unsigned long *ips, *add[2], *del[2];
	struct kprobe_site *s;
	int at, want, ret = 0, err[2] = {};

	if (arm)
		ftrace_sites_bp_arm(batch);
	list_for_each_entry(s, batch, batch) {
		if (!(s->flags & KSITE_FTRACE))
			continue;
		at = ftrace_site_at(s);
		want = ftrace_site_want(s, arm);
		if (at == want)
			continue;
		if (READ_ONCE(kprobe_ftrace_disabled)) {
			ftrace_site_carry(s, -1);
			if (want >= 0)
				ret = -ENODEV;
			continue;
		}
		if (want >= 0)
			nadd[want]++;
		if (at >= 0)
			ndel[at]++;
		n++;
	}
	if (!n)
		return ret;
	ips = kmalloc_array(nadd[0] + nadd[1] + ndel[0] + ndel[1], sizeof(*ips),
			    GFP_KERNEL);
	if (!ips)
		return -ENOMEM;
	add[0] = ips;
	add[1] = add[0] + nadd[0];
	del[0] = add[1] + nadd[1];
	del[1] = del[0] + ndel[0];

	/* In first: a moving site is then carried by both for a while. */
	memset(nadd, 0, sizeof(nadd));
	list_for_each_entry(s, batch, batch) {
		want = ftrace_site_want(s, arm);
		if (!(s->flags & KSITE_FTRACE) || want < 0 ||
		    ftrace_site_at(s) == want)
			continue;
		/* still in the plain ops' filter: nothing to update */
		if (want == 0 && ftrace_lazy_get((unsigned long)s->addr))
			continue;
		add[want][nadd[want]++] = (unsigned long)s->addr;
	}
	for (i = 0; i < 2; i++)
		err[i] = ftrace_ops_set(&kprobe_ftrace_ops[i], add[i], nadd[i], true);

	/*
	 * Then site->fops, which says which ops counts, and out of the old
	 * ops.  A site that could not go into its new ops stays as it was.
	 */
	memset(ndel, 0, sizeof(ndel));
	list_for_each_entry(s, batch, batch) {
		if (!(s->flags & KSITE_FTRACE))
			continue;
		at = ftrace_site_at(s);
		want = ftrace_site_want(s, arm);
		if (at == want || (want >= 0 && err[want]))
			continue;
		ftrace_site_carry(s, want);
		/* armed by a breakpoint: not in the plain ops' filter */
		if (s->ftrace_bp)
			continue;
		if (at == 0 && ftrace_lazy_add((unsigned long)s->addr))
			continue;
		if (at >= 0)
			del[at][ndel[at]++] = (unsigned long)s->addr;
	}
	for (i = 0; i < 2; i++) {
		/* Only allocation can fail here: the sites stay in, unused. */
		if (ftrace_ops_set(&kprobe_ftrace_ops[i], del[i], ndel[i], false))
			pr_warn("ftrace kept %u disarmed probe(s) in its filter\n",
				ndel[i]);
		if (err[i]) {
			pr_warn("ftrace refused to arm %u probe(s)%s: %d\n",
				nadd[i], i ? " with a post_handler" : "", err[i]);
			ret = err[i];
		}
	}
	kfree(ips);
	return ret;
}
#else
static bool ftrace_site_ipmod(struct kprobe_site *s)
{
	return false;
}

static void ftrace_lazy_flush(void)
{
}

static void ftrace_sites_bp_settle(struct list_head *batch)
{
}

static int ftrace_sites_set_armed(struct list_head *batch, bool arm)
{
	struct kprobe_site *s;

	list_for_each_entry(s, batch, batch) {
		if ((s->flags & KSITE_FTRACE) && !(s->flags & KSITE_ARMED) == arm)
			return -EOPNOTSUPP;
	}
	return 0;
}
#endif

/*
 * Arming waits for no other CPU.  The breakpoint goes in with one atomic
 * byte write, so a CPU sees either the old instruction or the trap, never
 * a mix, and a CPU that fetches the instruction after the write traps.
 * Only a CPU that had already fetched the old instruction may run it once
 * more, which is a hit the probe did not see happen before it was there.
 * The serialising IPI that guarantees every CPU has moved on is shared:
 * arm_sync_work sends one for all the arming done within a tick, and any
 * disarming or jump batch in between sends one anyway.  So a tool that
 * registers a thousand probes one call at a time pays for a few IPI
 * rounds, not a thousand.
 */
static void arm_sync_fn(struct work_struct *work)
{
	mutex_lock(&text_mutex);
	arch_kprobe_poke_finish();
	mutex_unlock(&text_mutex);
}

static DECLARE_DELAYED_WORK(arm_sync_work, arm_sync_fn);

/*
 * Is @s armed the way its probes want (want: armed at all)?  An ftrace
 * site must also be in the right ftrace_ops.
 */
static bool site_armed_as(struct kprobe_site *s, bool want)
{
	if (!!(s->flags & KSITE_ARMED) != want)
		return false;
	return !want || !(s->flags & KSITE_FTRACE) ||
	       ftrace_site_ipmod(s) == !!(s->flags & KSITE_POST);
}

/*
 * Bring every site on @batch to the armed state @arm.  Breakpoint sites
 * cannot fail.  Ftrace sites go in one filter update per ftrace_ops,
 * which can (another IPMODIFY user on the function, no memory): they are
 * then left as they were and the error is returned.
 */
static int sites_set_armed(struct list_head *batch, bool arm)
{
	struct kprobe_site *s;
	unsigned int nbp = 0;
	int ret;

	list_for_each_entry(s, batch, batch) {
		if (!!(s->flags & KSITE_ARMED) != arm && !(s->flags & KSITE_FTRACE))
			nbp++;
	}
	if (nbp) {
		mutex_lock(&text_mutex);
		list_for_each_entry(s, batch, batch) {
			if (!!(s->flags & KSITE_ARMED) == arm ||
			    (s->flags & KSITE_FTRACE))
				continue;
			arch_kprobe_poke(s, arm);
			s->flags ^= KSITE_ARMED;
		}
		if (arm)
			schedule_delayed_work(&arm_sync_work, 1);
		else
			arch_kprobe_poke_finish();
		mutex_unlock(&text_mutex);
	}
	ret = ftrace_sites_set_armed(batch, arm);
	ftrace_sites_bp_settle(batch);
	return ret;
}

/*
 * Move each site of @batch to the state its probes call for.  A site that
 * is to be disarmed or gains a post_handler loses its jump first (one
 * batch); sites that now qualify for jump optimization are queued.
 */
static void sites_update(struct list_head *batch)
{
	struct kprobe_site *s, *tmp;
	LIST_HEAD(to_arm);
	LIST_HEAD(to_disarm);
	LIST_HEAD(unopt);

	list_for_each_entry_safe(s, tmp, batch, batch) {
		bool want = site_want_armed(s);

		if (!want || (s->flags & KSITE_POST))
			opt_leave(s, &unopt);
		if (site_armed_as(s, want))
			continue;
		list_move_tail(&s->batch, want ? &to_arm : &to_disarm);
	}
	opt_unoptimize(&unopt);
	/* Disarming an ftrace site only fails on allocation: then it stays. */
	if (sites_set_armed(&to_disarm, false))
		pr_warn("some probes could not be disarmed\n");
	if (sites_set_armed(&to_arm, true))
		pr_warn("some probes could not be armed\n");
	list_splice_tail(&to_arm, batch);
	list_splice_tail(&to_disarm, batch);
	list_for_each_entry(s, batch, batch)
		opt_consider(s);
}

static void site_free_rcu(struct rcu_head *head)
{
	kfree(container_of(head, struct kprobe_site, rcu));
}

/*
 * Free sites after the grace period the caller already waited for: no CPU
 * can be running their handlers or their out-of-line copy any more.
 */
static void sites_release(struct list_head *dead)
{
	struct kprobe_site *s, *tmp;

	list_for_each_entry_safe(s, tmp, dead, batch) {
		list_del(&s->batch);
		arch_kprobe_site_release(s);
		/*
		 * A detour names its site, and a CPU may still be on its way
		 * from the jump to the handler (see ool_sync()): such a site
		 * waits like the detour itself.
		 */
		if (s->flags & KSITE_OPT_DETOUR) {
			free_after_ool(NULL, s);
			continue;
		}
		/*
		 * The caller's grace period already covers the hit path; the
		 * deferred free only keeps a debugfs-free, lock-free reader of
		 * the hash from ever racing with the kfree.
		 */
		call_rcu(&s->rcu, site_free_rcu);
	}
}

/* Dead sites whose release waits for a grace period off the caller's path. */
struct kprobe_graveyard {
	struct rcu_work		rwork;
	struct list_head	sites;
};

static void graveyard_fn(struct work_struct *work)
{
	struct kprobe_graveyard *g =
		container_of(to_rcu_work(work), struct kprobe_graveyard, rwork);

	sites_release(&g->sites);
	kfree(g);
}

/*
 * Release the sites on @dead after an RCU grace period, without waiting
 * for it: the hit paths of other sites may still walk a hash chain through
 * them, and a CPU may still run a boosted copy in their slots.  Only sites
 * without a detour come here (see unregister_kprobes()).
 */
static void sites_release_later(struct list_head *dead)
{
	struct kprobe_graveyard *g;

	if (list_empty(dead))
		return;
	g = kmalloc(sizeof(*g), GFP_KERNEL);
	if (!g) {
		synchronize_rcu();
		sites_release(dead);
		return;
	}
	INIT_LIST_HEAD(&g->sites);
	list_splice_init(dead, &g->sites);
	INIT_RCU_WORK(&g->rwork, graveyard_fn);
	queue_rcu_work(system_wq, &g->rwork);
}

static void kprobe_sync_nop(void *unused)
{
}

/* ------------------------------------------------------------------ */
/* 5. Jump optimization                                                 */
/* ------------------------------------------------------------------ */

/*
 * A site qualifies for jump optimization when it is an armed breakpoint
 * site, none of its enabled probes has a post_handler, no other site
 * starts inside its region, the sysctl is on, and the backend accepts its
 * text.  Every change of a site's armed state goes through sites_update(),
 * which takes the jump out first where the site no longer qualifies and
 * queues the sites that do; a new site inside an optimized region takes
 * the jump of the site around it out before it is even prepared.
 *
 * The optimizer is a delayed work item, so that a burst of registrations
 * shares one pass: every site queued pushes the pass back by
 * OPTIMIZER_DELAY, up to OPTIMIZER_MAX_DELAY after the first one.  While
 * a tool attaches a thousand probes one call at a time the optimizer does
 * not compete with it for kprobe_mutex and the CPU; it takes them all
 * when the tool is done.  A pass takes the whole queue:
 *
 *  1. under kprobe_mutex (dropped every OPTIMIZER_CHUNK sites, so that
 *     registrations are not held up for long), the backend checks each
 *     site's region and builds its detour, and the site moves to
 *     opt_ready; from then on breakpoint hits run the detour's copy of the
 *     region (KSITE_OPT_READY), so no CPU enters the region's middle;
 *  2. without the mutex, one ool_sync() for all of them: every CPU and
 *     task that was inside a region before (interrupted, or preempted) has
 *     left it;
 *  3. under kprobe_mutex again, the jumps of the sites still on opt_ready
 *     are written in one text_poke_bp() batch.
 *
 * A site that stops qualifying meanwhile simply leaves the queue.  Taking
 * a jump out is done at once, by whoever changes the site, in batches of
 * two synchronisations; its detour stays until the site is freed.
 */
#ifdef CONFIG_OPTPROBES

/* /proc/sys/debug/kprobes-optimization */
static int kprobes_optimize = 1;

/*
 * Sites with KSITE_OPT_QUEUED, linked through site->opt: waiting for
 * step 1 (opt_queue), or with their detour built and KSITE_OPT_WAIT set,
 * waiting for step 3 (opt_ready).
 */
static LIST_HEAD(opt_queue);
static LIST_HEAD(opt_ready);

/* Quiet jiffies before a pass; the longest a queued site waits for one. */
#define OPTIMIZER_DELAY		5
#define OPTIMIZER_MAX_DELAY	(HZ / 2)
/* Sites prepared per hold of kprobe_mutex in step 1. */
#define OPTIMIZER_CHUNK		32

/* When the first site of the coming pass was queued; kprobe_mutex. */
static unsigned long opt_burst_start;
static bool opt_burst;

static void optimizer_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(optimizer_work, optimizer_fn);

/*
 * What users see as optimized (KPROBE_FLAG_OPTIMIZED, [OPTIMIZED] in the
 * debugfs list): a site whose jump is in, or that the optimizer has
 * committed to, its detour built and its breakpoint hits already running
 * the detour's copy, the jump following once the wait of step 2 is over.
 * Upstream marks a probe when it queues it; a preemptible kernel's wait
 * takes a tenth of a second or more, and tools (upstream's selftests
 * among them) look right after a probe was enabled.
 */
static bool opt_shown(struct kprobe_site *s)
{
	return s->flags & (KSITE_OPTIMIZED | KSITE_OPT_WAIT);
}

/* Probes show the site's state in KPROBE_FLAG_OPTIMIZED. */
static void opt_mark(struct kprobe_site *s)
{
	struct kprobe *p;

	list_for_each_entry(p, &s->probes, list) {
		if (opt_shown(s))
			p->flags |= KPROBE_FLAG_OPTIMIZED;
		else
			p->flags &= ~KPROBE_FLAG_OPTIMIZED;
	}
}

/* Does another site start inside the (known) region of @s? */
static bool opt_region_busy(struct kprobe_site *s)
{
	unsigned int i, len = arch_optprobe_region(s);

	for (i = 1; i < len; i++) {
		if (kprobe_site_lookup((unsigned long)s->addr + i))
			return true;
	}
	return false;
}

static bool opt_eligible(struct kprobe_site *s)
{
	return kprobes_optimize && (s->flags & KSITE_ARMED) &&
	       !(s->flags & (KSITE_FTRACE | KSITE_POST | KSITE_GONE |
			     KSITE_OPT_NEVER)) &&
	       !opt_region_busy(s);
}

static void opt_dequeue(struct kprobe_site *s)
{
	list_del_init(&s->opt);
	s->flags &= ~(KSITE_OPT_QUEUED | KSITE_OPT_WAIT | KSITE_OPT_READY);
	opt_mark(s);
}

/*
 * @s must not be (or become) optimized: dequeue it, or put it on @unopt
 * to have its jump taken out by opt_unoptimize().
 */
static void opt_leave(struct kprobe_site *s, struct list_head *unopt)
{
	lockdep_assert_held(&kprobe_mutex);
	if (s->flags & KSITE_OPTIMIZED) {
		if (list_empty(&s->opt))
			list_add_tail(&s->opt, unopt);
	} else if (s->flags & KSITE_OPT_QUEUED) {
		opt_dequeue(s);
	}
}

/* Take the jumps of the sites on @unopt out, in one batch. */
static void opt_unoptimize(struct list_head *unopt)
{
	struct kprobe_site *s, *tmp;

	if (list_empty(unopt))
		return;
	mutex_lock(&text_mutex);
	arch_optprobe_unpoke(unopt);
	mutex_unlock(&text_mutex);
	list_for_each_entry_safe(s, tmp, unopt, opt) {
		list_del_init(&s->opt);
		/* Only now may breakpoint hits step the first instruction alone. */
		s->flags &= ~(KSITE_OPTIMIZED | KSITE_OPT_READY);
		opt_mark(s);
	}
}

/* Push the pass back OPTIMIZER_DELAY, within OPTIMIZER_MAX_DELAY. */
static void opt_kick(void)
{
	unsigned long now = jiffies, last;

	lockdep_assert_held(&kprobe_mutex);
	if (!opt_burst) {
		opt_burst = true;
		opt_burst_start = now;
	}
	last = opt_burst_start + OPTIMIZER_MAX_DELAY;
	if (time_after_eq(now, last))
		mod_delayed_work(system_wq, &optimizer_work, 0);
	else
		mod_delayed_work(system_wq, &optimizer_work,
				 min(OPTIMIZER_DELAY, last - now));
}

/* Queue @s if it qualifies and is not queued or optimized already. */
static void opt_consider(struct kprobe_site *s)
{
	lockdep_assert_held(&kprobe_mutex);
	opt_mark(s);
	if ((s->flags & (KSITE_OPT_QUEUED | KSITE_OPTIMIZED)) || !opt_eligible(s))
		return;
	s->flags |= KSITE_OPT_QUEUED;
	list_add_tail(&s->opt, &opt_queue);
	opt_kick();
}

/*
 * A site is about to appear at @addr (@arrive) or has gone from there:
 * the sites whose region may cover @addr leave the optimizer's path, or
 * are considered again.
 */
static void opt_neighbours(unsigned long addr, bool arrive)
{
	struct kprobe_site *s;
	LIST_HEAD(unopt);
	unsigned int d;

	for (d = 1; d < KPROBE_OPT_REGION_MAX; d++) {
		s = kprobe_site_lookup(addr - d);
		if (!s)
			continue;
		if (!arrive)
			opt_consider(s);
		else if (arch_optprobe_region(s) > d)
			opt_leave(s, &unopt);
	}
	opt_unoptimize(&unopt);
}

/* A site's text is gone: forget its jump without touching the text. */
static void opt_forget(struct kprobe_site *s)
{
	list_del_init(&s->opt);
	s->flags &= ~(KSITE_OPT_QUEUED | KSITE_OPT_WAIT | KSITE_OPT_READY |
		      KSITE_OPTIMIZED);
	opt_mark(s);
}

static void optimizer_fn(struct work_struct *work)
{
	struct kprobe_site *s, *tmp;
	unsigned int n = 0;

	/* 1. Check the regions and build the detours. */
	mutex_lock(&kprobe_mutex);
	opt_burst = false;
	while (!list_empty(&opt_queue)) {
		s = list_first_entry(&opt_queue, struct kprobe_site, opt);
		if (arch_optprobe_prepare(s))
			s->flags |= KSITE_OPT_NEVER;
		else
			s->flags |= KSITE_OPT_DETOUR;
		if (!opt_eligible(s)) {
			opt_dequeue(s);
		} else {
			s->flags |= KSITE_OPT_WAIT | KSITE_OPT_READY;
			list_move_tail(&s->opt, &opt_ready);
			opt_mark(s);
		}
		if (++n % OPTIMIZER_CHUNK == 0) {
			mutex_unlock(&kprobe_mutex);
			cond_resched();
			mutex_lock(&kprobe_mutex);
		}
	}
	n = !list_empty(&opt_ready);
	mutex_unlock(&kprobe_mutex);
	if (!n)
		return;

	/* 2. Let every CPU and task that may be inside a region leave it. */
	ool_sync();

	/* 3. Write the jumps of the sites still waiting. */
	mutex_lock(&kprobe_mutex);
	mutex_lock(&text_mutex);
	n = 0;
	list_for_each_entry_safe(s, tmp, &opt_ready, opt) {
		arch_optprobe_poke(s);
		list_del_init(&s->opt);
		s->flags &= ~(KSITE_OPT_QUEUED | KSITE_OPT_WAIT);
		s->flags |= KSITE_OPTIMIZED | KSITE_OPT_JUMPED;
		opt_mark(s);
		n++;
	}
	if (n)
		arch_optprobe_poke_finish();
	mutex_unlock(&text_mutex);
	if (!list_empty(&opt_queue))
		opt_kick();
	mutex_unlock(&kprobe_mutex);
}

/**
 * wait_for_kprobe_optimizer() - wait until the optimizer's queue is empty
 *
 * Every probe registered before the call is then either optimized or known
 * not to qualify (for now).  May sleep for an RCU-tasks grace period, or
 * until every CPU has switched tasks; must not be called with kprobe locks
 * held.
 */
void wait_for_kprobe_optimizer(void)
{
	mutex_lock(&kprobe_mutex);
	while (!list_empty(&opt_queue) || !list_empty(&opt_ready)) {
		mutex_unlock(&kprobe_mutex);
		flush_delayed_work(&optimizer_work);
		mutex_lock(&kprobe_mutex);
	}
	mutex_unlock(&kprobe_mutex);
}
EXPORT_SYMBOL_GPL(wait_for_kprobe_optimizer);

/* The sysctl changed: take every jump out, or queue every site again. */
static void opt_apply_all(void)
{
	struct kprobe_site *s;
	LIST_HEAD(unopt);
	int i;

	lockdep_assert_held(&kprobe_mutex);
	for (i = 0; i < ARRAY_SIZE(kprobe_site_hash); i++) {
		hlist_for_each_entry(s, &kprobe_site_hash[i], node) {
			if (kprobes_optimize)
				opt_consider(s);
			else
				opt_leave(s, &unopt);
		}
	}
	opt_unoptimize(&unopt);
}

static int kprobes_optimize_sysctl(const struct ctl_table *table, int write,
				   void *buffer, size_t *length, loff_t *ppos)
{
	int old, ret;

	mutex_lock(&kprobe_mutex);
	old = kprobes_optimize;
	ret = proc_dointvec_minmax(table, write, buffer, length, ppos);
	if (!ret && write && old != kprobes_optimize) {
		opt_apply_all();
		pr_info("jump optimization %s\n",
			kprobes_optimize ? "enabled" : "disabled");
	}
	mutex_unlock(&kprobe_mutex);
	return ret;
}

static struct ctl_table kprobe_sysctls[] = {
	{
		.procname	= "kprobes-optimization",
		.data		= &kprobes_optimize,
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= kprobes_optimize_sysctl,
		.extra1		= SYSCTL_ZERO,
		.extra2		= SYSCTL_ONE,
	},
};

static void __init opt_init(void)
{
	register_sysctl_init("debug", kprobe_sysctls);
}

#else /* !CONFIG_OPTPROBES */

static void opt_leave(struct kprobe_site *s, struct list_head *unopt) { }
static void opt_unoptimize(struct list_head *unopt) { }
static void opt_consider(struct kprobe_site *s) { }
static void opt_neighbours(unsigned long addr, bool arrive) { }
static void opt_forget(struct kprobe_site *s) { }
static void __init opt_init(void) { }

#endif /* CONFIG_OPTPROBES */

/* ------------------------------------------------------------------ */
/* 6. Address resolution and checks                                     */
/* ------------------------------------------------------------------ */

/**
 * kprobe_lookup_name() - address of a symbol for probing
 * @name: "symbol" or "module:symbol"
 * @offset: offset the caller will add (unused here)
 *
 * Return: the address, or NULL if there is no such symbol.
 */
kprobe_opcode_t *kprobe_lookup_name(const char *name, unsigned int offset)
{
	return (kprobe_opcode_t *)kallsyms_lookup_name(name);
}

/*
 * Function bounds.  Registration needs the function around an address
 * (instruction boundaries, the entry check) and the optimizer needs it
 * again, with GCC's "<name>.cold" part.  For vmlinux kallsyms answers
 * with a binary search, but for module text it walks every symbol of the
 * module, and a "<name>.cold" lookup compares every name of every module:
 * attaching to every function of a big module would cost time quadratic
 * in the number of probes.  So the first such question about a module
 * builds an index of its text symbols, sorted by address, with each
 * function linked to its cold part; lookups then take a binary search.
 * The index lives until the module goes.  Init text is rare enough to be
 * left to kallsyms.
 */
#ifdef CONFIG_MODULES
#define KPROBE_COLD_NONE	(-1)
#define KPROBE_COLD_MANY	(-2)	/* two candidates: ask no further */

struct kprobe_modsym {
	u32	off;	/* from the start of the module's text */
	u32	size;	/* up to the next symbol, or the end of the text */
	s32	cold;	/* index of the cold part, or KPROBE_COLD_* */
	u32	hash;	/* of the name without ".cold" (used while building) */
	bool	is_cold;
};

struct kprobe_modsyms {
	struct list_head	list;
	struct module		*mod;
	unsigned long		base;
	unsigned long		size;
	unsigned int		n;
	struct kprobe_modsym	sym[];
};

/* Indexes, and the mutex that guards them (taken inside kprobe_mutex). */
static LIST_HEAD(kprobe_modsyms_list);
static DEFINE_MUTEX(kprobe_sym_mutex);

struct modsyms_fill {
	struct kprobe_modsyms	*ms;
	unsigned int		max;
};

static int modsyms_fill_one(void *data, const char *name, unsigned long addr)
{
	struct modsyms_fill *f = data;
	struct kprobe_modsyms *ms = f->ms;
	struct kprobe_modsym *e;
	size_t len = strlen(name);
	bool cold = len > 5 && !strcmp(name + len - 5, ".cold");

	if (addr < ms->base || addr >= ms->base + ms->size || !len ||
	    is_mapping_symbol(name))
		return 0;
	if (ms->n == f->max)
		return -E2BIG;	/* the module changed under us: give up */
	e = &ms->sym[ms->n++];
	e->off = addr - ms->base;
	e->is_cold = cold;
	e->cold = KPROBE_COLD_NONE;
	e->hash = full_name_hash(NULL, name, cold ? len - 5 : len);
	return 0;
}

static int modsyms_count_one(void *data, const char *name, unsigned long addr)
{
	struct modsyms_fill *f = data;

	if (addr >= f->ms->base && addr < f->ms->base + f->ms->size)
		f->max++;
	return 0;
}

static int modsym_cmp_off(const void *a, const void *b)
{
	const struct kprobe_modsym *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* Order by name hash, functions before cold parts (an index array). */
static int modsym_cmp_hash(const void *a, const void *b, const void *priv)
{
	const struct kprobe_modsym *sym = priv;
	const struct kprobe_modsym *x = &sym[*(const u32 *)a];
	const struct kprobe_modsym *y = &sym[*(const u32 *)b];

	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	return x->is_cold - y->is_cold;
}

/*
 * Point every function at the cold part with the same name.  Names are
 * compared by hash: a collision links a function to a cold part that is
 * not its own, which only makes the optimizer scan more text.
 */
static int modsyms_link_cold(struct kprobe_modsyms *ms)
{
	unsigned int i, j, k;
	u32 *idx;

	idx = kvmalloc_array(ms->n, sizeof(*idx), GFP_KERNEL);
	if (!idx)
		return -ENOMEM;
	for (i = 0; i < ms->n; i++)
		idx[i] = i;
	sort_r(idx, ms->n, sizeof(*idx), modsym_cmp_hash, NULL, ms->sym);
	for (i = 0; i < ms->n; i = j) {
		unsigned int first_cold = i;

		for (j = i; j < ms->n &&
		     ms->sym[idx[j]].hash == ms->sym[idx[i]].hash; j++) {
			if (!ms->sym[idx[j]].is_cold)
				first_cold = j + 1;
		}
		if (first_cold == j)
			continue;
		for (k = i; k < first_cold; k++)
			ms->sym[idx[k]].cold = j - first_cold > 1 ?
				KPROBE_COLD_MANY : (s32)idx[first_cold];
	}
	kvfree(idx);
	return 0;
}

static struct kprobe_modsyms *modsyms_build(struct module *mod)
{
	struct modsyms_fill f = {};
	struct kprobe_modsyms tmp = {
		.base = (unsigned long)mod->mem[MOD_TEXT].base,
		.size = mod->mem[MOD_TEXT].size,
	};
	struct kprobe_modsyms *ms;
	unsigned int i, end;

	f.ms = &tmp;
	module_kallsyms_on_each_symbol(mod->name, modsyms_count_one, &f);
	if (!f.max)
		return NULL;
	ms = kvmalloc(struct_size(ms, sym, f.max), GFP_KERNEL);
	if (!ms)
		return NULL;
	*ms = tmp;
	f.ms = ms;
	if (module_kallsyms_on_each_symbol(mod->name, modsyms_fill_one, &f) ||
	    !ms->n)
		goto fail;
	sort(ms->sym, ms->n, sizeof(ms->sym[0]), modsym_cmp_off, NULL);
	/* Aliases share an address, and so their size. */
	end = ms->size;
	for (i = ms->n; i-- > 0;) {
		if (i + 1 < ms->n && ms->sym[i + 1].off > ms->sym[i].off)
			end = ms->sym[i + 1].off;
		ms->sym[i].size = end - ms->sym[i].off;
	}
	/* The links are indexes into the sorted array. */
	if (modsyms_link_cold(ms))
		goto fail;
	ms->mod = mod;
	return ms;
fail:
	kvfree(ms);
	return NULL;
}

/*
 * The index of @mod, built if need be; kprobe_sym_mutex held.  Callers
 * hold a reference on @mod but not kprobe_mutex, so a module whose init
 * fails can reach its GOING notifier (modsyms_forget(), under the same
 * mutex) before we get here: an index built then would outlive the module
 * and be found again by a new one at the same address.  Hence only a live
 * module gets one, and the loader sets any other state before it calls the
 * GOING notifiers.  Coming modules are rare enough for kallsyms.
 */
static struct kprobe_modsyms *modsyms_get(struct module *mod)
{
	struct kprobe_modsyms *ms;

	if (READ_ONCE(mod->state) != MODULE_STATE_LIVE)
		return NULL;
	list_for_each_entry(ms, &kprobe_modsyms_list, list) {
		if (ms->mod == mod)
			return ms;
	}
	ms = modsyms_build(mod);
	if (ms)
		list_add(&ms->list, &kprobe_modsyms_list);
	return ms;
}

/* @mod is going: drop its index. */
static void modsyms_forget(struct module *mod)
{
	struct kprobe_modsyms *ms;

	mutex_lock(&kprobe_sym_mutex);
	list_for_each_entry(ms, &kprobe_modsyms_list, list) {
		if (ms->mod == mod) {
			list_del(&ms->list);
			kvfree(ms);
			break;
		}
	}
	mutex_unlock(&kprobe_sym_mutex);
}

/* The last symbol at or before @off; @ms has at least one. */
static unsigned int modsyms_find(struct kprobe_modsyms *ms, u32 off)
{
	unsigned int lo = 0, hi = ms->n;

	while (hi - lo > 1) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (ms->sym[mid].off <= off)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Module core text: 0, -ENOENT, or -EAGAIN to ask kallsyms instead. */
static int modsyms_lookup(struct module *mod, unsigned long addr,
			  struct kprobe_func *f)
{
	struct kprobe_modsyms *ms;
	unsigned int i;
	int ret = 0;

	mutex_lock(&kprobe_sym_mutex);
	ms = modsyms_get(mod);
	if (!ms) {
		ret = -EAGAIN;
		goto out;
	}
	i = modsyms_find(ms, addr - ms->base);
	if (ms->sym[i].off > addr - ms->base) {
		ret = -ENOENT;
		goto out;
	}
	f->start = ms->base + ms->sym[i].off;
	f->size = ms->sym[i].size;
	f->cold = 0;
	f->cold_size = 0;
	if (ms->sym[i].cold == KPROBE_COLD_MANY) {
		f->cold_size = KPROBE_FUNC_COLD_UNKNOWN;
	} else if (ms->sym[i].cold >= 0) {
		f->cold = ms->base + ms->sym[ms->sym[i].cold].off;
		f->cold_size = ms->sym[ms->sym[i].cold].size;
	}
out:
	mutex_unlock(&kprobe_sym_mutex);
	return ret;
}

#else
static int modsyms_lookup(struct module *mod, unsigned long addr,
			  struct kprobe_func *f)
{
	return -EAGAIN;
}
#endif /* CONFIG_MODULES */

struct cold_match {
	unsigned long	addr;
	unsigned int	n;
};

static int cold_match_one(void *data, unsigned long addr)
{
	struct cold_match *m = data;

	m->addr = addr;
	m->n++;
	return 0;
}

/* kallsyms, for vmlinux and module init text. */
static int func_by_kallsyms(unsigned long addr, struct kprobe_func *f,
			    bool want_cold)
{
	char name[KSYM_NAME_LEN], cold[KSYM_NAME_LEN + MODULE_NAME_LEN + 8];
	unsigned long size, off, csize, coff;
	struct cold_match m = {};
	char *modname = NULL;

	if (!kallsyms_lookup(addr, &size, &off, &modname, name))
		return -ENOENT;
	f->start = addr - off;
	f->size = size;
	f->cold = 0;
	f->cold_size = 0;
	if (!want_cold)
		return 0;
	if (modname) {
		snprintf(cold, sizeof(cold), "%s:%s.cold", modname, name);
		m.addr = kallsyms_lookup_name(cold);
		m.n = !!m.addr;
	} else {
		/* vmlinux only, and every symbol of that name. */
		snprintf(cold, sizeof(cold), "%s.cold", name);
		kallsyms_on_each_match_symbol(cold_match_one, cold, &m);
	}
	if (m.n > 1) {
		f->cold_size = KPROBE_FUNC_COLD_UNKNOWN;
	} else if (m.n && kallsyms_lookup_size_offset(m.addr, &csize, &coff) &&
		   !coff) {
		f->cold = m.addr;
		f->cold_size = csize;
	}
	return 0;
}

/**
 * kprobe_func_find() - the function around a text address
 * @addr: kernel or module text
 * @f: filled in: the function's start and size, and with @want_cold its
 *     "<name>.cold" part (cold_size KPROBE_FUNC_COLD_UNKNOWN when more
 *     than one symbol could be it)
 * @want_cold: look for the cold part too
 *
 * What kallsyms_lookup_size_offset() answers, at the cost of a binary
 * search for module text too.  Registration-time code only: may sleep.
 *
 * Return: 0, or -ENOENT when no symbol covers @addr.
 */
int kprobe_func_find(unsigned long addr, struct kprobe_func *f, bool want_cold)
{
	struct module *mod;
	bool core = false;
	int ret;

	preempt_disable();
	mod = __module_text_address(addr);
	if (mod && !within_module_init(addr, mod))
		core = try_module_get(mod);
	preempt_enable();
	if (core) {
		ret = modsyms_lookup(mod, addr, f);
		module_put(mod);
		if (ret != -EAGAIN)
			return ret;
	}
	return func_by_kallsyms(addr, f, want_cold);
}

/*
 * Resolve what @p names into an instruction address.  Does not look at
 * whether that address may be probed.
 */
static kprobe_opcode_t *resolve_addr(kprobe_opcode_t *addr, const char *sym,
				     unsigned long offset, bool *on_entry)
{
	struct kprobe_func f;
	unsigned long target;

	if (!!addr == !!sym)
		return ERR_PTR(-EINVAL);
	if (sym) {
		addr = kprobe_lookup_name(sym, offset);
		if (!addr)
			return ERR_PTR(-ENOENT);
	}
	target = (unsigned long)addr + offset;
	if (kprobe_func_find(target, &f, false))
		return ERR_PTR(-EINVAL);
	return arch_adjust_kprobe_addr(target, target - f.start, on_entry);
}

/**
 * kprobe_on_func_entry() - does a probe spec name a function's entry?
 * @addr: address, or NULL when @sym is given
 * @sym: symbol name, or NULL
 * @offset: offset from @addr or @sym
 *
 * Return: 0 if it does, -EINVAL if not (or bad spec), -ENOENT for an
 * unknown symbol.
 */
int kprobe_on_func_entry(kprobe_opcode_t *addr, const char *sym,
			 unsigned long offset)
{
	bool on_entry = false;
	kprobe_opcode_t *where = resolve_addr(addr, sym, offset, &on_entry);

	if (IS_ERR(where))
		return PTR_ERR(where);
	return on_entry ? 0 : -EINVAL;
}

/*
 * The start of the ftrace call site that @addr is in, or 0.  Unlike
 * ftrace_location(), no kallsyms lookup for an address in none (most).
 */
static unsigned long ftrace_site_of(unsigned long addr)
{
#ifdef CONFIG_DYNAMIC_FTRACE
	return ftrace_location_range(addr, addr);
#else
	return 0;
#endif
}

/*
 * Is @addr in a function's preamble: the CFI type hash (__cfi_) that
 * callers read, or the padding (__pfx_) that call depth tracking and
 * FineIBT rewrite at boot?  Neither is code that runs as written.  Only
 * configurations that emit them need the symbol lookup.
 */
static bool in_preamble(unsigned long addr)
{
	char name[KSYM_NAME_LEN];

	if (!IS_ENABLED(CONFIG_CFI_CLANG) && !IS_ENABLED(CONFIG_CALL_PADDING))
		return false;
	if (lookup_symbol_name(addr, name))
		return false;
	return str_has_prefix(name, "__cfi_") || str_has_prefix(name, "__pfx_");
}

/*
 * Text the kernel rewrites or finds by address: jump labels and static
 * call sites (it patches them; a breakpoint there would be overwritten or
 * written back over its patch) and BUG/WARN traps (the trap handler looks
 * them up by address).  jump_label_text_reserved(),
 * static_call_text_reserved() and find_bug() walk their whole tables, the
 * first decoding every jump label it passes: most of what registering a
 * probe used to cost.  So each owner of text, the core kernel and every
 * module, gets one index of those sites sorted by address, built once (the
 * core's at the first check after boot, a module's when it comes) and
 * searched by bisection.  Without one (early boot, a module whose notifier
 * has not run yet) the tables are walked as before.
 */
enum { RSV_JUMP, RSV_CALL, RSV_BUG };

struct rsv_site {
	unsigned long	addr;
	u8		len;		/* bytes reserved; a BUG is its address only */
	u8		kind;		/* RSV_* */
	u8		init;		/* in init text */
};

struct rsv_index {
	struct list_head	node;		/* on rsv_modules */
	struct module		*mod;		/* NULL: the core kernel */
	unsigned int		n;
	struct rsv_site		site[] __counted_by(n);
};

/* The longest site: a 5-byte jump label or call. */
#define RSV_MAX_LEN	5

static struct rsv_index *rsv_core;
static LIST_HEAD(rsv_modules);

#ifdef CONFIG_HAVE_STATIC_CALL_INLINE
extern struct static_call_site __start_static_call_sites[],
			       __stop_static_call_sites[];
#endif
#ifdef CONFIG_GENERIC_BUG
extern struct bug_entry __start___bug_table[], __stop___bug_table[];
#endif

/* The tables of one owner of text. */
struct rsv_tables {
	struct jump_entry	*jump;
	unsigned int		njump;
	struct static_call_site	*call;
	unsigned int		ncall;
	struct bug_entry	*bug;
	unsigned int		nbug;
};

static void rsv_tables_get(struct module *mod, struct rsv_tables *t)
{
	memset(t, 0, sizeof(*t));
#ifdef CONFIG_MODULES
	if (mod) {
#ifdef CONFIG_JUMP_LABEL
		t->jump = mod->jump_entries;
		t->njump = mod->num_jump_entries;
#endif
#ifdef CONFIG_HAVE_STATIC_CALL_INLINE
		t->call = mod->static_call_sites;
		t->ncall = mod->num_static_call_sites;
#endif
#ifdef CONFIG_GENERIC_BUG
		t->bug = mod->bug_table;
		t->nbug = mod->num_bugs;
#endif
		return;
	}
#endif
#ifdef CONFIG_JUMP_LABEL
	t->jump = __start___jump_table;
	t->njump = __stop___jump_table - __start___jump_table;
#endif
#ifdef CONFIG_HAVE_STATIC_CALL_INLINE
	t->call = __start_static_call_sites;
	t->ncall = __stop_static_call_sites - __start_static_call_sites;
#endif
#ifdef CONFIG_GENERIC_BUG
	t->bug = __start___bug_table;
	t->nbug = __stop___bug_table - __start___bug_table;
#endif
}

static void rsv_push(struct rsv_index *x, struct module *mod,
		     unsigned long addr, u8 len, u8 kind)
{
	struct rsv_site *r = &x->site[x->n++];

	r->addr = addr;
	r->len = len;
	r->kind = kind;
	r->init = mod && within_module_init(addr, mod);
}

static int rsv_site_cmp(const void *a, const void *b)
{
	const struct rsv_site *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/*
 * Build the index of @mod's text (NULL: the core kernel's), in one pass
 * over its tables.  The core's jump labels and static calls in the init
 * text freed after boot are left out, as the kernel's own checks skip
 * them.  Jump label sizes come from decoding each site, under
 * jump_label_lock() so that none is caught half-patched.  NULL on
 * allocation failure; the tables are walked then.
 */
static struct rsv_index *rsv_build(struct module *mod)
{
	struct rsv_tables t;
	struct rsv_index *x;

	rsv_tables_get(mod, &t);
	x = kvzalloc(struct_size(x, site, t.njump + t.ncall + t.nbug),
		     GFP_KERNEL);
	if (!x)
		return NULL;
	x->mod = mod;
#ifdef CONFIG_JUMP_LABEL
	jump_label_lock();
	for (unsigned int i = 0; i < t.njump; i++) {
		struct jump_entry *j = &t.jump[i];

		if (!mod && jump_entry_is_init(j))
			continue;
		rsv_push(x, mod, jump_entry_code(j), jump_entry_size(j),
			 RSV_JUMP);
	}
	jump_label_unlock();
#endif
#ifdef CONFIG_HAVE_STATIC_CALL_INLINE
	for (unsigned int i = 0; i < t.ncall; i++) {
		struct static_call_site *c = &t.call[i];

		/* key: relative, with the site's flags in its low bits */
		if (!mod && (((long)&c->key + c->key) & STATIC_CALL_SITE_INIT))
			continue;
		rsv_push(x, mod, (unsigned long)&c->addr + c->addr,
			 CALL_INSN_SIZE, RSV_CALL);
	}
#endif
#ifdef CONFIG_GENERIC_BUG
	for (unsigned int i = 0; i < t.nbug; i++) {
		struct bug_entry *b = &t.bug[i];

#ifdef CONFIG_GENERIC_BUG_RELATIVE_POINTERS
		rsv_push(x, mod, (unsigned long)&b->bug_addr_disp +
			 b->bug_addr_disp, 1, RSV_BUG);
#else
		rsv_push(x, mod, b->bug_addr, 1, RSV_BUG);
#endif
	}
#endif
	sort(x->site, x->n, sizeof(x->site[0]), rsv_site_cmp, NULL);
	return x;
}

/*
 * The kind of the first site of @x, of a kind in the mask @kinds, that
 * overlaps [@start, @end); -1 when none does.  Init sites count only while
 * @init.
 */
static int rsv_find(const struct rsv_index *x, unsigned long start,
		    unsigned long end, unsigned int kinds, bool init)
{
	unsigned int lo = 0, hi = x->n;
	unsigned long from;

	/* the first site that can reach @start */
	from = start > RSV_MAX_LEN ? start - RSV_MAX_LEN : 0;
	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (x->site[mid].addr < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < x->n && x->site[lo].addr < end; lo++) {
		const struct rsv_site *r = &x->site[lo];

		if (r->addr + r->len > start && (kinds & BIT(r->kind)) &&
		    (init || !r->init))
			return r->kind;
	}
	return -1;
}

/*
 * The index covering @addr, or NULL when there is none yet; *@init: may
 * its init sites still be there?  Called under kprobe_mutex.
 */
static struct rsv_index *rsv_get(unsigned long addr, bool *init)
{
	struct rsv_index *x;
	struct module *mod;

	lockdep_assert_held(&kprobe_mutex);
	preempt_disable();
	mod = __module_text_address(addr);
	*init = mod && mod->state == MODULE_STATE_COMING;
	preempt_enable();
	if (!mod) {
		if (system_state < SYSTEM_RUNNING)
			return NULL;
		if (!rsv_core)
			rsv_core = rsv_build(NULL);
		return rsv_core;
	}
	list_for_each_entry(x, &rsv_modules, node) {
		if (x->mod == mod)
			return x;
	}
	return NULL;
}

#ifdef CONFIG_MODULES
/* The tables of a module as it comes; called under kprobe_mutex. */
static void rsv_add_module(struct module *mod)
{
	struct rsv_index *x = rsv_build(mod);

	if (x)
		list_add(&x->node, &rsv_modules);
}

static void rsv_remove_module(struct module *mod)
{
	struct rsv_index *x;

	list_for_each_entry(x, &rsv_modules, node) {
		if (x->mod == mod) {
			list_del(&x->node);
			kvfree(x);
			return;
		}
	}
}
#endif

/**
 * kprobe_text_rewritten() - may the kernel rewrite text in a range?
 * @start: first byte
 * @end: one past the last byte
 *
 * For the backend, under kprobe_mutex: does a jump label or a static call
 * site overlap [@start, @end)?  The range lies in one function.
 *
 * Return: true if one does.
 */
bool kprobe_text_rewritten(unsigned long start, unsigned long end)
{
	struct rsv_index *x;
	bool init, busy;

	x = rsv_get(start, &init);
	if (x)
		return rsv_find(x, start, end,
				BIT(RSV_JUMP) | BIT(RSV_CALL), init) >= 0;
	jump_label_lock();
	busy = jump_label_text_reserved((void *)start, (void *)(end - 1));
	jump_label_unlock();
	return busy ||
	       static_call_text_reserved((void *)start, (void *)(end - 1));
}

/*
 * Is @addr a jump label or static call site (-EBUSY), or a BUG trap
 * (-EINVAL)?  An ftrace call site is none of them.
 */
static int text_reserved(unsigned long addr)
{
	struct rsv_index *x;
	int ret = 0;
	bool init;

	if (ftrace_site_of(addr) == addr)
		return 0;
	x = rsv_get(addr, &init);
	if (x) {
		switch (rsv_find(x, addr, addr + 1, BIT(RSV_JUMP) |
				 BIT(RSV_CALL) | BIT(RSV_BUG), init)) {
		case RSV_JUMP:
		case RSV_CALL:
			return -EBUSY;
		case RSV_BUG:
			return -EINVAL;
		}
		return 0;
	}
	if (kprobe_text_rewritten(addr, addr + 1))
		ret = -EBUSY;
	else if (find_bug(addr))
		ret = -EINVAL;
	return ret;
}

/*
 * May @addr carry a probe?  Called under kprobe_mutex, so a module seen
 * alive here cannot finish unloading before our module notifier has seen
 * the sites we create.
 */
static int check_text(unsigned long addr)
{
	struct kprobe_func f;
	struct module *mod;
	int ret = 0;

	preempt_disable();
	mod = __module_text_address(addr);
	if (mod) {
		if (mod->state == MODULE_STATE_GOING ||
		    mod->state == MODULE_STATE_UNFORMED) {
			ret = -ENOENT;
		} else if (within_module_init(addr, mod) &&
			   mod->state != MODULE_STATE_COMING) {
			/* init text of a running module: about to be freed */
			ret = -ENOENT;
		}
	} else if (!core_kernel_text(addr)) {
		ret = -EINVAL;
	}
	preempt_enable();
	if (ret) {
		pr_warn("%pS is not kernel or module text that can be probed\n",
			(void *)addr);
		return ret;
	}

	if (within_kprobe_blacklist(addr)) {
		pr_warn("%pS is on the blacklist\n", (void *)addr);
		return -EINVAL;
	}
	if (in_preamble(addr)) {
		pr_warn("%pS is a function's preamble, not its code\n", (void *)addr);
		return -EINVAL;
	}

	ret = text_reserved(addr);
	if (ret) {
		pr_warn("%pS is patched by the kernel (jump label, static call or BUG)\n",
			(void *)addr);
		return ret;
	}

	if (kprobe_func_find(addr, &f, false))
		return -EINVAL;
	if (!arch_kprobe_on_insn_boundary(addr, addr - f.start)) {
		pr_warn_ratelimited("%pS is not on an instruction boundary\n",
				    (void *)addr);
		return -EILSEQ;
	}
	return 0;
}

/* Return probes (section 10) hook into unregistration. */
static bool kprobe_is_return(struct kprobe *p);
static void kretprobe_detach(struct kprobe *p);
static void kretprobe_release(struct kprobe *p);

/* ------------------------------------------------------------------ */
/* 7. Registration and unregistration                                   */
/* ------------------------------------------------------------------ */

static bool site_holds(struct kprobe_site *s, struct kprobe *p,
		       struct list_head *pending)
{
	struct kprobe *q;

	list_for_each_entry(q, &s->probes, list) {
		if (q == p)
			return true;
	}
	if (pending) {
		list_for_each_entry(q, pending, list) {
			if (q == p)
				return true;
		}
	}
	return false;
}

/*
 * The site @p is registered at, or NULL.  Never dereferences @p->site: an
 * unregistered struct may hold anything there.
 */
static struct kprobe_site *probe_site(struct kprobe *p)
{
	struct kprobe_site *s;

	lockdep_assert_held(&kprobe_mutex);
	if (!p->addr)
		return NULL;
	s = kprobe_site_lookup((unsigned long)p->addr);
	if (s && site_holds(s, p, NULL))
		return s;
	list_for_each_entry(s, &kprobe_gone_sites, batch) {
		if (s->addr == p->addr && site_holds(s, p, NULL))
			return s;
	}
	return NULL;
}

/*
 * One batch of registrations.  Probes are first validated and attached to
 * a per-site pending list (nothing is visible to the hit path yet); if all
 * succeed they are published on their sites' lists and the sites that
 * need it are armed in one pass.
 */
/* Pending probes of a site live on a list whose head sits in a side table. */
struct pending_site {
	struct kprobe_site	*site;
	struct list_head	probes;
	bool			created;
};

static struct pending_site *pending_find(struct pending_site *ps, int n,
					 struct kprobe_site *s)
{
	int i;

	for (i = n - 1; i >= 0; i--) {
		if (ps[i].site == s)
			return &ps[i];
	}
	return NULL;
}

static struct kprobe_site *site_create(kprobe_opcode_t *addr, bool ftrace,
				       kprobe_opcode_t *opcode)
{
	struct kprobe_site *s;
	int ret;

	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return ERR_PTR(-ENOMEM);
	INIT_LIST_HEAD(&s->probes);
	INIT_LIST_HEAD(&s->batch);
	INIT_LIST_HEAD(&s->opt);
	s->addr = addr;
	if (ftrace)
		s->flags |= KSITE_FTRACE;
	ret = arch_kprobe_site_prepare(s, opcode);
	if (ret) {
		if (ret == -EINVAL)
			pr_warn("cannot probe the instruction at %pS\n", addr);
		else if (ret == -EILSEQ)
			pr_warn("cannot decode the instruction at %pS\n", addr);
		kfree(s);
		return ERR_PTR(ret);
	}
	hlist_add_head_rcu(&s->node, kprobe_site_bucket((unsigned long)addr));
	return s;
}

static bool is_ftrace_site(unsigned long addr)
{
	return IS_ENABLED(CONFIG_KPROBES_ON_FTRACE) &&
	       ftrace_site_of(addr) == addr;
}

/* Validate @p and attach it to a pending entry in @ps[0..*n). */
static int prepare_one(struct kprobe *p, struct pending_site *ps, int *n)
{
	struct pending_site *pend;
	struct kprobe_site *s;
	kprobe_opcode_t *addr, opcode = 0;
	bool on_entry = false, ftrace, created = false;
	int ret;

	if (probe_site(p)) {
		pr_warn("%pS: this struct kprobe is already registered\n",
			p->addr);
		return -EINVAL;
	}

	addr = resolve_addr(p->addr, p->symbol_name, p->offset, &on_entry);
	if (IS_ERR(addr))
		return PTR_ERR(addr);

	ret = check_text((unsigned long)addr);
	if (ret)
		return ret;

	ftrace = is_ftrace_site((unsigned long)addr);
	if (!ftrace && ftrace_site_of((unsigned long)addr)) {
		/* Inside ftrace's patch site but not at its start. */
		return -EILSEQ;
	}

	s = kprobe_site_lookup((unsigned long)addr);
	pend = s ? pending_find(ps, *n, s) : NULL;
	if (s && (site_holds(s, p, pend ? &pend->probes : NULL)))
		return -EINVAL;
	if (!s) {
		/* No jump may cover the new site's text: it is read next. */
		if (!ftrace)
			opt_neighbours((unsigned long)addr, true);
		s = site_create(addr, ftrace, &opcode);
		if (IS_ERR(s)) {
			/* Refused: the neighbours may have their jumps back. */
			if (!ftrace)
				opt_neighbours((unsigned long)addr, false);
			return PTR_ERR(s);
		}
		created = true;
	} else {
		struct kprobe *first = kprobe_site_first(s);

		if (first == &kprobe_busy && pend)
			first = list_first_entry_or_null(&pend->probes,
							 struct kprobe, list);
		opcode = first && first != &kprobe_busy ? first->opcode : 0;
	}
	if (!pend) {
		pend = &ps[(*n)++];
		pend->site = s;
		pend->created = created;
		INIT_LIST_HEAD(&pend->probes);
	}

	p->addr = addr;
	p->opcode = opcode;
	p->nmissed = 0;
	p->flags &= KPROBE_FLAG_DISABLED;
	if (ftrace)
		p->flags |= KPROBE_FLAG_FTRACE;
	if (on_entry)
		p->flags |= KPROBE_FLAG_ON_FUNC_ENTRY;
	p->site = s;
	list_add_tail(&p->list, &pend->probes);
	return 0;
}

/* Drop the sites created for a batch that failed; nothing was published. */
static void pending_undo(struct pending_site *ps, int n)
{
	LIST_HEAD(dead);
	int i;

	for (i = 0; i < n; i++) {
		struct kprobe *p, *tmp;

		list_for_each_entry_safe(p, tmp, &ps[i].probes, list) {
			list_del_init(&p->list);
			p->site = NULL;
		}
		if (ps[i].created) {
			hlist_del_rcu(&ps[i].site->node);
			list_add_tail(&ps[i].site->batch, &dead);
			opt_neighbours((unsigned long)ps[i].site->addr, false);
		}
	}
	if (!list_empty(&dead)) {
		/* The sites were never armed, but lookups may have seen them. */
		synchronize_rcu();
		sites_release(&dead);
	}
}

/**
 * register_kprobes() - register an array of kprobes, all or nothing
 * @kps: the probes
 * @num: how many
 *
 * Either every probe is registered and armed (unless disabled), or none is,
 * the structs are left as they were, and the first error is returned.  All
 * sites are armed in one text-patching pass.
 *
 * Return: 0 or a negative errno.
 */
int register_kprobes(struct kprobe **kps, int num)
{
	struct pending_site *ps;
	kprobe_opcode_t **orig;
	struct kprobe_site *s;
	LIST_HEAD(batch);
	int i, n = 0, ret = 0;

	if (num <= 0 || !kps)
		return -EINVAL;
	if (!kprobes_initialized)
		return -EAGAIN;

	ps = kvmalloc_array(num, sizeof(*ps), GFP_KERNEL);
	orig = kvmalloc_array(num, sizeof(*orig), GFP_KERNEL);
	if (!ps || !orig) {
		ret = -ENOMEM;
		goto free;
	}

	mutex_lock(&kprobe_mutex);
	for (i = 0; i < num && !ret; i++) {
		if (!kps[i]) {
			ret = -EINVAL;
			break;
		}
		orig[i] = kps[i]->addr;
		ret = prepare_one(kps[i], ps, &n);
	}
	if (ret) {
		pending_undo(ps, n);
		while (i-- > 0)
			if (kps[i])
				kps[i]->addr = orig[i];
		goto unlock;
	}

	/* Publish: from here on handlers run as soon as a site is armed. */
	for (i = 0; i < n; i++) {
		struct kprobe *p, *tmp;

		list_for_each_entry_safe(p, tmp, &ps[i].probes, list) {
			list_del(&p->list);
			list_add_tail_rcu(&p->list, &ps[i].site->probes);
		}
		list_add_tail(&ps[i].site->batch, &batch);
	}
	sites_update(&batch);

	/* A site that would not arm (ftrace refused it) fails the batch. */
	list_for_each_entry(s, &batch, batch) {
		if (site_want_armed(s) && !site_armed_as(s, true))
			ret = -EBUSY;
	}
	while (!list_empty(&batch))
		list_del_init(batch.next);
unlock:
	mutex_unlock(&kprobe_mutex);
	if (ret && n) {
		/* Published but not armable: take the whole batch back. */
		if (ret == -EBUSY) {
			unregister_kprobes(kps, num);
			for (i = 0; i < num; i++)
				kps[i]->addr = orig[i];
		}
	}
free:
	kvfree(orig);
	kvfree(ps);
	return ret;
}
EXPORT_SYMBOL_GPL(register_kprobes);

/**
 * register_kprobe() - register one kprobe
 * @p: the probe: addr or symbol_name (+ offset), and handlers
 *
 * Return: 0, or -EINVAL (bad spec, not text, blacklisted, already
 * registered, unprobeable instruction), -ENOENT (no such symbol, or text
 * going away), -EILSEQ (not on an instruction boundary), -EBUSY (text
 * owned by another patching mechanism), -ENOMEM.
 */
int register_kprobe(struct kprobe *p)
{
	return register_kprobes(&p, 1);
}
EXPORT_SYMBOL_GPL(register_kprobe);

/**
 * unregister_kprobes() - unregister an array of kprobes
 * @kps: the probes
 * @num: how many
 *
 * Probes that are not registered get their addr cleared and are otherwise
 * ignored.  When this returns, no handler of these probes is running or
 * will run, and the structs may be freed.  One text-patching pass and one
 * grace period cover the whole array.
 */
void unregister_kprobes(struct kprobe **kps, int num)
{
	struct kprobe_site *s, *tmp;
	bool grace = false;
	LIST_HEAD(batch);
	LIST_HEAD(dead);
	int i;

	if (num <= 0 || !kps)
		return;

	mutex_lock(&kprobe_mutex);
	for (i = 0; i < num; i++) {
		struct kprobe *p = kps[i];

		if (!p)
			continue;
		s = probe_site(p);
		if (!s) {
			p->addr = NULL;
			continue;
		}
		list_del_rcu(&p->list);
		if (READ_ONCE(s->solo) == p)
			WRITE_ONCE(s->solo, NULL);
		WRITE_ONCE(s->duo, NULL);
		if (kprobe_is_return(p))
			kretprobe_detach(p);
		/* Handlers that may run with interrupts on: see below. */
		if (kprobe_is_return(p) ||
		    (s->flags & (KSITE_FTRACE | KSITE_OPT_JUMPED)))
			grace = true;
		if (s->flags & KSITE_GONE) {
			/* unarmed and off the hash already; s->batch is on the gone list */
			if (list_empty(&s->probes))
				list_move_tail(&s->batch, &dead);
		} else if (list_empty(&s->batch)) {
			list_add_tail(&s->batch, &batch);
		}
	}

	/* Disarm what has nothing enabled left; drop what has no probe left. */
	sites_update(&batch);
	list_for_each_entry_safe(s, tmp, &batch, batch) {
		list_del_init(&s->batch);
		if (list_empty(&s->probes) && !(s->flags & KSITE_ARMED)) {
			hlist_del_rcu(&s->node);
			list_add_tail(&s->batch, &dead);
		}
	}
	/* Sites that had these inside their regions may qualify again. */
	list_for_each_entry(s, &dead, batch)
		opt_neighbours((unsigned long)s->addr, false);

	/*
	 * Wait until no handler of these probes is running: none can start
	 * now that they are unlinked.
	 *
	 * Breakpoint handlers (pre and post) run with interrupts off from the
	 * trap to the end of the hit, and so does anything an NMI runs.  A CPU
	 * takes an IPI only with interrupts on, so once every CPU has run one
	 * that was sent after the unlinking, none is inside such a handler
	 * any more.  That costs microseconds, where a grace period costs
	 * milliseconds.
	 *
	 * Ftrace and optimized handlers, and return handlers, run with
	 * interrupts as they were and preemption off: for them it takes an
	 * RCU grace period.  A site whose jump was ever written may have run
	 * optimized handlers, so it counts as one of those (a site the
	 * optimizer only prepared has run none).  The grace period
	 * is an expedited one: the caller is waiting, typically a tool tearing
	 * down hundreds of probes one call at a time, and a normal one takes
	 * several ticks.  (rcupdate.rcu_normal turns it into a normal one on
	 * systems that cannot take the IPIs.)
	 *
	 * Either way the dead sites themselves (hash nodes that other sites'
	 * lookups may walk through, slots a boosted copy may run in) wait for
	 * a grace period too, but off the caller's path after the IPIs.
	 */
	if (grace)
		synchronize_rcu_expedited();
	else
		on_each_cpu(kprobe_sync_nop, NULL, 1);

	for (i = 0; i < num; i++) {
		if (kps[i] && kps[i]->addr) {
			kps[i]->site = NULL;
			INIT_LIST_HEAD(&kps[i]->list);
			if (kprobe_is_return(kps[i]))
				kretprobe_release(kps[i]);
		}
	}
	if (grace)
		sites_release(&dead);
	else
		sites_release_later(&dead);
	mutex_unlock(&kprobe_mutex);
}
EXPORT_SYMBOL_GPL(unregister_kprobes);

/**
 * unregister_kprobe() - unregister one kprobe
 * @p: the probe
 */
void unregister_kprobe(struct kprobe *p)
{
	unregister_kprobes(&p, 1);
}
EXPORT_SYMBOL_GPL(unregister_kprobe);

/* ------------------------------------------------------------------ */
/* 8. Enable / disable                                                  */
/* ------------------------------------------------------------------ */

static int set_disabled(struct kprobe *p, bool disable)
{
	struct kprobe_site *s;
	LIST_HEAD(batch);
	int ret = 0;

	mutex_lock(&kprobe_mutex);
	s = probe_site(p);
	if (!s) {
		ret = -EINVAL;
		goto out;
	}
	if (!disable && (p->flags & KPROBE_FLAG_GONE)) {
		ret = -EINVAL;
		goto out;
	}
	if (disable)
		p->flags |= KPROBE_FLAG_DISABLED;
	else
		p->flags &= ~KPROBE_FLAG_DISABLED;
	if (s->flags & KSITE_GONE)
		goto out;
	list_add_tail(&s->batch, &batch);
	sites_update(&batch);
	list_del_init(&s->batch);
	if (!disable && site_want_armed(s) && !site_armed_as(s, true)) {
		p->flags |= KPROBE_FLAG_DISABLED;
		ret = -EBUSY;
	}
out:
	mutex_unlock(&kprobe_mutex);
	return ret;
}

/**
 * disable_kprobe() - stop a registered probe from firing
 * @kp: the probe
 *
 * Return: 0, or -EINVAL if @kp is not registered.
 */
int disable_kprobe(struct kprobe *kp)
{
	return set_disabled(kp, true);
}
EXPORT_SYMBOL_GPL(disable_kprobe);

/**
 * enable_kprobe() - let a disabled probe fire again
 * @kp: the probe
 *
 * Return: 0, or -EINVAL if @kp is not registered or its text is gone.
 */
int enable_kprobe(struct kprobe *kp)
{
	return set_disabled(kp, false);
}
EXPORT_SYMBOL_GPL(enable_kprobe);

/* Apply kprobes_all_disarmed to every site, in one batch. */
static void all_sites_update(void)
{
	struct kprobe_site *s;
	LIST_HEAD(batch);
	int i;

	lockdep_assert_held(&kprobe_mutex);
	for (i = 0; i < ARRAY_SIZE(kprobe_site_hash); i++) {
		hlist_for_each_entry(s, &kprobe_site_hash[i], node)
			list_add_tail(&s->batch, &batch);
	}
	sites_update(&batch);
	while (!list_empty(&batch))
		list_del_init(batch.next);
}

/* ------------------------------------------------------------------ */
/* 9. Text that goes away                                               */
/* ------------------------------------------------------------------ */

/*
 * The text under @s is being freed: forget the breakpoint without touching
 * the text, take the site out of the hash (the address may be reused by
 * new text) and mark its probes gone.  Ftrace sites were unhooked before
 * (kill_sites_in()), so that ftrace keeps no filter entry for a dead
 * address.
 */
static void site_kill(struct kprobe_site *s)
{
	struct kprobe *p;

	opt_forget(s);
	s->flags &= ~KSITE_ARMED;
	WRITE_ONCE(s->fops, NULL);
	s->flags |= KSITE_GONE;
	list_for_each_entry(p, &s->probes, list)
		p->flags |= KPROBE_FLAG_GONE;
	hlist_del_rcu(&s->node);
	list_add_tail(&s->batch, &kprobe_gone_sites);
}

static void kill_sites_in(bool (*doomed)(unsigned long addr, void *data),
			  void *data)
{
	struct kprobe_site *s;
	struct hlist_node *tmp;
	LIST_HEAD(ftrace);
	int i;

	lockdep_assert_held(&kprobe_mutex);
	/*
	 * Ftrace sites leave its filter first, all in one update, and so do
	 * the addresses kept there for later.
	 */
	for (i = 0; i < ARRAY_SIZE(kprobe_site_hash); i++) {
		hlist_for_each_entry(s, &kprobe_site_hash[i], node) {
			if ((s->flags & KSITE_FTRACE) && (s->flags & KSITE_ARMED) &&
			    doomed((unsigned long)s->addr, data))
				list_add_tail(&s->batch, &ftrace);
		}
	}
	sites_set_armed(&ftrace, false);
	while (!list_empty(&ftrace))
		list_del_init(ftrace.next);
	ftrace_lazy_flush();

	for (i = 0; i < ARRAY_SIZE(kprobe_site_hash); i++) {
		hlist_for_each_entry_safe(s, tmp, &kprobe_site_hash[i], node) {
			if (doomed((unsigned long)s->addr, data))
				site_kill(s);
		}
	}
}

static bool in_kernel_init(unsigned long addr, void *unused)
{
	return is_kernel_inittext(addr);
}

/**
 * kprobe_free_init_mem() - the kernel's __init text is about to be freed
 */
void kprobe_free_init_mem(void)
{
	mutex_lock(&kprobe_mutex);
	kill_sites_in(in_kernel_init, NULL);
	mutex_unlock(&kprobe_mutex);
}

#ifdef CONFIG_MODULES
static bool in_module_init(unsigned long addr, void *mod)
{
	return within_module_init(addr, mod);
}

static bool in_module(unsigned long addr, void *mod)
{
	return within_module(addr, mod);
}

static int kprobes_module_callback(struct notifier_block *nb,
				   unsigned long state, void *data)
{
	struct module *mod = data;

	mutex_lock(&kprobe_mutex);
	switch (state) {
	case MODULE_STATE_COMING:
		blacklist_add_module(mod);
		rsv_add_module(mod);
		break;
	case MODULE_STATE_LIVE:
		/* init done: its __init text is freed next */
		kill_sites_in(in_module_init, mod);
		break;
	case MODULE_STATE_GOING:
		kill_sites_in(in_module, mod);
		blacklist_remove_module(mod);
		rsv_remove_module(mod);
		modsyms_forget(mod);
		break;
	}
	mutex_unlock(&kprobe_mutex);
	return NOTIFY_DONE;
}

static struct notifier_block kprobes_module_nb = {
	.notifier_call = kprobes_module_callback,
	/* after ftrace's own notifier has set up the module's records */
	.priority = 0,
};
#endif

/* ------------------------------------------------------------------ */
/* 10. Return probes                                                    */
/* ------------------------------------------------------------------ */

#ifdef CONFIG_KRETPROBES

/*
 * A kretprobe is a kprobe on the function's entry whose pre_handler,
 * kretprobe_enter(), takes an instance from the kretprobe's pool, lets the
 * backend redirect the call's return to the trampoline and pushes the
 * instance on the task's list of pending returns.  The trampoline comes
 * back to kretprobe_trampoline_handler(), which pops the instances of the
 * returning frame, runs the handlers and gives the instances back.
 *
 * Pools.  Instances live in chunks: one allocation holding a bitmap and
 * the instances, a set bit meaning "out".  The hit path claims a clear bit
 * with an atomic test-and-set (starting at a word chosen by CPU so that two
 * CPUs rarely meet on one word), and releases it with an atomic clear: no
 * lock, no allocation, safe in NMI.  The first chunk holds the floor
 * (maxactive, or a default) and lives as long as the pool.  When more than
 * half of the instances are out, the hit path asks for more (an irq_work,
 * which queues the pool's work item), and the work item adds a chunk as
 * big as the pool so far, with GFP_KERNEL, up to pool->limit.  When fewer
 * than a quarter are out, the work item (a second later) frees the added
 * chunks that are wholly idle: it claims every bit of such a chunk at once,
 * so that no CPU can take from it, unlinks it and frees it after a grace
 * period.  A pool therefore holds at most
 * max(floor, min(KRETPROBE_POOL_GROW_MAX, KRETPROBE_POOL_BYTES / stride))
 * instances, and shrinks back to its floor when the calls are over.
 *
 * In front of the chunks, each CPU keeps one instance in pool->cache: the
 * last one it gave back, still marked out in its chunk (but no longer
 * counted in refs).  Its next call takes it with one exchange instead of a
 * bitmap search.  The exchanges are locked ones, because a CPU that finds
 * the chunks exhausted takes from the other CPUs' caches before it counts
 * a miss, and the work item empties the caches before it trims.  Once the
 * kretprobe is detached, instances go straight back to their chunks, and
 * kretprobe_release() empties the caches after the grace period: a give
 * that still saw pool->rp set ran with preemption off, inside the grace
 * period, and the registration's reference kept refs above zero.
 *
 * Lifetime.  pool->refs counts the instances out, plus one while the
 * kretprobe is registered.  Unregistering clears pool->rp before the grace
 * period that unregister_kprobes() waits for anyway, so when it returns no
 * return handler is running and none will start; returns still in flight
 * go back to their callers without one.  Whoever drops refs to zero (the
 * unregistering task, or the last return, possibly in NMI) queues
 * pool->free_kick, which hands the pool to a work item that frees it.
 * Nothing touches a pool after dropping its reference.
 */
struct kretprobe_chunk {
	struct list_head	node;	/* on pool->chunks, RCU */
	struct kretprobe_pool	*pool;
	unsigned int		nr;	/* instances */
	unsigned int		words;	/* longs in @map */
	char			*objs;	/* @nr instances, pool->stride apart */
	struct rcu_head		rcu;
	unsigned long		map[];	/* set bit: out, or past @nr */
};

/* pool->requests */
enum { KRP_GROW, KRP_TRIM };

#define KRP_TRIM_DELAY		HZ

static notrace int kretprobe_enter(struct kprobe *p, struct pt_regs *regs);

static bool kprobe_is_return(struct kprobe *p)
{
	return p->pre_handler == kretprobe_enter;
}

static struct kretprobe_instance *chunk_obj(struct kretprobe_chunk *c,
					    unsigned int i)
{
	return (void *)(c->objs + (size_t)i * c->pool->stride);
}

/* The bits of word @w that stand for no instance (past the end). */
static unsigned long chunk_spare_bits(struct kretprobe_chunk *c, unsigned int w)
{
	unsigned int used = c->nr - w * BITS_PER_LONG;

	return used >= BITS_PER_LONG ? 0 : ~0UL << used;
}

/* A chunk of @nr instances for @pool, whose owner is @rp. */
static struct kretprobe_chunk *chunk_new(struct kretprobe_pool *pool,
					 struct kretprobe *rp,
					 unsigned int nr, gfp_t gfp)
{
	unsigned int words = BITS_TO_LONGS(nr), i;
	struct kretprobe_chunk *c;
	size_t head;

	head = ALIGN(sizeof(*c) + words * sizeof(long), L1_CACHE_BYTES);
	c = kvzalloc(head + (size_t)nr * pool->stride, gfp);
	if (!c)
		return NULL;
	c->pool = pool;
	c->nr = nr;
	c->words = words;
	c->objs = (char *)c + head;
	c->map[words - 1] = chunk_spare_bits(c, words - 1);
	for (i = 0; i < nr; i++) {
		struct kretprobe_instance *ri = chunk_obj(c, i);

		ri->rp = rp;
		ri->pool = pool;
		ri->chunk = c;
		ri->index = i;
	}
	return c;
}

/* Claim every instance of an idle chunk at once; false if one is out. */
static bool chunk_seize(struct kretprobe_chunk *c)
{
	unsigned int w;

	for (w = 0; w < c->words; w++) {
		unsigned long idle = chunk_spare_bits(c, w);

		if (cmpxchg(&c->map[w], idle, ~0UL) != idle)
			break;
	}
	if (w == c->words)
		return true;
	while (w-- > 0)
		WRITE_ONCE(c->map[w], chunk_spare_bits(c, w));
	return false;
}

static void pool_kick(struct kretprobe_pool *pool, int what)
{
	if (!test_and_set_bit(what, &pool->requests))
		irq_work_queue(&pool->kick);
}

NOKPROBE_SYMBOL(pool_kick);

/* From another CPU's cache: the chunks are exhausted. */
static struct kretprobe_instance *pool_steal(struct kretprobe_pool *pool)
{
	struct kretprobe_instance *ri;
	unsigned int cpu;

	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		if (!cpu_possible(cpu))
			continue;
		ri = xchg(per_cpu_ptr(pool->cache, cpu), NULL);
		if (ri) {
			atomic_inc(&pool->refs);
			return ri;
		}
	}
	return NULL;
}

NOKPROBE_SYMBOL(pool_steal);

/* An instance from the chunks, or NULL when every one is out. */
static struct kretprobe_instance *pool_take_slow(struct kretprobe_pool *pool)
{
	unsigned int cpu = raw_smp_processor_id(), nr, out;
	struct kretprobe_chunk *c;

	list_for_each_entry_rcu(c, &pool->chunks, node) {
		unsigned int w = c->words > 1 ? cpu % c->words : 0;
		unsigned int i;

		for (i = 0; i < c->words; i++) {
			unsigned long v;

			while ((v = READ_ONCE(c->map[w])) != ~0UL) {
				unsigned int bit = w * BITS_PER_LONG + ffz(v);

				if (test_and_set_bit_lock(bit, c->map))
					continue;
				out = atomic_inc_return(&pool->refs) - 1;
				nr = READ_ONCE(pool->nr);
				if (out * 2 > nr && nr < pool->limit)
					pool_kick(pool, KRP_GROW);
				return chunk_obj(c, bit);
			}
			if (++w == c->words)
				w = 0;
		}
	}
	if (READ_ONCE(pool->nr) < pool->limit)
		pool_kick(pool, KRP_GROW);
	return pool_steal(pool);
}

NOKPROBE_SYMBOL(pool_take_slow);

/*
 * Hit path, preemption off: this CPU's cached instance, or NULL (then
 * pool_take_slow()).
 */
static nokprobe_inline struct kretprobe_instance *
pool_take_cached(struct kretprobe_pool *pool)
{
	struct kretprobe_instance *ri = xchg(this_cpu_ptr(pool->cache), NULL);

	if (ri)
		atomic_inc(&pool->refs);
	return ri;
}

/* Give @ri back to its chunk.  The pool may be freed as soon as this returns. */
static void pool_give_slow(struct kretprobe_instance *ri)
{
	struct kretprobe_chunk *c = ri->chunk;
	struct kretprobe_pool *pool = c->pool;
	/* Out once this one is back: less ours and the registration's. */
	int out = atomic_read(&pool->refs) - 2;
	unsigned int nr = READ_ONCE(pool->nr);

	clear_bit_unlock(ri->index, c->map);
	if (nr > pool->floor && out >= 0 && out * 4 < nr && READ_ONCE(pool->rp))
		pool_kick(pool, KRP_TRIM);
	/* The last access to *pool unless we drop the last reference. */
	if (atomic_dec_and_test(&pool->refs))
		irq_work_queue(&pool->free_kick);
}

NOKPROBE_SYMBOL(pool_give_slow);

/* Give @ri back, to this CPU's cache if it is empty.  Preemption off. */
static nokprobe_inline void pool_give(struct kretprobe_instance *ri)
{
	struct kretprobe_pool *pool = ri->pool;

	if (likely(READ_ONCE(pool->rp)) &&
	    !cmpxchg(this_cpu_ptr(pool->cache), NULL, ri)) {
		/* Not the last reference: the registration holds one. */
		atomic_dec(&pool->refs);
		return;
	}
	pool_give_slow(ri);
}

/* Put the instances of the per-CPU caches back into their chunks. */
static void pool_drain(struct kretprobe_pool *pool)
{
	struct kretprobe_instance *ri;
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		ri = xchg(per_cpu_ptr(pool->cache, cpu), NULL);
		if (ri)
			clear_bit_unlock(ri->index, ri->chunk->map);
	}
}

static void pool_kick_fn(struct irq_work *iw)
{
	struct kretprobe_pool *pool = container_of(iw, struct kretprobe_pool, kick);

	if (test_bit(KRP_GROW, &pool->requests))
		mod_delayed_work(system_highpri_wq, &pool->work, 0);
	else
		queue_delayed_work(system_highpri_wq, &pool->work, KRP_TRIM_DELAY);
}

/* How many instances are out; -1 once the pool is unregistered and idle. */
static int pool_out(struct kretprobe_pool *pool)
{
	return atomic_read(&pool->refs) - 1;
}

static void pool_grow(struct kretprobe_pool *pool)
{
	unsigned int nr = pool->nr;
	struct kretprobe *rp;

	while ((rp = READ_ONCE(pool->rp)) && nr < pool->limit &&
	       pool_out(pool) * 2 >= (int)nr) {
		struct kretprobe_chunk *c;

		c = chunk_new(pool, rp, min(nr, pool->limit - nr),
			      GFP_KERNEL | __GFP_NOWARN);
		if (!c)
			break;
		list_add_tail_rcu(&c->node, &pool->chunks);
		nr += c->nr;
		WRITE_ONCE(pool->nr, nr);
	}
}

static void pool_trim(struct kretprobe_pool *pool)
{
	struct kretprobe_chunk *c, *tmp, *base;

	/* A cached instance would keep its chunk from being seized. */
	pool_drain(pool);
	base = list_first_entry(&pool->chunks, struct kretprobe_chunk, node);
	list_for_each_entry_safe_reverse(c, tmp, &pool->chunks, node) {
		if (c == base || pool_out(pool) * 4 >= (int)pool->nr)
			break;
		if (!chunk_seize(c))
			continue;
		list_del_rcu(&c->node);
		WRITE_ONCE(pool->nr, pool->nr - c->nr);
		/* Readers: the hit path, and unwinders of other tasks. */
		kvfree_rcu(c, rcu);
	}
}

/* Grows and trims; one run at a time per pool (a work item never reenters). */
static void pool_work_fn(struct work_struct *w)
{
	struct kretprobe_pool *pool =
		container_of(to_delayed_work(w), struct kretprobe_pool, work);

	if (test_and_clear_bit(KRP_GROW, &pool->requests))
		pool_grow(pool);
	if (test_and_clear_bit(KRP_TRIM, &pool->requests))
		pool_trim(pool);
}

static void pool_free_fn(struct work_struct *w)
{
	struct kretprobe_pool *pool =
		container_of(w, struct kretprobe_pool, free_work);
	struct kretprobe_chunk *c, *tmp;

	/* Nobody can kick any more; let what is in flight finish. */
	irq_work_sync(&pool->kick);
	irq_work_sync(&pool->free_kick);
	cancel_delayed_work_sync(&pool->work);
	list_for_each_entry_safe(c, tmp, &pool->chunks, node)
		kvfree_rcu(c, rcu);
	free_percpu(pool->cache);
	kfree(pool);
}

static void pool_free_kick_fn(struct irq_work *iw)
{
	struct kretprobe_pool *pool =
		container_of(iw, struct kretprobe_pool, free_kick);

	queue_work(system_wq, &pool->free_work);
}

static struct kretprobe_pool *pool_new(struct kretprobe *rp)
{
	struct kretprobe_pool *pool;
	struct kretprobe_chunk *c;
	unsigned int floor;

	floor = rp->maxactive;
	pool = kzalloc(sizeof(*pool), GFP_KERNEL);
	if (!pool)
		return NULL;
	pool->cache = alloc_percpu(struct kretprobe_instance *);
	if (!pool->cache) {
		kfree(pool);
		return NULL;
	}
	pool->stride = ALIGN(sizeof(struct kretprobe_instance) + rp->data_size,
			     sizeof(long));
	pool->floor = floor;
	pool->limit = max(floor, min_t(unsigned int, KRETPROBE_POOL_GROW_MAX,
				       KRETPROBE_POOL_BYTES / pool->stride));
	pool->nr = floor;
	atomic_set(&pool->refs, 1);
	INIT_LIST_HEAD(&pool->chunks);
	init_irq_work(&pool->kick, pool_kick_fn);
	init_irq_work(&pool->free_kick, pool_free_kick_fn);
	INIT_DELAYED_WORK(&pool->work, pool_work_fn);
	INIT_WORK(&pool->free_work, pool_free_fn);

	c = chunk_new(pool, rp, floor, GFP_KERNEL);
	if (!c) {
		free_percpu(pool->cache);
		kfree(pool);
		return NULL;
	}
	list_add_tail(&c->node, &pool->chunks);
	pool->rp = rp;
	return pool;
}

/* Unregistering, before the grace period: no return handler after it. */
static void kretprobe_detach(struct kprobe *p)
{
	struct kretprobe *rp = container_of(p, struct kretprobe, kp);

	WRITE_ONCE(rp->pool->rp, NULL);
}

/* Unregistering, after the grace period: let go of the pool. */
static void kretprobe_release(struct kprobe *p)
{
	struct kretprobe *rp = container_of(p, struct kretprobe, kp);
	struct kretprobe_pool *pool = rp->pool;

	rp->pool = NULL;
	pool_drain(pool);
	if (atomic_dec_and_test(&pool->refs))
		irq_work_queue(&pool->free_kick);
}

/* Make the call @ri was taken for return through the trampoline. */
static nokprobe_inline void kretprobe_follow(struct kretprobe_instance *ri,
					     struct pt_regs *regs)
{
	struct llist_head *pending = &current->kretprobe_instances;

	arch_kretprobe_hijack(ri, regs);
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
		pool_give(ri);
	else
		kretprobe_follow(ri, regs);
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
	kretprobe_follow(ri, regs);
	return 0;
}

/* kretprobe_enter() when this CPU's cache is empty: from the chunks. */
static noinline notrace int kretprobe_enter_slow(struct kretprobe *rp,
						 struct pt_regs *regs)
{
	struct kretprobe_instance *ri = pool_take_slow(rp->pool);

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
static notrace int kretprobe_enter(struct kprobe *p, struct pt_regs *regs)
{
	struct kretprobe *rp = container_of(p, struct kretprobe, kp);
	struct kretprobe_instance *ri = pool_take_cached(rp->pool);

	if (unlikely(!ri))
		return kretprobe_enter_slow(rp, regs);
	return kretprobe_start(rp, ri, regs);
}

NOKPROBE_SYMBOL(kretprobe_enter);

static struct kretprobe_instance *to_instance(struct llist_node *node)
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
	struct kretprobe *rp = ri ? READ_ONCE(ri->pool->rp) : NULL;

	pr_emerg("kretprobe BUG!: Processing kretprobe %p @ %pS (stack slot %p, task %s/%d)\n",
		 rp, rp ? rp->kp.addr : NULL, fp, current->comm, current->pid);
	panic("kretprobe: the return address of a probed call was lost\n");
}

NOKPROBE_SYMBOL(kretprobe_bug);

/* Run @ri's return handler, if any; the caller resets current_kprobe. */
static nokprobe_inline void kretprobe_call(struct kretprobe_instance *ri,
					   struct pt_regs *regs)
{
	struct kretprobe *rp = READ_ONCE(ri->pool->rp);

	if (!rp || !rp->handler || kprobe_disabled(&rp->kp))
		return;
	__this_cpu_write(current_kprobe, &rp->kp);
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
	__this_cpu_write(current_kprobe, &kprobe_busy);
	raw_local_irq_save(flags);
	for (mine = pending->first; mine; mine = mine->next) {
		if (to_instance(mine)->fp == fp)
			break;
	}
	for (rest = mine; rest; ) {
		ri = to_instance(rest);
		if (ri->fp != fp)
			break;
		rest = rest->next;
		ret = (unsigned long)ri->ret_addr;
		if (ret != (unsigned long)arch_kretprobe_trampoline)
			break;
		ret = 0;
	}
	if (unlikely(!ret))
		kretprobe_bug(fp, mine ? to_instance(mine) : NULL);
	arch_kretprobe_restore(regs, fp, ret);
	node = pending->first;
	WRITE_ONCE(pending->first, rest);
	raw_local_irq_restore(flags);

	/* [node, rest) is ours alone now; handlers run with interrupts on. */
	for (; node != rest; node = next) {
		next = node->next;
		ri = to_instance(node);
		ours |= node == mine;
		if (ours) {
			kretprobe_call(ri, regs);
			__this_cpu_write(current_kprobe, &kprobe_busy);
		} else {
			struct kretprobe *rp = READ_ONCE(ri->pool->rp);

			if (rp)
				rp->nmissed++;
		}
		pool_give(ri);
	}
	__this_cpu_write(current_kprobe, prev);
	preempt_enable();
	return ret;
}

NOKPROBE_SYMBOL(kretprobe_return_slow);

/**
 * kretprobe_trampoline_handler() - a kretprobe'd call has returned
 * @regs: registers at the return, built by the trampoline
 * @fp: where the backend keeps the hijacked return address
 *
 * Pops the task's instances for the returning frame, puts the real return
 * address back (before any handler runs, so stack traces taken by the
 * handlers show it), runs the return handlers and gives the instances
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
	ri = to_instance(node);
	ret = (unsigned long)ri->ret_addr;
	if (unlikely(ri->fp != fp ||
		     ret == (unsigned long)arch_kretprobe_trampoline ||
		     kprobe_running()))
		goto slow;

	arch_kretprobe_restore(regs, fp, ret);
	WRITE_ONCE(pending->first, node->next);
	kretprobe_call(ri, regs);
	__this_cpu_write(current_kprobe, NULL);
	pool_give(ri);
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
	return addr == (unsigned long)arch_kretprobe_trampoline;
}
EXPORT_SYMBOL_GPL(is_kretprobe_trampoline);
NOKPROBE_SYMBOL(is_kretprobe_trampoline);

/**
 * kretprobe_find_ret_addr() - the real return address behind the trampoline
 * @tsk: the task whose stack is being unwound
 * @fp: the stack slot that holds the trampoline's address
 * @cur: the unwinder's cursor, NULL at the start of an unwind
 *
 * For unwinders, which meet a task's frames innermost first: the search
 * starts after the instance found last time, and falls back to the whole
 * list.  A task other than current must not be running: its list changes
 * under us as it calls and returns, and an instance it gives back may be
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
			struct kretprobe_instance *ri = to_instance(node);
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
 * kprobe_flush_task() - a task is being freed: give back its instances
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
		pool_give(to_instance(node));
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
				p->addr + p->offset);
		return ret;
	}
	addr = p->symbol_name ? kprobe_lookup_name(p->symbol_name, 0) : p->addr;
	if (kretprobe_refused(addr + p->offset)) {
		pr_warn("kretprobe on %pS: it does not return to its caller\n",
			addr + p->offset);
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
		if (probe_site(&rps[i]->kp)) {
			pr_warn("%pS: this struct kretprobe is already registered\n",
				rps[i]->kp.addr);
			ret = -EINVAL;
		}
	}
	mutex_unlock(&kprobe_mutex);
	if (ret)
		return ret;

	kps = kvmalloc_array(num, sizeof(*kps), GFP_KERNEL);
	if (!kps)
		return -ENOMEM;
	for (i = 0; i < num; i++) {
		struct kretprobe *rp = rps[i];

		/* The documented default, left in the struct for all to see. */
		if (rp->maxactive <= 0)
			rp->maxactive = max_t(unsigned int, 10, 2 * num_possible_cpus());
		rp->pool = pool_new(rp);
		if (!rp->pool) {
			ret = -ENOMEM;
			break;
		}
		rp->nmissed = 0;
		rp->kp.pre_handler = kretprobe_enter;
		rp->kp.post_handler = NULL;
		kps[i] = &rp->kp;
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
	struct kprobe **kps;
	int i;

	if (num <= 0 || !rps)
		return;
	kps = kvmalloc_array(num, sizeof(*kps), GFP_KERNEL | __GFP_NOFAIL);
	for (i = 0; i < num; i++)
		kps[i] = rps[i] ? &rps[i]->kp : NULL;
	unregister_kprobes(kps, num);
	kvfree(kps);
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

#else /* !CONFIG_KRETPROBES */

static bool kprobe_is_return(struct kprobe *p)
{
	return false;
}

static void kretprobe_detach(struct kprobe *p) { }
static void kretprobe_release(struct kprobe *p) { }

#endif /* CONFIG_KRETPROBES */

/* ------------------------------------------------------------------ */
/* Miscellaneous API                                                    */
/* ------------------------------------------------------------------ */

/**
 * dump_kprobe() - describe a probe in the kernel log
 * @kp: the probe
 */
void dump_kprobe(struct kprobe *kp)
{
	pr_err("probe at %pS: symbol %s+%u, flags 0x%x, nmissed %lu\n",
	       kp->addr, kp->symbol_name ? kp->symbol_name : "-",
	       kp->offset, kp->flags, kp->nmissed);
}

NOKPROBE_SYMBOL(dump_kprobe);

/* ------------------------------------------------------------------ */
/* 11. debugfs: list, enabled, blacklist                                 */
/* ------------------------------------------------------------------ */

#ifdef CONFIG_DEBUG_FS

static void list_one(struct seq_file *m, struct kprobe_site *s,
		     struct kprobe *p, bool show)
{
	char name[KSYM_NAME_LEN];
	unsigned long size, off;
	const char *sym = NULL;
	char *modname = NULL;

	if (!(s->flags & KSITE_GONE))
		sym = kallsyms_lookup((unsigned long)p->addr, &size, &off,
				      &modname, name);
	if (!sym) {
		sym = p->symbol_name ? p->symbol_name : "(gone)";
		off = p->symbol_name ? p->offset : 0;
	}
	seq_printf(m, "%016lx  %c  %s+0x%lx",
		   show ? (unsigned long)p->addr : 0UL,
		   kprobe_is_return(p) ? 'r' : 'k', sym, off);
	if (modname)
		seq_printf(m, "  [%s]", modname);
	if (kprobe_gone(p))
		seq_puts(m, "  [GONE]");
	else if (p->flags & KPROBE_FLAG_DISABLED)
		seq_puts(m, "  [DISABLED]");
	if (p->flags & KPROBE_FLAG_OPTIMIZED)
		seq_puts(m, "  [OPTIMIZED]");
	if (kprobe_ftrace(p))
		seq_puts(m, "  [FTRACE]");
	seq_putc(m, '\n');
}

static int list_show(struct seq_file *m, void *v)
{
	bool show = kallsyms_show_value(m->file->f_cred);
	struct kprobe_site *s;
	struct kprobe *p;
	int i;

	mutex_lock(&kprobe_mutex);
	for (i = 0; i < ARRAY_SIZE(kprobe_site_hash); i++) {
		hlist_for_each_entry(s, &kprobe_site_hash[i], node) {
			list_for_each_entry(p, &s->probes, list)
				list_one(m, s, p, show);
		}
	}
	list_for_each_entry(s, &kprobe_gone_sites, batch) {
		list_for_each_entry(p, &s->probes, list)
			list_one(m, s, p, show);
	}
	mutex_unlock(&kprobe_mutex);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(list);

static int blacklist_show(struct seq_file *m, void *v)
{
	bool show = kallsyms_show_value(m->file->f_cred);
	struct kprobe_blacklist_entry *e;

	mutex_lock(&kprobe_mutex);
	list_for_each_entry(e, &kprobe_blacklist, list) {
		seq_printf(m, "0x%016lx-0x%016lx\t%ps\n",
			   show ? e->start : 0UL, show ? e->end : 0UL,
			   (void *)e->start);
	}
	mutex_unlock(&kprobe_mutex);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(blacklist);

static ssize_t enabled_read(struct file *file, char __user *ubuf,
			    size_t count, loff_t *ppos)
{
	char buf[3] = { READ_ONCE(kprobes_all_disarmed) ? '0' : '1', '\n', 0 };

	return simple_read_from_buffer(ubuf, count, ppos, buf, 2);
}

static ssize_t enabled_write(struct file *file, const char __user *ubuf,
			     size_t count, loff_t *ppos)
{
	bool on;
	int ret;

	ret = kstrtobool_from_user(ubuf, count, &on);
	if (ret)
		return ret;
	mutex_lock(&kprobe_mutex);
	if (kprobes_all_disarmed == on) {
		kprobes_all_disarmed = !on;
		all_sites_update();
		pr_info("kprobes globally %s\n", on ? "enabled" : "disabled");
	}
	mutex_unlock(&kprobe_mutex);
	return count;
}

static const struct file_operations enabled_fops = {
	.read	= enabled_read,
	.write	= enabled_write,
	.llseek	= default_llseek,
};

static int __init kprobes_debugfs_init(void)
{
	struct dentry *dir = debugfs_create_dir("kprobes", NULL);

	debugfs_create_file("list", 0400, dir, NULL, &list_fops);
	debugfs_create_file("enabled", 0600, dir, NULL, &enabled_fops);
	debugfs_create_file("blacklist", 0400, dir, NULL, &blacklist_fops);
	return 0;
}
late_initcall(kprobes_debugfs_init);

#endif /* CONFIG_DEBUG_FS */

/* ------------------------------------------------------------------ */
/* 12. Initialisation                                                   */
/* ------------------------------------------------------------------ */

static int __init kprobes_init(void)
{
	int i, ret = 0;

	for (i = 0; i < ARRAY_SIZE(kprobe_site_hash); i++)
		INIT_HLIST_HEAD(&kprobe_site_hash[i]);

	mutex_lock(&kprobe_mutex);
	blacklist_init();
	mutex_unlock(&kprobe_mutex);
	ool_sync_init();
	opt_init();

#ifdef CONFIG_MODULES
	ret = register_module_notifier(&kprobes_module_nb);
#endif
	if (!ret)
		kprobes_initialized = true;
	return ret;
}
early_initcall(kprobes_init);
