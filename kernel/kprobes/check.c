// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What a probe spec names, and whether that address may carry a probe.
 */

#define pr_fmt(fmt) "kprobes: " fmt

#include <linux/kprobes.h>
#include <linux/kprobes_arch.h>
#include <linux/bug.h>
#include <linux/ftrace.h>
#include <linux/jump_label.h>
#include <linux/kallsyms.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/static_call.h>
#include <asm/sections.h>

#include "internal.h"

/**
 * kprobe_lookup_name() - address of a symbol for probing
 * @name: "symbol" or "module:symbol"
 * @offset: offset the caller will add (unused here)
 *
 * Weak: a bridged architecture may know better (powerpc's ELFv1 dot
 * symbols).
 *
 * Return: the address, or NULL if there is no such symbol.
 */
kprobe_opcode_t * __weak kprobe_lookup_name(const char *name,
					    unsigned int offset)
{
	return (kprobe_opcode_t *)kallsyms_lookup_name(name);
}

struct cold_match {
	unsigned long	addr;
	unsigned int	n;
};

static int kprobe_cold_match_one(void *data, unsigned long addr)
{
	struct cold_match *m = data;

	m->addr = addr;
	m->n++;
	return 0;
}

/*
 * kallsyms, for vmlinux and module init text.  The cold part's name,
 * "<module>:<name>.cold" or "<name>.cold", is built in place around the
 * name kallsyms writes: one buffer, a frame that fits 32-bit kernels'
 * 1,024 bytes.
 */
static int kprobe_func_by_kallsyms(unsigned long addr, struct kprobe_func *f,
				   bool want_cold)
{
	char buf[MODULE_NAME_LEN + 1 + KSYM_NAME_LEN + sizeof(".cold")];
	char *name = buf + MODULE_NAME_LEN + 1, *cold = name;
	unsigned long size, off, csize, coff;
	struct cold_match m = {};
	char *modname = NULL;
	size_t len;

	if (!kallsyms_lookup(addr, &size, &off, &modname, name))
		return -ENOENT;
	f->start = addr - off;
	f->size = size;
	f->cold = 0;
	f->cold_size = 0;
	if (!want_cold)
		return 0;
	strcat(name, ".cold");
	if (modname) {
		len = strnlen(modname, MODULE_NAME_LEN - 1);
		cold = name - len - 1;
		memcpy(cold, modname, len);
		cold[len] = ':';
		m.addr = kallsyms_lookup_name(cold);
		m.n = !!m.addr;
	} else {
		/* vmlinux only, and every symbol of that name. */
		kallsyms_on_each_match_symbol(kprobe_cold_match_one, cold, &m);
	}
	if (m.n > 1) {
		f->cold_size = KPROBE_FUNC_COLD_UNKNOWN;
	} else if (m.n && kallsyms_lookup_size_offset(m.addr, &csize, &coff) &&
		   !coff) {
		f->cold = m.addr;
		f->cold_size = csize;
	}
	return 0;
}

/**
 * kprobe_func_find() - the function around a text address
 * @addr: kernel or module text
 * @f: filled in: the function's start and size, and with @want_cold its
 *     "<name>.cold" part (cold_size KPROBE_FUNC_COLD_UNKNOWN when more
 *     than one symbol could be it)
 * @want_cold: look for the cold part too
 *
 * What kallsyms_lookup_size_offset() answers, at the cost of a binary
 * search for module text too (module_func_bounds(): attaching to every
 * function of a big module would otherwise cost time quadratic in the
 * number of probes).  Registration-time code only: may sleep.
 *
 * Return: 0, or -ENOENT when no symbol covers @addr.
 */
int kprobe_func_find(unsigned long addr, struct kprobe_func *f, bool want_cold)
{
	struct module *mod;
	bool core = false;
	int ret;

	preempt_disable();
	mod = __module_text_address(addr);
	if (mod && !within_module_init(addr, mod))
		core = try_module_get(mod);
	preempt_enable();
	if (core) {
		struct module_func_bounds fb;

		ret = module_func_bounds(mod, addr, &fb);
		module_put(mod);
		if (!ret) {
			f->start = fb.start;
			f->size = fb.size;
			f->cold = fb.cold;
			f->cold_size = fb.cold_size == MODULE_FUNC_COLD_UNKNOWN ?
				       KPROBE_FUNC_COLD_UNKNOWN : fb.cold_size;
			return 0;
		}
		if (ret != -EAGAIN)
			return ret;
	}
	return kprobe_func_by_kallsyms(addr, f, want_cold);
}

/*
 * Resolve what @p names into an instruction address, and fill @f with
 * the function around it (for kprobe_check_text()).  Does not look at
 * whether that address may be probed.
 */
kprobe_opcode_t *kprobe_resolve_addr(kprobe_opcode_t *addr, const char *sym,
				     unsigned long offset, bool *on_entry,
				     struct kprobe_func *f)
{
	unsigned long target;

	if (!!addr == !!sym)
		return ERR_PTR(-EINVAL);
	if (sym) {
		addr = kprobe_lookup_name(sym, offset);
		if (!addr)
			return ERR_PTR(-ENOENT);
	}
	target = (unsigned long)addr + offset;
	if (kprobe_func_find(target, f, false))
		return ERR_PTR(-EINVAL);
	return arch_adjust_kprobe_addr(f->start, target - f->start, on_entry);
}

/**
 * kprobe_on_func_entry() - does a probe spec name a function's entry?
 * @addr: address, or NULL when @sym is given
 * @sym: symbol name, or NULL
 * @offset: offset from @addr or @sym
 *
 * The entry, or an instruction the architecture says still sees the
 * caller's frame (arch_kprobe_entry_frame()): what a return probe, a
 * jprobe or an overridden return needs.
 *
 * Return: 0 if it does, -EINVAL if not (or bad spec), -ENOENT for an
 * unknown symbol.
 */
int kprobe_on_func_entry(kprobe_opcode_t *addr, const char *sym,
			 unsigned long offset)
{
	bool on_entry = false;
	struct kprobe_func f;
	kprobe_opcode_t *where = kprobe_resolve_addr(addr, sym, offset,
						     &on_entry, &f);

	if (IS_ERR(where))
		return PTR_ERR(where);
	if (on_entry || arch_kprobe_entry_frame(f.start, (unsigned long)where))
		return 0;
	return -EINVAL;
}

/*
 * The start of the ftrace call site that @addr is in, or 0.  Unlike
 * ftrace_location(), no kallsyms lookup for an address in none (most).
 */
unsigned long kprobe_ftrace_site_of(unsigned long addr)
{
#ifdef CONFIG_DYNAMIC_FTRACE
	return ftrace_location_range(addr, addr);
#else
	return 0;
#endif
}

/*
 * Is @addr in a function's preamble: the CFI type hash (__cfi_) that
 * callers read, or the padding (__pfx_) that call depth tracking and
 * FineIBT rewrite at boot?  Neither is code that runs as written.  Only
 * configurations that emit them need the symbol lookup.
 */
static bool kprobe_in_preamble(unsigned long addr)
{
	char name[KSYM_NAME_LEN];

	if (!IS_ENABLED(CONFIG_CFI_CLANG) && !IS_ENABLED(CONFIG_CALL_PADDING))
		return false;
	if (lookup_symbol_name(addr, name))
		return false;
	return str_has_prefix(name, "__cfi_") || str_has_prefix(name, "__pfx_");
}

/*
 * Text the kernel rewrites or finds by address: jump labels and static
 * call sites (it patches them; a breakpoint there would be overwritten or
 * written back over its patch) and BUG/WARN traps (the trap handler looks
 * them up by address).  jump_label_text_reserved(),
 * static_call_text_reserved() and find_bug() walk their whole tables, the
 * first decoding every jump label it passes: most of what registering a
 * probe used to cost.  So each owner of text, the core kernel and every
 * module, gets one index of those sites sorted by address, built once (the
 * core's at the first check after boot, a module's when it comes) and
 * searched by bisection.  Without one (early boot, a module whose notifier
 * has not run yet) the tables are walked as before.
 */
enum { RSV_JUMP, RSV_CALL, RSV_BUG };

struct rsv_site {
	unsigned long	addr;
	u8		len;		/* bytes reserved; a BUG is its address only */
	u8		kind;		/* RSV_* */
	u8		init;		/* in init text */
};

struct rsv_index {
	struct list_head	node;		/* on rsv_modules */
	struct module		*mod;		/* NULL: the core kernel */
	unsigned int		n;
	struct rsv_site		site[] __counted_by(n);
};

/* The longest site: a 5-byte jump label or call. */
#define RSV_MAX_LEN	5

static struct rsv_index *rsv_core;
static LIST_HEAD(rsv_modules);

#ifdef CONFIG_HAVE_STATIC_CALL_INLINE
extern struct static_call_site __start_static_call_sites[],
			       __stop_static_call_sites[];
#endif
#ifdef CONFIG_GENERIC_BUG
extern struct bug_entry __start___bug_table[], __stop___bug_table[];
#endif

/* The tables of one owner of text. */
struct rsv_tables {
	struct jump_entry	*jump;
	unsigned int		njump;
	struct static_call_site	*call;
	unsigned int		ncall;
	struct bug_entry	*bug;
	unsigned int		nbug;
};

static void kprobe_rsv_tables_get(struct module *mod, struct rsv_tables *t)
{
	memset(t, 0, sizeof(*t));
#ifdef CONFIG_MODULES
	if (mod) {
#ifdef CONFIG_JUMP_LABEL
		t->jump = mod->jump_entries;
		t->njump = mod->num_jump_entries;
#endif
#ifdef CONFIG_HAVE_STATIC_CALL_INLINE
		t->call = mod->static_call_sites;
		t->ncall = mod->num_static_call_sites;
#endif
#ifdef CONFIG_GENERIC_BUG
		t->bug = mod->bug_table;
		t->nbug = mod->num_bugs;
#endif
		return;
	}
#endif
#ifdef CONFIG_JUMP_LABEL
	t->jump = __start___jump_table;
	t->njump = __stop___jump_table - __start___jump_table;
#endif
#ifdef CONFIG_HAVE_STATIC_CALL_INLINE
	t->call = __start_static_call_sites;
	t->ncall = __stop_static_call_sites - __start_static_call_sites;
#endif
#ifdef CONFIG_GENERIC_BUG
	t->bug = __start___bug_table;
	t->nbug = __stop___bug_table - __start___bug_table;
#endif
}

/* Unused without jump labels, inline static calls and the generic BUG table. */
static void __maybe_unused kprobe_rsv_push(struct rsv_index *x,
					   struct module *mod,
					   unsigned long addr, u8 len, u8 kind)
{
	struct rsv_site *r = &x->site[x->n++];

	r->addr = addr;
	r->len = len;
	r->kind = kind;
	r->init = mod && within_module_init(addr, mod);
}

static int kprobe_rsv_site_cmp(const void *a, const void *b)
{
	const struct rsv_site *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/*
 * Build the index of @mod's text (NULL: the core kernel's), in one pass
 * over its tables.  The core's jump labels and static calls in the init
 * text freed after boot are left out, as the kernel's own checks skip
 * them.  Jump label sizes come from decoding each site, under
 * jump_label_lock() so that none is caught half-patched.  NULL on
 * allocation failure; the tables are walked then.
 */
static struct rsv_index *kprobe_rsv_build(struct module *mod)
{
	struct rsv_tables t;
	struct rsv_index *x;

	kprobe_rsv_tables_get(mod, &t);
	x = kvzalloc(struct_size(x, site, t.njump + t.ncall + t.nbug),
		     GFP_KERNEL);
	if (!x)
		return NULL;
	x->mod = mod;
#ifdef CONFIG_JUMP_LABEL
	jump_label_lock();
	for (unsigned int i = 0; i < t.njump; i++) {
		struct jump_entry *j = &t.jump[i];

		if (!mod && jump_entry_is_init(j))
			continue;
		kprobe_rsv_push(x, mod, jump_entry_code(j), jump_entry_size(j),
				RSV_JUMP);
	}
	jump_label_unlock();
#endif
#ifdef CONFIG_HAVE_STATIC_CALL_INLINE
	for (unsigned int i = 0; i < t.ncall; i++) {
		struct static_call_site *c = &t.call[i];

		/* key: relative, with the site's flags in its low bits */
		if (!mod && (((long)&c->key + c->key) & STATIC_CALL_SITE_INIT))
			continue;
		kprobe_rsv_push(x, mod, (unsigned long)&c->addr + c->addr,
				CALL_INSN_SIZE, RSV_CALL);
	}
#endif
#ifdef CONFIG_GENERIC_BUG
	for (unsigned int i = 0; i < t.nbug; i++) {
		struct bug_entry *b = &t.bug[i];

#ifdef CONFIG_GENERIC_BUG_RELATIVE_POINTERS
		kprobe_rsv_push(x, mod, (unsigned long)&b->bug_addr_disp +
			 b->bug_addr_disp, 1, RSV_BUG);
#else
		kprobe_rsv_push(x, mod, b->bug_addr, 1, RSV_BUG);
#endif
	}
#endif
	sort(x->site, x->n, sizeof(x->site[0]), kprobe_rsv_site_cmp, NULL);
	return x;
}

/*
 * The kind of the first site of @x, of a kind in the mask @kinds, that
 * overlaps [@start, @end); -1 when none does.  Init sites count only while
 * @init.
 */
static int kprobe_rsv_find(const struct rsv_index *x, unsigned long start,
			   unsigned long end, unsigned int kinds, bool init)
{
	unsigned int lo = 0, hi = x->n;
	unsigned long from;

	/* the first site that can reach @start */
	from = start > RSV_MAX_LEN ? start - RSV_MAX_LEN : 0;
	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (x->site[mid].addr < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < x->n && x->site[lo].addr < end; lo++) {
		const struct rsv_site *r = &x->site[lo];

		if (r->addr + r->len > start && (kinds & BIT(r->kind)) &&
		    (init || !r->init))
			return r->kind;
	}
	return -1;
}

/*
 * The index covering @addr, or NULL when there is none yet; *@init: may
 * its init sites still be there?  Called under kprobe_mutex.
 */
static struct rsv_index *kprobe_rsv_get(unsigned long addr, bool *init)
{
	struct rsv_index *x;
	struct module *mod;

	lockdep_assert_held(&kprobe_mutex);
	preempt_disable();
	mod = __module_text_address(addr);
	*init = mod && mod->state == MODULE_STATE_COMING;
	preempt_enable();
	if (!mod) {
		if (system_state < SYSTEM_RUNNING)
			return NULL;
		if (!rsv_core)
			rsv_core = kprobe_rsv_build(NULL);
		return rsv_core;
	}
	list_for_each_entry(x, &rsv_modules, node) {
		if (x->mod == mod)
			return x;
	}
	return NULL;
}

#ifdef CONFIG_MODULES
/* The tables of a module as it comes; called under kprobe_mutex. */
void kprobe_reserved_add_module(struct module *mod)
{
	struct rsv_index *x = kprobe_rsv_build(mod);

	if (x)
		list_add(&x->node, &rsv_modules);
}

void kprobe_reserved_remove_module(struct module *mod)
{
	struct rsv_index *x;

	list_for_each_entry(x, &rsv_modules, node) {
		if (x->mod == mod) {
			list_del(&x->node);
			kvfree(x);
			return;
		}
	}
}
#endif

/**
 * kprobe_text_rewritten() - may the kernel rewrite text in a range?
 * @start: first byte
 * @end: one past the last byte
 *
 * For the backend, under kprobe_mutex: does a jump label or a static call
 * site overlap [@start, @end)?  The range lies in one function.
 *
 * Return: true if one does.
 */
bool kprobe_text_rewritten(unsigned long start, unsigned long end)
{
	struct rsv_index *x;
	bool init, busy;

	x = kprobe_rsv_get(start, &init);
	if (x)
		return kprobe_rsv_find(x, start, end,
				BIT(RSV_JUMP) | BIT(RSV_CALL), init) >= 0;
	jump_label_lock();
	busy = jump_label_text_reserved((void *)start, (void *)(end - 1));
	jump_label_unlock();
	return busy ||
	       static_call_text_reserved((void *)start, (void *)(end - 1));
}

/*
 * Is @addr a jump label or static call site (-EBUSY), or a BUG trap
 * (-EINVAL)?  An ftrace call site is none of them.
 */
static int kprobe_text_reserved(unsigned long addr)
{
	struct rsv_index *x;
	int ret = 0;
	bool init;

	if (kprobe_ftrace_site_of(addr) == addr)
		return 0;
	x = kprobe_rsv_get(addr, &init);
	if (x) {
		switch (kprobe_rsv_find(x, addr, addr + 1, BIT(RSV_JUMP) |
				 BIT(RSV_CALL) | BIT(RSV_BUG), init)) {
		case RSV_JUMP:
		case RSV_CALL:
			return -EBUSY;
		case RSV_BUG:
			return -EINVAL;
		}
		return 0;
	}
	if (kprobe_text_rewritten(addr, addr + 1))
		ret = -EBUSY;
	else if (find_bug(addr))
		ret = -EINVAL;
	return ret;
}

/*
 * May @addr carry a probe?  @f is the function around it, as
 * kprobe_resolve_addr() found it.  Called under kprobe_mutex, so a module
 * seen alive here cannot finish unloading before our module notifier has
 * seen the sites we create.
 */
int kprobe_check_text(unsigned long addr, const struct kprobe_func *f)
{
	struct module *mod;
	int ret = 0;

	preempt_disable();
	mod = __module_text_address(addr);
	if (mod) {
		if (mod->state == MODULE_STATE_GOING ||
		    mod->state == MODULE_STATE_UNFORMED) {
			ret = -ENOENT;
		} else if (within_module_init(addr, mod) &&
			   mod->state != MODULE_STATE_COMING) {
			/* init text of a running module: about to be freed */
			ret = -ENOENT;
		}
	} else if (!core_kernel_text(addr)) {
		ret = -EINVAL;
	}
	preempt_enable();
	if (ret) {
		pr_warn("%pS is not kernel or module text that can be probed\n",
			(void *)addr);
		return ret;
	}

	if (within_kprobe_blacklist(addr)) {
		pr_warn("%pS is on the blacklist\n", (void *)addr);
		return -EINVAL;
	}
	if (kprobe_in_preamble(addr)) {
		pr_warn("%pS is a function's preamble, not its code\n", (void *)addr);
		return -EINVAL;
	}

	ret = kprobe_text_reserved(addr);
	if (ret) {
		pr_warn("%pS is patched by the kernel (jump label, static call or BUG)\n",
			(void *)addr);
		return ret;
	}

	/* The backend's adjustment (past an ENDBR) stays in the function. */
	if (addr < f->start || addr - f->start >= f->size)
		return -EINVAL;
	if (!arch_kprobe_on_insn_boundary(addr, addr - f->start)) {
		pr_warn_ratelimited("%pS is not on an instruction boundary\n",
				    (void *)addr);
		return -EILSEQ;
	}
	return 0;
}

