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
 * One mechanism per file (internal.h declares what they share):
 *
 *   core.c          site hash and hit-path helpers (the re-execution
 *                   of a faulted step too), registration and
 *                   unregistration, enable/disable, text that goes away
 *                   (modules, __init), initialisation
 *   slots.c         out-of-line instruction slots, and the wait for CPUs
 *                   to leave out-of-line code
 *   blacklist.c     addresses nobody may probe
 *   arming.c        arming and disarming, in batches; releasing sites
 *   check.c         what a probe spec names, and whether it may be probed
 *   stats.c         per-site hit counts, the stats file
 *   ftrace.c        sites carried by ftrace        (KPROBES_ON_FTRACE)
 *   optimizer.c     jump optimization              (OPTPROBES)
 *   kretprobe.c     return probes                  (KRETPROBES)
 *   kretprobe_pool.c  their instance pools         (KRETPROBES)
 *   compat.c        jprobes, fault_handler         (KPROBES_COMPAT)
 *   debugfs.c       list, enabled, blacklist       (DEBUG_FS)
 *   bridge.c        the contract on the backend an
 *                   architecture already had       (KPROBES_BRIDGE)
 *   bridge_rethook.c  return probes through such a
 *                   backend's rethook      (KRETPROBE_ON_RETHOOK)
 *   bridge_opt.c    jump optimization through such
 *                   a backend's optprobes  (KPROBES_BRIDGE, OPTPROBES)
 *
 * Locking: kprobe_mutex serialises every change of sites and probes.  The
 * hit path runs with interrupts (breakpoint) or preemption (ftrace) off and
 * only reads RCU-protected lists; a site or a probe leaves those lists and
 * is only reused or freed after a grace period.  The order of kprobe_mutex
 * and the locks taken under it is written down in internal.h.
 */

#define pr_fmt(fmt) "kprobes: " fmt

#include <linux/kprobes.h>
#include <linux/kprobes_arch.h>
#include <linux/init.h>
#include <linux/slab.h>
#include <linux/module.h>
#include <linux/kallsyms.h>
#include <linux/memory.h>
#include <linux/rculist.h>
#include <linux/sched.h>

#include "internal.h"

/* Serialises all changes to sites, probes and the blacklist. */
DEFINE_MUTEX(kprobe_mutex);

/* "enabled" debugfs switch: when true, no site is armed. */
bool kprobes_all_disarmed;

static bool kprobes_initialized;

/*
 * A fixed table large enough that thousands of probes keep chains short:
 * the hit path walks one chain, so its length is the lookup cost.  The hit
 * paths read it through kprobe_site_find() (kprobes_arch.h).
 */
struct hlist_head kprobe_site_hash[1 << KPROBE_SITE_HASH_BITS];

/* Sites whose text went away: out of the hash, still owning their probes. */
LIST_HEAD(kprobe_gone_sites);

/* Stands in for "a probe is running" when no real probe is at hand. */
struct kprobe kprobe_busy = {
	.symbol_name = "kprobe_busy",
};

/* For kprobe_site_find()'s lockdep condition (CONFIG_PROVE_RCU_LIST). */
bool kprobe_mutex_is_held(void)
{
	return !IS_ENABLED(CONFIG_LOCKDEP) || lockdep_is_held(&kprobe_mutex);
}

NOKPROBE_SYMBOL(kprobe_mutex_is_held);

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
 * kprobe_fixup_taken() - a fault is being sent to its exception-table fixup
 * @addr: the address of the faulting instruction
 *
 * Called by the architecture's fixup_exception(), in whatever context the
 * fault came.  If @addr is a probed instruction whose out-of-line copy
 * faulted in this task (see kprobe_replay_expect()), the task will not run
 * it again: its note on the site goes.
 */
void kprobe_fixup_taken(unsigned long addr)
{
	struct kprobe_site *s;

	rcu_read_lock();
	s = kprobe_site_find(addr);
	if (s && READ_ONCE(s->replay) == current)
		WRITE_ONCE(s->replay, NULL);
	rcu_read_unlock();
}

NOKPROBE_SYMBOL(kprobe_fixup_taken);

/**
 * kprobe_busy_begin() - make probes hit on this CPU count as missed
 *
 * Disables preemption until kprobe_busy_end().
 */
void kprobe_busy_begin(void)
{
	preempt_disable();
	kprobe_running_set(&kprobe_busy);
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

static bool kprobe_site_holds(struct kprobe_site *s, struct kprobe *p,
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
struct kprobe_site *kprobe_site_of(struct kprobe *p)
{
	struct kprobe_site *s;

	lockdep_assert_held(&kprobe_mutex);
	if (!p->addr)
		return NULL;
	s = kprobe_site_find((unsigned long)p->addr);
	if (s && kprobe_site_holds(s, p, NULL))
		return s;
	list_for_each_entry(s, &kprobe_gone_sites, batch) {
		if (s->addr == p->addr && kprobe_site_holds(s, p, NULL))
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

static struct pending_site *kprobe_pending_find(struct pending_site *ps, int n,
						struct kprobe_site *s)
{
	int i;

	for (i = n - 1; i >= 0; i--) {
		if (ps[i].site == s)
			return &ps[i];
	}
	return NULL;
}

static struct kprobe_site *kprobe_site_create(kprobe_opcode_t *addr,
					      bool ftrace,
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
	ret = kprobe_site_hits_get(s);
	if (ret) {
		kfree(s);
		return ERR_PTR(ret);
	}
	ret = arch_kprobe_site_prepare(s, opcode);
	if (ret) {
		if (ret == -EINVAL)
			pr_warn("cannot probe the instruction at %pS\n", addr);
		else if (ret == -EILSEQ)
			pr_warn("cannot decode the instruction at %pS\n", addr);
		kprobe_site_free(s);
		return ERR_PTR(ret);
	}
	hlist_add_head_rcu(&s->node, kprobe_site_bucket((unsigned long)addr));
	return s;
}

static bool kprobe_is_ftrace_site(unsigned long addr)
{
	return IS_ENABLED(CONFIG_KPROBES_ON_FTRACE) &&
	       kprobe_ftrace_site_of(addr) == addr;
}

/* Validate @p and attach it to a pending entry in @ps[0..*n). */
static int kprobe_prepare_one(struct kprobe *p, struct pending_site *ps, int *n)
{
	struct pending_site *pend;
	struct kprobe_site *s;
	/* A compound literal: on mips kprobe_opcode_t is a union. */
	kprobe_opcode_t *addr, opcode = (kprobe_opcode_t){ 0 };
	struct kprobe_func f;
	bool on_entry = false, ftrace, created = false;
	unsigned long site;
	int ret;

	if (kprobe_site_of(p)) {
		pr_warn("%pS: this struct kprobe is already registered\n",
			p->addr);
		return -EINVAL;
	}

	addr = kprobe_resolve_addr(p->addr, p->symbol_name, p->offset,
				   &on_entry, &f);
	if (IS_ERR(addr))
		return PTR_ERR(addr);

	ret = kprobe_check_text((unsigned long)addr, &f);
	if (ret)
		return ret;

	ftrace = kprobe_is_ftrace_site((unsigned long)addr);
	site = ftrace ? 0 : kprobe_ftrace_site_of((unsigned long)addr);
	if (site) {
		/*
		 * ftrace's call site, which this kernel cannot hand over to
		 * ftrace (no KPROBES_ON_FTRACE: arm64, mips), or the inside of
		 * one.
		 */
		if (site != (unsigned long)addr)
			return -EILSEQ;
		pr_warn("%pS is ftrace's call site, and this kernel has no kprobes on ftrace\n",
			addr);
		return -EINVAL;
	}

	s = kprobe_site_find((unsigned long)addr);
	pend = s ? kprobe_pending_find(ps, *n, s) : NULL;
	if (s && (kprobe_site_holds(s, p, pend ? &pend->probes : NULL)))
		return -EINVAL;
	if (!s) {
		/* No jump may cover the new site's text: it is read next. */
		if (!ftrace)
			kprobe_opt_neighbours((unsigned long)addr, true);
		s = kprobe_site_create(addr, ftrace, &opcode);
		if (IS_ERR(s)) {
			/* Refused: the neighbours may have their jumps back. */
			if (!ftrace)
				kprobe_opt_neighbours((unsigned long)addr, false);
			return PTR_ERR(s);
		}
		created = true;
	} else {
		struct kprobe *first = kprobe_site_first(s);

		if (first == &kprobe_busy && pend)
			first = list_first_entry_or_null(&pend->probes,
							 struct kprobe, list);
		opcode = first && first != &kprobe_busy ? first->opcode :
			 (kprobe_opcode_t){ 0 };
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
	p->hits_mark = 0;
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
static void kprobe_pending_undo(struct pending_site *ps, int n)
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
			kprobe_opt_neighbours((unsigned long)ps[i].site->addr, false);
		}
	}
	if (!list_empty(&dead)) {
		/* The sites were never armed, but lookups may have seen them. */
		synchronize_rcu();
		kprobe_sites_release(&dead);
	}
}

static void kprobe_sync_nop(void *unused)
{
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
		ret = kprobe_prepare_one(kps[i], ps, &n);
	}
	if (ret) {
		kprobe_pending_undo(ps, n);
		while (i-- > 0)
			if (kps[i])
				kps[i]->addr = orig[i];
		goto unlock;
	}

	/* Publish: from here on handlers run as soon as a site is armed. */
	for (i = 0; i < n; i++) {
		struct kprobe *p, *tmp;

		list_for_each_entry_safe(p, tmp, &ps[i].probes, list) {
			if (!kprobe_disabled(p))
				kprobe_hits_toggle(p);
			list_del(&p->list);
			list_add_tail_rcu(&p->list, &ps[i].site->probes);
		}
		list_add_tail(&ps[i].site->batch, &batch);
	}
	kprobe_sites_update(&batch);

	/* A site that would not arm (ftrace refused it) fails the batch. */
	list_for_each_entry(s, &batch, batch) {
		if (kprobe_site_want_armed(s) && !kprobe_site_armed_as(s, true))
			ret = -EBUSY;
	}
	kprobe_batch_clear(&batch);
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
		s = kprobe_site_of(p);
		if (!s) {
			p->addr = NULL;
			continue;
		}
		list_del_rcu(&p->list);
		kprobe_site_shortcuts_drop(s, p);
		/* Handlers that may run with interrupts on: see below. */
		if (kprobe_is_return(p)) {
			kretprobe_detach(p);
			grace = true;
		}
		if (s->flags & (KSITE_FTRACE | KSITE_OPT_JUMPED))
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
	kprobe_sites_update(&batch);
	list_for_each_entry_safe(s, tmp, &batch, batch) {
		list_del_init(&s->batch);
		if (list_empty(&s->probes) && !(s->flags & KSITE_ARMED)) {
			hlist_del_rcu(&s->node);
			list_add_tail(&s->batch, &dead);
		}
	}
	/* Sites that had these inside their regions may qualify again. */
	list_for_each_entry(s, &dead, batch)
		kprobe_opt_neighbours((unsigned long)s->addr, false);

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
		kprobe_sites_release(&dead);
	else
		kprobe_sites_release_later(&dead);
	mutex_unlock(&kprobe_mutex);
}
EXPORT_SYMBOL_GPL(unregister_kprobes);

/*
 * The kprobes embedded at @offset in each of @objs (a NULL entry gives
 * NULL), for the array APIs of kretprobes and jprobes; kvfree() it.
 */
struct kprobe **kprobe_array_of(void * const *objs, int num, size_t offset,
				gfp_t gfp)
{
	struct kprobe **kps = kvmalloc_array(num, sizeof(*kps), gfp);
	int i;

	if (!kps)
		return NULL;
	for (i = 0; i < num; i++)
		kps[i] = objs[i] ? (struct kprobe *)((char *)objs[i] + offset) : NULL;
	return kps;
}

/* unregister_kprobes() of the kprobes embedded at @offset in @objs. */
void kprobe_unregister_embedded(void * const *objs, int num, size_t offset)
{
	struct kprobe **kps;

	if (num <= 0 || !objs)
		return;
	kps = kprobe_array_of(objs, num, offset, GFP_KERNEL | __GFP_NOFAIL);
	unregister_kprobes(kps, num);
	kvfree(kps);
}

/**
 * unregister_kprobe() - unregister one kprobe
 * @p: the probe
 */
void unregister_kprobe(struct kprobe *p)
{
	unregister_kprobes(&p, 1);
}
EXPORT_SYMBOL_GPL(unregister_kprobe);

static int kprobe_set_disabled(struct kprobe *p, bool disable)
{
	struct kprobe_site *s;
	bool was_disabled;
	LIST_HEAD(batch);
	int ret = 0;

	mutex_lock(&kprobe_mutex);
	s = kprobe_site_of(p);
	if (!s) {
		ret = -EINVAL;
		goto out;
	}
	if (!disable && (p->flags & KPROBE_FLAG_GONE)) {
		ret = -EINVAL;
		goto out;
	}
	/* Counting hits stops or starts again when the state changes. */
	was_disabled = kprobe_disabled(p);
	if (disable)
		p->flags |= KPROBE_FLAG_DISABLED;
	else
		p->flags &= ~KPROBE_FLAG_DISABLED;
	if (kprobe_disabled(p) != was_disabled)
		kprobe_hits_toggle(p);
	if (s->flags & KSITE_GONE)
		goto out;
	list_add_tail(&s->batch, &batch);
	kprobe_sites_update(&batch);
	list_del_init(&s->batch);
	if (!disable && kprobe_site_want_armed(s) && !kprobe_site_armed_as(s, true)) {
		kprobe_hits_toggle(p);
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
	return kprobe_set_disabled(kp, true);
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
	return kprobe_set_disabled(kp, false);
}
EXPORT_SYMBOL_GPL(enable_kprobe);

/* Apply kprobes_all_disarmed to every site, in one batch. */
void kprobes_all_sites_update(void)
{
	struct kprobe_site *s;
	LIST_HEAD(batch);

	lockdep_assert_held(&kprobe_mutex);
	for_each_kprobe_site(s)
		list_add_tail(&s->batch, &batch);
	kprobe_sites_update(&batch);
	kprobe_batch_clear(&batch);
}

/*
 * The text under @s is being freed: forget the breakpoint without touching
 * the text, take the site out of the hash (the address may be reused by
 * new text) and mark its probes gone.  Ftrace sites were unhooked before
 * (kprobe_kill_sites_in()), so that ftrace keeps no filter entry for a dead
 * address.
 */
static void kprobe_site_kill(struct kprobe_site *s)
{
	struct kprobe *p;

	kprobe_opt_forget(s);
	s->flags &= ~KSITE_ARMED;
	WRITE_ONCE(s->fops, NULL);
	s->flags |= KSITE_GONE;
	list_for_each_entry(p, &s->probes, list) {
		if (!kprobe_disabled(p))
			kprobe_hits_toggle(p);
		p->flags |= KPROBE_FLAG_GONE;
	}
	hlist_del_rcu(&s->node);
	list_add_tail(&s->batch, &kprobe_gone_sites);
}

static void kprobe_kill_sites_in(bool (*doomed)(unsigned long, void *), void *data)
{
	struct kprobe_site *s;
	struct hlist_node *tmp;
	LIST_HEAD(ftrace);

	lockdep_assert_held(&kprobe_mutex);
	/*
	 * Ftrace sites leave its filter first, all in one update, and so do
	 * the addresses kept there for later.
	 */
	for_each_kprobe_site(s) {
		if ((s->flags & KSITE_FTRACE) && (s->flags & KSITE_ARMED) &&
		    doomed((unsigned long)s->addr, data))
			list_add_tail(&s->batch, &ftrace);
	}
	kprobe_sites_set_armed(&ftrace, false);
	kprobe_batch_clear(&ftrace);
	kprobe_ftrace_lazy_flush();

	for_each_kprobe_site_safe(s, tmp) {
		if (doomed((unsigned long)s->addr, data))
			kprobe_site_kill(s);
	}
}

static bool kprobe_in_kernel_init(unsigned long addr, void *unused)
{
	return is_kernel_inittext(addr);
}

/**
 * kprobe_free_init_mem() - the kernel's __init text is about to be freed
 */
void kprobe_free_init_mem(void)
{
	mutex_lock(&kprobe_mutex);
	kprobe_kill_sites_in(kprobe_in_kernel_init, NULL);
	mutex_unlock(&kprobe_mutex);
}

#ifdef CONFIG_MODULES
static bool kprobe_in_module_init(unsigned long addr, void *mod)
{
	return within_module_init(addr, mod);
}

static bool kprobe_in_module(unsigned long addr, void *mod)
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
		kprobe_blacklist_add_module(mod);
		kprobe_reserved_add_module(mod);
		break;
	case MODULE_STATE_LIVE:
		/* init done: its __init text is freed next */
		kprobe_kill_sites_in(kprobe_in_module_init, mod);
		break;
	case MODULE_STATE_GOING:
		kprobe_kill_sites_in(kprobe_in_module, mod);
		kprobe_blacklist_remove_module(mod);
		kprobe_reserved_remove_module(mod);
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

static int __init kprobes_init(void)
{
	int i, ret = 0;

	for (i = 0; i < ARRAY_SIZE(kprobe_site_hash); i++)
		INIT_HLIST_HEAD(&kprobe_site_hash[i]);

	mutex_lock(&kprobe_mutex);
	kprobe_blacklist_init();
	mutex_unlock(&kprobe_mutex);
	kprobe_ool_sync_init();
	kprobe_slots_init();
	kretprobe_init();

#ifdef CONFIG_MODULES
	ret = register_module_notifier(&kprobes_module_nb);
#endif
	if (!ret)
		kprobes_initialized = true;
	return ret;
}
early_initcall(kprobes_init);
