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
/* Value kpt_asm_load() returns when its load faults. */
#define KPT_LOAD_FIXUP		0xfa17

/* Return values of the two functions of the path-change case. */
#define KPT_RET_A		0xaaa
#define KPT_RET_B		0xbbb

#ifndef __ASSEMBLY__

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

/*
 * Hand-written functions (kpt_asm.S) with a known instruction layout.
 *
 * kpt_asm_add(x) returns x + KPT_ADD_IMM; the add is a five-byte
 * instruction at KPT_L_ADD_INSN and the next one is at KPT_L_ADD_NEXT.
 *
 * kpt_asm_load(p) returns *p, or KPT_LOAD_FIXUP when reading *p faults:
 * the load at KPT_L_LOAD_INSN has an exception table entry.
 */
int kpt_asm_add(int x);
int kpt_asm_load(const int *p);

enum kpt_label {
	KPT_L_ADD_INSN,
	KPT_L_ADD_NEXT,
	KPT_L_LOAD_INSN,
};

unsigned long kpt_label_addr(enum kpt_label label);

/* The labels themselves: use kpt_label_addr() outside the target module. */
extern const u8 kpt_asm_add_insn[];
extern const u8 kpt_asm_add_next[];
extern const u8 kpt_asm_load_insn[];

/* A data object of the target module: never text. */
extern int kpt_data;

#endif /* __ASSEMBLY__ */
#endif /* _KPROBES_SELFTEST_TARGET_H */
