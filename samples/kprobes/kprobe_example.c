// SPDX-License-Identifier: GPL-2.0-only
/*
 * Minimal kprobes client: watch one kernel function from a module.
 *
 * On load, a kprobe is planted on the first instruction of the function
 * named by the "symbol" parameter (kernel_clone, i.e. every fork, unless
 * told otherwise).  Each time a CPU reaches that instruction, the
 * pre-handler logs one line before it executes and the post-handler logs
 * one line after it executed.  On unload the module says how often the
 * probe fired and how many hits kprobes had to skip (nmissed).
 *
 * Try it:
 *	insmod kprobe_example.ko symbol=do_sys_open
 *	dmesg | tail
 *	rmmod kprobe_example
 *
 * Documentation/trace/kprobes.rst describes the API used here.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/smp.h>

static char *symbol = "kernel_clone";
module_param(symbol, charp, 0444);
MODULE_PARM_DESC(symbol, "function to probe (default: kernel_clone)");

static atomic_long_t fired = ATOMIC_LONG_INIT(0);

/*
 * Handlers run in the context of whatever task reached the probe, with
 * preemption (and, for breakpoint probes on x86, interrupts) disabled:
 * they must not sleep.  Another CPU may be running them at the same time.
 */
static void log_hit(const char *stage, struct kprobe *p, struct pt_regs *regs)
{
#ifdef CONFIG_X86_64
	pr_info("%s %s at %pS: ip=%pS flags=%#lx cpu=%d comm=%s\n",
		stage, p->symbol_name, p->addr, (void *)regs->ip,
		regs->flags, smp_processor_id(), current->comm);
#else
	pr_info("%s %s at %pS: ip=%pS cpu=%d comm=%s\n",
		stage, p->symbol_name, p->addr,
		(void *)instruction_pointer(regs),
		smp_processor_id(), current->comm);
#endif
}

/*
 * The probed instruction has not run yet.  On x86 the trap leaves ip just
 * past the breakpoint byte, so it reads as the probed address plus one.
 */
static int sample_pre(struct kprobe *p, struct pt_regs *regs)
{
	atomic_long_inc(&fired);
	log_hit("pre ", p, regs);

	/* Zero: let the probed instruction run and the post-handler follow. */
	return 0;
}

/*
 * The probed instruction has run (out of line); ip already points at the
 * instruction that will execute next.
 */
static void sample_post(struct kprobe *p, struct pt_regs *regs,
			unsigned long flags)
{
	log_hit("post", p, regs);
}

static struct kprobe sample_probe = {
	.pre_handler	= sample_pre,
	.post_handler	= sample_post,
};

static int __init sample_init(void)
{
	int err;

	/* Let kprobes resolve the name; it fills in .addr for us. */
	sample_probe.symbol_name = symbol;

	err = register_kprobe(&sample_probe);
	if (err) {
		pr_err("cannot probe %s: error %d\n", symbol, err);
		return err;
	}

	pr_info("probe planted on %s at %pS\n", symbol, sample_probe.addr);
	return 0;
}

static void __exit sample_exit(void)
{
	unregister_kprobe(&sample_probe);

	/* After unregistration no handler can still be running. */
	pr_info("probe on %s removed: fired %ld times, missed %lu\n",
		symbol, atomic_long_read(&fired), sample_probe.nmissed);
}

module_init(sample_init);
module_exit(sample_exit);
MODULE_DESCRIPTION("Sample kprobe: log each hit on one kernel function");
MODULE_LICENSE("GPL");
