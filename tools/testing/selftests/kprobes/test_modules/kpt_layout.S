/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The instruction layout of a hand-written target, as its source gives
 * it, for the cases that must know every instruction boundary
 * (kpt_asm.S and kpt_asm_32.S: kpt_bnd_asm, kpt_opt_asm).  An assembler
 * include, not built on its own.
 *
 *	KPT_LAYOUT_START fn
 *	KPT_LAYOUT fn, insn	(once per instruction of fn)
 *	KPT_LAYOUT_END fn, end	(end: a label right after fn's last one)
 *
 * give fn_insns[], the offset of each instruction in fn, fn_ninsns, how
 * many, and fn_size, the bytes up to end (kpt_bnd_asm_layout(),
 * kpt_opt_asm_layout() in kpt_main.c).
 */
#ifndef _KPT_LAYOUT_S
#define _KPT_LAYOUT_S
#ifdef __ASSEMBLY__

.macro KPT_LAYOUT_START fn
	.pushsection .rodata
	.balign 4
SYM_DATA_START(\fn\()_insns)
	.popsection
.endm

.macro KPT_LAYOUT fn, insn:vararg
.Lkpt_layout\@:
	\insn
	.pushsection .rodata
	.long	.Lkpt_layout\@ - \fn
	.popsection
.endm

.macro KPT_LAYOUT_END fn, end
	.pushsection .rodata
SYM_DATA_END(\fn\()_insns)
SYM_DATA(\fn\()_ninsns, .long (. - \fn\()_insns) / 4)
SYM_DATA(\fn\()_size, .long \end - \fn)
	.popsection
.endm

#endif /* __ASSEMBLY__ */
#endif /* _KPT_LAYOUT_S */
