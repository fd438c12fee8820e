/*
 * devops_rows: the thread functions that move rows and reduce arrays
 * (backend.h's kg_be_gather, kg_be_scatter_add, their _sets forms,
 * kg_be_scale, kg_be_dsum), under devops_base.h's conventions.
 */
#ifndef KG_DEVOPS_ROWS_H
#define KG_DEVOPS_ROWS_H

#include "compute/devops_base.h"
#include "compute/devops_types.h"

/* out[i] = table[idx[i]], rows of d floats; one thread per element. */
KG_HD void
kg_dev_t_gather(unsigned b, unsigned t, unsigned bdim, size_t n, size_t d,
    const float *table, const int64_t *idx, float *out)
{
	size_t e = kg_dev_tid(b, t, bdim), i, l;

	if (e >= n * d)
		return;
	i = e / d;
	l = e % d;
	out[e] = table[(size_t)idx[i] * d + l];
}

/* table[idx[i]] += src[i]; repeated indices add up (atomically on the
 * device, so in no fixed order there). */
KG_HD void
kg_dev_t_scatter_add(unsigned b, unsigned t, unsigned bdim, size_t n,
    size_t d, const float *src, const int64_t *idx, float *table)
{
	size_t e = kg_dev_tid(b, t, bdim), i, l;

	if (e >= n * d)
		return;
	i = e / d;
	l = e % d;
	kg_dev_atomic_add(&table[(size_t)idx[i] * d + l], src[e]);
}

/* x[e] *= alpha for n floats: one thread per element. */
KG_HD void
kg_dev_t_scale(unsigned b, unsigned t, unsigned bdim, size_t n, float alpha,
    float *x)
{
	size_t e = kg_dev_tid(b, t, bdim);

	if (e < n)
		x[e] *= alpha;
}

/* The value thread e adds to kg_be_dsum's sum: x[e], 0 past n (a
 * kernel sums them per block, devops_base.h's kg_dev_bsum_*). */
KG_HD double
kg_dev_v_dsum(unsigned b, unsigned t, unsigned bdim, size_t n,
    const double *x)
{
	size_t e = kg_dev_tid(b, t, bdim);

	return e < n ? x[e] : 0.0;
}

/* The set of rs that element e of the whole falls in, e made its
 * element there; nsets when past the sets. */
KG_HD unsigned
kg_dev_rowset_of(const struct kg_dev_rowsets *rs, size_t *e)
{
	unsigned k;

	for (k = 0; k < rs->nsets; k++) {
		if (*e < rs->n[k] * rs->d[k])
			return k;
		*e -= rs->n[k] * rs->d[k];
	}
	return k;
}

/* kg_dev_t_gather over the sets of rs in one launch (devops_types.h). */
KG_HD void
kg_dev_t_gather_sets(unsigned b, unsigned t, unsigned bdim,
    struct kg_dev_rowsets rs)
{
	size_t e = kg_dev_tid(b, t, bdim), d;
	unsigned k = kg_dev_rowset_of(&rs, &e);

	if (k == rs.nsets)
		return;
	d = rs.d[k];
	rs.dst[k][e] = rs.src[k][(size_t)rs.idx[k][e / d] * d + e % d];
}

/* kg_dev_t_scatter_add over the sets of rs in one launch. */
KG_HD void
kg_dev_t_scatter_add_sets(unsigned b, unsigned t, unsigned bdim,
    struct kg_dev_rowsets rs)
{
	size_t e = kg_dev_tid(b, t, bdim), d;
	unsigned k = kg_dev_rowset_of(&rs, &e);

	if (k == rs.nsets)
		return;
	d = rs.d[k];
	kg_dev_atomic_add(&rs.dst[k][(size_t)rs.idx[k][e / d] * d + e % d],
	    rs.src[k][e]);
}

#endif
