/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Probe targets of the kprobes stress cases (kprobes_stress.ko): C
 * functions, whose entry probes go through ftrace, and a hand-written
 * function whose inner instructions carry breakpoint probes.
 */
#ifndef _KPROBES_SELFTEST_STRESS_H
#define _KPROBES_SELFTEST_STRESS_H

/* Constants of kps_asm_mix(); keep in sync with kps_asm.S. */
#define KPS_MIX_ADD0		0x1357
#define KPS_MIX_XOR		0x80c0ffee
#define KPS_MIX_ADD1		0x2468
/* The byte kps_asm_fill() stores. */
#define KPS_FILL_BYTE		0x5a

#ifndef __ASSEMBLY__

/*
 * kps_asm_mix(x): v = (x + KPS_MIX_ADD0) ^ KPS_MIX_XOR, then v = ~v when
 * v is negative as an int, then v + KPS_MIX_ADD1.  Each step is one
 * instruction at a label below: an add, an xor, a conditional jump (which
 * the backend emulates rather than steps), another add and the return.
 */
int kps_asm_mix(int x);

extern const u8 kps_asm_mix_add0[];
extern const u8 kps_asm_mix_xor[];
extern const u8 kps_asm_mix_jns[];
extern const u8 kps_asm_mix_add1[];
extern const u8 kps_asm_mix_ret[];

/*
 * kps_asm_fill(buf, n) stores KPS_FILL_BYTE into the @n bytes at @buf
 * with one rep stosb, kps_asm_fill_rep_off bytes into the function, and
 * returns what that left in %rcx: 0.  The instruction before it, at
 * kps_asm_fill_al_off, is two bytes long, the one after it three: a jump
 * on either covers the rep stosb.
 * Interrupts are taken between its iterations, so a CPU that runs it on
 * a large buffer spends nearly all its time inside that one instruction,
 * or inside a copy of it.
 */
unsigned long kps_asm_fill(void *buf, unsigned long n);

extern const u32 kps_asm_fill_al_off;
extern const u32 kps_asm_fill_rep_off;

/* Cases of kps_ool.c, in the kprobes_stress suite. */
struct kunit;
void kps_ool_boosted(struct kunit *test);
void kps_ool_detour(struct kunit *test);
void kps_ool_optimizing(struct kunit *test);
extern bool kps_cross_cpu;
extern bool kps_upstream;

#endif /* __ASSEMBLY__ */
#endif /* _KPROBES_SELFTEST_STRESS_H */
