/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kps_asm.S's targets for i386, where the first arguments come in %eax
 * and %edx (-mregparm=3) and rep stosb's %edi must be given back.
 */
#include <linux/linkage.h>
#include "kprobes_stress.h"

	.text

/* int kps_asm_mix(int x), see kprobes_stress.h. */
SYM_FUNC_START(kps_asm_mix)
	movl	%eax, %edx
SYM_INNER_LABEL(kps_asm_mix_add0, SYM_L_GLOBAL)
	addl	$KPS_MIX_ADD0, %eax
SYM_INNER_LABEL(kps_asm_mix_xor, SYM_L_GLOBAL)
	xorl	$KPS_MIX_XOR, %eax
SYM_INNER_LABEL(kps_asm_mix_jns, SYM_L_GLOBAL)
	jns	.Lkps_mix_positive
	notl	%eax
.Lkps_mix_positive:
SYM_INNER_LABEL(kps_asm_mix_add1, SYM_L_GLOBAL)
	addl	$KPS_MIX_ADD1, %eax
SYM_INNER_LABEL(kps_asm_mix_ret, SYM_L_GLOBAL)
	RET
SYM_FUNC_END(kps_asm_mix)

/*
 * unsigned long kps_asm_fill(void *buf, unsigned long n): the two-byte
 * movb, the rep stosb, then a lea written with a one-byte displacement
 * so that it takes three bytes, as on x86-64.
 */
SYM_FUNC_START(kps_asm_fill)
	pushl	%edi
	movl	%eax, %edi
	movl	%edx, %ecx
.Lkps_fill_al:
	movb	$KPS_FILL_BYTE, %al
.Lkps_fill_rep:
	rep stosb
	{disp8} leal	0(%ecx), %eax
	popl	%edi
	RET
SYM_FUNC_END(kps_asm_fill)

	.pushsection .rodata
SYM_DATA(kps_asm_fill_al_off, .long .Lkps_fill_al - kps_asm_fill)
SYM_DATA(kps_asm_fill_rep_off, .long .Lkps_fill_rep - kps_asm_fill)
	.popsection
