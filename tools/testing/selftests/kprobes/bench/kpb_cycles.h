/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The clock kprobes_bench.ko's get_cycles() reads, from user space, for
 * kpb_attach.c and kpb_workload.c: x86's TSC (x86-64's and i386's), or
 * arm64's generic timer's virtual count.  Under QEMU's -icount shift=0
 * it counts executed instructions (arm64's, one per 16).
 */
#ifndef _KPB_CYCLES_H
#define _KPB_CYCLES_H

#ifndef __aarch64__
#include <x86intrin.h>	/* __rdtsc() */
#endif

static inline unsigned long long cycles(void)
{
#ifdef __aarch64__
	unsigned long long c;

	/* As arm64's kernel reads it: after what came before. */
	asm volatile("isb\n\tmrs %0, cntvct_el0" : "=r" (c) : : "memory");
	return c;
#else
	return __rdtsc();
#endif
}

#endif /* _KPB_CYCLES_H */
