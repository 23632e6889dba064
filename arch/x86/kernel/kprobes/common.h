/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Register save and restore sequences for assembly trampolines that build
 * a struct pt_regs on the stack.  Only arch/x86/kernel/rethook.c (fprobe's
 * return hook) includes this file; kprobes' own backend does not use it.
 *
 * Entry state expected by KPROBES_SAVE: the caller has already pushed the
 * ss, sp and flags slots, so the stack pointer sits right below pt_regs.flags.
 * KPROBES_SAVE reserves the rest of pt_regs (cs, ip and orig_ax are left
 * for the C code to fill), stores every general register into its slot and
 * leaves %rsp pointing at the pt_regs.  KPROBES_RESTORE reloads the
 * general registers and leaves %rsp pointing at pt_regs.flags again.
 */
#ifndef _X86_KERNEL_KPROBES_COMMON_H
#define _X86_KERNEL_KPROBES_COMMON_H

#include <asm/frame.h>

#ifndef CONFIG_X86_64
#error "the x86 kprobes backend is 64-bit only"
#endif

/* Bytes of pt_regs below the flags slot: r15 ... orig_ax, ip, cs. */
#define KPROBES_REGS_BELOW_FLAGS	"144"

#define KPROBES_SAVE				\
	"	subq $" KPROBES_REGS_BELOW_FLAGS ", %rsp\n"	\
	"	movq %r15, 0x00(%rsp)\n"		\
	"	movq %r14, 0x08(%rsp)\n"		\
	"	movq %r13, 0x10(%rsp)\n"		\
	"	movq %r12, 0x18(%rsp)\n"		\
	"	movq %rbp, 0x20(%rsp)\n"		\
	"	movq %rbx, 0x28(%rsp)\n"		\
	"	movq %r11, 0x30(%rsp)\n"		\
	"	movq %r10, 0x38(%rsp)\n"		\
	"	movq %r9,  0x40(%rsp)\n"		\
	"	movq %r8,  0x48(%rsp)\n"		\
	"	movq %rax, 0x50(%rsp)\n"		\
	"	movq %rcx, 0x58(%rsp)\n"		\
	"	movq %rdx, 0x60(%rsp)\n"		\
	"	movq %rsi, 0x68(%rsp)\n"		\
	"	movq %rdi, 0x70(%rsp)\n"		\
	ENCODE_FRAME_POINTER

#define KPROBES_RESTORE				\
	"	movq 0x00(%rsp), %r15\n"		\
	"	movq 0x08(%rsp), %r14\n"		\
	"	movq 0x10(%rsp), %r13\n"		\
	"	movq 0x18(%rsp), %r12\n"		\
	"	movq 0x20(%rsp), %rbp\n"		\
	"	movq 0x28(%rsp), %rbx\n"		\
	"	movq 0x30(%rsp), %r11\n"		\
	"	movq 0x38(%rsp), %r10\n"		\
	"	movq 0x40(%rsp), %r9\n"			\
	"	movq 0x48(%rsp), %r8\n"			\
	"	movq 0x50(%rsp), %rax\n"		\
	"	movq 0x58(%rsp), %rcx\n"		\
	"	movq 0x60(%rsp), %rdx\n"		\
	"	movq 0x68(%rsp), %rsi\n"		\
	"	movq 0x70(%rsp), %rdi\n"		\
	"	addq $" KPROBES_REGS_BELOW_FLAGS ", %rsp\n"

/* The names rethook.c uses. */
#define SAVE_REGS_STRING	KPROBES_SAVE
#define RESTORE_REGS_STRING	KPROBES_RESTORE

#endif /* _X86_KERNEL_KPROBES_COMMON_H */
