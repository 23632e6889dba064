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
 * Ftrace sites are carried by one ftrace_ops, the carrier: its callback
 * runs the probes, and a pre_handler may move regs->ip through it
 * (fail_function and BPF's override do).  FTRACE_OPS_FL_IPMODIFY is also
 * a claim: ftrace lets only one such ops onto a function, and livepatch is
 * one.  Only a site with a post_handler makes that claim (the post_handler
 * runs as if ftrace's nop, not a patched function, came next), so that a
 * livepatch and a probe can share a function.  The claim is a second ops
 * whose callback does nothing, and such a site is in both filters.
 *
 * Hits come from the carrier alone.  When a post_handler comes or goes,
 * only the claim changes, and the site stays in the carrier all along.
 * Were the claim the carrier of such sites, a site would move between two
 * carriers whenever it gains or loses its post_handler, and ftrace calls
 * each ops on a function in turn: a call that came through both while the
 * site changed hands would be run twice or not at all.  The price is
 * ftrace's list of ops on a function in both filters (see "Probes on
 * ftrace call sites" in Documentation/trace/kprobes.rst).  A backend whose
 * handler cannot tell the ops apart (KPROBE_FTRACE_IPMODIFY_ALWAYS) has a
 * carrier that claims IPMODIFY itself, and no claim ops.
 */
struct kprobe_ftrace_ops {
	struct ftrace_ops	ops;
	unsigned int		armed;	/* sites in its filter */
};

/* The claim's callback: the carrier runs the probes. */
static void notrace kprobe_ftrace_claim_fn(unsigned long ip,
					   unsigned long parent_ip,
					   struct ftrace_ops *ops,
					   struct ftrace_regs *fregs)
{
}

NOKPROBE_SYMBOL(kprobe_ftrace_claim_fn);

static struct kprobe_ftrace_ops kprobe_ftrace_carrier __read_mostly = {
	.ops = { .func = kprobe_ftrace_handler,
		 .flags = FTRACE_OPS_FL_SAVE_REGS |
			  (KPROBE_FTRACE_IPMODIFY_ALWAYS ? FTRACE_OPS_FL_IPMODIFY : 0) },
};

static struct kprobe_ftrace_ops kprobe_ftrace_claim __read_mostly = {
	.ops = { .func = kprobe_ftrace_claim_fn,
		 .flags = FTRACE_OPS_FL_SAVE_REGS | FTRACE_OPS_FL_IPMODIFY },
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
 * unregistering a probe costs microseconds.  So a site disarmed leaves
 * its address in the carrier's filter for a while: the handler ignores
 * calls for an address whose site is gone or disarmed, and
 * ftrace_lazy_work takes out everything left there in one update, HZ / 10
 * later.  A site armed again at such an address in the meantime takes it
 * back without any update.  An ops that claims IPMODIFY is always left at
 * once: the claim would keep a livepatch out of the function.  Text that
 * is about to be freed flushes the lot first (kprobe_kill_sites_in()).
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

/* Keep @ip in the carrier's filter for now; false if that cannot be. */
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

/* Is @ip still in the carrier's filter, left there by a disarmed site? */
static bool kprobe_ftrace_lazy_has(unsigned long ip)
{
	struct ftrace_lazy_ip *l;

	hlist_for_each_entry(l, kprobe_ftrace_lazy_bucket(ip), node) {
		if (l->ip == ip)
			return true;
	}
	return false;
}

/* Take @ip back for a site armed again: is it still there? */
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

/* Take every address left in the carrier's filter out, in one update. */
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
	    kprobe_ftrace_ops_set(&kprobe_ftrace_carrier, ips, n, false))
		pr_warn("ftrace kept disarmed probes in its filter\n");
	kfree(ips);
}

/* Hits of @s come from the carrier (@on), or from nowhere. */
static void kprobe_ftrace_site_carry(struct kprobe_site *s, bool on)
{
	if (on)
		s->flags |= KSITE_ARMED;
	else
		s->flags &= ~KSITE_ARMED;
	WRITE_ONCE(s->fops, on ? &kprobe_ftrace_carrier.ops : NULL);
}

/* Is @s armed by our call, in no filter of ours? */
static bool kprobe_ftrace_site_pending(struct kprobe_site *s)
{
	return s->ftrace_call == KSITE_CALL_OURS || s->ftrace_call == KSITE_CALL_YIELDED;
}

/*
 * Entry probes go live at once.  Registering one probe on a function's
 * entry would otherwise cost a whole ftrace update, milliseconds, before
 * register_kprobe() returns.  So a site that makes no claim, while
 * ftrace's nop is there untouched, is first armed with a call of the
 * backend's own over the nop, to code that runs its probes as the ftrace
 * handler would (arch_kprobe_ftrace_call()).  Five bytes take the
 * backend three cross-CPU synchronisations to write, microseconds, and
 * the probe is live when they are done: a hit costs no trap and no
 * ftrace_ops dispatch.  ftrace_lazy_work later hands all such sites to
 * ftrace in one update of the carrier's filter, once registrations have
 * paused (kprobe_ftrace_hand_off_later()).  Ftrace's own write takes
 * the call over: it expects its nop there, kprobe_ftrace_owns() vouches
 * for our call, and ftrace rewrites the site through text_poke_bp(),
 * whose breakpoint handler emulates the new call meanwhile, so every call
 * is seen, by one path or the other.
 *
 * Another ftrace user's update of the function meanwhile (a tracer, a
 * livepatch, a BPF trampoline) leaves our call where it is
 * (kprobe_ftrace_hold()): the backend notes ftrace's new call, and makes
 * it after the probes' handlers.  That user sees every call, the probe
 * too, whether the user comes, goes, or stays past the hand-off.  A
 * pre_handler that redirects the call wins: the other user misses that
 * one, as it would behind a livepatch.  A hand-off that fails is retried
 * later, and our call keeps working meanwhile.
 *
 * site->ftrace_call says where a site is in this (under text_mutex):
 * KSITE_CALL_OURS, our call is there; KSITE_CALL_YIELDED, ftrace wrote
 * over it (the backend could not hold it); KSITE_CALL_HANDED, the carrier
 * took it, and the state ends with this batch.  A site that gains a
 * post_handler meanwhile is handed off at once, before its claim, so that
 * it never makes a claim while ftrace does not carry it.
 */
static unsigned int ftrace_call_count;	/* sites with ftrace_call set */
/* When the first of them was armed (jiffies); kprobe_mutex. */
static unsigned long ftrace_call_since;
/* The task whose ftrace update hands such sites over (under kprobe_mutex). */
static struct task_struct *kprobe_ftrace_updater;

/*
 * @s, armed by our call, leaves that state: ftrace carries it now, or it
 * is being disarmed.  Our call goes, unless ftrace wrote over it.  A
 * yielded site is checked too: ftrace gives up an update whose later
 * record fails its check (ftrace_bug()) after yielding the earlier ones,
 * and our call is then still there with nobody left to answer for it.
 * The write is checked against our call, so a site ftrace did rewrite is
 * left alone; ftrace writes only under text_mutex, which is held here.
 * text_mutex held; arch_kprobe_poke_finish() to follow.
 */
static void kprobe_ftrace_site_call_drop(struct kprobe_site *s)
{
	lockdep_assert_held(&text_mutex);
	arch_kprobe_ftrace_call(s, false);
	s->ftrace_call = KSITE_CALL_NONE;
	ftrace_call_count--;
}

/*
 * Sites of @batch armed by our call that kprobe_ftrace_sites_set_armed()
 * disarmed or handed to the carrier leave that state.
 */
void kprobe_ftrace_sites_call_settle(struct list_head *batch)
{
	struct kprobe_site *s;

	if (!ftrace_call_count)
		return;
	kprobe_text_lock();
	list_for_each_entry(s, batch, batch) {
		if (s->ftrace_call && (!(s->flags & KSITE_ARMED) ||
				       s->ftrace_call == KSITE_CALL_HANDED))
			kprobe_ftrace_site_call_drop(s);
	}
	arch_kprobe_poke_finish();
	kprobe_text_unlock();
}

/*
 * The hand-off's ftrace update holds kprobe_mutex for as long as it
 * takes ftrace (milliseconds, more for thousands of sites), and a tool
 * registering probes one call at a time would wait for it in the middle
 * of its burst.  So each site armed by our call pushes the hand-off back
 * to HZ / 10 after it, but no further than a second after the first
 * such site: one update after the burst.
 */
static void kprobe_ftrace_hand_off_later(void)
{
	unsigned long due = jiffies + HZ / 10;

	if (time_after(due, ftrace_call_since + HZ))
		due = ftrace_call_since + HZ;
	mod_delayed_work(system_wq, &ftrace_lazy_work,
			 time_after(due, jiffies) ? due - jiffies : 0);
}

/*
 * Arm the sites of @batch that can go live by our call, as above: live
 * when this returns, so the writes are finished here, not later as a
 * breakpoint's may be (kprobe_arm_sync_later()).
 */
static void kprobe_ftrace_sites_call_arm(struct list_head *batch)
{
	struct kprobe_site *s;
	unsigned int n = 0;

	if (READ_ONCE(kprobe_ftrace_disabled))
		return;
	kprobe_text_lock();
	list_for_each_entry(s, batch, batch) {
		if (!(s->flags & KSITE_FTRACE) || (s->flags & KSITE_ARMED) ||
		    KPROBE_FTRACE_IPMODIFY_ALWAYS ||
		    kprobe_ftrace_site_want_claim(s) ||
		    kprobe_ftrace_lazy_has((unsigned long)s->addr) ||
		    !arch_kprobe_ftrace_call(s, true))
			continue;
		s->ftrace_call = KSITE_CALL_OURS;
		kprobe_ftrace_site_carry(s, true);
		n++;
	}
	if (n) {
		if (ftrace_call_count == 0)
			ftrace_call_since = jiffies;
		ftrace_call_count += n;
		arch_kprobe_poke_finish();
		kprobe_ftrace_hand_off_later();
	}
	kprobe_text_unlock();
}

/* Hand every site armed by our call over to ftrace, in one update. */
static void kprobe_ftrace_call_hand_off(void)
{
	struct kprobe_site *s;
	unsigned long *ips;
	unsigned int n = 0;
	int err;

	lockdep_assert_held(&kprobe_mutex);
	if (!ftrace_call_count || READ_ONCE(kprobe_ftrace_disabled))
		return;
	ips = kmalloc_array(ftrace_call_count, sizeof(*ips), GFP_KERNEL);
	if (!ips)
		goto retry;
	/* Stop at the last one: most buckets hold none. */
	for_each_kprobe_site(s) {
		if (!s->ftrace_call)
			continue;
		ips[n++] = (unsigned long)s->addr;
		if (n == ftrace_call_count)
			goto collected;
	}
collected:
	WRITE_ONCE(kprobe_ftrace_updater, current);
	err = kprobe_ftrace_ops_set(&kprobe_ftrace_carrier, ips, n, true);
	WRITE_ONCE(kprobe_ftrace_updater, NULL);
	kfree(ips);
	if (err) {
		pr_warn("ftrace refused to take over %u entry probe(s): %d\n",
			n, err);
		goto retry;
	}
	kprobe_text_lock();
	for_each_kprobe_site(s) {
		if (!s->ftrace_call)
			continue;
		kprobe_ftrace_site_call_drop(s);
		if (!ftrace_call_count)
			goto dropped;
	}
dropped:
	arch_kprobe_poke_finish();
	kprobe_text_unlock();
	return;
retry:
	/* Our calls keep working meanwhile. */
	schedule_delayed_work(&ftrace_lazy_work, HZ);
}

/**
 * kprobe_ftrace_owns() - ftrace found other code than its own at a site
 * @ip: the ftrace call site
 *
 * Called by ftrace, under text_mutex, as it checks @ip before an update:
 * is what is there a call that kprobes wrote over ftrace's nop ("Entry
 * probes go live at once")?  If so, kprobe_ftrace_hold() answers for the
 * write that follows.
 *
 * Return: true if the text at @ip is kprobes'.
 */
bool kprobe_ftrace_owns(unsigned long ip)
{
	struct kprobe_site *s;
	bool ours;

	lockdep_assert_held(&text_mutex);
	rcu_read_lock();
	s = kprobe_site_find(ip);
	ours = s && s->ftrace_call == KSITE_CALL_OURS;
	rcu_read_unlock();
	return ours;
}

/**
 * kprobe_ftrace_hold() - ftrace is about to write over a site
 * @ip: the ftrace call site
 * @insn: what ftrace writes there (its nop, or a call)
 *
 * Called by ftrace, under text_mutex, for every site it is about to
 * write.  Kprobes' own call over ftrace's nop stays until the hand-off:
 * the backend notes @insn, and our call's handler, after the probes',
 * makes the call @insn makes.  So another ftrace user that enables the
 * function meanwhile gets every call too, and the probe loses none when
 * that user leaves.  The hand-off's own update (kprobe_ftrace_updater) is
 * written by ftrace.  Should the backend fail, ftrace's write takes our
 * call over, and the hand-off comes at once.
 *
 * Return: true if ftrace is to leave @ip alone (its record is updated).
 */
bool kprobe_ftrace_hold(unsigned long ip, const void *insn)
{
	struct kprobe_site *s;
	bool held = false;

	lockdep_assert_held(&text_mutex);
	/* The common case: no site is armed that way. */
	if (!ftrace_call_count)
		return false;
	rcu_read_lock();
	s = kprobe_site_find(ip);
	if (s && s->ftrace_call == KSITE_CALL_OURS &&
	    current != READ_ONCE(kprobe_ftrace_updater)) {
		held = arch_kprobe_ftrace_hold(s, insn);
		if (!held) {
			s->ftrace_call = KSITE_CALL_YIELDED;
			mod_delayed_work(system_wq, &ftrace_lazy_work, 0);
		}
	}
	rcu_read_unlock();
	return held;
}

static void kprobe_ftrace_lazy_fn(struct work_struct *work)
{
	mutex_lock(&kprobe_mutex);
	kprobe_ftrace_lazy_flush();
	kprobe_ftrace_call_hand_off();
	mutex_unlock(&kprobe_mutex);
}

/*
 * kprobe_ftrace_sites_set_armed() without the memory to name the @n sites
 * that change.  Arming fails, every site left as it was.  Disarming may
 * not fail, or a site nobody probes would stay armed for good: the sites
 * stop counting hits, and ftrace keeps calling the handler for them, which
 * finds nothing to do (and a claim, which keeps a livepatch out).
 */
static int kprobe_ftrace_sites_set_armed_nomem(struct list_head *batch,
					       bool arm, unsigned int n)
{
	struct kprobe_site *s;

	if (arm)
		return -ENOMEM;
	list_for_each_entry(s, batch, batch) {
		if (!(s->flags & KSITE_FTRACE))
			continue;
		kprobe_ftrace_site_carry(s, false);
		s->flags &= ~KSITE_FTRACE_CLAIM;
	}
	pr_warn("ftrace kept %u disarmed probe(s) in its filter: out of memory\n", n);
	return 0;
}

/*
 * The steps of kprobe_ftrace_sites_set_armed(), in their order: each is
 * one filter update, of the ops it names, for the sites it takes.
 */
enum kprobe_ftrace_step {
	KPROBE_FTRACE_HAND_OFF,	/* carrier: armed by a breakpoint, wants a claim */
	KPROBE_FTRACE_CLAIM,	/* claim: wants one it has not got */
	KPROBE_FTRACE_CARRY,	/* carrier: wants it, and has its claim if any */
	KPROBE_FTRACE_UNCLAIM,	/* claim: has one it no longer wants */
	KPROBE_FTRACE_UNCARRY,	/* carrier: in its filter, to be disarmed */
};

static bool kprobe_ftrace_step_takes(struct kprobe_site *s, bool arm,
				     enum kprobe_ftrace_step step)
{
	bool claim = arm && kprobe_ftrace_site_want_claim(s);
	bool claimed = s->flags & KSITE_FTRACE_CLAIM;
	bool armed = s->flags & KSITE_ARMED;

	if (!(s->flags & KSITE_FTRACE))
		return false;
	switch (step) {
	case KPROBE_FTRACE_HAND_OFF:
		return claim && kprobe_ftrace_site_pending(s);
	case KPROBE_FTRACE_CLAIM:
		return claim && !claimed && !kprobe_ftrace_site_pending(s);
	case KPROBE_FTRACE_CARRY:
		return arm && !armed && (!claim || claimed);
	case KPROBE_FTRACE_UNCLAIM:
		/* a claim whose carrier could not be had goes too */
		return claimed && !(claim && armed);
	case KPROBE_FTRACE_UNCARRY:
		return !arm && armed && !kprobe_ftrace_site_pending(s);
	}
	return false;
}

/* ftrace refused @step for @n sites: say so. */
static void kprobe_ftrace_step_failed(enum kprobe_ftrace_step step,
				      unsigned int n, int err)
{
	switch (step) {
	case KPROBE_FTRACE_HAND_OFF:
		pr_warn("ftrace refused to take over %u entry probe(s): %d\n", n, err);
		break;
	case KPROBE_FTRACE_CLAIM:
		pr_warn("ftrace refused to arm %u probe(s) with a post_handler: %d\n",
			n, err);
		break;
	case KPROBE_FTRACE_CARRY:
		pr_warn("ftrace refused to arm %u probe(s): %d\n", n, err);
		break;
	case KPROBE_FTRACE_UNCLAIM:
	case KPROBE_FTRACE_UNCARRY:
		/* Only allocation fails here: the sites stay in, unused. */
		pr_warn("ftrace kept %u disarmed probe(s) in its filter\n", n);
		break;
	}
}

/* What @step, done, leaves @s as. */
static void kprobe_ftrace_step_done(struct kprobe_site *s,
				    enum kprobe_ftrace_step step)
{
	switch (step) {
	case KPROBE_FTRACE_HAND_OFF:
		/*
		 * Not under text_mutex: ftrace's call is in place of the
		 * int3 by now, so its hooks never look at this site again.
		 */
		WRITE_ONCE(s->ftrace_call, KSITE_CALL_HANDED);
		break;
	case KPROBE_FTRACE_CLAIM:
		s->flags |= KSITE_FTRACE_CLAIM;
		break;
	case KPROBE_FTRACE_CARRY:
		kprobe_ftrace_site_carry(s, true);
		break;
	case KPROBE_FTRACE_UNCLAIM:
		s->flags &= ~KSITE_FTRACE_CLAIM;
		break;
	case KPROBE_FTRACE_UNCARRY:
		kprobe_ftrace_site_carry(s, false);
		break;
	}
}

/*
 * Do @step for the sites of @batch it takes, in one update of @kf's
 * filter, with @ips room enough for their addresses.  A step that arms
 * leaves its sites as they were when ftrace refuses; one that disarms
 * does not fail: a site ftrace keeps in the filter is forgotten there.
 */
static int kprobe_ftrace_step(struct list_head *batch, bool arm,
			      enum kprobe_ftrace_step step,
			      struct kprobe_ftrace_ops *kf, unsigned long *ips)
{
	bool add = step <= KPROBE_FTRACE_CARRY;
	struct kprobe_site *s;
	unsigned int n = 0;
	int err;

	list_for_each_entry(s, batch, batch) {
		if (kprobe_ftrace_step_takes(s, arm, step))
			ips[n++] = (unsigned long)s->addr;
	}
	err = kprobe_ftrace_ops_set(kf, ips, n, add);
	if (err)
		kprobe_ftrace_step_failed(step, n, err);
	if (err && add)
		return err;
	list_for_each_entry(s, batch, batch) {
		if (kprobe_ftrace_step_takes(s, arm, step))
			kprobe_ftrace_step_done(s, step);
	}
	return 0;
}

/*
 * Arm (@arm) the ftrace sites of @batch, with the claim their probes call
 * for, or disarm them.  A site armed by its breakpoint that now wants a
 * claim goes to the carrier first (see "Entry probes go live at once").
 * A site that is not armed yet makes its claim before the carrier takes
 * it, so that it never runs a post_handler without the claim.  When
 * arming fails (another IPMODIFY user on the function, no memory) the
 * sites concerned stay as they were and the error is returned; disarming
 * does not fail.  Once ftrace is dead nothing reaches the handler any
 * more: sites are only marked.
 */
int kprobe_ftrace_sites_set_armed(struct list_head *batch, bool arm)
{
	struct kprobe_ftrace_ops *carrier = &kprobe_ftrace_carrier;
	struct kprobe_ftrace_ops *claim = &kprobe_ftrace_claim;
	struct kprobe_site *s;
	unsigned long *ips;
	unsigned int n = 0;
	int ret = 0;

	if (arm)
		kprobe_ftrace_sites_call_arm(batch);
	list_for_each_entry(s, batch, batch) {
		if (!(s->flags & KSITE_FTRACE) || kprobe_site_armed_as(s, arm))
			continue;
		if (READ_ONCE(kprobe_ftrace_disabled)) {
			kprobe_ftrace_site_carry(s, false);
			s->flags &= ~KSITE_FTRACE_CLAIM;
			if (arm)
				ret = -ENODEV;
			continue;
		}
		/* armed by a breakpoint: in no filter, nothing to update */
		if (!arm && kprobe_ftrace_site_pending(s)) {
			kprobe_ftrace_site_carry(s, false);
			continue;
		}
		n++;
	}
	if (!n)
		return ret;
	ips = kmalloc_array(n, sizeof(*ips), GFP_KERNEL);
	if (!ips)
		return kprobe_ftrace_sites_set_armed_nomem(batch, arm, n);

	if (arm) {
		WRITE_ONCE(kprobe_ftrace_updater, current);
		ret = kprobe_ftrace_step(batch, arm, KPROBE_FTRACE_HAND_OFF,
					 carrier, ips) ?: ret;
		WRITE_ONCE(kprobe_ftrace_updater, NULL);
		ret = kprobe_ftrace_step(batch, arm, KPROBE_FTRACE_CLAIM,
					 claim, ips) ?: ret;
		/* An address still in the carrier's filter needs no update. */
		list_for_each_entry(s, batch, batch) {
			if (!KPROBE_FTRACE_IPMODIFY_ALWAYS &&
			    kprobe_ftrace_step_takes(s, arm, KPROBE_FTRACE_CARRY) &&
			    kprobe_ftrace_lazy_get((unsigned long)s->addr))
				kprobe_ftrace_site_carry(s, true);
		}
		ret = kprobe_ftrace_step(batch, arm, KPROBE_FTRACE_CARRY,
					 carrier, ips) ?: ret;
	} else {
		/* A disarmed address may stay in the carrier's filter a while. */
		list_for_each_entry(s, batch, batch) {
			if (!KPROBE_FTRACE_IPMODIFY_ALWAYS &&
			    kprobe_ftrace_step_takes(s, arm, KPROBE_FTRACE_UNCARRY) &&
			    kprobe_ftrace_lazy_add((unsigned long)s->addr))
				kprobe_ftrace_site_carry(s, false);
		}
	}
	kprobe_ftrace_step(batch, arm, KPROBE_FTRACE_UNCLAIM, claim, ips);
	if (!arm)
		kprobe_ftrace_step(batch, arm, KPROBE_FTRACE_UNCARRY, carrier, ips);
	kfree(ips);
	return ret;
}
