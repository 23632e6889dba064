// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * x86-64 kprobes backend: jump optimization.
 *
 * An optimized site trades its int3 for a five-byte jmp to a detour, so a
 * hit costs no trap at all.  The jmp covers more than the probed
 * instruction: its *region* is the run of whole instructions from the
 * probed address that covers at least five bytes.  The detour, in a slot
 * of its own, is
 *
 *	call	kx_opt_entry		save pt_regs, run the pre_handlers,
 *					reload the registers, return here
 *	<copies of the region's instructions>
 *	jmp	<end of the region>
 *	...
 *	.quad	<the probed address + 1>	(what regs->ip shows)
 *	.quad	<the site>		(last sixteen bytes of the slot)
 *
 * The replacement is only safe if no CPU can ever arrive in the middle of
 * the region, now or later.  The backend checks the text; the core makes
 * sure that nothing already inside the region is left there (it writes the
 * jmp only after a wait, begun with the int3 in place, until every CPU and
 * task inside the region has left it), and keeps other probes out of the
 * region.  What the text must satisfy here:
 *
 *  - every instruction of the region runs the same from the detour: the
 *    ones we would step out of line anyway (no branch, call or ret, nothing
 *    that changes IF or the stack segment), no exception-table entry (its
 *    fixup is keyed to the original address), RIP-relative operands within
 *    reach of the slot;
 *  - the region lies inside one function and holds no jump label, static
 *    call, SMP-alternatives lock prefix or ftrace call site, all of which
 *    are rewritten behind our back;
 *  - decoding the whole function (and its .cold part, if it has one),
 *    no relative branch, call or xbegin lands strictly inside the region,
 *    no exception-table fixup points there, and there is no indirect jmp
 *    (a jump table could lead anywhere), written as such or as a jmp to a
 *    retpoline thunk.
 *
 * kx_opt_entry (opt_entry.S) builds the pt_regs and calls
 * kx_opt_handler() below, which presents the registers as a breakpoint
 * would (regs->ip just past an int3 at the probed address, regs->sp the
 * probed context's) and runs the pre_handlers with preemption off; the
 * interrupt flag stays the probed context's.  Changes a handler makes to
 * the general registers and flags are written back; a change of regs->ip
 * is not (there is no post_handler on an optimized site, and "skip the
 * instruction" cannot be honoured for a region): that is the documented
 * behaviour, and a probe that wants redirection keeps itself unoptimized
 * with an empty post_handler or the sysctl.
 */

#define pr_fmt(fmt) "kprobes: " fmt

#include <linux/kprobes.h>
#include <linux/kprobes_arch.h>
#include <linux/kallsyms.h>
#include <linux/module.h>
#include <linux/extable.h>
#include <linux/ftrace.h>
#include <linux/jump_label.h>
#include <linux/static_call.h>
#include <linux/memory.h>
#include <linux/unaligned.h>
#include <linux/string.h>
#include <linux/perf_event.h>

#include <asm/insn.h>
#include <asm/text-patching.h>

#include "backend.h"

/* ---- Hit path --------------------------------------------------------- */

/*
 * Several probes on the site, or a hit while a probe runs.
 * kprobe_site_pre() points current_kprobe at each probe before its
 * handler; nothing here needs it set earlier (there is no step).
 */
static noinline void kx_opt_slow(struct kprobe_site *s, struct pt_regs *regs)
{
	if (kprobe_running()) {
		kprobe_site_missed(s);
		return;
	}
	kprobe_site_hit(s);
	/* A redirection cannot be honoured here: it is ignored. */
	kprobe_site_pre(s, regs, NULL);
	__this_cpu_write(current_kprobe, NULL);
}

NOKPROBE_SYMBOL(kx_opt_slow);

/**
 * kx_opt_handler - run the handlers of an optimized site
 * @s: the site, read from the detour slot by kx_opt_entry
 * @regs: the probed context, saved by kx_opt_entry
 *
 * Runs with preemption off and interrupts as the probed context had them
 * (as kprobes.rst documents for optimized probes): an interrupt that hits a
 * probe meanwhile finds kprobe_running() and counts as missed, like any
 * nested hit.  The region's copy runs either way when we return.
 */
void kx_opt_handler(struct kprobe_site *s, struct pt_regs *regs)
{
	struct kprobe *p;

	preempt_disable_notrace();
	p = kprobe_site_solo(s);
	if (likely(p && !kprobe_running())) {
		kprobe_site_hit(s);
		__this_cpu_write(current_kprobe, p);
		/* A redirection cannot be honoured here: it is ignored. */
		p->pre_handler(p, regs);
		__this_cpu_write(current_kprobe, NULL);
	} else {
		kx_opt_slow(s, regs);
	}
	preempt_enable_notrace();
}

NOKPROBE_SYMBOL(kx_opt_handler);

/* ---- Checking the text ------------------------------------------------- */

static bool kx_strictly_inside(unsigned long x, unsigned long lo,
			       unsigned long hi)
{
	return x > lo && x < hi;
}

/* Where the fixup of an exception-table entry sends the faulting context. */
static unsigned long kx_fixup_addr(const struct exception_table_entry *e)
{
	return (unsigned long)&e->fixup + e->fixup;
}

/* A retpoline (or similar) thunk: a jmp to one is an indirect jmp. */
static bool kx_is_thunk(unsigned long dest)
{
	char name[KSYM_NAME_LEN];

	return IS_ENABLED(CONFIG_MITIGATION_RETPOLINE) &&
	       core_kernel_text(dest) && !lookup_symbol_name(dest, name) &&
	       str_has_prefix(name, "__x86_indirect_");
}

/*
 * The destination of a relative branch, call or xbegin at @pos, if @insn
 * is one; *call tells a call apart.
 */
static bool kx_rel_dest(struct insn *insn, unsigned long pos,
			unsigned long *dest, bool *call)
{
	insn_byte_t op = insn->opcode.bytes[0];
	unsigned long next = pos + insn->length;

	if (insn->vex_prefix.nbytes)
		return false;
	*call = op == CALL_INSN_OPCODE;
	if ((op >= 0x70 && op <= 0x7f) || (op >= 0xe0 && op <= 0xe3) ||
	    op == CALL_INSN_OPCODE || op == JMP32_INSN_OPCODE ||
	    op == JMP8_INSN_OPCODE ||
	    (op == 0x0f && insn->opcode.nbytes == 2 &&
	     insn->opcode.bytes[1] >= 0x80 && insn->opcode.bytes[1] <= 0x8f) ||
	    (op == 0xc7 && insn->modrm.bytes[0] == 0xf8)) {
		*dest = next + (long)insn->immediate.value;
		return true;
	}
	return false;
}

/* jmp through a register or memory, near (ff /4) or far (ff /5). */
static bool kx_is_indirect_jmp(struct insn *insn)
{
	u8 reg = X86_MODRM_REG(insn->modrm.bytes[0]);

	return !insn->vex_prefix.nbytes && insn->opcode.bytes[0] == 0xff &&
	       (reg == 4 || reg == 5);
}

/*
 * Decode [@start, @end) and check that nothing in it can send a CPU
 * strictly inside (@lo, @hi).  0, -EBUSY (something lands there), -EINVAL
 * (an indirect jmp) or -EILSEQ (the text does not decode).
 */
static int kx_scan(unsigned long start, unsigned long end, unsigned long lo,
		   unsigned long hi)
{
	const struct exception_table_entry *e;
	struct kx_overlay ov = {};
	unsigned long pos, dest;
	u8 buf[MAX_INSN_SIZE];
	struct insn insn;
	bool call;
	int n;

	for (pos = start; pos < end; pos += insn.length) {
		n = kx_fetch_orig(&ov, pos, buf);
		if (!n || insn_decode(&insn, buf, n, INSN_MODE_KERN) < 0 ||
		    !insn.length)
			return -EILSEQ;

		e = search_exception_tables(pos);
		if (e && kx_strictly_inside(kx_fixup_addr(e), lo, hi))
			return -EBUSY;
		if (kx_rel_dest(&insn, pos, &dest, &call)) {
			if (kx_strictly_inside(dest, lo, hi))
				return -EBUSY;
			if (!call && (dest < start || dest >= end) &&
			    kx_is_thunk(dest))
				return -EINVAL;
		} else if (kx_is_indirect_jmp(&insn)) {
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * GCC moves the unlikely parts of a function to a "<name>.cold" symbol
 * elsewhere in the text, and they jump back into the middle of it.  Scan
 * that part too, when the function has one.
 */
static int kx_scan_cold(struct kprobe_func *f, unsigned long lo,
			unsigned long hi)
{
	if (f->cold_size == KPROBE_FUNC_COLD_UNKNOWN)
		return -EBUSY;
	if (!f->cold)
		return 0;
	return kx_scan(f->cold, f->cold + f->cold_size, lo, hi);
}

/* Is anything that the kernel rewrites by itself in [@lo, @hi)? */
static bool kx_region_reserved(unsigned long lo, unsigned long hi)
{
	bool busy;

	busy = kprobe_text_rewritten(lo, hi) ||
	       ftrace_text_reserved((void *)lo, (void *)(hi - 1));
	if (!busy) {
		mutex_lock(&text_mutex);
		busy = alternatives_text_reserved((void *)lo, (void *)(hi - 1));
		mutex_unlock(&text_mutex);
	}
	return busy;
}

/*
 * Walk the region of @s, check each instruction and, when @img is given,
 * copy it to its place in the detour image that will live at @base.
 * Returns the region's length, or a negative errno.
 */
static int kx_region(struct kprobe_site *s, unsigned long end, u8 *img,
		     unsigned long base)
{
	unsigned long addr = (unsigned long)s->addr, pos = addr;
	unsigned int at = KX_OPT_COPY;
	struct arch_kprobe_site tmp;
	struct kx_overlay ov = {};
	const char *why;
	u8 buf[MAX_INSN_SIZE];
	struct insn insn;
	int n;

	while (pos < addr + JMP32_INSN_SIZE) {
		n = kx_fetch_orig(&ov, pos, buf);
		if (!n || insn_decode(&insn, buf, n, INSN_MODE_KERN) < 0 ||
		    !insn.length)
			return -EILSEQ;
		memset(&tmp, 0, sizeof(tmp));
		if (kx_classify(&tmp, &insn, pos, &why) ||
		    (tmp.how != KX_STEP && tmp.how != KX_STEP_PUSHF))
			return -EINVAL;
		if (pos + insn.length > end || search_exception_tables(pos))
			return -EINVAL;
		if (at + insn.length + JMP32_INSN_SIZE > KX_OPT_IP)
			return -EINVAL;
		if (img && !kx_place_copy(img + at, base + at, &insn, buf, pos))
			return -EINVAL;
		at += insn.length;
		pos += insn.length;
	}
	if (img && !kx_place_jmp(img + at, base + at, pos))
		return -EINVAL;
	return pos - addr;
}

/* ---- Preparing, writing and removing the jump --------------------------- */

/**
 * arch_optprobe_prepare - check a site's region and build its detour
 * @s: an armed breakpoint site; kprobe_mutex is held
 *
 * Return: 0 (also when already done), -EINVAL (the text does not allow
 * it), -EBUSY (something may land inside the region), -EILSEQ, -ENOMEM.
 */
int arch_optprobe_prepare(struct kprobe_site *s)
{
	struct arch_kprobe_site *a = &s->arch;
	unsigned long addr = (unsigned long)s->addr, end, base;
	u8 img[KPROBE_OPTINSN_SLOT_SIZE], jmp[JMP32_INSN_SIZE];
	struct kx_overlay ov = {};
	u8 buf[MAX_INSN_SIZE];
	struct kprobe_func f;
	void *slot;
	int len, ret;

	BUILD_BUG_ON(KX_OPT_COPY + 4 + MAX_INSN_SIZE + JMP32_INSN_SIZE > KX_OPT_IP);

	if (a->detour)
		return 0;
	if ((a->how != KX_STEP && a->how != KX_STEP_PUSHF) || !a->boost_ip)
		return -EINVAL;
	if (kprobe_func_find(addr, &f, true))
		return -EINVAL;
	end = f.start + f.size;

	len = kx_region(s, end, NULL, 0);
	if (len < 0)
		return len;
	if (kx_region_reserved(addr, addr + len))
		return -EBUSY;
	/* Branches may land on addr (the jmp's start), nowhere after it. */
	ret = kx_scan(f.start, end, addr, addr + len);
	if (!ret)
		ret = kx_scan_cold(&f, addr, addr + len);
	if (ret)
		return ret;
	if (kx_fetch_orig(&ov, addr, buf) < JMP32_INSN_SIZE)
		return -EINVAL;

	slot = kprobe_optinsn_slot_alloc();
	if (!slot)
		return -ENOMEM;
	base = (unsigned long)slot;
	memset(img, INT3_INSN_OPCODE, sizeof(img));
	/* call kx_opt_entry: the same encoding as a jmp, with e8 */
	ret = -EINVAL;
	if (!kx_place_jmp(img, base, (unsigned long)kx_opt_entry))
		goto fail;
	img[0] = CALL_INSN_OPCODE;
	if (kx_region(s, end, img, base) != len)
		goto fail;
	/* The jump at the probed address must reach the slot too. */
	if (!kx_place_jmp(jmp, addr, base))
		goto fail;
	put_unaligned(addr + INT3_INSN_SIZE, (unsigned long *)(img + KX_OPT_IP));
	put_unaligned((unsigned long)s, (unsigned long *)(img + KX_OPT_SITE));

	text_poke_copy(slot, img, sizeof(img));
	perf_event_text_poke(slot, NULL, 0, img, sizeof(img));
	memcpy(a->orig, buf, JMP32_INSN_SIZE);
	a->region = len;
	a->detour = slot;
	return 0;
fail:
	kprobe_optinsn_slot_free(slot);
	return ret;
}

/**
 * arch_optprobe_region - how many bytes the jump of @s covers
 * @s: a site
 *
 * Return: the region's length once arch_optprobe_prepare() succeeded, or 0.
 */
unsigned int arch_optprobe_region(struct kprobe_site *s)
{
	return s->arch.detour ? s->arch.region : 0;
}

/**
 * arch_optprobe_poke - queue the jump of a prepared site
 * @s: an armed site whose detour is built, and that no task can be inside
 *
 * The batch goes through text_poke_bp(): its int3 goes where ours already
 * is, CPUs that hit it meanwhile are sent on to the detour, and it reports
 * the change to perf itself.  Caller holds text_mutex.
 *
 * Return: 0, or an error with the breakpoint left in place.
 */
int arch_optprobe_poke(struct kprobe_site *s)
{
	u8 jmp[JMP32_INSN_SIZE];

	lockdep_assert_held(&text_mutex);
	if (WARN_ON_ONCE(!s->arch.detour || kx_jumped(s)))
		return -EINVAL;
	if (s->flags & KSITE_GONE)
		return -ENOENT;
	if (WARN_ON_ONCE(!kx_place_jmp(jmp, (unsigned long)s->addr,
				       (unsigned long)s->arch.detour)))
		return -ERANGE;
	text_poke_queue(s->addr, jmp, JMP32_INSN_SIZE, NULL);
	return 0;
}

/**
 * arch_optprobe_poke_finish - write the queued jumps
 *
 * Caller holds text_mutex.
 */
void arch_optprobe_poke_finish(void)
{
	lockdep_assert_held(&text_mutex);
	text_poke_finish();
}

/**
 * arch_optprobe_unpoke - turn optimized sites back into breakpoint sites
 * @sites: the sites, linked through their opt member
 *
 * First int3 over every jmp's opcode, so that a CPU arriving now traps
 * (and runs the detour's copy, the site is still "ready"), then the four
 * bytes after it as they were; one synchronisation after each step for
 * the whole batch.  Once the bytes are back, the change is reported to
 * perf as text_poke_bp() reports the jump: from then on a decoder sees the
 * breakpoint's flow or the new bytes.  Caller holds text_mutex.
 */
void arch_optprobe_unpoke(struct list_head *sites)
{
	u8 int3 = INT3_INSN_OPCODE, jmp[JMP32_INSN_SIZE], now[JMP32_INSN_SIZE];
	struct kprobe_site *s;

	lockdep_assert_held(&text_mutex);
	list_for_each_entry(s, sites, opt) {
		if (kx_jumped(s) && !(s->flags & KSITE_GONE))
			text_poke(s->addr, &int3, INT3_INSN_SIZE);
	}
	text_poke_sync();
	list_for_each_entry(s, sites, opt) {
		if (kx_jumped(s) && !(s->flags & KSITE_GONE)) {
			text_poke(s->addr + INT3_INSN_SIZE,
				  s->arch.orig + INT3_INSN_SIZE,
				  JMP32_INSN_SIZE - INT3_INSN_SIZE);
			kx_place_jmp(jmp, (unsigned long)s->addr,
				     (unsigned long)s->arch.detour);
			memcpy(now, s->arch.orig, JMP32_INSN_SIZE);
			now[0] = INT3_INSN_OPCODE;
			perf_event_text_poke(s->addr, jmp, JMP32_INSN_SIZE, now,
					     JMP32_INSN_SIZE);
		}
	}
	text_poke_sync();
}

/* The site is being freed: no jump leads to its detour any more. */
void kx_opt_release(struct kprobe_site *s)
{
	if (s->arch.detour) {
		kprobe_optinsn_slot_free(s->arch.detour);
		s->arch.detour = NULL;
	}
}
