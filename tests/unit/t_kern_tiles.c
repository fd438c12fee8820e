/*
 * kern_tiles: the blocked L1 and complex-modulus chunk kernels
 * (lib/compute/kernels_avx512.c, kernels_avx2.c, the portable loops of
 * kernels_cpu.c and kernels_grad.c) bit for bit, at every ISA level the
 * CPU allows, for shapes around the tiles' edges: query and candidate
 * counts that are not multiples of the tile (L1 4 x 8 forward, 8 rows
 * backward; CMOD 4 x 4 forward, 4 rows backward), d (or d / 2 moduli) not
 * a multiple of the 8 lanes or of the 16 floats of a strip, a chunk of
 * one.  L1 against the pair-by-pair arithmetic written out here; the
 * CMOD kinds against the portable loops (level 0), whose order
 * t_kernels checks.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compute/kernels.h"
#include "compute/lanes.h"
#include "core/util.h"
#include "test.h"

static const size_t nqs[] = { 1, 2, 3, 4, 5, 7, 8, 9, 12, 17 };
static const size_t ncs[] = { 1, 2, 3, 7, 8, 9, 15, 16, 17, 23 };
static const size_t dims[] = { 1, 7, 8, 9, 15, 16, 17, 24, 31, 33, 40 };

/*
 * Rows with magnitudes over several decades, so that a change of order
 * shows; some floats of c equal to q's, so that q - c = 0 occurs.
 */
static void
fill_rows(struct kg_rng *rng, float *q, size_t nq, float *c, size_t nc,
    size_t d)
{
	size_t i;

	for (i = 0; i < nq * d; i++)
		q[i] = (float)kg_rng_normal(rng) *
		    (float)pow(10.0, (double)(i % 5) - 2.0);
	for (i = 0; i < nc * d; i++) {
		c[i] = (float)kg_rng_normal(rng) *
		    (float)pow(10.0, (double)(i % 7) - 3.0);
		if (i % 11 == 3)
			c[i] = q[(i / d % nq) * d + i % d];
	}
}

/* gamma - sum |q_k - c_k| in the order of lanes.h, written out. */
static float
l1_ordered(const float *q, const float *c, size_t d, float gamma)
{
	float L[8] = { 0 }, s = 0.0f;
	size_t k, m = d / 8 * 8;

	for (k = 0; k < m; k++)
		L[k % 8] += fabsf(q[k] - c[k]);
	for (; k < d; k++)
		L[0] += fabsf(q[k] - c[k]);
	for (k = 0; k < 8; k++)
		s += L[k];
	return gamma - s;
}

static int
check_forward(size_t nq, size_t nc, size_t d, uint64_t seed)
{
	float *q = kg_xmallocarray(nq * d, sizeof(float));
	float *c = kg_xmallocarray(nc * d, sizeof(float));
	float *out = kg_xmallocarray(nq * nc, sizeof(float));
	struct kg_rng rng;
	size_t i, j;
	int bad = 0;

	kg_rng_seed(&rng, seed, nq * 1000 + nc);
	fill_rows(&rng, q, nq, c, nc, d);
	for (i = 0; i < nq * nc; i++)
		out[i] = NAN;
	kg_kern_chunk(KG_KERN_L1, nq, nc, d, 1.5f, q, c, out, NULL, NULL);
	for (i = 0; i < nq; i++)
		for (j = 0; j < nc; j++)
			bad += out[i * nc + j] != l1_ordered(q + i * d,
			    c + j * d, d, 1.5f);
	free(q);
	free(c);
	free(out);
	return bad;
}

/*
 * The backward pair by pair, written out: gq zeroed, then for i, for j
 * with g != 0, every float's term e > 0 ? g : e < 0 ? -g : 0.
 */
static void
l1_back_ref(size_t nq, size_t nc, size_t d, const float *q, const float *c,
    const float *g, float *gq, float *gc)
{
	size_t i, j, k;

	memset(gq, 0, nq * d * sizeof(*gq));
	for (i = 0; i < nq; i++)
		for (j = 0; j < nc; j++) {
			float gij = g[i * nc + j];

			if (gij == 0.0f)
				continue;
			for (k = 0; k < d; k++) {
				float e = q[i * d + k] - c[j * d + k];
				float s = e > 0.0f ? gij : e < 0.0f ? -gij :
				    0.0f;

				gq[i * d + k] -= s;
				if (gc != NULL)
					gc[j * d + k] += s;
			}
		}
}

/* Bitwise equality, so that +0 and -0 differ. */
static int
same_bits(const float *a, const float *b, size_t n)
{
	return memcmp(a, b, n * sizeof(*a)) == 0;
}

/*
 * zeros: 0 none in g, 1 one zero in the last query row (that row's tile
 * goes pair by pair), 2 a zero in every row.  gc starts with values of
 * both signs and some -0, which a term +0 turns into +0.
 */
static int
check_backward(size_t nq, size_t nc, size_t d, int zeros, int with_gc,
    uint64_t seed)
{
	float *q = kg_xmallocarray(nq * d, sizeof(float));
	float *c = kg_xmallocarray(nc * d, sizeof(float));
	float *g = kg_xmallocarray(nq * nc, sizeof(float));
	float *gq = kg_xmallocarray(nq * d, sizeof(float));
	float *wq = kg_xmallocarray(nq * d, sizeof(float));
	float *gc = kg_xmallocarray(nc * d, sizeof(float));
	float *wc = kg_xmallocarray(nc * d, sizeof(float));
	struct kg_rng rng;
	size_t i;
	int bad = 0;

	kg_rng_seed(&rng, seed, nq * 1000 + nc);
	fill_rows(&rng, q, nq, c, nc, d);
	for (i = 0; i < nq * nc; i++)
		g[i] = (float)kg_rng_normal(&rng) *
		    (float)pow(10.0, (double)(i % 3) - 1.0);
	if (zeros == 1)
		g[nq * nc - 1] = 0.0f;
	if (zeros == 2)
		for (i = 0; i < nq; i++)
			g[i * nc + (i * 3) % nc] = 0.0f;
	for (i = 0; i < nc * d; i++)
		gc[i] = i % 4 == 1 ? -0.0f : (float)kg_rng_normal(&rng);
	memcpy(wc, gc, nc * d * sizeof(*gc));
	for (i = 0; i < nq * d; i++)
		gq[i] = 1e6f;
	kg_kern_chunk_backward(KG_KERN_L1, nq, nc, d, q, c, g, NULL, gq,
	    with_gc ? gc : NULL, NULL);
	l1_back_ref(nq, nc, d, q, c, g, wq, with_gc ? wc : NULL);
	bad += !same_bits(gq, wq, nq * d);
	bad += !same_bits(gc, wc, nc * d);
	free(q);
	free(c);
	free(g);
	free(gq);
	free(wq);
	free(gc);
	free(wc);
	return bad;
}

/* The ISA levels this CPU runs: 0 portable, 1 AVX2, 2 AVX-512. */
static int
top_level(void)
{
	kg_kern_limit_isa(2);
	if (kg_kern_have_avx512())
		return 2;
	return kg_kern_have_avx2() ? 1 : 0;
}

static void
t_forward_tiles(void)
{
	int level, top = top_level();
	size_t a, b, e;

	for (level = 0; level <= top; level++) {
		int bad = 0;

		kg_kern_limit_isa(level);
		for (a = 0; a < KG_ARRAY_LEN(nqs); a++)
			for (b = 0; b < KG_ARRAY_LEN(ncs); b++)
				for (e = 0; e < KG_ARRAY_LEN(dims); e++)
					bad += check_forward(nqs[a], ncs[b],
					    dims[e], a * 100 + b * 10 + e) != 0;
		T_CHECKF(bad == 0, "level %d: %d shapes differ", level, bad);
	}
	kg_kern_limit_isa(2);
}

static void
t_backward_tiles(void)
{
	int level, top = top_level(), zeros, with_gc;
	size_t a, b, e;

	for (level = 0; level <= top; level++) {
		int bad = 0;

		kg_kern_limit_isa(level);
		for (a = 0; a < KG_ARRAY_LEN(nqs); a++)
			for (b = 0; b < KG_ARRAY_LEN(ncs); b++)
				for (e = 0; e < KG_ARRAY_LEN(dims); e++)
					for (zeros = 0; zeros < 3; zeros++)
						for (with_gc = 0; with_gc < 2;
						    with_gc++)
							bad += check_backward(
							    nqs[a], ncs[b],
							    dims[e], zeros,
							    with_gc, a + b + e)
							    != 0;
		T_CHECKF(bad == 0, "level %d: %d shapes differ", level, bad);
	}
	kg_kern_limit_isa(2);
}

/*
 * The CMOD kinds at ISA level `level` against level 0: forward outputs,
 * then the backward's gq and gc (zeros and with_gc as check_backward).
 */
static int
check_cmod(enum kg_kern_sim sim, int level, size_t nq, size_t nc, size_t d,
    int zeros, int with_gc, uint64_t seed)
{
	float *q = kg_xmallocarray(nq * d, sizeof(float));
	float *c = kg_xmallocarray(nc * d, sizeof(float));
	float *g = kg_xmallocarray(nq * nc, sizeof(float));
	float *out[2], *gq[2], *gc[2];
	struct kg_rng rng;
	size_t i;
	int v, bad = 0;

	kg_rng_seed(&rng, seed, nq * 1000 + nc);
	fill_rows(&rng, q, nq, c, nc, d);
	for (i = 0; i < nq * nc; i++)
		g[i] = (float)kg_rng_normal(&rng);
	if (zeros == 1)
		g[nq * nc - 1] = 0.0f;
	if (zeros == 2)
		for (i = 0; i < nq; i++)
			g[i * nc + (i * 3) % nc] = 0.0f;
	for (v = 0; v < 2; v++) {
		out[v] = kg_xmallocarray(nq * nc, sizeof(float));
		gq[v] = kg_xmallocarray(nq * d, sizeof(float));
		gc[v] = kg_xmallocarray(nc * d, sizeof(float));
		for (i = 0; i < nq * d; i++)
			gq[v][i] = 1e6f;
		for (i = 0; i < nc * d; i++)
			gc[v][i] = i % 4 == 1 ? -0.0f : (float)(i % 9) - 4.0f;
		kg_kern_limit_isa(v ? level : 0);
		kg_kern_chunk(sim, nq, nc, d, 2.0f, q, c, out[v], NULL, NULL);
		kg_kern_chunk_backward(sim, nq, nc, d, q, c, g, NULL, gq[v],
		    with_gc ? gc[v] : NULL, NULL);
	}
	kg_kern_limit_isa(2);
	bad += !same_bits(out[0], out[1], nq * nc);
	bad += !same_bits(gq[0], gq[1], nq * d);
	bad += !same_bits(gc[0], gc[1], nc * d);
	for (v = 0; v < 2; v++) {
		free(out[v]);
		free(gq[v]);
		free(gc[v]);
	}
	free(q);
	free(c);
	free(g);
	return bad;
}

static void
t_cmod_tiles(void)
{
	static const size_t cdims[] = { 1, 2, 14, 16, 18, 30, 32, 33, 34, 48, 66 };
	static const enum kg_kern_sim csims[] = {
		KG_KERN_CMOD, KG_KERN_CMOD_APPROX
	};
	int level, top = top_level(), zeros;
	size_t s, a, b, e;

	for (s = 0; s < KG_ARRAY_LEN(csims); s++)
		for (level = 1; level <= top; level++) {
			int bad = 0;

			for (a = 0; a < KG_ARRAY_LEN(nqs); a++)
				for (b = 0; b < KG_ARRAY_LEN(ncs); b++)
					for (e = 0; e < KG_ARRAY_LEN(cdims);
					    e++)
						for (zeros = 0; zeros < 3;
						    zeros++)
							bad += check_cmod(
							    csims[s], level,
							    nqs[a], ncs[b],
							    cdims[e], zeros,
							    (a + b) % 2,
							    a + b + e) != 0;
			T_CHECKF(bad == 0, "%s level %d: %d shapes differ",
			    s ? "cmod_approx" : "cmod", level, bad);
		}
}

/* The training shape (200 x 200, d 400) once, every level. */
static void
t_training_shape(void)
{
	int level, top = top_level();

	for (level = 0; level <= top; level++) {
		kg_kern_limit_isa(level);
		T_CHECKF(check_forward(200, 200, 400, 7) == 0, "level %d",
		    level);
		T_CHECKF(check_backward(200, 200, 400, 0, 1, 7) == 0,
		    "level %d", level);
		if (level > 0)
			T_CHECKF(check_cmod(KG_KERN_CMOD_APPROX, level, 256,
			    256, 400, 0, 1, 7) == 0, "level %d", level);
	}
	kg_kern_limit_isa(2);
}

int
main(void)
{
	kg_compute_init();
	T_RUN(t_forward_tiles);
	T_RUN(t_backward_tiles);
	T_RUN(t_cmod_tiles);
	T_RUN(t_training_shape);
	return T_DONE();
}
