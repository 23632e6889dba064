// SPDX-License-Identifier: GPL-2.0-only
/*
 * Minimal return-probe client: time every call of one kernel function.
 *
 * On load, a kretprobe is put on the function named by the "func"
 * parameter (kernel_clone, i.e. every fork, unless told otherwise).  When
 * a call enters the function, the entry handler notes the time in the
 * call's instance; when that call returns, the return handler logs the
 * value it returned and how long it ran.  On unload the module says how
 * many returns it saw and how many calls kprobes could not follow.
 *
 * Try it:
 *	insmod kretprobe_example.ko func=do_sys_openat2
 *	dmesg | tail
 *	rmmod kretprobe_example
 *
 * Documentation/trace/kprobes.rst describes the API used here.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/kprobes.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/smp.h>

static char *func = "kernel_clone";
module_param(func, charp, 0444);
MODULE_PARM_DESC(func, "function whose returns to time (default: kernel_clone)");

static atomic_long_t returns = ATOMIC_LONG_INIT(0);

/*
 * What the entry handler leaves for the return handler of the same call.
 * Every call in flight has an instance of its own, with data_size bytes
 * of room for this in ri->data, so concurrent and nested calls of the
 * function do not overwrite each other's notes.
 */
struct call_note {
	ktime_t entered;
	int cpu;
};

/*
 * Runs on the function's entry, before its first instruction, with
 * preemption disabled.  Returning non-zero would drop this call: no
 * return handler would run for it.
 */
static int sample_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct call_note *note = (struct call_note *)ri->data;

	note->cpu = smp_processor_id();
	note->entered = ktime_get();
	return 0;
}

/*
 * Runs when the call returns, in the task that made it, before the caller
 * gets control back.  regs holds the registers as the function left them,
 * so regs_return_value() is what it returned.  It must not sleep either.
 */
static int sample_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct call_note *note = (struct call_note *)ri->data;
	s64 ns = ktime_to_ns(ktime_sub(ktime_get(), note->entered));
	long ret = (long)regs_return_value(regs);

	atomic_long_inc(&returns);
	pr_info("%s returned %ld to %pS after %lld ns (comm=%s cpu=%d->%d)\n",
		func, ret, (void *)get_kretprobe_retaddr(ri), ns,
		current->comm, note->cpu, smp_processor_id());
	return 0;
}

/*
 * maxactive: how many calls may be followed at once.  In this series it
 * is a floor, not a ceiling: when the instances run short, the pool grows
 * from process context, away from the probe hit, so a call that cannot be
 * followed (counted in nmissed) is rare even for functions that sleep.
 * A modest number is therefore enough here.
 */
static struct kretprobe sample_rp = {
	.entry_handler	= sample_entry,
	.handler	= sample_return,
	.data_size	= sizeof(struct call_note),
	.maxactive	= 20,
};

static int __init sample_init(void)
{
	int err;

	sample_rp.kp.symbol_name = func;

	err = register_kretprobe(&sample_rp);
	if (err) {
		pr_err("cannot put a return probe on %s: error %d\n", func, err);
		return err;
	}

	pr_info("return probe on %s at %pS\n", func, sample_rp.kp.addr);
	return 0;
}

static void __exit sample_exit(void)
{
	unregister_kretprobe(&sample_rp);

	/*
	 * No handler runs any more.  nmissed counts the calls that found no
	 * free instance (and, in this series, calls whose frame was left
	 * without returning); kp.nmissed those whose entry was hit while
	 * another probe's handler was running on that CPU.
	 */
	pr_info("return probe on %s removed: %ld returns, missed %d, entry missed %lu\n",
		func, atomic_long_read(&returns), sample_rp.nmissed,
		sample_rp.kp.nmissed);
}

module_init(sample_init);
module_exit(sample_exit);
MODULE_DESCRIPTION("Sample kretprobe: log the return value and duration of each call");
MODULE_LICENSE("GPL");
