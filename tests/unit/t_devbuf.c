/*
 * The device engine's partition buffer (its device tier,
 * lib/store/dev_tier.h, pinned in the order's states as kg-train's
 * driver pins it) on the CPU backend, over the bundled UMLS data cut
 * into 4 partitions of ID ranges, the buckets in the order of
 * lib/store/order.h for C = 2:
 *   - against the CPU bucket trainer (kg_trainer_bucket, one thread) over
 *     the same order, without a negative pool and with one of 8 slots a
 *     partition (of about 34 rows: some drawn twice): the same chunks,
 *     negatives and streams, so after two epochs (the pool's gradients
 *     carried over the first one's end) the tables agree within rounding
 *     (a row moved to the wrong slot, a partition read back stale, or a
 *     pool gradient lost or applied twice is off by far more);
 *   - the pipeline (read ahead, copy back behind the first chunk) against
 *     the reference that swaps synchronously at each state, both with the
 *     backend's asynchronous copies deferred to the next sync (as late as
 *     a GPU may run them): the same bits;
 *   - the partitions it uploads: the order's swaps less those it keeps in
 *     the slot to read ahead into, the first state filled once;
 *   - buckets outside the state and bad capacities refused;
 *   - the capacity kg-train derives from --gpu_buffer and
 *     --gpu_mem_budget (kg_dev_tier_capacity).
 */
#include <math.h>
#include <unistd.h>
#include <zlib.h>

#include "compute/backend.h"
#include "kge/engine.h"
#include "store/dev_tier.h"
#include "kge/train_impl.h"
#include "store/order.h"
#include "core/util.h"
#include "test.h"

#include "devbuf_run.h"
#include "umls_fixture.h"

#define P 4
#define C 2
#define EPOCHS 2

static struct kg_backend *cpu;
static uint32_t pool_k;		/* opts()'s neg_pool */

/* UMLS's train triples by bucket (part of head, part of tail). */
static struct devbuf_buckets bk;

static struct kg_train_opts
opts(void)
{
	struct kg_train_opts o = KG_TRAIN_OPTS_INIT;

	o.model = KG_MODEL_COMPLEX;
	o.dim = 32;
	o.batch_size = 128;
	o.neg_sample_size = 16;
	o.threads = 1;
	o.neg_pool = pool_k;
	o.epochs = EPOCHS;
	return o;
}

/* A trainer over a memory store of the 4 partitions; 0 or -1. */
static int
setup(struct kg_trainer *tr, struct kg_store **st)
{
	struct kg_train_opts o = opts();
	struct kg_store_layout l = kg_train_layout(&o, umls.ent.n, P, bk.off);
	struct kg_store_init in = kg_train_init_rule(&o,
	    KG_STREAM_BUCKET_ENTITY_INIT);

	*st = kg_store_open_mem(&l, &in);
	if (*st == NULL || kg_trainer_init_store(tr, &o, *st, umls.rel.n,
	    umls.split[0], umls.n[0], NULL, 0, NULL, 0) < 0)
		return -1;
	tr->bucket_chunks = 1;
	return 0;
}

enum mode { ON_CPU, PIPELINE, SYNC };

/* Train EPOCHS epochs in the order for C on the CPU trainer or the
 * device's buffer, deferring the backend's copies when asked.  0 or -1. */
static int
train(struct kg_trainer *tr, enum mode m, int defer, uint64_t *swaps,
    uint64_t *fills)
{
	struct kg_device d = KG_DEVICE_INIT;

	return devbuf_train(tr, &bk, m == ON_CPU ? NULL : &d, C, EPOCHS,
	    m == SYNC ? KG_DEV_BUFFER_SYNC : 0, 0, defer, swaps, fills);
}

/* Entity rows (and their state) and relation rows of a trainer, in one
 * new array of *n floats. */
static float *
tables(struct kg_trainer *tr, size_t *n)
{
	size_t ne = 0, k = 0, nr = tr->n_rel_rows * tr->model.rel_width;
	float *x;
	uint32_t p;

	for (p = 0; p < P; p++)
		ne += kg_store_part_floats(tr->ents, p);
	x = kg_xmallocarray(ne + nr, sizeof(float));
	for (p = 0; p < P; p++) {
		const struct kg_store_part *a = kg_store_acquire(tr->ents, p);
		size_t f = kg_store_part_floats(tr->ents, p);

		memcpy(x + k, a->w, f * sizeof(float));
		k += f;
		kg_store_release(tr->ents, p, 0);
	}
	memcpy(x + k, tr->rel, nr * sizeof(float));
	*n = ne + nr;
	return x;
}

static double
worst_diff(const float *a, const float *b, size_t n)
{
	double worst = 0.0, x;
	size_t i;

	for (i = 0; i < n; i++) {
		x = fabs((double)a[i] - b[i]) / fmax(1.0, fabs(b[i]));
		worst = x > worst || x != x ? x : worst;
	}
	return worst;
}

/* The order's swaps less the partitions that come back in the state
 * after the one that dropped them (kept in the slot to read ahead
 * into), over an epoch's end too. */
static uint64_t
expected_uploads(struct kg_trainer *tr)
{
	struct kg_order o = KG_ORDER_INIT;
	uint32_t first[C], nfirst = 0, e, s, k, dropped;
	uint64_t up = 0;

	/* The partition the last state dropped stays on the device over
	 * the epoch's end, for the next epoch's second state. */
	dropped = UINT32_MAX;
	for (e = 0; e < EPOCHS; e++) {
		if (kg_order_build(&o, P, C, nfirst ? first : NULL, nfirst,
		    tr->o.seed, e) < 0)
			return 0;
		for (s = 1; s < o.nstates; s++) {
			const uint32_t *a = kg_order_state(&o, s - 1);
			const uint32_t *b = kg_order_state(&o, s);

			up += o.in[s] != dropped;
			dropped = UINT32_MAX;
			for (k = 0; k < C; k++)
				if (a[k] != b[0] && a[k] != b[1])
					dropped = a[k];
		}
		T_CHECK(o.swaps == kg_order_swaps_formula(P, C));
		memcpy(first, kg_order_state(&o, o.nstates - 1), sizeof(first));
		nfirst = C;
		kg_order_release(&o);
	}
	return up;
}

static void
test_against_cpu_and_sync(void)
{
	struct kg_trainer tr[4];
	struct kg_store *st[4] = { NULL, NULL, NULL, NULL };
	float *x[4], *init;
	size_t n[4], k;
	uint64_t swaps[4] = { 0 }, fills[4] = { 0 }, want;
	double moved;

	if (load_umls() < 0)
		T_SKIP("examples/data/umls not readable");
	if (bk.pos == NULL)	/* once: test_with_pool comes again */
		devbuf_cut(&bk, P, umls.ent.n, umls.split[0], umls.n[0]);
	memset(tr, 0, sizeof(tr));
	for (k = 0; k < 4; k++)
		T_CHECK(setup(&tr[k], &st[k]) == 0);
	init = tables(&tr[0], &n[0]);
	free(init);
	/* Fresh partitions are drawn when first acquired: draw them now. */
	init = tables(&tr[0], &n[0]);
	T_CHECK(train(&tr[0], ON_CPU, 0, &swaps[0], &fills[0]) == 0);
	T_CHECK(train(&tr[1], PIPELINE, 0, &swaps[1], &fills[1]) == 0);
	T_CHECK(train(&tr[2], PIPELINE, 1, &swaps[2], &fills[2]) == 0);
	T_CHECK(train(&tr[3], SYNC, 1, &swaps[3], &fills[3]) == 0);
	for (k = 0; k < 4; k++)
		x[k] = tables(&tr[k], &n[k]);
	T_CHECK(n[1] == n[0] && n[2] == n[0] && n[3] == n[0]);
	/* Not vacuous: training moved the tables well past rounding. */
	moved = worst_diff(x[0], init, n[0]);
	T_CHECKF(moved > 0.05, "the CPU run moved the tables by %g", moved);
	T_CHECKF(worst_diff(x[1], x[0], n[0]) < 1e-4,
	    "the device's buffer is %g from the CPU bucket trainer",
	    worst_diff(x[1], x[0], n[0]));
	T_CHECKF(memcmp(x[2], x[3], n[0] * sizeof(float)) == 0,
	    "the pipeline with late copies is %g from the synchronous swaps",
	    worst_diff(x[2], x[3], n[0]));
	T_CHECK(memcmp(x[1], x[2], n[0] * sizeof(float)) == 0);
	/* And so is the model: filtered test MRR as the CPU's. */
	T_CHECKF(fabs(test_mrr(&tr[1]) - test_mrr(&tr[0])) < 1e-3,
	    "test MRR %.4f on the device's buffer, %.4f on the CPU",
	    test_mrr(&tr[1]), test_mrr(&tr[0]));
	want = expected_uploads(&tr[0]);
	T_CHECKF(swaps[1] == want && swaps[2] == want,
	    "%llu swaps, %llu expected", (unsigned long long)swaps[1],
	    (unsigned long long)want);
	/* Kept partitions save uploads, but not all of them. */
	T_CHECK(want < EPOCHS * kg_order_swaps_formula(P, C) && want > 0);
	T_CHECK(fills[1] == C && fills[3] == C);
	free(init);
	for (k = 0; k < 4; k++) {
		free(x[k]);
		kg_trainer_release(&tr[k]);
		kg_store_free(st[k]);
	}
}

/* The same with the negative pool. */
static void
test_with_pool(void)
{
	pool_k = 8;
	test_against_cpu_and_sync();
	pool_k = 0;
}

static void
test_refusals(void)
{
	struct kg_trainer tr;
	struct kg_store *st = NULL;
	struct kg_engine *eng;
	struct kg_device d = KG_DEVICE_INIT;
	struct kg_order o = KG_ORDER_INIT;
	uint8_t on[P] = { 0 };
	uint64_t done;
	double loss;

	if (load_umls() < 0)
		T_SKIP("examples/data/umls not readable");
	memset(&tr, 0, sizeof(tr));
	T_CHECK(setup(&tr, &st) == 0);
	T_CHECK(devbuf_engine(&tr, &d, 1, 0) == NULL);
	T_CHECK(strstr(kg_error_last(), "a device buffer of 1 partitions "
	    "cannot train 4 (it needs 2 to 4)") != NULL);
	T_CHECK(devbuf_engine(&tr, &d, 5, 0) == NULL);
	eng = devbuf_engine(&tr, &d, C, 0);
	T_CHECK(eng != NULL && kg_engine_tier(eng) != NULL);
	T_CHECK(kg_order_build(&o, P, C, NULL, 0, 1, 0) == 0);
	T_CHECK(devbuf_enter(kg_engine_tier(eng), &o, 0, on) == 0);
	{
		const uint32_t *a = kg_order_state(&o, 0);
		uint32_t out = 0;

		while (out == a[0] || out == a[1])
			out++;
		/* A bucket outside the state's C pinned partitions. */
		T_CHECK(kg_engine_bucket(eng, a[0], out, bk.pos[0], 0, 0,
		    &loss, &done) < 0);
		T_CHECK(strstr(kg_error_last(), "all 2 partitions of the "
		    "device tier are pinned") != NULL);
		/* The tier is still usable: the state's own bucket trains. */
		T_CHECK(kg_engine_bucket(eng, a[0], a[1], bk.pos[0], 0, 0,
		    &loss, &done) == 0);
	}
	devbuf_unpin(kg_engine_tier(eng), P, on);
	kg_order_release(&o);
	kg_engine_free(eng);
	kg_trainer_release(&tr);
	kg_store_free(st);
}

static void
test_capacity(void)
{
	struct {
		uint32_t gpu_capacity;
		uint64_t gpu_mem_budget;
	} x = { 0, 0 };
	/* P = 8, the largest 100 rows of 16 floats and 1 of state. */
#define CAP(c) kg_dev_tier_capacity(x.gpu_capacity, x.gpu_mem_budget, 8, \
    100, 16, 1, c)
	uint64_t part = 100 * (16 + 1) * sizeof(float);
	uint32_t c = 0;

	/* 100 rows of 16 floats and 1 of state: 6800 bytes a partition. */
	T_CHECK(CAP(&c) < 0);
	T_CHECK(strstr(kg_error_last(), "needs --gpu_buffer or "
	    "--gpu_mem_budget") != NULL);
	x.gpu_capacity = 2;
	T_CHECK(CAP(&c) == 0 && c == 2);
	x.gpu_capacity = 9;
	T_CHECK(CAP(&c) < 0);
	T_CHECK(strstr(kg_error_last(), "--gpu_buffer 9 is more than the 8 "
	    "partitions") != NULL);
	x.gpu_capacity = 0;
	x.gpu_mem_budget = 3 * part - 1;
	T_CHECK(CAP(&c) < 0);
	T_CHECK(strstr(kg_error_last(), "holds 2 partitions of 6800 bytes; "
	    "the device needs 3") != NULL);
	x.gpu_mem_budget = 3 * part;
	T_CHECK(CAP(&c) == 0 && c == 2);
	x.gpu_mem_budget = 6 * part;
	T_CHECK(CAP(&c) == 0 && c == 5);
	/* The whole table: no slot to read ahead into. */
	x.gpu_mem_budget = 8 * part;
	T_CHECK(CAP(&c) == 0 && c == 8);
	x.gpu_capacity = 3;
	T_CHECK(CAP(&c) == 0 && c == 3);
#undef CAP
}

int
main(void)
{
	struct kg_device d = KG_DEVICE_INIT;

	kg_setprogname("t_devbuf");
	kg_error_mute(1);
	cpu = kg_backend_open(&d);
	if (cpu == NULL)
		return 1;
	T_RUN(test_against_cpu_and_sync);
	T_RUN(test_with_pool);
	T_RUN(test_refusals);
	T_RUN(test_capacity);
	kg_backend_free(cpu);
	return T_DONE();
}
