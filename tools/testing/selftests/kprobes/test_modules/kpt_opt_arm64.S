/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arm64's targets of the jump-optimization cases (kprobes_opt.ko; x86-64's
 * are in kpt_asm.S), described in kprobes_target.h.  Their instruction
 * layouts are what the cases are written for: every offset a case probes
 * is recorded below, next to the instruction.
 *
 * Each starts with KPO_FUNC_START (as bench/kpb_gen_arm64.S's
 * KPB_FUNC_START): a probe on a target's address meets its own first
 * instruction, not the "bti c" that SYM_FUNC_START puts first whatever
 * the configuration.  A kernel that enforces landing pads
 * (CONFIG_ARM64_BTI_KERNEL) gets it back, and kpt_opt_asm_insns[] then
 * starts past it, as x86-64's starts past endbr64.  Functions only
 * reached by a BL or BLR of these are SYM_FUNC_START_LOCAL, landing pad
 * and all.
 */
#include <linux/export.h>
#include <linux/linkage.h>
#include <asm/asm-extable.h>
#include "kprobes_target.h"

#ifdef CONFIG_ARM64_BTI_KERNEL
#define KPO_BTI_C	bti c ;
#else
#define KPO_BTI_C
#endif
#define KPO_FUNC_START(name)				\
	SYM_START(name, SYM_L_GLOBAL, SYM_A_ALIGN)	\
	KPO_BTI_C
#define KPO_FUNC_START_LOCAL(name)			\
	SYM_START(name, SYM_L_LOCAL, SYM_A_ALIGN)	\
	KPO_BTI_C

/*
 * An exception-table entry for a kernel access at \insn: a fault there
 * continues at \fixup, no register written.
 */
#define KPO_EXTABLE_KACCESS(insn, fixup)				\
	__ASM_EXTABLE_RAW(insn, fixup, EX_TYPE_KACCESS_ERR_ZERO,	\
			  EX_DATA_REG(ERR, wzr) | EX_DATA_REG(ZERO, wzr))

	.text

/* ---------------------------------------------------------------------
 * unsigned long kpt_opt_asm(a, b, c): kpt_opt_want(a, b, c), in nine
 * instructions and no stack: the entry, the one after it, the adds
 * whose flags the mul (the fifth, KPO_I_MID) finds, the mul, which works
 * on x3 in place (skipping it leaves a + b there), and the ret.  "KPO
 * insn" records each instruction's offset in kpt_opt_asm_insns[].
 */
	.pushsection .rodata
	.balign 4
SYM_DATA_START(kpt_opt_asm_insns)
	.popsection

.macro KPO insn:vararg
.Lkpo_insn\@:
	\insn
	.pushsection .rodata
	.long	.Lkpo_insn\@ - kpt_opt_asm
	.popsection
.endm

KPO_FUNC_START(kpt_opt_asm)
	KPO	orr	x4, x1, #1		/* b | 1 */
	KPO	lsl	x5, x0, #3		/* a << 3 */
	KPO	mov	x6, x2			/* c */
	KPO	adds	x3, x0, x1		/* a + b, and NZCV */
	KPO	mul	x3, x3, x4		/* (a + b) * (b | 1) */
	KPO	eor	x0, x3, x6		/* ... ^ c */
	KPO	eor	x0, x0, x5		/* ... ^ (a << 3) */
	KPO	sub	x0, x0, x1		/* ... - b */
	KPO	ret
.Lkpo_asm_end:
SYM_FUNC_END(kpt_opt_asm)
EXPORT_SYMBOL_GPL(kpt_opt_asm)

	.pushsection .rodata
SYM_DATA_END(kpt_opt_asm_insns)
SYM_DATA(kpt_opt_asm_ninsns, .long (. - kpt_opt_asm_insns) / 4)
SYM_DATA(kpt_opt_asm_size, .long .Lkpo_asm_end - kpt_opt_asm)
	.popsection

/*
 * unsigned long kpt_opt_call(a, b, c) returns kpt_opt_asm(a, b, c),
 * unsigned long kpt_opt_call_c(a, b, c) kpt_opt_c(a, b, c), through an
 * inner frame: the callee returns to .Lkpo_call_ret (its link register),
 * and the frame record its x29 points to, which is also its stack
 * pointer, noted in kpt_opt_sp, returns to .Lkpo_call_up.
 */
KPO_FUNC_START(kpt_opt_call)
	stp	x29, x30, [sp, #-16]!
	mov	x29, sp
	bl	.Lkpo_call_inner
.Lkpo_call_up:
	ldp	x29, x30, [sp], #16
	ret
.Lkpo_call_inner:
	stp	x29, x30, [sp, #-16]!
	mov	x29, sp
	adrp	x9, kpt_opt_sp
	str	x29, [x9, :lo12:kpt_opt_sp]
	bl	kpt_opt_asm
.Lkpo_call_ret:
	ldp	x29, x30, [sp], #16
	ret
SYM_FUNC_END(kpt_opt_call)
EXPORT_SYMBOL_GPL(kpt_opt_call)

KPO_FUNC_START(kpt_opt_call_c)
	stp	x29, x30, [sp, #-16]!
	mov	x29, sp
	bl	.Lkpo_call_c_inner
.Lkpo_call_c_up:
	ldp	x29, x30, [sp], #16
	ret
.Lkpo_call_c_inner:
	stp	x29, x30, [sp, #-16]!
	mov	x29, sp
	adrp	x9, kpt_opt_sp
	str	x29, [x9, :lo12:kpt_opt_sp]
	bl	kpt_opt_c
.Lkpo_call_c_ret:
	ldp	x29, x30, [sp], #16
	ret
SYM_FUNC_END(kpt_opt_call_c)
EXPORT_SYMBOL_GPL(kpt_opt_call_c)

	.pushsection .rodata
	.balign 4
SYM_DATA(kpt_opt_call_ret_off, .long .Lkpo_call_ret - kpt_opt_call)
SYM_DATA(kpt_opt_call_c_ret_off, .long .Lkpo_call_c_ret - kpt_opt_call_c)
SYM_DATA(kpt_opt_call_up_off, .long .Lkpo_call_up - kpt_opt_call)
SYM_DATA(kpt_opt_call_c_up_off, .long .Lkpo_call_c_up - kpt_opt_call_c)
	.popsection
EXPORT_SYMBOL_GPL(kpt_opt_call_ret_off)
EXPORT_SYMBOL_GPL(kpt_opt_call_c_ret_off)
EXPORT_SYMBOL_GPL(kpt_opt_call_up_off)
EXPORT_SYMBOL_GPL(kpt_opt_call_c_up_off)

/* ---------------------------------------------------------------------
 * unsigned long kpt_cold(x): (x & ~1) + KPT_COLD_ADD.  An odd x goes through
 * the cold part, kpt_cold.cold, which branches back to the instruction
 * after the first: the tbnz runs twice for it.
 */
KPO_FUNC_START(kpt_cold)
	mov	x1, #KPT_COLD_ADD
.Lkpt_cold_after_first:
	tbnz	x0, #0, kpt_cold.cold
	add	x0, x0, x1
	ret
SYM_FUNC_END(kpt_cold)
EXPORT_SYMBOL_GPL(kpt_cold)

KPO_FUNC_START_LOCAL(kpt_cold.cold)
	and	x0, x0, #~1
	b	.Lkpt_cold_after_first
SYM_FUNC_END(kpt_cold.cold)

/* ---------------------------------------------------------------------
 * What arm64 does not optimize, one function each (kprobes_target.h):
 * unsigned long kpt_opt_ref_NAME(a, b, c) returns a + b + 3, with the
 * instruction not to optimize at .Lkpt_opt_ref_NAME_p.
 *
 * extable: a load with an exception-table entry (its fixup is keyed to
 * the load's own address), adding *(unsigned long *)c: c must be valid.
 */
KPO_FUNC_START(kpt_opt_ref_extable)
	add	x0, x0, x1
.Lkpt_opt_ref_extable_p:
	ldr	x3, [x2]
	add	x0, x0, x3
.Lkpt_opt_ref_extable_done:
	add	x0, x0, #3
	ret
	KPO_EXTABLE_KACCESS(.Lkpt_opt_ref_extable_p, .Lkpt_opt_ref_extable_done)
SYM_FUNC_END(kpt_opt_ref_extable)
EXPORT_SYMBOL_GPL(kpt_opt_ref_extable)

/*
 * blr_lr: blr x30, which needs the register it overwrites.  The blr is
 * also kpt_opt_ref_blr_lr_p, a breakpoint site on every configuration for
 * kprobes_debugfs.sh (the "trigger" parameter calls this function).
 */
KPO_FUNC_START(kpt_opt_ref_blr_lr)
	stp	x29, x30, [sp, #-16]!
	mov	x29, sp
	adr	x30, kpt_opt_add3
.Lkpt_opt_ref_blr_lr_p:
SYM_INNER_LABEL(kpt_opt_ref_blr_lr_p, SYM_L_GLOBAL)
	blr	x30
	ldp	x29, x30, [sp], #16
	ret
SYM_FUNC_END(kpt_opt_ref_blr_lr)
EXPORT_SYMBOL_GPL(kpt_opt_ref_blr_lr)

SYM_FUNC_START_LOCAL(kpt_opt_add3)
	add	x0, x0, x1
	add	x0, x0, #3
	ret
SYM_FUNC_END(kpt_opt_add3)

	.pushsection .rodata
	.balign 4
SYM_DATA_START(kpt_opt_ref_off)
	.long	.Lkpt_opt_ref_extable_p - kpt_opt_ref_extable
	.long	.Lkpt_opt_ref_blr_lr_p - kpt_opt_ref_blr_lr
SYM_DATA_END(kpt_opt_ref_off)
	.popsection
EXPORT_SYMBOL_GPL(kpt_opt_ref_off)

/* ---------------------------------------------------------------------
 * u64 kpt_opt_pcrel(u64 x): kpt_opt_pcrel_want(x), to be called with
 * interrupts on.  One instruction of each kind an optimized probe's
 * detour rewrites or runs at another address, each run once per call:
 * the bits 0 to 4 of x decide which way each conditional branch goes.
 * x is kept in x15, the result built in x0.  "KPO_P insn" records the
 * offset of the instruction in kpt_opt_pcrel_off[], in the order of enum
 * kpt_pcrel.  PACIASP signs the link register with the stack pointer as
 * its modifier, and AUTIASP checks it before the ret: a detour that ran
 * either on another stack pointer would return through a corrupt one.
 */
	.pushsection .rodata
	.balign 4
SYM_DATA_START(kpt_opt_pcrel_off)
	.popsection

.macro KPO_P insn:vararg
.Lkpo_p\@:
	\insn
	.pushsection .rodata
	.long	.Lkpo_p\@ - kpt_opt_pcrel
	.popsection
.endm

KPO_FUNC_START(kpt_opt_pcrel)
	KPO_P	hint	#25			/* KPT_PCREL_PACIASP: paciasp */
	KPO_P	stp	x29, x30, [sp, #-16]!	/* KPT_PCREL_STP, stepped */
	mov	x29, sp
	KPO_P	mov	x15, x0			/* KPT_PCREL_MOV */
	/* Interrupts masked, then unmasked: x0 + 0x80. */
	KPO_P	mrs	x14, daif		/* KPT_PCREL_MRS_DAIF */
	KPO_P	msr	daifset, #2		/* KPT_PCREL_DAIFSET */
	mrs	x13, daif
	and	x13, x13, #0x80
	add	x0, x0, x13
	KPO_P	msr	daifclr, #2		/* KPT_PCREL_DAIFCLR */
	mrs	x13, daif
	and	x13, x13, #0x80
	add	x0, x0, x13, lsl #1
	KPO_P	msr	daif, x14		/* KPT_PCREL_MSR_DAIF: the caller's */
	KPO_P	adr	x1, .Lkpt_pcrel_lit_a	/* KPT_PCREL_ADR */
	ldr	x2, [x1]
	add	x0, x0, x2
	KPO_P	adrp	x3, kpt_opt_pcrel_data	/* KPT_PCREL_ADRP */
	add	x3, x3, :lo12:kpt_opt_pcrel_data
	ldr	x4, [x3]
	eor	x0, x0, x4
	KPO_P	ldr	w5, .Lkpt_pcrel_lit_w	/* KPT_PCREL_LDR_W */
	add	x0, x0, x5
	KPO_P	ldr	x6, .Lkpt_pcrel_lit_x	/* KPT_PCREL_LDR_X */
	eor	x0, x0, x6
	KPO_P	ldrsw	x7, .Lkpt_pcrel_lit_sw	/* KPT_PCREL_LDRSW */
	add	x0, x0, x7
	KPO_P	b	1f			/* KPT_PCREL_B */
	add	x0, x0, #0x7ff			/* never run */
1:	KPO_P	bl	kpt_opt_pcrel_sub	/* KPT_PCREL_BL */
	add	x0, x0, #0x55			/* where it returns */
	tst	x15, #1
	KPO_P	add	x12, x15, #1		/* KPT_PCREL_FLAGS, stepped */
	KPO_P	b.eq	2f			/* KPT_PCREL_BCOND: x even */
	add	x0, x0, #0x11
2:	and	x9, x15, #2
	KPO_P	cbz	x9, 3f			/* KPT_PCREL_CBZ */
	add	x0, x0, #0x22
3:	and	x9, x15, #4
	KPO_P	cbnz	x9, 4f			/* KPT_PCREL_CBNZ */
	add	x0, x0, #0x44
4:	KPO_P	tbz	x15, #3, 5f		/* KPT_PCREL_TBZ */
	add	x0, x0, #0x88
5:	KPO_P	tbnz	x15, #4, 6f		/* KPT_PCREL_TBNZ */
	add	x0, x0, #0x100
6:	adr	x10, 7f
	KPO_P	br	x10			/* KPT_PCREL_BR */
	add	x0, x0, #0x7ff			/* never run */
7:	hint	#36				/* bti j */
	adr	x11, kpt_opt_pcrel_sub2
	KPO_P	blr	x11			/* KPT_PCREL_BLR */
	ldp	x29, x30, [sp], #16
	KPO_P	hint	#29			/* KPT_PCREL_AUTIASP: autiasp */
	KPO_P	ret				/* KPT_PCREL_RET */
SYM_FUNC_END(kpt_opt_pcrel)
EXPORT_SYMBOL_GPL(kpt_opt_pcrel)

	.pushsection .rodata
SYM_DATA_END(kpt_opt_pcrel_off)
	.popsection
EXPORT_SYMBOL_GPL(kpt_opt_pcrel_off)

	/* Its literals, within reach of its loads. */
	.balign	8
.Lkpt_pcrel_lit_a:
	.quad	KPT_PCREL_LIT_A
.Lkpt_pcrel_lit_x:
	.quad	KPT_PCREL_LIT_X
.Lkpt_pcrel_lit_w:
	.long	KPT_PCREL_LIT_W
.Lkpt_pcrel_lit_sw:
	.long	KPT_PCREL_LIT_SW

/* x * 5 + 7: the BL's callee. */
SYM_FUNC_START_LOCAL(kpt_opt_pcrel_sub)
	add	x0, x0, x0, lsl #2
	add	x0, x0, #7
	ret
SYM_FUNC_END(kpt_opt_pcrel_sub)

/* (x << 1) + 0x3c3: the BLR's. */
SYM_FUNC_START_LOCAL(kpt_opt_pcrel_sub2)
	lsl	x0, x0, #1
	add	x0, x0, #0x3c3
	ret
SYM_FUNC_END(kpt_opt_pcrel_sub2)

	.pushsection .rodata
	.balign	8
SYM_DATA_LOCAL(kpt_opt_pcrel_data, .quad KPT_PCREL_DATA)
	.popsection

/* ---------------------------------------------------------------------
 * u64 kpt_opt_redir(u64 a, u64 b): kpt_opt_redir_want(a, b), the sum
 * shifted left by four, or-ed with the flags of cmp a, b.  The add at
 * kpt_opt_redir_off computes the sum between the cmp and the csets that
 * read the flags: a handler there that moves the PC past it decides the
 * result with x2 and the flags it leaves.
 */
KPO_FUNC_START(kpt_opt_redir)
	cmp	x0, x1
.Lkpt_opt_redir_p:
	add	x2, x0, x1
	cset	x3, mi
	cset	x4, eq
	cset	x5, cs
	cset	x6, vs
	orr	x3, x3, x4, lsl #1
	orr	x3, x3, x5, lsl #2
	orr	x3, x3, x6, lsl #3
	orr	x0, x3, x2, lsl #4
	ret
SYM_FUNC_END(kpt_opt_redir)
EXPORT_SYMBOL_GPL(kpt_opt_redir)

	.pushsection .rodata
	.balign 4
SYM_DATA(kpt_opt_redir_off, .long .Lkpt_opt_redir_p - kpt_opt_redir)
	.popsection
EXPORT_SYMBOL_GPL(kpt_opt_redir_off)
