// SPDX-License-Identifier: GPL-2.0
/*
 * kprobes_kretprobe.ko, the cases on bad input (kpr_err_* and the
 * defaults) and on the context return probes' handlers run in
 * (kpr_context_*).  What they check is described at the top of
 * kpr_main.c.
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
#ifdef CONFIG_X86
#include <asm/text-patching.h>
#endif
#include "kprobes_target.h"
#include "kpr.h"

#ifdef CONFIG_KRETPROBES

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

	p->rp.kp.addr = kpt_entry(fn);
	p->rp.handler = kpr_ret_note;
	p->rp.entry_handler = kpr_entry_count;
	return p;
}

void kpr_err_data_size(struct kunit *test)
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

void kpr_err_maxactive(struct kunit *test)
{
	struct kpr_probe *p;

	if (!kpr_upstream) {
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
	if (kpr_upstream) {
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
#ifdef KPR_HAVE_ASM_TARGETS
static int kpr_kp_count(struct kprobe *kp, struct pt_regs *regs)
{
	atomic_inc(&kpr_pre_hits);
	return 0;
}
#endif

#ifdef CONFIG_ARM64
#define KPR_PACIASP	0xd503233fU
#define KPR_NOP		0xd503201fU
#define KPR_BTI_C	0xd503245fU
#define KPR_MOV_X9_LR	0xaa1e03e9U
#define KPR_SCAN	8

static bool kpr_is_bl(u32 insn)
{
	return (insn & 0xfc000000U) == 0x94000000U;
}

/*
 * The index of the first instruction after ftrace's patchable entry at
 * the top of @insn (an optional BTI C, then a NOP or MOV X9, X30, then a
 * NOP or the BL to ftrace), or 0 when the function has none.  Read from
 * the instructions, not asked of ftrace.
 */
static int kpr_after_ftrace_entry(const __le32 *insn)
{
	int i = le32_to_cpu(insn[0]) == KPR_BTI_C;
	u32 first = le32_to_cpu(insn[i]), second = le32_to_cpu(insn[i + 1]);

	if ((first == KPR_NOP || first == KPR_MOV_X9_LR) &&
	    (second == KPR_NOP || kpr_is_bl(second)))
		return i + 2;
	return 0;
}

/*
 * On arm64 a return probe needs the link register as the caller left
 * it: before the function signs it (paciasp) or saves it.  ftrace's
 * patchable entry puts it back before the next instruction, so that one
 * still counts.  kpt_kret_outer() calls another function: a return probe
 * on its paciasp, or on the instruction after it, is refused unless it
 * is the function's first instruction or the one after ftrace's entry.
 */
static void kpr_err_after_paciasp(struct kunit *test)
{
	const __le32 *insn = (const __le32 *)kpt_kret_outer;
	int after = kpr_after_ftrace_entry(insn);
	int i, at, want = 5 + KPT_KRET_INNER_ADD + KPT_KRET_OUTER_ADD;
	struct kpr_probe *p;

	if (!IS_ENABLED(CONFIG_ARM64_PTR_AUTH_KERNEL))
		return;
	for (at = 0; at < KPR_SCAN; at++)
		if (le32_to_cpu(insn[at]) == KPR_PACIASP)
			break;
	KUNIT_ASSERT_LT_MSG(test, at, KPR_SCAN,
			    "no paciasp in the first %d instructions of kpt_kret_outer",
			    KPR_SCAN);
	for (i = at; i <= at + 1; i++) {
		if (!i || i == after)
			continue;
		p = kpr_new(0);
		p->rp.handler = kpr_ret_note;
		p->rp.kp.addr = (kprobe_opcode_t *)&insn[i];
		kpr_expect_refused(test, p, -EINVAL,
				   i == at ? "kpt_kret_outer's paciasp" :
				   "after kpt_kret_outer's paciasp");
	}
	KUNIT_EXPECT_EQ(test, kpt_kret_outer(5), want);
	kpr_expect_healthy(test, kpt_kret_outer, KPT_KRET_INNER_ADD + KPT_KRET_OUTER_ADD);
}

/*
 * A return probe on the instruction after ftrace's patchable entry
 * (where SystemTap puts them), by address and by name + offset: taken,
 * and it sees each call's return value once.  kpt_kret_outer() is a
 * traced C function, so it has that entry wherever ftrace is built in.
 */
void kpr_entry_after_ftrace(struct kunit *test)
{
	const __le32 *insn = (const __le32 *)kpt_kret_outer;
	int after = kpr_after_ftrace_entry(insn);
	int add = KPT_KRET_INNER_ADD + KPT_KRET_OUTER_ADD;
	struct kpr_probe *p;
	int by, x;

	if (!IS_ENABLED(CONFIG_DYNAMIC_FTRACE))
		kunit_skip(test, "no ftrace patchable entry (DYNAMIC_FTRACE)");
	KUNIT_ASSERT_NE_MSG(test, after, 0,
			    "kpt_kret_outer does not open with ftrace's entry");
	for (by = 0; by < 2; by++) {
		p = kpr_new(by);
		p->rp.handler = kpr_ret_note;
		if (by) {
			p->rp.kp.symbol_name = "kpt_kret_outer";
			p->rp.kp.offset = after * AARCH64_INSN_SIZE;
		} else {
			p->rp.kp.addr = (kprobe_opcode_t *)&insn[after];
		}
		KUNIT_ASSERT_EQ_MSG(test, kpr_register(test, &p->rp), 0,
				    "kpt_kret_outer+%d", after * AARCH64_INSN_SIZE);
		for (x = 1; x <= 3; x++) {
			KUNIT_EXPECT_EQ(test, kpt_kret_outer(x), x + add);
			KUNIT_EXPECT_EQ(test, READ_ONCE(p->last_ret),
					(unsigned long)(x + add));
		}
		KUNIT_EXPECT_EQ(test, atomic_read(&p->returns), 3);
		kpr_unregister(test, &p->rp);
	}
	kpr_expect_healthy(test, kpt_kret_outer, add);
}
#endif

void kpr_err_not_entry(struct kunit *test)
{
#ifdef CONFIG_ARM64
	kpr_err_after_paciasp(test);
#endif
#ifdef KPR_HAVE_ASM_TARGETS
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
#else
	kunit_skip(test, "no kpt_asm_sub here: its second instruction");
#endif
}

void kpr_err_symbols(struct kunit *test)
{
	struct kpr_probe *p;

	/*
	 * Upstream 6.12 accepts it, and on a preemptible kernel its rethook
	 * then hits a BUG() on the first context switch: not tried there.
	 */
	if (!kpr_upstream && !IS_ENABLED(CONFIG_MIPS)) {
		/* (mips switches tasks in resume(), and has no __switch_to.) */
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
void kpr_err_array_null(struct kunit *test)
{
	struct kpr_probe *a = kpr_new(0), *b = kpr_new(1);
	struct kretprobe *rps[] = { &a->rp, NULL, &b->rp };
	int i, ret;

	if (kpr_upstream)
		kunit_skip(test,
			   "not tried upstream: no promise it checks for NULL entries");

	a->rp.kp.addr = kpt_entry(kpt_kret_a);
	a->rp.handler = kpr_ret_note;
	b->rp.kp.addr = kpt_entry(kpt_kret_b);
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
void kpr_err_array_bad_symbol(struct kunit *test)
{
	struct kpr_probe *a = kpr_new(0), *bad = kpr_new(1), *b = kpr_new(2);
	struct kretprobe *rps[] = { &a->rp, &bad->rp, &b->rp };
	int i, ret;

	a->rp.kp.addr = kpt_entry(kpt_kret_a);
	bad->rp.kp.symbol_name = "kpr_no_such_symbol";
	b->rp.kp.addr = kpt_entry(kpt_kret_b);
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
void kpr_err_unregister_unregistered(struct kunit *test)
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
	if (kpr_upstream)
		kunit_skip(test,
			   "upstream 6.12 oopses in rethook_free() on a never-registered entry");

	a->rp.kp.addr = kpt_entry(kpt_kret_a);
	b->rp.kp.addr = kpt_entry(kpt_kret_b);
	stranger->rp.kp.addr = kpt_entry(kpt_kret_b);
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
void kpr_handler_ret_ignored(struct kunit *test)
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
 * the struct.  The values are written out by hand from that sentence, so
 * a mistake in the kernel's formula cannot hide in a copy of it here.
 */
static const struct {
	unsigned int cpus;
	int maxactive;
} kpr_doc_maxactive[] = {
	{ 1, 10 }, { 2, 10 }, { 3, 10 }, { 4, 10 }, { 5, 10 },
	{ 6, 12 }, { 7, 14 }, { 8, 16 }, { 16, 32 }, { 64, 128 },
};

void kpr_default_maxactive(struct kunit *test)
{
	unsigned int n = num_possible_cpus();
	int want = 0;
	int asked[] = { 0, -5 };
	struct kpr_probe *p;
	int i;

	for (i = 0; i < ARRAY_SIZE(kpr_doc_maxactive); i++)
		if (kpr_doc_maxactive[i].cpus == n)
			want = kpr_doc_maxactive[i].maxactive;
	if (!want)
		kunit_skip(test, "no documented value written here for %u CPUs", n);
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

void kpr_err_register_twice(struct kunit *test)
{
	struct kpr_probe *p;

	if (kpr_upstream)
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
 * Leave 0xa5 where the next call's return builds its pt_regs, so that a
 * field the trampoline does not fill shows as that.  A word's bits times
 * sixteen: 1 KiB on 64-bit kernels, half that on 32-bit ones, whose frame
 * limit is 1 KiB.
 */
static noinline void kpr_poison_stack(void)
{
	u8 buf[BITS_PER_LONG * 16];

	memset(buf, 0xa5, sizeof(buf));
	barrier_data(buf);
}

/*
 * arm64: the pt_regs a return handler gets has PAN and SSBS as the CPU
 * has them, as a trap's would, and (ours: built by the trampoline, where
 * upstream's is a BRK's) says "no system call".
 */
static void kpr_expect_trap_fields(struct kunit *test, struct kpr_probe *p,
				   const char *name)
{
#ifdef CONFIG_ARM64
	u64 pan = system_uses_hw_pan() ?
		  read_sysreg_s(SYS_PSTATE_PAN) & PSR_PAN_BIT : 0;
	u64 ssbs = cpus_have_final_cap(ARM64_SSBS) ?
		   read_sysreg_s(sys_reg(3, 3, 4, 2, 6)) & PSR_SSBS_BIT : 0;

	if (!kpr_upstream)
		KUNIT_EXPECT_EQ_MSG(test, READ_ONCE(p->last_syscallno), NO_SYSCALL,
				    "%s: regs->syscallno in the handler", name);
	KUNIT_EXPECT_EQ_MSG(test, READ_ONCE(p->last_pstate) & PSR_PAN_BIT, pan,
			    "%s: PAN in the handler's regs->pstate", name);
	KUNIT_EXPECT_EQ_MSG(test, READ_ONCE(p->last_pstate) & PSR_SSBS_BIT, ssbs,
			    "%s: SSBS in the handler's regs->pstate", name);
#endif
}

/*
 * Handlers of return probes run with preemption disabled; the
 * entry_handler like any pre_handler of its site: with interrupts
 * disabled on a breakpoint site, as the probed code had them on an
 * ftrace site and on an optimized one (arm's detour, the bridged
 * backend's own, turns them off); the return handler with interrupts
 * as they were when the function returned.  The entry of kpt_kret_a is an
 * ftrace site (where the kernel has kprobes on ftrace); that of
 * kpr_bp_target a breakpoint, with the sysctl at 0 where there is one,
 * and optimized (the list says so, the text holds the jmp, on arm64 the
 * b) at 1.  The target is called once with interrupts on and once with them
 * off (local_irq_save()).  kpr_exit() puts the sysctl back as it was.
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
	bool ret_trap;

#if !defined(CONFIG_KPROBES_ON_FTRACE) && !defined(CONFIG_X86_64)
	if (c)
		kunit_skip(test,
			   "no kprobes on ftrace (CONFIG_KPROBES_ON_FTRACE): a breakpoint carries the entry probe");
#endif
	if (!c) {
		old = kpt_optimization_get();
		if (old == -ENOENT && site == KPR_SITE_OPTIMIZED)
			kunit_skip(test,
				   "no %s: this kernel does not optimize probes (CONFIG_OPTPROBES)",
				   KPT_OPT_SYSCTL);
		if (IS_ENABLED(CONFIG_PPC) && site == KPR_SITE_OPTIMIZED)
			kunit_skip(test,
				   "powerpc optimizes probes in the kernel image only, and kpr_bp_target is a module's");
		if (old != -ENOENT) {
			KUNIT_ASSERT_GE_MSG(test, old, 0, "reading %s",
					    KPT_OPT_SYSCTL);
			ctx->sysctl_old = old;
			KUNIT_ASSERT_EQ_MSG(test,
					    kpt_optimization_set(site == KPR_SITE_OPTIMIZED),
					    0, "writing %s", KPT_OPT_SYSCTL);
		}
	}
	p->rp.kp.addr = c ? kpt_entry(kpt_kret_a) :
			    (kprobe_opcode_t *)kpr_bp_target;
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
#ifdef CONFIG_X86
		unsigned long end = kpt_deadline(5000);
		u8 op = 0;

		/* The jmp may follow the mark (upstream marks when it queues). */
		while (!copy_from_kernel_nofault(&op, (void *)addr, 1) &&
		       op != JMP32_INSN_OPCODE && time_before(jiffies, end))
			msleep(20);
		KUNIT_ASSERT_EQ_MSG(test, op, (u8)JMP32_INSN_OPCODE,
				    "%s: %pS: first byte %02x, no jmp", name,
				    (void *)addr, op);
#elif defined(CONFIG_ARM64) || defined(CONFIG_ARM)
		/* A B (to the detour; arm: any condition) where the BRK was. */
		const u32 mask = IS_ENABLED(CONFIG_ARM64) ? 0xfc000000 : 0x0f000000;
		const u32 b = IS_ENABLED(CONFIG_ARM64) ? 0x14000000 : 0x0a000000;
		unsigned long end = kpt_deadline(5000);
		u32 insn = 0;

		while (!copy_from_kernel_nofault(&insn, (void *)addr, 4) &&
		       (insn & mask) != b && time_before(jiffies, end))
			msleep(20);
		KUNIT_ASSERT_EQ_MSG(test, insn & mask, b,
				    "%s: %pS: %08x, no b", name, (void *)addr, insn);
#else
		KUNIT_FAIL(test, "%s: no check of an optimized probe's text here",
			   name);
#endif
	}

	ret_trap = KPR_RET_TRAP;
	if (IS_ENABLED(CONFIG_PPC) && kpt_optimization_get() == 1) {
		/* The trampoline probe is a jump once the optimizer is done. */
		if (!kpt_optimizer_wait())
			msleep(200);
		ret_trap = false;
	}
	for (off = 0; off < 2; off++) {
		memset(&kpr_seen_entry, 0, sizeof(kpr_seen_entry));
		memset(&kpr_seen_ret, 0, sizeof(kpr_seen_ret));
		KUNIT_ASSERT_EQ(test, preempt_count(), 0);
		expect = c ? (u64)(off + KPT_KRET_A_ADD) :
			     kpt_opt_want(off, 2, 3);
		kpr_poison_stack();
		if (off) {
			local_irq_save(flags);
			got = c ? kpt_kret_a(off) : kpr_bp_target(off, 2, 3);
			local_irq_restore(flags);
		} else {
			got = c ? kpt_kret_a(off) : kpr_bp_target(off, 2, 3);
		}
		KUNIT_EXPECT_EQ_MSG(test, got, expect, "%s: result", name);
		KUNIT_EXPECT_EQ_MSG(test, (u64)READ_ONCE(p->last_ret), expect,
				    "%s: regs_return_value() in the handler", name);
		kpr_expect_trap_fields(test, p, name);
		kpr_expect_ctx(test, &kpr_seen_entry, name, "entry_handler", off,
			       site == KPR_SITE_BREAKPOINT ||
			       (site == KPR_SITE_OPTIMIZED &&
				(IS_ENABLED(CONFIG_ARM) || IS_ENABLED(CONFIG_ARM64))));
		kpr_expect_ctx(test, &kpr_seen_ret, name, "handler", off,
			       ret_trap);
	}
	KUNIT_EXPECT_EQ(test, p->rp.kp.nmissed, 0UL);
	KUNIT_EXPECT_EQ(test, p->rp.nmissed, 0);
	kpr_unregister(test, &p->rp);
}

void kpr_context_ftrace_site(struct kunit *test)
{
	kpr_context(test, KPR_SITE_FTRACE);
}

void kpr_context_breakpoint_site(struct kunit *test)
{
	kpr_context(test, KPR_SITE_BREAKPOINT);
}

void kpr_context_optimized_site(struct kunit *test)
{
	kpr_context(test, KPR_SITE_OPTIMIZED);
}

#endif /* CONFIG_KRETPROBES */
