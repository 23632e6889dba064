// SPDX-License-Identifier: GPL-2.0
/*
 * kprobes_stress cases for the lifetime of out-of-line text: the copy of
 * the probed instruction that a boosted breakpoint hit runs (the probe's
 * slot), the detour of an optimized probe, and the original instructions
 * that an optimized probe's jump replaces.  A CPU may be inside any of
 * them with interrupts on and preemption possible, so the core may free a
 * slot or a detour, or write a jump, only once it has proved that no CPU
 * or task can still be there, whatever the configuration.
 *
 * The target is kps_asm_fill() (kps_asm.S): one rep stosb over a buffer
 * large enough that a call takes about KPS_OOL_CALL_MS (less on i386,
 * where KPS_OOL_MAX_LEN is smaller), interrupts taken between its
 * iterations (the buffer maps the same few pages over and over, so it
 * costs little memory however large).  A kthread on the other CPU calls
 * it in a loop and checks every result; it spends nearly all its time
 * inside the rep stosb, i.e. inside whatever copy of it the probe sends
 * it to.  This CPU waits for a hit, which means the other CPU has just
 * entered the copy, and then takes the probe away.  If the core frees the
 * copy while the other CPU is still in it, decoy probes registered right
 * after reuse it: the other CPU then runs their instructions and returns
 * early with a wrong result, or crashes.
 *
 * kps_ool_boosted: the probe on the rep stosb, a breakpoint whose hits
 *   run the boosted copy in its slot (optimization off).
 * kps_ool_detour: the same probe optimized: hits run the copy of the rep
 *   stosb in the detour.
 * kps_ool_optimizing: the probe on the instruction before the rep stosb,
 *   registered while the other CPU runs the function: its jump replaces
 *   the rep stosb too, so it may only be written once no CPU is inside
 *   the original rep stosb any more.
 *
 * Slots and detours are allocated from pages, each time the lowest free
 * one of the newest page with room: the first decoy gets the slot the
 * probe had, once it is free.  Anchor probes, registered right after the
 * probe, keep its page alive after it is gone, so that its freed slot can
 * only be reused, not unmapped (which the other CPU might not notice).
 *
 * These need the other CPU running while text changes under it, which
 * multi-threaded TCG does not keep coherent: they only run with
 * cross_cpu=1 (see kps_main.c).
 */
#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/kprobes.h>
#include <linux/kthread.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include "kprobes_stress.h"
#include "kprobes_target.h"

/* Guest time one call of kps_asm_fill() should take; its largest buffer. */
#define KPS_OOL_CALL_MS		800
/*
 * vmap() maps no more pages than the machine has, and i386's vmalloc area
 * is 128 MiB in all (modules included): there a call is shorter.
 */
#define KPS_OOL_MAX_LEN		(IS_ENABLED(CONFIG_64BIT) ? 512UL << 20 : \
							    32UL << 20)
/* Pages the buffer maps over and over; bytes per calibration call. */
#define KPS_OOL_PAGES		16
#define KPS_OOL_CALIB_LEN	(8UL << 20)
/* Probes that keep the page alive, and those that reuse its slots. */
#define KPS_OOL_ANCHORS		8
#define KPS_OOL_DECOYS		16
/* How long to wait for a hit, an optimization, calls to complete. */
#define KPS_OOL_WAIT_MS		20000
/* After the probe is gone: let the core free what it frees right away. */
#define KPS_OOL_SETTLE_MS	100

struct kps_ool {
	struct kunit *test;
	struct task_struct *worker;
	struct page *pages[KPS_OOL_PAGES];
	u8 *buf;
	unsigned long len;
	atomic_long_t calls;
	atomic_t bad;
	unsigned long bad_ret;
	u8 bad_last;
	struct kprobe probe;
	bool probe_live;
	atomic_t hits;
	struct kprobe anchors[KPS_OOL_ANCHORS];
	struct kprobe decoys[KPS_OOL_DECOYS];
	struct kprobe *list[KPS_OOL_DECOYS];
	bool anchors_live;
	int old_opt;
	bool bound;
};

static struct kps_ool kps_ool;

static int kps_ool_pre(struct kprobe *p, struct pt_regs *regs)
{
	atomic_inc(&kps_ool.hits);
	return 0;
}

static int kps_ool_worker(void *data)
{
	struct kps_ool *o = data;
	unsigned long ret;

	while (!kthread_should_stop()) {
		WRITE_ONCE(o->buf[o->len - 1], 0);
		ret = kps_asm_fill(o->buf, o->len);
		if ((ret || READ_ONCE(o->buf[o->len - 1]) != KPS_FILL_BYTE) &&
		    atomic_inc_return(&o->bad) == 1) {
			o->bad_ret = ret;
			o->bad_last = READ_ONCE(o->buf[o->len - 1]);
		}
		atomic_long_inc(&o->calls);
		/*
		 * Between calls no copy is running: say so to RCU tasks, which
		 * a preemptible kernel's waits rely on (cond_resched() alone
		 * does nothing there), and let this CPU switch tasks, which a
		 * kernel that does not preempt waits for.
		 */
		cond_resched_tasks_rcu_qs();
	}
	return 0;
}

/* Register @n probes on the entries of kpt_many[first...]: all or none. */
static int kps_ool_many(struct kps_ool *o, struct kprobe *kps, int first,
			int n)
{
	int i;

	for (i = 0; i < n; i++) {
		memset(&kps[i], 0, sizeof(kps[i]));
		kps[i].addr = (kprobe_opcode_t *)kpt_many[first + i];
		kps[i].pre_handler = kps_ool_pre;
		o->list[i] = &kps[i];
	}
	return register_kprobes(o->list, n);
}

static void kps_ool_unmany(struct kps_ool *o, struct kprobe *kps, int n)
{
	int i;

	for (i = 0; i < n; i++)
		o->list[i] = &kps[i];
	unregister_kprobes(o->list, n);
}

static void kps_ool_cleanup(void *data)
{
	struct kps_ool *o = data;
	int i;

	if (o->worker)
		kthread_stop_put(o->worker);
	o->worker = NULL;
	if (o->probe_live)
		unregister_kprobe(&o->probe);
	o->probe_live = false;
	if (o->anchors_live)
		kps_ool_unmany(o, o->anchors, KPS_OOL_ANCHORS);
	o->anchors_live = false;
	if (o->old_opt >= 0)
		kpt_optimization_set(o->old_opt);
	if (o->bound)
		set_cpus_allowed_ptr(current, cpu_possible_mask);
	if (o->buf)
		vunmap(o->buf);
	o->buf = NULL;
	for (i = 0; i < KPS_OOL_PAGES; i++) {
		if (o->pages[i])
			__free_page(o->pages[i]);
	}
}

/* KPS_OOL_MAX_LEN bytes that map KPS_OOL_PAGES pages over and over. */
static u8 *kps_ool_buffer(struct kps_ool *o)
{
	unsigned int n = KPS_OOL_MAX_LEN / PAGE_SIZE, i;
	struct page **map;
	u8 *buf;

	for (i = 0; i < KPS_OOL_PAGES; i++) {
		o->pages[i] = alloc_page(GFP_KERNEL);
		if (!o->pages[i])
			return NULL;
	}
	map = kvmalloc_array(n, sizeof(*map), GFP_KERNEL);
	if (!map)
		return NULL;
	for (i = 0; i < n; i++)
		map[i] = o->pages[i % KPS_OOL_PAGES];
	buf = vmap(map, n, VM_MAP, PAGE_KERNEL);
	kvfree(map);
	return buf;
}

/* Bytes kps_asm_fill() stores in KPS_OOL_CALL_MS here (jiffies may be the clock). */
static unsigned long kps_ool_calibrate(struct kps_ool *o)
{
	unsigned long start = jiffies, bytes = 0, t;

	while ((t = jiffies - start) < max(HZ / 5, 2)) {
		kps_asm_fill(o->buf, KPS_OOL_CALIB_LEN);
		bytes += KPS_OOL_CALIB_LEN;
	}
	bytes = div64_u64((u64)bytes * KPS_OOL_CALL_MS, jiffies_to_msecs(t));
	return clamp(bytes, KPS_OOL_CALIB_LEN, KPS_OOL_MAX_LEN);
}

/*
 * Bind this thread to one CPU, size the buffer so that a call takes about
 * KPS_OOL_CALL_MS, set the optimization sysctl to @opt.
 */
static struct kps_ool *kps_ool_setup(struct kunit *test, int opt)
{
	struct kps_ool *o = &kps_ool;
	unsigned int cpu = raw_smp_processor_id();
	int ret;

	if (!kps_cross_cpu)
		kunit_skip(test,
			   "cross_cpu=0: the other CPU must run the text while it changes (not under multi-threaded TCG)");
	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two online CPUs");
	memset(o, 0, sizeof(*o));
	o->test = test;
	o->old_opt = -1;
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, kps_ool_cleanup, o), 0);

	ret = kpt_optimization_get();
	if (ret == -ENOENT && opt)
		kunit_skip(test, "no jump optimization in this kernel");
	if (ret >= 0) {
		o->old_opt = ret;
		KUNIT_ASSERT_EQ(test, kpt_optimization_set(opt), 0);
	}

	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(cpu)), 0);
	o->bound = true;

	o->buf = kps_ool_buffer(o);
	KUNIT_ASSERT_NOT_NULL(test, o->buf);
	o->len = kps_ool_calibrate(o);
	kunit_info(test, "calls of %lu MiB, up to %d ms each\n", o->len >> 20,
		   KPS_OOL_CALL_MS);
	return o;
}

static void kps_ool_start_worker(struct kps_ool *o)
{
	unsigned int cpu = cpumask_any_but(cpu_online_mask,
					   raw_smp_processor_id());
	struct task_struct *t;

	t = kthread_create(kps_ool_worker, o, "kps_ool/%u", cpu);
	KUNIT_ASSERT_FALSE(o->test, IS_ERR(t));
	kthread_bind(t, cpu);
	/* Held until stopped, even if it dies (it would oops, not return). */
	get_task_struct(t);
	o->worker = t;
	wake_up_process(t);
}

static bool kps_ool_until(bool (*done)(struct kps_ool *o, long arg),
			  struct kps_ool *o, long arg)
{
	unsigned long end = kpt_deadline(KPS_OOL_WAIT_MS);

	while (!done(o, arg)) {
		if (time_after(jiffies, end))
			return false;
		usleep_range(500, 1000);
	}
	return true;
}

static bool kps_ool_hit_since(struct kps_ool *o, long hits)
{
	return atomic_read(&o->hits) != hits;
}

static bool kps_ool_calls_since(struct kps_ool *o, long calls)
{
	return atomic_long_read(&o->calls) >= calls;
}

/* Wait until the other CPU has just entered the probed instruction. */
static void kps_ool_wait_hit(struct kps_ool *o)
{
	KUNIT_ASSERT_TRUE_MSG(o->test,
			      kps_ool_until(kps_ool_hit_since, o,
					    atomic_read(&o->hits)),
			      "no hit within %u ms", kpt_paced_ms(KPS_OOL_WAIT_MS));
}

/* Let the worker complete @n more calls, stop it, check its results. */
static void kps_ool_finish(struct kps_ool *o, long n)
{
	struct kunit *test = o->test;
	long want = atomic_long_read(&o->calls) + n;

	KUNIT_EXPECT_TRUE_MSG(test, kps_ool_until(kps_ool_calls_since, o, want),
			      "the other CPU stalled (%ld calls, want %ld)",
			      atomic_long_read(&o->calls), want);
	kthread_stop_put(o->worker);
	o->worker = NULL;
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&o->bad), 0,
			    "%d of %ld calls went wrong, the first returned %lu with last byte %#x: the other CPU ran code that replaced its copy",
			    atomic_read(&o->bad), atomic_long_read(&o->calls),
			    o->bad_ret, o->bad_last);
}

/* An instruction of kps_asm_fill(). */
static kprobe_opcode_t *kps_ool_at(u32 off)
{
	return (kprobe_opcode_t *)kps_asm_fill + off;
}

/* The probe, then the anchors on the same page of slots or detours. */
static void kps_ool_register(struct kps_ool *o, kprobe_opcode_t *where)
{
	struct kunit *test = o->test;

	o->probe.addr = where;
	o->probe.pre_handler = kps_ool_pre;
	KUNIT_ASSERT_EQ(test, register_kprobe(&o->probe), 0);
	o->probe_live = true;
	KUNIT_ASSERT_EQ(test, kps_ool_many(o, o->anchors, 0, KPS_OOL_ANCHORS), 0);
	o->anchors_live = true;
}

/*
 * Take the probe away while the other CPU is inside its copy, then have
 * decoys take every free slot (and, with @optimized, detour) around.
 */
static void kps_ool_remove_under(struct kps_ool *o, bool optimized)
{
	struct kunit *test = o->test;
	long calls;

	kps_ool_wait_hit(o);
	calls = atomic_long_read(&o->calls);
	unregister_kprobe(&o->probe);
	o->probe_live = false;
	msleep(KPS_OOL_SETTLE_MS);
	KUNIT_ASSERT_EQ(test, kps_ool_many(o, o->decoys, KPS_OOL_ANCHORS,
					   KPS_OOL_DECOYS), 0);
	if (optimized && !kpt_optimizer_wait())
		msleep(KPS_OOL_SETTLE_MS * 5);
	kunit_info(test, "decoys in place %ld call(s) after the probe went\n",
		   atomic_long_read(&o->calls) - calls);
	kps_ool_unmany(o, o->decoys, KPS_OOL_DECOYS);
}

/* The probe on the rep stosb, @optimized or not, goes under the other CPU. */
static void kps_ool_copy_goes(struct kunit *test, bool optimized)
{
	struct kps_ool *o = kps_ool_setup(test, optimized);
	kprobe_opcode_t *at = kps_ool_at(kps_asm_fill_rep_off);
	int st;

	kps_ool_register(o, at);
	if (optimized) {
		st = kpt_wait_probe_state((unsigned long)at, KPT_PS_OPTIMIZED,
					  KPT_PS_OPTIMIZED, KPS_OOL_WAIT_MS);
		KUNIT_ASSERT_TRUE_MSG(test, st >= 0 && (st & KPT_PS_OPTIMIZED),
				      "the probe on the rep stosb is not optimized (%d)",
				      st);
	}
	kps_ool_start_worker(o);
	kps_ool_remove_under(o, optimized);
	kps_ool_finish(o, 2);
}

void kps_ool_boosted(struct kunit *test)
{
	kps_ool_copy_goes(test, false);
}

void kps_ool_detour(struct kunit *test)
{
	kps_ool_copy_goes(test, true);
}

void kps_ool_optimizing(struct kunit *test)
{
	struct kps_ool *o;
	unsigned long addr = (unsigned long)kps_ool_at(kps_asm_fill_al_off);
	long calls;
	int st, hits;

	if (kps_upstream)
		kunit_skip(test,
			   "upstream 6.12 oopses here: the other CPU resumes inside the new jump");
	o = kps_ool_setup(test, 1);

	kps_ool_start_worker(o);
	/* The other CPU is inside the original rep stosb from now on. */
	KUNIT_ASSERT_TRUE(test, kps_ool_until(kps_ool_calls_since, o, 1));
	kps_ool_register(o, kps_ool_at(kps_asm_fill_al_off));
	st = kpt_wait_probe_state(addr, KPT_PS_OPTIMIZED, KPT_PS_OPTIMIZED,
				  KPS_OOL_WAIT_MS);
	KUNIT_EXPECT_TRUE_MSG(test, st >= 0 && (st & KPT_PS_OPTIMIZED),
			      "the probe before the rep stosb is not optimized (%d)",
			      st);
	/* Through the detour now: every completed call was a hit. */
	calls = atomic_long_read(&o->calls);
	hits = atomic_read(&o->hits);
	kps_ool_finish(o, 3);
	KUNIT_EXPECT_GE(test, (long)(atomic_read(&o->hits) - hits),
			atomic_long_read(&o->calls) - calls - 1);
}
