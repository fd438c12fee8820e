/*
 * gnntrain/xneg: shared negatives exchanged between ranks (gnn_train.h,
 * neg_exchange; the contract is in train_state.h).
 */
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "gnntrain/train_state.h"

void
kg_gnn_xneg_init(struct kg_gnn_xneg *x, struct kg_dist *d,
    size_t max_chunks, size_t kc, size_t dl, uint64_t pool, size_t max_rows)
{
	uint64_t b = (uint64_t)max_chunks * kc;
	size_t R = (size_t)d->size;

	memset(x, 0, sizeof(*x));
	x->R = R;
	x->kc = kc;
	x->dl = dl;
	kg_dist_max_u64(d, &b, 1);
	x->B = (size_t)b;
	x->pool = kg_xmallocarray(R, sizeof(*x->pool));
	kg_dist_allgather(d, &pool, sizeof(pool), x->pool);
	x->nch = kg_xcalloc(R, sizeof(*x->nch));
	x->src = kg_xmallocarray(max_chunks + 1, sizeof(*x->src));
	x->blk = kg_xmallocarray(max_chunks + 1, sizeof(*x->blk));
	x->own = kg_xmallocarray(x->B + 1, sizeof(*x->own));
	x->send = kg_xcalloc(kg_xmul(x->B, dl) + 1, sizeof(float));
	x->back = kg_xmallocarray(kg_xmul(x->B, dl) + 1, sizeof(float));
	x->gsend = kg_xcalloc(x->B + 1, sizeof(*x->gsend));
	x->gall = kg_xmallocarray(kg_xmul(R, x->B) + 1, sizeof(*x->gall));
	x->hx = kg_xmallocarray(kg_xmul(max_rows + R * x->B, dl) + 1,
	    sizeof(float));
}

void
kg_gnn_xneg_release(struct kg_gnn_xneg *x)
{
	free(x->pool);
	free(x->nch);
	free(x->src);
	free(x->blk);
	free(x->own);
	free(x->send);
	free(x->back);
	free(x->gsend);
	free(x->gall);
	free(x->hx);
	memset(x, 0, sizeof(*x));
}

void
kg_gnn_xneg_pick(struct kg_gnn_xneg *x, size_t c, struct kg_rng *rng)
{
	uint64_t total = 0, u;
	size_t s;

	for (s = 0; s < x->R; s++)
		if (x->nch[s] > 0)
			total += x->pool[s];
	/* This rank has a chunk, so some rank does; a pool is never empty
	 * (kg_gnn_train refuses an empty one). */
	u = kg_rng_below(rng, total);
	for (s = 0; s + 1 < x->R; s++) {
		if (x->nch[s] == 0)
			continue;
		if (u < x->pool[s])
			break;
		u -= x->pool[s];
	}
	x->src[c] = (uint32_t)s;
	x->blk[c] = (uint32_t)kg_rng_below(rng, x->nch[s]);
}

uint64_t
kg_gnn_xneg_gather(struct kg_gnn_xneg *x, struct kg_dist *d,
    const float *h, uint64_t n, int32_t *cand, size_t nch, int rank)
{
	size_t kc = x->kc, dl = x->dl, B = x->B, i, j, m = nch * kc;

	for (i = 0; i < m; i++) {
		x->own[i] = cand[i];
		memcpy(x->send + i * dl, h + (size_t)cand[i] * dl,
		    dl * sizeof(float));
	}
	/* Rows past this step's candidates stay as they are: no chunk
	 * reads them (blk < nch of their rank).  The ranks' blocks land
	 * right after h's n rows. */
	if (n > 0)
		memcpy(x->hx, h, (size_t)n * dl * sizeof(float));
	kg_dist_allgather(d, x->send, B * dl * sizeof(float),
	    x->hx + (size_t)n * dl);
	kg_dist_allgather(d, x->gsend, B * sizeof(*x->gsend), x->gall);
	for (i = 0; i < nch; i++) {
		size_t s = x->src[i];

		if (s == (size_t)rank)
			continue;
		for (j = 0; j < kc; j++)
			cand[i * kc + j] = (int32_t)(n + s * B +
			    (size_t)x->blk[i] * kc + j);
	}
	return n + x->R * B;
}

void
kg_gnn_xneg_scatter(struct kg_gnn_xneg *x, struct kg_dist *d, float *gh,
    uint64_t n, size_t nch)
{
	size_t dl = x->dl, i, k, m = nch * x->kc;

	kg_dist_reduce_scatter_f32(d, gh + (size_t)n * dl, x->B * dl,
	    x->back);
	for (i = 0; i < m; i++) {
		float *g = gh + (size_t)x->own[i] * dl;
		const float *b = x->back + i * dl;

		for (k = 0; k < dl; k++)
			g[k] += b[k];
	}
}
