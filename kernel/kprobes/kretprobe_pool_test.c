// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * KUnit test of the kretprobe instance pools (kretprobe_pool.c), without
 * any probe: a struct kretprobe that is never registered owns the pool,
 * and the test gets and puts instances the way the hit path does.
 */

#include <kunit/test.h>
#include <linux/irq_work.h>
#include <linux/kprobes.h>
#include <linux/workqueue.h>

#include "kretprobe_pool.h"

#define KRPT_FLOOR	4

struct krpt {
	struct kretprobe		rp;
	struct kretprobe_instance	*ri[4 * KRPT_FLOOR];
	unsigned int			n;
};

static int krpt_init(struct kunit *test)
{
	struct krpt *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, t);
	t->rp.maxactive = KRPT_FLOOR;
	t->rp.data_size = 24;
	t->rp.pool = kretprobe_pool_new(&t->rp);
	KUNIT_ASSERT_NOT_NULL(test, t->rp.pool);
	test->priv = t;
	return 0;
}

static void krpt_put_all(struct krpt *t)
{
	preempt_disable();
	while (t->n)
		kretprobe_pool_put(t->ri[--t->n]);
	preempt_enable();
}

static void krpt_exit(struct kunit *test)
{
	struct krpt *t = test->priv;

	krpt_put_all(t);
	kretprobe_pool_detach(t->rp.pool);
	kretprobe_pool_release(t->rp.pool);
}

/* Get @n instances the way kretprobe_enter() does, interrupts off. */
static unsigned int krpt_get(struct krpt *t, unsigned int n)
{
	unsigned long flags;
	unsigned int got = 0;

	local_irq_save(flags);
	while (n-- && t->n < ARRAY_SIZE(t->ri)) {
		struct kretprobe_instance *ri;

		ri = kretprobe_pool_get_cached(t->rp.pool);
		if (!ri)
			ri = kretprobe_pool_get(t->rp.pool);
		if (!ri)
			break;
		t->ri[t->n++] = ri;
		got++;
	}
	local_irq_restore(flags);
	return got;
}

/* Let a grow or trim asked for so far run now. */
static void krpt_settle(struct krpt *t)
{
	irq_work_sync(&t->rp.pool->kick);
	flush_delayed_work(&t->rp.pool->work);
}

static struct kretprobe_pool_info krpt_info(struct krpt *t)
{
	struct kretprobe_pool_info info;

	kretprobe_pool_info(&t->rp, &info);
	return info;
}

/* maxactive instances, distinct, each knowing its pool and owner. */
static void krpt_floor(struct kunit *test)
{
	struct krpt *t = test->priv;
	unsigned int i, j;

	KUNIT_EXPECT_EQ(test, krpt_info(t).nr, KRPT_FLOOR);
	KUNIT_EXPECT_EQ(test, krpt_info(t).floor, KRPT_FLOOR);
	KUNIT_ASSERT_EQ(test, krpt_get(t, KRPT_FLOOR), KRPT_FLOOR);
	KUNIT_EXPECT_EQ(test, krpt_info(t).out, KRPT_FLOOR);
	for (i = 0; i < t->n; i++) {
		KUNIT_EXPECT_PTR_EQ(test, t->ri[i]->pool, t->rp.pool);
		KUNIT_EXPECT_PTR_EQ(test, get_kretprobe(t->ri[i]), &t->rp);
		for (j = 0; j < i; j++)
			KUNIT_EXPECT_PTR_NE(test, t->ri[i], t->ri[j]);
	}
	krpt_put_all(t);
	KUNIT_EXPECT_EQ(test, krpt_info(t).out, 0);
}

/* With interrupts off nothing can grow the pool: one more gets NULL. */
static void krpt_exhausted(struct kunit *test)
{
	struct krpt *t = test->priv;

	KUNIT_EXPECT_EQ(test, krpt_get(t, KRPT_FLOOR + 1), KRPT_FLOOR);
	KUNIT_EXPECT_EQ(test, krpt_info(t).out, KRPT_FLOOR);
}

/* More than half out asks for a chunk; the work item adds it. */
static void krpt_grows(struct kunit *test)
{
	struct krpt *t = test->priv;

	KUNIT_ASSERT_EQ(test, krpt_get(t, KRPT_FLOOR / 2 + 1), KRPT_FLOOR / 2 + 1);
	krpt_settle(t);
	KUNIT_EXPECT_GE(test, krpt_info(t).nr, 2 * KRPT_FLOOR);
	KUNIT_EXPECT_LE(test, krpt_info(t).nr, krpt_info(t).limit);
	/* The new instances can be had at once. */
	KUNIT_EXPECT_EQ(test, krpt_get(t, KRPT_FLOOR), KRPT_FLOOR);
}

/* Once the calls are over, the pool goes back to its floor. */
static void krpt_trims(struct kunit *test)
{
	struct krpt *t = test->priv;

	krpt_get(t, KRPT_FLOOR);
	krpt_settle(t);
	krpt_get(t, KRPT_FLOOR);
	krpt_settle(t);
	KUNIT_EXPECT_GT(test, krpt_info(t).nr, KRPT_FLOOR);
	krpt_put_all(t);
	krpt_settle(t);
	KUNIT_EXPECT_EQ(test, krpt_info(t).nr, KRPT_FLOOR);
	KUNIT_EXPECT_EQ(test, krpt_info(t).out, 0);
}

/* A detached pool takes no instance into the per-CPU caches. */
static void krpt_detached(struct kunit *test)
{
	struct krpt *t = test->priv;

	KUNIT_ASSERT_EQ(test, krpt_get(t, 1), 1);
	kretprobe_pool_detach(t->rp.pool);
	KUNIT_EXPECT_NULL(test, kretprobe_pool_owner(t->rp.pool));
	krpt_put_all(t);
	KUNIT_EXPECT_EQ(test, krpt_info(t).out, 0);
	preempt_disable();
	KUNIT_EXPECT_NULL(test, kretprobe_pool_get_cached(t->rp.pool));
	preempt_enable();
}

static struct kunit_case krpt_cases[] = {
	KUNIT_CASE(krpt_floor),
	KUNIT_CASE(krpt_exhausted),
	KUNIT_CASE(krpt_grows),
	KUNIT_CASE(krpt_trims),
	KUNIT_CASE(krpt_detached),
	{}
};

static struct kunit_suite krpt_suite = {
	.name = "kretprobe_pool",
	.init = krpt_init,
	.exit = krpt_exit,
	.test_cases = krpt_cases,
};

kunit_test_suite(krpt_suite);
