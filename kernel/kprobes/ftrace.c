// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Probes on ftrace call sites, carried by an ftrace_ops rather than a
 * breakpoint (CONFIG_KPROBES_ON_FTRACE).
 */

#define pr_fmt(fmt) "kprobes: " fmt

#include <linux/kprobes.h>
#include <linux/kprobes_arch.h>
#include <linux/ftrace.h>
#include <linux/hash.h>
#include <linux/memory.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "internal.h"

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
 * name, so that no hit is lost or run twice.  A backend whose handler
 * cannot do that keeps every site in the IPMODIFY ops
 * (KPROBE_FTRACE_IPMODIFY_ALWAYS).
 */
struct kprobe_ftrace_ops {
	struct ftrace_ops	ops;
	unsigned int		armed;	/* sites in its filter */
};

/* Which of the two ops carries an ftrace site: an index, or none. */
enum kprobe_fops_at {
	KPROBE_FOPS_NONE = -1,	/* disarmed: in neither filter */
	KPROBE_FOPS_PLAIN,	/* the ops that leaves regs->ip alone */
	KPROBE_FOPS_IPMOD,	/* the ops that claims IPMODIFY */
	KPROBE_FOPS_NR,
};

static struct kprobe_ftrace_ops kprobe_ftrace_ops[KPROBE_FOPS_NR] __read_mostly = {
	[KPROBE_FOPS_PLAIN] = {
		.ops = { .func = kprobe_ftrace_handler,
			 .flags = FTRACE_OPS_FL_SAVE_REGS } },
	[KPROBE_FOPS_IPMOD] = {
		.ops = { .func = kprobe_ftrace_handler,
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
static int kprobe_ftrace_ops_set(struct kprobe_ftrace_ops *kf, unsigned long *ips,
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
 * plain ops (KPROBE_FOPS_PLAIN) leaves its address in the filter for a
 * while: the handler ignores calls for an address whose site is gone or
 * no longer names that ops, and ftrace_lazy_work takes out everything
 * left there in one update, HZ / 10 later.  A site armed again at such
 * an address in the meantime takes it back without any update.  The
 * IPMODIFY ops is always left at once: the claim it makes on a function
 * would keep a livepatch out of it.  Text that is about to be freed
 * flushes the lot first (kprobe_kill_sites_in()).
 */
struct ftrace_lazy_ip {
	struct hlist_node	node;
	unsigned long		ip;
};

#define FTRACE_LAZY_BITS	8
static struct hlist_head ftrace_lazy_hash[1 << FTRACE_LAZY_BITS];
static unsigned int ftrace_lazy_count;

static void kprobe_ftrace_lazy_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(ftrace_lazy_work, kprobe_ftrace_lazy_fn);

static struct hlist_head *kprobe_ftrace_lazy_bucket(unsigned long ip)
{
	return &ftrace_lazy_hash[hash_long(ip, FTRACE_LAZY_BITS)];
}

/* Keep @ip in the plain ops' filter for now; false if that cannot be. */
static bool kprobe_ftrace_lazy_add(unsigned long ip)
{
	struct ftrace_lazy_ip *l = kmalloc(sizeof(*l), GFP_KERNEL);

	if (!l)
		return false;
	l->ip = ip;
	hlist_add_head(&l->node, kprobe_ftrace_lazy_bucket(ip));
	ftrace_lazy_count++;
	schedule_delayed_work(&ftrace_lazy_work, HZ / 10);
	return true;
}

/* Is @ip still in the plain ops' filter, left there by a disarmed site? */
static bool kprobe_ftrace_lazy_has(unsigned long ip)
{
	struct ftrace_lazy_ip *l;

	hlist_for_each_entry(l, kprobe_ftrace_lazy_bucket(ip), node) {
		if (l->ip == ip)
			return true;
	}
	return false;
}

/* Take @ip back for a site armed in the plain ops: is it still there? */
static bool kprobe_ftrace_lazy_get(unsigned long ip)
{
	struct ftrace_lazy_ip *l;

	hlist_for_each_entry(l, kprobe_ftrace_lazy_bucket(ip), node) {
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
void kprobe_ftrace_lazy_flush(void)
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
	if (!ips ||
	    kprobe_ftrace_ops_set(&kprobe_ftrace_ops[KPROBE_FOPS_PLAIN], ips, n,
				  false))
		pr_warn("ftrace kept disarmed probes in its filter\n");
	kfree(ips);
}

/* The ops an ftrace site is in. */
static enum kprobe_fops_at kprobe_ftrace_site_at(struct kprobe_site *s)
{
	if (!(s->flags & KSITE_ARMED))
		return KPROBE_FOPS_NONE;
	return kprobe_ftrace_site_ipmod(s) ? KPROBE_FOPS_IPMOD : KPROBE_FOPS_PLAIN;
}

/* Where the handler is to take hits of @s from: ops @at, or none. */
static void kprobe_ftrace_site_carry(struct kprobe_site *s,
				     enum kprobe_fops_at at)
{
	if (at == KPROBE_FOPS_NONE)
		s->flags &= ~KSITE_ARMED;
	else
		s->flags |= KSITE_ARMED;
	WRITE_ONCE(s->fops, at == KPROBE_FOPS_NONE ? NULL :
		   &kprobe_ftrace_ops[at].ops);
}

/* The ops @s should be in, armed (@arm) or not. */
static enum kprobe_fops_at kprobe_ftrace_site_want(struct kprobe_site *s,
						   bool arm)
{
	if (!arm)
		return KPROBE_FOPS_NONE;
	return kprobe_ftrace_site_want_ipmod(s) ? KPROBE_FOPS_IPMOD :
						  KPROBE_FOPS_PLAIN;
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

/*
 * @s, armed by a breakpoint, leaves that state: ftrace carries it now, or
 * it is being disarmed.  Our int3 goes, unless ftrace wrote over it.  A
 * yielded site is checked too: ftrace gives up an update whose later
 * record fails its check (ftrace_bug()) after yielding the earlier ones,
 * and their int3 is then still there with nobody left to handle it.  The
 * write is checked against int3 over the nop's tail, so a site ftrace
 * did rewrite is left alone; ftrace writes only under text_mutex, which
 * is held here.  text_mutex held; arch_kprobe_poke_finish() to follow.
 */
static void kprobe_ftrace_site_bp_drop(struct kprobe_site *s)
{
	lockdep_assert_held(&text_mutex);
	arch_kprobe_ftrace_bp(s, false);
	s->ftrace_bp = KSITE_BP_NONE;
	ftrace_bp_count--;
}

/*
 * Sites of @batch armed by a breakpoint that kprobe_ftrace_sites_set_armed()
 * moved away from the plain ops (disarmed, or carried by the other ops
 * now) leave the breakpoint state.
 */
void kprobe_ftrace_sites_bp_settle(struct list_head *batch)
{
	struct kprobe_site *s;

	if (!ftrace_bp_count)
		return;
	kprobe_text_lock();
	list_for_each_entry(s, batch, batch) {
		if (s->ftrace_bp &&
		    kprobe_ftrace_site_at(s) != KPROBE_FOPS_PLAIN)
			kprobe_ftrace_site_bp_drop(s);
	}
	arch_kprobe_poke_finish();
	kprobe_text_unlock();
}

/* Arm the sites of @batch that can go live as breakpoints, as above. */
static void kprobe_ftrace_sites_bp_arm(struct list_head *batch)
{
	struct kprobe_site *s;
	unsigned int n = 0;

	if (READ_ONCE(kprobe_ftrace_disabled))
		return;
	kprobe_text_lock();
	list_for_each_entry(s, batch, batch) {
		if (!(s->flags & KSITE_FTRACE) ||
		    kprobe_ftrace_site_at(s) != KPROBE_FOPS_NONE ||
		    kprobe_ftrace_site_want(s, true) != KPROBE_FOPS_PLAIN ||
		    kprobe_ftrace_lazy_has((unsigned long)s->addr) ||
		    !arch_kprobe_ftrace_bp(s, true))
			continue;
		s->ftrace_bp = KSITE_BP_OURS;
		kprobe_ftrace_site_carry(s, KPROBE_FOPS_PLAIN);
		n++;
	}
	if (n) {
		ftrace_bp_count += n;
		kprobe_arm_sync_later();
		schedule_delayed_work(&ftrace_lazy_work, HZ / 10);
	}
	kprobe_text_unlock();
}

/* Hand every site armed by a breakpoint over to ftrace, in one update. */
static void kprobe_ftrace_bp_hand_off(void)
{
	struct kprobe_site *s;
	unsigned long *ips;
	unsigned int n = 0;
	int err;

	lockdep_assert_held(&kprobe_mutex);
	if (!ftrace_bp_count || READ_ONCE(kprobe_ftrace_disabled))
		return;
	ips = kmalloc_array(ftrace_bp_count, sizeof(*ips), GFP_KERNEL);
	if (!ips)
		goto retry;
	/* Stop at the last one: most buckets hold none. */
	for_each_kprobe_site(s) {
		if (!s->ftrace_bp)
			continue;
		ips[n++] = (unsigned long)s->addr;
		if (n == ftrace_bp_count)
			goto collected;
	}
collected:
	err = kprobe_ftrace_ops_set(&kprobe_ftrace_ops[KPROBE_FOPS_PLAIN], ips, n,
				    true);
	kfree(ips);
	if (err) {
		pr_warn("ftrace refused to take over %u entry probe(s): %d\n",
			n, err);
		goto retry;
	}
	kprobe_text_lock();
	for_each_kprobe_site(s) {
		if (!s->ftrace_bp)
			continue;
		kprobe_ftrace_site_bp_drop(s);
		if (!ftrace_bp_count)
			goto dropped;
	}
dropped:
	arch_kprobe_poke_finish();
	kprobe_text_unlock();
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
	s = kprobe_site_find(ip);
	if (s && s->ftrace_bp == KSITE_BP_OURS) {
		s->ftrace_bp = KSITE_BP_YIELDED;
		ours = true;
		/* Someone else's update: let ours carry the probe at once. */
		mod_delayed_work(system_wq, &ftrace_lazy_work, 0);
	}
	rcu_read_unlock();
	return ours;
}

static void kprobe_ftrace_lazy_fn(struct work_struct *work)
{
	mutex_lock(&kprobe_mutex);
	kprobe_ftrace_lazy_flush();
	kprobe_ftrace_bp_hand_off();
	mutex_unlock(&kprobe_mutex);
}

/*
 * kprobe_ftrace_sites_set_armed() without the memory to name the @n sites
 * that move.  Arming fails, every site left as it was.  Disarming may not
 * fail, or a site nobody probes would stay armed for good: the sites stop
 * counting hits, and ftrace keeps calling the handler for them, which
 * finds nothing to do.
 */
static int kprobe_ftrace_sites_set_armed_nomem(struct list_head *batch,
					       bool arm, unsigned int n)
{
	struct kprobe_site *s;

	if (arm)
		return -ENOMEM;
	list_for_each_entry(s, batch, batch) {
		if (s->flags & KSITE_FTRACE)
			kprobe_ftrace_site_carry(s, KPROBE_FOPS_NONE);
	}
	pr_warn("ftrace kept %u disarmed probe(s) in its filter: out of memory\n", n);
	return 0;
}

/*
 * Arm (@arm) the ftrace sites of @batch in the ftrace_ops their probes
 * call for, moving those armed in the other one, or disarm them.  When
 * arming fails (another IPMODIFY user on the function, no memory) the
 * sites concerned stay as they were and the error is returned; disarming
 * does not fail.  Once ftrace is dead nothing reaches the handler any
 * more: sites are only marked.
 */
int kprobe_ftrace_sites_set_armed(struct list_head *batch, bool arm)
{
	unsigned int nadd[KPROBE_FOPS_NR] = {}, ndel[KPROBE_FOPS_NR] = {};
	unsigned long *ips, *add[KPROBE_FOPS_NR], *del[KPROBE_FOPS_NR];
	int ret = 0, err[KPROBE_FOPS_NR] = {};
	enum kprobe_fops_at at, want, i;
	struct kprobe_site *s;
	unsigned int n = 0;

	if (arm)
		kprobe_ftrace_sites_bp_arm(batch);
	list_for_each_entry(s, batch, batch) {
		if (!(s->flags & KSITE_FTRACE))
			continue;
		at = kprobe_ftrace_site_at(s);
		want = kprobe_ftrace_site_want(s, arm);
		if (at == want)
			continue;
		if (READ_ONCE(kprobe_ftrace_disabled)) {
			kprobe_ftrace_site_carry(s, KPROBE_FOPS_NONE);
			if (want != KPROBE_FOPS_NONE)
				ret = -ENODEV;
			continue;
		}
		/* armed by a breakpoint: never in a filter, nothing to update */
		if (want == KPROBE_FOPS_NONE && s->ftrace_bp) {
			kprobe_ftrace_site_carry(s, KPROBE_FOPS_NONE);
			continue;
		}
		if (want != KPROBE_FOPS_NONE)
			nadd[want]++;
		if (at != KPROBE_FOPS_NONE)
			ndel[at]++;
		n++;
	}
	if (!n)
		return ret;
	ips = kmalloc_array(2 * n, sizeof(*ips), GFP_KERNEL);
	if (!ips)
		return kprobe_ftrace_sites_set_armed_nomem(batch, arm, n);
	/* Each moving site is added to one ops and taken out of one at most. */
	add[KPROBE_FOPS_PLAIN] = ips;
	add[KPROBE_FOPS_IPMOD] = ips + nadd[KPROBE_FOPS_PLAIN];
	del[KPROBE_FOPS_PLAIN] = ips + n;
	del[KPROBE_FOPS_IPMOD] = ips + n + ndel[KPROBE_FOPS_PLAIN];

	/* In first: a moving site is then carried by both for a while. */
	memset(nadd, 0, sizeof(nadd));
	list_for_each_entry(s, batch, batch) {
		want = kprobe_ftrace_site_want(s, arm);
		if (!(s->flags & KSITE_FTRACE) || want == KPROBE_FOPS_NONE ||
		    kprobe_ftrace_site_at(s) == want)
			continue;
		/* still in the plain ops' filter: nothing to update */
		if (want == KPROBE_FOPS_PLAIN && kprobe_ftrace_lazy_get((unsigned long)s->addr))
			continue;
		add[want][nadd[want]++] = (unsigned long)s->addr;
	}
	for (i = KPROBE_FOPS_PLAIN; i < KPROBE_FOPS_NR; i++)
		err[i] = kprobe_ftrace_ops_set(&kprobe_ftrace_ops[i], add[i], nadd[i], true);

	/*
	 * Then site->fops, which says which ops counts, and out of the old
	 * ops.  A site that could not go into its new ops stays as it was.
	 */
	memset(ndel, 0, sizeof(ndel));
	list_for_each_entry(s, batch, batch) {
		if (!(s->flags & KSITE_FTRACE))
			continue;
		at = kprobe_ftrace_site_at(s);
		want = kprobe_ftrace_site_want(s, arm);
		if (at == want || (want != KPROBE_FOPS_NONE && err[want]))
			continue;
		kprobe_ftrace_site_carry(s, want);
		/* armed by a breakpoint: not in the plain ops' filter */
		if (s->ftrace_bp)
			continue;
		if (at == KPROBE_FOPS_PLAIN && kprobe_ftrace_lazy_add((unsigned long)s->addr))
			continue;
		if (at != KPROBE_FOPS_NONE)
			del[at][ndel[at]++] = (unsigned long)s->addr;
	}
	for (i = KPROBE_FOPS_PLAIN; i < KPROBE_FOPS_NR; i++) {
		/* Only allocation can fail here: the sites stay in, unused. */
		if (kprobe_ftrace_ops_set(&kprobe_ftrace_ops[i], del[i], ndel[i], false))
			pr_warn("ftrace kept %u disarmed probe(s) in its filter\n",
				ndel[i]);
		if (err[i]) {
			pr_warn("ftrace refused to arm %u probe(s)%s: %d\n",
				nadd[i], i == KPROBE_FOPS_IPMOD ?
				" with a post_handler" : "", err[i]);
			ret = err[i];
		}
	}
	kfree(ips);
	return ret;
}
