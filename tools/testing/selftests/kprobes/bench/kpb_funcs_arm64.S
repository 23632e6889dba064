/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arm64's kpb_funcs.S, in kprobes_bench_funcs.ko: KPB_NFUNCS functions,
 * kpb_funcs_0() ... kpb_funcs_9999(), and kpb_funcs[], their addresses,
 * for figure 11; and the functions of figure 12, by first instruction
 * (kpb_shapes[]), the instructions kprobes meet at arm64's function
 * entries besides ftrace's mov x9, x30 (figure 13): hints (nop, bti c),
 * a branch, PC-relative ones (adrp, ldr from a literal), paciasp, and
 * the stp of a frame record, stepped like the plain mov of kpb_funcs[].
 * No function starts with a bl: it would overwrite the return address.
 */
#include <linux/export.h>
#include <linux/linkage.h>
#include "kpb.h"

	.text
	KPB_GEN kpb_funcs, KPB_NFUNCS
EXPORT_SYMBOL_GPL(kpb_funcs)

/* Figure 12: functions by first instruction, and their tables' table. */
	KPB_GEN kpb_shape_nop, KPB_NSHAPE, KPB_FIRST_NOP
	KPB_GEN kpb_shape_bti, KPB_NSHAPE, KPB_FIRST_BTI
	KPB_GEN kpb_shape_b, KPB_NSHAPE, KPB_FIRST_B
	KPB_GEN kpb_shape_adrp, KPB_NSHAPE, KPB_FIRST_ADRP
	KPB_GEN kpb_shape_ldr, KPB_NSHAPE, KPB_FIRST_LDR
	KPB_GEN kpb_shape_paciasp, KPB_NSHAPE, KPB_FIRST_PACIASP
	KPB_GEN kpb_shape_stp, KPB_NSHAPE, KPB_FIRST_STP

	.pushsection .rodata
	.balign 8
SYM_DATA_START(kpb_shapes)
	.quad	kpb_shape_nop, kpb_shape_bti, kpb_shape_b, kpb_shape_adrp
	.quad	kpb_shape_ldr, kpb_shape_paciasp, kpb_shape_stp
SYM_DATA_END(kpb_shapes)
	.popsection
EXPORT_SYMBOL_GPL(kpb_shapes)
