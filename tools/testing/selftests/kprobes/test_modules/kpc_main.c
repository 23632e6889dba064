// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit cases for the older kprobes API (CONFIG_KPROBES_COMPAT), against
 * the text of the kprobes documents that specified it: jprobes (the
 * handler sees every argument, including stack ones; what it does to
 * them does not reach the probed function; stack traces from it unwind;
 * it coexists with kprobes, kretprobes and another jprobe; batches roll
 * back; off a function's entry it is refused; the list calls it 'j'; a
 * hit from another probe's handler is missed and counted) and
 * the fault_handler of struct kprobe (a fault in a pre_handler, dealt
 * with or left to the exception table; a fault in the probed instruction
 * stepped out of line; none from a jprobe's copy of the stack words at
 * the top of the IRQ stack).
 *
 * Upstream has neither: the Makefile builds this module only where the
 * kernel exports register_jprobe(), and run_tests.sh skips the suite
 * elsewhere.  The probed functions are in kprobes_target.ko.
 */
#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/ptrace.h>
#include <linux/stacktrace.h>
#include <linux/string.h>
#include <linux/vmalloc.h>
#include "kprobes_target.h"

/*
 * The cases that probe inside the hand-written targets (kpt_asm.S, with
 * their labels) skip where there are none, saying so.
 */
#define KPC_NO_ASM	"no hand-written targets here: "

/* What the jprobe handlers saw (one call at a time in these cases). */
static long kpc_args[2][8];
static atomic_t kpc_calls[2];
static bool kpc_trace_ok;
static unsigned long kpc_trace[32];
static unsigned int kpc_trace_n;
static atomic_t kpc_seq;
static int kpc_order[4];

static void kpc_reset(void)
{
	memset(kpc_args, 0, sizeof(kpc_args));
	memset(kpc_order, 0, sizeof(kpc_order));
	atomic_set(&kpc_calls[0], 0);
	atomic_set(&kpc_calls[1], 0);
	atomic_set(&kpc_seq, 0);
	kpc_trace_ok = false;
}

/* What kpt_eight_call(fn, base) returns, computed here (unprobed). */
static long kpc_expect(long base)
{
	long sum = 0;
	int i;

	for (i = 0; i < 8; i++)
		sum += (i + 1) * (base + i);
	return sum;
}

/* Jprobe handler 0: notes its arguments, then scribbles over them. */
static long kpc_jp0(long a1, long a2, long a3, long a4, long a5, long a6,
		    long a7, long a8)
{
	long *v = kpc_args[0];

	v[0] = a1; v[1] = a2; v[2] = a3; v[3] = a4;
	v[4] = a5; v[5] = a6; v[6] = a7; v[7] = a8;
	atomic_inc(&kpc_calls[0]);
	kpc_order[1] = atomic_inc_return(&kpc_seq);
	a1 = -1;
	a2 = -1;
	a7 = -1;
	a8 = -1;
	barrier_data(&a1);
	jprobe_return();
	return a1 + a2 + a7 + a8;
}

/* Jprobe handler 1: notes its arguments, and a stack trace. */
static long kpc_jp1(long a1, long a2, long a3, long a4, long a5, long a6,
		    long a7, long a8)
{
	unsigned long *entries = kpc_trace;
	unsigned int i, n;
	char name[KSYM_NAME_LEN + 32];
	long *v = kpc_args[1];

	v[0] = a1; v[1] = a2; v[2] = a3; v[3] = a4;
	v[4] = a5; v[5] = a6; v[6] = a7; v[7] = a8;
	atomic_inc(&kpc_calls[1]);
	kpc_order[2] = atomic_inc_return(&kpc_seq);
	n = stack_trace_save(entries, ARRAY_SIZE(kpc_trace), 0);
	kpc_trace_n = n;
	for (i = 0; i < n; i++) {
		/* "kpt_eight_call [kprobes_target]" */
		snprintf(name, sizeof(name), "%ps", (void *)entries[i]);
		if (!strcmp(name, "kpt_eight_call [" KPT_MODNAME "]"))
			kpc_trace_ok = true;
	}
	jprobe_return();
	return 0;
}

static void kpc_expect_args(struct kunit *test, int h, long base)
{
	int i;

	for (i = 0; i < 8; i++)
		KUNIT_EXPECT_EQ_MSG(test, kpc_args[h][i], base + i,
				    "handler %d, argument %d", h, i + 1);
}

/* Each of the two entry kinds: C (ftrace site) and asm (breakpoint). */
static kpt_eight_fn kpc_fns[] = { kpt_eight, kpt_eight_asm };

static void kpc_jprobe_args(struct kunit *test)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(kpc_fns); i++) {
		struct jprobe jp = {
			.kp.addr = (kprobe_opcode_t *)kpc_fns[i],
			.entry = kpc_jp0,
		};

		kpc_reset();
		KUNIT_ASSERT_EQ(test, register_jprobe(&jp), 0);
		/* The handler set its copies to -1: the result is unchanged. */
		KUNIT_EXPECT_EQ(test, kpt_eight_call(kpc_fns[i], 100),
				kpc_expect(100));
		KUNIT_EXPECT_EQ(test, atomic_read(&kpc_calls[0]), 1);
		kpc_expect_args(test, 0, 100);
		KUNIT_EXPECT_EQ(test, kpt_eight_call(kpc_fns[i], -7),
				kpc_expect(-7));
		kpc_expect_args(test, 0, -7);
		KUNIT_EXPECT_EQ(test, atomic_read(&kpc_calls[0]), 2);
		KUNIT_EXPECT_EQ(test, jp.kp.nmissed, 0UL);
		unregister_jprobe(&jp);
		KUNIT_EXPECT_EQ(test, kpt_eight_call(kpc_fns[i], 1), kpc_expect(1));
		KUNIT_EXPECT_EQ(test, atomic_read(&kpc_calls[0]), 2);
	}
}

/* A stack trace taken in the handler goes through the probed call's caller. */
static void kpc_jprobe_stacktrace(struct kunit *test)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(kpc_fns); i++) {
		struct jprobe jp = {
			.kp.addr = (kprobe_opcode_t *)kpc_fns[i],
			.entry = kpc_jp1,
		};

		kpc_reset();
		KUNIT_ASSERT_EQ(test, register_jprobe(&jp), 0);
		KUNIT_EXPECT_EQ(test, kpt_eight_call(kpc_fns[i], 5), kpc_expect(5));
		unregister_jprobe(&jp);
		KUNIT_EXPECT_EQ(test, atomic_read(&kpc_calls[1]), 1);
		KUNIT_EXPECT_TRUE_MSG(test, kpc_trace_ok,
				      "no kpt_eight_call in the trace (%ps)",
				      kpc_fns[i]);
		if (!kpc_trace_ok) {
			unsigned int j;

			for (j = 0; j < kpc_trace_n; j++)
				kunit_info(test, "  %pS", (void *)kpc_trace[j]);
		}
	}
}

static int kpc_kp_pre(struct kprobe *p, struct pt_regs *regs)
{
	kpc_order[0] = atomic_inc_return(&kpc_seq);
	return 0;
}

static int kpc_kret_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	return 0;
}

static int kpc_kret_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	if (regs_return_value(regs) == kpc_expect(20))
		kpc_order[3] = atomic_inc_return(&kpc_seq);
	return 0;
}

/*
 * A kprobe, two jprobes and a kretprobe on one function: each fires once
 * per call, the entry ones in registration order, the return last.
 */
static void kpc_jprobe_together(struct kunit *test)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(kpc_fns); i++) {
		kprobe_opcode_t *addr = (kprobe_opcode_t *)kpc_fns[i];
		struct kprobe kp = { .addr = addr, .pre_handler = kpc_kp_pre };
		struct jprobe jp0 = { .kp.addr = addr, .entry = kpc_jp0 };
		struct jprobe jp1 = { .kp.addr = addr, .entry = kpc_jp1 };
		struct kretprobe rp = {
			.kp.addr = addr,
			.entry_handler = kpc_kret_entry,
			.handler = kpc_kret_ret,
		};

		kpc_reset();
		KUNIT_ASSERT_EQ(test, register_kprobe(&kp), 0);
		KUNIT_ASSERT_EQ(test, register_jprobe(&jp0), 0);
		KUNIT_ASSERT_EQ(test, register_jprobe(&jp1), 0);
		KUNIT_ASSERT_EQ(test, register_kretprobe(&rp), 0);
		KUNIT_EXPECT_EQ(test, kpt_eight_call(kpc_fns[i], 20),
				kpc_expect(20));
		unregister_kretprobe(&rp);
		unregister_jprobe(&jp1);
		unregister_jprobe(&jp0);
		unregister_kprobe(&kp);
		KUNIT_EXPECT_EQ(test, kpc_order[0], 1);
		KUNIT_EXPECT_EQ(test, kpc_order[1], 2);
		KUNIT_EXPECT_EQ(test, kpc_order[2], 3);
		KUNIT_EXPECT_EQ(test, kpc_order[3], 4);
		kpc_expect_args(test, 0, 20);
		kpc_expect_args(test, 1, 20);
	}
}

/* register_jprobes() with a bad entry registers none of them. */
static void kpc_jprobes_rollback(struct kunit *test)
{
	struct jprobe good = {
		.kp.addr = (kprobe_opcode_t *)kpt_eight,
		.entry = kpc_jp0,
	};
	struct jprobe nohandler = { .kp.addr = (kprobe_opcode_t *)kpt_eight_asm };
	struct jprobe unknown = {
		.kp.symbol_name = "kprobes_compat_no_such_function",
		.entry = kpc_jp1,
	};
	struct jprobe *batch[2] = { &good, &nohandler };

	kpc_reset();
	KUNIT_EXPECT_EQ(test, register_jprobes(batch, 2), -EINVAL);
	batch[1] = &unknown;
	KUNIT_EXPECT_EQ(test, register_jprobes(batch, 2), -ENOENT);
	KUNIT_EXPECT_EQ(test, kpt_eight_call(kpt_eight, 3), kpc_expect(3));
	KUNIT_EXPECT_EQ(test, atomic_read(&kpc_calls[0]), 0);
	/* Nothing was left registered: the good one registers now. */
	KUNIT_ASSERT_EQ(test, register_jprobes(batch, 1), 0);
	KUNIT_EXPECT_EQ(test, kpt_eight_call(kpt_eight, 3), kpc_expect(3));
	KUNIT_EXPECT_EQ(test, atomic_read(&kpc_calls[0]), 1);
	unregister_jprobes(batch, 1);
}

#ifdef KPT_ASM_TARGETS
/*
 * A jprobe must be on a function's entry: the second instruction of
 * kpt_asm_sub (a local label, no symbol of its own) is refused, by
 * address and by symbol + offset.
 */
static void kpc_jprobe_off_entry(struct kunit *test)
{
	struct jprobe jp = {
		.kp.addr = (kprobe_opcode_t *)kpt_label_addr(KPT_L_SUB_INSN),
		.entry = kpc_jp0,
	};

	KUNIT_ASSERT_EQ(test, register_jprobe(&jp), -EINVAL);
	jp.kp.addr = NULL;
	jp.kp.symbol_name = "kpt_asm_sub";
	jp.kp.offset = kpt_label_addr(KPT_L_SUB_INSN) -
		       (unsigned long)kpt_asm_sub;
	KUNIT_ASSERT_EQ(test, register_jprobe(&jp), -EINVAL);
	jp.kp.offset = 0;
	KUNIT_ASSERT_EQ(test, register_jprobe(&jp), 0);
	unregister_jprobe(&jp);
}
#else
static void kpc_jprobe_off_entry(struct kunit *test)
{
	kunit_skip(test, KPC_NO_ASM "kpt_asm_sub");
}
#endif

/* The list shows a jprobe with the letter 'j'. */
static void kpc_jprobe_listed(struct kunit *test)
{
	struct jprobe jp = {
		.kp.addr = (kprobe_opcode_t *)kpt_eight_asm,
		.entry = kpc_jp0,
	};
	char line[256];

	KUNIT_ASSERT_EQ(test, register_jprobe(&jp), 0);
	KUNIT_EXPECT_EQ(test, kpt_kprobes_line("list", (unsigned long)jp.kp.addr,
					       'j', line, sizeof(line)), 0);
	/* +0x0, or +0x4 past an endbr64 on an IBT kernel */
	KUNIT_EXPECT_NOT_NULL(test,
			      strstr(line, "  j  " __stringify(kpt_eight_asm) "+0x"));
	unregister_jprobe(&jp);
	KUNIT_EXPECT_EQ(test, kpt_kprobes_line("list", (unsigned long)jp.kp.addr,
					       'j', line, sizeof(line)), -ENOENT);
}

#ifdef KPT_ASM_TARGETS
static int kpc_pre_nested(struct kprobe *p, struct pt_regs *regs)
{
	kpt_eight_call(kpt_eight_asm, 9);
	return 0;
}

/*
 * A call of the jprobed function from another probe's handler is a hit
 * the jprobe skips: its handler does not run, nmissed counts it.
 */
static void kpc_jprobe_missed(struct kunit *test)
{
	struct jprobe jp = {
		.kp.addr = (kprobe_opcode_t *)kpt_eight_asm,
		.entry = kpc_jp0,
	};
	struct kprobe kp = {
		.addr = (kprobe_opcode_t *)kpt_label_addr(KPT_L_ADD_INSN),
		.pre_handler = kpc_pre_nested,
	};

	kpc_reset();
	KUNIT_ASSERT_EQ(test, register_jprobe(&jp), 0);
	KUNIT_ASSERT_EQ(test, register_kprobe(&kp), 0);
	KUNIT_EXPECT_EQ(test, kpt_asm_add(1), 1 + KPT_ADD_IMM);
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, atomic_read(&kpc_calls[0]), 0);
	KUNIT_EXPECT_EQ(test, jp.kp.nmissed, 1UL);
	KUNIT_EXPECT_EQ(test, kpt_eight_call(kpt_eight_asm, 9), kpc_expect(9));
	KUNIT_EXPECT_EQ(test, atomic_read(&kpc_calls[0]), 1);
	kpc_expect_args(test, 0, 9);
	KUNIT_EXPECT_EQ(test, jp.kp.nmissed, 1UL);
	unregister_jprobe(&jp);
}

/* ---- fault_handler -------------------------------------------------- */

static void *kpc_bad;			/* the guard page after a vmalloc page */
static int kpc_load_ret;
static int kpc_fault_trapnr;
static unsigned long kpc_fault_ip;
static atomic_t kpc_faults;
static bool kpc_fix;			/* fault handler: deal with it */

static int kpc_pre_load(struct kprobe *p, struct pt_regs *regs)
{
	kpc_load_ret = kpt_asm_load(kpc_bad);
	return 0;
}

/*
 * As handlers of the older API did: look at where it happened, step over
 * the faulting instruction (kpt_asm_load's movl (%rdi), %eax: 2 bytes)
 * with a value of our own, and say it is dealt with.
 */
static int kpc_fault(struct kprobe *p, struct pt_regs *regs, int trapnr)
{
	atomic_inc(&kpc_faults);
	kpc_fault_trapnr = trapnr;
	kpc_fault_ip = regs->ip;
	if (!kpc_fix)
		return 0;
	regs->ip += 2;
	regs->ax = 77;
	return 1;
}

static void kpc_fault_reset(bool fix)
{
	kpc_fix = fix;
	kpc_load_ret = 0;
	kpc_fault_trapnr = -1;
	kpc_fault_ip = 0;
	atomic_set(&kpc_faults, 0);
}

/*
 * A pre_handler faults on a bad address: its fault_handler hears of it
 * (trap 14 at the load), and either deals with it or leaves it to the
 * exception table.  On both entry kinds and on a breakpoint mid-function.
 */
static void kpc_fault_in_pre(struct kunit *test)
{
	unsigned long where[] = {
		(unsigned long)kpt_eight, (unsigned long)kpt_eight_asm,
		kpt_label_addr(KPT_L_ADD_INSN),
	};
	void *area = vmalloc(PAGE_SIZE);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, area);
	kpc_bad = area + PAGE_SIZE;
	for (i = 0; i < ARRAY_SIZE(where); i++) {
		struct kprobe kp = {
			.addr = (kprobe_opcode_t *)where[i],
			.pre_handler = kpc_pre_load,
			.fault_handler = kpc_fault,
		};

		KUNIT_ASSERT_EQ(test, register_kprobe(&kp), 0);
		kpc_fault_reset(true);
		if (i < 2)
			KUNIT_EXPECT_EQ(test, kpt_eight_call((kpt_eight_fn)where[i], 1),
					kpc_expect(1));
		else
			KUNIT_EXPECT_EQ(test, kpt_asm_add(1), 1 + KPT_ADD_IMM);
		KUNIT_EXPECT_EQ(test, atomic_read(&kpc_faults), 1);
		KUNIT_EXPECT_EQ(test, kpc_fault_trapnr, 14);
		KUNIT_EXPECT_EQ(test, kpc_fault_ip, kpt_label_addr(KPT_L_LOAD_INSN));
		KUNIT_EXPECT_EQ(test, kpc_load_ret, 77);

		kpc_fault_reset(false);
		if (i < 2)
			kpt_eight_call((kpt_eight_fn)where[i], 1);
		else
			kpt_asm_add(1);
		KUNIT_EXPECT_EQ(test, atomic_read(&kpc_faults), 1);
		KUNIT_EXPECT_EQ(test, kpc_load_ret, KPT_LOAD_FIXUP);
		unregister_kprobe(&kp);
		KUNIT_EXPECT_EQ(test, kp.nmissed, 0UL);
	}
	vfree(area);
}

static int kpc_pre_nothing(struct kprobe *p, struct pt_regs *regs)
{
	return 0;
}

/*
 * The probed instruction itself faults while it runs out of line: the
 * fault_handler hears of it with the registers back on the instruction,
 * and either deals with it or leaves it to the exception table.
 */
static void kpc_fault_in_step(struct kunit *test)
{
	struct kprobe kp = {
		.addr = (kprobe_opcode_t *)kpt_label_addr(KPT_L_LOAD_INSN),
		.pre_handler = kpc_pre_nothing,
		.fault_handler = kpc_fault,
	};
	void *area = vmalloc(PAGE_SIZE);
	int val = 42;

	KUNIT_ASSERT_NOT_NULL(test, area);
	KUNIT_ASSERT_EQ(test, register_kprobe(&kp), 0);
	kpc_fault_reset(true);
	KUNIT_EXPECT_EQ(test, kpt_asm_load(&val), 42);
	KUNIT_EXPECT_EQ(test, atomic_read(&kpc_faults), 0);
	KUNIT_EXPECT_EQ(test, kpt_asm_load(area + PAGE_SIZE), 77);
	KUNIT_EXPECT_EQ(test, atomic_read(&kpc_faults), 1);
	KUNIT_EXPECT_EQ(test, kpc_fault_trapnr, 14);
	KUNIT_EXPECT_EQ(test, kpc_fault_ip, kpt_label_addr(KPT_L_LOAD_INSN));

	kpc_fault_reset(false);
	KUNIT_EXPECT_EQ(test, kpt_asm_load(area + PAGE_SIZE), KPT_LOAD_FIXUP);
	KUNIT_EXPECT_EQ(test, atomic_read(&kpc_faults), 1);
	KUNIT_EXPECT_EQ(test, kpt_asm_load(&val), 42);
	unregister_kprobe(&kp);
	vfree(area);
}
#else
static void kpc_jprobe_missed(struct kunit *test)
{
	kunit_skip(test, KPC_NO_ASM "kpt_asm_add");
}

static void kpc_fault_in_pre(struct kunit *test)
{
	kunit_skip(test, KPC_NO_ASM "kpt_asm_add, kpt_asm_load");
}

static void kpc_fault_in_step(struct kunit *test)
{
	kunit_skip(test, KPC_NO_ASM "kpt_asm_load");
}
#endif /* KPT_ASM_TARGETS */

/* ---- a jprobe at the top of a stack ---------------------------------- */

static atomic_t kpc_irq_hits, kpc_irq_top, kpc_irq_faults;

static void kpc_jp_irq(struct pt_regs *regs)
{
	atomic_inc(&kpc_irq_hits);
	jprobe_return();
}

/*
 * The IRQ stack's top, as irq_64.c sets hardirq_stack_ptr (one word
 * below it).  call_on_irqstack() enters a function at the top minus 24:
 * of the stack words a jprobe copies, only two are below the top.
 */
static int kpc_pre_irq_top(struct kprobe *p, struct pt_regs *regs)
{
	unsigned long top = (unsigned long)this_cpu_read(pcpu_hot.hardirq_stack_ptr) + 8;

	if (regs->sp < top && top - regs->sp <= 64)
		atomic_inc(&kpc_irq_top);
	return 0;
}

/* An old-style handler that says "dealt with" without moving the ip. */
static int kpc_irq_fault(struct kprobe *p, struct pt_regs *regs, int trapnr)
{
	return atomic_inc_return(&kpc_irq_faults) <= 2;
}

/*
 * A jprobe on a function that call_on_irqstack() enters at the top of
 * the IRQ stack (the local APIC timer's handler, running while this
 * thread sleeps) copies no stack word from past the top: there, under
 * VMAP_STACK, is the guard page, and a fault in the copy went to the
 * site's fault_handler on every hit.
 */
static void kpc_jprobe_irq_stack(struct kunit *test)
{
	struct jprobe jp = {
		.kp.symbol_name = "__sysvec_apic_timer_interrupt",
		.kp.fault_handler = kpc_irq_fault,
		.entry = kpc_jp_irq,
	};
	struct kprobe kp = {
		.symbol_name = "__sysvec_apic_timer_interrupt",
		.pre_handler = kpc_pre_irq_top,
	};
	int i;

	if (!IS_ENABLED(CONFIG_VMAP_STACK))
		kunit_skip(test, "no guard page above the IRQ stack (VMAP_STACK off)");
	atomic_set(&kpc_irq_hits, 0);
	atomic_set(&kpc_irq_top, 0);
	atomic_set(&kpc_irq_faults, 0);
	KUNIT_ASSERT_EQ(test, register_jprobe(&jp), 0);
	KUNIT_ASSERT_EQ(test, register_kprobe(&kp), 0);
	for (i = 0; i < 250 && atomic_read(&kpc_irq_top) < 20; i++)
		msleep(20);
	unregister_kprobe(&kp);
	unregister_jprobe(&jp);
	if (!atomic_read(&kpc_irq_top))
		kunit_skip(test, "no timer interrupt taken at the IRQ stack's top");
	KUNIT_EXPECT_GE(test, atomic_read(&kpc_irq_hits), atomic_read(&kpc_irq_top));
	KUNIT_EXPECT_EQ(test, atomic_read(&kpc_irq_faults), 0);
}

static struct kunit_case kpc_cases[] = {
	KUNIT_CASE(kpc_jprobe_args),
	KUNIT_CASE(kpc_jprobe_stacktrace),
	KUNIT_CASE(kpc_jprobe_together),
	KUNIT_CASE(kpc_jprobes_rollback),
	KUNIT_CASE(kpc_jprobe_off_entry),
	KUNIT_CASE(kpc_jprobe_listed),
	KUNIT_CASE(kpc_jprobe_missed),
	KUNIT_CASE(kpc_fault_in_pre),
	KUNIT_CASE(kpc_fault_in_step),
	KUNIT_CASE(kpc_jprobe_irq_stack),
	{}
};

static struct kunit_suite kpc_suite = {
	.name = "kprobes_compat",
	.test_cases = kpc_cases,
};

kunit_test_suite(kpc_suite);

MODULE_DESCRIPTION("KUnit: jprobes and fault_handler (CONFIG_KPROBES_COMPAT)");
MODULE_LICENSE("GPL");
