/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User memory for the KUnit cases that make user accesses from their own
 * kthread.
 *
 * kunit_vm_mmap() would do, but 6.12's KUnit attaches the mm it creates
 * with kthread_use_mm() and never drops the reference that takes: every
 * case using it leaks an mm_struct, which the suite's kmemleak case then
 * reports.  Here the case's thread gets an mm the same way, and a KUnit
 * action drops that reference in KUnit's cleanup.  The order does not
 * matter: the thread's exit takes references of its own for as long as
 * it still runs on the mm.  A module that includes this imports
 * EXPORTED_FOR_KUNIT_TESTING, for mm_alloc() and arch_pick_mmap_layout().
 */
#ifndef KPT_USER_H
#define KPT_USER_H

#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>

static inline void kpt_user_mm_put(void *mm)
{
	mmdrop(mm);
}

/* One private anonymous page of @prot in the case's own mm; 0 if none. */
static inline unsigned long kpt_user_page(struct kunit *test,
					  unsigned long prot)
{
	struct mm_struct *mm = current->mm;
	unsigned long addr;

	if (!mm) {
		mm = mm_alloc();
		if (!mm)
			return 0;
		mm->task_size = TASK_SIZE;
		arch_pick_mmap_layout(mm, &current->signal->rlim[RLIMIT_STACK]);
		kthread_use_mm(mm);
		if (kunit_add_action_or_reset(test, kpt_user_mm_put, mm))
			return 0;
	}
	addr = vm_mmap(NULL, 0, PAGE_SIZE, prot, MAP_PRIVATE | MAP_ANONYMOUS, 0);
	return IS_ERR_VALUE(addr) ? 0 : addr;
}

#endif /* KPT_USER_H */
