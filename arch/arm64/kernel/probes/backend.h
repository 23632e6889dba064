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

/*
 * breakpoint.c and step_entry.S: the layout of a step slot
 * (KPROBE_SLOT_SIZE bytes), two halves of ARM64_KP_STEP_END bytes, each
 * the probed instruction's copy followed by arm64_kp_step_template; the
 * second half, at ARM64_KP_STEP_POST, for hits that owe post_handlers:
 *
 *	0x00	the copy
 *	0x04	ARM64_KP_STEP_TAIL: five instructions that save x0, x1 and
 *		x30 below the probed context's sp and call the half's
 *		entry, which never returns here
 *	0x18	ARM64_KP_STEP_ENTRY: the address of arm64_kp_step_entry
 *		(second half: arm64_kp_step_entry_post), and the return
 *		address of that call
 */
#define ARM64_KP_STEP_TAIL	0x04
#define ARM64_KP_STEP_ENTRY	0x18
#define ARM64_KP_STEP_END	0x20
#define ARM64_KP_STEP_POST	ARM64_KP_STEP_END

#ifndef __ASSEMBLY__

struct kprobe_site;
struct pt_regs;

/* breakpoint.c */
void arm64_kp_step_done(u32 *slot, struct pt_regs *regs);
void arm64_kp_step_done_post(u32 *slot, struct pt_regs *regs);

/* step_entry.S */
extern const u32 arm64_kp_step_template[];
void arm64_kp_step_entry(void);
void arm64_kp_step_entry_post(void);

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

#else /* __ASSEMBLY__ */

/*
 * opt_entry.S, step_entry.S and trampoline.S: all build a struct pt_regs
 * at sp for the handlers and reload it after them.
 */

/*
 * Registers and the pt_regs at sp: \op is stp to store them, ldp to
 * reload.  x2-x17 and x18 are what a C call may clobber besides x0, x1
 * and x30; x19 shares a pair with x18.
 */
	.macro	arm64_kp_x2_x17 op
	\op	x2, x3, [sp, #S_X2]
	\op	x4, x5, [sp, #S_X4]
	\op	x6, x7, [sp, #S_X6]
	\op	x8, x9, [sp, #S_X8]
	\op	x10, x11, [sp, #S_X10]
	\op	x12, x13, [sp, #S_X12]
	\op	x14, x15, [sp, #S_X14]
	\op	x16, x17, [sp, #S_X16]
	.endm

	.macro	arm64_kp_x20_x29 op
	\op	x20, x21, [sp, #S_X20]
	\op	x22, x23, [sp, #S_X22]
	\op	x24, x25, [sp, #S_X24]
	\op	x26, x27, [sp, #S_X26]
	\op	x28, x29, [sp, #S_X28]
	.endm

	.macro	arm64_kp_x2_x29 op
	arm64_kp_x2_x17 \op
	\op	x18, x19, [sp, #S_X18]
	arm64_kp_x20_x29 \op
	.endm

/* The SSBS register (PSTATE.SSBS at its SPSR position), by encoding. */
#define ARM64_KP_SYS_SSBS	sys_reg(3, 3, 4, 2, 6)

/*
 * \dst = the running context's PSTATE as a trap would save it (EL1h):
 * flags, mask, and PAN and SSBS where the CPU has them (handlers and
 * user_mode()-style checks read them as from a real trap).
 */
	.macro	arm64_kp_pstate dst, tmp
	mrs	\dst, nzcv
	mrs	\tmp, daif
	orr	\dst, \dst, \tmp
	mov	\tmp, #PSR_MODE_EL1h
	orr	\dst, \dst, \tmp
alternative_if ARM64_HAS_PAN
	mrs_s	\tmp, SYS_PSTATE_PAN
	orr	\dst, \dst, \tmp
alternative_else_nop_endif
alternative_if ARM64_SSBS
	mrs_s	\tmp, ARM64_KP_SYS_SSBS
	orr	\dst, \dst, \tmp
alternative_else_nop_endif
	.endm

/*
 * The fields of the pt_regs at sp past pstate, as a trap from kernel mode
 * leaves them: the interrupt priority mask where pseudo-NMI keeps one,
 * zero elsewhere (arm64_kp_pmr_save), and no system call (syscallno
 * NO_SYSCALL; a 64-bit store of 0xffffffff to the word that holds it and
 * its padding puts -1 in it and 0 in the padding in either byte order,
 * big-endian having the padding first).  stackframe is the caller's to
 * fill.  \tmp is clobbered.
 */
	.macro	arm64_kp_pmr_save tmp
	mov	\tmp, xzr
alternative_if ARM64_HAS_GIC_PRIO_MASKING
	mrs_s	\tmp, SYS_ICC_PMR_EL1
alternative_else_nop_endif
	str	\tmp, [sp, #S_PMR_SAVE]
	.endm

	.macro	arm64_kp_regs_tail tmp
	.if	S_PSTATE + 8 + 8 != (S_SYSCALLNO & ~7) || S_STACKFRAME + 32 != PT_REGS_SIZE
	.error	"struct pt_regs is not laid out as arm64_kp_regs_tail expects"
	.endif
	mov	\tmp, #0xffffffff
	str	\tmp, [sp, #S_PSTATE + 8 + 8]		/* syscallno, padding */
	str	xzr, [sp, #S_PSTATE + 8]		/* orig_x0 */
	str	xzr, [sp, #S_SDEI_TTBR1]
	stp	xzr, xzr, [sp, #S_STACKFRAME + 16]	/* lockdep_hardirqs, exit_rcu */
	.endm

	.macro	arm64_kp_regs_rest tmp
	arm64_kp_pmr_save \tmp
	arm64_kp_regs_tail \tmp
	.endm

#endif /* __ASSEMBLY__ */
#endif /* _ARM64_KPROBES_BACKEND_H */
