// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Hit counts, for /sys/kernel/debug/kprobes/stats (debugfs.c).
 *
 * Every site has a per-CPU counter that the hit paths increment once per
 * hit that runs its handlers (kprobe_site_hit(), a per-CPU increment);
 * a read sums the CPUs.  A probe's own count is its site's count over the
 * time the probe was enabled: struct kprobe keeps a mark, updated under
 * kprobe_mutex when the probe is registered, enabled or disabled.
 *
 * Counters come in per-CPU blocks, each twice the size of the one before
 * (64 counters, then 128, ... up to 4096): registering many probes costs
 * a few per-CPU allocations, not one per site, and a few probes cost a
 * few hundred bytes per CPU.  A site gives its counter back after the
 * grace period that ends its hits (from an RCU callback, hence a
 * spinlock); an empty block is freed unless it is the only one with room.
 */

#include <linux/kprobes.h>
#include <linux/kprobes_arch.h>
#include <linux/bitmap.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "internal.h"

#define KPROBE_HITS_FIRST	64
#define KPROBE_HITS_MAX		4096

struct kprobe_hits_block {
	struct list_head	list;	/* on kprobe_hits_free or _full */
	unsigned long __percpu	*count;	/* @size counters */
	unsigned int		size;
	unsigned int		used;	/* counters taken */
	unsigned int		hint;	/* no free counter below it */
	unsigned long		map[];	/* one bit per counter */
};

static DEFINE_SPINLOCK(kprobe_hits_lock);
static LIST_HEAD(kprobe_hits_free);	/* blocks with a counter to spare */
static LIST_HEAD(kprobe_hits_full);
static unsigned int kprobe_hits_next = KPROBE_HITS_FIRST;

/* Take a counter of a block on kprobe_hits_free; kprobe_hits_lock held. */
static void kprobe_hits_take(struct kprobe_site *s)
{
	struct kprobe_hits_block *b;
	unsigned int i;
	int cpu;

	b = list_first_entry(&kprobe_hits_free, struct kprobe_hits_block, list);
	i = find_next_zero_bit(b->map, b->size, b->hint);
	__set_bit(i, b->map);
	b->hint = i + 1;
	if (++b->used == b->size)
		list_move(&b->list, &kprobe_hits_full);
	for_each_possible_cpu(cpu)
		per_cpu(b->count[i], cpu) = 0;
	s->hits = b->count + i;
	s->hits_block = b;
}

static struct kprobe_hits_block *kprobe_hits_block_new(unsigned int size)
{
	struct kprobe_hits_block *b;

	b = kzalloc(struct_size(b, map, BITS_TO_LONGS(size)), GFP_KERNEL);
	if (!b)
		return NULL;
	b->count = __alloc_percpu(size * sizeof(unsigned long),
				  sizeof(unsigned long));
	if (!b->count) {
		kfree(b);
		return NULL;
	}
	b->size = size;
	return b;
}

/**
 * kprobe_site_hits_get() - give a new site its hit counter
 * @s: the site, not yet visible to the hit paths
 *
 * Context: process, may sleep.
 * Return: 0 or -ENOMEM.
 */
int kprobe_site_hits_get(struct kprobe_site *s)
{
	struct kprobe_hits_block *b;
	unsigned int size;

	spin_lock_irq(&kprobe_hits_lock);
	if (list_empty(&kprobe_hits_free)) {
		size = kprobe_hits_next;
		spin_unlock_irq(&kprobe_hits_lock);
		b = kprobe_hits_block_new(size);
		if (!b)
			return -ENOMEM;
		spin_lock_irq(&kprobe_hits_lock);
		list_add(&b->list, &kprobe_hits_free);
		kprobe_hits_next = min(2 * size, KPROBE_HITS_MAX);
	}
	kprobe_hits_take(s);
	spin_unlock_irq(&kprobe_hits_lock);
	return 0;
}

/**
 * kprobe_site_hits_put() - a site is done with its hit counter
 * @s: the site; no CPU can be on its hit path any more
 *
 * Context: any, including RCU callbacks.
 */
void kprobe_site_hits_put(struct kprobe_site *s)
{
	struct kprobe_hits_block *b = s->hits_block, *dead = NULL;
	unsigned int i;
	unsigned long flags;

	if (!b)
		return;
	i = s->hits - b->count;
	spin_lock_irqsave(&kprobe_hits_lock, flags);
	__clear_bit(i, b->map);
	b->hint = min(b->hint, i);
	if (b->used-- == b->size)
		list_move(&b->list, &kprobe_hits_free);
	/* An empty block goes, unless no other block has room. */
	if (!b->used && !list_is_singular(&kprobe_hits_free)) {
		list_del(&b->list);
		dead = b;
	}
	spin_unlock_irqrestore(&kprobe_hits_lock, flags);
	s->hits = NULL;
	s->hits_block = NULL;
	if (dead) {
		free_percpu(dead->count);
		kfree(dead);
	}
}

/* The hits of @s so far, summed over the CPUs. */
unsigned long kprobe_site_hits(struct kprobe_site *s)
{
	unsigned long sum = 0;
	int cpu;

	if (!s->hits)
		return 0;
	for_each_possible_cpu(cpu)
		sum += READ_ONCE(*per_cpu_ptr(s->hits, cpu));
	return sum;
}

/* The hits of @p while it was enabled; kprobe_mutex held. */
unsigned long kprobe_hits(struct kprobe *p)
{
	if (kprobe_disabled(p) || !p->site)
		return p->hits_mark;
	return kprobe_site_hits(p->site) - p->hits_mark;
}

/*
 * @p is being enabled, or disabled (registration counts as enabling a
 * probe with no hits yet); kprobe_mutex held.  Whichever way it goes, the
 * mark becomes the site's count less the mark: disabling freezes the
 * probe's count, enabling starts it again from there.
 */
void kprobe_hits_toggle(struct kprobe *p)
{
	p->hits_mark = kprobe_site_hits(p->site) - p->hits_mark;
}
