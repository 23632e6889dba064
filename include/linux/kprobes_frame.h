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
#include <linux/kprobes.h>
#include <linux/kprobes_arch.h>
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

#endif /* _LINUX_KPROBES_FRAME_H */
