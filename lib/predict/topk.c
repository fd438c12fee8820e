#include "predict/topk.h"

#include <math.h>
#include <stdlib.h>

#include "core/util.h"

void
kg_topk_init(struct kg_topk *t, size_t cap, size_t k)
{
	*t = (struct kg_topk)KG_TOPK_INIT;
	t->cap = cap;
	t->k = k;
	t->score = kg_xmallocarray(cap * k + 1, sizeof(*t->score));
	t->id = kg_xmallocarray(cap * k + 1, sizeof(*t->id));
	t->n = kg_xcalloc(cap + 1, sizeof(*t->n));
	t->nq = cap;
}

void
kg_topk_reset(struct kg_topk *t, size_t nq)
{
	size_t q;

	t->nq = nq <= t->cap ? nq : t->cap;
	for (q = 0; q < t->nq; q++)
		t->n[q] = 0;
}

void
kg_topk_release(struct kg_topk *t)
{
	free(t->score);
	free(t->id);
	free(t->n);
	*t = (struct kg_topk)KG_TOPK_INIT;
}

/* 1 when (sa, ia) ranks below (sb, ib). */
static inline int
worse(float sa, int64_t ia, float sb, int64_t ib)
{
	return sa < sb || (sa == sb && ia > ib);
}

/* Restore the heap below position i (the worst entry at the root). */
static void
sift_down(float *s, int64_t *id, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, w = i;
		float ts;
		int64_t ti;

		if (l < n && worse(s[l], id[l], s[w], id[w]))
			w = l;
		if (r < n && worse(s[r], id[r], s[w], id[w]))
			w = r;
		if (w == i)
			return;
		ts = s[i], s[i] = s[w], s[w] = ts;
		ti = id[i], id[i] = id[w], id[w] = ti;
		i = w;
	}
}

static void
sift_up(float *s, int64_t *id, size_t i)
{
	while (i > 0) {
		size_t p = (i - 1) / 2;
		float ts;
		int64_t ti;

		if (!worse(s[i], id[i], s[p], id[p]))
			return;
		ts = s[i], s[i] = s[p], s[p] = ts;
		ti = id[i], id[i] = id[p], id[p] = ti;
		i = p;
	}
}

void
kg_topk_push(struct kg_topk *t, size_t q, float score, int64_t id)
{
	float *s = t->score + q * t->k;
	int64_t *ids = t->id + q * t->k;
	size_t n = t->n[q];

	if (isnan(score))
		return;
	if (n < t->k) {
		s[n] = score;
		ids[n] = id;
		sift_up(s, ids, n);
		t->n[q] = n + 1;
		return;
	}
	if (!worse(s[0], ids[0], score, id))
		return;
	s[0] = score;
	ids[0] = id;
	sift_down(s, ids, n, 0);
}

void
kg_topk_push_row(struct kg_topk *t, size_t q, const float *row, size_t nc,
    int64_t first_id)
{
	const float *s = t->score + q * t->k;
	size_t j = 0;

	/* Fill the heap, then compare against its root only. */
	for (; j < nc && t->n[q] < t->k; j++)
		kg_topk_push(t, q, row[j], first_id + (int64_t)j);
	for (; j < nc; j++)
		if (row[j] >= s[0])
			kg_topk_push(t, q, row[j], first_id + (int64_t)j);
}

void
kg_topk_sort(struct kg_topk *t)
{
	size_t q;

	/* Heap sort: move the worst to the end, repeatedly. */
	for (q = 0; q < t->nq; q++) {
		float *s = t->score + q * t->k;
		int64_t *id = t->id + q * t->k;
		size_t n = t->n[q];

		while (n > 1) {
			float ts = s[0];
			int64_t ti = id[0];

			n--;
			s[0] = s[n], id[0] = id[n];
			s[n] = ts, id[n] = ti;
			sift_down(s, id, n, 0);
		}
	}
}
