/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of the kprobes selftest target module: functions that the
 * tests probe, and the addresses of a few instructions inside them.
 */
#ifndef _KPROBES_SELFTEST_TARGET_H
#define _KPROBES_SELFTEST_TARGET_H

#define KPT_MODNAME		"kprobes_target"

/* Immediate added by kpt_asm_add(); keep in sync with kpt_asm.S. */
#define KPT_ADD_IMM		0x1234
/* Immediate subtracted by kpt_asm_sub(); keep in sync with kpt_asm.S. */
#define KPT_SUB_IMM		0x4321
/* Value kpt_asm_load() returns when its load faults. */
#define KPT_LOAD_FIXUP		0xfa17

/* Return values of the two functions of the path-change case. */
#define KPT_RET_A		0xaaa
#define KPT_RET_B		0xbbb

/* What the return-probe targets add to their argument. */
#define KPT_KRET_A_ADD		0x1100
#define KPT_KRET_B_ADD		0x2200
#define KPT_KRET_INNER_ADD	0x3300
#define KPT_KRET_OUTER_ADD	0x4400
#define KPT_GATE_ADD		0x5500
/* kpt_kret_exit(NULL) returns this. */
#define KPT_KRET_EXIT_RET	0x6600
/* What kpt_kret_unload_wait() adds (run_tests.sh has it too). */
#define KPT_KRET_UNLOAD_ADD	0x7700

/* Functions kpt_many_0() ... of kpt_many[]. */
#define KPT_NMANY		1000

/* kpt_opt_pcrel()'s literals and data (arm64: kpt_opt_arm64.S). */
#define KPT_PCREL_LIT_A		0x1122334455667788
#define KPT_PCREL_LIT_X		0x0123456789abcdef
#define KPT_PCREL_LIT_W		0x89abcdef
#define KPT_PCREL_LIT_SW	0x80000001
#define KPT_PCREL_DATA		0x0f1e2d3c4b5a6978

/* What kpt_cold() adds. */
#define KPT_COLD_ADD		0x7070

/*
 * The hand-written targets with a known instruction layout (kpt_asm_add()
 * and the others below) exist where KPT_ASM_TARGETS is defined: on x86-64
 * (kpt_asm.S), i386 (kpt_asm_32.S) and arm64 (kpt_asm_arm64.S).  Where x86
 * and arm64 differ as the cases see them, one place:
 *
 * KPT_BP_IP_DELTA: instruction_pointer(regs) in a breakpoint probe's
 * pre_handler, less the probe's address: past the int3 on x86 (1), on
 * the BRK on arm64 (0).
 *
 * KPT_NOT_BOUNDARY: an offset into the first instruction of kpt_asm_add()
 * and of every kpt_many[] function that is no instruction boundary: 1
 * into x86's two-byte mov, 2 into arm64's four-byte one.
 *
 * KPT_HANDLERS_IN_NMI: whether handlers run in NMI context (in_nmi()).
 * x86's int3 and debug handlers enter it; arm64's debug exceptions
 * enter RCU's NMI mode only (ct_nmi_enter()), so in_nmi() is false in its
 * handlers, upstream's as ours.
 *
 * Registers are read with the generic accessors: regs_return_value() (the
 * return register, x86's %rax or %eax, arm64's x0), instruction_pointer(),
 * regs_get_kernel_argument(), kernel_stack_pointer().
 */
#if defined(CONFIG_X86)
#define KPT_ASM_TARGETS
#define KPT_BP_IP_DELTA		1
#define KPT_NOT_BOUNDARY	1
#define KPT_HANDLERS_IN_NMI	true
#elif defined(CONFIG_ARM64)
#define KPT_ASM_TARGETS
#define KPT_BP_IP_DELTA		0
#define KPT_NOT_BOUNDARY	2
#define KPT_HANDLERS_IN_NMI	false
#endif

#ifndef __ASSEMBLY__

#include <linux/bitops.h>
#include <linux/irqflags.h>
#include <linux/kallsyms.h>
#include <linux/preempt.h>
#include <linux/ptrace.h>
#include <linux/string.h>
#ifdef CONFIG_X86
#include <asm/text-patching.h>
#endif
#ifdef CONFIG_PPC64_ELF_ABI_V2
#include <asm/code-patching.h>
#include <asm/ppc-opcode.h>
#endif

/*
 * kpt_divert(): a handler sends the probed code on into the function at
 * @fn instead.  On ppc64 ELFv2, @fn is the global entry, which derives
 * the TOC pointer from r12: r12 must hold @fn too, or the function's
 * stores land beside their variables (the ABI's rule for any call
 * through a pointer).
 */
/*
 * kpt_entry(): where to probe @fn's entry by address so that every call
 * hits, and where a probe on its name lands.  @fn itself, except on
 * ppc64 ELFv2: there a function's address is its global entry, which
 * calls from the same module skip, and a name stands for the entry every
 * call passes: the ftrace call (the instruction after "mflr r0" in the
 * first four) where kprobes on ftrace are on, else the local entry
 * point.  Read from the function's own instructions.
 */
static inline kprobe_opcode_t *kpt_entry_addr(void *fn)
{
#ifdef CONFIG_PPC64_ELF_ABI_V2
	u32 *insn = fn;
	int i;

	for (i = 0; IS_ENABLED(CONFIG_KPROBES_ON_FTRACE) && i < 3; i++) {
		if (insn[i] == PPC_RAW_MFLR(_R0))
			return (kprobe_opcode_t *)&insn[i + 1];
	}
	return (kprobe_opcode_t *)ppc_function_entry(fn);
#else
	return fn;
#endif
}

#define kpt_entry(fn)	kpt_entry_addr((void *)(fn))

static inline void kpt_divert(struct pt_regs *regs, unsigned long fn)
{
#ifdef CONFIG_PPC64_ELF_ABI_V2
	regs->gpr[12] = fn;
#endif
	instruction_pointer_set(regs, fn);
}

/*
 * KPT_NMANY distinct functions without an ftrace call, kpt_many[n](x)
 * returning x ^ n: for cases that need many probe sites.
 */
extern int (* const kpt_many[KPT_NMANY])(int);

/* Plain C functions, each starting with an ftrace call site. */
int kpt_func_a(int x);
int kpt_func_b(int x);
int kpt_func_c(int x);
int kpt_func_d(int x);
int kpt_func_e(int x);
int kpt_func_f(int x);
int kpt_ret_a(void);
int kpt_ret_b(void);
int kpt_reent_outer(int x);
int kpt_reent_inner(int x);
int kpt_smp_func(int x);
/* Called by the module's "trigger" parameter, for run_tests.sh. */
int kpt_shell_a(int x);
int kpt_shell_b(int x);
/* Never called: kprobes_holder's ftrace_bug puts a stray int3 on it. */
int kpt_ftrace_spare(int x);
/* Called only by kprobes_handlers.kpk_contexts, from every context. */
int kpt_ctx_fn(int x);

/*
 * Return-probe targets.  Each one notes the address it returns to, as
 * __builtin_return_address(0) reads it, in kpt_kret_ra[]: its caller's,
 * or the return-probe trampoline's while a return probe is on it.
 *
 * kpt_kret_a(x) returns x + KPT_KRET_A_ADD, kpt_kret_b(x) x +
 * KPT_KRET_B_ADD, kpt_kret_inner(x) x + KPT_KRET_INNER_ADD, and
 * kpt_kret_outer(x) calls kpt_kret_inner(x) and returns that plus
 * KPT_KRET_OUTER_ADD.  kpt_kret_call(fn, x) returns fn(x), called from
 * one single call site: every function it calls returns to the same
 * address.
 */
enum kpt_kret_ra {
	KPT_RA_A,
	KPT_RA_B,
	KPT_RA_INNER,
	KPT_RA_OUTER,
	KPT_RA_NR,
};

extern unsigned long kpt_kret_ra[KPT_RA_NR];

int kpt_kret_a(int x);
int kpt_kret_b(int x);
int kpt_kret_inner(int x);
int kpt_kret_outer(int x);
int kpt_kret_call(int (*fn)(int), int x);

/*
 * kpt_kret_exit(done): with a completion, ends the calling kthread by
 * kthread_complete_and_exit(done): it never returns.  Without one it
 * returns KPT_KRET_EXIT_RET.
 */
struct completion;
int kpt_kret_exit(struct completion *done);

/*
 * kpt_kret_recurse(n): calls itself until n calls are on the stack (a real
 * call each, n >= 1) and returns n.  Each call adds one to
 * kpt_kret_recurse_calls.
 */
int kpt_kret_recurse(int n);
extern atomic_t kpt_kret_recurse_calls;

/*
 * kpt_kret_unload_wait(x): sleeps until this module's exit lets it go,
 * then returns x + KPT_KRET_UNLOAD_ADD.  Not exported: run_tests.sh puts a
 * return probe on it by name and starts a kthread of this module calling
 * it with the "unload_call" parameter; the module's exit wakes the call
 * and stops the kthread, so the call returns while the module is being
 * unloaded.
 */
int kpt_kret_unload_wait(int x);

/*
 * A gate that callers of kpt_gate_wait() sleep at (TASK_IDLE) until it is
 * opened.  kpt_gate_close() closes it and zeroes the count of callers
 * that entered kpt_gate_wait(), kpt_gate_inside() reads that count,
 * kpt_gate_open() lets every sleeper through, and later callers too.
 * kpt_gate_wait(x) returns x + KPT_GATE_ADD.
 */
int kpt_gate_wait(int x);
void kpt_gate_close(void);
void kpt_gate_open(void);
int kpt_gate_inside(void);

/*
 * Hand-written functions (kpt_asm.S, kpt_asm_32.S, kpt_asm_arm64.S) with a
 * known instruction layout.
 *
 * kpt_asm_add(x) returns x + KPT_ADD_IMM; the add is an instruction at
 * KPT_L_ADD_INSN (x86: a five-byte addl; arm64: add w0, w0, w1, stepped
 * out of line) and the next one, the return, is at KPT_L_ADD_NEXT.
 *
 * kpt_asm_load(p) returns *p, or KPT_LOAD_FIXUP when reading *p faults:
 * the load at KPT_L_LOAD_INSN has an exception table entry.
 * kpt_asm_uload(p) is the same on user memory, its load at
 * KPT_L_ULOAD_INSN.
 *
 * kpt_asm_sub(x) returns x - KPT_SUB_IMM; its second instruction, at
 * KPT_L_SUB_INSN, has no symbol (the KPT_L_ADD_* labels are symbols).
 *
 * KPT_L_OPT_CALL_RET and KPT_L_OPT_CALL_C_RET: the return addresses of the
 * calls in kpt_opt_call() and kpt_opt_call_c() (see below; x86 only:
 * kpt_label_addr() gives 0 for them elsewhere).
 */
int kpt_asm_add(int x);
int kpt_asm_load(const int *p);
int kpt_asm_uload(const int __user *p);

/*
 * Eight arguments, on x86-64 the last two on the stack, on i386 (three
 * register arguments) the last five (arm64 passes all eight in x0-x7):
 * both return a1 + 2 * a2 + ... + 8 * a8.  kpt_eight() is C (its entry
 * is an ftrace site), kpt_eight_asm() has no fentry call (its entry is a
 * breakpoint site).  kpt_eight_call()
 * calls @fn with a1 = @base, a2 = @base + 1, ... and is the probed
 * functions' caller in stack traces.
 */
typedef long (*kpt_eight_fn)(long, long, long, long, long, long, long, long);
long kpt_eight(long a1, long a2, long a3, long a4, long a5, long a6, long a7,
	       long a8);
long kpt_eight_asm(long a1, long a2, long a3, long a4, long a5, long a6,
		   long a7, long a8);
long kpt_eight_call(kpt_eight_fn fn, long base);

/*
 * The line of debugfs kprobes/@file (list or stats) for the probe of type
 * @type ('k', 'r', 'j') at @addr, copied to @out: 0, -ENOENT when there
 * is none, -ENODEV when there is no such file, or the errno of reading it.
 */
int kpt_kprobes_line(const char *file, unsigned long addr, char type,
		     char *out, size_t len);
int kpt_asm_sub(int x);

enum kpt_label {
	KPT_L_ADD_INSN,
	KPT_L_ADD_NEXT,
	KPT_L_LOAD_INSN,
	KPT_L_ULOAD_INSN,
	KPT_L_SUB_INSN,
	KPT_L_OPT_CALL_RET,
	KPT_L_OPT_CALL_C_RET,
};

unsigned long kpt_label_addr(enum kpt_label label);

/* The labels themselves: use kpt_label_addr() outside the target module. */
extern const u8 kpt_asm_add_insn[];
extern const u8 kpt_asm_add_next[];
extern const u8 kpt_asm_load_insn[];
extern const u8 kpt_asm_uload_insn[];
extern const u32 kpt_asm_sub_off;

/* A data object of the target module: never text. */
extern int kpt_data;

/*
 * kpt_cold(x) returns (x & ~1) + KPT_COLD_ADD: an odd @x goes through its
 * cold part, kpt_cold.cold, which jumps back to the instruction after the
 * first, a one-byte push.
 */
unsigned long kpt_cold(unsigned long x);

/*
 * Jump-optimization refusals, one per function: a probe
 * kpt_ref_off[KPT_REF_NAME] bytes into kpt_ref_NAME must not be
 * optimized.  end: the function ends within five bytes; jmpin: a branch
 * lands inside the five; indirect: the function has an indirect jmp;
 * extable: an instruction in the five has an exception-table entry; call:
 * a call is in the five.  Each returns a + b + 3, except: kpt_ref_end()
 * a + b; kpt_ref_jmpin() a + 3 when c is zero (its branch skips b);
 * kpt_ref_extable() adds *(unsigned long *)c, c a valid pointer.
 * kpt_ref_indirect() needs c zero.
 */
unsigned long kpt_ref_end(unsigned long a, unsigned long b, unsigned long c);
unsigned long kpt_ref_jmpin(unsigned long a, unsigned long b, unsigned long c);
unsigned long kpt_ref_indirect(unsigned long a, unsigned long b,
			       unsigned long c);
unsigned long kpt_ref_extable(unsigned long a, unsigned long b,
			      unsigned long c);
unsigned long kpt_ref_call(unsigned long a, unsigned long b, unsigned long c);
enum kpt_ref { KPT_REF_END, KPT_REF_JMPIN, KPT_REF_INDIRECT, KPT_REF_EXTABLE,
	       KPT_REF_CALL, KPT_REF_NR };
/* Offsets of the probed instructions, by enum kpt_ref. */
extern const u32 kpt_ref_off[KPT_REF_NR];

/*
 * kpt_asm_ret(): nothing but a return, for a handler that makes a call
 * return at once.  kpt_asm_cli(), kpt_asm_sti(): cli, sti (arm64: MSR
 * DAIFSet, DAIFClr of I and F), as their first instruction.
 * kpt_asm_popf(flags): pushes @flags and loads them with the popf that is
 * kpt_asm_popf_off bytes into the function (arm64: MSR DAIF, x0, at 0).
 */
void kpt_asm_ret(void);
void kpt_asm_cli(void);
void kpt_asm_sti(void);
void kpt_asm_popf(unsigned long flags);
extern const u32 kpt_asm_popf_off;

/*
 * Return-probe targets a task stays in: kpt_kret_spin(x) spins while
 * kpt_kret_spinning is set, kpt_kret_park(x) sleeps at the gate
 * (kpt_gate_wait()).  Both note in kpt_kret_fp, on entry, what the
 * architecture keys a return probe's instance on (ri->fp, what an
 * unwinder passes kretprobe_find_ret_addr()): on x86 their stack
 * pointer, where their return address is (kpt_asm.S, kpt_asm_32.S); on
 * arm64 their frame pointer x29, their caller's frame record
 * (kpt_kret_arm64.S).
 * They return what they are given (kpt_kret_park: plus KPT_GATE_ADD).
 */
int kpt_kret_spin(int x);
int kpt_kret_park(int x);
extern unsigned long kpt_kret_fp;
extern int kpt_kret_spinning;

/*
 * kpt_static_fn(x): x + 1, or x + 2 while the module parameter static_on
 * (a static key) is set.  For the kprobe event that waits for the module.
 */
int kpt_static_fn(int x);

/*
 * Sites of this module that the kernel rewrites or finds by address:
 * kpt_reserved_site(KPT_SITE_JUMP) is the jump label of kpt_static_fn(),
 * KPT_SITE_CALL the static call of kpt_call_fn(x) (x + 4), KPT_SITE_BUG
 * the trap of the WARN in kpt_warn_fn(x) (x + 3; warns for -12345 only).
 * 0 when not found.
 */
enum { KPT_SITE_JUMP, KPT_SITE_CALL, KPT_SITE_BUG };
int kpt_call_fn(int x);
int kpt_warn_fn(int x);
unsigned long kpt_reserved_site(int kind);

/*
 * Targets of the boundary walk (kprobes_boundary.ko): every instruction
 * boundary of these carries a probe in turn, and every result is checked
 * against the unprobed one.  Both compute a checksum of their input that
 * depends on every instruction they run, and give the same result for
 * either @lane: a lane picks which of two memory cells the function
 * stores to and reads back, so that two CPUs calling it at once (each
 * with its own lane) do not disturb each other.
 *
 * kpt_bnd_c(buf, len, lane), plain C: a byte loop, a stack array, calls,
 * a switch, a 64-bit division, multiplications, bit operations, string
 * functions, RIP-relative loads and stores.
 *
 * kpt_bnd_asm(x, lane), hand-written (kpt_asm.S) for a known mix of
 * instruction kinds, all executed for any input and both lanes: push and
 * pop, pushf, lea, RIP-relative loads, stores and lea, imul, mul, div,
 * shifts and rotates, short and near jcc, a loop, jmp, setcc, cmov, bt,
 * bts, adc, sbb, xchg with a register and with memory, bswap, bsf, bsr,
 * rep movsb, direct and indirect calls, nops, leave and ret.
 * kpt_bnd_asm_layout() gives its size and the offset of each of its
 * instructions.
 */
u32 kpt_bnd_c(const u8 *buf, unsigned int len, int lane);
u32 kpt_bnd_asm(u32 x, int lane);
const u32 *kpt_bnd_asm_layout(unsigned int *ninsns, unsigned int *size);

/* What it returns: use kpt_bnd_asm_layout() outside the target module. */
extern const u32 kpt_bnd_asm_insns[];
extern const u32 kpt_bnd_asm_ninsns;
extern const u32 kpt_bnd_asm_size;

/*
 * Targets of the jump-optimization cases (kprobes_opt.ko, and the
 * optimized walk of kprobes_boundary.ko).  Both return kpt_opt_want(a, b,
 * c).  kpt_opt_asm() (kpt_asm.S; kpt_asm_32.S; arm64: kpt_opt_arm64.S,
 * nine instructions) is straight-line code that uses no stack, with no
 * branch but its final ret (of 3- and 4-byte instructions on x86-64, of
 * 2- and 3-byte ones on i386): kpt_opt_asm_layout() gives its size and
 * the offset of each instruction.  kpt_opt_c() is plain C, its entry an
 * ftrace call site.  Their arguments and result are a register wide, so
 * that i386 passes each in one register.
 *
 * kpt_opt_call(a, b, c) returns kpt_opt_asm(a, b, c), kpt_opt_call_c(a, b,
 * c) kpt_opt_c(a, b, c), each from one call whose return address is
 * kpt_label_addr(KPT_L_OPT_CALL_RET), resp. KPT_L_OPT_CALL_C_RET; just
 * before that call each stores its stack pointer in kpt_opt_sp, so that
 * the callee starts with the stack pointer kpt_opt_sp less a word (arm64:
 * see below).
 *
 * What they compute is a product, (a + b) * (b | 1), which
 * kpt_opt_finish() then mixes with a, b and c.  The mix differs on i386,
 * whose three scratch registers cannot hold a, b, c and the sum at once:
 * there c takes a << 3 in before the sum is formed, and the last step
 * subtracts b | 1, which the multiplication leaves in its register.
 */
static inline unsigned long kpt_opt_finish(unsigned long p, unsigned long a,
					   unsigned long b, unsigned long c)
{
#ifdef CONFIG_X86_32
	return (p ^ ror32(c + (a << 3), 5)) - (b | 1);
#else
	return ((p ^ c) ^ (a << 3)) - b;
#endif
}

static inline unsigned long kpt_opt_want(unsigned long a, unsigned long b,
					 unsigned long c)
{
	return kpt_opt_finish((a + b) * (b | 1), a, b, c);
}

unsigned long kpt_opt_asm(unsigned long a, unsigned long b, unsigned long c);
unsigned long kpt_opt_c(unsigned long a, unsigned long b, unsigned long c);
/* s390 and i386 only */
unsigned long kpt_opt_c_untraced(unsigned long a, unsigned long b,
				 unsigned long c);
unsigned long kpt_opt_call(unsigned long a, unsigned long b, unsigned long c);
unsigned long kpt_opt_call_c(unsigned long a, unsigned long b,
			     unsigned long c);
const u32 *kpt_opt_asm_layout(unsigned int *ninsns, unsigned int *size);
extern unsigned long kpt_opt_sp;

/* What it returns, and the offsets of kpt_label_addr()'s return addresses. */
extern const u32 kpt_opt_asm_insns[];
extern const u32 kpt_opt_asm_ninsns;
extern const u32 kpt_opt_asm_size;
extern const u32 kpt_opt_call_ret_off;
extern const u32 kpt_opt_call_c_ret_off;

/*
 * arm64's jump-optimization targets (kpt_opt_arm64.S).  There,
 * kpt_opt_call() and kpt_opt_call_c() call through an inner frame of
 * their own: the callee starts with its stack pointer and frame pointer
 * (x29) at that frame record, noted in kpt_opt_sp, which returns to
 * kpt_opt_call + kpt_opt_call_up_off (kpt_opt_call_c + kpt_opt_call_c_up_off);
 * the callee's own return address, in the link register, is
 * kpt_opt_call + kpt_opt_call_ret_off (..._c_ret_off).
 *
 * kpt_opt_ref_NAME(a, b, c) returns a + b + 3; the instruction
 * kpt_opt_ref_off[KPT_OPT_REF_NAME] bytes in is one arm64 does not
 * optimize: extable, a load with an exception-table entry (that adds
 * *(unsigned long *)c, c must be valid); blr_lr, a blr x30.
 *
 * kpt_opt_pcrel(x) returns kpt_opt_pcrel_want(x), through one instruction
 * of each kind that a detour rewrites or runs at another address, at
 * kpt_opt_pcrel_off[KPT_PCREL_*]: all run once per call, the conditional
 * branches taken or not by bits 0 to 4 of x.  Called with interrupts on,
 * it masks them and unmasks them, and puts the caller's mask back.
 *
 * kpt_opt_redir(a, b) returns kpt_opt_redir_want(a, b): (a + b) << 4,
 * or-ed with the flags of cmp a, b (N 1, Z 2, C 4, V 8).  The instruction
 * kpt_opt_redir_off bytes in, between the cmp and the csets that read its
 * flags, is the add that puts a + b in x2: a handler there that moves the
 * PC past it decides the result with the x2 and the flags it leaves.
 */
#ifdef CONFIG_ARM64
/* *p = v by its first instruction, a store (stepped). */
void kpt_asm_store(int *p, int v);

extern const u32 kpt_opt_call_up_off;
extern const u32 kpt_opt_call_c_up_off;

enum { KPT_OPT_REF_EXTABLE, KPT_OPT_REF_BLR_LR, KPT_OPT_REF_NR };
unsigned long kpt_opt_ref_extable(unsigned long a, unsigned long b,
				  unsigned long c);
unsigned long kpt_opt_ref_blr_lr(unsigned long a, unsigned long b,
				 unsigned long c);
extern const u32 kpt_opt_ref_off[KPT_OPT_REF_NR];

enum kpt_pcrel {
	KPT_PCREL_PACIASP,
	KPT_PCREL_STP,		/* stp x29, x30, [sp, #-16]!, stepped */
	KPT_PCREL_MOV,		/* mov x15, x0 */
	KPT_PCREL_MRS_DAIF,	/* mrs x14, daif */
	KPT_PCREL_DAIFSET,	/* msr daifset, #2 */
	KPT_PCREL_DAIFCLR,	/* msr daifclr, #2 */
	KPT_PCREL_MSR_DAIF,	/* msr daif, x14 */
	KPT_PCREL_ADR,
	KPT_PCREL_ADRP,
	KPT_PCREL_LDR_W,	/* ldr w5, <literal> */
	KPT_PCREL_LDR_X,
	KPT_PCREL_LDRSW,
	KPT_PCREL_B,
	KPT_PCREL_BL,
	KPT_PCREL_FLAGS,	/* an add between a tst and the b.eq, stepped */
	KPT_PCREL_BCOND,	/* b.eq, taken for an even x */
	KPT_PCREL_CBZ,		/* taken when bit 1 of x is clear */
	KPT_PCREL_CBNZ,		/* taken when bit 2 is set */
	KPT_PCREL_TBZ,		/* bit 3 clear */
	KPT_PCREL_TBNZ,		/* bit 4 set */
	KPT_PCREL_BR,		/* br x10 */
	KPT_PCREL_BLR,		/* blr x11 */
	KPT_PCREL_AUTIASP,
	KPT_PCREL_RET,
	KPT_PCREL_NR,
};

u64 kpt_opt_pcrel(u64 x);
extern const u32 kpt_opt_pcrel_off[KPT_PCREL_NR];

static inline u64 kpt_opt_pcrel_want(u64 x)
{
	u64 r = x + 0x80 + KPT_PCREL_LIT_A;

	r ^= KPT_PCREL_DATA;
	r += (u32)KPT_PCREL_LIT_W;
	r ^= KPT_PCREL_LIT_X;
	r += (u64)(s64)(s32)KPT_PCREL_LIT_SW;
	r = r * 5 + 7 + 0x55;
	if (x & 1)
		r += 0x11;
	if (x & 2)
		r += 0x22;
	if (!(x & 4))
		r += 0x44;
	if (x & 8)
		r += 0x88;
	if (!(x & 16))
		r += 0x100;
	return (r << 1) + 0x3c3;
}

u64 kpt_opt_redir(u64 a, u64 b);
extern const u32 kpt_opt_redir_off;

/* The flags of cmp a, b (subs), as kpt_opt_redir() packs them. */
static inline u64 kpt_opt_cmp_flags(u64 a, u64 b)
{
	u64 d = a - b;

	return (d >> 63) | (u64)(a == b) << 1 | (u64)(a >= b) << 2 |
	       (((a ^ b) & (a ^ d)) >> 63) << 3;
}

static inline u64 kpt_opt_redir_want(u64 a, u64 b)
{
	return (a + b) << 4 | kpt_opt_cmp_flags(a, b);
}
#endif /* CONFIG_ARM64 */

/*
 * Jump optimization as the tests see it: the sysctl
 * /proc/sys/debug/kprobes-optimization and the marks of debugfs
 * kprobes/list.
 *
 * kpt_probe_state(addr): the marks of the list lines of the probes at
 * @addr, or-ed together (KPT_PS_*), KPT_PS_LISTED when there is one; or a
 * negative errno when the list cannot be read.
 *
 * kpt_wait_probe_state(addr, mask, want, ms): reads that state until
 * (state & @mask) == @want, at most @ms milliseconds; returns the last
 * state read.
 *
 * kpt_optimizer_wait(): waits for the optimizer with the kernel's
 * wait_for_kprobe_optimizer() where the kernel exports it (true), else
 * does nothing (false): callers then poll the list.
 *
 * kpt_optimization_get() reads the sysctl: 0 or 1, or a negative errno
 * (-ENOENT: the kernel does not optimize probes); kpt_optimization_set(on)
 * writes it.
 *
 * kpt_within_target(addr): @addr is in this module (kprobes_target.ko).
 */
#define KPT_PS_LISTED		0x01
#define KPT_PS_OPTIMIZED	0x02
#define KPT_PS_DISABLED		0x04
#define KPT_PS_FTRACE		0x08
#define KPT_PS_GONE		0x10

#define KPT_OPT_SYSCTL		"/proc/sys/debug/kprobes-optimization"
#define KPT_KPROBES_LIST	"/sys/kernel/debug/kprobes/list"

int kpt_probe_state(unsigned long addr);
int kpt_wait_probe_state(unsigned long addr, int mask, int want,
			 unsigned int ms);

/*
 * Time limits.  Each limit a case waits for something with (a state, a
 * count, a thread) is the one that holds on the machine the suite was
 * tuned on; this module's parameter pace= (percent, from the harness)
 * says how much slower this machine runs the guest.  kpt_paced_ms(ms) is
 * that limit here, kpt_deadline(ms) the jiffies value it ends at from
 * now; kpt_wait_probe_state() scales its own.  How long a phase runs (a
 * stress loop, a settling delay) is no limit and is not scaled.
 */
unsigned int kpt_paced_ms(unsigned int ms);
unsigned long kpt_deadline(unsigned int ms);
bool kpt_optimizer_wait(void);
int kpt_optimization_get(void);
int kpt_optimization_set(int on);
bool kpt_within_target(unsigned long addr);

/*
 * The context a handler runs in, as the handler itself sees it:
 * kpt_ctx_note() records it in a struct kpt_ctx_seen and counts the run.
 * Inline, so that a handler calls nothing that could carry a probe.
 */
struct kpt_ctx_seen {
	int runs;
	int preempt_count;
	bool preemptible;
	bool irqs_off;
};

static __always_inline void kpt_ctx_note(struct kpt_ctx_seen *s)
{
	s->preempt_count = preempt_count();
	s->preemptible = preemptible();
	s->irqs_off = irqs_disabled();
	s->runs++;
}

#ifdef CONFIG_X86
/*
 * Ours: is the ftrace site at @text armed by kprobes' own call, a call to
 * kx_ftrace_call_entry, as a new entry probe is until its hand-off to
 * ftrace?  Upstream never writes one.
 */
static inline bool kpt_site_ours(const u8 *text)
{
	char name[KSYM_NAME_LEN];
	s32 rel;

	if (text[0] != CALL_INSN_OPCODE)
		return false;
	memcpy(&rel, text + 1, sizeof(rel));
	snprintf(name, sizeof(name), "%ps",
		 (void *)((unsigned long)text + CALL_INSN_SIZE + rel));
	return !strcmp(name, "kx_ftrace_call_entry");
}
#endif

#endif /* __ASSEMBLY__ */
#endif /* _KPROBES_SELFTEST_TARGET_H */
