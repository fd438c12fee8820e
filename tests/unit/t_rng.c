/*
 * t_rng: the random streams of core/rng.h.  The shallow trainer once
 * packed (epoch, bucket, chunk) into the bits of one word, and from 17
 * partitions on a bucket ID spilled into the epoch's bits, so two chunks
 * of different epochs drew the same negatives.  Streams now hash every
 * index; these tests enumerate what training at P = 32 uses.
 */
#include <stdint.h>
#include <stdlib.h>

#include "core/rng.h"
#include "core/util.h"
#include "test.h"

#define P 32u
#define EPOCHS 6u
#define CHUNKS 40u

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Number of values that equal their predecessor once sorted. */
static size_t
repeats(uint64_t *v, size_t n)
{
	size_t i, r = 0;

	qsort(v, n, sizeof(*v), cmp_u64);
	for (i = 1; i < n; i++)
		r += v[i] == v[i - 1];
	return r;
}

/* The hand-packed ID of before: epoch << 40 | bucket << 32 | chunk. */
static uint64_t
old_chunk_id(uint64_t e, uint64_t a, uint64_t b, uint64_t c)
{
	return e << 40 | (a * P + b) << 32 | c;
}

/* Every chunk stream of EPOCHS epochs over P x P buckets, and every other
 * stream a P = 32 bucket run draws from: no two are the same. */
static void
t_streams_unique_at_32_parts(void)
{
	size_t n = (size_t)EPOCHS * P * P * CHUNKS + EPOCHS * P * P + 2 * P +
	    EPOCHS + 1, k = 0, oldk = 0;
	uint64_t *id = kg_xmallocarray(n, sizeof(*id));
	uint64_t *old = kg_xmallocarray((size_t)EPOCHS * P * P * CHUNKS,
	    sizeof(*old));
	uint64_t e, a, b, c;

	for (e = 0; e < EPOCHS; e++)
		for (a = 0; a < P; a++)
			for (b = 0; b < P; b++) {
				for (c = 0; c < CHUNKS; c++) {
					id[k++] = kg_stream_id(KG_STREAM_CHUNK,
					    e, a, b, c);
					old[oldk++] = old_chunk_id(e, a, b, c);
				}
				id[k++] = kg_stream_id(
				    KG_STREAM_BUCKET_SHUFFLE, e, a, b, 0);
			}
	for (a = 0; a < P; a++) {
		id[k++] = kg_stream_id(KG_STREAM_BUCKET_ENTITY_INIT, a, 0, 0,
		    0);
		id[k++] = kg_stream_id(KG_STREAM_ENTITY_INIT, a, 0, 0, 0);
	}
	for (e = 0; e < EPOCHS; e++)
		id[k++] = kg_stream_id(KG_STREAM_SHUFFLE, e, 0, 0, 0);
	id[k++] = kg_stream_id(KG_STREAM_RELATION_INIT, 0, 0, 0, 0);
	T_CHECK(k == n);
	T_CHECKF(repeats(id, n) == 0, "%zu repeated stream IDs", repeats(id,
	    n));
	/* The test can see the old bug: the packed IDs repeat at P = 32. */
	T_CHECK(repeats(old, oldk) > 0);
	free(id);
	free(old);
}

/* Streams that differ in one index draw different numbers, and the same
 * stream draws the same ones; the old colliding pair is now apart. */
static void
t_stream_draws(void)
{
	struct kg_rng x, y, z;
	int i, same = 0;

	kg_rng_stream(&x, 7, KG_STREAM_CHUNK, 1, 8, 0, 3);
	kg_rng_stream(&y, 7, KG_STREAM_CHUNK, 1, 8, 0, 3);
	/* (epoch 0, bucket 256 + k) and (epoch 1, bucket k) collided. */
	T_CHECK(old_chunk_id(0, 8, 0, 3) == old_chunk_id(1, 0, 0, 3));
	kg_rng_stream(&z, 7, KG_STREAM_CHUNK, 0, 8, 0, 3);
	for (i = 0; i < 256; i++) {
		uint64_t v = kg_rng_next(&x);

		T_CHECK(v == kg_rng_next(&y));
		same += v == kg_rng_next(&z);
	}
	T_CHECK(same == 0);
	/* Each index and the purpose matter. */
	T_CHECK(kg_stream_id(KG_STREAM_CHUNK, 1, 2, 3, 4) !=
	    kg_stream_id(KG_STREAM_CHUNK, 1, 2, 4, 3));
	T_CHECK(kg_stream_id(KG_STREAM_CHUNK, 0, 0, 0, 0) !=
	    kg_stream_id(KG_STREAM_SHUFFLE, 0, 0, 0, 0));
	T_CHECK(kg_stream_id(KG_STREAM_EXPAND, 1ULL << 40, 0, 0, 0) !=
	    kg_stream_id(KG_STREAM_EXPAND, 0, 1, 0, 0));
}

int
main(void)
{
	T_RUN(t_streams_unique_at_32_parts);
	T_RUN(t_stream_draws);
	return T_DONE();
}
