/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the parts of kprobes_opt.ko share: kpo_main.c (the probes, the
 * per-case context, the list, the calls, kpo_states and the suite),
 * kpo_hits.c (kpo_regs_*, kpo_smp), kpo_limits.c (where a jump must not
 * go, kpo_change_path_*, kpo_context_*) and, on arm64, kpo_arm64.c (a
 * redirection from an optimized probe, the detour's rewrites).  What the
 * cases check is described at the top of kpo_main.c; what differs
 * between x86 and arm64 is here, in one place.
 */
#ifndef _KPROBES_SELFTEST_KPO_H
#define _KPROBES_SELFTEST_KPO_H

#include <linux/atomic.h>
#include <linux/kprobes.h>
#include <linux/ptrace.h>
#include <linux/string.h>
#include <linux/types.h>
#ifdef CONFIG_X86
#include <asm/ibt.h>
#include <asm/text-patching.h>
#endif
#ifdef CONFIG_ARM64
#include <linux/cpufeature.h>
#include <asm/debug-monitors.h>
#include <asm/insn.h>
#include <asm/sysreg.h>
#endif
#include "kprobes_target.h"

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

/* ---------------------------------------------------------------------
 * What differs between the architectures (the functions are at the end
 * of this file):
 *
 * KPO_SIZE, KPO_I_RET: the size of kpt_opt_asm's code (past the landing
 *   pad, if any), the index of its ret (kpo_main.c has its layout).
 * KPO_ARGS_AT_MID: the argument registers still hold the arguments at
 *   kpt_opt_asm's multiplication (not on i386, which computes in them).
 * KPO_JUMP_SIZE, KPO_TRAP_SIZE: the bytes an optimized probe's jump and a
 *   breakpoint replace.
 * KPO_JUMP_COVERS_NEXT: the jump covers the instruction after the probed
 *   one (x86's jmp takes five bytes; arm64's B is one instruction).
 * KPO_OPT_REDIRECTS: an optimized probe honours a pre_handler's change of
 *   the PC (arm64), or ignores it (x86).
 * KPO_IP_DELTA: instruction_pointer(regs) in a pre_handler, less the
 *   probe's address (past the int3; on the BRK).
 * KPO_SP_DELTA: kpt_opt_sp less the stack pointer the callee starts with
 *   (x86's call pushes the return address).
 * KPO_COLD_FIRST: the size of kpt_cold's first instruction.
 */
#if defined(CONFIG_X86)
#ifdef CONFIG_X86_64
#define KPO_SIZE		34
#define KPO_I_RET		10
#define KPO_ARGS_AT_MID		true
#else
#define KPO_SIZE		20
#define KPO_I_RET		7
#define KPO_ARGS_AT_MID		false
#endif
#define KPO_JUMP_SIZE		JMP32_INSN_SIZE
#define KPO_TRAP_SIZE		INT3_INSN_SIZE
#define KPO_JUMP_COVERS_NEXT	true
#define KPO_OPT_REDIRECTS	false
#define KPO_IP_DELTA		1
#define KPO_SP_DELTA		(BITS_PER_LONG / 8)
#define KPO_COLD_FIRST		1
#elif defined(CONFIG_ARM64)
#define KPO_SIZE		36
#define KPO_I_RET		8
#define KPO_JUMP_SIZE		AARCH64_INSN_SIZE
#define KPO_TRAP_SIZE		AARCH64_INSN_SIZE
#define KPO_ARGS_AT_MID		true
#define KPO_JUMP_COVERS_NEXT	false
#define KPO_OPT_REDIRECTS	true
#define KPO_IP_DELTA		0
#define KPO_SP_DELTA		0
#define KPO_COLD_FIRST		AARCH64_INSN_SIZE
#endif

/*
 * Instructions of kpt_opt_asm probed: the entry, the one after it, the
 * multiplication (imul, mul).  Its size: KPO_SIZE above.
 */
#define KPO_I_ENTRY		0
#define KPO_I_NEXT		1
#define KPO_I_MID		4

/* The register a pre_handler sets (kpo_set_arg0(), kpo_set_mid()). */
enum kpo_set {
	KPO_SET_NONE,
	KPO_SET_ARG0,
	KPO_SET_MID,
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
	 * (pc) to it and returns 1.
	 */
	unsigned long divert;
};

/* What one call of the probed function must have shown a probe. */
struct kpo_want {
	const char *path;
	const char *fn;
	/* The probe's address, the stack pointer there. */
	unsigned long addr;
	unsigned long sp;
	/* The probed function's return address; the caller the trace names. */
	unsigned long ret;
	unsigned long up;
	/* arm64: x29, the frame record kpt_opt_call() made. */
	unsigned long fp;
	unsigned long a, b, c;
	bool mid;
	/* The pt_regs is the detour's, not a trap's (arm64: syscallno set). */
	bool built;
};

/* One register a hit must show: what, seen, wanted. */
struct kpo_check {
	const char *what;
	unsigned long got, want;
};

struct kpo_ctx {
	bool live[KPO_NPROBES];
	/* The sysctl's value before the case changed it, or < 0. */
	int sysctl_old;

	struct task_struct *worker;
	bool bound_cpu;
	/* Upstream's lost post_handler runs were reported. */
	bool upstream_no_post;
	/* kpt_opt_asm: where, where its code starts (past a pad), what. */
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
void kpo_input(unsigned int i, unsigned long *a, unsigned long *b,
	       unsigned long *c);
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

/* kpo_limits.c, for kpo_arm64.c */
bool kpo_wait_text(unsigned long addr, bool jump, u8 *now);
void kpo_expect_insn(struct kunit *test, unsigned long addr, bool jump,
		     const char *step);

/* kpo_arm64.c */
void kpo_change_path_optimized(struct kunit *test);
void kpo_rewrites(struct kunit *test);

/* ---------------------------------------------------------------------
 * What differs between the architectures: the constants at the top of
 * this file, and
 *
 * kpo_pad_ok(): kpt_opt_asm's code may start @skip bytes in: past the
 *   landing pad (endbr64, bti c) of a kernel that enforces them.
 * kpo_is_jump(), kpo_is_trap(): the text at @addr is an optimized
 *   probe's jump (and where to), a probe's breakpoint.
 * kpo_set_arg0(), kpo_set_mid(): the first argument; the register
 *   kpt_opt_asm's multiplication works on (a + b before it).
 * kpo_set_return(): the hit of a probe on a function's first instruction
 *   makes the call return @val at once, as fail_function does.
 * kpo_regs_irqs_on(): the probed context had interrupts on.
 * kpo_seen_ret(): the return address a hit on kpt_opt_asm or kpt_opt_c
 *   shows (on the stack; in the link register).
 * kpo_call_ret(), kpo_call_up(): the return address of the call in
 *   kpt_opt_call() (@c: kpt_opt_call_c()), and the one a handler's stack
 *   trace must show past the probed function.
 * kpo_arch_checks(): the other registers a hit must show, in @c; returns
 *   how many.
 * kpo_path_missing(): why a way to hit a probe does not exist here, or
 *   NULL.
 */
#if defined(CONFIG_X86)

static inline bool kpo_pad_ok(unsigned long addr, unsigned int skip)
{
	return !skip || (HAS_KERNEL_IBT && skip == ENDBR_INSN_SIZE &&
			 is_endbr(*(u32 *)addr));
}

static inline bool kpo_is_jump(const u8 *t, unsigned long addr,
			       unsigned long *target)
{
	s32 rel;

	if (t[0] != JMP32_INSN_OPCODE)
		return false;
	memcpy(&rel, t + 1, sizeof(rel));
	*target = addr + JMP32_INSN_SIZE + rel;
	return true;
}

static inline bool kpo_is_trap(const u8 *t)
{
	return t[0] == INT3_INSN_OPCODE;
}

static inline void kpo_set_arg0(struct pt_regs *regs, unsigned long val)
{
#ifdef CONFIG_X86_64
	regs->di = val;
#else
	regs->ax = val;
#endif
}

static inline void kpo_set_mid(struct pt_regs *regs, unsigned long val)
{
	regs->ax = val;
}

static inline void kpo_set_return(struct pt_regs *regs, unsigned long val)
{
	regs->ax = val;
	instruction_pointer_set(regs, (unsigned long)kpt_asm_ret);
}

static inline bool kpo_regs_irqs_on(const struct pt_regs *regs)
{
	return regs->flags & X86_EFLAGS_IF;
}

static inline unsigned long kpo_seen_ret(const struct kpo_snap *s)
{
	return s->top;
}

static inline unsigned long kpo_call_ret(bool c)
{
	return kpt_label_addr(c ? KPT_L_OPT_CALL_C_RET : KPT_L_OPT_CALL_RET);
}

/* The return address is on the stack, where the unwinder finds it. */
static inline unsigned long kpo_call_up(bool c)
{
	return kpo_call_ret(c);
}

/*
 * On kpt_opt_asm's imul: after the sum in %rax (%eax) and, just before,
 * "or $1" on %rcx (i386: on %edx, with c mixed in %ecx).
 */
static inline unsigned int kpo_arch_checks(const struct pt_regs *r,
					   const struct kpo_want *w,
					   struct kpo_check *c)
{
	unsigned long bor = w->b | 1;

	if (!w->mid)
		return 0;
	c[0] = (struct kpo_check){ "regs->ax", r->ax, w->a + w->b };
	c[1] = (struct kpo_check){
		"arithmetic flags of the or in regs->flags",
		r->flags & (X86_EFLAGS_CF | X86_EFLAGS_ZF | X86_EFLAGS_SF |
			    X86_EFLAGS_OF),
		(bor >> (BITS_PER_LONG - 1)) ? X86_EFLAGS_SF : 0UL };
#ifdef CONFIG_X86_64
	c[2] = (struct kpo_check){ "regs->cx", r->cx, bor };
	return 3;
#else
	c[2] = (struct kpo_check){ "regs->dx", r->dx, bor };
	c[3] = (struct kpo_check){ "regs->cx", r->cx,
				   ror32(w->c + (w->a << 3), 5) };
	return 4;
#endif
}

static inline const char *kpo_path_missing(enum kpo_path path)
{
	return NULL;
}

#elif defined(CONFIG_ARM64)

#define KPO_NZCV		(PSR_N_BIT | PSR_Z_BIT | PSR_C_BIT | PSR_V_BIT)
/* The SSBS register: PSTATE.SSBS at its SPSR position. */
#define KPO_SYS_SSBS		sys_reg(3, 3, 4, 2, 6)
#define KPO_BTI_C		0xd503245fU

static inline u32 kpo_insn_at(const void *p)
{
	u32 insn;

	memcpy(&insn, p, sizeof(insn));
	return le32_to_cpu((__force __le32)insn);
}

static inline bool kpo_pad_ok(unsigned long addr, unsigned int skip)
{
	return !skip || (IS_ENABLED(CONFIG_ARM64_BTI_KERNEL) &&
			 skip == AARCH64_INSN_SIZE &&
			 kpo_insn_at((void *)addr) == KPO_BTI_C);
}

static inline bool kpo_is_jump(const u8 *t, unsigned long addr,
			       unsigned long *target)
{
	u32 insn = kpo_insn_at(t);

	if ((insn & 0xfc000000) != 0x14000000)
		return false;
	*target = addr + (sign_extend64(insn & 0x03ffffff, 25) << 2);
	return true;
}

static inline bool kpo_is_trap(const u8 *t)
{
	return kpo_insn_at(t) == BRK64_OPCODE_KPROBES;
}

static inline void kpo_set_arg0(struct pt_regs *regs, unsigned long val)
{
	regs->regs[0] = val;
}

static inline void kpo_set_mid(struct pt_regs *regs, unsigned long val)
{
	regs->regs[3] = val;
}

/* A probe on the function's first instruction: return to the caller. */
static inline void kpo_set_return(struct pt_regs *regs, unsigned long val)
{
	regs->regs[0] = val;
	instruction_pointer_set(regs, procedure_link_pointer(regs));
}

static inline bool kpo_regs_irqs_on(const struct pt_regs *regs)
{
	return !(regs->pstate & PSR_I_BIT);
}

static inline unsigned long kpo_seen_ret(const struct kpo_snap *s)
{
	return s->regs.regs[30];
}

static inline unsigned long kpo_call_ret(bool c)
{
	return c ? (unsigned long)kpt_opt_call_c + kpt_opt_call_c_ret_off :
		   (unsigned long)kpt_opt_call + kpt_opt_call_ret_off;
}

/*
 * The link register is in no frame record while the probed function (a
 * leaf, or at its entry) runs: the unwinder goes from the probed address
 * to the frame record x29 points to, kpt_opt_call()'s inner one.
 */
static inline unsigned long kpo_call_up(bool c)
{
	return c ? (unsigned long)kpt_opt_call_c + kpt_opt_call_c_up_off :
		   (unsigned long)kpt_opt_call + kpt_opt_call_up_off;
}

/* NZCV in PSTATE's bits after adds a + b. */
static inline unsigned long kpo_adds_nzcv(u64 a, u64 b)
{
	u64 d = a + b;

	return (d >> 63 ? PSR_N_BIT : 0) | (!d ? PSR_Z_BIT : 0) |
	       (d < a ? PSR_C_BIT : 0) |
	       ((~(a ^ b) & (a ^ d)) >> 63 ? PSR_V_BIT : 0);
}

/* PSTATE's NZCV as kpt_opt_cmp_flags() packs them (N 1, Z 2, C 4, V 8). */
static inline u64 kpo_nzcv_pack(u64 pstate)
{
	return (pstate >> 31 & 1) | (pstate >> 30 & 1) << 1 |
	       (pstate >> 29 & 1) << 2 | (pstate >> 28 & 1) << 3;
}

static inline u64 kpo_nzcv_unpack(u64 f)
{
	return (f & 1 ? PSR_N_BIT : 0) | (f & 2 ? PSR_Z_BIT : 0) |
	       (f & 4 ? PSR_C_BIT : 0) | (f & 8 ? PSR_V_BIT : 0);
}

/*
 * x29: the frame record kpt_opt_call() made; on kpt_opt_asm's mul, what
 * the four instructions before it left: b | 1, a << 3, c, a + b and the
 * flags of the adds.
 */
static inline unsigned int kpo_arch_checks(const struct pt_regs *r,
					   const struct kpo_want *w,
					   struct kpo_check *c)
{
	unsigned int n = 0;

	c[n++] = (struct kpo_check){ "x29", r->regs[29], w->fp };
	/*
	 * A trap from kernel mode leaves syscallno as it was; the detour
	 * says "no system call", for in_syscall() and the like.
	 */
	if (w->built)
		c[n++] = (struct kpo_check){ "syscallno", (u32)r->syscallno,
					     (u32)NO_SYSCALL };
	/* As a trap from kernel mode has them, on every path. */
	c[n++] = (struct kpo_check){ "PAN in pstate", r->pstate & PSR_PAN_BIT,
				     system_uses_hw_pan() ?
				     read_sysreg_s(SYS_PSTATE_PAN) & PSR_PAN_BIT : 0 };
	c[n++] = (struct kpo_check){ "SSBS in pstate", r->pstate & PSR_SSBS_BIT,
				     cpus_have_final_cap(ARM64_SSBS) ?
				     read_sysreg_s(KPO_SYS_SSBS) & PSR_SSBS_BIT : 0 };
	if (!w->mid)
		return n;
	c[n++] = (struct kpo_check){ "x3", r->regs[3], w->a + w->b };
	c[n++] = (struct kpo_check){ "x4", r->regs[4], w->b | 1 };
	c[n++] = (struct kpo_check){ "x5", r->regs[5], w->a << 3 };
	c[n++] = (struct kpo_check){ "x6", r->regs[6], w->c };
	c[n++] = (struct kpo_check){ "NZCV of the adds in pstate",
				     r->pstate & KPO_NZCV,
				     kpo_adds_nzcv(w->a, w->b) };
	return n;
}

static inline const char *kpo_path_missing(enum kpo_path path)
{
	switch (path) {
	case KPO_BOOSTED:
		return "arm64: no boosting: a stepped hit always comes back after its copy";
	case KPO_FTRACE:
		return "arm64: no kprobes on ftrace (CONFIG_KPROBES_ON_FTRACE)";
	default:
		return NULL;
	}
}

#endif /* CONFIG_ARM64 */

#define KPO_NCHECKS		10

#endif /* _KPROBES_SELFTEST_KPO_H */
