/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kprobes_bench_funcs.ko: KPB_NFUNCS functions, kpb_funcs_0() ...
 * kpb_funcs_9999(), and kpb_funcs[], their addresses, for figure 11
 * (registration cost per probe from 100 to 10,000 probes).  A module of
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
