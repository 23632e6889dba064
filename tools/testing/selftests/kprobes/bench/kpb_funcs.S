/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kprobes_bench_funcs.ko: KPB_NFUNCS functions, kpb_funcs_0() ...
 * kpb_funcs_9999(), and kpb_funcs[], their addresses, for figure 11
 * (registration cost per probe from 100 to 10,000 probes); and the
 * functions of figure 12, by first instruction (kpb_shapes[]).  A module of
 * its own, loaded for that figure only, so that the other figures run
 * against a module of the same size as before.
 */
#include <linux/export.h>
#include <linux/linkage.h>
#include <asm/asm.h>
#include "kpb.h"

	.text
	KPB_GEN kpb_funcs, KPB_NFUNCS
EXPORT_SYMBOL_GPL(kpb_funcs)

/* Figure 12: functions by first instruction, and their tables' table. */
SYM_FUNC_START_LOCAL(kpb_gen_leaf)
	RET
SYM_FUNC_END(kpb_gen_leaf)

	KPB_GEN kpb_shape_nop, KPB_NSHAPE, KPB_FIRST_NOP
	KPB_GEN kpb_shape_call, KPB_NSHAPE, KPB_FIRST_CALL
	KPB_GEN kpb_shape_jmp, KPB_NSHAPE, KPB_FIRST_JMP
	KPB_GEN kpb_shape_0f, KPB_NSHAPE, KPB_FIRST_0F
	KPB_GEN kpb_shape_66, KPB_NSHAPE, KPB_FIRST_66

	.pushsection .rodata
	.balign __ASM_SEL(4, 8)
SYM_DATA_START(kpb_shapes)
	_ASM_PTR kpb_shape_nop, kpb_shape_call, kpb_shape_jmp
	_ASM_PTR kpb_shape_0f, kpb_shape_66
SYM_DATA_END(kpb_shapes)
	.popsection
EXPORT_SYMBOL_GPL(kpb_shapes)
