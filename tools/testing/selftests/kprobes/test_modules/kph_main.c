// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit cases for the hit counts of debugfs kprobes/stats: after an exact
 * number of calls, the count of a probe must be that number, whichever
 * way the hit went (a breakpoint and a step with a post_handler, a
 * boosted breakpoint, a jump to a detour, ftrace, a return probe); a
 * disabled probe's count stays where it was; two probes on one site each
 * count their own enabled time.  Upstream has no stats file: there every
 * case skips itself.  The probed functions are in kprobes_target.ko.
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/string.h>
#include "kprobes_target.h"

#define KPH_CALLS	37
/* Long enough for entry probes to be handed over to ftrace. */
#define KPH_HANDOFF_MS	1500

static int kph_pre(struct kprobe *p, struct pt_regs *regs)
{
	return 0;
}

#ifdef KPT_ASM_TARGETS
static void kph_post(struct kprobe *p, struct pt_regs *regs,
		     unsigned long flags)
{
}
#endif

static int kph_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	return 0;
}

/* "name=<n>" of the stats line of the probe at @addr of @type, or -1. */
static long kph_field(struct kunit *test, unsigned long addr, char type,
		      const char *name)
{
	char line[256], key[24];
	unsigned long v;
	const char *f;
	int ret;

	ret = kpt_kprobes_line("stats", addr, type, line, sizeof(line));
	if (ret) {
		kunit_info(test, "no stats line for %lx (%d)", addr, ret);
		return -1;
	}
	snprintf(key, sizeof(key), "  %s=", name);
	f = strstr(line, key);
	if (!f || sscanf(f + strlen(key), "%lu", &v) != 1) {
		kunit_info(test, "no %s in '%s'", name, line);
		return -1;
	}
	return v;
}

static long kph_hits(struct kunit *test, struct kprobe *p, char type)
{
	return kph_field(test, (unsigned long)p->addr, type, "hits");
}

static void kph_need_stats(struct kunit *test)
{
	char line[8];

	if (kpt_kprobes_line("stats", 0, 'k', line, sizeof(line)) == -ENODEV)
		kunit_skip(test, "no debugfs kprobes/stats (upstream)");
}

#ifdef KPT_ASM_TARGETS
static void kph_call_add(int n)
{
	int i;

	for (i = 0; i < n; i++)
		kpt_asm_add(i);
}
#endif

static void kph_call_eight(int n)
{
	int i;

	for (i = 0; i < n; i++)
		kpt_eight_call(kpt_eight, i);
}

/* A breakpoint stepped out of line (a post_handler keeps it so). */
static void kph_stepped(struct kunit *test)
{
#ifdef KPT_ASM_TARGETS
	struct kprobe kp = {
		.addr = (kprobe_opcode_t *)kpt_label_addr(KPT_L_ADD_INSN),
		.pre_handler = kph_pre,
		.post_handler = kph_post,
	};

	kph_need_stats(test);
	KUNIT_ASSERT_EQ(test, register_kprobe(&kp), 0);
	KUNIT_EXPECT_EQ(test, kph_hits(test, &kp, 'k'), 0);
	kph_call_add(KPH_CALLS);
	KUNIT_EXPECT_EQ(test, kph_hits(test, &kp, 'k'), KPH_CALLS);
	KUNIT_EXPECT_EQ(test, kph_field(test, (unsigned long)kp.addr, 'k',
					"missed"), 0);
	unregister_kprobe(&kp);
#else
	kunit_skip(test, "no hand-written targets here: kpt_asm_add (kpt_asm.S, kpt_asm_arm64.S)");
#endif
}

/*
 * A boosted breakpoint (optimization off, so that it stays one).  Only
 * x86 boosts: on arm64 every stepped breakpoint comes back to kprobes
 * after its copy, the way kph_stepped counts.
 */
static void kph_boosted(struct kunit *test)
{
#ifdef CONFIG_X86
	struct kprobe kp = {
		.addr = (kprobe_opcode_t *)kpt_label_addr(KPT_L_ADD_INSN),
		.pre_handler = kph_pre,
	};
	int opt = kpt_optimization_get();

	kph_need_stats(test);
	if (opt > 0)
		KUNIT_ASSERT_EQ(test, kpt_optimization_set(0), 0);
	KUNIT_ASSERT_EQ(test, register_kprobe(&kp), 0);
	kph_call_add(KPH_CALLS);
	KUNIT_EXPECT_EQ(test, kph_hits(test, &kp, 'k'), KPH_CALLS);
	unregister_kprobe(&kp);
	if (opt > 0)
		kpt_optimization_set(1);
#else
	kunit_skip(test,
		   "no boosting on this architecture: a stepped breakpoint comes back after its copy (kph_stepped)");
#endif
}

/* A jump to a detour (where the kernel optimizes probes). */
static void kph_optimized(struct kunit *test)
{
#ifdef KPT_ASM_TARGETS
	struct kprobe kp = {
		.addr = (kprobe_opcode_t *)kpt_label_addr(KPT_L_ADD_INSN),
		.pre_handler = kph_pre,
	};
	int state;

	kph_need_stats(test);
	if (!IS_ENABLED(CONFIG_OPTPROBES))
		kunit_skip(test,
			   "no jump optimization in this kernel (CONFIG_OPTPROBES)");
	if (kpt_optimization_get() != 1)
		kunit_skip(test, "jump optimization is off or absent");
	KUNIT_ASSERT_EQ(test, register_kprobe(&kp), 0);
	state = kpt_wait_probe_state((unsigned long)kp.addr, KPT_PS_OPTIMIZED,
				     KPT_PS_OPTIMIZED, 5000);
	KUNIT_EXPECT_TRUE(test, state > 0 && (state & KPT_PS_OPTIMIZED));
	kph_call_add(KPH_CALLS);
	KUNIT_EXPECT_EQ(test, kph_hits(test, &kp, 'k'), KPH_CALLS);
	unregister_kprobe(&kp);
#else
	kunit_skip(test, "no hand-written targets here: kpt_asm_add (kpt_asm.S, kpt_asm_arm64.S)");
#endif
}

/*
 * A function's entry: first hit through kprobes' own call over ftrace's nop,
 * then, once handed over (in a batch, HZ / 10 after registration),
 * through ftrace.  Disabled, it stops counting.
 */
static void kph_ftrace_disabled(struct kunit *test)
{
	struct kprobe kp = {
		.addr = (kprobe_opcode_t *)kpt_eight,
		.pre_handler = kph_pre,
	};

	kph_need_stats(test);
	KUNIT_ASSERT_EQ(test, register_kprobe(&kp), 0);
	kph_call_eight(KPH_CALLS);
	KUNIT_EXPECT_EQ(test, kph_hits(test, &kp, 'k'), KPH_CALLS);
	msleep(kpt_paced_ms(KPH_HANDOFF_MS));
	kph_call_eight(KPH_CALLS);
	KUNIT_EXPECT_EQ(test, kph_hits(test, &kp, 'k'), 2 * KPH_CALLS);
	KUNIT_ASSERT_EQ(test, disable_kprobe(&kp), 0);
	kph_call_eight(5);
	KUNIT_EXPECT_EQ(test, kph_hits(test, &kp, 'k'), 2 * KPH_CALLS);
	KUNIT_ASSERT_EQ(test, enable_kprobe(&kp), 0);
	msleep(kpt_paced_ms(KPH_HANDOFF_MS));
	kph_call_eight(3);
	KUNIT_EXPECT_EQ(test, kph_hits(test, &kp, 'k'), 2 * KPH_CALLS + 3);
	unregister_kprobe(&kp);
}

/*
 * A return probe and a kprobe on one entry: each its own count, the
 * kprobe's only from when it came; the pool's figures are shown.
 */
static void kph_return(struct kunit *test)
{
	struct kretprobe rp = {
		.kp.addr = (kprobe_opcode_t *)kpt_eight,
		.handler = kph_ret,
		.maxactive = 4,
	};
	struct kprobe kp = {
		.addr = (kprobe_opcode_t *)kpt_eight,
		.pre_handler = kph_pre,
	};
	unsigned long addr;

	kph_need_stats(test);
	KUNIT_ASSERT_EQ(test, register_kretprobe(&rp), 0);
	addr = (unsigned long)rp.kp.addr;
	kph_call_eight(KPH_CALLS);
	KUNIT_ASSERT_EQ(test, register_kprobe(&kp), 0);
	msleep(kpt_paced_ms(KPH_HANDOFF_MS));
	kph_call_eight(2);
	KUNIT_EXPECT_EQ(test, kph_field(test, addr, 'r', "hits"), KPH_CALLS + 2);
	KUNIT_EXPECT_EQ(test, kph_field(test, addr, 'k', "hits"), 2);
	KUNIT_EXPECT_EQ(test, kph_field(test, addr, 'r', "inuse"), 0);
	KUNIT_EXPECT_GE(test, kph_field(test, addr, 'r', "pool"), 4);
	KUNIT_EXPECT_EQ(test, kph_field(test, addr, 'r', "return_missed"), 0);
	unregister_kprobe(&kp);
	unregister_kretprobe(&rp);
}

static struct kunit_case kph_cases[] = {
	KUNIT_CASE(kph_stepped),
	KUNIT_CASE(kph_boosted),
	KUNIT_CASE(kph_optimized),
	KUNIT_CASE(kph_ftrace_disabled),
	KUNIT_CASE(kph_return),
	{}
};

static struct kunit_suite kph_suite = {
	.name = "kprobes_stats",
	.test_cases = kph_cases,
};

kunit_test_suite(kph_suite);

MODULE_DESCRIPTION("KUnit: the hit counts of debugfs kprobes/stats");
MODULE_LICENSE("GPL");
