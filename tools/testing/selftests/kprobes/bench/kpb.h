/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by kpb_main.c and kpb_asm.S (kprobes_bench.ko). */
#ifndef _KPB_H
#define _KPB_H

#define KPB_NMANY	1000	/* probes of figures 7, 9 and 10 */

#ifndef __ASSEMBLY__
typedef int (*kpb_fn_t)(int);

/* The breakpoint target: straight-line code, no ftrace call. */
int kpb_asm_target(int x);

/* KPB_NMANY functions without ftrace calls, by address. */
extern const kpb_fn_t kpb_many[KPB_NMANY];
#endif

#endif /* _KPB_H */
