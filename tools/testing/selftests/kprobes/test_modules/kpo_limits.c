// SPDX-License-Identifier: GPL-2.0
/*
 * kprobes_opt.ko, the cases on where a jump must not go and what must
 * come back (kpo_cold_entry to kpo_null_handlers), kpo_change_path_* and
 * kpo_context_*.  What they check is described at the top of kpo_main.c.
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
#include "kpt_user.h"
#include "kpo.h"

/* ---------------------------------------------------------------------
 * Where a jump must not go, and what must come back
 */

/*
 * kpt_cold's cold part (kpt_cold.cold, elsewhere in the text) jumps right
 * past its first instruction, a one-byte push (arm64: a mov).  A probe on
 * the instruction after it may be optimized (a branch may land where the
 * jump starts).  One on the push may not, since its jump would cover the
 * instruction the cold part lands on; on arm64, where the jump replaces
 * the probed instruction alone, one on the mov is optimized all the same.
 * Both paths keep working and are counted either way.
 */
void kpo_cold_entry(struct kunit *test)
{
	struct kpo_probe *p = kpo_new(0, false);
	unsigned long entry;
	char got[64];
	int state;

	kpo_need_sysctl(test, 1);
	kpo_register(test, p, (unsigned long)kpt_cold);
	entry = (unsigned long)p->kp.addr;
	kpo_unregister(test, p);

	/* Control: the instruction after the push, where the cold path lands. */
	p = kpo_new(0, false);
	kpo_register(test, p, entry + KPO_COLD_FIRST);
	kpt_optimizer_wait();
	kpo_expect_optimized(test, entry + KPO_COLD_FIRST, "after the push");
	KUNIT_EXPECT_EQ(test, kpt_cold(4), 4UL + KPT_COLD_ADD);
	KUNIT_EXPECT_EQ(test, kpt_cold(5), 4UL + KPT_COLD_ADD);
	/* The odd call passes there twice: once in line, once from the cold part. */
	KUNIT_EXPECT_EQ(test, kpo_pre_count(p), 3);
	kpo_unregister(test, p);

	p = kpo_new(0, false);
	kpo_register(test, p, entry);
	kpt_optimizer_wait();
	if (KPO_JUMP_COVERS_NEXT) {
		state = kpt_wait_probe_state(entry, KPT_PS_OPTIMIZED,
					     KPT_PS_OPTIMIZED, KPO_MAYBE_MS);
		/* Optimized, the odd call would run into the middle of the jump. */
		KUNIT_ASSERT_TRUE_MSG(test, state >= 0 && !(state & KPT_PS_OPTIMIZED),
				      "%pS: list says %s, though kpt_cold.cold jumps right past it",
				      (void *)entry, kpo_marks(state, got, sizeof(got)));
	} else {
		kpo_expect_optimized(test, entry, "the first instruction");
	}
	KUNIT_EXPECT_EQ(test, kpt_cold(4), 4UL + KPT_COLD_ADD);
	KUNIT_EXPECT_EQ(test, kpt_cold(5), 4UL + KPT_COLD_ADD);
	KUNIT_EXPECT_EQ(test, kpo_pre_count(p), 2);
	kpo_unregister(test, p);
}

/*
 * Failure injection for kpo_refused_neighbour: in the task named here,
 * the next call of the function probed returns -ENOMEM right away, the
 * way fail_function does it: the probe on the function's entry sends the
 * ip to a bare return (the stack pointer stays: a probe carried by ftrace
 * cannot move it; arm64: to the link register).  The empty post_handler
 * keeps the probe from being optimized, which on x86 would ignore the
 * redirection.
 */
static struct task_struct *kpo_fail_task;

static int kpo_fail_pre(struct kprobe *kp, struct pt_regs *regs)
{
	if (READ_ONCE(kpo_fail_task) != current)
		return 0;
	WRITE_ONCE(kpo_fail_task, NULL);
	kpo_set_return(regs, -ENOMEM);
	return 1;
}

static void kpo_fail_post(struct kprobe *kp, struct pt_regs *regs,
			  unsigned long flags)
{
}

static struct kprobe kpo_fail_kp;

static void kpo_fail_remove(void *unused)
{
	WRITE_ONCE(kpo_fail_task, NULL);
	unregister_kprobe(&kpo_fail_kp);
}

/*
 * A probe inside an optimized probe's jump takes the jump out first; if
 * that probe is then refused (the backend runs out of memory preparing
 * it), the jump must come back.  On arm64 the probe on the next
 * instruction is outside the jump, which must not be disturbed either.
 */
void kpo_refused_neighbour(struct kunit *test)
{
	struct kpo_probe *p = kpo_new(0, false), *q = kpo_new(1, false);
	unsigned long addr;
	int ret;

	kpo_need_sysctl(test, 1);
	kpo_layout(test);
	addr = kpo_insn(test, KPO_I_ENTRY);
	kpo_register(test, p, addr);
	kpt_optimizer_wait();
	kpo_expect_optimized(test, addr, "alone");

	memset(&kpo_fail_kp, 0, sizeof(kpo_fail_kp));
	/* Where a site's instruction is prepared, in each implementation. */
	kpo_fail_kp.symbol_name = kpo_upstream ? "arch_prepare_kprobe" :
					     "arch_kprobe_site_prepare";
	kpo_fail_kp.pre_handler = kpo_fail_pre;
	kpo_fail_kp.post_handler = kpo_fail_post;
	KUNIT_ASSERT_EQ(test, register_kprobe(&kpo_fail_kp), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, kpo_fail_remove, NULL), 0);

	q->kp.addr = (kprobe_opcode_t *)kpo_insn(test, KPO_I_NEXT);
	WRITE_ONCE(kpo_fail_task, current);
	ret = register_kprobe(&q->kp);
	WRITE_ONCE(kpo_fail_task, NULL);
	kunit_release_action(test, kpo_fail_remove, NULL);
	KUNIT_ASSERT_EQ_MSG(test, ret, -ENOMEM,
			    "a probe inside the jump, its preparation failing");

	kpt_optimizer_wait();
	kpo_expect_optimized(test, addr, "after the refused probe");
	KUNIT_EXPECT_EQ(test, kpo_calls(test, 0, KPO_NCALLS, "after the refusal"), 0);
	KUNIT_EXPECT_EQ(test, kpo_pre_count(p), KPO_NCALLS);
	kpo_unregister(test, p);
}

/*
 * Handlers never run with user memory open.  Probes go on instructions of
 * strncpy_from_user() inside its user access region (found by trying
 * every offset: a hit there sees EFLAGS.AC set in the probed context),
 * which then copies a string from a user page: a post_handler, which runs
 * from a call at the end of the step, and the pre_handler of a probe that
 * was optimized, which runs from the detour, must find AC clear, and the
 * probed code must find it set again after them.  x86 only: arm64's
 * user accesses are unprivileged loads and stores (LDTR, STTR), with no
 * state of the probed context that could leak into a handler.
 */
#ifdef CONFIG_X86
#define KPO_UA_MAX	64	/* offsets inside the region kept */
#define KPO_UA_OPT_TRIES 16	/* of which tried for optimization */

static struct kprobe kpo_ua_kp;
static unsigned long kpo_ua_ctx, kpo_ua_pre_ac, kpo_ua_post_ac, kpo_ua_post_ctx;
static atomic_t kpo_ua_hits;

static int kpo_ua_pre(struct kprobe *kp, struct pt_regs *regs)
{
	kpo_ua_ctx |= regs->flags & X86_EFLAGS_AC;
	kpo_ua_pre_ac |= native_save_fl() & X86_EFLAGS_AC;
	atomic_inc(&kpo_ua_hits);
	return 0;
}

static void kpo_ua_post(struct kprobe *kp, struct pt_regs *regs,
			unsigned long flags)
{
	kpo_ua_post_ctx |= regs->flags & X86_EFLAGS_AC;
	kpo_ua_post_ac |= native_save_fl() & X86_EFLAGS_AC;
}

static const char kpo_ua_str[] = "a string of several words, copied from user space";

/* Probe strncpy_from_user+@off (@post: with a post_handler); copy once. */
static int kpo_ua_try(struct kunit *test, unsigned long user, unsigned int off,
		      bool post, bool opt)
{
	char buf[sizeof(kpo_ua_str)];
	long n;
	int ret;

	memset(&kpo_ua_kp, 0, sizeof(kpo_ua_kp));
	kpo_ua_kp.symbol_name = "strncpy_from_user";
	kpo_ua_kp.offset = off;
	kpo_ua_kp.pre_handler = kpo_ua_pre;
	if (post)
		kpo_ua_kp.post_handler = kpo_ua_post;
	ret = register_kprobe(&kpo_ua_kp);
	if (ret)
		return ret;
	if (opt) {
		kpt_optimizer_wait();
		ret = kpt_wait_probe_state((unsigned long)kpo_ua_kp.addr,
					   KPT_PS_OPTIMIZED, KPT_PS_OPTIMIZED,
					   KPO_MAYBE_MS);
		if (ret < 0 || !(ret & KPT_PS_OPTIMIZED)) {
			unregister_kprobe(&kpo_ua_kp);
			return -EAGAIN;
		}
	}
	kpo_ua_ctx = 0;
	kpo_ua_pre_ac = 0;
	kpo_ua_post_ac = 0;
	kpo_ua_post_ctx = 0;
	atomic_set(&kpo_ua_hits, 0);
	n = strncpy_from_user(buf, (const char __user *)user, sizeof(buf));
	unregister_kprobe(&kpo_ua_kp);
	KUNIT_EXPECT_EQ_MSG(test, n, (long)strlen(kpo_ua_str),
			    "strncpy_from_user with a probe at +%#x", off);
	KUNIT_EXPECT_STREQ(test, buf, kpo_ua_str);
	return 0;
}

void kpo_uaccess(struct kunit *test)
{
	unsigned int off, size = 0, found[KPO_UA_MAX], nfound = 0, i;
	char sym[KSYM_SYMBOL_LEN], *slash;
	unsigned long user;
	bool optimized = false;

	if (!boot_cpu_has(X86_FEATURE_SMAP))
		kunit_skip(test, "no SMAP on this CPU: user access regions are not real");
	kpo_need_sysctl(test, 0);
	user = kpt_user_page(test, PROT_READ | PROT_WRITE);
	KUNIT_ASSERT_NE(test, user, 0UL);
	KUNIT_ASSERT_EQ(test, copy_to_user((void __user *)user, kpo_ua_str,
					   sizeof(kpo_ua_str)), 0UL);
	sprint_symbol(sym, (unsigned long)strncpy_from_user);
	slash = strchr(sym, '/');
	KUNIT_ASSERT_NOT_NULL(test, slash);
	KUNIT_ASSERT_EQ(test, kstrtouint(slash + 1, 16, &size), 0);

	/* The instructions a hit finds inside the user access region. */
	for (off = 1; off < size && nfound < KPO_UA_MAX; off++) {
		if (kpo_ua_try(test, user, off, false, false))
			continue;
		if (kpo_ua_ctx && !kpo_ua_pre_ac && atomic_read(&kpo_ua_hits))
			found[nfound++] = off;
		KUNIT_EXPECT_EQ_MSG(test, kpo_ua_pre_ac, 0UL,
				    "breakpoint pre_handler at +%#x with AC set", off);
	}
	KUNIT_ASSERT_GT_MSG(test, nfound, 0U,
			    "no instruction of strncpy_from_user sees AC set");
	kunit_info(test, "%u instructions inside the user access region\n", nfound);

	/* Post handlers, on each of them. */
	for (i = 0; i < nfound; i++) {
		KUNIT_ASSERT_EQ(test, kpo_ua_try(test, user, found[i], true, false), 0);
		KUNIT_EXPECT_EQ_MSG(test, kpo_ua_post_ac, 0UL,
				    "post_handler at +%#x ran with AC set", found[i]);
	}

	/* Optimized: the first of them that can be. */
	kpo_sysctl(test, 1);
	for (i = 0; i < nfound && i < KPO_UA_OPT_TRIES && !optimized; i++) {
		if (kpo_ua_try(test, user, found[i], false, true))
			continue;
		optimized = true;
		kunit_info(test, "optimized at strncpy_from_user+%#x\n", found[i]);
		KUNIT_EXPECT_GT(test, atomic_read(&kpo_ua_hits), 0);
		KUNIT_EXPECT_EQ_MSG(test, kpo_ua_ctx, (unsigned long)X86_EFLAGS_AC,
				    "+%#x: the probed context's AC", found[i]);
		KUNIT_EXPECT_EQ_MSG(test, kpo_ua_pre_ac, 0UL,
				    "optimized pre_handler at +%#x ran with AC set",
				    found[i]);
	}
	KUNIT_EXPECT_TRUE_MSG(test, optimized,
			      "none of the %u instructions could be optimized", nfound);
}
#else
void kpo_uaccess(struct kunit *test)
{
	kunit_skip(test, "x86-only: SMAP user access regions (EFLAGS.AC)");
}
#endif

/*
 * Wait up to KPO_TEXT_MS for the text at @addr to be an optimized probe's
 * jump (@jump) or a breakpoint; returns whether it came, with the
 * KPO_JUMP_SIZE bytes there in @now.
 */
bool kpo_wait_text(unsigned long addr, bool jump, u8 *now)
{
	unsigned long end = kpt_deadline(KPO_TEXT_MS);
	unsigned long target;

	for (;;) {
		if (copy_from_kernel_nofault(now, (void *)addr, KPO_JUMP_SIZE))
			return false;
		if (jump ? kpo_is_jump(now, addr, &target) : kpo_is_trap(now))
			return true;
		if (time_after(jiffies, end))
			return false;
		msleep(20);
	}
}

/*
 * Optimization as the text shows it, not only the list: once a probe is
 * [OPTIMIZED], its bytes are a jmp (B) into a detour page; with the
 * sysctl at 0 they are an int3 followed by the original bytes (a BRK);
 * once it is unregistered, the original bytes.
 */
void kpo_text_shows(struct kunit *test)
{
	struct kpo_ctx *ctx = test->priv;
	struct kpo_probe *p;
	unsigned long addr, target = 0;
	u8 now[KPO_JUMP_SIZE];
	unsigned int off;

	kpo_need_sysctl(test, 1);
	kpo_layout(test);
	addr = kpo_insn(test, KPO_I_MID);
	off = addr - ctx->code;
	p = kpo_new(0, false);
	kpo_register(test, p, addr);
	kpo_expect_optimized(test, addr, "registered");
	KUNIT_ASSERT_TRUE_MSG(test, kpo_wait_text(addr, true, now),
			      "%pS: %*ph, no jump", (void *)addr, KPO_JUMP_SIZE, now);
	kpo_is_jump(now, addr, &target);
	/*
	 * Detour pages are module-area pages of no module (/proc/kallsyms
	 * names them, but a module cannot read it: no read_iter).
	 */
	KUNIT_EXPECT_TRUE_MSG(test, is_vmalloc_or_module_addr((void *)target) &&
			      !kpt_within_target(target),
			      "%pS jumps to %pS, not into a detour page",
			      (void *)addr, (void *)target);
	kpo_calls(test, 0, 4, "optimized");
	KUNIT_EXPECT_EQ(test, kpo_pre_count(p), 4);

	kpo_sysctl(test, 0);
	kpo_expect_plain(test, addr, "sysctl 0");
	KUNIT_EXPECT_TRUE_MSG(test, kpo_wait_text(addr, false, now),
			      "%pS: %*ph, no breakpoint", (void *)addr,
			      KPO_JUMP_SIZE, now);
	KUNIT_EXPECT_EQ_MSG(test, memcmp(now + KPO_TRAP_SIZE,
					 ctx->text + off + KPO_TRAP_SIZE,
					 KPO_JUMP_SIZE - KPO_TRAP_SIZE), 0,
			    "%pS: %*ph after the breakpoint, was %*ph", (void *)addr,
			    KPO_JUMP_SIZE - KPO_TRAP_SIZE, now + KPO_TRAP_SIZE,
			    KPO_JUMP_SIZE - KPO_TRAP_SIZE,
			    ctx->text + off + KPO_TRAP_SIZE);
	kpo_calls(test, 0, 4, "sysctl 0");
	KUNIT_EXPECT_EQ(test, kpo_pre_count(p), 8);

	kpo_unregister(test, p);
	kpo_expect_text(test);
}

/* A function kpo_refusals probes, and why a jump must not go there. */
struct kpo_refusal {
	const char *why;
	unsigned long (*fn)(unsigned long a, unsigned long b, unsigned long c);
	const u32 *off;	/* where in fn */
	unsigned long add;	/* fn(a, b, c) returns a + b + add */
	bool c_ptr;	/* c: a valid pointer, to a zero */
	bool jmpin;	/* c nonzero takes the path through b (kpt_ref_jmpin) */
};

static const struct kpo_refusal kpo_refusals_table[] = {
#if defined(CONFIG_X86)
	{ "the jmp would run past the function's end", kpt_ref_end,
	  &kpt_ref_off[KPT_REF_END], 0 },
	{ "a branch lands inside the jmp", kpt_ref_jmpin,
	  &kpt_ref_off[KPT_REF_JMPIN], 3, .jmpin = true },
	{ "the function has an indirect jmp", kpt_ref_indirect,
	  &kpt_ref_off[KPT_REF_INDIRECT], 3 },
	{ "an instruction under the jmp has an exception-table entry",
	  kpt_ref_extable, &kpt_ref_off[KPT_REF_EXTABLE], 3, .c_ptr = true },
	{ "a call is under the jmp", kpt_ref_call, &kpt_ref_off[KPT_REF_CALL], 3 },
#elif defined(CONFIG_ARM64)
	{ "the instruction has an exception-table entry", kpt_opt_ref_extable,
	  &kpt_opt_ref_off[KPT_OPT_REF_EXTABLE], 3, .c_ptr = true },
	{ "blr x30 needs the register it overwrites", kpt_opt_ref_blr_lr,
	  &kpt_opt_ref_off[KPT_OPT_REF_BLR_LR], 3 },
#endif
};

/*
 * Jump optimization's safety rules, one function each: the probe stays a
 * breakpoint (never [OPTIMIZED], its text an int3, a BRK) while a control
 * probe registered with it is optimized, and calls keep their results.
 */
void kpo_refusals(struct kunit *test)
{
	const struct kpo_refusal *r;
	struct kpo_probe *p, *ctl;
	unsigned long zero = 0, c, want;
	unsigned long insn;
	char got[64];
	unsigned int i;
	int state;
	u8 now[KPO_TRAP_SIZE];

	kpo_need_sysctl(test, 1);
	kpo_layout(test);
	for (i = 0; i < ARRAY_SIZE(kpo_refusals_table); i++) {
		r = &kpo_refusals_table[i];
		insn = (unsigned long)r->fn + *r->off;
		c = r->c_ptr ? (unsigned long)&zero : 0;
		want = 5 + 7 + r->add;
		if (r->jmpin)
			c = 1;	/* take the path through b */
		KUNIT_ASSERT_EQ_MSG(test, r->fn(5, 7, c), want, "%ps before", r->fn);

		p = kpo_new(0, false);
		ctl = kpo_new(1, false);
		kpo_register(test, p, insn);
		kpo_register(test, ctl, kpo_insn(test, KPO_I_MID));
		kpt_optimizer_wait();
		kpo_expect_optimized(test, kpo_insn(test, KPO_I_MID), r->why);
		state = kpt_wait_probe_state(insn, KPT_PS_OPTIMIZED,
					     KPT_PS_OPTIMIZED, KPO_MAYBE_MS);
		KUNIT_EXPECT_TRUE_MSG(test, state >= 0 && !(state & KPT_PS_OPTIMIZED),
				      "%pS: list says %s, though %s", (void *)insn,
				      kpo_marks(state, got, sizeof(got)), r->why);
		KUNIT_EXPECT_EQ(test, copy_from_kernel_nofault(now, (void *)insn,
							       KPO_TRAP_SIZE), 0);
		KUNIT_EXPECT_TRUE_MSG(test, kpo_is_trap(now), "%pS: %*ph, %s",
				      (void *)insn, KPO_TRAP_SIZE, now, r->why);
		KUNIT_EXPECT_EQ_MSG(test, r->fn(5, 7, c), want, "%ps probed", r->fn);
		if (r->jmpin)
			KUNIT_EXPECT_EQ(test, r->fn(5, 7, 0), 5UL + 3);
		KUNIT_EXPECT_GE_MSG(test, kpo_pre_count(p), 1, "%pS", (void *)insn);
		kpo_unregister(test, ctl);
		kpo_unregister(test, p);
	}
}

/*
 * kpt_opt_c (an ftrace site at its entry) called @n times with inputs
 * from @first: every result right.
 */
static void kpo_calls_c(struct kunit *test, unsigned int first, unsigned int n,
			const char *step)
{
	unsigned int i, bad = 0;
	unsigned long a, b, c;

	for (i = first; i < first + n; i++) {
		kpo_input(i, &a, &b, &c);
		bad += kpt_opt_c(a, b, c) != kpt_opt_want(a, b, c);
	}
	KUNIT_EXPECT_EQ_MSG(test, bad, 0U, "%s: %u wrong results in %u calls",
			    step, bad, n);
}

/*
 * Probes with no handler at all, and with only a post_handler, on each
 * path: optimized (no handler: it is optimized all the same) or not (a
 * post_handler keeps it a breakpoint), boosted (the sysctl at 0), a
 * breakpoint on a ret (emulated) and ftrace.  The probed code computes
 * what it should, a lone post_handler runs once per call, and nothing is
 * missed.
 */
void kpo_null_handlers(struct kunit *test)
{
	unsigned long mid, entry;
	struct kpo_probe *p;
	int state;

	kpo_need_sysctl(test, 1);
	kpo_layout(test);
	mid = kpo_insn(test, KPO_I_MID);

	/* No handler: optimized, then boosted. */
	p = kpo_new(0, false);
	p->kp.pre_handler = NULL;
	kpo_register(test, p, mid);
	kpo_expect_optimized(test, mid, "no handler");
	kpo_calls(test, 0, 8, "no handler, optimized");
	kpo_sysctl(test, 0);
	kpo_expect_plain(test, mid, "no handler, sysctl 0");
	kpo_calls(test, 8, 8, "no handler, boosted");
	KUNIT_EXPECT_EQ(test, p->kp.nmissed, 0UL);
	kpo_unregister(test, p);
	kpo_sysctl(test, 1);

	/* Only a post_handler: a breakpoint, never optimized. */
	p = kpo_new(0, true);
	p->kp.pre_handler = NULL;
	kpo_register(test, p, mid);
	kpt_optimizer_wait();
	state = kpt_wait_probe_state(mid, KPT_PS_OPTIMIZED, KPT_PS_OPTIMIZED,
				     KPO_MAYBE_MS);
	KUNIT_EXPECT_TRUE_MSG(test, state >= 0 && !(state & KPT_PS_OPTIMIZED),
			      "post_handler only: %pS optimized", (void *)mid);
	kpo_calls(test, 16, 8, "post_handler only");
	KUNIT_EXPECT_EQ(test, kpo_post_count(p), 8);
	KUNIT_EXPECT_EQ(test, p->kp.nmissed, 0UL);
	kpo_unregister(test, p);

#ifdef CONFIG_X86
	/* No handler on a ret: a breakpoint whose instruction is emulated. */
	p = kpo_new(0, false);
	p->kp.pre_handler = NULL;
	kpo_register(test, p, kpt_label_addr(KPT_L_ADD_NEXT));
	KUNIT_EXPECT_EQ(test, kpt_asm_add(1), 1 + KPT_ADD_IMM);
	KUNIT_EXPECT_EQ(test, kpt_asm_add(2), 2 + KPT_ADD_IMM);
	KUNIT_EXPECT_EQ(test, p->kp.nmissed, 0UL);
	kpo_unregister(test, p);
#else
	/*
	 * No handler on a ret (arm64: kpt_opt_asm's): optimized, the detour
	 * runs it as it is; a breakpoint, it is simulated.
	 */
	p = kpo_new(0, false);
	p->kp.pre_handler = NULL;
	kpo_register(test, p, kpo_insn(test, KPO_I_RET));
	kpo_expect_optimized(test, kpo_insn(test, KPO_I_RET), "no handler, ret");
	kpo_calls(test, 24, 8, "no handler, ret, optimized");
	kpo_sysctl(test, 0);
	kpo_expect_plain(test, kpo_insn(test, KPO_I_RET), "no handler, ret, sysctl 0");
	kpo_calls(test, 32, 8, "no handler, ret, breakpoint");
	KUNIT_EXPECT_EQ(test, p->kp.nmissed, 0UL);
	kpo_unregister(test, p);
	kpo_sysctl(test, 1);
#endif

	/*
	 * The same two on a function entry carried by ftrace (arm64: a
	 * breakpoint or optimized site).
	 */
	p = kpo_new(0, false);
	p->kp.pre_handler = NULL;
	kpo_register(test, p, (unsigned long)kpt_opt_c);
	entry = (unsigned long)p->kp.addr;
	kpo_calls_c(test, 0, 8, "no handler, ftrace");
	KUNIT_EXPECT_EQ(test, p->kp.nmissed, 0UL);
	kpo_unregister(test, p);

	p = kpo_new(0, true);
	p->kp.pre_handler = NULL;
	kpo_register(test, p, entry);
	kpo_calls_c(test, 8, 8, "post_handler only, ftrace");
	KUNIT_EXPECT_EQ(test, kpo_post_count(p), 8);
	KUNIT_EXPECT_EQ(test, p->kp.nmissed, 0UL);
	kpo_unregister(test, p);
	kpo_expect_text(test);
}

/* ---------------------------------------------------------------------
 * kpo_change_path_*
 */

/*
 * What kpt_opt_asm(a, b, c) returns with its imul (KPO_I_MID) skipped
 * (arm64: its mul, which works on a + b in place).
 */
static unsigned long kpo_want_no_imul(unsigned long a, unsigned long b,
				      unsigned long c)
{
	return kpt_opt_finish(a + b, a, b, c);
}

/*
 * @n calls of kpt_opt_asm over inputs from @first (pseudo-random ones,
 * past the special inputs, for which the imul may change nothing): each
 * must return the result with the imul skipped when @skipped, the usual
 * one otherwise.  @p's pre_handler must run once per call and its
 * post_handler, if any, never: the pre_handler returns 1.
 */
static void kpo_divert_calls(struct kunit *test, struct kpo_probe *p,
			     unsigned int first, unsigned int n, bool skipped,
			     const char *step)
{
	int pre = kpo_pre_count(p), post = kpo_post_count(p);
	unsigned int i, bad = 0;
	unsigned long a, b, c, got, want;

	for (i = first; i < first + n; i++) {
		kpo_input(i, &a, &b, &c);
		want = skipped ? kpo_want_no_imul(a, b, c) : kpt_opt_want(a, b, c);
		got = kpt_opt_asm(a, b, c);
		if (got != want && !bad++)
			KUNIT_FAIL(test,
				   "%s: kpt_opt_asm(%#lx, %#lx, %#lx) = %#lx, want %#lx (the imul %s)",
				   step, a, b, c, got, want,
				   skipped ? "skipped" : "run");
	}
	KUNIT_EXPECT_EQ_MSG(test, bad, 0U, "%s: %u wrong results in %u calls",
			    step, bad, n);
	KUNIT_EXPECT_EQ_MSG(test, kpo_pre_count(p) - pre, (int)n,
			    "%s: pre_handler runs in %u calls", step, n);
	KUNIT_EXPECT_EQ_MSG(test, kpo_post_count(p) - post, 0,
			    "%s: post_handler runs after a pre_handler that returned 1",
			    step);
}

/* The text at @addr is an optimized probe's jump (@jump) or a breakpoint. */
void kpo_expect_insn(struct kunit *test, unsigned long addr, bool jump,
		     const char *step)
{
	u8 now[KPO_JUMP_SIZE];

	KUNIT_EXPECT_TRUE_MSG(test, kpo_wait_text(addr, jump, now),
			      "%s: %pS: %*ph, want %s", step, (void *)addr,
			      KPO_JUMP_SIZE, now, jump ? "a jump" : "a breakpoint");
}

/* Where the probe at KPO_I_MID sends execution: the next instruction. */
static struct kpo_probe *kpo_new_divert(struct kunit *test, bool post)
{
	struct kpo_probe *p = kpo_new(0, post);

	p->divert = kpo_insn(test, KPO_I_MID + 1);
	return p;
}

/*
 * A pre_handler that changes regs->ip and returns 1, mid-function on a
 * breakpoint: it sends kpt_opt_asm past its imul (arm64: its mul).  The
 * seeds say that an optimized probe ignores such a change, and that a
 * probe that needs it keeps itself from being optimized with a
 * post_handler, even an empty one, or with the sysctl at 0 (arm64's
 * optimized probes honour it: kpo_change_path_optimized).
 *
 * With a post_handler, the sysctl at 1: the probe never shows
 * [OPTIMIZED] and its byte stays an int3, before the optimizer's time and
 * after it every call skips the imul, and the post_handler never runs.
 */
void kpo_change_path_post_handler(struct kunit *test)
{
	unsigned long mid;
	struct kpo_probe *p;
	char got[64];
	int state;

	kpo_need_sysctl(test, 1);
	kpo_layout(test);
	mid = kpo_insn(test, KPO_I_MID);
	p = kpo_new_divert(test, true);
	kpo_register(test, p, mid);
	kpo_divert_calls(test, p, 16, KPO_NCALLS, true,
			 "with a post_handler, just registered");

	/* Give the optimizer the time it would take to optimize it. */
	state = kpt_wait_probe_state(mid, KPT_PS_OPTIMIZED, KPT_PS_OPTIMIZED,
				     KPO_MAYBE_MS);
	KUNIT_EXPECT_TRUE_MSG(test, state >= 0 && (state & KPO_ANY) == KPT_PS_LISTED,
			      "with a post_handler: %pS: list says %s",
			      (void *)mid, kpo_marks(state, got, sizeof(got)));
	kpo_expect_insn(test, mid, false, "with a post_handler");
	kpo_divert_calls(test, p, 16 + KPO_NCALLS, KPO_NCALLS, true,
			 "with a post_handler, after the optimizer's time");
	KUNIT_EXPECT_EQ(test, p->kp.nmissed, 0UL);
	kpo_unregister(test, p);
	kpo_expect_text(test);
}

/*
 * The same pre_handler without a post_handler.  With the sysctl at 0 the
 * probe stays a breakpoint (boosted) and every call skips the imul.  At 1
 * it is optimized (the list says so, its byte is a jmp) and the change of
 * ip is ignored, as documented: the imul runs, while the pre_handler
 * still runs on every call (arm64: the change is honoured, the mul
 * skipped all the same).  Back at 0 it is a breakpoint again and the
 * imul is skipped again.  kpo_exit() puts the sysctl back as it was.
 */
void kpo_change_path_sysctl(struct kunit *test)
{
	unsigned int next = 16;
	unsigned long mid;
	struct kpo_probe *p;

	kpo_need_sysctl(test, 0);
	kpo_layout(test);
	mid = kpo_insn(test, KPO_I_MID);
	p = kpo_new_divert(test, false);
	kpo_register(test, p, mid);
	if (!kpt_optimizer_wait())
		msleep(kpt_paced_ms(KPO_MAYBE_MS));
	kpo_expect_plain(test, mid, "sysctl 0");
	kpo_expect_insn(test, mid, false, "sysctl 0");
	kpo_divert_calls(test, p, next, KPO_NCALLS, true, "sysctl 0");
	next += KPO_NCALLS;

	kpo_sysctl(test, 1);
	kpo_expect_optimized(test, mid, "sysctl 1");
	kpo_expect_insn(test, mid, true, "sysctl 1");
	kpo_divert_calls(test, p, next, KPO_NCALLS, KPO_OPT_REDIRECTS,
			 KPO_OPT_REDIRECTS ?
			 "sysctl 1, optimized: the change of pc is honoured" :
			 "sysctl 1, optimized: the change of ip is ignored");
	next += KPO_NCALLS;

	kpo_sysctl(test, 0);
	kpo_expect_plain(test, mid, "sysctl 0 again");
	kpo_expect_insn(test, mid, false, "sysctl 0 again");
	kpo_divert_calls(test, p, next, KPO_NCALLS, true, "sysctl 0 again");
	KUNIT_EXPECT_EQ(test, p->kp.nmissed, 0UL);
	kpo_unregister(test, p);
	kpo_expect_text(test);
}

/* ---------------------------------------------------------------------
 * kpo_context_*
 */

static struct kpt_ctx_seen kpo_seen_pre, kpo_seen_post;

static int kpo_pre_ctx(struct kprobe *kp, struct pt_regs *regs)
{
	kpt_ctx_note(&kpo_seen_pre);
	return kpo_pre(kp, regs);
}

static void kpo_post_ctx(struct kprobe *kp, struct pt_regs *regs,
			 unsigned long flags)
{
	kpt_ctx_note(&kpo_seen_post);
	kpo_post(kp, regs, flags);
}

/*
 * What @s says a handler (@who, on path @path) saw in one call made with
 * interrupts off (@caller_off) or on: one run, preemption disabled
 * (preempt_count() above the caller's zero, where the kernel counts it),
 * and interrupts off if @always_off, else as the caller had them.
 */
static void kpo_expect_ctx(struct kunit *test, const struct kpt_ctx_seen *s,
			   const char *path, const char *who, bool caller_off,
			   bool always_off)
{
	const char *call = caller_off ? "interrupts off" : "interrupts on";
	bool want_off = always_off || caller_off;

	KUNIT_ASSERT_EQ_MSG(test, s->runs, 1, "%s, %s, called with %s: runs",
			    path, who, call);
	if (IS_ENABLED(CONFIG_PREEMPT_COUNT))
		KUNIT_EXPECT_NE_MSG(test, s->preempt_count, 0,
				    "%s, %s, called with %s: preempt_count() is 0",
				    path, who, call);
	KUNIT_EXPECT_FALSE_MSG(test, s->preemptible,
			       "%s, %s, called with %s: preemptible", path, who,
			       call);
	KUNIT_EXPECT_EQ_MSG(test, s->irqs_off, want_off,
			    "%s, %s, called with %s: handler ran with interrupts %s",
			    path, who, call, s->irqs_off ? "off" : "on");
}

/*
 * The context handlers run in, on each path, as our kprobes.rst and the
 * seeds say: preemption disabled always; interrupts disabled for a
 * breakpoint (pre and post handlers, boosted or stepped), as the probed
 * code had them for an optimized probe and on an ftrace site (pre and
 * post handlers); on arm64 disabled for an optimized probe too, as
 * every arm64 handler runs.  The probed function is called once with interrupts on
 * and once with them off (local_irq_save()).  The probe is on the imul of
 * kpt_opt_asm (the entry of kpt_opt_c for ftrace) and is checked to be on
 * the path named: the list's marks, and for optimized the jmp in the
 * text, so that the handler runs from the detour, not from a breakpoint
 * hit on the way to it.
 */
static void kpo_context(struct kunit *test, enum kpo_path path)
{
	const char *name = kpo_path_name[path];
	bool c = path == KPO_FTRACE;
	bool post = path == KPO_BREAKPOINT || c;
	bool always_off = path == KPO_BREAKPOINT || path == KPO_BOOSTED ||
			  (path == KPO_OPTIMIZED && IS_ENABLED(CONFIG_ARM64));
	unsigned long (*call)(unsigned long a, unsigned long b, unsigned long c) =
		c ? kpt_opt_c : kpt_opt_asm;
	struct kpo_probe *p;
	unsigned long addr, flags;
	int state, want, off;
	char got_marks[64];
	unsigned long a, b, cc, got;

	if (kpo_path_missing(path))
		kunit_skip(test, "%s", kpo_path_missing(path));
	switch (path) {
	case KPO_OPTIMIZED:
		kpo_need_sysctl(test, 1);
		break;
	case KPO_BOOSTED:
		if (kpt_optimization_get() != -ENOENT)
			kpo_need_sysctl(test, 0);
		break;
	default:
		break;
	}
	kpo_layout(test);
	p = kpo_new(0, post);
	p->kp.pre_handler = kpo_pre_ctx;
	if (post)
		p->kp.post_handler = kpo_post_ctx;
	kpo_register(test, p, c ? (unsigned long)kpt_opt_c :
			      kpo_insn(test, KPO_I_MID));
	addr = (unsigned long)p->kp.addr;
	switch (path) {
	case KPO_OPTIMIZED:
		want = KPT_PS_LISTED | KPT_PS_OPTIMIZED;
		break;
	case KPO_FTRACE:
		want = KPT_PS_LISTED | KPT_PS_FTRACE;
		break;
	default:
		if (!kpt_optimizer_wait())
			msleep(200);
		want = KPT_PS_LISTED;
		break;
	}
	kpo_expect_state(test, addr, KPO_ANY, want, name);
	if (path == KPO_OPTIMIZED)
		kpo_expect_insn(test, addr, true, name);

	for (off = 0; off < 2; off++) {
		memset(&kpo_seen_pre, 0, sizeof(kpo_seen_pre));
		memset(&kpo_seen_post, 0, sizeof(kpo_seen_post));
		kpo_input(off, &a, &b, &cc);
		KUNIT_ASSERT_EQ(test, preempt_count(), 0);
		if (off) {
			local_irq_save(flags);
			got = call(a, b, cc);
			local_irq_restore(flags);
		} else {
			got = call(a, b, cc);
		}
		KUNIT_EXPECT_EQ_MSG(test, got, kpt_opt_want(a, b, cc),
				    "%s: result", name);
		kpo_expect_ctx(test, &kpo_seen_pre, name, "pre_handler", off,
			       always_off);
		if (post)
			kpo_expect_ctx(test, &kpo_seen_post, name, "post_handler",
				       off, always_off);
	}
	state = kpt_probe_state(addr);
	KUNIT_EXPECT_TRUE_MSG(test, state >= 0 && (state & KPO_ANY) == want,
			      "%s: after the calls the list says %s", name,
			      kpo_marks(state, got_marks, sizeof(got_marks)));
	KUNIT_EXPECT_EQ(test, p->kp.nmissed, 0UL);
	kpo_unregister(test, p);
	if (!c)
		kpo_expect_text(test);
}

void kpo_context_breakpoint(struct kunit *test)
{
	kpo_context(test, KPO_BREAKPOINT);
}

void kpo_context_boosted(struct kunit *test)
{
	kpo_context(test, KPO_BOOSTED);
}

void kpo_context_optimized(struct kunit *test)
{
	kpo_context(test, KPO_OPTIMIZED);
}

void kpo_context_ftrace(struct kunit *test)
{
	kpo_context(test, KPO_FTRACE);
}
