/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the parts of kprobes_opt.ko share: kpo_main.c (the probes, the
 * per-case context, the list, the calls, kpo_states and the suite),
 * kpo_hits.c (kpo_regs_*, kpo_smp) and kpo_limits.c (where a jump must
 * not go, kpo_change_path_*, kpo_context_*).  What the cases check is
 * described at the top of kpo_main.c.
 */
#ifndef _KPROBES_SELFTEST_KPO_H
#define _KPROBES_SELFTEST_KPO_H

#include <linux/atomic.h>
#include <linux/kprobes.h>
#include <linux/ptrace.h>
#include <linux/types.h>

struct kunit;
struct task_struct;

/* How long a change may take to show in the list, and the text to return. */
#define KPO_STATE_MS		10000
#define KPO_TEXT_MS		5000
/* How long to give a probe that may or may not be optimized. */
#define KPO_MAYBE_MS		1000
/* Calls per step of kpo_states. */
#define KPO_NCALLS		64
/* kpo_smp: rounds, and calls per phase from each CPU, within a time. */
#define KPO_SMP_ROUNDS		6
#define KPO_SMP_CALLS		2000
#define KPO_SMP_MS		5000
/* Stack trace entries kept by a handler. */
#define KPO_TRACE		32
#define KPO_NPROBES		4

/* The size of kpt_opt_asm, as its source has it (kpo_layout_want[]). */
#define KPO_SIZE		34
/* Instructions probed: the entry, the one after it, the imul. */
#define KPO_I_ENTRY		0
#define KPO_I_NEXT		1
#define KPO_I_MID		4

enum kpo_set {
	KPO_SET_NONE,
	KPO_SET_DI,
	KPO_SET_AX,
};

/* What a handler saw on its latest hit. */
struct kpo_snap {
	bool valid;
	struct pt_regs regs;
	/* The word at regs->sp. */
	unsigned long top;
	unsigned long trace[KPO_TRACE];
	unsigned int ntrace;
};

struct kpo_probe {
	struct kprobe kp;
	atomic_t pre;
	atomic_t post;
	/* Take a snapshot on each hit (kpo_regs only: one caller). */
	bool snap;
	struct kpo_snap last;
	/* A register the pre_handler sets, and to what. */
	enum kpo_set set;
	unsigned long set_val;
	/*
	 * If set, where the pre_handler sends execution: it sets regs->ip
	 * to it and returns 1.
	 */
	unsigned long divert;
};

struct kpo_ctx {
	bool live[KPO_NPROBES];
	/* The sysctl's value before the case changed it, or < 0. */
	int sysctl_old;

	struct task_struct *worker;
	bool bound_cpu;
	/* Upstream's lost post_handler runs were reported. */
	bool upstream_no_post;
	/* kpt_opt_asm: where, where its code starts (past endbr64), what. */
	unsigned long addr;
	unsigned long code;
	const u32 *insns;
	unsigned int ninsns;
	unsigned int size;
	u8 text[KPO_SIZE];
};

#define KPO_ANY		(KPT_PS_LISTED | KPT_PS_OPTIMIZED | KPT_PS_DISABLED | \
			 KPT_PS_FTRACE | KPT_PS_GONE)

/* The ways a probe can be hit (kpo_regs_*, kpo_context_*). */
enum kpo_path {
	KPO_BREAKPOINT,
	KPO_BOOSTED,
	KPO_OPTIMIZED,
	KPO_FTRACE,
};

/* kpo_main.c */
extern bool kpo_upstream;
extern bool kpo_cross_cpu;
int kpo_pre(struct kprobe *kp, struct pt_regs *regs);
void kpo_post(struct kprobe *kp, struct pt_regs *regs,
	      unsigned long flags);
int kpo_pre_count(struct kpo_probe *p);
int kpo_post_count(struct kpo_probe *p);
struct kpo_probe *kpo_new(int i, bool post);
void kpo_register(struct kunit *test, struct kpo_probe *p,
		  unsigned long addr);
void kpo_unregister(struct kunit *test, struct kpo_probe *p);
void kpo_need_sysctl(struct kunit *test, int on);
void kpo_sysctl(struct kunit *test, int on);
int kpo_bind_self(struct kunit *test);
void kpo_layout(struct kunit *test);
unsigned long kpo_insn(struct kunit *test, unsigned int i);
void kpo_expect_text(struct kunit *test);
const char *kpo_marks(int state, char *buf, size_t len);
int kpo_expect_state(struct kunit *test, unsigned long addr, int mask,
		     int want, const char *step);
int kpo_expect_optimized(struct kunit *test, unsigned long addr,
			 const char *step);
int kpo_expect_plain(struct kunit *test, unsigned long addr,
		     const char *step);
void kpo_input(unsigned int i, u64 *a, u64 *b, u64 *c);
int kpo_calls(struct kunit *test, unsigned int first, unsigned int n,
	      const char *step);
bool kpo_upstream_no_post(struct kunit *test, int post, int pre);
void kpo_states(struct kunit *test);

/* kpo_hits.c */
extern const char * const kpo_path_name[];
void kpo_regs_breakpoint(struct kunit *test);
void kpo_regs_boosted(struct kunit *test);
void kpo_regs_optimized(struct kunit *test);
void kpo_regs_ftrace(struct kunit *test);
void kpo_smp(struct kunit *test);

/* kpo_limits.c */
void kpo_cold_entry(struct kunit *test);
void kpo_refused_neighbour(struct kunit *test);
void kpo_uaccess(struct kunit *test);
void kpo_text_shows(struct kunit *test);
void kpo_refusals(struct kunit *test);
void kpo_null_handlers(struct kunit *test);
void kpo_change_path_post_handler(struct kunit *test);
void kpo_change_path_sysctl(struct kunit *test);
void kpo_context_breakpoint(struct kunit *test);
void kpo_context_boosted(struct kunit *test);
void kpo_context_optimized(struct kunit *test);
void kpo_context_ftrace(struct kunit *test);

#endif /* _KPROBES_SELFTEST_KPO_H */
