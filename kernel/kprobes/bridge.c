// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The bridge (CONFIG_KPROBES_BRIDGE): the core's backend contract
 * (<linux/kprobes_arch.h>) implemented on top of the backend an
 * architecture already has, which stays as it is.  That backend was
 * written for one struct kprobe per probed address; it gets one: each
 * site embeds a proxy (<linux/kprobes_bridge.h>).
 *
 *   arch_kprobe_site_prepare()   arch_prepare_kprobe(proxy), or
 *                                arch_prepare_kprobe_ftrace(proxy) on an
 *                                ftrace site
 *   arch_kprobe_poke()           arch_arm_kprobe(proxy) or
 *                                arch_disarm_kprobe(proxy), one at a time
 *   arch_kprobe_site_release()   arch_remove_kprobe(proxy)
 *   a hit                        the backend's trap, get_kprobe(), the
 *                                proxy's handlers: kpb_pre(), kpb_post()
 *   a hit on an ftrace site      the backend's kprobe_ftrace_handler()
 *                                (the core's ftrace_ops call it),
 *                                get_kprobe(), the proxy's handlers
 *   return probes                arch_prepare_kretprobe() and the
 *                                backend's __kretprobe_trampoline, or
 *                                rethook (bridge_rethook.c)
 *
 * The backend calls the proxy's handlers with current_kprobe pointing at
 * the proxy and its own status set.  They run the site's probes the way
 * a native hit does (each probe's handler sees current_kprobe pointing at
 * that probe), then point current_kprobe back at the proxy: the backend
 * reads it again to finish the hit (its single-step completion, its fault
 * handler).
 *
 * Jump optimization, where the backend has it, is bridge_opt.c's.  What
 * the bridge leaves off: the breakpoint that makes a probe on an ftrace
 * site live before ftrace carries it (arming such a site waits for
 * ftrace's update).  An
 * architecture leaves the bridge by selecting HAVE_KPROBES_NATIVE with a
 * backend of its own.
 */

#define pr_fmt(fmt) "kprobes: " fmt

#include <linux/kprobes.h>
#include <linux/kprobes_arch.h>
#include <linux/cpu.h>
#include <linux/init.h>
#include <linux/kallsyms.h>
#include <linux/kdebug.h>
#include <linux/memory.h>
#include <linux/mutex.h>
#include <linux/notifier.h>
#include <linux/set_memory.h>

#include "internal.h"

static struct kprobe_site *kpb_site_of(struct kprobe *proxy)
{
	return container_of(proxy, struct kprobe_site, arch.proxy);
}

/*
 * The post_handlers a hit owes (kprobe_site_pre()), from the proxy's
 * pre_handler to its post_handler.  One per CPU is enough: the backend
 * runs no handler of a proxy for a hit nested between the two.
 */
static DEFINE_PER_CPU(struct kprobe_hit_posts, kpb_posts);

/* The proxy's pre_handler: a hit on the site. */
static int kpb_pre(struct kprobe *proxy, struct pt_regs *regs)
{
	struct kprobe_site *s = kpb_site_of(proxy);
	bool bp = !kprobe_ftrace(proxy);
	unsigned long flags = 0;
	bool redirected;

	/*
	 * A breakpoint's handlers run with interrupts off, as on the native
	 * backends, whatever the trap left: mips' break exception turns them
	 * back on.  An ftrace site's run as the caller had them.
	 */
	if (bp)
		local_irq_save(flags);
	kprobe_site_hit(s);
	redirected = kprobe_site_pre(s, regs, this_cpu_ptr(&kpb_posts));
	__this_cpu_write(current_kprobe, proxy);
	if (bp)
		local_irq_restore(flags);
	return redirected;
}

NOKPROBE_SYMBOL(kpb_pre);

/* The proxy's post_handler: the probed instruction has run. */
static void kpb_post(struct kprobe *proxy, struct pt_regs *regs,
		     unsigned long flags)
{
	struct kprobe_hit_posts *hp = this_cpu_ptr(&kpb_posts);
	struct kprobe_site *s = kpb_site_of(proxy);
	bool bp = !kprobe_ftrace(proxy);
	unsigned long irqs = 0;

	if (!kprobe_hit_posts_due(hp))
		return;
	/* Interrupts off, as for the pre_handlers (kpb_pre()). */
	if (bp)
		local_irq_save(irqs);
	kprobe_site_post(s, NULL, hp, regs);
	__this_cpu_write(current_kprobe, proxy);
	if (bp)
		local_irq_restore(irqs);
}

NOKPROBE_SYMBOL(kpb_post);

/**
 * get_kprobe() - the probe a bridged backend handles at @addr
 * @addr: a probed address
 *
 * Called from the backend's traps (interrupts off) and, for a neighbour,
 * from its arch_prepare_kprobe() (kprobe_mutex held).
 *
 * Return: the proxy of the site at @addr, or NULL if there is none.
 */
struct kprobe *get_kprobe(void *addr)
{
	struct kprobe_site *s = kprobe_site_find((unsigned long)addr);

	return s ? &s->arch.proxy : NULL;
}

NOKPROBE_SYMBOL(get_kprobe);

/**
 * kprobes_inc_nmissed_count() - account a hit a bridged backend skipped
 * @p: what get_kprobe() returned for the hit
 *
 * The site's enabled probes each count the miss, as on a native hit.
 */
void kprobes_inc_nmissed_count(struct kprobe *p)
{
	if (p->pre_handler == kpb_pre)
		kprobe_site_missed(kpb_site_of(p));
	else
		p->nmissed++;
}

NOKPROBE_SYMBOL(kprobes_inc_nmissed_count);

int arch_kprobe_site_prepare(struct kprobe_site *s, kprobe_opcode_t *opcode)
{
	struct kprobe *proxy = &s->arch.proxy;
	int ret;

	if (arch_within_kprobe_blacklist((unsigned long)s->addr))
		return -EINVAL;
	proxy->addr = s->addr;
	proxy->pre_handler = kpb_pre;
	proxy->post_handler = kpb_post;
	/* An ftrace site has no breakpoint and no copy. */
	if (s->flags & KSITE_FTRACE) {
		proxy->flags |= KPROBE_FLAG_FTRACE;
		return arch_prepare_kprobe_ftrace(proxy);
	}
	/* Some backends copy the instruction with the text-patching calls. */
	cpus_read_lock();
	mutex_lock(&text_mutex);
	ret = arch_prepare_kprobe(proxy);
	mutex_unlock(&text_mutex);
	cpus_read_unlock();
	if (ret)
		return ret;
	*opcode = proxy->opcode;
	/* The backend's return trampoline stays armed through "disarm all". */
	if (arch_trampoline_kprobe(proxy))
		s->flags |= KSITE_PINNED;
	return 0;
}

void arch_kprobe_site_release(struct kprobe_site *s)
{
	kpb_opt_release(s);
	/*
	 * Backends with slots only free them here; those without (arc, sh)
	 * write the text back, which they must not do once it is gone.
	 */
#ifndef __ARCH_WANT_KPROBES_INSN_SLOT
	if (s->flags & KSITE_GONE)
		return;
#endif
	cpus_read_lock();
	mutex_lock(&text_mutex);
	arch_remove_kprobe(&s->arch.proxy);
	mutex_unlock(&text_mutex);
	cpus_read_unlock();
}

/*
 * KPB_INSN_ALIGN: where an instruction can start, a multiple of the
 * architecture's smallest one.  Mostly the size of its kprobe_opcode_t;
 * csky and riscv (compressed instructions) keep 16-bit instructions in a
 * u32 opcode.  A Thumb-2 kernel mixes 16- and 32-bit instructions in
 * arm's u32 opcode and marks Thumb addresses with bit 0, which arm's
 * backend sorts out itself.
 */
#if defined(CONFIG_THUMB2_KERNEL)
#define KPB_INSN_ALIGN	1
#elif defined(CONFIG_CSKY) || defined(CONFIG_RISCV)
#define KPB_INSN_ALIGN	2
#else
#define KPB_INSN_ALIGN	sizeof(kprobe_opcode_t)
#endif

/*
 * The backend's arch_prepare_kprobe() checks the instruction, but not
 * every backend checks its alignment: mips would read, then write its
 * breakpoint, straddling two instructions.
 */
bool arch_kprobe_on_insn_boundary(unsigned long addr, unsigned long offset)
{
	return IS_ALIGNED(addr, KPB_INSN_ALIGN);
}

/* Called with the hotplug lock and text_mutex held (kprobe_sites_set_armed()). */
void arch_kprobe_poke(struct kprobe_site *s, bool arm)
{
	if (arm)
		arch_arm_kprobe(&s->arch.proxy);
	else
		arch_disarm_kprobe(&s->arch.proxy);
}

/* Each arch_arm_kprobe() and arch_disarm_kprobe() has synchronised. */
void arch_kprobe_poke_finish(void)
{
}

/* Ftrace sites wait for ftrace to carry them. */
bool arch_kprobe_ftrace_call(struct kprobe_site *s, bool arm)
{
	return false;
}

bool arch_kprobe_ftrace_hold(struct kprobe_site *s, const void *insn)
{
	return false;
}

/*
 * Slot pages stay as execmem_alloc() made them where the backend writes
 * its slots with plain stores.  s390's execmem pages are not executable;
 * its backend writes a slot through s390_kernel_write() and wants the
 * page read-only and executable, as its own alloc_insn_page() left it.
 */
void arch_kprobe_slot_page_init(void *page)
{
	if (IS_ENABLED(CONFIG_S390))
		set_memory_rox((unsigned long)page, 1);
}

#ifdef __ARCH_WANT_KPROBES_INSN_SLOT
/**
 * get_insn_slot() - a slot for a bridged backend's out-of-line copy
 *
 * Return: KPROBE_SLOT_SIZE bytes of executable memory, or NULL.
 */
kprobe_opcode_t *get_insn_slot(void)
{
	return kprobe_slot_alloc();
}

/**
 * free_insn_slot() - give back a slot from get_insn_slot()
 * @slot: the slot
 * @dirty: unused: the caller (arch_remove_kprobe()) runs after the grace
 *	period that ends every use of the slot
 */
void free_insn_slot(kprobe_opcode_t *slot, int dirty)
{
	kprobe_slot_free(slot);
}
#endif

/* Defaults for what only some backends provide. */
int __weak arch_populate_kprobe_blacklist(void)
{
	return 0;
}

bool __weak arch_within_kprobe_blacklist(unsigned long addr)
{
	return false;
}

kprobe_opcode_t * __weak arch_adjust_kprobe_addr(unsigned long addr,
						 unsigned long offset,
						 bool *on_func_entry)
{
	*on_func_entry = !offset;
	return (kprobe_opcode_t *)(addr + offset);
}

/* The bridged backends' hook set has no such question: the entry only. */
bool arch_kprobe_entry_frame(unsigned long func, unsigned long addr)
{
	return false;
}

int __weak arch_trampoline_kprobe(struct kprobe *p)
{
	return 0;
}

int __weak arch_init_kprobes(void)
{
	return 0;
}

int __weak kprobe_exceptions_notify(struct notifier_block *self,
				    unsigned long val, void *data)
{
	return NOTIFY_DONE;
}

#ifdef CONFIG_KRETPROBES
#ifndef CONFIG_KRETPROBE_ON_RETHOOK
void __weak arch_kretprobe_fixup_return(struct pt_regs *regs,
					kprobe_opcode_t *correct_ret_addr)
{
}
#endif

/*
 * What no backend can return from through its trampoline, under the
 * names most architectures give it.
 */
const char * const arch_kretprobe_refused[] = {
	"__switch_to",		/* returns with another current */
	"ret_from_fork",	/* "returns" to a new task */
	NULL
};
#endif

/*
 * Code on a backend's own breakpoint path that its architecture does not
 * mark NOKPROBE or put in an entry section: a probe there traps again
 * before the backend has finished with the first trap, and the CPU never
 * gets out.  Each row is a function, or the functions from one to
 * another (inclusive, in address order), with the reason.
 */
static const struct {
	const char *from;
	const char *to;
} kpb_trap_path[] = {
#ifdef CONFIG_PPC
	/* program_check_exception() -> do_program_check() -> kprobe_handler() */
	{ "do_program_check" },
#endif
#ifdef CONFIG_MIPS
	/* genex.S: the exception handlers, entered before state is saved */
	{ "__r4k_wait", "isrdhwr" },
	/* The break exception's handler, which does not mark itself */
	{ "do_bp" },
	/* do_bp() finds and reads the break instruction with these first */
	{ "exception_epc" },
	{ "__get_inst16" },
	{ "__get_inst32" },
	/* entry.S: the break exception returns through these */
	{ "ret_from_exception" },
	{ "ret_from_irq" },
	{ "__ret_from_irq" },
	{ "resume_userspace_check" },
	{ "resume_userspace" },
	{ "resume_kernel" },
	{ "restore_all" },
	{ "restore_partial" },
	{ "work_pending" },
	{ "work_resched" },
	{ "work_notifysig" },
	/*
	 * scall*.S: the syscall exception's entries, still on the user's
	 * stack with exceptions masked until they have saved the registers;
	 * n64's (handle_sys without the compat ABIs) whole, to its end
	 */
	{ "handle_sys", "illegal_syscall" },
	{ "handle_sys64" },
	{ "handle_sysn32" },
#endif
	{ NULL }
};

/*
 * The text of symbol @name: with function descriptors (ppc64 ELF ABI v1)
 * kallsyms names the descriptor too, and gives its address.
 */
static unsigned long __init kpb_symbol_text(const char *name)
{
	return (unsigned long)dereference_symbol_descriptor((void *)kallsyms_lookup_name(name));
}

static void __init kpb_blacklist_trap_path(void)
{
	unsigned long from, to, size, offset;
	int i, ret;

	mutex_lock(&kprobe_mutex);
	for (i = 0; kpb_trap_path[i].from; i++) {
		from = kpb_symbol_text(kpb_trap_path[i].from);
		to = kpb_trap_path[i].to ?
		     kpb_symbol_text(kpb_trap_path[i].to) : from;
		/* Not there: inlined, or not built in this configuration. */
		if (!from || !to)
			continue;
		ret = -EINVAL;
		if (to >= from && kallsyms_lookup_size_offset(to, &size, &offset))
			ret = kprobe_add_area_blacklist(from, to - offset + size);
		if (ret < 0)
			pr_warn("%s is on the breakpoint's path and stays probeable\n",
				kpb_trap_path[i].from);
	}
	mutex_unlock(&kprobe_mutex);
}

/* Several backends get their traps only through the die chain. */
static struct notifier_block kpb_exceptions_nb = {
	.notifier_call	= kprobe_exceptions_notify,
	.priority	= INT_MAX,
};

/* After kprobes_init() (same level, linked later): it may register probes. */
static int __init kpb_init(void)
{
	int ret;

	kpb_blacklist_trap_path();
	ret = arch_init_kprobes();
	if (!ret)
		ret = register_die_notifier(&kpb_exceptions_nb);
	if (ret)
		pr_err("the architecture's kprobes did not start: %d\n", ret);
	return ret;
}

early_initcall(kpb_init);
