/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * arm64 kprobes backend: what its files share beyond the contract
 * (linux/kprobes_arch.h), grouped by the file that defines it.
 */
#ifndef _ARM64_KPROBES_BACKEND_H
#define _ARM64_KPROBES_BACKEND_H

/*
 * detour.c and opt_entry.S: the layout of a detour slot
 * (KPROBE_OPTINSN_SLOT_SIZE bytes), copied from arm64_kp_opt_template and
 * completed by arch_optprobe_prepare():
 *
 *	0x00	nine instructions: save x0, x1 and x30 below the probed
 *		context's sp, call arm64_kp_opt_entry, reload them
 *	0x24	ARM64_KP_OPT_COPY: two instructions that do the probed one's
 *		work at this address (its copy, or a rewrite of it)
 *	0x2c	ARM64_KP_OPT_BACK: B to where the probed code goes on
 *	0x30	ARM64_KP_OPT_ENTRY: the address of arm64_kp_opt_entry
 *	0x38	ARM64_KP_OPT_SITE: the struct kprobe_site
 *	0x40	ARM64_KP_OPT_ADDR: the probed address (regs->pc)
 *	0x48	ARM64_KP_OPT_LIT: a value the rewrite loads (a PC-relative
 *		instruction's result or address, a link register's value)
 */
#define ARM64_KP_OPT_COPY	0x24
#define ARM64_KP_OPT_BACK	0x2c
#define ARM64_KP_OPT_ENTRY	0x30
#define ARM64_KP_OPT_SITE	0x38
#define ARM64_KP_OPT_ADDR	0x40
#define ARM64_KP_OPT_LIT	0x48
#define ARM64_KP_OPT_END	0x50

#ifndef __ASSEMBLY__

struct kprobe_site;
struct pt_regs;

#ifdef CONFIG_OPTPROBES
/* detour.c */
int arm64_kp_opt_handler(struct kprobe_site *s, struct pt_regs *regs);
int arm64_kp_opt_redirect(struct pt_regs *regs);
void arm64_kp_opt_release(struct kprobe_site *s);

/* opt_entry.S */
extern const u32 arm64_kp_opt_template[];
void arm64_kp_opt_entry(void);
void arm64_kp_opt_redirect_brk(void);

static __always_inline bool arm64_kp_is_opt_redirect(struct pt_regs *regs)
{
	return regs->pc == (unsigned long)arm64_kp_opt_redirect_brk;
}
#else
static inline void arm64_kp_opt_release(struct kprobe_site *s) { }
static inline int arm64_kp_opt_redirect(struct pt_regs *regs) { return 0; }
static __always_inline bool arm64_kp_is_opt_redirect(struct pt_regs *regs)
{
	return false;
}
#endif /* CONFIG_OPTPROBES */

#endif /* __ASSEMBLY__ */
#endif /* _ARM64_KPROBES_BACKEND_H */
