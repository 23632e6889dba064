/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The benchmark's breakpoint target, in assembly so that its instructions
 * are the same whatever the compiler: int kpb_asm_target(int x) returns
 * 2 * x + 3.  Straight-line code of 2- and 3-byte instructions and no
 * ftrace call: a probe on its entry is a breakpoint that can be stepped,
 * boosted and jump-optimized, in every kprobes implementation alike.
 */
#include <linux/linkage.h>
#include <asm/asm.h>
#include "kpb.h"

	.text

/* kpb_many_0() ... kpb_many_999() and kpb_many[], for the figures with many probes. */
	KPB_GEN kpb_many, KPB_NMANY

SYM_FUNC_START(kpb_asm_target)
	movl	%edi, %eax
	addl	%edi, %eax
	addl	$3, %eax
	RET
SYM_FUNC_END(kpb_asm_target)

/*
 * A symbol right after it, so that kallsyms gives kpb_asm_target its
 * exact size (optimizers decode the whole function).
 */
SYM_FUNC_START(kpb_asm_next)
	movl	%edi, %eax
	RET
SYM_FUNC_END(kpb_asm_next)
