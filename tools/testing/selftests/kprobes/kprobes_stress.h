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

#endif /* __ASSEMBLY__ */
#endif /* _KPROBES_SELFTEST_STRESS_H */
