/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kretprobe instance pools (kretprobe_pool.c), as kretprobe.c uses them.
 *
 * A pool holds the struct kretprobe_instance objects of one kretprobe,
 * each with the kretprobe's data_size bytes of data.  It starts with
 * maxactive of them and grows, off the hit path, while calls in flight use
 * more than half; it shrinks back when they are over.  Getting and putting
 * take no lock and allocate nothing, from any context, NMI included.
 *
 *   kretprobe_pool_new()         registration; may sleep
 *   kretprobe_pool_get_cached()  hit path, preemption off: this CPU's one
 *   kretprobe_pool_get()         hit path: from the chunks, or another CPU
 *   kretprobe_pool_put()         any context, preemption off
 *   kretprobe_pool_owner()       any context: the kretprobe, or NULL
 *   kretprobe_pool_detach()      unregistration, before the grace period
 *   kretprobe_pool_release()     unregistration, after it; may sleep
 *
 * The pool outlives its kretprobe while instances are out: the last put
 * frees it.
 */
#ifndef _KERNEL_KPROBES_KRETPROBE_POOL_H
#define _KERNEL_KPROBES_KRETPROBE_POOL_H

#include <linux/atomic.h>
#include <linux/irq_work.h>
#include <linux/kprobes.h>
#include <linux/percpu.h>
#include <linux/workqueue.h>

struct kretprobe_pool {
	struct kretprobe	*rp;	/* NULL once detached */
	atomic_t		refs;	/* instances out, +1 until released */
	unsigned int		nr;	/* instances in all chunks */
	unsigned int		floor;	/* never trimmed below */
	unsigned int		limit;	/* never grown beyond */
	unsigned int		stride;	/* bytes per instance */
	unsigned long		requests; /* KRP_* work asked of the worker */
	struct list_head	chunks;	/* RCU; the first one is the floor */
	struct kretprobe_instance * __percpu *cache; /* one per CPU */
	struct irq_work		kick;	/* hit path -> @work */
	struct delayed_work	work;	/* grows and trims */
	struct irq_work		free_kick; /* last reference -> @free_work */
	struct work_struct	free_work; /* frees the pool */
};

/**
 * kretprobe_pool_new() - make the pool of a kretprobe
 * @rp: the kretprobe; its maxactive (> 0) and data_size are used
 *
 * Context: process, may sleep.
 * Return: the pool, with maxactive instances, or NULL.
 */
struct kretprobe_pool *kretprobe_pool_new(struct kretprobe *rp);

/**
 * kretprobe_pool_get() - an instance from the chunks or another CPU
 * @pool: the pool
 *
 * Asks the pool to grow when more than half of it is out.
 *
 * Context: any, preemption off.
 * Return: an instance, or NULL when every one is out.
 */
struct kretprobe_instance *kretprobe_pool_get(struct kretprobe_pool *pool);

/* The slow halves of kretprobe_pool_put(); not for direct use. */
void kretprobe_pool_put_slow(struct kretprobe_instance *ri);
void kretprobe_pool_put_above_floor(struct kretprobe_pool *pool);

/**
 * kretprobe_pool_detach() - no return handler from now on
 * @pool: the pool
 *
 * Context: unregistration, before the RCU grace period it waits for.
 */
void kretprobe_pool_detach(struct kretprobe_pool *pool);

/**
 * kretprobe_pool_release() - the kretprobe lets go of its pool
 * @pool: the pool, detached a grace period ago
 *
 * Waits for a growth in progress, which may be growing the backend's
 * store of calls in flight (arch_kretprobe_grow()).  The pool is freed
 * once the last instance out comes back.
 *
 * Context: process, may sleep.
 */
void kretprobe_pool_release(struct kretprobe_pool *pool);

/**
 * kretprobe_pool_get_cached() - this CPU's cached instance
 * @pool: the pool
 *
 * Context: hit path, preemption off.
 * Return: the instance this CPU put last, or NULL: then
 * kretprobe_pool_get().
 */
static nokprobe_inline struct kretprobe_instance *
kretprobe_pool_get_cached(struct kretprobe_pool *pool)
{
	struct kretprobe_instance *ri = xchg(this_cpu_ptr(pool->cache), NULL);

	if (ri)
		atomic_inc(&pool->refs);
	return ri;
}

/**
 * kretprobe_pool_put() - give an instance back
 * @ri: the instance
 *
 * To this CPU's cache if it is empty, else to its chunk.  Either way a
 * pool above its floor is asked to trim once few enough are out.  The pool
 * may be freed as soon as this returns.
 *
 * Context: any, preemption off.
 */
static nokprobe_inline void kretprobe_pool_put(struct kretprobe_instance *ri)
{
	struct kretprobe_pool *pool = ri->pool;

	if (likely(READ_ONCE(pool->rp)) &&
	    !cmpxchg(this_cpu_ptr(pool->cache), NULL, ri)) {
		/* Not the last reference: the registration holds one. */
		atomic_dec(&pool->refs);
		if (unlikely(READ_ONCE(pool->nr) > pool->floor))
			kretprobe_pool_put_above_floor(pool);
		return;
	}
	kretprobe_pool_put_slow(ri);
}

/**
 * kretprobe_pool_owner() - the kretprobe of a pool
 * @pool: the pool
 *
 * Context: any.
 * Return: the kretprobe, or NULL once it is detached.
 */
static nokprobe_inline struct kretprobe *
kretprobe_pool_owner(struct kretprobe_pool *pool)
{
	return READ_ONCE(pool->rp);
}

#endif /* _KERNEL_KPROBES_KRETPROBE_POOL_H */
