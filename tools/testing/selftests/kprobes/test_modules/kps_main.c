// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit stress cases for kprobes: probes come and go while other CPUs, and
 * a timer interrupt, keep running through the probed code.
 *
 * Two kthreads, bound to two CPUs, call the target functions in a loop and
 * check every result.  Meanwhile the test thread registers and unregisters
 * probes on them, one at a time and in arrays, on function entries (which
 * go through ftrace) and on instructions inside a function (breakpoints),
 * and disables and enables them.  Every probe is a fresh kzalloc() that is
 * kfree()d as soon as unregistration returns, so that a handler still
 * running, or a core still holding on to the struct, is a use-after-free
 * that KASAN reports.  Each probe also has a hit counter outside its
 * struct: after unregistration it must never change again.
 *
 * kps_threads keeps a resident probe on every target for the whole run, so
 * that the probe changes only touch the probe lists, never the text the
 * kthreads run; kps_threads_patching also arms and disarms sites under
 * them.  In kps_irq a timer interrupt runs the targets on the test
 * thread's own CPU, to which the test thread is bound: handlers also run
 * in hard interrupt context, in the middle of the test thread's calls and
 * of its probe changes, arming and disarming included.
 *
 * Multi-threaded TCG (QEMU 7.2, one host thread per vCPU) does not keep
 * code that one vCPU patches coherent for another vCPU running it at that
 * moment: that vCPU may keep running a stale copy, e.g. an int3 that is no
 * longer in memory, forever.  kps_threads_patching needs exactly that to
 * work, so it only runs with cross_cpu=1; the other cases only patch text
 * that no other CPU runs at the time.
 */
#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/ftrace.h>
#include <linux/hrtimer.h>
#include <linux/jiffies.h>
#include <linux/kprobes.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#ifdef CONFIG_X86
#include <asm/text-patching.h>
#endif
#include "kprobes_stress.h"
#include "kprobes_target.h"

bool kps_upstream;
module_param_named(upstream, kps_upstream, bool, 0444);
MODULE_PARM_DESC(upstream, "the kernel runs the upstream kprobes (baseline)");

bool kps_cross_cpu = true;
module_param_named(cross_cpu, kps_cross_cpu, bool, 0444);
MODULE_PARM_DESC(cross_cpu,
		 "run the case where other CPUs run code while it is patched (not under multi-threaded TCG)");

/*
 * How long the test thread keeps changing probes, in guest time; on a slow
 * machine it goes on until KPS_MIN_CYCLES have run (kps_go_on()).
 */
#define KPS_THREADS_MS		2500
#define KPS_IRQ_MS		1500
/* Every kind of cycle twice (kps_cycle(), kps_rcycle()). */
#define KPS_MIN_CYCLES		8U
#define KPS_OVERTIME_MS		60000
/* After the last unregistration, every caller makes this many more calls. */
#define KPS_TAIL_CALLS		100
#define KPS_TAIL_MS		3000
/* Probes per register_kprobes() array. */
#define KPS_ARRAY		16
/* kps_irq: a test thread run of the watched probe's handlers takes this. */
#define KPS_WATCH_DELAY_US	300
/* Hit counters, one per registration over a whole case. */
#define KPS_MAX_IDS		8192
/* Probes registered at the same time, at most: an array, one, residents. */
#define KPS_MAX_LIVE		32

/* ---------------------------------------------------------------------
 * Targets and their callers
 */

static int kps_sink;

/* Entry probes on these go through ftrace. */
static noinline int kps_fn0(int x)
{
	WRITE_ONCE(kps_sink, x);
	return (int)((u32)x * 3 + 1);
}

static noinline int kps_fn1(int x)
{
	WRITE_ONCE(kps_sink, x);
	return (int)((u32)x * 5 + 2);
}

static noinline int kps_fn2(int x)
{
	WRITE_ONCE(kps_sink, x);
	return (int)((u32)x * 7 + 3);
}

static noinline int kps_fn3(int x)
{
	WRITE_ONCE(kps_sink, x);
	return (int)((u32)x * 11 + 4);
}

#define KPS_NFNS	4

/* Called through this table only, so none of them can be inlined. */
static int (* const kps_fns[KPS_NFNS])(int) = {
	kps_fn0, kps_fn1, kps_fn2, kps_fn3,
};

static const u32 kps_fn_mul[KPS_NFNS] = { 3, 5, 7, 11 };

static int kps_fn_want(int i, int x)
{
	return (int)((u32)x * kps_fn_mul[i] + i + 1);
}

static int kps_mix_want(int x)
{
	u32 v = ((u32)x + KPS_MIX_ADD0) ^ KPS_MIX_XOR;

	if ((s32)v < 0)
		v = ~v;
	return (int)(v + KPS_MIX_ADD1);
}

/* Where the probes go: function entries first, then breakpoint sites. */
enum {
	KPS_T_FN0,
	KPS_T_MIX = KPS_NFNS,	/* kps_asm_mix's entry: no ftrace there */
	KPS_T_ADD0,
	KPS_T_XOR,
	KPS_T_JNS,
	KPS_T_ADD1,
	KPS_T_RET,
	KPS_NTARGETS
};

static void *kps_target(int t)
{
	static const u8 * const insns[] = {
		[KPS_T_ADD0 - KPS_T_MIX] = kps_asm_mix_add0,
		[KPS_T_XOR - KPS_T_MIX] = kps_asm_mix_xor,
		[KPS_T_JNS - KPS_T_MIX] = kps_asm_mix_jns,
		[KPS_T_ADD1 - KPS_T_MIX] = kps_asm_mix_add1,
		[KPS_T_RET - KPS_T_MIX] = kps_asm_mix_ret,
	};

	if (t < KPS_T_MIX)
		return (void *)kps_fns[t];
	if (t == KPS_T_MIX)
		return kps_asm_mix;
	return (void *)insns[t - KPS_T_MIX];
}

/* One context that calls the targets: a kthread, the timer, the test. */
struct kps_caller {
	u32 x;
	atomic_long_t calls;
	atomic_t bad;
	/* The first wrong result. */
	int bad_fn;
	int bad_x;
	int bad_got;
};

static void kps_wrong(struct kps_caller *c, int fn, int x, int got)
{
	if (atomic_inc_return(&c->bad) != 1)
		return;
	c->bad_fn = fn;
	c->bad_x = x;
	c->bad_got = got;
}

/* Call every target once and check what it returns. */
static void kps_call_all(struct kps_caller *c)
{
	int x = (int)c->x++;
	int i, got;

	for (i = 0; i < KPS_NFNS; i++) {
		got = kps_fns[i](x);
		if (got != kps_fn_want(i, x))
			kps_wrong(c, i, x, got);
	}
	got = kps_asm_mix(x);
	if (got != kps_mix_want(x))
		kps_wrong(c, KPS_NFNS, x, got);
	atomic_long_inc(&c->calls);
}

static void kps_expect_right(struct kunit *test, struct kps_caller *c,
			     const char *who)
{
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&c->bad), 0,
			    "%s: %d wrong results, first: target %d (%d) = %d",
			    who, atomic_read(&c->bad), c->bad_fn, c->bad_x,
			    c->bad_got);
}

/* ---------------------------------------------------------------------
 * Probes and their counters
 */

struct kps_probe {
	struct kprobe kp;
	unsigned int id;
};

/* Outside the probes, which are freed: runs of each probe's handlers. */
static atomic_t kps_hits[KPS_MAX_IDS];
/* Handler runs from the timer callback (hard interrupt context). */
static atomic_t kps_timer_hits;
/* Of those, return probes' handler runs (entry and return). */
static atomic_t kps_timer_rhits;
/* Of those, the runs of the probe whose id is kps_watch_id (kps_irq). */
static atomic_t kps_watch_timer_hits;
static int kps_watch_id = -1;
static DEFINE_PER_CPU(bool, kps_in_timer);

static DEFINE_PER_CPU(unsigned int, kps_hit_seq);

static void kps_count_id(const unsigned int *id)
{
	/*
	 * Now and then take a while, so that unregistrations have handlers
	 * in flight to wait for; the count goes up at the end, from the
	 * probe struct: too late, or from freed memory, if they did not.
	 */
	if (!(this_cpu_inc_return(kps_hit_seq) % 16))
		udelay(5);
	atomic_inc(&kps_hits[READ_ONCE(*id)]);
	if (this_cpu_read(kps_in_timer)) {
		atomic_inc(&kps_timer_hits);
		if ((int)READ_ONCE(*id) == READ_ONCE(kps_watch_id))
			atomic_inc(&kps_watch_timer_hits);
	} else if ((int)READ_ONCE(*id) == READ_ONCE(kps_watch_id)) {
		/* Long enough for the timer to come in now and then: a miss. */
		udelay(KPS_WATCH_DELAY_US);
	}
}

static void kps_count(struct kprobe *kp)
{
	kps_count_id(&container_of(kp, struct kps_probe, kp)->id);
}

static int kps_pre(struct kprobe *kp, struct pt_regs *regs)
{
	kps_count(kp);
	return 0;
}

static void kps_post(struct kprobe *kp, struct pt_regs *regs,
		     unsigned long flags)
{
	kps_count(kp);
}

struct kps_ctx {
	struct kunit *test;
	struct task_struct *workers[2];
	struct kps_caller wcall[2];
	struct kps_caller self;
	struct kps_caller tcall;
	struct hrtimer timer;
	bool timer_on;
	bool bound;		/* the test thread is bound to one CPU */
	bool timer_stop;
	struct kps_probe *live[KPS_MAX_LIVE];
	/* Hits of each probe when its unregistration returned, or -1. */
	int *snap;
	unsigned int next_id;
	unsigned int cycles;
	unsigned int toggles;
	/* The watched probe's nmissed when it was unregistered (kps_irq). */
	unsigned long watch_missed;
	bool broken;		/* an API call failed: stop cycling */
};

static struct kps_ctx kps_ctx;

/*
 * Whether a probe on @target gets a post handler, given that the case
 * would like one (@want).  Upstream: never on a function entry (see
 * kps_ftrace_post_join()), always on a breakpoint, which keeps upstream
 * from optimizing the probe into a jump later, from a workqueue on any
 * CPU, while callers run the code (see the top of this file).
 */
static bool kps_post_for(int target, bool want)
{
	if (kps_upstream)
		return target >= KPS_T_MIX;
	return want;
}

static struct kps_probe *kps_new(struct kps_ctx *ctx, int target, bool post,
				 bool disabled)
{
	struct kps_probe *p;
	int i;

	if (ctx->next_id >= KPS_MAX_IDS)
		return NULL;
	for (i = 0; i < KPS_MAX_LIVE; i++)
		if (!ctx->live[i])
			break;
	if (i == KPS_MAX_LIVE)
		return NULL;
	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return NULL;
	p->id = ctx->next_id++;
	p->kp.addr = kps_target(target);
	p->kp.pre_handler = kps_pre;
	if (post)
		p->kp.post_handler = kps_post;
	if (disabled)
		p->kp.flags = KPROBE_FLAG_DISABLED;
	ctx->live[i] = p;
	return p;
}

/*
 * Free a probe that is not (or no longer) registered, noting its count:
 * from now on that must not change.
 */
static void kps_free(struct kps_ctx *ctx, struct kps_probe *p)
{
	int i;

	ctx->snap[p->id] = atomic_read(&kps_hits[p->id]);
	if ((int)p->id == kps_watch_id)
		ctx->watch_missed = p->kp.nmissed;
	for (i = 0; i < KPS_MAX_LIVE; i++)
		if (ctx->live[i] == p)
			ctx->live[i] = NULL;
	kfree(p);
}

/* Unregister @n probes in one call and free them right away. */
static void kps_unregister(struct kps_ctx *ctx, struct kps_probe **p, int n)
{
	struct kprobe *kps[KPS_ARRAY];
	int i;

	for (i = 0; i < n; i++)
		kps[i] = &p[i]->kp;
	if (n == 1)
		unregister_kprobe(kps[0]);
	else
		unregister_kprobes(kps, n);
	for (i = 0; i < n; i++)
		kps_free(ctx, p[i]);
}

static void kps_expect_ok(struct kps_ctx *ctx, int ret, const char *what,
			  struct kps_probe *p)
{
	if (!ret)
		return;
	KUNIT_FAIL(ctx->test, "%s(%pS) = %d", what, p->kp.addr, ret);
	ctx->broken = true;
}

static void kps_toggle(struct kps_ctx *ctx, struct kps_probe *p, bool off)
{
	int ret = off ? disable_kprobe(&p->kp) : enable_kprobe(&p->kp);

	kps_expect_ok(ctx, ret, off ? "disable_kprobe" : "enable_kprobe", p);
	ctx->toggles++;
}

/*
 * One probe on @target: register, let it fire, disable and enable it,
 * unregister.  With @quiet, the probe is left disabled for a grace period
 * before unregistration, and must not fire any more from then on.
 */
static void kps_cycle_single(struct kps_ctx *ctx, int target, bool quiet)
{
	struct kps_probe *p;
	unsigned int id;
	int ret, hits;

	p = kps_new(ctx, target, kps_post_for(target, true), false);
	if (!p)
		return;
	ret = register_kprobe(&p->kp);
	kps_expect_ok(ctx, ret, "register_kprobe", p);
	if (ret) {
		kps_free(ctx, p);
		return;
	}
	kps_call_all(&ctx->self);
	kps_toggle(ctx, p, true);
	kps_call_all(&ctx->self);
	kps_toggle(ctx, p, false);
	kps_call_all(&ctx->self);
	if (quiet) {
		kps_toggle(ctx, p, true);
		synchronize_rcu();
		id = p->id;
		hits = atomic_read(&kps_hits[id]);
		kps_call_all(&ctx->self);
		kps_unregister(ctx, &p, 1);
		KUNIT_EXPECT_EQ_MSG(ctx->test, ctx->snap[id], hits,
				    "disabled probe on %pS fired",
				    kps_target(target));
		return;
	}
	kps_unregister(ctx, &p, 1);
}

/*
 * KPS_ARRAY probes over all targets, some sharing a site, some with a
 * post handler, some registered disabled: register them in one call,
 * toggle some, unregister them in one call (or, with @split, in two).
 */
static void kps_cycle_array(struct kps_ctx *ctx, unsigned int iter, bool split)
{
	struct kps_probe *p[KPS_ARRAY];
	struct kprobe *kps[KPS_ARRAY];
	int i, n, ret;

	for (n = 0; n < KPS_ARRAY; n++) {
		int t = (iter + n) % KPS_NTARGETS;

		p[n] = kps_new(ctx, t, kps_post_for(t, n % 3 == 1), n % 5 == 4);
		if (!p[n])
			break;
		kps[n] = &p[n]->kp;
	}
	if (n < KPS_ARRAY) {
		/* Out of ids: the case is over. */
		while (n--)
			kps_free(ctx, p[n]);
		return;
	}
	ret = register_kprobes(kps, n);
	kps_expect_ok(ctx, ret, "register_kprobes", p[0]);
	if (ret) {
		for (i = 0; i < n; i++)
			kps_free(ctx, p[i]);
		return;
	}
	kps_call_all(&ctx->self);
	for (i = 0; i < n; i++)
		if (i % 4 == 0)
			kps_toggle(ctx, p[i], true);
	kps_call_all(&ctx->self);
	for (i = 0; i < n; i++)
		if (i % 8 == 4 || i % 5 == 4)
			kps_toggle(ctx, p[i], false);
	kps_call_all(&ctx->self);
	if (split) {
		kps_unregister(ctx, p, n / 2);
		kps_call_all(&ctx->self);
		kps_unregister(ctx, p + n / 2, n - n / 2);
	} else {
		kps_unregister(ctx, p, n);
	}
}

static void kps_cycle(struct kps_ctx *ctx, unsigned int iter)
{
	unsigned int t = iter / 4;

	switch (iter % 4) {
	case 0:
		kps_cycle_single(ctx, t % KPS_NTARGETS, false);
		break;
	case 1:
		kps_cycle_array(ctx, iter, false);
		break;
	case 2:
		kps_cycle_single(ctx, (t + 5) % KPS_NTARGETS, true);
		break;
	default:
		kps_cycle_array(ctx, iter, true);
		break;
	}
	ctx->cycles++;
}

/*
 * Register a probe that stays for the whole case; NULL on failure.  It
 * has a post_handler (where the kernel can take one there): a
 * function entry then keeps both kprobes' ftrace_ops, the carrier and
 * the IPMODIFY claim, whatever the probes that come and go have, so
 * ftrace never repatches its call site under the callers.
 */
static struct kps_probe *kps_resident(struct kps_ctx *ctx, int target)
{
	struct kps_probe *p;
	int ret;

	p = kps_new(ctx, target, kps_post_for(target, true), false);
	KUNIT_EXPECT_NOT_NULL(ctx->test, p);
	if (!p)
		return NULL;
	ret = register_kprobe(&p->kp);
	kps_expect_ok(ctx, ret, "register_kprobe", p);
	if (ret) {
		kps_free(ctx, p);
		return NULL;
	}
	return p;
}

/* ---------------------------------------------------------------------
 * Callers: kthreads and the timer
 */

static int kps_worker(void *data)
{
	struct kps_caller *c = data;
	unsigned int n = 0;

	while (!kthread_should_stop()) {
		kps_call_all(c);
		/* Also a quiescent state for RCU tasks (see kps_ool.c). */
		if (!(++n % 16))
			cond_resched_tasks_rcu_qs();
	}
	return 0;
}

static int kps_start_workers(struct kps_ctx *ctx)
{
	int cpu[2], i;

	cpu[0] = cpumask_first(cpu_online_mask);
	cpu[1] = cpumask_next(cpu[0], cpu_online_mask);
	if (cpu[1] >= nr_cpu_ids)
		return -ENODEV;
	for (i = 0; i < 2; i++) {
		struct task_struct *t;

		ctx->wcall[i].x = i << 30;
		t = kthread_create(kps_worker, &ctx->wcall[i], "kps_worker/%d",
				   cpu[i]);
		if (IS_ERR(t))
			return PTR_ERR(t);
		kthread_bind(t, cpu[i]);
		ctx->workers[i] = t;
		wake_up_process(t);
	}
	return 0;
}

static enum hrtimer_restart kps_tick(struct hrtimer *timer)
{
	struct kps_ctx *ctx = container_of(timer, struct kps_ctx, timer);

	this_cpu_write(kps_in_timer, true);
	kps_call_all(&ctx->tcall);
	this_cpu_write(kps_in_timer, false);
	if (READ_ONCE(ctx->timer_stop))
		return HRTIMER_NORESTART;
	hrtimer_forward_now(timer, ms_to_ktime(1));
	return HRTIMER_RESTART;
}

static void kps_start_timer(struct kps_ctx *ctx)
{
	hrtimer_init(&ctx->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
	ctx->timer.function = kps_tick;
	ctx->timer_on = true;
	hrtimer_start(&ctx->timer, ms_to_ktime(1), HRTIMER_MODE_REL_PINNED_HARD);
}

/* Stop whatever still runs and unregister whatever is still registered. */
static void kps_stop(struct kps_ctx *ctx)
{
	int i;

	if (ctx->timer_on) {
		WRITE_ONCE(ctx->timer_stop, true);
		hrtimer_cancel(&ctx->timer);
		ctx->timer_on = false;
	}
	for (i = 0; i < 2; i++) {
		if (ctx->workers[i])
			kthread_stop(ctx->workers[i]);
		ctx->workers[i] = NULL;
	}
	for (i = 0; i < KPS_MAX_LIVE; i++)
		if (ctx->live[i])
			kps_unregister(ctx, &ctx->live[i], 1);
	if (ctx->bound) {
		set_cpus_allowed_ptr(current, cpu_possible_mask);
		ctx->bound = false;
	}
}

/* Let every running caller make KPS_TAIL_CALLS more calls. */
static void kps_tail(struct kps_ctx *ctx)
{
	struct kps_caller *c[3] = { &ctx->wcall[0], &ctx->wcall[1], &ctx->tcall };
	long start[3];
	unsigned long end = kpt_deadline(KPS_TAIL_MS);
	int i;

	for (i = 0; i < 3; i++)
		start[i] = atomic_long_read(&c[i]->calls);
	for (i = 0; i < 3; i++) {
		if (i < 2 && !ctx->workers[i])
			continue;
		if (i == 2 && !ctx->timer_on)
			continue;
		while (atomic_long_read(&c[i]->calls) - start[i] < KPS_TAIL_CALLS &&
		       time_before(jiffies, end))
			msleep(20);
		KUNIT_EXPECT_GE_MSG(ctx->test,
				    atomic_long_read(&c[i]->calls) - start[i],
				    (long)KPS_TAIL_CALLS, "caller %d stalled", i);
	}
}

/* Every probe is unregistered and its count did not move since. */
static void kps_expect_silent(struct kps_ctx *ctx)
{
	unsigned int id, late = 0, first = 0;
	int hits;

	for (id = 0; id < ctx->next_id; id++) {
		hits = atomic_read(&kps_hits[id]);
		KUNIT_EXPECT_GE_MSG(ctx->test, ctx->snap[id], 0,
				    "probe %u never unregistered", id);
		if (ctx->snap[id] >= 0 && hits != ctx->snap[id] && !late++)
			first = id;
	}
	KUNIT_EXPECT_EQ_MSG(ctx->test, late, 0,
			    "%u probes fired after unregistration, first: probe %u (%d hits at unregistration, %d now)",
			    late, first, ctx->snap[first],
			    atomic_read(&kps_hits[first]));
}

static long kps_total_hits(struct kps_ctx *ctx)
{
	long sum = 0;
	unsigned int id;

	for (id = 0; id < ctx->next_id; id++)
		sum += atomic_read(&kps_hits[id]);
	return sum;
}

/*
 * Whether a case's loop runs another cycle: until @end, then on until
 * KPS_MIN_CYCLES have run, but no longer than KPS_OVERTIME_MS past @end
 * (the case then fails its count of cycles).  The time alone would let a
 * slow machine, or a test thread that the callers starve, check little.
 */
static bool kps_go_on(struct kps_ctx *ctx, unsigned long end)
{
	if (ctx->broken)
		return false;
	if (time_before(jiffies, end))
		return true;
	return ctx->cycles < KPS_MIN_CYCLES &&
	       time_before(jiffies, end + msecs_to_jiffies(KPS_OVERTIME_MS));
}

/*
 * Run probe cycles for @ms with resident probes, then unregister all and
 * check.  With @all_sites there is a resident on every target, registered
 * before the callers start and unregistered after they stop: no probe
 * change then writes to the text the callers run.  Without, residents sit
 * on one function entry and one breakpoint only, and the other targets are
 * armed and disarmed as the callers run them.  @workers: start the two
 * kthreads once the residents are in place.
 */
static void kps_run(struct kps_ctx *ctx, unsigned int ms, bool all_sites,
		    bool workers)
{
	struct kunit *test = ctx->test;
	struct kps_probe *res[KPS_NTARGETS];
	unsigned int ft_id = 0, bp_id = 0;
	unsigned long end;
	int i, nres = 0, ret;

	for (i = 0; i < KPS_NTARGETS; i++) {
		if (!all_sites && i != KPS_T_FN0 && i != KPS_T_XOR)
			continue;
		if (i == KPS_T_FN0)
			ft_id = ctx->next_id;
		if (i == KPS_T_XOR)
			bp_id = ctx->next_id;
		res[nres] = kps_resident(ctx, i);
		if (!res[nres++])
			return;
	}
	if (workers) {
		ret = kps_start_workers(ctx);
		KUNIT_ASSERT_EQ(test, ret, 0);
	}

	end = jiffies + msecs_to_jiffies(ms);
	while (kps_go_on(ctx, end) && ctx->next_id + KPS_ARRAY <= KPS_MAX_IDS) {
		kps_cycle(ctx, ctx->cycles);
		kps_call_all(&ctx->self);
		cond_resched();
	}

	/* With @all_sites, kps_stop() unregisters them after the callers. */
	if (!all_sites)
		for (i = 0; i < nres; i++)
			kps_unregister(ctx, &res[i], 1);
	kps_tail(ctx);
	kps_stop(ctx);

	kunit_info(test,
		   "%u cycles, %u probes, %u toggles, %ld hits; calls: %ld + %ld (threads), %ld (timer), %ld (test)\n",
		   ctx->cycles, ctx->next_id, ctx->toggles,
		   kps_total_hits(ctx),
		   atomic_long_read(&ctx->wcall[0].calls),
		   atomic_long_read(&ctx->wcall[1].calls),
		   atomic_long_read(&ctx->tcall.calls),
		   atomic_long_read(&ctx->self.calls));
	kps_expect_right(test, &ctx->wcall[0], "thread 0");
	kps_expect_right(test, &ctx->wcall[1], "thread 1");
	kps_expect_right(test, &ctx->tcall, "timer");
	kps_expect_right(test, &ctx->self, "test thread");
	kps_expect_silent(ctx);
	KUNIT_EXPECT_GT_MSG(test, ctx->snap[ft_id], 0,
			    "resident probe at %pS never fired",
			    kps_target(KPS_T_FN0));
	KUNIT_EXPECT_GT_MSG(test, ctx->snap[bp_id], 0,
			    "resident probe at %pS never fired",
			    kps_target(KPS_T_XOR));
	KUNIT_EXPECT_GE(test, ctx->cycles, KPS_MIN_CYCLES);
}

/* ---------------------------------------------------------------------
 * Return probes
 */

#ifdef CONFIG_KRETPROBES
/* Return probes per register_kretprobes() array. */
#define KPS_RARRAY		(2 * KPS_NFNS)

struct kps_rprobe {
	struct kretprobe rp;
	unsigned int id;
};

/* The entry and the return handler both count: either must stop. */
static int kps_rcount(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	kps_count_id(&container_of(get_kretprobe(ri), struct kps_rprobe, rp)->id);
	if (this_cpu_read(kps_in_timer))
		atomic_inc(&kps_timer_rhits);
	return 0;
}

static struct kps_rprobe *kps_rnew(struct kps_ctx *ctx, int fn)
{
	struct kps_rprobe *p;

	if (ctx->next_id >= KPS_MAX_IDS)
		return NULL;
	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return NULL;
	p->id = ctx->next_id++;
	p->rp.kp.addr = (kprobe_opcode_t *)kps_fns[fn];
	p->rp.entry_handler = kps_rcount;
	p->rp.handler = kps_rcount;
	return p;
}

/* Unregister @n return probes in one call and free them right away. */
static void kps_runregister(struct kps_ctx *ctx, struct kps_rprobe **p,
			    int n)
{
	struct kretprobe *rps[KPS_RARRAY];
	int i;

	for (i = 0; i < n; i++)
		rps[i] = &p[i]->rp;
	if (n == 1)
		unregister_kretprobe(rps[0]);
	else
		unregister_kretprobes(rps, n);
	for (i = 0; i < n; i++) {
		ctx->snap[p[i]->id] = atomic_read(&kps_hits[p[i]->id]);
		kfree(p[i]);
	}
}

/*
 * One return probe on a function, registered, toggled and unregistered;
 * or KPS_RARRAY of them, two per function, registered in one call and
 * unregistered in one or two.
 */
static void kps_rcycle(struct kps_ctx *ctx, unsigned int iter)
{
	struct kps_rprobe *p[KPS_RARRAY];
	struct kretprobe *rps[KPS_RARRAY];
	int i, n = iter % 2 ? KPS_RARRAY : 1, ret;

	for (i = 0; i < n; i++) {
		p[i] = kps_rnew(ctx, (iter + i) % KPS_NFNS);
		if (!p[i]) {
			while (i--)
				kfree(p[i]);
			ctx->broken = true;
			return;
		}
		rps[i] = &p[i]->rp;
	}
	ret = n == 1 ? register_kretprobe(rps[0]) : register_kretprobes(rps, n);
	if (ret) {
		KUNIT_FAIL(ctx->test, "register_kretprobe%s(%pS) = %d",
			   n == 1 ? "" : "s", rps[0]->kp.addr, ret);
		for (i = 0; i < n; i++)
			kfree(p[i]);
		ctx->broken = true;
		return;
	}
	kps_call_all(&ctx->self);
	if (n == 1) {
		KUNIT_EXPECT_EQ(ctx->test, disable_kretprobe(rps[0]), 0);
		kps_call_all(&ctx->self);
		KUNIT_EXPECT_EQ(ctx->test, enable_kretprobe(rps[0]), 0);
		kps_call_all(&ctx->self);
		kps_runregister(ctx, p, 1);
	} else if (iter % 4 == 1) {
		kps_runregister(ctx, p, n);
	} else {
		kps_runregister(ctx, p, n / 2);
		kps_call_all(&ctx->self);
		kps_runregister(ctx, p + n / 2, n - n / 2);
	}
	ctx->cycles++;
}

/*
 * Return probes come and go on the function entries while both CPUs run
 * through them, and a timer interrupt runs them on the test thread's CPU
 * too.  Each function keeps a resident kprobe, so that the site stays
 * armed and no text changes under the callers: what is stressed is the
 * return-probe life cycle, instances in flight on other CPUs and in the
 * interrupted thread included.
 */
static void kps_kretprobes(struct kunit *test)
{
	struct kps_ctx *ctx = test->priv;
	unsigned long end;
	int i, ret;

	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two online CPUs");
	for (i = 0; i < KPS_NFNS; i++)
		KUNIT_ASSERT_NOT_NULL(test, kps_resident(ctx, KPS_T_FN0 + i));
	ret = set_cpus_allowed_ptr(current, cpumask_of(raw_smp_processor_id()));
	KUNIT_ASSERT_EQ(test, ret, 0);
	ctx->bound = true;
	kps_start_timer(ctx);
	KUNIT_ASSERT_EQ(test, kps_start_workers(ctx), 0);

	end = jiffies + msecs_to_jiffies(KPS_IRQ_MS);
	while (kps_go_on(ctx, end) && ctx->next_id + KPS_RARRAY <= KPS_MAX_IDS) {
		kps_rcycle(ctx, ctx->cycles);
		kps_call_all(&ctx->self);
		cond_resched();
	}
	kps_tail(ctx);
	kps_stop(ctx);

	kunit_info(test, "%u cycles, %u probes, %ld hits; calls: %ld + %ld (threads), %ld (test), %ld (timer); %d return probe handler runs in the timer\n",
		   ctx->cycles, ctx->next_id, kps_total_hits(ctx),
		   atomic_long_read(&ctx->wcall[0].calls),
		   atomic_long_read(&ctx->wcall[1].calls),
		   atomic_long_read(&ctx->self.calls),
		   atomic_long_read(&ctx->tcall.calls),
		   atomic_read(&kps_timer_rhits));
	kps_expect_right(test, &ctx->wcall[0], "thread 0");
	kps_expect_right(test, &ctx->wcall[1], "thread 1");
	kps_expect_right(test, &ctx->self, "test thread");
	kps_expect_right(test, &ctx->tcall, "timer");
	kps_expect_silent(ctx);
	KUNIT_EXPECT_GT(test, kps_total_hits(ctx), 0L);
	KUNIT_EXPECT_GT(test, atomic_read(&kps_timer_rhits), 0);
	KUNIT_EXPECT_GE(test, ctx->cycles, KPS_MIN_CYCLES);
}
#else
static void kps_kretprobes(struct kunit *test)
{
	kunit_skip(test, "no CONFIG_KRETPROBES");
}
#endif

/* ---------------------------------------------------------------------
 * Cases
 */

/*
 * Two probes on one function entry (an ftrace site), only the second one
 * with a post handler: each unregistration takes its probe away for good,
 * and the other one keeps firing until its own.
 */
static void kps_ftrace_post_join(struct kunit *test)
{
	struct kps_ctx *ctx = test->priv;
	struct kps_probe *a, *b;
	int t = KPS_T_FN0 + 1;

	/*
	 * Upstream arms the site through its ftrace_ops for probes without
	 * a post handler, and disarms it through the one for probes with a
	 * post handler once the second probe joined: that fails (WARN
	 * "Failed to disarm kprobe-ftrace", -ENOENT), the first probe stays
	 * armed after unregister_kprobe() returns and runs from freed memory.
	 * The other cases give no post handler to entry probes there.
	 */
	if (kps_upstream)
		kunit_skip(test,
			   "upstream 6.12 leaves the first probe armed (disarms through the wrong ftrace_ops)");

	a = kps_new(ctx, t, false, false);
	b = kps_new(ctx, t, true, false);
	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_ASSERT_NOT_NULL(test, b);
	KUNIT_ASSERT_EQ(test, register_kprobe(&a->kp), 0);
	KUNIT_ASSERT_EQ(test, register_kprobe(&b->kp), 0);
	KUNIT_EXPECT_EQ(test, kps_fns[t](7), kps_fn_want(t, 7));
	KUNIT_EXPECT_EQ(test, atomic_read(&kps_hits[a->id]), 1);
	/* Pre and post handler. */
	KUNIT_EXPECT_EQ(test, atomic_read(&kps_hits[b->id]), 2);

	kps_unregister(ctx, &b, 1);
	KUNIT_EXPECT_EQ(test, kps_fns[t](8), kps_fn_want(t, 8));
	KUNIT_EXPECT_EQ(test, atomic_read(&kps_hits[a->id]), 2);
	kps_unregister(ctx, &a, 1);
	KUNIT_EXPECT_EQ(test, kps_fns[t](9), kps_fn_want(t, 9));
	kps_expect_silent(ctx);
}

#ifdef CONFIG_KRETPROBES
/*
 * kps_ftrace_claim_join: who calls the target from inside ftrace's filter
 * updates, and how often.
 */
static struct task_struct *kps_join_task;
static int kps_join_target;
static atomic_t kps_join_calls;
static atomic_t kps_join_bad;

/* Back from a filter update: the text change is done, kprobes' is not. */
static int kps_join_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	int t = READ_ONCE(kps_join_target);

	if (current != READ_ONCE(kps_join_task))
		return 0;
	atomic_inc(&kps_join_calls);
	if (kps_fns[t](6) != kps_fn_want(t, 6))
		atomic_inc(&kps_join_bad);
	return 0;
}

static struct kretprobe kps_join_rps[] = {
	{ .kp.symbol_name = "ftrace_set_filter_ips", .handler = kps_join_ret },
	{ .kp.symbol_name = "register_ftrace_function", .handler = kps_join_ret },
};

/*
 * A probe on a function's entry, still armed by kprobes' own call, is joined
 * by one with a post handler: the function's calls reach the first probe,
 * or count as missed, all through the second one's registration.  Return
 * probes on ftrace's filter updates call the function at the end of each,
 * after its text change and before anything kprobes does next; being
 * nested in a return handler, each such call is a miss, never nothing.
 */
static void kps_ftrace_claim_join(struct kunit *test)
{
	struct kps_ctx *ctx = test->priv;
	struct kretprobe *rps[ARRAY_SIZE(kps_join_rps)];
	int t = KPS_T_FN0 + 2;
	struct kps_probe *a, *b;
	unsigned long calls, seen;
	int i;

	if (kps_upstream)
		kunit_skip(test,
			   "upstream 6.12 leaves the first probe armed (disarms through the wrong ftrace_ops)");
	for (i = 0; i < ARRAY_SIZE(rps); i++)
		rps[i] = &kps_join_rps[i];
	WRITE_ONCE(kps_join_target, t);
	atomic_set(&kps_join_calls, 0);
	atomic_set(&kps_join_bad, 0);
	KUNIT_ASSERT_EQ(test, register_kretprobes(rps, ARRAY_SIZE(rps)), 0);

	a = kps_new(ctx, t, false, false);
	b = kps_new(ctx, t, true, false);
	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_ASSERT_NOT_NULL(test, b);
	KUNIT_ASSERT_EQ(test, register_kprobe(&a->kp), 0);
#if defined(CONFIG_X86) && defined(CONFIG_KPROBES_ON_FTRACE)
	/* Armed by kprobes' own call over ftrace's nop until the hand-off. */
	KUNIT_EXPECT_TRUE_MSG(test, kpt_site_ours((u8 *)a->kp.addr),
			      "the first probe is not armed by kprobes' call: nothing to test");
#endif
	WRITE_ONCE(kps_join_task, current);
	KUNIT_EXPECT_EQ(test, register_kprobe(&b->kp), 0);
	WRITE_ONCE(kps_join_task, NULL);
	unregister_kretprobes(rps, ARRAY_SIZE(rps));

	calls = atomic_read(&kps_join_calls);
	seen = atomic_read(&kps_hits[a->id]) + a->kp.nmissed;
	kunit_info(test, "%lu calls during the join: %d hits, %lu missed\n",
		   calls, atomic_read(&kps_hits[a->id]), a->kp.nmissed);
	KUNIT_EXPECT_GT_MSG(test, calls, 0UL, "no filter update ran");
	KUNIT_EXPECT_EQ(test, atomic_read(&kps_join_bad), 0);
	KUNIT_EXPECT_EQ_MSG(test, seen, calls,
			    "calls lost: neither a hit nor a miss of the first probe");

	/* Both probes, pre and post, from now on. */
	KUNIT_EXPECT_EQ(test, kps_fns[t](7), kps_fn_want(t, 7));
	KUNIT_EXPECT_EQ(test, atomic_read(&kps_hits[a->id]) + a->kp.nmissed, seen + 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&kps_hits[b->id]), 2);
	kps_unregister(ctx, &b, 1);
	kps_unregister(ctx, &a, 1);
	kps_expect_silent(ctx);
}
#else
static void kps_ftrace_claim_join(struct kunit *test)
{
	kunit_skip(test, "no CONFIG_KRETPROBES");
}
#endif

#ifdef CONFIG_DYNAMIC_FTRACE
/* The calls to one function that another ftrace user sees. */
static unsigned long kps_foreign_fn;
static atomic_t kps_foreign_calls;

static void notrace kps_foreign_cb(unsigned long ip, unsigned long parent_ip,
				   struct ftrace_ops *op,
				   struct ftrace_regs *fregs)
{
	/* ftrace's ip is at the function's start, past an ENDBR if any */
	if (ip - READ_ONCE(kps_foreign_fn) < 16)
		atomic_inc(&kps_foreign_calls);
}

/*
 * Call target @t @n times, at once (no hand-off can run on this CPU in
 * between), and expect @a to have @hits in all.
 */
static void kps_foreign_calls_check(struct kunit *test, int t, int n,
				    struct kps_probe *a, int hits,
				    int foreign, const char *when)
{
	int i, bad = 0;

	preempt_disable();
	for (i = 0; i < n; i++)
		bad += kps_fns[t](i) != kps_fn_want(t, i);
	preempt_enable();
	KUNIT_EXPECT_EQ(test, bad, 0);
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&kps_hits[a->id]) + (int)a->kp.nmissed,
			    hits, "the probe's hits and misses %s", when);
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&kps_foreign_calls), foreign,
			    "the other ftrace user's calls %s", when);
}

/*
 * Another ftrace user enables the function of an entry probe that is
 * still armed by kprobes' own call: that function alone (@all false), or
 * every function, as the function tracer does.  It stays past the
 * probe's hand-off to ftrace (@stay), or leaves before.  Both see every
 * call, all along.
 */
static void kps_foreign_ops_run(struct kunit *test, int t, bool all,
				bool stay)
{
	struct kps_ctx *ctx = test->priv;
	struct ftrace_ops *ops;
	struct kps_probe *a;
	int ret, on;

	ops = kunit_kzalloc(test, sizeof(*ops), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ops);
	ops->func = kps_foreign_cb;
	WRITE_ONCE(kps_foreign_fn, (unsigned long)kps_fns[t]);
	atomic_set(&kps_foreign_calls, 0);
	if (!all) {
		ret = ftrace_set_filter_ip(ops, (unsigned long)kps_fns[t], 0, 0);
		KUNIT_ASSERT_EQ(test, ret, 0);
	}

	a = kps_new(ctx, t, false, false);
	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_ASSERT_EQ(test, register_kprobe(&a->kp), 0);
#if defined(CONFIG_X86) && defined(CONFIG_KPROBES_ON_FTRACE)
	if (!kps_upstream)
		KUNIT_EXPECT_TRUE_MSG(test, kpt_site_ours((u8 *)a->kp.addr),
				      "the probe is not armed by kprobes' call: nothing to test");
#endif
	ret = register_ftrace_function(ops);
	KUNIT_EXPECT_EQ(test, ret, 0);
	on = ret ? 0 : 5;
	kps_foreign_calls_check(test, t, 5, a, 5, on, "with it there");
	if (stay) {
		/* the hand-off, HZ / 10 after the registration */
		msleep(300);
		kps_foreign_calls_check(test, t, 5, a, 10, 2 * on,
					"with it there, after the hand-off");
	}
	if (!ret)
		KUNIT_EXPECT_EQ(test, unregister_ftrace_function(ops), 0);
	ftrace_free_filter(ops);
	kps_foreign_calls_check(test, t, 5, a, stay ? 15 : 10, stay ? 2 * on : on,
				"once it left");
	if (!stay) {
		msleep(300);
		kps_foreign_calls_check(test, t, 5, a, 15, on,
					"once it left, after the hand-off");
	}
	kps_unregister(ctx, &a, 1);
	kps_expect_silent(ctx);
}

static void kps_ftrace_foreign_one(struct kunit *test)
{
	kps_foreign_ops_run(test, KPS_T_FN0 + 3, false, true);
}

static void kps_ftrace_foreign_all(struct kunit *test)
{
	kps_foreign_ops_run(test, KPS_T_FN0, true, false);
}
#else
static void kps_ftrace_foreign_one(struct kunit *test)
{
	kunit_skip(test, "no CONFIG_DYNAMIC_FTRACE");
}

static void kps_ftrace_foreign_all(struct kunit *test)
{
	kunit_skip(test, "no CONFIG_DYNAMIC_FTRACE");
}
#endif

static int kps_init(struct kunit *test)
{
	struct kps_ctx *ctx = &kps_ctx;
	int i;

	memset(ctx, 0, sizeof(*ctx));
	ctx->test = test;
	ctx->snap = kunit_kcalloc(test, KPS_MAX_IDS, sizeof(int), GFP_KERNEL);
	if (!ctx->snap)
		return -ENOMEM;
	for (i = 0; i < KPS_MAX_IDS; i++) {
		ctx->snap[i] = -1;
		atomic_set(&kps_hits[i], 0);
	}
	atomic_set(&kps_timer_hits, 0);
	atomic_set(&kps_timer_rhits, 0);
	atomic_set(&kps_watch_timer_hits, 0);
	WRITE_ONCE(kps_watch_id, -1);
	ctx->self.x = 3U << 30;
	ctx->tcall.x = 2U << 30;
	test->priv = ctx;
	return 0;
}

static void kps_exit(struct kunit *test)
{
	kps_stop(test->priv);
}

/*
 * Two CPUs run the targets flat out while probes on them are registered,
 * toggled and unregistered.
 */
static void kps_threads(struct kunit *test)
{
	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two online CPUs");
	kps_run(test->priv, KPS_THREADS_MS, true, true);
}

/*
 * The same, but the probe changes also arm and disarm sites, i.e. write
 * to the text, while the other CPUs run it.
 */
static void kps_threads_patching(struct kunit *test)
{
	if (!kps_cross_cpu)
		kunit_skip(test,
			   "cross_cpu=0: code patched under running CPUs is not coherent here (multi-threaded TCG)");
	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two online CPUs");
	kps_run(test->priv, KPS_THREADS_MS, false, true);
}

/*
 * A timer interrupt runs the targets on the test thread's CPU, in the
 * middle of the test thread's own calls and of its probe changes.
 *
 * One probe on kps_fn0, the watched one, is registered before the timer
 * starts and unregistered after it stopped, while the site under it goes
 * through every change the cycles make.  Each call of kps_fn0 runs its
 * handlers (pre and post: two counts) or, only when the timer came in
 * while the test thread was in a handler, counts one miss.  The watched
 * handlers take KPS_WATCH_DELAY_US in the test thread, so that the timer
 * does come in there (an entry probe's handlers run with interrupts on).  No worker
 * runs, so the callers' own call counts give the exact expectation: each
 * timer call is a hit or a miss, each test thread call a hit.
 */
static void kps_irq(struct kunit *test)
{
	struct kps_ctx *ctx = test->priv;
	struct kps_probe *w;
	long per_call, thits, ohits;
	unsigned int wid;
	int ret;

	ret = set_cpus_allowed_ptr(current, cpumask_of(raw_smp_processor_id()));
	KUNIT_ASSERT_EQ(test, ret, 0);
	ctx->bound = true;
	w = kps_resident(ctx, KPS_T_FN0);
	KUNIT_ASSERT_NOT_NULL(test, w);
	wid = w->id;
	per_call = w->kp.post_handler ? 2 : 1;
	WRITE_ONCE(kps_watch_id, wid);
	kps_start_timer(ctx);
	kps_run(ctx, KPS_IRQ_MS, false, false);
	thits = atomic_read(&kps_watch_timer_hits);
	ohits = ctx->snap[wid] - thits;
	kunit_info(test, "%d handler runs in timer context; the watched probe: %ld + %ld runs, %lu missed\n",
		   atomic_read(&kps_timer_hits), thits, ohits,
		   ctx->watch_missed);
	KUNIT_EXPECT_GT(test, atomic_long_read(&ctx->tcall.calls), 0L);
	KUNIT_EXPECT_GT(test, thits, 0L);
	KUNIT_EXPECT_EQ_MSG(test,
			    thits + per_call * (long)ctx->watch_missed,
			    per_call * atomic_long_read(&ctx->tcall.calls),
			    "timer calls of %pS: runs %ld, missed %lu (%ld runs a call)",
			    kps_target(KPS_T_FN0), thits, ctx->watch_missed,
			    per_call);
	KUNIT_EXPECT_EQ_MSG(test, ohits,
			    per_call * atomic_long_read(&ctx->self.calls),
			    "test thread calls of %pS", kps_target(KPS_T_FN0));
}

static struct kunit_case kps_cases[] = {
	KUNIT_CASE(kps_ftrace_post_join),
	KUNIT_CASE(kps_ftrace_claim_join),
	KUNIT_CASE(kps_ftrace_foreign_one),
	KUNIT_CASE_SLOW(kps_ftrace_foreign_all),
	KUNIT_CASE_SLOW(kps_threads),
	KUNIT_CASE_SLOW(kps_threads_patching),
	KUNIT_CASE_SLOW(kps_irq),
	KUNIT_CASE_SLOW(kps_kretprobes),
	KUNIT_CASE_SLOW(kps_ool_boosted),
	KUNIT_CASE_SLOW(kps_ool_detour),
	KUNIT_CASE_SLOW(kps_ool_optimizing),
	{}
};

static struct kunit_suite kps_suite = {
	.name = "kprobes_stress",
	.init = kps_init,
	.exit = kps_exit,
	.test_cases = kps_cases,
};

kunit_test_suites(&kps_suite);

MODULE_DESCRIPTION("KUnit stress cases for kprobes registration under load");
MODULE_LICENSE("GPL");
