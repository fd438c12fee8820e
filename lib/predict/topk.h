/*
 * topk: the k best (score, id) pairs of many queries at once, for
 * kg-predict's answers and nearest entities.
 *
 * Order: a higher score is better; of equal scores the lower id is
 * better, so the answer does not depend on the order in which candidates
 * are offered (ranks that offer disjoint ranges merge to what one process
 * finds).  NaN scores are never kept.  Each query keeps a binary heap of
 * its k best with the worst at the root, so a candidate costs one
 * comparison unless it enters.
 *
 * Memory: nq * k * 12 bytes, allocated once by kg_topk_init.  Different
 * queries may be filled by different threads at the same time; one query
 * by one thread.
 */
#ifndef KG_TOPK_H
#define KG_TOPK_H

#include <stddef.h>
#include <stdint.h>

struct kg_topk {
	size_t cap;		/* queries the arrays hold */
	size_t nq, k;
	float *score;		/* query q: score[q * k .. q * k + n[q]) */
	int64_t *id;
	size_t *n;		/* entries held per query */
};

#define KG_TOPK_INIT { 0 }

/* Room for cap queries of k (>= 1) entries each, all empty (nq = cap). */
void kg_topk_init(struct kg_topk *t, size_t cap, size_t k);
/* Empty the first nq (<= cap) queries and use only those. */
void kg_topk_reset(struct kg_topk *t, size_t nq);
void kg_topk_release(struct kg_topk *t);

/* Offer one candidate to query q. */
void kg_topk_push(struct kg_topk *t, size_t q, float score, int64_t id);

/* Offer row[j] with id first_id + j for j < nc (NaN skipped). */
void kg_topk_push_row(struct kg_topk *t, size_t q, const float *row,
    size_t nc, int64_t first_id);

/* Sort every query's entries best first.  Pushing afterwards needs a
 * kg_topk_reset first. */
void kg_topk_sort(struct kg_topk *t);

#endif
