// SPDX-License-Identifier: GPL-2.0
/*
 * kprobes_opt.ko, the cases only arm64 has (see kpo_main.c for the rest):
 *
 * kpo_change_path_optimized: an optimized probe honours a redirection
 *   (a pre_handler that moves the PC and returns 1), which x86-64's
 *   ignores.  On kpt_opt_redir, whose probed add lies between a cmp and
 *   the csets that read its flags: the pre_handler finds the flags of the
 *   cmp, leaves flags of its own and, for most inputs, a value in x2 and
 *   the PC past the add; for the others it returns 0, its flags written
 *   back all the same.  Every result must be the one the handler decided,
 *   in thousands of calls in a row, from this CPU and another at once,
 *   the probe [OPTIMIZED] in the list and a B in the text before and
 *   after.  Then the same on a C function's entry (kpt_opt_c, its
 *   ftrace "mov x9, x30"), the way fail_function and
 *   bpf_override_return() use it: the call returns at once with the
 *   value the handler put in x0.
 *
 * kpo_rewrites: an optimized probe on each instruction a detour rewrites
 *   or runs at another address (kpt_opt_pcrel: ADR, ADRP, literal loads
 *   of W, X and SW, B, BL, B.cond both ways, CBZ, CBNZ, TBZ, TBNZ, BR,
 *   BLR, RET, a MOV, PACIASP and AUTIASP, MRS and MSR of DAIF, DAIFSet
 *   and DAIFClr, and two stepped instructions, one moving sp, one between
 *   a tst and the b.eq that reads its flags): each alone, then all at
 *   once, is [OPTIMIZED] with a B in the text, every result is
 *   kpt_opt_pcrel_want()'s, every call hits each probe once and returns
 *   with interrupts on, as they were; then the same as breakpoints, the
 *   sysctl at 0.  The instruction at each offset is checked to be of the
 *   kind named first.
 *
 * In both, calls are also made with interrupts off, and must return with
 * them off (kpo_change_path_optimized: one in four).
 */
#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/jiffies.h>
#include <linux/kprobes.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include "kprobes_target.h"
#include "kpo.h"

/* Calls from each CPU, in a row, per step of kpo_change_path_optimized. */
#define KPO_RD_CALLS		2000
/* Calls per step of kpo_rewrites: bits 0 to 4 every way, and more. */
#define KPO_RW_CALLS		64

/* ---------------------------------------------------------------------
 * Calls from this CPU and another at once
 */

/* One call with input @i: whether its result is right. */
typedef bool (*kpo_call_fn)(unsigned int i);

struct kpo_other {
	kpo_call_fn call;
	unsigned int n, bad;
	struct completion done;
};

static int kpo_other_fn(void *data)
{
	struct kpo_other *o = data;
	unsigned int i;

	for (i = 0; i < o->n && !kthread_should_stop(); i++) {
		o->bad += !o->call(i + (1U << 20));
		if (!(i & 63))
			cond_resched();
	}
	complete(&o->done);
	for (;;) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (kthread_should_stop())
			break;
		schedule();
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

/*
 * @n calls on this CPU while another CPU makes @n of its own (on one CPU,
 * this CPU's only): all right.  Returns how many calls were made.
 */
static unsigned int kpo_both_cpus(struct kunit *test, kpo_call_fn call,
				  unsigned int n, const char *step)
{
	struct kpo_ctx *ctx = test->priv;
	struct kpo_other o = { .call = call, .n = n };
	struct task_struct *t = NULL;
	unsigned int i, bad = 0;
	int cpu, other;

	cpu = kpo_bind_self(test);
	init_completion(&o.done);
	if (num_online_cpus() >= 2) {
		other = cpumask_any_but(cpu_online_mask, cpu);
		t = kthread_create(kpo_other_fn, &o, "kpo_other/%d", other);
		KUNIT_ASSERT_FALSE(test, IS_ERR(t));
		kthread_bind(t, other);
		ctx->worker = t;
		wake_up_process(t);
	}
	for (i = 0; i < n; i++) {
		bad += !call(i);
		if (!(i & 63))
			cond_resched();
	}
	if (t) {
		unsigned int limit = kpt_paced_ms(30000);

		KUNIT_EXPECT_TRUE_MSG(test,
				      wait_for_completion_timeout(&o.done,
								  msecs_to_jiffies(limit)),
				      "%s: the other CPU did not finish its calls in %u ms",
				      step, limit);
		kthread_stop(t);
		ctx->worker = NULL;
		KUNIT_EXPECT_EQ_MSG(test, o.bad, 0U,
				    "%s: other CPU: %u wrong results in %u calls",
				    step, o.bad, n);
	}
	KUNIT_EXPECT_EQ_MSG(test, bad, 0U, "%s: %u wrong results in %u calls",
			    step, bad, n);
	return t ? 2 * n : n;
}

/* ---------------------------------------------------------------------
 * kpo_change_path_optimized
 */

static struct kprobe kpo_rd_kp;
static atomic_t kpo_rd_hits, kpo_rd_bad_pc, kpo_rd_bad_flags;

/* What the handler on kpt_opt_redir's add leaves for inputs a and b. */
static u64 kpo_rd_x2(u64 a, u64 b)
{
	return (a ^ b) * 0x9e3779b97f4a7c15ULL;
}

static u64 kpo_rd_flags(u64 a, u64 b)
{
	return ((a >> 5) ^ b ^ (b >> 61)) & 15;
}

/* It moves the PC for most inputs; for a multiple of 3, it returns 0. */
static bool kpo_rd_moves(u64 a)
{
	return a % 3;
}

static u64 kpo_rd_want(u64 a, u64 b)
{
	u64 x2 = kpo_rd_moves(a) ? kpo_rd_x2(a, b) : a + b;

	return x2 << 4 | kpo_rd_flags(a, b);
}

static int kpo_rd_pre(struct kprobe *kp, struct pt_regs *regs)
{
	u64 a = regs->regs[0], b = regs->regs[1];

	atomic_inc(&kpo_rd_hits);
	if (instruction_pointer(regs) != (unsigned long)kp->addr)
		atomic_inc(&kpo_rd_bad_pc);
	if (kpo_nzcv_pack(regs->pstate) != kpt_opt_cmp_flags(a, b))
		atomic_inc(&kpo_rd_bad_flags);
	regs->pstate = (regs->pstate & ~(u64)KPO_NZCV) |
		       kpo_nzcv_unpack(kpo_rd_flags(a, b));
	if (!kpo_rd_moves(a))
		return 0;
	regs->regs[2] = kpo_rd_x2(a, b);
	instruction_pointer_set(regs, (unsigned long)kp->addr + AARCH64_INSN_SIZE);
	return 1;
}

/*
 * @fn on input @i, one call in four with interrupts off: the mask is as
 * it was when it returns, and its result @want's.
 */
typedef unsigned long (*kpo_rd_fn)(unsigned long a, unsigned long b,
				   unsigned long c);

static bool kpo_rd_masked(unsigned int i, kpo_rd_fn fn, kpo_rd_fn want)
{
	bool off = (i & 3) == 3, ok;
	unsigned long flags = 0;
	unsigned long a, b, c, got;

	kpo_input(i, &a, &b, &c);
	if (off)
		local_irq_save(flags);
	got = fn(a, b, c);
	ok = irqs_disabled() == off;
	if (off)
		local_irq_restore(flags);
	else if (!ok)
		local_irq_enable();
	return ok && got == want(a, b, c);
}

static unsigned long kpo_rd_call_redir(unsigned long a, unsigned long b,
				       unsigned long c)
{
	return kpt_opt_redir(a, b);
}

static unsigned long kpo_rd_want3(unsigned long a, unsigned long b,
				  unsigned long c)
{
	return kpo_rd_want(a, b);
}

static bool kpo_rd_call(unsigned int i)
{
	return kpo_rd_masked(i, kpo_rd_call_redir, kpo_rd_want3);
}

/* On kpt_opt_c's entry: return ~a ^ c at once. */
static int kpo_rd_entry_pre(struct kprobe *kp, struct pt_regs *regs)
{
	atomic_inc(&kpo_rd_hits);
	if (instruction_pointer(regs) != (unsigned long)kp->addr)
		atomic_inc(&kpo_rd_bad_pc);
	kpo_set_return(regs, ~regs->regs[0] ^ regs->regs[2]);
	return 1;
}

static unsigned long kpo_rd_entry_want(unsigned long a, unsigned long b,
				       unsigned long c)
{
	return ~a ^ c;
}

static bool kpo_rd_entry_call(unsigned int i)
{
	return kpo_rd_masked(i, kpt_opt_c, kpo_rd_entry_want);
}

/* Through kpt_opt_call_c(): kpt_opt_c returns to it. */
static bool kpo_rd_entry_call_via(unsigned int i)
{
	return kpo_rd_masked(i, kpt_opt_call_c, kpo_rd_entry_want);
}

static void kpo_rd_remove(void *unused)
{
	unregister_kprobe(&kpo_rd_kp);
}

/*
 * A redirection on an optimized probe at @addr (@pre, pre_handler only):
 * it must show [OPTIMIZED] and a B first; @mine's calls from this CPU and
 * another at once, then @other's likewise, all right and all hits; still
 * optimized after.
 */
static void kpo_rd_run(struct kunit *test, unsigned long addr,
		       kprobe_pre_handler_t pre, kpo_call_fn mine,
		       kpo_call_fn other, const char *what)
{
	unsigned int made;
	char step[80];

	memset(&kpo_rd_kp, 0, sizeof(kpo_rd_kp));
	kpo_rd_kp.addr = (kprobe_opcode_t *)addr;
	kpo_rd_kp.pre_handler = pre;
	KUNIT_ASSERT_EQ_MSG(test, register_kprobe(&kpo_rd_kp), 0, "%s", what);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, kpo_rd_remove, NULL), 0);
	snprintf(step, sizeof(step), "%s, optimized", what);
	kpo_expect_optimized(test, addr, step);
	kpo_expect_insn(test, addr, true, step);

	atomic_set(&kpo_rd_hits, 0);
	atomic_set(&kpo_rd_bad_pc, 0);
	atomic_set(&kpo_rd_bad_flags, 0);
	made = kpo_both_cpus(test, mine, KPO_RD_CALLS, step);
	if (other != mine) {
		snprintf(step, sizeof(step), "%s, optimized, another caller", what);
		made += kpo_both_cpus(test, other, KPO_RD_CALLS, step);
	}
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&kpo_rd_hits), (int)made,
			    "%s: hits for %u calls", what, made);
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&kpo_rd_bad_pc), 0,
			    "%s: hits whose regs->pc was not the probed address", what);
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&kpo_rd_bad_flags), 0,
			    "%s: hits whose flags were not the cmp's", what);
	KUNIT_EXPECT_EQ_MSG(test, kpo_rd_kp.nmissed, 0UL, "%s: missed", what);
	snprintf(step, sizeof(step), "%s, after the calls", what);
	kpo_expect_optimized(test, addr, step);
	kpo_expect_insn(test, addr, true, step);
	kunit_release_action(test, kpo_rd_remove, NULL);
}

void kpo_change_path_optimized(struct kunit *test)
{
	unsigned long addr = (unsigned long)kpt_opt_redir + kpt_opt_redir_off;
	unsigned int i, bad = 0;
	unsigned long a, b, c;

	kpo_need_sysctl(test, 1);
	for (i = 0; i < 64; i++) {
		kpo_input(i, &a, &b, &c);
		bad += kpt_opt_redir(a, b) != kpt_opt_redir_want(a, b);
	}
	KUNIT_ASSERT_EQ_MSG(test, bad, 0U, "kpt_opt_redir unprobed: %u wrong", bad);

	kpo_rd_run(test, addr, kpo_rd_pre, kpo_rd_call, kpo_rd_call,
		   "kpt_opt_redir's add, a redirection past it");

	/* A function's entry: fail_function's, bpf_override_return()'s. */
	kpo_rd_run(test, (unsigned long)kpt_opt_c, kpo_rd_entry_pre,
		   kpo_rd_entry_call_via, kpo_rd_entry_call,
		   "kpt_opt_c's entry, a return from it");

	/* Gone: the functions compute what they did. */
	for (i = 0; i < 64; i++) {
		kpo_input(i, &a, &b, &c);
		bad += kpt_opt_redir(a, b) != kpt_opt_redir_want(a, b);
		bad += kpt_opt_call_c(a, b, c) != kpt_opt_want(a, b, c);
	}
	KUNIT_EXPECT_EQ_MSG(test, bad, 0U, "unprobed again: %u wrong", bad);
}

/* ---------------------------------------------------------------------
 * kpo_rewrites
 */

/* A probed instruction of kpt_opt_pcrel, and what it must be. */
struct kpo_rw {
	const char *what;
	u32 mask, value;
};

static const struct kpo_rw kpo_rw_table[KPT_PCREL_NR] = {
	[KPT_PCREL_PACIASP] = { "paciasp", 0xffffffff, 0xd503233f },
	[KPT_PCREL_STP] = { "stp x29, x30, [sp, #-16]! (stepped)", 0xffc00000, 0xa9800000 },
	[KPT_PCREL_MOV] = { "mov x15, x0", 0xffffffff, 0xaa0003ef },
	[KPT_PCREL_MRS_DAIF] = { "mrs x14, daif", 0xffffffff, 0xd53b422e },
	[KPT_PCREL_DAIFSET] = { "msr daifset, #2", 0xffffffff, 0xd50342df },
	[KPT_PCREL_DAIFCLR] = { "msr daifclr, #2", 0xffffffff, 0xd50342ff },
	[KPT_PCREL_MSR_DAIF] = { "msr daif, x14", 0xffffffff, 0xd51b422e },
	[KPT_PCREL_ADR] = { "adr", 0x9f000000, 0x10000000 },
	[KPT_PCREL_ADRP] = { "adrp", 0x9f000000, 0x90000000 },
	[KPT_PCREL_LDR_W] = { "ldr w, literal", 0xff000000, 0x18000000 },
	[KPT_PCREL_LDR_X] = { "ldr x, literal", 0xff000000, 0x58000000 },
	[KPT_PCREL_LDRSW] = { "ldrsw, literal", 0xff000000, 0x98000000 },
	[KPT_PCREL_B] = { "b", 0xfc000000, 0x14000000 },
	[KPT_PCREL_BL] = { "bl", 0xfc000000, 0x94000000 },
	[KPT_PCREL_FLAGS] = { "add between tst and b.eq (stepped)", 0xff800000, 0x91000000 },
	[KPT_PCREL_BCOND] = { "b.eq", 0xff00001f, 0x54000000 },
	[KPT_PCREL_CBZ] = { "cbz", 0xff000000, 0xb4000000 },
	[KPT_PCREL_CBNZ] = { "cbnz", 0xff000000, 0xb5000000 },
	[KPT_PCREL_TBZ] = { "tbz", 0x7f000000, 0x36000000 },
	[KPT_PCREL_TBNZ] = { "tbnz", 0x7f000000, 0x37000000 },
	[KPT_PCREL_BR] = { "br x10", 0xffffffff, 0xd61f0140 },
	[KPT_PCREL_BLR] = { "blr x11", 0xffffffff, 0xd63f0160 },
	[KPT_PCREL_AUTIASP] = { "autiasp", 0xffffffff, 0xd50323bf },
	[KPT_PCREL_RET] = { "ret", 0xffffffff, 0xd65f03c0 },
};

struct kpo_rw_probe {
	struct kprobe kp;
	atomic_t hits, bad_pc, irqs_on;
	bool live;
};

static struct kpo_rw_probe kpo_rw_probes[KPT_PCREL_NR];

static int kpo_rw_pre(struct kprobe *kp, struct pt_regs *regs)
{
	struct kpo_rw_probe *p = container_of(kp, struct kpo_rw_probe, kp);

	atomic_inc(&p->hits);
	if (instruction_pointer(regs) != (unsigned long)kp->addr)
		atomic_inc(&p->bad_pc);
	/* Every arm64 handler runs masked, a detour's as a breakpoint's. */
	if (!irqs_disabled())
		atomic_inc(&p->irqs_on);
	return 0;
}

static void kpo_rw_release(void *unused)
{
	unsigned int i;

	for (i = 0; i < KPT_PCREL_NR; i++) {
		if (kpo_rw_probes[i].live)
			unregister_kprobe(&kpo_rw_probes[i].kp);
		kpo_rw_probes[i].live = false;
	}
}

static unsigned long kpo_rw_addr(unsigned int i)
{
	return (unsigned long)kpt_opt_pcrel + kpt_opt_pcrel_off[i];
}

/*
 * With BTI enforced, neither a landing pad (paciasp) nor a BLR through
 * another register than x16, x17 is.
 */
static bool kpo_rw_optimizable(unsigned int i)
{
	return !(IS_ENABLED(CONFIG_ARM64_BTI_KERNEL) &&
		 (i == KPT_PCREL_BLR || i == KPT_PCREL_PACIASP));
}

static void kpo_rw_register(struct kunit *test, unsigned int i)
{
	struct kpo_rw_probe *p = &kpo_rw_probes[i];

	memset(p, 0, sizeof(*p));
	p->kp.addr = (kprobe_opcode_t *)kpo_rw_addr(i);
	p->kp.pre_handler = kpo_rw_pre;
	KUNIT_ASSERT_EQ_MSG(test, register_kprobe(&p->kp), 0, "%s at %pS",
			    kpo_rw_table[i].what, p->kp.addr);
	p->live = true;
}

static void kpo_rw_unregister(unsigned int i)
{
	kpo_rw_probes[i].live = false;
	unregister_kprobe(&kpo_rw_probes[i].kp);
}

static void kpo_rw_expect(struct kunit *test, unsigned int i, const char *step)
{
	char s[96];

	snprintf(s, sizeof(s), "%s, %s", step, kpo_rw_table[i].what);
	if (kpo_rw_optimizable(i)) {
		kpo_expect_optimized(test, kpo_rw_addr(i), s);
		kpo_expect_insn(test, kpo_rw_addr(i), true, s);
	} else {
		kpo_expect_plain(test, kpo_rw_addr(i), s);
	}
}

/* KPO_RW_CALLS calls from @first: right, and each live probe hit by each. */
static void kpo_rw_calls(struct kunit *test, unsigned int first,
			 const char *step)
{
	int before[KPT_PCREL_NR], bad_pc[KPT_PCREL_NR], irqs_on[KPT_PCREL_NR];
	unsigned int i, bad = 0, bad_irq = 0;
	unsigned long a, b, x0;
	u64 x, got;

	for (i = 0; i < KPT_PCREL_NR; i++) {
		before[i] = atomic_read(&kpo_rw_probes[i].hits);
		bad_pc[i] = atomic_read(&kpo_rw_probes[i].bad_pc);
		irqs_on[i] = atomic_read(&kpo_rw_probes[i].irqs_on);
	}
	for (i = first; i < first + KPO_RW_CALLS; i++) {
		/* Bits 0 to 4 every way, above them pseudo-random ones. */
		kpo_input(i, &a, &b, &x0);
		x = (a & ~31ULL) | (i & 31);
		got = kpt_opt_pcrel(x);
		if (irqs_disabled() && !bad_irq++)
			KUNIT_FAIL(test, "%s: kpt_opt_pcrel(%#llx) returned with interrupts off",
				   step, x);
		if (irqs_disabled())
			local_irq_enable();
		if (got != kpt_opt_pcrel_want(x) && !bad++)
			KUNIT_FAIL(test, "%s: kpt_opt_pcrel(%#llx) = %#llx, want %#llx",
				   step, x, got, kpt_opt_pcrel_want(x));
	}
	KUNIT_EXPECT_EQ_MSG(test, bad, 0U, "%s: %u wrong results in %u calls",
			    step, bad, KPO_RW_CALLS);
	for (i = 0; i < KPT_PCREL_NR; i++) {
		struct kpo_rw_probe *p = &kpo_rw_probes[i];

		if (!p->live)
			continue;
		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&p->hits) - before[i],
				    KPO_RW_CALLS, "%s: %s: hits in %u calls", step,
				    kpo_rw_table[i].what, KPO_RW_CALLS);
		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&p->bad_pc) - bad_pc[i], 0,
				    "%s: %s: regs->pc not the probed address",
				    step, kpo_rw_table[i].what);
		KUNIT_EXPECT_EQ_MSG(test, p->kp.nmissed, 0UL, "%s: %s: missed",
				    step, kpo_rw_table[i].what);
		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&p->irqs_on) - irqs_on[i], 0,
				    "%s: %s: handlers ran with interrupts on",
				    step, kpo_rw_table[i].what);
	}
}

void kpo_rewrites(struct kunit *test)
{
	unsigned long start = (unsigned long)kpt_opt_pcrel;
	unsigned int i, size, next = 0;
	unsigned long end;
	u8 text[256], now[256];
	char step[96];
	u32 insn;

	kpo_need_sysctl(test, 1);
	size = kpt_opt_pcrel_off[KPT_PCREL_RET] + AARCH64_INSN_SIZE;
	KUNIT_ASSERT_LE(test, size, (unsigned int)sizeof(text));
	KUNIT_ASSERT_EQ(test, copy_from_kernel_nofault(text, (void *)start, size), 0);
	for (i = 0; i < KPT_PCREL_NR; i++) {
		insn = kpo_insn_at(text + kpt_opt_pcrel_off[i]);
		KUNIT_ASSERT_EQ_MSG(test, insn & kpo_rw_table[i].mask,
				    kpo_rw_table[i].value,
				    "kpt_opt_pcrel+%#x: %08x is no %s",
				    kpt_opt_pcrel_off[i], insn, kpo_rw_table[i].what);
	}
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, kpo_rw_release, NULL), 0);
	kpo_rw_calls(test, next, "unprobed");
	next += KPO_RW_CALLS;

	/* Each alone. */
	for (i = 0; i < KPT_PCREL_NR; i++) {
		kpo_rw_register(test, i);
		kpo_rw_expect(test, i, "alone");
		snprintf(step, sizeof(step), "alone, %s", kpo_rw_table[i].what);
		kpo_rw_calls(test, next, step);
		next += KPO_RW_CALLS;
		kpo_rw_unregister(i);
	}

	/* All at once: each detour's B back lands on another probe's B. */
	for (i = 0; i < KPT_PCREL_NR; i++)
		kpo_rw_register(test, i);
	for (i = 0; i < KPT_PCREL_NR; i++)
		kpo_rw_expect(test, i, "all at once");
	kpo_rw_calls(test, next, "all at once");
	next += KPO_RW_CALLS;

	/* The sysctl at 0: the same probes as breakpoints, simulated or stepped. */
	kpo_sysctl(test, 0);
	for (i = 0; i < KPT_PCREL_NR; i++)
		kpo_expect_plain(test, kpo_rw_addr(i), "all at once, sysctl 0");
	kpo_rw_calls(test, next, "all at once, sysctl 0");
	kpo_sysctl(test, 1);
	kpo_rw_release(NULL);

	/* The text comes back whole. */
	end = kpt_deadline(KPO_TEXT_MS);
	for (;;) {
		KUNIT_ASSERT_EQ(test, copy_from_kernel_nofault(now, (void *)start, size), 0);
		if (!memcmp(now, text, size) || time_after(jiffies, end))
			break;
		msleep(20);
	}
	KUNIT_EXPECT_EQ_MSG(test, memcmp(now, text, size), 0,
			    "kpt_opt_pcrel's text not back once unprobed");
}
