// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The blacklist: text nobody may probe.
 */

#define pr_fmt(fmt) "kprobes: " fmt

#include <linux/kprobes.h>
#include <linux/kallsyms.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <asm/sections.h>

#include "internal.h"

/*
 * Address ranges nobody may probe: the hit path itself and whatever it
 * calls (NOKPROBE_SYMBOL() and .kprobes.text), entry and exception code,
 * noinstr code, and the architecture's own list.  One entry per function
 * so that the debugfs file names them.  Written under kprobe_mutex,
 * read under RCU (within_kprobe_blacklist() is also used by
 * hw_breakpoint and kgdb).
 */
LIST_HEAD(kprobe_blacklist);

static int kprobe_blacklist_add(unsigned long start, unsigned long end)
{
	struct kprobe_blacklist_entry *e;

	e = kmalloc(sizeof(*e), GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	e->start = start;
	e->end = end;
	list_add_tail_rcu(&e->list, &kprobe_blacklist);
	return 0;
}

/**
 * kprobe_add_ksym_blacklist() - forbid probes in the function at @entry
 * @entry: an address inside a function known to kallsyms
 *
 * Return: the size of the function, or a negative errno.
 */
int kprobe_add_ksym_blacklist(unsigned long entry)
{
	unsigned long size, offset;
	int ret;

	if (!kallsyms_lookup_size_offset(entry, &size, &offset))
		return -EINVAL;
	ret = kprobe_blacklist_add(entry - offset, entry - offset + size);
	return ret ? ret : size;
}

/**
 * kprobe_add_area_blacklist() - forbid probes in [@start, @end)
 * @start: first address
 * @end: first address past the area
 *
 * Each function of the area gets its own entry.
 *
 * Return: 0 or a negative errno.
 */
int kprobe_add_area_blacklist(unsigned long start, unsigned long end)
{
	unsigned long addr = start, size, offset;
	int ret;

	while (addr < end) {
		if (!kallsyms_lookup_size_offset(addr, &size, &offset) || !size)
			return kprobe_blacklist_add(addr, end);	/* no symbols: whole */
		ret = kprobe_blacklist_add(addr - offset, addr - offset + size);
		if (ret)
			return ret;
		addr = addr - offset + size;
	}
	return 0;
}

/*
 * Sections nobody may probe as a whole: the hit path's own text, entry
 * and exception code, noinstr code.  Listed once for the check and for
 * the per-function entries the debugfs file shows.
 */
static const struct {
	const char	*start;
	const char	*end;
} kprobe_forbidden_sections[] = {
	{ __kprobes_text_start, __kprobes_text_end },
	{ __entry_text_start, __entry_text_end },
	{ __irqentry_text_start, __irqentry_text_end },
	{ __softirqentry_text_start, __softirqentry_text_end },
	{ __noinstr_text_start, __noinstr_text_end },
};

/* Is @addr in a forbidden section or an entry of the list? */
static bool kprobe_blacklisted_addr(unsigned long addr)
{
	struct kprobe_blacklist_entry *e;
	bool hit = false;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(kprobe_forbidden_sections); i++) {
		if (addr >= (unsigned long)kprobe_forbidden_sections[i].start &&
		    addr < (unsigned long)kprobe_forbidden_sections[i].end)
			return true;
	}

	rcu_read_lock();
	list_for_each_entry_rcu(e, &kprobe_blacklist, list) {
		if (addr >= e->start && addr < e->end) {
			hit = true;
			break;
		}
	}
	rcu_read_unlock();
	return hit;
}

static int kprobe_clone_base_one(void *data, unsigned long addr)
{
	bool *listed = data;

	*listed = kprobe_blacklisted_addr(addr);
	return *listed;		/* found: stop the walk */
}

/*
 * The compiler's copies of a function (foo.constprop.0, foo.isra.0,
 * foo.part.0, foo.cold) run foo's code, often instead of foo itself:
 * NOKPROBE_SYMBOL(foo) records foo's address only, yet a breakpoint in
 * the copy recurses just the same (arm64's debug_exception_exit() is
 * called through a .constprop copy, from the debug exception path).  A
 * copy is forbidden when its base name is.  kallsyms cannot tell two
 * static functions of one name apart, so any of them counts: a doubt
 * refuses the probe.
 *
 * The copies are found once, when the kernel's or a module's symbols and
 * blacklist are known, and entered in the list like any function: a
 * registration looks up no name (a module's symbols are searched one by
 * one, thousands of them in a large module).
 *
 * @data: the module's name, or NULL for the kernel's own symbols.
 */
static int kprobe_clone_note(void *data, const char *sym, unsigned long addr)
{
	char name[MODULE_NAME_LEN + 1 + KSYM_NAME_LEN];
	const char *modname = data, *dot = strchr(sym, '.');
	unsigned long base;
	bool listed = false;

	if (!dot || dot == sym || !kernel_text_address(addr))
		return 0;
	if (modname) {
		/* The base is in the same module: "<module>:<name>". */
		snprintf(name, sizeof(name), "%s:%.*s", modname,
			 (int)(dot - sym), sym);
		base = kallsyms_lookup_name(name);
		listed = base && kprobe_blacklisted_addr(base);
	} else {
		snprintf(name, sizeof(name), "%.*s", (int)(dot - sym), sym);
		kallsyms_on_each_match_symbol(kprobe_clone_base_one, name,
					      &listed);
	}
	if (listed && !kprobe_blacklisted_addr(addr) &&
	    kprobe_add_ksym_blacklist(addr) == -ENOMEM)
		return -ENOMEM;
	return 0;
}

/**
 * within_kprobe_blacklist() - may @addr not be probed?
 * @addr: an address of kernel or module text
 *
 * Also true in a compiler's copy (foo.part.0 and the like) of a function
 * that may not be probed.
 *
 * Context: any; takes no lock but RCU's.
 *
 * Return: true if probing @addr is forbidden.
 */
bool within_kprobe_blacklist(unsigned long addr)
{
	return kprobe_blacklisted_addr(addr);
}

/*
 * NOKPROBE_SYMBOL() records a function's C address: where that is a
 * descriptor's (ppc64 ELF ABI v1, parisc64), the function's text is where
 * the descriptor points, in the kernel or in the module that holds it.
 */
static unsigned long kprobe_marked_text(unsigned long marked)
{
	return (unsigned long)dereference_symbol_descriptor((void *)marked);
}

void __init kprobe_blacklist_init(void)
{
	unsigned long *entry;
	unsigned int i;
	int ret;

	for (entry = __start_kprobe_blacklist; entry < __stop_kprobe_blacklist;
	     entry++) {
		ret = kprobe_add_ksym_blacklist(kprobe_marked_text(*entry));
		if (ret < 0 && ret != -EINVAL)
			pr_err("cannot build the blacklist: %d\n", ret);
	}
	ret = 0;
	for (i = 0; i < ARRAY_SIZE(kprobe_forbidden_sections) && !ret; i++)
		ret = kprobe_add_area_blacklist((unsigned long)kprobe_forbidden_sections[i].start,
						(unsigned long)kprobe_forbidden_sections[i].end);
	if (!ret)
		ret = arch_populate_kprobe_blacklist();
	if (!ret)
		ret = kallsyms_on_each_symbol(kprobe_clone_note, NULL);
	if (ret)
		pr_err("incomplete blacklist: %d\n", ret);
}

#ifdef CONFIG_MODULES
void kprobe_blacklist_add_module(struct module *mod)
{
	unsigned long start, i;

	for (i = 0; i < mod->num_kprobe_blacklist; i++)
		kprobe_add_ksym_blacklist(kprobe_marked_text(mod->kprobe_blacklist[i]));
	start = (unsigned long)mod->kprobes_text_start;
	if (start)
		kprobe_add_area_blacklist(start, start + mod->kprobes_text_size);
	start = (unsigned long)mod->noinstr_text_start;
	if (start)
		kprobe_add_area_blacklist(start, start + mod->noinstr_text_size);
	/* Copies can only be of what the module itself forbids. */
	if (mod->num_kprobe_blacklist || mod->kprobes_text_size ||
	    mod->noinstr_text_size)
		module_kallsyms_on_each_symbol(mod->name, kprobe_clone_note,
					       mod->name);
}

void kprobe_blacklist_remove_module(struct module *mod)
{
	struct kprobe_blacklist_entry *e, *tmp;

	list_for_each_entry_safe(e, tmp, &kprobe_blacklist, list) {
		if (within_module(e->start, mod)) {
			list_del_rcu(&e->list);
			kfree_rcu(e, rcu);
		}
	}
}
#endif

