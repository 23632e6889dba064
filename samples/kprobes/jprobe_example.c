// SPDX-License-Identifier: GPL-2.0-only
/*
 * Minimal jprobe client (CONFIG_KPROBES_COMPAT): see the arguments of every
 * call of one kernel function, through a handler with its prototype.
 *
 * On load, a jprobe is put on the entry of kernel_clone(), which every
 * fork, vfork and clone goes through.  Its handler is declared like
 * kernel_clone() itself and is called with the arguments of each call:
 * here the clone flags and the exit signal the caller asked for.  The
 * handler works on copies; kernel_clone() then runs with its own.
 *
 * Try it:
 *	insmod jprobe_example.ko
 *	sh -c true; dmesg | tail
 *	rmmod jprobe_example
 *
 * jprobes come from an older kprobes API, kept for code written against
 * it: new code puts a kprobe on the function's entry and reads the
 * arguments from pt_regs.  See Documentation/trace/kprobes.rst.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/sched/task.h>

static atomic_long_t calls = ATOMIC_LONG_INIT(0);

/*
 * The handler: kernel_clone()'s prototype.  It runs on the function's
 * entry, before its first instruction, with preemption disabled: it must
 * not sleep.  Ending with jprobe_return() is what handlers always did; in
 * this kernel it does nothing, and the handler returns normally.
 */
static pid_t sample_kernel_clone(struct kernel_clone_args *args)
{
	atomic_long_inc(&calls);
	pr_info("kernel_clone(flags=%#llx, exit_signal=%d) by %s[%d]\n",
		args->flags, args->exit_signal, current->comm,
		task_pid_nr(current));
	jprobe_return();
	return 0;
}

static struct jprobe sample_jp = {
	.entry		= sample_kernel_clone,
	.kp = {
		.symbol_name	= "kernel_clone",
	},
};

static int __init sample_init(void)
{
	int err;

	err = register_jprobe(&sample_jp);
	if (err) {
		pr_err("cannot put a jprobe on kernel_clone: error %d\n", err);
		return err;
	}
	pr_info("jprobe on kernel_clone at %pS, handler %pS\n",
		sample_jp.kp.addr, sample_jp.entry);
	return 0;
}

static void __exit sample_exit(void)
{
	unregister_jprobe(&sample_jp);
	pr_info("jprobe on kernel_clone removed: %ld calls, missed %lu\n",
		atomic_long_read(&calls), sample_jp.kp.nmissed);
}

module_init(sample_init);
module_exit(sample_exit);
MODULE_DESCRIPTION("Sample jprobe: log the arguments of each kernel_clone() call");
MODULE_LICENSE("GPL");
