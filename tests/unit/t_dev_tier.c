/*
 * The device tier (lib/store/dev_tier.h) on the CPU backend over a
 * memory store of P = 4 partitions of unequal sizes, capacity C = 2:
 *   - acquire uploads (a fill) the store's rows and state, pins nest, and
 *     a partition beyond C pinned ones is refused while the pinned ones
 *     stay on the device untouched;
 *   - prefetch reads ahead into the spare slot (a swap) once kicked,
 *     evicting the least recently used unpinned partition, a dirty one
 *     copied back into the store, a clean one dropped without a copy;
 *     the copies held back to the next sync (as late as a GPU may run
 *     them) change nothing;
 *   - with the spare slot taken the hint goes to the store below;
 *   - flush writes every dirty partition back and keeps it resident;
 *   - SYNC uploads at prefetch;
 *   - a read that fails in the store below (a truncated partition file
 *     of a buffer store) is reported by acquire, and again by the next
 *     call, and the tier is still freeable.
 */
#include <string.h>
#include <unistd.h>

#include "compute/backend.h"
#include "core/util.h"
#include "store/dev_tier.h"
#include "test.h"

#define P 4
#define DIM 3

static struct kg_backend *cpu;
static const int64_t off[P + 1] = { 0, 5, 9, 16, 20 };

static struct kg_store *
open_mem(void)
{
	struct kg_store_layout l = { 20, DIM, 1, P, off };
	struct kg_store_init in = { KG_INIT_NORMAL, 0.5, 7, KG_STREAM_BUCKET_ENTITY_INIT };

	return kg_store_open_mem(&l, &in);
}

/* Partition p on the device (rows then state) equals the store's. */
static int
same_as_below(struct kg_store *st, const struct kg_dev_part *d, uint32_t p)
{
	const struct kg_store_part *a = kg_store_acquire(st, p);
	float w[16 * DIM], s[16];
	int same;

	if (a == NULL || kg_be_download(cpu, w, d->w, a->rows * DIM *
	    sizeof(float)) < 0 || kg_be_download(cpu, s, d->state, a->rows *
	    sizeof(float)) < 0)
		return 0;
	same = memcmp(w, a->w, a->rows * DIM * sizeof(float)) == 0 &&
	    memcmp(s, a->state, a->rows * sizeof(float)) == 0;
	kg_store_release(st, p, 0);
	return same;
}

/* Add x to every row value of partition p on the device. */
static void
bump(const struct kg_dev_part *d, float x)
{
	float w[16 * DIM];
	uint64_t i;

	kg_be_download(cpu, w, d->w, d->rows * DIM * sizeof(float));
	for (i = 0; i < d->rows * DIM; i++)
		w[i] += x;
	kg_be_upload(cpu, d->w, w, d->rows * DIM * sizeof(float));
}

static float
first_value(struct kg_store *st, uint32_t p)
{
	const struct kg_store_part *a = kg_store_acquire(st, p);
	float v = a->w[0];

	kg_store_release(st, p, 0);
	return v;
}

static void
test_contract(int defer)
{
	struct kg_store *st = open_mem();
	struct kg_dev_tier *t;
	const struct kg_dev_part *a, *b, *c;
	const struct kg_dev_tier_stats *s;
	float v0, v1;
	uint64_t down;

	T_CHECK(st != NULL);
	T_CHECK(kg_dev_tier_open(cpu, st, 0, 0) == NULL);
	T_CHECK(strstr(kg_error_last(), "a device tier of 0 partitions over "
	    "a store of 4") != NULL);
	T_CHECK(kg_dev_tier_open(cpu, st, P + 1, 0) == NULL);
	t = kg_dev_tier_open(cpu, st, 2, 0);
	T_CHECK(t != NULL);
	s = kg_dev_tier_stats(t);
	T_CHECK(kg_backend_cpu_defer_copies(cpu, defer) == 0);
	v0 = first_value(st, 0);
	v1 = first_value(st, 1);
	a = kg_dev_tier_acquire(t, 0);
	b = kg_dev_tier_acquire(t, 1);
	T_CHECK(a != NULL && b != NULL && a->rows == 5 && b->base == 5);
	T_CHECK(same_as_below(st, a, 0) && same_as_below(st, b, 1));
	T_CHECK(s->fills == 2 && s->swaps == 0);
	/* Pins nest; a third partition is refused, the two stay. */
	T_CHECK(kg_dev_tier_acquire(t, 0) == a);
	kg_dev_tier_release(t, 0, 0);
	T_CHECK(kg_dev_tier_acquire(t, 2) == NULL);
	T_CHECK(strstr(kg_error_last(), "partition 2: all 2 partitions of "
	    "the device tier are pinned") != NULL);
	T_CHECK(kg_dev_tier_resident(t, 0) && kg_dev_tier_resident(t, 1));
	T_CHECK(same_as_below(st, a, 0) && same_as_below(st, b, 1));
	/* Read 2 ahead into the spare slot: nothing moves before kick. */
	bump(b, 1.0f);
	kg_dev_tier_prefetch(t, 2);
	T_CHECK(s->swaps == 0);
	T_CHECK(kg_dev_tier_kick(t) == 0 && s->swaps == 1);
	/* 1 leaves, changed: copied back once 3's slot is wanted. */
	kg_dev_tier_release(t, 1, 1);
	c = kg_dev_tier_acquire(t, 2);
	T_CHECK(c != NULL && same_as_below(st, c, 2));
	T_CHECK(s->fills == 2);
	down = s->bytes_down;
	kg_dev_tier_prefetch(t, 3);
	/* The spare slot is taken: the store below gets this hint. */
	kg_dev_tier_prefetch(t, 1);
	T_CHECK(kg_dev_tier_kick(t) == 0);
	T_CHECK(!kg_dev_tier_resident(t, 1) && kg_dev_tier_resident(t, 3));
	T_CHECK(s->bytes_down == down + 4 * (DIM + 1) * sizeof(float));
	T_CHECK(kg_dev_tier_flush(t) == 0);
	T_CHECKF(first_value(st, 1) == v1 + 1.0f, "partition 1 came back as "
	    "%g, %g expected", first_value(st, 1), v1 + 1.0f);
	/* 0 pinned throughout: never evicted. */
	T_CHECK(kg_dev_tier_resident(t, 0) && same_as_below(st, a, 0));
	/* Clean partitions leave without a copy. */
	kg_dev_tier_release(t, 0, 0);
	down = s->bytes_down;
	T_CHECK(kg_dev_tier_acquire(t, 3) != NULL);
	kg_dev_tier_prefetch(t, 1);
	T_CHECK(kg_dev_tier_kick(t) == 0 && kg_dev_tier_flush(t) == 0);
	T_CHECK(!kg_dev_tier_resident(t, 0) && s->bytes_down == down);
	T_CHECK(first_value(st, 0) == v0);
	/* A change, flushed, stays resident and reaches the store. */
	bump(c, 2.0f);
	kg_dev_tier_release(t, 2, 1);
	T_CHECK(kg_dev_tier_flush(t) == 0 && kg_dev_tier_resident(t, 2));
	T_CHECK(kg_dev_tier_acquire(t, 2) == c && same_as_below(st, c, 2));
	kg_dev_tier_release(t, 2, 0);
	kg_dev_tier_release(t, 3, 0);
	T_CHECK(s->evictions == 2);
	kg_backend_cpu_defer_copies(cpu, 0);
	kg_dev_tier_free(t);
	kg_store_free(st);
}

static void
test_now(void)
{
	test_contract(0);
}

static void
test_deferred(void)
{
	test_contract(1);
}

static void
test_sync(void)
{
	struct kg_store *st = open_mem();
	struct kg_dev_tier *t = kg_dev_tier_open(cpu, st, 2, KG_DEV_TIER_SYNC);
	const struct kg_dev_tier_stats *s = kg_dev_tier_stats(t);

	T_CHECK(kg_dev_tier_acquire(t, 0) != NULL &&
	    kg_dev_tier_acquire(t, 1) != NULL);
	kg_dev_tier_prefetch(t, 3);
	T_CHECK(s->swaps == 1 && kg_dev_tier_resident(t, 3));
	kg_dev_tier_release(t, 0, 0);
	kg_dev_tier_release(t, 1, 0);
	kg_dev_tier_free(t);
	kg_store_free(st);
}

/* A buffer store below whose partition 3 comes from a file cut short
 * after its shape was checked. */
static void
test_failure_below(void)
{
	struct kg_store_layout l = { 20, DIM, 1, P, off };
	struct kg_store_init in = { KG_INIT_NORMAL, 0.5, 7, KG_STREAM_BUCKET_ENTITY_INIT };
	char *dir = kg_xstrdup("/tmp/t_dev_tier.XXXXXX");
	char *rows, *state;
	struct kg_store *st;
	struct kg_dev_tier *t;

	T_CHECK(mkdtemp(dir) != NULL);
	rows = kg_path_join(dir, "rows.npy");
	state = kg_path_join(dir, "state.npy");
	st = kg_store_open_buffer(&l, &in, dir, 2);
	T_CHECK(st != NULL);
	T_CHECK(kg_store_save_part(st, 3, rows, state) == 0);
	T_CHECK(kg_store_set_source(st, 3, rows, state) == 0);
	T_CHECK(truncate(rows, 130) == 0);
	t = kg_dev_tier_open(cpu, st, 2, KG_DEV_TIER_SYNC);
	T_CHECK(t != NULL && kg_dev_tier_acquire(t, 0) != NULL);
	T_CHECK(kg_dev_tier_acquire(t, 3) == NULL);
	T_CHECKF(strstr(kg_error_last(), "rows.npy") != NULL, "acquire said "
	    "'%s'", kg_error_last());
	/* Reported again: the tier can only be freed. */
	kg_error_mute(1);
	T_CHECK(kg_dev_tier_acquire(t, 1) == NULL);
	T_CHECK(strstr(kg_error_last(), "rows.npy") != NULL);
	T_CHECK(kg_dev_tier_flush(t) < 0);
	kg_dev_tier_release(t, 0, 0);
	kg_dev_tier_free(t);
	/* A prefetch that fails is reported by the next acquire. */
	t = kg_dev_tier_open(cpu, st, 2, KG_DEV_TIER_SYNC);
	T_CHECK(t != NULL);
	kg_dev_tier_prefetch(t, 3);
	T_CHECK(kg_dev_tier_acquire(t, 0) == NULL);
	T_CHECK(strstr(kg_error_last(), "rows.npy") != NULL);
	kg_dev_tier_free(t);
	kg_store_free(st);
	unlink(rows);
	unlink(state);
	rmdir(dir);
	free(rows);
	free(state);
	free(dir);
}

int
main(void)
{
	struct kg_device d = KG_DEVICE_INIT;

	kg_setprogname("t_dev_tier");
	kg_error_mute(1);
	cpu = kg_backend_open(&d);
	if (cpu == NULL)
		return 1;
	T_RUN(test_now);
	T_RUN(test_deferred);
	T_RUN(test_sync);
	T_RUN(test_failure_below);
	kg_backend_free(cpu);
	return T_DONE();
}
