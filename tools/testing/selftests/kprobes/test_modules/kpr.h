/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the parts of kprobes_kretprobe.ko share: kpr_main.c (the probes,
 * the handlers, the crowd, set-up and clean-up, the registration cases
 * and the suite), kpr_stack.c (stack traces from a return handler,
 * concurrency) and kpr_edge.c (bad input, the context handlers run in).
 * What the cases check is described at the top of kpr_main.c.
 */
#ifndef _KPROBES_SELFTEST_KPR_H
#define _KPROBES_SELFTEST_KPR_H

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/kprobes.h>
#include <linux/types.h>
#include <linux/wait.h>
#include "kprobes_target.h"

struct kunit;
struct task_struct;

extern bool kpr_upstream;

#ifdef CONFIG_KRETPROBES

/* Entries kept of a stack trace taken in a return handler. */
#define KPR_STACK_MAX	32

/* A return probe with what its handlers saw. */
struct kpr_probe {
	struct kretprobe rp;
	int add;			/* the target returns arg + add */
	unsigned long want_ra;		/* expected return address, if set */
	atomic_t entries;		/* entry_handler calls */
	atomic_t returns;		/* handler calls */
	atomic_t bad;			/* handler calls that saw a mistake */
	unsigned long why;		/* KPR_BAD_* bits */
	unsigned long last_ret;		/* regs_return_value() last seen */
#ifdef CONFIG_ARM64
	u64 last_pstate;		/* and regs->pstate, regs->syscallno */
	s32 last_syscallno;
#endif
	unsigned long stack[KPR_STACK_MAX];
	unsigned int nstack;
};

/*
 * What an entry handler leaves in ri->data for the return handler: 64
 * bytes on every architecture (kpr_data_round_trip asks for that size).
 */
struct kpr_data {
	s64 arg;
	u64 magic;
	u8 fill[48];
};

#define KPR_MAGIC	0x6b72657470726f62ULL

/*
 * A module can call is_kretprobe_trampoline() only where the kernel
 * exports it (the Makefile looks in Module.symvers).  Upstream does not:
 * its version (rethook) is an inline on a symbol it does not export.
 * Ours does, on the bridge's rethook trampoline too.  Without it, the
 * trampoline checks rely on the return address the target saw while
 * probed, which is the trampoline; on our kernel the missing export is
 * reported as a failure of kpr_stacktrace.
 */
#if defined(KPR_IS_TRAMPOLINE_EXPORTED)
#define kpr_can_ask_trampoline	true
static inline bool kpr_is_trampoline(unsigned long addr)
{
	return is_kretprobe_trampoline(addr);
}
#else
#define kpr_can_ask_trampoline	false
static inline bool kpr_is_trampoline(unsigned long addr)
{
	return false;
}
#endif

/*
 * What differs between architectures, in one place:
 *
 * KPR_HAVE_KRET_ASM: kprobes_target.ko has kpt_kret_spin() and
 * kpt_kret_park(), which note their instance key in kpt_kret_fp
 * (kpt_asm.S on x86-64, kpt_asm_32.S on i386, kpt_kret_arm64.S on arm64).
 *
 * KPR_HAVE_ASM_TARGETS: it has kpt_asm_add() and kpt_asm_sub() with the
 * labels kpt_label_addr() gives inside them (KPT_ASM_TARGETS in
 * kprobes_target.h; kpt_asm.S, kpt_asm_32.S, kpt_asm_arm64.S):
 * an instruction stepped out of line that leaves its result in the
 * return-value register (regs_return_value()), and a second instruction
 * that is no function entry.
 *
 * kpr_bp_target: a function whose entry probe is a breakpoint, returning
 * kpt_opt_want(): kpt_opt_asm() on x86-64, where C functions start with
 * an ftrace call that carries entry probes, and kpt_opt_c_untraced() on
 * s390 and i386 for the same reason; elsewhere the C function kpt_opt_c(), whose
 * entry probe no ftrace call carries (arm64 and most of the bridged
 * architectures have no kprobes on ftrace; on ppc64 the call comes after
 * the entry).
 */
#if defined(CONFIG_X86) || defined(CONFIG_ARM64)
#define KPR_HAVE_KRET_ASM
#endif
#ifdef KPT_ASM_TARGETS
#define KPR_HAVE_ASM_TARGETS
#endif

#ifdef CONFIG_X86_64
#define kpr_bp_target	kpt_opt_asm
#elif defined(CONFIG_S390) || defined(CONFIG_X86_32)
#define kpr_bp_target	kpt_opt_c_untraced
#else
#define kpr_bp_target	kpt_opt_c
#endif

/*
 * kpr_arg0(): the first argument of the probed function, in an entry
 * handler.  regs_get_kernel_argument() where the architecture has it
 * (HAVE_FUNCTION_ARG_ACCESS_API); arm's and mips' first argument
 * registers (r0; a0, which is $4) where it does not.  s390 has the API,
 * but its inline calls regs_get_register(), which modules cannot link
 * against: r2 there.
 */
static inline unsigned long kpr_arg0(struct pt_regs *regs)
{
#if defined(CONFIG_S390)
	return regs->gprs[2];
#elif defined(CONFIG_HAVE_FUNCTION_ARG_ACCESS_API)
	return regs_get_kernel_argument(regs, 0);
#elif defined(CONFIG_ARM)
	return regs->ARM_r0;
#elif defined(CONFIG_MIPS)
	return regs->regs[4];
#else
#error "kpr_arg0(): the first argument register of this architecture is not known"
#endif
}

/*
 * KPR_RET_TRAP: the return trampoline reaches the return handlers through
 * a breakpoint (mips; powerpc, whose rethook trampoline is a kprobe, while
 * jump optimization is off: on, that probe is a jump), so they run with
 * interrupts off, as any breakpoint's handlers do; elsewhere as the
 * probed function's caller had them.
 */
#define KPR_RET_TRAP	(IS_ENABLED(CONFIG_MIPS) || IS_ENABLED(CONFIG_PPC))

#define KPR_NPROBES	4

/* What the running case registered, undone by kpr_exit(). */
struct kpr_ctx {
	struct kretprobe *live[KPR_NPROBES + 1];
	struct kprobe *kps[2];
	void *heap;		/* a kmalloc()ed probe, freed after that */
	int sysctl_old;		/* the sysctl before the case set it, or < 0 */
};

/* The "crowd" of callers sleeping in a probed function (kpr_main.c). */
struct kpr_crowd {
	bool active;
	int started;
	atomic_t returned;		/* came back from kpt_gate_wait() */
	atomic_t wrong;			/* ... with a wrong value */
	atomic_t alive;			/* + 1 while threads are created */
	struct completion gone;		/* alive reached zero */
	int refs_before;		/* module_refcount() before */
	struct task_struct *first;	/* thread 0, referenced */
	bool hold;			/* threads wait for kpr_crowd_release() */
	atomic_t held;			/* ... and this many are there */
	wait_queue_head_t hold_wq;
};

/* kpr_main.c */
extern struct kpr_crowd kpr_crowd;
extern atomic_t kpr_pre_hits;
extern struct kprobe kpr_kp;
struct kpr_probe *kpr_new(int i);
void kpr_track(struct kunit *test, struct kretprobe *rp);
void kpr_untrack(struct kunit *test, struct kretprobe *rp);
int kpr_register(struct kunit *test, struct kretprobe *rp);
void kpr_unregister(struct kunit *test, struct kretprobe *rp);
#ifdef KRETPROBE_POOL_GROWS
struct kretprobe_pool_info kpr_pool_info(struct kpr_probe *p);
#endif
int kpr_returns(struct kpr_probe *p);
int kpr_entry_count(struct kretprobe_instance *ri, struct pt_regs *regs);
int kpr_ret_note(struct kretprobe_instance *ri, struct pt_regs *regs);
int kpr_entry_save(struct kretprobe_instance *ri, struct pt_regs *regs);
int kpr_ret_check(struct kretprobe_instance *ri, struct pt_regs *regs);
int kpr_ret_stack(struct kretprobe_instance *ri, struct pt_regs *regs);
void kpr_expect_healthy(struct kunit *test, int (*fn)(int), int add);
int kpr_crowd_start(int n);
int kpr_crowd_start_held(int n);
int kpr_crowd_held(void);
void kpr_crowd_release(void);
int kpr_crowd_start_paced(int n, void (*pace)(int started, void *arg),
			  void *arg);
bool kpr_wait_count(int (*read)(void), int n, int secs);
int kpr_crowd_returned(void);
bool kpr_crowd_end(int secs);

/* kpr_stack.c */
void kpr_stacktrace(struct kunit *test);
void kpr_stacktrace_nested(struct kunit *test);
void kpr_two_cpus(struct kunit *test);
void kpr_unregister_in_flight(struct kunit *test);
void kpr_disable_in_flight(struct kunit *test);
void kpr_find_ret_addr(struct kunit *test);
void kpr_uaccess(struct kunit *test);
void kpr_task_exit(struct kunit *test);
void kpr_recursion_maxactive_1(struct kunit *test);
void kpr_no_miss(struct kunit *test);
void kpr_burst(struct kunit *test);
void kpr_pool_trim_last_cached(struct kunit *test);

/* kpr_edge.c */
void kpr_err_data_size(struct kunit *test);
void kpr_err_maxactive(struct kunit *test);
void kpr_err_not_entry(struct kunit *test);
#ifdef CONFIG_ARM64
void kpr_entry_after_ftrace(struct kunit *test);
#endif
void kpr_err_symbols(struct kunit *test);
void kpr_err_array_null(struct kunit *test);
void kpr_err_array_bad_symbol(struct kunit *test);
void kpr_err_unregister_unregistered(struct kunit *test);
void kpr_handler_ret_ignored(struct kunit *test);
void kpr_default_maxactive(struct kunit *test);
void kpr_err_register_twice(struct kunit *test);
void kpr_context_ftrace_site(struct kunit *test);
void kpr_context_breakpoint_site(struct kunit *test);
void kpr_context_optimized_site(struct kunit *test);

#endif /* CONFIG_KRETPROBES */
#endif /* _KPROBES_SELFTEST_KPR_H */
