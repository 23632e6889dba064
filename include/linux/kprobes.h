/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kprobes: dynamic probes on kernel instructions.
 *
 * A kprobe names one instruction (by address, or by symbol and offset).
 * Once registered, its pre_handler runs each time a CPU is about to execute
 * that instruction and its post_handler right after it ran, both with the
 * registers of the probed context.  See Documentation/trace/kprobes.rst.
 *
 * This header is the API seen by probe users (modules, trace_kprobe, perf,
 * BPF) and by the few places of the kernel that must cooperate with probes
 * (trap and fault handlers, kallsyms, the exception table, the unwinder).
 * The contract between the generic core and an architecture backend lives
 * in <linux/kprobes_arch.h>.
 */
#ifndef _LINUX_KPROBES_H
#define _LINUX_KPROBES_H

#include <linux/atomic.h>
#include <linux/bug.h>
#include <linux/compiler.h>
#include <linux/ftrace.h>
#include <linux/irq_work.h>
#include <linux/linkage.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <linux/mutex.h>
#include <linux/notifier.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/smp.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
/* After the generic headers: some architectures' use types they define. */
#include <asm/kprobes.h>

/*
 * An architecture defines kprobe_opcode_t, the unit of text a probe
 * replaces, only when kprobes are built.  struct kprobe needs one in every
 * configuration, so that code declaring probes compiles without them.
 */
#ifndef CONFIG_KPROBES
typedef u32 kprobe_opcode_t;
#endif

struct kprobe;
struct kprobe_site;
struct kretprobe;
struct kretprobe_instance;
struct pt_regs;
struct task_struct;

/*
 * A pre_handler returns 0 to let the probed instruction run normally.  It
 * returns non-zero when it has redirected execution itself (changed
 * regs->ip): the probed instruction and the post_handlers are then skipped.
 */
typedef int (*kprobe_pre_handler_t)(struct kprobe *p, struct pt_regs *regs);
typedef void (*kprobe_post_handler_t)(struct kprobe *p, struct pt_regs *regs,
				      unsigned long flags);
typedef int (*kretprobe_handler_t)(struct kretprobe_instance *ri,
				   struct pt_regs *regs);
/*
 * Compatibility (CONFIG_KPROBES_COMPAT): called when a pre_handler or
 * post_handler of the probe, or the probed instruction while it runs for
 * the probe, faults; @trapnr is the trap (X86_TRAP_PF, X86_TRAP_GP).
 * Returns 1 when it has dealt with the fault (and set the registers to
 * resume with), 0 to let the kernel's own fixup or oops go on.
 */
typedef int (*kprobe_fault_handler_t)(struct kprobe *p, struct pt_regs *regs,
				      int trapnr);

/* kprobe.flags: the user may set DISABLED before registering; the rest are ours. */
#define KPROBE_FLAG_GONE		1	/* the probed text went away */
#define KPROBE_FLAG_DISABLED		2	/* registered but not firing */
#define KPROBE_FLAG_OPTIMIZED		4	/* reached through a jump (or soon) */
#define KPROBE_FLAG_FTRACE		8	/* carried by an ftrace_ops */
#define KPROBE_FLAG_ON_FUNC_ENTRY	16	/* placed on a function's entry */

struct kprobe {
	/* Set by the user before registration. */
	kprobe_opcode_t *addr;		/* or symbol_name + offset */
	const char *symbol_name;	/* "sym" or "module:sym" */
	unsigned int offset;		/* added to symbol_name's address */
	kprobe_pre_handler_t pre_handler;
	kprobe_post_handler_t post_handler;
#ifdef CONFIG_KPROBES_COMPAT
	kprobe_fault_handler_t fault_handler;	/* optional, see the typedef */
#endif
	u32 flags;			/* KPROBE_FLAG_* */

	/* Maintained by kprobes. */
	unsigned long nmissed;		/* hits skipped because a probe was running */
	/*
	 * For the stats file: while the probe is enabled, its site's hit
	 * count when it was last enabled less the hits it had then; while
	 * disabled, the hits it had.
	 */
	unsigned long hits_mark;
	kprobe_opcode_t opcode;		/* first byte of the probed instruction */
	struct list_head list;		/* on site->probes, registration order */
	struct kprobe_site *site;	/* the address this probe shares */
#ifdef CONFIG_KPROBES_BRIDGE
	/* What a bridged backend keeps per probe (kprobes_bridge.h). */
	struct arch_specific_insn ainsn;
#endif
	/*
	 * Never hashed by kprobes.  Kept because users (trace_kprobe) test
	 * "registered" as !list_empty(&list) || !hlist_unhashed(&hlist) and
	 * re-initialise both before reusing a probe.
	 */
	struct hlist_node hlist;
};

static inline bool kprobe_gone(struct kprobe *p)
{
	return p->flags & KPROBE_FLAG_GONE;
}

static inline bool kprobe_disabled(struct kprobe *p)
{
	return p->flags & (KPROBE_FLAG_DISABLED | KPROBE_FLAG_GONE);
}

static inline bool kprobe_optimized(struct kprobe *p)
{
	return p->flags & KPROBE_FLAG_OPTIMIZED;
}

static inline bool kprobe_ftrace(struct kprobe *p)
{
	return p->flags & KPROBE_FLAG_FTRACE;
}

/*
 * Return probes.  @kp is placed on the function's entry; @handler runs when
 * the call returns.  @data_size bytes of per-call data travel from
 * @entry_handler to @handler in kretprobe_instance.data; a non-zero return
 * from @entry_handler means "not this call".  @maxactive instances are
 * prepared at registration (<= 0: a default); here that is a floor, not a
 * ceiling: the pool grows off the hit path when calls in flight use more
 * than half of it.  @nmissed counts entries that found no instance.
 */
struct kretprobe_pool;

struct kretprobe {
	struct kprobe kp;		/* on the function's entry */
	kretprobe_handler_t entry_handler;	/* optional */
	kretprobe_handler_t handler;	/* on return */
	size_t data_size;		/* bytes of kretprobe_instance.data */
	int maxactive;			/* instances prepared up front */
	int nmissed;			/* returns that could not be caught */
	struct kretprobe_pool *pool;	/* ours */
#ifdef CONFIG_KRETPROBE_ON_RETHOOK
	struct rethook __rcu *rh;	/* the bridge's newest rethook */
#endif
};

#define KRETPROBE_MAX_DATA_SIZE		4096
/* maxactive above this is refused (-E2BIG). */
#define KRETPROBE_MAXACTIVE_LIMIT	16384
/* A pool grows to at most max(floor, min(this, KRETPROBE_POOL_BYTES / size)). */
#define KRETPROBE_POOL_GROW_MAX		8192
#define KRETPROBE_POOL_BYTES		(16 << 20)
/* Tells code that builds against several kernels that pools grow here. */
#define KRETPROBE_POOL_GROWS		1

struct kretprobe_chunk;

/* A snapshot of a kretprobe's pool: see kretprobe_pool_info(). */
struct kretprobe_pool_info {
	unsigned int	out;	/* instances in use by calls in flight */
	unsigned int	nr;	/* instances the pool holds now */
	unsigned int	floor;	/* never trimmed below (maxactive) */
	unsigned int	limit;	/* never grown beyond */
};

struct kretprobe_instance {
	struct kretprobe *rp;		/* the owner, for get_kretprobe() */
	kprobe_opcode_t *ret_addr;	/* where the probed call returns to */
	void *fp;			/* stack slot that held ret_addr */
	struct llist_node llist;	/* on the task's pending returns */
	struct kretprobe_pool *pool;	/* ours: its pool */
	struct kretprobe_chunk *chunk;	/* ours: where it is kept */
	unsigned int index;		/* ours: its bit in the chunk */
	char data[] __aligned(sizeof(long));
};

static nokprobe_inline struct kretprobe *get_kretprobe(struct kretprobe_instance *ri)
{
	return READ_ONCE(ri->rp);
}

static nokprobe_inline unsigned long get_kretprobe_retaddr(struct kretprobe_instance *ri)
{
	return (unsigned long)ri->ret_addr;
}

#ifdef CONFIG_KPROBES

/* The probe whose handler (or out-of-line step) this CPU is running. */
DECLARE_PER_CPU(struct kprobe *, current_kprobe);

static nokprobe_inline struct kprobe *kprobe_running(void)
{
	return __this_cpu_read(current_kprobe);
}

static nokprobe_inline void reset_current_kprobe(void)
{
	__this_cpu_write(current_kprobe, NULL);
}

/*
 * Mark this CPU as running a probe, so that probes hit meanwhile count as
 * missed (fprobe uses it to share handlers with kprobes).  Preemption is off
 * between the two calls.
 */
void kprobe_busy_begin(void);
void kprobe_busy_end(void);

int register_kprobe(struct kprobe *p);
void unregister_kprobe(struct kprobe *p);
int register_kprobes(struct kprobe **kps, int num);
void unregister_kprobes(struct kprobe **kps, int num);
int enable_kprobe(struct kprobe *kp);
int disable_kprobe(struct kprobe *kp);

kprobe_opcode_t *kprobe_lookup_name(const char *name, unsigned int offset);
int kprobe_on_func_entry(kprobe_opcode_t *addr, const char *sym,
			 unsigned long offset);
bool within_kprobe_blacklist(unsigned long addr);
int kprobe_add_ksym_blacklist(unsigned long entry);
int kprobe_add_area_blacklist(unsigned long start, unsigned long end);
void dump_kprobe(struct kprobe *kp);

#ifdef CONFIG_KPROBES_BRIDGE
/* The backend's header declares its own kprobe_fault_handler(). */
#include <linux/kprobes_bridge.h>
#else
/* Called by the architecture's fault handlers while a probe runs. */
int kprobe_fault_handler(struct pt_regs *regs, int trapnr);
#endif

/* From fixup_exception(): the fault at @addr goes to its fixup. */
void kprobe_fixup_taken(unsigned long addr);

/* Out-of-line instruction slots, for kallsyms, extable and the unwinder. */
bool is_kprobe_insn_slot(unsigned long addr);
int kprobe_get_kallsym(unsigned int symnum, unsigned long *value, char *type,
		       char *sym);
#define KPROBE_INSN_PAGE_SYM		"kprobe_insn_page"
#define KPROBE_OPTINSN_PAGE_SYM		"kprobe_optinsn_page"

void kprobe_free_init_mem(void);

/* NOKPROBE_SYMBOL() entries of vmlinux, gathered by the linker. */
extern unsigned long __start_kprobe_blacklist[];
extern unsigned long __stop_kprobe_blacklist[];

#ifdef CONFIG_KPROBES_ON_FTRACE
void kprobe_ftrace_handler(unsigned long ip, unsigned long parent_ip,
			   struct ftrace_ops *ops, struct ftrace_regs *fregs);
/* ftrace died (kprobe_ftrace_kill()): the ftrace handler must do nothing. */
extern bool kprobe_ftrace_disabled;
void kprobe_ftrace_kill(void);
bool kprobe_ftrace_owns(unsigned long ip);
bool kprobe_ftrace_hold(unsigned long ip, const void *insn);
#else
static inline void kprobe_ftrace_kill(void) { }
static inline bool kprobe_ftrace_owns(unsigned long ip) { return false; }
static inline bool kprobe_ftrace_hold(unsigned long ip, const void *insn)
{
	return false;
}
#endif

#else /* !CONFIG_KPROBES */

static inline struct kprobe *kprobe_running(void)
{
	return NULL;
}

#define kprobe_busy_begin()	do { } while (0)
#define kprobe_busy_end()	do { } while (0)

static inline int register_kprobe(struct kprobe *p)
{
	return -EOPNOTSUPP;
}

static inline int register_kprobes(struct kprobe **kps, int num)
{
	return -EOPNOTSUPP;
}

static inline void unregister_kprobe(struct kprobe *p) { }
static inline void unregister_kprobes(struct kprobe **kps, int num) { }

static inline int enable_kprobe(struct kprobe *kp)
{
	return -EOPNOTSUPP;
}

static inline int disable_kprobe(struct kprobe *kp)
{
	return -EOPNOTSUPP;
}

static inline bool within_kprobe_blacklist(unsigned long addr)
{
	return true;
}

static inline int kprobe_fault_handler(struct pt_regs *regs, int trapnr)
{
	return 0;
}

static inline void kprobe_fixup_taken(unsigned long addr) { }

static inline bool is_kprobe_insn_slot(unsigned long addr)
{
	return false;
}

static inline int kprobe_get_kallsym(unsigned int symnum, unsigned long *value,
				     char *type, char *sym)
{
	return -ERANGE;
}

static inline void kprobe_free_init_mem(void) { }
static inline void kprobe_ftrace_kill(void) { }
static inline bool kprobe_ftrace_owns(unsigned long ip) { return false; }
static inline bool kprobe_ftrace_hold(unsigned long ip, const void *insn)
{
	return false;
}

#endif /* CONFIG_KPROBES */

#ifdef CONFIG_KRETPROBES
int register_kretprobe(struct kretprobe *rp);
void unregister_kretprobe(struct kretprobe *rp);
int register_kretprobes(struct kretprobe **rps, int num);
void unregister_kretprobes(struct kretprobe **rps, int num);
void kprobe_flush_task(struct task_struct *tk);
bool is_kretprobe_trampoline(unsigned long addr);
unsigned long kretprobe_find_ret_addr(struct task_struct *tsk, void *fp,
				      struct llist_node **cur);
void kretprobe_pool_info(struct kretprobe *rp, struct kretprobe_pool_info *info);
#else
static inline int register_kretprobe(struct kretprobe *rp)
{
	return -EOPNOTSUPP;
}

static inline int register_kretprobes(struct kretprobe **rps, int num)
{
	return -EOPNOTSUPP;
}

static inline void unregister_kretprobe(struct kretprobe *rp) { }
static inline void unregister_kretprobes(struct kretprobe **rps, int num) { }
static inline void kprobe_flush_task(struct task_struct *tk) { }

static inline void kretprobe_pool_info(struct kretprobe *rp,
				       struct kretprobe_pool_info *info)
{
	*info = (struct kretprobe_pool_info){ };
}

static inline bool is_kretprobe_trampoline(unsigned long addr)
{
	return false;
}
#endif /* CONFIG_KRETPROBES */

/*
 * Compatibility (CONFIG_KPROBES_COMPAT): a jprobe is a probe on a function's
 * entry whose handler, @entry, has the probed function's prototype and is
 * called with its arguments (copies of them: the function runs with its
 * own afterwards).  The handler runs like a pre_handler (preemption off,
 * no sleeping) and returns normally; it may call jprobe_return() first, as
 * the code written for the kernels that had jprobes does, which changes
 * nothing.  Up to KPROBE_JPROBE_STACK_WORDS words of stack arguments are
 * passed on.
 */
struct jprobe {
	struct kprobe kp;		/* on the function's entry; ours to fill */
	void *entry;			/* the handler */
};

#ifdef CONFIG_KPROBES_COMPAT
int register_jprobe(struct jprobe *jp);
void unregister_jprobe(struct jprobe *jp);
int register_jprobes(struct jprobe **jps, int num);
void unregister_jprobes(struct jprobe **jps, int num);
void jprobe_return(void);

static inline int enable_jprobe(struct jprobe *jp)
{
	return enable_kprobe(&jp->kp);
}

static inline int disable_jprobe(struct jprobe *jp)
{
	return disable_kprobe(&jp->kp);
}
#endif /* CONFIG_KPROBES_COMPAT */

static inline int enable_kretprobe(struct kretprobe *rp)
{
	return enable_kprobe(&rp->kp);
}

static inline int disable_kretprobe(struct kretprobe *rp)
{
	return disable_kprobe(&rp->kp);
}

#ifdef CONFIG_OPTPROBES
/* Detour pages of optimized probes, for kallsyms, extable and the unwinder. */
bool is_kprobe_optinsn_slot(unsigned long addr);
/* Wait until every probe queued for jump optimization has been handled. */
void wait_for_kprobe_optimizer(void);
#else
static inline bool is_kprobe_optinsn_slot(unsigned long addr)
{
	return false;
}

static inline void wait_for_kprobe_optimizer(void) { }
#endif

/*
 * For the page-fault path: give a running probe the first look at a
 * kernel-mode fault.  Only meaningful while not preemptible, since a probe
 * never sleeps.
 */
static nokprobe_inline bool kprobe_page_fault(struct pt_regs *regs,
					      unsigned int trap)
{
	if (!IS_ENABLED(CONFIG_KPROBES) || user_mode(regs) || preemptible())
		return false;
	if (!kprobe_running())
		return false;
	return kprobe_fault_handler(regs, trap);
}

#endif /* _LINUX_KPROBES_H */
