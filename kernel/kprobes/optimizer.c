// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Jump optimization (CONFIG_OPTPROBES): the optimizer's queue and passes,
 * and the debug.kprobes-optimization sysctl.
 */

#define pr_fmt(fmt) "kprobes: " fmt

#include <linux/kprobes.h>
#include <linux/kprobes_arch.h>
#include <linux/memory.h>
#include <linux/sched.h>
#include <linux/sysctl.h>
#include <linux/workqueue.h>

#include "internal.h"

/*
 * A site qualifies for jump optimization when it is an armed breakpoint
 * site, none of its enabled probes has a post_handler, no other site
 * starts inside its region, the sysctl is on, and the backend accepts its
 * text.  Every change of a site's armed state goes through kprobe_sites_update(),
 * which takes the jump out first where the site no longer qualifies and
 * queues the sites that do; a new site inside an optimized region takes
 * the jump of the site around it out before it is even prepared.
 *
 * The optimizer is a delayed work item, so that a burst of registrations
 * shares one pass: every site queued pushes the pass back by
 * OPTIMIZER_DELAY, up to OPTIMIZER_MAX_DELAY after the first one (the
 * first after a quiet spell goes at once, kprobe_opt_kick()).  While
 * a tool attaches a thousand probes one call at a time the optimizer does
 * not compete with it for kprobe_mutex and the CPU; it takes them all
 * when the tool is done.  A pass takes the whole queue:
 *
 *  1. under kprobe_mutex (dropped every OPTIMIZER_CHUNK sites, so that
 *     registrations are not held up for long), the backend checks each
 *     site's region and builds its detour, and the site moves to
 *     opt_ready; from then on breakpoint hits run the detour's copy of the
 *     region (KSITE_OPT_READY), so no CPU enters the region's middle;
 *  2. without the mutex, one kprobe_ool_sync() for all of them: every CPU and
 *     task that was inside a region before (interrupted, or preempted) has
 *     left it;
 *  3. under kprobe_mutex again, the jumps of the sites still on opt_ready
 *     are written in one text_poke_bp() batch.
 *
 * A site that stops qualifying meanwhile simply leaves the queue.  Taking
 * a jump out is done at once, by whoever changes the site, in batches of
 * two synchronisations; its detour stays until the site is freed.
 */
/* /proc/sys/debug/kprobes-optimization */
static int kprobes_optimize = 1;

/*
 * Sites with KSITE_OPT_QUEUED, linked through site->opt: waiting for
 * step 1 (opt_queue), or with their detour built and KSITE_OPT_READY set,
 * waiting for step 3 (opt_ready).
 */
static LIST_HEAD(opt_queue);
static LIST_HEAD(opt_ready);

/* Quiet jiffies before a pass; the longest a queued site waits for one. */
#define OPTIMIZER_DELAY		5
#define OPTIMIZER_MAX_DELAY	(HZ / 2)
/* Sites prepared per hold of kprobe_mutex in step 1. */
#define OPTIMIZER_CHUNK		32

/*
 * When the first site of the coming pass was queued, and when the last
 * pass started; kprobe_mutex.
 */
static unsigned long opt_burst_start;
static unsigned long opt_last_pass = INITIAL_JIFFIES - OPTIMIZER_MAX_DELAY - 1;
static bool opt_burst;

static void kprobe_optimizer_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(optimizer_work, kprobe_optimizer_fn);

/*
 * What users see as optimized (KPROBE_FLAG_OPTIMIZED, [OPTIMIZED] in the
 * debugfs list): a site whose jump is in, or that the optimizer has
 * committed to, its detour built and its breakpoint hits already running
 * the detour's copy, the jump following once the wait of step 2 is over.
 * Not later: a preemptible kernel's wait takes a tenth of a second or
 * more, and tools (ftrace's own selftests among them) look right after a
 * probe was enabled.
 */
static bool kprobe_opt_shown(struct kprobe_site *s)
{
	return s->flags & KSITE_OPT_READY;
}

/*
 * Probes show the site's state in KPROBE_FLAG_OPTIMIZED; breakpoint hits
 * take their shortcut only while it is not KSITE_OPT_READY.
 */
static void kprobe_opt_mark(struct kprobe_site *s)
{
	struct kprobe *p;

	kprobe_site_bp_solo_update(s);
	list_for_each_entry(p, &s->probes, list) {
		if (kprobe_opt_shown(s))
			p->flags |= KPROBE_FLAG_OPTIMIZED;
		else
			p->flags &= ~KPROBE_FLAG_OPTIMIZED;
	}
}

/* Does another site start inside the (known) region of @s? */
static bool kprobe_opt_region_busy(struct kprobe_site *s)
{
	unsigned int i, len = arch_optprobe_region(s);

	for (i = 1; i < len; i++) {
		if (kprobe_site_find((unsigned long)s->addr + i))
			return true;
	}
	return false;
}

static bool kprobe_opt_eligible(struct kprobe_site *s)
{
	return kprobes_optimize && (s->flags & KSITE_ARMED) &&
	       !(s->flags & (KSITE_FTRACE | KSITE_POST | KSITE_FAULT |
			     KSITE_GONE | KSITE_OPT_NEVER)) &&
	       !kprobe_opt_region_busy(s);
}

static void kprobe_opt_dequeue(struct kprobe_site *s)
{
	list_del_init(&s->opt);
	s->flags &= ~(KSITE_OPT_QUEUED | KSITE_OPT_READY);
	kprobe_opt_mark(s);
}

/*
 * @s must not be (or become) optimized: dequeue it, or put it on @unopt
 * to have its jump taken out by kprobe_opt_unoptimize().
 */
void kprobe_opt_leave(struct kprobe_site *s, struct list_head *unopt)
{
	lockdep_assert_held(&kprobe_mutex);
	if (s->flags & KSITE_OPTIMIZED) {
		if (list_empty(&s->opt))
			list_add_tail(&s->opt, unopt);
	} else if (s->flags & KSITE_OPT_QUEUED) {
		kprobe_opt_dequeue(s);
	}
}

/* Take the jumps of the sites on @unopt out, in one batch. */
void kprobe_opt_unoptimize(struct list_head *unopt)
{
	struct kprobe_site *s, *tmp;

	if (list_empty(unopt))
		return;
	kprobe_text_lock();
	arch_optprobe_unpoke(unopt);
	kprobe_text_unlock();
	list_for_each_entry_safe(s, tmp, unopt, opt) {
		list_del_init(&s->opt);
		/* Only now may breakpoint hits step the first instruction alone. */
		s->flags &= ~(KSITE_OPTIMIZED | KSITE_OPT_READY);
		kprobe_opt_mark(s);
	}
}

/*
 * Push the pass back OPTIMIZER_DELAY, within OPTIMIZER_MAX_DELAY.  A site
 * queued after the optimizer has been quiet for OPTIMIZER_MAX_DELAY is
 * taken at once: a user who enables one event and reads the list right
 * after (ftrace's ftracetest does) sees it [OPTIMIZED], and a burst
 * that follows it still shares the next pass.
 */
static void kprobe_opt_kick(void)
{
	unsigned long now = jiffies, last;

	lockdep_assert_held(&kprobe_mutex);
	if (!opt_burst) {
		opt_burst = true;
		opt_burst_start = now;
		if (time_after(now, opt_last_pass + OPTIMIZER_MAX_DELAY)) {
			mod_delayed_work(system_wq, &optimizer_work, 0);
			return;
		}
	}
	last = opt_burst_start + OPTIMIZER_MAX_DELAY;
	if (time_after_eq(now, last))
		mod_delayed_work(system_wq, &optimizer_work, 0);
	else
		mod_delayed_work(system_wq, &optimizer_work,
				 min(OPTIMIZER_DELAY, last - now));
}

/* Queue @s if it qualifies and is not queued or optimized already. */
void kprobe_opt_consider(struct kprobe_site *s)
{
	lockdep_assert_held(&kprobe_mutex);
	kprobe_opt_mark(s);
	if ((s->flags & (KSITE_OPT_QUEUED | KSITE_OPTIMIZED)) || !kprobe_opt_eligible(s))
		return;
	s->flags |= KSITE_OPT_QUEUED;
	list_add_tail(&s->opt, &opt_queue);
	kprobe_opt_kick();
}

/*
 * A site is about to appear at @addr (@arrive) or has gone from there:
 * the sites whose region may cover @addr leave the optimizer's path, or
 * are considered again.
 */
void kprobe_opt_neighbours(unsigned long addr, bool arrive)
{
	struct kprobe_site *s;
	LIST_HEAD(unopt);
	unsigned int d;

	for (d = 1; d < KPROBE_OPT_REGION_MAX; d++) {
		s = kprobe_site_find(addr - d);
		if (!s)
			continue;
		if (!arrive)
			kprobe_opt_consider(s);
		else if (arch_optprobe_region(s) > d)
			kprobe_opt_leave(s, &unopt);
	}
	kprobe_opt_unoptimize(&unopt);
}

/* A site's text is gone: forget its jump without touching the text. */
void kprobe_opt_forget(struct kprobe_site *s)
{
	list_del_init(&s->opt);
	s->flags &= ~(KSITE_OPT_QUEUED | KSITE_OPT_READY |
		      KSITE_OPTIMIZED);
	kprobe_opt_mark(s);
}

static void kprobe_optimizer_fn(struct work_struct *work)
{
	struct kprobe_site *s, *tmp;
	unsigned int n = 0;

	/* 1. Check the regions and build the detours. */
	mutex_lock(&kprobe_mutex);
	opt_burst = false;
	opt_last_pass = jiffies;
	while (!list_empty(&opt_queue)) {
		s = list_first_entry(&opt_queue, struct kprobe_site, opt);
		if (arch_optprobe_prepare(s))
			s->flags |= KSITE_OPT_NEVER;
		else
			s->flags |= KSITE_OPT_DETOUR;
		if (!kprobe_opt_eligible(s)) {
			kprobe_opt_dequeue(s);
		} else {
			s->flags |= KSITE_OPT_READY;
			list_move_tail(&s->opt, &opt_ready);
			kprobe_opt_mark(s);
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
	kprobe_ool_sync();

	/* 3. Write the jumps of the sites still waiting. */
	mutex_lock(&kprobe_mutex);
	kprobe_text_lock();
	n = 0;
	list_for_each_entry_safe(s, tmp, &opt_ready, opt) {
		list_del_init(&s->opt);
		s->flags &= ~KSITE_OPT_QUEUED;
		if (arch_optprobe_poke(s)) {
			/* The breakpoint stays, and its hits step again. */
			s->flags &= ~KSITE_OPT_READY;
			s->flags |= KSITE_OPT_NEVER;
		} else {
			s->flags |= KSITE_OPTIMIZED | KSITE_OPT_JUMPED;
			n++;
		}
		kprobe_opt_mark(s);
	}
	if (n)
		arch_optprobe_poke_finish();
	kprobe_text_unlock();
	if (!list_empty(&opt_queue))
		kprobe_opt_kick();
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
static void kprobe_opt_apply_all(void)
{
	struct kprobe_site *s;
	LIST_HEAD(unopt);

	lockdep_assert_held(&kprobe_mutex);
	for_each_kprobe_site(s) {
		if (kprobes_optimize)
			kprobe_opt_consider(s);
		else
			kprobe_opt_leave(s, &unopt);
	}
	kprobe_opt_unoptimize(&unopt);
}

static int kprobes_optimize_sysctl(const struct ctl_table *table, int write,
				   void *buffer, size_t *length, loff_t *ppos)
{
	int old, ret;

	mutex_lock(&kprobe_mutex);
	old = kprobes_optimize;
	ret = proc_dointvec_minmax(table, write, buffer, length, ppos);
	if (!ret && write && old != kprobes_optimize) {
		kprobe_opt_apply_all();
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

static int __init kprobe_opt_init(void)
{
	register_sysctl_init("debug", kprobe_sysctls);
	return 0;
}
early_initcall(kprobe_opt_init);

