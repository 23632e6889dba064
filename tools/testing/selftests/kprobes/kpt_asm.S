/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Probe targets whose instruction layout the tests must know exactly:
 * the labels below name single instructions, so that a probe can be put
 * on them and the effect of that one instruction can be observed.
 */
#include <linux/export.h>
#include <linux/linkage.h>
#include <linux/objtool.h>
#include <asm/asm.h>
#include "kprobes_target.h"

	.text

/* int kpt_asm_add(int x): returns x + KPT_ADD_IMM. */
SYM_FUNC_START(kpt_asm_add)
	movl	%edi, %eax
SYM_INNER_LABEL(kpt_asm_add_insn, SYM_L_GLOBAL)
	ANNOTATE_NOENDBR
	addl	$KPT_ADD_IMM, %eax
SYM_INNER_LABEL(kpt_asm_add_next, SYM_L_GLOBAL)
	ANNOTATE_NOENDBR
	RET
SYM_FUNC_END(kpt_asm_add)
EXPORT_SYMBOL_GPL(kpt_asm_add)

/*
 * int kpt_asm_sub(int x): returns x - KPT_SUB_IMM.  Its second
 * instruction, the sub, has a local label only: no symbol of its own in
 * kallsyms, so it is no function entry, whatever way entries are told.
 * kpt_asm_sub_off holds its offset in the function.
 */
SYM_FUNC_START(kpt_asm_sub)
	movl	%edi, %eax
.Lkpt_sub_insn:
	subl	$KPT_SUB_IMM, %eax
	RET
SYM_FUNC_END(kpt_asm_sub)
EXPORT_SYMBOL_GPL(kpt_asm_sub)

	.pushsection .rodata
SYM_DATA(kpt_asm_sub_off, .long .Lkpt_sub_insn - kpt_asm_sub)
	.popsection

/*
 * int kpt_asm_load(const int *p): returns *p.  When the load faults, the
 * exception table sends it to the return with %eax still holding
 * KPT_LOAD_FIXUP.
 */
SYM_FUNC_START(kpt_asm_load)
	movl	$KPT_LOAD_FIXUP, %eax
SYM_INNER_LABEL(kpt_asm_load_insn, SYM_L_GLOBAL)
	ANNOTATE_NOENDBR
	movl	(%rdi), %eax
.Lkpt_load_done:
	RET
	_ASM_EXTABLE(kpt_asm_load_insn, .Lkpt_load_done)
SYM_FUNC_END(kpt_asm_load)
EXPORT_SYMBOL_GPL(kpt_asm_load)
