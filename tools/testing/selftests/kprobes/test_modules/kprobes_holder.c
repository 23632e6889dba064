// SPDX-License-Identifier: GPL-2.0
/*
 * Helper module for run_tests.sh: holds one or two kprobes, placed by
 * symbol name given as module parameters, for as long as it is loaded.
 *
 *   sym=NAME [offset=N] [sym2=NAME] [kret=1] [post=1]
 *
 * Without sym it holds none, for its write-only tools (quiesce).
 * Read-only parameters report each probe's hit count and address; the
 * writable "disabled" and "disabled2" parameters call disable_kprobe() or
 * enable_kprobe() on it.  Writing a symbol to "late" registers a third
 * probe there, once, while the module is loaded ("hits3" counts its hits).
 * The probes are unregistered on unload, whatever became of the text they
 * were placed on.
 *
 * With post=1 the first probe has a post_handler too, which keeps it a
 * breakpoint where the kernel optimizes probes.
 *
 * With kret=1 the first probe is a return probe (maxactive 1; the entry
 * handler counts the hits): "returns" counts its return handler's runs,
 * "retval" is the last return value it saw and "nmissed" its nmissed.
 *
 * Writing 1 to "quiesce" waits for the RCU frees queued so far (see
 * kph_quiesce_set()).
 *
 * Writing 1 to "ftrace_kill" calls ftrace_kill(), what ftrace does to
 * itself when it finds its text in a state it cannot handle: ftrace is
 * dead for the rest of the boot.  For the last case of a run only.
 *
 * Writing 1 to "ftrace_bug" (x86-64) makes ftrace kill itself the way it
 * does in the field, by finding its text wrong in the middle of an
 * update, while an entry probe waits on kpt_shell_b as kprobes' own call
 * over ftrace's nop: see kph_ftrace_bug_set().  "bug_pending" then says
 * whether the probe was such a call, "bug_byte0" is kpt_shell_b's first
 * byte after the probe was unregistered.  Also for the last case of a run
 * only.
 */
#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/ftrace.h>
#include <linux/kallsyms.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#if defined(CONFIG_X86_64) && defined(CONFIG_KPROBES_ON_FTRACE)
#include <asm/text-patching.h>
#endif

/* A kprobe (rp.kp), or for the first probe with kret=1 a return probe. */
struct kph_probe {
	struct kretprobe rp;
	atomic_t hits;
	atomic_t returns;
	long retval;
	bool registered;
	bool ret;
};

static struct kph_probe kph_probes[3];

/* The symbol written to "late": the third probe's symbol_name. */
static char kph_late_sym[KSYM_NAME_LEN];

static char *sym;
module_param(sym, charp, 0444);
MODULE_PARM_DESC(sym, "symbol (or module:symbol) of the first probe");

static unsigned int offset;
module_param(offset, uint, 0444);
MODULE_PARM_DESC(offset, "offset of the first probe from sym");

static char *sym2;
module_param(sym2, charp, 0444);
MODULE_PARM_DESC(sym2, "symbol of the optional second probe");

static bool kret;
module_param(kret, bool, 0444);
MODULE_PARM_DESC(kret, "the first probe is a return probe");

static bool post;
module_param(post, bool, 0444);
MODULE_PARM_DESC(post, "the first probe has a post_handler (never optimized)");

static struct kph_probe *kph_of(const struct kernel_param *kp)
{
	return &kph_probes[(unsigned long)kp->arg];
}

static int kph_hits_get(char *buf, const struct kernel_param *kp)
{
	return scnprintf(buf, PAGE_SIZE, "%d\n", atomic_read(&kph_of(kp)->hits));
}

static const struct kernel_param_ops kph_hits_ops = {
	.get = kph_hits_get,
};

static int kph_returns_get(char *buf, const struct kernel_param *kp)
{
	return scnprintf(buf, PAGE_SIZE, "%d\n",
			 atomic_read(&kph_of(kp)->returns));
}

static const struct kernel_param_ops kph_returns_ops = {
	.get = kph_returns_get,
};

static int kph_retval_get(char *buf, const struct kernel_param *kp)
{
	return scnprintf(buf, PAGE_SIZE, "%ld\n", READ_ONCE(kph_of(kp)->retval));
}

static const struct kernel_param_ops kph_retval_ops = {
	.get = kph_retval_get,
};

static int kph_nmissed_get(char *buf, const struct kernel_param *kp)
{
	return scnprintf(buf, PAGE_SIZE, "%d\n", READ_ONCE(kph_of(kp)->rp.nmissed));
}

static const struct kernel_param_ops kph_nmissed_ops = {
	.get = kph_nmissed_get,
};

static int kph_addr_get(char *buf, const struct kernel_param *kp)
{
	return scnprintf(buf, PAGE_SIZE, "%0*lx\n",
			 2 * (int)sizeof(long), (unsigned long)kph_of(kp)->rp.kp.addr);
}

static const struct kernel_param_ops kph_addr_ops = {
	.get = kph_addr_get,
};

static int kph_disabled_get(char *buf, const struct kernel_param *kp)
{
	bool off = kph_of(kp)->rp.kp.flags & KPROBE_FLAG_DISABLED;

	return scnprintf(buf, PAGE_SIZE, "%d\n", off);
}

static int kph_disabled_set(const char *val, const struct kernel_param *kp)
{
	struct kph_probe *p = kph_of(kp);
	bool off;
	int ret;

	ret = kstrtobool(val, &off);
	if (ret)
		return ret;
	if (!p->registered)
		return -ENODEV;
	return off ? disable_kprobe(&p->rp.kp) : enable_kprobe(&p->rp.kp);
}

static const struct kernel_param_ops kph_disabled_ops = {
	.get = kph_disabled_get,
	.set = kph_disabled_set,
};

module_param_cb(hits, &kph_hits_ops, (void *)0, 0444);
MODULE_PARM_DESC(hits, "pre_handler runs of the first probe");
module_param_cb(hits2, &kph_hits_ops, (void *)1, 0444);
MODULE_PARM_DESC(hits2, "pre_handler runs of the second probe");
module_param_cb(returns, &kph_returns_ops, (void *)0, 0444);
MODULE_PARM_DESC(returns, "return handler runs of the first probe (kret=1)");
module_param_cb(retval, &kph_retval_ops, (void *)0, 0444);
MODULE_PARM_DESC(retval, "last return value its return handler saw (kret=1)");
module_param_cb(nmissed, &kph_nmissed_ops, (void *)0, 0444);
MODULE_PARM_DESC(nmissed, "nmissed of the first probe's kretprobe (kret=1)");
module_param_cb(hits3, &kph_hits_ops, (void *)2, 0444);
MODULE_PARM_DESC(hits3, "pre_handler runs of the probe written to \"late\"");
module_param_cb(addr, &kph_addr_ops, (void *)0, 0444);
MODULE_PARM_DESC(addr, "address of the first probe");
module_param_cb(addr2, &kph_addr_ops, (void *)1, 0444);
MODULE_PARM_DESC(addr2, "address of the second probe");
module_param_cb(disabled, &kph_disabled_ops, (void *)0, 0644);
MODULE_PARM_DESC(disabled, "1: disable_kprobe(), 0: enable_kprobe() (first)");
module_param_cb(disabled2, &kph_disabled_ops, (void *)1, 0644);
MODULE_PARM_DESC(disabled2, "1: disable_kprobe(), 0: enable_kprobe() (second)");

/* Where a probe on @name goes (past an endbr64, if any); 0 if nowhere. */
static unsigned long kph_site(const char *name)
{
	struct kprobe where = { .symbol_name = name };

	if (register_kprobe(&where))
		return 0;
	unregister_kprobe(&where);
	return (unsigned long)where.addr;
}

/*
 * The start of a kernel function that is not exported: kph_site(), less
 * the offset kallsyms gives (a call must not skip an endbr64).  0 if
 * there is none.
 */
static unsigned long kph_find(const char *name)
{
	unsigned long addr = kph_site(name), off = 0;
	char buf[KSYM_SYMBOL_LEN], *plus;

	if (!addr)
		return 0;
	sprint_symbol(buf, addr);
	plus = strchr(buf, '+');
	if (!plus || sscanf(plus + 1, "%lx", &off) != 1)
		return 0;
	return addr - off;
}

static int kph_ftrace_kill_set(const char *val, const struct kernel_param *kp)
{
	void (*kill)(void);

	if (!sysfs_streq(val, "1"))
		return -EINVAL;
	kill = (void (*)(void))kph_find("ftrace_kill");
	if (!kill)
		return -ENOENT;
	pr_info("kprobes_holder: calling ftrace_kill()\n");
	kill();
	return 0;
}

static const struct kernel_param_ops kph_ftrace_kill_ops = {
	.set = kph_ftrace_kill_set,
};

module_param_cb(ftrace_kill, &kph_ftrace_kill_ops, NULL, 0200);
MODULE_PARM_DESC(ftrace_kill, "write 1: kill ftrace for the rest of the boot");

/*
 * Writing 1 to "quiesce" waits for the frees queued with call_rcu() and
 * kfree_rcu() so far, kprobes' among them (dead sites, slot pages,
 * blacklist entries), so that a leak check after it sees what they
 * leave.  Work items that queue such frees run first: the caller gives
 * them their delays before writing.
 */
static int kph_quiesce_set(const char *val, const struct kernel_param *kp)
{
	if (!sysfs_streq(val, "1"))
		return -EINVAL;
	rcu_barrier();
	kvfree_rcu_barrier();
	return 0;
}

static const struct kernel_param_ops kph_quiesce_ops = {
	.set = kph_quiesce_set,
};

module_param_cb(quiesce, &kph_quiesce_ops, NULL, 0200);
MODULE_PARM_DESC(quiesce, "write 1: wait for the RCU frees queued so far");

#if defined(CONFIG_X86_64) && defined(CONFIG_KPROBES_ON_FTRACE)
static int kph_bug_byte0 = -1;
module_param_named(bug_byte0, kph_bug_byte0, int, 0444);
MODULE_PARM_DESC(bug_byte0, "ftrace_bug: kpt_shell_b's first byte at the end");

static bool kph_bug_pending;
module_param_named(bug_pending, kph_bug_pending, bool, 0444);
MODULE_PARM_DESC(bug_pending, "ftrace_bug: the probe was kprobes' call when ftrace met the bug");

static void kph_ftrace_func(unsigned long ip, unsigned long parent_ip,
			    struct ftrace_ops *op, struct ftrace_regs *fregs)
{
}

/* Does the ftrace site at @addr hold kprobes' own call (ours only)? */
static bool kph_site_ours(unsigned long addr)
{
	char name[KSYM_NAME_LEN];
	u8 insn[CALL_INSN_SIZE];
	s32 rel;

	if (copy_from_kernel_nofault(insn, (void *)addr, sizeof(insn)) ||
	    insn[0] != CALL_INSN_OPCODE)
		return false;
	memcpy(&rel, insn + 1, sizeof(rel));
	snprintf(name, sizeof(name), "%ps",
		 (void *)(addr + CALL_INSN_SIZE + rel));
	return !strcmp(name, "kx_ftrace_call_entry");
}

static int kph_byte0(unsigned long addr)
{
	u8 b;

	return copy_from_kernel_nofault(&b, (void *)addr, 1) ? -EFAULT : b;
}

/*
 * kprobes' mutex, found through kallsyms_lookup_name() (itself found as
 * kph_find() finds any function): NULL if there is none.
 */
static struct mutex *kph_kprobe_mutex(void)
{
	unsigned long (*lookup)(const char *name);

	lookup = (unsigned long (*)(const char *))kph_find("kallsyms_lookup_name");
	return lookup ? (struct mutex *)lookup("kprobe_mutex") : NULL;
}

/*
 * ftrace checks every site of an update before it writes any, and leaves
 * each call of kprobes' own it meets over a nop to kprobes' say.  A site
 * further on that holds something else, here an int3 nobody owns on
 * kpt_ftrace_spare, stops the update with ftrace_bug(), which kills
 * ftrace: the earlier site was never written.  Unregistering its probe
 * must still put ftrace's nop back.
 *
 * kprobes hands a fresh entry probe to ftrace a tenth of a second after
 * registering it, in a work item that takes kprobe_mutex first.  A slow
 * machine can let that tenth pass between any check of ours and ftrace's
 * update, so the check and the update both run under kprobe_mutex: the
 * hand-off, if it has not yet come, then waits for them (and finds
 * ftrace dead).  The lock order is kprobes' own: kprobe_mutex before
 * ftrace's locks and text_mutex.
 *
 * The ftrace_ops stays on ftrace's list for good (a dead ftrace cannot
 * unregister it), so it is never freed; its filter names only the two
 * functions of kprobes_target, whose sites ftrace never enables again.
 */
static int kph_ftrace_bug_set(const char *val, const struct kernel_param *kp)
{
	void *(*poke)(void *addr, const void *opcode, size_t len);
	struct kprobe probe = {};
	unsigned long f1, f2;
	struct ftrace_ops *ops;
	struct mutex *kmutex;	/* kprobes' own, held over the check */
	u8 int3 = INT3_INSN_OPCODE, spare0;
	int tries, ret;

	if (!sysfs_streq(val, "1"))
		return -EINVAL;
	poke = (void *(*)(void *, const void *, size_t))kph_find("text_poke_copy");
	kmutex = kph_kprobe_mutex();
	f1 = kph_site("kprobes_target:kpt_shell_b");
	f2 = kph_site("kprobes_target:kpt_ftrace_spare");
	if (!poke || !kmutex || !f1 || !f2)
		return -ENOENT;
	if (f2 <= f1 || kph_byte0(f2) < 0)
		return -EDOM;	/* ftrace would meet the bad site first */
	spare0 = kph_byte0(f2);
	ops = kzalloc(sizeof(*ops), GFP_KERNEL);
	if (!ops)
		return -ENOMEM;
	ops->func = kph_ftrace_func;
	ret = ftrace_set_filter_ip(ops, f1, 0, 0);
	if (!ret)
		ret = ftrace_set_filter_ip(ops, f2, 0, 0);
	if (ret)
		goto free_ops;

	/* Nothing calls kpt_ftrace_spare, and no ftrace_ops names it. */
	pr_info("kprobes_holder: an ftrace update meets an int3 on kpt_ftrace_spare\n");
	poke((void *)f2, &int3, 1);

	/*
	 * A fresh entry probe waits as kprobes' own call, unless its site
	 * is still in ftrace's filter from an earlier probe (kprobes lets
	 * that go lazily), or the hand-off came before the mutex.
	 */
	for (tries = 0; tries < 10; tries++) {
		memset(&probe, 0, sizeof(probe));
		probe.addr = (kprobe_opcode_t *)f1;
		ret = register_kprobe(&probe);
		if (ret)
			goto put_back;
		mutex_lock(kmutex);
		if (kph_site_ours(f1))
			break;
		mutex_unlock(kmutex);
		unregister_kprobe(&probe);
		msleep(100);
	}
	if (tries == 10) {	/* the kernel puts entry probes in ftrace at once */
		memset(&probe, 0, sizeof(probe));
		probe.addr = (kprobe_opcode_t *)f1;
		ret = register_kprobe(&probe);
		if (ret)
			goto put_back;
		mutex_lock(kmutex);
	}

	ret = register_ftrace_function(ops);
	/*
	 * What ftrace met: an update that fails its check writes no site,
	 * and a dead ftrace takes no hand-off.  So kpt_shell_b still holds
	 * what the update found there.
	 */
	kph_bug_pending = kph_site_ours(f1);
	mutex_unlock(kmutex);
	poke((void *)f2, &spare0, 1);
	unregister_kprobe(&probe);
	kph_bug_byte0 = kph_byte0(f1);
	if (!ret && !unregister_ftrace_function(ops))
		goto free_ops;	/* ftrace lived: the case says so */
	return 0;
put_back:
	poke((void *)f2, &spare0, 1);
free_ops:
	ftrace_free_filter(ops);
	kfree(ops);
	return ret;
}

static const struct kernel_param_ops kph_ftrace_bug_ops = {
	.set = kph_ftrace_bug_set,
};

module_param_cb(ftrace_bug, &kph_ftrace_bug_ops, NULL, 0200);
MODULE_PARM_DESC(ftrace_bug, "write 1: kill ftrace by an ftrace bug (x86-64)");
#endif

static int kph_pre(struct kprobe *kp, struct pt_regs *regs)
{
	struct kph_probe *p = container_of(kp, struct kph_probe, rp.kp);

	atomic_inc(&p->hits);
	return 0;
}

static void kph_post(struct kprobe *kp, struct pt_regs *regs,
		     unsigned long flags)
{
}

#ifdef CONFIG_KRETPROBES
static int kph_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kph_probe *p = container_of(get_kretprobe(ri), struct kph_probe, rp);

	atomic_inc(&p->hits);
	return 0;
}

static int kph_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kph_probe *p = container_of(get_kretprobe(ri), struct kph_probe, rp);

	WRITE_ONCE(p->retval, (long)(int)regs_return_value(regs));
	atomic_inc(&p->returns);
	return 0;
}

static int kph_add_ret(struct kph_probe *p)
{
	p->rp.entry_handler = kph_entry;
	p->rp.handler = kph_ret;
	p->rp.maxactive = 1;
	return register_kretprobe(&p->rp);
}
#else
static int kph_add_ret(struct kph_probe *p)
{
	return -EOPNOTSUPP;
}
#endif

static int kph_add(struct kph_probe *p, const char *name, unsigned int off,
		   bool ret_probe)
{
	int ret;

	p->rp.kp.symbol_name = name;
	p->rp.kp.offset = off;
	if (ret_probe) {
		ret = kph_add_ret(p);
	} else {
		p->rp.kp.pre_handler = kph_pre;
		ret = register_kprobe(&p->rp.kp);
	}
	if (ret) {
		pr_err("kprobes_holder: cannot probe %s+%u: %d\n", name, off, ret);
		return ret;
	}
	p->registered = true;
	p->ret = ret_probe;
	return 0;
}

static void kph_del(struct kph_probe *p)
{
	if (!p->registered)
		return;
	if (p->ret)
		unregister_kretprobe(&p->rp);
	else
		unregister_kprobe(&p->rp.kp);
	p->registered = false;
}

/*
 * A probe registered after the module loaded, at the symbol written (its
 * name stays in kph_late_sym for as long as the probe is registered).
 * Parameter writes are serialized by the module's parameter lock.
 */
static int kph_late_set(const char *val, const struct kernel_param *kp)
{
	struct kph_probe *p = &kph_probes[2];
	char *name;

	if (p->registered)
		return -EBUSY;
	if (strscpy(kph_late_sym, val, sizeof(kph_late_sym)) < 0)
		return -E2BIG;
	name = strim(kph_late_sym);
	if (!*name)
		return -EINVAL;
	/* Whatever a failed attempt left in the struct. */
	memset(&p->rp, 0, sizeof(p->rp));
	return kph_add(p, name, 0, false);
}

static const struct kernel_param_ops kph_late_ops = {
	.set = kph_late_set,
};

module_param_cb(late, &kph_late_ops, NULL, 0200);
MODULE_PARM_DESC(late, "write SYM: register a third probe there now");

static int __init kph_init(void)
{
	int ret;

	if (!sym)
		return sym2 ? -EINVAL : 0;
	if (post)
		kph_probes[0].rp.kp.post_handler = kph_post;
	ret = kph_add(&kph_probes[0], sym, offset, kret);
	if (ret || !sym2)
		return ret;
	ret = kph_add(&kph_probes[1], sym2, 0, false);
	if (ret)
		kph_del(&kph_probes[0]);
	return ret;
}

static void __exit kph_exit(void)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(kph_probes); i++)
		kph_del(&kph_probes[i]);
}

module_init(kph_init);
module_exit(kph_exit);
MODULE_DESCRIPTION("Holds kprobes for the kprobes selftest script");
MODULE_LICENSE("GPL");
