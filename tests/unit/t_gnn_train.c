/*
 * t_gnn_train: end-to-end behaviour of GNN training (lib/gnn_train): on
 * a graph where a categorical attribute of the head decides the tail,
 * the attribute encoder beats learned embeddings; mini-batches whose
 * fan-outs cover every neighbour train as the full graph does; training
 * is deterministic and lowers the loss, for both encoders and with
 * adaptive negatives; a run resumed from a checkpoint is bit-identical to
 * an uninterrupted one; the local numbering of the nodes (a rank's part)
 * does not change what is learned, the learned table coming back by
 * global ID; the paper's epoch shares positives exactly and covers the
 * core triples once; its step (blocks, shared negatives) learns; after
 * its first steps a training step allocates nothing (counted by the
 * allocator below).
 */
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eval/eval.h"
#include "gnn/gnn.h"
#include "gnntrain/gnn_train.h"
#include "gnntrain/train_state.h"
#include "io/npy.h"
#include "kge/model.h"
#include "io/outdir.h"
#include "kge/score.h"
#include "test.h"
#include "core/util.h"

/*
 * Every allocation of this program, counted while "counting" is set: the
 * test defines the allocator's entry points over glibc's own (its
 * documented way to replace malloc).  Not under AddressSanitizer, which
 * replaces them itself.
 */
#if defined(__SANITIZE_ADDRESS__)
#define COUNT_ALLOCS 0
#else
#define COUNT_ALLOCS 1
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static atomic_int counting;
static atomic_ulong n_allocs;

static void
count(void)
{
	if (atomic_load(&counting))
		atomic_fetch_add(&n_allocs, 1);
}

void *
malloc(size_t n)
{
	count();
	return __libc_malloc(n);
}

void *
calloc(size_t n, size_t sz)
{
	count();
	return __libc_calloc(n, sz);
}

void *
realloc(void *p, size_t n)
{
	count();
	return __libc_realloc(p, n);
}

int
posix_memalign(void **p, size_t align, size_t n)
{
	count();
	*p = __libc_memalign(align, n);
	return *p != NULL ? 0 : ENOMEM;
}

void *
aligned_alloc(size_t align, size_t n)
{
	count();
	return __libc_memalign(align, n);
}
#endif

enum { K = 4, NREG = 80, NE = K + NREG, NTEST = 20 };

static int32_t train[2 * NREG * 3], test[NTEST * 3];
static uint64_t n_train;
static int64_t off[NE + 1];
static int32_t idx[NE];
static uint8_t has[NE];

/* Hubs 0 .. K-1; entity e >= K has category c(e) and the triple (e, 0,
 * hub c(e)); the first NREG - NTEST regular entities are trained (plus
 * random relation-1 triples among them), the others only tested. */
static void
make_problem(struct kg_features *f)
{
	struct kg_rng r;
	int32_t e;
	uint64_t nt = 0;

	kg_rng_seed(&r, 77, 0);
	n_train = 0;
	off[0] = 0;
	for (e = 0; e < NE; e++) {
		int32_t c = (int32_t)kg_rng_below(&r, K);

		has[e] = e >= K;
		off[e + 1] = off[e] + (e >= K);
		if (e < K)
			continue;
		idx[off[e]] = c;
		if (e < NE - NTEST) {
			int32_t *t = train + 3 * n_train++;

			t[0] = e;
			t[1] = 0;
			t[2] = c;
			t = train + 3 * n_train++;
			t[0] = e;
			t[1] = 1;
			t[2] = K + (int32_t)kg_rng_below(&r, NREG - NTEST);
		} else {
			test[3 * nt] = e;
			test[3 * nt + 1] = 0;
			test[3 * nt + 2] = c;
			nt++;
		}
	}
	memset(f, 0, sizeof(*f));
	f->n = NE;
	f->n_attrs = 1;
	f->attrs = kg_xcalloc(1, sizeof(*f->attrs));
	f->attrs[0].name = kg_xstrdup("category");
	f->attrs[0].width = K + 1;
	f->attrs[0].off = off;
	f->attrs[0].idx = idx;
	f->attrs[0].has = has;
}

static void
base_opts(struct kg_gnn_train_opts *o)
{
	struct kg_gnn_train_opts d = KG_GNN_TRAIN_OPTS_INIT;

	*o = d;
	o->enc.n_layers = 1;
	o->enc.dims[0] = 16;
	o->enc.dims[1] = 16;
	o->enc.n_bases = 2;
	o->enc.n_relations = 2;
	o->enc.n_learned = NE;
	o->enc.dropout = 0.0f;
	o->batch_size = 64;
	o->neg = 8;
	o->lr = 0.02;
	o->epochs = 40;
	o->seed = 3;
	o->quiet = 1;
}

static void
base_problem(struct kg_gnn_problem *p, const struct kg_features *f)
{
	memset(p, 0, sizeof(*p));
	p->n_nodes = NE;
	p->n_relations = 2;
	p->graph_hrt = train;
	p->n_graph = n_train;
	p->core_hrt = train;
	p->n_core = n_train;
	p->n_train_global = n_train;
	p->feat = f;
}

/* Tail MRR of the test triples among all entities. */
static double
test_mrr(const struct kg_gnn_trained *t, const struct kg_features *f)
{
	float *h = kg_gnn_embed(&t->enc, f, NE, train, n_train);
	size_t d = t->dec.dim, rw = t->dec.rel_width, i;
	double mrr = 0.0;
	int32_t c;

	for (i = 0; i < NTEST; i++) {
		const int32_t *q = test + 3 * i;
		float s = kg_model_score(&t->dec, h + q[0] * d,
		    t->rel + q[1] * rw, h + q[2] * d);
		double rank = 1.0;

		for (c = 0; c < NE; c++) {
			float o = kg_model_score(&t->dec, h + q[0] * d,
			    t->rel + q[1] * rw, h + (size_t)c * d);

			if (c != q[2])
				rank += o > s ? 1.0 : o == s ? 0.5 : 0.0;
		}
		mrr += 1.0 / rank;
	}
	free(h);
	return mrr / NTEST;
}

static void
attributes_help(void)
{
	struct kg_features f;
	struct kg_gnn_train_opts o;
	struct kg_gnn_problem p;
	struct kg_gnn_trained a = KG_GNN_TRAINED_INIT;
	struct kg_gnn_trained b = KG_GNN_TRAINED_INIT;
	double ma, mb;

	make_problem(&f);
	base_opts(&o);
	base_problem(&p, &f);
	T_CHECK(kg_gnn_train(&a, &o, &p, NULL) == 0);
	o.enc.learned_only = 1;
	T_CHECK(kg_gnn_train(&b, &o, &p, NULL) == 0);
	ma = test_mrr(&a, &f);
	mb = test_mrr(&b, &f);
	fprintf(stderr, "attributes: MRR %.3f, learned only: MRR %.3f\n",
	    ma, mb);
	T_CHECKF(ma > mb + 0.3, "attributes %.3f vs learned %.3f", ma, mb);
	T_CHECK(ma > 0.8);
	kg_gnn_trained_release(&a);
	kg_gnn_trained_release(&b);
	kg_features_release(&f);
}

/* Fan-outs at least every degree keep every message of the 2-hop
 * neighbourhood, and without dropout consume no random numbers, so
 * mini-batch training follows the full-graph run up to float rounding. */
static void
minibatch_covers_full(void)
{
	struct kg_features f;
	struct kg_gnn_train_opts o;
	struct kg_gnn_problem p;
	struct kg_gnn_trained a = KG_GNN_TRAINED_INIT;
	struct kg_gnn_trained b = KG_GNN_TRAINED_INIT;
	size_t k;
	double diff = 0.0;

	make_problem(&f);
	base_opts(&o);
	o.enc.n_layers = 2;
	o.enc.dims[2] = 8;
	o.epochs = 5;
	base_problem(&p, &f);
	T_CHECK(kg_gnn_train(&a, &o, &p, NULL) == 0);
	o.nfanout = 2;
	o.fanout[0] = 1000;
	o.fanout[1] = 1000;
	T_CHECK(kg_gnn_train(&b, &o, &p, NULL) == 0);
	T_NEAR(a.last_loss, b.last_loss, 1e-3 * a.last_loss);
	for (k = 0; k < a.enc.n_params; k++)
		diff = fmax(diff, fabs(a.enc.w[k] - b.enc.w[k]));
	T_CHECKF(diff < 1e-3, "max weight difference %g", diff);
	/* Small fan-outs sample: a different run that still trains. */
	kg_gnn_trained_release(&b);
	o.fanout[0] = 2;
	o.fanout[1] = 1;
	o.epochs = 20;
	T_CHECK(kg_gnn_train(&b, &o, &p, NULL) == 0);
	T_CHECK(isfinite(b.last_loss) && b.last_loss < 0.6);
	kg_gnn_trained_release(&a);
	kg_gnn_trained_release(&b);
	kg_features_release(&f);
}

static void
train_twice(enum kg_gnn_encoder e, uint32_t cand, float dropout,
    double edrop)
{
	struct kg_features f;
	struct kg_gnn_train_opts o;
	struct kg_gnn_problem p;
	struct kg_gnn_trained a = KG_GNN_TRAINED_INIT;
	struct kg_gnn_trained b = KG_GNN_TRAINED_INIT;
	double first;

	make_problem(&f);
	base_opts(&o);
	o.enc.encoder = e;
	o.enc.n_layers = 2;
	o.enc.dims[2] = 8;
	o.enc.dropout = dropout;
	o.edge_dropout = edrop;
	o.neg_candidates = cand;
	o.epochs = 1;
	base_problem(&p, &f);
	T_CHECK(kg_gnn_train(&a, &o, &p, NULL) == 0);
	first = a.last_loss;
	kg_gnn_trained_release(&a);
	o.epochs = 30;
	T_CHECK(kg_gnn_train(&a, &o, &p, NULL) == 0);
	T_CHECK(kg_gnn_train(&b, &o, &p, NULL) == 0);
	T_CHECK(memcmp(a.enc.w, b.enc.w, a.enc.n_params * sizeof(float)) == 0);
	T_CHECKF(a.last_loss < 0.7 * first, "loss %g after 1 epoch, %g after "
	    "30", first, a.last_loss);
	if (edrop > 0.0) {
		/* Dropping edges must change what the encoder sees. */
		kg_gnn_trained_release(&b);
		o.edge_dropout = 0.0;
		T_CHECK(kg_gnn_train(&b, &o, &p, NULL) == 0);
		T_CHECK(memcmp(a.enc.w, b.enc.w, a.enc.n_params *
		    sizeof(float)) != 0);
	}
	kg_gnn_trained_release(&a);
	kg_gnn_trained_release(&b);
	kg_features_release(&f);
}

static void
rgcn_deterministic_and_learns(void)
{
	train_twice(KG_GNN_RGCN, 0, 0.2f, 0.0);
}

static void
rgcn_edge_dropout(void)
{
	train_twice(KG_GNN_RGCN, 0, 0.2f, 0.3);
}

static void
relgnn_deterministic_and_learns(void)
{
	train_twice(KG_GNN_RELGNN, 0, 0.2f, 0.0);
}

static void
relgnn_adaptive_negatives(void)
{
	train_twice(KG_GNN_RELGNN, 4, 0.0f, 0.0);
}

/* Two epochs, a checkpoint, two more epochs from it: the same bytes as
 * four epochs at once (mini-batches and dropout, so the RNG, the
 * permutation and the cursor all have to come back). */
static void
resume_is_bit_identical(void)
{
	struct kg_features f;
	struct kg_gnn_train_opts o;
	struct kg_gnn_problem p;
	struct kg_gnn_trained a = KG_GNN_TRAINED_INIT;
	struct kg_gnn_trained b = KG_GNN_TRAINED_INIT;
	struct kg_gnn_ckpt ck = { NULL, 0, 1, 0, NULL, NULL, 0, NULL,
	    NULL };
	char tmpl[] = "/tmp/t_gnn_train.XXXXXX", *dir = mkdtemp(tmpl);
	int lo;

	T_CHECK(dir != NULL);
	ck.dir = kg_path_join(dir, "ckpt");
	make_problem(&f);
	for (lo = 0; lo < 2; lo++) {
		base_opts(&o);
		o.enc.n_layers = 2;
		o.enc.dims[2] = 8;
		o.enc.dropout = 0.2f;
		o.enc.learned_only = lo;
		o.edge_dropout = lo ? 0.25 : 0.0;	/* draws too */
		o.nfanout = 2;
		o.fanout[0] = 3;
		o.fanout[1] = 2;
		o.batch_size = 16;
		o.epochs = 4;
		base_problem(&p, &f);
		T_CHECK(kg_gnn_train(&a, &o, &p, NULL) == 0);
		o.epochs = 2;
		o.ckpt = &ck;
		ck.resume = 0;
		T_CHECK(kg_gnn_train(&b, &o, &p, NULL) == 0);
		kg_gnn_trained_release(&b);
		o.epochs = 4;
		ck.resume = 1;
		T_CHECK(kg_gnn_train(&b, &o, &p, NULL) == 0);
		T_CHECK(a.enc.n_params == b.enc.n_params && b.steps == a.steps);
		T_CHECK(memcmp(a.enc.w, b.enc.w, a.enc.n_params *
		    sizeof(float)) == 0);
		T_CHECK(memcmp(a.rel, b.rel, 2 * a.dec.rel_width *
		    sizeof(float)) == 0);
		T_CHECK(a.last_loss == b.last_loss);
		kg_gnn_trained_release(&a);
		kg_gnn_trained_release(&b);
		/* A checkpoint of other dims is refused. */
		o.enc.dims[2] = 4;
		kg_error_mute(1);
		T_CHECK(kg_gnn_train(&b, &o, &p, NULL) < 0);
		kg_error_mute(0);
		T_CHECK(kg_rmtree(ck.dir) == 0);
	}
	rmdir(dir);
	free((char *)ck.dir);
	kg_features_release(&f);
}

/* The same graph numbered the other way round (as a rank's part numbers
 * its nodes): the learned table comes back by global ID and matches the
 * run in global numbering up to the float rounding of sums taken in
 * another order. */
static void
local_numbering(void)
{
	struct kg_features f;
	struct kg_gnn_train_opts o;
	struct kg_gnn_problem p;
	struct kg_gnn_trained a = KG_GNN_TRAINED_INIT;
	struct kg_gnn_trained b = KG_GNN_TRAINED_INIT;
	int32_t *perm_train = kg_xmallocarray(3 * n_train + 3, sizeof(int32_t));
	int32_t gid[NE], frow[NE], pool[NE];
	double diff = 0.0;
	size_t k;
	int32_t e;

	make_problem(&f);
	base_opts(&o);
	o.enc.learned_only = 1;
	o.epochs = 10;
	base_problem(&p, &f);
	for (e = 0; e < NE; e++)
		pool[e] = e;
	p.pool = pool;
	p.n_pool = NE;
	T_CHECK(kg_gnn_train(&a, &o, &p, NULL) == 0);
	/* Local node i is global entity NE - 1 - i. */
	for (e = 0; e < NE; e++) {
		gid[e] = NE - 1 - e;
		frow[e] = NE - 1 - e;
		pool[e] = NE - 1 - e;	/* draws the same entities */
	}
	for (k = 0; k < 3 * n_train; k += 3) {
		perm_train[k] = NE - 1 - train[k];
		perm_train[k + 1] = train[k + 1];
		perm_train[k + 2] = NE - 1 - train[k + 2];
	}
	p.graph_hrt = perm_train;
	p.core_hrt = perm_train;
	p.lrow = gid;
	p.frow = frow;
	T_CHECK(kg_gnn_train(&b, &o, &p, NULL) == 0);
	T_CHECK(a.enc.n_params == b.enc.n_params);
	for (k = 0; k < a.enc.n_params; k++)
		diff = fmax(diff, fabs(a.enc.w[k] - b.enc.w[k]));
	T_CHECKF(diff < 1e-4, "max weight difference %g", diff);
	kg_gnn_trained_release(&a);
	kg_gnn_trained_release(&b);
	free(perm_train);
	kg_features_release(&f);
}


/* The paper's epoch: every rank's share of E in proportion to its core
 * triples, cut into S steps; the shares add up exactly. */
static void
epoch_shares(void)
{
	uint64_t cum[4], E, S, s, e, sum, all;
	struct kg_rng r;
	uint32_t R, k, rk;
	int trial;

	kg_rng_seed(&r, 31, 0);
	for (trial = 0; trial < 200; trial++) {
		R = 1 + (uint32_t)kg_rng_below(&r, 3);
		cum[0] = 0;
		for (k = 0; k < R; k++)
			cum[k + 1] = cum[k] + 1 + kg_rng_below(&r, 100000);
		E = 1 + kg_rng_below(&r, 1u << 20);
		S = 1 + kg_rng_below(&r, 300);
		for (rk = 0, all = 0; rk < R; rk++) {
			double want = (double)E * (double)(cum[rk + 1] -
			    cum[rk]) / (double)cum[R];

			e = kg_gnn_epoch_share(cum, R, rk, E);
			T_CHECK(fabs((double)e - want) <= 1.0);
			for (s = 0, sum = 0; s < S; s++) {
				uint64_t b = kg_gnn_step_share(e, S, s);

				T_CHECK(b <= (e + S - 1) / S);
				sum += b;
			}
			T_CHECK(sum == e);
			all += e;
		}
		T_CHECK(all == E);
	}
}

/* The cursor a checkpoint recorded for rank 0. */
static uint64_t
ckpt_cursor(const char *dir)
{
	struct kg_npy a = KG_NPY_INIT;
	char *path = kg_path_join(dir, "rank-000-sampler.npy");
	uint64_t c = UINT64_MAX;

	if (kg_npy_read_expect(path, KG_DT_U8, 1, &a) == 0 &&
	    a.shape[0] == 5)
		c = ((const uint64_t *)a.data)[4];
	kg_npy_release(&a);
	free(path);
	return c;
}

/* --batches_per_epoch N with N batch = the core triples: one epoch
 * draws the whole permutation once (the cursor comes back to 0), half of
 * it stops half-way; the steps are N. */
static void
paper_epoch_covers_core(void)
{
	struct kg_features f;
	struct kg_gnn_train_opts o;
	struct kg_gnn_problem p;
	struct kg_gnn_trained a = KG_GNN_TRAINED_INIT;
	struct kg_gnn_ckpt ck = { NULL, 0, 1, 0, NULL, NULL, 0, NULL,
	    NULL };
	char tmpl[] = "/tmp/t_gnn_train.XXXXXX", *dir = mkdtemp(tmpl);

	T_CHECK(dir != NULL);
	ck.dir = kg_path_join(dir, "ckpt");
	make_problem(&f);
	base_opts(&o);
	base_problem(&p, &f);
	T_CHECK(n_train % 8 == 0);
	o.batches_per_epoch = 4;
	o.batch_size = (uint32_t)(n_train / 4);
	o.epochs = 1;
	o.ckpt = &ck;
	T_CHECK(kg_gnn_train(&a, &o, &p, NULL) == 0);
	T_CHECK(a.steps == 4);
	T_CHECK(ckpt_cursor(ck.dir) == 0);
	kg_gnn_trained_release(&a);
	o.batch_size /= 2;
	T_CHECK(kg_gnn_train(&a, &o, &p, NULL) == 0);
	T_CHECK(ckpt_cursor(ck.dir) == n_train / 2);
	kg_gnn_trained_release(&a);
	T_CHECK(kg_rmtree(ck.dir) == 0);
	rmdir(dir);
	free((char *)ck.dir);
	kg_features_release(&f);
}

/* The paper's step: fan-outs on blocks, shared negatives (with adaptive
 * selection for RelGNN), the paper's epoch: deterministic, and it learns
 * the attribute task. */
static void
paper_step_learns(void)
{
	static const enum kg_gnn_encoder enc[2] = { KG_GNN_RGCN,
	    KG_GNN_RELGNN };
	struct kg_features f;
	struct kg_gnn_train_opts o;
	struct kg_gnn_problem p;
	struct kg_gnn_trained a = KG_GNN_TRAINED_INIT;
	struct kg_gnn_trained b = KG_GNN_TRAINED_INIT;
	double m;
	int k;

	make_problem(&f);
	for (k = 0; k < 2; k++) {
		base_opts(&o);
		base_problem(&p, &f);
		o.enc.encoder = enc[k];
		o.enc.n_layers = 2;
		o.enc.dims[2] = 8;
		o.enc.dropout = 0.1f;
		o.nfanout = 2;
		o.fanout[0] = 4;
		o.fanout[1] = 3;
		o.blocks = 1;
		o.neg_chunk = 8;
		o.neg_candidates = k ? 2 : 0;
		o.batches_per_epoch = 3;
		o.batch_size = 32;
		o.epochs = 60;
		T_CHECK(kg_gnn_train(&a, &o, &p, NULL) == 0);
		T_CHECK(kg_gnn_train(&b, &o, &p, NULL) == 0);
		T_CHECK(a.steps == 180);
		T_CHECK(memcmp(a.enc.w, b.enc.w, a.enc.n_params *
		    sizeof(float)) == 0);
		m = test_mrr(&a, &f);
		T_CHECKF(m > 0.7, "%s: MRR %.3f", kg_gnn_encoder_name(enc[k]),
		    m);
		kg_gnn_trained_release(&a);
		kg_gnn_trained_release(&b);
	}
	kg_features_release(&f);
}

#if COUNT_ALLOCS
/* Allocations of a whole kg_gnn_train run of max_step steps. */
static unsigned long
allocs_of_run(struct kg_gnn_train_opts *o, const struct kg_gnn_problem *p,
    uint64_t max_step)
{
	struct kg_gnn_trained t = KG_GNN_TRAINED_INIT;
	unsigned long n;
	int rc;

	o->max_step = max_step;
	atomic_store(&n_allocs, 0);
	atomic_store(&counting, 1);
	rc = kg_gnn_train(&t, o, p, NULL);
	atomic_store(&counting, 0);
	n = atomic_load(&n_allocs);
	T_CHECK(rc == 0 && t.steps == max_step);
	kg_gnn_trained_release(&t);
	return n;
}

/* Steps 2 .. 24 of a run allocate nothing: a run of 24 steps allocates
 * what a run of 1 does (the workspace is sized before the first step,
 * from bounds, not grown by the steps that need more).  The epochs must
 * be longer than 24 steps: an epoch's end logs, which allocates. */
static void
check_steady(const char *what, struct kg_gnn_train_opts *o,
    const struct kg_gnn_problem *p)
{
	unsigned long a, b;

	o->epochs = 1000;
	(void)allocs_of_run(o, p, 2);	/* OpenMP's threads, once */
	a = allocs_of_run(o, p, 1);
	b = allocs_of_run(o, p, 24);
	T_CHECKF(a > 0 && a == b, "%s: %lu allocations in 1 step, %lu in 24",
	    what, a, b);
}

/* A random graph of 3000 nodes with hubs, learned embeddings only:
 * bounds of the sampled graphs well below the node count. */
enum { BN = 3000, BM = 20000 };
static int32_t big_hrt[3 * BM];

static void
big_problem(struct kg_gnn_problem *p)
{
	struct kg_rng r;
	uint64_t i;

	kg_rng_seed(&r, 13, 0);
	for (i = 0; i < BM; i++) {
		big_hrt[3 * i] = (int32_t)kg_rng_below(&r,
		    kg_rng_below(&r, 4) == 0 ? 5 : BN);
		big_hrt[3 * i + 1] = (int32_t)kg_rng_below(&r, 2);
		big_hrt[3 * i + 2] = (int32_t)kg_rng_below(&r, BN);
	}
	memset(p, 0, sizeof(*p));
	p->n_nodes = BN;
	p->n_relations = 2;
	p->graph_hrt = big_hrt;
	p->n_graph = BM;
	p->core_hrt = big_hrt;
	p->n_core = BM;
	p->n_train_global = BM;
}

static int64_t big_off[BN + 1];
static int32_t big_idx[3 * BN];
static uint8_t big_has[BN];

/* A multi-valued attribute of 8 values on the big problem's nodes: every
 * third node has none, the others 1 to 3 (so a step's attribute terms
 * vary with the nodes it samples). */
static void
big_features(struct kg_features *f)
{
	struct kg_rng r;
	uint64_t e, j, nv;

	kg_rng_seed(&r, 14, 0);
	big_off[0] = 0;
	for (e = 0; e < BN; e++) {
		nv = e % 3 == 0 ? 0 : 1 + kg_rng_below(&r, 3);
		big_has[e] = nv > 0;
		for (j = 0; j < nv; j++)
			big_idx[big_off[e] + (int64_t)j] =
			    (int32_t)kg_rng_below(&r, 8);
		big_off[e + 1] = big_off[e] + (int64_t)nv;
	}
	memset(f, 0, sizeof(*f));
	f->n = BN;
	f->n_attrs = 1;
	f->attrs = kg_xcalloc(1, sizeof(*f->attrs));
	f->attrs[0].name = kg_xstrdup("tags");
	f->attrs[0].width = 8;
	f->attrs[0].off = big_off;
	f->attrs[0].idx = big_idx;
	f->attrs[0].has = big_has;
}
#endif

static void
steps_allocate_nothing(void)
{
#if COUNT_ALLOCS
	struct kg_features f;
	struct kg_gnn_train_opts o;
	struct kg_gnn_problem p;
	int threads = omp_get_max_threads();

	/* One OpenMP thread makes libgomp allocate a team per parallel
	 * region; two reuse theirs. */
	omp_set_num_threads(2);
	big_problem(&p);
	base_opts(&o);
	o.enc.n_learned = BN;
	o.enc.n_layers = 2;
	o.enc.dims[2] = 8;
	o.batch_size = 8;
	o.nfanout = 2;
	o.fanout[0] = 4;
	o.fanout[1] = 3;
	o.edge_dropout = 0.2;
	o.enc.dropout = 0.1f;
	check_steady("R-GCN, fan-outs, edge dropout, learned rows", &o, &p);
	o.enc.encoder = KG_GNN_RELGNN;
	o.neg_candidates = 2;
	check_steady("RelGNN, fan-outs, adaptive negatives", &o, &p);
	o.blocks = 1;
	o.neg_chunk = 3;
	o.batches_per_epoch = 30;
	check_steady("RelGNN, blocks, shared adaptive negatives, paper "
	    "epoch", &o, &p);
	o.enc.encoder = KG_GNN_RGCN;
	o.neg_candidates = 0;
	check_steady("R-GCN, blocks, shared negatives, paper epoch", &o, &p);
	big_features(&f);
	p.feat = &f;
	check_steady("R-GCN, blocks, shared negatives, attributes", &o, &p);
	kg_features_release(&f);
	make_problem(&f);
	base_opts(&o);
	base_problem(&p, &f);
	o.enc.n_layers = 2;
	o.enc.dims[2] = 8;
	o.enc.decomp = KG_GNN_BLOCK;
	o.batch_size = 4;	/* 30 steps an epoch */
	check_steady("block R-GCN, whole graph, attributes", &o, &p);
	o.enc.decomp = KG_GNN_BASIS;
	o.nfanout = 2;
	o.fanout[0] = 2;
	o.fanout[1] = 2;
	check_steady("R-GCN, fan-outs, attributes", &o, &p);
	kg_features_release(&f);
	omp_set_num_threads(threads);
#else
	T_SKIP("AddressSanitizer owns the allocator");
#endif
}

/* CALL fails and the message it records holds PHRASE (the last message
 * is cleared first, so one left by an earlier call cannot match). */
#define T_REFUSED(call, phrase) do {					\
	kg_error("%s", "");						\
	T_CHECK((call) < 0);						\
	T_CHECKF(strstr(kg_error_last(), (phrase)) != NULL,		\
	    "'%s' lacks '%s'", kg_error_last(), (phrase));		\
} while (0)

/* Bad options are refused with the message that names them (the check
 * writes nothing, so there is no output to look for). */
static void
bad_options(void)
{
	struct kg_gnn_train_opts o;

	base_opts(&o);
	kg_error_mute(1);
	o.decoder = KG_MODEL_RESCAL;
	T_REFUSED(kg_gnn_train_opts_check(&o),
	    "the GNN decoder must be DistMult, TransE or ComplEx, not RESCAL");
	base_opts(&o);
	o.nfanout = 2;		/* one graph layer */
	o.fanout[0] = o.fanout[1] = 3;
	T_REFUSED(kg_gnn_train_opts_check(&o),
	    "--fanout needs one value per graph layer (1), found 2");
	base_opts(&o);
	o.lr = 0.0;
	T_REFUSED(kg_gnn_train_opts_check(&o),
	    "learning rate must be positive");
	base_opts(&o);
	o.edge_dropout = 1.0;
	T_REFUSED(kg_gnn_train_opts_check(&o), "edge dropout must be in [0, 1)");
	kg_error_mute(0);
}

/*
 * The learned rows in a buffered store (their partition file in a
 * folder, the best epoch's rows kept there) train to the bits of the
 * memory store's: validation every epoch with patience, so the best
 * epoch is snapshot, and restored at the end, through the store.
 */
static void
learned_store_kinds(void)
{
	struct kg_features f;
	struct kg_gnn_train_opts o;
	struct kg_gnn_problem p;
	struct kg_gnn_trained a = KG_GNN_TRAINED_INIT;
	struct kg_gnn_trained b = KG_GNN_TRAINED_INIT;
	struct kg_triples sets[2];
	struct kg_filter flt;
	struct kg_gnn_ckpt ck = { .save = 1 };
	char dir[] = "/tmp/t_gnn_learned.XXXXXX";

	T_CHECK(mkdtemp(dir) != NULL);
	make_problem(&f);
	base_opts(&o);
	base_problem(&p, &f);
	o.enc.learned_only = 1;
	o.epochs = 12;
	o.lr = 0.05;
	o.valid_every = 1;
	o.patience = 3;
	sets[0].hrt = train;
	sets[0].n = n_train;
	sets[1].hrt = test;
	sets[1].n = NTEST;
	kg_filter_build(&flt, sets, 2);
	p.valid_hrt = test;
	p.n_valid = NTEST;
	p.filter = &flt;
	T_CHECK(kg_gnn_train(&a, &o, &p, NULL) == 0);
	o.learned_dir = dir;
	T_CHECK(kg_gnn_train(&b, &o, &p, NULL) == 0);
	T_CHECK(a.enc.n_params == b.enc.n_params && a.enc.lw == NULL &&
	    b.enc.lw == NULL);
	T_CHECK(memcmp(a.enc.w, b.enc.w, a.enc.n_params *
	    sizeof(float)) == 0);
	T_CHECK(memcmp(a.rel, b.rel, 2 * a.dec.rel_width *
	    sizeof(float)) == 0);
	T_CHECK(a.best_valid_mrr == b.best_valid_mrr &&
	    a.best_epoch == b.best_epoch);
	fprintf(stderr, "learned stores: best epoch %u of %u run\n",
	    (unsigned)a.best_epoch, (unsigned)a.epochs_run);
	/* The best epoch is not the last: the restore is exercised. */
	T_CHECK(a.best_epoch < a.epochs_run);
	/* Stopped one epoch after the best and resumed from its checkpoint
	 * (the best learned rows through best_params.npy and the store's
	 * snapshot), in the buffered store: the same bits again. */
	ck.dir = kg_path_join(dir, "ckpt");
	o.ckpt = &ck;
	o.epochs = a.best_epoch + 1;
	kg_gnn_trained_release(&b);
	T_CHECK(kg_gnn_train(&b, &o, &p, NULL) == 0);
	kg_gnn_trained_release(&b);
	o.epochs = 12;
	ck.resume = 1;
	T_CHECK(kg_gnn_train(&b, &o, &p, NULL) == 0);
	T_CHECK(memcmp(a.enc.w, b.enc.w, a.enc.n_params *
	    sizeof(float)) == 0);
	T_CHECK(a.best_epoch == b.best_epoch);
	T_CHECK(kg_rmtree(ck.dir) == 0);
	free((char *)ck.dir);
	T_CHECK(rmdir(dir) == 0);
	kg_filter_release(&flt);
	kg_gnn_trained_release(&a);
	kg_gnn_trained_release(&b);
	kg_features_release(&f);
}

int
main(void)
{
	T_RUN(attributes_help);
	T_RUN(minibatch_covers_full);
	T_RUN(rgcn_deterministic_and_learns);
	T_RUN(rgcn_edge_dropout);
	T_RUN(relgnn_deterministic_and_learns);
	T_RUN(relgnn_adaptive_negatives);
	T_RUN(resume_is_bit_identical);
	T_RUN(local_numbering);
	T_RUN(epoch_shares);
	T_RUN(paper_epoch_covers_core);
	T_RUN(paper_step_learns);
	T_RUN(steps_allocate_nothing);
	T_RUN(bad_options);
	T_RUN(learned_store_kinds);
	return T_DONE();
}
