/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arm64's boundary-walk target: u32 kpt_bnd_asm(u32 x, int lane), see
 * kprobes_target.h (x86-64's is in kpt_asm.S).  Every instruction of it is
 * written as "KPB insn", which also records its offset in
 * kpt_bnd_asm_insns[]; so is the bti c that SYM_FUNC_START puts at its
 * entry.  The walk (kprobes_boundary.c) puts a probe on each in turn and
 * checks every result against the unprobed one.
 *
 * It covers every class the arm64 decoder simulates rather than steps
 * (arch/arm64/kernel/probes/decode.c): NOP, BTI (c, at the entry, and j,
 * the landing pad of the BR), PRFM (literal), PACIASP and AUTIASP
 * around nested calls (a wrong simulation of either leaves the final RET
 * an unusable address, which faults), MOV Xd, Xm (ORR with XZR; one of
 * them from XZR itself), B, BL, B.cond with all fourteen conditions, CBZ
 * and CBNZ on W and on X registers, TBZ and TBNZ on a bit below 32 and on
 * one above, BR, BLR, RET, ADR, ADRP, LDR (literal) of a W and an X
 * register, LDRSW (literal) of a negative word, MRS of DAIF (0 with
 * everything unmasked: a step, which runs masked, would read 0x3c0);
 * and a mix of stepped ones: stp and ldp with pre- and post-index
 * writeback on sp, sub and add on sp, str and ldr with a register offset
 * and with writeback, a load from the frame, ldar and stlr, LSE atomics
 * (ldadd, swp, swpal, cas), csel, csinc, cset, ccmp, madd, msub, mul,
 * umulh, udiv, sdiv, clz, rbit, rev, rev16, bfi, ubfx, sbfx, extr, adds
 * and subs whose flags later instructions read, mrs nzcv, movz, movk,
 * movn, 32-bit register moves, and CSDB (a barrier: stepped).  No load or store exclusive: the
 * decoder refuses those and everything between them by design (a trap in
 * the sequence clears the exclusive monitor), and every instruction here
 * must be probeable.  The LSE atomics need ARMv8.1 (QEMU's -cpu max).
 *
 * Every instruction runs on every call, for any input and either lane:
 *
 *  - The lane only picks which of two .data cells the address in x24 is
 *    (a csel), so both lanes run the same instructions.
 *
 *  - The conditional branches are in .Lkpb_block, a subroutine called
 *    twice per call: first with a condition word c = h in w22, then with
 *    ~c.  Each branch tests one bit of c (directly, or through flags or a
 *    register made from it), so that it goes one way in the first call
 *    and the other way in the second: every conditional branch is both
 *    taken and not taken on every call, and the one instruction each one
 *    skips runs exactly once.  That instruction folds the pass's c into
 *    h, and a multiply-add with the pass's c follows each test, so a
 *    branch that goes the wrong way in either pass changes the result.
 *    The 32-bit CBZ/CBNZ test a register whose bit 40 is set (only its
 *    low word decides), the 64-bit ones one whose only possible bit is
 *    bit 40; the TBZ/TBNZ test a register holding c in its high word and
 *    ~c in its low one, so that a test of the wrong half is inverted.
 *    B and BR each skip the other arm of an if/else.
 *
 *  - A loop on b.ne runs three times: taken backwards twice, then not.
 *
 *  - Before each BL and BLR, the link register is pointed at a stub in
 *    kpt_bnd_asm_lost (outside the function) that inverts the value being
 *    computed and goes on after the call: a call that does not write the
 *    link register gives a wrong result instead of a loop.
 *
 * The literals live in .text after kpt_bnd_asm_lost, out of the walk's
 * reach; the seed and the lane cells in .data, reached through ADRP.
 */
#include <linux/export.h>
#include <linux/linkage.h>
#include <asm/assembler.h>

	.arch_extension lse

	.pushsection .data
	.balign	8
.Lkpb_seed:
	.long	0x6b43a9b5
/* One cell per lane: lane 0's, then lane 1's. */
.Lkpb_cells:
	.long	0, 0
	.popsection

	.pushsection .rodata
	.balign	4
SYM_DATA_START(kpt_bnd_asm_insns)
	/* The bti c of SYM_FUNC_START. */
	.long	0
	.popsection

.macro KPB insn:vararg
.Lkpb_insn\@:
	\insn
	.pushsection .rodata
	.long	.Lkpb_insn\@ - kpt_bnd_asm
	.popsection
.endm

	.text

/* u32 kpt_bnd_asm_mix(u32 a, u32 b): (a ^ b) * 0x27d4eb2f + (b >> 3) */
SYM_FUNC_START_LOCAL(kpt_bnd_asm_mix)
	eor	w0, w0, w1
	movz	w9, #0xeb2f
	movk	w9, #0x27d4, lsl #16
	mul	w0, w0, w9
	add	w0, w0, w1, lsr #3
	ret
SYM_FUNC_END(kpt_bnd_asm_mix)

/*
 * x19: x; x20: h, the value computed; x21: the lane; x22: the condition
 * word of .Lkpb_block; x23: an odd multiplier; x24: the lane's cell.
 */
SYM_FUNC_START(kpt_bnd_asm)
.Lkpb_code:
	KPB	paciasp
	KPB	stp	x29, x30, [sp, #-64]!
	KPB	mov	x29, sp
	KPB	stp	x19, x20, [sp, #16]
	KPB	stp	x21, x22, [sp, #32]
	KPB	stp	x23, x24, [sp, #48]
	KPB	sub	sp, sp, #32			/* scratch, [sp] to [sp, #31] */
	KPB	mov	w19, w0				/* x */
	KPB	mov	x21, x1				/* the lane */
	KPB	str	w19, [sp, #4]

	/* The seed from .data, then the literals. */
	KPB	adrp	x9, .Lkpb_seed
	KPB	ldr	w20, [x9, :lo12:.Lkpb_seed]
	KPB	eor	w20, w20, w19
	KPB	ldr	w10, .Lkpb_lit_w
	KPB	ldr	x11, .Lkpb_lit_x
	KPB	ldrsw	x12, .Lkpb_lit_sw
	KPB	prfm	pldl1keep, .Lkpb_lit_x
	KPB	madd	w20, w20, w10, w19
	KPB	add	x13, x11, x12			/* high word: from the sign extension */
	KPB	eor	x13, x13, x19, lsl #29
	KPB	eor	x13, x13, x13, lsr #32
	KPB	add	w20, w20, w13
	KPB	adr	x14, .Lkpb_lit_x
	KPB	ldr	x15, [x14]
	KPB	sub	x15, x15, x11			/* 0 */
	KPB	eor	w20, w20, w15
	KPB	mov	x12, xzr			/* 0, not sp */
	KPB	add	w20, w20, w12

	/* DAIF (0 here), hints. */
	KPB	mrs	x9, daif
	KPB	eor	w20, w20, w9, lsl #3
	KPB	nop
	KPB	csdb

	/* movz/movk, 64-bit multiplications. */
	KPB	movz	x9, #0x9e37, lsl #48
	KPB	movk	x9, #0x79b9, lsl #32
	KPB	movk	x9, #0x7f4a, lsl #16
	KPB	movk	x9, #0x7c15
	KPB	mul	x10, x9, x19
	KPB	umulh	x11, x9, x20
	KPB	eor	x10, x10, x10, lsr #32
	KPB	add	w20, w20, w10
	KPB	eor	w20, w20, w11

	/* Divisions (the divisor from x, never 0) and msub. */
	KPB	orr	w9, w19, #1
	KPB	udiv	w10, w20, w9
	KPB	msub	w11, w10, w9, w20		/* h % divisor */
	KPB	add	w20, w10, w11, lsl #7
	KPB	movn	w12, #6				/* -7 */
	KPB	sdiv	w13, w20, w12
	KPB	eor	w20, w20, w13
	KPB	add	w20, w20, w19

	/* Bit operations and bit fields. */
	KPB	clz	w9, w19
	KPB	rbit	w10, w20
	KPB	rev	w11, w20
	KPB	rev16	w12, w19
	KPB	add	w20, w10, w9
	KPB	eor	w20, w20, w11, ror #5
	KPB	add	w20, w20, w12
	KPB	bfi	w20, w19, #9, #6
	KPB	ubfx	w9, w19, #4, #11
	KPB	sbfx	w10, w20, #3, #17
	KPB	extr	w11, w20, w19, #13
	KPB	add	w20, w9, w11
	KPB	eor	w20, w20, w10

	/* Flags: set, read by mrs nzcv and by conditional selects. */
	KPB	adds	w9, w20, w19
	KPB	mrs	x10, nzcv
	KPB	csinc	w11, w20, w19, cs
	KPB	eor	w20, w11, w10, lsr #28
	KPB	subs	w9, w19, w20
	KPB	csel	w10, w19, w20, hi
	KPB	cset	w11, lt
	KPB	ccmp	w19, #5, #2, ne
	KPB	cset	w12, hs
	KPB	add	w20, w20, w10
	KPB	add	w20, w20, w11, lsl #5
	KPB	add	w20, w20, w12, lsl #9

	/* A loop: b.ne taken backwards twice, then not. */
	KPB	mov	w9, #3
.Lkpb_loop:
	KPB	add	w20, w20, w9
	KPB	ror	w20, w20, #11
	KPB	subs	w9, w9, #1
	KPB	b.ne	.Lkpb_loop

	/* The frame: register offsets, writeback, a push and a pop. */
	KPB	str	w20, [sp]
	KPB	mov	x9, #8
	KPB	str	w19, [sp, x9]			/* [sp, #8]: x */
	KPB	ldr	w10, [sp, #4]			/* x, stored on entry */
	KPB	add	x11, sp, #12
	KPB	str	w20, [x11, #4]!			/* [sp, #16]: h; x11 = sp + 16 */
	KPB	ldr	w12, [x11], #-8			/* h; x11 = sp + 8 */
	KPB	ldr	w13, [x11]			/* x */
	KPB	ldr	w14, [sp, x9]			/* x */
	KPB	str	x20, [sp, #-16]!
	KPB	ldr	x15, [sp], #16			/* h */
	KPB	add	w20, w12, w10
	KPB	eor	w20, w20, w13, ror #3
	KPB	sub	w20, w20, w14, lsl #1
	KPB	eor	w20, w20, w15, ror #17

	/* Acquire/release and LSE atomics, on the frame. */
	KPB	add	x9, sp, #24
	KPB	stlr	w20, [x9]
	KPB	ldar	w10, [x9]			/* h */
	KPB	ldadd	w19, w11, [x9]			/* h; [x9] = h + x */
	KPB	swp	w10, w12, [x9]			/* h + x; [x9] = h */
	KPB	cas	w12, w19, [x9]			/* h; [x9] = x if x = 0, else h */
	KPB	ldr	w13, [x9]
	KPB	eor	w20, w11, w12, ror #7
	KPB	eor	w20, w20, w13, ror #19

	/* A direct call, then an indirect one. */
	KPB	adr	x30, .Lkpb_lost_bl
	KPB	mov	x0, x20
	KPB	mov	x1, x19
	KPB	bl	kpt_bnd_asm_mix
.Lkpb_bl_ret:
	KPB	adr	x9, kpt_bnd_asm_mix
	KPB	adr	x30, .Lkpb_lost_blr
	KPB	mov	x1, x20
	KPB	blr	x9
.Lkpb_blr_ret:
	KPB	mov	w20, w0

	/* The conditional branches, with c and with ~c. */
	KPB	movz	w23, #0x3c6d
	KPB	movk	w23, #0x2c1b, lsl #16
	KPB	mov	w22, w20
	KPB	adr	x30, .Lkpb_lost_pass0
	KPB	bl	.Lkpb_block
.Lkpb_pass0_ret:
	KPB	mvn	w22, w22
	KPB	adr	x30, .Lkpb_lost_pass1
	KPB	bl	.Lkpb_block
.Lkpb_pass1_ret:

	/* This lane's cell: stored, swapped, read back. */
	KPB	adrp	x24, .Lkpb_cells
	KPB	add	x24, x24, :lo12:.Lkpb_cells
	KPB	add	x9, x24, #4
	KPB	cmp	w21, #0
	KPB	csel	x24, x24, x9, eq
	KPB	str	w20, [x24]
	KPB	ror	w20, w20, #13
	KPB	swpal	w20, w10, [x24]			/* the unrotated h */
	KPB	ldr	w11, [x24]			/* the rotated h */
	KPB	add	w20, w10, w11

	KPB	mov	w0, w20
	KPB	add	sp, sp, #32
	KPB	ldp	x23, x24, [sp, #48]
	KPB	ldp	x21, x22, [sp, #32]
	KPB	ldp	x19, x20, [sp, #16]
	KPB	ldp	x29, x30, [sp], #64
	KPB	autiasp
	KPB	ret

/*
 * The branches: h (w20) goes through a test per branch, with the
 * condition word c (w22, zero-extended) and the multiplier in w23.  Each
 * conditional branch goes the other way when called with ~c.
 */
.Lkpb_block:
	KPB	mvn	w9, w22
	KPB	orr	x12, x9, x22, lsl #32		/* high word c, low word ~c */
	KPB	ubfx	w10, w22, #2, #1		/* c bit 2 */
	KPB	orr	x11, x10, #0x10000000000	/* bit 40: never 0 */
	KPB	ubfx	x13, x22, #6, #1		/* c bit 6 */
	KPB	lsl	x13, x13, #40			/* at bit 40, the only one */

	/* CBZ and CBNZ, W and X. */
	KPB	cbz	w11, 1f
	KPB	add	w20, w20, w22
1:	KPB	madd	w20, w20, w23, w22
	KPB	cbnz	w11, 2f
	KPB	eor	w20, w20, w22, ror #7
2:	KPB	madd	w20, w20, w23, w22
	KPB	cbz	x13, 3f
	KPB	sub	w20, w20, w22, lsl #3
3:	KPB	madd	w20, w20, w23, w22
	KPB	cbnz	x13, 4f
	KPB	add	w20, w20, w22, lsr #5
4:	KPB	madd	w20, w20, w23, w22

	/* TBZ and TBNZ: c bits 5 and 13 (high word), ~c bits 9 and 17. */
	KPB	tbz	x12, #37, 5f
	KPB	eor	w20, w20, w22, ror #11
5:	KPB	madd	w20, w20, w23, w22
	KPB	tbnz	x12, #45, 6f
	KPB	add	w20, w20, w22, lsl #2
6:	KPB	madd	w20, w20, w23, w22
	KPB	tbz	w12, #9, 7f
	KPB	sub	w20, w20, w22
7:	KPB	madd	w20, w20, w23, w22
	KPB	tbnz	w12, #17, 8f
	KPB	eor	w20, w20, w22, lsl #1
8:	KPB	madd	w20, w20, w23, w22

	/* B.cond: eq and ne on c bit 3. */
	KPB	tst	w22, #0x8
	KPB	b.eq	9f
	KPB	add	w20, w20, #0x35
9:	KPB	b.ne	10f
	KPB	eor	w20, w20, #0xff0
10:	KPB	madd	w20, w20, w23, w22

	/* mi, pl, lt and ge on c bit 31 (V clear). */
	KPB	cmp	w22, #0
	KPB	b.mi	11f
	KPB	add	w20, w20, w22, lsr #9
11:	KPB	b.pl	12f
	KPB	eor	w20, w20, w22, ror #3
12:	KPB	b.lt	13f
	KPB	sub	w20, w20, w22, lsr #1
13:	KPB	b.ge	14f
	KPB	eor	w20, w20, w22, lsl #5
14:	KPB	madd	w20, w20, w23, w22

	/* hs and lo on c bit 7 (1 - 1 or 0 - 1). */
	KPB	ubfx	w9, w22, #7, #1
	KPB	cmp	w9, #1
	KPB	b.hs	15f
	KPB	add	w20, w20, w22, lsl #7
15:	KPB	b.lo	16f
	KPB	eor	w20, w20, w22, ror #13
16:	KPB	madd	w20, w20, w23, w22

	/* hi, ls, gt and le on c bit 7 (1 - 0 or 0 - 0). */
	KPB	cmp	w9, #0
	KPB	b.hi	17f
	KPB	sub	w20, w20, w22, lsl #2
17:	KPB	b.ls	18f
	KPB	add	w20, w20, w22, lsr #3
18:	KPB	b.gt	19f
	KPB	eor	w20, w20, w22, ror #23
19:	KPB	b.le	20f
	KPB	add	w20, w20, w22, lsl #11
20:	KPB	madd	w20, w20, w23, w22

	/* vs and vc on c bit 19 (0x7fffffff + 1 overflows). */
	KPB	ubfx	w9, w22, #19, #1
	KPB	mov	w10, #0x7fffffff
	KPB	cmn	w10, w9
	KPB	b.vs	21f
	KPB	eon	w20, w20, w22, ror #29
21:	KPB	b.vc	22f
	KPB	eor	w20, w20, w22, lsr #4
22:	KPB	madd	w20, w20, w23, w22

	/* B, over the other arm of an if/else on c bit 21. */
	KPB	tbnz	w22, #21, 23f
	KPB	add	w20, w20, #0x123
	KPB	b	24f
23:	KPB	sub	w20, w20, w22, lsr #1
24:	KPB	madd	w20, w20, w23, w22

	/* BR, the same on c bit 23. */
	KPB	tbz	w22, #23, 25f
	KPB	eor	w20, w20, #0xff00ff
	KPB	adr	x9, 26f
	KPB	br	x9
25:	KPB	add	w20, w20, w22, lsl #4
26:	KPB	bti	j
	KPB	madd	w20, w20, w23, w22
	KPB	ret
.Lkpb_asm_end:
SYM_FUNC_END(kpt_bnd_asm)
EXPORT_SYMBOL_GPL(kpt_bnd_asm)

	.pushsection .rodata
SYM_DATA_END(kpt_bnd_asm_insns)
SYM_DATA(kpt_bnd_asm_ninsns, .long (. - kpt_bnd_asm_insns) / 4)
SYM_DATA(kpt_bnd_asm_size, .long .Lkpb_asm_end - kpt_bnd_asm)
	.popsection

	/* SYM_FUNC_START's bti c, recorded at offset 0 above. */
	.if	.Lkpb_code - kpt_bnd_asm != 4
	.error	"kpt_bnd_asm does not start with one instruction before .Lkpb_code"
	.endif

/*
 * Where a call of kpt_bnd_asm returns if its BL or BLR did not write the
 * link register: the value being computed is inverted, and the function
 * goes on after the call.
 */
SYM_CODE_START_LOCAL(kpt_bnd_asm_lost)
.Lkpb_lost_bl:
	mvn	w0, w0
	b	.Lkpb_bl_ret
.Lkpb_lost_blr:
	mvn	w0, w0
	b	.Lkpb_blr_ret
.Lkpb_lost_pass0:
	mvn	w20, w20
	b	.Lkpb_pass0_ret
.Lkpb_lost_pass1:
	mvn	w20, w20
	b	.Lkpb_pass1_ret

	/* The literals (read-only, in .text: PC-relative loads reach them). */
	.balign	8
.Lkpb_lit_x:
	.quad	0x9e3779b97f4a7c15
.Lkpb_lit_w:
	.long	0x85ebca6b
.Lkpb_lit_sw:
	.long	0xc2b2ae35			/* negative */
SYM_CODE_END(kpt_bnd_asm_lost)
