/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The per-CPU stack of hit frames that a native breakpoint backend keeps
 * (x86's and arm64's breakpoint.c): what a CPU is doing with each hit
 * that has to come back to the backend, its handlers running or its
 * instruction stepping out of line.
 *
 * A frame is pushed for such a hit and popped when the hit is over.  Hits
 * nest only through a handler that reaches another probe (that hit is
 * counted as missed, runs no handlers and so nests no further) and
 * through the exceptions that can interrupt a hit on the same CPU (x86:
 * an NMI or a machine check; arm64: a fault in the copy or a debug
 * exception).  KPROBE_FRAME_NEST covers the deepest such chain; a backend
 * that finds the stack full treats the hit as missed.
 *
 * Only code nested in the current hit, on the same CPU, can interleave
 * with a push or a pop, and it leaves the depth as it found it: plain
 * accesses and compiler barriers are enough.  A frame is reserved (the
 * depth) before it is filled, and starts to count for a nested trap once
 * its phase is set, which is done last.  Everything here is inlined into
 * the backends' NOKPROBE code.
 */
#ifndef _LINUX_KPROBES_FRAME_H
#define _LINUX_KPROBES_FRAME_H

#include <linux/compiler.h>
#include <linux/hardirq.h>
#include <linux/kprobes.h>
#include <linux/kprobes_arch.h>
#include <linux/lockdep.h>
#include <linux/percpu.h>
#include <linux/preempt.h>

#define KPROBE_FRAME_NEST	4

/* kprobe_frame.phase */
enum {
	KPROBE_FRAME_FREE,	/* not in use (also what a stale frame reads as) */
	KPROBE_FRAME_BUSY,	/* handlers, emulation or simulation running */
	KPROBE_FRAME_STEPPING,	/* the out-of-line copy is executing */
	KPROBE_FRAME_FAULT,	/* a fault_handler runs (KPROBES_COMPAT) */
};

struct kprobe_frame {
	struct kprobe_site	*site;
	struct kprobe		*prev;	/* current_kprobe before the hit */
	struct kprobe		*solo;	/* kprobe_site_solo() at the hit */
	/* Without solo: the post_handlers the hit owes (kprobe_site_pre()). */
	struct kprobe_hit_posts	posts;
	/*
	 * The backend's: the probed context's interrupt mask while it steps,
	 * set when the step starts and read only once it is over.
	 */
	unsigned long		saved;
	unsigned int		ctx;	/* irq_count() of the handlers */
	u8			phase;
	bool			missed;	/* a re-entry: no handlers */
};

/* depth last: a frame's address is then the stack's plus a multiple. */
struct kprobe_frames {
	struct kprobe_frame	frame[KPROBE_FRAME_NEST];
	unsigned int		depth;
};

/* A new frame on @c for a hit on @s, or NULL when the stack is full. */
static nokprobe_inline struct kprobe_frame *
kprobe_frame_push(struct kprobe_frames *c, struct kprobe_site *s,
		  struct kprobe *prev, bool missed)
{
	unsigned int d = c->depth;
	struct kprobe_frame *f;

	if (d >= KPROBE_FRAME_NEST)
		return NULL;
	c->depth = d + 1;
	barrier();
	f = &c->frame[d];
	/* One register for the frame: not recomputed from d at every use. */
	OPTIMIZER_HIDE_VAR(f);
	f->site = s;
	f->prev = prev;
	f->solo = NULL;
	kprobe_hit_posts_init(&f->posts);
	f->missed = missed;
	f->ctx = irq_count();
	barrier();
	f->phase = KPROBE_FRAME_BUSY;
	return f;
}

/* The hit of @f, the top frame of @c, is over: current_kprobe as before. */
static nokprobe_inline void kprobe_frame_pop(struct kprobe_frames *c,
					     struct kprobe_frame *f)
{
	f->phase = KPROBE_FRAME_FREE;
	__this_cpu_write(current_kprobe, f->prev);
	barrier();
	c->depth--;
}

static nokprobe_inline struct kprobe_frame *kprobe_frame_top(struct kprobe_frames *c)
{
	return c->depth ? &c->frame[c->depth - 1] : NULL;
}

/*
 * Both backends end a step with a call from the end of the out-of-line
 * copy rather than a second trap, so the post_handlers that call runs
 * must enter the context the pre_handlers had in the trap themselves:
 * preemption off, lockdep told that interrupts are off, which they are,
 * and with @nmi (x86, whose int3 handler runs as an NMI; arm64's debug
 * exceptions do not) in_nmi() true.  __nmi_enter()'s check that the NMI count has room
 * is not repeated: the trap that began the step made it on the same
 * count, which only NMI entry code changes, and that code cannot be
 * probed.  Nor is arch_nmi_enter(), which x86 does not have.  Unlike a
 * trap, this comes from the probed code, which is never noinstr: RCU is
 * watching.  The exit puts back what lockdep thought before, whatever a
 * handler did with local_irq_disable() and friends.
 */
static nokprobe_inline bool kprobe_frame_post_enter(bool nmi)
{
	bool irqs_were_on = lockdep_hardirqs_enabled();

	if (nmi) {
		lockdep_off();
		__preempt_count_add(NMI_OFFSET + HARDIRQ_OFFSET);
	} else {
		/* Interrupts are masked: nothing can want to preempt us. */
		__preempt_count_inc();
	}
	lockdep_hardirqs_off(CALLER_ADDR0);
	if (nmi)
		lockdep_hardirq_enter();
	return irqs_were_on;
}

static nokprobe_inline void kprobe_frame_post_exit(bool nmi, bool irqs_were_on)
{
	if (nmi)
		lockdep_hardirq_exit();
	if (irqs_were_on) {
		lockdep_hardirqs_on_prepare();
		lockdep_hardirqs_on(CALLER_ADDR0);
	}
	if (nmi) {
		__preempt_count_sub(NMI_OFFSET + HARDIRQ_OFFSET);
		lockdep_on();
	} else {
		__preempt_count_dec();
	}
}

#endif /* _LINUX_KPROBES_FRAME_H */
