// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Kretprobe instance pools: where the hit path gets a struct
 * kretprobe_instance for a call it follows, without a lock or an
 * allocation, and the pool grows and shrinks behind it.  The API is in
 * kretprobe_pool.h.
 *
 * Instances live in chunks: one allocation holding a bitmap and
 * the instances, a set bit meaning "out".  The hit path claims a clear bit
 * with an atomic test-and-set (starting at a word chosen by CPU so that two
 * CPUs rarely meet on one word), and releases it with an atomic clear: no
 * lock, no allocation, safe in NMI.  The first chunk holds the floor
 * (maxactive, or a default) and lives as long as the pool.  When more than
 * half of the instances are out, the hit path asks for more (an irq_work,
 * which queues the pool's work item), and the work item adds a chunk as
 * big as the pool so far, with GFP_KERNEL, up to pool->limit.  When fewer
 * than a quarter are out, any put into a pool above its floor asks, and
 * the work item (a second later) frees the added chunks that are wholly
 * idle: it claims every bit of such a chunk at once,
 * so that no CPU can take from it, unlinks it and frees it after a grace
 * period.  A pool therefore holds at most
 * max(floor, min(KRETPROBE_POOL_GROW_MAX, KRETPROBE_POOL_BYTES / stride))
 * instances, and shrinks back to its floor when the calls are over.
 *
 * In front of the chunks, each CPU keeps one instance in pool->cache: the
 * last one it gave back, still marked out in its chunk (but no longer
 * counted in refs).  Its next call takes it with one exchange instead of a
 * bitmap search.  The exchanges are locked ones, because a CPU that finds
 * the chunks exhausted takes from the other CPUs' caches before it counts
 * a miss, and the work item empties the caches before it trims.  Once the
 * kretprobe is detached, instances go straight back to their chunks, and
 * kretprobe_pool_release() empties the caches after the grace period: a put
 * that still saw pool->rp set ran with preemption off, inside the grace
 * period, and the registration's reference kept refs above zero.
 *
 * Lifetime.  pool->refs counts the instances out, plus one while the
 * kretprobe is registered.  Unregistering clears pool->rp before the grace
 * period that unregister_kprobes() waits for anyway, so when it returns no
 * return handler is running and none will start; returns still in flight
 * go back to their callers without one.  Whoever drops refs to zero (the
 * unregistering task, or the last return, possibly in NMI) queues
 * pool->free_kick, which hands the pool to a work item that frees it.
 * Nothing touches a pool after dropping its reference.
 */
#define pr_fmt(fmt) "kprobes: " fmt

#include <linux/kprobes.h>
#include <linux/kprobes_arch.h>
#include <linux/irq_work.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "kretprobe_pool.h"

struct kretprobe_chunk {
	struct list_head	node;	/* on pool->chunks, RCU */
	struct kretprobe_pool	*pool;
	unsigned int		nr;	/* instances */
	unsigned int		words;	/* longs in @map */
	char			*objs;	/* @nr instances, pool->stride apart */
	struct rcu_head		rcu;
	unsigned long		map[];	/* set bit: out, or past @nr */
};

/* pool->requests */
enum { KRP_GROW, KRP_TRIM };

#define KRP_TRIM_DELAY		HZ

static struct kretprobe_instance *kretprobe_chunk_obj(struct kretprobe_chunk *c,
						      unsigned int i)
{
	return (void *)(c->objs + (size_t)i * c->pool->stride);
}

/* The bits of word @w that stand for no instance (past the end). */
static unsigned long kretprobe_chunk_spare_bits(struct kretprobe_chunk *c, unsigned int w)
{
	unsigned int used = c->nr - w * BITS_PER_LONG;

	return used >= BITS_PER_LONG ? 0 : ~0UL << used;
}

/* A chunk of @nr instances for @pool, whose owner is @rp. */
static struct kretprobe_chunk *kretprobe_chunk_new(struct kretprobe_pool *pool,
						   struct kretprobe *rp,
						   unsigned int nr, gfp_t gfp)
{
	unsigned int words = BITS_TO_LONGS(nr), i;
	struct kretprobe_chunk *c;
	size_t head;

	head = ALIGN(sizeof(*c) + words * sizeof(long), L1_CACHE_BYTES);
	c = kvzalloc(head + (size_t)nr * pool->stride, gfp);
	if (!c)
		return NULL;
	c->pool = pool;
	c->nr = nr;
	c->words = words;
	c->objs = (char *)c + head;
	c->map[words - 1] = kretprobe_chunk_spare_bits(c, words - 1);
	for (i = 0; i < nr; i++) {
		struct kretprobe_instance *ri = kretprobe_chunk_obj(c, i);

		ri->rp = rp;
		ri->pool = pool;
		ri->chunk = c;
		ri->index = i;
	}
	return c;
}

/* Claim every instance of an idle chunk at once; false if one is out. */
static bool kretprobe_chunk_seize(struct kretprobe_chunk *c)
{
	unsigned int w;

	for (w = 0; w < c->words; w++) {
		unsigned long idle = kretprobe_chunk_spare_bits(c, w);

		if (cmpxchg(&c->map[w], idle, ~0UL) != idle)
			break;
	}
	if (w == c->words)
		return true;
	while (w-- > 0)
		WRITE_ONCE(c->map[w], kretprobe_chunk_spare_bits(c, w));
	return false;
}

static void kretprobe_pool_kick(struct kretprobe_pool *pool, int what)
{
	if (!test_and_set_bit(what, &pool->requests))
		irq_work_queue(&pool->kick);
}

NOKPROBE_SYMBOL(kretprobe_pool_kick);

/* From another CPU's cache: the chunks are exhausted. */
static struct kretprobe_instance *kretprobe_pool_steal(struct kretprobe_pool *pool)
{
	struct kretprobe_instance *ri;
	unsigned int cpu;

	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		if (!cpu_possible(cpu))
			continue;
		ri = xchg(per_cpu_ptr(pool->cache, cpu), NULL);
		if (ri) {
			atomic_inc(&pool->refs);
			return ri;
		}
	}
	return NULL;
}

NOKPROBE_SYMBOL(kretprobe_pool_steal);

struct kretprobe_instance *kretprobe_pool_get(struct kretprobe_pool *pool)
{
	unsigned int cpu = raw_smp_processor_id(), nr, out;
	struct kretprobe_chunk *c;

	list_for_each_entry_rcu(c, &pool->chunks, node) {
		unsigned int w = c->words > 1 ? cpu % c->words : 0;
		unsigned int i;

		for (i = 0; i < c->words; i++) {
			unsigned long v;

			while ((v = READ_ONCE(c->map[w])) != ~0UL) {
				unsigned int bit = w * BITS_PER_LONG + ffz(v);

				if (test_and_set_bit_lock(bit, c->map))
					continue;
				out = atomic_inc_return(&pool->refs) - 1;
				nr = READ_ONCE(pool->nr);
				if (out * 2 > nr && nr < pool->limit)
					kretprobe_pool_kick(pool, KRP_GROW);
				return kretprobe_chunk_obj(c, bit);
			}
			if (++w == c->words)
				w = 0;
		}
	}
	if (READ_ONCE(pool->nr) < pool->limit)
		kretprobe_pool_kick(pool, KRP_GROW);
	return kretprobe_pool_steal(pool);
}

NOKPROBE_SYMBOL(kretprobe_pool_get);

/* Give @ri back to its chunk.  The pool may be freed as soon as this returns. */
void kretprobe_pool_put_slow(struct kretprobe_instance *ri)
{
	struct kretprobe_chunk *c = ri->chunk;
	struct kretprobe_pool *pool = c->pool;
	/* Out once this one is back: less ours and the registration's. */
	int out = atomic_read(&pool->refs) - 2;
	unsigned int nr = READ_ONCE(pool->nr);

	clear_bit_unlock(ri->index, c->map);
	if (nr > pool->floor && out >= 0 && out * 4 < nr && READ_ONCE(pool->rp))
		kretprobe_pool_kick(pool, KRP_TRIM);
	/* The last access to *pool unless we drop the last reference. */
	if (atomic_dec_and_test(&pool->refs))
		irq_work_queue(&pool->free_kick);
}

NOKPROBE_SYMBOL(kretprobe_pool_put_slow);

/*
 * An instance went into an empty cache while the pool is above its floor.
 * A trim that ran while it was out could not free its chunk, and emptied
 * the caches: without a request now, the chunk would stay until some later
 * put found its cache full, which an idle probe never does.
 */
void kretprobe_pool_put_above_floor(struct kretprobe_pool *pool)
{
	int out = atomic_read(&pool->refs) - 1;

	if (out >= 0 && out * 4 < (int)READ_ONCE(pool->nr) && READ_ONCE(pool->rp))
		kretprobe_pool_kick(pool, KRP_TRIM);
}

NOKPROBE_SYMBOL(kretprobe_pool_put_above_floor);

/* Put the instances of the per-CPU caches back into their chunks. */
static void kretprobe_pool_drain(struct kretprobe_pool *pool)
{
	struct kretprobe_instance *ri;
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		ri = xchg(per_cpu_ptr(pool->cache, cpu), NULL);
		if (ri)
			clear_bit_unlock(ri->index, ri->chunk->map);
	}
}

static void kretprobe_pool_kick_fn(struct irq_work *iw)
{
	struct kretprobe_pool *pool = container_of(iw, struct kretprobe_pool, kick);

	if (test_bit(KRP_GROW, &pool->requests))
		mod_delayed_work(system_highpri_wq, &pool->work, 0);
	else
		queue_delayed_work(system_highpri_wq, &pool->work, KRP_TRIM_DELAY);
}

/* How many instances are out; -1 once the pool is unregistered and idle. */
static int kretprobe_pool_out(struct kretprobe_pool *pool)
{
	return atomic_read(&pool->refs) - 1;
}

static void kretprobe_pool_grow(struct kretprobe_pool *pool)
{
	unsigned int nr = pool->nr;
	struct kretprobe *rp;

	while ((rp = READ_ONCE(pool->rp)) && nr < pool->limit &&
	       kretprobe_pool_out(pool) * 2 >= (int)nr) {
		struct kretprobe_chunk *c;

		c = kretprobe_chunk_new(pool, rp, min(nr, pool->limit - nr),
					GFP_KERNEL | __GFP_NOWARN);
		if (!c)
			break;
		/* The backend's own store of calls in flight grows first. */
		if (arch_kretprobe_grow(rp, c->nr)) {
			kvfree(c);
			break;
		}
		list_add_tail_rcu(&c->node, &pool->chunks);
		nr += c->nr;
		WRITE_ONCE(pool->nr, nr);
	}
}

static void kretprobe_pool_trim(struct kretprobe_pool *pool)
{
	struct kretprobe_chunk *c, *tmp, *base;

	/* A cached instance would keep its chunk from being seized. */
	kretprobe_pool_drain(pool);
	base = list_first_entry(&pool->chunks, struct kretprobe_chunk, node);
	list_for_each_entry_safe_reverse(c, tmp, &pool->chunks, node) {
		if (c == base || kretprobe_pool_out(pool) * 4 >= (int)pool->nr)
			break;
		if (!kretprobe_chunk_seize(c))
			continue;
		list_del_rcu(&c->node);
		WRITE_ONCE(pool->nr, pool->nr - c->nr);
		/* Readers: the hit path, and unwinders of other tasks. */
		kvfree_rcu(c, rcu);
	}
}

/* Grows and trims; one run at a time per pool (a work item never reenters). */
static void kretprobe_pool_work_fn(struct work_struct *w)
{
	struct kretprobe_pool *pool =
		container_of(to_delayed_work(w), struct kretprobe_pool, work);

	if (test_and_clear_bit(KRP_GROW, &pool->requests))
		kretprobe_pool_grow(pool);
	if (test_and_clear_bit(KRP_TRIM, &pool->requests))
		kretprobe_pool_trim(pool);
}

static void kretprobe_pool_free_fn(struct work_struct *w)
{
	struct kretprobe_pool *pool =
		container_of(w, struct kretprobe_pool, free_work);
	struct kretprobe_chunk *c, *tmp;

	/* Nobody can kick any more; let what is in flight finish. */
	irq_work_sync(&pool->kick);
	irq_work_sync(&pool->free_kick);
	cancel_delayed_work_sync(&pool->work);
	list_for_each_entry_safe(c, tmp, &pool->chunks, node)
		kvfree_rcu(c, rcu);
	free_percpu(pool->cache);
	kfree(pool);
}

static void kretprobe_pool_free_kick_fn(struct irq_work *iw)
{
	struct kretprobe_pool *pool =
		container_of(iw, struct kretprobe_pool, free_kick);

	queue_work(system_wq, &pool->free_work);
}

struct kretprobe_pool *kretprobe_pool_new(struct kretprobe *rp)
{
	struct kretprobe_pool *pool;
	struct kretprobe_chunk *c;
	unsigned int floor;

	floor = rp->maxactive;
	pool = kzalloc(sizeof(*pool), GFP_KERNEL);
	if (!pool)
		return NULL;
	pool->cache = alloc_percpu(struct kretprobe_instance *);
	if (!pool->cache) {
		kfree(pool);
		return NULL;
	}
	pool->stride = ALIGN(sizeof(struct kretprobe_instance) + rp->data_size,
			     sizeof(long));
	pool->floor = floor;
	pool->limit = max(floor, min_t(unsigned int, KRETPROBE_POOL_GROW_MAX,
				       KRETPROBE_POOL_BYTES / pool->stride));
	pool->nr = floor;
	atomic_set(&pool->refs, 1);
	INIT_LIST_HEAD(&pool->chunks);
	init_irq_work(&pool->kick, kretprobe_pool_kick_fn);
	init_irq_work(&pool->free_kick, kretprobe_pool_free_kick_fn);
	INIT_DELAYED_WORK(&pool->work, kretprobe_pool_work_fn);
	INIT_WORK(&pool->free_work, kretprobe_pool_free_fn);

	c = kretprobe_chunk_new(pool, rp, floor, GFP_KERNEL);
	if (!c) {
		free_percpu(pool->cache);
		kfree(pool);
		return NULL;
	}
	list_add_tail(&c->node, &pool->chunks);
	pool->rp = rp;
	return pool;
}

void kretprobe_pool_detach(struct kretprobe_pool *pool)
{
	WRITE_ONCE(pool->rp, NULL);
}

void kretprobe_pool_release(struct kretprobe_pool *pool)
{
	/*
	 * A grow that read pool->rp before the detach may still be running:
	 * wait for it, as it may be growing the backend's store, which the
	 * caller frees next.  No hit kicks any more.
	 */
	irq_work_sync(&pool->kick);
	cancel_delayed_work_sync(&pool->work);
	kretprobe_pool_drain(pool);
	if (atomic_dec_and_test(&pool->refs))
		irq_work_queue(&pool->free_kick);
}

/**
 * kretprobe_pool_info() - how big a kretprobe's pool is, and how busy
 * @rp: a registered kretprobe
 * @info: filled in
 *
 * For diagnostics and tests: a snapshot, which may be stale as soon as it
 * is taken.
 *
 * Context: any; @rp must stay registered meanwhile.
 */
void kretprobe_pool_info(struct kretprobe *rp, struct kretprobe_pool_info *info)
{
	struct kretprobe_pool *pool = rp->pool;

	info->out = max(atomic_read(&pool->refs) - 1, 0);
	info->nr = READ_ONCE(pool->nr);
	info->floor = pool->floor;
	info->limit = pool->limit;
}
EXPORT_SYMBOL_GPL(kretprobe_pool_info);
