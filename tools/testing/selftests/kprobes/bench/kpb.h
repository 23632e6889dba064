/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by kpb_main.c and kpb_asm.S (kprobes_bench.ko), and by
 * kpb_funcs.S (kprobes_bench_funcs.ko); on arm64 by kpb_asm_arm64.S and
 * kpb_funcs_arm64.S instead.
 */
#ifndef _KPB_H
#define _KPB_H

#define KPB_NMANY	1000	/* probes of figures 7, 9 and 10 */
#define KPB_NFUNCS	10000	/* functions of kprobes_bench_funcs.ko (figure 11) */
#define KPB_NSHAPE	200	/* functions of each first instruction (figure 12) */
#ifdef CONFIG_ARM64
#define KPB_NSHAPES	7	/* kpb_shapes[]: KPB_FIRST_NOP to _STP (kpb_gen_arm64.S) */
#else
#define KPB_NSHAPES	5	/* kpb_shapes[]: KPB_FIRST_NOP to _66 (kpb_gen.S) */
#endif
#define KPB_NCFUNCS	10000	/* C functions with ftrace calls (figure 13) */
#define KPB_NENTRIES	1000	/* of them probed by figures 13 and 14 */

#ifndef __ASSEMBLY__
typedef int (*kpb_fn_t)(int);

/* The breakpoint target: straight-line code, no ftrace call. */
int kpb_asm_target(int x);

/* KPB_NMANY functions without ftrace calls, by address. */
extern const kpb_fn_t kpb_many[KPB_NMANY];

/* KPB_NFUNCS more, in kprobes_bench_funcs.ko (found with symbol_get()). */
extern const kpb_fn_t kpb_funcs[KPB_NFUNCS];

/*
 * In kprobes_bench_funcs.ko too: KPB_NSHAPE functions for each first
 * instruction KPB_FIRST_NOP ... KPB_FIRST_66 (arm64: ... KPB_FIRST_STP),
 * kpb_shapes[first - 1].
 */
extern const kpb_fn_t *const kpb_shapes[KPB_NSHAPES];

/* In kprobes_bench_funcs.ko too: KPB_NCFUNCS C functions (kpb_cfuncs.awk). */
extern const kpb_fn_t kpb_cfuncs[KPB_NCFUNCS];
#elif defined(CONFIG_ARM64)
#include "kpb_gen_arm64.S"
#else
#include "kpb_gen.S"
#endif

#endif /* _KPB_H */
