// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * debugfs: /sys/kernel/debug/kprobes/{list,enabled,blacklist,stats}.
 */

#define pr_fmt(fmt) "kprobes: " fmt

#include <linux/kprobes.h>
#include <linux/kprobes_arch.h>
#include <linux/debugfs.h>
#include <linux/kallsyms.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>

#include "internal.h"

/* Addresses at the width of a pointer, as %px prints them: 8 digits on 32-bit. */
#define KPROBES_ADDR_DIGITS	(2 * (int)sizeof(unsigned long))

/* The type letter of @p: k, r, or j as the kernels that had jprobes said. */
static char kprobes_type(struct kprobe *p)
{
	if (kprobe_is_return(p))
		return 'r';
	return kprobe_is_jprobe(p) ? 'j' : 'k';
}

/* One word for the stats file: how @p of @s is hit, if at all. */
static const char *kprobes_state(struct kprobe_site *s, struct kprobe *p)
{
	if (kprobe_gone(p))
		return "gone";
	if (p->flags & KPROBE_FLAG_DISABLED)
		return "disabled";
	if (!(s->flags & KSITE_ARMED))
		return "disarmed";
	if (p->flags & KPROBE_FLAG_OPTIMIZED)
		return "optimized";
	return kprobe_ftrace(p) ? "ftrace" : "breakpoint";
}

/* The list file's annotations of @p, and its end of line. */
static void kprobes_list_flags(struct seq_file *m, struct kprobe *p)
{
	if (kprobe_gone(p))
		seq_puts(m, "  [GONE]");
	else if (p->flags & KPROBE_FLAG_DISABLED)
		seq_puts(m, "  [DISABLED]");
	if (p->flags & KPROBE_FLAG_OPTIMIZED)
		seq_puts(m, "  [OPTIMIZED]");
	if (kprobe_ftrace(p))
		seq_puts(m, "  [FTRACE]");
	seq_putc(m, '\n');
}

/*
 * A line of the list file or, with @stats, of the stats file: the same
 * start, then annotations or state and counts.
 */
static void kprobes_list_one(struct seq_file *m, struct kprobe_site *s,
			     struct kprobe *p, bool show, bool stats)
{
	char name[KSYM_NAME_LEN];
	unsigned long size, off;
	const char *sym = NULL;
	char *modname = NULL;

	if (!(s->flags & KSITE_GONE))
		sym = kallsyms_lookup((unsigned long)p->addr, &size, &off,
				      &modname, name);
	if (!sym) {
		sym = p->symbol_name ? p->symbol_name : "(gone)";
		off = p->symbol_name ? p->offset : 0;
	}
	seq_printf(m, "%0*lx  %c  %s+0x%lx", KPROBES_ADDR_DIGITS,
		   show ? (unsigned long)p->addr : 0UL, kprobes_type(p), sym, off);
	if (modname)
		seq_printf(m, "  [%s]", modname);
	if (!stats) {
		kprobes_list_flags(m, p);
		return;
	}
	seq_printf(m, "  %s  hits=%lu  missed=%lu", kprobes_state(s, p),
		   kprobe_hits(p), p->nmissed);
	if (kprobe_is_return(p)) {
		struct kretprobe *rp = container_of(p, struct kretprobe, kp);
		struct kretprobe_pool_info info;

		kretprobe_pool_info(rp, &info);
		seq_printf(m, "  return_missed=%d  inuse=%u  pool=%u",
			   rp->nmissed, info.out, info.nr);
	}
	seq_putc(m, '\n');
}

static void kprobes_list_all(struct seq_file *m, bool stats)
{
	bool show = kallsyms_show_value(m->file->f_cred);
	struct kprobe_site *s;
	struct kprobe *p;

	mutex_lock(&kprobe_mutex);
	for_each_kprobe_site(s) {
		list_for_each_entry(p, &s->probes, list)
			kprobes_list_one(m, s, p, show, stats);
	}
	list_for_each_entry(s, &kprobe_gone_sites, batch) {
		list_for_each_entry(p, &s->probes, list)
			kprobes_list_one(m, s, p, show, stats);
	}
	mutex_unlock(&kprobe_mutex);
}

static int kprobes_list_show(struct seq_file *m, void *v)
{
	kprobes_list_all(m, false);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kprobes_list);

/*
 * One line per probe: address, type, symbol+offset [module], state, and
 * counts as name=value (return probes add the returns missed, the
 * instances in use and the pool's size).
 */
static int kprobes_stats_show(struct seq_file *m, void *v)
{
	kprobes_list_all(m, true);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kprobes_stats);

static int kprobes_blacklist_show(struct seq_file *m, void *v)
{
	bool show = kallsyms_show_value(m->file->f_cred);
	struct kprobe_blacklist_entry *e;

	mutex_lock(&kprobe_mutex);
	list_for_each_entry(e, &kprobe_blacklist, list) {
		seq_printf(m, "0x%0*lx-0x%0*lx\t%ps\n",
			   KPROBES_ADDR_DIGITS, show ? e->start : 0UL,
			   KPROBES_ADDR_DIGITS, show ? e->end : 0UL,
			   (void *)e->start);
	}
	mutex_unlock(&kprobe_mutex);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kprobes_blacklist);

static ssize_t kprobes_enabled_read(struct file *file, char __user *ubuf,
				    size_t count, loff_t *ppos)
{
	char buf[3] = { READ_ONCE(kprobes_all_disarmed) ? '0' : '1', '\n', 0 };

	return simple_read_from_buffer(ubuf, count, ppos, buf, 2);
}

static ssize_t kprobes_enabled_write(struct file *file, const char __user *ubuf,
				     size_t count, loff_t *ppos)
{
	bool on;
	int ret;

	ret = kstrtobool_from_user(ubuf, count, &on);
	if (ret)
		return ret;
	mutex_lock(&kprobe_mutex);
	if (kprobes_all_disarmed == on) {
		kprobes_all_disarmed = !on;
		kprobes_all_sites_update();
		pr_info("kprobes globally %s\n", on ? "enabled" : "disabled");
	}
	mutex_unlock(&kprobe_mutex);
	return count;
}

static const struct file_operations kprobes_enabled_fops = {
	.read	= kprobes_enabled_read,
	.write	= kprobes_enabled_write,
	.llseek	= default_llseek,
};

static int __init kprobes_debugfs_init(void)
{
	struct dentry *dir = debugfs_create_dir("kprobes", NULL);

	debugfs_create_file("list", 0400, dir, NULL, &kprobes_list_fops);
	debugfs_create_file("enabled", 0600, dir, NULL, &kprobes_enabled_fops);
	debugfs_create_file("blacklist", 0400, dir, NULL, &kprobes_blacklist_fops);
	debugfs_create_file("stats", 0400, dir, NULL, &kprobes_stats_fops);
	return 0;
}
late_initcall(kprobes_debugfs_init);

