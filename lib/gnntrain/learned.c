/*
 * gnntrain/learned: the learned table of GNN training by rows: each rank
 * holds the rows of its own nodes and their Adam states in a store,
 * synchronised across ranks by global ID after every step and gathered
 * on rank 0 at the end; see train_state.h.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gnntrain/train_state.h"

int
kg_gnn_model_init(struct kg_gnn *m, const struct kg_gnn_config *c,
    const struct kg_features *f, uint64_t seed, uint64_t n_rows,
    const int32_t *gid, const uint8_t *need)
{
	struct kg_gnn_config dc = *c;

	dc.n_learned = n_rows;
	return kg_gnn_init_rows(m, &dc, f, seed, gid, need);
}

uint8_t *
kg_gnn_learned_need(const struct kg_gnn_config *c,
    const struct kg_features *f, const int32_t *frow, uint64_t n)
{
	uint8_t *need;
	uint64_t i;
	size_t a;

	if (c->learned_only || f == NULL || f->n_attrs == 0)
		return NULL;
	need = kg_xmallocarray(n + 1, 1);
	for (i = 0; i < n; i++) {
		uint64_t e = frow != NULL ? (uint64_t)frow[i] : i;

		need[i] = 1;
		for (a = 0; a < f->n_attrs && need[i]; a++) {
			const struct kg_features_attr *at = &f->attrs[a];

			if (at->has[e] && (at->text || at->off[e + 1] >
			    at->off[e]))
				need[i] = 0;
		}
	}
	return need;
}

/* Row i of the learned table lw drawn where need[i] == want (need
 * NULL: every row); each row from its own stream: any thread count, the
 * same bits. */
static void
draw_rows(struct kg_gnn_tstate *ts, float *lw, int want)
{
	const int32_t *gid = ts->p->lrow;
	size_t d0 = ts->d0, i;

#pragma omp parallel for schedule(static, 4096)
	for (i = 0; i < ts->n_loc; i++)
		if (ts->need == NULL ? want : ts->need[i] == want)
			kg_gnn_learned_row_init(lw + i * d0, d0, ts->o->seed,
			    gid != NULL ? (uint64_t)gid[i] : i);
}

int
kg_gnn_learned_open(struct kg_gnn_tstate *ts)
{
	struct kg_store_layout l = {
		.n_rows = ts->n_loc, .dim = (uint32_t)ts->d0,
		.state_width = (uint32_t)(2 * ts->d0 + 1), .n_parts = 1
	};
	/* Fresh rows are zero (calloc's untouched pages in a memory
	 * store), then the rows training reads are drawn by the encoder's
	 * rule (the others at the end). */
	struct kg_store_init init = {
		.kind = KG_INIT_ZERO, .seed = ts->o->seed,
		.purpose = KG_STREAM_GNN_LEARNED_ROW
	};

	ts->learn = ts->o->learned_dir != NULL ? kg_store_open_buffer(&l,
	    &init, ts->o->learned_dir, 1) : kg_store_open_mem(&l, &init);
	if (ts->learn == NULL || kg_gnn_learned_pin(ts) < 0)
		return -1;
	draw_rows(ts, ts->out->enc.lw, 1);
	return 0;
}

int
kg_gnn_learned_pin(struct kg_gnn_tstate *ts)
{
	const struct kg_store_part *a;

	if (ts->learn_pinned)
		return 0;
	a = kg_store_acquire(ts->learn, 0);
	if (a == NULL)
		return -1;
	ts->learn_pinned = 1;
	ts->out->enc.lw = a->w;
	ts->st_learn = a->state;
	return 0;
}

void
kg_gnn_learned_unpin(struct kg_gnn_tstate *ts, int dirty)
{
	if (!ts->learn_pinned)
		return;
	kg_store_release(ts->learn, 0, dirty);
	ts->learn_pinned = 0;
	ts->out->enc.lw = NULL;
	ts->st_learn = NULL;
}

void
kg_gnn_learned_unload(struct kg_gnn_tstate *ts)
{
	struct kg_gnn *m = &ts->out->enc;

	if (ts->learn == NULL)
		return;
	if (ts->learn_pinned && m->w != NULL)
		memcpy(m->w + m->learned, m->lw, ts->n_loc * ts->d0 *
		    sizeof(float));
	kg_gnn_learned_unpin(ts, 0);
	kg_store_free(ts->learn);
	ts->learn = NULL;
}

void
kg_gnn_learned_fill(struct kg_gnn_tstate *ts)
{
	if (ts->need != NULL)
		draw_rows(ts, kg_gnn_learned_rows(&ts->out->enc), 0);
}

static int
gl_cmp(const void *a, const void *b)
{
	const struct kg_gnn_gl_pair *x = a, *y = b;

	return x->g < y->g ? -1 : x->g > y->g;
}

static int64_t
gl_find(const struct kg_gnn_gl_pair *m, size_t n, uint64_t g)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m[mid].g < g)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && m[lo].g == g ? (int64_t)m[lo].l : -1;
}

int
kg_gnn_learned_map(struct kg_gnn_tstate *ts)
{
	const struct kg_gnn_problem *p = ts->p;
	size_t i;

	ts->map = kg_xmallocarray(ts->n_loc + 1, sizeof(*ts->map));
	for (i = 0; i < ts->n_loc; i++) {
		ts->map[i].g = p->lrow ? (uint32_t)p->lrow[i] : (uint32_t)i;
		ts->map[i].l = (uint32_t)i;
	}
	qsort(ts->map, ts->n_loc, sizeof(*ts->map), gl_cmp);
	for (i = 0; i < ts->n_loc; i++)
		if (ts->map[i].g >= ts->o->enc.n_learned ||
		    (i > 0 && ts->map[i].g == ts->map[i - 1].g)) {
			kg_error("node %" PRIu32 " has global ID %" PRIu32
			    ", out of range or repeated", ts->map[i].l,
			    ts->map[i].g);
			return -1;
		}
	return 0;
}

/* ---- after every step ---- */

/* Pack the gradients of the learned rows g's nodes used, once each, into
 * w->ids, w->lr and w->rows (zeroing them in grad); returns the count. */
static size_t
pack_rows(struct kg_gnn_tstate *ts, const struct kg_gnn_graph *g,
    const int32_t *frow, const int32_t *lrow, float *grad)
{
	const struct kg_gnn_problem *p = ts->p;
	const struct kg_gnn *enc = &ts->out->enc;
	struct kg_gnn_work *w = &ts->w;
	size_t d0 = ts->d0, n = 0, i;

	for (i = 0; i < g->n_nodes; i++) {
		uint64_t fr = frow ? (uint64_t)frow[i] : i;
		uint64_t r = lrow ? (uint64_t)lrow[i] : i;
		float *gr = grad + enc->learned + r * d0;

		if (w->mark[r] || (p->feat != NULL && !enc->c.learned_only &&
		    !kg_gnn_uses_learned(enc, p->feat, fr)))
			continue;
		w->mark[r] = 1;
		w->ids[n] = p->lrow ? (uint64_t)p->lrow[r] : r;
		w->lr[n] = r;
		memcpy(w->rows + n * d0, gr, d0 * sizeof(float));
		memset(gr, 0, d0 * sizeof(float));
		n++;
	}
	for (i = 0; i < g->n_nodes; i++)
		w->mark[lrow ? (uint64_t)lrow[i] : i] = 0;
	return n;
}

/* One lazy Adam step on local row r with the rank-summed gradient gr;
 * none on a frozen row. */
static void
row_step(struct kg_gnn_tstate *ts, size_t r, float *gr, float inv)
{
	struct kg_gnn *enc = &ts->out->enc;
	size_t d0 = ts->d0, k;
	float *wr = kg_gnn_learned_rows(enc) + r * d0;

	if (ts->frozen_learn != NULL && ts->frozen_learn[r])
		return;
	for (k = 0; k < d0; k++)
		gr[k] *= inv;
	if (ts->o->reg > 0.0)
		kg_regularise(wr, gr, d0, ts->o->reg, 2, 1.0);
	kg_adam_row(wr, ts->st_learn + r * (2 * d0 + 1), gr, d0, &ts->adam);
}

void
kg_gnn_learned_sync(struct kg_gnn_tstate *ts, const struct kg_gnn_graph *g,
    const int32_t *frow, const int32_t *lrow, float *grad)
{
	struct kg_gnn_work *w = &ts->w;
	size_t d0 = ts->d0, n = pack_rows(ts, g, frow, lrow, grad), i;
	float inv = 1.0f / (float)ts->d->size;

	/* One rank: the packed rows are distinct, so summing them over the
	 * ranks changes nothing, and the rows' steps are independent of
	 * their order. */
	if (ts->d->size == 1) {
		for (i = 0; i < n; i++)
			row_step(ts, w->lr[i], w->rows + i * d0, inv);
		return;
	}
	kg_dist_sparse_sum(ts->d, w->ids, w->rows, n, d0, 0, &w->merged);
	for (i = 0; i < w->merged.n; i++) {
		int64_t r = gl_find(ts->map, ts->n_loc, w->merged.ids[i]);

		if (r >= 0)	/* else a row of another rank's nodes */
			row_step(ts, (size_t)r, w->merged.g + i * d0, inv);
	}
}

/* ---- at the end ---- */

/* Rank 0's gathering: rows travel in rounds of at most 256 KiB per rank,
 * so the buffers stay small next to the table. */
struct gather {
	size_t chunk, P;
	uint64_t rounds, next;
	uint64_t *cnt;		/* rows each rank owns */
	uint64_t *ids;		/* rank 0: P rounds' slots, else one */
	float *rows;
	uint8_t *have;		/* rank 0: rows received */
	struct kg_dist_xfer *xf;
	struct kg_gnn full;	/* rank 0: the whole table */
};

static int
owns(const struct kg_gnn_problem *p, struct kg_dist *d, uint64_t i)
{
	return p->owner == NULL || p->owner[i] == d->rank;
}

/* Counts, rounds and buffers; rank 0 also starts the whole encoder. */
static int
gather_begin(struct kg_gnn_tstate *ts, struct gather *ga)
{
	const struct kg_gnn_problem *p = ts->p;
	struct kg_dist *d = ts->d;
	uint64_t n_glob = ts->o->enc.n_learned, i, k;
	struct kg_gnn *enc = &ts->out->enc;
	int r;

	ga->P = (size_t)d->size;
	ga->chunk = ((size_t)1 << 18) / (ts->d0 * sizeof(float) +
	    sizeof(uint64_t));
	if (ga->chunk == 0)
		ga->chunk = 1;
	ga->xf = kg_xcalloc(2 * ga->P, sizeof(*ga->xf));
	ga->cnt = kg_xcalloc(ga->P, sizeof(*ga->cnt));
	for (i = 0; i < ts->n_loc; i++)
		ga->cnt[d->rank] += owns(p, d, i);
	kg_dist_sum_u64(d, ga->cnt, ga->P);
	for (r = 0; r < d->size; r++)
		if ((ga->cnt[r] + ga->chunk - 1) / ga->chunk > ga->rounds)
			ga->rounds = (ga->cnt[r] + ga->chunk - 1) / ga->chunk;
	/* Rank 0 receives every rank's round into slot r. */
	k = d->rank == 0 ? ga->P : 1;
	ga->ids = kg_xmallocarray(k * ga->chunk, sizeof(*ga->ids));
	ga->rows = kg_xmallocarray(k * ga->chunk * ts->d0, sizeof(*ga->rows));
	if (d->rank != 0)
		return 0;
	ga->have = kg_xcalloc(n_glob + 1, 1);
	if (kg_gnn_model_init(&ga->full, &enc->c, p->feat, ts->o->seed,
	    n_glob, NULL, NULL) < 0)
		return -1;
	memcpy(ga->full.w + n_glob * ts->d0, enc->w + ts->n_lf,
	    ts->n_dense * sizeof(float));
	return 0;
}

/* This rank's next rows of round "round" into its slot, and the
 * transfers of the round: every rank's slot to rank 0. */
static void
gather_round(struct kg_gnn_tstate *ts, struct gather *ga, uint64_t round)
{
	const struct kg_gnn_problem *p = ts->p;
	const struct kg_gnn *enc = &ts->out->enc;
	struct kg_dist *d = ts->d;
	size_t d0 = ts->d0, chunk = ga->chunk, nx = 0;
	uint64_t n = 0, lo = round * chunk, m;
	int r, me = d->rank;

	for (; ga->next < ts->n_loc && n < chunk; ga->next++)
		if (owns(p, d, ga->next)) {
			ga->ids[n] = p->lrow ? (uint64_t)p->lrow[ga->next] :
			    ga->next;
			memcpy(ga->rows + n * d0, kg_gnn_learned_rows(enc) +
			    ga->next * d0, d0 * sizeof(float));
			n++;
		}
	for (r = 0; r < d->size; r++) {
		m = ga->cnt[r] > lo ? ga->cnt[r] - lo : 0;
		if (m > chunk)
			m = chunk;
		if (m == 0 || (me != 0 && r != me) || (me == 0 && r == 0))
			continue;
		ga->xf[nx++] = (struct kg_dist_xfer){ ga->ids + (me ? 0 :
		    (size_t)r * chunk), m * sizeof(*ga->ids), me ? 0 : r, 1,
		    me != 0 };
		ga->xf[nx++] = (struct kg_dist_xfer){ ga->rows + (me ? 0 :
		    (size_t)r * chunk * d0), m * d0 * sizeof(*ga->rows),
		    me ? 0 : r, 2, me != 0 };
	}
	kg_dist_exchange(d, ga->xf, nx);
}

/* Rank 0: put the rows of round "round" into the whole table. */
static void
gather_place(struct kg_gnn_tstate *ts, struct gather *ga, uint64_t round)
{
	uint64_t n_glob = ts->o->enc.n_learned, lo = round * ga->chunk, k;
	size_t d0 = ts->d0, r;

	for (r = 0; r < ga->P; r++) {
		uint64_t m = ga->cnt[r] > lo ? ga->cnt[r] - lo : 0;

		for (k = 0; k < m && k < ga->chunk; k++) {
			uint64_t id = ga->ids[r * ga->chunk + k];

			if (id >= n_glob || ga->have[id])
				continue;
			ga->have[id] = 1;
			memcpy(ga->full.w + id * d0, ga->rows + (r * ga->chunk +
			    k) * d0, d0 * sizeof(float));
		}
	}
}

/* Rank 0: the whole table replaces the local one. */
static void
gather_end(struct kg_gnn_tstate *ts, struct gather *ga)
{
	uint64_t n_glob = ts->o->enc.n_learned, missing = 0, i;

	for (i = 0; i < n_glob; i++)
		missing += !ga->have[i];
	if (missing > 0 && !ts->o->quiet)
		kg_warn("%" PRIu64 " of %" PRIu64 " entities are owned by no "
		    "rank: their learned rows keep their initial values",
		    missing, n_glob);
	kg_gnn_release(&ts->out->enc);
	ts->out->enc = ga->full;
	memset(&ga->full, 0, sizeof(ga->full));
}

int
kg_gnn_learned_gather(struct kg_gnn_tstate *ts)
{
	const struct kg_gnn_problem *p = ts->p;
	struct gather ga;
	uint64_t round;
	int rc;

	if (ts->d->size == 1 && p->lrow == NULL && p->owner == NULL &&
	    ts->n_loc == ts->o->enc.n_learned) {
		kg_gnn_learned_unload(ts);
		return 0;	/* the local table is the whole one */
	}
	memset(&ga, 0, sizeof(ga));
	rc = gather_begin(ts, &ga);
	for (round = 0; round < ga.rounds; round++) {
		gather_round(ts, &ga, round);
		if (ts->d->rank == 0 && rc == 0)
			gather_place(ts, &ga, round);
	}
	/* Rank 0's encoder is the whole one now; another keeps its rows. */
	if (ts->d->rank == 0 && rc == 0) {
		kg_gnn_learned_unpin(ts, 0);
		gather_end(ts, &ga);
	}
	kg_gnn_learned_unload(ts);
	kg_gnn_release(&ga.full);
	free(ga.have);
	free(ga.xf);
	free(ga.cnt);
	free(ga.ids);
	free(ga.rows);
	return rc;
}
