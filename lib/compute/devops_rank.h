/*
 * devops_rank: filtered evaluation on the device: the thread function
 * that counts, over a tile of scores, the candidates scoring above and
 * equal to the true one (backend.h's kg_be_rank_counts), under
 * devops_base.h's conventions.
 */
#ifndef KG_DEVOPS_RANK_H
#define KG_DEVOPS_RANK_H

#include "compute/devops_base.h"

/* Threads a row of the rank counts: one warp, lane l the columns j = l,
 * l + 32, ..., so that a warp's reads of a row are consecutive. */
#define KG_DEV_RANK_LANES 32

/*
 * Filtered rank counts over a tile of scores (nq x nc): greater[i] and
 * equal[i] gain the columns j of row i with scores[i][j] > s[i] and
 * == s[i], columns excl[excl_off[i] .. excl_off[i + 1]) left out (the
 * true entity and known positives in the tile, each listed once; excl_off
 * NULL: none).  A NaN s[i] counts nothing.  KG_DEV_RANK_LANES threads a
 * row, thread (i, l) the columns j with j % KG_DEV_RANK_LANES == l (and
 * those of the excluded), its counts added atomically (integers: the
 * same totals in any order).
 */
KG_HD void
kg_dev_t_rank_counts(unsigned b, unsigned t, unsigned bdim, size_t nq,
    size_t nc, const float *scores, const float *s, const int64_t *excl_off,
    const int64_t *excl, uint64_t *greater, uint64_t *equal)
{
	size_t e = kg_dev_tid(b, t, bdim), i, lane, j;
	uint64_t gt = 0, eq = 0;
	const float *row;
	float si;
	int64_t k;

	if (e >= nq * KG_DEV_RANK_LANES)
		return;
	i = e / KG_DEV_RANK_LANES;
	lane = e % KG_DEV_RANK_LANES;
	row = scores + i * nc;
	si = s[i];
	if (si != si)
		return;
	for (j = lane; j < nc; j += KG_DEV_RANK_LANES) {
		gt += row[j] > si;
		eq += row[j] == si;
	}
	if (excl_off != NULL)
		for (k = excl_off[i]; k < excl_off[i + 1]; k++) {
			j = (size_t)excl[k];
			if (j % KG_DEV_RANK_LANES != lane)
				continue;
			gt -= row[j] > si;
			eq -= row[j] == si;
		}
	if (gt != 0)
		kg_dev_atomic_add_u64(&greater[i], gt);
	if (eq != 0)
		kg_dev_atomic_add_u64(&equal[i], eq);
}

#endif
