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
/* The first instruction of a generated function (KPB_GEN's \first). */
#define KPB_FIRST_PLAIN	0
#define KPB_FIRST_NOP	1
#define KPB_FIRST_CALL	2
#define KPB_FIRST_JMP	3
#define KPB_FIRST_0F	4
#define KPB_FIRST_66	5

/*
 * The register of a function's first int argument: the kernel's i386
 * code is built with -mregparm=3, so it comes in %eax there.
 */
#ifdef CONFIG_X86_64
#define KPB_ARG		%edi
#define KPB_ARG_W	%di
#else
#define KPB_ARG		%eax
#define KPB_ARG_W	%ax
#endif

/*
 * KPB_GEN prefix, count[, first]: \count distinct functions \prefix_0()
 * ..., each int f(int x) { return x ^ n; }, and the table of their
 * addresses, \prefix[], in .rodata.  No ftrace call: probes on them are
 * breakpoints.  \first chooses the first instruction, the one a probe on
 * the function's address meets (KPB_FIRST_*): by default the movl that
 * starts the computation, else a nop, a call (of a function that only
 * returns), a jmp to the next instruction, a 0f-prefixed movzwl or a
 * 66-prefixed two-byte nop before it (the movzwl leaves x & 0xffff).
 */
.macro KPB_GEN_FN prefix, n, first
SYM_FUNC_START_LOCAL(\prefix\()_\n)
	.if \first == KPB_FIRST_NOP
	nop
	.elseif \first == KPB_FIRST_CALL
	call	kpb_gen_leaf
	.elseif \first == KPB_FIRST_JMP
	jmp	1f
1:
	.elseif \first == KPB_FIRST_0F
	movzwl	KPB_ARG_W, KPB_ARG
	.elseif \first == KPB_FIRST_66
	xchg	%ax, %ax
	.endif
	movl	KPB_ARG, %eax
	xorl	$\n, %eax
	RET
SYM_FUNC_END(\prefix\()_\n)
.endm

.macro KPB_GEN_PTR prefix, n
	_ASM_PTR \prefix\()_\n
.endm

.macro KPB_GEN prefix, count, first=KPB_FIRST_PLAIN
	.altmacro
	.set	kpb_gen_i, 0
	.rept	\count
	KPB_GEN_FN \prefix, %kpb_gen_i, \first
	.set	kpb_gen_i, kpb_gen_i + 1
	.endr

	.pushsection .rodata
	.balign __ASM_SEL(4, 8)
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
