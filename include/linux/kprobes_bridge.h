/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The bridge (CONFIG_KPROBES_BRIDGE): the kprobes core driving the
 * backend an architecture already has (arch/<arch>/kernel/kprobes.c and
 * its friends, left as they are) through the interface that backend was
 * written against.  An architecture is bridged until it selects
 * HAVE_KPROBES_NATIVE with a backend on <linux/kprobes_arch.h>.
 *
 * What a bridged backend sees: one struct kprobe per probed address (the
 * site's proxy, see kernel/kprobes/bridge.c), found with get_kprobe(), and
 * the hooks and per-CPU state it defines itself (arch_prepare_kprobe(),
 * arch_arm_kprobe(), current_kprobe, kprobe_ctlblk, its traps).  The
 * proxy's handlers run the site's probes in registration order.
 *
 * Included by <linux/kprobes.h> under CONFIG_KPROBES_BRIDGE only.
 */
#ifndef _LINUX_KPROBES_BRIDGE_H
#define _LINUX_KPROBES_BRIDGE_H

#include <linux/ptrace.h>
/* Backends whose return trampoline is rethook's name it. */
#include <linux/rethook.h>

/* kprobe_ctlblk.kprobe_status: where the CPU is in a hit. */
#define KPROBE_HIT_ACTIVE	0x00000001	/* running handlers */
#define KPROBE_HIT_SS		0x00000002	/* stepping the copy */
#define KPROBE_REENTER		0x00000004	/* a hit within a hit */
#define KPROBE_HIT_SSDONE	0x00000008	/* running post handlers */

/* The backend defines both, and current_kprobe (see <linux/kprobes.h>). */
DECLARE_PER_CPU(struct kprobe_ctlblk, kprobe_ctlblk);

static nokprobe_inline struct kprobe_ctlblk *get_kprobe_ctlblk(void)
{
	return this_cpu_ptr(&kprobe_ctlblk);
}

#ifdef CONFIG_OPTPROBES
/*
 * What a backend's jump optimization (arm, powerpc) works on: a probe,
 * the list its batches are made of, and the backend's detour.  The
 * bridge never allocates one apart: it is the site's proxy (below).
 */
struct optimized_kprobe {
	struct kprobe			kp;
	struct list_head		list;
	struct arch_optimized_insn	optinsn;
};
#endif

/*
 * The site's proxy: what get_kprobe() returns for a probed address.  With
 * jump optimization the proxy is op.kp, the start of the site's
 * optimized_kprobe, so that the backend's detour finds it from either.
 */
struct arch_kprobe_site {
#ifdef CONFIG_OPTPROBES
	union {
		struct kprobe		proxy;
		struct optimized_kprobe	op;
	};
#else
	struct kprobe		proxy;
#endif
};

/* Provided by the bridge (kernel/kprobes/bridge.c), for the backend. */
struct kprobe *get_kprobe(void *addr);
void kprobes_inc_nmissed_count(struct kprobe *p);

/* Provided by the backend.  arch_remove_kprobe() its header declares. */
int arch_prepare_kprobe(struct kprobe *p);
void arch_arm_kprobe(struct kprobe *p);
void arch_disarm_kprobe(struct kprobe *p);
int arch_init_kprobes(void);
int arch_trampoline_kprobe(struct kprobe *p);
bool arch_within_kprobe_blacklist(unsigned long addr);
kprobe_opcode_t *arch_adjust_kprobe_addr(unsigned long addr, unsigned long offset,
					 bool *on_func_entry);
int arch_populate_kprobe_blacklist(void);
int kprobe_exceptions_notify(struct notifier_block *self, unsigned long val,
			     void *data);

/*
 * Slots for the out-of-line copies: the core's slot pages
 * (kernel/kprobes/slots.c), left as execmem_alloc() made them, since
 * several backends fill their slots with plain stores.  The slot pool
 * wants slots of at least 16 bytes.
 */
#define KPROBE_SLOT_SIZE	ALIGN(MAX_INSN_SIZE * sizeof(kprobe_opcode_t), 16)
#ifdef __ARCH_WANT_KPROBES_INSN_SLOT
kprobe_opcode_t *get_insn_slot(void);
void free_insn_slot(kprobe_opcode_t *slot, int dirty);
#endif
/* s390 still defines its slot page allocator; the slot pool does not call it. */
void *alloc_insn_page(void);

/* Five of the backends arm with stop_machine_cpuslocked(). */
#define KPROBE_POKE_CPUS_LOCKED	1

/* arm's trampoline frame keeps the trampoline as its return address. */
#define KRETPROBE_POP_AFTER_HANDLER	1

/*
 * Probes on ftrace sites: the backend's kprobe_ftrace_handler() is the
 * ftrace_ops' callback, and finds the proxy with get_kprobe() like its
 * trap does.  It runs whichever ops calls it: every site stays in the
 * IPMODIFY one.
 */
#define KPROBE_FTRACE_IPMODIFY_ALWAYS	1
#ifdef CONFIG_KPROBES_ON_FTRACE
int arch_prepare_kprobe_ftrace(struct kprobe *p);
#else
static inline int arch_prepare_kprobe_ftrace(struct kprobe *p)
{
	return -EINVAL;
}
#endif

#ifdef CONFIG_OPTPROBES
/*
 * Jump optimization (kernel/kprobes/bridge_opt.c): the backend's optprobe
 * code, which jumps over one instruction (MAX_OPTIMIZED_LENGTH bytes) and
 * knows the size of its detour only once linked.  Its detour pages come
 * from alloc_optinsn_page(), which powerpc defines to keep them within a
 * branch's reach of the kernel text.
 */
#define KPROBE_OPT_REGION_MAX		MAX_OPTIMIZED_LENGTH
#define KPROBE_OPTINSN_SLOT_SIZE	(MAX_OPTINSN_SIZE * sizeof(kprobe_opcode_t))
#define KPROBE_OPTINSN_PAGE_ALLOC	alloc_optinsn_page
#define KPROBE_OPTINSN_PAGE_FREE	free_optinsn_page

/* Provided by the bridge, for the backend's optprobe code. */
void opt_pre_handler(struct kprobe *p, struct pt_regs *regs);
kprobe_opcode_t *get_optinsn_slot(void);
void free_optinsn_slot(kprobe_opcode_t *slot, int dirty);
void *alloc_optinsn_page(void);
void free_optinsn_page(void *page);

/* Provided by the backend's optprobe code. */
int arch_prepared_optinsn(struct arch_optimized_insn *optinsn);
int arch_check_optimized_kprobe(struct optimized_kprobe *op);
int arch_prepare_optimized_kprobe(struct optimized_kprobe *op,
				  struct kprobe *orig);
void arch_remove_optimized_kprobe(struct optimized_kprobe *op);
void arch_optimize_kprobes(struct list_head *oplist);
void arch_unoptimize_kprobe(struct optimized_kprobe *op);
void arch_unoptimize_kprobes(struct list_head *oplist,
			     struct list_head *done_list);
int arch_within_optimized_kprobe(struct optimized_kprobe *op,
				 kprobe_opcode_t *addr);
#endif

/* Functions a backend refuses return probes on (powerpc, s390, sparc). */
struct kretprobe_blackpoint {
	const char *name;
	void *addr;
};

#ifdef CONFIG_KRETPROBE_ON_RETHOOK
/*
 * The backend's return trampoline is rethook's: each call in flight also
 * holds a node of one of the kretprobe's rethooks (rp->rh, a chain that
 * grows with the instance pool), and rethook's handler hands the return
 * to the core
 * (kernel/kprobes/bridge_rethook.c).  rethook sets the PC to the real
 * return address before, and fixes up the return after, the handlers.
 */
#define arch_kretprobe_trampoline	arch_rethook_trampoline

bool kprobe_bridge_rethook_hook(struct kretprobe_instance *ri,
				struct pt_regs *regs);
int kprobe_bridge_rethook_alloc(struct kretprobe *rp);
int kprobe_bridge_rethook_grow(struct kretprobe *rp, unsigned int nr);
void kprobe_bridge_rethook_free(struct kretprobe *rp);

static nokprobe_inline bool arch_kretprobe_hijack(struct kretprobe_instance *ri,
						  struct pt_regs *regs)
{
	return kprobe_bridge_rethook_hook(ri, regs);
}

static nokprobe_inline void arch_kretprobe_restore(struct pt_regs *regs,
						   void *fp, unsigned long ret)
{
}

#define arch_kretprobe_alloc	kprobe_bridge_rethook_alloc
#define arch_kretprobe_grow	kprobe_bridge_rethook_grow
#define arch_kretprobe_free	kprobe_bridge_rethook_free

#elif defined(CONFIG_KRETPROBES)
/* The backend's trampoline and its entry hook. */
void __kretprobe_trampoline(void);
void arch_prepare_kretprobe(struct kretprobe_instance *ri,
			    struct pt_regs *regs);
void arch_kretprobe_fixup_return(struct pt_regs *regs,
				 kprobe_opcode_t *correct_ret_addr);
unsigned long kretprobe_trampoline_handler(struct pt_regs *regs, void *fp);

/*
 * Called from the trampoline probe's pre_handler (arc, mips, parisc, sh,
 * sparc) rather than from the trampoline's own code: the same thing here,
 * since kretprobe_trampoline_handler() keeps current_kprobe as it found it.
 */
static nokprobe_inline unsigned long
__kretprobe_trampoline_handler(struct pt_regs *regs, void *fp)
{
	return kretprobe_trampoline_handler(regs, fp);
}

/* The core's name for the return trampoline. */
#define arch_kretprobe_trampoline	__kretprobe_trampoline

static nokprobe_inline bool arch_kretprobe_hijack(struct kretprobe_instance *ri,
						  struct pt_regs *regs)
{
	arch_prepare_kretprobe(ri, regs);
	return true;
}

/*
 * Handlers see the real return address as the PC; the backend's
 * trampoline puts it back where the caller returns through.
 */
static nokprobe_inline void arch_kretprobe_restore(struct pt_regs *regs,
						   void *fp, unsigned long ret)
{
	instruction_pointer_set(regs, ret);
	arch_kretprobe_fixup_return(regs, (kprobe_opcode_t *)ret);
}
#endif /* CONFIG_KRETPROBE_ON_RETHOOK, CONFIG_KRETPROBES */

/*
 * Wherever the core marks the CPU as running a probe outside a hit (busy
 * sections, return handlers), the backend's status must say "handlers
 * running": a hit meanwhile then counts as missed instead of finding a
 * status that means nothing (some backends BUG() on that).
 */
static nokprobe_inline void arch_kprobe_running_set(struct kprobe *p)
{
	get_kprobe_ctlblk()->kprobe_status = KPROBE_HIT_ACTIVE;
}

#define arch_kprobe_running_set arch_kprobe_running_set

#endif /* _LINUX_KPROBES_BRIDGE_H */
