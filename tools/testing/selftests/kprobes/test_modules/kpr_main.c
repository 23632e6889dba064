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
#include <linux/cpufeature.h>
#ifdef CONFIG_X86_64
#include <asm/text-patching.h>
#endif
#include "kprobes_target.h"
#include "kpr.h"

bool kpr_upstream;
module_param_named(upstream, kpr_upstream, bool, 0444);
MODULE_PARM_DESC(upstream, "the kernel runs the upstream kprobes (baseline)");

#ifdef CONFIG_KRETPROBES

/* Why a handler call was wrong: bits of kpr_probe.why. */
enum {
	KPR_BAD_RET,		/* return value does not match the argument */
	KPR_BAD_DATA,		/* ri->data not as the entry handler left it */
	KPR_BAD_RP,		/* get_kretprobe() is not this probe */
	KPR_BAD_RA,		/* get_kretprobe_retaddr() is not the caller */
};

/*
 * Probes live in static storage, never on a test's stack: a probe left
 * registered by a failing case must not point at freed memory.
 */
static struct kpr_probe kpr_pool[KPR_NPROBES];

struct kpr_probe *kpr_new(int i)
{
	struct kpr_probe *p = &kpr_pool[i];

	memset(p, 0, sizeof(*p));
	return p;
}

static struct kpr_probe *kpr_of(struct kretprobe_instance *ri)
{
	return container_of(get_kretprobe(ri), struct kpr_probe, rp);
}

void kpr_track(struct kunit *test, struct kretprobe *rp)
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

void kpr_untrack(struct kunit *test, struct kretprobe *rp)
{
	struct kpr_ctx *ctx = test->priv;
	int i;

	for (i = 0; i < ARRAY_SIZE(ctx->live); i++)
		if (ctx->live[i] == rp)
			ctx->live[i] = NULL;
}

int kpr_register(struct kunit *test, struct kretprobe *rp)
{
	int ret = register_kretprobe(rp);

	if (!ret)
		kpr_track(test, rp);
	return ret;
}

void kpr_unregister(struct kunit *test, struct kretprobe *rp)
{
	kpr_untrack(test, rp);
	unregister_kretprobe(rp);
}

#ifdef KRETPROBE_POOL_GROWS
/* A snapshot of @p's pool, through the kernel's accessor. */
struct kretprobe_pool_info kpr_pool_info(struct kpr_probe *p)
{
	struct kretprobe_pool_info info;

	kretprobe_pool_info(&p->rp, &info);
	return info;
}
#endif

int kpr_returns(struct kpr_probe *p)
{
	return atomic_read(&p->returns);
}

/* ---------------------------------------------------------------------
 * Handlers
 */

int kpr_entry_count(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	atomic_inc(&kpr_of(ri)->entries);
	return 0;
}

int kpr_ret_note(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kpr_probe *p = kpr_of(ri);

	WRITE_ONCE(p->last_ret, regs_return_value(regs));
#ifdef CONFIG_ARM64
	WRITE_ONCE(p->last_pstate, regs->pstate);
	WRITE_ONCE(p->last_syscallno, regs->syscallno);
#endif
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
	return kpr_arg0(regs) & 1;
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

int kpr_entry_save(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kpr_probe *p = kpr_of(ri);

	kpr_data_fill((struct kpr_data *)ri->data,
		      (int)kpr_arg0(regs));
	atomic_inc(&p->entries);
	return 0;
}

int kpr_ret_check(struct kretprobe_instance *ri, struct pt_regs *regs)
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
int kpr_ret_stack(struct kretprobe_instance *ri, struct pt_regs *regs)
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
void kpr_expect_healthy(struct kunit *test, int (*fn)(int), int add)
{
	struct kpr_probe *p = kpr_new(KPR_NPROBES - 1);

	p->rp.kp.addr = kpt_entry(fn);
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
struct kpr_crowd kpr_crowd;

static int kpr_crowd_thread(void *arg)
{
	int x = (long)arg;

	if (READ_ONCE(kpr_crowd.hold)) {
		atomic_inc(&kpr_crowd.held);
		wait_event(kpr_crowd.hold_wq, !READ_ONCE(kpr_crowd.hold));
	}
	if (kpt_gate_wait(x) != x + KPT_GATE_ADD)
		atomic_inc(&kpr_crowd.wrong);
	atomic_inc(&kpr_crowd.returned);
	if (atomic_dec_and_test(&kpr_crowd.alive))
		complete(&kpr_crowd.gone);
	module_put_and_kthread_exit(0);
}

/*
 * Start @n crowd threads; returns how many started.  @pace, if not NULL,
 * is called with the number started so far after each start, and may
 * sleep to hold the next one back.
 */
int kpr_crowd_start_paced(int n, void (*pace)(int started, void *arg),
			  void *arg)
{
	int i;

	kpr_crowd.active = true;
	kpr_crowd.started = 0;
	atomic_set(&kpr_crowd.returned, 0);
	atomic_set(&kpr_crowd.wrong, 0);
	atomic_set(&kpr_crowd.alive, 1);
	atomic_set(&kpr_crowd.held, 0);
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
		if (pace)
			pace(i + 1, arg);
		else if (!(i % 64))
			cond_resched();
	}
	kpr_crowd.started = i;
	if (atomic_dec_and_test(&kpr_crowd.alive))
		complete(&kpr_crowd.gone);
	return i;
}

int kpr_crowd_start(int n)
{
	return kpr_crowd_start_paced(n, NULL, NULL);
}

/*
 * Start @n crowd threads that wait, before they call kpt_gate_wait(),
 * until kpr_crowd_release() lets them all go at once: a burst of calls.
 */
int kpr_crowd_start_held(int n)
{
	init_waitqueue_head(&kpr_crowd.hold_wq);
	WRITE_ONCE(kpr_crowd.hold, true);
	return kpr_crowd_start_paced(n, NULL, NULL);
}

int kpr_crowd_held(void)
{
	return atomic_read(&kpr_crowd.held);
}

void kpr_crowd_release(void)
{
	WRITE_ONCE(kpr_crowd.hold, false);
	wake_up_all(&kpr_crowd.hold_wq);
}

/* Wait up to @secs seconds for @read() to reach @n; true when it did. */
bool kpr_wait_count(int (*read)(void), int n, int secs)
{
	unsigned long end = kpt_deadline(secs * 1000);

	while (read() < n) {
		if (time_after(jiffies, end))
			return false;
		msleep(20);
	}
	return true;
}

int kpr_crowd_returned(void)
{
	return atomic_read(&kpr_crowd.returned);
}

/*
 * Wait until every crowd thread is gone, its module reference dropped
 * too; false on timeout.  The gate must be open.
 */
bool kpr_crowd_end(int secs)
{
	unsigned long end = kpt_deadline(secs * 1000);

	if (!kpr_crowd.active)
		return true;
	/* A case that stopped early may have left threads held. */
	if (READ_ONCE(kpr_crowd.hold))
		kpr_crowd_release();
	if (!wait_for_completion_timeout(&kpr_crowd.gone,
					 msecs_to_jiffies(kpt_paced_ms(secs * 1000))))
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

	p->rp.kp.addr = kpt_entry(kpt_kret_a);
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

	a->rp.kp.addr = kpt_entry(kpt_kret_a);
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

	p->rp.kp.addr = kpt_entry(kpt_kret_a);
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
	q->rp.kp.addr = kpt_entry(kpt_kret_b);
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

	p->rp.kp.addr = kpt_entry(kpt_kret_a);
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
	p->rp.kp.addr = kpt_entry(kpt_kret_b);
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
 * site on x86-64, a breakpoint on arm64), and a return probe on a
 * function with a breakpoint probe with a post_handler inside it: every
 * handler runs once per call, and the post_handler sees the add's result
 * in the return-value register and the next instruction's address.
 */
atomic_t kpr_pre_hits;
#ifdef KPR_HAVE_ASM_TARGETS
static unsigned long kpr_post_ret, kpr_post_ip;
static atomic_t kpr_post_hits;

static int kpr_kp_pre(struct kprobe *kp, struct pt_regs *regs)
{
	atomic_inc(&kpr_pre_hits);
	return 0;
}

static void kpr_kp_post(struct kprobe *kp, struct pt_regs *regs,
			unsigned long flags)
{
	kpr_post_ret = regs_return_value(regs);
	kpr_post_ip = instruction_pointer(regs);
	atomic_inc(&kpr_post_hits);
}
#endif

struct kprobe kpr_kp;

static void kpr_with_kprobe(struct kunit *test)
{
#ifdef KPR_HAVE_ASM_TARGETS
	struct kpr_ctx *ctx = test->priv;
	struct kpr_probe *p = kpr_new(0), *q = kpr_new(1);
	int i;

	atomic_set(&kpr_pre_hits, 0);
	atomic_set(&kpr_post_hits, 0);
	memset(&kpr_kp, 0, sizeof(kpr_kp));
	kpr_kp.addr = kpt_entry(kpt_kret_b);
	kpr_kp.pre_handler = kpr_kp_pre;
	kpr_kp.post_handler = kpr_kp_post;
	p->rp.kp.addr = kpt_entry(kpt_kret_b);
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
	KUNIT_EXPECT_EQ(test, (u32)kpr_post_ret, 102U + KPT_ADD_IMM);
	KUNIT_EXPECT_EQ(test, kpr_post_ip, kpt_label_addr(KPT_L_ADD_NEXT));
	KUNIT_EXPECT_EQ(test, kpr_returns(q), 3);
	KUNIT_EXPECT_EQ(test, (u32)q->last_ret, 102U + KPT_ADD_IMM);
	KUNIT_EXPECT_EQ(test, q->rp.nmissed, 0);
	ctx->kps[0] = NULL;
	unregister_kprobe(&kpr_kp);
	kpr_unregister(test, &q->rp);
#else
	kunit_skip(test,
		   "no kpt_asm_add here: a breakpoint inside it, its result after it");
#endif
}

/*
 * A return-probed function called from another probe's pre_handler: the
 * hit on its entry comes while a handler runs, so it is missed like any
 * such hit.  Its kprobe's nmissed grows by exactly one per call, no
 * instance is taken (rp.nmissed, which counts entries that found none,
 * stays 0), and neither its entry_handler nor its handler runs; the call
 * itself returns its value as usual.  Called outside a handler afterwards
 * it is caught.  The outer probes are on an ftrace site (kpt_reent_outer;
 * a breakpoint on arm64, without kprobes on ftrace) and on a breakpoint
 * (kpt_asm_sub, no ftrace call); the return probe is on kpt_kret_a.
 */
#ifdef KPR_HAVE_ASM_TARGETS
static atomic_t kpr_nested_bad;

static int kpr_pre_calls_kret(struct kprobe *kp, struct pt_regs *regs)
{
	int x = (int)regs_get_kernel_argument(regs, 0);

	if (kpt_kret_a(x) != x + KPT_KRET_A_ADD)
		atomic_inc(&kpr_nested_bad);
	atomic_inc(&kpr_pre_hits);
	return 0;
}
#endif

static void kpr_nested_in_handler_missed(struct kunit *test)
{
#ifdef KPR_HAVE_ASM_TARGETS
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
	p->rp.kp.addr = kpt_entry(kpt_kret_a);
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
#else
	kunit_skip(test, "no kpt_asm_sub here: a breakpoint probe on it");
#endif
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
	KUNIT_CASE(kpr_disable_in_flight),
	KUNIT_CASE(kpr_task_exit),
	KUNIT_CASE(kpr_recursion_maxactive_1),
	KUNIT_CASE(kpr_find_ret_addr),
	KUNIT_CASE(kpr_uaccess),
	KUNIT_CASE_SLOW(kpr_no_miss),
	KUNIT_CASE_SLOW(kpr_burst),
	KUNIT_CASE_SLOW(kpr_pool_trim_last_cached),
	KUNIT_CASE(kpr_err_data_size),
	KUNIT_CASE(kpr_err_maxactive),
	KUNIT_CASE(kpr_err_not_entry),
#ifdef CONFIG_ARM64
	KUNIT_CASE(kpr_entry_after_ftrace),
#endif
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
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
