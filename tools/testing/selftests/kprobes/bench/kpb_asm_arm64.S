/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arm64's kpb_asm.S, the benchmark's breakpoint target: int
 * kpb_asm_target(int x) returns 2 * x + 3.  Straight-line code and no
 * ftrace call; its first instruction, an add, is stepped out of line in
 * both trees, which come back after the copy (a second trap in one, a
 * call in the other).
 */
#include <linux/linkage.h>
#include "kpb.h"

	.text

/* kpb_many_0() ... kpb_many_999() and kpb_many[], for the figures with many probes. */
	KPB_GEN kpb_many, KPB_NMANY

KPB_FUNC_START(kpb_asm_target)
	add	w0, w0, w0
	add	w0, w0, #3
	ret
SYM_FUNC_END(kpb_asm_target)

/* A symbol right after it, so that kallsyms gives kpb_asm_target its exact size. */
KPB_FUNC_START(kpb_asm_next)
	ret
SYM_FUNC_END(kpb_asm_next)
