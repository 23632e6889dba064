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

/*
 * KPB_NMANY distinct functions for the figures with many probes,
 * kpb_many_0() ... kpb_many_999(), each int f(int x) { return x ^ n; },
 * and the table of their addresses, kpb_many[].  Like the target below
 * they have no ftrace call: their probes are breakpoints.
 */
.macro KPB_MANY_FN n
SYM_FUNC_START_LOCAL(kpb_many_\n)
	movl	%edi, %eax
	xorl	$\n, %eax
	RET
SYM_FUNC_END(kpb_many_\n)
.endm

.macro KPB_MANY_PTR n
	.quad	kpb_many_\n
.endm

	.altmacro
	.set	kpb_i, 0
	.rept	KPB_NMANY
	KPB_MANY_FN %kpb_i
	.set	kpb_i, kpb_i + 1
	.endr

	.pushsection .rodata
	.balign 8
SYM_DATA_START(kpb_many)
	.set	kpb_i, 0
	.rept	KPB_NMANY
	KPB_MANY_PTR %kpb_i
	.set	kpb_i, kpb_i + 1
	.endr
SYM_DATA_END(kpb_many)
	.popsection
	.noaltmacro

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
