/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The benchmark's breakpoint target, in assembly so that its instructions
 * are the same whatever the compiler: int kpb_asm_target(int x) returns
 * 2 * x + 3.  Straight-line code of 2- and 3-byte instructions and no
 * ftrace call: a probe on its entry is a breakpoint that can be stepped,
 * boosted and jump-optimized, in every kprobes implementation alike.
 * The argument is in KPB_ARG (kpb_gen.S): %edi on x86-64, %eax on i386,
 * where the first movl then copies %eax onto itself; the instructions
 * keep their lengths on both.
 */
#include <linux/linkage.h>
#include <asm/asm.h>
#include "kpb.h"

	.text

/* kpb_many_0() ... kpb_many_999() and kpb_many[], for the figures with many probes. */
	KPB_GEN kpb_many, KPB_NMANY

SYM_FUNC_START(kpb_asm_target)
	movl	KPB_ARG, %eax
	addl	KPB_ARG, %eax
	addl	$3, %eax
	RET
SYM_FUNC_END(kpb_asm_target)

/*
 * A symbol right after it, so that kallsyms gives kpb_asm_target its
 * exact size (optimizers decode the whole function).
 */
SYM_FUNC_START(kpb_asm_next)
	movl	KPB_ARG, %eax
	RET
SYM_FUNC_END(kpb_asm_next)
