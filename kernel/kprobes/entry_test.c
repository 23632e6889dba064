// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * KUnit test of probes on a function's entry, built in so that it runs on
 * every architecture at boot, bridged ones included.  The target is not a
 * leaf: some compilers leave leaf functions without the ftrace call, and
 * with CONFIG_KPROBES_ON_FTRACE a probe on this one's ftrace call must be
 * carried by ftrace.  Expected values are computed here, from the calls made and
 * from what the target computes, not read back from the kprobes core.
 */

#include <kunit/test.h>
#include <linux/ftrace.h>
#include <linux/hex.h>
#include <linux/kprobes.h>
#include <linux/kstrtox.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <asm/sections.h>

#define KPE_CALLS	5

static noinline u32 kpe_inner(u32 v)
{
	return v * 3 + 1;
}

/* Where kpe_target() will return to, as the function itself sees it. */
static unsigned long kpe_seen_ret;

/* Called through kpe_fn: its symbol must not become a clone's. */
static noinline u32 kpe_target(u32 v)
{
	u32 r = kpe_inner(v);

	WRITE_ONCE(kpe_seen_ret, (unsigned long)__builtin_return_address(0));
	barrier();
	return r ^ 0x5a;
}

static u32 (*kpe_fn)(u32) = kpe_target;

/* On the blacklist: no probe may go on it. */
static noinline u32 kpe_forbidden(u32 v)
{
	return kpe_inner(v) ^ 0xa5;
}

NOKPROBE_SYMBOL(kpe_forbidden);

/* What kpe_target(@v) returns, worked out without calling it. */
static u32 kpe_expected(u32 v)
{
	return (v * 3 + 1) ^ 0x5a;
}

static unsigned int kpe_pre_hits, kpe_post_hits, kpe_ret_hits;
static unsigned long kpe_ret_val;

static unsigned int kpe_pre_count(void)
{
	return READ_ONCE(kpe_pre_hits);
}

static unsigned int kpe_ret_count(void)
{
	return READ_ONCE(kpe_ret_hits);
}

static unsigned long kpe_ret_value(void)
{
	return READ_ONCE(kpe_ret_val);
}

static int kpe_pre(struct kprobe *p, struct pt_regs *regs)
{
	WRITE_ONCE(kpe_pre_hits, kpe_pre_hits + 1);
	return 0;
}

static void kpe_post(struct kprobe *p, struct pt_regs *regs,
		     unsigned long flags)
{
	WRITE_ONCE(kpe_post_hits, kpe_post_hits + 1);
}

static int kpe_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	WRITE_ONCE(kpe_ret_val, regs_return_value(regs));
	WRITE_ONCE(kpe_ret_hits, kpe_ret_hits + 1);
	return 0;
}

static int kpe_init(struct kunit *test)
{
	kpe_pre_hits = 0;
	kpe_post_hits = 0;
	kpe_ret_hits = 0;
	kpe_ret_val = 0;
	return 0;
}

/* Call the target KPE_CALLS times; true if each returned what it should. */
static bool kpe_call(u32 base)
{
	bool ok = true;
	u32 i;

	for (i = 0; i < KPE_CALLS; i++)
		ok &= kpe_fn(base + i) == kpe_expected(base + i);
	return ok;
}

/* Both handlers of an entry probe run once per call, by the right path. */
static void kpe_entry(struct kunit *test)
{
	struct kprobe kp = {
		.symbol_name	= "kpe_target",
		.pre_handler	= kpe_pre,
		.post_handler	= kpe_post,
	};
	unsigned long addr;

	KUNIT_ASSERT_EQ(test, register_kprobe(&kp), 0);
	KUNIT_EXPECT_TRUE(test, kpe_call(10));
	addr = (unsigned long)kp.addr;
	kunit_info(test, "probe at %pS, ftrace site %pS\n", kp.addr,
		   (void *)ftrace_location(addr));
	/*
	 * With kprobes on ftrace, ftrace carries the probe exactly when it
	 * sits on ftrace's call, which is the symbol itself (x86-64), a few
	 * instructions in that powerpc64's lookup moves it to, or neither
	 * (32-bit powerpc puts it before the call).
	 */
	KUNIT_EXPECT_EQ(test, kprobe_ftrace(&kp),
			IS_ENABLED(CONFIG_KPROBES_ON_FTRACE) &&
			ftrace_location(addr) == addr);
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, kpe_pre_count(), KPE_CALLS);
	KUNIT_EXPECT_EQ(test, READ_ONCE(kpe_post_hits), KPE_CALLS);
	KUNIT_EXPECT_TRUE(test, kpe_call(20));
	KUNIT_EXPECT_EQ(test, kpe_pre_count(), KPE_CALLS);
}

/* A disabled probe sees nothing; enabled again, every call. */
static void kpe_disable(struct kunit *test)
{
	struct kprobe kp = {
		.symbol_name	= "kpe_target",
		.pre_handler	= kpe_pre,
	};

	KUNIT_ASSERT_EQ(test, register_kprobe(&kp), 0);
	KUNIT_EXPECT_EQ(test, disable_kprobe(&kp), 0);
	KUNIT_EXPECT_TRUE(test, kpe_call(30));
	KUNIT_EXPECT_EQ(test, kpe_pre_count(), 0);
	KUNIT_EXPECT_EQ(test, enable_kprobe(&kp), 0);
	KUNIT_EXPECT_TRUE(test, kpe_call(40));
	KUNIT_EXPECT_EQ(test, kpe_pre_count(), KPE_CALLS);
	unregister_kprobe(&kp);
}

/*
 * Library functions of the kernel proper, each with a call whose result
 * is known: wherever they start, a probe on their entry must go in and
 * fire.  On architectures with compressed instructions (riscv, csky)
 * about half of all functions start at an address that is no multiple
 * of sizeof(kprobe_opcode_t).
 */
/* kpe_<fn>(): @fn("@str", 10, &v) as a long, its error or its value. */
#define KPE_KSTRTO(fn, type, str)			\
static long kpe_##fn(void)				\
{							\
	type v;						\
							\
	return fn(str, 10, &v) ?: v;			\
}

KPE_KSTRTO(kstrtoint, int, "41")
KPE_KSTRTO(kstrtouint, unsigned int, "42")
KPE_KSTRTO(kstrtoll, long long, "43")
KPE_KSTRTO(kstrtoull, unsigned long long, "44")
KPE_KSTRTO(kstrtou16, u16, "45")
KPE_KSTRTO(kstrtos16, s16, "46")
KPE_KSTRTO(kstrtou8, u8, "47")
KPE_KSTRTO(kstrtos8, s8, "48")

static long kpe_hex_to_bin(void)
{
	return hex_to_bin('c');
}

static const struct {
	const char *name;
	void *fn;
	long (*call)(void);
	long want;
} kpe_libfns[] = {
	{ "kstrtoint",	kstrtoint,	kpe_kstrtoint,	41 },
	{ "kstrtouint",	kstrtouint,	kpe_kstrtouint,	42 },
	{ "kstrtoll",	kstrtoll,	kpe_kstrtoll,	43 },
	{ "kstrtoull",	kstrtoull,	kpe_kstrtoull,	44 },
	{ "kstrtou16",	kstrtou16,	kpe_kstrtou16,	45 },
	{ "kstrtos16",	kstrtos16,	kpe_kstrtos16,	46 },
	{ "kstrtou8",	kstrtou8,	kpe_kstrtou8,	47 },
	{ "kstrtos8",	kstrtos8,	kpe_kstrtos8,	48 },
	{ "hex_to_bin",	hex_to_bin,	kpe_hex_to_bin,	12 },
};

/* Where kpe_libfns[@i]'s text starts (not its descriptor, where it has one). */
static unsigned long kpe_libfn_text(unsigned int i)
{
	return (unsigned long)dereference_kernel_function_descriptor(kpe_libfns[i].fn);
}

static struct task_struct *kpe_task;

/* Counts only the test's own calls: others may run the function too. */
static int kpe_pre_mine(struct kprobe *p, struct pt_regs *regs)
{
	if (current == kpe_task)
		WRITE_ONCE(kpe_pre_hits, kpe_pre_hits + 1);
	return 0;
}

/* The least aligned of them, probed by name, fires once for one call. */
static void kpe_least_aligned(struct kunit *test)
{
	struct kprobe kp = { .pre_handler = kpe_pre_mine };
	unsigned int i, best = 0;

	for (i = 1; i < ARRAY_SIZE(kpe_libfns); i++) {
		if (__ffs(kpe_libfn_text(i)) < __ffs(kpe_libfn_text(best)))
			best = i;
	}
	kp.symbol_name = kpe_libfns[best].name;
	kpe_task = current;
	KUNIT_ASSERT_EQ_MSG(test, register_kprobe(&kp), 0,
			    "a probe on %s (address %% 16: %lu)", kp.symbol_name,
			    kpe_libfn_text(best) % 16);
	kunit_info(test, "probe at %pS (address %% 16: %lu)\n", kp.addr,
		   (unsigned long)kp.addr % 16);
	KUNIT_EXPECT_EQ(test, kpe_libfns[best].call(), kpe_libfns[best].want);
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, kpe_pre_count(), 1);
}

/*
 * A function marked NOKPROBE_SYMBOL() is refused, wherever the marking
 * records it: the kernel's list when this test is built in, the module's
 * otherwise.  Where C function pointers are descriptors (ppc64 ELF ABI
 * v1, parisc64), the marking records the descriptor.
 */
static void kpe_nokprobe(struct kunit *test)
{
	struct kprobe kp = {
		.symbol_name	= "kpe_forbidden",
		.pre_handler	= kpe_pre,
	};
	int ret = register_kprobe(&kp);

	if (!ret)
		unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ_MSG(test, ret, -EINVAL, "a probe went on %pS", kp.addr);
}

#ifdef CONFIG_OPTPROBES
#define KPE_OPT_SPAN	64

/* Is the instruction at @addr a jump, as jump optimization writes one? */
static bool kpe_is_jump(struct kunit *test, unsigned long addr)
{
	u32 insn = 0;

	if (copy_from_kernel_nofault(&insn, (void *)addr, sizeof(insn)))
		return false;
#if defined(CONFIG_X86)
	return (insn & 0xff) == 0xe9;			/* jmp rel32 */
#elif defined(CONFIG_ARM64)
	/* A64 code is little-endian in memory, whatever the data's order. */
	insn = le32_to_cpu((__force __le32)insn);
	return (insn & 0xfc000000) == 0x14000000;	/* b */
#elif defined(CONFIG_ARM)
	return (insn & 0x0f000000) == 0x0a000000;	/* b<cond> */
#elif defined(CONFIG_PPC)
	return (insn & 0xfc000003) == 0x48000000;	/* b */
#else
	KUNIT_FAIL(test, "no check of an optimized probe's text here");
	return false;
#endif
}

/*
 * Jump optimization: one at a time, probes with a pre_handler alone go on
 * the instructions of kpe_target() (built in: in the kernel image, the
 * only text powerpc optimizes) after the one a probe on its name takes,
 * which may be an ftrace site.  Once the optimizer is done, at least one
 * of them must be optimized, a jump where it sits, and take every call;
 * unregistered, the instruction is back.
 */
static void kpe_optimized(struct kunit *test)
{
	unsigned long text = (unsigned long)dereference_kernel_function_descriptor(kpe_target);
	struct kprobe kp = {
		.symbol_name	= "kpe_target",
		.pre_handler	= kpe_pre,
	};
	unsigned int off, entry;
	u32 orig;

	/*
	 * Where a probe on the name goes: ppc64 ELF ABI v2 moves it past the
	 * global entry's TOC set-up, which direct calls skip.
	 */
	KUNIT_ASSERT_EQ(test, register_kprobe(&kp), 0);
	entry = (unsigned long)kp.addr - text;
	unregister_kprobe(&kp);
	for (off = entry + 1; off < entry + KPE_OPT_SPAN; off++) {
		memset(&kp, 0, sizeof(kp));
		kp.symbol_name = "kpe_target";
		kp.offset = off;
		kp.pre_handler = kpe_pre;
		KUNIT_ASSERT_EQ(test, copy_from_kernel_nofault(&orig, (void *)(text + off),
							       sizeof(orig)), 0);
		/* Not an instruction boundary, or not past the entry here. */
		if (register_kprobe(&kp))
			continue;
		if ((unsigned long)kp.addr != text + off) {
			unregister_kprobe(&kp);
			continue;
		}
		wait_for_kprobe_optimizer();
		if (kprobe_optimized(&kp))
			break;
		unregister_kprobe(&kp);
	}
	KUNIT_ASSERT_LT_MSG(test, off, entry + KPE_OPT_SPAN,
			    "no probe in the %u bytes after kpe_target()'s entry was optimized",
			    KPE_OPT_SPAN);
	kunit_info(test, "optimized at %pS\n", kp.addr);
	KUNIT_EXPECT_TRUE_MSG(test, kpe_is_jump(test, text + off),
			      "%pS is [OPTIMIZED] but holds no jump", kp.addr);
	KUNIT_EXPECT_TRUE(test, kpe_call(70));
	KUNIT_EXPECT_EQ(test, kpe_pre_count(), KPE_CALLS);
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, memcmp((void *)(text + off), &orig, sizeof(orig)), 0);
	KUNIT_EXPECT_TRUE(test, kpe_call(80));
	KUNIT_EXPECT_EQ(test, kpe_pre_count(), KPE_CALLS);
}
#endif

#ifdef CONFIG_KRETPROBES
/*
 * A return probe sees each return and the value the caller gets, and the
 * target, while it is probed, returns to what is_kretprobe_trampoline()
 * (the unwinders' test) recognises.
 */
static void kpe_return(struct kunit *test)
{
	struct kretprobe rp = {
		.kp.symbol_name	= "kpe_target",
		.handler	= kpe_ret,
	};

	KUNIT_EXPECT_TRUE(test, kpe_call(45));
	KUNIT_EXPECT_FALSE(test, is_kretprobe_trampoline(READ_ONCE(kpe_seen_ret)));
	KUNIT_ASSERT_EQ(test, register_kretprobe(&rp), 0);
	kunit_info(test, "entry at %pS\n", rp.kp.addr);
	KUNIT_EXPECT_TRUE(test, kpe_call(50));
	KUNIT_EXPECT_TRUE_MSG(test, is_kretprobe_trampoline(READ_ONCE(kpe_seen_ret)),
			      "kpe_target() returns to %pS",
			      (void *)READ_ONCE(kpe_seen_ret));
	unregister_kretprobe(&rp);
	KUNIT_EXPECT_EQ(test, kpe_ret_count(), KPE_CALLS);
	KUNIT_EXPECT_EQ(test, kpe_ret_value(),
			(unsigned long)kpe_expected(50 + KPE_CALLS - 1));
	KUNIT_EXPECT_EQ(test, rp.nmissed, 0);
}

/* An entry probe and a return probe share the entry. */
static void kpe_entry_and_return(struct kunit *test)
{
	struct kprobe kp = {
		.symbol_name	= "kpe_target",
		.pre_handler	= kpe_pre,
	};
	struct kretprobe rp = {
		.kp.symbol_name	= "kpe_target",
		.handler	= kpe_ret,
	};

	KUNIT_ASSERT_EQ(test, register_kprobe(&kp), 0);
	KUNIT_ASSERT_EQ(test, register_kretprobe(&rp), 0);
	KUNIT_EXPECT_TRUE(test, kpe_call(60));
	unregister_kretprobe(&rp);
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, kpe_pre_count(), KPE_CALLS);
	KUNIT_EXPECT_EQ(test, kpe_ret_count(), KPE_CALLS);
	KUNIT_EXPECT_EQ(test, kpe_ret_value(),
			(unsigned long)kpe_expected(60 + KPE_CALLS - 1));
}
#endif

static struct kunit_case kpe_cases[] = {
	KUNIT_CASE(kpe_entry),
	KUNIT_CASE(kpe_disable),
	KUNIT_CASE(kpe_least_aligned),
	KUNIT_CASE(kpe_nokprobe),
#ifdef CONFIG_OPTPROBES
	KUNIT_CASE(kpe_optimized),
#endif
#ifdef CONFIG_KRETPROBES
	KUNIT_CASE(kpe_return),
	KUNIT_CASE(kpe_entry_and_return),
#endif
	{}
};

static struct kunit_suite kpe_suite = {
	.name		= "kprobes_entry",
	.init		= kpe_init,
	.test_cases	= kpe_cases,
};

kunit_test_suite(kpe_suite);

MODULE_DESCRIPTION("KUnit test of probes on function entries");
MODULE_LICENSE("GPL");
