/*
 * devbuf_run: training through the device's partition buffer
 * (lib/kge/train_device_buf.h) as kg-train's bucket driver does it, for
 * tests without the driver's inputs (tests/unit/t_devbuf.c on the CPU
 * backend, tests/gpu/gpu_buf.c on a GPU): triples cut into the P x P
 * buckets of ID-range partitions, then epochs of the order of
 * lib/store/order.h for capacity C, each bucket's positives shuffled per
 * epoch from the seed as the driver shuffles them.
 */
#ifndef KG_TEST_DEVBUF_RUN_H
#define KG_TEST_DEVBUF_RUN_H

#include <stdint.h>
#include <string.h>

#include "compute/backend.h"
#include "core/rng.h"
#include "core/util.h"
#include "kge/train_device_buf.h"
#include "kge/train_impl.h"
#include "store/order.h"

struct devbuf_buckets {
	uint32_t P;
	int64_t *off;		/* P + 1: partition p holds [off[p], off[p+1]) */
	int32_t **pos;		/* P * P buckets of (h, r, t) */
	uint64_t *n;
};

static uint32_t
devbuf_part_of(const struct devbuf_buckets *b, int32_t e)
{
	uint32_t p = 0;

	while (e >= b->off[p + 1])
		p++;
	return p;
}

/* Cut the n triples hrt over E entities into P equal ID ranges. */
static void
devbuf_cut(struct devbuf_buckets *b, uint32_t P, uint64_t E,
    const int32_t *hrt, uint64_t n)
{
	uint64_t i, *cap;
	uint32_t p, k;

	b->P = P;
	b->off = kg_xmallocarray(P + 1, sizeof(*b->off));
	b->pos = kg_xcalloc((size_t)P * P, sizeof(*b->pos));
	b->n = kg_xcalloc((size_t)P * P, sizeof(*b->n));
	cap = kg_xcalloc((size_t)P * P, sizeof(*cap));
	for (p = 0; p <= P; p++)
		b->off[p] = (int64_t)(E * p / P);
	for (i = 0; i < n; i++) {
		const int32_t *t = hrt + 3 * i;

		k = devbuf_part_of(b, t[0]) * P + devbuf_part_of(b, t[2]);
		if (b->n[k] == cap[k]) {
			cap[k] = cap[k] ? 2 * cap[k] : 64;
			b->pos[k] = kg_xreallocarray(b->pos[k], 3 * cap[k],
			    sizeof(int32_t));
		}
		memcpy(b->pos[k] + 3 * b->n[k]++, t, 3 * sizeof(int32_t));
	}
	free(cap);
}

static void
devbuf_shuffle(const struct devbuf_buckets *b, uint64_t seed, uint32_t epoch,
    uint32_t k)
{
	int32_t *x = b->pos[k], t[3];
	uint64_t i, j;
	struct kg_rng rng;

	kg_rng_stream(&rng, seed, KG_STREAM_BUCKET_SHUFFLE, epoch, k / b->P,
	    k % b->P, 0);
	for (i = b->n[k]; i > 1; i--) {
		j = kg_rng_below(&rng, i);
		memcpy(t, x + 3 * (i - 1), sizeof(t));
		memcpy(x + 3 * (i - 1), x + 3 * j, sizeof(t));
		memcpy(x + 3 * j, t, sizeof(t));
	}
}

/*
 * epochs epochs of tr (a trainer over a store of b's partitions, set up
 * with bucket_chunks) in the order for C: on the CPU bucket trainer when
 * be is NULL, else through a device buffer on be opened with flags (its
 * swaps and fills added to *swaps and *fills when not NULL); each epoch
 * loads the trainer's negative pool first, as kg-train's driver does.
 * 0 or -1.
 */
static int
devbuf_train(struct kg_trainer *tr, const struct devbuf_buckets *b,
    struct kg_backend *be, uint32_t C, uint32_t epochs, int flags,
    int shuffle, uint64_t *swaps, uint64_t *fills)
{
	struct kg_dev_buffer *db = NULL;
	struct kg_order o = KG_ORDER_INIT;
	uint32_t *first = kg_xcalloc(C, sizeof(*first)), nfirst = 0, e, s;
	uint64_t n, i, done;
	double loss;
	int rc = 0;

	if (be != NULL && (db = kg_dev_buffer_open(tr, be, C, flags)) == NULL)
		rc = -1;
	for (e = 0; rc == 0 && e < epochs; e++) {
		rc = db != NULL ? kg_dev_buffer_pool_load(db) :
		    kg_trainer_pool_load(tr, NULL, 0);
		if (rc == 0)
			rc = kg_order_build(&o, b->P, C, nfirst ? first : NULL,
			    nfirst, tr->o.seed, tr->epoch);
		for (s = 0; rc == 0 && s < o.nstates; s++) {
			const uint32_t *bk = kg_order_buckets(&o, s, &n);

			if (db != NULL && kg_dev_buffer_enter(db, &o, s) < 0)
				rc = -1;
			for (i = 0; rc == 0 && i < n; i++) {
				uint32_t k = bk[i], ph = k / b->P, pt = k % b->P;

				if (shuffle)
					devbuf_shuffle(b, tr->o.seed, tr->epoch,
					    k);
				rc = db != NULL ? kg_dev_buffer_bucket(db, ph,
				    pt, b->pos[k], b->n[k], &loss, &done) :
				    kg_trainer_bucket(tr, ph, pt, b->pos[k],
				    b->n[k], 0, &loss, &done);
			}
		}
		if (rc == 0 && db != NULL)
			rc = kg_dev_buffer_flush(db);
		if (rc == 0) {
			memcpy(first, kg_order_state(&o, o.nstates - 1),
			    o.width * sizeof(*first));
			nfirst = o.width;
		}
		kg_order_release(&o);
		tr->epoch++;
	}
	if (db != NULL && swaps != NULL)
		*swaps += kg_dev_buffer_stats(db)->swaps;
	if (db != NULL && fills != NULL)
		*fills += kg_dev_buffer_stats(db)->fills;
	kg_dev_buffer_free(db);
	free(first);
	return rc;
}

#endif
