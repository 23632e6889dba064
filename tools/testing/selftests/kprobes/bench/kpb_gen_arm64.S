/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arm64's kpb_gen.S: many distinct probe targets in a few lines of
 * assembly, for the benchmark (kpb_asm_arm64.S, kpb_funcs_arm64.S).  An
 * assembler include, not built on its own.
 */
#ifndef _KPB_GEN_ARM64_S
#define _KPB_GEN_ARM64_S
#ifdef __ASSEMBLY__
/*
 * The first instruction of a generated function (KPB_GEN's \first), the
 * one a probe on the function's address meets: by default (plain) the
 * mov that starts the computation, stepped out of line; else one that
 * kprobes simulate in the trap or step, met at function entries.
 */
#define KPB_FIRST_PLAIN		0	/* mov w1, #n */
#define KPB_FIRST_NOP		1	/* nop */
#define KPB_FIRST_BTI		2	/* bti c, SYM_FUNC_START's landing pad */
#define KPB_FIRST_B		3	/* b to the next instruction */
#define KPB_FIRST_ADRP		4	/* adrp x1, <its table> */
#define KPB_FIRST_LDR		5	/* ldr w1, <literal> (instead of the mov) */
#define KPB_FIRST_PACIASP	6	/* paciasp ... autiasp */
#define KPB_FIRST_STP		7	/* stp x29, x30, [sp, #-16]! ... ldp */

/*
 * arm64's SYM_FUNC_START* put "bti c" first whatever the configuration,
 * and a probe there meets that hint, not the function's own first
 * instruction.  KPB_FUNC_START* are the same without it, unless the
 * kernel enforces landing pads (CONFIG_ARM64_BTI_KERNEL, which 6.12
 * builds only with clang): the figures then meet the bti c, as on every
 * function of such a kernel.
 */
#ifdef CONFIG_ARM64_BTI_KERNEL
#define KPB_BTI_C	bti c ;
#else
#define KPB_BTI_C
#endif
#define KPB_FUNC_START(name)				\
	SYM_START(name, SYM_L_GLOBAL, SYM_A_ALIGN)	\
	KPB_BTI_C
#define KPB_FUNC_START_LOCAL(name)			\
	SYM_START(name, SYM_L_LOCAL, SYM_A_ALIGN)	\
	KPB_BTI_C

/*
 * KPB_GEN prefix, count[, first]: \count distinct functions \prefix_0()
 * ..., each int f(int x) { return x ^ n; }, and the table of their
 * addresses, \prefix[], in .rodata.  No ftrace call: probes on them are
 * breakpoints.  \first chooses the first instruction (KPB_FIRST_*).
 */
.macro KPB_GEN_FN prefix, n, first
	.if \first == KPB_FIRST_BTI
SYM_FUNC_START_LOCAL(\prefix\()_\n)
	.else
KPB_FUNC_START_LOCAL(\prefix\()_\n)
	.endif
	.if \first == KPB_FIRST_NOP
	nop
	.elseif \first == KPB_FIRST_B
	b	1f
1:
	.elseif \first == KPB_FIRST_ADRP
	adrp	x1, \prefix
	.elseif \first == KPB_FIRST_PACIASP
	paciasp
	.elseif \first == KPB_FIRST_STP
	stp	x29, x30, [sp, #-16]!
	mov	x29, sp
	.endif
	.if \first == KPB_FIRST_LDR
	ldr	w1, 2f
	.else
	mov	w1, #\n
	.endif
	eor	w0, w0, w1
	.if \first == KPB_FIRST_PACIASP
	autiasp
	.elseif \first == KPB_FIRST_STP
	ldp	x29, x30, [sp], #16
	.endif
	ret
	.if \first == KPB_FIRST_LDR
2:	.word	\n
	.endif
SYM_FUNC_END(\prefix\()_\n)
.endm

.macro KPB_GEN_PTR prefix, n
	.quad	\prefix\()_\n
.endm

.macro KPB_GEN prefix, count, first=KPB_FIRST_PLAIN
	.altmacro
	.set	kpb_gen_i, 0
	.rept	\count
	KPB_GEN_FN \prefix, %kpb_gen_i, \first
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
#endif /* _KPB_GEN_ARM64_S */
