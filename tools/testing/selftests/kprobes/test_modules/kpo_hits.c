// SPDX-License-Identifier: GPL-2.0
/*
 * kprobes_opt.ko, the cases on what handlers see: kpo_regs_* (each way a
 * probe can be hit) and kpo_smp (the other CPU calling while a probe
 * changes).  What they check is described at the top of kpo_main.c.
 */
#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/jiffies.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/mman.h>
#include <linux/module.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/stacktrace.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/cpufeature.h>
#include "kprobes_target.h"
#include "kpo.h"

/* ---------------------------------------------------------------------
 * kpo_regs_*
 */

const char * const kpo_path_name[] = {
	[KPO_BREAKPOINT] = "breakpoint",
	[KPO_BOOSTED] = "boosted",
	[KPO_OPTIMIZED] = "optimized",
	[KPO_FTRACE] = "ftrace",
};

/* Does an entry of the handler's stack trace lie in function @name? */
static bool kpo_trace_has_fn(struct kpo_snap *s, const char *name)
{
	char sym[KSYM_SYMBOL_LEN];
	unsigned int i;

	for (i = 0; i < s->ntrace; i++) {
		/* "name [module]" */
		sprint_symbol_no_offset(sym, s->trace[i]);
		sym[strcspn(sym, " ")] = '\0';
		if (!strcmp(sym, name))
			return true;
	}
	return false;
}

static bool kpo_trace_has(struct kpo_snap *s, unsigned long addr)
{
	unsigned int i;

	for (i = 0; i < s->ntrace; i++)
		if (s->trace[i] == addr)
			return true;
	return false;
}

/* The arguments in the registers of the calling convention. */
static noinline void kpo_check_args(struct kunit *test, struct pt_regs *r,
				    const struct kpo_want *w, const char *where)
{
	KUNIT_EXPECT_EQ_MSG(test, regs_get_kernel_argument(r, 0), w->a,
			    "%s, %s: first argument", w->path, where);
	KUNIT_EXPECT_EQ_MSG(test, regs_get_kernel_argument(r, 1), w->b,
			    "%s, %s: second argument", w->path, where);
	KUNIT_EXPECT_EQ_MSG(test, regs_get_kernel_argument(r, 2), w->c,
			    "%s, %s: third argument", w->path, where);
}

/* Returns whether the stack trace was right. */
static bool kpo_check_snap(struct kunit *test, struct kpo_probe *p,
			   const struct kpo_want *w)
{
	struct kpo_snap *s = &p->last;
	struct pt_regs *r = &s->regs;
	const char *where = w->mid ? "mid" : w->fn;
	struct kpo_check c[KPO_NCHECKS];
	unsigned int i, n;
	bool caller;

	KUNIT_ASSERT_TRUE_MSG(test, s->valid, "%s, %s: no hit", w->path, where);
	KUNIT_EXPECT_EQ_MSG(test, instruction_pointer(r), w->addr + KPO_IP_DELTA,
			    "%s, %s: instruction pointer", w->path, where);
	KUNIT_EXPECT_EQ_MSG(test, r->sp, w->sp, "%s, %s: regs->sp", w->path, where);
	KUNIT_EXPECT_EQ_MSG(test, kpo_seen_ret(s), w->ret,
			    "%s, %s: return address %pS, want %pS",
			    w->path, where, (void *)kpo_seen_ret(s), (void *)w->ret);
	if (!w->mid || KPO_ARGS_AT_MID)
		kpo_check_args(test, r, w, where);
	KUNIT_EXPECT_TRUE_MSG(test, kpo_regs_irqs_on(r),
			      "%s, %s: interrupts off in the probed context's regs",
			      w->path, where);
	n = kpo_arch_checks(r, w, c);
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ_MSG(test, c[i].got, c[i].want, "%s, %s: %s",
				    w->path, where, c[i].what);
	/*
	 * The frame-pointer unwinder finds the probed function through the
	 * pt_regs each path marks in %rbp, but its caller only through the
	 * probed function's own frame, which an entry probe (before push
	 * %rbp) and the frameless kpt_opt_asm do not have yet.
	 */
	caller = !IS_ENABLED(CONFIG_UNWINDER_FRAME_POINTER);
	if (kpo_trace_has_fn(s, w->fn) && (!caller || kpo_trace_has(s, w->up)))
		return true;
	KUNIT_EXPECT_TRUE_MSG(test, kpo_trace_has_fn(s, w->fn),
			      "%s, %s: %s not in the handler's stack trace (%u entries)",
			      w->path, where, w->fn, s->ntrace);
	if (caller)
		KUNIT_EXPECT_TRUE_MSG(test, kpo_trace_has(s, w->up),
				      "%s, %s: caller %pS not in the handler's stack trace (%u entries)",
				      w->path, where, (void *)w->up, s->ntrace);
	return false;
}

/* Print the stack trace a handler took. */
static void kpo_show_trace(struct kunit *test, struct kpo_probe *p,
			   const char *path)
{
	unsigned int i;

	kunit_info(test, "%s: the stack trace of the handler at %pS:\n", path,
		   p->kp.addr);
	for (i = 0; i < p->last.ntrace; i++)
		kunit_info(test, "  %pS\n", (void *)p->last.trace[i]);
}

/*
 * Leave 0xa5 where the next call builds its pt_regs, so that a field no
 * path fills shows as that rather than as whatever was there before (a
 * frame within 32-bit kernels' limit of 1024 bytes).
 */
static noinline void kpo_poison_stack(void)
{
	u8 buf[BITS_PER_LONG * 16];

	memset(buf, 0xa5, sizeof(buf));
	barrier_data(buf);
}

/*
 * On path @path, the probes on kpt_opt_asm (entry and mid), or (@c) the
 * one on the entry of kpt_opt_c.
 */
static void kpo_regs_one(struct kunit *test, enum kpo_path path, bool c)
{
	const char *name = kpo_path_name[path];
	unsigned long (*call)(unsigned long a, unsigned long b, unsigned long c) =
		c ? kpt_opt_call_c : kpt_opt_call;
	struct kpo_probe *e, *m = NULL;
	struct kpo_want w = { .path = name, .built = path == KPO_OPTIMIZED };
	int state, want, mask = KPO_ANY, i, n = 8;
	bool shown = false;
	unsigned long entry, mid = 0;
	unsigned long a, b, cc, got;

	switch (path) {
	case KPO_OPTIMIZED:
		kpo_need_sysctl(test, 1);
		break;
	case KPO_BOOSTED:
		/* Without the sysctl nothing is optimized anyway. */
		if (kpt_optimization_get() != -ENOENT)
			kpo_need_sysctl(test, 0);
		break;
	default:
		break;
	}
	kpo_layout(test);
	kpo_bind_self(test);
	entry = c ? (unsigned long)kpt_opt_c : kpo_insn(test, KPO_I_ENTRY);
	w.fn = c ? "kpt_opt_c" : "kpt_opt_asm";
	w.ret = kpo_call_ret(c);
	w.up = kpo_call_up(c);

	e = kpo_new(0, path == KPO_BREAKPOINT);
	e->snap = true;
	kpo_register(test, e, entry);
	/* kpt_opt_c's entry probe goes past its endbr64, if it has one. */
	entry = (unsigned long)e->kp.addr;
	if (!c) {
		mid = kpo_insn(test, KPO_I_MID);
		m = kpo_new(1, path == KPO_BREAKPOINT);
		m->snap = true;
		kpo_register(test, m, mid);
	}

	switch (path) {
	case KPO_OPTIMIZED:
		want = KPT_PS_LISTED | KPT_PS_OPTIMIZED;
		break;
	case KPO_FTRACE:
		want = KPT_PS_LISTED | KPT_PS_FTRACE;
		break;
	default:
		/* Let the optimizer have its go, if any. */
		if (!kpt_optimizer_wait())
			msleep(200);
		want = KPT_PS_LISTED;
		break;
	}
	kpo_expect_state(test, entry, mask, want, name);
	if (m)
		kpo_expect_state(test, mid, mask, want, name);

	for (i = 0; i < n; i++) {
		kpo_input(i, &a, &b, &cc);
		e->last.valid = false;
		if (m)
			m->last.valid = false;
		kpo_poison_stack();
		got = call(a, b, cc);
		KUNIT_EXPECT_EQ_MSG(test, got, kpt_opt_want(a, b, cc),
				    "%s: result for input %d", name, i);
		w.sp = READ_ONCE(kpt_opt_sp) - KPO_SP_DELTA;
		w.fp = READ_ONCE(kpt_opt_sp);
		w.a = a;
		w.b = b;
		w.c = cc;
		w.mid = false;
		w.addr = entry;
		if (!kpo_check_snap(test, e, &w) && !shown) {
			kpo_show_trace(test, e, name);
			shown = true;
		}
		if (m) {
			w.mid = true;
			w.addr = mid;
			if (!kpo_check_snap(test, m, &w) && !shown) {
				kpo_show_trace(test, m, name);
				shown = true;
			}
		}
	}
	KUNIT_EXPECT_EQ_MSG(test, kpo_pre_count(e), n, "%s: entry hits", name);
	if (m)
		KUNIT_EXPECT_EQ_MSG(test, kpo_pre_count(m), n, "%s: mid hits", name);
	if (path == KPO_BREAKPOINT) {
		KUNIT_EXPECT_EQ(test, kpo_post_count(e), n);
		if (m)
			KUNIT_EXPECT_EQ(test, kpo_post_count(m), n);
	}

	/* Registers written by the pre_handler are the ones the code runs on. */
	e->snap = false;
	if (m)
		m->snap = false;
	kpo_input(n, &a, &b, &cc);
	e->set = KPO_SET_ARG0;
	e->set_val = a ^ (~0UL / 0xff * 0x55);
	got = call(a, b, cc);
	KUNIT_EXPECT_EQ_MSG(test, got, kpt_opt_want(e->set_val, b, cc),
			    "%s: first argument set by the entry's pre_handler", name);
	e->set = KPO_SET_NONE;
	if (m) {
		unsigned long ax = ~0UL / 0xff * 0x12 ^ 0x789;

		m->set = KPO_SET_MID;
		m->set_val = ax;
		got = call(a, b, cc);
		KUNIT_EXPECT_EQ_MSG(test, got, kpt_opt_finish(ax * (b | 1), a, b, cc),
				    "%s: a + b set by the mid pre_handler", name);
		m->set = KPO_SET_NONE;
	}

	/* Still what it was. */
	state = kpt_probe_state(entry);
	KUNIT_EXPECT_EQ_MSG(test, state & mask, want, "%s: entry probe after the calls",
			    name);
	kpo_unregister(test, e);
	if (m)
		kpo_unregister(test, m);
	if (!c)
		kpo_expect_text(test);
}

/*
 * Where ftrace carries entry probes (x86-64), kpt_opt_c's is the ftrace
 * path's; elsewhere (arm64) a function's entry is one more breakpoint or
 * optimized site, checked on both.
 */
static void kpo_regs(struct kunit *test, enum kpo_path path)
{
	const char *missing = kpo_path_missing(path);

	if (missing)
		kunit_skip(test, "%s", missing);
	if (IS_ENABLED(CONFIG_X86)) {
		kpo_regs_one(test, path, path == KPO_FTRACE);
		return;
	}
	kpo_regs_one(test, path, false);
	kpo_regs_one(test, path, true);
}

void kpo_regs_breakpoint(struct kunit *test)
{
	kpo_regs(test, KPO_BREAKPOINT);
}

void kpo_regs_boosted(struct kunit *test)
{
	kpo_regs(test, KPO_BOOSTED);
}

void kpo_regs_optimized(struct kunit *test)
{
	kpo_regs(test, KPO_OPTIMIZED);
}

void kpo_regs_ftrace(struct kunit *test)
{
	kpo_regs(test, KPO_FTRACE);
}

/* ---------------------------------------------------------------------
 * kpo_smp
 */

struct kpo_worker {
	atomic_long_t calls;
	long bad;
	unsigned long bad_a, bad_b, bad_c, bad_got;
	/* kpo_hold(): the worker waits between two calls while hold is set. */
	int hold, held;
};

static struct kpo_worker kpo_w;

static int kpo_worker_fn(void *data)
{
	struct kpo_worker *w = data;
	unsigned int i = 1U << 24;
	unsigned long a, b, c, got;
	int n;

	while (!kthread_should_stop()) {
		if (kthread_should_park()) {
			kthread_parkme();
			continue;
		}
		/* Pairs with the release in kpo_hold(). */
		if (smp_load_acquire(&w->hold)) {
			/* Our calls are counted: kpo_hold() may read. */
			smp_store_release(&w->held, 1);
			/* Pairs with the release in kpo_hold(). */
			while (smp_load_acquire(&w->hold))
				cpu_relax();
			/* Only kpo_hold() reads this, to see us stop. */
			smp_store_release(&w->held, 0);
			continue;
		}
		for (n = 0; n < 64; n++, i++) {
			kpo_input(i, &a, &b, &c);
			got = kpt_opt_asm(a, b, c);
			if (got != kpt_opt_want(a, b, c) && !w->bad++) {
				w->bad_a = a;
				w->bad_b = b;
				w->bad_c = c;
				w->bad_got = got;
			}
			atomic_long_inc(&w->calls);
		}
		/*
		 * A voluntary context switch, also on a preemptible kernel
		 * where cond_resched() does nothing: the optimizer's RCU-tasks
		 * grace period waits for one from every task.
		 */
		schedule();
	}
	return 0;
}

/*
 * Stop the running worker between two of its calls (@on), or let it go
 * on: the counts of a phase are read while it waits, so that none of its
 * hits is half counted.  Text changes happen while it runs.
 */
static void kpo_hold(struct kunit *test, bool on)
{
	unsigned long end = kpt_deadline(10000);

	/* Pairs with the acquires in kpo_worker_fn(). */
	smp_store_release(&kpo_w.hold, on);
	if (!on)
		return;
	/* Pairs with the release in kpo_worker_fn(): its counts are in. */
	while (!smp_load_acquire(&kpo_w.held)) {
		if (time_after(jiffies, end)) {
			KUNIT_FAIL(test, "the worker did not stop between two calls in 10 s");
			return;
		}
		cpu_relax();
	}
}

/* The counts of one phase. */
struct kpo_phase {
	long mine, theirs;
	int p, q, q_post;
};

struct kpo_smp_state {
	struct task_struct *t;
	bool park;
	unsigned int next;
	long mine, theirs, stalled, bad;
	unsigned int phases;
};

/*
 * Both CPUs call until each made KPO_SMP_CALLS calls (within KPO_SMP_MS):
 * this CPU calls while the other runs (unparked for the phase when the
 * case parks it).
 */
static void kpo_smp_run(struct kunit *test, struct kpo_smp_state *ss,
			const char *step, struct kpo_phase *ph,
			struct kpo_probe *p, struct kpo_probe *q)
{
	unsigned long end = kpt_deadline(KPO_SMP_MS);
	long start, mine = 0;
	int p0, q0 = 0, qp0 = 0;

	if (!ss->park)
		kpo_hold(test, true);
	start = atomic_long_read(&kpo_w.calls);
	p0 = kpo_pre_count(p);
	if (q) {
		q0 = kpo_pre_count(q);
		qp0 = kpo_post_count(q);
	}
	if (ss->park)
		kthread_unpark(ss->t);
	else
		kpo_hold(test, false);
	do {
		ss->bad += kpo_calls(test, ss->next, 64, step);
		ss->next += 64;
		mine += 64;
		cond_resched();
	} while ((mine < KPO_SMP_CALLS ||
		  atomic_long_read(&kpo_w.calls) - start < KPO_SMP_CALLS) &&
		 time_before(jiffies, end));
	if (ss->park)
		KUNIT_ASSERT_EQ(test, kthread_park(ss->t), 0);
	else
		kpo_hold(test, true);
	ph->mine = mine;
	ph->p = kpo_pre_count(p) - p0;
	if (q) {
		ph->q = kpo_pre_count(q) - q0;
		ph->q_post = kpo_post_count(q) - qp0;
	}
	ph->theirs = atomic_long_read(&kpo_w.calls) - start;
	if (!ss->park)
		kpo_hold(test, false);
	if (ph->theirs < KPO_SMP_CALLS)
		ss->stalled++;
	ss->mine += mine;
	ss->theirs += ph->theirs;
	ss->phases++;
}

/*
 * The hits of one phase are exact: the other CPU is parked, or held
 * between two calls, while the counts are read.
 */
static void kpo_smp_hits(struct kunit *test, struct kpo_smp_state *ss,
			 const char *step, long hits, const struct kpo_phase *ph)
{
	KUNIT_EXPECT_EQ_MSG(test, hits, ph->mine + ph->theirs,
			    "%s: %ld hits, %ld + %ld calls", step, hits,
			    ph->mine, ph->theirs);
}

static void kpo_smp_post(struct kunit *test, struct kpo_smp_state *ss,
			 const char *step, const struct kpo_phase *ph)
{
	if (kpo_upstream_no_post(test, ph->q_post, ph->q))
		return;
	KUNIT_EXPECT_EQ_MSG(test, ph->q_post, ph->q,
			    "%s: post_handler runs %d, pre_handler runs %d", step,
			    ph->q_post, ph->q);
}

void kpo_smp(struct kunit *test)
{
	static const unsigned int where[] = { KPO_I_ENTRY, KPO_I_NEXT, KPO_I_MID };
	struct kpo_ctx *ctx = test->priv;
	struct kpo_smp_state ss = { .park = !kpo_cross_cpu };
	struct kpo_probe *p, *q;
	struct kpo_phase ph;
	ktime_t t0 = ktime_get();
	unsigned int round;
	int cpu, other;
	char step[64];

	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two online CPUs");
	kpo_need_sysctl(test, 1);
	kpo_layout(test);
	cpu = kpo_bind_self(test);
	other = cpumask_any_but(cpu_online_mask, cpu);
	KUNIT_ASSERT_LT(test, other, nr_cpu_ids);

	memset(&kpo_w, 0, sizeof(kpo_w));
	ss.t = kthread_create(kpo_worker_fn, &kpo_w, "kpo_worker/%d", other);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ss.t));
	kthread_bind(ss.t, other);
	ctx->worker = ss.t;
	/* A new kthread parks before it runs kpo_worker_fn(). */
	if (ss.park)
		KUNIT_ASSERT_EQ(test, kthread_park(ss.t), 0);
	else
		wake_up_process(ss.t);

	for (round = 0; round < KPO_SMP_ROUNDS; round++) {
		unsigned long addr = kpo_insn(test, where[round % ARRAY_SIZE(where)]);
		long p_total, mine0 = ss.mine, theirs0 = ss.theirs;

		p = kpo_new(0, false);
		kpo_register(test, p, addr);
		snprintf(step, sizeof(step), "round %u (%pS), optimized", round,
			 (void *)addr);
		kpo_expect_optimized(test, addr, step);
		kpo_smp_run(test, &ss, step, &ph, p, NULL);
		kpo_smp_hits(test, &ss, step, ph.p, &ph);

		kpo_sysctl(test, 0);
		snprintf(step, sizeof(step), "round %u, sysctl 0", round);
		kpo_expect_plain(test, addr, step);
		kpo_smp_run(test, &ss, step, &ph, p, NULL);
		kpo_smp_hits(test, &ss, step, ph.p, &ph);

		kpo_sysctl(test, 1);
		snprintf(step, sizeof(step), "round %u, sysctl 1", round);
		kpo_expect_optimized(test, addr, step);
		kpo_smp_run(test, &ss, step, &ph, p, NULL);
		kpo_smp_hits(test, &ss, step, ph.p, &ph);

		q = kpo_new(1, true);
		kpo_register(test, q, addr);
		snprintf(step, sizeof(step), "round %u, with a post_handler", round);
		kpo_expect_plain(test, addr, step);
		kpo_smp_run(test, &ss, step, &ph, p, q);
		kpo_smp_hits(test, &ss, step, ph.p, &ph);
		kpo_smp_hits(test, &ss, step, ph.q, &ph);
		kpo_smp_post(test, &ss, step, &ph);

		kpo_unregister(test, q);
		snprintf(step, sizeof(step), "round %u, post_handler gone", round);
		kpo_expect_optimized(test, addr, step);
		kpo_smp_run(test, &ss, step, &ph, p, NULL);
		kpo_smp_hits(test, &ss, step, ph.p, &ph);

		p_total = kpo_pre_count(p);
		kpo_unregister(test, p);
		snprintf(step, sizeof(step), "round %u, unregistered", round);
		kpo_expect_state(test, addr, KPO_ANY, 0, step);
		kpo_expect_text(test);
		/* Every call of this CPU while the probe was there hit it. */
		KUNIT_EXPECT_GE_MSG(test, p_total, ss.mine - mine0,
				    "round %u: %ld hits, %ld calls from this CPU",
				    round, p_total, ss.mine - mine0);
		if (ss.park)
			KUNIT_EXPECT_EQ_MSG(test, p_total,
					    ss.mine - mine0 + ss.theirs - theirs0,
					    "round %u: hits", round);
	}
	/* Some more calls with the probe gone. */
	p = kpo_new(0, false);
	kpo_smp_run(test, &ss, "no probe", &ph, p, NULL);
	KUNIT_EXPECT_EQ(test, ph.p, 0);
	kthread_stop(ss.t);
	ctx->worker = NULL;

	kunit_info(test,
		   "%u rounds, %s: calls %ld (this CPU) + %ld (CPU %d) in %u phases, %ld + %ld wrong, %lld ms\n",
		   KPO_SMP_ROUNDS,
		   ss.park ? "other CPU parked while the text changes" :
			     "other CPU calling throughout",
		   ss.mine, ss.theirs, other, ss.phases, ss.bad, kpo_w.bad,
		   ktime_ms_delta(ktime_get(), t0));
	if (kpo_w.bad)
		KUNIT_FAIL(test,
			   "other CPU: %ld wrong results, first kpt_opt_asm(%#lx, %#lx, %#lx) = %#lx, want %#lx",
			   kpo_w.bad, kpo_w.bad_a, kpo_w.bad_b, kpo_w.bad_c,
			   kpo_w.bad_got,
			   kpt_opt_want(kpo_w.bad_a, kpo_w.bad_b, kpo_w.bad_c));
	KUNIT_EXPECT_EQ_MSG(test, ss.stalled, 0L,
			    "the other CPU made fewer than %d calls in %ld phases",
			    KPO_SMP_CALLS, ss.stalled);
}
