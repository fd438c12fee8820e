/*
 * devops_tile: the tiled chunk scores on the device, the chunk forward
 * and backward of the similarities cuBLAS cannot do (L1, L2, L2_DIFF,
 * CMOD, CMOD_APPROX; DOT works too, for the tests) as GEMM-shaped tiles
 * with the summed dimension staged in shared memory: block functions
 * (kg_dev_tile_*) that the CUDA backend's tiled kernels run phase by
 * phase between barriers, and that tests/unit/devops_tile_emu.h runs
 * phase by phase over a block's threads on the host.  The arithmetic of
 * a term is devops_score.h's; the contract of a block follows.
 */
#ifndef KG_DEVOPS_TILE_H
#define KG_DEVOPS_TILE_H

#include "compute/devops_score.h"

/*
 * A block of KG_DEV_TILE_THREADS threads owns a KG_DEV_TILE x
 * KG_DEV_TILE tile of outputs; thread t, (ty, tx) = (t /
 * KG_DEV_TDIM, t % KG_DEV_TDIM), owns the KG_DEV_TSUB x KG_DEV_TSUB
 * outputs at rows ty + KG_DEV_TDIM r and columns tx + KG_DEV_TDIM s of
 * the tile (strided, so that neighbouring threads read neighbouring
 * shared floats and write neighbouring outputs), in registers.  The
 * dimension summed over runs in slabs of KG_DEV_SLAB, staged in shared
 * memory (struct kg_dev_tile_smem), so that a block reads each input
 * element it needs from global memory once.  A block runs in phases:
 *
 *	init                                    (registers only)
 *	for each slab s: load; barrier; accumulate; barrier
 *	store
 *
 * load reads global memory and writes shared memory, each slot from one
 * thread; accumulate reads shared memory and writes the thread's own
 * registers; store writes each output element from one thread (no
 * atomics).  So running each phase over the block's threads one at a
 * time, in any order, gives the GPU's result: tests/unit/t_devops_tile.c
 * does so (devops_tile_emu.h), with the threads in both orders.
 *
 * The order of the sums.  Forward: a pair's sum over k < n (n = d, or
 * d / 2 complex coordinates for CMOD) runs k = 0, 1, ..., n - 1 into one
 * float, not in the CPU's eight lanes: within a relative 1e-5 of the CPU
 * backend, not its bits.  Backward: an element's sum over the other side
 * runs j (or i) = 0, 1, ... into one float, skipping g == 0; for DOT, L1
 * and the CMOD kinds with kg_dev_t_chunk_bwd_q's (_c's) arithmetic, the
 * same bits as those thread functions on the host; for the L2 kinds
 * with the weight w = g / dist formed once a pair as the CPU kernel forms
 * it, then acc -= w (q - c) (gq) or += w (q - c) (gc), within 1e-5.  On
 * a GPU both orders are fixed too, so a run gives the same bits every
 * time (nvcc may fuse a multiply and an add, as it may in every kernel
 * here).
 */

#define KG_DEV_TILE 64		/* outputs a block owns, each way */
#define KG_DEV_TSUB 4		/* outputs a thread owns, each way */
#define KG_DEV_TDIM (KG_DEV_TILE / KG_DEV_TSUB)
#define KG_DEV_TILE_THREADS (KG_DEV_TDIM * KG_DEV_TDIM)
#define KG_DEV_SLAB 16		/* the summed dimension's slab */
#define KG_DEV_TSTRIDE (KG_DEV_TILE + 1)	/* a padded shared row */

/* Which output the backward makes. */
#define KG_DEV_TILE_GQ 0	/* gq[i][l] = sum_j g_ij dS/dq_l */
#define KG_DEV_TILE_GC 1	/* gc[j][l] += sum_i g_ij dS/dc_l */

/*
 * A block's shared memory (16,640 bytes).  Forward: a[p] the queries'
 * slab, b[p] the candidates', p = 0 the real parts (every row element
 * for the non-CMOD kinds), 1 the imaginary parts, [k][row] so that the
 * threads' reads of one k are consecutive.  Backward: a[p] the other
 * side's rows [row][column], b[0] its g_ij (L2 kinds: g_ij / dist_ij)
 * [other row][own row], b[1] unused.
 */
struct kg_dev_tile_smem {
	float a[2][KG_DEV_SLAB][KG_DEV_TSTRIDE];
	float b[2][KG_DEV_SLAB][KG_DEV_TSTRIDE];
};

/* What a tiled launch computes: the arguments of kg_be_chunk (forward:
 * out the scores, dist the L2 distances written, may be NULL) or of one
 * side of kg_be_chunk_backward (side KG_DEV_TILE_GQ or _GC, out gq or
 * gc, dist the distances read, may be NULL). */
struct kg_dev_tile {
	int sim, side;
	size_t nq, nc, d;
	float gamma;
	const float *q, *c, *g;
	float *dist, *out;
};

KG_HD int
kg_dev_is_cmod(int sim)
{
	return sim == KG_KERN_CMOD || sim == KG_KERN_CMOD_APPROX;
}

/* The length of a forward sum: d, or d / 2 complex coordinates. */
KG_HD size_t
kg_dev_tile_n(int sim, size_t d)
{
	return kg_dev_is_cmod(sim) ? d / 2 : d;
}

/* The forward grid: x over query tiles, y over candidate tiles; the
 * slabs a block runs. */
KG_HD size_t
kg_dev_tile_fwd_gx(struct kg_dev_tile a)
{
	return kg_dev_nblocks(a.nq, KG_DEV_TILE);
}

KG_HD size_t
kg_dev_tile_fwd_gy(struct kg_dev_tile a)
{
	return kg_dev_nblocks(a.nc, KG_DEV_TILE);
}

KG_HD size_t
kg_dev_tile_fwd_slabs(struct kg_dev_tile a)
{
	return kg_dev_nblocks(kg_dev_tile_n(a.sim, a.d), KG_DEV_SLAB);
}

/* One forward term, as kg_dev_sim_term (re, im: a complex coordinate's
 * parts; im unused but for CMOD). */
KG_HD float
kg_dev_tile_term(int sim, float qre, float qim, float cre, float cim)
{
	float e, di;

	switch (sim) {
	case KG_KERN_DOT:
		return qre * cre;
	case KG_KERN_L1:
		return fabsf(qre - cre);
	case KG_KERN_L2:
	case KG_KERN_L2_DIFF:
		e = qre - cre;
		return e * e;
	default:
		e = qre - cre;
		di = qim - cim;
		return sim == KG_KERN_CMOD_APPROX ?
		    kg_dev_sqrt_approx(e * e + di * di) :
		    sqrtf(e * e + di * di);
	}
}

/* Forward phase 1: thread t of block (bx, by) stages its share of slab
 * s of the queries and candidates (zeros past the rows and past n). */
KG_HD void
kg_dev_tile_fwd_load(unsigned bx, unsigned by, unsigned t,
    struct kg_dev_tile a, size_t s, struct kg_dev_tile_smem *sm)
{
	size_t n = kg_dev_tile_n(a.sim, a.d), h = a.d / 2;
	size_t i0 = (size_t)bx * KG_DEV_TILE, j0 = (size_t)by * KG_DEV_TILE;
	size_t k0 = s * KG_DEV_SLAB, np = kg_dev_is_cmod(a.sim) ? 2 : 1;
	size_t p, e, r, kk;

	for (p = 0; p < np; p++)
		for (e = t; e < KG_DEV_SLAB * KG_DEV_TILE;
		    e += KG_DEV_TILE_THREADS) {
			r = e / KG_DEV_SLAB;
			kk = e % KG_DEV_SLAB;
			sm->a[p][kk][r] = i0 + r < a.nq && k0 + kk < n ?
			    a.q[(i0 + r) * a.d + p * h + k0 + kk] : 0.0f;
			sm->b[p][kk][r] = j0 + r < a.nc && k0 + kk < n ?
			    a.c[(j0 + r) * a.d + p * h + k0 + kk] : 0.0f;
		}
}

/* Forward phase 2 for one similarity (inlined with sim a constant):
 * acc[r * TSUB + c] += the terms k0 .. k0 + kn of the thread's pairs. */
KG_HD void
kg_dev_tile_fwd_sum(int sim, unsigned t, size_t kn,
    const struct kg_dev_tile_smem *sm, float *acc)
{
	unsigned ty = t / KG_DEV_TDIM, tx = t % KG_DEV_TDIM, r, c;
	float qre[KG_DEV_TSUB], qim[KG_DEV_TSUB], cre[KG_DEV_TSUB];
	float cim[KG_DEV_TSUB];
	int cmod = kg_dev_is_cmod(sim);
	size_t kk;

	for (kk = 0; kk < kn; kk++) {
		for (r = 0; r < KG_DEV_TSUB; r++) {
			qre[r] = sm->a[0][kk][ty + KG_DEV_TDIM * r];
			qim[r] = cmod ? sm->a[1][kk][ty + KG_DEV_TDIM * r] : 0.0f;
			cre[r] = sm->b[0][kk][tx + KG_DEV_TDIM * r];
			cim[r] = cmod ? sm->b[1][kk][tx + KG_DEV_TDIM * r] : 0.0f;
		}
		for (r = 0; r < KG_DEV_TSUB; r++)
			for (c = 0; c < KG_DEV_TSUB; c++)
				acc[r * KG_DEV_TSUB + c] += kg_dev_tile_term(sim,
				    qre[r], qim[r], cre[c], cim[c]);
	}
}

/* Forward phase 2: thread t adds slab s's terms to its acc (TSUB^2
 * floats, zeroed before the first slab). */
KG_HD void
kg_dev_tile_fwd_acc(unsigned t, struct kg_dev_tile a, size_t s,
    const struct kg_dev_tile_smem *sm, float *acc)
{
	size_t n = kg_dev_tile_n(a.sim, a.d), k0 = s * KG_DEV_SLAB;
	size_t kn = n - k0 < KG_DEV_SLAB ? n - k0 : KG_DEV_SLAB;

	switch (a.sim) {
	case KG_KERN_DOT:
		kg_dev_tile_fwd_sum(KG_KERN_DOT, t, kn, sm, acc);
		break;
	case KG_KERN_L1:
		kg_dev_tile_fwd_sum(KG_KERN_L1, t, kn, sm, acc);
		break;
	case KG_KERN_L2:
	case KG_KERN_L2_DIFF:
		kg_dev_tile_fwd_sum(KG_KERN_L2, t, kn, sm, acc);
		break;
	case KG_KERN_CMOD:
		kg_dev_tile_fwd_sum(KG_KERN_CMOD, t, kn, sm, acc);
		break;
	default:
		kg_dev_tile_fwd_sum(KG_KERN_CMOD_APPROX, t, kn, sm, acc);
		break;
	}
}

/* Forward phase 3: thread t of block (bx, by) writes its pairs' scores
 * (and distances, L2 kinds) as kg_dev_sim finishes them. */
KG_HD void
kg_dev_tile_fwd_store(unsigned bx, unsigned by, unsigned t,
    struct kg_dev_tile a, const float *acc)
{
	unsigned ty = t / KG_DEV_TDIM, tx = t % KG_DEV_TDIM, r, c;
	size_t i, j, e;
	float s;

	for (r = 0; r < KG_DEV_TSUB; r++)
		for (c = 0; c < KG_DEV_TSUB; c++) {
			i = (size_t)bx * KG_DEV_TILE + ty + KG_DEV_TDIM * r;
			j = (size_t)by * KG_DEV_TILE + tx + KG_DEV_TDIM * c;
			if (i >= a.nq || j >= a.nc)
				continue;
			e = i * a.nc + j;
			s = acc[r * KG_DEV_TSUB + c];
			switch (a.sim) {
			case KG_KERN_DOT:
				a.out[e] = s;
				break;
			case KG_KERN_L2:
			case KG_KERN_L2_DIFF:
				s = sqrtf(s);
				if (a.dist != NULL)
					a.dist[e] = s;
				a.out[e] = a.gamma - s;
				break;
			default:
				a.out[e] = a.gamma - s;
				break;
			}
		}
}

/* The backward's own rows (gq: the queries, gc: the candidates) and the
 * other side's; its columns: d, or for CMOD the d / 2 complex
 * coordinates and, when d is odd, one more for the last element (whose
 * gradient is 0). */
KG_HD size_t
kg_dev_tile_bwd_rows(struct kg_dev_tile a)
{
	return a.side == KG_DEV_TILE_GQ ? a.nq : a.nc;
}

KG_HD size_t
kg_dev_tile_bwd_other(struct kg_dev_tile a)
{
	return a.side == KG_DEV_TILE_GQ ? a.nc : a.nq;
}

KG_HD size_t
kg_dev_tile_bwd_cols(struct kg_dev_tile a)
{
	return kg_dev_is_cmod(a.sim) ? a.d / 2 + a.d % 2 : a.d;
}

/* The backward grid: x over own-row tiles, y over column tiles; the
 * slabs of other rows a block runs. */
KG_HD size_t
kg_dev_tile_bwd_gx(struct kg_dev_tile a)
{
	return kg_dev_nblocks(kg_dev_tile_bwd_rows(a), KG_DEV_TILE);
}

KG_HD size_t
kg_dev_tile_bwd_gy(struct kg_dev_tile a)
{
	return kg_dev_nblocks(kg_dev_tile_bwd_cols(a), KG_DEV_TILE);
}

KG_HD size_t
kg_dev_tile_bwd_slabs(struct kg_dev_tile a)
{
	return kg_dev_nblocks(kg_dev_tile_bwd_other(a), KG_DEV_SLAB);
}

/*
 * Both sides of the backward in one grid: gq's blocks at z = 0, gc's at
 * z = 1 (gc NULL: z = 0 only), x over the larger side's row tiles.  The
 * launch's x extent, and for block (bx, by, bz) its side in *a (out gc
 * at z = 1) and whether it has work (0: it leaves before any barrier).
 */
KG_HD size_t
kg_dev_tile_bwd_gx2(struct kg_dev_tile a, const float *gc)
{
	size_t gq = kg_dev_tile_bwd_gx(a);

	a.side = KG_DEV_TILE_GC;
	return gc != NULL && kg_dev_tile_bwd_gx(a) > gq ?
	    kg_dev_tile_bwd_gx(a) : gq;
}

KG_HD int
kg_dev_tile_bwd_block(struct kg_dev_tile *a, unsigned bx, unsigned by,
    unsigned bz, float *gc)
{
	if (bz == 1) {
		a->side = KG_DEV_TILE_GC;
		a->out = gc;
	}
	return bx < kg_dev_tile_bwd_gx(*a) && by < kg_dev_tile_bwd_gy(*a);
}

/*
 * Backward phase 0: thread t of block (bx, by) loads its own elements
 * into own (2 TSUB^2 floats: the values, then for CMOD the imaginary
 * parts; zeros past the rows and columns) and zeroes acc (as many).
 */
KG_HD void
kg_dev_tile_bwd_init(unsigned bx, unsigned by, unsigned t,
    struct kg_dev_tile a, float *own, float *acc)
{
	unsigned ty = t / KG_DEV_TDIM, tx = t % KG_DEV_TDIM, r, c;
	const float *x = a.side == KG_DEV_TILE_GQ ? a.q : a.c;
	size_t rows = kg_dev_tile_bwd_rows(a), h = a.d / 2, row, col, o;
	size_t real = kg_dev_is_cmod(a.sim) ? h : a.d;
	int ok;

	for (r = 0; r < KG_DEV_TSUB; r++)
		for (c = 0; c < KG_DEV_TSUB; c++) {
			row = (size_t)bx * KG_DEV_TILE + ty + KG_DEV_TDIM * r;
			col = (size_t)by * KG_DEV_TILE + tx + KG_DEV_TDIM * c;
			o = r * KG_DEV_TSUB + c;
			ok = row < rows && col < real;
			own[o] = ok ? x[row * a.d + col] : 0.0f;
			own[KG_DEV_TSUB * KG_DEV_TSUB + o] = ok &&
			    kg_dev_is_cmod(a.sim) ? x[row * a.d + h + col] :
			    0.0f;
			acc[o] = 0.0f;
			acc[KG_DEV_TSUB * KG_DEV_TSUB + o] = 0.0f;
		}
}

/* Backward phase 1: thread t stages its share of slab s: the other
 * side's rows j0 .. j0 + SLAB over the block's columns, and the g_ij of
 * those rows against the block's own rows (L2 kinds: g_ij / dist_ij;
 * zeros past the ends).  Global reads run along rows of g either way. */
KG_HD void
kg_dev_tile_bwd_load(unsigned bx, unsigned by, unsigned t,
    struct kg_dev_tile a, size_t s, struct kg_dev_tile_smem *sm)
{
	const float *x = a.side == KG_DEV_TILE_GQ ? a.c : a.q;
	size_t rows = kg_dev_tile_bwd_rows(a), other = kg_dev_tile_bwd_other(a);
	size_t h = a.d / 2, real = kg_dev_is_cmod(a.sim) ? h : a.d;
	size_t np = kg_dev_is_cmod(a.sim) ? 2 : 1, r0 = (size_t)bx * KG_DEV_TILE;
	size_t c0 = (size_t)by * KG_DEV_TILE, j0 = s * KG_DEV_SLAB;
	size_t p, e, jj, r, gi;
	int ok, l2 = a.sim == KG_KERN_L2 || a.sim == KG_KERN_L2_DIFF;
	float gv, dv;

	for (p = 0; p < np; p++)
		for (e = t; e < KG_DEV_SLAB * KG_DEV_TILE;
		    e += KG_DEV_TILE_THREADS) {
			jj = e / KG_DEV_TILE;
			r = e % KG_DEV_TILE;
			sm->a[p][jj][r] = j0 + jj < other && c0 + r < real ?
			    x[(j0 + jj) * a.d + p * h + c0 + r] : 0.0f;
		}
	for (e = t; e < KG_DEV_SLAB * KG_DEV_TILE; e += KG_DEV_TILE_THREADS) {
		if (a.side == KG_DEV_TILE_GQ) {
			r = e / KG_DEV_SLAB;
			jj = e % KG_DEV_SLAB;
		} else {
			jj = e / KG_DEV_TILE;
			r = e % KG_DEV_TILE;
		}
		ok = r0 + r < rows && j0 + jj < other;
		gi = a.side == KG_DEV_TILE_GQ ? (r0 + r) * a.nc + j0 + jj :
		    (j0 + jj) * a.nc + r0 + r;
		gv = ok ? a.g[gi] : 0.0f;
		/* The L2 kinds' weight g / dist, once a pair (as the CPU
		 * kernel forms it), not once an element; no distances, no
		 * gradient (kg_dev_dsdq's dist of 0). */
		if (l2) {
			dv = ok && a.dist != NULL ? a.dist[gi] : 0.0f;
			gv = dv < KG_KERN_DIST_EPS ? 0.0f : gv / dv;
		}
		sm->b[0][jj][r] = gv;
	}
}

/* dS(q, c)/dq of one element (DOT, L1), kg_dev_dsdq's arithmetic. */
KG_HD float
kg_dev_tile_dq(int sim, float q, float c)
{
	float e;

	if (sim == KG_KERN_DOT)
		return c;
	e = q - c;
	return e > 0.0f ? -1.0f : e < 0.0f ? 1.0f : 0.0f;
}

/* Backward phase 2 for one similarity (inlined with sim a constant):
 * acc += g_ij times the own side's derivative, over the kn rows of the
 * staged slab in order, g_ij == 0 skipped. */
KG_HD void
kg_dev_tile_bwd_sum(int sim, int side, unsigned t, size_t kn,
    const struct kg_dev_tile_smem *sm, const float *own, float *acc)
{
	unsigned ty = t / KG_DEV_TDIM, tx = t % KG_DEV_TDIM, r, c, o;
	const unsigned im = KG_DEV_TSUB * KG_DEV_TSUB;
	float gv, xre, xim, dr, di, w, v;
	size_t jj;

	for (jj = 0; jj < kn; jj++)
		for (r = 0; r < KG_DEV_TSUB; r++) {
			gv = sm->b[0][jj][ty + KG_DEV_TDIM * r];
			if (gv == 0.0f)
				continue;
			for (c = 0; c < KG_DEV_TSUB; c++) {
				o = r * KG_DEV_TSUB + c;
				xre = sm->a[0][jj][tx + KG_DEV_TDIM * c];
				if (sim == KG_KERN_L2) {
					/* gv: the weight g / dist. */
					if (side == KG_DEV_TILE_GQ)
						acc[o] -= gv * (own[o] - xre);
					else
						acc[o] += gv * (xre - own[o]);
					continue;
				}
				if (!kg_dev_is_cmod(sim)) {
					/* dS/dc = -dS/dq, but q for DOT. */
					v = side == KG_DEV_TILE_GQ ?
					    kg_dev_tile_dq(sim, own[o], xre) :
					    sim == KG_KERN_DOT ? xre :
					    -kg_dev_tile_dq(sim, xre, own[o]);
					acc[o] += gv * v;
					continue;
				}
				xim = sm->a[1][jj][tx + KG_DEV_TDIM * c];
				dr = side == KG_DEV_TILE_GQ ? own[o] - xre :
				    xre - own[o];
				di = side == KG_DEV_TILE_GQ ? own[im + o] - xim :
				    xim - own[im + o];
				w = kg_dev_cmod_weight(dr, di,
				    sim == KG_KERN_CMOD_APPROX);
				if (side == KG_DEV_TILE_GQ) {
					acc[o] += gv * (-w * dr);
					acc[im + o] += gv * (-w * di);
				} else {
					acc[o] += gv * -(-w * dr);
					acc[im + o] += gv * -(-w * di);
				}
			}
		}
}

/* Backward phase 2: thread t adds slab s's terms to its acc. */
KG_HD void
kg_dev_tile_bwd_acc(unsigned t, struct kg_dev_tile a, size_t s,
    const struct kg_dev_tile_smem *sm, const float *own, float *acc)
{
	size_t other = kg_dev_tile_bwd_other(a), j0 = s * KG_DEV_SLAB;
	size_t kn = other - j0 < KG_DEV_SLAB ? other - j0 : KG_DEV_SLAB;
	int q = a.side == KG_DEV_TILE_GQ;

	switch (a.sim) {
	case KG_KERN_DOT:
		kg_dev_tile_bwd_sum(KG_KERN_DOT, q ? KG_DEV_TILE_GQ :
		    KG_DEV_TILE_GC, t, kn, sm, own, acc);
		break;
	case KG_KERN_L1:
		kg_dev_tile_bwd_sum(KG_KERN_L1, q ? KG_DEV_TILE_GQ :
		    KG_DEV_TILE_GC, t, kn, sm, own, acc);
		break;
	case KG_KERN_L2:
	case KG_KERN_L2_DIFF:
		kg_dev_tile_bwd_sum(KG_KERN_L2, q ? KG_DEV_TILE_GQ :
		    KG_DEV_TILE_GC, t, kn, sm, own, acc);
		break;
	case KG_KERN_CMOD:
		kg_dev_tile_bwd_sum(KG_KERN_CMOD, q ? KG_DEV_TILE_GQ :
		    KG_DEV_TILE_GC, t, kn, sm, own, acc);
		break;
	default:
		kg_dev_tile_bwd_sum(KG_KERN_CMOD_APPROX, q ? KG_DEV_TILE_GQ :
		    KG_DEV_TILE_GC, t, kn, sm, own, acc);
		break;
	}
}

/* Backward phase 3: thread t writes its elements: gq overwritten, gc
 * added to (CMOD: both parts of a coordinate, and 0 for the odd last
 * element). */
KG_HD void
kg_dev_tile_bwd_store(unsigned bx, unsigned by, unsigned t,
    struct kg_dev_tile a, const float *acc)
{
	unsigned ty = t / KG_DEV_TDIM, tx = t % KG_DEV_TDIM, r, c, o;
	const unsigned im = KG_DEV_TSUB * KG_DEV_TSUB;
	size_t rows = kg_dev_tile_bwd_rows(a), cols = kg_dev_tile_bwd_cols(a);
	size_t h = a.d / 2, row, col, l[2];
	float v[2];
	int n, k, add = a.side == KG_DEV_TILE_GC;

	for (r = 0; r < KG_DEV_TSUB; r++)
		for (c = 0; c < KG_DEV_TSUB; c++) {
			row = (size_t)bx * KG_DEV_TILE + ty + KG_DEV_TDIM * r;
			col = (size_t)by * KG_DEV_TILE + tx + KG_DEV_TDIM * c;
			if (row >= rows || col >= cols)
				continue;
			o = r * KG_DEV_TSUB + c;
			n = 1;
			l[0] = col;
			v[0] = acc[o];
			if (kg_dev_is_cmod(a.sim) && col < h) {
				n = 2;
				l[1] = h + col;
				v[1] = acc[im + o];
			} else if (kg_dev_is_cmod(a.sim)) {
				l[0] = 2 * h;
				v[0] = 0.0f;
			}
			for (k = 0; k < n; k++) {
				if (add)
					a.out[row * a.d + l[k]] += v[k];
				else
					a.out[row * a.d + l[k]] = v[k];
			}
		}
}

#endif
