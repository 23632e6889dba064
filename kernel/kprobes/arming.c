// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Arming and disarming sites, in batches, and releasing dead sites.
 */

#define pr_fmt(fmt) "kprobes: " fmt

#include <linux/kprobes.h>
#include <linux/kprobes_arch.h>
#include <linux/cpu.h>
#include <linux/memory.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "internal.h"

/*
 * Callers collect the sites whose armed state must change on a list
 * (linked through site->batch) and apply it in one go: one ftrace filter
 * update for the ftrace sites, and for breakpoint sites one text_mutex
 * section with one cross-CPU synchronisation (for arming, shared between
 * batches: see arm_sync_work).
 */

static bool kprobe_site_has_enabled(struct kprobe_site *s)
{
	struct kprobe *p;

	list_for_each_entry(p, &s->probes, list) {
		if (!kprobe_disabled(p))
			return true;
	}
	return false;
}

/*
 * Every write of kernel text the core asks of a backend is made under
 * these: text_mutex, and outside it the CPU hotplug lock where the
 * backend's pokes stop_machine_cpuslocked() (KPROBE_POKE_CPUS_LOCKED),
 * in the kernel's order (see internal.h).
 */
void kprobe_text_lock(void)
{
	if (KPROBE_POKE_CPUS_LOCKED)
		cpus_read_lock();
	mutex_lock(&text_mutex);
}

void kprobe_text_unlock(void)
{
	mutex_unlock(&text_mutex);
	if (KPROBE_POKE_CPUS_LOCKED)
		cpus_read_unlock();
}

/*
 * The hit paths' shortcuts (s->solo, s->bp_solo, s->duo: kprobes_arch.h)
 * are written here only.  @p is leaving @s: no hit may take a shortcut
 * to it from now on, before kprobe_site_want_armed() recomputes them.
 */
void kprobe_site_shortcuts_drop(struct kprobe_site *s, struct kprobe *p)
{
	if (READ_ONCE(s->solo) == p) {
		WRITE_ONCE(s->solo, NULL);
		WRITE_ONCE(s->bp_solo, NULL);
	}
	WRITE_ONCE(s->duo, NULL);
}

/* Recompute s->bp_solo from s->solo and the flags (kprobes_arch.h). */
void kprobe_site_bp_solo_update(struct kprobe_site *s)
{
	WRITE_ONCE(s->bp_solo, s->flags & (KSITE_POST | KSITE_FAULT |
					   KSITE_OPT_READY | KSITE_ARCH_SLOW) ?
		   NULL : s->solo);
}

/*
 * Recompute KSITE_POST, KSITE_FAULT and the hit paths' shortcuts (s->solo,
 * s->duo); say whether the site should be armed.
 */
bool kprobe_site_want_armed(struct kprobe_site *s)
{
	struct kprobe *p, *solo = NULL, *duo = NULL;
	bool post = false, pres = true, faults = false;
	int enabled = 0, n = 0;

	list_for_each_entry(p, &s->probes, list) {
		n++;
		if (kprobe_disabled(p))
			continue;
		if (p->post_handler)
			post = true;
		if (kprobe_wants_faults(p))
			faults = true;
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
	/*
	 * A fault_handler needs the backend to know which hit a fault is
	 * in: no shortcut, which keeps no record of the hit.
	 */
	if (faults)
		s->flags |= KSITE_FAULT;
	else
		s->flags &= ~KSITE_FAULT;
	WRITE_ONCE(s->solo, !faults && enabled == 1 && solo->pre_handler ?
		   solo : NULL);
	WRITE_ONCE(s->duo, !faults && n == 2 && enabled == 2 && pres && !post ?
		   duo : NULL);
	kprobe_site_bp_solo_update(s);

	return (!kprobes_all_disarmed || (s->flags & KSITE_PINNED)) &&
	       !(s->flags & KSITE_GONE) &&
	       kprobe_site_has_enabled(s);
}

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
static void kprobe_arm_sync_fn(struct work_struct *work)
{
	kprobe_text_lock();
	arch_kprobe_poke_finish();
	kprobe_text_unlock();
}

static DECLARE_DELAYED_WORK(arm_sync_work, kprobe_arm_sync_fn);

/* Make the breakpoints written so far visible everywhere, within a tick. */
void kprobe_arm_sync_later(void)
{
	schedule_delayed_work(&arm_sync_work, 1);
}

/*
 * Is @s armed the way its probes want (want: armed at all)?  An armed
 * ftrace site must also claim IPMODIFY, or not, as its probes want.
 */
bool kprobe_site_armed_as(struct kprobe_site *s, bool want)
{
	if (!!(s->flags & KSITE_ARMED) != want)
		return false;
	return !want || !(s->flags & KSITE_FTRACE) ||
	       !!(s->flags & KSITE_FTRACE_CLAIM) ==
	       kprobe_ftrace_site_want_claim(s);
}

/*
 * Bring every site on @batch to the armed state @arm.  Breakpoint sites
 * cannot fail.  Ftrace sites go in one filter update per ftrace_ops,
 * which can (another IPMODIFY user on the function, no memory): they are
 * then left as they were and the error is returned.
 */
int kprobe_sites_set_armed(struct list_head *batch, bool arm)
{
	unsigned int nbp = 0, nftrace = 0;
	struct kprobe_site *s;
	int ret;

	list_for_each_entry(s, batch, batch) {
		if (s->flags & KSITE_FTRACE)
			nftrace++;
		else if (!!(s->flags & KSITE_ARMED) != arm)
			nbp++;
	}
	if (nbp) {
		kprobe_text_lock();
		list_for_each_entry(s, batch, batch) {
			if (!!(s->flags & KSITE_ARMED) == arm ||
			    (s->flags & KSITE_FTRACE))
				continue;
			arch_kprobe_poke(s, arm);
			s->flags ^= KSITE_ARMED;
			/* A re-execution may have run unseen: no stale note. */
			if (arm)
				WRITE_ONCE(s->replay, NULL);
		}
		if (arm && !KPROBE_POKE_IN_FINISH)
			kprobe_arm_sync_later();
		else
			arch_kprobe_poke_finish();
		kprobe_text_unlock();
	}
	if (!nftrace)
		return 0;
	ret = kprobe_ftrace_sites_set_armed(batch, arm);
	kprobe_ftrace_sites_call_settle(batch);
	return ret;
}

/*
 * Move each site of @batch to the state its probes call for.  A site that
 * is to be disarmed or gains a post_handler loses its jump first (one
 * batch); sites that now qualify for jump optimization are queued.
 */
void kprobe_sites_update(struct list_head *batch)
{
	struct kprobe_site *s, *tmp;
	LIST_HEAD(to_arm);
	LIST_HEAD(to_disarm);
	LIST_HEAD(unopt);

	list_for_each_entry_safe(s, tmp, batch, batch) {
		bool want = kprobe_site_want_armed(s);

		if (!want || (s->flags & (KSITE_POST | KSITE_FAULT)))
			kprobe_opt_leave(s, &unopt);
		if (kprobe_site_armed_as(s, want))
			continue;
		list_move_tail(&s->batch, want ? &to_arm : &to_disarm);
	}
	kprobe_opt_unoptimize(&unopt);
	/* Disarming an ftrace site only fails on allocation: then it stays. */
	if (kprobe_sites_set_armed(&to_disarm, false))
		pr_warn("some probes could not be disarmed\n");
	if (kprobe_sites_set_armed(&to_arm, true))
		pr_warn("some probes could not be armed\n");
	list_splice_tail(&to_arm, batch);
	list_splice_tail(&to_disarm, batch);
	list_for_each_entry(s, batch, batch)
		kprobe_opt_consider(s);
}

/* Free a site nobody can reach any more, with its hit counter. */
void kprobe_site_free(struct kprobe_site *s)
{
	kprobe_site_hits_put(s);
	kfree(s);
}

static void kprobe_site_free_rcu(struct rcu_head *head)
{
	kprobe_site_free(container_of(head, struct kprobe_site, rcu));
}

/*
 * Free sites after the grace period the caller already waited for: no CPU
 * can be running their handlers or their out-of-line copy any more.
 */
void kprobe_sites_release(struct list_head *dead)
{
	struct kprobe_site *s, *tmp;

	list_for_each_entry_safe(s, tmp, dead, batch) {
		list_del(&s->batch);
		arch_kprobe_site_release(s);
		/*
		 * A detour names its site, and a CPU may still be on its way
		 * from the jump to the handler (see kprobe_ool_sync()): such a site
		 * waits like the detour itself.
		 */
		if (s->flags & KSITE_OPT_DETOUR) {
			kprobe_ool_free_later(NULL, s);
			continue;
		}
		/*
		 * The caller's grace period already covers the hit path; the
		 * deferred free only keeps a debugfs-free, lock-free reader of
		 * the hash from ever racing with the kfree.
		 */
		call_rcu(&s->rcu, kprobe_site_free_rcu);
	}
}

/* Dead sites whose release waits for a grace period off the caller's path. */
struct kprobe_graveyard {
	struct rcu_work		rwork;
	struct list_head	sites;
};

static void kprobe_graveyard_fn(struct work_struct *work)
{
	struct kprobe_graveyard *g =
		container_of(to_rcu_work(work), struct kprobe_graveyard, rwork);

	kprobe_sites_release(&g->sites);
	kfree(g);
}

/*
 * Release the sites on @dead after an RCU grace period, without waiting
 * for it: the hit paths of other sites may still walk a hash chain through
 * them, and a CPU may still run a boosted copy in their slots.  Only sites
 * without a detour come here (see unregister_kprobes()).
 */
void kprobe_sites_release_later(struct list_head *dead)
{
	struct kprobe_graveyard *g;

	if (list_empty(dead))
		return;
	g = kmalloc(sizeof(*g), GFP_KERNEL);
	if (!g) {
		synchronize_rcu();
		kprobe_sites_release(dead);
		return;
	}
	INIT_LIST_HEAD(&g->sites);
	list_splice_init(dead, &g->sites);
	INIT_RCU_WORK(&g->rwork, kprobe_graveyard_fn);
	queue_rcu_work(system_wq, &g->rwork);
}

