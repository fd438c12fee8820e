/*
 * The tiled chunk kernels without a GPU (devops_tile.h's kg_dev_tile_*
 * block functions, which the CUDA backend's k_chunk_tile and k_chunk_bwd_tile
 * run): whole blocks emulated phase by phase (devops_tile_emu.h) and
 * compared with the CPU backend (kg_be_chunk, kg_be_chunk_backward)
 * within a relative 1e-5, for every similarity, on shapes with partial
 * tiles both ways, d no multiple of the slab, odd d for the complex
 * kinds, and nq or nc of 1.  The backward also gives the bits of the
 * one-thread-per-element functions it replaces (kg_dev_t_chunk_bwd_q,
 * _c: the same sums in the same order) but for the L2 kinds, whose
 * weight g / dist it forms once a pair, and both give the same bits with
 * each phase's threads run in reverse (no two threads share work within a
 * phase).  Outputs start as NaN (or 7 for the overwritten gq), so an
 * element no thread writes fails; gc is added to, so one written twice
 * fails; guard floats past every output catch writes past the end.
 * Last, TransR's negatives' gradient in the device trainer's two GEMMs
 * against one GEMM a query.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compute/backend.h"
#include "compute/devops_score.h"
#include "compute/devops_tile.h"
#include "core/rng.h"
#include "core/util.h"
#include "devops_emu.h"
#include "devops_tile_emu.h"
#include "test.h"

static const enum kg_kern_sim sims[] = { KG_KERN_DOT, KG_KERN_L1,
	KG_KERN_L2, KG_KERN_L2_DIFF, KG_KERN_CMOD, KG_KERN_CMOD_APPROX };

/* nq x nc pairs of rows of d floats. */
static const struct {
	size_t nq, nc, d;
} shapes[] = {
	{ 1, 1, 1 }, { 1, 70, 17 }, { 70, 1, 33 }, { 5, 37, 2 },
	{ 64, 64, 16 }, { 65, 129, 40 }, { 130, 67, 101 }, { 3, 200, 400 },
};

static struct kg_backend *cpu;

static int
close_rel(const float *a, const float *b, size_t n, const char *what)
{
	return close_tol(a, b, n, 1e-5f, what);
}

/* n floats and the guards after them, bit for bit. */
static int
same_bits(const float *a, const float *b, size_t n)
{
	return memcmp(a, b, (n + GUARD) * sizeof(*a)) == 0;
}

static float *
nans(size_t n)
{
	float *x = kg_xmallocarray(n + GUARD, sizeof(*x));
	size_t i;

	for (i = 0; i < n; i++)
		x[i] = NAN;
	for (i = 0; i < GUARD; i++)
		x[n + i] = POISON;
	return x;
}

static int
all_nan(const float *x, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!isnan(x[i]))
			return 0;
	return 1;
}

static int
is_l2(enum kg_kern_sim sim)
{
	return sim == KG_KERN_L2 || sim == KG_KERN_L2_DIFF;
}

static void
test_tile_forward(void)
{
	struct kg_rng r;
	size_t s, a;

	kg_rng_seed(&r, 61, 0);
	for (s = 0; s < KG_ARRAY_LEN(sims); s++)
		for (a = 0; a < KG_ARRAY_LEN(shapes); a++) {
	enum kg_kern_sim sim = sims[s];
	size_t nq = shapes[a].nq, nc = shapes[a].nc, d = shapes[a].d;
	size_t n = nq * nc;
	float *q = rnd(&r, nq * d, -1, 1), *c = rnd(&r, nc * d, -1, 1);
	float *o1 = nans(n), *d1 = nans(n), *o2 = nans(n), *d2 = nans(n);
	float *o3 = nans(n), *d3 = nans(n);
	float *w = kg_xmallocarray(nq + nc + 1, sizeof(*w));

	T_CHECK(kg_be_chunk(cpu, sim, nq, nc, d, 3.0f, q, c, o1, d1, w) == 0);
	emu_tile_chunk((int)sim, nq, nc, d, 3.0f, q, c, o2, d2, 0);
	emu_tile_chunk((int)sim, nq, nc, d, 3.0f, q, c, o3, d3, 1);
	T_CHECKF(close_rel(o2, o1, n, "tile chunk"), "sim %d, %zu x %zu, d %zu",
	    (int)sim, nq, nc, d);
	if (is_l2(sim))
		T_CHECKF(close_rel(d2, d1, n, "tile dist"), "sim %d, %zu x %zu, "
		    "d %zu", (int)sim, nq, nc, d);
	else	/* dist is the L2 kinds' alone: left as it was. */
		T_CHECK(all_nan(d2, n) && d2[n] == POISON);
	T_CHECKF(same_bits(o3, o2, n) && same_bits(d3, d2, n), "reversed "
	    "threads: sim %d, %zu x %zu, d %zu", (int)sim, nq, nc, d);
	free(q);
	free(c);
	free(o1);
	free(d1);
	free(o2);
	free(d2);
	free(o3);
	free(d3);
	free(w);
		}
}

static void
test_tile_backward(void)
{
	struct kg_rng r;
	size_t s, a, i;

	kg_rng_seed(&r, 62, 0);
	for (s = 0; s < KG_ARRAY_LEN(sims); s++)
		for (a = 0; a < KG_ARRAY_LEN(shapes); a++) {
	enum kg_kern_sim sim = sims[s];
	size_t nq = shapes[a].nq, nc = shapes[a].nc, d = shapes[a].d;
	size_t n = nq * nc;
	float *q = rnd(&r, nq * d, -1, 1), *c = rnd(&r, nc * d, -1, 1);
	float *g = rnd(&r, n, -1, 1), *out = rnd(&r, n, 0, 0);
	float *dist = dup(out, n), *dist2;
	float *gq1 = rnd(&r, nq * d, 7, 7), *gq2 = dup(gq1, nq * d);
	float *gq3 = dup(gq1, nq * d), *gq4 = dup(gq1, nq * d);
	float *gq5 = dup(gq1, nq * d);
	float *gc1 = rnd(&r, nc * d, -1, 1), *gc2 = dup(gc1, nc * d);
	float *gc3 = dup(gc1, nc * d), *gc4 = dup(gc1, nc * d);
	float *w = kg_xmallocarray(nq + nc + 1, sizeof(*w));

	/* Zero entries of g are skipped; candidate 0 shares some elements
	 * with query 0, where L1's gradient is 0. */
	for (i = 1; i < n; i += 5)
		g[i] = 0.0f;
	for (i = 0; i < d; i += 3)
		c[i] = q[i];
	T_CHECK(kg_be_chunk(cpu, sim, nq, nc, d, 3.0f, q, c, out, dist, w) ==
	    0);
	/* The CPU's L2 backward takes dist for scratch: the tiles read a
	 * copy. */
	dist2 = dup(dist, n);
	T_CHECK(kg_be_chunk_backward(cpu, sim, nq, nc, d, q, c, g, dist, gq1,
	    gc1, w) == 0);
	emu_tile_chunk_backward((int)sim, nq, nc, d, q, c, g, dist2, gq2, gc2,
	    0);
	emu_tile_chunk_backward((int)sim, nq, nc, d, q, c, g, dist2, gq3, gc3,
	    1);
	/* Without gc: gq alone, the same bits. */
	emu_tile_chunk_backward((int)sim, nq, nc, d, q, c, g, dist2, gq5, NULL,
	    0);
	EMU(KG_DEV_BLOCK, nq * d, kg_dev_t_chunk_bwd_q, (int)sim, nq, nc, d, q,
	    c, g, dist2, gq4);
	EMU(KG_DEV_BLOCK, nc * d, kg_dev_t_chunk_bwd_c, (int)sim, nq, nc, d, q,
	    c, g, dist2, gc4);
	T_CHECKF(close_rel(gq2, gq1, nq * d, "tile gq"), "sim %d, %zu x %zu, "
	    "d %zu", (int)sim, nq, nc, d);
	T_CHECKF(close_rel(gc2, gc1, nc * d, "tile gc"), "sim %d, %zu x %zu, "
	    "d %zu", (int)sim, nq, nc, d);
	/* The L2 kinds form g / dist once a pair, the thread functions
	 * once an element: their rounding differs. */
	if (!is_l2(sim))
		T_CHECKF(same_bits(gq2, gq4, nq * d) &&
		    same_bits(gc2, gc4, nc * d), "the thread functions' bits: "
		    "sim %d, %zu x %zu, d %zu", (int)sim, nq, nc, d);
	else
		T_CHECKF(close_rel(gq2, gq4, nq * d, "gq against threads") &&
		    close_rel(gc2, gc4, nc * d, "gc against threads"),
		    "sim %d, %zu x %zu, d %zu", (int)sim, nq, nc, d);
	T_CHECKF(same_bits(gq5, gq2, nq * d), "gq without gc: sim %d, %zu x "
	    "%zu, d %zu", (int)sim, nq, nc, d);
	T_CHECKF(same_bits(gq3, gq2, nq * d) && same_bits(gc3, gc2, nc * d),
	    "reversed threads: sim %d, %zu x %zu, d %zu", (int)sim, nq, nc, d);
	free(q);
	free(c);
	free(g);
	free(out);
	free(dist);
	free(dist2);
	free(gq1);
	free(gq2);
	free(gq3);
	free(gq4);
	free(gq5);
	free(gc1);
	free(gc2);
	free(gc3);
	free(gc4);
	free(w);
		}
}

/* The geometry: the grid covers the outputs with whole tiles, the slabs
 * cover the summed dimension, and a CMOD backward of odd d has a column
 * for the last element. */
static void
test_tile_geometry(void)
{
	struct kg_dev_tile a = { KG_KERN_L2, KG_DEV_TILE_GQ, 65, 129, 40, 0.0f,
		NULL, NULL, NULL, NULL, NULL };

	T_CHECK(kg_dev_tile_fwd_gx(a) == 2 && kg_dev_tile_fwd_gy(a) == 3);
	T_CHECK(kg_dev_tile_fwd_slabs(a) == 3);
	T_CHECK(kg_dev_tile_bwd_gx(a) == 2 && kg_dev_tile_bwd_gy(a) == 1);
	T_CHECK(kg_dev_tile_bwd_slabs(a) == 9);
	a.side = KG_DEV_TILE_GC;
	T_CHECK(kg_dev_tile_bwd_gx(a) == 3 && kg_dev_tile_bwd_slabs(a) == 5);
	a.sim = KG_KERN_CMOD;
	a.d = 129;
	T_CHECK(kg_dev_tile_fwd_slabs(a) == 4);
	T_CHECK(kg_dev_tile_bwd_cols(a) == 65 && kg_dev_tile_bwd_gy(a) == 2);
	/* Both sides in one grid: x over the larger; a gq block past gq's
	 * tiles has no work, a gc block there has. */
	a.sim = KG_KERN_L2;
	a.d = 40;
	a.side = KG_DEV_TILE_GQ;
	{
		float gc[1];
		struct kg_dev_tile b = a;

		T_CHECK(kg_dev_tile_bwd_gx2(a, NULL) == 2);
		T_CHECK(kg_dev_tile_bwd_gx2(a, gc) == 3);
		T_CHECK(!kg_dev_tile_bwd_block(&b, 2, 0, 0, gc));
		T_CHECK(kg_dev_tile_bwd_block(&b, 1, 0, 0, gc) &&
		    b.side == KG_DEV_TILE_GQ);
		T_CHECK(kg_dev_tile_bwd_block(&b, 2, 0, 1, gc) &&
		    b.side == KG_DEV_TILE_GC && b.out == gc);
		T_CHECK(!kg_dev_tile_bwd_block(&b, 2, 1, 1, gc));
	}
	T_CHECK(sizeof(struct kg_dev_tile_smem) == 16640);
	T_CHECK(KG_DEV_TILE_THREADS == 256);
}

/*
 * TransR's negatives' gradient as the device trainer forms it
 * (lib/kge/train_device.c's transr_backward): dL/dC = sum_i gP_i M_i by
 * one strided-batched GEMM of the shares (N x d each, M_i inside relation
 * rows of k + k d floats) and one GEMM of ones^T times them, against a
 * GEMM a query added in turn, through the CPU backend, within 1e-5.
 */
static void
test_transr_negatives(void)
{
	static const size_t lens[] = { 1, 7, 33 }, ns[] = { 1, 5, 40 };
	static const size_t ds[] = { 3, 16 }, ks[] = { 2, 9 };
	struct kg_rng r;
	size_t a, b, e, f, i;

	kg_rng_seed(&r, 63, 0);
	for (a = 0; a < KG_ARRAY_LEN(lens); a++)
		for (b = 0; b < KG_ARRAY_LEN(ns); b++)
			for (e = 0; e < KG_ARRAY_LEN(ds); e++)
				for (f = 0; f < KG_ARRAY_LEN(ks); f++) {
	size_t len = lens[a], N = ns[b], d = ds[e], k = ks[f], rw = k + k * d;
	float *gP = rnd(&r, len * N * k, -1, 1), *rel = rnd(&r, len * rw, -1, 1);
	float *ref = rnd(&r, N * d, -1, 1), *got = dup(ref, N * d);
	float *share = rnd(&r, len * N * d, 0, 0), *ones = rnd(&r, len, 1, 1);

	for (i = 0; i < len; i++)
		T_CHECK(kg_be_sgemm(cpu, KG_NO_TRANS, KG_NO_TRANS, N, d, k, 1.0f,
		    gP + i * N * k, k, rel + i * rw + k, d, 1.0f, ref, d) == 0);
	T_CHECK(kg_be_sgemm_batched(cpu, KG_NO_TRANS, KG_NO_TRANS, N, d, k,
	    1.0f, gP, k, N * k, rel + k, d, rw, 0.0f, share, d, N * d, len) ==
	    0);
	T_CHECK(kg_be_sgemm(cpu, KG_NO_TRANS, KG_NO_TRANS, 1, N * d, len, 1.0f,
	    ones, len, share, N * d, 1.0f, got, N * d) == 0);
	T_CHECKF(close_rel(got, ref, N * d, "transr dC"), "len %zu N %zu d %zu "
	    "k %zu", len, N, d, k);
	free(gP);
	free(rel);
	free(ref);
	free(got);
	free(share);
	free(ones);
				}
}

int
main(void)
{
	struct kg_device d = KG_DEVICE_INIT;

	cpu = kg_backend_open(&d);
	if (cpu == NULL)
		return 1;
	T_RUN(test_tile_geometry);
	T_RUN(test_tile_forward);
	T_RUN(test_tile_backward);
	T_RUN(test_transr_negatives);
	kg_backend_free(cpu);
	return T_DONE();
}
