/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The contract between the generic kprobes core (kernel/kprobes/) and an
 * architecture backend (arch/<arch>/kernel/kprobes/).
 *
 * The core owns probe *sites*: one per probed address, shared by every
 * struct kprobe registered there.  It resolves and validates addresses,
 * keeps the site hash, the blacklist, the out-of-line slot pages, module and
 * init-memory life cycles, debugfs, and decides when a site is armed.
 *
 * The backend owns what depends on the instruction set: deciding whether an
 * instruction can be probed and preparing its out-of-line copy, writing and
 * removing the breakpoint, taking the trap, executing (or emulating) the
 * probed instruction, and recovering from faults while it does.
 *
 * Life of a site, as seen by the backend:
 *
 *   arch_kprobe_site_prepare()        registration, kprobe_mutex held
 *   arch_kprobe_poke(s, true) ...     arming, text_mutex held, many sites
 *   arch_kprobe_poke_finish()         once per batch, or per tick
 *   ...hits: kprobe_site_find(), kprobe_site_pre(), kprobe_site_post()...
 *   arch_kprobe_poke(s, false) ...    disarming, same batching
 *   arch_kprobe_poke_finish()
 *   -- the core waits for every CPU to leave the hit path (one RCU grace
 *      period per batch) --
 *   arch_kprobe_site_release()        the copy and slot may go
 *
 * Hit-path rules: everything the backend calls from a trap runs with
 * interrupts off and must be NOKPROBE; nothing there takes a lock or
 * allocates.
 *
 * The backend also defines current_kprobe, the per-CPU pointer to the
 * probe being handled: its hit path is what keeps it.
 *
 * An architecture that has no backend on this contract keeps the one it
 * had, driven by kernel/kprobes/bridge.c (CONFIG_KPROBES_BRIDGE, see
 * <linux/kprobes_bridge.h>), which implements the backend's side here.
 * It leaves the bridge by selecting HAVE_KPROBES_NATIVE with a backend of
 * its own.
 */
#ifndef _LINUX_KPROBES_ARCH_H
#define _LINUX_KPROBES_ARCH_H

#include <linux/kprobes.h>
#include <linux/hash.h>
#include <linux/rculist.h>

/*
 * kprobe_site.flags the backend reads (written by the core under
 * kprobe_mutex, except KSITE_ARCH_SLOW).  The core keeps its own flags in
 * the bits from 16 up (kernel/kprobes/internal.h).
 */
#define KSITE_GONE	BIT(1)	/* the text was freed: never touch it again */
#define KSITE_FTRACE	BIT(2)	/* on an ftrace call site: carried by ftrace */
#define KSITE_POST	BIT(3)	/* some enabled probe here has a post_handler */
/* Some enabled probe here has a fault_handler (CONFIG_KPROBES_COMPAT). */
#define KSITE_FAULT	BIT(4)
/* Jump optimization (CONFIG_OPTPROBES, kernel/kprobes/optimizer.c): */
#define KSITE_OPTIMIZED	BIT(6)	/* the jump to the detour is in the text */
#define KSITE_OPT_READY	BIT(7)	/* hits may run the detour's copy */
/*
 * Set by arch_kprobe_site_prepare(), the only flags it may write: no
 * one-trap shortcut for this site; armed even while every probe is
 * disarmed (a bridged backend's return trampoline, see bridge.c).
 */
#define KSITE_ARCH_SLOW	BIT(10)
#define KSITE_PINNED	BIT(11)

struct ftrace_ops;
struct kprobe_hits_block;

struct kprobe_site {
	struct hlist_node	node;	/* site hash bucket, RCU */
	struct list_head	probes;	/* kprobe.list, registration order, RCU */
	/* The hit paths' shortcuts, written by the core's arming.c only. */
	struct kprobe		*solo;	/* see kprobe_site_solo() */
	struct kprobe		*duo;	/* see kprobe_site_duo() */
	struct kprobe		*bp_solo;	/* see kprobe_site_bp_solo() */
	kprobe_opcode_t		*addr;	/* the probed instruction */
	unsigned long __percpu	*hits;	/* see kprobe_site_hit() */
	struct kprobe_hits_block *hits_block;	/* the core's: where *hits lives */
	unsigned long		flags;	/* KSITE_*, written under kprobe_mutex */
	/* The ftrace_ops that carries an armed ftrace site, else NULL (ftrace.c). */
	struct ftrace_ops	*fops;
	/* an ftrace site armed by our call (kernel/kprobes/ftrace.c); text_mutex */
	u8			ftrace_call;
	struct list_head	batch;	/* arm/disarm/free batch, kprobe_mutex */
	struct list_head	opt;	/* optimizer queue or batch, kprobe_mutex */
	/* The task that will run the instruction again (kprobe_replay_take()). */
	struct task_struct	*replay;
	struct rcu_head		rcu;
	struct arch_kprobe_site	arch;	/* the backend's own state */
};

/* ---- Provided by the backend --------------------------------------- */

/*
 * Check that s->addr holds an instruction the backend can probe, and
 * prepare whatever a hit will need (the out-of-line copy in a slot from
 * kprobe_slot_alloc(), its classification).  Also store the instruction's
 * first byte in *opcode, and set KSITE_ARCH_SLOW in s->flags if the
 * backend's hit path cannot take its shortcut there, KSITE_PINNED if the
 * site must stay armed whatever its probes want.  Returns 0, -EINVAL (cannot be probed),
 * -EILSEQ (does not decode) or -ENOMEM.  Process context, may sleep.
 */
int arch_kprobe_site_prepare(struct kprobe_site *s, kprobe_opcode_t *opcode);

/* Undo arch_kprobe_site_prepare(); no CPU can be using the site any more. */
void arch_kprobe_site_release(struct kprobe_site *s);

/*
 * Is @addr the first byte of an instruction, decoding from the start of its
 * function (@addr - @offset)?  Used to reject probes in the middle of an
 * instruction with -EILSEQ.
 */
bool arch_kprobe_on_insn_boundary(unsigned long addr, unsigned long offset);

/*
 * Write (arm) or restore (!arm) the breakpoint of a breakpoint site.  The
 * caller holds text_mutex and batches: the writes need not be visible to
 * other CPUs until arch_kprobe_poke_finish() returns.  The core calls that
 * at once after disarming, but up to a tick later after arming (sharing
 * it between callers), so an armed breakpoint must be safe to hit as soon
 * as it is written.
 */
void arch_kprobe_poke(struct kprobe_site *s, bool arm);
void arch_kprobe_poke_finish(void);

/*
 * A backend whose breakpoint cannot go in with a single write that CPUs
 * running the text may meet halfway (arm64: see its asm/kprobes.h)
 * defines KPROBE_POKE_IN_FINISH to 1 in <asm/kprobes.h>: its
 * arch_kprobe_poke() only queues, and the core calls
 * arch_kprobe_poke_finish() at once after arming too, so that a probe is
 * live when its registration returns.
 */
#ifndef KPROBE_POKE_IN_FINISH
#define KPROBE_POKE_IN_FINISH	0
#endif

/*
 * A backend whose ftrace handler does not check that a hit comes from the
 * ftrace_ops that s->fops names defines KPROBE_FTRACE_IPMODIFY_ALWAYS to 1
 * (the bridge does: it is the architecture's kprobe_ftrace_handler()).
 * The ops that carries every armed ftrace site then claims
 * FTRACE_OPS_FL_IPMODIFY itself; otherwise a second ops, whose callback
 * does nothing, makes that claim for the sites with a post_handler
 * (kernel/kprobes/ftrace.c), and only calls from s->fops count.
 */
#ifndef KPROBE_FTRACE_IPMODIFY_ALWAYS
#define KPROBE_FTRACE_IPMODIFY_ALWAYS	0
#endif

/*
 * A backend whose arch_kprobe_poke() writes with
 * stop_machine_cpuslocked() defines KPROBE_POKE_CPUS_LOCKED to 1 (arm64
 * and the bridge do): the core then takes the CPU hotplug lock before
 * text_mutex around its pokes, of breakpoints and of jumps.
 */
#ifndef KPROBE_POKE_CPUS_LOCKED
#define KPROBE_POKE_CPUS_LOCKED	0
#endif

/*
 * An ftrace site (KSITE_FTRACE) armed by a call of the backend's own until
 * ftrace carries it: replace ftrace's nop at s->addr with a call to code
 * that runs the site's probes as the ftrace handler would, or (!arm) put
 * back what ftrace wrote last (its nop, or the call
 * arch_kprobe_ftrace_hold() kept).  False, and nothing written, when the
 * text there is not what is expected.  The write is done, and the site
 * live or gone on every CPU, once arch_kprobe_poke_finish() returns.
 * Caller holds text_mutex.
 */
bool arch_kprobe_ftrace_call(struct kprobe_site *s, bool arm);

/*
 * Ftrace is about to write @insn (its nop, or a call) over the ftrace
 * site @s while our call arms it (kprobe_ftrace_hold()).  Keep our call,
 * and from now on make, after the probes' handlers, the call @insn makes
 * (none for the nop).  arch_kprobe_ftrace_call(s, false) then puts @insn
 * there.  False, and nothing written, if that cannot be done.  Caller
 * holds text_mutex.
 */
bool arch_kprobe_ftrace_hold(struct kprobe_site *s, const void *insn);

/* Add the architecture's own forbidden ranges with kprobe_add_area_blacklist(). */
int arch_populate_kprobe_blacklist(void);

/*
 * Where a probe @offset bytes into the function that starts at @addr
 * really goes, skipping things like an ENDBR landing pad; *on_func_entry
 * tells whether that is still the function's entry.  The same arguments
 * as the bridged backends' hook of this name.
 */
kprobe_opcode_t *arch_adjust_kprobe_addr(unsigned long addr, unsigned long offset,
					 bool *on_func_entry);

/*
 * Whether @addr, past the entry of the function that starts at @func,
 * still sees the frame its caller left: the return address where a
 * return probe takes it, nothing saved, pushed or signed yet.  Return
 * probes, jprobes and bpf_override_return() may go there too, while
 * KPROBE_FLAG_ON_FUNC_ENTRY (which BPF reads as "ip is the function")
 * stays with the entry itself.
 */
bool arch_kprobe_entry_frame(unsigned long func, unsigned long addr);

/* ---- Return probes (CONFIG_KRETPROBES) ------------------------------ */

/*
 * The return trampoline.  The core's entry handler calls
 * arch_kretprobe_hijack() (from a hit on the function's first
 * instruction) to record in @ri where the call will return (ret_addr) and
 * where that address is kept (fp: a stack slot, or whatever the
 * architecture uses), and to make the call return to the trampoline
 * instead.  The trampoline saves the registers and calls
 * kretprobe_trampoline_handler() with the same fp; the core finds the
 * task's instances for it and calls arch_kretprobe_restore() to put the
 * real return address back (where the trampoline's caller frame keeps it,
 * and in the PC of @regs, so that stack traces taken by the handlers show
 * it) before it runs them.  fp must tell apart the calls of one task in
 * flight, and be what the architecture's unwinder holds when it meets
 * the trampoline as a return address (kretprobe_find_ret_addr()): the
 * return address's stack slot on x86-64, the caller's frame pointer on
 * arm64, where the return address is in a register.  Both are
 * hit-path code, inlined from <asm/kprobes_arch.h> (end of this file):
 *
 *   bool arch_kretprobe_hijack(struct kretprobe_instance *ri,
 *                              struct pt_regs *regs);
 *   void arch_kretprobe_restore(struct pt_regs *regs, void *fp,
 *                               unsigned long ret);
 *
 * The hijack returns false when it could not take the call (a backend
 * with a bounded store of its own for calls in flight): the core counts a
 * miss.  Such a backend also defines arch_kretprobe_alloc(), called at
 * registration (may sleep; an error fails it), arch_kretprobe_grow(),
 * called by the instance pool's work item before the pool grows by @nr
 * instances (may sleep; an error stops the growth, so that the store
 * keeps up with the instances), and arch_kretprobe_free(), called when
 * the kretprobe is unregistered, after the grace period that ends its
 * handlers and once the pool's work item is done.  Calls still in flight
 * then may come back to the trampoline without reaching the core: their
 * instances go back to the pool when the task next returns through a
 * kretprobe or is freed.
 *
 * Where C function pointers are descriptors (HAVE_FUNCTION_DESCRIPTORS:
 * ppc64 ELF ABI v1, parisc64), the core compares return addresses with
 * the text the trampoline's descriptor points to, read once at boot; a
 * trampoline written in assembly without a descriptor is taken as it is.
 */
void arch_kretprobe_trampoline(void);

/*
 * A backend whose unwinder, in a return handler's stack trace, still
 * meets the trampoline and looks the instance up
 * (kretprobe_find_ret_addr()), because arch_kretprobe_restore() cannot
 * put the real address where that unwinder reads it, defines
 * KRETPROBE_POP_AFTER_HANDLER to 1 (the bridge does, for arm): the core
 * then takes the instance off the task's list after the handler instead
 * of before, which keeps two more registers across the call.
 */
#ifndef KRETPROBE_POP_AFTER_HANDLER
#define KRETPROBE_POP_AFTER_HANDLER	0
#endif

/* Called by the trampoline; returns the real return address. */
unsigned long kretprobe_trampoline_handler(struct pt_regs *regs, void *fp);

/*
 * NULL-terminated names of functions that do not return to their caller
 * (they switch stacks, or never return): kretprobes on them get -EINVAL.
 */
extern const char * const arch_kretprobe_refused[];

/* ---- Jump optimization (CONFIG_OPTPROBES) --------------------------- */

/*
 * An optimized site replaces the breakpoint with a jump to a detour that
 * saves the registers, runs the pre_handlers and then executes copies of
 * the instructions the jump covers (the site's *region*) before jumping
 * back.  The core decides which sites qualify as far as probes go (armed,
 * no post_handler, no other site inside the region, the sysctl on) and
 * batches the work; the backend decides whether the text allows it.
 *
 *   arch_optprobe_prepare(s)          optimizer, kprobe_mutex held: check
 *                                     the region and build the detour
 *   -- the core waits for every CPU and task to leave the region --
 *   arch_optprobe_poke(s) ...         text_mutex held, many sites
 *   arch_optprobe_poke_finish()       once per batch
 *   arch_optprobe_unpoke(list)        back to a breakpoint, text_mutex held
 *
 * While KSITE_OPT_READY is set, a breakpoint hit on the site (before the
 * jump is written, or while it is being taken out) must run the detour's
 * copy of the region rather than step the first instruction alone: the
 * bytes after it may be half rewritten.  The detour itself lives until
 * arch_kprobe_site_release().
 */
#ifdef CONFIG_OPTPROBES
/*
 * Check that the region at s->addr can be replaced by a jump, build the
 * detour.  0, or -EINVAL / -EBUSY / -ENOMEM: then the site stays a
 * breakpoint for good.  Idempotent.
 */
int arch_optprobe_prepare(struct kprobe_site *s);

/* Bytes covered by the jump's region; 0 before arch_optprobe_prepare(). */
unsigned int arch_optprobe_region(struct kprobe_site *s);

/*
 * Queue the jump of a prepared, armed site; make the batch visible.  An
 * error leaves the site a breakpoint: the core never tries it again.
 */
int arch_optprobe_poke(struct kprobe_site *s);
void arch_optprobe_poke_finish(void);

/* Put the breakpoint back on optimized sites (linked through s->opt). */
void arch_optprobe_unpoke(struct list_head *sites);

/*
 * Detour slots: KPROBE_OPTINSN_SLOT_SIZE bytes, freed like
 * kprobe_slot_free().  Their pages come from execmem range
 * KPROBE_OPTINSN_EXECMEM, EXECMEM_KPROBES unless <asm/kprobes.h> names
 * another (arm64: EXECMEM_MODULE_TEXT, within a B's reach of the text).
 */
void *kprobe_optinsn_slot_alloc(void);
void kprobe_optinsn_slot_free(void *slot);
#endif

/* ---- Provided by the core, for registration-time work ------------- */

/*
 * The function around a text address: what kallsyms_lookup_size_offset()
 * tells, plus the function's "<name>.cold" part, which GCC moves away and
 * which may jump back into the function.  cold/cold_size are 0 when there
 * is none, and cold_size is KPROBE_FUNC_COLD_UNKNOWN when kallsyms cannot
 * tell which of several symbols it is.
 */
struct kprobe_func {
	unsigned long	start;
	unsigned long	size;
	unsigned long	cold;
	unsigned long	cold_size;
};

#define KPROBE_FUNC_COLD_UNKNOWN	ULONG_MAX

/*
 * Fill @f for @addr (with @want_cold, its cold part too).  A binary search
 * for vmlinux and module text alike; may sleep.  0 or -ENOENT.
 */
int kprobe_func_find(unsigned long addr, struct kprobe_func *f, bool want_cold);

/*
 * Does a jump label or static call site overlap [@start, @end)?  Under
 * kprobe_mutex; a bisection of an index the core keeps (check.c).
 */
bool kprobe_text_rewritten(unsigned long start, unsigned long end);

/* ---- Provided by the core, for the backend's hit path -------------- */

/* The site hash (RCU; written under kprobe_mutex by the core). */
#define KPROBE_SITE_HASH_BITS	12
extern struct hlist_head kprobe_site_hash[1 << KPROBE_SITE_HASH_BITS];

/*
 * The bucket of @addr.  Kernel and module text share the top 2 GiB of the
 * address space, where the low 32 bits of an address tell it apart.
 */
static __always_inline struct hlist_head *kprobe_site_bucket(unsigned long addr)
{
	return &kprobe_site_hash[hash_32((u32)addr, KPROBE_SITE_HASH_BITS)];
}

/* True when the caller holds kprobe_mutex (for lockdep's RCU list checks). */
bool kprobe_mutex_is_held(void);

/*
 * The site at @addr, or NULL.  The one lookup of a site by address, for
 * the hit paths (interrupts or preemption off) and for registration-time
 * code under kprobe_mutex alike: one multiply, one load and the walk of a
 * chain that is almost always a single site long.
 */
static __always_inline struct kprobe_site *kprobe_site_find(unsigned long addr)
{
	struct kprobe_site *s;

	hlist_for_each_entry_rcu(s, kprobe_site_bucket(addr), node,
				 kprobe_mutex_is_held()) {
		if ((unsigned long)s->addr == addr)
			return s;
	}
	return NULL;
}

/*
 * The hit paths' shortcut: when exactly one probe of @s is enabled and it
 * has a pre_handler, that probe (kept up to date under kprobe_mutex, freed
 * no sooner than the site's other probes), else NULL.  With it a backend
 * calls the one pre_handler itself, with current_kprobe pointing at it,
 * instead of walking the list with kprobe_site_pre().  A hit reads it
 * once and gives what it read to kprobe_site_post(): the probe may be
 * unlinked (and s->solo cleared) between the pre_handler and the
 * post_handler, and unregistration waits for such a hit to end.
 */
static __always_inline struct kprobe *kprobe_site_solo(struct kprobe_site *s)
{
	return READ_ONCE(s->solo);
}

/*
 * The breakpoint hit's shortcut: s->solo when nothing else makes a
 * breakpoint hit on @s take the long way (a post_handler or a
 * fault_handler, the way to or from jump optimization, the backend's
 * KSITE_ARCH_SLOW), else NULL.  The core keeps it up to date with those
 * flags, under kprobe_mutex, so that the hit tests one pointer.
 */
static __always_inline struct kprobe *kprobe_site_bp_solo(struct kprobe_site *s)
{
	return READ_ONCE(s->bp_solo);
}

/*
 * The shortcut for two probes (a kprobe and a kretprobe on one function,
 * say): when @s has exactly two probes, both enabled, both with a
 * pre_handler and neither with a post_handler, the first of them, else
 * NULL.  The second is the next on the list: a backend reads the first's
 * list_next_rcu() and finds the list head there if the list has changed
 * since (it then walks the list).  Kept and freed like s->solo.
 */
static __always_inline struct kprobe *kprobe_site_duo(struct kprobe_site *s)
{
	return READ_ONCE(s->duo);
}

/*
 * The probes whose post_handlers a hit that walked the list owes: those
 * with one that were enabled when it ran the pre_handlers.  A probe
 * unlinked or disabled before the instruction has run still gets its
 * post_handler (unregistration waits for the hit to end), and one added
 * meanwhile gets none, as a lone probe's hit does with kprobe_site_solo().
 * Past KPROBE_HIT_POSTS of them, the hit walks the list again as it is
 * then.  On the hit's stack or in its frame: no allocation, no lock.
 */
#define KPROBE_HIT_POSTS	4

struct kprobe_hit_posts {
	struct kprobe	*probe[KPROBE_HIT_POSTS];
	u8		n;
	bool		overflow;
};

static __always_inline void kprobe_hit_posts_init(struct kprobe_hit_posts *hp)
{
	hp->n = 0;
	hp->overflow = false;
}

/* Does the hit that noted @hp owe a post_handler? */
static __always_inline bool kprobe_hit_posts_due(const struct kprobe_hit_posts *hp)
{
	return hp->n || hp->overflow;
}

/*
 * Run the pre_handlers of the enabled probes of @s in registration order,
 * each with current_kprobe pointing at its probe, noting in @hp (unless
 * NULL: a path without post_handlers) the probes whose post_handlers the
 * hit then owes.  Returns true when one of them redirected execution
 * (returned non-zero): the probed instruction and the post handlers must
 * then be skipped.  On return current_kprobe points at the last probe
 * whose pre_handler ran, or is as it was if none ran; the backend resets
 * it when the hit is over.  Inlined into the backend's hit paths, like
 * kprobe_site_post().
 */
static __always_inline bool kprobe_site_pre(struct kprobe_site *s,
					    struct pt_regs *regs,
					    struct kprobe_hit_posts *hp)
{
	struct kprobe *p;

	if (hp)
		kprobe_hit_posts_init(hp);
	list_for_each_entry_rcu(p, &s->probes, list) {
		if (kprobe_disabled(p))
			continue;
		if (hp && p->post_handler) {
			if (hp->n < KPROBE_HIT_POSTS)
				hp->probe[hp->n++] = p;
			else
				hp->overflow = true;
		}
		if (!p->pre_handler)
			continue;
		__this_cpu_write(current_kprobe, p);
		if (p->pre_handler(p, regs))
			return true;
	}
	return false;
}

/*
 * Run the post_handlers of a hit on @s whose pre_handlers ran.  @solo is
 * what the hit read from kprobe_site_solo() for them: if not NULL, its
 * post_handler (if any) is the one to run, whatever the site looks like
 * now (see kprobe_site_solo()); if NULL, those kprobe_site_pre() noted in
 * @hp, or on its overflow those of the enabled probes of @s now, in
 * registration order.
 */
static __always_inline void kprobe_site_post(struct kprobe_site *s,
					     struct kprobe *solo,
					     const struct kprobe_hit_posts *hp,
					     struct pt_regs *regs)
{
	struct kprobe *p;
	unsigned int i;

	if (solo) {
		if (solo->post_handler) {
			__this_cpu_write(current_kprobe, solo);
			solo->post_handler(solo, regs, 0);
		}
		return;
	}
	if (!hp->overflow) {
		for (i = 0; i < hp->n; i++) {
			p = hp->probe[i];
			__this_cpu_write(current_kprobe, p);
			p->post_handler(p, regs, 0);
		}
		return;
	}
	list_for_each_entry_rcu(p, &s->probes, list) {
		if (kprobe_disabled(p) || !p->post_handler)
			continue;
		__this_cpu_write(current_kprobe, p);
		p->post_handler(p, regs, 0);
	}
}

/*
 * Count a hit of @s that runs its handlers, for the stats file: one
 * per-CPU increment.  Every hit path calls it once per such hit, with
 * preemption or interrupts off.
 */
static __always_inline void kprobe_site_hit(struct kprobe_site *s)
{
	this_cpu_inc(*s->hits);
}

/*
 * A fault in the out-of-line copy of a hit's instruction.  The backend
 * puts the context back on the probed address, where the instruction's
 * exception-table entry is keyed, and leaves the fault to the kernel,
 * which then either fixes it (brings a user page in, say) and runs the
 * instruction again, through the breakpoint, or sends the task to the
 * fixup.  The first is still one execution, whose hit was counted and
 * whose pre_handlers ran: the backend notes the task on the site with
 * kprobe_replay_expect() as it leaves the fault, and that task's next
 * hit there takes the note (kprobe_replay_take()) and only executes the
 * instruction, with the post_handlers of the probes enabled then.  The
 * second path drops the note: the architecture's fixup_exception() calls
 * kprobe_fixup_taken().
 *
 * One note per site: a task that faults there while another's note
 * stands gets none, and its re-execution counts as a hit of its own;
 * so does one that finds its note dropped because the site was armed
 * again meanwhile.  Double, never lost.  Only a hit path that reads
 * notes may leave them: a backend notes only sites its shortcut never
 * takes.  Any context; the note is only ever cleared by its own task or
 * under kprobe_mutex.
 */
static __always_inline void kprobe_replay_expect(struct kprobe_site *s)
{
	cmpxchg(&s->replay, NULL, current);
}

/* Is this hit of @s its task's re-execution after a fault?  Takes the note. */
static __always_inline bool kprobe_replay_take(struct kprobe_site *s)
{
	if (likely(READ_ONCE(s->replay) != current))
		return false;
	WRITE_ONCE(s->replay, NULL);
	return true;
}

/* A hit on @s while another probe was running: count it as missed. */
void kprobe_site_missed(struct kprobe_site *s);

/* The probe current_kprobe should point at while @s runs (its first one). */
struct kprobe *kprobe_site_first(struct kprobe_site *s);

/*
 * Out-of-line slots: KPROBE_SLOT_SIZE bytes each, in read-only executable
 * pages within reach of kernel text (rel32).  The backend fills a slot with
 * the architecture's text-copy primitive.  kprobe_slot_free() is called
 * from arch_kprobe_site_release(), after the grace period.
 */
void *kprobe_slot_alloc(void);
void kprobe_slot_free(void *slot);

/*
 * Provided by the backend: fill a new slot page (PAGE_SIZE bytes as
 * execmem_alloc(EXECMEM_KPROBES) returned them) with instructions that
 * trap, and leave it read-only and executable.
 */
void arch_kprobe_slot_page_init(void *page);

/* ---- The older API (CONFIG_KPROBES_COMPAT, kernel/kprobes/compat.c) -- */

#ifdef CONFIG_KPROBES_COMPAT
/*
 * Provided by the backend: call the jprobe handler @entry, an ordinary
 * call from the pre_handler's context, with the arguments of the
 * function whose entry @regs shows (registers, and the first
 * KPROBE_JPROBE_STACK_WORDS words of stack arguments), as copies.
 */
void arch_jprobe_call(void *entry, struct pt_regs *regs);

/*
 * Provided by the core, for the backend's kprobe_fault_handler(): a fault
 * in a handler of @p (current_kprobe), or in the out-of-line run of the
 * probed instruction of @s (regs put back on the instruction first).
 * Both return 1 when a fault_handler dealt with it.  The backend must
 * tell those faults from those of an interrupt nested in the hit.
 */
int kprobe_fault_notify(struct kprobe *p, struct pt_regs *regs, int trapnr);
int kprobe_site_fault(struct kprobe_site *s, struct pt_regs *regs, int trapnr);
#else
static inline int kprobe_fault_notify(struct kprobe *p, struct pt_regs *regs,
				      int trapnr)
{
	return 0;
}

static inline int kprobe_site_fault(struct kprobe_site *s,
				    struct pt_regs *regs, int trapnr)
{
	return 0;
}
#endif

/*
 * Mark this CPU as running @p outside a hit (a busy section, a return
 * handler); a bridged backend also needs its status set then.
 */
#ifndef arch_kprobe_running_set
static __always_inline void arch_kprobe_running_set(struct kprobe *p) { }
#endif

static __always_inline void kprobe_running_set(struct kprobe *p)
{
	__this_cpu_write(current_kprobe, p);
	arch_kprobe_running_set(p);
}

#ifndef arch_kretprobe_alloc
static inline int arch_kretprobe_alloc(struct kretprobe *rp)
{
	return 0;
}

static inline int arch_kretprobe_grow(struct kretprobe *rp, unsigned int nr)
{
	return 0;
}

static inline void arch_kretprobe_free(struct kretprobe *rp) { }
#endif

/*
 * The backend's inline part: arch_kretprobe_hijack() and friends.  A
 * bridged architecture has them from <linux/kprobes_bridge.h>.
 */
#ifndef CONFIG_KPROBES_BRIDGE
#include <asm/kprobes_arch.h>
#endif

#endif /* _LINUX_KPROBES_ARCH_H */
