// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit cases for the kprobes API: registration, enabling, handlers,
 * errors and the blacklist.  The probed functions are in kprobes_target.ko.
 *
 * The cases must pass both on our kprobes and on the upstream ones; where
 * the two differ on purpose, the "upstream" module parameter (set by
 * run_tests.sh from the kernel command line) says which one runs and the
 * case explains the difference.
 */
#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/ftrace.h>
#include <linux/hrtimer.h>
#include <linux/hw_breakpoint.h>
#include <linux/irqflags.h>
#include <linux/jiffies.h>
#include <linux/kprobes.h>
#include <linux/kthread.h>
#include <linux/mman.h>
#include <linux/module.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/timer.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#ifdef CONFIG_X86
#include <asm/apic.h>
#include <asm/nmi.h>
#include <asm/nops.h>
#include <asm/text-patching.h>
#endif
#include "kprobes_target.h"
#include "kpt_user.h"

static bool upstream;
module_param(upstream, bool, 0444);
MODULE_PARM_DESC(upstream, "the kernel runs the upstream kprobes (baseline)");

/*
 * Where the architectures differ for these cases (beside what
 * kprobes_target.h says for the targets).
 *
 * kpk_not_boundary_err(): the answer to a probe inside an instruction.
 * Ours says -EILSEQ everywhere, as upstream's x86-64 does (its decoder
 * finds no instruction there); upstream's arm64 refuses a misaligned
 * address with -EINVAL.
 *
 * kpk_entry_text[]: entry code, never probed: x86's int3 vector, system
 * call entry (x86-64's syscall, i386's int $0x80) and int3 handler;
 * arm64's vector for exceptions taken at EL1 (a BRK is one), the one for
 * synchronous exceptions from user space (SVC: system calls) and the C
 * handler behind the former (noinstr).
 * kpk_bp_code[]: kprobes' own breakpoint handlers.
 */
static int __maybe_unused kpk_not_boundary_err(void)
{
	return upstream && IS_ENABLED(CONFIG_ARM64) ? -EINVAL : -EILSEQ;
}

#if defined(CONFIG_X86_64)
static const char * const kpk_entry_text[] = {
	"asm_exc_int3", "entry_SYSCALL_64", "exc_int3",
};

static const char * const kpk_bp_code[] = { "kprobe_int3_handler" };
#elif defined(CONFIG_X86_32)
static const char * const kpk_entry_text[] = {
	"asm_exc_int3", "entry_INT80_32", "exc_int3",
};

static const char * const kpk_bp_code[] = { "kprobe_int3_handler" };
#elif defined(CONFIG_ARM64)
static const char * const kpk_entry_text[] = {
	"el1h_64_sync", "el0t_64_sync", "el1h_64_sync_handler",
};

static const char * const kpk_bp_code[] = {
	"kprobe_brk_handler", "kprobe_ss_brk_handler",
};

/* The bridged backends' own handlers, as their architectures name them. */
#elif defined(CONFIG_ARM)
static const char * const kpk_bp_code[] = { "kprobe_trap_handler" };
#elif defined(CONFIG_MIPS)
static const char * const kpk_bp_code[] = { "kprobe_handler" };
#elif defined(CONFIG_PPC)
static const char * const kpk_bp_code[] = {
	"kprobe_handler", "kprobe_post_handler",
};
#elif defined(CONFIG_RISCV)
static const char * const kpk_bp_code[] = {
	"kprobe_breakpoint_handler", "kprobe_single_step_handler",
};
#elif defined(CONFIG_S390)
static const char * const kpk_bp_code[] = {
	"kprobe_handler", "post_kprobe_handler",
};
#endif

/* A probe with the counters its handlers keep. */
struct kpk_probe {
	struct kprobe kp;
	atomic_t pre_hits;
	atomic_t post_hits;
	int id;
	/* Set by kpk_pre_note() and kpk_post_note(). */
	unsigned long pre_ax;
	unsigned long pre_ip;
	unsigned long post_ax;
	unsigned long post_ip;
	int pre_seq;
	int post_seq;
};

#define KPK_NPROBES	6

/*
 * Probes live in static storage, never on a test's stack: a probe left
 * registered by a failing case must not point at freed memory.
 */
static struct kpk_probe kpk_pool[KPK_NPROBES];

/* Registered probes of the running case, unregistered by kpk_exit(). */
struct kpk_ctx {
	struct kprobe *live[KPK_NPROBES];
};

static atomic_t kpk_seq;

static int kpk_pre_count(struct kprobe *kp, struct pt_regs *regs)
{
	struct kpk_probe *p = container_of(kp, struct kpk_probe, kp);

	atomic_inc(&p->pre_hits);
	return 0;
}

static void kpk_post_count(struct kprobe *kp, struct pt_regs *regs,
			   unsigned long flags)
{
	struct kpk_probe *p = container_of(kp, struct kpk_probe, kp);

	atomic_inc(&p->post_hits);
}

static struct kpk_probe *kpk_new(int i)
{
	struct kpk_probe *p = &kpk_pool[i];

	memset(p, 0, sizeof(*p));
	p->id = i;
	p->kp.pre_handler = kpk_pre_count;
	return p;
}

static void kpk_track(struct kunit *test, struct kprobe *kp)
{
	struct kpk_ctx *ctx = test->priv;
	int i;

	for (i = 0; i < KPK_NPROBES; i++) {
		if (!ctx->live[i]) {
			ctx->live[i] = kp;
			return;
		}
	}
	KUNIT_FAIL(test, "too many live probes");
}

static void kpk_untrack(struct kunit *test, struct kprobe *kp)
{
	struct kpk_ctx *ctx = test->priv;
	int i;

	for (i = 0; i < KPK_NPROBES; i++)
		if (ctx->live[i] == kp)
			ctx->live[i] = NULL;
}

static int kpk_register(struct kunit *test, struct kpk_probe *p)
{
	int ret = register_kprobe(&p->kp);

	if (!ret)
		kpk_track(test, &p->kp);
	return ret;
}

static void kpk_unregister(struct kunit *test, struct kpk_probe *p)
{
	kpk_untrack(test, &p->kp);
	unregister_kprobe(&p->kp);
}

static int kpk_hits(struct kpk_probe *p)
{
	return atomic_read(&p->pre_hits);
}

static int kpk_init(struct kunit *test)
{
	test->priv = kunit_kzalloc(test, sizeof(struct kpk_ctx), GFP_KERNEL);
	if (!test->priv)
		return -ENOMEM;
	atomic_set(&kpk_seq, 0);
	return 0;
}

/* KPT_NMANY probes, one on each of kpt_many[] (kpk_register_many_rollback). */
#ifdef KPT_ASM_TARGETS
static struct kprobe kpk_many[KPT_NMANY];
#endif
static struct kprobe *kpk_many_ptrs[KPT_NMANY];
static bool kpk_many_live;
#ifdef KPT_ASM_TARGETS
static atomic_t kpk_many_hits;
#endif

static void kpk_exit(struct kunit *test)
{
	struct kpk_ctx *ctx = test->priv;
	int i;

	if (kpk_many_live) {
		unregister_kprobes(kpk_many_ptrs, KPT_NMANY);
		kpk_many_live = false;
	}

	for (i = 0; i < KPK_NPROBES; i++) {
		if (ctx->live[i]) {
			unregister_kprobe(ctx->live[i]);
			ctx->live[i] = NULL;
		}
	}
}

/*
 * After a failed registration the kprobes state must be intact: a fresh
 * probe on @fn registers, fires exactly once per call and goes away.
 */
static void kpk_expect_healthy(struct kunit *test, int (*fn)(int))
{
	struct kpk_probe *p = kpk_new(KPK_NPROBES - 1);

	p->kp.addr = (kprobe_opcode_t *)fn;
	KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
	fn(0);
	fn(1);
	KUNIT_EXPECT_EQ(test, kpk_hits(p), 2);
	kpk_unregister(test, p);
	fn(2);
	KUNIT_EXPECT_EQ(test, kpk_hits(p), 2);
}

/* ---------------------------------------------------------------------
 * Registration, enabling, addressing
 */

static void kpk_register_unregister(struct kunit *test)
{
	struct kpk_probe *p = kpk_new(0);
	int i;

	p->kp.addr = (kprobe_opcode_t *)kpt_func_a;
	KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
	for (i = 0; i < 5; i++)
		KUNIT_EXPECT_EQ(test, kpt_func_a(i), i + 1);
	KUNIT_EXPECT_EQ(test, kpk_hits(p), 5);
	KUNIT_EXPECT_EQ(test, p->kp.nmissed, 0UL);
	kpk_unregister(test, p);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, kpt_func_a(i), i + 1);
	KUNIT_EXPECT_EQ(test, kpk_hits(p), 5);
}

static void kpk_register_array(struct kunit *test)
{
	struct kpk_probe *a = kpk_new(0), *b = kpk_new(1), *c = kpk_new(2);
	struct kprobe *kps[] = { &a->kp, &b->kp, &c->kp };
	int i;

	a->kp.addr = (kprobe_opcode_t *)kpt_func_a;
	b->kp.addr = (kprobe_opcode_t *)kpt_func_b;
	c->kp.addr = (kprobe_opcode_t *)kpt_func_c;
	KUNIT_ASSERT_EQ(test, register_kprobes(kps, ARRAY_SIZE(kps)), 0);
	for (i = 0; i < ARRAY_SIZE(kps); i++)
		kpk_track(test, kps[i]);

	for (i = 0; i < 2; i++) {
		kpt_func_a(i);
		kpt_func_b(i);
		kpt_func_c(i);
	}
	KUNIT_EXPECT_EQ(test, kpk_hits(a), 2);
	KUNIT_EXPECT_EQ(test, kpk_hits(b), 2);
	KUNIT_EXPECT_EQ(test, kpk_hits(c), 2);

	for (i = 0; i < ARRAY_SIZE(kps); i++)
		kpk_untrack(test, kps[i]);
	unregister_kprobes(kps, ARRAY_SIZE(kps));
	kpt_func_a(0);
	kpt_func_b(0);
	kpt_func_c(0);
	KUNIT_EXPECT_EQ(test, kpk_hits(a), 2);
	KUNIT_EXPECT_EQ(test, kpk_hits(b), 2);
	KUNIT_EXPECT_EQ(test, kpk_hits(c), 2);
}

/*
 * A bad probe in the middle of the array: the call fails with its error
 * and the probes before it are unregistered again.
 */
static void kpk_register_array_rollback(struct kunit *test)
{
	struct kpk_probe *a = kpk_new(0), *b = kpk_new(1);
	struct kpk_probe *bad = kpk_new(2), *c = kpk_new(3);
	struct kprobe *kps[] = { &a->kp, &b->kp, &bad->kp, &c->kp };
	int i, ret;

	a->kp.addr = (kprobe_opcode_t *)kpt_func_a;
	b->kp.addr = (kprobe_opcode_t *)kpt_func_b;
	bad->kp.symbol_name = "kpk_no_such_symbol";
	c->kp.addr = (kprobe_opcode_t *)kpt_func_c;

	ret = register_kprobes(kps, ARRAY_SIZE(kps));
	if (!ret)
		for (i = 0; i < ARRAY_SIZE(kps); i++)
			kpk_track(test, kps[i]);
	KUNIT_ASSERT_EQ(test, ret, -ENOENT);
	kpt_func_a(0);
	kpt_func_b(0);
	kpt_func_c(0);
	KUNIT_EXPECT_EQ(test, kpk_hits(a), 0);
	KUNIT_EXPECT_EQ(test, kpk_hits(b), 0);
	KUNIT_EXPECT_EQ(test, kpk_hits(c), 0);

	/*
	 * Nothing of them stayed behind: each registers again on its own.
	 * Like any unregistered probe, the caller resets its flags first:
	 * upstream leaves KPROBE_FLAG_DISABLED set on unregistration.
	 */
	a->kp.flags = 0;
	b->kp.flags = 0;
	KUNIT_ASSERT_EQ(test, kpk_register(test, a), 0);
	KUNIT_ASSERT_EQ(test, kpk_register(test, b), 0);
	KUNIT_ASSERT_EQ(test, kpk_register(test, c), 0);
	kpt_func_a(0);
	kpt_func_b(0);
	kpt_func_c(0);
	KUNIT_EXPECT_EQ(test, kpk_hits(a), 1);
	KUNIT_EXPECT_EQ(test, kpk_hits(b), 1);
	KUNIT_EXPECT_EQ(test, kpk_hits(c), 1);
	kpk_unregister(test, a);
	kpk_unregister(test, b);
	kpk_unregister(test, c);
}

#ifdef KPT_ASM_TARGETS
static int kpk_many_pre(struct kprobe *kp, struct pt_regs *regs)
{
	atomic_inc(&kpk_many_hits);
	return 0;
}

static void kpk_many_call(void)
{
	int i;

	for (i = 0; i < KPT_NMANY; i++)
		kpt_many[i](i);
}

/*
 * The same with KPT_NMANY probes on as many functions and the bad one (in
 * the middle of an instruction) in the middle of the array: none of the
 * others fires, or stays registered, and the array registers whole once
 * the bad probe is fixed.
 */
static void kpk_register_many_rollback(struct kunit *test)
{
	const int bad = KPT_NMANY / 2;
	int i, ret;

	for (i = 0; i < KPT_NMANY; i++) {
		memset(&kpk_many[i], 0, sizeof(kpk_many[i]));
		kpk_many[i].addr = (kprobe_opcode_t *)kpt_many[i];
		kpk_many[i].pre_handler = kpk_many_pre;
		kpk_many_ptrs[i] = &kpk_many[i];
	}
	/* Inside the first instruction of kpt_many[bad]. */
	kpk_many[bad].addr = (kprobe_opcode_t *)((unsigned long)kpt_many[bad] +
						 KPT_NOT_BOUNDARY);
	atomic_set(&kpk_many_hits, 0);

	ret = register_kprobes(kpk_many_ptrs, KPT_NMANY);
	kpk_many_live = !ret;
	KUNIT_ASSERT_EQ(test, ret, kpk_not_boundary_err());
	kpk_many_call();
	KUNIT_EXPECT_EQ(test, atomic_read(&kpk_many_hits), 0);
	KUNIT_EXPECT_PTR_EQ(test, (void *)kpk_many[0].addr, (void *)kpt_many[0]);
	KUNIT_EXPECT_PTR_EQ(test, (void *)kpk_many[KPT_NMANY - 1].addr,
			    (void *)kpt_many[KPT_NMANY - 1]);

	/* As after any failed registration, the caller resets the flags. */
	for (i = 0; i < KPT_NMANY; i++)
		kpk_many[i].flags = 0;
	kpk_many[bad].addr = (kprobe_opcode_t *)kpt_many[bad];
	ret = register_kprobes(kpk_many_ptrs, KPT_NMANY);
	kpk_many_live = !ret;
	KUNIT_ASSERT_EQ(test, ret, 0);
	kpk_many_call();
	KUNIT_EXPECT_EQ(test, atomic_read(&kpk_many_hits), KPT_NMANY);
	unregister_kprobes(kpk_many_ptrs, KPT_NMANY);
	kpk_many_live = false;
	kpk_many_call();
	KUNIT_EXPECT_EQ(test, atomic_read(&kpk_many_hits), KPT_NMANY);
	kpk_expect_healthy(test, kpt_many[bad]);
}
#else
static void kpk_register_many_rollback(struct kunit *test)
{
	kunit_skip(test, "no hand-written targets here: kpt_many[] (kpt_asm.S, kpt_asm_arm64.S)");
}
#endif

static void kpk_enable_disable(struct kunit *test)
{
	struct kpk_probe *p = kpk_new(0);

	p->kp.addr = (kprobe_opcode_t *)kpt_func_b;
	KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
	kpt_func_b(0);
	KUNIT_EXPECT_EQ(test, kpk_hits(p), 1);

	KUNIT_EXPECT_EQ(test, disable_kprobe(&p->kp), 0);
	KUNIT_EXPECT_TRUE(test, p->kp.flags & KPROBE_FLAG_DISABLED);
	kpt_func_b(0);
	kpt_func_b(0);
	KUNIT_EXPECT_EQ(test, kpk_hits(p), 1);

	KUNIT_EXPECT_EQ(test, enable_kprobe(&p->kp), 0);
	KUNIT_EXPECT_FALSE(test, p->kp.flags & KPROBE_FLAG_DISABLED);
	kpt_func_b(0);
	KUNIT_EXPECT_EQ(test, kpk_hits(p), 2);
	kpk_unregister(test, p);
}

static void kpk_register_disabled(struct kunit *test)
{
	struct kpk_probe *p = kpk_new(0);

	p->kp.addr = (kprobe_opcode_t *)kpt_func_c;
	p->kp.flags = KPROBE_FLAG_DISABLED;
	KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
	kpt_func_c(0);
	kpt_func_c(0);
	KUNIT_EXPECT_EQ(test, kpk_hits(p), 0);

	KUNIT_EXPECT_EQ(test, enable_kprobe(&p->kp), 0);
	kpt_func_c(0);
	KUNIT_EXPECT_EQ(test, kpk_hits(p), 1);
	kpk_unregister(test, p);
}

/*
 * Register on @fn by address, note where the probe went, unregister:
 * a probe by name must land at the same place.
 */
static kprobe_opcode_t *kpk_addr_of(struct kunit *test, int (*fn)(int))
{
	struct kpk_probe *p = kpk_new(KPK_NPROBES - 1);
	kprobe_opcode_t *addr;

	p->kp.addr = (kprobe_opcode_t *)fn;
	if (kpk_register(test, p))
		return NULL;
	addr = p->kp.addr;
	kpk_unregister(test, p);
	return addr;
}

/*
 * Where a probe on @fn's name lands: where one by address does, except on
 * ppc64 ELFv2 (kpt_entry()).
 */
static kprobe_opcode_t *kpk_name_lands(struct kunit *test, int (*fn)(int))
{
	if (IS_ENABLED(CONFIG_PPC64_ELF_ABI_V2))
		return kpt_entry(fn);
	return kpk_addr_of(test, fn);
}

static void kpk_by_symbol(struct kunit *test)
{
	kprobe_opcode_t *want = kpk_name_lands(test, kpt_func_d);
	struct kpk_probe *p = kpk_new(0);

	KUNIT_ASSERT_NOT_NULL(test, want);
	p->kp.symbol_name = "kpt_func_d";
	KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
	KUNIT_EXPECT_PTR_EQ(test, p->kp.addr, want);
	kpt_func_d(0);
	KUNIT_EXPECT_EQ(test, kpk_hits(p), 1);
	kpk_unregister(test, p);
}

static void kpk_by_symbol_offset(struct kunit *test)
{
#ifdef KPT_ASM_TARGETS
	unsigned long insn = kpt_label_addr(KPT_L_ADD_INSN);
	struct kpk_probe *p = kpk_new(0);

	p->kp.symbol_name = "kpt_asm_add";
	p->kp.offset = insn - (unsigned long)kpt_asm_add;
	KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
	KUNIT_EXPECT_EQ(test, (unsigned long)p->kp.addr, insn);
	KUNIT_EXPECT_EQ(test, kpt_asm_add(1), 1 + KPT_ADD_IMM);
	KUNIT_EXPECT_EQ(test, kpk_hits(p), 1);
	kpk_unregister(test, p);
#else
	kunit_skip(test, "no hand-written targets here: kpt_asm_add (kpt_asm.S, kpt_asm_arm64.S)");
#endif
}

static void kpk_by_module_symbol(struct kunit *test)
{
	kprobe_opcode_t *want = kpk_name_lands(test, kpt_func_e);
	struct kpk_probe *p = kpk_new(0);

	KUNIT_ASSERT_NOT_NULL(test, want);
	p->kp.symbol_name = KPT_MODNAME ":kpt_func_e";
	KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
	KUNIT_EXPECT_PTR_EQ(test, p->kp.addr, want);
	kpt_func_e(0);
	kpt_func_e(0);
	KUNIT_EXPECT_EQ(test, kpk_hits(p), 2);
	kpk_unregister(test, p);
}

static struct kunit_case kpk_api_cases[] = {
	KUNIT_CASE(kpk_register_unregister),
	KUNIT_CASE(kpk_register_array),
	KUNIT_CASE(kpk_register_array_rollback),
	KUNIT_CASE_SLOW(kpk_register_many_rollback),
	KUNIT_CASE(kpk_enable_disable),
	KUNIT_CASE(kpk_register_disabled),
	KUNIT_CASE(kpk_by_symbol),
	KUNIT_CASE(kpk_by_symbol_offset),
	KUNIT_CASE(kpk_by_module_symbol),
	{}
};

static struct kunit_suite kpk_api_suite = {
	.name = "kprobes_api",
	.init = kpk_init,
	.exit = kpk_exit,
	.test_cases = kpk_api_cases,
};

/* ---------------------------------------------------------------------
 * Bad input
 */

static void kpk_err_addr_and_symbol(struct kunit *test)
{
	struct kpk_probe *p = kpk_new(0);

	p->kp.addr = (kprobe_opcode_t *)kpt_func_f;
	p->kp.symbol_name = "kpt_func_f";
	KUNIT_EXPECT_EQ(test, kpk_register(test, p), -EINVAL);
	kpk_expect_healthy(test, kpt_func_f);
}

static void kpk_err_no_location(struct kunit *test)
{
	struct kpk_probe *p = kpk_new(0);

	KUNIT_EXPECT_EQ(test, kpk_register(test, p), -EINVAL);
	kpk_expect_healthy(test, kpt_func_f);
}

static void kpk_err_unknown_symbol(struct kunit *test)
{
	static const char * const names[] = {
		"kpk_no_such_symbol",
		KPT_MODNAME ":kpk_no_such_symbol",
		"kpk_no_such_module:kpt_func_f",
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		struct kpk_probe *p = kpk_new(0);

		p->kp.symbol_name = names[i];
		KUNIT_EXPECT_EQ_MSG(test, kpk_register(test, p), -ENOENT,
				    "symbol %s", names[i]);
	}
	kpk_expect_healthy(test, kpt_func_f);
}

/*
 * One byte into a function: on x86-64 kpt_asm_add starts with a two-byte
 * mov (or with a four-byte endbr64 when IBT is on), a C function with its
 * five-byte ftrace call site (or endbr64); on arm64 every instruction
 * takes four bytes (kpt_asm_add's first is a mov, a C function's the
 * first of ftrace's two patchable ones).  Neither is an instruction
 * boundary.
 */
static void kpk_err_not_boundary(struct kunit *test)
{
#ifdef KPT_ASM_TARGETS
	struct kpk_probe *p = kpk_new(0);

	p->kp.addr = (kprobe_opcode_t *)((unsigned long)kpt_asm_add + 1);
	KUNIT_EXPECT_EQ(test, kpk_register(test, p), kpk_not_boundary_err());

	p = kpk_new(0);
	p->kp.symbol_name = "kpt_func_f";
	p->kp.offset = 1;
	KUNIT_EXPECT_EQ(test, kpk_register(test, p), kpk_not_boundary_err());
	kpk_expect_healthy(test, kpt_func_f);
#else
	kunit_skip(test, "no hand-written targets here: kpt_asm_add (kpt_asm.S, kpt_asm_arm64.S)");
#endif
}

#ifdef KPT_ASM_TARGETS
/* A probe at @addr is refused with @err. */
static void kpk_expect_err_at(struct kunit *test, unsigned long addr, int err)
{
	struct kpk_probe *p = kpk_new(0);

	p->kp.addr = (kprobe_opcode_t *)addr;
	KUNIT_EXPECT_EQ_MSG(test, kpk_register(test, p), err, "at %pS",
			    (void *)addr);
}
#endif

/*
 * Sites the kernel rewrites or finds by address, in kprobes_target.ko: a
 * jump label and a static call site, at their first byte and one byte in
 * (-EBUSY; upstream says -EINVAL), and a WARN's trap (-EINVAL; arm64's is
 * a BRK #0x800).  Each function still works afterwards.  Static calls are
 * patched inline only where CONFIG_HAVE_STATIC_CALL_INLINE is (x86-64;
 * not arm64 6.12, whose static calls are plain pointer calls): elsewhere
 * the case says so and checks the rest.
 */
static void kpk_err_reserved_text(struct kunit *test)
{
#ifdef KPT_ASM_TARGETS
	unsigned long jump = kpt_reserved_site(KPT_SITE_JUMP);
	unsigned long call = kpt_reserved_site(KPT_SITE_CALL);
	unsigned long bug = kpt_reserved_site(KPT_SITE_BUG);
	int busy = upstream ? -EINVAL : -EBUSY;

	KUNIT_ASSERT_EQ(test, !jump, !IS_ENABLED(CONFIG_JUMP_LABEL));
	KUNIT_ASSERT_EQ(test, !call, !IS_ENABLED(CONFIG_HAVE_STATIC_CALL_INLINE));
	KUNIT_ASSERT_NE(test, bug, 0);
	if (jump) {
		kpk_expect_err_at(test, jump, busy);
		kpk_expect_err_at(test, jump + 1, busy);
	} else {
		kunit_info(test, "no jump labels in this kernel (CONFIG_JUMP_LABEL)\n");
	}
	if (call) {
		kpk_expect_err_at(test, call, busy);
		kpk_expect_err_at(test, call + 4, busy);
	} else {
		kunit_info(test, "no inline static call sites in this kernel (CONFIG_HAVE_STATIC_CALL_INLINE)\n");
	}
	kpk_expect_err_at(test, bug, -EINVAL);
	KUNIT_EXPECT_EQ(test, kpt_static_fn(1), 2);
	KUNIT_EXPECT_EQ(test, kpt_call_fn(1), 5);
	KUNIT_EXPECT_EQ(test, kpt_warn_fn(1), 4);
#else
	kunit_skip(test, "no hand-written targets here (kpt_asm.S, kpt_asm_arm64.S)");
#endif
}

static void kpk_err_not_text(struct kunit *test)
{
	struct kpk_probe *p = kpk_new(0);

	p->kp.addr = (kprobe_opcode_t *)(unsigned long)&jiffies;
	KUNIT_EXPECT_EQ(test, kpk_register(test, p), -EINVAL);

	p = kpk_new(0);
	p->kp.addr = (kprobe_opcode_t *)&kpt_data;
	KUNIT_EXPECT_EQ(test, kpk_register(test, p), -EINVAL);
	kpk_expect_healthy(test, kpt_func_f);
}

/*
 * vmlinux's init text is freed once the kernel has booted: start_kernel()
 * is __init, so kallsyms still names it but its text is gone.  A probe on
 * it is refused as text that cannot be probed.
 */
static void kpk_err_init_text(struct kunit *test)
{
	struct kpk_probe *p = kpk_new(0);

	p->kp.symbol_name = "start_kernel";
	KUNIT_EXPECT_EQ(test, kpk_register(test, p), -EINVAL);
	kpk_expect_healthy(test, kpt_func_f);
}

static void kpk_err_register_twice(struct kunit *test)
{
	struct kpk_probe *p;

	if (upstream)
		kunit_skip(test,
			   "upstream WARNs on re-registration; ours returns -EINVAL without a splat");

	p = kpk_new(0);
	p->kp.addr = (kprobe_opcode_t *)kpt_func_f;
	KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
	KUNIT_EXPECT_EQ(test, register_kprobe(&p->kp), -EINVAL);
	/* Still registered once, and only once. */
	kpt_func_f(0);
	KUNIT_EXPECT_EQ(test, kpk_hits(p), 1);
	kpk_unregister(test, p);
	kpt_func_f(0);
	KUNIT_EXPECT_EQ(test, kpk_hits(p), 1);
	kpk_expect_healthy(test, kpt_func_f);
}

static void kpk_err_unregister_unregistered(struct kunit *test)
{
	struct kpk_probe *p = kpk_new(0), *other = kpk_new(1);

	/* Never registered: unregistering it only clears its address. */
	p->kp.addr = (kprobe_opcode_t *)kpt_func_f;
	unregister_kprobe(&p->kp);
	KUNIT_EXPECT_NULL(test, p->kp.addr);

	/* Same, at an address where another probe is registered. */
	other->kp.addr = (kprobe_opcode_t *)kpt_func_f;
	KUNIT_ASSERT_EQ(test, kpk_register(test, other), 0);
	p = kpk_new(0);
	p->kp.addr = other->kp.addr;
	unregister_kprobe(&p->kp);
	KUNIT_EXPECT_NULL(test, p->kp.addr);
	kpt_func_f(0);
	KUNIT_EXPECT_EQ(test, kpk_hits(other), 1);
	KUNIT_EXPECT_EQ(test, kpk_hits(p), 0);
	kpk_unregister(test, other);

	/* And unregistering twice is as quiet. */
	unregister_kprobe(&other->kp);
	KUNIT_EXPECT_NULL(test, other->kp.addr);
	kpk_expect_healthy(test, kpt_func_f);
}

/*
 * unregister_kprobes() with a probe that was never registered among
 * registered ones: the registered ones go, the stranger only has its
 * address cleared, and nothing complains.
 */
static void kpk_err_batch_unregistered(struct kunit *test)
{
	struct kpk_probe *a = kpk_new(0), *stranger = kpk_new(1), *b = kpk_new(2);
	struct kprobe *kps[] = { &a->kp, &stranger->kp, &b->kp };
	struct kprobe *reg[] = { &a->kp, &b->kp };

	a->kp.addr = (kprobe_opcode_t *)kpt_func_e;
	b->kp.addr = (kprobe_opcode_t *)kpt_func_f;
	stranger->kp.addr = (kprobe_opcode_t *)kpt_func_f;
	KUNIT_ASSERT_EQ(test, register_kprobes(reg, ARRAY_SIZE(reg)), 0);
	kpk_track(test, &a->kp);
	kpk_track(test, &b->kp);
	kpt_func_e(0);
	kpt_func_f(0);
	KUNIT_EXPECT_EQ(test, kpk_hits(a), 1);
	KUNIT_EXPECT_EQ(test, kpk_hits(b), 1);

	unregister_kprobes(kps, ARRAY_SIZE(kps));
	kpk_untrack(test, &a->kp);
	kpk_untrack(test, &b->kp);
	KUNIT_EXPECT_NULL(test, stranger->kp.addr);
	kpt_func_e(0);
	kpt_func_f(0);
	KUNIT_EXPECT_EQ(test, kpk_hits(a), 1);
	KUNIT_EXPECT_EQ(test, kpk_hits(b), 1);
	KUNIT_EXPECT_EQ(test, kpk_hits(stranger), 0);
	kpk_expect_healthy(test, kpt_func_e);
	kpk_expect_healthy(test, kpt_func_f);
}

/*
 * enable_kprobe() and disable_kprobe() on a probe that is not registered
 * (never, or no more): -EINVAL, and the function stays unprobed.
 */
static void kpk_err_enable_unregistered(struct kunit *test)
{
	struct kpk_probe *p = kpk_new(0);

	p->kp.addr = (kprobe_opcode_t *)kpt_func_f;
	KUNIT_EXPECT_EQ(test, enable_kprobe(&p->kp), -EINVAL);
	KUNIT_EXPECT_EQ(test, disable_kprobe(&p->kp), -EINVAL);

	KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
	kpk_unregister(test, p);
	KUNIT_EXPECT_EQ(test, enable_kprobe(&p->kp), -EINVAL);
	KUNIT_EXPECT_EQ(test, disable_kprobe(&p->kp), -EINVAL);
	kpt_func_f(0);
	KUNIT_EXPECT_EQ(test, kpk_hits(p), 0);
	kpk_expect_healthy(test, kpt_func_f);
}

static struct kunit_case kpk_err_cases[] = {
	KUNIT_CASE(kpk_err_addr_and_symbol),
	KUNIT_CASE(kpk_err_no_location),
	KUNIT_CASE(kpk_err_unknown_symbol),
	KUNIT_CASE(kpk_err_not_boundary),
	KUNIT_CASE(kpk_err_not_text),
	KUNIT_CASE(kpk_err_init_text),
	KUNIT_CASE(kpk_err_reserved_text),
	KUNIT_CASE(kpk_err_register_twice),
	KUNIT_CASE(kpk_err_unregister_unregistered),
	KUNIT_CASE(kpk_err_batch_unregistered),
	KUNIT_CASE(kpk_err_enable_unregistered),
	{}
};

static struct kunit_suite kpk_err_suite = {
	.name = "kprobes_errors",
	.init = kpk_init,
	.exit = kpk_exit,
	.test_cases = kpk_err_cases,
};

/* ---------------------------------------------------------------------
 * Handlers
 */

#ifdef KPT_ASM_TARGETS
static int kpk_pre_note(struct kprobe *kp, struct pt_regs *regs)
{
	struct kpk_probe *p = container_of(kp, struct kpk_probe, kp);

	p->pre_ax = regs_return_value(regs);
	p->pre_ip = instruction_pointer(regs);
	p->pre_seq = atomic_inc_return(&kpk_seq);
	atomic_inc(&p->pre_hits);
	return 0;
}

static void kpk_post_note(struct kprobe *kp, struct pt_regs *regs,
			  unsigned long flags)
{
	struct kpk_probe *p = container_of(kp, struct kpk_probe, kp);

	p->post_ax = regs_return_value(regs);
	p->post_ip = instruction_pointer(regs);
	p->post_seq = atomic_inc_return(&kpk_seq);
	atomic_inc(&p->post_hits);
}
#endif

/*
 * The probe sits on the add of kpt_asm_add (x86-64: "addl $KPT_ADD_IMM,
 * %eax"; arm64: "add w0, w0, w1", stepped out of line): the pre_handler
 * sees the return register before the add, with the ip on the breakpoint
 * (KPT_BP_IP_DELTA), the post_handler after it, with the ip on the next
 * instruction.
 */
static void kpk_post_handler(struct kunit *test)
{
#ifdef KPT_ASM_TARGETS
	struct kpk_probe *p = kpk_new(0);
	unsigned long insn = kpt_label_addr(KPT_L_ADD_INSN);

	p->kp.addr = (kprobe_opcode_t *)insn;
	p->kp.pre_handler = kpk_pre_note;
	p->kp.post_handler = kpk_post_note;
	KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
	KUNIT_EXPECT_EQ(test, kpt_asm_add(100), 100 + KPT_ADD_IMM);
	kpk_unregister(test, p);

	KUNIT_EXPECT_EQ(test, kpk_hits(p), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->post_hits), 1);
	KUNIT_EXPECT_LT(test, p->pre_seq, p->post_seq);
	KUNIT_EXPECT_EQ(test, (u32)p->pre_ax, 100U);
	KUNIT_EXPECT_EQ(test, (u32)p->post_ax, 100U + KPT_ADD_IMM);
	KUNIT_EXPECT_EQ(test, p->pre_ip, insn + KPT_BP_IP_DELTA);
	KUNIT_EXPECT_EQ(test, p->post_ip, kpt_label_addr(KPT_L_ADD_NEXT));
#else
	kunit_skip(test, "no hand-written targets here: kpt_asm_add (kpt_asm.S, kpt_asm_arm64.S)");
#endif
}

/* On entry of kpt_ret_a, continue in kpt_ret_b instead. */
static int kpk_pre_divert(struct kprobe *kp, struct pt_regs *regs)
{
	struct kpk_probe *p = container_of(kp, struct kpk_probe, kp);

	atomic_inc(&p->pre_hits);
	kpt_divert(regs, (unsigned long)kpt_ret_b);
	return 1;
}

/*
 * Where the kernel has kprobes on ftrace, the entry of kpt_ret_a is an
 * ftrace site (the list says [FTRACE]).  Either way the probe is carried
 * by kprobes' ftrace_ops, which must honour the redirection (as
 * fail_function and BPF's override rely on); with a post_handler a
 * second ops claims IPMODIFY on the function.  Elsewhere (arm64) the entry
 * is a breakpoint site; without a post_handler, where the kernel
 * optimizes probes, the case waits until it is [OPTIMIZED]: the jump's
 * detour must honour the redirection too, except a bridged backend's,
 * which cannot and ignores it whole (kernel/kprobes/bridge_opt.c).  The
 * post_handler never runs: the pre_handler returned 1.
 */
static void kpk_change_path_with(struct kunit *test, bool post)
{
	struct kpk_probe *p = kpk_new(0);
	int state;
	u64 want = KPT_RET_B;

	KUNIT_ASSERT_EQ(test, kpt_ret_a(), KPT_RET_A);
	/* By name: the entry as the architecture sees it (kpk_by_symbol). */
	p->kp.symbol_name = KPT_MODNAME ":kpt_ret_a";
	p->kp.pre_handler = kpk_pre_divert;
	if (post)
		p->kp.post_handler = kpk_post_count;
	KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
	if (IS_ENABLED(CONFIG_KPROBES_ON_FTRACE)) {
		state = kpt_probe_state((unsigned long)p->kp.addr);
		KUNIT_EXPECT_TRUE_MSG(test, state >= 0 && (state & KPT_PS_FTRACE),
				      "%pS: not an ftrace site (list state %d)",
				      p->kp.addr, state);
	} else if (!post && kpt_optimization_get() == 1) {
		state = kpt_wait_probe_state((unsigned long)p->kp.addr,
					     KPT_PS_OPTIMIZED, KPT_PS_OPTIMIZED,
					     5000);
		KUNIT_EXPECT_TRUE_MSG(test, state > 0 && (state & KPT_PS_OPTIMIZED),
				      "%pS: not optimized (list state %d)",
				      p->kp.addr, state);
		/*
		 * A bridged backend's detour (arm, powerpc) cannot follow
		 * the redirection; the documented way to change the path
		 * there is a post_handler (kpk_change_path).
		 */
		if (IS_ENABLED(CONFIG_KPROBES_BRIDGE) && state > 0 &&
		    (state & KPT_PS_OPTIMIZED))
			want = KPT_RET_A;
	}
	KUNIT_EXPECT_EQ(test, kpt_ret_a(), want);
	KUNIT_EXPECT_EQ(test, kpt_ret_a(), want);
	kpk_unregister(test, p);
	KUNIT_EXPECT_EQ(test, kpk_hits(p), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->post_hits), 0);
	KUNIT_EXPECT_EQ(test, kpt_ret_a(), KPT_RET_A);
}

static void kpk_change_path(struct kunit *test)
{
	kpk_change_path_with(test, true);
}

static void kpk_change_path_no_post(struct kunit *test)
{
	kpk_change_path_with(test, false);
}

/*
 * A probe on an ftrace site that is disabled or unregistered leaves its
 * address in ftrace's filter for a while (ours: ftrace_lazy_work in
 * kernel/kprobes/ftrace.c).  Calls in that time run no handler and count no
 * miss, and the probe enabled, or registered there again, at once fires
 * at once, and still fires once the addresses left behind have been
 * taken out of the filter.
 */
static void kpk_ftrace_rearm(struct kunit *test)
{
	struct kpk_probe *p;
	int round;

	/* What earlier cases left in ftrace's filter is out by then. */
	msleep(300);
	for (round = 0; round < 3; round++) {
		p = kpk_new(0);
		p->kp.addr = (kprobe_opcode_t *)kpt_ret_a;
		KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
		KUNIT_EXPECT_EQ(test, kpt_ret_a(), KPT_RET_A);
		KUNIT_EXPECT_EQ(test, kpk_hits(p), 1);
		KUNIT_EXPECT_EQ(test, disable_kprobe(&p->kp), 0);
		KUNIT_EXPECT_EQ(test, kpt_ret_a(), KPT_RET_A);
		KUNIT_EXPECT_EQ(test, kpk_hits(p), 1);
		KUNIT_EXPECT_EQ(test, enable_kprobe(&p->kp), 0);
		KUNIT_EXPECT_EQ(test, kpt_ret_a(), KPT_RET_A);
		KUNIT_EXPECT_EQ(test, kpk_hits(p), 2);
		/* past the update that takes out what was left behind */
		msleep(300);
		KUNIT_EXPECT_EQ(test, kpt_ret_a(), KPT_RET_A);
		KUNIT_EXPECT_EQ(test, kpk_hits(p), 3);
		kpk_unregister(test, p);
		KUNIT_EXPECT_EQ(test, kpt_ret_a(), KPT_RET_A);
		KUNIT_EXPECT_EQ(test, kpk_hits(p), 3);
		KUNIT_EXPECT_EQ(test, p->kp.nmissed, 0UL);
	}
}

/*
 * Ours: a probe on a function's entry goes live as a call of kprobes'
 * own over ftrace's nop, and ftrace carries it a tenth of a second later
 * (kernel/kprobes/ftrace.c, "Entry probes go live at once"); unregistered
 * before that, the nop is back at once.  Upstream: ftrace carries it
 * from the start.  Either way every call is a hit.
 */
static void kpk_ftrace_entry_live(struct kunit *test)
{
#ifdef CONFIG_X86
	static const u8 nop5[] = { BYTES_NOP5 };
	struct kpk_probe *p;
	u8 *text;

	/* What earlier cases left in ftrace's filter is out by then. */
	msleep(300);
	p = kpk_new(0);
	p->kp.addr = (kprobe_opcode_t *)kpt_ret_a;
	KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
	text = (u8 *)p->kp.addr;
	KUNIT_EXPECT_EQ(test, text[0], CALL_INSN_OPCODE);
	if (!upstream)
		KUNIT_EXPECT_TRUE(test, kpt_site_ours(text));
	KUNIT_EXPECT_EQ(test, kpt_ret_a(), KPT_RET_A);
	KUNIT_EXPECT_EQ(test, kpk_hits(p), 1);
	kpk_unregister(test, p);
	KUNIT_EXPECT_EQ(test, text[0], nop5[0]);
	KUNIT_EXPECT_EQ(test, kpt_ret_a(), KPT_RET_A);
	KUNIT_EXPECT_EQ(test, kpk_hits(p), 1);

	p = kpk_new(0);
	p->kp.addr = (kprobe_opcode_t *)kpt_ret_a;
	KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
	KUNIT_EXPECT_EQ(test, kpt_ret_a(), KPT_RET_A);
	msleep(500);
	KUNIT_EXPECT_EQ(test, text[0], CALL_INSN_OPCODE);
	KUNIT_EXPECT_FALSE(test, kpt_site_ours(text));
	KUNIT_EXPECT_EQ(test, kpt_ret_a(), KPT_RET_A);
	KUNIT_EXPECT_EQ(test, kpk_hits(p), 2);
	kpk_unregister(test, p);
	KUNIT_EXPECT_EQ(test, kpt_ret_a(), KPT_RET_A);
	KUNIT_EXPECT_EQ(test, kpk_hits(p), 2);
	KUNIT_EXPECT_EQ(test, p->kp.nmissed, 0UL);
#else
	kunit_skip(test, "x86-only: the calls at an ftrace site");
#endif
}

#ifdef CONFIG_X86
/*
 * Out of memory, for one function's allocations only: a probe on
 * __kmalloc_noprof() whose pre_handler, in the test's own thread, sends
 * a call made from kpk_nomem_caller on into kpk_nomem_alloc(), which
 * returns NULL, as BPF's override and fail_function do.
 */
static struct task_struct *kpk_nomem_task;
static bool kpk_nomem_any_task;
/* The caller, and the function it may be inlined into (or NULL). */
static const char *kpk_nomem_caller, *kpk_nomem_caller_in;
static atomic_t kpk_nomem_failed;

static notrace noinline void *kpk_nomem_alloc(size_t size, gfp_t flags)
{
	return NULL;
}

/* Does @ret return into the function whose allocations fail? */
static bool kpk_nomem_from(unsigned long ret)
{
	char caller[64];	/* a handler's stack: the names compared are short */

	snprintf(caller, sizeof(caller), "%ps", (void *)ret);
	return !strcmp(caller, kpk_nomem_caller) ||
	       (kpk_nomem_caller_in && !strcmp(caller, kpk_nomem_caller_in));
}

static int kpk_nomem_pre(struct kprobe *kp, struct pt_regs *regs)
{
	unsigned long up;

	if (current != READ_ONCE(kpk_nomem_task) && !READ_ONCE(kpk_nomem_any_task))
		return 0;
	/* At the entry the stack holds the return address. */
	if (!kpk_nomem_from(*(unsigned long *)regs->sp)) {
		/*
		 * Or one frame up, where kmalloc_array() is an out-of-line
		 * copy (i386's gcc makes one per file): through the frame
		 * pointer the caller left.
		 */
		if (!IS_ENABLED(CONFIG_FRAME_POINTER) ||
		    get_kernel_nofault(up, (unsigned long *)regs->bp + 1) ||
		    !kpk_nomem_from(up))
			return 0;
	}
	atomic_inc(&kpk_nomem_failed);
	kpt_divert(regs, (unsigned long)kpk_nomem_alloc);
	return 1;
}

static struct kprobe kpk_nomem_kp = {
	.symbol_name = "__kmalloc_noprof",
	.pre_handler = kpk_nomem_pre,
};
#endif

/*
 * Unregistering an entry probe still armed by kprobes' own call (before
 * the hand-off to ftrace), with the ftrace side's allocations failing:
 * the nop is back at once and stays, no later call is a hit.  Nothing
 * for ftrace to update there, so nothing to allocate.  Upstream has no
 * such state (its probe is in ftrace's filter from the start): skipped.
 */
static void kpk_ftrace_disarm_nomem(struct kunit *test)
{
#ifdef CONFIG_X86
	static const u8 nop5[] = { BYTES_NOP5 };
	struct kpk_probe *p;
	u8 *text;

	if (upstream)
		kunit_skip(test, "upstream: an entry probe is in ftrace's filter from the start");
	msleep(300);
	KUNIT_ASSERT_EQ(test, register_kprobe(&kpk_nomem_kp), 0);
	p = kpk_new(0);
	p->kp.addr = (kprobe_opcode_t *)kpt_ret_a;
	if (kpk_register(test, p)) {
		unregister_kprobe(&kpk_nomem_kp);
		KUNIT_FAIL(test, "cannot register on kpt_ret_a");
		return;
	}
	text = (u8 *)p->kp.addr;
	KUNIT_EXPECT_TRUE(test, kpt_site_ours(text));
	KUNIT_EXPECT_EQ(test, kpt_ret_a(), KPT_RET_A);

	atomic_set(&kpk_nomem_failed, 0);
	kpk_nomem_caller = "kprobe_ftrace_sites_set_armed";
	WRITE_ONCE(kpk_nomem_task, current);
	kpk_unregister(test, p);
	WRITE_ONCE(kpk_nomem_task, NULL);
	unregister_kprobe(&kpk_nomem_kp);
	kunit_info(test, "allocations failed: %d", atomic_read(&kpk_nomem_failed));

	KUNIT_EXPECT_EQ(test, text[0], nop5[0]);
	KUNIT_EXPECT_EQ(test, kpt_ret_a(), KPT_RET_A);
	msleep(300);
	KUNIT_EXPECT_EQ(test, text[0], nop5[0]);
	KUNIT_EXPECT_EQ(test, kpt_ret_a(), KPT_RET_A);
	KUNIT_EXPECT_EQ(test, kpk_hits(p), 1);
#else
	kunit_skip(test, "x86-only: the call and nop at an ftrace site");
#endif
}

#ifdef CONFIG_X86
/* The calls to kpt_ret_b that another ftrace user sees. */
static atomic_t kpk_foreign_calls;

static void notrace kpk_foreign_cb(unsigned long ip, unsigned long parent_ip,
				   struct ftrace_ops *op,
				   struct ftrace_regs *fregs)
{
	atomic_inc(&kpk_foreign_calls);
}

/* Call kpt_ret_b @n times; expect the probe's @hits and the user's @calls. */
static void kpk_foreign_check(struct kunit *test, struct kpk_probe *p, int n,
			      int hits, int calls, const char *when)
{
	int i;

	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ(test, kpt_ret_b(), KPT_RET_B);
	KUNIT_EXPECT_EQ_MSG(test, kpk_hits(p) + (int)p->kp.nmissed, hits,
			    "the probe's hits and misses %s", when);
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&kpk_foreign_calls), calls,
			    "the other ftrace user's calls %s", when);
}
#endif

/*
 * The hand-off of an entry probe to ftrace fails (its allocation, in the
 * work item that makes it), while another ftrace user comes and goes on
 * the function: the probe's own call keeps working until a later
 * hand-off succeeds, and both see every call meanwhile.  Upstream has no
 * hand-off: skipped.
 */
static void kpk_ftrace_handoff_nomem(struct kunit *test)
{
#ifdef CONFIG_X86
	struct ftrace_ops *ops;
	struct kpk_probe *p;
	unsigned long end;
	u8 *text;
	int ret;

	if (upstream)
		kunit_skip(test, "upstream: an entry probe is in ftrace's filter from the start");
	ops = kunit_kzalloc(test, sizeof(*ops), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ops);
	ops->func = kpk_foreign_cb;
	KUNIT_ASSERT_EQ(test, ftrace_set_filter_ip(ops, (unsigned long)kpt_ret_b, 0, 0), 0);
	atomic_set(&kpk_foreign_calls, 0);
	msleep(300);
	/* registered before (kpk_ftrace_disarm_nomem): by its name again */
	kpk_nomem_kp.addr = NULL;
	kpk_nomem_kp.flags = 0;
	KUNIT_ASSERT_EQ(test, register_kprobe(&kpk_nomem_kp), 0);
	atomic_set(&kpk_nomem_failed, 0);
	kpk_nomem_caller = "kprobe_ftrace_call_hand_off";
	kpk_nomem_caller_in = "kprobe_ftrace_lazy_fn";
	WRITE_ONCE(kpk_nomem_any_task, true);

	p = kpk_new(0);
	p->kp.addr = (kprobe_opcode_t *)kpt_ret_b;
	if (kpk_register(test, p)) {
		KUNIT_FAIL(test, "cannot register on kpt_ret_b");
		goto out;
	}
	text = (u8 *)p->kp.addr;
	KUNIT_EXPECT_TRUE(test, kpt_site_ours(text));
	ret = register_ftrace_function(ops);
	KUNIT_EXPECT_EQ(test, ret, 0);
	kpk_foreign_check(test, p, 5, 5, ret ? 0 : 5, "with it there");
	/* the hand-off, HZ / 10 after the registration, fails */
	msleep(300);
	kpk_foreign_check(test, p, 5, 10, ret ? 0 : 10, "after a failed hand-off");
	if (!ret)
		KUNIT_EXPECT_EQ(test, unregister_ftrace_function(ops), 0);
	kpk_foreign_check(test, p, 5, 15, ret ? 0 : 10, "once it left");
	kunit_info(test, "hand-offs failed: %d", atomic_read(&kpk_nomem_failed));
	KUNIT_EXPECT_GT(test, atomic_read(&kpk_nomem_failed), 0);

	/*
	 * The next one succeeds: ftrace's call replaces ours.  Its write goes
	 * through an int3 on the first byte, seen for as long as the write's
	 * cross-CPU syncs take: wait for the call itself.
	 */
	WRITE_ONCE(kpk_nomem_any_task, false);
	end = jiffies + 5 * HZ;
	while ((kpt_site_ours(text) || READ_ONCE(text[0]) != CALL_INSN_OPCODE) &&
	       time_before(jiffies, end))
		msleep(100);
	KUNIT_EXPECT_EQ(test, text[0], CALL_INSN_OPCODE);
	KUNIT_EXPECT_FALSE(test, kpt_site_ours(text));
	kpk_foreign_check(test, p, 5, 20, ret ? 0 : 10, "once handed off");
	kpk_unregister(test, p);
out:
	WRITE_ONCE(kpk_nomem_any_task, false);
	unregister_kprobe(&kpk_nomem_kp);
	kpk_nomem_caller_in = NULL;
	ftrace_free_filter(ops);
#else
	kunit_skip(test, "x86-only: the hand-off of entry probes armed by our call");
#endif
}

/*
 * cli, sti and popf (arm64: MSR DAIFSet, DAIFClr and DAIF, from
 * kpt_asm_arm64.S), each probed with a pre_handler alone and with a post
 * handler too: the interrupt mask ends up exactly as the instruction
 * leaves it, the pre_handler sees it as it was before, the post_handler
 * as it is after, with the ip on the next instruction.  Upstream's arm64
 * refuses the MSRs (-EINVAL): the case skips there, saying so.
 */
#ifdef KPT_ASM_TARGETS
static int kpk_if_pre, kpk_if_post;
static unsigned long kpk_if_post_ip;

#ifdef CONFIG_X86
#define KPK_IF_INSN_LEN		1
#define KPK_IF_BITS		X86_EFLAGS_IF
static bool kpk_if_regs_on(struct pt_regs *regs)
{
	return regs->flags & X86_EFLAGS_IF;
}

static unsigned long kpk_if_save(void)
{
	return native_save_fl();
}
#else
#define KPK_IF_INSN_LEN		AARCH64_INSN_SIZE
/* Masked when set: what popf "without IF" sets, and "with IF" clears. */
#define KPK_IF_BITS		(PSR_I_BIT | PSR_F_BIT)
static bool kpk_if_regs_on(struct pt_regs *regs)
{
	return !(regs->pstate & PSR_I_BIT);
}

static unsigned long kpk_if_save(void)
{
	return read_sysreg(daif);
}
#endif

static int kpk_pre_if(struct kprobe *kp, struct pt_regs *regs)
{
	kpk_if_pre = kpk_if_regs_on(regs);
	return kpk_pre_count(kp, regs);
}

static void kpk_post_if(struct kprobe *kp, struct pt_regs *regs,
			unsigned long flags)
{
	kpk_if_post = kpk_if_regs_on(regs);
	kpk_if_post_ip = instruction_pointer(regs);
	kpk_post_count(kp, regs, flags);
}

enum { KPK_CLI, KPK_STI, KPK_POPF_OFF, KPK_POPF_ON };

/* kpt_asm_popf()'s argument: the flags now, with interrupts off or on. */
static unsigned long kpk_if_popf_arg(unsigned long fl, bool on)
{
	if (IS_ENABLED(CONFIG_X86))
		return on ? fl | KPK_IF_BITS : fl & ~KPK_IF_BITS;
	return on ? fl & ~KPK_IF_BITS : fl | KPK_IF_BITS;
}

/*
 * Run instruction @what with interrupts on (cli, popf of flags without
 * IF) or off (sti, popf of flags with IF); say whether they are on after
 * it.  Whatever the instruction did behind lockdep's back, leave with
 * interrupts on and lockdep told so.
 */
static bool kpk_if_run(int what)
{
	unsigned long fl = kpk_if_save();
	bool on;

	switch (what) {
	case KPK_CLI:
		kpt_asm_cli();
		break;
	case KPK_STI:
		local_irq_disable();
		kpt_asm_sti();
		break;
	case KPK_POPF_OFF:
		kpt_asm_popf(kpk_if_popf_arg(fl, false));
		break;
	case KPK_POPF_ON:
		local_irq_disable();
		kpt_asm_popf(kpk_if_popf_arg(fl, true));
		break;
	}
	on = !irqs_disabled();
	local_irq_disable();
	local_irq_enable();
	return on;
}

/* Returns false when upstream's arm64 refused the probe. */
static bool kpk_if_one(struct kunit *test, int what, bool post)
{
	static const char * const names[] = { "cli", "sti", "popf (IF clear)",
					      "popf (IF set)" };
	bool want_on = what == KPK_STI || what == KPK_POPF_ON;
	struct kpk_probe *p = kpk_new(0);
	unsigned long at;
	int ret;

	at = what >= KPK_POPF_OFF ?
	     (unsigned long)kpt_asm_popf + kpt_asm_popf_off :
	     (unsigned long)(what == KPK_CLI ? kpt_asm_cli : kpt_asm_sti);
	p->kp.addr = (kprobe_opcode_t *)at;
	p->kp.pre_handler = kpk_pre_if;
	if (post)
		p->kp.post_handler = kpk_post_if;
	ret = kpk_register(test, p);
	if (upstream && IS_ENABLED(CONFIG_ARM64)) {
		KUNIT_EXPECT_EQ_MSG(test, ret, -EINVAL, "upstream: probe on %s",
				    names[what]);
		if (!ret)
			kpk_unregister(test, p);
		return false;
	}
	KUNIT_ASSERT_EQ_MSG(test, ret, 0, "probe on %s", names[what]);
	at = (unsigned long)p->kp.addr;
	kpk_if_pre = -1;
	kpk_if_post = -1;
	KUNIT_EXPECT_EQ_MSG(test, kpk_if_run(what), want_on,
			    "%s%s: interrupts %s after it", names[what],
			    post ? " with a post_handler" : "",
			    want_on ? "off" : "on");
	kpk_unregister(test, p);
	KUNIT_EXPECT_EQ_MSG(test, kpk_hits(p), 1, "%s", names[what]);
	KUNIT_EXPECT_EQ_MSG(test, kpk_if_pre, (int)!want_on,
			    "%s: interrupts on before it, as the pre_handler saw them",
			    names[what]);
	if (!post)
		return true;
	KUNIT_EXPECT_EQ(test, atomic_read(&p->post_hits), 1);
	KUNIT_EXPECT_EQ_MSG(test, kpk_if_post, (int)want_on,
			    "%s: interrupts on after it, as the post_handler saw them",
			    names[what]);
	KUNIT_EXPECT_EQ_MSG(test, kpk_if_post_ip, at + KPK_IF_INSN_LEN,
			    "%s: ip after it", names[what]);
	return true;
}
#endif

static void kpk_if_modifiers(struct kunit *test)
{
#ifdef KPT_ASM_TARGETS
	int what;

#ifdef CONFIG_ARM64
	/*
	 * The targets write DAIF, which local_irq_*() no longer does there:
	 * the I bit one leaves set would stay set for good.
	 */
	if (system_uses_irq_prio_masking())
		kunit_skip(test,
			   "interrupts are masked by GIC priority here (pseudo-NMI), not by DAIF");
#endif
	for (what = KPK_CLI; what <= KPK_POPF_ON; what++) {
		if (!kpk_if_one(test, what, false) ||
		    !kpk_if_one(test, what, true))
			kunit_skip(test,
				   "upstream arm64 refuses MSR to DAIF, DAIFSet and DAIFClr (-EINVAL)");
	}
#else
	kunit_skip(test,
		   "no hand-written targets here: cli, sti and popf (kpt_asm.S, kpt_asm_arm64.S)");
#endif
}

/*
 * A post_handler runs where the pre_handlers do (and upstream's run, from
 * #DB on x86-64, the second BRK on arm64): in NMI context where the
 * architecture's handlers run there (KPT_HANDLERS_IN_NMI), with
 * interrupts off and lockdep aware of that.  One that disables interrupts
 * (already off: only lockdep's view can change) must not leave lockdep
 * believing they are off once the probed code runs on with them on.
 */
#ifdef KPT_ASM_TARGETS
static bool kpk_ctx_nmi, kpk_ctx_irqs_off, kpk_ctx_lockdep_on;

static void kpk_post_ctx(struct kprobe *kp, struct pt_regs *regs,
			 unsigned long flags)
{
	unsigned long f;

	kpk_ctx_nmi = in_nmi();
	kpk_ctx_irqs_off = irqs_disabled();
	kpk_ctx_lockdep_on = lockdep_hardirqs_enabled();
	local_irq_save(f);
	local_irq_disable();
	local_irq_restore(f);
	kpk_post_count(kp, regs, flags);
}
#endif

static void kpk_post_context(struct kunit *test)
{
#ifdef KPT_ASM_TARGETS
	struct kpk_probe *p = kpk_new(0);
	bool lockdep_after;

	p->kp.addr = (kprobe_opcode_t *)kpt_label_addr(KPT_L_ADD_INSN);
	p->kp.post_handler = kpk_post_ctx;
	KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
	KUNIT_ASSERT_FALSE(test, irqs_disabled());
	KUNIT_EXPECT_EQ(test, kpt_asm_add(1), 1 + KPT_ADD_IMM);
	lockdep_after = lockdep_hardirqs_enabled();
	kpk_unregister(test, p);
	KUNIT_ASSERT_EQ(test, atomic_read(&p->post_hits), 1);
	KUNIT_EXPECT_EQ_MSG(test, kpk_ctx_nmi, KPT_HANDLERS_IN_NMI,
			    "post_handler in NMI context: %d", kpk_ctx_nmi);
	KUNIT_EXPECT_TRUE(test, kpk_ctx_irqs_off);
	if (!IS_ENABLED(CONFIG_PROVE_LOCKING))
		return;
	KUNIT_EXPECT_FALSE_MSG(test, kpk_ctx_lockdep_on,
			       "lockdep thinks interrupts are on in the post_handler");
	KUNIT_EXPECT_TRUE_MSG(test, lockdep_after,
			      "lockdep thinks interrupts are off after the probed instruction");
#else
	kunit_skip(test, "no hand-written targets here: kpt_asm_add (kpt_asm.S, kpt_asm_arm64.S)");
#endif
}

/*
 * Hits from every context a probed function runs in: a task, a softirq
 * (a timer_list callback), a hard interrupt (a hard hrtimer) and, on x86,
 * an NMI (sent to this CPU through its local APIC and taken by an NMI
 * handler of ours).  Each caller makes KPK_CTX_CALLS calls into the
 * targets, and each call must run each probe's handler once, counted
 * under the caller's context, with nothing missed.  Two probes: on
 * kpt_ctx_fn's entry (ftrace-based where the architecture has that: at
 * first kprobes' own call, until the hand-off) and, with the hand-written
 * targets, on the add inside kpt_asm_add (a breakpoint, stepped or
 * emulated).  The contexts run twice: right after registration, then
 * once the entry probe has settled.
 */
enum { KPK_IN_TASK, KPK_IN_SOFTIRQ, KPK_IN_HARDIRQ, KPK_IN_NMI, KPK_NCTX };
static const char * const kpk_ctx_name[KPK_NCTX] = {
	"task", "softirq", "hardirq", "NMI",
};

#define KPK_CTX_CALLS	8

/* Which context is calling (one at a time), and what the handlers saw. */
static int kpk_ctx_cur;
static atomic_t kpk_ctx_runs[2][KPK_NCTX];
static atomic_t kpk_ctx_rounds;		/* callers done */
static atomic_t kpk_ctx_wrong;		/* wrong results or context */
static atomic_t kpk_ctx_nmi_armed;

static int kpk_ctx_pre(struct kprobe *kp, struct pt_regs *regs)
{
	struct kpk_probe *p = container_of(kp, struct kpk_probe, kp);

	atomic_inc(&kpk_ctx_runs[p->id][READ_ONCE(kpk_ctx_cur)]);
	return 0;
}

static void kpk_ctx_call(int ctx, bool in_ctx)
{
	int i;

	WRITE_ONCE(kpk_ctx_cur, ctx);
	if (!in_ctx)
		atomic_inc(&kpk_ctx_wrong);
	for (i = 0; i < KPK_CTX_CALLS; i++) {
		if (kpt_ctx_fn(i) != i + 13)
			atomic_inc(&kpk_ctx_wrong);
#ifdef KPT_ASM_TARGETS
		if (kpt_asm_add(i) != i + KPT_ADD_IMM)
			atomic_inc(&kpk_ctx_wrong);
#endif
	}
	atomic_inc(&kpk_ctx_rounds);
}

static void kpk_ctx_timer(struct timer_list *t)
{
	kpk_ctx_call(KPK_IN_SOFTIRQ, in_serving_softirq());
}

static enum hrtimer_restart kpk_ctx_hrtimer(struct hrtimer *t)
{
	kpk_ctx_call(KPK_IN_HARDIRQ, in_hardirq());
	return HRTIMER_NORESTART;
}

#ifdef CONFIG_X86_LOCAL_APIC
static int kpk_ctx_nmi_call(unsigned int type, struct pt_regs *regs)
{
	if (!atomic_xchg(&kpk_ctx_nmi_armed, 0))
		return NMI_DONE;
	kpk_ctx_call(KPK_IN_NMI, in_nmi());
	return NMI_HANDLED;
}
#endif

/* Wait for the callers to have finished @want rounds in all. */
static bool kpk_ctx_wait(int want)
{
	unsigned long end = jiffies + msecs_to_jiffies(kpt_paced_ms(10000));

	while (atomic_read(&kpk_ctx_rounds) < want) {
		if (time_after(jiffies, end))
			return false;
		usleep_range(200, 400);
	}
	return true;
}

/* One round from each context there is here; returns the rounds made. */
static int kpk_ctx_pass(struct kunit *test, struct timer_list *tl,
			struct hrtimer *ht, bool nmi)
{
	int n = atomic_read(&kpk_ctx_rounds);

	kpk_ctx_call(KPK_IN_TASK, !in_interrupt());
	n++;
	mod_timer(tl, jiffies);
	KUNIT_EXPECT_TRUE_MSG(test, kpk_ctx_wait(++n), "no softirq round");
	hrtimer_start(ht, ns_to_ktime(10000), HRTIMER_MODE_REL_PINNED_HARD);
	KUNIT_EXPECT_TRUE_MSG(test, kpk_ctx_wait(++n), "no hardirq round");
#ifdef CONFIG_X86_LOCAL_APIC
	if (nmi) {
		atomic_set(&kpk_ctx_nmi_armed, 1);
		apic->send_IPI(raw_smp_processor_id(), NMI_VECTOR);
		KUNIT_EXPECT_TRUE_MSG(test, kpk_ctx_wait(++n), "no NMI round");
	}
#endif
	return n;
}

static void kpk_contexts(struct kunit *test)
{
	struct kpk_probe *p[2];
	struct timer_list tl;
	struct hrtimer ht;
	bool nmi = false;
	int i, c, np = 1, rounds;

	memset(kpk_ctx_runs, 0, sizeof(kpk_ctx_runs));
	atomic_set(&kpk_ctx_rounds, 0);
	atomic_set(&kpk_ctx_wrong, 0);
	atomic_set(&kpk_ctx_nmi_armed, 0);
	timer_setup_on_stack(&tl, kpk_ctx_timer, 0);
	hrtimer_init_on_stack(&ht, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
	ht.function = kpk_ctx_hrtimer;
#ifdef CONFIG_X86_LOCAL_APIC
	nmi = boot_cpu_has(X86_FEATURE_APIC) &&
	      !register_nmi_handler(NMI_LOCAL, kpk_ctx_nmi_call, 0, "kpk_ctx");
	KUNIT_EXPECT_TRUE_MSG(test, nmi, "no local APIC NMI here");
#else
	kunit_info(test, "no NMI this test can send on this architecture\n");
#endif
	/* All rounds from this CPU: the timers are pinned to it. */
	migrate_disable();
	p[0] = kpk_new(0);
	p[0]->kp.addr = (kprobe_opcode_t *)kpt_ctx_fn;
	p[0]->kp.pre_handler = kpk_ctx_pre;
#ifdef KPT_ASM_TARGETS
	p[1] = kpk_new(1);
	p[1]->kp.addr = (kprobe_opcode_t *)kpt_label_addr(KPT_L_ADD_INSN);
	p[1]->kp.pre_handler = kpk_ctx_pre;
	np = 2;
#endif
	for (i = 0; i < np; i++)
		KUNIT_ASSERT_EQ(test, kpk_register(test, p[i]), 0);
	rounds = kpk_ctx_pass(test, &tl, &ht, nmi);
	msleep(kpt_paced_ms(1000));
	rounds = kpk_ctx_pass(test, &tl, &ht, nmi);
	for (i = 0; i < np; i++)
		kpk_unregister(test, p[i]);
	migrate_enable();
	timer_shutdown_sync(&tl);
	destroy_timer_on_stack(&tl);
	hrtimer_cancel(&ht);
	destroy_hrtimer_on_stack(&ht);
#ifdef CONFIG_X86_LOCAL_APIC
	if (nmi)
		unregister_nmi_handler(NMI_LOCAL, "kpk_ctx");
#endif

	KUNIT_EXPECT_EQ(test, atomic_read(&kpk_ctx_rounds), rounds);
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&kpk_ctx_wrong), 0,
			    "calls that returned wrong, or ran outside their context");
	for (i = 0; i < np; i++) {
		KUNIT_EXPECT_EQ_MSG(test, p[i]->kp.nmissed, 0UL, "%pS",
				    p[i]->kp.addr);
		for (c = 0; c < KPK_NCTX; c++) {
			int want = c == KPK_IN_NMI && !nmi ? 0 : 2 * KPK_CTX_CALLS;

			KUNIT_EXPECT_EQ_MSG(test, atomic_read(&kpk_ctx_runs[i][c]),
					    want, "%pS, from %s context",
					    p[i]->kp.addr, kpk_ctx_name[c]);
		}
	}
}

/* Several probes at one address record the order they ran in. */
#define KPK_ORDER_MAX	16
static int kpk_order[KPK_ORDER_MAX];
static atomic_t kpk_norder;

static int kpk_pre_order(struct kprobe *kp, struct pt_regs *regs)
{
	struct kpk_probe *p = container_of(kp, struct kpk_probe, kp);
	int n = atomic_inc_return(&kpk_norder) - 1;

	if (n < KPK_ORDER_MAX)
		kpk_order[n] = p->id;
	atomic_inc(&p->pre_hits);
	return 0;
}

/*
 * Call the target once and compare the handlers' order with @want, the
 * ids in registration order.  Upstream runs them newest first (it adds
 * each new probe at the head of the list); ours in registration order.
 */
static void kpk_expect_order(struct kunit *test, const int *want, int n)
{
	int i;

	atomic_set(&kpk_norder, 0);
	kpt_func_c(0);
	KUNIT_ASSERT_EQ(test, atomic_read(&kpk_norder), n);
	for (i = 0; i < n; i++) {
		int w = upstream ? want[n - 1 - i] : want[i];

		KUNIT_EXPECT_EQ_MSG(test, kpk_order[i], w, "handler #%d", i);
	}
}

static void kpk_multi_probe(struct kunit *test)
{
	struct kpk_probe *p[4];
	int i;

	if (upstream)
		kunit_info(test, "upstream order is newest first\n");
	for (i = 0; i < ARRAY_SIZE(p); i++) {
		p[i] = kpk_new(i);
		p[i]->kp.addr = (kprobe_opcode_t *)kpt_func_c;
		p[i]->kp.pre_handler = kpk_pre_order;
	}
	for (i = 0; i < 3; i++)
		KUNIT_ASSERT_EQ(test, kpk_register(test, p[i]), 0);
	KUNIT_EXPECT_PTR_EQ(test, p[1]->kp.addr, p[0]->kp.addr);
	KUNIT_EXPECT_PTR_EQ(test, p[2]->kp.addr, p[0]->kp.addr);
	kpk_expect_order(test, (const int[]){ 0, 1, 2 }, 3);

	/* Disabling one leaves the others running. */
	KUNIT_EXPECT_EQ(test, disable_kprobe(&p[1]->kp), 0);
	kpk_expect_order(test, (const int[]){ 0, 2 }, 2);
	KUNIT_EXPECT_EQ(test, enable_kprobe(&p[1]->kp), 0);
	kpk_expect_order(test, (const int[]){ 0, 1, 2 }, 3);

	/* So does removing one, and adding one. */
	kpk_unregister(test, p[0]);
	kpk_expect_order(test, (const int[]){ 1, 2 }, 2);
	KUNIT_ASSERT_EQ(test, kpk_register(test, p[3]), 0);
	kpk_expect_order(test, (const int[]){ 1, 2, 3 }, 3);

	kpk_unregister(test, p[1]);
	kpk_unregister(test, p[2]);
	kpk_expect_order(test, (const int[]){ 3 }, 1);
	kpk_unregister(test, p[3]);
	kpk_expect_order(test, NULL, 0);
	KUNIT_EXPECT_EQ(test, kpk_hits(p[0]), 3);
	KUNIT_EXPECT_EQ(test, kpk_hits(p[1]), 4);
	KUNIT_EXPECT_EQ(test, kpk_hits(p[2]), 5);
	KUNIT_EXPECT_EQ(test, kpk_hits(p[3]), 2);
}

/*
 * Two probes on a function's entry once ftrace carries it (ours: the
 * ftrace handler's two-probe shortcut, kx_ftrace_duo()): both
 * pre_handlers on every call, in registration order (upstream: newest
 * first), one alone while the other is disabled; and no pre_handler after
 * one that redirects the call.
 */
static void kpk_ftrace_duo(struct kunit *test)
{
#ifdef CONFIG_X86
	struct kpk_probe *p[2], *d[2];
	int i;

	for (i = 0; i < 2; i++) {
		p[i] = kpk_new(i);
		p[i]->kp.addr = (kprobe_opcode_t *)kpt_func_c;
		p[i]->kp.pre_handler = kpk_pre_order;
		KUNIT_ASSERT_EQ(test, kpk_register(test, p[i]), 0);
		d[i] = kpk_new(2 + i);
		d[i]->kp.addr = (kprobe_opcode_t *)kpt_ret_a;
		d[i]->kp.pre_handler = i ? kpk_pre_order : kpk_pre_divert;
		KUNIT_ASSERT_EQ(test, kpk_register(test, d[i]), 0);
	}
	/* Past the hand-off to ftrace (ours: a tenth of a second later). */
	for (i = 0; i < 20; i++) {
		if (*(u8 *)p[0]->kp.addr == CALL_INSN_OPCODE &&
		    *(u8 *)d[0]->kp.addr == CALL_INSN_OPCODE)
			break;
		msleep(100);
	}
	KUNIT_ASSERT_EQ(test, *(u8 *)p[0]->kp.addr, CALL_INSN_OPCODE);
	KUNIT_ASSERT_EQ(test, *(u8 *)d[0]->kp.addr, CALL_INSN_OPCODE);

	kpk_expect_order(test, (const int[]){ 0, 1 }, 2);
	kpk_expect_order(test, (const int[]){ 0, 1 }, 2);
	KUNIT_EXPECT_EQ(test, disable_kprobe(&p[0]->kp), 0);
	kpk_expect_order(test, (const int[]){ 1 }, 1);
	KUNIT_EXPECT_EQ(test, enable_kprobe(&p[0]->kp), 0);
	kpk_expect_order(test, (const int[]){ 0, 1 }, 2);

	KUNIT_EXPECT_EQ(test, kpt_ret_a(), KPT_RET_B);
	KUNIT_EXPECT_EQ(test, kpt_ret_a(), KPT_RET_B);

	for (i = 0; i < 2; i++) {
		kpk_unregister(test, p[i]);
		kpk_unregister(test, d[i]);
		KUNIT_EXPECT_EQ(test, p[i]->kp.nmissed, 0UL);
		KUNIT_EXPECT_EQ(test, d[i]->kp.nmissed, 0UL);
	}
	KUNIT_EXPECT_EQ(test, kpk_hits(p[0]), 3);
	KUNIT_EXPECT_EQ(test, kpk_hits(p[1]), 4);
	KUNIT_EXPECT_EQ(test, kpk_hits(d[0]), 2);
	KUNIT_EXPECT_EQ(test, kpk_hits(d[1]), upstream ? 2 : 0);
	KUNIT_EXPECT_EQ(test, kpt_ret_a(), KPT_RET_A);
#else
	kunit_skip(test, "x86-only: the call opcode of an ftrace site carrying two probes");
#endif
}

#ifdef KPT_ASM_TARGETS
/* The outer probe's handler calls functions that carry probes too. */
static int kpk_pre_call_inner(struct kprobe *kp, struct pt_regs *regs)
{
	struct kpk_probe *p = container_of(kp, struct kpk_probe, kp);

	atomic_inc(&p->pre_hits);
	kpt_reent_inner(1);
	kpt_asm_add(1);
	return 0;
}
#endif

/*
 * A probe hit while a handler runs is missed: its handlers do not run
 * and its nmissed grows, once per hit.  Checked for a probe on a function
 * entry and for one inside a function.
 */
static void kpk_reentrant(struct kunit *test)
{
#ifdef KPT_ASM_TARGETS
	struct kpk_probe *outer = kpk_new(0);
	struct kpk_probe *entry = kpk_new(1), *inner = kpk_new(2);
	int i;

	outer->kp.addr = (kprobe_opcode_t *)kpt_reent_outer;
	outer->kp.pre_handler = kpk_pre_call_inner;
	entry->kp.addr = (kprobe_opcode_t *)kpt_reent_inner;
	inner->kp.addr = (kprobe_opcode_t *)kpt_label_addr(KPT_L_ADD_INSN);
	KUNIT_ASSERT_EQ(test, kpk_register(test, entry), 0);
	KUNIT_ASSERT_EQ(test, kpk_register(test, inner), 0);
	KUNIT_ASSERT_EQ(test, kpk_register(test, outer), 0);

	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, kpt_reent_outer(i), i + 11);
	KUNIT_EXPECT_EQ(test, kpk_hits(outer), 3);
	KUNIT_EXPECT_EQ(test, kpk_hits(entry), 0);
	KUNIT_EXPECT_EQ(test, kpk_hits(inner), 0);
	KUNIT_EXPECT_EQ(test, entry->kp.nmissed, 3UL);
	KUNIT_EXPECT_EQ(test, inner->kp.nmissed, 3UL);
	KUNIT_EXPECT_EQ(test, outer->kp.nmissed, 0UL);

	/* Outside a handler they fire as usual. */
	kpt_reent_inner(0);
	kpt_asm_add(0);
	KUNIT_EXPECT_EQ(test, kpk_hits(entry), 1);
	KUNIT_EXPECT_EQ(test, kpk_hits(inner), 1);
	KUNIT_EXPECT_EQ(test, entry->kp.nmissed, 3UL);
	KUNIT_EXPECT_EQ(test, inner->kp.nmissed, 3UL);

	kpk_unregister(test, outer);
	kpk_unregister(test, inner);
	kpk_unregister(test, entry);
#else
	kunit_skip(test, "no hand-written targets here: kpt_asm_add (kpt_asm.S, kpt_asm_arm64.S)");
#endif
}

#ifdef KPT_ASM_TARGETS
/*
 * A kernel address that is certain to fault: the guard page that follows
 * every vmalloc area.
 */
static void *kpk_bad_ptr(void **area)
{
	*area = vmalloc(PAGE_SIZE);
	if (!*area)
		return NULL;
	return *area + PAGE_SIZE;
}

static void *kpk_fault_addr;
static long kpk_fault_ret;

static int kpk_pre_fault(struct kprobe *kp, struct pt_regs *regs)
{
	struct kpk_probe *p = container_of(kp, struct kpk_probe, kp);
	int val;

	kpk_fault_ret = copy_from_kernel_nofault(&val, kpk_fault_addr,
						 sizeof(val));
	atomic_inc(&p->pre_hits);
	return 0;
}

static void kpk_post_fault(struct kprobe *kp, struct pt_regs *regs,
			   unsigned long flags)
{
	struct kpk_probe *p = container_of(kp, struct kpk_probe, kp);
	int val;

	kpk_fault_ret = copy_from_kernel_nofault(&val, kpk_fault_addr,
						 sizeof(val));
	atomic_inc(&p->post_hits);
}
#endif

/*
 * A handler that faults on a kernel address, through an access the
 * exception table recovers (copy_from_kernel_nofault()): the pre_handler
 * on a function entry (ftrace), the post_handler there and on a
 * breakpoint: the access fails with -EFAULT, the probed code computes
 * what it should, and kprobes works on afterwards.
 */
static void kpk_handler_fault(struct kunit *test)
{
#ifdef KPT_ASM_TARGETS
	struct kpk_probe *p = kpk_new(0);
	void *area;

	kpk_fault_addr = kpk_bad_ptr(&area);
	KUNIT_ASSERT_NOT_NULL(test, kpk_fault_addr);
	kpk_fault_ret = 1;
	p->kp.addr = (kprobe_opcode_t *)kpt_func_a;
	p->kp.pre_handler = kpk_pre_fault;
	KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
	KUNIT_EXPECT_EQ(test, kpt_func_a(1), 2);
	kpk_unregister(test, p);
	KUNIT_EXPECT_EQ(test, kpk_hits(p), 1);
	KUNIT_EXPECT_EQ(test, kpk_fault_ret, (long)-EFAULT);

	/* In the post_handler: at the entry, then on a breakpoint. */
	p = kpk_new(0);
	kpk_fault_ret = 1;
	p->kp.addr = (kprobe_opcode_t *)kpt_func_a;
	p->kp.post_handler = kpk_post_fault;
	KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
	KUNIT_EXPECT_EQ(test, kpt_func_a(1), 2);
	kpk_unregister(test, p);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->post_hits), 1);
	KUNIT_EXPECT_EQ(test, kpk_fault_ret, (long)-EFAULT);

	p = kpk_new(0);
	kpk_fault_ret = 1;
	p->kp.addr = (kprobe_opcode_t *)kpt_label_addr(KPT_L_ADD_INSN);
	p->kp.post_handler = kpk_post_fault;
	KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
	KUNIT_EXPECT_EQ(test, kpt_asm_add(1), 1 + KPT_ADD_IMM);
	kpk_unregister(test, p);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->post_hits), 1);
	KUNIT_EXPECT_EQ(test, kpk_fault_ret, (long)-EFAULT);
	vfree(area);
	kpk_expect_healthy(test, kpt_func_a);
#else
	kunit_skip(test, "no hand-written targets here: kpt_asm_add (kpt_asm.S, kpt_asm_arm64.S)");
#endif
}

/*
 * The probed instruction itself faults while it runs out of line; the
 * exception table fixup of the original instruction must apply.  The
 * fault is a kernel one (a vmalloc guard page): on arm64 a translation
 * fault, which goes to the exception table through __do_kernel_fault(),
 * not through do_page_fault() where user faults meet kprobes (ours asks
 * kprobes there too: patches/0009).  Upstream's arm64 refuses a probe on
 * an instruction with an exception-table entry.
 */
static void kpk_insn_fault(struct kunit *test)
{
#ifdef KPT_ASM_TARGETS
	struct kpk_probe *p = kpk_new(0);
	int val = 42;
	void *area;
	int *bad;
	int ret;

	bad = kpk_bad_ptr(&area);
	KUNIT_ASSERT_NOT_NULL(test, bad);
	KUNIT_ASSERT_EQ(test, kpt_asm_load(bad), KPT_LOAD_FIXUP);

	p->kp.addr = (kprobe_opcode_t *)kpt_label_addr(KPT_L_LOAD_INSN);
	ret = kpk_register(test, p);
	if (upstream && IS_ENABLED(CONFIG_ARM64)) {
		vfree(area);
		KUNIT_ASSERT_EQ(test, ret, -EINVAL);
		kunit_skip(test,
			   "upstream arm64 refuses a probe on an instruction with an exception-table entry (-EINVAL)");
	}
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, kpt_asm_load(&val), 42);
	KUNIT_EXPECT_EQ(test, kpk_hits(p), 1);
	KUNIT_EXPECT_EQ(test, kpt_asm_load(bad), KPT_LOAD_FIXUP);
	KUNIT_EXPECT_EQ(test, kpk_hits(p), 2);
	/* The probe still works after the fault. */
	KUNIT_EXPECT_EQ(test, kpt_asm_load(&val), 42);
	KUNIT_EXPECT_EQ(test, kpk_hits(p), 3);
	kpk_unregister(test, p);
	vfree(area);
#else
	kunit_skip(test,
		   "no hand-written targets here: kpt_asm_load's faulting load (kpt_asm.S, kpt_asm_arm64.S)");
#endif
}

/* Page faults the kernel fixed for this task, counted by the mm. */
static unsigned long kpk_task_faults(void)
{
	return current->min_flt + current->maj_flt;
}

/*
 * The probed instruction, a load from user memory, faults while it runs
 * out of line, on a page not mapped yet.  The kernel maps it and the
 * instruction runs again, through the breakpoint: still one execution,
 * so one hit and one post_handler.  A fault that goes to the fixup
 * instead (a page without access) must leave nothing behind that would
 * swallow the next hit.  Whether a fault was fixed comes from the task's
 * own fault counters, which kprobes does not touch.
 */
static void kpk_insn_fault_replay(struct kunit *test)
{
#ifdef KPT_ASM_TARGETS
	struct kpk_probe *p = kpk_new(0);
	int __user *fresh, *denied;
	unsigned long flt;
	int ret;

	fresh = (int __user *)kpt_user_page(test, PROT_READ);
	denied = (int __user *)kpt_user_page(test, PROT_NONE);
	KUNIT_ASSERT_NOT_NULL(test, (__force void *)fresh);
	KUNIT_ASSERT_NOT_NULL(test, (__force void *)denied);

	p->kp.addr = (kprobe_opcode_t *)kpt_label_addr(KPT_L_ULOAD_INSN);
	p->kp.post_handler = kpk_post_count;
	ret = kpk_register(test, p);
	if (upstream && IS_ENABLED(CONFIG_ARM64)) {
		KUNIT_ASSERT_EQ(test, ret, -EINVAL);
		kunit_skip(test,
			   "upstream arm64 refuses a probe on an instruction with an exception-table entry (-EINVAL)");
	}
	KUNIT_ASSERT_EQ(test, ret, 0);

	/* First touch: one fault fixed, the load run twice, one hit. */
	flt = kpk_task_faults();
	KUNIT_EXPECT_EQ(test, kpt_asm_uload(fresh), 0);
	KUNIT_EXPECT_EQ(test, kpk_task_faults() - flt, 1UL);
	if (upstream) {
		KUNIT_EXPECT_EQ(test, kpk_hits(p), 2);
		kpk_unregister(test, p);
		kunit_skip(test,
			   "upstream counts the run after a fixed fault as a second hit (2 pre_handlers, 1 post_handler)");
	}
	KUNIT_EXPECT_EQ(test, kpk_hits(p), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->post_hits), 1);

	/* Mapped now: no fault. */
	flt = kpk_task_faults();
	KUNIT_EXPECT_EQ(test, kpt_asm_uload(fresh), 0);
	KUNIT_EXPECT_EQ(test, kpk_task_faults() - flt, 0UL);
	KUNIT_EXPECT_EQ(test, kpk_hits(p), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->post_hits), 2);

	/* The fixup: the load never completes, so no post_handler. */
	KUNIT_EXPECT_EQ(test, kpt_asm_uload(denied), KPT_LOAD_FIXUP);
	KUNIT_EXPECT_EQ(test, kpk_hits(p), 3);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->post_hits), 2);

	/* And the next run is a hit of its own. */
	KUNIT_EXPECT_EQ(test, kpt_asm_uload(fresh), 0);
	KUNIT_EXPECT_EQ(test, kpk_hits(p), 4);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->post_hits), 3);
	kpk_unregister(test, p);
	KUNIT_EXPECT_EQ(test, p->kp.nmissed, 0UL);
#else
	kunit_skip(test,
		   "no hand-written targets here: kpt_asm_uload's user load (kpt_asm.S, kpt_asm_arm64.S)");
#endif
}

#ifdef KPT_ASM_TARGETS
/* Two CPUs hit the same probes at once. */
#define KPK_SMP_ITERS	10000

struct kpk_smp_arg {
	struct completion done;
};

static struct kpk_smp_arg kpk_smp_args[2];
static struct completion kpk_smp_go;

static int kpk_smp_thread(void *data)
{
	struct kpk_smp_arg *arg = data;
	int i;

	wait_for_completion(&kpk_smp_go);
	for (i = 0; i < KPK_SMP_ITERS; i++) {
		kpt_smp_func(i);
		kpt_asm_add(i);
		if (!(i % 1024))
			cond_resched();
	}
	complete(&arg->done);
	return 0;
}
#endif

static void kpk_smp(struct kunit *test)
{
#ifdef KPT_ASM_TARGETS
	struct kpk_probe *entry = kpk_new(0), *mid = kpk_new(1);
	int cpu[2], i;
	bool done = true;

	cpu[0] = cpumask_first(cpu_online_mask);
	cpu[1] = cpumask_next(cpu[0], cpu_online_mask);
	if (cpu[1] >= nr_cpu_ids)
		kunit_skip(test, "needs two online CPUs");

	entry->kp.addr = (kprobe_opcode_t *)kpt_smp_func;
	mid->kp.addr = (kprobe_opcode_t *)kpt_label_addr(KPT_L_ADD_INSN);
	KUNIT_ASSERT_EQ(test, kpk_register(test, entry), 0);
	KUNIT_ASSERT_EQ(test, kpk_register(test, mid), 0);

	init_completion(&kpk_smp_go);
	for (i = 0; i < 2; i++) {
		struct task_struct *t;

		init_completion(&kpk_smp_args[i].done);
		t = kthread_create(kpk_smp_thread, &kpk_smp_args[i],
				   "%s/%d", __func__, cpu[i]);
		if (IS_ERR(t)) {
			KUNIT_FAIL(test, "kthread_create: %ld", PTR_ERR(t));
			complete(&kpk_smp_args[i].done);
			continue;
		}
		kthread_bind(t, cpu[i]);
		wake_up_process(t);
	}
	complete_all(&kpk_smp_go);
	for (i = 0; i < 2; i++)
		if (!wait_for_completion_timeout(&kpk_smp_args[i].done,
						 msecs_to_jiffies(kpt_paced_ms(300000))))
			done = false;
	KUNIT_ASSERT_TRUE_MSG(test, done, "threads did not finish");

	kpk_unregister(test, entry);
	kpk_unregister(test, mid);
	KUNIT_EXPECT_EQ(test, kpk_hits(entry), 2 * KPK_SMP_ITERS);
	KUNIT_EXPECT_EQ(test, kpk_hits(mid), 2 * KPK_SMP_ITERS);
	KUNIT_EXPECT_EQ(test, entry->kp.nmissed, 0UL);
	KUNIT_EXPECT_EQ(test, mid->kp.nmissed, 0UL);
#else
	kunit_skip(test, "no hand-written targets here: kpt_asm_add (kpt_asm.S, kpt_asm_arm64.S)");
#endif
}

/*
 * A site shared by a probe with a pre_handler only (A) and one with a
 * post_handler too (B), hit from another CPU while B is unregistered.
 * B's pre_handler holds the hit (interrupts off) until B is unlinked:
 * the hit's post phase must still run B's post_handler, as it ran B's
 * pre_handler.
 */
#ifdef KPT_ASM_TARGETS
enum kpk_hold_step { KPK_HOLD_IDLE, KPK_HOLD_IN_PRE, KPK_HOLD_GO };

/*
 * step only paces the two threads: no data is published through it (the
 * counters are atomics, read after kthread_stop()), so plain
 * READ_ONCE()/WRITE_ONCE() do.
 */
static struct {
	struct task_struct *tester;	/* the thread that changes the probes */
	int step;			/* enum kpk_hold_step */
	bool timed_out;
} kpk_hold;

/*
 * Counted in delays, not read off a clock: the guest's clocksource may be
 * jiffies, which stand still while this CPU holds interrupts off and the
 * other one idles.
 */
#define KPK_HOLD_MAX_US	(5 * USEC_PER_SEC)

static int kpk_pre_hold(struct kprobe *kp, struct pt_regs *regs)
{
	unsigned long us;

	atomic_inc(&container_of(kp, struct kpk_probe, kp)->pre_hits);
	WRITE_ONCE(kpk_hold.step, KPK_HOLD_IN_PRE);
	for (us = 0; READ_ONCE(kpk_hold.step) != KPK_HOLD_GO; us++) {
		if (us == KPK_HOLD_MAX_US) {
			WRITE_ONCE(kpk_hold.timed_out, true);
			break;
		}
		udelay(1);
	}
	return 0;
}

/*
 * On the tester's on_each_cpu_cond_mask() or synchronize_rcu_expedited(),
 * the waits for the hits in flight (an IPI, or a grace period for a site
 * that was ever optimized), which the held hit would block: the probe
 * being unregistered is unlinked by then and the site's flags recomputed.
 * Let the hit go.
 */
static int kpk_pre_release_hold(struct kprobe *kp, struct pt_regs *regs)
{
	if (current == READ_ONCE(kpk_hold.tester))
		WRITE_ONCE(kpk_hold.step, KPK_HOLD_GO);
	return 0;
}

static int kpk_hold_caller(void *unused)
{
	kpt_asm_add(1);
	return 0;
}

/*
 * Start a call of kpt_asm_add() on @cpu; wait until B's pre_handler holds
 * it.  The wait spins, as the hold does: once the hold has begun, a sleep
 * here might never end, the jiffies standing still while the held CPU
 * has the tick's timekeeping and interrupts off.
 */
static struct task_struct *kpk_hold_start(struct kunit *test, int cpu)
{
	struct task_struct *t;
	unsigned long us;

	WRITE_ONCE(kpk_hold.step, KPK_HOLD_IDLE);
	WRITE_ONCE(kpk_hold.timed_out, false);
	t = kthread_create(kpk_hold_caller, NULL, "kpk_hold/%d", cpu);
	if (IS_ERR(t))
		return t;
	get_task_struct(t);
	kthread_bind(t, cpu);
	wake_up_process(t);
	for (us = 0; us < 2 * KPK_HOLD_MAX_US; us++) {
		if (READ_ONCE(kpk_hold.step) == KPK_HOLD_IN_PRE)
			break;
		udelay(1);
	}
	return t;
}

static void kpk_hold_end(struct kunit *test, struct task_struct *t)
{
	WRITE_ONCE(kpk_hold.step, KPK_HOLD_GO);
	kthread_stop(t);
	put_task_struct(t);
	KUNIT_EXPECT_FALSE_MSG(test, READ_ONCE(kpk_hold.timed_out),
			       "the held hit was never let go");
}
#endif /* KPT_ASM_TARGETS */

/*
 * @opt_first: A alone is optimized first, so the site, once it is a
 * breakpoint again for B, waits for its hits with a grace period rather
 * than an IPI (unregister_kprobes()).
 */
static void kpk_post_owed_run(struct kunit *test, bool opt_first)
{
#ifdef KPT_ASM_TARGETS
	unsigned long insn = kpt_label_addr(KPT_L_ADD_INSN);
	struct kpk_probe *a = kpk_new(0), *b = kpk_new(1), *sig = kpk_new(2);
	struct kpk_probe *sig_gp = kpk_new(3);
	struct task_struct *t;
	int cpu, state;

	if (upstream)
		kunit_skip(test, "upstream runs the post_handlers the site has when the step ends");
	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two online CPUs");
	if (opt_first && kpt_optimization_get() != 1)
		kunit_skip(test, "jump optimization is off or not built");

	/* B is unregistered between its pre_handler and its post_handler. */
	a->kp.addr = (kprobe_opcode_t *)insn;
	b->kp.addr = (kprobe_opcode_t *)insn;
	b->kp.pre_handler = kpk_pre_hold;
	b->kp.post_handler = kpk_post_count;
	sig->kp.symbol_name = "on_each_cpu_cond_mask";
	sig->kp.pre_handler = kpk_pre_release_hold;
	sig_gp->kp.symbol_name = "synchronize_rcu_expedited";
	sig_gp->kp.pre_handler = kpk_pre_release_hold;
	KUNIT_ASSERT_EQ(test, kpk_register(test, a), 0);
	if (opt_first) {
		state = kpt_wait_probe_state(insn, KPT_PS_OPTIMIZED,
					     KPT_PS_OPTIMIZED, 5000);
		if (state <= 0 || !(state & KPT_PS_OPTIMIZED))
			kunit_skip(test, "%pS was not optimized (list state %d)",
				   (void *)insn, state);
	}
	KUNIT_ASSERT_EQ(test, kpk_register(test, b), 0);
	KUNIT_ASSERT_EQ(test, kpk_register(test, sig), 0);
	KUNIT_ASSERT_EQ(test, kpk_register(test, sig_gp), 0);
	/*
	 * Text changes wait for every CPU, the held one too: let those the
	 * registrations started (the jump's removal, sig's hand-off to
	 * ftrace, where there are some) and earlier cases' lazy work end
	 * before the hold.
	 */
	msleep(kpt_paced_ms(1000));
	/* The tester stays off the held CPU, where it could not run. */
	migrate_disable();
	cpu = cpumask_any_but(cpu_online_mask, raw_smp_processor_id());
	WRITE_ONCE(kpk_hold.tester, current);
	t = kpk_hold_start(test, cpu);
	if (IS_ERR(t)) {
		WRITE_ONCE(kpk_hold.tester, NULL);
		migrate_enable();
		KUNIT_FAIL(test, "kthread_create: %ld", PTR_ERR(t));
		return;
	}
	KUNIT_EXPECT_EQ(test, READ_ONCE(kpk_hold.step), KPK_HOLD_IN_PRE);
	kpk_unregister(test, b);
	kpk_hold_end(test, t);
	WRITE_ONCE(kpk_hold.tester, NULL);
	migrate_enable();
	KUNIT_EXPECT_EQ(test, kpk_hits(a), 1);
	KUNIT_EXPECT_EQ(test, kpk_hits(b), 1);
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&b->post_hits), 1,
			    "B unregistered during the hit: its post_handler");
	kpk_unregister(test, sig_gp);
	kpk_unregister(test, sig);
	kpk_unregister(test, a);
#else
	kunit_skip(test, "no hand-written targets here: kpt_asm_add (kpt_asm.S, kpt_asm_arm64.S)");
#endif
}

static void kpk_post_owed(struct kunit *test)
{
	kpk_post_owed_run(test, false);
}

static void kpk_post_owed_after_opt(struct kunit *test)
{
	kpk_post_owed_run(test, true);
}

#ifdef CONFIG_ARM64
static int kpk_watched;

/* The watchpoint's reports so far, on every CPU. */
static u64 kpk_watch_count(struct perf_event * __percpu *wp)
{
	u64 n = 0, enabled, running;
	int cpu;

	for_each_online_cpu(cpu)
		n += perf_event_read_value(*per_cpu_ptr(wp, cpu), &enabled,
					   &running);
	return n;
}
#endif

/*
 * arm64: a store stepped out of line under a kernel watchpoint on what it
 * writes.  Without a probe the watchpoint reports the store (the kernel's
 * own handler steps over it).  With one, the step runs with debug
 * exceptions masked (all of DAIF): the watchpoint must not report from
 * the copy, where its handler would step the slot with the step's BRK
 * still to come.  That execution goes unreported, as the documentation
 * says.
 */
static void kpk_step_watchpoint(struct kunit *test)
{
#ifdef CONFIG_ARM64
	struct perf_event_attr attr;
	struct perf_event * __percpu *wp;
	struct kpk_probe *p = kpk_new(0);
	u64 seen;

	hw_breakpoint_init(&attr);
	attr.bp_addr = (unsigned long)&kpk_watched;
	attr.bp_len = HW_BREAKPOINT_LEN_4;
	attr.bp_type = HW_BREAKPOINT_W;
	wp = register_wide_hw_breakpoint(&attr, NULL, NULL);
	if (IS_ERR(wp))
		kunit_skip(test, "no kernel watchpoint: %ld", PTR_ERR(wp));
	kpt_asm_store(&kpk_watched, 1);
	seen = kpk_watch_count(wp);
	KUNIT_EXPECT_GE_MSG(test, seen, 1ULL, "reports of the unprobed store");

	/* A post_handler keeps the site a breakpoint: the store is stepped. */
	p->kp.addr = (kprobe_opcode_t *)kpt_asm_store;
	p->kp.post_handler = kpk_post_count;
	KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
	kpt_asm_store(&kpk_watched, 2);
	kpk_unregister(test, p);
	KUNIT_EXPECT_EQ_MSG(test, kpk_watch_count(wp), seen,
			    "reports once the store is stepped");
	unregister_wide_hw_breakpoint(wp);
	KUNIT_EXPECT_EQ(test, READ_ONCE(kpk_watched), 2);
	KUNIT_EXPECT_EQ(test, kpk_hits(p), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->post_hits), 1);
#else
	kunit_skip(test, "arm64-only: PSTATE.D during a step");
#endif
}

static struct kunit_case kpk_handler_cases[] = {
	KUNIT_CASE(kpk_post_handler),
	KUNIT_CASE(kpk_change_path),
	KUNIT_CASE(kpk_change_path_no_post),
	KUNIT_CASE(kpk_ftrace_rearm),
	KUNIT_CASE(kpk_ftrace_entry_live),
	KUNIT_CASE(kpk_ftrace_disarm_nomem),
	KUNIT_CASE(kpk_ftrace_handoff_nomem),
	KUNIT_CASE(kpk_if_modifiers),
	KUNIT_CASE(kpk_post_context),
	KUNIT_CASE(kpk_contexts),
	KUNIT_CASE(kpk_multi_probe),
	KUNIT_CASE(kpk_ftrace_duo),
	KUNIT_CASE(kpk_reentrant),
	KUNIT_CASE(kpk_handler_fault),
	KUNIT_CASE(kpk_insn_fault),
	KUNIT_CASE(kpk_insn_fault_replay),
	KUNIT_CASE_SLOW(kpk_smp),
	KUNIT_CASE_SLOW(kpk_post_owed),
	KUNIT_CASE_SLOW(kpk_post_owed_after_opt),
	/* Last: a watchpoint that goes wrong takes the rest with it. */
	KUNIT_CASE(kpk_step_watchpoint),
	{}
};

static struct kunit_suite kpk_handler_suite = {
	.name = "kprobes_handlers",
	.init = kpk_init,
	.exit = kpk_exit,
	.test_cases = kpk_handler_cases,
};

/* ---------------------------------------------------------------------
 * Places that must not be probed
 */

static void kpk_expect_refused(struct kunit *test, const char *name)
{
	struct kpk_probe *p = kpk_new(0);
	int ret;

	p->kp.symbol_name = name;
	ret = kpk_register(test, p);
	KUNIT_EXPECT_EQ_MSG(test, ret, -EINVAL, "probe on %s", name);
	/* Wrongly taken: the slot is reused by the next name. */
	if (!ret)
		kpk_unregister(test, p);
}

static void kpk_bl_nokprobe(struct kunit *test)
{
	kpk_expect_refused(test, "notify_die");
	kpk_expect_healthy(test, kpt_func_a);
}

/* A module's own: kprobes_target has one function of each kind. */
static void kpk_bl_module(struct kunit *test)
{
	kpk_expect_refused(test, "kpt_bl_nokprobe");
	kpk_expect_refused(test, "kpt_bl_kprobes");
	kpk_expect_refused(test, "kpt_bl_noinstr");
	kpk_expect_healthy(test, kpt_func_a);
}

static void kpk_bl_entry_text(struct kunit *test)
{
#ifdef KPT_ASM_TARGETS
	int i;

	for (i = 0; i < ARRAY_SIZE(kpk_entry_text); i++)
		kpk_expect_refused(test, kpk_entry_text[i]);
	kpk_expect_healthy(test, kpt_func_a);
#else
	kunit_skip(test, "no entry symbols named for this architecture");
#endif
}

static void kpk_bl_kprobes_code(struct kunit *test)
{
#if defined(KPT_ASM_TARGETS) || defined(CONFIG_ARM) || defined(CONFIG_MIPS) || \
	defined(CONFIG_PPC) || defined(CONFIG_RISCV) || defined(CONFIG_S390)
	int i;

	for (i = 0; i < ARRAY_SIZE(kpk_bp_code); i++)
		kpk_expect_refused(test, kpk_bp_code[i]);
	kpk_expect_healthy(test, kpt_func_a);
#else
	kunit_skip(test, "no breakpoint handler named for this architecture");
#endif
}

/*
 * arm64's software PAN: kernel_entry calls __swpan_entry_el1 before
 * pt_regs is whole, so a BRK there recurses.  The names come from
 * entry.S, not from any list of the code under test.  QEMU's -cpu max
 * has PAN, which patches the calls out, so a probe wrongly accepted
 * here is never hit.
 */
static void kpk_bl_swpan(struct kunit *test)
{
	static const char * const names[] = {
		"__swpan_entry_el1", "__swpan_entry_el0",
		"__swpan_exit_el1", "__swpan_exit_el0",
	};
	int i;

	if (!IS_ENABLED(CONFIG_ARM64_SW_TTBR0_PAN))
		kunit_skip(test, "no software PAN (ARM64_SW_TTBR0_PAN) in this kernel");
	/* A name missing from kallsyms gives -ENOENT, not -EINVAL: red. */
	for (i = 0; i < ARRAY_SIZE(names); i++)
		kpk_expect_refused(test, names[i]);
	kpk_expect_healthy(test, kpt_func_a);
}

static struct kunit_case kpk_bl_cases[] = {
	KUNIT_CASE(kpk_bl_nokprobe),
	KUNIT_CASE(kpk_bl_module),
	KUNIT_CASE(kpk_bl_entry_text),
	KUNIT_CASE(kpk_bl_kprobes_code),
	KUNIT_CASE(kpk_bl_swpan),
	{}
};

static struct kunit_suite kpk_bl_suite = {
	.name = "kprobes_blacklist",
	.init = kpk_init,
	.exit = kpk_exit,
	.test_cases = kpk_bl_cases,
};

kunit_test_suites(&kpk_api_suite, &kpk_err_suite, &kpk_handler_suite,
		  &kpk_bl_suite);

MODULE_DESCRIPTION("KUnit cases for the kprobes API");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
