// SPDX-License-Identifier: GPL-2.0
/* kprobes_bench_funcs.ko: see kpb_funcs.S (arm64: kpb_funcs_arm64.S). */
#include <linux/module.h>

MODULE_DESCRIPTION("functions for the kprobes benchmark to probe by the thousand");
MODULE_LICENSE("GPL");
