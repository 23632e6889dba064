/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * arm64 kprobes: what the generic code, the debug-exception dispatcher
 * and the fault handler need to see of the backend in
 * arch/arm64/kernel/probes/.  The per-site state is decoded once, when a
 * site is prepared, and only read on the hit path.
 */
#ifndef _ASM_ARM64_KPROBES_H
#define _ASM_ARM64_KPROBES_H

/* NOKPROBE_SYMBOL(), nokprobe_inline, __kprobes: needed even without kprobes. */
#include <asm-generic/kprobes.h>

#ifndef __ASSEMBLY__

#include <linux/types.h>
#include <asm/debug-monitors.h>

struct pt_regs;

/*
 * An instruction as the probes decoder (arch/arm64/kernel/probes/decode.c)
 * leaves it, shared by kprobes and uprobes: how a hit executes it (one of
 * enum arm64_probe_how in decode-insn.h) and what simulating it needs,
 * worked out once.  @target is a branch's destination, the value ADR or
 * ADRP produces, or a literal's address; @reg the register written or
 * tested; @cond a B.cond condition, the bit TBZ/TBNZ tests, or whether
 * CBZ/CBNZ test all 64 bits.
 */
struct arm64_probe_insn {
	unsigned long	target;
	u32		insn;
	u8		how;
	u8		reg;
	u8		cond;
	bool		guarded;	/* on a BTI-guarded page (for a BR) */
};

#ifdef CONFIG_KPROBES

/*
 * The unit of text a probe replaces: one A64 instruction, overwritten
 * with BRK #KPROBES_BRK_IMM (asm/probes.h, which uprobes shares, has the
 * same definition).
 */
typedef u32 kprobe_opcode_t;

/*
 * Bytes per out-of-line slot: twice the probed instruction followed by
 * the call that brings the CPU back to the backend once the copy has
 * run, one for hits that owe post_handlers and one for the others
 * (arch/arm64/kernel/probes/backend.h has the layout).
 */
#define KPROBE_SLOT_SIZE	64

/*
 * arch_kprobe_poke() only queues the write; arch_kprobe_poke_finish()
 * makes all of a batch's writes at once, with every other CPU held in
 * stop_machine(): A64 allows an instruction to be replaced under a
 * running CPU only when both old and new are branches, NOPs or traps,
 * and a probed instruction may be anything.  The core therefore calls
 * arch_kprobe_poke_finish() at once after arming, too.
 */
#define KPROBE_POKE_IN_FINISH	1

/*
 * aarch64_insn_patch_text() stops the machine with the CPU hotplug lock
 * already held: the core takes it, before text_mutex.
 */
#define KPROBE_POKE_CPUS_LOCKED	1

/*
 * Jump optimization (arch/arm64/kernel/probes/detour.c): an optimized
 * site's BRK becomes a B to its detour, which must lie within the 128 MiB
 * a B reaches, so detours come from the module area rather than from
 * kprobes' own execmem range (all of vmalloc space on arm64).  The region
 * a jump covers is the probed instruction alone.
 */
#define KPROBE_OPTINSN_SLOT_SIZE	80
#define KPROBE_OPTINSN_EXECMEM		EXECMEM_MODULE_TEXT
#define KPROBE_OPT_REGION_MAX		AARCH64_INSN_SIZE

/* Per-site state, decoded once (arch/arm64/kernel/probes/decode.c). */
struct arch_kprobe_site {
	u32			*slot;	/* out-of-line copy, NULL if simulated */
	struct arm64_probe_insn	d;
#ifdef CONFIG_OPTPROBES
	u32			*detour;	/* built by arch_optprobe_prepare() */
	u32			jump;		/* the B that leads there */
#endif
};

#endif /* CONFIG_KPROBES */

/*
 * Called by the debug-exception dispatcher (debug-monitors.c, whatever the
 * configuration: it tests IS_ENABLED(CONFIG_KPROBES)) for BRK
 * #KPROBES_BRK_IMM, a probe hit, and BRK #KPROBES_BRK_SS_IMM, the end of
 * a redirected detour (jump optimization).  DBG_HOOK_HANDLED or
 * DBG_HOOK_ERROR.
 */
int kprobe_brk_handler(struct pt_regs *regs, unsigned long esr);
int kprobe_ss_brk_handler(struct pt_regs *regs, unsigned long esr);

/*
 * Our return trampoline saves the registers itself and never traps, so
 * a BRK #KRETPROBES_BRK_IMM is never ours.
 */
static inline int kretprobe_brk_handler(struct pt_regs *regs, unsigned long esr)
{
	return DBG_HOOK_ERROR;
}

#endif /* __ASSEMBLY__ */
#endif /* _ASM_ARM64_KPROBES_H */
