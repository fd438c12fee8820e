/*
 * devops_gnn: the per-message work of the GNN layers on the device
 * (lib/gnn/layers_device.h): segmented weighted sums of rows, edge
 * coefficients and dot products, the element-wise products and ReLU,
 * and the passes of the relation-aware attention layer, each output
 * element summed by one thread in a fixed order (no atomics), so a run
 * gives the same bits every time (backend.h's kg_be_seg_sum ...
 * kg_be_relu_backward, over devops_types.h's descriptors).  Under
 * devops_base.h's conventions.
 */
#ifndef KG_DEVOPS_GNN_H
#define KG_DEVOPS_GNN_H

#include "compute/devops_base.h"
#include "compute/devops_types.h"

/*
 * out[i * ldo + k] = (beta ? out[i * ldo + k] : 0) + sum over the items
 * q of segment i, in order, and for each over the blocks c, in order, of
 * w_c(e) x_c[idx(e)][k]: one thread per (i, k) of n_seg x d, so each
 * output element is summed by one thread in a fixed order (no atomics).
 */
KG_HD void
kg_dev_t_seg_sum(unsigned b, unsigned t, unsigned bdim, size_t n_seg,
    size_t d, struct kg_dev_seg sg, const float *x, int beta, float *out,
    size_t ldo)
{
	size_t el = kg_dev_tid(b, t, bdim), i, k, c;
	int64_t q;
	float acc;

	if (el >= n_seg * d)
		return;
	i = el / d;
	k = el % d;
	acc = beta ? out[i * ldo + k] : 0.0f;
	for (q = sg.off[i]; q < sg.off[i + 1]; q++) {
		size_t e = sg.perm != NULL ? (size_t)sg.perm[q] : (size_t)q;
		size_t r = sg.idx != NULL ? (size_t)sg.idx[e] : e;

		for (c = 0; c < sg.nb; c++)
			acc += (sg.w != NULL ? sg.w[c * sg.ws + e] : 1.0f) *
			    x[c * sg.xs + r * d + k];
	}
	out[i * ldo + k] = acc;
}

/*
 * kg_dev_t_seg_sum in two passes, for few long segments (one bias's rows,
 * each relation type's messages), where one thread per output element
 * would add a whole segment alone.  Pass one: one thread per (i, p, k)
 * of n_seg x parts x d sums the items off[i] + p, off[i] + p + parts, ...
 * of segment i in order (part 0 starting from out's element when beta,
 * the others from 0) into tmp[(i * parts + p) * d + k].  Pass two
 * (kg_dev_t_seg_join): one thread per (i, k) adds the parts in order
 * into out.  With parts = 1 this is kg_dev_t_seg_sum's order, so its
 * bits; otherwise a fixed order of its own, the same on every run.
 */
KG_HD void
kg_dev_t_seg_part(unsigned b, unsigned t, unsigned bdim, size_t n_seg,
    size_t d, size_t parts, struct kg_dev_seg sg, const float *x, int beta,
    const float *out, size_t ldo, float *tmp)
{
	size_t el = kg_dev_tid(b, t, bdim), i, p, k, c;
	int64_t q;
	float acc;

	if (el >= n_seg * parts * d)
		return;
	i = el / (parts * d);
	p = el / d % parts;
	k = el % d;
	acc = beta && p == 0 ? out[i * ldo + k] : 0.0f;
	for (q = sg.off[i] + (int64_t)p; q < sg.off[i + 1];
	    q += (int64_t)parts) {
		size_t e = sg.perm != NULL ? (size_t)sg.perm[q] : (size_t)q;
		size_t r = sg.idx != NULL ? (size_t)sg.idx[e] : e;

		for (c = 0; c < sg.nb; c++)
			acc += (sg.w != NULL ? sg.w[c * sg.ws + e] : 1.0f) *
			    x[c * sg.xs + r * d + k];
	}
	tmp[el] = acc;
}

KG_HD void
kg_dev_t_seg_join(unsigned b, unsigned t, unsigned bdim, size_t n_seg,
    size_t d, size_t parts, const float *tmp, float *out, size_t ldo)
{
	size_t el = kg_dev_tid(b, t, bdim), i, k, p;
	float acc;

	if (el >= n_seg * d)
		return;
	i = el / d;
	k = el % d;
	acc = tmp[i * parts * d + k];
	for (p = 1; p < parts; p++)
		acc += tmp[(i * parts + p) * d + k];
	out[i * ldo + k] = acc;
}

/* w[c * n + e] = norm[e] a[type[e] nb + c] for e < n, c < nb (R-GCN's
 * basis coefficient of message e, its normaliser folded in): one thread
 * per (c, e). */
KG_HD void
kg_dev_t_edge_coef(unsigned b, unsigned t, unsigned bdim, size_t n,
    size_t nb, const float *norm, const int64_t *type, const float *a,
    float *w)
{
	size_t el = kg_dev_tid(b, t, bdim), c, e;

	if (el >= n * nb)
		return;
	c = el / n;
	e = el % n;
	w[el] = norm[e] * a[(size_t)type[e] * nb + c];
}

/* The dot product of lib/gnn/kernels.h: eight partial sums, combined in
 * pairs, then the tail. */
KG_HD float
kg_dev_dot8(size_t n, const float *x, const float *y)
{
	float acc[8] = { 0 }, s;
	size_t k = 0, j;

	for (; k + 8 <= n; k += 8)
		for (j = 0; j < 8; j++)
			acc[j] += x[k + j] * y[k + j];
	s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) +
	    ((acc[4] + acc[5]) + (acc[6] + acc[7]));
	for (; k < n; k++)
		s += x[k] * y[k];
	return s;
}

/* out[e] = a[ia[e]] . b[ib[e]] over rows of d floats (ia, ib NULL: e):
 * one thread per item. */
KG_HD void
kg_dev_t_edge_dot(unsigned b, unsigned t, unsigned bdim, size_t n, size_t d,
    const float *a, const int64_t *ia, const float *bb, const int64_t *ib,
    float *out)
{
	size_t e = kg_dev_tid(b, t, bdim), ra, rb;

	if (e >= n)
		return;
	ra = ia != NULL ? (size_t)ia[e] : e;
	rb = ib != NULL ? (size_t)ib[e] : e;
	out[e] = kg_dev_dot8(d, a + ra * d, bb + rb * d);
}

/* out[i] = row for n rows of d floats: one thread per element. */
KG_HD void
kg_dev_t_fill_rows(unsigned b, unsigned t, unsigned bdim, size_t n, size_t d,
    const float *row, float *out)
{
	size_t e = kg_dev_tid(b, t, bdim);

	if (e < n * d)
		out[e] = row[e % d];
}

/* y[e] = a[e] x[e] for n floats (y may be a or x). */
KG_HD void
kg_dev_t_mul(unsigned b, unsigned t, unsigned bdim, size_t n, const float *a,
    const float *x, float *y)
{
	size_t e = kg_dev_tid(b, t, bdim);

	if (e < n)
		y[e] = a[e] * x[e];
}

/* ReLU as lib/gnn's layers take it: y = x < 0 ? 0 : x (a NaN passes). */
KG_HD void
kg_dev_t_relu(unsigned b, unsigned t, unsigned bdim, size_t n, const float *x,
    float *y)
{
	size_t e = kg_dev_tid(b, t, bdim);

	if (e < n)
		y[e] = x[e] < 0.0f ? 0.0f : x[e];
}

/* Its backward: g[e] = 0 where pre[e] < 0. */
KG_HD void
kg_dev_t_relu_bwd(unsigned b, unsigned t, unsigned bdim, size_t n,
    const float *pre, float *g)
{
	size_t e = kg_dev_tid(b, t, bdim);

	if (e < n && pre[e] < 0.0f)
		g[e] = 0.0f;
}

/* The LeakyReLU slope of the attention scores (lib/gnn/layers_attn.c's). */
#define KG_DEV_LEAKY_SLOPE 0.2f

/* Destination i's scores u, LeakyReLU, and softmax al (the largest
 * subtracted, the sum in double), as attn_node: one thread per
 * destination, its messages in order. */
KG_HD void
kg_dev_t_attn_scores(unsigned b, unsigned t, unsigned bdim,
    struct kg_dev_attn A)
{
	size_t i = kg_dev_tid(b, t, bdim), d = A.d;
	int64_t e;
	float zi, mx = -INFINITY;
	double sum = 0.0;

	if (i >= A.n_dst)
		return;
	zi = kg_dev_dot8(d, A.ad, A.z + i * d);
	for (e = A.off[i]; e < A.off[i + 1]; e++) {
		size_t j = (size_t)A.src[e], r = (size_t)A.type[e];
		float v = zi + kg_dev_dot8(d, A.as, A.z + j * d) +
		    kg_dev_dot8(d, A.ar, A.rel + r * d);
		float lv = v > 0.0f ? v : KG_DEV_LEAKY_SLOPE * v;

		A.u[e] = v;
		A.al[e] = lv;
		if (lv > mx)
			mx = lv;
	}
	for (e = A.off[i]; e < A.off[i + 1]; e++) {
		A.al[e] = expf(A.al[e] - mx);
		sum += A.al[e];
	}
	for (e = A.off[i]; e < A.off[i + 1]; e++)
		A.al[e] = (float)(A.al[e] / sum);
}

/* out[i][k] += al[e] z[src[e]][k], then al[e] rel[type[e]][k], for each
 * of i's messages in order: one thread per (i, k). */
KG_HD void
kg_dev_t_attn_msgs(unsigned b, unsigned t, unsigned bdim,
    struct kg_dev_attn A, float *out)
{
	size_t el = kg_dev_tid(b, t, bdim), d = A.d, i, k;
	int64_t e;
	float acc;

	if (el >= A.n_dst * d)
		return;
	i = el / d;
	k = el % d;
	acc = out[el];
	for (e = A.off[i]; e < A.off[i + 1]; e++) {
		acc += A.al[e] * A.z[(size_t)A.src[e] * d + k];
		acc += A.al[e] * A.rel[(size_t)A.type[e] * d + k];
	}
	out[el] = acc;
}

/* The backward's scores (attn_back_scores): da[e] = dL/du_e of i's
 * messages from G = dL/dout, nsum[i] their sum (both sums in double): one
 * thread per destination. */
KG_HD void
kg_dev_t_attn_back_scores(unsigned b, unsigned t, unsigned bdim,
    struct kg_dev_attn A, const float *G)
{
	size_t i = kg_dev_tid(b, t, bdim), d = A.d;
	const float *gi;
	double ssum = 0.0, dusum = 0.0;
	int64_t e;

	if (i >= A.n_dst)
		return;
	gi = G + i * d;
	for (e = A.off[i]; e < A.off[i + 1]; e++) {
		A.da[e] = kg_dev_dot8(d, gi, A.z + (size_t)A.src[e] * d) +
		    kg_dev_dot8(d, gi, A.rel + (size_t)A.type[e] * d);
		ssum += A.al[e] * A.da[e];
	}
	for (e = A.off[i]; e < A.off[i + 1]; e++) {
		float dl = A.al[e] * (A.da[e] - (float)ssum);

		A.da[e] = dl * (A.u[e] > 0.0f ? 1.0f : KG_DEV_LEAKY_SLOPE);
		dusum += A.da[e];
	}
	A.nsum[i] = (float)dusum;
}

/* dz[j][k] (overwritten): source j's messages in by_src order, al[e]
 * G[dst[e]][k] + da[e] as[k] each, and its own destination term nsum[j]
 * ad[k] where its turn comes (before the first message into a node past
 * j; none for j >= n_dst), as attn_back_dz: one thread per (j, k). */
KG_HD void
kg_dev_t_attn_back_dz(unsigned b, unsigned t, unsigned bdim,
    struct kg_dev_attn A, const float *G, float *dz)
{
	size_t el = kg_dev_tid(b, t, bdim), d = A.d, j, k;
	int64_t q;
	float acc = 0.0f;
	int self;

	if (el >= A.n_src * d)
		return;
	j = el / d;
	k = el % d;
	self = j >= A.n_dst;
	for (q = A.soff[j]; q < A.soff[j + 1]; q++) {
		size_t e = (size_t)A.by_src[q], i = (size_t)A.dst[e];

		if (!self && i > j) {
			acc += A.nsum[j] * A.ad[k];
			self = 1;
		}
		acc += A.al[e] * G[i * d + k] + A.da[e] * A.as[k];
	}
	if (!self)
		acc += A.nsum[j] * A.ad[k];
	dz[el] = acc;
}

/* grel[r][k] += al[e] G[dst[e]][k] + da[e] ar[k] over type r's messages
 * in by_type order (attn_back_rel): one thread per (r, k). */
KG_HD void
kg_dev_t_attn_back_rel(unsigned b, unsigned t, unsigned bdim,
    struct kg_dev_attn A, const float *G, float *grel)
{
	size_t el = kg_dev_tid(b, t, bdim), d = A.d, r, k;
	int64_t q;
	float acc;

	if (el >= A.n_types * d)
		return;
	r = el / d;
	k = el % d;
	acc = grel[el];
	for (q = A.toff[r]; q < A.toff[r + 1]; q++) {
		size_t e = (size_t)A.by_type[q];

		acc += A.al[e] * G[(size_t)A.dst[e] * d + k] +
		    A.da[e] * A.ar[k];
	}
	grel[el] = acc;
}

#endif
