// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit cases for return probes (kretprobes): registration, handlers and
 * their per-call data, return addresses and stack traces seen from a
 * handler, the context (preemption, interrupts) handlers run in on each
 * kind of entry site, two CPUs and many sleeping callers on one probe,
 * unregistration and task exit while calls are in flight, the two kinds
 * of miss (a call from another probe's handler, a call that finds no
 * instance), and bad input.  The probed functions are in
 * kprobes_target.ko.
 *
 * Like kprobes_kunit.ko, the cases run on our kprobes and on upstream's
 * (module parameter "upstream", set by run_tests.sh).  One case is meant
 * to fail on upstream: kpr_no_miss puts 1000 sleeping callers on a probe
 * with the default maxactive.  Upstream prepares a fixed number of
 * instances and misses the other returns; ours grows its pool instead.
 *
 * The checks of our pool's bookkeeping (kretprobe_pool_info()) are only
 * compiled where include/linux/kprobes.h defines KRETPROBE_POOL_GROWS.
 * Without CONFIG_KRETPROBES the module holds no suite, and run_tests.sh
 * does not load it.
 */
#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/irqflags.h>
#include <linux/jiffies.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/kthread.h>
#include <linux/limits.h>
#include <linux/mman.h>
#include <linux/module.h>
#include <linux/ptrace.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/stacktrace.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <asm/cpufeature.h>
#include <asm/text-patching.h>
#include "kprobes_target.h"

static bool upstream;
module_param(upstream, bool, 0444);
MODULE_PARM_DESC(upstream, "the kernel runs the upstream kprobes (baseline)");

#ifdef CONFIG_KRETPROBES

/* Entries kept of a stack trace taken in a return handler. */
#define KPR_STACK_MAX	32

/* Why a handler call was wrong: bits of kpr_probe.why. */
enum {
	KPR_BAD_RET,		/* return value does not match the argument */
	KPR_BAD_DATA,		/* ri->data not as the entry handler left it */
	KPR_BAD_RP,		/* get_kretprobe() is not this probe */
	KPR_BAD_RA,		/* get_kretprobe_retaddr() is not the caller */
};

/* A return probe with what its handlers saw. */
struct kpr_probe {
	struct kretprobe rp;
	int add;			/* the target returns arg + add */
	unsigned long want_ra;		/* expected return address, if set */
	atomic_t entries;		/* entry_handler calls */
	atomic_t returns;		/* handler calls */
	atomic_t bad;			/* handler calls that saw a mistake */
	unsigned long why;		/* KPR_BAD_* bits */
	unsigned long last_ret;		/* regs_return_value() last seen */
	unsigned long stack[KPR_STACK_MAX];
	unsigned int nstack;
};

/* What an entry handler leaves in ri->data for the return handler. */
struct kpr_data {
	long arg;
	unsigned long magic;
	u8 fill[48];
};

#define KPR_MAGIC	0x6b72657470726f62UL

/*
 * A module can call is_kretprobe_trampoline() only where the kernel
 * exports it (the Makefile looks in Module.symvers).  Upstream does not:
 * its version (rethook) is an inline on a symbol it does not export.
 * Without it, the trampoline checks rely on the return address the target
 * saw while probed, which is the trampoline; on our kernel the missing
 * export is reported as a failure of kpr_stacktrace.
 */
#if defined(KPR_IS_TRAMPOLINE_EXPORTED) && !defined(CONFIG_KRETPROBE_ON_RETHOOK)
#define kpr_can_ask_trampoline	true
static inline bool kpr_is_trampoline(unsigned long addr)
{
	return is_kretprobe_trampoline(addr);
}
#else
#define kpr_can_ask_trampoline	false
static inline bool kpr_is_trampoline(unsigned long addr)
{
	return false;
}
#endif

#define KPR_NPROBES	4

/*
 * Probes live in static storage, never on a test's stack: a probe left
 * registered by a failing case must not point at freed memory.
 */
static struct kpr_probe kpr_pool[KPR_NPROBES];

/* What the running case registered, undone by kpr_exit(). */
struct kpr_ctx {
	struct kretprobe *live[KPR_NPROBES + 1];
	struct kprobe *kps[2];
	void *heap;		/* a kmalloc()ed probe, freed after that */
	int sysctl_old;		/* the sysctl before the case set it, or < 0 */
};

static struct kpr_probe *kpr_new(int i)
{
	struct kpr_probe *p = &kpr_pool[i];

	memset(p, 0, sizeof(*p));
	return p;
}

static struct kpr_probe *kpr_of(struct kretprobe_instance *ri)
{
	return container_of(get_kretprobe(ri), struct kpr_probe, rp);
}

static void kpr_track(struct kunit *test, struct kretprobe *rp)
{
	struct kpr_ctx *ctx = test->priv;
	int i;

	for (i = 0; i < ARRAY_SIZE(ctx->live); i++) {
		if (!ctx->live[i]) {
			ctx->live[i] = rp;
			return;
		}
	}
	KUNIT_FAIL(test, "too many live return probes");
}

static void kpr_untrack(struct kunit *test, struct kretprobe *rp)
{
	struct kpr_ctx *ctx = test->priv;
	int i;

	for (i = 0; i < ARRAY_SIZE(ctx->live); i++)
		if (ctx->live[i] == rp)
			ctx->live[i] = NULL;
}

static int kpr_register(struct kunit *test, struct kretprobe *rp)
{
	int ret = register_kretprobe(rp);

	if (!ret)
		kpr_track(test, rp);
	return ret;
}

static void kpr_unregister(struct kunit *test, struct kretprobe *rp)
{
	kpr_untrack(test, rp);
	unregister_kretprobe(rp);
}

#ifdef KRETPROBE_POOL_GROWS
/* A snapshot of @p's pool, through the kernel's accessor. */
static struct kretprobe_pool_info kpr_pool_info(struct kpr_probe *p)
{
	struct kretprobe_pool_info info;

	kretprobe_pool_info(&p->rp, &info);
	return info;
}
#endif

static int kpr_returns(struct kpr_probe *p)
{
	return atomic_read(&p->returns);
}

/* ---------------------------------------------------------------------
 * Handlers
 */

static int kpr_entry_count(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	atomic_inc(&kpr_of(ri)->entries);
	return 0;
}

static int kpr_ret_note(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kpr_probe *p = kpr_of(ri);

	WRITE_ONCE(p->last_ret, regs_return_value(regs));
	atomic_inc(&p->returns);
	return 0;
}

static void kpr_bad(struct kpr_probe *p, int why)
{
	set_bit(why, &p->why);
	atomic_inc(&p->bad);
}

/* Only calls with an even argument get a return handler call. */
static int kpr_entry_refuse_odd(struct kretprobe_instance *ri,
				struct pt_regs *regs)
{
	atomic_inc(&kpr_of(ri)->entries);
	return regs_get_kernel_argument(regs, 0) & 1;
}

static int kpr_ret_even(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kpr_probe *p = kpr_of(ri);
	int arg = (int)regs_return_value(regs) - p->add;

	if (arg & 1)
		kpr_bad(p, KPR_BAD_RET);
	atomic_inc(&p->returns);
	return 0;
}

/*
 * The entry handler leaves the call's argument and a pattern made from it
 * in ri->data; the return handler checks them against the return value,
 * which the targets compute from their argument.
 */
static void kpr_data_fill(struct kpr_data *d, long arg)
{
	int i;

	d->arg = arg;
	d->magic = KPR_MAGIC ^ arg;
	for (i = 0; i < sizeof(d->fill); i++)
		d->fill[i] = (u8)(arg * 7 + i);
}

static bool kpr_data_intact(const struct kpr_data *d)
{
	int i;

	if (d->magic != (KPR_MAGIC ^ d->arg))
		return false;
	for (i = 0; i < sizeof(d->fill); i++)
		if (d->fill[i] != (u8)(d->arg * 7 + i))
			return false;
	return true;
}

static int kpr_entry_save(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kpr_probe *p = kpr_of(ri);

	kpr_data_fill((struct kpr_data *)ri->data,
		      (int)regs_get_kernel_argument(regs, 0));
	atomic_inc(&p->entries);
	return 0;
}

static int kpr_ret_check(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kpr_probe *p = kpr_of(ri);
	struct kpr_data *d = (struct kpr_data *)ri->data;
	int ret = (int)regs_return_value(regs);

	if (!kpr_data_intact(d))
		kpr_bad(p, KPR_BAD_DATA);
	else if (ret != (int)d->arg + p->add)
		kpr_bad(p, KPR_BAD_RET);
	if (p->want_ra && get_kretprobe_retaddr(ri) != p->want_ra)
		kpr_bad(p, KPR_BAD_RA);
	WRITE_ONCE(p->last_ret, ret);
	atomic_inc(&p->returns);
	return 0;
}

/* The probe of kpr_data_round_trip, not found through get_kretprobe(). */
static struct kpr_probe *kpr_data_probe;

static int kpr_entry_save_rp(struct kretprobe_instance *ri,
			     struct pt_regs *regs)
{
	struct kpr_probe *p = kpr_data_probe;

	if (get_kretprobe(ri) != &p->rp) {
		kpr_bad(p, KPR_BAD_RP);
		return 1;
	}
	return kpr_entry_save(ri, regs);
}

static int kpr_ret_check_rp(struct kretprobe_instance *ri,
			    struct pt_regs *regs)
{
	struct kpr_probe *p = kpr_data_probe;

	if (get_kretprobe(ri) != &p->rp) {
		kpr_bad(p, KPR_BAD_RP);
		return 0;
	}
	return kpr_ret_check(ri, regs);
}

/* A stack trace from the return handler, kept for the test to look at. */
static int kpr_ret_stack(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kpr_probe *p = kpr_of(ri);

	p->nstack = stack_trace_save(p->stack, KPR_STACK_MAX, 0);
	WRITE_ONCE(p->last_ret, regs_return_value(regs));
	atomic_inc(&p->returns);
	return 0;
}

/*
 * After a failed registration the kretprobe state must be intact: a fresh
 * return probe on @fn registers, sees each call's return value once and
 * goes away.
 */
static void kpr_expect_healthy(struct kunit *test, int (*fn)(int), int add)
{
	struct kpr_probe *p = kpr_new(KPR_NPROBES - 1);

	p->rp.kp.addr = (kprobe_opcode_t *)fn;
	p->rp.handler = kpr_ret_note;
	KUNIT_ASSERT_EQ(test, kpr_register(test, &p->rp), 0);
	KUNIT_EXPECT_EQ(test, fn(10), 10 + add);
	KUNIT_EXPECT_EQ(test, fn(11), 11 + add);
	KUNIT_EXPECT_EQ(test, kpr_returns(p), 2);
	KUNIT_EXPECT_EQ(test, (int)p->last_ret, 11 + add);
	kpr_unregister(test, &p->rp);
	fn(12);
	KUNIT_EXPECT_EQ(test, kpr_returns(p), 2);
}

/* ---------------------------------------------------------------------
 * Callers that sleep in a probed function: the "crowd"
 *
 * Each crowd thread calls kpt_gate_wait(i), which sleeps until the gate
 * opens, checks that it got i + KPT_GATE_ADD back, and exits.  A thread
 * holds a reference on this module until it is gone.
 */
static struct {
	bool active;
	int started;
	atomic_t returned;		/* came back from kpt_gate_wait() */
	atomic_t wrong;			/* ... with a wrong value */
	atomic_t alive;			/* + 1 while threads are created */
	struct completion gone;		/* alive reached zero */
	int refs_before;		/* module_refcount() before */
	struct task_struct *first;	/* thread 0, referenced */
} kpr_crowd;

static int kpr_crowd_thread(void *arg)
{
	int x = (long)arg;

	if (kpt_gate_wait(x) != x + KPT_GATE_ADD)
		atomic_inc(&kpr_crowd.wrong);
	atomic_inc(&kpr_crowd.returned);
	if (atomic_dec_and_test(&kpr_crowd.alive))
		complete(&kpr_crowd.gone);
	module_put_and_kthread_exit(0);
}

/* Start @n crowd threads; returns how many started. */
static int kpr_crowd_start(int n)
{
	int i;

	kpr_crowd.active = true;
	kpr_crowd.started = 0;
	atomic_set(&kpr_crowd.returned, 0);
	atomic_set(&kpr_crowd.wrong, 0);
	atomic_set(&kpr_crowd.alive, 1);
	init_completion(&kpr_crowd.gone);
	kpr_crowd.refs_before = module_refcount(THIS_MODULE);

	for (i = 0; i < n; i++) {
		struct task_struct *t;

		__module_get(THIS_MODULE);
		atomic_inc(&kpr_crowd.alive);
		t = kthread_run(kpr_crowd_thread, (void *)(long)i,
				"kpr_crowd/%d", i);
		if (IS_ERR(t)) {
			atomic_dec(&kpr_crowd.alive);
			module_put(THIS_MODULE);
			break;
		}
		if (!i)
			kpr_crowd.first = get_task_struct(t);
		if (!(i % 64))
			cond_resched();
	}
	kpr_crowd.started = i;
	if (atomic_dec_and_test(&kpr_crowd.alive))
		complete(&kpr_crowd.gone);
	return i;
}

/* Wait up to @secs seconds for @read() to reach @n; true when it did. */
static bool kpr_wait_count(int (*read)(void), int n, int secs)
{
	unsigned long end = jiffies + secs * HZ;

	while (read() < n) {
		if (time_after(jiffies, end))
			return false;
		msleep(20);
	}
	return true;
}

static int kpr_crowd_returned(void)
{
	return atomic_read(&kpr_crowd.returned);
}

/*
 * Wait until every crowd thread is gone, its module reference dropped
 * too; false on timeout.  The gate must be open.
 */
static bool kpr_crowd_end(int secs)
{
	unsigned long end = jiffies + secs * HZ;

	if (!kpr_crowd.active)
		return true;
	if (!wait_for_completion_timeout(&kpr_crowd.gone, secs * HZ))
		return false;
	if (kpr_crowd.first) {
		put_task_struct(kpr_crowd.first);
		kpr_crowd.first = NULL;
	}
	/* The last few may still be on their way out of this module. */
	while (module_refcount(THIS_MODULE) > kpr_crowd.refs_before) {
		if (time_after(jiffies, end))
			return false;
		msleep(20);
	}
	kpr_crowd.active = false;
	return true;
}

/* ---------------------------------------------------------------------
 * Set-up and clean-up
 */

static int kpr_init(struct kunit *test)
{
	struct kpr_ctx *ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);

	if (!ctx)
		return -ENOMEM;
	ctx->sysctl_old = -1;
	test->priv = ctx;
	kpt_gate_open();
	return 0;
}

static void kpr_exit(struct kunit *test)
{
	struct kpr_ctx *ctx = test->priv;
	int i;

	/* Sleepers left behind by a failed case go first. */
	kpt_gate_open();
	if (!kpr_crowd_end(120))
		kunit_err(test, "crowd threads did not finish\n");
	for (i = 0; i < ARRAY_SIZE(ctx->live); i++) {
		if (ctx->live[i]) {
			unregister_kretprobe(ctx->live[i]);
			ctx->live[i] = NULL;
		}
	}
	for (i = 0; i < ARRAY_SIZE(ctx->kps); i++) {
		if (ctx->kps[i]) {
			unregister_kprobe(ctx->kps[i]);
			ctx->kps[i] = NULL;
		}
	}
	kfree(ctx->heap);
	ctx->heap = NULL;
	if (ctx->sysctl_old >= 0)
		kpt_optimization_set(ctx->sysctl_old);
	ctx->sysctl_old = -1;
}

/* ---------------------------------------------------------------------
 * Registration and handlers
 */

static void kpr_basic(struct kunit *test)
{
	struct kpr_probe *p = kpr_new(0);
	int i;

	p->rp.kp.addr = (kprobe_opcode_t *)kpt_kret_a;
	p->rp.handler = kpr_ret_note;
	KUNIT_ASSERT_EQ(test, kpr_register(test, &p->rp), 0);
	for (i = 0; i < 5; i++) {
		KUNIT_EXPECT_EQ(test, kpt_kret_a(i), i + KPT_KRET_A_ADD);
		KUNIT_EXPECT_EQ(test, (int)p->last_ret, i + KPT_KRET_A_ADD);
	}
	KUNIT_EXPECT_EQ(test, kpr_returns(p), 5);
	KUNIT_EXPECT_EQ(test, p->rp.nmissed, 0);
	KUNIT_EXPECT_EQ(test, p->rp.kp.nmissed, 0UL);
	kpr_unregister(test, &p->rp);
	KUNIT_EXPECT_EQ(test, kpt_kret_a(7), 7 + KPT_KRET_A_ADD);
	KUNIT_EXPECT_EQ(test, kpr_returns(p), 5);
}

/* An array of three, by address, by symbol and by module:symbol. */
static void kpr_register_array(struct kunit *test)
{
	struct kpr_probe *a = kpr_new(0), *b = kpr_new(1), *c = kpr_new(2);
	struct kretprobe *rps[] = { &a->rp, &b->rp, &c->rp };
	int i;

	a->rp.kp.addr = (kprobe_opcode_t *)kpt_kret_a;
	b->rp.kp.symbol_name = "kpt_kret_b";
	c->rp.kp.symbol_name = KPT_MODNAME ":kpt_kret_inner";
	for (i = 0; i < ARRAY_SIZE(rps); i++)
		rps[i]->handler = kpr_ret_note;
	KUNIT_ASSERT_EQ(test, register_kretprobes(rps, ARRAY_SIZE(rps)), 0);
	for (i = 0; i < ARRAY_SIZE(rps); i++)
		kpr_track(test, rps[i]);

	KUNIT_EXPECT_EQ(test, kpt_kret_a(1), 1 + KPT_KRET_A_ADD);
	KUNIT_EXPECT_EQ(test, (int)a->last_ret, 1 + KPT_KRET_A_ADD);
	KUNIT_EXPECT_EQ(test, kpt_kret_b(2), 2 + KPT_KRET_B_ADD);
	KUNIT_EXPECT_EQ(test, (int)b->last_ret, 2 + KPT_KRET_B_ADD);
	KUNIT_EXPECT_EQ(test, kpt_kret_inner(3), 3 + KPT_KRET_INNER_ADD);
	KUNIT_EXPECT_EQ(test, (int)c->last_ret, 3 + KPT_KRET_INNER_ADD);
	KUNIT_EXPECT_EQ(test, kpr_returns(a), 1);
	KUNIT_EXPECT_EQ(test, kpr_returns(b), 1);
	KUNIT_EXPECT_EQ(test, kpr_returns(c), 1);

	for (i = 0; i < ARRAY_SIZE(rps); i++)
		kpr_untrack(test, rps[i]);
	unregister_kretprobes(rps, ARRAY_SIZE(rps));
	kpt_kret_a(0);
	kpt_kret_b(0);
	kpt_kret_inner(0);
	KUNIT_EXPECT_EQ(test, kpr_returns(a), 1);
	KUNIT_EXPECT_EQ(test, kpr_returns(b), 1);
	KUNIT_EXPECT_EQ(test, kpr_returns(c), 1);
}

static void kpr_enable_disable(struct kunit *test)
{
	struct kpr_probe *p = kpr_new(0), *q = kpr_new(1);

	p->rp.kp.addr = (kprobe_opcode_t *)kpt_kret_a;
	p->rp.handler = kpr_ret_note;
	p->rp.entry_handler = kpr_entry_count;
	KUNIT_ASSERT_EQ(test, kpr_register(test, &p->rp), 0);
	kpt_kret_a(0);
	KUNIT_EXPECT_EQ(test, kpr_returns(p), 1);

	KUNIT_EXPECT_EQ(test, disable_kretprobe(&p->rp), 0);
	kpt_kret_a(1);
	kpt_kret_a(2);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->entries), 1);
	KUNIT_EXPECT_EQ(test, kpr_returns(p), 1);

	KUNIT_EXPECT_EQ(test, enable_kretprobe(&p->rp), 0);
	KUNIT_EXPECT_EQ(test, kpt_kret_a(3), 3 + KPT_KRET_A_ADD);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->entries), 2);
	KUNIT_EXPECT_EQ(test, kpr_returns(p), 2);
	KUNIT_EXPECT_EQ(test, (int)p->last_ret, 3 + KPT_KRET_A_ADD);
	kpr_unregister(test, &p->rp);

	/* Registered disabled, then enabled. */
	q->rp.kp.addr = (kprobe_opcode_t *)kpt_kret_b;
	q->rp.kp.flags = KPROBE_FLAG_DISABLED;
	q->rp.handler = kpr_ret_note;
	KUNIT_ASSERT_EQ(test, kpr_register(test, &q->rp), 0);
	kpt_kret_b(0);
	KUNIT_EXPECT_EQ(test, kpr_returns(q), 0);
	KUNIT_EXPECT_EQ(test, enable_kretprobe(&q->rp), 0);
	kpt_kret_b(1);
	KUNIT_EXPECT_EQ(test, kpr_returns(q), 1);
	KUNIT_EXPECT_EQ(test, q->rp.nmissed, 0);
	kpr_unregister(test, &q->rp);
}

/*
 * An entry_handler that returns non-zero refuses the call: no return
 * handler call for it, and it is not a miss.
 */
static void kpr_entry_refusal(struct kunit *test)
{
	struct kpr_probe *p = kpr_new(0);
	int i;

	p->rp.kp.addr = (kprobe_opcode_t *)kpt_kret_a;
	p->rp.entry_handler = kpr_entry_refuse_odd;
	p->rp.handler = kpr_ret_even;
	p->add = KPT_KRET_A_ADD;
	KUNIT_ASSERT_EQ(test, kpr_register(test, &p->rp), 0);
	for (i = 0; i < 10; i++)
		KUNIT_EXPECT_EQ(test, kpt_kret_a(i), i + KPT_KRET_A_ADD);
	kpr_unregister(test, &p->rp);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->entries), 10);
	KUNIT_EXPECT_EQ(test, kpr_returns(p), 5);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->bad), 0);
	KUNIT_EXPECT_EQ(test, p->rp.nmissed, 0);
}

/*
 * data_size bytes travel from the entry handler to the return handler of
 * the same call, get_kretprobe() names the probe in both, and
 * get_kretprobe_retaddr() is where the call returns to.  While probed,
 * the target itself sees the trampoline as its return address.
 */
static void kpr_data_round_trip(struct kunit *test)
{
	struct kpr_probe *p = kpr_new(0);
	unsigned long real, seen;
	int i;

	KUNIT_ASSERT_EQ(test, kpt_kret_call(kpt_kret_b, 1), 1 + KPT_KRET_B_ADD);
	real = READ_ONCE(kpt_kret_ra[KPT_RA_B]);

	kpr_data_probe = p;
	p->rp.kp.addr = (kprobe_opcode_t *)kpt_kret_b;
	p->rp.entry_handler = kpr_entry_save_rp;
	p->rp.handler = kpr_ret_check_rp;
	p->rp.data_size = sizeof(struct kpr_data);
	p->add = KPT_KRET_B_ADD;
	p->want_ra = real;
	KUNIT_ASSERT_EQ(test, sizeof(struct kpr_data), 64);
	KUNIT_ASSERT_EQ(test, kpr_register(test, &p->rp), 0);
	for (i = 0; i < 8; i++)
		KUNIT_EXPECT_EQ(test, kpt_kret_call(kpt_kret_b, i * 1000 - 3),
				i * 1000 - 3 + KPT_KRET_B_ADD);
	seen = READ_ONCE(kpt_kret_ra[KPT_RA_B]);
	kpr_unregister(test, &p->rp);

	KUNIT_EXPECT_EQ(test, atomic_read(&p->entries), 8);
	KUNIT_EXPECT_EQ(test, kpr_returns(p), 8);
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&p->bad), 0,
			    "why: %#lx (bits: ret, data, rp, retaddr)", p->why);
	KUNIT_EXPECT_EQ(test, (int)p->last_ret, 7 * 1000 - 3 + KPT_KRET_B_ADD);
	KUNIT_EXPECT_NE_MSG(test, seen, real,
			    "a probed target still sees its caller as return address");
	if (kpr_can_ask_trampoline)
		KUNIT_EXPECT_TRUE(test, kpr_is_trampoline(seen));

	/* Unprobed again, it returns to its caller directly. */
	kpt_kret_call(kpt_kret_b, 2);
	KUNIT_EXPECT_EQ(test, READ_ONCE(kpt_kret_ra[KPT_RA_B]), real);
}

/*
 * A kprobe and a return probe on the same function entry (an ftrace
 * site), and a return probe on a function with a breakpoint probe with a
 * post_handler inside it: every handler runs once per call.
 */
static unsigned long kpr_post_ax, kpr_post_ip;
static atomic_t kpr_pre_hits, kpr_post_hits;

static int kpr_kp_pre(struct kprobe *kp, struct pt_regs *regs)
{
	atomic_inc(&kpr_pre_hits);
	return 0;
}

static void kpr_kp_post(struct kprobe *kp, struct pt_regs *regs,
			unsigned long flags)
{
	kpr_post_ax = regs->ax;
	kpr_post_ip = instruction_pointer(regs);
	atomic_inc(&kpr_post_hits);
}

static struct kprobe kpr_kp;

static void kpr_with_kprobe(struct kunit *test)
{
	struct kpr_ctx *ctx = test->priv;
	struct kpr_probe *p = kpr_new(0), *q = kpr_new(1);
	int i;

	atomic_set(&kpr_pre_hits, 0);
	atomic_set(&kpr_post_hits, 0);
	memset(&kpr_kp, 0, sizeof(kpr_kp));
	kpr_kp.addr = (kprobe_opcode_t *)kpt_kret_b;
	kpr_kp.pre_handler = kpr_kp_pre;
	kpr_kp.post_handler = kpr_kp_post;
	p->rp.kp.addr = (kprobe_opcode_t *)kpt_kret_b;
	p->rp.handler = kpr_ret_note;
	p->rp.entry_handler = kpr_entry_count;

	KUNIT_ASSERT_EQ(test, register_kprobe(&kpr_kp), 0);
	ctx->kps[0] = &kpr_kp;
	KUNIT_ASSERT_EQ(test, kpr_register(test, &p->rp), 0);
	for (i = 0; i < 5; i++)
		KUNIT_EXPECT_EQ(test, kpt_kret_b(i), i + KPT_KRET_B_ADD);
	KUNIT_EXPECT_EQ(test, atomic_read(&kpr_pre_hits), 5);
	KUNIT_EXPECT_EQ(test, atomic_read(&kpr_post_hits), 5);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->entries), 5);
	KUNIT_EXPECT_EQ(test, kpr_returns(p), 5);
	KUNIT_EXPECT_EQ(test, (int)p->last_ret, 4 + KPT_KRET_B_ADD);

	/* Either one goes, the other stays. */
	kpr_unregister(test, &p->rp);
	kpt_kret_b(0);
	KUNIT_EXPECT_EQ(test, atomic_read(&kpr_pre_hits), 6);
	KUNIT_EXPECT_EQ(test, kpr_returns(p), 5);
	ctx->kps[0] = NULL;
	unregister_kprobe(&kpr_kp);

	/* The asm target: its entry and inner probes are breakpoints. */
	atomic_set(&kpr_pre_hits, 0);
	atomic_set(&kpr_post_hits, 0);
	memset(&kpr_kp, 0, sizeof(kpr_kp));
	kpr_kp.addr = (kprobe_opcode_t *)kpt_label_addr(KPT_L_ADD_INSN);
	kpr_kp.pre_handler = kpr_kp_pre;
	kpr_kp.post_handler = kpr_kp_post;
	q->rp.kp.addr = (kprobe_opcode_t *)kpt_asm_add;
	q->rp.handler = kpr_ret_note;
	KUNIT_ASSERT_EQ(test, kpr_register(test, &q->rp), 0);
	KUNIT_ASSERT_EQ(test, register_kprobe(&kpr_kp), 0);
	ctx->kps[0] = &kpr_kp;
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, kpt_asm_add(100 + i), 100 + i + KPT_ADD_IMM);
	KUNIT_EXPECT_EQ(test, atomic_read(&kpr_pre_hits), 3);
	KUNIT_EXPECT_EQ(test, atomic_read(&kpr_post_hits), 3);
	KUNIT_EXPECT_EQ(test, (u32)kpr_post_ax, 102U + KPT_ADD_IMM);
	KUNIT_EXPECT_EQ(test, kpr_post_ip, kpt_label_addr(KPT_L_ADD_NEXT));
	KUNIT_EXPECT_EQ(test, kpr_returns(q), 3);
	KUNIT_EXPECT_EQ(test, (u32)q->last_ret, 102U + KPT_ADD_IMM);
	KUNIT_EXPECT_EQ(test, q->rp.nmissed, 0);
	ctx->kps[0] = NULL;
	unregister_kprobe(&kpr_kp);
	kpr_unregister(test, &q->rp);
}

/*
 * A return-probed function called from another probe's pre_handler: the
 * hit on its entry comes while a handler runs, so it is missed like any
 * such hit.  Its kprobe's nmissed grows by exactly one per call, no
 * instance is taken (rp.nmissed, which counts entries that found none,
 * stays 0), and neither its entry_handler nor its handler runs; the call
 * itself returns its value as usual.  Called outside a handler afterwards
 * it is caught.  The outer probes are on an ftrace site (kpt_reent_outer)
 * and on a breakpoint (kpt_asm_sub, no ftrace call); the return probe is
 * on kpt_kret_a.
 */
static atomic_t kpr_nested_bad;

static int kpr_pre_calls_kret(struct kprobe *kp, struct pt_regs *regs)
{
	int x = (int)regs_get_kernel_argument(regs, 0);

	if (kpt_kret_a(x) != x + KPT_KRET_A_ADD)
		atomic_inc(&kpr_nested_bad);
	atomic_inc(&kpr_pre_hits);
	return 0;
}

static void kpr_nested_in_handler_missed(struct kunit *test)
{
	struct kpr_ctx *ctx = test->priv;
	struct kpr_probe *p = kpr_new(0);
	static struct kprobe outer_ftrace, outer_int3;
	unsigned long want = 0;
	int i;

	atomic_set(&kpr_pre_hits, 0);
	atomic_set(&kpr_nested_bad, 0);
	memset(&outer_ftrace, 0, sizeof(outer_ftrace));
	memset(&outer_int3, 0, sizeof(outer_int3));
	outer_ftrace.addr = (kprobe_opcode_t *)kpt_reent_outer;
	outer_ftrace.pre_handler = kpr_pre_calls_kret;
	outer_int3.addr = (kprobe_opcode_t *)kpt_asm_sub;
	outer_int3.pre_handler = kpr_pre_calls_kret;
	p->rp.kp.addr = (kprobe_opcode_t *)kpt_kret_a;
	p->rp.entry_handler = kpr_entry_count;
	p->rp.handler = kpr_ret_note;
	KUNIT_ASSERT_EQ(test, kpr_register(test, &p->rp), 0);
	KUNIT_ASSERT_EQ(test, register_kprobe(&outer_ftrace), 0);
	ctx->kps[0] = &outer_ftrace;
	KUNIT_ASSERT_EQ(test, register_kprobe(&outer_int3), 0);
	ctx->kps[1] = &outer_int3;

	for (i = 0; i < 3; i++) {
		KUNIT_EXPECT_EQ(test, kpt_reent_outer(i), i + 11);
		KUNIT_EXPECT_EQ_MSG(test, p->rp.kp.nmissed, ++want,
				    "after call %d from the ftrace probe's handler", i);
	}
	for (i = 0; i < 2; i++) {
		KUNIT_EXPECT_EQ(test, kpt_asm_sub(i), i - KPT_SUB_IMM);
		KUNIT_EXPECT_EQ_MSG(test, p->rp.kp.nmissed, ++want,
				    "after call %d from the breakpoint probe's handler", i);
	}
	KUNIT_EXPECT_EQ(test, atomic_read(&kpr_pre_hits), 5);
	KUNIT_EXPECT_EQ(test, atomic_read(&kpr_nested_bad), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->entries), 0);
	KUNIT_EXPECT_EQ(test, kpr_returns(p), 0);
	KUNIT_EXPECT_EQ(test, p->rp.nmissed, 0);

	/* Outside any handler: caught, and nothing more is missed. */
	KUNIT_EXPECT_EQ(test, kpt_kret_a(7), 7 + KPT_KRET_A_ADD);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->entries), 1);
	KUNIT_EXPECT_EQ(test, kpr_returns(p), 1);
	KUNIT_EXPECT_EQ(test, (int)p->last_ret, 7 + KPT_KRET_A_ADD);
	KUNIT_EXPECT_EQ(test, p->rp.kp.nmissed, 5UL);
	KUNIT_EXPECT_EQ(test, p->rp.nmissed, 0);

	ctx->kps[1] = NULL;
	unregister_kprobe(&outer_int3);
	ctx->kps[0] = NULL;
	unregister_kprobe(&outer_ftrace);
	kpr_unregister(test, &p->rp);
}

/* ---------------------------------------------------------------------
 * Stack traces from a return handler
 */

/* Index of @addr in @p's stack trace, or -1. */
static int kpr_stack_find(struct kpr_probe *p, unsigned long addr)
{
	int i;

	for (i = 0; i < p->nstack; i++)
		if (p->stack[i] == addr)
			return i;
	return -1;
}

/*
 * No entry of the trace is the trampoline, @tramp (the return address the
 * target saw while probed): the unwinder put the real one in its place.
 */
static void kpr_expect_no_trampoline(struct kunit *test, struct kpr_probe *p,
				     unsigned long tramp)
{
	int i;

	KUNIT_EXPECT_GT(test, p->nstack, 0U);
	for (i = 0; i < p->nstack; i++) {
		KUNIT_EXPECT_NE_MSG(test, p->stack[i], tramp,
				    "entry %d is the trampoline: %pS", i,
				    (void *)p->stack[i]);
		if (kpr_can_ask_trampoline)
			KUNIT_EXPECT_FALSE_MSG(test, kpr_is_trampoline(p->stack[i]),
					       "entry %d: %pS", i,
					       (void *)p->stack[i]);
	}
}

static void kpr_stack_dump(struct kunit *test, struct kpr_probe *p)
{
	int i;

	for (i = 0; i < p->nstack; i++)
		kunit_info(test, "  #%d %pS\n", i, (void *)p->stack[i]);
}

static void kpr_stacktrace(struct kunit *test)
{
	struct kpr_probe *p = kpr_new(0);
	unsigned long real, tramp;

	/* Where kpt_kret_a returns to when called by kpt_kret_call. */
	KUNIT_ASSERT_EQ(test, kpt_kret_call(kpt_kret_a, 1), 1 + KPT_KRET_A_ADD);
	real = READ_ONCE(kpt_kret_ra[KPT_RA_A]);

	p->rp.kp.addr = (kprobe_opcode_t *)kpt_kret_a;
	p->rp.handler = kpr_ret_stack;
	KUNIT_ASSERT_EQ(test, kpr_register(test, &p->rp), 0);
	KUNIT_EXPECT_EQ(test, kpt_kret_call(kpt_kret_a, 2), 2 + KPT_KRET_A_ADD);
	tramp = READ_ONCE(kpt_kret_ra[KPT_RA_A]);
	kpr_unregister(test, &p->rp);

	KUNIT_ASSERT_EQ(test, kpr_returns(p), 1);
	KUNIT_EXPECT_EQ(test, (int)p->last_ret, 2 + KPT_KRET_A_ADD);
	KUNIT_ASSERT_NE(test, tramp, real);
	if (kpr_can_ask_trampoline) {
		KUNIT_EXPECT_TRUE(test, kpr_is_trampoline(tramp));
		KUNIT_EXPECT_FALSE(test, kpr_is_trampoline(real));
	}
	if (!kpr_can_ask_trampoline && !upstream)
		KUNIT_FAIL(test,
			   "is_kretprobe_trampoline() is not exported: modules cannot use it");
	KUNIT_EXPECT_GE_MSG(test, kpr_stack_find(p, real), 0,
			    "%pS not in the trace", (void *)real);
	kpr_expect_no_trampoline(test, p, tramp);
	if (test->status == KUNIT_FAILURE)
		kpr_stack_dump(test, p);
}

/*
 * Return probes on kpt_kret_outer and on kpt_kret_inner, which it calls:
 * in inner's handler, the trace has inner's real return address (in
 * outer) and right after it outer's (in kpt_kret_call), though both were
 * replaced by the trampoline on the stack.
 */
static void kpr_stacktrace_nested(struct kunit *test)
{
	struct kpr_probe *outer = kpr_new(0), *inner = kpr_new(1);
	struct kretprobe *rps[] = { &outer->rp, &inner->rp };
	unsigned long real_outer, real_inner, tramp;
	int want = 5 + KPT_KRET_INNER_ADD + KPT_KRET_OUTER_ADD;
	int i;

	KUNIT_ASSERT_EQ(test, kpt_kret_call(kpt_kret_outer, 5), want);
	real_outer = READ_ONCE(kpt_kret_ra[KPT_RA_OUTER]);
	real_inner = READ_ONCE(kpt_kret_ra[KPT_RA_INNER]);

	outer->rp.kp.addr = (kprobe_opcode_t *)kpt_kret_outer;
	outer->rp.handler = kpr_ret_stack;
	inner->rp.kp.addr = (kprobe_opcode_t *)kpt_kret_inner;
	inner->rp.handler = kpr_ret_stack;
	KUNIT_ASSERT_EQ(test, register_kretprobes(rps, ARRAY_SIZE(rps)), 0);
	for (i = 0; i < ARRAY_SIZE(rps); i++)
		kpr_track(test, rps[i]);
	KUNIT_EXPECT_EQ(test, kpt_kret_call(kpt_kret_outer, 5), want);
	tramp = READ_ONCE(kpt_kret_ra[KPT_RA_INNER]);
	KUNIT_EXPECT_EQ(test, READ_ONCE(kpt_kret_ra[KPT_RA_OUTER]), tramp);
	for (i = 0; i < ARRAY_SIZE(rps); i++)
		kpr_untrack(test, rps[i]);
	unregister_kretprobes(rps, ARRAY_SIZE(rps));

	KUNIT_ASSERT_EQ(test, kpr_returns(inner), 1);
	KUNIT_ASSERT_EQ(test, kpr_returns(outer), 1);
	KUNIT_EXPECT_EQ(test, (int)inner->last_ret, 5 + KPT_KRET_INNER_ADD);
	KUNIT_EXPECT_EQ(test, (int)outer->last_ret, want);
	KUNIT_ASSERT_NE(test, tramp, real_inner);

	i = kpr_stack_find(inner, real_inner);
	KUNIT_EXPECT_GE_MSG(test, i, 0, "inner's %pS not in inner's trace",
			    (void *)real_inner);
	if (i >= 0) {
		KUNIT_EXPECT_LT(test, i + 1, (int)inner->nstack);
		if (i + 1 < inner->nstack)
			KUNIT_EXPECT_EQ_MSG(test, inner->stack[i + 1], real_outer,
					    "after inner's return address: %pS, want %pS",
					    (void *)inner->stack[i + 1],
					    (void *)real_outer);
	}
	kpr_expect_no_trampoline(test, inner, tramp);
	KUNIT_EXPECT_GE_MSG(test, kpr_stack_find(outer, real_outer), 0,
			    "outer's %pS not in outer's trace",
			    (void *)real_outer);
	kpr_expect_no_trampoline(test, outer, tramp);
	if (test->status == KUNIT_FAILURE) {
		kunit_info(test, "inner's trace:\n");
		kpr_stack_dump(test, inner);
		kunit_info(test, "outer's trace:\n");
		kpr_stack_dump(test, outer);
	}
}

/* ---------------------------------------------------------------------
 * Concurrency: two CPUs, sleeping callers, unregistration, task exit
 */

#define KPR_SMP_ITERS	20000

struct kpr_smp_arg {
	struct completion done;
	atomic_t wrong;
};

static struct kpr_smp_arg kpr_smp_args[2];
static struct completion kpr_smp_go;

static int kpr_smp_thread(void *data)
{
	struct kpr_smp_arg *arg = data;
	int i;

	wait_for_completion(&kpr_smp_go);
	for (i = 0; i < KPR_SMP_ITERS; i++) {
		if (kpt_kret_a(i) != i + KPT_KRET_A_ADD)
			atomic_inc(&arg->wrong);
		if (!(i % 1024))
			cond_resched();
	}
	kthread_complete_and_exit(&arg->done, 0);
}

/*
 * Two kthreads, on two CPUs, call one return-probed function at once;
 * each call's data and return value stay its own, and none is missed.
 */
static void kpr_two_cpus(struct kunit *test)
{
	struct kpr_probe *p = kpr_new(0);
	bool done = true;
	int cpu[2], i;

	cpu[0] = cpumask_first(cpu_online_mask);
	cpu[1] = cpumask_next(cpu[0], cpu_online_mask);
	if (cpu[1] >= nr_cpu_ids)
		kunit_skip(test, "needs two online CPUs");

	p->rp.kp.addr = (kprobe_opcode_t *)kpt_kret_a;
	p->rp.entry_handler = kpr_entry_save;
	p->rp.handler = kpr_ret_check;
	p->rp.data_size = sizeof(struct kpr_data);
	p->rp.maxactive = 8;
	p->add = KPT_KRET_A_ADD;
	KUNIT_ASSERT_EQ(test, kpr_register(test, &p->rp), 0);

	init_completion(&kpr_smp_go);
	for (i = 0; i < 2; i++) {
		struct task_struct *t;

		init_completion(&kpr_smp_args[i].done);
		atomic_set(&kpr_smp_args[i].wrong, 0);
		t = kthread_create(kpr_smp_thread, &kpr_smp_args[i],
				   "kpr_smp/%d", cpu[i]);
		if (IS_ERR(t)) {
			KUNIT_FAIL(test, "kthread_create: %ld", PTR_ERR(t));
			complete(&kpr_smp_args[i].done);
			continue;
		}
		kthread_bind(t, cpu[i]);
		wake_up_process(t);
	}
	complete_all(&kpr_smp_go);
	for (i = 0; i < 2; i++)
		if (!wait_for_completion_timeout(&kpr_smp_args[i].done, 300 * HZ))
			done = false;
	KUNIT_ASSERT_TRUE_MSG(test, done, "threads did not finish");
	kpr_unregister(test, &p->rp);

	KUNIT_EXPECT_EQ(test, atomic_read(&kpr_smp_args[0].wrong), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&kpr_smp_args[1].wrong), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->entries), 2 * KPR_SMP_ITERS);
	KUNIT_EXPECT_EQ(test, kpr_returns(p), 2 * KPR_SMP_ITERS);
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&p->bad), 0,
			    "why: %#lx (bits: ret, data, rp, retaddr)", p->why);
	KUNIT_EXPECT_EQ(test, p->rp.nmissed, 0);
	KUNIT_EXPECT_EQ(test, p->rp.kp.nmissed, 0UL);
}

/* Handler calls of kpr_unregister_in_flight's probe, and late ones. */
static atomic_t kpr_flight_calls, kpr_flight_late;
static bool kpr_flight_unregistered;

/* Touches nothing of the probe, which is freed once unregistered. */
static int kpr_ret_flight(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	atomic_inc(&kpr_flight_calls);
	if (READ_ONCE(kpr_flight_unregistered))
		atomic_inc(&kpr_flight_late);
	return 0;
}

#define KPR_FLIGHT_THREADS	8

/*
 * Callers sleep inside the probed function while its return probe is
 * unregistered and kfree()d (KASAN reports any later access to it).  When
 * they wake up, each returns to its caller with its own return value, and
 * no handler runs any more.
 */
/*
 * The stack of a crowd thread asleep in the probed function, unwound from
 * here (another task): its return address is the trampoline on the
 * stack, and the unwinder must show the real caller instead.
 */
static void kpr_check_sleeper_stack(struct kunit *test)
{
	unsigned long trace[KPR_STACK_MAX];
	char sym[KSYM_SYMBOL_LEN];
	unsigned int i, n;
	bool caller = false;

	KUNIT_ASSERT_NOT_NULL(test, kpr_crowd.first);
	n = stack_trace_save_tsk(kpr_crowd.first, trace, ARRAY_SIZE(trace), 0);
	KUNIT_EXPECT_GT(test, n, 0U);
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_FALSE_MSG(test, kpr_is_trampoline(trace[i]),
				       "entry %u of a sleeper's stack is the trampoline", i);
		sprint_symbol_no_offset(sym, trace[i]);
		if (str_has_prefix(sym, "kpr_crowd_thread"))
			caller = true;
	}
	KUNIT_EXPECT_TRUE_MSG(test, caller,
			      "a sleeper's stack (%u entries) does not show its caller kpr_crowd_thread",
			      n);
}

static void kpr_unregister_in_flight(struct kunit *test)
{
	struct kpr_ctx *ctx = test->priv;
	struct kretprobe *rp;
	int n = KPR_FLIGHT_THREADS;

	atomic_set(&kpr_flight_calls, 0);
	atomic_set(&kpr_flight_late, 0);
	WRITE_ONCE(kpr_flight_unregistered, false);
	rp = kzalloc(sizeof(*rp), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rp);
	ctx->heap = rp;
	rp->kp.addr = (kprobe_opcode_t *)kpt_gate_wait;
	rp->handler = kpr_ret_flight;
	rp->maxactive = 2 * n;
	KUNIT_ASSERT_EQ(test, kpr_register(test, rp), 0);

	/* The probe works: a call through the open gate. */
	KUNIT_EXPECT_EQ(test, kpt_gate_wait(1), 1 + KPT_GATE_ADD);
	KUNIT_EXPECT_EQ(test, atomic_read(&kpr_flight_calls), 1);

	kpt_gate_close();
	KUNIT_ASSERT_EQ(test, kpr_crowd_start(n), n);
	KUNIT_ASSERT_TRUE_MSG(test, kpr_wait_count(kpt_gate_inside, n, 60),
			      "%d of %d callers inside", kpt_gate_inside(), n);
	kpr_check_sleeper_stack(test);
	kpr_unregister(test, rp);
	WRITE_ONCE(kpr_flight_unregistered, true);
	ctx->heap = NULL;
	kfree(rp);

	kpt_gate_open();
	KUNIT_EXPECT_TRUE_MSG(test, kpr_wait_count(kpr_crowd_returned, n, 60),
			      "%d of %d callers returned",
			      kpr_crowd_returned(), n);
	KUNIT_EXPECT_TRUE(test, kpr_crowd_end(60));
	KUNIT_EXPECT_EQ(test, atomic_read(&kpr_crowd.wrong), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&kpr_flight_late), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&kpr_flight_calls), 1);
}

/*
 * What an unwinder asks for another task's frame that returns to the
 * trampoline (kretprobe_find_ret_addr()): the real return address while
 * the task sleeps inside the probed function, nothing while it runs there
 * (its list of instances changes under the asker, and an instance it gives
 * back may be on another task's list by the time it is followed).
 */
static int kpr_park_ret, kpr_spin_ret;

static int kpr_park_thread(void *data)
{
	WRITE_ONCE(kpr_park_ret, kpt_kret_park(1));
	return 0;
}

static int kpr_spin_thread(void *data)
{
	WRITE_ONCE(kpr_spin_ret, kpt_kret_spin(2));
	return 0;
}

static struct task_struct *kpr_start(struct kunit *test, int (*fn)(void *),
				     int cpu)
{
	struct task_struct *t = kthread_create(fn, NULL, "kpr_find/%d", cpu);

	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	if (cpu >= 0)
		kthread_bind(t, cpu);
	get_task_struct(t);
	wake_up_process(t);
	return t;
}

static int kpr_fp_noted(void)
{
	return READ_ONCE(kpt_kret_fp) != 0;
}

#ifdef KPR_FIND_RET_EXPORTED
#define kpr_can_find_ret	true
static unsigned long kpr_find_ret(struct task_struct *t)
{
	struct llist_node *cur = NULL;

	return kretprobe_find_ret_addr(t, (void *)READ_ONCE(kpt_kret_fp), &cur);
}
#else
#define kpr_can_find_ret	false
static unsigned long kpr_find_ret(struct task_struct *t)
{
	return 0;
}
#endif

static void kpr_find_ret_addr(struct kunit *test)
{
	struct kpr_probe *p = kpr_new(0);
	char sym[KSYM_SYMBOL_LEN];
	struct task_struct *t;
	unsigned long ret;
	int cpu;

	if (upstream)
		kunit_skip(test,
			   "upstream unwinds through rethook_find_ret_addr(), which warns for a running task");
	if (!kpr_can_find_ret)
		KUNIT_FAIL(test, "kretprobe_find_ret_addr() is not exported");

	/* Asleep inside: the real return address, in the thread's function. */
	p->rp.kp.addr = (kprobe_opcode_t *)kpt_kret_park;
	p->rp.handler = kpr_ret_note;
	KUNIT_ASSERT_EQ(test, kpr_register(test, &p->rp), 0);
	WRITE_ONCE(kpt_kret_fp, 0);
	kpt_gate_close();
	t = kpr_start(test, kpr_park_thread, -1);
	KUNIT_EXPECT_TRUE(test, kpr_wait_count(kpt_gate_inside, 1, 30));
	KUNIT_EXPECT_TRUE(test, kpr_fp_noted());
	/* Not running: asleep at the gate. */
	KUNIT_EXPECT_FALSE(test, task_is_running(t));
	ret = kpr_find_ret(t);
	sprint_symbol_no_offset(sym, ret);
	KUNIT_EXPECT_TRUE_MSG(test, str_has_prefix(sym, "kpr_park_thread"),
			      "return address of a sleeping task: %pS", (void *)ret);
	kpt_gate_open();
	kthread_stop_put(t);
	KUNIT_EXPECT_EQ(test, kpr_park_ret, 1 + KPT_GATE_ADD);
	KUNIT_EXPECT_EQ(test, kpr_returns(p), 1);
	kpr_unregister(test, &p->rp);

	/* Running inside, on the other CPU: no answer. */
	cpu = cpumask_any_but(cpu_online_mask, raw_smp_processor_id());
	if (cpu >= nr_cpu_ids)
		kunit_skip(test, "needs two online CPUs for a task running inside");
	p = kpr_new(0);
	p->rp.kp.addr = (kprobe_opcode_t *)kpt_kret_spin;
	p->rp.handler = kpr_ret_note;
	KUNIT_ASSERT_EQ(test, kpr_register(test, &p->rp), 0);
	WRITE_ONCE(kpt_kret_fp, 0);
	WRITE_ONCE(kpt_kret_spinning, 1);
	t = kpr_start(test, kpr_spin_thread, cpu);
	KUNIT_EXPECT_TRUE(test, kpr_wait_count(kpr_fp_noted, 1, 30));
	ret = kpr_find_ret(t);
	KUNIT_EXPECT_EQ_MSG(test, ret, 0UL,
			    "return address of a task running inside: %pS",
			    (void *)ret);
	WRITE_ONCE(kpt_kret_spinning, 0);
	kthread_stop_put(t);
	KUNIT_EXPECT_EQ(test, kpr_spin_ret, 2);
	KUNIT_EXPECT_EQ(test, kpr_returns(p), 1);
	kpr_unregister(test, &p->rp);
}

/*
 * A few functions are called between stac and clac: copy_from_user()
 * calls rep_movs_alternative() on a CPU without FSRM.  A return probe on
 * it returns through the trampoline with user access open; its handler
 * must run with EFLAGS.AC clear, and the copy go on with it set.
 */
static unsigned long kpr_ua_ac;

static int kpr_ret_ac(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	kpr_ua_ac |= native_save_fl() & X86_EFLAGS_AC;
	return kpr_ret_note(ri, regs);
}

static void kpr_uaccess(struct kunit *test)
{
	static const char str[] = "copied from a user page through rep_movs_alternative";
	struct kpr_probe *p = kpr_new(0);
	char buf[sizeof(str)];
	unsigned long user;

	if (!boot_cpu_has(X86_FEATURE_SMAP))
		kunit_skip(test, "no SMAP on this CPU: user access regions are not real");
	if (boot_cpu_has(X86_FEATURE_FSRM))
		kunit_skip(test, "copies do not call rep_movs_alternative on a CPU with FSRM");
	user = kunit_vm_mmap(test, NULL, 0, PAGE_SIZE, PROT_READ | PROT_WRITE,
			     MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(user));
	KUNIT_ASSERT_EQ(test, copy_to_user((void __user *)user, str, sizeof(str)), 0UL);

	p->rp.kp.symbol_name = "rep_movs_alternative";
	p->rp.handler = kpr_ret_ac;
	KUNIT_ASSERT_EQ(test, kpr_register(test, &p->rp), 0);
	kpr_ua_ac = 0;
	memset(buf, 0, sizeof(buf));
	KUNIT_EXPECT_EQ(test, copy_from_user(buf, (const void __user *)user,
					     sizeof(buf)), 0UL);
	kpr_unregister(test, &p->rp);
	KUNIT_EXPECT_STREQ(test, buf, str);
	KUNIT_EXPECT_GE(test, kpr_returns(p), 1);
	KUNIT_EXPECT_EQ_MSG(test, kpr_ua_ac, 0UL,
			    "the return handler ran with user memory open");
}

static struct completion kpr_exit_done;

static int kpr_exit_thread(void *data)
{
	/* Never returns: the thread ends inside the probed function. */
	return kpt_kret_exit(&kpr_exit_done);
}

/*
 * A task ends inside a return-probed function: its instance is never
 * returned through, and must come back to the probe once the task is
 * freed (after an RCU grace period).  With maxactive 1, the next call
 * gets it.
 */
static void kpr_task_exit(struct kunit *test)
{
	struct kpr_probe *p = kpr_new(0);
	struct task_struct *t;
	unsigned long end;

	p->rp.kp.addr = (kprobe_opcode_t *)kpt_kret_exit;
	p->rp.entry_handler = kpr_entry_count;
	p->rp.handler = kpr_ret_note;
	p->rp.maxactive = 1;
	KUNIT_ASSERT_EQ(test, kpr_register(test, &p->rp), 0);

	init_completion(&kpr_exit_done);
	t = kthread_create(kpr_exit_thread, NULL, "kpr_exit");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	get_task_struct(t);
	wake_up_process(t);
	if (!wait_for_completion_timeout(&kpr_exit_done, 60 * HZ)) {
		put_task_struct(t);
		KUNIT_FAIL_AND_ABORT(test, "the thread did not exit");
	}
	/* Released (unhashed) by now or soon, its task freed after RCU. */
	end = jiffies + 10 * HZ;
	while (pid_alive(t) && time_before(jiffies, end))
		msleep(20);
	KUNIT_EXPECT_FALSE(test, pid_alive(t));
	put_task_struct(t);
	msleep(20);
	rcu_barrier();

	KUNIT_EXPECT_EQ(test, atomic_read(&p->entries), 1);
	KUNIT_EXPECT_EQ(test, kpr_returns(p), 0);
#ifdef KRETPROBE_POOL_GROWS
	end = jiffies + 10 * HZ;
	while (kpr_pool_info(p).out && time_before(jiffies, end)) {
		msleep(20);
		rcu_barrier();
	}
	KUNIT_EXPECT_EQ_MSG(test, kpr_pool_info(p).out, 0,
			    "instances still out after the task was freed");
#endif
	KUNIT_EXPECT_EQ(test, kpt_kret_exit(NULL), KPT_KRET_EXIT_RET);
	KUNIT_EXPECT_EQ(test, kpr_returns(p), 1);
	KUNIT_EXPECT_EQ(test, (int)p->last_ret, KPT_KRET_EXIT_RET);
	KUNIT_EXPECT_EQ_MSG(test, p->rp.nmissed, 0,
			    "the exited task's instance did not come back");
	kpr_unregister(test, &p->rp);
}

#define KPR_DEPTH	8

/*
 * maxactive 1 on a function that calls itself KPR_DEPTH deep: the
 * outermost call takes the only instance and the KPR_DEPTH - 1 calls
 * nested in it find none.  Each of those is counted once in rp.nmissed,
 * and its entry_handler is skipped (the documentation: no instance, no
 * entry_handler call); the entry_handler and the return handler run once,
 * for the outermost call, which returns KPR_DEPTH.  The kprobe itself
 * missed nothing: no hit came while a handler ran.
 *
 * Our pool grows when more than half of it is out, but from a work item
 * that an irq_work on the hitting CPU queues: with interrupts off for the
 * whole call neither can run before it returns, so the count is exact on
 * ours as on upstream (whose pool never grows).  The instance is back
 * afterwards: a single call is caught.
 */
static void kpr_recursion_maxactive_1(struct kunit *test)
{
	struct kpr_probe *p = kpr_new(0);
	unsigned long flags;
	int ret, calls;

	p->rp.kp.addr = (kprobe_opcode_t *)kpt_kret_recurse;
	p->rp.entry_handler = kpr_entry_count;
	p->rp.handler = kpr_ret_note;
	p->rp.maxactive = 1;
	KUNIT_ASSERT_EQ(test, kpr_register(test, &p->rp), 0);
	KUNIT_ASSERT_EQ(test, p->rp.maxactive, 1);

	calls = atomic_read(&kpt_kret_recurse_calls);
	local_irq_save(flags);
	ret = kpt_kret_recurse(KPR_DEPTH);
	local_irq_restore(flags);
	KUNIT_EXPECT_EQ(test, ret, KPR_DEPTH);
	KUNIT_ASSERT_EQ_MSG(test, atomic_read(&kpt_kret_recurse_calls) - calls,
			    KPR_DEPTH, "kpt_kret_recurse() did not recurse");
	KUNIT_EXPECT_EQ(test, p->rp.nmissed, KPR_DEPTH - 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->entries), 1);
	KUNIT_EXPECT_EQ(test, kpr_returns(p), 1);
	KUNIT_EXPECT_EQ(test, (int)p->last_ret, KPR_DEPTH);
	KUNIT_EXPECT_EQ(test, p->rp.kp.nmissed, 0UL);

	KUNIT_EXPECT_EQ(test, kpt_kret_recurse(1), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->entries), 2);
	KUNIT_EXPECT_EQ(test, kpr_returns(p), 2);
	KUNIT_EXPECT_EQ(test, (int)p->last_ret, 1);
	KUNIT_EXPECT_EQ(test, p->rp.nmissed, KPR_DEPTH - 1);
	kpr_unregister(test, &p->rp);
}

#define KPR_CROWD	1000

/*
 * 1000 kthreads sleep inside one return-probed function at once, with the
 * default maxactive: every return is caught, none missed, each caller
 * gets its own value back, and the pool shrinks back to its floor later.
 * Upstream misses all but maxactive of them: expected to fail there.
 */
static void kpr_no_miss(struct kunit *test)
{
	struct kpr_probe *p = kpr_new(0);
	unsigned long t0 = jiffies;
	int n;

	p->rp.kp.addr = (kprobe_opcode_t *)kpt_gate_wait;
	p->rp.entry_handler = kpr_entry_save;
	p->rp.handler = kpr_ret_check;
	p->rp.data_size = sizeof(struct kpr_data);
	p->add = KPT_GATE_ADD;
	KUNIT_ASSERT_EQ(test, kpr_register(test, &p->rp), 0);

	kpt_gate_close();
	n = kpr_crowd_start(KPR_CROWD);
	KUNIT_ASSERT_EQ_MSG(test, n, KPR_CROWD, "only %d threads started", n);
	KUNIT_ASSERT_TRUE_MSG(test, kpr_wait_count(kpt_gate_inside, n, 180),
			      "%d of %d callers inside", kpt_gate_inside(), n);
	kunit_info(test, "%d callers inside after %u ms\n", n,
		   jiffies_to_msecs(jiffies - t0));
#ifdef KRETPROBE_POOL_GROWS
	/* One instance out per sleeping caller. */
	KUNIT_EXPECT_EQ(test, kpr_pool_info(p).out, n);
	kunit_info(test, "pool with all inside: nr %u, floor %u, limit %u\n",
		   kpr_pool_info(p).nr, kpr_pool_info(p).floor, kpr_pool_info(p).limit);
#endif
	kpt_gate_open();
	KUNIT_EXPECT_TRUE_MSG(test, kpr_wait_count(kpr_crowd_returned, n, 180),
			      "%d of %d callers returned",
			      kpr_crowd_returned(), n);
	KUNIT_EXPECT_TRUE_MSG(test, kpr_crowd_end(120), "threads did not end");
	kunit_info(test, "all returned and gone after %u ms\n",
		   jiffies_to_msecs(jiffies - t0));

	if (upstream && p->rp.nmissed)
		kunit_info(test,
			   "upstream: %d of %d returns missed (maxactive is a ceiling there; this case shows why ours grows the pool)\n",
			   p->rp.nmissed, n);
	KUNIT_EXPECT_EQ(test, atomic_read(&kpr_crowd.wrong), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->entries), n);
	KUNIT_EXPECT_EQ(test, kpr_returns(p), n);
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&p->bad), 0,
			    "why: %#lx (bits: ret, data, rp, retaddr)", p->why);
	KUNIT_EXPECT_EQ(test, p->rp.nmissed, 0);
	KUNIT_EXPECT_EQ(test, p->rp.kp.nmissed, 0UL);

#ifdef KRETPROBE_POOL_GROWS
	{
		struct kretprobe_pool_info info = kpr_pool_info(p);
		int i;

		/* Everything came back; the surplus is trimmed in time. */
		KUNIT_EXPECT_EQ(test, info.out, 0);
		for (i = 0; i < 100; i++) {
			info = kpr_pool_info(p);
			if (info.nr == info.floor)
				break;
			msleep(100);
		}
		kunit_info(test, "pool: nr %u, floor %u, limit %u after %d ms\n",
			   info.nr, info.floor, info.limit, i * 100);
		KUNIT_EXPECT_EQ(test, info.nr, info.floor);
	}
#endif
	kpr_unregister(test, &p->rp);
}

/* ---------------------------------------------------------------------
 * Bad input
 */

/* Register @p, expect @want; nothing of it may stay registered. */
static void kpr_expect_refused(struct kunit *test, struct kpr_probe *p,
			       int want, const char *what)
{
	int ret = kpr_register(test, &p->rp);

	KUNIT_EXPECT_EQ_MSG(test, ret, want, "%s", what);
	if (!ret)
		kpr_unregister(test, &p->rp);
}

static struct kpr_probe *kpr_new_on(int (*fn)(int))
{
	struct kpr_probe *p = kpr_new(0);

	p->rp.kp.addr = (kprobe_opcode_t *)fn;
	p->rp.handler = kpr_ret_note;
	p->rp.entry_handler = kpr_entry_count;
	return p;
}

static void kpr_err_data_size(struct kunit *test)
{
	struct kpr_probe *p;

	p = kpr_new_on(kpt_kret_a);
	p->rp.data_size = (size_t)-1;
	kpr_expect_refused(test, p, -E2BIG, "data_size (size_t)-1");
	kpt_kret_a(0);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->entries), 0);

	p = kpr_new_on(kpt_kret_a);
	p->rp.data_size = KRETPROBE_MAX_DATA_SIZE + 1;
	kpr_expect_refused(test, p, -E2BIG, "data_size KRETPROBE_MAX_DATA_SIZE + 1");
	kpt_kret_a(0);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->entries), 0);

	/* The largest size is fine. */
	p = kpr_new_on(kpt_kret_a);
	p->rp.data_size = KRETPROBE_MAX_DATA_SIZE;
	KUNIT_EXPECT_EQ(test, kpr_register(test, &p->rp), 0);
	kpt_kret_a(0);
	KUNIT_EXPECT_EQ(test, kpr_returns(p), 1);
	kpr_unregister(test, &p->rp);
	kpr_expect_healthy(test, kpt_kret_a, KPT_KRET_A_ADD);
}

static void kpr_err_maxactive(struct kunit *test)
{
	struct kpr_probe *p;

	if (!upstream) {
		p = kpr_new_on(kpt_kret_a);
		p->rp.maxactive = 1 << 24;
		kpr_expect_refused(test, p, -E2BIG, "maxactive 1 << 24");
		kpt_kret_a(0);
		KUNIT_EXPECT_EQ(test, atomic_read(&p->entries), 0);
	} else {
		kunit_info(test,
			   "upstream: maxactive 1 << 24 not tried (it would try to allocate that many instances)\n");
	}

	p = kpr_new_on(kpt_kret_a);
	p->rp.maxactive = INT_MAX;
	if (upstream) {
		/* Upstream fails it one way or another. */
		int ret = kpr_register(test, &p->rp);

		KUNIT_EXPECT_LT_MSG(test, ret, 0, "maxactive INT_MAX");
		kunit_info(test, "upstream: maxactive INT_MAX: %d\n", ret);
		if (!ret)
			kpr_unregister(test, &p->rp);
	} else {
		kpr_expect_refused(test, p, -E2BIG, "maxactive INT_MAX");
	}
	kpt_kret_a(0);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->entries), 0);
	kpr_expect_healthy(test, kpt_kret_a, KPT_KRET_A_ADD);
}

/*
 * Return probes go on function entries only.  The second instruction of
 * kpt_asm_sub is an instruction boundary (a kprobe goes there) but no
 * entry: refused by name + offset and by address.
 */
static int kpr_kp_count(struct kprobe *kp, struct pt_regs *regs)
{
	atomic_inc(&kpr_pre_hits);
	return 0;
}

static void kpr_err_not_entry(struct kunit *test)
{
	unsigned long insn = kpt_label_addr(KPT_L_SUB_INSN);
	struct kpr_ctx *ctx = test->priv;
	struct kpr_probe *p;

	p = kpr_new(0);
	p->rp.handler = kpr_ret_note;
	p->rp.kp.symbol_name = "kpt_asm_sub";
	p->rp.kp.offset = insn - (unsigned long)kpt_asm_sub;
	kpr_expect_refused(test, p, -EINVAL, "kpt_asm_sub+offset");

	p = kpr_new(0);
	p->rp.handler = kpr_ret_note;
	p->rp.kp.addr = (kprobe_opcode_t *)insn;
	kpr_expect_refused(test, p, -EINVAL, "kpt_asm_sub+offset by address");

	KUNIT_EXPECT_EQ(test, kpt_asm_sub(1), 1 - KPT_SUB_IMM);
	KUNIT_EXPECT_EQ(test, kpr_returns(p), 0);

	/* It is an instruction boundary: a kprobe goes there. */
	atomic_set(&kpr_pre_hits, 0);
	memset(&kpr_kp, 0, sizeof(kpr_kp));
	kpr_kp.addr = (kprobe_opcode_t *)insn;
	kpr_kp.pre_handler = kpr_kp_count;
	KUNIT_ASSERT_EQ(test, register_kprobe(&kpr_kp), 0);
	ctx->kps[0] = &kpr_kp;
	KUNIT_EXPECT_EQ(test, kpt_asm_sub(2), 2 - KPT_SUB_IMM);
	ctx->kps[0] = NULL;
	unregister_kprobe(&kpr_kp);
	KUNIT_EXPECT_EQ(test, atomic_read(&kpr_pre_hits), 1);
	kpr_expect_healthy(test, kpt_asm_sub, -KPT_SUB_IMM);
}

static void kpr_err_symbols(struct kunit *test)
{
	struct kpr_probe *p;

	/*
	 * Upstream 6.12 accepts it, and on a preemptible kernel its rethook
	 * then hits a BUG() on the first context switch: not tried there.
	 */
	if (!upstream) {
		p = kpr_new(0);
		p->rp.handler = kpr_ret_note;
		p->rp.kp.symbol_name = "__switch_to";
		kpr_expect_refused(test, p, -EINVAL, "__switch_to");
	}

	p = kpr_new(0);
	p->rp.handler = kpr_ret_note;
	p->rp.kp.symbol_name = "kpr_no_such_function";
	kpr_expect_refused(test, p, -ENOENT, "kpr_no_such_function");

	p = kpr_new(0);
	p->rp.handler = kpr_ret_note;
	p->rp.kp.symbol_name = KPT_MODNAME ":kpr_no_such_function";
	kpr_expect_refused(test, p, -ENOENT, KPT_MODNAME ":kpr_no_such_function");
	kpr_expect_healthy(test, kpt_kret_b, KPT_KRET_B_ADD);
}

/* A NULL entry in the array: nothing stays registered. */
static void kpr_err_array_null(struct kunit *test)
{
	struct kpr_probe *a = kpr_new(0), *b = kpr_new(1);
	struct kretprobe *rps[] = { &a->rp, NULL, &b->rp };
	int i, ret;

	if (upstream)
		kunit_skip(test,
			   "not tried upstream: no promise it checks for NULL entries");

	a->rp.kp.addr = (kprobe_opcode_t *)kpt_kret_a;
	a->rp.handler = kpr_ret_note;
	b->rp.kp.addr = (kprobe_opcode_t *)kpt_kret_b;
	b->rp.handler = kpr_ret_note;
	ret = register_kretprobes(rps, ARRAY_SIZE(rps));
	if (!ret)
		for (i = 0; i < ARRAY_SIZE(rps); i++)
			if (rps[i])
				kpr_track(test, rps[i]);
	KUNIT_EXPECT_EQ(test, ret, -EINVAL);
	kpt_kret_a(0);
	kpt_kret_b(0);
	KUNIT_EXPECT_EQ(test, kpr_returns(a), 0);
	KUNIT_EXPECT_EQ(test, kpr_returns(b), 0);
	kpr_expect_healthy(test, kpt_kret_a, KPT_KRET_A_ADD);
}

/*
 * register_kretprobes() with an unknown symbol in the middle: it fails,
 * and the entries before it are not left registered (no calls followed).
 */
static void kpr_err_array_bad_symbol(struct kunit *test)
{
	struct kpr_probe *a = kpr_new(0), *bad = kpr_new(1), *b = kpr_new(2);
	struct kretprobe *rps[] = { &a->rp, &bad->rp, &b->rp };
	int i, ret;

	a->rp.kp.addr = (kprobe_opcode_t *)kpt_kret_a;
	bad->rp.kp.symbol_name = "kpr_no_such_symbol";
	b->rp.kp.addr = (kprobe_opcode_t *)kpt_kret_b;
	for (i = 0; i < ARRAY_SIZE(rps); i++) {
		rps[i]->handler = kpr_ret_note;
		rps[i]->entry_handler = kpr_entry_count;
	}
	ret = register_kretprobes(rps, ARRAY_SIZE(rps));
	if (!ret)
		for (i = 0; i < ARRAY_SIZE(rps); i++)
			kpr_track(test, rps[i]);
	KUNIT_EXPECT_LT(test, ret, 0);
	kpt_kret_a(0);
	kpt_kret_b(0);
	for (i = 0; i < ARRAY_SIZE(rps); i++) {
		struct kpr_probe *p = container_of(rps[i], struct kpr_probe, rp);

		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&p->entries), 0, "entry %d", i);
		KUNIT_EXPECT_EQ_MSG(test, kpr_returns(p), 0, "entry %d", i);
	}
	kpr_expect_healthy(test, kpt_kret_a, KPT_KRET_A_ADD);
	kpr_expect_healthy(test, kpt_kret_b, KPT_KRET_B_ADD);
}

/*
 * unregister_kretprobes() with one that was never registered between two
 * that were: those two stop, and nothing complains.
 */
static void kpr_err_unregister_unregistered(struct kunit *test)
{
	struct kpr_probe *a = kpr_new(0), *stranger = kpr_new(1), *b = kpr_new(2);
	struct kretprobe *reg[] = { &a->rp, &b->rp };
	struct kretprobe *rps[] = { &a->rp, &stranger->rp, &b->rp };
	int i;

	/*
	 * Seen on upstream 6.12: unregister_kretprobes() calls rethook_free()
	 * on the stranger's NULL rethook with kprobe_mutex held, an oops that
	 * leaves the mutex locked and the next registration hung.
	 */
	if (upstream)
		kunit_skip(test,
			   "upstream 6.12 oopses in rethook_free() on a never-registered entry");

	a->rp.kp.addr = (kprobe_opcode_t *)kpt_kret_a;
	b->rp.kp.addr = (kprobe_opcode_t *)kpt_kret_b;
	stranger->rp.kp.addr = (kprobe_opcode_t *)kpt_kret_b;
	for (i = 0; i < ARRAY_SIZE(rps); i++)
		rps[i]->handler = kpr_ret_note;
	KUNIT_ASSERT_EQ(test, register_kretprobes(reg, ARRAY_SIZE(reg)), 0);
	for (i = 0; i < ARRAY_SIZE(reg); i++)
		kpr_track(test, reg[i]);
	kpt_kret_a(0);
	kpt_kret_b(0);
	KUNIT_EXPECT_EQ(test, kpr_returns(a), 1);
	KUNIT_EXPECT_EQ(test, kpr_returns(b), 1);

	for (i = 0; i < ARRAY_SIZE(reg); i++)
		kpr_untrack(test, reg[i]);
	unregister_kretprobes(rps, ARRAY_SIZE(rps));
	kpt_kret_a(0);
	kpt_kret_b(0);
	KUNIT_EXPECT_EQ(test, kpr_returns(a), 1);
	KUNIT_EXPECT_EQ(test, kpr_returns(b), 1);
	KUNIT_EXPECT_EQ(test, kpr_returns(stranger), 0);
	kpr_expect_healthy(test, kpt_kret_b, KPT_KRET_B_ADD);
}

static int kpr_ret_note_one(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	kpr_ret_note(ri, regs);
	return 1;
}

/*
 * What a return handler returns is ignored: the function returns what it
 * computed, to its caller, every call is followed, and nothing is missed.
 */
static void kpr_handler_ret_ignored(struct kunit *test)
{
	struct kpr_probe *p = kpr_new_on(kpt_kret_a);
	int i;

	p->rp.handler = kpr_ret_note_one;
	KUNIT_ASSERT_EQ(test, kpr_register(test, &p->rp), 0);
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, kpt_kret_call(kpt_kret_a, i), i + KPT_KRET_A_ADD);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->entries), 4);
	KUNIT_EXPECT_EQ(test, kpr_returns(p), 4);
	KUNIT_EXPECT_EQ(test, (int)p->last_ret, 3 + KPT_KRET_A_ADD);
	KUNIT_EXPECT_EQ(test, p->rp.nmissed, 0);
	kpr_unregister(test, &p->rp);
}

/*
 * maxactive <= 0 asks for the default, which the documentation gives as
 * max(10, 2 * NR_CPUS) (possible CPUs): registration leaves that value in
 * the struct.
 */
static void kpr_default_maxactive(struct kunit *test)
{
	int want = max_t(int, 10, 2 * num_possible_cpus());
	int asked[] = { 0, -5 };
	struct kpr_probe *p;
	int i;

	for (i = 0; i < ARRAY_SIZE(asked); i++) {
		p = kpr_new_on(kpt_kret_a);
		p->rp.maxactive = asked[i];
		KUNIT_ASSERT_EQ(test, kpr_register(test, &p->rp), 0);
		KUNIT_EXPECT_EQ_MSG(test, p->rp.maxactive, want,
				    "maxactive %d asked", asked[i]);
		KUNIT_EXPECT_EQ(test, kpt_kret_a(1), 1 + KPT_KRET_A_ADD);
		KUNIT_EXPECT_EQ(test, kpr_returns(p), 1);
		kpr_unregister(test, &p->rp);
	}
	p = kpr_new_on(kpt_kret_a);
	p->rp.maxactive = 3;
	KUNIT_ASSERT_EQ(test, kpr_register(test, &p->rp), 0);
	KUNIT_EXPECT_EQ(test, p->rp.maxactive, 3);
	kpr_unregister(test, &p->rp);
}

static void kpr_err_register_twice(struct kunit *test)
{
	struct kpr_probe *p;

	if (upstream)
		kunit_skip(test,
			   "upstream WARNs on re-registration; ours returns -EINVAL without a splat");

	p = kpr_new_on(kpt_kret_b);
	KUNIT_ASSERT_EQ(test, kpr_register(test, &p->rp), 0);
	KUNIT_EXPECT_EQ(test, register_kretprobe(&p->rp), -EINVAL);
	/* Still registered once, and only once. */
	kpt_kret_b(0);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->entries), 1);
	KUNIT_EXPECT_EQ(test, kpr_returns(p), 1);
	kpr_unregister(test, &p->rp);
	kpt_kret_b(0);
	KUNIT_EXPECT_EQ(test, kpr_returns(p), 1);
	kpr_expect_healthy(test, kpt_kret_b, KPT_KRET_B_ADD);
}

/* ---------------------------------------------------------------------
 * The context return probes' handlers run in
 */

static struct kpt_ctx_seen kpr_seen_entry, kpr_seen_ret;

static int kpr_entry_ctx(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	kpt_ctx_note(&kpr_seen_entry);
	return kpr_entry_count(ri, regs);
}

static int kpr_ret_ctx(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	kpt_ctx_note(&kpr_seen_ret);
	return kpr_ret_note(ri, regs);
}

/* The kinds of site the entry of a return probe can be. */
enum kpr_site {
	KPR_SITE_FTRACE,
	KPR_SITE_BREAKPOINT,
	KPR_SITE_OPTIMIZED,
};

static const char * const kpr_site_name[] = {
	[KPR_SITE_FTRACE] = "ftrace site",
	[KPR_SITE_BREAKPOINT] = "breakpoint site",
	[KPR_SITE_OPTIMIZED] = "optimized site",
};

/*
 * What @s says handler @who saw in one call made with interrupts off
 * (@caller_off) or on: one run, preemption disabled (preempt_count()
 * above the caller's zero, where the kernel counts it), and interrupts off
 * if @always_off, else as the caller had them.
 */
static void kpr_expect_ctx(struct kunit *test, const struct kpt_ctx_seen *s,
			   const char *site, const char *who, bool caller_off,
			   bool always_off)
{
	const char *call = caller_off ? "interrupts off" : "interrupts on";
	bool want_off = always_off || caller_off;

	KUNIT_ASSERT_EQ_MSG(test, s->runs, 1, "%s, %s, called with %s: runs",
			    site, who, call);
	if (IS_ENABLED(CONFIG_PREEMPT_COUNT))
		KUNIT_EXPECT_NE_MSG(test, s->preempt_count, 0,
				    "%s, %s, called with %s: preempt_count() is 0",
				    site, who, call);
	KUNIT_EXPECT_FALSE_MSG(test, s->preemptible,
			       "%s, %s, called with %s: preemptible", site, who,
			       call);
	KUNIT_EXPECT_EQ_MSG(test, s->irqs_off, want_off,
			    "%s, %s, called with %s: handler ran with interrupts %s",
			    site, who, call, s->irqs_off ? "off" : "on");
}

/*
 * Handlers of return probes run with preemption disabled; the
 * entry_handler like any pre_handler of its site: with interrupts
 * disabled on a breakpoint site, as the probed code had them on an
 * ftrace site and on an optimized one; the return handler with interrupts
 * as they were when the function returned.  The entry of kpt_kret_a is an
 * ftrace site; that of kpt_opt_asm a breakpoint with the sysctl at 0 and
 * optimized (the list says so, the text holds the jmp) at 1.  The target
 * is called once with interrupts on and once with them off
 * (local_irq_save()).  kpr_exit() puts the sysctl back as it was.
 */
static void kpr_context(struct kunit *test, enum kpr_site site)
{
	struct kpr_ctx *ctx = test->priv;
	const char *name = kpr_site_name[site];
	bool c = site == KPR_SITE_FTRACE;
	struct kpr_probe *p = kpr_new(0);
	int old, state, want, off, marks;
	unsigned long addr, flags;
	u64 got, expect;
	u8 op = 0;

	if (!c) {
		old = kpt_optimization_get();
		if (old == -ENOENT && site == KPR_SITE_OPTIMIZED)
			kunit_skip(test,
				   "no %s: this kernel does not optimize probes (CONFIG_OPTPROBES)",
				   KPT_OPT_SYSCTL);
		if (old != -ENOENT) {
			KUNIT_ASSERT_GE_MSG(test, old, 0, "reading %s",
					    KPT_OPT_SYSCTL);
			ctx->sysctl_old = old;
			KUNIT_ASSERT_EQ_MSG(test,
					    kpt_optimization_set(site == KPR_SITE_OPTIMIZED),
					    0, "writing %s", KPT_OPT_SYSCTL);
		}
	}
	p->rp.kp.addr = c ? (kprobe_opcode_t *)kpt_kret_a :
			    (kprobe_opcode_t *)kpt_opt_asm;
	p->rp.entry_handler = kpr_entry_ctx;
	p->rp.handler = kpr_ret_ctx;
	KUNIT_ASSERT_EQ(test, kpr_register(test, &p->rp), 0);
	/* The entry probe goes past an endbr64, if there is one. */
	addr = (unsigned long)p->rp.kp.addr;

	marks = KPT_PS_LISTED | KPT_PS_OPTIMIZED | KPT_PS_FTRACE;
	switch (site) {
	case KPR_SITE_FTRACE:
		want = KPT_PS_LISTED | KPT_PS_FTRACE;
		break;
	case KPR_SITE_OPTIMIZED:
		want = KPT_PS_LISTED | KPT_PS_OPTIMIZED;
		break;
	default:
		if (!kpt_optimizer_wait())
			msleep(200);
		want = KPT_PS_LISTED;
		break;
	}
	state = kpt_wait_probe_state(addr, marks, want, 10000);
	KUNIT_ASSERT_TRUE_MSG(test, state >= 0 && (state & marks) == want,
			      "%s: %pS: list state %#x, want %#x", name,
			      (void *)addr, state, want);
	if (site == KPR_SITE_OPTIMIZED) {
		unsigned long end = jiffies + 5 * HZ;

		/* The jmp may follow the mark (upstream marks when it queues). */
		while (!copy_from_kernel_nofault(&op, (void *)addr, 1) &&
		       op != JMP32_INSN_OPCODE && time_before(jiffies, end))
			msleep(20);
		KUNIT_ASSERT_EQ_MSG(test, op, (u8)JMP32_INSN_OPCODE,
				    "%s: %pS: first byte %02x, no jmp", name,
				    (void *)addr, op);
	}

	for (off = 0; off < 2; off++) {
		memset(&kpr_seen_entry, 0, sizeof(kpr_seen_entry));
		memset(&kpr_seen_ret, 0, sizeof(kpr_seen_ret));
		KUNIT_ASSERT_EQ(test, preempt_count(), 0);
		expect = c ? (u64)(off + KPT_KRET_A_ADD) :
			     kpt_opt_want(off, 2, 3);
		if (off) {
			local_irq_save(flags);
			got = c ? kpt_kret_a(off) : kpt_opt_asm(off, 2, 3);
			local_irq_restore(flags);
		} else {
			got = c ? kpt_kret_a(off) : kpt_opt_asm(off, 2, 3);
		}
		KUNIT_EXPECT_EQ_MSG(test, got, expect, "%s: result", name);
		KUNIT_EXPECT_EQ_MSG(test, (u64)READ_ONCE(p->last_ret), expect,
				    "%s: regs_return_value() in the handler", name);
		kpr_expect_ctx(test, &kpr_seen_entry, name, "entry_handler", off,
			       site == KPR_SITE_BREAKPOINT);
		kpr_expect_ctx(test, &kpr_seen_ret, name, "handler", off, false);
	}
	KUNIT_EXPECT_EQ(test, p->rp.kp.nmissed, 0UL);
	KUNIT_EXPECT_EQ(test, p->rp.nmissed, 0);
	kpr_unregister(test, &p->rp);
}

static void kpr_context_ftrace_site(struct kunit *test)
{
	kpr_context(test, KPR_SITE_FTRACE);
}

static void kpr_context_breakpoint_site(struct kunit *test)
{
	kpr_context(test, KPR_SITE_BREAKPOINT);
}

static void kpr_context_optimized_site(struct kunit *test)
{
	kpr_context(test, KPR_SITE_OPTIMIZED);
}

static struct kunit_case kpr_cases[] = {
	KUNIT_CASE(kpr_basic),
	KUNIT_CASE(kpr_register_array),
	KUNIT_CASE(kpr_enable_disable),
	KUNIT_CASE(kpr_entry_refusal),
	KUNIT_CASE(kpr_data_round_trip),
	KUNIT_CASE(kpr_with_kprobe),
	KUNIT_CASE(kpr_nested_in_handler_missed),
	KUNIT_CASE(kpr_stacktrace),
	KUNIT_CASE(kpr_stacktrace_nested),
	KUNIT_CASE_SLOW(kpr_two_cpus),
	KUNIT_CASE(kpr_unregister_in_flight),
	KUNIT_CASE(kpr_task_exit),
	KUNIT_CASE(kpr_recursion_maxactive_1),
	KUNIT_CASE(kpr_find_ret_addr),
	KUNIT_CASE(kpr_uaccess),
	KUNIT_CASE_SLOW(kpr_no_miss),
	KUNIT_CASE(kpr_err_data_size),
	KUNIT_CASE(kpr_err_maxactive),
	KUNIT_CASE(kpr_err_not_entry),
	KUNIT_CASE(kpr_err_symbols),
	KUNIT_CASE(kpr_err_array_null),
	KUNIT_CASE(kpr_err_array_bad_symbol),
	KUNIT_CASE(kpr_err_unregister_unregistered),
	KUNIT_CASE(kpr_default_maxactive),
	KUNIT_CASE(kpr_handler_ret_ignored),
	KUNIT_CASE(kpr_err_register_twice),
	KUNIT_CASE(kpr_context_ftrace_site),
	KUNIT_CASE(kpr_context_breakpoint_site),
	KUNIT_CASE(kpr_context_optimized_site),
	{}
};

static struct kunit_suite kpr_suite = {
	.name = "kprobes_kretprobe",
	.init = kpr_init,
	.exit = kpr_exit,
	.test_cases = kpr_cases,
};

kunit_test_suites(&kpr_suite);

#endif /* CONFIG_KRETPROBES */

MODULE_DESCRIPTION("KUnit cases for return probes (kretprobes)");
MODULE_LICENSE("GPL");
