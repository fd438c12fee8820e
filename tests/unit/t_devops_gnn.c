/*
 * GNN layers on the device seam without a GPU.
 *   - The GNN thread functions of lib/compute/devops_gnn.h (the CUDA
 *     kernels' bodies) over an emulated grid, 256 and 32 threads a block, sizes
 *     that leave the last block partial, against the CPU backend's
 *     operations, relative 1e-5, guard floats untouched.
 *   - The R-GCN layer as backend calls (lib/gnn/layers_device.h), basis
 *     and block-diagonal, on a whole graph and on a sampled block, on the
 *     CPU backend and on a backend whose GNN operations are the emulated
 *     thread functions, against lib/gnn's CPU layer (kg_gnn_rgcn_forward
 *     and kg_gnn_rgcn_backward): output, input gradient and parameter
 *     gradients within a relative 1e-5.
 *   - Its backward against central finite differences of its forward.
 *   - A whole batch's gradient on the backend (gnn/step_device.h: the
 *     encoder of two R-GCN layers, basis or block, on the whole graph
 *     or on sampled blocks, dropout on or off, the DistMult decoder,
 *     logistic or self-adversarial loss) against the CPU's passes on
 *     the same batch, masks and parameters (kg_gnn_forward_blocks,
 *     kg_gnn_decode, kg_gnn_backward, as gnntrain/step.c runs them):
 *     the loss and every gradient within a relative 1e-5.
 *   - The flat Adam's thread functions against rowops.h's kg_adam_row,
 *     bit for bit; three training steps with the update on the device
 *     (kg_gnn_dstep_train: the regulariser and Adam on the dense
 *     parameters, relations and learned rows) against the device
 *     gradients updated on the host as gnntrain/step.c does, on the CPU
 *     backend and the emulated one: every parameter and Adam state
 *     within a relative 1e-6 each step, rows outside the graph untouched.
 */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compute/backend_impl.h"
#include "compute/devops_gnn.h"
#include "compute/devops_optim.h"
#include "core/rng.h"
#include "core/util.h"
#include "gnn/layers.h"
#include "gnn/layers_device.h"
#include "gnn/gnn_decode.h"
#include "gnn/sample.h"
#include "gnn/step_device.h"
#include "devops_emu.h"
#include "test.h"

static struct kg_backend *cpu;

/* |a - b| <= 1e-5 max(1, |b|) for n floats; guards (if any) intact. */
static int
close_rel(const float *a, const float *b, size_t n, int guards,
    const char *what)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!(fabsf(a[i] - b[i]) <= 1e-5f * fmaxf(1.0f, fabsf(b[i])))) {
			fprintf(stderr, "%s[%zu]: %.9g against %.9g\n", what, i,
			    (double)a[i], (double)b[i]);
			return 0;
		}
	for (i = n; guards && i < n + GUARD; i++)
		if (a[i] != POISON) {
			fprintf(stderr, "%s: guard %zu written\n", what, i - n);
			return 0;
		}
	return 1;
}

/* ---- the thread functions against the CPU backend ---- */

/* Segments of random lengths (some empty) over n items. */
static int64_t *
segments(struct kg_rng *r, size_t n_seg, size_t n)
{
	int64_t *off = kg_xmallocarray(n_seg + 1, sizeof(*off));
	size_t i;

	off[0] = 0;
	for (i = 1; i < n_seg; i++)
		off[i] = (int64_t)kg_rng_below(r, n + 1);
	off[n_seg] = (int64_t)n;
	/* Sort the inner bounds (insertion sort: n_seg is small). */
	for (i = 2; i < n_seg; i++) {
		int64_t v = off[i];
		size_t j = i;

		while (j > 1 && off[j - 1] > v) {
			off[j] = off[j - 1];
			j--;
		}
		off[j] = v;
	}
	return off;
}

static void
test_seg_sum(void)
{
	static const size_t nsegs[] = { 1, 7, 300 }, ds[] = { 1, 5, 17 };
	static const size_t nbs[] = { 1, 3 };
	struct kg_rng r;
	size_t a, b, c, k, v, i;

	kg_rng_seed(&r, 31, 0);
	for (k = 0; k < KG_ARRAY_LEN(bdims); k++)
	for (a = 0; a < KG_ARRAY_LEN(nsegs); a++)
	for (b = 0; b < KG_ARRAY_LEN(ds); b++)
	for (c = 0; c < KG_ARRAY_LEN(nbs); c++)
	for (v = 0; v < 8; v++) {
		/* v's bits: perm, idx and w present or NULL; beta and ldo
		 * follow v too. */
		size_t ns = nsegs[a], d = ds[b], nb = nbs[c], n = 3 * ns + 2;
		size_t rows = 11, ldo = d + (v & 1), xs = rows * d + 3;
		int64_t *off = segments(&r, ns, n);
		int64_t *perm = kg_xmallocarray(n, sizeof(*perm));
		int64_t *idx = kg_xmallocarray(n, sizeof(*idx));
		float *w = rnd(&r, nb * n, -1, 1);
		float *x = rnd(&r, nb * xs, -1, 1);
		float *o1 = rnd(&r, ns * ldo, -1, 1), *o2 = dup(o1, ns * ldo);
		struct kg_dev_seg sg;
		int beta = (int)(v >> 1 & 1);

		for (i = 0; i < n; i++) {
			perm[i] = (int64_t)((i * 7 + 3) % n);
			idx[i] = (int64_t)kg_rng_below(&r, rows);
		}
		sg.off = off;
		sg.perm = v & 1 ? perm : NULL;
		sg.idx = v & 2 ? idx : (n <= rows ? NULL : idx);
		sg.w = v & 4 ? w : NULL;
		sg.nb = nb;
		sg.ws = n;
		sg.xs = xs;
		T_CHECK(kg_be_seg_sum(cpu, ns, d, &sg, x, beta, o1, ldo) == 0);
		EMU(bdims[k], ns * d, kg_dev_t_seg_sum, ns, d, sg, x, beta, o2,
		    ldo);
		T_CHECK(close_rel(o2, o1, ns * ldo, 1, "seg_sum"));
		free(off);
		free(perm);
		free(idx);
		free(w);
		free(x);
		free(o1);
		free(o2);
	}
	/* By hand: segment 0 = items 1, 0 (perm) of rows 2, 0 with weights
	 * 2, 3; segment 1 empty; beta 1 keeps what out held. */
	{
		int64_t off[3] = { 0, 2, 2 }, perm[2] = { 1, 0 },
		    idx[2] = { 0, 2 };
		float w[2] = { 3, 2 }, x[3 * 2] = { 1, 10, 0, 0, 100, 1000 };
		float out[2 * 2] = { 5, 6, 7, 8 };
		struct kg_dev_seg sg = { off, perm, idx, w, 1, 0, 0 };

		EMU(32u, (size_t)4, kg_dev_t_seg_sum, (size_t)2, (size_t)2, sg,
		    x, 1, out, (size_t)2);
		T_CHECK(out[0] == 5 + 200 + 3 && out[1] == 6 + 2000 + 30 &&
		    out[2] == 7 && out[3] == 8);
		EMU(32u, (size_t)4, kg_dev_t_seg_sum, (size_t)2, (size_t)2, sg,
		    x, 0, out, (size_t)2);
		T_CHECK(out[0] == 203 && out[2] == 0 && out[3] == 0);
	}
}

static void
test_edge_ops(void)
{
	static const size_t ns[] = { 1, 5, 300 }, ds[] = { 1, 7, 19 };
	struct kg_rng r;
	size_t a, b, k, i;

	kg_rng_seed(&r, 32, 0);
	for (k = 0; k < KG_ARRAY_LEN(bdims); k++)
	for (a = 0; a < KG_ARRAY_LEN(ns); a++)
	for (b = 0; b < KG_ARRAY_LEN(ds); b++) {
		size_t n = ns[a], d = ds[b], nb = 3, T = 4, rows = 9;
		float *norm = rnd(&r, n, 0, 1), *A = rnd(&r, T * nb, -1, 1);
		float *w1 = rnd(&r, n * nb, 0, 0), *w2 = dup(w1, n * nb);
		float *xa = rnd(&r, rows * d, -1, 1);
		float *xb = rnd(&r, rows * d, -1, 1);
		float *d1 = rnd(&r, n, 0, 0), *d2 = dup(d1, n);
		float *row = rnd(&r, d, -1, 1);
		float *f1 = rnd(&r, n * d, 0, 0), *f2 = dup(f1, n * d);
		float *xm = rnd(&r, n * d, -1, 1);
		float *y = rnd(&r, n * d, -1, 1), *m1 = dup(y, n * d);
		float *m2 = dup(y, n * d);
		int64_t *type = kg_xmallocarray(n, sizeof(*type));
		int64_t *ia = kg_xmallocarray(n, sizeof(*ia));
		int64_t *ib = kg_xmallocarray(n, sizeof(*ib));

		for (i = 0; i < n; i++) {
			type[i] = (int64_t)kg_rng_below(&r, T);
			ia[i] = (int64_t)kg_rng_below(&r, rows);
			ib[i] = (int64_t)kg_rng_below(&r, rows);
		}
		T_CHECK(kg_be_edge_coef(cpu, n, nb, norm, type, A, w1) == 0);
		EMU(bdims[k], n * nb, kg_dev_t_edge_coef, n, nb, norm, type, A,
		    w2);
		T_CHECK(close_rel(w2, w1, n * nb, 1, "edge_coef"));
		/* Coefficient (c, e) is norm[e] A[type[e], c]. */
		T_CHECK(w1[2 * n + n - 1] == norm[n - 1] *
		    A[type[n - 1] * nb + 2]);
		T_CHECK(kg_be_edge_dot(cpu, n, d, xa, ia, xb, ib, d1) == 0);
		EMU(bdims[k], n, kg_dev_t_edge_dot, n, d, xa, ia, xb, ib, d2);
		T_CHECK(close_rel(d2, d1, n, 1, "edge_dot"));
		{
			double s = 0.0;

			for (i = 0; i < d; i++)
				s += (double)xa[ia[0] * d + i] *
				    xb[ib[0] * d + i];
			T_NEAR(d1[0], s, 1e-5);
		}
		T_CHECK(kg_be_fill_rows(cpu, n, d, row, f1) == 0);
		EMU(bdims[k], n * d, kg_dev_t_fill_rows, n, d, row, f2);
		T_CHECK(close_rel(f2, f1, n * d, 1, "fill_rows"));
		T_CHECK(f1[(n - 1) * d + d - 1] == row[d - 1]);
		T_CHECK(kg_be_mul(cpu, n * d, xm, y, m1) == 0);
		EMU(bdims[k], n * d, kg_dev_t_mul, n * d, xm, y, m2);
		T_CHECK(close_rel(m2, m1, n * d, 1, "mul"));
		T_CHECK(m1[n * d - 1] == xm[n * d - 1] * y[n * d - 1]);
		T_CHECK(kg_be_relu(cpu, n * d, y, m1) == 0);
		EMU(bdims[k], n * d, kg_dev_t_relu, n * d, y, m2);
		T_CHECK(close_rel(m2, m1, n * d, 1, "relu"));
		for (i = 0; i < n * d; i++)
			T_CHECK(m1[i] == (y[i] < 0.0f ? 0.0f : y[i]));
		memcpy(m1, xm, n * d * sizeof(float));
		memcpy(m2, xm, n * d * sizeof(float));
		T_CHECK(kg_be_relu_backward(cpu, n * d, y, m1) == 0);
		EMU(bdims[k], n * d, kg_dev_t_relu_bwd, n * d, y, m2);
		T_CHECK(close_rel(m2, m1, n * d, 1, "relu_backward"));
		for (i = 0; i < n * d; i++)
			T_CHECK(y[i] >= 0.0f || m1[i] == 0.0f);
		free(norm);
		free(A);
		free(w1);
		free(w2);
		free(xa);
		free(xb);
		free(d1);
		free(d2);
		free(row);
		free(f1);
		free(f2);
		free(xm);
		free(y);
		free(m1);
		free(m2);
		free(type);
		free(ia);
		free(ib);
	}
}

/* Segment sums in double over the float products (positive terms): the
 * reference the split sums are held to. */
static void
seg_ref(size_t ns, size_t d, const struct kg_dev_seg *sg, const float *x,
    int beta, const float *out, size_t ldo, double *ref)
{
	size_t i, k, c;
	int64_t q;

	for (i = 0; i < ns; i++)
		for (k = 0; k < d; k++) {
			double acc = beta ? out[i * ldo + k] : 0.0;

			for (q = sg->off[i]; q < sg->off[i + 1]; q++) {
				size_t e = (size_t)sg->perm[q];
				size_t rr = (size_t)sg->idx[e];

				for (c = 0; c < sg->nb; c++)
					acc += (double)(sg->w[c * sg->ws + e] *
					    x[c * sg->xs + rr * d + k]);
			}
			ref[i * d + k] = acc;
		}
}

/* The largest |a - ref| / |ref| over ns x d elements of a (stride ldo). */
static double
max_rel(const float *a, const double *ref, size_t ns, size_t d, size_t ldo)
{
	double m = 0.0, e;
	size_t i, k;

	for (i = 0; i < ns; i++)
		for (k = 0; k < d; k++) {
			e = fabs(a[i * ldo + k] - ref[i * d + k]) /
			    fmax(1.0, fabs(ref[i * d + k]));
			m = e > m ? e : m;
		}
	return m;
}

/*
 * kg_dev_t_seg_part then kg_dev_t_seg_join: parts = 1 gives
 * kg_dev_t_seg_sum's bits; more parts, within a relative 1e-6 of the
 * sums taken in double, or no further from them than the serial loop
 * (positive terms, so no cancellation hides an error; the serial float
 * loop itself strays past 1e-6 on segments of a thousand items, so it
 * is not the reference), segments long (up to
 * 2000 items), empty, or ending in a partial block; the parts' scratch
 * and out's guards untouched.
 */
static void
test_seg_split(void)
{
	static const size_t nsegs[] = { 1, 3, 40 }, ds[] = { 1, 16 };
	static const size_t parts[] = { 1, 2, 7, 32, 256 };
	struct kg_rng r;
	size_t a, b, c, k, v, i;
	double e_serial = 0.0, e_split = 0.0, e;

	kg_rng_seed(&r, 37, 0);
	for (k = 0; k < KG_ARRAY_LEN(bdims); k++)
	for (a = 0; a < KG_ARRAY_LEN(nsegs); a++)
	for (b = 0; b < KG_ARRAY_LEN(ds); b++)
	for (c = 0; c < KG_ARRAY_LEN(parts); c++)
	for (v = 0; v < 4; v++) {
		size_t ns = nsegs[a], d = ds[b], P = parts[c], n = 2000;
		size_t rows = 50, ldo = d + 1, xs = rows * d;
		int64_t *off = segments(&r, ns, n);
		int64_t *perm = kg_xmallocarray(n, sizeof(*perm));
		int64_t *idx = kg_xmallocarray(n, sizeof(*idx));
		float *w = rnd(&r, 2 * n, 0.5f, 1);
		float *x = rnd(&r, 2 * xs, 0, 1);
		float *o1 = rnd(&r, ns * ldo, 0, 1), *o2 = dup(o1, ns * ldo);
		float *tmp = rnd(&r, ns * P * d, -1, 1);
		double *ref = kg_xmallocarray(ns * d, sizeof(*ref));
		struct kg_dev_seg sg;
		int beta = (int)(v & 1);

		if (v & 2 && ns > 1)	/* an empty segment */
			off[1] = off[0];
		for (i = 0; i < n; i++) {
			perm[i] = (int64_t)((i * 7 + 3) % n);
			idx[i] = (int64_t)kg_rng_below(&r, rows);
		}
		sg.off = off;
		sg.perm = perm;
		sg.idx = idx;
		sg.w = w;
		sg.nb = v & 2 ? 2 : 1;
		sg.ws = n;
		sg.xs = xs;
		seg_ref(ns, d, &sg, x, beta, o1, ldo, ref);
		EMU(bdims[k], ns * d, kg_dev_t_seg_sum, ns, d, sg, x, beta, o1,
		    ldo);
		EMU(bdims[k], ns * P * d, kg_dev_t_seg_part, ns, d, P, sg, x,
		    beta, o2, ldo, tmp);
		EMU(bdims[k], ns * d, kg_dev_t_seg_join, ns, d, P, tmp, o2,
		    ldo);
		if (P == 1)
			T_CHECKF(memcmp(o2, o1, (ns * ldo + GUARD) *
			    sizeof(*o1)) == 0, "one part: seg_sum's bits, "
			    "%zu segments of %zu", ns, d);
		else {
			double es = max_rel(o1, ref, ns, d, ldo);

			e = max_rel(o2, ref, ns, d, ldo);
			e_split = e > e_split ? e : e_split;
			T_CHECKF(e <= 1e-6 || e <= es, "%zu parts, %zu segments "
			    "of %zu: %.3g from the double sums (serial %.3g)",
			    P, ns, d, e, es);
			T_CHECK(close_tol(o2, o2, ns * ldo, 0.0f, "guards"));
		}
		e = max_rel(o1, ref, ns, d, ldo);
		e_serial = e > e_serial ? e : e_serial;
		T_CHECK(tmp[ns * P * d] == POISON);
		free(off);
		free(perm);
		free(idx);
		free(w);
		free(x);
		free(o1);
		free(o2);
		free(tmp);
		free(ref);
	}
	printf("# seg_split: largest relative distance from the double sums "
	    "%.3g in parts, %.3g in the serial loop\n", e_split, e_serial);
}

/* The flat Adam's thread functions against rowops.h's kg_adam_row over
 * three steps, on sizes that leave the last block partial: the same
 * arithmetic, so the same bits; the count advanced once a step. */
static void
test_adam_flat(void)
{
	static const size_t sizes[] = { 1, 33, 300 };
	struct kg_adam a = KG_ADAM_INIT;
	struct kg_rng r;
	size_t k, j, step;

	a.lr = 0.05f;
	kg_rng_seed(&r, 3, 3);
	for (k = 0; k < KG_ARRAY_LEN(bdims); k++)
		for (j = 0; j < KG_ARRAY_LEN(sizes); j++) {
			size_t n = sizes[j];
			float *w1 = rnd(&r, n, -1, 1), *w2 = dup(w1, n);
			float *s1 = rnd(&r, 2 * n + 1, 0, 0);
			float *s2 = dup(s1, 2 * n + 1);

			for (step = 0; step < 3; step++) {
				float *g = rnd(&r, n, -1, 1);

				kg_adam_row(w1, s1, g, n, &a);
				EMU(bdims[k], n, kg_dev_t_adam_flat, n, a.lr,
				    a.beta1, a.beta2, a.eps, g, w2, s2);
				EMU(bdims[k], (size_t)1, kg_dev_t_adam_count, n,
				    s2);
				free(g);
			}
			T_CHECKF(memcmp(w1, w2, (n + GUARD) * sizeof(*w1)) ==
			    0, "weights, n = %zu", n);
			T_CHECKF(memcmp(s1, s2, (2 * n + 1 + GUARD) *
			    sizeof(*s1)) == 0, "states, n = %zu", n);
			T_CHECK(s2[2 * n] == 3.0f);
			free(w1);
			free(w2);
			free(s1);
			free(s2);
		}
}

/* ---- a backend whose GNN operations are the emulated thread
 * functions ---- */

static unsigned emu_bdim = KG_DEV_BLOCK;

static int
emu_seg_sum(struct kg_backend *be, size_t n_seg, size_t d,
    const struct kg_dev_seg *sg, const float *x, int beta, float *out,
    size_t ldo)
{
	(void)be;
	EMU(emu_bdim, n_seg * d, kg_dev_t_seg_sum, n_seg, d, *sg, x, beta, out,
	    ldo);
	return 0;
}

static int
emu_edge_coef(struct kg_backend *be, size_t n, size_t nb, const float *norm,
    const int64_t *type, const float *a, float *w)
{
	(void)be;
	EMU(emu_bdim, n * nb, kg_dev_t_edge_coef, n, nb, norm, type, a, w);
	return 0;
}

static int
emu_edge_dot(struct kg_backend *be, size_t n, size_t d, const float *a,
    const int64_t *ia, const float *b, const int64_t *ib, float *out)
{
	(void)be;
	EMU(emu_bdim, n, kg_dev_t_edge_dot, n, d, a, ia, b, ib, out);
	return 0;
}

static int
emu_fill_rows(struct kg_backend *be, size_t n, size_t d, const float *row,
    float *out)
{
	(void)be;
	EMU(emu_bdim, n * d, kg_dev_t_fill_rows, n, d, row, out);
	return 0;
}

static int
emu_mul(struct kg_backend *be, size_t n, const float *a, const float *x,
    float *y)
{
	(void)be;
	EMU(emu_bdim, n, kg_dev_t_mul, n, a, x, y);
	return 0;
}

static int
emu_relu(struct kg_backend *be, size_t n, const float *x, float *y)
{
	(void)be;
	EMU(emu_bdim, n, kg_dev_t_relu, n, x, y);
	return 0;
}

static int
emu_relu_backward(struct kg_backend *be, size_t n, const float *pre,
    float *g)
{
	(void)be;
	EMU(emu_bdim, n, kg_dev_t_relu_bwd, n, pre, g);
	return 0;
}

static int
emu_adam_flat(struct kg_backend *be, size_t n, const struct kg_adam *a,
    const float *grad, float *w, float *state)
{
	(void)be;
	EMU(emu_bdim, n, kg_dev_t_adam_flat, n, a->lr, a->beta1, a->beta2,
	    a->eps, grad, w, state);
	EMU(emu_bdim, (size_t)1, kg_dev_t_adam_count, n, state);
	return 0;
}

/* The parts emu_seg_sum_split takes (0: the caller's): the fixtures'
 * graphs are too small for the layers to ask for more than one. */
static size_t emu_parts;

static int
emu_seg_sum_split(struct kg_backend *be, size_t n_seg, size_t d,
    size_t parts, const struct kg_dev_seg *sg, const float *x, int beta,
    float *out, size_t ldo, float *tmp)
{
	size_t P = emu_parts ? emu_parts : parts;
	float *t = tmp;

	(void)be;
	if (emu_parts)		/* more parts than the layer reserved */
		t = kg_xmallocarray(n_seg * P * d + 1, sizeof(*t));
	EMU(emu_bdim, n_seg * P * d, kg_dev_t_seg_part, n_seg, d, P, *sg, x,
	    beta, out, ldo, t);
	EMU(emu_bdim, n_seg * d, kg_dev_t_seg_join, n_seg, d, P, t, out, ldo);
	if (t != tmp)
		free(t);
	return 0;
}

static int
emu_attn(struct kg_backend *be, enum kg_be_attn_pass pass,
    const struct kg_dev_attn *at, const float *G, float *out)
{
	(void)be;
	switch (pass) {
	case KG_BE_ATTN_SCORES:
		EMU(emu_bdim, at->n_dst, kg_dev_t_attn_scores, *at);
		break;
	case KG_BE_ATTN_MSGS:
		EMU(emu_bdim, at->n_dst * at->d, kg_dev_t_attn_msgs, *at, out);
		break;
	case KG_BE_ATTN_BACK_SCORES:
		EMU(emu_bdim, at->n_dst, kg_dev_t_attn_back_scores, *at, G);
		break;
	case KG_BE_ATTN_BACK_DZ:
		EMU(emu_bdim, at->n_src * at->d, kg_dev_t_attn_back_dz, *at, G,
		    out);
		break;
	case KG_BE_ATTN_BACK_REL:
		EMU(emu_bdim, at->n_types * at->d, kg_dev_t_attn_back_rel, *at,
		    G, out);
		break;
	}
	return 0;
}

static const struct kg_backend_gnn_ops emu_gnn_ops = {
	.seg_sum = emu_seg_sum,
	.edge_coef = emu_edge_coef,
	.edge_dot = emu_edge_dot,
	.fill_rows = emu_fill_rows,
	.mul = emu_mul,
	.relu = emu_relu,
	.relu_backward = emu_relu_backward,
	.adam_flat = emu_adam_flat,
	.seg_sum_split = emu_seg_sum_split,
	.attn = emu_attn,
};

/* ---- the layer against lib/gnn's ---- */

enum { GN = 60, GR = 3, GT = 300, NSEED = 6 };

static int32_t ghrt[GT * 3];

/* The layer kind the layer tests build (layer_model), and whether the
 * fixtures leave the last node out of every triple (no messages in or
 * out: the attention tests' destination without in-edges). */
static enum kg_gnn_encoder layer_enc = KG_GNN_RGCN;
static int fixture_isolated;

static void
make_triples(void)
{
	struct kg_rng r;
	uint64_t n = fixture_isolated ? GN - 1 : GN;
	int i;

	kg_rng_seed(&r, 17, 0);
	for (i = 0; i < GT; i++) {
		/* A fifth of the triples touch 4 hubs. */
		ghrt[3 * i] = (int32_t)kg_rng_below(&r, i % 5 ? n : 4);
		ghrt[3 * i + 1] = (int32_t)kg_rng_below(&r, GR);
		ghrt[3 * i + 2] = (int32_t)kg_rng_below(&r, n);
	}
}

/* An attention layer's scores and weights from its forward to its
 * backward (the tests' backends keep device memory on the host). */
static float t_u[2 * GT + 1], t_al[2 * GT + 1];

static int
dlayer_forward(struct kg_backend *be, const struct kg_gnn *m, uint32_t l,
    const float *dw, const struct kg_gnn_dgraph *dg, const float *x,
    float *out, struct kg_gnn_dwork *wk)
{
	if (m->c.encoder == KG_GNN_RELGNN)
		return kg_gnn_dattn_forward(be, m, l, dw, dg, x, out, wk, t_u,
		    t_al);
	return kg_gnn_drgcn_forward(be, m, l, dw, dg, x, out, wk);
}

static int
dlayer_backward(struct kg_backend *be, const struct kg_gnn *m, uint32_t l,
    const float *dw, const struct kg_gnn_dgraph *dg, const float *x,
    const float *G, float *dx, struct kg_gnn_dwork *wk, float *dgrad)
{
	if (m->c.encoder == KG_GNN_RELGNN)
		return kg_gnn_dattn_backward(be, m, l, dw, dg, x, G, dx, wk,
		    t_u, t_al, dgrad);
	return kg_gnn_drgcn_backward(be, m, l, dw, dg, x, G, dx, wk, dgrad);
}

/* One layer's graph: the whole graph (sampled 0), or the seeds of a
 * two-hop sample as destinations of every sampled node (a block). */
struct fixture {
	struct kg_gnn_graph full, view;
	struct kg_gnn_sampler sb;
	uint64_t n_src;
};

static void
fixture_init(struct fixture *f, int sampled)
{
	static const uint32_t fan[2] = { 4, 3 };
	int32_t seeds[NSEED] = { 0, 3, 7, 11, 30, 45 };
	uint64_t mn, mm;
	struct kg_rng r;

	memset(f, 0, sizeof(*f));
	make_triples();
	kg_gnn_graph_build(&f->full, GN, GR, ghrt, GT);
	if (!sampled) {
		f->view = f->full;
		f->n_src = GN;
		return;
	}
	kg_gnn_sample_bounds(NSEED, fan, 2, &f->full, &mn, &mm);
	kg_gnn_sampler_init(&f->sb, &f->full, mn, mm, 4);
	kg_rng_seed(&r, 2, 2);
	kg_gnn_sample(&f->sb, &f->full, fan, 2, NULL, seeds, NSEED, &r);
	/* Destinations: the nodes within one hop of the seeds. */
	f->view = f->sb.g;
	f->view.n_nodes = f->sb.hop_end[1];
	f->view.n_msgs = f->sb.g.off[f->view.n_nodes];
	f->n_src = f->sb.g.n_nodes;
}

static void
fixture_release(struct fixture *f)
{
	kg_gnn_sampler_release(&f->sb);
	kg_gnn_graph_release(&f->full);
}

static void
layer_model(struct kg_gnn *m, enum kg_gnn_decomp dc, uint32_t L)
{
	struct kg_gnn_config c;
	struct kg_rng r;
	size_t k;

	memset(&c, 0, sizeof(c));
	c.encoder = layer_enc;
	c.decomp = dc;
	c.n_layers = L;
	c.dims[0] = 4;
	c.dims[1] = 6;
	c.dims[2] = 4;
	c.n_bases = 2;
	c.n_relations = GR;
	c.n_learned = 1;
	c.learned_only = 1;
	T_CHECK(kg_gnn_init(m, &c, NULL, 42) == 0);
	/* Biases too, so that every parameter matters. */
	kg_rng_seed(&r, 9, 9);
	for (k = 0; k < m->n_params; k++)
		m->w[k] = (float)(kg_rng_uniform(&r) - 0.5);
}

/* The device pass of layer l on backend be: out, dx and grad (which
 * starts from grad0). */
static int
device_layer(struct kg_backend *be, const struct kg_gnn *m, uint32_t l,
    const struct fixture *f, struct kg_gnn_state *s, const float *x,
    const float *G, const float *grad0, float *out, float *dx, float *grad)
{
	struct kg_gnn_dgraph dg = KG_GNN_DGRAPH_INIT;
	struct kg_gnn_dwork wk = KG_GNN_DWORK_INIT;
	size_t din = m->c.dims[l], dout = m->c.dims[l + 1];
	size_t nd = f->view.n_nodes, ns = f->n_src, P = m->n_params;
	float *dw = kg_be_alloc(be, P * sizeof(float));
	float *dgr = kg_be_alloc(be, P * sizeof(float));
	float *dx_ = kg_be_alloc(be, ns * din * sizeof(float));
	float *dG = kg_be_alloc(be, nd * dout * sizeof(float));
	float *dout_ = kg_be_alloc(be, nd * dout * sizeof(float));
	float *dxin = kg_be_alloc(be, ns * din * sizeof(float));
	int rc;

	kg_gnn_index_build(m, &f->view, ns, s);
	rc = kg_gnn_dgraph_upload(be, &dg, m, &f->view, ns, s) < 0 ||
	    kg_be_upload(be, dw, m->w, P * sizeof(float)) < 0 ||
	    kg_be_upload(be, dgr, grad0, P * sizeof(float)) < 0 ||
	    kg_be_upload(be, dxin, x, ns * din * sizeof(float)) < 0 ||
	    kg_be_upload(be, dG, G, nd * dout * sizeof(float)) < 0 ||
	    /* dx is overwritten: start it from junk. */
	    kg_be_upload(be, dx_, G, (nd * dout < ns * din ? nd * dout :
	    ns * din) * sizeof(float)) < 0 ||
	    dlayer_forward(be, m, l, dw, &dg, dxin, dout_, &wk) < 0 ||
	    dlayer_backward(be, m, l, dw, &dg, dxin, dG, dx_, &wk, dgr) < 0 ||
	    kg_be_download(be, out, dout_, nd * dout * sizeof(float)) < 0 ||
	    kg_be_download(be, dx, dx_, ns * din * sizeof(float)) < 0 ||
	    kg_be_download(be, grad, dgr, P * sizeof(float)) < 0 ? -1 : 0;
	kg_gnn_dgraph_release(be, &dg);
	kg_gnn_dwork_release(be, &wk);
	kg_be_free(be, dw);
	kg_be_free(be, dgr);
	kg_be_free(be, dx_);
	kg_be_free(be, dG);
	kg_be_free(be, dout_);
	kg_be_free(be, dxin);
	return rc;
}

/* Layer l of a model of L layers over fixture f: lib/gnn's CPU layer
 * against the device layer on be. */
static void
check_layer(struct kg_backend *be, enum kg_gnn_decomp dc, uint32_t L,
    uint32_t l, int sampled)
{
	struct kg_gnn m = KG_GNN_INIT;
	struct kg_gnn_state s = KG_GNN_STATE_INIT;
	struct fixture f;
	uint64_t rows[KG_GNN_MAX_LAYERS + 1];
	struct kg_rng r;
	size_t din, dout, nd, ns, P, k, nz = 0;
	float *x, *G, *g0, *o1, *o2, *dx1, *dx2, *gr1, *gr2;

	fixture_init(&f, sampled);
	layer_model(&m, dc, L);
	din = m.c.dims[l];
	dout = m.c.dims[l + 1];
	nd = f.view.n_nodes;
	ns = f.n_src;
	P = m.n_params;
	T_CHECK(sampled ? ns > nd : ns == nd);
	kg_rng_seed(&r, 4, l);
	x = rnd(&r, ns * din, -1, 1);
	G = rnd(&r, nd * dout, -1, 1);
	g0 = rnd(&r, P, -1, 1);
	o1 = rnd(&r, nd * dout, 0, 0);
	o2 = dup(o1, nd * dout);
	dx1 = rnd(&r, ns * din, 0, 0);
	dx2 = dup(dx1, ns * din);
	gr1 = dup(g0, P);
	gr2 = dup(g0, P);
	for (k = 0; k <= L; k++)
		rows[k] = k == l ? ns : nd;
	kg_gnn_state_reserve_rows(&m, &s, rows, f.view.n_msgs);
	kg_gnn_index_build(&m, &f.view, ns, &s);
	if (layer_enc == KG_GNN_RELGNN) {
		kg_gnn_attn_forward(&m, l, &f.view, ns, x, o1, &s);
		kg_gnn_attn_backward(&m, l, &f.view, ns, x, G, dx1, &s, gr1);
	} else {
		kg_gnn_rgcn_forward(&m, l, &f.view, ns, x, o1, &s);
		kg_gnn_rgcn_backward(&m, l, &f.view, ns, x, G, dx1, &s, gr1);
	}
	T_CHECK(device_layer(be, &m, l, &f, &s, x, G, g0, o2, dx2, gr2) == 0);
	T_CHECK(close_rel(o2, o1, nd * dout, 1, "layer output"));
	T_CHECK(close_rel(dx2, dx1, ns * din, 1, "input gradient"));
	T_CHECK(close_rel(gr2, gr1, P, 1, "parameter gradients"));
	/* Not vacuous: the layer's parameters took gradients. */
	for (k = 0; k < P; k++)
		nz += gr1[k] != g0[k];
	T_CHECKF(nz > P / 3, "%zu of %zu gradients changed", nz, P);
	free(x);
	free(G);
	free(g0);
	free(o1);
	free(o2);
	free(dx1);
	free(dx2);
	free(gr1);
	free(gr2);
	kg_gnn_state_release(&s);
	kg_gnn_release(&m);
	fixture_release(&f);
}

static void
layers_cpu_backend(void)
{
	int sampled;

	for (sampled = 0; sampled < 2; sampled++) {
		check_layer(cpu, KG_GNN_BASIS, 1, 0, sampled);
		check_layer(cpu, KG_GNN_BASIS, 2, 1, sampled);
		check_layer(cpu, KG_GNN_BLOCK, 1, 0, sampled);
		check_layer(cpu, KG_GNN_BLOCK, 2, 1, sampled);
	}
}

static void
layers_emulated_grid(void)
{
	struct kg_backend emu = *cpu;
	size_t k;
	int sampled;

	emu.gnn = &emu_gnn_ops;
	for (k = 0; k < KG_ARRAY_LEN(bdims); k++) {
		emu_bdim = bdims[k];
		for (sampled = 0; sampled < 2; sampled++) {
			check_layer(&emu, KG_GNN_BASIS, 2, 1, sampled);
			check_layer(&emu, KG_GNN_BLOCK, 1, 0, sampled);
			/* The long reductions in 5 parts. */
			emu_parts = 5;
			check_layer(&emu, KG_GNN_BASIS, 2, 1, sampled);
			check_layer(&emu, KG_GNN_BASIS, 1, 0, sampled);
			check_layer(&emu, KG_GNN_BLOCK, 1, 0, sampled);
			emu_parts = 0;
		}
	}
}

/* ---- the backward against finite differences ---- */

/* sum_k c_k out_k in double of the device forward. */
static double
objective(const struct kg_gnn *m, uint32_t l, const struct kg_gnn_dgraph *dg,
    float *dw, float *dx, float *dout, struct kg_gnn_dwork *wk,
    const float *c, float *out)
{
	size_t n = dg->n_dst * m->c.dims[l + 1], k;
	double s = 0.0;

	if (kg_be_upload(cpu, dw, m->w, m->n_params * sizeof(float)) < 0 ||
	    dlayer_forward(cpu, m, l, dw, dg, dx, dout, wk) < 0 ||
	    kg_be_download(cpu, out, dout, n * sizeof(float)) < 0)
		return NAN;
	for (k = 0; k < n; k++)
		s += (double)c[k] * out[k];
	return s;
}

static void
check_fd(enum kg_gnn_decomp dc, int sampled)
{
	struct kg_gnn m = KG_GNN_INIT;
	struct kg_gnn_state s = KG_GNN_STATE_INIT;
	struct kg_gnn_dgraph dg = KG_GNN_DGRAPH_INIT;
	struct kg_gnn_dwork wk = KG_GNN_DWORK_INIT;
	struct fixture f;
	struct kg_rng r;
	const float eps = 5e-4f;
	size_t din, dout, nd, ns, P, k, bad = 0, nz = 0;
	float *x, *c, *out, *dxg, *grad, *dw, *dgr, *ddx, *dxin, *dc_, *dout_;

	fixture_init(&f, sampled);
	layer_model(&m, dc, 1);
	din = m.c.dims[0];
	dout = m.c.dims[1];
	nd = f.view.n_nodes;
	ns = f.n_src;
	P = m.n_params;
	kg_rng_seed(&r, 6, 6);
	x = rnd(&r, ns * din, -1, 1);
	c = rnd(&r, nd * dout, -1, 1);
	out = rnd(&r, nd * dout, 0, 0);
	dxg = rnd(&r, ns * din, 0, 0);
	grad = kg_xcalloc(P, sizeof(float));
	dw = kg_be_alloc(cpu, P * sizeof(float));
	dgr = kg_be_alloc(cpu, P * sizeof(float));
	ddx = kg_be_alloc(cpu, ns * din * sizeof(float));
	dxin = kg_be_alloc(cpu, ns * din * sizeof(float));
	dc_ = kg_be_alloc(cpu, nd * dout * sizeof(float));
	dout_ = kg_be_alloc(cpu, nd * dout * sizeof(float));
	kg_gnn_state_reserve(&m, &s, ns, f.view.n_msgs);
	kg_gnn_index_build(&m, &f.view, ns, &s);
	T_CHECK(kg_gnn_dgraph_upload(cpu, &dg, &m, &f.view, ns, &s) == 0);
	T_CHECK(kg_be_upload(cpu, dxin, x, ns * din * sizeof(float)) == 0);
	T_CHECK(kg_be_upload(cpu, dc_, c, nd * dout * sizeof(float)) == 0);
	T_CHECK(kg_be_zero(cpu, dgr, P * sizeof(float)) == 0);
	T_CHECK(!isnan(objective(&m, 0, &dg, dw, dxin, dout_, &wk, c, out)));
	T_CHECK(dlayer_backward(cpu, &m, 0, dw, &dg, dxin, dc_, ddx, &wk,
	    dgr) == 0);
	T_CHECK(kg_be_download(cpu, grad, dgr, P * sizeof(float)) == 0);
	T_CHECK(kg_be_download(cpu, dxg, ddx, ns * din * sizeof(float)) == 0);
	/* Every parameter, then every input element. */
	for (k = 0; k < P + ns * din; k++) {
		float *p = k < P ? &m.w[k] : &x[k - P], v = *p;
		double lp, lm, fd, an = k < P ? grad[k] : dxg[k - P];

		*p = v + eps;
		if (k >= P)
			kg_be_upload(cpu, dxin, x, ns * din * sizeof(float));
		lp = objective(&m, 0, &dg, dw, dxin, dout_, &wk, c, out);
		*p = v - eps;
		if (k >= P)
			kg_be_upload(cpu, dxin, x, ns * din * sizeof(float));
		lm = objective(&m, 0, &dg, dw, dxin, dout_, &wk, c, out);
		*p = v;
		if (k >= P)
			kg_be_upload(cpu, dxin, x, ns * din * sizeof(float));
		fd = (lp - lm) / (2.0 * (double)eps);
		if (!(fabs(fd - an) <= 2e-3 + 1e-2 * fabs(fd)) && bad++ < 5)
			fprintf(stderr, "%s %zu: backward %.6g, finite "
			    "difference %.6g\n", k < P ? "param" : "input",
			    k < P ? k : k - P, an, fd);
		nz += an != 0.0;
	}
	T_CHECKF(bad == 0, "%zu gradients differ", bad);
	/* The learned row is no input of the layer; nearly all else is. */
	T_CHECKF(nz > (P + ns * din) / 2, "%zu of %zu gradients non-zero", nz,
	    P + ns * din);
	kg_gnn_dgraph_release(cpu, &dg);
	kg_gnn_dwork_release(cpu, &wk);
	kg_be_free(cpu, dw);
	kg_be_free(cpu, dgr);
	kg_be_free(cpu, ddx);
	kg_be_free(cpu, dxin);
	kg_be_free(cpu, dc_);
	kg_be_free(cpu, dout_);
	free(x);
	free(c);
	free(out);
	free(dxg);
	free(grad);
	kg_gnn_state_release(&s);
	kg_gnn_release(&m);
	fixture_release(&f);
}

static void
layers_finite_differences(void)
{
	check_fd(KG_GNN_BASIS, 0);
	check_fd(KG_GNN_BASIS, 1);
	check_fd(KG_GNN_BLOCK, 0);
	check_fd(KG_GNN_BLOCK, 1);
}

/* ---- the attention layer ---- */

/*
 * RelGNN's layer (gnn/layers_attn_device.c) against lib/gnn's
 * layers_attn.c, on a graph whose last node has no in-edges and whose
 * hubs have many: on the CPU backend and the emulated grid (256 and 32
 * threads a block, the last block partial; the attention vectors' sums
 * also in 5 parts) within a relative 1e-5, on the whole graph and on a
 * block; its backward against finite differences.
 */
static void
attention_layers(void)
{
	struct kg_backend emu = *cpu;
	struct fixture f;
	uint64_t i, most = 0, empty = 0;
	size_t k;
	int sampled;

	layer_enc = KG_GNN_RELGNN;
	fixture_isolated = 1;
	fixture_init(&f, 0);
	for (i = 0; i < f.full.n_nodes; i++) {
		uint64_t in = f.full.off[i + 1] - f.full.off[i];

		empty += in == 0;
		most = in > most ? in : most;
	}
	T_CHECKF(empty == 1 && f.full.off[GN] == f.full.off[GN - 1],
	    "%" PRIu64 " nodes without in-edges", empty);
	T_CHECKF(most >= 16, "the busiest node has %" PRIu64 " in-edges",
	    most);
	fixture_release(&f);
	for (sampled = 0; sampled < 2; sampled++) {
		check_layer(cpu, KG_GNN_BASIS, 1, 0, sampled);
		check_layer(cpu, KG_GNN_BASIS, 2, 1, sampled);
	}
	emu.gnn = &emu_gnn_ops;
	for (k = 0; k < KG_ARRAY_LEN(bdims); k++) {
		emu_bdim = bdims[k];
		for (sampled = 0; sampled < 2; sampled++) {
			check_layer(&emu, KG_GNN_BASIS, 2, 1, sampled);
			emu_parts = 5;
			check_layer(&emu, KG_GNN_BASIS, 1, 0, sampled);
			emu_parts = 0;
		}
	}
	emu_bdim = KG_DEV_BLOCK;
	check_fd(KG_GNN_BASIS, 0);
	check_fd(KG_GNN_BASIS, 1);
	layer_enc = KG_GNN_RGCN;
	fixture_isolated = 0;
}

/* ---- a whole batch against the CPU's ---- */

static void
check_step(enum kg_gnn_decomp dc, int blocks, float drop, double adv)
{
	enum { NB = 4, NEG = 3 };
	struct kg_gnn m = KG_GNN_INIT;
	struct kg_gnn_state s = KG_GNN_STATE_INIT;
	struct kg_gnn_decode_work dw = KG_GNN_DECODE_WORK_INIT;
	struct kg_gnn_dstep ds = KG_GNN_DSTEP_INIT;
	struct kg_gnn_config c;
	struct kg_model dec;
	struct kg_loss l = KG_LOSS_INIT;
	struct fixture f;
	struct kg_rng r, r1, r2;
	uint64_t n_dst[2], nout;
	const uint64_t *nd = NULL;
	const struct kg_gnn_graph *g;
	const int32_t *lrow = NULL;
	int32_t pos[NB * 3], negs[NB * NEG * 3];
	size_t P, k, nrel, dl, nz = 0;
	float *rel, *gh, *g1, *g2, scale = 1.0f / NB;
	double loss1, loss2 = 0.0;

	fixture_init(&f, blocks);
	memset(&c, 0, sizeof(c));
	c.encoder = layer_enc;
	c.decomp = dc;
	c.n_layers = 2;
	c.dims[0] = 4;
	c.dims[1] = 6;
	c.dims[2] = 4;
	c.n_bases = 2;
	c.n_relations = GR;
	c.n_learned = GN;
	c.learned_only = 1;
	c.dropout = drop;
	T_CHECK(kg_gnn_init(&m, &c, NULL, 42) == 0);
	T_CHECK(kg_model_init(&dec, KG_MODEL_DISTMULT, 4, 0, 0.0f) == 0);
	l.adv_temp = adv;
	P = m.n_params;
	dl = c.dims[2];
	nrel = GR * (size_t)dec.rel_width;
	kg_rng_seed(&r, 8, 8);
	rel = rnd(&r, nrel, -1, 1);
	if (blocks) {
		n_dst[0] = f.sb.hop_end[1];
		n_dst[1] = f.sb.hop_end[0];
		nd = n_dst;
		g = &f.sb.g;
		lrow = f.sb.lrow;
	} else
		g = &f.full;
	nout = blocks ? n_dst[1] : GN;
	for (k = 0; k < NB * 3; k += 3) {
		pos[k] = (int32_t)kg_rng_below(&r, nout);
		pos[k + 1] = (int32_t)kg_rng_below(&r, GR);
		pos[k + 2] = (int32_t)kg_rng_below(&r, nout);
	}
	for (k = 0; k < NB * NEG; k++) {
		memcpy(negs + 3 * k, pos + 3 * (k / NEG), 3 * sizeof(int32_t));
		negs[3 * k + (k % 2 ? 0 : 2)] = (int32_t)kg_rng_below(&r, nout);
	}
	/* The CPU: step.c's encode_decode. */
	gh = kg_xcalloc(nout * dl + 1, sizeof(float));
	g1 = rnd(&r, P + nrel, 0, 0);
	g2 = dup(g1, P + nrel);
	kg_rng_seed(&r1, 5, 5);
	kg_gnn_forward_blocks(&m, g, nd, NULL, NULL, lrow, &r1, &s);
	T_CHECK(s.rows[2] == nout);
	loss1 = kg_gnn_decode(&dec, &l, s.h[2], nout, rel, GR, pos, NB, negs,
	    NEG, scale, gh, g1 + P, &dw);
	kg_gnn_backward(&m, g, NULL, NULL, lrow, &s, gh, g1);
	/* The device, from the same stream. */
	kg_rng_seed(&r2, 5, 5);
	T_CHECK(kg_gnn_dstep_open(&ds, cpu, &m, &dec, rel, nrel) == 0);
	T_CHECK(kg_gnn_dstep_grad(&ds, &m, &dec, &l, g, nd, lrow, &r2, pos, NB,
	    negs, NEG, scale, g2, &loss2) == 0);
	T_CHECKF(fabs(loss2 - loss1) <= 1e-5 * fmax(1.0, fabs(loss1)),
	    "loss %.9g against %.9g", loss2, loss1);
	T_CHECK(close_rel(g2, g1, P, 0, "encoder gradients"));
	T_CHECK(close_rel(g2 + P, g1 + P, nrel, 1, "relation gradients"));
	/* Same streams: the same masks were drawn. */
	T_CHECK(kg_rng_uniform(&r1) == kg_rng_uniform(&r2));
	for (k = 0; k < P + nrel; k++)
		nz += g1[k] != 0.0f;
	T_CHECKF(nz > P / 10, "%zu of %zu gradients non-zero", nz, P + nrel);
	kg_gnn_dstep_release(&ds);
	kg_gnn_decode_work_release(&dw);
	kg_gnn_state_release(&s);
	kg_gnn_release(&m);
	free(rel);
	free(gh);
	free(g1);
	free(g2);
	fixture_release(&f);
}

static void
step_against_cpu(void)
{
	int blocks;

	for (blocks = 0; blocks < 2; blocks++) {
		check_step(KG_GNN_BASIS, blocks, 0.0f, 0.0);
		check_step(KG_GNN_BASIS, blocks, 0.3f, 1.0);
		check_step(KG_GNN_BLOCK, blocks, 0.3f, 0.0);
		/* RelGNN: two attention layers. */
		layer_enc = KG_GNN_RELGNN;
		check_step(KG_GNN_BASIS, blocks, 0.3f, 1.0);
		layer_enc = KG_GNN_RGCN;
	}
}

/* |a - b| <= 1e-6 max(1, |b|) for n floats (arrays without guards). */
static int
near(const float *a, const float *b, size_t n, const char *what)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!(fabsf(a[i] - b[i]) <= 1e-6f * fmaxf(1.0f, fabsf(b[i])))) {
			fprintf(stderr, "%s[%zu]: %.9g against %.9g\n", what, i,
			    (double)a[i], (double)b[i]);
			return 0;
		}
	return 1;
}

/* gnntrain/step.c's update on one rank, on the host, from the gradients
 * kg_gnn_dstep_grad gave (the learned rows' added into grad's table). */
static void
host_update(struct kg_gnn *m, float *rel, size_t nrel, float *grad,
    const struct kg_gnn_graph *g, const int32_t *lrow, float *st_enc,
    float *st_rel, float *st_learn, const struct kg_adam *a, double reg)
{
	size_t d0 = m->c.dims[0], hi = m->c.n_learned * d0;
	size_t nd = m->n_params - hi;
	uint64_t i;

	if (reg > 0.0) {
		kg_regularise(m->w + hi, grad + hi, nd, reg, 2, 1.0);
		kg_regularise(rel, grad + m->n_params, nrel, reg, 2, 1.0);
	}
	for (i = 0; i < g->n_nodes; i++) {
		size_t r = lrow != NULL ? (size_t)lrow[i] : i;

		if (reg > 0.0)
			kg_regularise(m->w + r * d0, grad + r * d0, d0, reg, 2,
			    1.0);
		kg_adam_row(m->w + r * d0, st_learn + r * (2 * d0 + 1),
		    grad + r * d0, d0, a);
	}
	kg_adam_row(m->w + hi, st_enc, grad + hi, nd, a);
	kg_adam_row(rel, st_rel, grad + m->n_params, nrel, a);
}

/*
 * Three steps of kg_gnn_dstep_train (the update on the device) against
 * kg_gnn_dstep_grad's gradients updated on the host as step.c does, on
 * be: every parameter and Adam state within a relative 1e-6 after each
 * step (pulled back from the device), the learned rows outside the
 * batch's graph untouched.
 */
static void
check_train(struct kg_backend *be, enum kg_gnn_decomp dc, int blocks,
    double reg)
{
	enum { NB = 4, NEG = 3, STEPS = 3 };
	struct kg_gnn m1 = KG_GNN_INIT, m2 = KG_GNN_INIT;
	struct kg_gnn_dstep d1 = KG_GNN_DSTEP_INIT, d2 = KG_GNN_DSTEP_INIT;
	struct kg_gnn_config c;
	struct kg_model dec;
	struct kg_loss l = KG_LOSS_INIT;
	struct kg_adam a = KG_ADAM_INIT;
	struct fixture f;
	struct kg_rng r, r1, r2;
	uint64_t n_dst[2], nout;
	const uint64_t *nd = NULL;
	const struct kg_gnn_graph *g;
	const int32_t *lrow = NULL;
	int32_t pos[NB * 3], negs[NB * NEG * 3];
	size_t P, k, nrel, d0, hi, ns_enc, ns_learn, step, moved = 0;
	float *rel1, *rel2, *grad, *se1, *se2, *sr1, *sr2, *sl1, *sl2, *w0;
	double loss1, loss2;

	fixture_init(&f, blocks);
	memset(&c, 0, sizeof(c));
	c.encoder = layer_enc;
	c.decomp = dc;
	c.n_layers = 2;
	c.dims[0] = 4;
	c.dims[1] = 6;
	c.dims[2] = 4;
	c.n_bases = 2;
	c.n_relations = GR;
	c.n_learned = GN;
	c.learned_only = 1;
	c.dropout = 0.2f;
	T_CHECK(kg_gnn_init(&m1, &c, NULL, 42) == 0);
	T_CHECK(kg_gnn_init(&m2, &c, NULL, 42) == 0);
	T_CHECK(kg_model_init(&dec, KG_MODEL_DISTMULT, 4, 0, 0.0f) == 0);
	a.lr = 0.05f;
	P = m1.n_params;
	d0 = c.dims[0];
	hi = GN * d0;
	nrel = GR * (size_t)dec.rel_width;
	ns_enc = 2 * (P - hi) + 1;
	ns_learn = GN * (2 * d0 + 1);
	kg_rng_seed(&r, 8, 8);
	rel1 = rnd(&r, nrel, -1, 1);
	rel2 = dup(rel1, nrel);
	w0 = kg_xmallocarray(P, sizeof(*w0));	/* m1.w has no guards */
	memcpy(w0, m1.w, P * sizeof(*w0));
	se1 = kg_xcalloc(ns_enc, sizeof(float));
	se2 = kg_xcalloc(ns_enc, sizeof(float));
	sr1 = kg_xcalloc(2 * nrel + 1, sizeof(float));
	sr2 = kg_xcalloc(2 * nrel + 1, sizeof(float));
	sl1 = kg_xcalloc(ns_learn, sizeof(float));
	sl2 = kg_xcalloc(ns_learn, sizeof(float));
	grad = kg_xcalloc(P + nrel, sizeof(float));
	if (blocks) {
		n_dst[0] = f.sb.hop_end[1];
		n_dst[1] = f.sb.hop_end[0];
		nd = n_dst;
		g = &f.sb.g;
		lrow = f.sb.lrow;
	} else
		g = &f.full;
	nout = blocks ? n_dst[1] : GN;
	for (k = 0; k < NB * 3; k += 3) {
		pos[k] = (int32_t)kg_rng_below(&r, nout);
		pos[k + 1] = (int32_t)kg_rng_below(&r, GR);
		pos[k + 2] = (int32_t)kg_rng_below(&r, nout);
	}
	for (k = 0; k < NB * NEG; k++) {
		memcpy(negs + 3 * k, pos + 3 * (k / NEG), 3 * sizeof(int32_t));
		negs[3 * k + (k % 2 ? 0 : 2)] = (int32_t)kg_rng_below(&r, nout);
	}
	kg_rng_seed(&r1, 5, 5);
	kg_rng_seed(&r2, 5, 5);
	T_CHECK(kg_gnn_dstep_open(&d1, be, &m1, &dec, rel1, nrel) == 0);
	T_CHECK(kg_gnn_dstep_open(&d2, be, &m2, &dec, rel2, nrel) == 0);
	kg_error_mute(1);
	T_CHECK(kg_gnn_dstep_train(&d2, &m2, &dec, &l, g, nd, lrow, &r2, pos,
	    NB, negs, NEG, 1.0f / NB, &a, reg, &loss2) == -1);
	kg_error_mute(0);
	T_CHECK(kg_gnn_dstep_push(&d2, &m2, rel2, se2, sr2, sl2) == 0);
	for (step = 0; step < STEPS; step++) {
		memset(grad, 0, (P + nrel) * sizeof(float));
		T_CHECK(kg_gnn_dstep_upload(&d1, &m1, rel1) == 0);
		T_CHECK(kg_gnn_dstep_grad(&d1, &m1, &dec, &l, g, nd, lrow, &r1,
		    pos, NB, negs, NEG, 1.0f / NB, grad, &loss1) == 0);
		host_update(&m1, rel1, nrel, grad, g, lrow, se1, sr1, sl1, &a,
		    reg);
		T_CHECK(kg_gnn_dstep_train(&d2, &m2, &dec, &l, g, nd, lrow,
		    &r2, pos, NB, negs, NEG, 1.0f / NB, &a, reg, &loss2) == 0);
		T_CHECKF(loss2 == loss1, "step %zu: loss %.9g against %.9g",
		    step, loss2, loss1);
		T_CHECK(kg_gnn_dstep_pull(&d2, &m2, rel2, se2, sr2, sl2) == 0);
		T_CHECK(near(m2.w, m1.w, P, "parameters"));
		T_CHECK(near(rel2, rel1, nrel, "relations"));
		T_CHECK(near(se2, se1, ns_enc, "encoder states"));
		T_CHECK(near(sr2, sr1, 2 * nrel + 1, "relation states"));
		T_CHECK(near(sl2, sl1, ns_learn, "learned rows' states"));
	}
	T_CHECK(se2[ns_enc - 1] == (float)STEPS);
	T_CHECK(sr2[2 * nrel] == (float)STEPS);
	/* Rows of the batch's graph moved, the others did not. */
	for (k = 0; k < GN; k++) {
		int in = 0;
		uint64_t i;

		for (i = 0; i < g->n_nodes; i++)
			in |= (lrow != NULL ? (size_t)lrow[i] : i) == k;
		if (in)
			moved += memcmp(m2.w + k * d0, w0 + k * d0, d0 *
			    sizeof(float)) != 0;
		else
			T_CHECKF(memcmp(m2.w + k * d0, w0 + k * d0, d0 *
			    sizeof(float)) == 0, "row %zu outside the graph", k);
	}
	/* (A row whose gradient is zero moves only with the regulariser.) */
	T_CHECKF(moved > g->n_nodes / 2, "%zu of %zu rows moved",
	    moved, (size_t)g->n_nodes);
	kg_gnn_dstep_release(&d1);
	kg_gnn_dstep_release(&d2);
	kg_gnn_release(&m1);
	kg_gnn_release(&m2);
	free(rel1);
	free(rel2);
	free(w0);
	free(se1);
	free(se2);
	free(sr1);
	free(sr2);
	free(sl1);
	free(sl2);
	free(grad);
	fixture_release(&f);
}

static void
train_on_device(void)
{
	struct kg_backend emu = *cpu;
	int blocks;

	emu.gnn = &emu_gnn_ops;
	for (blocks = 0; blocks < 2; blocks++) {
		check_train(cpu, KG_GNN_BASIS, blocks, 0.0);
		check_train(cpu, KG_GNN_BLOCK, blocks, 1e-3);
		check_train(&emu, KG_GNN_BASIS, blocks, 1e-3);
		layer_enc = KG_GNN_RELGNN;
		check_train(&emu, KG_GNN_BASIS, blocks, 1e-3);
		layer_enc = KG_GNN_RGCN;
	}
}

static void
step_refuses(void)
{
	struct kg_gnn_dstep ds = KG_GNN_DSTEP_INIT;
	struct kg_gnn m = KG_GNN_INIT;
	struct kg_gnn_config c;
	struct kg_model dec;
	float rel[GR * 4] = { 0 };

	memset(&c, 0, sizeof(c));
	c.encoder = KG_GNN_RELGNN;
	c.n_layers = 1;
	c.dims[0] = c.dims[1] = 4;
	c.n_relations = GR;
	c.n_learned = 4;
	c.learned_only = 1;
	T_CHECK(kg_gnn_init(&m, &c, NULL, 1) == 0);
	T_CHECK(kg_model_init(&dec, KG_MODEL_DISTMULT, 4, 0, 0.0f) == 0);
	/* RelGNN runs on the device now. */
	T_CHECK(kg_gnn_dstep_open(&ds, cpu, &m, &dec, rel, GR * 4) == 0);
	kg_gnn_dstep_release(&ds);
	kg_error_mute(1);
	kg_gnn_release(&m);
	c.encoder = KG_GNN_RGCN;
	c.n_bases = 2;
	T_CHECK(kg_gnn_init(&m, &c, NULL, 1) == 0);
	T_CHECK(kg_model_init(&dec, KG_MODEL_COMPLEX, 4, 0, 0.0f) == 0);
	T_CHECK(kg_gnn_dstep_open(&ds, cpu, &m, &dec, rel, GR * 4) == -1);
	T_CHECK(strstr(kg_error_last(), "DistMult only, not ComplEx") != NULL);
	kg_error_mute(0);
	kg_gnn_dstep_release(&ds);
	kg_gnn_release(&m);
}

int
main(void)
{
	struct kg_device d = KG_DEVICE_INIT;

	cpu = kg_backend_open(&d);
	if (cpu == NULL)
		return 1;
	T_RUN(test_seg_sum);
	T_RUN(test_edge_ops);
	T_RUN(test_seg_split);
	T_RUN(layers_cpu_backend);
	T_RUN(layers_emulated_grid);
	T_RUN(layers_finite_differences);
	T_RUN(attention_layers);
	T_RUN(step_against_cpu);
	T_RUN(test_adam_flat);
	T_RUN(train_on_device);
	T_RUN(step_refuses);
	kg_backend_free(cpu);
	return T_DONE();
}
