/*
 * devbuf_run: training through the device engine's partition buffer (a
 * device tier, lib/store/dev_tier.h, under the device engine,
 * lib/kge/engine.h) as kg-train's bucket driver does it, for
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
#include "kge/engine.h"
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

/* Pin state s's partitions in t as the driver does (on[p]: pinned),
 * prefetching what the next two states read.  0 or -1. */
static int
devbuf_enter(struct kg_dev_tier *t, const struct kg_order *o, uint32_t s,
    uint8_t *on)
{
	const uint32_t *in = kg_order_state(o, s);
	uint32_t p, k;

	for (p = 0; p < o->nparts; p++) {
		int keep = 0;

		for (k = 0; k < o->width; k++)
			keep |= in[k] == p;
		if (on[p] && !keep) {
			kg_dev_tier_release(t, p, 0);
			on[p] = 0;
		}
	}
	for (k = 0; k < o->width; k++)
		if (!on[in[k]]) {
			if (kg_dev_tier_acquire(t, in[k]) == NULL)
				return -1;
			on[in[k]] = 1;
		}
	for (k = s + 1; k < o->nstates && k <= s + 2; k++)
		kg_dev_tier_prefetch(t, o->in[k]);
	return 0;
}

/* Release every pin of on[P]. */
static void
devbuf_unpin(struct kg_dev_tier *t, uint32_t P, uint8_t *on)
{
	uint32_t p;

	for (p = 0; p < P; p++)
		if (on[p]) {
			kg_dev_tier_release(t, p, 0);
			on[p] = 0;
		}
}

/* The device engine's buffer place on device d for tr, capacity C, run
 * flags (KG_DEV_BUFFER_SYNC); NULL after kg_error(). */
static struct kg_engine *
devbuf_engine(struct kg_trainer *tr, const struct kg_device *d, uint32_t C,
    int flags)
{
	struct kg_engine_run r = KG_ENGINE_RUN_INIT;

	r.o = &tr->o;
	r.shape = KG_SHAPE_BUFFER;
	r.on_device = 1;
	r.device = *d;
	r.gpu_buffer = 1;
	r.capacity = C;
	r.flags = flags;
	return kg_engine_open(&r, tr);
}

/*
 * epochs epochs of tr (a trainer over a store of b's partitions, set up
 * with bucket_chunks) in the order for C: on the CPU bucket trainer when
 * d is NULL, else through the device engine's buffer on d opened with
 * flags, its backend's asynchronous copies deferred when defer (a CPU
 * backend; its swaps and fills added to *swaps and *fills when not
 * NULL); each epoch loads the trainer's negative pool first, as
 * kg-train's driver does.  0 or -1.
 */
static int
devbuf_train(struct kg_trainer *tr, const struct devbuf_buckets *b,
    const struct kg_device *d, uint32_t C, uint32_t epochs, int flags,
    int shuffle, int defer, uint64_t *swaps, uint64_t *fills)
{
	struct kg_engine *eng = NULL;
	struct kg_dev_tier *t = NULL;
	struct kg_order o = KG_ORDER_INIT;
	uint32_t *first = kg_xcalloc(C, sizeof(*first)), nfirst = 0, e, s;
	uint8_t *on = kg_xcalloc(b->P, sizeof(*on));
	uint64_t n, i, done;
	double loss;
	int rc = 0;

	if (d != NULL) {
		eng = devbuf_engine(tr, d, C, flags);
		t = eng != NULL ? kg_engine_tier(eng) : NULL;
		if (t == NULL || (defer && kg_backend_cpu_defer_copies(
		    kg_engine_backend(eng), 1) < 0))
			rc = -1;
	}
	for (e = 0; rc == 0 && e < epochs; e++) {
		rc = eng != NULL ? kg_engine_pool_load(eng, NULL, 0) :
		    kg_trainer_pool_load(tr, NULL, 0);
		if (rc == 0)
			rc = kg_order_build(&o, b->P, C, nfirst ? first : NULL,
			    nfirst, tr->o.seed, tr->epoch);
		for (s = 0; rc == 0 && s < o.nstates; s++) {
			const uint32_t *bk = kg_order_buckets(&o, s, &n);

			if (t != NULL && devbuf_enter(t, &o, s, on) < 0)
				rc = -1;
			for (i = 0; rc == 0 && i < n; i++) {
				uint32_t k = bk[i], ph = k / b->P, pt = k % b->P;

				if (shuffle)
					devbuf_shuffle(b, tr->o.seed, tr->epoch,
					    k);
				rc = eng != NULL ? kg_engine_bucket(eng, ph,
				    pt, b->pos[k], b->n[k], 0, &loss, &done) :
				    kg_trainer_bucket(tr, ph, pt, b->pos[k],
				    b->n[k], 0, &loss, &done);
			}
		}
		if (t != NULL)
			devbuf_unpin(t, b->P, on);
		if (rc == 0 && eng != NULL)
			rc = kg_engine_download(eng);
		if (rc == 0) {
			memcpy(first, kg_order_state(&o, o.nstates - 1),
			    o.width * sizeof(*first));
			nfirst = o.width;
		}
		kg_order_release(&o);
		tr->epoch++;
	}
	if (t != NULL && swaps != NULL)
		*swaps += kg_dev_tier_stats(t)->swaps;
	if (t != NULL && fills != NULL)
		*fills += kg_dev_tier_stats(t)->fills;
	if (t != NULL)
		devbuf_unpin(t, b->P, on);
	kg_engine_free(eng);
	free(first);
	free(on);
	return rc;
}

#endif
