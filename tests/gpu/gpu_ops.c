/*
 * The CUDA backend on a GPU against the CPU backend: random data uploaded
 * to cuda:0 (or $KG_GPU_DEVICE), every operation of backend.h run on both,
 * the GPU's results downloaded and compared within a relative 1e-5 (rank
 * counts exactly).  Sizes that are no multiple of the block (256) and
 * repeated indices for scatter-add.  `make test-gpu` runs it
 * (tests/gpu/run.sh); without a GPU it prints one skip line saying why
 * (a failed test under KG_GPU_REQUIRE: gpu_open.h).
 * KG_GPU_DEVICE=cpu runs the CPU backend against itself: a check of this
 * program's own bookkeeping where there is no GPU.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/test.h"
#include "gpu_open.h"
#include "compute/backend.h"
#include "core/rng.h"
#include "core/util.h"

static struct kg_backend *cpu, *gpu;
static struct kg_rng rng;

static float *
rnd(size_t n, float lo, float hi)
{
	float *x = kg_xmallocarray(n + 1, sizeof(*x));
	size_t i;

	for (i = 0; i < n; i++)
		x[i] = lo + (hi - lo) * (float)kg_rng_uniform(&rng);
	return x;
}

/* A device copy of n bytes of host memory; aborts the case on failure. */
static void *
up(const void *h, size_t bytes)
{
	void *d = kg_be_alloc(gpu, bytes);

	if (d == NULL || kg_be_upload(gpu, d, h, bytes) < 0) {
		fprintf(stderr, "upload of %zu bytes failed\n", bytes);
		exit(1);
	}
	return d;
}

/* Download n floats of dev and compare with ref within 1e-5 relative;
 * frees dev. */
static int
same(void *dev, const float *ref, size_t n, const char *what)
{
	float *h = kg_xmallocarray(n + 1, sizeof(*h));
	size_t i;
	int ok = kg_be_download(gpu, h, dev, n * sizeof(*h)) == 0;

	for (i = 0; ok && i < n; i++)
		if (!(fabsf(h[i] - ref[i]) <= 1e-5f * fmaxf(1.0f,
		    fabsf(ref[i])))) {
			fprintf(stderr, "%s[%zu]: GPU %.9g, CPU %.9g\n", what,
			    i, (double)h[i], (double)ref[i]);
			ok = 0;
		}
	free(h);
	kg_be_free(gpu, dev);
	return ok;
}

/* n floats of two device arrays, bit for bit (both kept). */
static int
same_bits(void *a, void *b, size_t n)
{
	float *ha = kg_xmallocarray(n + 1, sizeof(*ha));
	float *hb = kg_xmallocarray(n + 1, sizeof(*hb));
	int ok = kg_be_download(gpu, ha, a, n * sizeof(*ha)) == 0 &&
	    kg_be_download(gpu, hb, b, n * sizeof(*hb)) == 0 &&
	    memcmp(ha, hb, n * sizeof(*ha)) == 0;

	free(ha);
	free(hb);
	return ok;
}

/* main() returns before the cases when there is no GPU. */
#define NEED_GPU() do { if (gpu == NULL) T_SKIP("no GPU"); } while (0)

static void
test_gemm(void)
{
	size_t m = 37, n = 300, k = 19, batch = 3;
	int ta, tb;

	NEED_GPU();
	for (ta = 0; ta < 2; ta++)
		for (tb = 0; tb < 2; tb++) {
			float *a = rnd(batch * m * k, -1, 1);
			float *b = rnd(batch * k * n, -1, 1);
			float *c = rnd(batch * m * n, -1, 1);
			void *da = up(a, batch * m * k * 4);
			void *db = up(b, batch * k * n * 4);
			void *dc = up(c, batch * m * n * 4);
			size_t lda = ta ? m : k, ldb = tb ? k : n;

			T_CHECK(kg_be_sgemm_batched(cpu, (enum kg_trans)ta,
			    (enum kg_trans)tb, m, n, k, 0.5f, a, lda, m * k, b,
			    ldb, k * n, 0.25f, c, n, m * n, batch) == 0);
			T_CHECK(kg_be_sgemm_batched(gpu, (enum kg_trans)ta,
			    (enum kg_trans)tb, m, n, k, 0.5f, da, lda, m * k, db,
			    ldb, k * n, 0.25f, dc, n, m * n, batch) == 0);
			T_CHECKF(same(dc, c, batch * m * n, "sgemm_batched"),
			    "ta %d tb %d", ta, tb);
			/* One product through kg_be_sgemm. */
			dc = up(c, m * n * 4);
			T_CHECK(kg_be_sgemm(cpu, (enum kg_trans)ta,
			    (enum kg_trans)tb, m, n, k, 1.0f, a, lda, b, ldb,
			    1.0f, c, n) == 0);
			T_CHECK(kg_be_sgemm(gpu, (enum kg_trans)ta,
			    (enum kg_trans)tb, m, n, k, 1.0f, da, lda, db, ldb,
			    1.0f, dc, n) == 0);
			T_CHECK(same(dc, c, m * n, "sgemm"));
			kg_be_free(gpu, da);
			kg_be_free(gpu, db);
			free(a);
			free(b);
			free(c);
		}
}

static void
test_rows(void)
{
	size_t rows = 97, n = 1000, d = 33, i;
	float *tab, *src, *out;
	int64_t *idx;
	void *dtab, *dsrc, *didx, *dout;

	NEED_GPU();
	tab = rnd(rows * d, -1, 1);
	src = rnd(n * d, -1, 1);
	out = rnd(n * d, 0, 0);
	idx = kg_xmallocarray(n, sizeof(*idx));
	for (i = 0; i < n; i++)
		idx[i] = (int64_t)((i * 31 + 7) % rows);	/* repeats */
	dtab = up(tab, rows * d * 4);
	dsrc = up(src, n * d * 4);
	didx = up(idx, n * sizeof(*idx));
	dout = kg_be_alloc(gpu, n * d * 4);
	T_CHECK(kg_be_gather(cpu, n, d, tab, idx, out) == 0);
	T_CHECK(kg_be_gather(gpu, n, d, dtab, didx, dout) == 0);
	T_CHECK(same(dout, out, n * d, "gather"));
	T_CHECK(kg_be_scatter_add(cpu, n, d, src, idx, tab) == 0);
	T_CHECK(kg_be_scatter_add(gpu, n, d, dsrc, didx, dtab) == 0);
	T_CHECK(same(dtab, tab, rows * d, "scatter_add"));
	/* Empty batches do nothing (and touch no pointer). */
	T_CHECK(kg_be_gather(gpu, 0, d, NULL, NULL, NULL) == 0);
	T_CHECK(kg_be_scatter_add(gpu, 0, d, NULL, NULL, NULL) == 0);
	kg_be_free(gpu, dsrc);
	kg_be_free(gpu, didx);
	free(tab);
	free(src);
	free(out);
	free(idx);
}

static void
check_scores(enum kg_kern_sim sim, size_t nq, size_t nc, size_t d)
{
	size_t np = nq < nc ? nq : nc, i;
	float *q = rnd(nq * d, -1, 1), *c = rnd(nc * d, -1, 1);
	float *g = rnd(nq * nc, -1, 1), *out = rnd(nq * nc, 0, 0);
	float *dist = rnd(nq * nc, 0, 0), *gq = rnd(nq * d, 0, 0);
	float *gc = rnd(nc * d, -1, 1);
	float *w = kg_xmallocarray(kg_be_work_size(cpu, sim, nq, nc) + 1, 4);
	void *dq = up(q, nq * d * 4), *dc = up(c, nc * d * 4);
	void *dg = up(g, nq * nc * 4), *dout = kg_be_alloc(gpu, nq * nc * 4);
	void *dout2 = kg_be_alloc(gpu, nq * nc * 4);
	void *ddist = kg_be_alloc(gpu, nq * nc * 4);
	void *dgq = kg_be_alloc(gpu, nq * d * 4), *dgc = up(gc, nc * d * 4);
	void *dw = kg_be_alloc(gpu, (kg_be_work_size(gpu, sim, nq, nc) + 1) *
	    4);

	for (i = 0; i < nq * nc; i += 7)
		g[i] = 0.0f;
	kg_be_upload(gpu, dg, g, nq * nc * 4);
	T_CHECK(kg_be_chunk(cpu, sim, nq, nc, d, 5.0f, q, c, out, dist, w) ==
	    0);
	T_CHECK(kg_be_chunk(gpu, sim, nq, nc, d, 5.0f, dq, dc, dout, ddist,
	    dw) == 0);
	/* The tiles sum in a fixed order: a second run, the same bits. */
	T_CHECK(kg_be_chunk(gpu, sim, nq, nc, d, 5.0f, dq, dc, dout2, ddist,
	    dw) == 0);
	T_CHECKF(same_bits(dout2, dout, nq * nc), "chunk run twice: sim %d, "
	    "%zu x %zu, d %zu", (int)sim, nq, nc, d);
	T_CHECKF(same(dout, out, nq * nc, "chunk"), "sim %d, %zu x %zu, d %zu",
	    (int)sim, nq, nc, d);
	kg_be_free(gpu, dout2);
	T_CHECK(kg_be_chunk_backward(cpu, sim, nq, nc, d, q, c, g, dist, gq,
	    gc, w) == 0);
	T_CHECK(kg_be_chunk_backward(gpu, sim, nq, nc, d, dq, dc, dg, ddist,
	    dgq, dgc, dw) == 0);
	T_CHECKF(same(dgq, gq, nq * d, "chunk gq"), "sim %d, %zu x %zu, d %zu",
	    (int)sim, nq, nc, d);
	T_CHECKF(same(dgc, gc, nc * d, "chunk gc"), "sim %d, %zu x %zu, d %zu",
	    (int)sim, nq, nc, d);
	/* Pairs: the first np queries and candidates. */
	dout = kg_be_alloc(gpu, np * 4);
	dgq = kg_be_alloc(gpu, np * d * 4);
	dgc = up(gc, np * d * 4);
	T_CHECK(kg_be_pairs(cpu, sim, np, d, 5.0f, q, c, out, dist) == 0);
	T_CHECK(kg_be_pairs(gpu, sim, np, d, 5.0f, dq, dc, dout, ddist) == 0);
	T_CHECKF(same(dout, out, np, "pairs"), "sim %d d %zu", (int)sim, d);
	T_CHECK(kg_be_pairs_backward(cpu, sim, np, d, q, c, g, dist, gq, gc) ==
	    0);
	T_CHECK(kg_be_pairs_backward(gpu, sim, np, d, dq, dc, dg, ddist, dgq,
	    dgc) == 0);
	T_CHECKF(same(dgq, gq, np * d, "pairs gq"), "sim %d", (int)sim);
	T_CHECKF(same(dgc, gc, np * d, "pairs gc"), "sim %d", (int)sim);
	kg_be_free(gpu, dq);
	kg_be_free(gpu, dc);
	kg_be_free(gpu, dg);
	kg_be_free(gpu, ddist);
	kg_be_free(gpu, dw);
	free(q);
	free(c);
	free(g);
	free(out);
	free(dist);
	free(gq);
	free(gc);
	free(w);
}

static void
test_scores(void)
{
	static const enum kg_kern_sim sims[] = { KG_KERN_DOT, KG_KERN_L1,
		KG_KERN_L2, KG_KERN_L2_DIFF, KG_KERN_CMOD,
		KG_KERN_CMOD_APPROX };
	static const size_t ds[] = { 2, 34, 400 };
	size_t s, k;

	NEED_GPU();
	for (s = 0; s < KG_ARRAY_LEN(sims); s++)
		for (k = 0; k < KG_ARRAY_LEN(ds); k++)
			check_scores(sims[s], 40, 301, ds[k]);
}

/*
 * The tiled chunk kernels (devops_tile.h's kg_dev_tile_*) on the shapes
 * tests/unit/t_devops_tile.c emulates: partial tiles both ways, d no
 * multiple of the slab, odd d for the complex kinds, nq or nc of 1, and
 * a training chunk and an evaluation block at d = 400.
 */
static void
test_tiles(void)
{
	static const enum kg_kern_sim sims[] = { KG_KERN_L1, KG_KERN_L2,
		KG_KERN_L2_DIFF, KG_KERN_CMOD, KG_KERN_CMOD_APPROX };
	static const struct {
		size_t nq, nc, d;
	} shapes[] = {
		{ 1, 1, 1 }, { 1, 70, 17 }, { 70, 1, 33 }, { 64, 64, 16 },
		{ 65, 129, 40 }, { 130, 67, 101 }, { 200, 200, 400 },
		{ 256, 1024, 400 },
	};
	size_t s, k;

	NEED_GPU();
	for (s = 0; s < KG_ARRAY_LEN(sims); s++)
		for (k = 0; k < KG_ARRAY_LEN(shapes); k++)
			check_scores(sims[s], shapes[k].nq, shapes[k].nc,
			    shapes[k].d);
}

/*
 * TransR's negatives' gradient as lib/kge/train_device.c forms it: one
 * strided-batched GEMM of the shares gP_i M_i (M_i inside relation rows
 * of k + k d floats) and one GEMM of ones^T times them, against the CPU
 * backend's GEMM a query.
 */
static void
test_transr_negatives(void)
{
	size_t len = 37, N = 45, d = 19, k = 11, rw = k + k * d, i;
	float *gP, *rel, *ref, *ones;
	void *dgP, *drel, *dref, *dshare, *dones;

	NEED_GPU();
	gP = rnd(len * N * k, -1, 1);
	rel = rnd(len * rw, -1, 1);
	ref = rnd(N * d, -1, 1);
	ones = rnd(len, 1, 1);
	dgP = up(gP, len * N * k * 4);
	drel = up(rel, len * rw * 4);
	dref = up(ref, N * d * 4);
	dones = up(ones, len * 4);
	dshare = kg_be_alloc(gpu, len * N * d * 4);
	for (i = 0; i < len; i++)
		T_CHECK(kg_be_sgemm(cpu, KG_NO_TRANS, KG_NO_TRANS, N, d, k, 1.0f,
		    gP + i * N * k, k, rel + i * rw + k, d, 1.0f, ref, d) == 0);
	T_CHECK(kg_be_sgemm_batched(gpu, KG_NO_TRANS, KG_NO_TRANS, N, d, k,
	    1.0f, dgP, k, N * k, (float *)drel + k, d, rw, 0.0f, dshare, d,
	    N * d, len) == 0);
	T_CHECK(kg_be_sgemm(gpu, KG_NO_TRANS, KG_NO_TRANS, 1, N * d, len, 1.0f,
	    dones, len, dshare, N * d, 1.0f, dref, N * d) == 0);
	T_CHECK(same(dref, ref, N * d, "transr dC"));
	kg_be_free(gpu, dgP);
	kg_be_free(gpu, drel);
	kg_be_free(gpu, dones);
	kg_be_free(gpu, dshare);
	free(gP);
	free(rel);
	free(ref);
	free(ones);
}

static void
test_losses(void)
{
	size_t rows = 513, n = 64, kind, i;
	int adv, sk;

	NEED_GPU();
	for (kind = 0; kind < 4; kind++)
		for (adv = 0; adv < 2; adv++)
			for (sk = 0; sk < 2; sk++) {
				struct kg_loss l = KG_LOSS_INIT;
				float *pos = rnd(rows, -5, 5);
				float *neg = rnd(rows * n, -5, 5);
				float *gp = rnd(rows, 0, 0);
				float *gn = rnd(rows * n, 0, 0);
				double *ls = kg_xcalloc(rows, sizeof(*ls));
				double *dls = kg_xcalloc(rows, sizeof(*dls));
				uint8_t *skip = kg_xcalloc(rows * n, 1);
				void *dpos, *dneg, *dskip, *dgp, *dgn, *dl;

				l.kind = (enum kg_loss_kind)kind;
				l.adv_temp = adv ? 1.0 : 0.0;
				for (i = 0; i < rows * n; i++)
					skip[i] = i % 5 == 2;
				dpos = up(pos, rows * 4);
				dneg = up(neg, rows * n * 4);
				dskip = up(skip, rows * n);
				dgp = kg_be_alloc(gpu, rows * 4);
				dgn = kg_be_alloc(gpu, rows * n * 4);
				dl = kg_be_alloc(gpu, rows * sizeof(double));
				T_CHECK(kg_be_loss(cpu, &l, rows, n, pos, neg,
				    sk ? skip : NULL, gp, gn, ls) == 0);
				T_CHECK(kg_be_loss(gpu, &l, rows, n, dpos, dneg,
				    sk ? dskip : NULL, dgp, dgn, dl) == 0);
				T_CHECK(kg_be_download(gpu, dls, dl, rows *
				    sizeof(double)) == 0);
				for (i = 0; i < rows; i++)
					T_CHECKF(fabs(dls[i] - ls[i]) <= 1e-5 *
					    fmax(1.0, fabs(ls[i])), "loss %zu "
					    "row %zu: %.9g against %.9g", kind, i,
					    dls[i], ls[i]);
				T_CHECKF(same(dgp, gp, rows, "gpos"), "loss %zu",
				    kind);
				T_CHECKF(same(dgn, gn, rows * n, "gneg"),
				    "loss %zu", kind);
				kg_be_free(gpu, dpos);
				kg_be_free(gpu, dneg);
				kg_be_free(gpu, dskip);
				kg_be_free(gpu, dl);
				free(pos);
				free(neg);
				free(gp);
				free(gn);
				free(ls);
				free(dls);
				free(skip);
			}
}

static void
test_optimisers(void)
{
	size_t rows = 1000, n = 300, d, kind, i;
	int step;

	NEED_GPU();
	/* d 40: row-wise Adagrad a warp a row; d 8: a thread a row. */
	for (kind = 0; kind < 4; kind++) {
		d = kind == 3 ? 8 : 40;
		size_t sw = kind % 3 == 0 ? 1 : kind == 1 ? d : 2 * d + 1;
		float *tab = rnd(rows * d, -1, 1), *st = rnd(rows * sw, 0, 1);
		float *grad = rnd(n * d, -1, 1);
		int64_t *idx = kg_xmallocarray(n, sizeof(*idx));
		struct kg_adam ad = KG_ADAM_INIT;
		void *dtab, *dst, *dgrad, *didx;

		for (i = 0; i < n; i++)
			idx[i] = (int64_t)((i * 7 + 3) % rows);	/* distinct */
		if (kind == 2)
			for (i = 0; i < rows; i++)
				st[i * sw + 2 * d] = (float)(i % 5);
		dtab = up(tab, rows * d * 4);
		dst = up(st, rows * sw * 4);
		dgrad = up(grad, n * d * 4);
		didx = up(idx, n * sizeof(*idx));
		ad.lr = 0.01f;
		for (step = 0; step < 3; step++) {
			if (kind % 3 == 0) {
				T_CHECK(kg_be_adagrad(cpu, n, d, 0.1f, idx, grad,
				    tab, st) == 0);
				T_CHECK(kg_be_adagrad(gpu, n, d, 0.1f, didx, dgrad,
				    dtab, dst) == 0);
			} else if (kind == 1) {
				T_CHECK(kg_be_adagrad_elem(cpu, n, d, 0.1f, idx,
				    grad, tab, st) == 0);
				T_CHECK(kg_be_adagrad_elem(gpu, n, d, 0.1f, didx,
				    dgrad, dtab, dst) == 0);
			} else {
				T_CHECK(kg_be_adam(cpu, n, d, &ad, idx, grad, tab,
				    st) == 0);
				T_CHECK(kg_be_adam(gpu, n, d, &ad, didx, dgrad,
				    dtab, dst) == 0);
			}
		}
		T_CHECKF(same(dtab, tab, rows * d, "table"), "optimiser %zu",
		    kind);
		T_CHECKF(same(dst, st, rows * sw, "state"), "optimiser %zu",
		    kind);
		kg_be_free(gpu, dgrad);
		kg_be_free(gpu, didx);
		free(tab);
		free(st);
		free(grad);
		free(idx);
	}
}

static void
test_regularise(void)
{
	size_t n = 100003;
	unsigned p;

	NEED_GPU();
	for (p = 2; p <= 3; p++) {
		float *x = rnd(n, -2, 2), *g = rnd(n, -1, 1);
		void *dx = up(x, n * 4), *dg = up(g, n * 4);
		double v = 0.0, dv = 0.0;
		void *dval = up(&dv, sizeof(dv));

		T_CHECK(kg_be_regularise(cpu, n, x, g, 1e-3, p, 0.5, &v) == 0);
		T_CHECK(kg_be_regularise(gpu, n, dx, dg, 1e-3, p, 0.5, dval) ==
		    0);
		T_CHECK(kg_be_download(gpu, &dv, dval, sizeof(dv)) == 0);
		T_NEAR(dv, v, 1e-5 * fabs(v));
		T_CHECK(same(dg, g, n, "regulariser gradient"));
		kg_be_free(gpu, dx);
		kg_be_free(gpu, dval);
		free(x);
		free(g);
	}
}

/* The launches counted on be since the last reset. */
static uint64_t
launches(struct kg_backend *be)
{
	return kg_backend_counts(be).launches;
}

/* The fused regulariser (one launch over row sets, per-block sums)
 * against the CPU backend's one call a set. */
static void
test_regularise_sets(void)
{
	static const size_t m[4] = { 100003, 257, 0, 31 };
	struct kg_dev_regsets rs, drs;
	float *x[4], *g[4];
	void *dx[4], *dg[4], *dval;
	double v = 0.5, dv = 0.5;
	unsigned k, p;

	NEED_GPU();
	for (p = 2; p <= 3; p++) {
		memset(&rs, 0, sizeof(rs));
		memset(&drs, 0, sizeof(drs));
		rs.nsets = drs.nsets = 4;
		for (k = 0; k < 4; k++) {
			x[k] = rnd(m[k], -2, 2);
			g[k] = rnd(m[k], -1, 1);
			dx[k] = up(x[k], m[k] * 4 + 4);
			dg[k] = up(g[k], m[k] * 4 + 4);
			rs.x[k] = x[k];
			rs.g[k] = g[k];
			rs.n[k] = drs.n[k] = m[k];
			drs.x[k] = dx[k];
			drs.g[k] = dg[k];
		}
		v = dv = 0.5;
		dval = up(&dv, sizeof(dv));
		kg_backend_counts_reset(gpu);
		T_CHECK(kg_be_regularise_sets(cpu, &rs, 1e-3, p, 0.5, &v) == 0);
		T_CHECK(kg_be_regularise_sets(gpu, &drs, 1e-3, p, 0.5, dval) ==
		    0);
		T_CHECK(launches(gpu) == 1);
		T_CHECK(kg_be_download(gpu, &dv, dval, sizeof(dv)) == 0);
		T_CHECKF(fabs(dv - v) <= 1e-9 * fabs(v), "p %u: %.17g against "
		    "%.17g", p, dv, v);
		for (k = 0; k < 4; k++) {
			T_CHECKF(same(dg[k], g[k], m[k], "set gradient"),
			    "p %u set %u", p, k);
			kg_be_free(gpu, dx[k]);
			free(x[k]);
			free(g[k]);
		}
		kg_be_free(gpu, dval);
	}
}

/* Gathers and scatter-adds over three row sets (one empty, repeated
 * indices), one launch each, against the CPU backend's. */
static void
test_row_sets(void)
{
	static const size_t ns[3] = { 1000, 0, 257 }, ds[3] = { 400, 8, 33 };
	size_t rows = 300, q, i;
	struct kg_dev_rowsets g, dg, sc, dsc;
	float *tab[3], *out[3];
	int64_t *idx[3];
	void *dtab[3], *dout[3], *didx[3];

	NEED_GPU();
	memset(&g, 0, sizeof(g));
	g.nsets = 3;
	dg = g;
	for (q = 0; q < 3; q++) {
		tab[q] = rnd(rows * ds[q], -1, 1);
		out[q] = rnd(ns[q] * ds[q], 0, 0);
		idx[q] = kg_xmallocarray(ns[q] + 1, sizeof(int64_t));
		for (i = 0; i < ns[q]; i++)
			idx[q][i] = (int64_t)((i * 13 + q) % rows);
		dtab[q] = up(tab[q], rows * ds[q] * 4 + 4);
		dout[q] = up(out[q], ns[q] * ds[q] * 4 + 4);
		didx[q] = up(idx[q], ns[q] * sizeof(int64_t) + 8);
		g.src[q] = tab[q];
		g.idx[q] = idx[q];
		g.dst[q] = out[q];
		dg.src[q] = (const float *)dtab[q];
		dg.idx[q] = (const int64_t *)didx[q];
		dg.dst[q] = (float *)dout[q];
		g.n[q] = dg.n[q] = ns[q];
		g.d[q] = dg.d[q] = ds[q];
	}
	kg_backend_counts_reset(gpu);
	T_CHECK(kg_be_gather_sets(cpu, &g) == 0);
	T_CHECK(kg_be_gather_sets(gpu, &dg) == 0);
	/* Scatter the gathered rows back into the tables. */
	sc = g;
	dsc = dg;
	for (q = 0; q < 3; q++) {
		sc.src[q] = out[q];
		sc.dst[q] = tab[q];
		dsc.src[q] = (const float *)dout[q];
		dsc.dst[q] = (float *)dtab[q];
	}
	T_CHECK(kg_be_scatter_add_sets(cpu, &sc) == 0);
	T_CHECK(kg_be_scatter_add_sets(gpu, &dsc) == 0);
	T_CHECK(launches(gpu) == 2);
	for (q = 0; q < 3; q++) {
		T_CHECKF(same(dout[q], out[q], ns[q] * ds[q], "gather sets"),
		    "set %zu", q);
		T_CHECKF(same(dtab[q], tab[q], rows * ds[q], "scatter sets"),
		    "set %zu", q);
		kg_be_free(gpu, didx[q]);
		free(tab[q]);
		free(out[q]);
		free(idx[q]);
	}
}

/* The fused loss (the loss, its per-block sum, the scaling in one
 * launch; a warp a row for 200 negatives, a thread for 9) against the
 * CPU backend's, over sizes around the block. */
static void
test_loss_sum(void)
{
	static const size_t rs[] = { 1, 200, 255, 257, 1000 };
	static const size_t ns[] = { 9, 200 };	/* thread, warp a row */
	size_t a, kind, i, c;

	NEED_GPU();
	for (a = 0; a < KG_ARRAY_LEN(rs); a++)
		for (c = 0; c < 2 * 4; c++) {
			struct kg_loss l = KG_LOSS_INIT;
			size_t rows = rs[a], n = ns[c / 4];
			float *pos = rnd(rows, -5, 5);
			float *neg = rnd(rows * n, -5, 5);
			float *gp = rnd(rows, 0, 0), *gn = rnd(rows * n, 0, 0);
			double *ls = kg_xcalloc(rows, sizeof(*ls));
			double *dls = kg_xcalloc(rows, sizeof(*dls));
			double acc = 0.25, dacc = 0.25;
			void *dpos = up(pos, rows * 4);
			void *dneg = up(neg, rows * n * 4);
			void *dgp = kg_be_alloc(gpu, rows * 4);
			void *dgn = kg_be_alloc(gpu, rows * n * 4);
			void *dl = kg_be_alloc(gpu, rows * sizeof(double));
			void *dacc_d = up(&dacc, sizeof(dacc));

			kind = c % 4;
			l.kind = (enum kg_loss_kind)kind;
			l.adv_temp = 1.0;
			T_CHECK(kg_be_loss_sum(cpu, &l, rows, n, pos, neg, NULL,
			    0.005f, gp, gn, ls, &acc) == 0);
			T_CHECK(kg_be_loss_sum(gpu, &l, rows, n, dpos, dneg, NULL,
			    0.005f, dgp, dgn, dl, dacc_d) == 0);
			T_CHECK(kg_be_download(gpu, &dacc, dacc_d,
			    sizeof(dacc)) == 0);
			T_CHECK(kg_be_download(gpu, dls, dl, rows *
			    sizeof(double)) == 0);
			T_CHECKF(fabs(dacc - acc) <= 1e-5 * fmax(1.0, fabs(acc)),
			    "loss %zu rows %zu n %zu: sum %.9g against %.9g",
			    kind, rows, n, dacc, acc);
			for (i = 0; i < rows; i++)
				T_CHECK(fabs(dls[i] - ls[i]) <= 1e-5 *
				    fmax(1.0, fabs(ls[i])));
			T_CHECKF(same(dgp, gp, rows, "gpos"), "loss %zu rows %zu",
			    kind, rows);
			T_CHECKF(same(dgn, gn, rows * n, "gneg"), "loss %zu rows "
			    "%zu", kind, rows);
			kg_be_free(gpu, dpos);
			kg_be_free(gpu, dneg);
			kg_be_free(gpu, dl);
			kg_be_free(gpu, dacc_d);
			free(pos);
			free(neg);
			free(gp);
			free(gn);
			free(ls);
			free(dls);
		}
}

/*
 * Index batches as the device trainer streams them: two pinned host
 * buffers taken in turn, each refilled only after the event recorded
 * behind its last ordered upload, the device summing every batch after
 * its copy on the same stream, the host never syncing inside the loop.
 * A host that refilled a buffer before its copy ran would change the
 * sum.
 */
static void
test_ordered_uploads(void)
{
	size_t n = 4096, t, i, rounds = 64;
	double *h[2], ref = 0.0, got = 0.0, zero = 0.0;
	void *d, *acc;
	struct kg_be_counts c;

	NEED_GPU();
	h[0] = kg_be_host_alloc(gpu, n * sizeof(double));
	h[1] = kg_be_host_alloc(gpu, n * sizeof(double));
	d = kg_be_alloc(gpu, n * sizeof(double));
	acc = up(&zero, sizeof(zero));
	T_CHECK(h[0] != NULL && h[1] != NULL && d != NULL);
	if (h[0] == NULL || h[1] == NULL || d == NULL)
		return;
	kg_backend_counts_reset(gpu);
	for (t = 0; t < rounds; t++) {
		unsigned b = (unsigned)(t & 1);

		T_CHECK(kg_be_event_wait(gpu, b) == 0);
		for (i = 0; i < n; i++) {
			h[b][i] = (double)(t + 1) + (double)i / 1024.0;
			ref += h[b][i];
		}
		T_CHECK(kg_be_upload_ordered(gpu, d, h[b], n *
		    sizeof(double)) == 0);
		T_CHECK(kg_be_event_record(gpu, b) == 0);
		/* Work long enough that the host runs ahead of the device. */
		T_CHECK(kg_be_dsum(gpu, n, d, acc) == 0);
		T_CHECK(kg_be_dsum(gpu, n, d, acc) == 0);
	}
	c = kg_backend_counts(gpu);
	T_CHECKF(c.syncs == 0 && c.waits == rounds && c.copies == rounds &&
	    c.launches == 2 * rounds, "counts %llu/%llu/%llu/%llu",
	    (unsigned long long)c.launches, (unsigned long long)c.copies,
	    (unsigned long long)c.syncs, (unsigned long long)c.waits);
	T_CHECK(kg_be_download(gpu, &got, acc, sizeof(got)) == 0);
	T_CHECKF(fabs(got - 2.0 * ref) <= 1e-12 * 2.0 * ref, "sum %.17g, "
	    "wanted %.17g", got, 2.0 * ref);
	kg_be_free(gpu, d);
	kg_be_free(gpu, acc);
	kg_be_host_free(gpu, h[0]);
	kg_be_host_free(gpu, h[1]);
}

static void
test_rank_counts(void)
{
	size_t nq = 300, nc = 14541, i, j;
	float *sc, *s;
	int64_t *off, *ex;
	uint64_t *g, *e, *dgh, *deh;
	void *dsc, *ds, *doff, *dex, *dg, *de;

	NEED_GPU();
	sc = kg_xmallocarray(nq * nc, sizeof(*sc));
	s = rnd(nq, 0, 0);
	off = kg_xmallocarray(nq + 1, sizeof(*off));
	ex = kg_xmallocarray(nq * 5, sizeof(*ex));
	g = kg_xcalloc(nq, 8);
	e = kg_xcalloc(nq, 8);
	dgh = kg_xcalloc(nq, 8);
	deh = kg_xcalloc(nq, 8);
	for (i = 0; i < nq * nc; i++)
		sc[i] = (float)kg_rng_below(&rng, 64);	/* ties */
	off[0] = 0;
	for (i = 0; i < nq; i++) {
		s[i] = (float)(i % 64);
		off[i + 1] = off[i];
		for (j = i % 7; j < nc && off[i + 1] - off[i] < 5; j += 2999)
			ex[off[i + 1]++] = (int64_t)j;
	}
	s[5] = NAN;
	dsc = up(sc, nq * nc * 4);
	ds = up(s, nq * 4);
	doff = up(off, (nq + 1) * 8);
	dex = up(ex, (size_t)off[nq] * 8 + 8);
	dg = up(g, nq * 8);
	de = up(e, nq * 8);
	T_CHECK(kg_be_rank_counts(cpu, nq, nc, sc, s, off, ex, g, e) == 0);
	T_CHECK(kg_be_rank_counts(gpu, nq, nc, dsc, ds, doff, dex, dg, de) ==
	    0);
	T_CHECK(kg_be_download(gpu, dgh, dg, nq * 8) == 0);
	T_CHECK(kg_be_download(gpu, deh, de, nq * 8) == 0);
	for (i = 0; i < nq; i++)
		T_CHECKF(dgh[i] == g[i] && deh[i] == e[i], "query %zu: GPU "
		    "%llu %llu, CPU %llu %llu", i, (unsigned long long)dgh[i],
		    (unsigned long long)deh[i], (unsigned long long)g[i],
		    (unsigned long long)e[i]);
	kg_be_free(gpu, dsc);
	kg_be_free(gpu, ds);
	kg_be_free(gpu, doff);
	kg_be_free(gpu, dex);
	kg_be_free(gpu, dg);
	kg_be_free(gpu, de);
	free(sc);
	free(s);
	free(off);
	free(ex);
	free(g);
	free(e);
	free(dgh);
	free(deh);
}

/* TransR's projection, every sign, forward and backward (gx and grel
 * added to, as on the CPU). */
static void
test_transr(void)
{
	static const int signs[] = { 1, -1, 0 };
	size_t n = 301, d = 37, k = 13, rw = k + k * d, t;

	NEED_GPU();
	for (t = 0; t < KG_ARRAY_LEN(signs); t++) {
		float *x = rnd(n * d, -1, 1), *rel = rnd(n * rw, -1, 1);
		float *gy = rnd(n * k, -1, 1), *y = rnd(n * k, 0, 0);
		float *gx = rnd(n * d, -1, 1), *gr = rnd(n * rw, -1, 1);
		void *dx = up(x, n * d * 4), *dr = up(rel, n * rw * 4);
		void *dgy = up(gy, n * k * 4), *dy = up(y, n * k * 4);
		void *dgx = up(gx, n * d * 4), *dgr = up(gr, n * rw * 4);

		T_CHECK(kg_be_transr(cpu, signs[t], n, d, k, x, rel, y) == 0);
		T_CHECK(kg_be_transr(gpu, signs[t], n, d, k, dx, dr, dy) == 0);
		T_CHECKF(same(dy, y, n * k, "transr"), "sign %d", signs[t]);
		T_CHECK(kg_be_transr_backward(cpu, signs[t], n, d, k, x, rel,
		    gy, gx, gr) == 0);
		T_CHECK(kg_be_transr_backward(gpu, signs[t], n, d, k, dx, dr,
		    dgy, dgx, dgr) == 0);
		T_CHECKF(same(dgx, gx, n * d, "transr gx"), "sign %d",
		    signs[t]);
		T_CHECKF(same(dgr, gr, n * rw, "transr grel"), "sign %d",
		    signs[t]);
		kg_be_free(gpu, dx);
		kg_be_free(gpu, dr);
		kg_be_free(gpu, dgy);
		free(x);
		free(rel);
		free(gy);
		free(y);
		free(gx);
		free(gr);
	}
}

static void
test_copies(void)
{
	size_t n = (1u << 20) + 3;
	float *a, *b, *x = rnd(n, -1, 1);
	void *d;

	NEED_GPU();
	a = kg_be_host_alloc(gpu, n * 4);
	b = kg_be_host_alloc(gpu, n * 4);
	d = kg_be_alloc(gpu, n * 4);
	T_CHECK(a != NULL && b != NULL && d != NULL);
	memcpy(a, x, n * 4);
	memset(b, 0, n * 4);
	T_CHECK(kg_be_upload_async(gpu, d, a, n * 4) == 0);
	T_CHECK(kg_be_sync(gpu) == 0);
	T_CHECK(kg_be_download_async(gpu, b, d, n * 4) == 0);
	T_CHECK(kg_be_sync(gpu) == 0);
	T_CHECK(memcmp(b, x, n * 4) == 0);
	T_CHECK(kg_be_zero(gpu, d, n * 4) == 0);
	T_CHECK(kg_be_download(gpu, b, d, n * 4) == 0);
	T_CHECK(b[0] == 0.0f && b[n - 1] == 0.0f);
	kg_be_free(gpu, d);
	kg_be_host_free(gpu, a);
	kg_be_host_free(gpu, b);
	free(x);
}

/*
 * What the host tests cannot show of the CUDA backend: an attention pass
 * over empty sets is a no-op (0 threads, no launch), a failed allocation
 * leaves no error for the next launch, a second backend interleaved with
 * the first (on the last visible GPU: another device where there are
 * two) computes right, and the launches counted equal the CPU backend's
 * for the same calls.
 */
static void
test_device_faults(void)
{
	struct kg_device d2 = { .kind = KG_DEVICE_CUDA, .index = 0 };
	struct kg_backend *g2;
	struct kg_dev_attn at;
	float *x = rnd(512, -1, 1), *q = rnd(64 * 32, -1, 1);
	float *c = rnd(48 * 32, -1, 1), *g = rnd(64 * 48, -1, 1);
	float *gq = rnd(64 * 32, 0, 0), *gc = rnd(48 * 32, 0, 0);
	float *dist = rnd(64 * 48, 0, 0);
	float *work = kg_xmallocarray(kg_be_work_size(cpu, KG_KERN_DOT, 64,
	    48) + kg_be_work_size(cpu, KG_KERN_L2, 64, 48) + 1, sizeof(float));
	void *dx = up(x, 512 * 4), *dq = up(q, sizeof(float) * 64 * 32);
	void *dc = up(c, sizeof(float) * 48 * 32);
	void *dg = up(g, sizeof(float) * 64 * 48);
	void *dgq, *dgc, *ddist, *dwork, *p;
	int pass;

	NEED_GPU();
	ddist = up(dist, sizeof(float) * 64 * 48);
	dwork = kg_be_alloc(gpu, sizeof(float) * (kg_be_work_size(gpu,
	    KG_KERN_DOT, 64, 48) + kg_be_work_size(gpu, KG_KERN_L2, 64, 48) +
	    1));
	memset(&at, 0, sizeof(at));
	at.d = 8;
	kg_backend_counts_reset(gpu);
	for (pass = KG_BE_ATTN_SCORES; pass <= KG_BE_ATTN_BACK_REL; pass++)
		T_CHECK(kg_be_attn(gpu, (enum kg_be_attn_pass)pass, &at, dx,
		    dx) == 0);
	T_CHECK(launches(gpu) == 0);
	/* A petabyte: refused at once, and the next launch is clean (the
	 * CPU backend's allocations stop the program instead). */
	if (kg_backend_device(gpu).kind == KG_DEVICE_CUDA) {
		kg_error_mute(1);
		p = kg_be_alloc(gpu, (size_t)1 << 50);
		T_CHECK(p == NULL);
		p = kg_be_host_alloc(gpu, (size_t)1 << 50);
		T_CHECK(p == NULL);
		kg_error_mute(0);
	}
	T_CHECK(kg_be_scale(cpu, 512, 0.5f, x) == 0);
	T_CHECK(kg_be_scale(gpu, 512, 0.5f, dx) == 0);
	T_CHECK(kg_be_sync(gpu) == 0);
	/* Another backend, interleaved with this one. */
	if (kg_backend_device(gpu).kind == KG_DEVICE_CUDA)
		d2.index = kg_backend_gpu_count() - 1;
	else
		d2 = kg_backend_device(gpu);
	g2 = kg_backend_open(&d2);
	T_CHECK(g2 != NULL);
	if (g2 != NULL) {
		void *y = kg_be_alloc(g2, 512 * 4);

		T_CHECK(y != NULL && kg_be_upload(g2, y, x, 512 * 4) == 0);
		T_CHECK(kg_be_scale(gpu, 512, 2.0f, dx) == 0);
		T_CHECK(kg_be_scale(g2, 512, 1.0f, y) == 0);
		T_CHECK(kg_be_scale(cpu, 512, 2.0f, x) == 0);
		T_CHECK(kg_be_sync(g2) == 0);
		kg_be_free(g2, y);
		kg_backend_free(g2);
	}
	T_CHECK(same(dx, x, 512, "scale after the failed allocations"));
	/* The same calls counted on both backends. */
	dgq = up(gq, sizeof(float) * 64 * 32);
	dgc = up(gc, sizeof(float) * 48 * 32);
	kg_backend_counts_reset(cpu);
	kg_backend_counts_reset(gpu);
	T_CHECK(kg_be_chunk_backward(cpu, KG_KERN_DOT, 64, 48, 32, q, c, g,
	    NULL, gq, gc, work) == 0);
	T_CHECK(kg_be_chunk_backward(gpu, KG_KERN_DOT, 64, 48, 32, dq, dc, dg,
	    NULL, dgq, dgc, dwork) == 0);
	T_CHECK(kg_be_chunk(cpu, KG_KERN_L2, 64, 48, 32, 1.0f, q, c, g, dist,
	    work) == 0);
	T_CHECK(kg_be_chunk(gpu, KG_KERN_L2, 64, 48, 32, 1.0f, dq, dc, dg,
	    ddist, dwork) == 0);
	T_CHECK(kg_be_query_backward(cpu, KG_QFORM_ADD, 0, 48, 32, c, c, c,
	    gc, gc) == 0);
	T_CHECK(kg_be_query_backward(gpu, KG_QFORM_ADD, 0, 48, 32, dc, dc, dc,
	    dgc, dgc) == 0);
	T_CHECK(kg_be_zero(cpu, gq, 64 * 32 * 4) == 0);
	T_CHECK(kg_be_zero(gpu, dgq, 64 * 32 * 4) == 0);
	T_CHECKF(launches(gpu) == launches(cpu) && launches(cpu) == 5,
	    "launches: GPU %llu, CPU %llu, wanted 5",
	    (unsigned long long)launches(gpu),
	    (unsigned long long)launches(cpu));
	T_CHECK(kg_be_sync(gpu) == 0);
	kg_be_free(gpu, dq);
	kg_be_free(gpu, dc);
	kg_be_free(gpu, dg);
	kg_be_free(gpu, dgq);
	kg_be_free(gpu, dgc);
	kg_be_free(gpu, ddist);
	kg_be_free(gpu, dwork);
	free(dist);
	free(x);
	free(q);
	free(c);
	free(g);
	free(gq);
	free(gc);
	free(work);
}

int
main(void)
{
	struct kg_device dc = KG_DEVICE_INIT, dg;
	const char *name = getenv("KG_GPU_DEVICE");

	kg_rng_seed(&rng, 31, 0);
	cpu = kg_backend_open(&dc);
	if (cpu == NULL)
		return 1;
	if (kg_device_parse("KG_GPU_DEVICE", name != NULL ? name : "cuda",
	    &dg) < 0)
		return 1;
	gpu = gpu_open("gpu_ops", &dg);
	if (gpu == NULL) {
		kg_backend_free(cpu);
		return gpu_required();
	}
	fprintf(stderr, "gpu_ops: %s against %s\n",
	    kg_backend_name(gpu), kg_backend_name(cpu));
	T_RUN(test_copies);
	T_RUN(test_gemm);
	T_RUN(test_rows);
	T_RUN(test_scores);
	T_RUN(test_tiles);
	T_RUN(test_losses);
	T_RUN(test_optimisers);
	T_RUN(test_regularise);
	T_RUN(test_regularise_sets);
	T_RUN(test_row_sets);
	T_RUN(test_loss_sum);
	T_RUN(test_ordered_uploads);
	T_RUN(test_rank_counts);
	T_RUN(test_transr);
	T_RUN(test_transr_negatives);
	T_RUN(test_device_faults);
	kg_backend_free(gpu);
	kg_backend_free(cpu);
	return T_DONE();
}
