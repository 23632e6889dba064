// SPDX-License-Identifier: GPL-2.0
/*
 * kprobes_kretprobe.ko, the cases on stack traces from a return handler
 * (kpr_stacktrace*) and on concurrency: two CPUs, sleeping callers,
 * unregistration and task exit while calls are in flight.  What they
 * check is described at the top of kpr_main.c.
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
#include "kpt_user.h"
#include "kpr.h"

#ifdef CONFIG_KRETPROBES

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

void kpr_stacktrace(struct kunit *test)
{
	struct kpr_probe *p = kpr_new(0);
	unsigned long real, tramp;

	if (!IS_ENABLED(CONFIG_ARCH_CORRECT_STACKTRACE_ON_KRETPROBE))
		kunit_skip(test,
			   "no ARCH_CORRECT_STACKTRACE_ON_KRETPROBE: the unwinder stops at the trampoline");

	/* Where kpt_kret_a returns to when called by kpt_kret_call. */
	KUNIT_ASSERT_EQ(test, kpt_kret_call(kpt_kret_a, 1), 1 + KPT_KRET_A_ADD);
	real = READ_ONCE(kpt_kret_ra[KPT_RA_A]);

	p->rp.kp.addr = kpt_entry(kpt_kret_a);
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
	if (!kpr_can_ask_trampoline && !kpr_upstream)
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
void kpr_stacktrace_nested(struct kunit *test)
{
	struct kpr_probe *outer = kpr_new(0), *inner = kpr_new(1);
	struct kretprobe *rps[] = { &outer->rp, &inner->rp };
	unsigned long real_outer, real_inner, tramp;

	if (!IS_ENABLED(CONFIG_ARCH_CORRECT_STACKTRACE_ON_KRETPROBE))
		kunit_skip(test,
			   "no ARCH_CORRECT_STACKTRACE_ON_KRETPROBE: the unwinder stops at the trampoline");
	int want = 5 + KPT_KRET_INNER_ADD + KPT_KRET_OUTER_ADD;
	int i;

	KUNIT_ASSERT_EQ(test, kpt_kret_call(kpt_kret_outer, 5), want);
	real_outer = READ_ONCE(kpt_kret_ra[KPT_RA_OUTER]);
	real_inner = READ_ONCE(kpt_kret_ra[KPT_RA_INNER]);

	outer->rp.kp.addr = kpt_entry(kpt_kret_outer);
	outer->rp.handler = kpr_ret_stack;
	inner->rp.kp.addr = kpt_entry(kpt_kret_inner);
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
void kpr_two_cpus(struct kunit *test)
{
	struct kpr_probe *p = kpr_new(0);
	bool done = true;
	int cpu[2], i;

	cpu[0] = cpumask_first(cpu_online_mask);
	cpu[1] = cpumask_next(cpu[0], cpu_online_mask);
	if (cpu[1] >= nr_cpu_ids)
		kunit_skip(test, "needs two online CPUs");

	p->rp.kp.addr = kpt_entry(kpt_kret_a);
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
		if (!wait_for_completion_timeout(&kpr_smp_args[i].done,
						 msecs_to_jiffies(kpt_paced_ms(300000))))
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
	/*
	 * arm's unwinder traces no other task on SMP (it might be running);
	 * others do not see through the trampoline at all.
	 */
	if ((IS_ENABLED(CONFIG_ARM) && IS_ENABLED(CONFIG_SMP)) ||
	    !IS_ENABLED(CONFIG_ARCH_CORRECT_STACKTRACE_ON_KRETPROBE)) {
		kunit_info(test, "no stack trace of another task through the trampoline here: the sleeper's stack is not checked\n");
		return;
	}
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

/*
 * A return probe on kpt_gate_wait() counting its handler's calls, in
 * test->priv's heap slot (freed by the suite's exit if the case stops).
 */
static struct kretprobe *kpr_flight_probe(struct kunit *test)
{
	struct kpr_ctx *ctx = test->priv;
	struct kretprobe *rp;

	atomic_set(&kpr_flight_calls, 0);
	atomic_set(&kpr_flight_late, 0);
	WRITE_ONCE(kpr_flight_unregistered, false);
	rp = kzalloc(sizeof(*rp), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rp);
	ctx->heap = rp;
	rp->kp.addr = kpt_entry(kpt_gate_wait);
	rp->handler = kpr_ret_flight;
	rp->maxactive = 2 * KPR_FLIGHT_THREADS;
	KUNIT_ASSERT_EQ(test, kpr_register(test, rp), 0);
	return rp;
}

/* Close the gate and let @n callers in; they sleep inside. */
static void kpr_flight_fill(struct kunit *test, int n)
{
	kpt_gate_close();
	KUNIT_ASSERT_EQ(test, kpr_crowd_start(n), n);
	KUNIT_ASSERT_TRUE_MSG(test, kpr_wait_count(kpt_gate_inside, n, 60),
			      "%d of %d callers inside", kpt_gate_inside(), n);
}

/* Open the gate: the @n callers return, each with its own value. */
static void kpr_flight_drain(struct kunit *test, int n)
{
	kpt_gate_open();
	KUNIT_EXPECT_TRUE_MSG(test, kpr_wait_count(kpr_crowd_returned, n, 60),
			      "%d of %d callers returned",
			      kpr_crowd_returned(), n);
	KUNIT_EXPECT_TRUE(test, kpr_crowd_end(60));
	KUNIT_EXPECT_EQ(test, atomic_read(&kpr_crowd.wrong), 0);
}

void kpr_unregister_in_flight(struct kunit *test)
{
	struct kpr_ctx *ctx = test->priv;
	struct kretprobe *rp = kpr_flight_probe(test);
	int n = KPR_FLIGHT_THREADS;

	/* The probe works: a call through the open gate. */
	KUNIT_EXPECT_EQ(test, kpt_gate_wait(1), 1 + KPT_GATE_ADD);
	KUNIT_EXPECT_EQ(test, atomic_read(&kpr_flight_calls), 1);

	kpr_flight_fill(test, n);
	kpr_check_sleeper_stack(test);
	kpr_unregister(test, rp);
	WRITE_ONCE(kpr_flight_unregistered, true);
	ctx->heap = NULL;
	kfree(rp);

	kpr_flight_drain(test, n);
	KUNIT_EXPECT_EQ(test, atomic_read(&kpr_flight_late), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&kpr_flight_calls), 1);
}

/*
 * A return probe disabled while callers sleep inside its function: as
 * kprobes.rst says, the calls it already follows return to their callers
 * without running its handler.  Enabled again, it catches the next call.
 */
void kpr_disable_in_flight(struct kunit *test)
{
	struct kpr_ctx *ctx = test->priv;
	struct kretprobe *rp = kpr_flight_probe(test);
	int n = KPR_FLIGHT_THREADS;

	kpr_flight_fill(test, n);
	KUNIT_EXPECT_EQ(test, disable_kretprobe(rp), 0);
	kpr_flight_drain(test, n);
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&kpr_flight_calls), 0,
			    "handlers run on returns after disable_kretprobe()");

	KUNIT_EXPECT_EQ(test, enable_kretprobe(rp), 0);
	KUNIT_EXPECT_EQ(test, kpt_gate_wait(1), 1 + KPT_GATE_ADD);
	KUNIT_EXPECT_EQ(test, atomic_read(&kpr_flight_calls), 1);
	KUNIT_EXPECT_EQ(test, rp->nmissed, 0);
	kpr_unregister(test, rp);
	ctx->heap = NULL;
	kfree(rp);
}

/*
 * What an unwinder asks for another task's frame that returns to the
 * trampoline (kretprobe_find_ret_addr(), with the key the target noted in
 * kpt_kret_fp: its entry stack pointer on x86-64, its entry frame pointer
 * on arm64): the real return address while the task sleeps inside the
 * probed function, nothing while it runs there (its list of instances
 * changes under the asker, and an instance it gives back may be on another
 * task's list by the time it is followed).  And what the unwinder makes of
 * the sleeping task's stack (stack_trace_save_tsk()): its frames through
 * kpt_kret_park(), whose return address on the stack is the trampoline,
 * go on to the real caller, and no entry is the trampoline.
 */
#ifdef KPR_HAVE_KRET_ASM
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

/* Wait up to @secs seconds for @t to be off every CPU. */
static bool kpr_wait_off_cpu(struct task_struct *t, unsigned int secs)
{
	unsigned long end = kpt_deadline(secs * 1000);

	while (READ_ONCE(t->on_cpu)) {
		if (time_after(jiffies, end))
			return false;
		usleep_range(1000, 2000);
	}
	return true;
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

/*
 * The stack of @t, asleep in kpt_kret_park() under a return probe whose
 * real return address kretprobe_find_ret_addr() gave as @ret: the frame
 * after kpt_kret_park's is its caller's, kpr_park_thread, at @ret.
 */
static bool kpr_sym_is(unsigned long addr, const char *name)
{
	char sym[KSYM_SYMBOL_LEN];
	size_t len = strlen(name);

	/* "name [module]" */
	sprint_symbol_no_offset(sym, addr);
	return !strncmp(sym, name, len) && (!sym[len] || sym[len] == ' ');
}

static void kpr_check_parked_stack(struct kunit *test, struct task_struct *t,
				   unsigned long ret)
{
	unsigned long trace[KPR_STACK_MAX];
	unsigned int i, n;
	int park = -1;

	n = stack_trace_save_tsk(t, trace, ARRAY_SIZE(trace), 0);
	KUNIT_EXPECT_GT(test, n, 0U);
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_FALSE_MSG(test, kpr_is_trampoline(trace[i]),
				       "entry %u of the parked task's stack is the trampoline",
				       i);
		if (park < 0 && kpr_sym_is(trace[i], "kpt_kret_park"))
			park = i;
	}
	KUNIT_EXPECT_GE_MSG(test, park, 0,
			    "kpt_kret_park not in the parked task's stack (%u entries)",
			    n);
	if (park >= 0 && park + 1 < n) {
		KUNIT_EXPECT_TRUE_MSG(test,
				      kpr_sym_is(trace[park + 1], "kpr_park_thread"),
				      "kpt_kret_park's caller in the stack: %pS",
				      (void *)trace[park + 1]);
		if (ret)
			KUNIT_EXPECT_EQ(test, trace[park + 1], ret);
	} else if (park >= 0) {
		KUNIT_FAIL(test, "the parked task's stack ends at kpt_kret_park");
	}
	if (test->status == KUNIT_FAILURE)
		for (i = 0; i < n; i++)
			kunit_info(test, "  #%u %pS\n", i, (void *)trace[i]);
}
#endif

void kpr_find_ret_addr(struct kunit *test)
{
#ifdef KPR_HAVE_KRET_ASM
	struct kpr_probe *p = kpr_new(0);
	char sym[KSYM_SYMBOL_LEN];
	struct task_struct *t;
	unsigned long ret;
	int cpu;

	if (kpr_upstream)
		kunit_skip(test,
			   "upstream unwinds through rethook_find_ret_addr(), which warns for a running task");
	if (!kpr_can_find_ret)
		KUNIT_FAIL(test, "kretprobe_find_ret_addr() is not exported");

	/* Asleep inside: the real return address, in the thread's function. */
	p->rp.kp.addr = kpt_entry(kpt_kret_park);
	p->rp.handler = kpr_ret_note;
	KUNIT_ASSERT_EQ(test, kpr_register(test, &p->rp), 0);
	WRITE_ONCE(kpt_kret_fp, 0);
	kpt_gate_close();
	t = kpr_start(test, kpr_park_thread, -1);
	KUNIT_EXPECT_TRUE(test, kpr_wait_count(kpt_gate_inside, 1, 30));
	KUNIT_EXPECT_TRUE(test, kpr_fp_noted());
	/* Not running: asleep at the gate. */
	KUNIT_EXPECT_FALSE(test, task_is_running(t));
	/*
	 * And off its CPU: its state says asleep before schedule() has saved
	 * its context, and until then its saved stack pointer is an old one
	 * (seen once on arm64: a one-entry trace).
	 */
	KUNIT_EXPECT_TRUE(test, kpr_wait_off_cpu(t, 30));
	ret = kpr_find_ret(t);
	sprint_symbol_no_offset(sym, ret);
	KUNIT_EXPECT_TRUE_MSG(test, str_has_prefix(sym, "kpr_park_thread"),
			      "return address of a sleeping task: %pS", (void *)ret);
	kpr_check_parked_stack(test, t, ret);
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
	p->rp.kp.addr = kpt_entry(kpt_kret_spin);
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
#else
	kunit_skip(test, "no kpt_kret_park and kpt_kret_spin here");
#endif
}

/*
 * A few functions are called between stac and clac: copy_from_user()
 * calls rep_movs_alternative() on a CPU without FSRM.  A return probe on
 * it returns through the trampoline with user access open; its handler
 * must run with EFLAGS.AC clear, and the copy go on with it set.
 *
 * arm64 has no such window around a call to probe.  With PAN, uaccess
 * routines reach user memory with unprivileged loads and stores
 * (LDTR/STTR), which PAN does not stop: PSTATE.PAN is cleared only
 * around inline exclusive sequences on user memory (futexes, SWP
 * emulation), where no function is called.  Without PAN (this suite's
 * arm64 kernels have no CONFIG_ARM64_PAN) user memory is never shut.
 * Only CONFIG_ARM64_SW_TTBR0_PAN, on a CPU without PAN, opens a window
 * (TTBR0) around a call, __arch_copy_from_user(); not tested.
 */
#ifdef CONFIG_X86_64
static unsigned long kpr_ua_ac;

static int kpr_ret_ac(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	kpr_ua_ac |= native_save_fl() & X86_EFLAGS_AC;
	return kpr_ret_note(ri, regs);
}
#endif

void kpr_uaccess(struct kunit *test)
{
#ifdef CONFIG_X86_64
	static const char str[] = "copied from a user page through rep_movs_alternative";
	struct kpr_probe *p = kpr_new(0);
	char buf[sizeof(str)];
	unsigned long user;

	if (!boot_cpu_has(X86_FEATURE_SMAP))
		kunit_skip(test, "no SMAP on this CPU: user access regions are not real");
	if (boot_cpu_has(X86_FEATURE_FSRM))
		kunit_skip(test, "copies do not call rep_movs_alternative on a CPU with FSRM");
	user = kpt_user_page(test, PROT_READ | PROT_WRITE);
	KUNIT_ASSERT_NE(test, user, 0UL);
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
#elif defined(CONFIG_ARM64)
	if (system_uses_ttbr0_pan())
		kunit_skip(test,
			   "arm64: not tested with CONFIG_ARM64_SW_TTBR0_PAN, whose TTBR0 window spans __arch_copy_from_user()");
	kunit_skip(test, "arm64: no user-access window spans a call (%s)",
		   system_uses_hw_pan() ?
		   "PAN: copies use LDTR/STTR, PAN is cleared around inline exclusives only" :
		   "no PAN in use: user memory is never shut");
#elif defined(CONFIG_X86_32)
	kunit_skip(test,
		   "i386: __copy_user_ll() copies inline between stac and clac, with no exported call inside to probe");
#else
	kunit_skip(test, "x86-only: SMAP user access regions (stac/clac, EFLAGS.AC)");
#endif
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
void kpr_task_exit(struct kunit *test)
{
	struct kpr_probe *p = kpr_new(0);
	struct task_struct *t;
	unsigned long end;

	p->rp.kp.addr = kpt_entry(kpt_kret_exit);
	p->rp.entry_handler = kpr_entry_count;
	p->rp.handler = kpr_ret_note;
	p->rp.maxactive = 1;
	KUNIT_ASSERT_EQ(test, kpr_register(test, &p->rp), 0);

	init_completion(&kpr_exit_done);
	t = kthread_create(kpr_exit_thread, NULL, "kpr_exit");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	get_task_struct(t);
	wake_up_process(t);
	if (!wait_for_completion_timeout(&kpr_exit_done,
					 msecs_to_jiffies(kpt_paced_ms(60000)))) {
		put_task_struct(t);
		KUNIT_FAIL_AND_ABORT(test, "the thread did not exit");
	}
	/* Released (unhashed) by now or soon, its task freed after RCU. */
	end = kpt_deadline(10000);
	while (pid_alive(t) && time_before(jiffies, end))
		msleep(20);
	KUNIT_EXPECT_FALSE(test, pid_alive(t));
	put_task_struct(t);
	msleep(20);
	rcu_barrier();

	KUNIT_EXPECT_EQ(test, atomic_read(&p->entries), 1);
	KUNIT_EXPECT_EQ(test, kpr_returns(p), 0);
#ifdef KRETPROBE_POOL_GROWS
	end = kpt_deadline(10000);
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
void kpr_recursion_maxactive_1(struct kunit *test)
{
	struct kpr_probe *p = kpr_new(0);
	unsigned long flags;
	int ret, calls;

	p->rp.kp.addr = kpt_entry(kpt_kret_recurse);
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
 * A return probe on kpt_gate_wait(), where the crowd sleeps, that checks
 * each call's data and return value (kpr_ret_check()).
 */
static struct kpr_probe *kpr_gate_probe(struct kunit *test)
{
	struct kpr_probe *p = kpr_new(0);

	p->rp.kp.addr = kpt_entry(kpt_gate_wait);
	p->rp.entry_handler = kpr_entry_save;
	p->rp.handler = kpr_ret_check;
	p->rp.data_size = sizeof(struct kpr_data);
	p->add = KPT_GATE_ADD;
	KUNIT_ASSERT_EQ(test, kpr_register(test, &p->rp), 0);
	return p;
}

#ifdef KRETPROBE_POOL_GROWS
/*
 * A crowd of callers arrives no faster than the pool's work item can
 * follow (a burst that outruns it may miss, as documented; see
 * kpr_recursion_maxactive_1): each next one starts once this one is
 * inside and, when the pool is past its growth threshold (more than half
 * out), once it has grown.  Returns how many 20-50 us waits the growth
 * took, or -ETIMEDOUT when the pool did not grow within a second.
 */
static int kpr_pool_follow(struct kpr_probe *p, int started)
{
	unsigned long end = kpt_deadline(1000);
	struct kretprobe_pool_info info;
	int waits = 0;

	while (kpt_gate_inside() < started && time_before(jiffies, end))
		usleep_range(20, 50);
	for (;;) {
		info = kpr_pool_info(p);
		if (info.out * 2 <= info.nr || info.nr >= info.limit)
			return waits;
		if (!time_before(jiffies, end))
			return -ETIMEDOUT;
		waits++;
		usleep_range(20, 50);
	}
}

/* A pool that does not grow within a second ends the pacing. */
static bool kpr_no_miss_stuck;
static int kpr_no_miss_waits;

static void kpr_no_miss_pace(int started, void *arg)
{
	int waits;

	if (kpr_no_miss_stuck)
		return;
	waits = kpr_pool_follow(arg, started);
	if (waits < 0)
		kpr_no_miss_stuck = true;
	else
		kpr_no_miss_waits += waits;
}
#endif

/*
 * 1000 kthreads sleep inside one return-probed function at once, with the
 * default maxactive: every return is caught, none missed, each caller
 * gets its own value back, and the pool shrinks back to its floor later.
 * Upstream misses all but maxactive of them: expected to fail there.
 */
void kpr_no_miss(struct kunit *test)
{
	struct kpr_probe *p;
	unsigned long t0 = jiffies;
	int n;

	p = kpr_gate_probe(test);

	kpt_gate_close();
#ifdef KRETPROBE_POOL_GROWS
	kpr_no_miss_stuck = false;
	kpr_no_miss_waits = 0;
	n = kpr_crowd_start_paced(KPR_CROWD, kpr_no_miss_pace, p);
	KUNIT_EXPECT_FALSE_MSG(test, kpr_no_miss_stuck,
			       "a caller not inside, or the pool not grown past its threshold, within a second");
	kunit_info(test, "paced: %d waits of 20-50 us for the pool to grow\n",
		   kpr_no_miss_waits);
#else
	n = kpr_crowd_start(KPR_CROWD);
#endif
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

	if (kpr_upstream && p->rp.nmissed)
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

/*
 * The same crowd in a burst: the threads are started first and held
 * back, then let go at once, so that calls come faster than the pool's
 * work item can grow it.  What the documentation promises for a burst:
 * the pool grows
 * past its floor, and a call that finds no instance is counted in
 * rp->nmissed, never lost and never given a wrong value.  So every call
 * is either an entry or a miss, every entry comes back exactly once, and
 * every caller gets its own value.  Upstream, where maxactive is a
 * ceiling, keeps the same books.
 */
void kpr_burst(struct kunit *test)
{
	struct kpr_probe *p;
	int n, entries;

	p = kpr_gate_probe(test);

	kpt_gate_close();
	n = kpr_crowd_start_held(KPR_CROWD);
	KUNIT_ASSERT_EQ_MSG(test, n, KPR_CROWD, "only %d threads started", n);
	KUNIT_ASSERT_TRUE_MSG(test, kpr_wait_count(kpr_crowd_held, n, 180),
			      "%d of %d callers held", kpr_crowd_held(), n);
	kpr_crowd_release();
	KUNIT_ASSERT_TRUE_MSG(test, kpr_wait_count(kpt_gate_inside, n, 180),
			      "%d of %d callers inside", kpt_gate_inside(), n);
	entries = atomic_read(&p->entries);
#ifdef KRETPROBE_POOL_GROWS
	{
		struct kretprobe_pool_info info = kpr_pool_info(p);
		int i;

		/* One instance out per caller caught, none for a miss. */
		KUNIT_EXPECT_EQ(test, info.out, entries);
		/* The growth asked for may still be on its way. */
		for (i = 0; i < 50 && info.nr <= info.floor; i++) {
			msleep(20);
			info = kpr_pool_info(p);
		}
		kunit_info(test, "burst: %d of %d caught, %d missed; pool nr %u, floor %u\n",
			   entries, n, p->rp.nmissed, info.nr, info.floor);
		KUNIT_EXPECT_GT_MSG(test, info.nr, info.floor,
				    "the pool did not grow past its floor");
	}
#endif
	KUNIT_EXPECT_EQ(test, entries + p->rp.nmissed, n);
	kpt_gate_open();
	KUNIT_EXPECT_TRUE_MSG(test, kpr_wait_count(kpr_crowd_returned, n, 180),
			      "%d of %d callers returned",
			      kpr_crowd_returned(), n);
	KUNIT_EXPECT_TRUE_MSG(test, kpr_crowd_end(120), "threads did not end");
	KUNIT_EXPECT_EQ(test, atomic_read(&kpr_crowd.wrong), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->entries), entries);
	KUNIT_EXPECT_EQ(test, kpr_returns(p), entries);
	KUNIT_EXPECT_EQ(test, entries + p->rp.nmissed, n);
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&p->bad), 0,
			    "why: %#lx (bits: ret, data, rp, retaddr)", p->why);
	KUNIT_EXPECT_EQ(test, p->rp.kp.nmissed, 0UL);
	kpr_unregister(test, &p->rp);
}

#ifdef KRETPROBE_POOL_GROWS
#define KPR_TRIM_OTHERS	40

static atomic_t kpr_trim_back;

/* The callers, static so that an aborted case can still release them. */
static struct task_struct *kpr_trim_t[KPR_TRIM_OTHERS + 1];
static int kpr_trim_started;

static int kpr_trim_thread(void *arg)
{
	int x = (long)arg;

	if (kpt_gate_wait(x) != x + KPT_GATE_ADD)
		atomic_inc(&kpr_crowd.wrong);
	atomic_inc(&kpr_trim_back);
	module_put_and_kthread_exit(0);
}

static void kpr_trim_start(struct kunit *test, int x, int cpu)
{
	struct task_struct *t = kthread_create(kpr_trim_thread, (void *)(long)x,
					       "kpr_trim/%d", x);

	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	__module_get(THIS_MODULE);
	kthread_bind(t, cpu);
	kpr_trim_t[kpr_trim_started++] = get_task_struct(t);
	wake_up_process(t);
}

/*
 * Opens the gate and reaps every caller started; a KUnit action, so that
 * a case that stops early leaves no thread asleep in the gate holding a
 * task reference.
 */
static void kpr_trim_release(void *unused)
{
	kpt_gate_open();
	while (kpr_trim_started)
		kthread_stop_put(kpr_trim_t[--kpr_trim_started]);
}

static int kpr_trim_back_count(void)
{
	return atomic_read(&kpr_trim_back);
}

#endif

/*
 * The pool shrinks back to its floor once the calls are over, whichever
 * way the last instance comes back.  KPR_TRIM_OTHERS callers, bound to
 * one CPU, and one more (the straggler), bound to the other, sleep in
 * kpt_gate_wait(): the pool grows in chunks (10, 10, 20, 40, ...), the
 * others fill the first three, the straggler, entering last, takes its
 * instance from the fourth.  The gate opens while this thread holds the
 * straggler's CPU with preemption off: the others return, and the trim
 * they ask for runs (a second later) with only the straggler's instance
 * out, so it frees every idle chunk but the straggler's.  Then the
 * straggler returns: its instance goes into its CPU's empty per-CPU cache,
 * and the pool must still get back to its floor.
 */
void kpr_pool_trim_last_cached(struct kunit *test)
{
#ifdef KRETPROBE_POOL_GROWS
	struct kpr_probe *p = kpr_new(0);
	struct kretprobe_pool_info info;
	unsigned int trimmed;
	int cpu[2], i, n = KPR_TRIM_OTHERS;
	unsigned long end;

	cpu[0] = cpumask_first(cpu_online_mask);
	cpu[1] = cpumask_next(cpu[0], cpu_online_mask);
	if (cpu[1] >= nr_cpu_ids)
		kunit_skip(test, "needs two online CPUs");

	p->rp.kp.addr = kpt_entry(kpt_gate_wait);
	p->rp.entry_handler = kpr_entry_count;
	p->rp.handler = kpr_ret_note;
	KUNIT_ASSERT_EQ(test, kpr_register(test, &p->rp), 0);
	atomic_set(&kpr_trim_back, 0);
	atomic_set(&kpr_crowd.wrong, 0);
	kpr_trim_started = 0;
	kpt_gate_close();
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, kpr_trim_release, NULL), 0);
	/*
	 * Paced as kpr_no_miss is: a burst may outrun the pool's growth and
	 * miss, and the layout below needs every caller to hold an instance.
	 */
	for (i = 0; i < n; i++) {
		kpr_trim_start(test, i, cpu[0]);
		KUNIT_ASSERT_GE_MSG(test, kpr_pool_follow(p, i + 1), 0,
				    "the pool did not grow for caller %d", i);
	}
	KUNIT_ASSERT_TRUE_MSG(test, kpr_wait_count(kpt_gate_inside, n, 60),
			      "%d of %d callers inside", kpt_gate_inside(), n);
	kpr_trim_start(test, n, cpu[1]);
	KUNIT_ASSERT_TRUE_MSG(test, kpr_wait_count(kpt_gate_inside, n + 1, 60),
			      "the straggler did not come in");
	/* The growth the straggler asked for, on its CPU, before we hold it. */
	KUNIT_ASSERT_GE_MSG(test, kpr_pool_follow(p, n + 1), 0,
			    "the pool did not grow for the straggler");
	KUNIT_ASSERT_EQ_MSG(test, p->rp.nmissed, 0,
			    "calls found no instance: the layout assumed is not there");
	KUNIT_ASSERT_EQ(test, atomic_read(&p->entries), n + 1);
	info = kpr_pool_info(p);
	kunit_info(test, "all inside: nr %u, out %u, floor %u\n", info.nr,
		   info.out, info.floor);

	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(cpu[1])), 0);
	preempt_disable();
	kpt_gate_open();
	end = kpt_deadline(20000);
	while (atomic_read(&kpr_trim_back) < n && time_before(jiffies, end))
		cpu_relax();
	/* The trim the last returns asked for. */
	mdelay(2 * jiffies_to_msecs(HZ) + 500);
	trimmed = kpr_pool_info(p).nr;
	preempt_enable();
	set_cpus_allowed_ptr(current, cpu_possible_mask);

	KUNIT_EXPECT_TRUE_MSG(test, kpr_wait_count(kpr_trim_back_count, n + 1, 60),
			      "%d of %d callers returned",
			      kpr_trim_back_count(), n + 1);
	kpr_trim_release(NULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&kpr_crowd.wrong), 0);
	KUNIT_EXPECT_EQ(test, kpr_returns(p), n + 1);
	for (i = 0; i < 50; i++) {
		info = kpr_pool_info(p);
		if (info.nr == info.floor)
			break;
		msleep(100);
	}
	kunit_info(test, "nr %u with the straggler out, %u after %d ms (floor %u)\n",
		   trimmed, info.nr, i * 100, info.floor);
	KUNIT_EXPECT_EQ(test, info.out, 0);
	KUNIT_EXPECT_EQ_MSG(test, info.nr, info.floor,
			    "the pool stays above its floor once the last instance back went to a per-CPU cache");
	kpr_unregister(test, &p->rp);
#else
	kunit_skip(test, "no growing pool (KRETPROBE_POOL_GROWS)");
#endif
}

#endif /* CONFIG_KRETPROBES */
