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
#include <asm/frame.h>
#include <asm/nospec-branch.h>
#include <asm/smap.h>
#include "kprobes_target.h"
#include "kpt_layout.S"
#include "../bench/kpb_gen.S"

	.text

/*
 * A return that stays as written: one byte, "ret".  RET is a jump to the
 * return thunk under MITIGATION_RETHUNK, which the kernel rewrites when it
 * loads the module (into ret and int3 padding, or a jump to another
 * thunk), while the layouts below are written for the bytes that run.
 * Under MITIGATION_SLS an int3 follows, after the function's measured end
 * (KPT_RET_SLS).
 */
.macro KPT_RET
	ANNOTATE_UNRET_SAFE
	ret
.endm

.macro KPT_RET_SLS
#ifdef CONFIG_MITIGATION_SLS
	int3
#endif
.endm

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

/*
 * int kpt_asm_uload(const int __user *p): kpt_asm_load() on user memory,
 * with access to it opened around the load, as get_user() does.
 */
SYM_FUNC_START(kpt_asm_uload)
	movl	$KPT_LOAD_FIXUP, %eax
	ASM_STAC
SYM_INNER_LABEL(kpt_asm_uload_insn, SYM_L_GLOBAL)
	ANNOTATE_NOENDBR
	movl	(%rdi), %eax
.Lkpt_uload_done:
	ASM_CLAC
	RET
	_ASM_EXTABLE_UA(kpt_asm_uload_insn, .Lkpt_uload_done)
SYM_FUNC_END(kpt_asm_uload)
EXPORT_SYMBOL_GPL(kpt_asm_uload)

/*
 * long kpt_eight_asm(a1, ..., a8): a1 + 2 * a2 + ... + 8 * a8, with a7
 * and a8 read from the stack above the return address.
 */
SYM_FUNC_START(kpt_eight_asm)
	movq	%rdi, %rax
	leaq	(%rax,%rsi,2), %rax
	leaq	(%rdx,%rdx,2), %r10
	addq	%r10, %rax
	leaq	(%rax,%rcx,4), %rax
	leaq	(%r8,%r8,4), %r10
	addq	%r10, %rax
	imulq	$6, %r9, %r10
	addq	%r10, %rax
	imulq	$7, 8(%rsp), %r10
	addq	%r10, %rax
	movq	16(%rsp), %r10
	leaq	(%rax,%r10,8), %rax
	RET
SYM_FUNC_END(kpt_eight_asm)
EXPORT_SYMBOL_GPL(kpt_eight_asm)

/* ---------------------------------------------------------------------
 * Boundary-walk target: u32 kpt_bnd_asm(u32 x, int lane), see
 * kprobes_target.h.  Every instruction of it is written as "KPB insn",
 * which also records its offset in kpt_bnd_asm_insns[], so that the test
 * knows exactly where the instruction boundaries are.  Every instruction
 * is one that the backend can probe (no popf, cli, sti, int3...), and
 * every one runs for any input (the lane branch: for either lane).
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
	movl	%edi, %eax
	xorl	%esi, %eax
	imull	$0x27d4eb2f, %eax, %eax
	shrl	$3, %esi
	addl	%esi, %eax
	RET
SYM_FUNC_END(kpt_bnd_asm_mix)

SYM_FUNC_START(kpt_bnd_asm)
	KPB	pushq	%rbp
	KPB	movq	%rsp, %rbp
	KPB	pushq	%rbx
	KPB	pushq	%r12
	KPB	subq	$32, %rsp
	KPB	movl	%esi, %r12d			/* the lane */
	KPB	movl	%edi, %eax
	KPB	leaq	0x11(%rax,%rax,2), %rbx
	KPB	xorl	.Lkpb_seed(%rip), %eax
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
	KPB	pushfq
	KPB	popq	%rdx
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

	/* xchg, bswap, neg, not. */
	KPB	xchgl	%eax, %ebx
	KPB	bswapl	%eax
	KPB	addl	%ebx, %eax
	KPB	negl	%eax
	KPB	notl	%ebx
	KPB	xorl	%ebx, %eax

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
	KPB	movl	%eax, 0(%rsp)
	KPB	movl	%edi, 4(%rsp)
	KPB	movq	%rbx, 8(%rsp)
	KPB	movq	%rsp, %rsi
	KPB	leaq	16(%rsp), %rdi
	KPB	movl	$16, %ecx
	KPB	rep movsb
	KPB	movl	20(%rsp), %edi			/* x, from the copy */
	KPB	addl	24(%rsp), %eax
	KPB	movzwl	18(%rsp), %edx
	KPB	xorl	%edx, %eax

	/* A direct and an indirect call. */
	KPB	movl	%eax, %esi
	KPB	call	kpt_bnd_asm_mix
	KPB	leaq	kpt_bnd_asm_mix(%rip), %r8
	KPB	movl	%eax, %edi
	KPB	movl	%ebx, %esi
	/* On purpose, with retpolines too: the probed call is this one. */
	ANNOTATE_RETPOLINE_SAFE
	KPB	call	*%r8

	/* Store to the lane's cell, RIP-relative, and read it back. */
	KPB	testl	%r12d, %r12d
	KPB	jnz	.Lkpb_lane1
	KPB	movl	%eax, .Lkpb_cell0(%rip)
	KPB	leaq	.Lkpb_cell0(%rip), %rcx
	KPB	{disp32} jmp .Lkpb_lane_done
.Lkpb_lane1:
	KPB	movl	%eax, .Lkpb_cell1(%rip)
	KPB	leaq	.Lkpb_cell1(%rip), %rcx
.Lkpb_lane_done:
	KPB	roll	$13, %eax
	KPB	movl	%eax, %edx
	KPB	xchgl	%edx, (%rcx)
	KPB	addl	%edx, %eax

	KPB	nop
	KPB	nopl	0(%rax)
	KPB	addq	$32, %rsp
	KPB	popq	%r12
	KPB	popq	%rbx
	KPB	leave
	KPB	KPT_RET
.Lkpb_asm_end:
	KPT_RET_SLS
SYM_FUNC_END(kpt_bnd_asm)
EXPORT_SYMBOL_GPL(kpt_bnd_asm)

	KPT_LAYOUT_END kpt_bnd_asm, .Lkpb_asm_end

/* ---------------------------------------------------------------------
 * Jump-optimization target: unsigned long kpt_opt_asm(a, b, c), see
 * kprobes_target.h.  Straight-line code of 3- and 4-byte instructions,
 * no branch but the final ret, no stack use: a probe on any of its first
 * nine instructions covers the next one too (a jump takes five bytes),
 * and the stack pointer is the entry's all through.  "KPO insn" records
 * the offset of each instruction in kpt_opt_asm_insns[].
 */

	KPT_LAYOUT_START kpt_opt_asm

.macro KPO insn:vararg
	KPT_LAYOUT kpt_opt_asm, \insn
.endm

SYM_FUNC_START(kpt_opt_asm)
	KPO	movq	%rdi, %rax		/* a */
	KPO	addq	%rsi, %rax		/* a + b */
	KPO	movq	%rsi, %rcx
	KPO	orq	$1, %rcx		/* b | 1 */
	KPO	imulq	%rcx, %rax		/* (a + b) * (b | 1) */
	KPO	xorq	%rdx, %rax		/* ... ^ c */
	KPO	movq	%rdi, %rdx
	KPO	shlq	$3, %rdx
	KPO	xorq	%rdx, %rax		/* ... ^ (a << 3) */
	KPO	subq	%rsi, %rax		/* ... - b */
	KPO	KPT_RET
.Lkpo_asm_end:
	KPT_RET_SLS
SYM_FUNC_END(kpt_opt_asm)
EXPORT_SYMBOL_GPL(kpt_opt_asm)

	KPT_LAYOUT_END kpt_opt_asm, .Lkpo_asm_end

/*
 * unsigned long kpt_opt_call(a, b, c) returns kpt_opt_asm(a, b, c) and
 * unsigned long kpt_opt_call_c(a, b, c) kpt_opt_c(a, b, c), from a call
 * whose return address kpt_label_addr() gives; each notes its stack
 * pointer just before that call in kpt_opt_sp.
 */
SYM_FUNC_START(kpt_opt_call)
	FRAME_BEGIN
	movq	%rsp, kpt_opt_sp(%rip)
	call	kpt_opt_asm
.Lkpo_call_ret:
	FRAME_END
	RET
SYM_FUNC_END(kpt_opt_call)
EXPORT_SYMBOL_GPL(kpt_opt_call)

SYM_FUNC_START(kpt_opt_call_c)
	FRAME_BEGIN
	movq	%rsp, kpt_opt_sp(%rip)
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

/* ---------------------------------------------------------------------
 * unsigned long kpt_cold(x), see kprobes_target.h: its first instruction is a
 * one-byte push, and its cold part (a symbol named kpt_cold.cold, as GCC
 * names them) jumps right past it.  A jump that replaced the push and the
 * instructions after it would be entered in its middle.
 */
SYM_FUNC_START(kpt_cold)
	pushq	%rbx
.Lkpt_cold_after_push:
	movq	%rdi, %rbx
	addq	$KPT_COLD_ADD, %rbx
	movq	%rbx, %rax
	testb	$1, %dil
	jnz	kpt_cold.cold
	popq	%rbx
	RET
SYM_FUNC_END(kpt_cold)
EXPORT_SYMBOL_GPL(kpt_cold)

SYM_FUNC_START_LOCAL(kpt_cold.cold)
	andq	$~1, %rdi
	jmp	.Lkpt_cold_after_push
SYM_FUNC_END(kpt_cold.cold)

/* ---------------------------------------------------------------------
 * Jump-optimization refusals: unsigned long kpt_ref_NAME(a, b, c), see
 * kprobes_target.h.  Each has one instruction, .Lkpt_ref_NAME_p, where a
 * probe must stay a breakpoint for one reason, given by its name.
 */

/* end: from the probed instruction to the end there are four bytes. */
SYM_FUNC_START(kpt_ref_end)
	movq	%rdi, %rax
.Lkpt_ref_end_p:
	addq	%rsi, %rax
	RET
SYM_FUNC_END(kpt_ref_end)
EXPORT_SYMBOL_GPL(kpt_ref_end)

/* jmpin: a branch before it lands on byte 3 of the five a jmp would take. */
SYM_FUNC_START(kpt_ref_jmpin)
	movq	%rdi, %rax
	testq	%rdx, %rdx
	jz	.Lkpt_ref_jmpin_mid
.Lkpt_ref_jmpin_p:
	addq	%rsi, %rax
.Lkpt_ref_jmpin_mid:
	addq	$1, %rax
	addq	$2, %rax
	RET
SYM_FUNC_END(kpt_ref_jmpin)
EXPORT_SYMBOL_GPL(kpt_ref_jmpin)

/*
 * indirect: the function has an indirect jmp (taken when c is not zero;
 * the cases pass zero), which a jump table would make: it could lead
 * anywhere, into the region too.
 */
SYM_FUNC_START(kpt_ref_indirect)
	movq	%rdi, %rax
.Lkpt_ref_indirect_p:
	addq	%rsi, %rax
	addq	$1, %rax
	addq	$2, %rax
	testq	%rdx, %rdx
	jz	.Lkpt_ref_indirect_ret
	ANNOTATE_RETPOLINE_SAFE
	jmp	*%rdx
.Lkpt_ref_indirect_ret:
	RET
SYM_FUNC_END(kpt_ref_indirect)
EXPORT_SYMBOL_GPL(kpt_ref_indirect)

/*
 * extable: the instruction after it, inside the region, loads from c (a
 * pointer, or zero) with an exception-table entry, whose fixup skips it.
 */
SYM_FUNC_START(kpt_ref_extable)
	movq	%rdi, %rax
.Lkpt_ref_extable_p:
	addq	%rsi, %rax
.Lkpt_ref_extable_load:
	addq	(%rdx), %rax
.Lkpt_ref_extable_done:
	addq	$3, %rax
	RET
	_ASM_EXTABLE(.Lkpt_ref_extable_load, .Lkpt_ref_extable_done)
SYM_FUNC_END(kpt_ref_extable)
EXPORT_SYMBOL_GPL(kpt_ref_extable)

/* call: the instruction after it, inside the region, is a call. */
SYM_FUNC_START(kpt_ref_call)
	FRAME_BEGIN
	movq	%rdi, %rax
.Lkpt_ref_call_p:
	addq	%rsi, %rax
	call	kpt_asm_ret
	addq	$3, %rax
	FRAME_END
	RET
SYM_FUNC_END(kpt_ref_call)
EXPORT_SYMBOL_GPL(kpt_ref_call)

/*
 * Where each probed instruction is, from its function's start, in the
 * order of enum kpt_ref: local labels, so that kallsyms sees each
 * function whole.
 */
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
 * Instructions that change the interrupt flag, each the first of its
 * function: void kpt_asm_cli(void), void kpt_asm_sti(void), and
 * void kpt_asm_popf(unsigned long flags), whose popf (loading @flags) is
 * kpt_asm_popf_off bytes in.
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
	pushq	%rdi
.Lkpt_popf_insn:
	popfq
	RET
SYM_FUNC_END(kpt_asm_popf)
EXPORT_SYMBOL_GPL(kpt_asm_popf)

	.pushsection .rodata
SYM_DATA(kpt_asm_popf_off, .long .Lkpt_popf_insn - kpt_asm_popf)
	.popsection
EXPORT_SYMBOL_GPL(kpt_asm_popf_off)

/*
 * int kpt_kret_spin(int x): notes its stack pointer on entry (where its
 * return address is) in kpt_kret_fp, spins while kpt_kret_spinning is
 * set, returns x.  int kpt_kret_park(int x): notes the same, then sleeps
 * at the gate, returns kpt_gate_wait(x).
 */
SYM_FUNC_START(kpt_kret_spin)
	movq	%rsp, kpt_kret_fp(%rip)
.Lkpt_spin:
	pause
	cmpl	$0, kpt_kret_spinning(%rip)
	jne	.Lkpt_spin
	movl	%edi, %eax
	RET
SYM_FUNC_END(kpt_kret_spin)
EXPORT_SYMBOL_GPL(kpt_kret_spin)

SYM_FUNC_START(kpt_kret_park)
	movq	%rsp, kpt_kret_fp(%rip)
	FRAME_BEGIN
	call	kpt_gate_wait
	FRAME_END
	RET
SYM_FUNC_END(kpt_kret_park)
EXPORT_SYMBOL_GPL(kpt_kret_park)

	.text
	KPB_GEN kpt_many, KPT_NMANY
EXPORT_SYMBOL_GPL(kpt_many)
