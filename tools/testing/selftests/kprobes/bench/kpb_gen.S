/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Many distinct probe targets in a few lines of assembly: used by the
 * benchmark (kpb_asm.S, kpb_funcs.S) and by the test targets
 * (../test_modules/kpt_asm.S; the test build copies this file, and no
 * other file of bench/).  An assembler include, not built on its own.
 */
#ifndef _KPB_GEN_S
#define _KPB_GEN_S
#ifdef __ASSEMBLY__
/*
 * KPB_GEN prefix, count: \count distinct functions \prefix_0() ...,
 * each int f(int x) { return x ^ n; }, and the table of their addresses,
 * \prefix[], in .rodata.  No ftrace call: probes on them are breakpoints.
 */
.macro KPB_GEN_FN prefix, n
SYM_FUNC_START_LOCAL(\prefix\()_\n)
	movl	%edi, %eax
	xorl	$\n, %eax
	RET
SYM_FUNC_END(\prefix\()_\n)
.endm

.macro KPB_GEN_PTR prefix, n
	.quad	\prefix\()_\n
.endm

.macro KPB_GEN prefix, count
	.altmacro
	.set	kpb_gen_i, 0
	.rept	\count
	KPB_GEN_FN \prefix, %kpb_gen_i
	.set	kpb_gen_i, kpb_gen_i + 1
	.endr

	.pushsection .rodata
	.balign 8
SYM_DATA_START(\prefix)
	.set	kpb_gen_i, 0
	.rept	\count
	KPB_GEN_PTR \prefix, %kpb_gen_i
	.set	kpb_gen_i, kpb_gen_i + 1
	.endr
SYM_DATA_END(\prefix)
	.popsection
	.noaltmacro
.endm
#endif /* __ASSEMBLY__ */
#endif /* _KPB_GEN_S */
