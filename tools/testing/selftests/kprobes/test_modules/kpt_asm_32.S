/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The hand-written probe targets of kpt_asm.S, for i386.  The kernel's
 * 32-bit code is built with -mregparm=3: the first three arguments come
 * in %eax, %edx and %ecx, the rest on the stack above the return
 * address, and only %eax, %edx and %ecx may be clobbered.  Each function
 * keeps the contract kprobes_target.h gives it; where an instruction has
 * to be of a kind or a size for the cases, the comment says which.
 */
#include <linux/export.h>
#include <linux/linkage.h>
#include <linux/objtool.h>
#include <asm/asm.h>
#include <asm/frame.h>
#include <asm/nospec-branch.h>
#include <asm/smap.h>
#include "kprobes_target.h"
#include "kpt_layout.S"
#include "../bench/kpb_gen.S"

	.text

/*
 * int kpt_asm_add(int x): returns x + KPT_ADD_IMM.  Its first
 * instruction is two bytes long (KPT_NOT_BOUNDARY is 1), the add five.
 */
SYM_FUNC_START(kpt_asm_add)
	movl	%eax, %edx
SYM_INNER_LABEL(kpt_asm_add_insn, SYM_L_GLOBAL)
	addl	$KPT_ADD_IMM, %eax
SYM_INNER_LABEL(kpt_asm_add_next, SYM_L_GLOBAL)
	RET
SYM_FUNC_END(kpt_asm_add)
EXPORT_SYMBOL_GPL(kpt_asm_add)

/* int kpt_asm_sub(int x): returns x - KPT_SUB_IMM, by an unnamed sub. */
SYM_FUNC_START(kpt_asm_sub)
	movl	%eax, %edx
.Lkpt_sub_insn:
	subl	$KPT_SUB_IMM, %eax
	RET
SYM_FUNC_END(kpt_asm_sub)
EXPORT_SYMBOL_GPL(kpt_asm_sub)

	.pushsection .rodata
SYM_DATA(kpt_asm_sub_off, .long .Lkpt_sub_insn - kpt_asm_sub)
	.popsection

/*
 * int kpt_asm_load(const int *p): returns *p, or KPT_LOAD_FIXUP when the
 * load faults and the exception table sends it to the return.
 */
SYM_FUNC_START(kpt_asm_load)
	movl	%eax, %edx
	movl	$KPT_LOAD_FIXUP, %eax
SYM_INNER_LABEL(kpt_asm_load_insn, SYM_L_GLOBAL)
	movl	(%edx), %eax
.Lkpt_load_done:
	RET
	_ASM_EXTABLE(kpt_asm_load_insn, .Lkpt_load_done)
SYM_FUNC_END(kpt_asm_load)
EXPORT_SYMBOL_GPL(kpt_asm_load)

/*
 * int kpt_asm_uload(const int __user *p): kpt_asm_load() on user memory,
 * with access to it opened around the load, as get_user() does.
 */
SYM_FUNC_START(kpt_asm_uload)
	movl	%eax, %edx
	movl	$KPT_LOAD_FIXUP, %eax
	ASM_STAC
SYM_INNER_LABEL(kpt_asm_uload_insn, SYM_L_GLOBAL)
	movl	(%edx), %eax
.Lkpt_uload_done:
	ASM_CLAC
	RET
	_ASM_EXTABLE_UA(kpt_asm_uload_insn, .Lkpt_uload_done)
SYM_FUNC_END(kpt_asm_uload)
EXPORT_SYMBOL_GPL(kpt_asm_uload)

/*
 * long kpt_eight_asm(a1, ..., a8): a1 + 2 * a2 + ... + 8 * a8, with a1 to
 * a3 in registers and a4 to a8 read from the stack.
 */
SYM_FUNC_START(kpt_eight_asm)
	leal	(%eax,%edx,2), %eax
	leal	(%ecx,%ecx,2), %ecx
	addl	%ecx, %eax
	movl	4(%esp), %ecx
	leal	(%eax,%ecx,4), %eax
	movl	8(%esp), %ecx
	leal	(%ecx,%ecx,4), %ecx
	addl	%ecx, %eax
	imull	$6, 12(%esp), %ecx
	addl	%ecx, %eax
	imull	$7, 16(%esp), %ecx
	addl	%ecx, %eax
	movl	20(%esp), %ecx
	leal	(%eax,%ecx,8), %eax
	RET
SYM_FUNC_END(kpt_eight_asm)
EXPORT_SYMBOL_GPL(kpt_eight_asm)

/* ---------------------------------------------------------------------
 * Boundary-walk target: u32 kpt_bnd_asm(u32 x, int lane), see
 * kprobes_target.h, written "KPB insn" so that kpt_bnd_asm_insns[] has
 * the offset of every instruction.  The same kinds of instruction as on
 * x86-64, where i386 has them: absolute addresses stand for RIP-relative
 * ones (a load with a disp32 and no base, a store through the one-byte
 * moffs form, a lea of a symbol), and the one-byte inc/dec and xchg
 * with %eax forms, which x86-64 gave up, are in.
 */

	.pushsection .data
	.balign 4
.Lkpb_seed:
	.long	0x6b43a9b5
.Lkpb_cell0:
	.long	0
.Lkpb_cell1:
	.long	0
	.popsection

	KPT_LAYOUT_START kpt_bnd_asm

.macro KPB insn:vararg
	KPT_LAYOUT kpt_bnd_asm, \insn
.endm

/* u32 kpt_bnd_asm_mix(u32 a, u32 b): (a ^ b) * 0x27d4eb2f + (b >> 3) */
SYM_FUNC_START_LOCAL(kpt_bnd_asm_mix)
	xorl	%edx, %eax
	imull	$0x27d4eb2f, %eax, %eax
	shrl	$3, %edx
	addl	%edx, %eax
	RET
SYM_FUNC_END(kpt_bnd_asm_mix)

/*
 * The frame: %ebp, then %ebx, %esi and %edi saved below it, the lane at
 * -16(%ebp), and 32 bytes at %esp that rep movsb copies within.
 */
SYM_FUNC_START(kpt_bnd_asm)
	KPB	pushl	%ebp
	KPB	movl	%esp, %ebp
	KPB	pushl	%ebx
	KPB	pushl	%esi
	KPB	pushl	%edi
	KPB	subl	$36, %esp
	KPB	movl	%edx, -16(%ebp)			/* the lane */
	KPB	movl	%eax, %edi			/* x */
	KPB	leal	0x11(%eax,%eax,2), %ebx
	KPB	xorl	.Lkpb_seed, %eax
	KPB	imull	$0x2c1b3c6d, %eax, %eax
	KPB	movl	%eax, %edx
	KPB	shrl	$15, %edx
	KPB	xorl	%edx, %eax
	KPB	roll	$7, %eax
	KPB	orl	$1, %ebx

	/* A short loop on jnz, then one on loop. */
	KPB	movl	$5, %ecx
.Lkpb_jnz_loop:
	KPB	addl	%ecx, %eax
	KPB	rorl	%cl, %eax
	KPB	imull	%ebx, %eax
	KPB	decl	%ecx
	KPB	jnz	.Lkpb_jnz_loop
	KPB	movl	$3, %ecx
.Lkpb_loop_loop:
	KPB	xorl	%ecx, %eax
	KPB	sarl	$1, %eax
	KPB	loop	.Lkpb_loop_loop

	/* Arithmetic flags, and IF, through pushf. */
	KPB	cmpl	%ebx, %eax
	KPB	pushfl
	KPB	popl	%edx
	KPB	andl	$0xad5, %edx
	KPB	addl	%edx, %eax

	/* setcc, cmov, and a near jcc both ways. */
	KPB	testl	$1, %edi
	KPB	setnz	%dl
	KPB	movzbl	%dl, %edx
	KPB	cmovz	%ebx, %edx
	KPB	addl	%edx, %eax
	KPB	testl	$2, %edi
	KPB	{disp32} jz .Lkpb_bit1_clear
	KPB	addl	$0x1234, %eax
.Lkpb_bit1_clear:

	/* bt, adc, bts, sbb. */
	KPB	btl	$3, %edi
	KPB	adcl	$0x55, %eax
	KPB	btsl	$17, %eax
	KPB	sbbl	%edx, %edx
	KPB	xorl	%edx, %eax

	/* xchg, bswap, neg, not, inc. */
	KPB	xchgl	%eax, %ebx
	KPB	bswapl	%eax
	KPB	addl	%ebx, %eax
	KPB	negl	%eax
	KPB	notl	%ebx
	KPB	xorl	%ebx, %eax
	KPB	incl	%eax

	/* div (divisor from the input, never 0), then mul. */
	KPB	movl	%edi, %ecx
	KPB	orl	$0x101, %ecx
	KPB	xorl	%edx, %edx
	KPB	divl	%ecx
	KPB	addl	%edx, %eax
	KPB	movl	$0x9e3779b9, %edx
	KPB	mull	%edx
	KPB	xorl	%edx, %eax

	/* bsr, bsf, a shift by %cl. */
	KPB	movl	%edi, %edx
	KPB	orl	$0x10, %edx
	KPB	bsrl	%edx, %ecx
	KPB	bsfl	%edx, %edx
	KPB	shll	%cl, %edx
	KPB	addl	%edx, %eax

	/* rep movsb: 16 bytes of the frame onto the next 16, read back. */
	KPB	movl	%eax, 0(%esp)
	KPB	movl	%edi, 4(%esp)
	KPB	movl	%ebx, 8(%esp)
	KPB	movl	%ecx, 12(%esp)
	KPB	movl	%esp, %esi
	KPB	leal	16(%esp), %edi
	KPB	movl	$16, %ecx
	KPB	rep movsb
	KPB	movl	20(%esp), %edi			/* x, from the copy */
	KPB	addl	24(%esp), %eax
	KPB	movzwl	18(%esp), %edx
	KPB	xorl	%edx, %eax

	/* A direct and an indirect call. */
	KPB	movl	%eax, %edx
	KPB	call	kpt_bnd_asm_mix
	KPB	movl	$kpt_bnd_asm_mix, %ecx
	KPB	movl	%ebx, %edx
	KPB	call	*%ecx

	/* Store to the lane's cell, by absolute address, and read it back. */
	KPB	cmpl	$0, -16(%ebp)
	KPB	jnz	.Lkpb_lane1
	KPB	movl	%eax, .Lkpb_cell0
	KPB	leal	.Lkpb_cell0, %ecx
	KPB	{disp32} jmp .Lkpb_lane_done
.Lkpb_lane1:
	KPB	movl	%eax, .Lkpb_cell1
	KPB	leal	.Lkpb_cell1, %ecx
.Lkpb_lane_done:
	KPB	roll	$13, %eax
	KPB	movl	%eax, %edx
	KPB	xchgl	%edx, (%ecx)
	KPB	addl	%edx, %eax

	KPB	nop
	KPB	nopl	0(%eax)
	KPB	addl	$36, %esp
	KPB	popl	%edi
	KPB	popl	%esi
	KPB	popl	%ebx
	KPB	leave
	KPB	RET
.Lkpb_asm_end:
SYM_FUNC_END(kpt_bnd_asm)
EXPORT_SYMBOL_GPL(kpt_bnd_asm)

	KPT_LAYOUT_END kpt_bnd_asm, .Lkpb_asm_end

/* ---------------------------------------------------------------------
 * Jump-optimization target: unsigned long kpt_opt_asm(a, b, c), see
 * kprobes_target.h: a in %eax, b in %edx, c in %ecx, the only scratch
 * registers, so c takes a << 3 in first (kpt_opt_finish() on i386).  No
 * branch but the ret, no stack use.  The five instructions up to the
 * imul are three bytes long, the two after it two: a jump on any of the
 * first six covers the next instruction and no more than it needs.
 */

	KPT_LAYOUT_START kpt_opt_asm

.macro KPO insn:vararg
	KPT_LAYOUT kpt_opt_asm, \insn
.endm

SYM_FUNC_START(kpt_opt_asm)
	KPO	leal	(%ecx,%eax,8), %ecx	/* c + (a << 3) */
	KPO	leal	(%eax,%edx), %eax	/* a + b */
	KPO	rorl	$5, %ecx
	KPO	orl	$1, %edx		/* b | 1 */
	KPO	imull	%edx, %eax		/* (a + b) * (b | 1) */
	KPO	xorl	%ecx, %eax
	KPO	subl	%edx, %eax
	KPO	RET
.Lkpo_asm_end:
SYM_FUNC_END(kpt_opt_asm)
EXPORT_SYMBOL_GPL(kpt_opt_asm)

	KPT_LAYOUT_END kpt_opt_asm, .Lkpo_asm_end

/*
 * kpt_opt_call(a, b, c), kpt_opt_call_c(a, b, c): kpt_opt_asm(a, b, c),
 * kpt_opt_c(a, b, c) from a call whose return address kpt_label_addr()
 * gives, the stack pointer before it noted in kpt_opt_sp.  The arguments
 * stay in their registers throughout.
 */
SYM_FUNC_START(kpt_opt_call)
	FRAME_BEGIN
	movl	%esp, kpt_opt_sp
	call	kpt_opt_asm
.Lkpo_call_ret:
	FRAME_END
	RET
SYM_FUNC_END(kpt_opt_call)
EXPORT_SYMBOL_GPL(kpt_opt_call)

SYM_FUNC_START(kpt_opt_call_c)
	FRAME_BEGIN
	movl	%esp, kpt_opt_sp
	call	kpt_opt_c
.Lkpo_call_c_ret:
	FRAME_END
	RET
SYM_FUNC_END(kpt_opt_call_c)
EXPORT_SYMBOL_GPL(kpt_opt_call_c)

	.pushsection .rodata
SYM_DATA(kpt_opt_call_ret_off, .long .Lkpo_call_ret - kpt_opt_call)
SYM_DATA(kpt_opt_call_c_ret_off, .long .Lkpo_call_c_ret - kpt_opt_call_c)
	.popsection

/*
 * unsigned long kpt_cold(unsigned long x): a one-byte push first, and a
 * cold part that jumps right past it, as on x86-64.
 */
SYM_FUNC_START(kpt_cold)
	pushl	%ebx
.Lkpt_cold_after_push:
	movl	%eax, %ebx
	addl	$KPT_COLD_ADD, %ebx
	testb	$1, %al
	jnz	kpt_cold.cold
	movl	%ebx, %eax
	popl	%ebx
	RET
SYM_FUNC_END(kpt_cold)
EXPORT_SYMBOL_GPL(kpt_cold)

SYM_FUNC_START_LOCAL(kpt_cold.cold)
	andl	$~1, %eax
	jmp	.Lkpt_cold_after_push
SYM_FUNC_END(kpt_cold.cold)

/* ---------------------------------------------------------------------
 * Jump-optimization refusals: kpt_ref_NAME(a, b, c), see
 * kprobes_target.h, each probed at .Lkpt_ref_NAME_p, a two-byte add.
 */

/* end: from the probed instruction to the end there are three bytes. */
SYM_FUNC_START(kpt_ref_end)
	movl	%eax, %ecx
.Lkpt_ref_end_p:
	addl	%edx, %eax
	RET
SYM_FUNC_END(kpt_ref_end)
EXPORT_SYMBOL_GPL(kpt_ref_end)

/* jmpin: a branch before it lands on byte 2 of the five a jmp would take. */
SYM_FUNC_START(kpt_ref_jmpin)
	testl	%ecx, %ecx
	jz	.Lkpt_ref_jmpin_mid
.Lkpt_ref_jmpin_p:
	addl	%edx, %eax
.Lkpt_ref_jmpin_mid:
	addl	$1, %eax
	addl	$2, %eax
	RET
SYM_FUNC_END(kpt_ref_jmpin)
EXPORT_SYMBOL_GPL(kpt_ref_jmpin)

/* indirect: an indirect jmp (through c, taken when it is not zero). */
SYM_FUNC_START(kpt_ref_indirect)
	movl	%eax, %eax
.Lkpt_ref_indirect_p:
	addl	%edx, %eax
	addl	$1, %eax
	addl	$2, %eax
	testl	%ecx, %ecx
	jz	.Lkpt_ref_indirect_ret
	ANNOTATE_RETPOLINE_SAFE
	jmp	*%ecx
.Lkpt_ref_indirect_ret:
	RET
SYM_FUNC_END(kpt_ref_indirect)
EXPORT_SYMBOL_GPL(kpt_ref_indirect)

/* extable: the load after it, from c, has an exception-table entry. */
SYM_FUNC_START(kpt_ref_extable)
	movl	%eax, %eax
.Lkpt_ref_extable_p:
	addl	%edx, %eax
.Lkpt_ref_extable_load:
	addl	(%ecx), %eax
.Lkpt_ref_extable_done:
	addl	$3, %eax
	RET
	_ASM_EXTABLE(.Lkpt_ref_extable_load, .Lkpt_ref_extable_done)
SYM_FUNC_END(kpt_ref_extable)
EXPORT_SYMBOL_GPL(kpt_ref_extable)

/* call: the instruction after it is a call. */
SYM_FUNC_START(kpt_ref_call)
	FRAME_BEGIN
	movl	%eax, %eax
.Lkpt_ref_call_p:
	addl	%edx, %eax
	call	kpt_asm_ret
	addl	$3, %eax
	FRAME_END
	RET
SYM_FUNC_END(kpt_ref_call)
EXPORT_SYMBOL_GPL(kpt_ref_call)

/* Where each probed instruction is, in the order of enum kpt_ref. */
	.pushsection .rodata
	.balign 4
SYM_DATA_START(kpt_ref_off)
	.long	.Lkpt_ref_end_p - kpt_ref_end
	.long	.Lkpt_ref_jmpin_p - kpt_ref_jmpin
	.long	.Lkpt_ref_indirect_p - kpt_ref_indirect
	.long	.Lkpt_ref_extable_p - kpt_ref_extable
	.long	.Lkpt_ref_call_p - kpt_ref_call
SYM_DATA_END(kpt_ref_off)
	.popsection
EXPORT_SYMBOL_GPL(kpt_ref_off)

/* void kpt_asm_ret(void): returns; where an injected failure sends a call. */
SYM_FUNC_START(kpt_asm_ret)
	RET
SYM_FUNC_END(kpt_asm_ret)
EXPORT_SYMBOL_GPL(kpt_asm_ret)

/*
 * void kpt_asm_cli(void), void kpt_asm_sti(void): cli, sti first.
 * void kpt_asm_popf(unsigned long flags): pushes @flags, then popf, at
 * kpt_asm_popf_off, loads them.
 */
SYM_FUNC_START(kpt_asm_cli)
	cli
	RET
SYM_FUNC_END(kpt_asm_cli)
EXPORT_SYMBOL_GPL(kpt_asm_cli)

SYM_FUNC_START(kpt_asm_sti)
	sti
	RET
SYM_FUNC_END(kpt_asm_sti)
EXPORT_SYMBOL_GPL(kpt_asm_sti)

SYM_FUNC_START(kpt_asm_popf)
	pushl	%eax
.Lkpt_popf_insn:
	popfl
	RET
SYM_FUNC_END(kpt_asm_popf)
EXPORT_SYMBOL_GPL(kpt_asm_popf)

	.pushsection .rodata
SYM_DATA(kpt_asm_popf_off, .long .Lkpt_popf_insn - kpt_asm_popf)
	.popsection
EXPORT_SYMBOL_GPL(kpt_asm_popf_off)

/*
 * int kpt_kret_spin(int x), int kpt_kret_park(int x): note the stack
 * pointer on entry, the slot of their return address, which is what a
 * return probe keys its instance on, in kpt_kret_fp.  The first spins
 * while kpt_kret_spinning is set and returns x; the second returns
 * kpt_gate_wait(x), x still in %eax.
 */
SYM_FUNC_START(kpt_kret_spin)
	movl	%esp, kpt_kret_fp
.Lkpt_spin:
	pause
	cmpl	$0, kpt_kret_spinning
	jne	.Lkpt_spin
	RET
SYM_FUNC_END(kpt_kret_spin)
EXPORT_SYMBOL_GPL(kpt_kret_spin)

SYM_FUNC_START(kpt_kret_park)
	movl	%esp, kpt_kret_fp
	FRAME_BEGIN
	call	kpt_gate_wait
	FRAME_END
	RET
SYM_FUNC_END(kpt_kret_park)
EXPORT_SYMBOL_GPL(kpt_kret_park)

	.text
	KPB_GEN kpt_many, KPT_NMANY
EXPORT_SYMBOL_GPL(kpt_many)
