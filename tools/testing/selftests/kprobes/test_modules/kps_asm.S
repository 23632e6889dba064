/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The breakpoint target of the kprobes stress cases: a function whose
 * instructions sit at known labels, computing a value its callers check.
 */
#include <linux/linkage.h>
#include <linux/objtool.h>
#include "kprobes_stress.h"

	.text

/* int kps_asm_mix(int x), see kprobes_stress.h. */
SYM_FUNC_START(kps_asm_mix)
	movl	%edi, %eax
SYM_INNER_LABEL(kps_asm_mix_add0, SYM_L_GLOBAL)
	ANNOTATE_NOENDBR
	addl	$KPS_MIX_ADD0, %eax
SYM_INNER_LABEL(kps_asm_mix_xor, SYM_L_GLOBAL)
	ANNOTATE_NOENDBR
	xorl	$KPS_MIX_XOR, %eax
SYM_INNER_LABEL(kps_asm_mix_jns, SYM_L_GLOBAL)
	ANNOTATE_NOENDBR
	jns	.Lkps_mix_positive
	notl	%eax
.Lkps_mix_positive:
SYM_INNER_LABEL(kps_asm_mix_add1, SYM_L_GLOBAL)
	ANNOTATE_NOENDBR
	addl	$KPS_MIX_ADD1, %eax
SYM_INNER_LABEL(kps_asm_mix_ret, SYM_L_GLOBAL)
	ANNOTATE_NOENDBR
	RET
SYM_FUNC_END(kps_asm_mix)

/*
 * unsigned long kps_asm_fill(void *buf, unsigned long n), see
 * kprobes_stress.h: one rep stosb, preceded by a two-byte instruction and
 * followed by a three-byte one, so that a jump on either of the first two
 * replaces the rep stosb too.  Local labels: a symbol of their own would
 * end the function, as kallsyms sees it, right there.
 */
SYM_FUNC_START(kps_asm_fill)
	movq	%rsi, %rcx
.Lkps_fill_al:
	movb	$KPS_FILL_BYTE, %al
.Lkps_fill_rep:
	rep stosb
	movq	%rcx, %rax
	RET
SYM_FUNC_END(kps_asm_fill)

	.pushsection .rodata
SYM_DATA(kps_asm_fill_al_off, .long .Lkps_fill_al - kps_asm_fill)
SYM_DATA(kps_asm_fill_rep_off, .long .Lkps_fill_rep - kps_asm_fill)
	.popsection
