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
