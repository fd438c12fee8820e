/*
 * The device sums that reduce per block (devops_base.h's kg_dev_bsum_*:
 * one atomic a block instead of one a thread) and the launches a device
 * step fuses: kg_dev_v_dsum, kg_dev_v_regularise(_sets) and
 * kg_dev_v_loss_sum on an emulated grid (devops_emu.h's EMU_SUM: 256 and
 * 32 threads a block, the threads of each phase in both orders, the
 * shared memory poisoned with NaN) against a double reference and the
 * CPU backend, over sizes around the block size; a broken tree and a
 * dropped element are caught.  On the CPU backend the fused calls
 * (kg_be_regularise_sets, kg_be_loss_sum) give the bits of the calls
 * they replace, and count one launch each.  The warp-per-row loss
 * (devops_loss.h's kg_dev_wl_*) runs its phases over the emulated warps
 * the same way and is checked against the CPU backend's; the gathers
 * and scatter-adds over row sets against one call a set; the
 * warp-per-row Adagrad against the CPU backend's.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compute/backend.h"
#include "compute/devops_loss.h"
#include "compute/devops_optim.h"
#include "compute/devops_rows.h"
#include "core/rng.h"
#include "core/util.h"
#include "devops_emu.h"
#include "test.h"

static struct kg_backend *cpu;

/* The sizes around a block of bdim threads. */
static size_t
sizes(unsigned bdim, size_t *ns)
{
	size_t k = 0;

	ns[k++] = 0;
	ns[k++] = 1;
	ns[k++] = 31;
	ns[k++] = 32;
	ns[k++] = 33;
	ns[k++] = bdim - 1;
	ns[k++] = bdim;
	ns[k++] = bdim + 1;
	ns[k++] = 7 * (size_t)bdim + 5;	/* many blocks, the last partial */
	return k;
}

/* Neumaier's compensated sum of acc0 and n doubles: the reference. */
static double
ref_sum(double acc0, const double *x, size_t n)
{
	double s = acc0, c = 0.0, t;
	size_t i;

	for (i = 0; i < n; i++) {
		t = s + x[i];
		c += fabs(s) >= fabs(x[i]) ? (s - t) + x[i] : (x[i] - t) + s;
		s = t;
	}
	return s + c;
}

/* |a - ref| within 1e-13 of the sum of the magnitudes. */
static int
near_sum(double a, double ref, const double *x, size_t n)
{
	double m = 1.0;
	size_t i;

	for (i = 0; i < n; i++)
		m += fabs(x[i]);
	return fabs(a - ref) <= 1e-13 * m;
}

static void
test_block_sum(void)
{
	struct kg_rng r;
	size_t ns[16], nn, a, k, i;
	int rev;

	kg_rng_seed(&r, 71, 0);
	for (k = 0; k < KG_ARRAY_LEN(bdims); k++) {
		nn = sizes(bdims[k], ns);
		for (a = 0; a < nn; a++)
			for (rev = 0; rev < 2; rev++) {
				size_t n = ns[a];
				double *x = kg_xmallocarray(n + 1, sizeof(*x));
				double acc = 0.25, ref;

				for (i = 0; i < n; i++)
					x[i] = 1e3 * (kg_rng_uniform(&r) - 0.3);
				ref = ref_sum(0.25, x, n);
				EMU_SUM(bdims[k], rev, 0, n, &acc, kg_dev_v_dsum,
				    n, x);
				T_CHECKF(near_sum(acc, ref, x, n), "n %zu block %u "
				    "rev %d: %.17g against %.17g", n, bdims[k],
				    rev, acc, ref);
				/* Planted: the last step of the tree left out,
				 * and one element dropped. */
				if (n >= 2) {
					acc = 0.25;
					EMU_SUM(bdims[k], rev, 1, n, &acc,
					    kg_dev_v_dsum, n, x);
					T_CHECKF(!near_sum(acc, ref, x, n),
					    "a broken tree passed: n %zu", n);
					acc = 0.25;
					EMU_SUM(bdims[k], rev, 0, n - 1, &acc,
					    kg_dev_v_dsum, n - 1, x);
					T_CHECKF(!near_sum(acc, ref, x, n),
					    "a dropped element passed: n %zu", n);
				}
				/* The CPU backend: in order. */
				acc = 0.25;
				T_CHECK(kg_be_dsum(cpu, n, x, &acc) == 0);
				T_CHECK(near_sum(acc, ref, x, n));
				free(x);
			}
	}
}

/* The regulariser's gradient and value by reference, in double. */
static double
ref_reg(const float *x, size_t n, double coef, unsigned p, double scale,
    const float *g0, float *g)
{
	double v = 0.0, a;
	size_t i;

	for (i = 0; i < n; i++) {
		a = fabs((double)x[i]);
		g[i] = (float)((double)g0[i] + scale * coef * (double)p *
		    (p == 2 ? 1.0 : a) * x[i]);
		v += coef * (p == 2 ? a * a : a * a * a);
	}
	return v;
}

static void
test_regularise_sizes(void)
{
	struct kg_rng r;
	size_t ns[16], nn, a, k;
	unsigned p;
	int rev;

	kg_rng_seed(&r, 72, 0);
	for (k = 0; k < KG_ARRAY_LEN(bdims); k++) {
		nn = sizes(bdims[k], ns);
		for (a = 0; a < nn; a++)
			for (p = 2; p <= 3; p++)
				for (rev = 0; rev < 2; rev++) {
	size_t n = ns[a];
	float *x = rnd(&r, n, -2, 2), *g = rnd(&r, n, -1, 1);
	float *g2 = dup(g, n), *gr = dup(g, n);
	double v = 0.5, ref = 0.5 + ref_reg(x, n, 0.01, p, 0.5, g, gr);

	EMU_SUM(bdims[k], rev, 0, n, &v, kg_dev_v_regularise, n, x, g2, 0.01,
	    p, 0.5);
	T_CHECKF(fabs(v - ref) <= 1e-12 * fmax(1.0, ref), "n %zu p %u block "
	    "%u rev %d: %.17g against %.17g", n, p, bdims[k], rev, v, ref);
	T_CHECK(close_tol(g2, gr, n, 1e-6f, "regulariser gradient"));
	free(x);
	free(g);
	free(g2);
	free(gr);
				}
	}
}

/* Three sets of sizes m[] (one may be empty): the fused call against one
 * call a set, on the CPU (bits) and on the emulated grid. */
static void
regsets_case(struct kg_rng *r, const size_t *m, unsigned p, unsigned bdim,
    int rev)
{
	struct kg_dev_regsets rs;
	float *x[3], *g1[3], *g2[3], *g3[3];
	double v1 = 0.125, v2 = 0.125, v3 = 0.125;
	size_t tot = 0;
	uint64_t l0;
	unsigned k;

	memset(&rs, 0, sizeof(rs));
	rs.nsets = 3;
	for (k = 0; k < 3; k++) {
		x[k] = rnd(r, m[k], -2, 2);
		g1[k] = rnd(r, m[k], -1, 1);
		g2[k] = dup(g1[k], m[k]);
		g3[k] = dup(g1[k], m[k]);
		tot += m[k];
	}
	for (k = 0; k < 3; k++)
		T_CHECK(kg_be_regularise(cpu, m[k], x[k], g1[k], 1e-3, p, 0.25,
		    &v1) == 0);
	for (k = 0; k < 3; k++) {
		rs.x[k] = x[k];
		rs.g[k] = g2[k];
		rs.n[k] = m[k];
	}
	l0 = kg_backend_counts(cpu).launches;
	T_CHECK(kg_be_regularise_sets(cpu, &rs, 1e-3, p, 0.25, &v2) == 0);
	T_CHECK(kg_backend_counts(cpu).launches - l0 == (tot > 0));
	T_CHECKF(memcmp(&v1, &v2, sizeof(v1)) == 0, "sets %zu %zu %zu: "
	    "%.17g against %.17g", m[0], m[1], m[2], v2, v1);
	for (k = 0; k < 3; k++) {
		T_CHECK(close_tol(g2[k], g1[k], m[k], 0.0f, "sets (cpu)"));
		rs.g[k] = g3[k];
	}
	EMU_SUM(bdim, rev, 0, tot, &v3, kg_dev_v_regularise_sets, rs, 1e-3, p,
	    0.25);
	T_CHECKF(fabs(v3 - v1) <= 1e-12 * fmax(1.0, v1), "sets %zu %zu %zu "
	    "block %u: %.17g against %.17g", m[0], m[1], m[2], bdim, v3, v1);
	for (k = 0; k < 3; k++) {
		T_CHECK(close_tol(g3[k], g1[k], m[k], 1e-6f, "sets (grid)"));
		free(x[k]);
		free(g1[k]);
		free(g2[k]);
		free(g3[k]);
	}
}

static void
test_regularise_sets(void)
{
	static const size_t ms[][3] = {
		{ 1, 1, 1 }, { 31, 0, 33 }, { 0, 0, 0 }, { 255, 257, 1 },
		{ 800, 800, 800 }, { 0, 300, 0 },
	};
	struct kg_dev_regsets rs;
	struct kg_rng r;
	size_t a, k;
	unsigned p;
	int rev;
	double v = 0.0;

	kg_rng_seed(&r, 73, 0);
	for (a = 0; a < KG_ARRAY_LEN(ms); a++)
		for (k = 0; k < KG_ARRAY_LEN(bdims); k++)
			for (p = 2; p <= 3; p++)
				for (rev = 0; rev < 2; rev++)
					regsets_case(&r, ms[a], p, bdims[k], rev);
	memset(&rs, 0, sizeof(rs));
	kg_error_mute(1);
	rs.nsets = KG_DEV_REGSETS + 1;
	T_CHECK(kg_be_regularise_sets(cpu, &rs, 1.0, 2, 1.0, &v) < 0);
	rs.nsets = 1;
	T_CHECK(kg_be_regularise_sets(cpu, &rs, 1.0, 4, 1.0, &v) < 0);
	kg_error_mute(0);
}

/* The fused loss against kg_be_loss, kg_be_dsum and two kg_be_scale on
 * the CPU (bits), and on the emulated grid (within 1e-5). */
static void
loss_case(struct kg_rng *r, int kind, size_t rows, size_t n, unsigned bdim,
    int rev)
{
	struct kg_loss l = KG_LOSS_INIT;
	float *pos = rnd(r, rows, -4, 4), *neg = rnd(r, rows * n, -4, 4);
	float *gp1 = rnd(r, rows, 0, 0), *gp2 = dup(gp1, rows);
	float *gp3 = dup(gp1, rows);
	float *gn1 = rnd(r, rows * n, 0, 0), *gn2 = dup(gn1, rows * n);
	float *gn3 = dup(gn1, rows * n), scale = 1.0f / 3.0f;
	double *l1 = kg_xcalloc(rows + 1, sizeof(*l1));
	double *l2 = kg_xcalloc(rows + 1, sizeof(*l2));
	double *l3 = kg_xcalloc(rows + 1, sizeof(*l3));
	double a1 = 0.75, a2 = 0.75, a3 = 0.75;
	uint64_t c0;
	size_t i;

	l.kind = (enum kg_loss_kind)kind;
	l.adv_temp = kind == KG_LOSS_MARGIN ? 0.0 : 0.7;
	l.margin = 1.0;
	T_CHECK(kg_be_loss(cpu, &l, rows, n, pos, neg, NULL, gp1, gn1, l1) ==
	    0 && kg_be_dsum(cpu, rows, l1, &a1) == 0 &&
	    kg_be_scale(cpu, rows * n, scale, gn1) == 0 &&
	    kg_be_scale(cpu, rows, scale, gp1) == 0);
	c0 = kg_backend_counts(cpu).launches;
	T_CHECK(kg_be_loss_sum(cpu, &l, rows, n, pos, neg, NULL, scale, gp2,
	    gn2, l2, &a2) == 0);
	T_CHECK(kg_backend_counts(cpu).launches - c0 == (rows > 0));
	T_CHECKF(memcmp(&a1, &a2, sizeof(a1)) == 0, "kind %d rows %zu: "
	    "%.17g against %.17g", kind, rows, a2, a1);
	T_CHECK(close_tol(gp2, gp1, rows, 0.0f, "gpos (cpu)") &&
	    close_tol(gn2, gn1, rows * n, 0.0f, "gneg (cpu)"));
	EMU_SUM(bdim, rev, 0, rows, &a3, kg_dev_v_loss_sum, kind, l.margin,
	    (float)l.adv_temp, rows, n, pos, neg, NULL, scale, gp3, gn3, l3);
	T_CHECKF(fabs(a3 - a1) <= 1e-5 * fmax(1.0, fabs(a1)), "kind %d rows "
	    "%zu block %u rev %d: %.17g against %.17g", kind, rows, bdim, rev,
	    a3, a1);
	T_CHECK(close_tol(gp3, gp1, rows, 1e-5f, "gpos (grid)") &&
	    close_tol(gn3, gn1, rows * n, 1e-5f, "gneg (grid)"));
	for (i = 0; i < rows; i++)
		T_CHECK(fabs(l3[i] - l1[i]) <= 1e-5 * fmax(1.0, fabs(l1[i])));
	free(pos);
	free(neg);
	free(gp1);
	free(gp2);
	free(gp3);
	free(gn1);
	free(gn2);
	free(gn3);
	free(l1);
	free(l2);
	free(l3);
}

static void
test_loss_sum(void)
{
	struct kg_rng r;
	size_t ns[16], nn, a, k;
	int kind, rev;

	kg_rng_seed(&r, 74, 0);
	for (k = 0; k < KG_ARRAY_LEN(bdims); k++) {
		nn = sizes(bdims[k], ns);
		for (a = 0; a < nn; a++)
			for (kind = 0; kind < 4; kind++)
				for (rev = 0; rev < 2; rev++)
					loss_case(&r, kind, ns[a] > 600 ? 600 :
					    ns[a], 9, bdims[k], rev);
	}
}

/*
 * k_loss_sum_warp on the host: every block of the rows' warps, each
 * phase, reduction step and keep over the block's threads one at a time
 * (rev: last to first), the warps' shared memory poisoned with NaN,
 * then the block's sum of kg_dev_wl_out into *acc.  skip: a reduction
 * step left out (0: none), to plant a broken reduction.
 */
static void
emu_wloss(unsigned bdim, int rev, unsigned skip, struct kg_dev_wloss a,
    float scale, double *acc)
{
	size_t nb = kg_dev_nblocks(a.rows * KG_DEV_WARP, bdim), b, i;
	unsigned nw = bdim / KG_DEV_WARP, k, t, ph, s;
	struct kg_dev_wl_smem *sm = kg_xmallocarray(nw, sizeof(*sm));
	double bs[KG_DEV_BLOCK], *q = (double *)sm;

#define EMU_T (rev ? bdim - 1 - k : k)
#define EMU_I (kg_dev_tid((unsigned)b, t, bdim) / KG_DEV_WARP)
	for (b = 0; b < nb; b++) {
		for (i = 0; i < nw * sizeof(*sm) / sizeof(double); i++)
			q[i] = NAN;
		for (ph = 0; ph < KG_DEV_WL_PHASES; ph++) {
			for (k = 0; k < bdim; k++) {
				t = EMU_T;
				kg_dev_wl_phase(ph, t % KG_DEV_WARP, EMU_I, a,
				    &sm[t / KG_DEV_WARP]);
			}
			for (s = KG_DEV_WARP / 2; s > 0; s /= 2)
				for (k = 0; s != skip && k < bdim; k++) {
					t = EMU_T;
					kg_dev_wl_step(a.kind, ph, t % KG_DEV_WARP,
					    s, &sm[t / KG_DEV_WARP]);
				}
			for (k = 0; k < bdim; k++) {
				t = EMU_T;
				kg_dev_wl_keep(ph, t % KG_DEV_WARP,
				    &sm[t / KG_DEV_WARP]);
			}
		}
		for (k = 0; k < bdim; k++) {
			t = EMU_T;
			kg_dev_bsum_put(t, kg_dev_wl_out(t % KG_DEV_WARP, EMU_I,
			    a, scale, &sm[t / KG_DEV_WARP]), bs);
		}
		for (s = bdim / 2; s > 0; s /= 2)
			for (k = 0; k < bdim; k++)
				kg_dev_bsum_step(EMU_T, s, bs);
		for (k = 0; k < bdim; k++)
			kg_dev_bsum_out(EMU_T, bs, acc);
	}
#undef EMU_T
#undef EMU_I
	free(sm);
}

/* One warp-per-row case against the CPU backend's kg_be_loss_sum: 1 if
 * within 1e-5, the gradients too unless quiet (which reports nothing). */
static int
wloss_case(struct kg_rng *r, int kind, size_t rows, size_t n, float adv,
    int sk, unsigned bdim, int rev, unsigned skip, int quiet)
{
	struct kg_loss l = KG_LOSS_INIT;
	struct kg_dev_wloss a;
	float *pos = rnd(r, rows, -4, 4), *neg = rnd(r, rows * n, -4, 4);
	float *gp1 = rnd(r, rows, 0, 0), *gp2 = dup(gp1, rows);
	float *gn1 = rnd(r, rows * n, 0, 0), *gn2 = dup(gn1, rows * n);
	double *l1 = kg_xcalloc(rows + 1, sizeof(*l1));
	double *l2 = kg_xcalloc(rows + 1, sizeof(*l2));
	uint8_t *skm = kg_xcalloc(rows * n + 1, 1);
	double a1 = 0.5, a2 = 0.5;
	float scale = 0.125f;
	size_t i;
	int ok = 1;

	for (i = 0; i < rows * n; i++) {
		skm[i] = i % 3 == 1;
		if (sk && skm[i])
			neg[i] = 150.0f;
	}
	l.kind = (enum kg_loss_kind)kind;
	l.adv_temp = adv;
	l.margin = 1.0;
	T_CHECK(kg_be_loss_sum(cpu, &l, rows, n, pos, neg, sk ? skm : NULL,
	    scale, gp1, gn1, l1, &a1) == 0);
	a.kind = kind;
	a.margin = l.margin;
	a.adv = adv;
	a.rows = rows;
	a.n = n;
	a.pos = pos;
	a.neg = neg;
	a.skip = sk ? skm : NULL;
	a.gpos = gp2;
	a.gneg = gn2;
	a.loss = l2;
	emu_wloss(bdim, rev, skip, a, scale, &a2);
	ok = fabs(a2 - a1) <= 1e-5 * fmax(1.0, fabs(a1));
	for (i = 0; ok && i < rows; i++)
		ok = fabs(l2[i] - l1[i]) <= 1e-5 * fmax(1.0, fabs(l1[i]));
	if (!quiet) {
		ok = ok && close_tol(gp2, gp1, rows, 1e-5f, "gpos (warp)") &&
		    close_tol(gn2, gn1, rows * n, 1e-5f, "gneg (warp)");
		if (!ok)
			fprintf(stderr, "warp loss kind %d rows %zu n %zu adv "
			    "%g skip %d block %u rev %d: sum %.17g against "
			    "%.17g\n", kind, rows, n, (double)adv, sk, bdim, rev,
			    a2, a1);
	}
	free(pos);
	free(neg);
	free(gp1);
	free(gp2);
	free(gn1);
	free(gn2);
	free(l1);
	free(l2);
	free(skm);
	return ok;
}

static void
test_loss_warp(void)
{
	static const size_t rs[] = { 1, 7, 9, 200, 257 };
	static const size_t ns[] = { 0, 1, 31, 32, 33, 200 };
	static const float advs[] = { 0.0f, 0.8f };
	struct kg_rng r;
	size_t a, c, e, k;
	int kind, sk, rev, bad = 0;

	kg_rng_seed(&r, 75, 0);
	for (a = 0; a < KG_ARRAY_LEN(rs); a++)
		for (c = 0; c < KG_ARRAY_LEN(ns); c++)
			for (kind = 0; kind < 4; kind++)
				for (e = 0; e < KG_ARRAY_LEN(advs); e++)
					for (sk = 0; sk < 2; sk++)
						for (k = 0; k < KG_ARRAY_LEN(bdims);
						    k++)
							for (rev = 0; rev < 2; rev++)
								bad += !wloss_case(&r,
								    kind, rs[a], ns[c],
								    advs[e], sk,
								    bdims[k], rev, 0,
								    bad > 5);
	T_CHECKF(bad == 0, "%d warp-per-row cases differ", bad);
	/* Planted: a reduction step left out. */
	for (kind = 0; kind < 4; kind++)
		T_CHECKF(!wloss_case(&r, kind, 9, 200, 0.8f, 0, 256, 0, 8, 1),
		    "kind %d: a broken reduction passed", kind);
}

/* Gathers and scatter-adds over three sets (sizes around the block, one
 * set empty, repeated indices): the fused calls against one call a set
 * on the CPU (bits), and the thread functions on the emulated grid. */
static void
test_row_sets(void)
{
	static const size_t ns[][3] = { { 1, 0, 1 }, { 31, 33, 0 },
		{ 257, 200, 40 } }, ds[3] = { 16, 16, 5 }, rows = 50;
	struct kg_rng r;
	size_t a, k, q, i;

	kg_rng_seed(&r, 76, 0);
	for (a = 0; a < KG_ARRAY_LEN(ns); a++)
		for (k = 0; k < KG_ARRAY_LEN(bdims); k++) {
	struct kg_dev_rowsets g1, g2, s1, s2;
	float *tab[3], *out1[3], *out2[3], *out3[3];
	float *tb1[3], *tb2[3], *tb3[3];
	int64_t *idx[3];
	size_t tot = 0;
	uint64_t l0;

	memset(&g1, 0, sizeof(g1));
	g1.nsets = 3;
	for (q = 0; q < 3; q++) {
		size_t n = ns[a][q], d = ds[q];

		tab[q] = rnd(&r, rows * d, -1, 1);
		out1[q] = rnd(&r, n * d, 0, 0);
		out2[q] = dup(out1[q], n * d);
		out3[q] = dup(out1[q], n * d);
		tb1[q] = dup(tab[q], rows * d);
		tb2[q] = dup(tab[q], rows * d);
		tb3[q] = dup(tab[q], rows * d);
		idx[q] = kg_xmallocarray(n + 1, sizeof(int64_t));
		for (i = 0; i < n; i++)
			idx[q][i] = (int64_t)((i * 7 + q) % 13);	/* repeats */
		g1.src[q] = tab[q];
		g1.idx[q] = idx[q];
		g1.n[q] = n;
		g1.d[q] = d;
		tot += n * d;
		T_CHECK(kg_be_gather(cpu, n, d, tab[q], idx[q], out1[q]) == 0);
		T_CHECK(kg_be_scatter_add(cpu, n, d, out1[q], idx[q], tb1[q]) ==
		    0);
	}
	g2 = s1 = s2 = g1;
	for (q = 0; q < 3; q++) {
		g1.dst[q] = out2[q];
		g2.dst[q] = out3[q];
		s1.src[q] = s2.src[q] = out1[q];
		s1.dst[q] = tb2[q];
		s2.dst[q] = tb3[q];
	}
	l0 = kg_backend_counts(cpu).launches;
	T_CHECK(kg_be_gather_sets(cpu, &g1) == 0);
	T_CHECK(kg_be_scatter_add_sets(cpu, &s1) == 0);
	T_CHECK(kg_backend_counts(cpu).launches - l0 == 2);
	EMU(bdims[k], tot, kg_dev_t_gather_sets, g2);
	EMU(bdims[k], tot, kg_dev_t_scatter_add_sets, s2);
	for (q = 0; q < 3; q++) {
		size_t n = ns[a][q], d = ds[q];

		T_CHECKF(close_tol(out2[q], out1[q], n * d, 0.0f, "gather "
		    "sets") && close_tol(out3[q], out1[q], n * d, 0.0f,
		    "gather sets (grid)"), "sizes %zu block %u set %zu", a,
		    bdims[k], q);
		T_CHECKF(close_tol(tb2[q], tb1[q], rows * d, 0.0f, "scatter "
		    "sets") && close_tol(tb3[q], tb1[q], rows * d, 1e-6f,
		    "scatter sets (grid)"), "sizes %zu block %u set %zu", a,
		    bdims[k], q);
		free(tab[q]);
		free(out1[q]);
		free(out2[q]);
		free(out3[q]);
		free(tb1[q]);
		free(tb2[q]);
		free(tb3[q]);
		free(idx[q]);
	}
		}
	{
		struct kg_dev_rowsets rs;

		memset(&rs, 0, sizeof(rs));
		rs.nsets = KG_DEV_ROWSETS + 1;
		kg_error_mute(1);
		T_CHECK(kg_be_gather_sets(cpu, &rs) < 0);
		kg_error_mute(0);
		rs.nsets = 2;	/* all empty: nothing, no launch */
		T_CHECK(kg_be_scatter_add_sets(cpu, &rs) == 0);
	}
}

/* Row-wise Adagrad with a warp a row: the phases over the emulated
 * warps (NaN-poisoned shared memory, both thread orders) against the
 * CPU backend's kg_be_adagrad. */
static void
test_adagrad_warp(void)
{
	static const size_t ns[] = { 1, 7, 9, 257 }, ds[] = { 32, 33, 400 };
	size_t rows = 600, a, c, k, b, i, q;
	struct kg_rng r;
	int rev;

	kg_rng_seed(&r, 77, 0);
	for (a = 0; a < KG_ARRAY_LEN(ns); a++)
		for (c = 0; c < KG_ARRAY_LEN(ds); c++)
			for (k = 0; k < KG_ARRAY_LEN(bdims); k++)
				for (rev = 0; rev < 2; rev++) {
	size_t n = ns[a], d = ds[c], nb = kg_dev_nblocks(n * KG_DEV_WARP,
	    bdims[k]);
	unsigned bd = bdims[k], nw = bd / KG_DEV_WARP, t, s;
	float *tab = rnd(&r, rows * d, -1, 1), *st = rnd(&r, rows, 0, 1);
	float *g = rnd(&r, n * d, -1, 1), *tab2 = dup(tab, rows * d);
	float *st2 = dup(st, rows);
	int64_t *idx = kg_xmallocarray(n, sizeof(*idx));
	struct kg_dev_wa_smem *sm = kg_xmallocarray(nw, sizeof(*sm));

	for (i = 0; i < n; i++)
		idx[i] = (int64_t)((i * 7 + 3) % rows);	/* distinct */
	T_CHECK(kg_be_adagrad(cpu, n, d, 0.1f, idx, g, tab, st) == 0);
#define EMU_T (rev ? bd - 1 - q : q)
#define EMU_I (kg_dev_tid((unsigned)b, t, bd) / KG_DEV_WARP)
#define EMU_W (&sm[t / KG_DEV_WARP])
	for (b = 0; b < nb; b++) {
		for (i = 0; i < nw * sizeof(*sm) / sizeof(float); i++)
			((float *)sm)[i] = NAN;
		for (q = 0; q < bd; q++) {
			t = EMU_T;
			kg_dev_wa_sq(t % KG_DEV_WARP, EMU_I, n, d, g, EMU_W);
		}
		for (s = KG_DEV_WARP / 2; s > 0; s /= 2)
			for (q = 0; q < bd; q++) {
				t = EMU_T;
				kg_dev_wa_step(t % KG_DEV_WARP, s, EMU_W);
			}
		for (q = 0; q < bd; q++) {
			t = EMU_T;
			kg_dev_wa_state(t % KG_DEV_WARP, EMU_I, n, d, 0.1f, idx,
			    st2, EMU_W);
		}
		for (q = 0; q < bd; q++) {
			t = EMU_T;
			kg_dev_wa_update(t % KG_DEV_WARP, EMU_I, n, d, idx, g,
			    tab2, EMU_W);
		}
	}
#undef EMU_T
#undef EMU_I
#undef EMU_W
	T_CHECKF(close_tol(tab2, tab, rows * d, 1e-5f, "adagrad table") &&
	    close_tol(st2, st, rows, 1e-5f, "adagrad state"), "n %zu d %zu "
	    "block %u rev %d", n, d, bd, rev);
	free(tab);
	free(st);
	free(g);
	free(tab2);
	free(st2);
	free(idx);
	free(sm);
				}
}

int
main(void)
{
	struct kg_device d = KG_DEVICE_INIT;

	cpu = kg_backend_open(&d);
	if (cpu == NULL)
		return 1;
	T_RUN(test_block_sum);
	T_RUN(test_regularise_sizes);
	T_RUN(test_regularise_sets);
	T_RUN(test_loss_sum);
	T_RUN(test_loss_warp);
	T_RUN(test_row_sets);
	T_RUN(test_adagrad_warp);
	kg_backend_free(cpu);
	return T_DONE();
}
