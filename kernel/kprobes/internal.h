/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the files of the kprobes core share, grouped by the file that
 * defines it.  The backend's side of the contract is <linux/kprobes_arch.h>;
 * nothing here is visible outside kernel/kprobes/.
 *
 * Locking: kprobe_mutex serialises every change of sites and probes.  The
 * hit path runs with interrupts (breakpoint) or preemption (ftrace) off and
 * only reads RCU-protected lists; a site or a probe leaves those lists and
 * is only reused or freed after a grace period.
 *
 * Lock order, outermost first (a path may skip any of them, never reverse
 * two):
 *
 *   kprobe_mutex
 *     ftrace's ftrace_lock      inside ftrace_set_filter_ips() and
 *                               (un)register_ftrace_function() (ftrace.c);
 *                               ftrace takes the hotplug lock and
 *                               text_mutex under it, as below
 *     jump_label_lock()         check.c's index of jump labels; nothing
 *                               is taken under it
 *     module_mutex              blacklist.c's walk of a coming module's
 *                               symbols; nothing is taken under it
 *     cpus_read_lock()          where the backend's pokes
 *                               stop_machine_cpuslocked()
 *                               (KPROBE_POKE_CPUS_LOCKED: arm64, the
 *                               bridge), as static keys and ftrace take
 *                               it before text_mutex
 *       text_mutex              kprobe_text_lock() takes both (arming.c)
 *         kprobe_slot_mutex     slots.c; a bridged backend takes a slot
 *                               from arch_prepare_kprobe(), under the two
 *                               above
 *
 * kprobe_ool_sync() takes the hotplug lock (without TASKS_RCU); it is
 * called from work items and the optimizer, holding none of these.
 */
#ifndef _KERNEL_KPROBES_INTERNAL_H
#define _KERNEL_KPROBES_INTERNAL_H

#include <linux/kprobes.h>
#include <linux/kprobes_arch.h>
#include <linux/list.h>
#include <linux/mutex.h>

struct module;

/*
 * kprobe_site.flags that only the core reads or writes (the backend's are
 * in <linux/kprobes_arch.h>).
 */
#define KSITE_ARMED	 BIT(16) /* breakpoint (or ftrace hook) in place */
#define KSITE_OPT_QUEUED BIT(17) /* on the optimizer's queue */
#define KSITE_OPT_NEVER	 BIT(18) /* the backend refused to optimize it */
#define KSITE_OPT_DETOUR BIT(19) /* has a detour: freed like OOL text */
#define KSITE_OPT_JUMPED BIT(20) /* its jump was written: see unregister */
#define KSITE_FTRACE_CLAIM BIT(21) /* in the claim ops' filter (ftrace.c) */

/* kprobe_site.ftrace_call (ftrace.c, "Entry probes go live at once") */
enum {
	KSITE_CALL_NONE,
	KSITE_CALL_OURS,	/* our call over ftrace's nop */
	KSITE_CALL_YIELDED,	/* ftrace's write took it over */
	KSITE_CALL_HANDED,	/* in the carrier's filter now; this batch ends it */
};

/* Every site in the hash, in no particular order; kprobe_mutex held. */
#define for_each_kprobe_site(s)						\
	for (unsigned int __bkt = 0; __bkt < ARRAY_SIZE(kprobe_site_hash); __bkt++) \
		hlist_for_each_entry(s, &kprobe_site_hash[__bkt], node)

/* The same, for a walk that may take @s out of the hash. */
#define for_each_kprobe_site_safe(s, tmp)				\
	for (unsigned int __bkt = 0; __bkt < ARRAY_SIZE(kprobe_site_hash); __bkt++) \
		hlist_for_each_entry_safe(s, tmp, &kprobe_site_hash[__bkt], node)

/* Take every site off a batch list (site->batch), leaving each unlinked. */
static inline void kprobe_batch_clear(struct list_head *batch)
{
	while (!list_empty(batch))
		list_del_init(batch->next);
}

/* The pre_handler of every kretprobe (kretprobe.c). */
int kretprobe_enter(struct kprobe *p, struct pt_regs *regs);

/* Is @p the kprobe of a kretprobe? */
static inline bool kprobe_is_return(struct kprobe *p)
{
	return IS_ENABLED(CONFIG_KRETPROBES) &&
	       p->pre_handler == kretprobe_enter;
}

/* ---- core.c: sites, registration, enable/disable, going text ----- */
extern struct mutex kprobe_mutex;
extern bool kprobes_all_disarmed;
extern struct list_head kprobe_gone_sites;
extern struct kprobe kprobe_busy;
struct kprobe_site *kprobe_site_of(struct kprobe *p);
struct kprobe **kprobe_array_of(void * const *objs, int num, size_t offset,
				gfp_t gfp);
void kprobe_unregister_embedded(void * const *objs, int num, size_t offset);
void kprobes_all_sites_update(void);

/* ---- slots.c: out-of-line slots and the wait for OOL code -------- */
struct kprobe_slot_pool;
void kprobe_ool_sync(void);
void kprobe_ool_free_later(struct kprobe_slot_pool *pool, void *ptr);
void __init kprobe_ool_sync_init(void);
void __init kprobe_slots_init(void);

/* ---- blacklist.c ---------------------------------------------------- */
/*
 * Only some architectures' linker scripts have an entry text section
 * (ENTRY_TEXT): weak, so that elsewhere both are NULL (an empty range).
 */
extern char __entry_text_start[] __weak;
extern char __entry_text_end[] __weak;

/* One forbidden range: a function, or an area without symbols. */
struct kprobe_blacklist_entry {
	struct list_head	list;	/* on kprobe_blacklist, RCU */
	unsigned long		start;
	unsigned long		end;
	struct rcu_head		rcu;
};

extern struct list_head kprobe_blacklist;
void __init kprobe_blacklist_init(void);
void kprobe_blacklist_add_module(struct module *mod);
void kprobe_blacklist_remove_module(struct module *mod);

/* ---- arming.c: arming and disarming in batches, releasing sites ---- */
void kprobe_text_lock(void);
void kprobe_text_unlock(void);
void kprobe_site_shortcuts_drop(struct kprobe_site *s, struct kprobe *p);
void kprobe_site_bp_solo_update(struct kprobe_site *s);
bool kprobe_site_want_armed(struct kprobe_site *s);
bool kprobe_site_armed_as(struct kprobe_site *s, bool want);
int kprobe_sites_set_armed(struct list_head *batch, bool arm);
void kprobe_sites_update(struct list_head *batch);
void kprobe_sites_release(struct list_head *dead);
void kprobe_site_free(struct kprobe_site *s);
void kprobe_sites_release_later(struct list_head *dead);
void kprobe_arm_sync_later(void);

/* ---- check.c: what an address names, and whether it may be probed -- */
kprobe_opcode_t *kprobe_resolve_addr(kprobe_opcode_t *addr, const char *sym,
				     unsigned long offset, bool *on_entry,
				     struct kprobe_func *f);
int kprobe_check_text(unsigned long addr, const struct kprobe_func *f);
unsigned long kprobe_ftrace_site_of(unsigned long addr);
void kprobe_reserved_add_module(struct module *mod);
void kprobe_reserved_remove_module(struct module *mod);

/* ---- ftrace.c: sites carried by ftrace (CONFIG_KPROBES_ON_FTRACE) -- */
/* Should ftrace site @s, armed, claim IPMODIFY on its function? */
static inline bool kprobe_ftrace_site_want_claim(struct kprobe_site *s)
{
	return !KPROBE_FTRACE_IPMODIFY_ALWAYS && (s->flags & KSITE_POST);
}

#ifdef CONFIG_KPROBES_ON_FTRACE
void kprobe_ftrace_lazy_flush(void);
void kprobe_ftrace_sites_call_settle(struct list_head *batch);
int kprobe_ftrace_sites_set_armed(struct list_head *batch, bool arm);
#else
static inline void kprobe_ftrace_lazy_flush(void) { }
static inline void kprobe_ftrace_sites_call_settle(struct list_head *batch) { }

/* Without it no ftrace site is ever created: nothing to arm. */
static inline int kprobe_ftrace_sites_set_armed(struct list_head *batch,
						bool arm)
{
	return 0;
}
#endif

/* ---- optimizer.c: jump optimization (CONFIG_OPTPROBES) ------------- */
#ifdef CONFIG_OPTPROBES
void kprobe_opt_leave(struct kprobe_site *s, struct list_head *unopt);
void kprobe_opt_unoptimize(struct list_head *unopt);
void kprobe_opt_consider(struct kprobe_site *s);
void kprobe_opt_neighbours(unsigned long addr, bool arrive);
void kprobe_opt_forget(struct kprobe_site *s);
#else
static inline void kprobe_opt_leave(struct kprobe_site *s,
				    struct list_head *unopt) { }
static inline void kprobe_opt_unoptimize(struct list_head *unopt) { }
static inline void kprobe_opt_consider(struct kprobe_site *s) { }
static inline void kprobe_opt_neighbours(unsigned long addr, bool arrive) { }
static inline void kprobe_opt_forget(struct kprobe_site *s) { }
#endif

/* ---- bridge_opt.c: jump optimization on a bridged backend ---------- */
#if defined(CONFIG_KPROBES_BRIDGE) && defined(CONFIG_OPTPROBES)
void kpb_opt_release(struct kprobe_site *s);
#else
static inline void kpb_opt_release(struct kprobe_site *s) { }
#endif

/* ---- kretprobe.c: return probes (CONFIG_KRETPROBES) ---------------- */
#ifdef CONFIG_KRETPROBES
void kretprobe_init(void);
void kretprobe_detach(struct kprobe *p);
void kretprobe_release(struct kprobe *p);
#else
static inline void kretprobe_init(void) { }
static inline void kretprobe_detach(struct kprobe *p) { }
static inline void kretprobe_release(struct kprobe *p) { }
#endif

/* ---- compat.c: jprobes, fault_handler (CONFIG_KPROBES_COMPAT) ------ */
#ifdef CONFIG_KPROBES_COMPAT
bool kprobe_is_jprobe(struct kprobe *p);

/* Does @p want to hear of faults (arming.c: KSITE_FAULT)? */
static inline bool kprobe_wants_faults(struct kprobe *p)
{
	return p->fault_handler && !kprobe_is_return(p);
}
#else
static inline bool kprobe_is_jprobe(struct kprobe *p)
{
	return false;
}

static inline bool kprobe_wants_faults(struct kprobe *p)
{
	return false;
}
#endif

/* ---- stats.c: hit counts ---------------------------------------------- */
int kprobe_site_hits_get(struct kprobe_site *s);
void kprobe_site_hits_put(struct kprobe_site *s);
unsigned long kprobe_site_hits(struct kprobe_site *s);
unsigned long kprobe_hits(struct kprobe *p);
void kprobe_hits_toggle(struct kprobe *p);

#endif /* _KERNEL_KPROBES_INTERNAL_H */
