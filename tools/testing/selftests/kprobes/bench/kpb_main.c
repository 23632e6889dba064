// SPDX-License-Identifier: GPL-2.0
/*
 * kprobes_bench: the figures of `make bench` (harness/bench.sh).
 *
 * Loaded into our kernel and into upstream's, built from the same source
 * against each: only the public kprobes API is used.  bench.sh asks for
 * one figure at a time by writing its name to the "run" parameter (it
 * sets debug.kprobes-optimization between figures); each figure prints
 * one or more lines
 *
 *	kprobes_bench: BENCH <name> <value>
 *
 * or "BENCH-ERROR <name> <why>" when it could not be taken, or
 * "BENCH-NA <name> <why>" when the architecture has no such thing (see
 * kpb_not_here()).
 *
 * The guest runs under QEMU's -icount shift=0: the time stamp counter
 * counts executed instructions, so get_cycles() deltas are exact and the
 * same in every run (on arm64 to 16 instructions: see kpb_insns()).  A
 * hit figure is the cheapest of ROUNDS loops of HITS calls, with
 * interrupts off, divided by HITS (tenths kept); the un-probed loop is
 * measured the same way and subtracted on the host.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/kprobes.h>
#include <linux/kthread.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timex.h>
#ifdef CONFIG_ARM64
#include <asm/arch_timer.h>
#endif

#include "kpb.h"
#include "kpb_workload_funcs.h"

#define HITS	1000		/* calls per measured loop */
#define ROUNDS	5		/* loops per figure; the cheapest counts */

/*
 * An entry-probe target: its first instruction is an ftrace call (on
 * arm64, ftrace's mov x9, x30 that comes before the call).
 */
static noinline int kpb_c_target(int x)
{
	asm volatile("" : "+r" (x));
	return 2 * x + 3;
}

/*
 * A stepped target inside compiled code: the breakpoint goes on the nop
 * at kpb_c_nop, in the middle of a C function (figure 1b).
 */
extern const char kpb_c_nop[];

static noinline int kpb_c_nop_target(int x)
{
	asm volatile(".globl kpb_c_nop\n"
		     "kpb_c_nop:\n\t"
		     "nop" : "+r" (x));
	return 2 * x + 3;
}

/* ---- handlers: as little as a handler can do ---------------------- */

static DEFINE_PER_CPU(unsigned long, kpb_pre_hits);
static DEFINE_PER_CPU(unsigned long, kpb_post_hits);
static DEFINE_PER_CPU(unsigned long, kpb_ret_hits);

static int kpb_pre(struct kprobe *p, struct pt_regs *regs)
{
	this_cpu_inc(kpb_pre_hits);
	return 0;
}

static void kpb_post(struct kprobe *p, struct pt_regs *regs,
		     unsigned long flags)
{
	this_cpu_inc(kpb_post_hits);
}

static int kpb_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	this_cpu_inc(kpb_ret_hits);
	return 0;
}

static unsigned long kpb_count(unsigned long __percpu *hits)
{
	unsigned long sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu(*hits, cpu);
	return sum;
}

static void kpb_count_reset(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		per_cpu(kpb_pre_hits, cpu) = 0;
		per_cpu(kpb_post_hits, cpu) = 0;
		per_cpu(kpb_ret_hits, cpu) = 0;
	}
}

/* ---- measuring ------------------------------------------------------ */

static int kpb_sink;

/* Instructions of @n calls of @fn (a pause after each when @relax). */
static noinline u64 kpb_loop(kpb_fn_t fn, unsigned int n, bool relax)
{
	unsigned int i;
	int acc = 0;
	u64 t0, t1;

	t0 = get_cycles();
	for (i = 0; i < n; i++) {
		acc += fn(i);
		if (relax)
			cpu_relax();
	}
	t1 = get_cycles();
	WRITE_ONCE(kpb_sink, acc);
	return t1 - t0;
}

/* The cheapest of ROUNDS loops of HITS calls, interrupts off. */
static u64 kpb_measure(kpb_fn_t fn)
{
	u64 best = U64_MAX, t;
	unsigned long flags;
	int r;

	for (r = 0; r < ROUNDS; r++) {
		local_irq_save(flags);
		t = kpb_loop(fn, HITS, false);
		local_irq_restore(flags);
		best = min(best, t);
	}
	return best;
}

/*
 * Executed instructions in @cycles of get_cycles().  Under -icount
 * shift=0 the guest's clock advances one nanosecond per instruction.
 * x86's get_cycles() (x86-64's and i386's) reads the TSC, which QEMU
 * derives from that clock in nanoseconds; arm64's reads the generic
 * timer's virtual count, which runs at CNTFRQ_EL0, 62.5 MHz on QEMU's
 * virt board: one count per 16 instructions, so that a loop of HITS
 * calls is known to within 16 instructions there.
 */
static u64 kpb_insns(u64 cycles)
{
#ifdef CONFIG_ARM64
	return mul_u64_u32_div(cycles, NSEC_PER_SEC, arch_timer_get_cntfrq());
#else
	return cycles;
#endif
}

/* Print "BENCH name x.y" for @cycles of get_cycles() over @hits hits. */
static void kpb_report(const char *name, u64 cycles, unsigned int hits)
{
	u64 total = kpb_insns(cycles);
	u64 tenths = div_u64(total * 10 + hits / 2, hits);
	u32 tenth;
	u64 whole = div_u64_rem(tenths, 10, &tenth);

	/* (div_u64_rem(): i386 has no 64-bit division of its own.) */
	pr_info("BENCH %s %llu.%u\n", name, whole, tenth);
}

/* ---- several CPUs at once ------------------------------------------- */

/*
 * Under -icount the vCPUs take turns on one host thread and share one
 * instruction clock, and a pause hands over to the next vCPU: with a
 * pause after every call the CPUs alternate hit by hit.  The elapsed
 * instructions from a common start until every CPU has made its HITS
 * calls then count the work of all of them.
 */
struct kpb_smp {
	kpb_fn_t fn;
	unsigned int ncpus;
	atomic_t ready;
	atomic_t done;
	u64 cycles;
	struct completion finished;
};

static int kpb_smp_worker(void *arg)
{
	struct kpb_smp *run = arg;
	bool leader = smp_processor_id() == cpumask_first(cpu_online_mask);
	unsigned long flags;
	u64 t0 = 0;

	local_irq_save(flags);
	atomic_inc(&run->ready);
	while (atomic_read(&run->ready) < run->ncpus)
		cpu_relax();
	if (leader)
		t0 = get_cycles();
	kpb_loop(run->fn, HITS, true);
	atomic_inc(&run->done);
	if (leader) {
		while (atomic_read(&run->done) < run->ncpus)
			cpu_relax();
		run->cycles = get_cycles() - t0;
	}
	local_irq_restore(flags);
	complete(&run->finished);

	/* Stay until kthread_stop(): the module must outlive this code. */
	while (true) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (kthread_should_stop())
			break;
		schedule();
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

/* Instructions while the first @ncpus online CPUs make HITS calls each. */
static int kpb_smp_measure(kpb_fn_t fn, unsigned int ncpus, u64 *best)
{
	struct task_struct *tsk[2];
	struct kpb_smp run;
	unsigned int i, r, cpu;

	if (ncpus > ARRAY_SIZE(tsk) || num_online_cpus() < ncpus)
		return -ENODEV;
	*best = U64_MAX;
	for (r = 0; r < ROUNDS; r++) {
		memset(&run, 0, sizeof(run));
		run.fn = fn;
		run.ncpus = ncpus;
		init_completion(&run.finished);
		i = 0;
		for_each_online_cpu(cpu) {
			if (i == ncpus)
				break;
			tsk[i] = kthread_create_on_cpu(kpb_smp_worker, &run, cpu,
						       "kpb_smp/%u");
			if (IS_ERR(tsk[i])) {
				while (i--)
					kthread_stop(tsk[i]);
				return -ENOMEM;
			}
			i++;
		}
		for (i = 0; i < ncpus; i++)
			wake_up_process(tsk[i]);
		for (i = 0; i < ncpus; i++)
			wait_for_completion(&run.finished);
		for (i = 0; i < ncpus; i++)
			kthread_stop(tsk[i]);
		*best = min(*best, run.cycles);
	}
	return 0;
}

/* ---- the figures ---------------------------------------------------- */

static void kpb_error(const char *name, const char *why, int err)
{
	pr_warn("BENCH-ERROR %s %s (%d)\n", name, why, err);
}

/*
 * The first loop of HITS calls of @fn, interrupts off, right away: a
 * probe's "fresh" figures, taken the moment its registration returns,
 * before anything the kernel does with it later (a hand-off to ftrace,
 * jump optimization) can change how it is hit.
 */
static u64 kpb_measure_first(kpb_fn_t fn)
{
	unsigned long flags;
	u64 t;

	local_irq_save(flags);
	t = kpb_loop(fn, HITS, false);
	local_irq_restore(flags);
	return t;
}

/* Measure the hits of @kp, a registered probe on @fn (@fresh: the first loop). */
static int kpb_hits_as(const char *name, struct kprobe *kp, kpb_fn_t fn,
		       bool fresh)
{
	unsigned int rounds = fresh ? 1 : ROUNDS;
	u64 t;

	kpb_count_reset();
	t = fresh ? kpb_measure_first(fn) : kpb_measure(fn);
	if (kpb_count(&kpb_pre_hits) != rounds * HITS ||
	    kpb_count(&kpb_post_hits) != (kp->post_handler ? rounds * HITS : 0)) {
		kpb_error(name, "handlers missed hits", -EIO);
		return -EIO;
	}
	kpb_report(name, t, HITS);
	return 0;
}

static int kpb_hits(const char *name, struct kprobe *kp, kpb_fn_t fn)
{
	return kpb_hits_as(name, kp, fn, false);
}

/*
 * Probes on a function's entry (its ftrace call) are measured once ftrace
 * carries them: ours go live as a breakpoint on ftrace's nop and are
 * handed to ftrace a tenth of a second later.  Upstream's are ftrace's
 * at once; the wait costs it nothing.
 */
#define KPB_SETTLE_MS	1000

/*
 * One probe at @addr, which @fn runs, with a post_handler when @post,
 * measured right away (after KPB_SETTLE_MS on a function entry, unless
 * @fresh: then its first loop, right after registration).  bench.sh has
 * jump optimization off for these, but for the fresh breakpoint figure.
 */
static int kpb_fig_kprobe_at(const char *name, const void *addr, kpb_fn_t fn,
			     bool post, bool fresh)
{
	struct kprobe kp = {
		.addr = (kprobe_opcode_t *)addr,
		.pre_handler = kpb_pre,
		.post_handler = post ? kpb_post : NULL,
	};
	int ret;

	ret = register_kprobe(&kp);
	if (ret) {
		kpb_error(name, "register_kprobe failed", ret);
		return ret;
	}
	if (fn == kpb_c_target && !fresh)
		msleep(KPB_SETTLE_MS);
	ret = kpb_hits_as(name, &kp, fn, fresh);
	unregister_kprobe(&kp);
	return ret;
}

static int kpb_fig_kprobe(const char *name, kpb_fn_t fn, bool post)
{
	return kpb_fig_kprobe_at(name, fn, fn, post, false);
}

/*
 * The optimized figures take two steps: "optimized_arm" registers the
 * probe, bench.sh waits until debugfs kprobes/list shows it [OPTIMIZED]
 * (upstream marks the probe it wraps, not ours), and "optimized"
 * measures it and unregisters it.  "entry_opt_arm" and "entry_opt" do
 * the same on the C function's entry, where a kernel without kprobes on
 * ftrace (arm64) has a breakpoint that the optimizer may replace.
 */
static struct kprobe kpb_opt_kp;

static int kpb_fig_optimized(const char *name, bool arm, kpb_fn_t fn)
{
	int ret;

	if (arm) {
		if (kpb_opt_kp.addr)
			return -EBUSY;
		kpb_opt_kp.addr = (kprobe_opcode_t *)fn;
		kpb_opt_kp.pre_handler = kpb_pre;
		ret = register_kprobe(&kpb_opt_kp);
		if (ret) {
			kpb_error(name, "register_kprobe failed", ret);
			memset(&kpb_opt_kp, 0, sizeof(kpb_opt_kp));
		}
		return ret;
	}
	if (!kpb_opt_kp.addr)
		return -ENOENT;
	ret = kpb_hits(name, &kpb_opt_kp, fn);
	unregister_kprobe(&kpb_opt_kp);
	memset(&kpb_opt_kp, 0, sizeof(kpb_opt_kp));
	return ret;
}

/*
 * A kretprobe on kpb_c_target(), and a kprobe there as well if @both;
 * @fresh: the first loop right after registration, else the cheapest
 * of ROUNDS after KPB_SETTLE_MS.
 */
static int kpb_fig_kretprobe(const char *name, bool both, bool fresh)
{
	unsigned int rounds = fresh ? 1 : ROUNDS;
	struct kprobe kp = {
		.addr = (kprobe_opcode_t *)kpb_c_target,
		.pre_handler = kpb_pre,
	};
	struct kretprobe rp = {
		.kp.addr = (kprobe_opcode_t *)kpb_c_target,
		.handler = kpb_ret,
	};
	u64 t;
	int ret;

	ret = register_kretprobe(&rp);
	if (ret) {
		kpb_error(name, "register_kretprobe failed", ret);
		return ret;
	}
	if (both) {
		ret = register_kprobe(&kp);
		if (ret) {
			kpb_error(name, "register_kprobe failed", ret);
			unregister_kretprobe(&rp);
			return ret;
		}
	}
	if (!fresh)
		msleep(KPB_SETTLE_MS);
	kpb_count_reset();
	t = fresh ? kpb_measure_first(kpb_c_target) : kpb_measure(kpb_c_target);
	if (kpb_count(&kpb_ret_hits) != rounds * HITS || rp.nmissed ||
	    kpb_count(&kpb_pre_hits) != (both ? rounds * HITS : 0)) {
		kpb_error(name, "handlers missed hits", -EIO);
		ret = -EIO;
	} else {
		kpb_report(name, t, HITS);
	}
	if (both)
		unregister_kprobe(&kp);
	unregister_kretprobe(&rp);
	return ret;
}

static struct kprobe *kpb_many_alloc(struct kprobe ***ptrs)
{
	struct kprobe *kps;
	int i;

	kps = kcalloc(KPB_NMANY, sizeof(*kps), GFP_KERNEL);
	*ptrs = kcalloc(KPB_NMANY, sizeof(**ptrs), GFP_KERNEL);
	if (!kps || !*ptrs) {
		kfree(kps);
		kfree(*ptrs);
		return NULL;
	}
	for (i = 0; i < KPB_NMANY; i++) {
		kps[i].addr = (kprobe_opcode_t *)kpb_many[i];
		kps[i].pre_handler = kpb_pre;
		(*ptrs)[i] = &kps[i];
	}
	return kps;
}

/* Every one of the KPB_NMANY probes fires once. */
static bool kpb_many_fire(void)
{
	int i;

	kpb_count_reset();
	for (i = 0; i < KPB_NMANY; i++)
		kpb_many[i](i);
	return kpb_count(&kpb_pre_hits) == KPB_NMANY;
}

/* Figure 7: the breakpoint hit alone, then with KPB_NMANY other probes. */
static int kpb_fig_lookup(const char *name)
{
	struct kprobe kp = {
		.addr = (kprobe_opcode_t *)kpb_asm_target,
		.pre_handler = kpb_pre,
	};
	struct kprobe *kps, **ptrs;
	u64 alone, crowd;
	int ret;

	kps = kpb_many_alloc(&ptrs);
	if (!kps)
		return -ENOMEM;
	ret = register_kprobe(&kp);
	if (ret) {
		kpb_error(name, "register_kprobe failed", ret);
		goto out_free;
	}
	alone = kpb_measure(kpb_asm_target);
	ret = register_kprobes(ptrs, KPB_NMANY);
	if (ret) {
		kpb_error(name, "register_kprobes failed", ret);
		goto out;
	}
	crowd = kpb_measure(kpb_asm_target);
	if (!kpb_many_fire()) {
		kpb_error(name, "the probes did not fire as expected", -EIO);
		ret = -EIO;
	} else {
		pr_info("BENCH %s_probes %d\n", name, KPB_NMANY + 1);
		kpb_report("lookup_one", alone, HITS);
		kpb_report("lookup_many", crowd, HITS);
	}
	unregister_kprobes(ptrs, KPB_NMANY);
out:
	unregister_kprobe(&kp);
out_free:
	kfree(ptrs);
	kfree(kps);
	return ret;
}

/* Figure 8: the breakpoint hit on one CPU, then on two at once. */
static int kpb_fig_smp(const char *name)
{
	struct kprobe kp = {
		.addr = (kprobe_opcode_t *)kpb_asm_target,
		.pre_handler = kpb_pre,
	};
	u64 call1, call2, hit1, hit2;
	int ret;

	ret = kpb_smp_measure(kpb_asm_target, 1, &call1) ?:
	      kpb_smp_measure(kpb_asm_target, 2, &call2);
	if (ret) {
		kpb_error(name, "needs two online CPUs", ret);
		return ret;
	}
	ret = register_kprobe(&kp);
	if (ret) {
		kpb_error(name, "register_kprobe failed", ret);
		return ret;
	}
	kpb_count_reset();
	ret = kpb_smp_measure(kpb_asm_target, 1, &hit1) ?:
	      kpb_smp_measure(kpb_asm_target, 2, &hit2);
	if (ret) {
		kpb_error(name, "could not start the workers", ret);
	} else if (kpb_count(&kpb_pre_hits) != 3 * ROUNDS * HITS) {
		kpb_error(name, "the probe did not fire as expected", -EIO);
		ret = -EIO;
	} else {
		kpb_report("smp_call_one", call1, HITS);
		kpb_report("smp_call_two", call2, 2 * HITS);
		kpb_report("smp_hit_one", hit1, HITS);
		kpb_report("smp_hit_two", hit2, 2 * HITS);
	}
	unregister_kprobe(&kp);
	return ret;
}

/*
 * Instructions (ns of guest time) per millisecond of jiffies: both ends
 * of the count are just after a tick, where a timeout wakes us.
 */
static int kpb_fig_calibrate(const char *name)
{
	unsigned long j;
	u64 t0;

	schedule_timeout_uninterruptible(1);
	j = jiffies;
	t0 = get_cycles();
	schedule_timeout_uninterruptible(msecs_to_jiffies(200));
	j = jiffies - j;
	pr_info("BENCH cycles_per_ms %llu\n",
		div_u64(get_cycles() - t0, jiffies_to_msecs(j)));
	pr_info("BENCH hz %d\n", HZ);
	return 0;
}

/* Register @n probes in one call, or one at a time; none stays on failure. */
static int kpb_register_n(struct kprobe **ptrs, int n, bool batch)
{
	int i, ret = 0;

	if (batch)
		return register_kprobes(ptrs, n);
	for (i = 0; i < n && !ret; i++) {
		ret = register_kprobe(ptrs[i]);
		if (ret)
			while (i--)
				unregister_kprobe(ptrs[i]);
	}
	return ret;
}

static void kpb_unregister_n(struct kprobe **ptrs, int n, bool batch)
{
	int i;

	if (batch) {
		unregister_kprobes(ptrs, n);
		return;
	}
	for (i = 0; i < n; i++)
		unregister_kprobe(ptrs[i]);
}

/* Figures 9 and 10: KPB_NMANY probes, one call each, or one call for all. */
static int kpb_fig_register(const char *name, bool batch)
{
	struct kprobe *kps, **ptrs;
	u64 t0, t1, t2;
	char label[32];
	int ret;

	kps = kpb_many_alloc(&ptrs);
	if (!kps)
		return -ENOMEM;
	t0 = get_cycles();
	ret = kpb_register_n(ptrs, KPB_NMANY, batch);
	t1 = get_cycles();
	if (ret) {
		kpb_error(name, "registration failed", ret);
		goto out;
	}
	if (!kpb_many_fire()) {
		kpb_error(name, "the probes did not all fire", -EIO);
		ret = -EIO;
	}
	t2 = get_cycles();
	kpb_unregister_n(ptrs, KPB_NMANY, batch);
	t2 = get_cycles() - t2;
	if (!ret) {
		snprintf(label, sizeof(label), "%s_register_ns", name);
		pr_info("BENCH %s %llu\n", label, t1 - t0);
		snprintf(label, sizeof(label), "%s_unregister_ns", name);
		pr_info("BENCH %s %llu\n", label, t2);
	}
out:
	kfree(ptrs);
	kfree(kps);
	return ret;
}

/*
 * Figure 11: registration cost per probe as the count grows, on the
 * first @n functions of kprobes_bench_funcs.ko for @n = 100, 1000, ...
 * up to scale_max: register_kprobes() for all, and (with scale_single)
 * register_kprobe() one at a time.  The very first probe in that module
 * is timed on its own first: whatever a kprobes implementation does once
 * per module shows there.
 */
static int kpb_scale_max = KPB_NFUNCS;
module_param_named(scale_max, kpb_scale_max, int, 0600);
MODULE_PARM_DESC(scale_max, "figures 11 and 13: the largest probe count (100 to 10000)");
static bool kpb_scale_single = true;
module_param_named(scale_single, kpb_scale_single, bool, 0600);
MODULE_PARM_DESC(scale_single, "figures 11 and 13: also register one at a time");

/*
 * Register probes on the first @n of @funcs (one call, or one at a time),
 * check that they all fire, unregister them the same way, and print the
 * two times as BENCH <label>_register_ns and <label>_unregister_ns.
 */
static int kpb_time_n(const kpb_fn_t *funcs, struct kprobe *kps,
		      struct kprobe **ptrs, int n, bool batch,
		      const char *label)
{
	u64 t0, t1, t2;
	int i, ret = 0;

	/*
	 * Let background work from the run before (an optimizer pass, a
	 * deferred sync) finish first: at 100 probes the whole figure is
	 * about a millisecond, and one tick of it would skew it.
	 */
	msleep(1000);
	memset(kps, 0, n * sizeof(*kps));
	for (i = 0; i < n; i++) {
		kps[i].addr = (kprobe_opcode_t *)funcs[i];
		kps[i].pre_handler = kpb_pre;
		ptrs[i] = &kps[i];
	}
	t0 = get_cycles();
	ret = kpb_register_n(ptrs, n, batch);
	t1 = get_cycles();
	if (ret) {
		kpb_error(label, "registration failed", ret);
		return ret;
	}
	kpb_count_reset();
	for (i = 0; i < n; i++)
		funcs[i](i);
	if (kpb_count(&kpb_pre_hits) != n) {
		kpb_error(label, "the probes did not all fire", -EIO);
		ret = -EIO;
	}
	t2 = get_cycles();
	kpb_unregister_n(ptrs, n, batch);
	t2 = get_cycles() - t2;
	if (!ret) {
		pr_info("BENCH %s_register_ns %llu\n", label, t1 - t0);
		pr_info("BENCH %s_unregister_ns %llu\n", label, t2);
	}
	return ret;
}

/*
 * Figures 11 and 13 at scale: time probes on the first 100, 1000, ... of
 * @funcs (@nfuncs of them, up to scale_max), with register_kprobes() and
 * (with scale_single) one at a time, as "<fig>_{batch,single}_<n>".
 */
static int kpb_scale_series(const char *fig, const kpb_fn_t *funcs,
			    int nfuncs)
{
	int n, max = clamp(kpb_scale_max, 1, nfuncs), ret = 0;
	struct kprobe *kps, **ptrs;
	char label[32];
	bool batch;

	kps = kvcalloc(max, sizeof(*kps), GFP_KERNEL);
	ptrs = kvcalloc(max, sizeof(*ptrs), GFP_KERNEL);
	if (!kps || !ptrs)
		ret = -ENOMEM;
	for (n = 100; n <= max && !ret; n *= 10) {
		batch = true;
		do {
			snprintf(label, sizeof(label), "%s_%s_%d", fig,
				 batch ? "batch" : "single", n);
			ret = kpb_time_n(funcs, kps, ptrs, n, batch, label);
			batch = !batch;
		} while (!ret && !batch && kpb_scale_single);
	}
	kvfree(ptrs);
	kvfree(kps);
	return ret;
}

/*
 * Figure 12: KPB_NSHAPE probes one at a time on functions whose first
 * instruction is a nop, a call, a jmp, a 0f- or 66-prefixed one, or a
 * plain movl (kprobes_bench_funcs.ko): what checking the text costs
 * whatever the instruction's bytes are.  On arm64: a nop, a bti c, a b,
 * an adrp, an ldr from a literal, a paciasp, an stp, or a plain mov
 * (kpb_gen_arm64.S), the instructions that are simulated or stepped.
 */
static const char *const kpb_shape_names[KPB_NSHAPES] = {
#ifdef CONFIG_ARM64
	"nop", "bti", "b", "adrp", "ldr", "paciasp", "stp",
#else
	"nop", "call", "jmp", "0f", "66",
#endif
};

/* kpb_shapes[] and kpb_funcs[] (the plain ones) of kprobes_bench_funcs.ko. */
static int kpb_shapes_get(const char *name,
			  const kpb_fn_t *const (**shapes)[KPB_NSHAPES],
			  const kpb_fn_t (**plain)[KPB_NFUNCS])
{
	*shapes = symbol_get(kpb_shapes);
	*plain = symbol_get(kpb_funcs);
	if (*shapes && *plain)
		return 0;
	if (*shapes)
		symbol_put(kpb_shapes);
	if (*plain)
		symbol_put(kpb_funcs);
	kpb_error(name, "kprobes_bench_funcs.ko is not loaded", -ENOENT);
	return -ENOENT;
}

static void kpb_shapes_put(void)
{
	symbol_put(kpb_shapes);
	symbol_put(kpb_funcs);
}

static int kpb_fig_shapes(const char *name)
{
	const kpb_fn_t *const (*shapes)[KPB_NSHAPES];
	const kpb_fn_t (*plain)[KPB_NFUNCS];
	struct kprobe *kps, **ptrs;
	int i, ret;
	char label[32];

	ret = kpb_shapes_get(name, &shapes, &plain);
	if (ret)
		return ret;
	ret = -ENOMEM;
	kps = kvcalloc(KPB_NSHAPE, sizeof(*kps), GFP_KERNEL);
	ptrs = kvcalloc(KPB_NSHAPE, sizeof(*ptrs), GFP_KERNEL);
	if (!kps || !ptrs)
		goto out;
	ret = 0;
	for (i = 0; i <= KPB_NSHAPES && !ret; i++) {
		snprintf(label, sizeof(label), "shape_%s",
			 i < KPB_NSHAPES ? kpb_shape_names[i] : "plain");
		ret = kpb_time_n(i < KPB_NSHAPES ? (*shapes)[i] : *plain, kps,
				 ptrs, KPB_NSHAPE, false, label);
	}
out:
	kvfree(ptrs);
	kvfree(kps);
	kpb_shapes_put();
	return ret;
}

/*
 * Figure 12's hits (bench.sh takes them on arm64): the un-probed call of
 * the first function of each first instruction, and its hit, as
 * "shape_<kind>_call" and "shape_<kind>_hit".  What a hit costs when the
 * instruction is simulated in the trap, and when it is stepped.
 */
static int kpb_fig_shape_hits(const char *name)
{
	const kpb_fn_t *const (*shapes)[KPB_NSHAPES];
	const kpb_fn_t (*plain)[KPB_NFUNCS];
	const char *kind;
	char label[32];
	kpb_fn_t fn;
	int i, ret;

	ret = kpb_shapes_get(name, &shapes, &plain);
	if (ret)
		return ret;
	for (i = 0; i <= KPB_NSHAPES && !ret; i++) {
		kind = i < KPB_NSHAPES ? kpb_shape_names[i] : "plain";
		fn = i < KPB_NSHAPES ? (*shapes)[i][0] : (*plain)[0];
		snprintf(label, sizeof(label), "shape_%s_call", kind);
		kpb_report(label, kpb_measure(fn), HITS);
		snprintf(label, sizeof(label), "shape_%s_hit", kind);
		ret = kpb_fig_kprobe(label, fn, false);
	}
	kpb_shapes_put();
	return ret;
}

static int kpb_fig_scale(const char *name)
{
	const kpb_fn_t (*table)[KPB_NFUNCS] = symbol_get(kpb_funcs);
	struct kprobe kp = { .pre_handler = kpb_pre };
	int ret;
	u64 t;

	if (!table) {
		kpb_error(name, "kprobes_bench_funcs.ko is not loaded", -ENOENT);
		return -ENOENT;
	}
	kp.addr = (kprobe_opcode_t *)(*table)[KPB_NFUNCS - 1];
	t = get_cycles();
	ret = register_kprobe(&kp);
	t = get_cycles() - t;
	if (ret) {
		kpb_error(name, "register_kprobe failed", ret);
	} else {
		unregister_kprobe(&kp);
		pr_info("BENCH scale_first_register_ns %llu\n", t);
		ret = kpb_scale_series("scale", *table, KPB_NFUNCS);
	}
	symbol_put(kpb_funcs);
	return ret;
}

/*
 * kprobes_bench_funcs.ko's KPB_NCFUNCS functions, held until
 * symbol_put(kpb_cfuncs); NULL, reported under @name, when that module is
 * not loaded.
 */
static const kpb_fn_t *kpb_cfuncs_get(const char *name)
{
	const kpb_fn_t (*funcs)[KPB_NCFUNCS] = symbol_get(kpb_cfuncs);

	if (!funcs) {
		kpb_error(name, "kprobes_bench_funcs.ko is not loaded", -ENOENT);
		return NULL;
	}
	return *funcs;
}

/*
 * Figure 13: KPB_NENTRIES probes on the entries of C functions, where the
 * ftrace call is (kprobes_bench_funcs.ko): one at a time, then in one
 * register_kprobes() call.
 */
static int kpb_fig_entries(const char *name)
{
	const kpb_fn_t *funcs = kpb_cfuncs_get(name);
	struct kprobe *kps = NULL, **ptrs = NULL;
	int ret = -ENOMEM;

	if (!funcs)
		return -ENOENT;
	kps = kvcalloc(KPB_NENTRIES, sizeof(*kps), GFP_KERNEL);
	ptrs = kvcalloc(KPB_NENTRIES, sizeof(*ptrs), GFP_KERNEL);
	if (kps && ptrs) {
		ret = kpb_time_n(funcs, kps, ptrs, KPB_NENTRIES, false,
				 "entry_single");
		if (!ret)
			ret = kpb_time_n(funcs, kps, ptrs, KPB_NENTRIES, true,
					 "entry_batch");
	}
	kvfree(ptrs);
	kvfree(kps);
	symbol_put(kpb_cfuncs);
	return ret;
}

/*
 * Figure 13 at scale: as figure 11, on function entries (KPB_NCFUNCS C
 * functions), for 100, 1000, ... probes up to scale_max, with
 * register_kprobes() and (with scale_single) one at a time.
 */
static int kpb_fig_entries_scale(const char *name)
{
	const kpb_fn_t *funcs = kpb_cfuncs_get(name);
	int ret;

	if (!funcs)
		return -ENOENT;
	ret = kpb_scale_series("escale", funcs, KPB_NCFUNCS);
	symbol_put(kpb_cfuncs);
	return ret;
}

/*
 * For figure 14 (kpb_attach, in user space): call each of figure 13's
 * functions once, so that the probes a tool attached to them count a hit.
 */
static int kpb_cfuncs_call(const char *name)
{
	const kpb_fn_t *funcs = kpb_cfuncs_get(name);
	int i;

	if (!funcs)
		return -ENOENT;
	for (i = 0; i < KPB_NENTRIES; i++)
		funcs[i](i);
	symbol_put(kpb_cfuncs);
	return 0;
}

/*
 * Figure 15: what probes on the functions a workload calls cost it.
 * "workload_entry" registers a kprobe on the entry of each function of
 * kpb_workload_funcs.h, "workload_ret" a kretprobe on each, in one
 * register_kprobes() or register_kretprobes() call, and leaves them
 * registered while bench.sh runs kpb_workload; "workload_off"
 * unregisters them and checks that each was hit.  The probes count their
 * hits one by one (kpb_pre's per-CPU total would not show a probe that
 * never fired), and "workload_off" prints the sum as
 * "BENCH workload_<kind>_hits <n>", with the misses
 * ("workload_<kind>_missed", and "workload_ret_missed_returns").
 */
struct kpb_wl_kprobe {
	struct kprobe kp;
	atomic_long_t hits;
};

struct kpb_wl_kretprobe {
	struct kretprobe rp;
	atomic_long_t hits;	/* returns caught */
};

static struct kpb_wl_kprobe kpb_wl_kps[KPB_WL_NFUNCS];
static struct kpb_wl_kretprobe kpb_wl_rps[KPB_WL_NFUNCS];
static struct kprobe *kpb_wl_kp_ptrs[KPB_WL_NFUNCS];
static struct kretprobe *kpb_wl_rp_ptrs[KPB_WL_NFUNCS];
/* What is registered now: "entry", "ret", or NULL for nothing. */
static const char *kpb_wl_kind;

static int kpb_wl_pre(struct kprobe *p, struct pt_regs *regs)
{
	atomic_long_inc(&container_of(p, struct kpb_wl_kprobe, kp)->hits);
	return 0;
}

static int kpb_wl_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kretprobe *rp = get_kretprobe(ri);

	if (rp)
		atomic_long_inc(&container_of(rp, struct kpb_wl_kretprobe, rp)->hits);
	return 0;
}

/* Probe @i as new: registration writes into the structure it is given. */
static void kpb_wl_init(bool ret, int i)
{
	if (ret) {
		memset(&kpb_wl_rps[i], 0, sizeof(kpb_wl_rps[i]));
		kpb_wl_rps[i].rp.kp.symbol_name = kpb_wl_funcs[i];
		kpb_wl_rps[i].rp.handler = kpb_wl_ret;
		kpb_wl_rp_ptrs[i] = &kpb_wl_rps[i].rp;
	} else {
		memset(&kpb_wl_kps[i], 0, sizeof(kpb_wl_kps[i]));
		kpb_wl_kps[i].kp.symbol_name = kpb_wl_funcs[i];
		kpb_wl_kps[i].kp.pre_handler = kpb_wl_pre;
		kpb_wl_kp_ptrs[i] = &kpb_wl_kps[i].kp;
	}
}

/*
 * register_kprobes() and register_kretprobes() register none when one
 * fails, and do not say which: try each alone to name it.
 */
static void kpb_wl_blame(const char *name, bool ret, int err)
{
	int i, one;

	for (i = 0; i < KPB_WL_NFUNCS; i++) {
		kpb_wl_init(ret, i);
		one = ret ? register_kretprobe(kpb_wl_rp_ptrs[i]) :
			    register_kprobe(kpb_wl_kp_ptrs[i]);
		if (one) {
			pr_warn("BENCH-ERROR %s %s: register failed (%d)\n",
				name, kpb_wl_funcs[i], one);
			return;
		}
		if (ret)
			unregister_kretprobe(kpb_wl_rp_ptrs[i]);
		else
			unregister_kprobe(kpb_wl_kp_ptrs[i]);
	}
	kpb_error(name, "registration failed, though each registers alone",
		  err);
}

static int kpb_wl_arm(const char *name, bool ret)
{
	int i, err;

	if (kpb_wl_kind) {
		kpb_error(name, "the last workload's probes are registered",
			  -EBUSY);
		return -EBUSY;
	}
	for (i = 0; i < KPB_WL_NFUNCS; i++) {
		if (!kpb_wl_funcs[i]) {
			kpb_error(name, "kpb_workload_funcs.h is short", -EINVAL);
			return -EINVAL;
		}
		kpb_wl_init(ret, i);
	}
	err = ret ? register_kretprobes(kpb_wl_rp_ptrs, KPB_WL_NFUNCS) :
		    register_kprobes(kpb_wl_kp_ptrs, KPB_WL_NFUNCS);
	if (err) {
		kpb_wl_blame(name, ret, err);
		return err;
	}
	kpb_wl_kind = ret ? "ret" : "entry";
	return 0;
}

/* Unregister the probes of "workload_entry" or "workload_ret", if any. */
static bool kpb_wl_disarm(void)
{
	if (!kpb_wl_kind)
		return false;
	if (!strcmp(kpb_wl_kind, "ret"))
		unregister_kretprobes(kpb_wl_rp_ptrs, KPB_WL_NFUNCS);
	else
		unregister_kprobes(kpb_wl_kp_ptrs, KPB_WL_NFUNCS);
	return true;
}

static int kpb_wl_off(const char *name)
{
	bool ret = kpb_wl_kind && !strcmp(kpb_wl_kind, "ret");
	unsigned long missed = 0, missed_ret = 0;
	long hits, total = 0;
	char label[32];
	struct kprobe *kp;
	int i, err = 0;

	if (!kpb_wl_kind) {
		kpb_error(name, "no workload probes are registered", -ENOENT);
		return -ENOENT;
	}
	snprintf(label, sizeof(label), "workload_%s", kpb_wl_kind);
	kpb_wl_disarm();
	for (i = 0; i < KPB_WL_NFUNCS; i++) {
		hits = atomic_long_read(ret ? &kpb_wl_rps[i].hits :
					&kpb_wl_kps[i].hits);
		kp = ret ? &kpb_wl_rps[i].rp.kp : &kpb_wl_kps[i].kp;
		total += hits;
		if (!hits) {
			pr_warn("BENCH-ERROR %s %s never hit\n", label,
				kpb_wl_funcs[i]);
			err = -EIO;
		}
		/*
		 * Misses are the tree's own behaviour, not the figure's
		 * failure: a hit while this CPU runs a probe's handler (an
		 * interrupt taking a lock, say) only counts, and a return
		 * probe out of instances misses the return.  Both trees'
		 * sums are shown beside the figure: a miss costs less than
		 * a hit.
		 */
		missed += kp->nmissed;
		if (ret)
			missed_ret += kpb_wl_rps[i].rp.nmissed;
	}
	pr_info("BENCH %s_hits %ld\n", label, total);
	pr_info("BENCH %s_missed %lu\n", label, missed);
	if (ret)
		pr_info("BENCH %s_missed_returns %lu\n", label, missed_ret);
	kpb_wl_kind = NULL;
	return err;
}

static int kpb_fig_call(const char *name, kpb_fn_t fn)
{
	kpb_report(name, kpb_measure(fn), HITS);
	return 0;
}

/*
 * Why figure @name does not exist in this kernel, in either tree, or
 * NULL.  arm64 has no jump optimization (no CONFIG_OPTPROBES, and no
 * debug.kprobes-optimization to turn off), no boosting (a stepped
 * instruction comes back to kprobes after its copy) and no
 * KPROBES_ON_FTRACE (a probe on a function's entry is a breakpoint on
 * ftrace's mov x9, x30: figure "entry").
 */
static const char *kpb_not_here(const char *name)
{
	if (!IS_ENABLED(CONFIG_OPTPROBES) &&
	    (!strcmp(name, "optimized_arm") || !strcmp(name, "optimized") ||
	     !strcmp(name, "single_noopt") || !strcmp(name, "batch_noopt")))
		return "no jump optimization (CONFIG_OPTPROBES)";
	if (!IS_ENABLED(CONFIG_X86) && !strcmp(name, "boosted"))
		return "no boosting: a stepped instruction traps again after its copy";
	if (!IS_ENABLED(CONFIG_KPROBES_ON_FTRACE) &&
	    (!strcmp(name, "ftrace") || !strcmp(name, "ftrace_fresh") ||
	     !strcmp(name, "ftrace_traced")))
		return "no KPROBES_ON_FTRACE: an entry probe is a breakpoint (entry)";
	if ((!IS_ENABLED(CONFIG_OPTPROBES) || IS_ENABLED(CONFIG_KPROBES_ON_FTRACE)) &&
	    (!strcmp(name, "entry_opt_arm") || !strcmp(name, "entry_opt")))
		return IS_ENABLED(CONFIG_OPTPROBES) ?
		       "an entry probe is carried by ftrace (figure 4)" :
		       "no jump optimization (CONFIG_OPTPROBES)";
	return NULL;
}

static int kpb_run(const char *name)
{
	const char *na = kpb_not_here(name);

	if (na) {
		pr_info("BENCH-NA %s %s\n", name, na);
		return 0;
	}
	if (!strcmp(name, "calibrate"))
		return kpb_fig_calibrate(name);
	if (!strcmp(name, "call_asm"))
		return kpb_fig_call(name, kpb_asm_target);
	if (!strcmp(name, "call_c"))
		return kpb_fig_call(name, kpb_c_target);
	if (!strcmp(name, "call_c_nop"))
		return kpb_fig_call(name, kpb_c_nop_target);
	/* taken while bench.sh has the function tracer on kpb_c_target */
	if (!strcmp(name, "call_c_traced"))
		return kpb_fig_call(name, kpb_c_target);
	if (!strcmp(name, "post_c"))
		return kpb_fig_kprobe_at(name, kpb_c_nop, kpb_c_nop_target,
					 true, false);
	/* taken with debug.kprobes-optimization at 1 */
	if (!strcmp(name, "bp_fresh"))
		return kpb_fig_kprobe_at(name, kpb_asm_target, kpb_asm_target,
					 false, true);
	if (!strcmp(name, "ftrace_fresh") || !strcmp(name, "entry_fresh"))
		return kpb_fig_kprobe_at(name, kpb_c_target, kpb_c_target,
					 false, true);
	if (!strcmp(name, "kretprobe_fresh"))
		return kpb_fig_kretprobe(name, false, true);
	if (!strcmp(name, "post"))
		return kpb_fig_kprobe(name, kpb_asm_target, true);
	if (!strcmp(name, "boosted"))
		return kpb_fig_kprobe(name, kpb_asm_target, false);
	if (!strcmp(name, "optimized_arm"))
		return kpb_fig_optimized(name, true, kpb_asm_target);
	if (!strcmp(name, "optimized"))
		return kpb_fig_optimized(name, false, kpb_asm_target);
	if (!strcmp(name, "entry_opt_arm"))
		return kpb_fig_optimized(name, true, kpb_c_target);
	if (!strcmp(name, "entry_opt"))
		return kpb_fig_optimized(name, false, kpb_c_target);
	/*
	 * The same probe; "entry" where ftrace does not carry it; _traced
	 * with the function tracer on the function too (call_c_traced).
	 */
	if (!strcmp(name, "ftrace") || !strcmp(name, "entry") ||
	    !strcmp(name, "ftrace_traced") || !strcmp(name, "entry_traced"))
		return kpb_fig_kprobe(name, kpb_c_target, false);
	if (!strcmp(name, "kretprobe"))
		return kpb_fig_kretprobe(name, false, false);
	if (!strcmp(name, "kprobe_kretprobe"))
		return kpb_fig_kretprobe(name, true, false);
	if (!strcmp(name, "lookup"))
		return kpb_fig_lookup(name);
	if (!strcmp(name, "smp"))
		return kpb_fig_smp(name);
	/* _noopt: the same, taken with debug.kprobes-optimization at 0 */
	if (!strcmp(name, "single") || !strcmp(name, "single_noopt"))
		return kpb_fig_register(name, false);
	if (!strcmp(name, "batch") || !strcmp(name, "batch_noopt"))
		return kpb_fig_register(name, true);
	if (!strcmp(name, "scale"))
		return kpb_fig_scale(name);
	if (!strcmp(name, "shapes"))
		return kpb_fig_shapes(name);
	if (!strcmp(name, "shape_hits"))
		return kpb_fig_shape_hits(name);
	if (!strcmp(name, "entries"))
		return kpb_fig_entries(name);
	if (!strcmp(name, "entries_scale"))
		return kpb_fig_entries_scale(name);
	if (!strcmp(name, "cfuncs_call"))
		return kpb_cfuncs_call(name);
	/* figure 15: armed while bench.sh runs kpb_workload */
	if (!strcmp(name, "workload_entry"))
		return kpb_wl_arm(name, false);
	if (!strcmp(name, "workload_ret"))
		return kpb_wl_arm(name, true);
	if (!strcmp(name, "workload_off"))
		return kpb_wl_off(name);
	return -EINVAL;
}

static DEFINE_MUTEX(kpb_mutex);

static int kpb_run_set(const char *val, const struct kernel_param *kp)
{
	char name[32];
	int ret;

	strscpy(name, val, sizeof(name));
	strim(name);
	mutex_lock(&kpb_mutex);
	ret = kpb_run(name);
	mutex_unlock(&kpb_mutex);
	return ret;
}

static const struct kernel_param_ops kpb_run_ops = {
	.set = kpb_run_set,
};
module_param_cb(run, &kpb_run_ops, NULL, 0200);
MODULE_PARM_DESC(run, "figure to take: calibrate, call_asm, call_c, call_c_nop, call_c_traced, post, post_c, boosted, bp_fresh, ftrace_fresh, entry_fresh, kretprobe_fresh, optimized_arm, optimized, entry_opt_arm, entry_opt, ftrace, entry, ftrace_traced, entry_traced, kretprobe, kprobe_kretprobe, lookup, smp, single, batch, single_noopt, batch_noopt, scale, shapes, shape_hits, entries, entries_scale, cfuncs_call, workload_entry, workload_ret, workload_off");

static int __init kpb_init(void)
{
	return 0;
}
module_init(kpb_init);

/*
 * A probe armed by "optimized_arm" and never measured, and the probes of
 * "workload_entry" or "workload_ret" without their "workload_off".
 */
static void __exit kpb_exit(void)
{
	if (kpb_opt_kp.addr)
		unregister_kprobe(&kpb_opt_kp);
	kpb_wl_disarm();
}
module_exit(kpb_exit);

MODULE_DESCRIPTION("kprobes hit and registration benchmark for make bench");
MODULE_LICENSE("GPL");
