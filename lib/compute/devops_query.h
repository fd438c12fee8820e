/*
 * devops_query: the query forms Q(f, rel) of enum kg_qform on the device
 * (lib/kge/score.h's table, one element at a time): an element of the
 * query and of its derivatives with respect to the entity row and the
 * relation row, and their thread functions (backend.h's kg_be_query and
 * kg_be_query_backward).  The CPU backend calls the element functions
 * in row order, so its queries are these bits.  Under devops_base.h's
 * conventions.
 */
#ifndef KG_DEVOPS_QUERY_H
#define KG_DEVOPS_QUERY_H

#include "compute/devops_base.h"
#include "compute/kinds.h"

/* Floats of a relation row of query form "form" for entity rows of d. */
KG_HD size_t
kg_dev_qform_width(int form, size_t d)
{
	return form == KG_QFORM_ROTATE ? d / 2 : form == KG_QFORM_RESCAL ?
	    d * d : d;
}

/*
 * Element l (< d) of the query q = Q(f, rel) of form "form" on side
 * (score.h's table): f an entity row of d floats, rel a relation row of
 * kg_dev_qform_width(form, d) floats.
 */
KG_HD float
kg_dev_query_elem(int form, int side, size_t d, const float *f,
    const float *rel, size_t l)
{
	size_t h = d / 2, k = l < h ? l : l - h, i;
	float a, b, c, s, acc = 0.0f;

	switch (form) {
	case KG_QFORM_ADD:
		return side == KG_SIDE_TAIL ? f[l] + rel[l] : f[l] - rel[l];
	case KG_QFORM_MUL:
		return f[l] * rel[l];
	case KG_QFORM_COMPLEX:
		if (side == KG_SIDE_TAIL)
			return l < h ? f[k] * rel[k] - f[h + k] * rel[h + k] :
			    f[k] * rel[h + k] + f[h + k] * rel[k];
		return l < h ? f[k] * rel[k] + f[h + k] * rel[h + k] :
		    -f[k] * rel[h + k] + f[h + k] * rel[k];
	case KG_QFORM_ROTATE:
		a = f[k];
		b = f[h + k];
		c = cosf(rel[k]);
		s = sinf(rel[k]);
		if (side == KG_SIDE_HEAD)
			s = -s;
		return l < h ? a * c - b * s : a * s + b * c;
	default:	/* RESCAL, M row-major d x d */
		/* Tails: column l of M in row order, as kg_kern_matvec's
		 * transposed loop; heads: row l, as its sum_dot. */
		if (side != KG_SIDE_TAIL)
			return kg_dev_dot(rel + l * d, f, d);
		for (i = 0; i < d; i++)
			acc += f[i] * rel[i * d + l];
		return acc;
	}
}

/*
 * dL/df_l (l < d) given gq = dL/dq for q = Q(f, rel): grad.c's
 * query_backward, one element.
 */
KG_HD float
kg_dev_query_df(int form, int side, size_t d, const float *f,
    const float *rel, const float *gq, size_t l)
{
	size_t h = d / 2, k = l < h ? l : l - h, i;
	float c, s, gre, gim, acc = 0.0f;

	(void)f;
	switch (form) {
	case KG_QFORM_ADD:
		return gq[l];
	case KG_QFORM_MUL:
		return gq[l] * rel[l];
	case KG_QFORM_COMPLEX:
	case KG_QFORM_ROTATE:
		gre = gq[k];
		gim = gq[h + k];
		if (form == KG_QFORM_COMPLEX) {
			c = rel[k];
			s = side == KG_SIDE_TAIL ? rel[h + k] : -rel[h + k];
		} else {
			c = cosf(rel[k]);
			s = side == KG_SIDE_TAIL ? sinf(rel[k]) : -sinf(rel[k]);
		}
		return l < h ? gre * c + gim * s : -gre * s + gim * c;
	default:	/* RESCAL */
		for (i = 0; i < d; i++)
			acc += side == KG_SIDE_TAIL ? rel[l * d + i] * gq[i] :
			    rel[i * d + l] * gq[i];
		return acc;
	}
}

/* dL/drel_l (l < kg_dev_qform_width(form, d)) given gq. */
KG_HD float
kg_dev_query_dr(int form, int side, size_t d, const float *f,
    const float *rel, const float *gq, size_t l)
{
	size_t h = d / 2, k = l < h ? l : l - h;
	float a, b, c, s, gre, gim, gc, gs;

	switch (form) {
	case KG_QFORM_ADD:
		return side == KG_SIDE_TAIL ? gq[l] : -gq[l];
	case KG_QFORM_MUL:
		return gq[l] * f[l];
	case KG_QFORM_COMPLEX:
		a = f[k];
		b = f[h + k];
		gre = gq[k];
		gim = gq[h + k];
		if (l < h)
			return gre * a + gim * b;
		return side == KG_SIDE_TAIL ? -gre * b + gim * a :
		    gre * b - gim * a;
	case KG_QFORM_ROTATE:
		/* l < h: one phase per complex coordinate. */
		a = f[l];
		b = f[h + l];
		c = cosf(rel[l]);
		s = sinf(rel[l]);
		gre = gq[l];
		gim = gq[h + l];
		gc = gre * a + gim * b;
		gs = -gre * b + gim * a;
		if (side == KG_SIDE_HEAD)
			gs = -gs;
		return -gc * s + gs * c;
	default:	/* RESCAL: M_ij, l = i d + j */
		return side == KG_SIDE_TAIL ? f[l / d] * gq[l % d] :
		    gq[l / d] * f[l % d];
	}
}

/*
 * q[i] = Q(fixed[i], rel[i]) for n queries (rows of d and of rw =
 * kg_dev_qform_width(form, d) floats): one thread per element of q.
 */
KG_HD void
kg_dev_t_query(unsigned b, unsigned t, unsigned bdim, int form, int side,
    size_t n, size_t d, const float *fixed, const float *rel, float *q)
{
	size_t e = kg_dev_tid(b, t, bdim), rw = kg_dev_qform_width(form, d);
	size_t i, l;

	if (e >= n * d)
		return;
	i = e / d;
	l = e % d;
	q[e] = kg_dev_query_elem(form, side, d, fixed + i * d, rel + i * rw, l);
}

/* gfixed[i] += dL/dfixed_i given gq (n x d): one thread per element. */
KG_HD void
kg_dev_t_query_bwd_f(unsigned b, unsigned t, unsigned bdim, int form,
    int side, size_t n, size_t d, const float *fixed, const float *rel,
    const float *gq, float *gfixed)
{
	size_t e = kg_dev_tid(b, t, bdim), rw = kg_dev_qform_width(form, d);
	size_t i, l;

	if (e >= n * d)
		return;
	i = e / d;
	l = e % d;
	gfixed[e] += kg_dev_query_df(form, side, d, fixed + i * d,
	    rel + i * rw, gq + i * d, l);
}

/* grel[i] += dL/drel_i given gq (grel n x rw): one thread per element. */
KG_HD void
kg_dev_t_query_bwd_r(unsigned b, unsigned t, unsigned bdim, int form,
    int side, size_t n, size_t d, const float *fixed, const float *rel,
    const float *gq, float *grel)
{
	size_t e = kg_dev_tid(b, t, bdim), rw = kg_dev_qform_width(form, d);
	size_t i, l;

	if (e >= n * rw)
		return;
	i = e / rw;
	l = e % rw;
	grel[e] += kg_dev_query_dr(form, side, d, fixed + i * d, rel + i * rw,
	    gq + i * d, l);
}

/* Both of the above in one launch over n d + n rw threads: thread e < n
 * d adds gfixed's element e, the n rw after them grel's e - n d. */
KG_HD void
kg_dev_t_query_bwd(unsigned b, unsigned t, unsigned bdim, int form,
    int side, size_t n, size_t d, const float *fixed, const float *rel,
    const float *gq, float *gfixed, float *grel)
{
	size_t e = kg_dev_tid(b, t, bdim), rw = kg_dev_qform_width(form, d);
	size_t i;

	if (e < n * d) {
		i = e / d;
		gfixed[e] += kg_dev_query_df(form, side, d, fixed + i * d,
		    rel + i * rw, gq + i * d, e % d);
		return;
	}
	e -= n * d;
	if (e >= n * rw)
		return;
	i = e / rw;
	grel[e] += kg_dev_query_dr(form, side, d, fixed + i * d, rel + i * rw,
	    gq + i * d, e % rw);
}

#endif
