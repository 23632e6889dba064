/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arm64's probe targets whose instruction layout the tests must know
 * exactly (kprobes_target.h; x86-64's are in kpt_asm.S): the labels below
 * name single instructions, so that a probe can be put on them and the
 * effect of that one instruction can be observed.
 *
 * Each starts with KPB_FUNC_START (bench/kpb_gen_arm64.S), not
 * SYM_FUNC_START: without the "bti c" the latter puts first, a probe on a
 * target's address meets the target's own first instruction, as on
 * x86-64 (the bti c would be a hint the backend simulates as a NOP).
 * That is the contract of kpt_asm_ret() (nothing but a return),
 * kpt_eight_asm() (a breakpoint on its entry runs its own code) and
 * kpt_many[] (their first instruction is the mov a misaligned probe
 * lands in), and it keeps kpt_asm_add() and kpt_asm_sub() two
 * instructions and a ret, like x86-64's.  A kernel that enforces landing
 * pads (CONFIG_ARM64_BTI_KERNEL) gets the bti c back: calls from other
 * modules may come through a veneer's br, and kpt_many[] and
 * kpt_eight_asm() are called through pointers.
 */
#include <linux/export.h>
#include <linux/linkage.h>
#include <asm/asm-extable.h>
#include <asm/asm-uaccess.h>
#include "kprobes_target.h"
#include "../bench/kpb_gen_arm64.S"

/*
 * An exception-table entry for a kernel access at \insn: a fault there
 * continues at \fixup, no register written (copy_from_kernel_nofault()'s
 * type, with the zero register for both of its registers).
 */
#define KPT_EXTABLE_KACCESS(insn, fixup)				\
	__ASM_EXTABLE_RAW(insn, fixup, EX_TYPE_KACCESS_ERR_ZERO,	\
			  EX_DATA_REG(ERR, wzr) | EX_DATA_REG(ZERO, wzr))

	.text

/*
 * int kpt_asm_add(int x): returns x + KPT_ADD_IMM.  The add,
 * kpt_asm_add_insn, is a register add: stepped out of line, neither
 * simulated nor reading the PC.  kpt_asm_add_next is the ret.
 */
KPB_FUNC_START(kpt_asm_add)
	mov	w1, #KPT_ADD_IMM
SYM_INNER_LABEL(kpt_asm_add_insn, SYM_L_GLOBAL)
	add	w0, w0, w1
SYM_INNER_LABEL(kpt_asm_add_next, SYM_L_GLOBAL)
	ret
SYM_FUNC_END(kpt_asm_add)
EXPORT_SYMBOL_GPL(kpt_asm_add)

/*
 * int kpt_asm_sub(int x): returns x - KPT_SUB_IMM.  Its second
 * instruction, the sub, has a local label only: no symbol of its own in
 * kallsyms, so it is no function entry, whatever way entries are told.
 * kpt_asm_sub_off holds its offset in the function.
 */
KPB_FUNC_START(kpt_asm_sub)
	mov	w1, #KPT_SUB_IMM
.Lkpt_sub_insn:
	sub	w0, w0, w1
	ret
SYM_FUNC_END(kpt_asm_sub)
EXPORT_SYMBOL_GPL(kpt_asm_sub)

	.pushsection .rodata
SYM_DATA(kpt_asm_sub_off, .long .Lkpt_sub_insn - kpt_asm_sub)
	.popsection

/*
 * int kpt_asm_load(const int *p): returns *p.  When the load faults, the
 * exception table sends it to the ret with w0 still holding
 * KPT_LOAD_FIXUP (a faulting load writes no register).  The load is
 * stepped out of line: a fault there must be fixed up as if it had
 * happened at kpt_asm_load_insn.
 */
KPB_FUNC_START(kpt_asm_load)
	mov	x1, x0
	mov	w0, #KPT_LOAD_FIXUP
SYM_INNER_LABEL(kpt_asm_load_insn, SYM_L_GLOBAL)
	ldr	w0, [x1]
.Lkpt_load_done:
	ret
	KPT_EXTABLE_KACCESS(kpt_asm_load_insn, .Lkpt_load_done)
SYM_FUNC_END(kpt_asm_load)
EXPORT_SYMBOL_GPL(kpt_asm_load)

/*
 * int kpt_asm_uload(const int __user *p): kpt_asm_load() on user memory,
 * an unprivileged load with a user-access exception-table entry, user
 * page tables switched in around it where PAN is emulated, as
 * __arch_copy_from_user() does.
 */
KPB_FUNC_START(kpt_asm_uload)
	mov	x1, x0
	mov	w0, #KPT_LOAD_FIXUP
	uaccess_ttbr0_enable x2, x3, x4
SYM_INNER_LABEL(kpt_asm_uload_insn, SYM_L_GLOBAL)
	ldtr	w0, [x1]
.Lkpt_uload_done:
	uaccess_ttbr0_disable x2, x3
	ret
	_asm_extable_uaccess kpt_asm_uload_insn, .Lkpt_uload_done
SYM_FUNC_END(kpt_asm_uload)
EXPORT_SYMBOL_GPL(kpt_asm_uload)

/*
 * long kpt_eight_asm(a1, ..., a8): a1 + 2 * a2 + ... + 8 * a8.  All
 * eight arrive in x0-x7 (AAPCS64); no frame, no stack.
 */
KPB_FUNC_START(kpt_eight_asm)
	add	x0, x0, x1, lsl #1
	add	x2, x2, x2, lsl #1
	add	x0, x0, x2
	add	x0, x0, x3, lsl #2
	add	x4, x4, x4, lsl #2
	add	x0, x0, x4
	mov	x9, #6
	madd	x0, x5, x9, x0
	mov	x9, #7
	madd	x0, x6, x9, x0
	add	x0, x0, x7, lsl #3
	ret
SYM_FUNC_END(kpt_eight_asm)
EXPORT_SYMBOL_GPL(kpt_eight_asm)

/* void kpt_asm_ret(void): nothing but a return. */
KPB_FUNC_START(kpt_asm_ret)
	ret
SYM_FUNC_END(kpt_asm_ret)
EXPORT_SYMBOL_GPL(kpt_asm_ret)

/*
 * Instructions that change the interrupt mask, as local_irq_disable(),
 * local_irq_enable() and local_irq_restore() do, each the first of its
 * function (kpt_asm_popf_off is 0): void kpt_asm_cli(void) masks IRQs and
 * FIQs, void kpt_asm_sti(void) unmasks them, void kpt_asm_popf(unsigned
 * long daif) loads all four bits of DAIF from @daif.
 */
KPB_FUNC_START(kpt_asm_cli)
	msr	daifset, #3
	ret
SYM_FUNC_END(kpt_asm_cli)
EXPORT_SYMBOL_GPL(kpt_asm_cli)

KPB_FUNC_START(kpt_asm_sti)
	msr	daifclr, #3
	ret
SYM_FUNC_END(kpt_asm_sti)
EXPORT_SYMBOL_GPL(kpt_asm_sti)

KPB_FUNC_START(kpt_asm_popf)
.Lkpt_popf_insn:
	msr	daif, x0
	ret
SYM_FUNC_END(kpt_asm_popf)
EXPORT_SYMBOL_GPL(kpt_asm_popf)

/*
 * void kpt_asm_store(int *p, int v): *p = v, by the store that is the
 * function's first instruction (stepped out of line).
 */
KPB_FUNC_START(kpt_asm_store)
	str	w1, [x0]
	ret
SYM_FUNC_END(kpt_asm_store)
EXPORT_SYMBOL_GPL(kpt_asm_store)

	.pushsection .rodata
SYM_DATA(kpt_asm_popf_off, .long .Lkpt_popf_insn - kpt_asm_popf)
	.popsection
EXPORT_SYMBOL_GPL(kpt_asm_popf_off)

	.text
	KPB_GEN kpt_many, KPT_NMANY
EXPORT_SYMBOL_GPL(kpt_many)
