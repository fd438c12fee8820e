/*
 * gnn_train: the GNN training loop; see gnn_train.h.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>
#include <omp.h>

#include "io/dataset.h"
#include "gnn/gnn_decode.h"
#include "gnn/gnn_train.h"
#include "io/manifest.h"
#include "io/modeldir.h"
#include "io/npy.h"
#include "kge/optim.h"
#include "io/outdir.h"
#include "kge/train.h"
#include "core/util.h"

int
kg_gnn_train_opts_check(const struct kg_gnn_train_opts *o)
{
	uint32_t k;

	if (o->decoder != KG_MODEL_DISTMULT && o->decoder != KG_MODEL_COMPLEX &&
	    o->decoder != KG_MODEL_TRANSE_L1 &&
	    o->decoder != KG_MODEL_TRANSE_L2) {
		kg_error("the GNN decoder must be DistMult, TransE or ComplEx, "
		    "not %s", kg_model_name(o->decoder));
		return -1;
	}
	if (o->enc.n_layers > KG_GNN_MAX_LAYERS) {
		kg_error("at most %d graph layers", KG_GNN_MAX_LAYERS);
		return -1;
	}
	if (o->nfanout != 0 && o->nfanout != o->enc.n_layers) {
		kg_error("--fanout needs one value per graph layer (%u), "
		    "found %u", o->enc.n_layers, o->nfanout);
		return -1;
	}
	for (k = 0; k < o->nfanout; k++)
		if (o->fanout[k] == 0) {
			kg_error("fan-out values must be positive");
			return -1;
		}
	if (!(o->edge_dropout >= 0.0 && o->edge_dropout < 1.0)) {
		kg_error("edge dropout must be in [0, 1)");
		return -1;
	}
	if (o->batch_size == 0 || o->neg == 0 || o->epochs == 0) {
		kg_error("batch size, negatives and epochs must be positive");
		return -1;
	}
	if (!(o->lr > 0.0) || o->reg < 0.0) {
		kg_error("learning rate must be positive and regularisation "
		    "non-negative");
		return -1;
	}
	return 0;
}

/* ---- neighbour sampling ---- */

struct sub {
	struct kg_gnn_graph g;
	uint64_t n, cap_n, cap_m;
	int32_t *nodes;		/* local -> problem node */
	int32_t *frow;		/* feature row of each local node */
	int32_t *lrow;		/* its learned row: the problem node */
	int32_t *local;		/* problem node -> local, -1 */
	uint32_t *cnt;		/* per type */
	uint64_t *pick, cap_pick;
};

static int32_t
sub_add(struct sub *s, int32_t v)
{
	if (s->local[v] < 0) {
		if (s->n == s->cap_n) {
			s->cap_n = s->cap_n ? 2 * s->cap_n : 1024;
			s->nodes = kg_xreallocarray(s->nodes, s->cap_n,
			    sizeof(*s->nodes));
		}
		s->local[v] = (int32_t)s->n;
		s->nodes[s->n++] = v;
	}
	return s->local[v];
}

static void
sub_msg(struct sub *s, int32_t src, int32_t type)
{
	struct kg_gnn_graph *g = &s->g;

	if (g->n_msgs == s->cap_m) {
		s->cap_m = s->cap_m ? 2 * s->cap_m : 4096;
		g->src = kg_xreallocarray(g->src, s->cap_m, sizeof(*g->src));
		g->type = kg_xreallocarray(g->type, s->cap_m,
		    sizeof(*g->type));
		g->norm = kg_xreallocarray(g->norm, s->cap_m,
		    sizeof(*g->norm));
	}
	g->src[g->n_msgs] = src;
	g->type[g->n_msgs] = type;
	g->n_msgs++;
}

/*
 * Sample the neighbourhood of the n seed nodes (problem IDs in seeds,
 * rewritten to local IDs).  Nodes get local IDs in the order they are
 * reached and have their messages sampled in that order, so the kept
 * messages are grouped by destination already.
 */
static void
sub_build(struct sub *s, const struct kg_gnn_graph *full,
    const struct kg_gnn_train_opts *o, const struct kg_gnn_problem *p,
    int32_t *seeds, size_t n, struct kg_rng *rng)
{
	uint64_t lo = 0, hi, i, e, k;
	uint32_t hop;

	s->n = 0;
	s->g.n_msgs = 0;
	for (k = 0; k < n; k++)
		seeds[k] = sub_add(s, seeds[k]);
	hi = s->n;
	free(s->g.off);
	s->g.off = NULL;
	{
		/* off is filled as destinations are processed; nodes of the
		 * last frontier get empty lists below. */
		uint64_t cap = 0, *off = NULL;

		for (hop = 0; hop < o->nfanout; hop++) {
			uint32_t f = o->fanout[hop];

			for (i = lo; i < hi; i++) {
				int32_t v = s->nodes[i];
				uint64_t e0 = full->off[v], deg = full->off[v + 1] - e0;

				if (i + 2 > cap) {
					cap = cap ? 2 * cap : 1024;
					while (cap < i + 2)
						cap *= 2;
					off = kg_xreallocarray(off, cap,
					    sizeof(*off));
				}
				off[i] = s->g.n_msgs;
				if (deg <= f) {
					for (e = e0; e < e0 + deg; e++)
						sub_msg(s, sub_add(s,
						    full->src[e]), full->type[e]);
					continue;
				}
				if (deg > s->cap_pick) {
					s->cap_pick = 2 * deg;
					s->pick = kg_xreallocarray(s->pick,
					    s->cap_pick, sizeof(*s->pick));
				}
				for (e = 0; e < deg; e++)
					s->pick[e] = e0 + e;
				for (e = 0; e < f; e++) {
					uint64_t r = e + kg_rng_below(rng, deg - e);
					uint64_t t = s->pick[r];

					s->pick[r] = s->pick[e];
					s->pick[e] = t;
					sub_msg(s, sub_add(s, full->src[t]),
					    full->type[t]);
				}
			}
			lo = hi;
			hi = s->n;
		}
		off = kg_xreallocarray(off, s->n + 1, sizeof(*off));
		for (i = lo; i <= s->n; i++)
			off[i] = s->g.n_msgs;
		s->g.off = off;
	}
	s->g.n_nodes = s->n;
	s->g.n_types = full->n_types;
	kg_gnn_graph_normalise(&s->g, s->cnt);
	s->frow = kg_xreallocarray(s->frow, s->n + 1, sizeof(*s->frow));
	s->lrow = kg_xreallocarray(s->lrow, s->n + 1, sizeof(*s->lrow));
	for (i = 0; i < s->n; i++) {
		int32_t v = s->nodes[i];

		s->frow[i] = p->frow ? p->frow[v] : v;
		s->lrow[i] = v;
	}
	for (i = 0; i < s->n; i++)
		s->local[s->nodes[i]] = -1;
}

static void
sub_release(struct sub *s)
{
	kg_gnn_graph_release(&s->g);
	free(s->nodes);
	free(s->frow);
	free(s->lrow);
	free(s->local);
	free(s->cnt);
	free(s->pick);
}

/* ---- edge dropout ---- */

/* A graph with some messages dropped, its buffers kept across steps. */
struct edrop {
	struct kg_gnn_graph g;
	uint64_t cap_n, cap_m;
	uint32_t *cnt;		/* per type, zero between calls */
};

/*
 * e->g = the messages of g, each kept with probability 1 - p, with the
 * R-GCN normalisers recounted over the kept ones (the R-GCN paper's edge
 * dropout: the encoder must not lean on any one edge, the scored one
 * included).
 */
static const struct kg_gnn_graph *
edge_drop(struct edrop *e, const struct kg_gnn_graph *g, double p,
    struct kg_rng *rng)
{
	struct kg_gnn_graph *out = &e->g;
	uint64_t i, k, m = 0;

	if (g->n_nodes + 1 > e->cap_n) {
		e->cap_n = g->n_nodes + 1;
		out->off = kg_xreallocarray(out->off, e->cap_n,
		    sizeof(*out->off));
	}
	if (g->n_msgs + 1 > e->cap_m) {
		e->cap_m = g->n_msgs + 1;
		out->src = kg_xreallocarray(out->src, e->cap_m,
		    sizeof(*out->src));
		out->type = kg_xreallocarray(out->type, e->cap_m,
		    sizeof(*out->type));
		out->norm = kg_xreallocarray(out->norm, e->cap_m,
		    sizeof(*out->norm));
	}
	if (e->cnt == NULL)
		e->cnt = kg_xcalloc(g->n_types + 1, sizeof(*e->cnt));
	out->n_nodes = g->n_nodes;
	out->n_types = g->n_types;
	out->off[0] = 0;
	for (i = 0; i < g->n_nodes; i++) {
		for (k = g->off[i]; k < g->off[i + 1]; k++)
			if (kg_rng_uniform(rng) >= p) {
				out->src[m] = g->src[k];
				out->type[m] = g->type[k];
				m++;
			}
		out->off[i + 1] = m;
	}
	out->n_msgs = m;
	kg_gnn_graph_normalise(out, e->cnt);
	return out;
}

static void
edrop_release(struct edrop *e)
{
	kg_gnn_graph_release(&e->g);
	free(e->cnt);
	memset(e, 0, sizeof(*e));
}

/* ---- training ---- */

void
kg_gnn_trained_release(struct kg_gnn_trained *t)
{
	kg_gnn_release(&t->enc);
	free(t->rel);
	memset(t, 0, sizeof(*t));
}

static int32_t
draw_pool(const struct kg_gnn_problem *p, struct kg_rng *rng)
{
	return p->pool != NULL ? p->pool[kg_rng_below(rng, p->n_pool)] :
	    (int32_t)kg_rng_below(rng, p->n_nodes);
}

/* Keep, per positive, the neg candidates scored closest to it. */
static void
select_adaptive(const struct kg_model *m, const float *h, const float *rel,
    const int32_t *pos, size_t nb, const int32_t *cand, size_t nc,
    size_t neg, int32_t *negs, float *dists)
{
	size_t d = m->dim, rw = m->rel_width;

	/* Positives are independent; dist holds nc floats per thread. */
#pragma omp parallel for schedule(static)
	for (size_t i = 0; i < nb; i++) {
		const int32_t *t = pos + 3 * i;
		float *dist = dists + (size_t)omp_get_thread_num() * nc;
		size_t j, k;
		float sp = kg_model_score(m, h + (size_t)t[0] * d,
		    rel + (size_t)t[1] * rw, h + (size_t)t[2] * d);

		for (j = 0; j < nc; j++) {
			const int32_t *c = cand + 3 * (i * nc + j);

			dist[j] = fabsf(kg_model_score(m, h + (size_t)c[0] * d,
			    rel + (size_t)c[1] * rw, h + (size_t)c[2] * d) - sp);
		}
		/* Partial selection sort: nc is small (neg x candidates). */
		for (k = 0; k < neg; k++) {
			size_t best = k;

			for (j = k + 1; j < nc; j++)
				if (dist[j] < dist[best])
					best = j;
			if (best != k) {
				float td = dist[k];
				int32_t tc[3];

				dist[k] = dist[best];
				dist[best] = td;
				memcpy(tc, cand + 3 * (i * nc + k), sizeof(tc));
				memcpy((int32_t *)cand + 3 * (i * nc + k),
				    cand + 3 * (i * nc + best), sizeof(tc));
				memcpy((int32_t *)cand + 3 * (i * nc + best),
				    tc, sizeof(tc));
			}
			memcpy(negs + 3 * (i * neg + k),
			    cand + 3 * (i * nc + k), 3 * sizeof(int32_t));
		}
	}
}

/* ---- the learned table, by rows ---- */

/*
 * An encoder with a learned table of n_rows rows, row i for global ID
 * gid[i] (NULL: i).  kg_gnn_init draws the other parameters independently
 * of n_rows, which differs between ranks.
 */
static int
model_init(struct kg_gnn *m, const struct kg_gnn_config *c,
    const struct kg_features *f, uint64_t seed, uint64_t n_rows,
    const int32_t *gid)
{
	struct kg_gnn_config dc = *c;
	size_t d0 = c->dims[0], i;

	dc.n_learned = n_rows;
	if (kg_gnn_init(m, &dc, f, seed) < 0)
		return -1;
	if (gid != NULL)
		for (i = 0; i < n_rows; i++)
			kg_gnn_learned_row_init(m->w + m->learned + i * d0, d0,
			    seed, (uint64_t)gid[i]);
	return 0;
}

/* Global ID -> local row, sorted by global ID (both below 2^31). */
struct gl_pair {
	uint32_t g, l;
};

static int
gl_cmp(const void *a, const void *b)
{
	const struct gl_pair *x = a, *y = b;

	return x->g < y->g ? -1 : x->g > y->g;
}

static int64_t
gl_find(const struct gl_pair *m, size_t n, uint64_t g)
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

/* Everything of a run besides the parameters in out: what a checkpoint
 * holds with them. */
struct tstate {
	struct kg_gnn_trained *out;
	const struct kg_gnn_problem *p;
	size_t n_loc, d0, n_lf, n_dense, n_rel_f;
	float *st_enc;		/* 2 n_dense + 1 */
	float *st_learn;	/* n_loc x (2 d0 + 1) */
	float *st_rel;		/* 2 n_rel_f + 1 */
	struct gl_pair *map;	/* n_loc */
	struct kg_rng rng;
	uint64_t *order, cursor;
	uint32_t epoch;
};

/*
 * The learned rows this step used (nodes without attribute values; lrow
 * gives each node of g its local row): pack their gradients by global ID
 * (zeroing them in grad), sum them over the ranks, and take one lazy Adam
 * step on each merged row this rank holds (with the L2 term of the row),
 * so every rank holding a row applies the same update.  Rows are averaged
 * over the ranks like the dense gradients.
 */
static void
sync_learned(struct tstate *ts, const struct kg_gnn_train_opts *o,
    const struct kg_gnn_graph *g, const int32_t *frow, const int32_t *lrow,
    float *grad, uint8_t *mark, uint64_t **ids, float **rows,
    struct kg_sparse_rows *merged, const struct kg_adam *adam,
    struct kg_dist *d)
{
	const struct kg_gnn_problem *p = ts->p;
	struct kg_gnn *enc = &ts->out->enc;
	size_t d0 = ts->d0, n = 0, i, k;
	float inv = 1.0f / (float)d->size;

	*ids = kg_xreallocarray(*ids, g->n_nodes + 1, sizeof(**ids));
	*rows = kg_xreallocarray(*rows, (g->n_nodes + 1) * d0,
	    sizeof(**rows));
	for (i = 0; i < g->n_nodes; i++) {
		uint64_t fr = frow ? (uint64_t)frow[i] : i;
		uint64_t r = lrow ? (uint64_t)lrow[i] : i;
		float *gr = grad + enc->learned + r * d0;

		if (mark[r] || (p->feat != NULL && !enc->c.learned_only &&
		    !kg_gnn_uses_learned(enc, p->feat, fr)))
			continue;
		mark[r] = 1;
		(*ids)[n] = p->lrow ? (uint64_t)p->lrow[r] : r;
		memcpy(*rows + n * d0, gr, d0 * sizeof(float));
		memset(gr, 0, d0 * sizeof(float));
		n++;
	}
	for (i = 0; i < g->n_nodes; i++)
		mark[lrow ? (uint64_t)lrow[i] : i] = 0;
	kg_dist_sparse_sum(d, *ids, *rows, n, d0, 0, merged);
	for (i = 0; i < merged->n; i++) {
		int64_t r = gl_find(ts->map, ts->n_loc, merged->ids[i]);
		float *gr = merged->g + i * d0, *wr;

		if (r < 0)
			continue;	/* a row of another rank's nodes */
		wr = enc->w + enc->learned + (size_t)r * d0;
		for (k = 0; k < d0; k++)
			gr[k] *= inv;
		if (o->reg > 0.0)
			kg_regularise(wr, gr, d0, o->reg, 2, 1.0);
		kg_adam_row(wr, ts->st_learn + (size_t)r * (2 * d0 + 1), gr, d0,
		    adam);
	}
}

/*
 * Rank 0 takes the whole learned table: every rank sends the rows of the
 * nodes it owns (by global ID), rank 0 puts them into an encoder of
 * o->enc.n_learned rows (the first sender of a row wins; a row nobody
 * sends keeps its initial value) with the dense parameters of its own.
 * The rows travel in rounds of at most 256 KiB per rank, so the buffers
 * stay small next to the table.
 */
static int
gather_learned(struct tstate *ts, const struct kg_gnn_train_opts *o,
    struct kg_dist *d)
{
	const struct kg_gnn_problem *p = ts->p;
	struct kg_gnn *enc = &ts->out->enc, full = KG_GNN_INIT;
	uint64_t n_glob = o->enc.n_learned, *cnt, *ids, missing = 0;
	uint64_t i, k, next = 0, round, rounds = 0;
	size_t d0 = ts->d0, chunk, nx, P = (size_t)d->size;
	struct kg_dist_xfer *xf = kg_xcalloc(2 * P, sizeof(*xf));
	float *rows;
	uint8_t *have = NULL;
	int r, rc = 0;

	if (d->size == 1 && p->lrow == NULL && p->owner == NULL &&
	    ts->n_loc == n_glob) {
		free(xf);
		return 0;	/* the local table is the whole one */
	}
	chunk = ((size_t)1 << 18) / (d0 * sizeof(float) + sizeof(uint64_t));
	if (chunk == 0)
		chunk = 1;
	cnt = kg_xcalloc(P, sizeof(*cnt));
	for (i = 0; i < ts->n_loc; i++)
		cnt[d->rank] += p->owner == NULL || p->owner[i] == d->rank;
	kg_dist_sum_u64(d, cnt, P);
	for (r = 0; r < d->size; r++)
		if ((cnt[r] + chunk - 1) / chunk > rounds)
			rounds = (cnt[r] + chunk - 1) / chunk;
	/* Rank 0 receives every rank's round into slot r. */
	k = d->rank == 0 ? P : 1;
	ids = kg_xmallocarray(k * chunk, sizeof(*ids));
	rows = kg_xmallocarray(k * chunk * d0, sizeof(*rows));
	if (d->rank == 0) {
		have = kg_xcalloc(n_glob + 1, 1);
		rc = model_init(&full, &enc->c, p->feat, o->seed, n_glob, NULL);
		if (rc == 0)
			memcpy(full.w + n_glob * d0, enc->w + ts->n_lf,
			    ts->n_dense * sizeof(float));
	}
	for (round = 0; round < rounds; round++) {
		uint64_t n = 0, lo = round * chunk;

		/* This rank's next rows, rank 0's into its own slot. */
		for (; next < ts->n_loc && n < chunk; next++)
			if (p->owner == NULL || p->owner[next] == d->rank) {
				ids[n] = p->lrow ? (uint64_t)p->lrow[next] :
				    next;
				memcpy(rows + n * d0, enc->w + enc->learned +
				    next * d0, d0 * sizeof(float));
				n++;
			}
		nx = 0;
		for (r = 0; r < d->size; r++) {
			uint64_t m = cnt[r] > lo ? cnt[r] - lo : 0;

			if (m > chunk)
				m = chunk;
			if (m == 0 || (d->rank != 0 && r != d->rank) ||
			    (d->rank == 0 && r == 0))
				continue;
			xf[nx++] = (struct kg_dist_xfer){ ids + (d->rank ? 0 :
			    (size_t)r * chunk), m * sizeof(*ids), d->rank ? 0 :
			    r, 1, d->rank != 0 };
			xf[nx++] = (struct kg_dist_xfer){ rows + (d->rank ? 0 :
			    (size_t)r * chunk * d0), m * d0 * sizeof(*rows),
			    d->rank ? 0 : r, 2, d->rank != 0 };
		}
		kg_dist_exchange(d, xf, nx);
		if (d->rank != 0 || rc < 0)
			continue;
		for (r = 0; r < d->size; r++) {
			uint64_t m = cnt[r] > lo ? cnt[r] - lo : 0;

			for (k = 0; k < m && k < chunk; k++) {
				uint64_t id = ids[(size_t)r * chunk + k];

				if (id >= n_glob || have[id])
					continue;
				have[id] = 1;
				memcpy(full.w + id * d0, rows + ((size_t)r *
				    chunk + k) * d0, d0 * sizeof(float));
			}
		}
	}
	if (d->rank == 0 && rc == 0) {
		for (i = 0; i < n_glob; i++)
			missing += !have[i];
		if (missing > 0 && !o->quiet)
			kg_warn("%" PRIu64 " of %" PRIu64 " entities are owned "
			    "by no rank: their learned rows keep their initial "
			    "values", missing, n_glob);
		kg_gnn_release(enc);
		*enc = full;
	}
	free(have);
	free(xf);
	free(cnt);
	free(ids);
	free(rows);
	return rc;
}

/* ---- checkpoints ---- */

/* The options that fix the shapes of a checkpoint; a resume must match
 * them. */
static json_t *
ckpt_shape(const struct tstate *ts, const struct kg_gnn_train_opts *o,
    int nranks)
{
	const struct kg_gnn *m = &ts->out->enc;
	json_t *s = json_object(), *dims = json_array();
	uint32_t l;

	for (l = 0; l <= m->c.n_layers; l++)
		json_array_append_new(dims, json_integer(m->c.dims[l]));
	json_object_set_new(s, "encoder",
	    json_string(kg_gnn_encoder_name(m->c.encoder)));
	json_object_set_new(s, "gnn_decomposition", json_string(
	    m->c.decomp == KG_GNN_BASIS ? "basis" : "block"));
	json_object_set_new(s, "gnn_dims", dims);
	json_object_set_new(s, "gnn_num_bases", json_integer(m->c.n_bases));
	json_object_set_new(s, "gnn_learned_only",
	    json_boolean(m->c.learned_only));
	json_object_set_new(s, "gnn_dense_params",
	    json_integer((json_int_t)ts->n_dense));
	json_object_set_new(s, "model", json_string(kg_model_name(o->decoder)));
	json_object_set_new(s, "relations",
	    json_integer((json_int_t)ts->p->n_relations));
	json_object_set_new(s, "entities",
	    json_integer((json_int_t)o->enc.n_learned));
	json_object_set_new(s, "nranks", json_integer(nranks));
	return s;
}

static char *
rank_file(int rank, const char *what)
{
	return kg_xasprintf("rank-%03d-%s.npy", rank, what);
}

/* Write n x w (w = 0: a vector of n) of dtype dt into dir/name. */
static int
put_arr(const char *dir, const char *name, enum kg_dtype dt, uint64_t n,
    uint64_t w, const void *data)
{
	char *path = kg_path_join(dir, name);
	uint64_t sh[2] = { n, w };
	int rc = kg_npy_write(path, dt, w ? 2 : 1, sh, data);

	free(path);
	return rc;
}

/* Read dir/name into data, requiring dtype dt and shape n x w (w = 0: a
 * vector of n). */
static int
get_arr(const char *dir, const char *name, enum kg_dtype dt, uint64_t n,
    uint64_t w, void *data)
{
	struct kg_npy a = KG_NPY_INIT;
	char *path = kg_path_join(dir, name);
	int rc = kg_npy_read_expect(path, dt, w ? 2 : 1, &a);

	if (rc == 0 && (a.shape[0] != n || (w && a.shape[1] != w))) {
		kg_error("checkpoint file '%s' does not have the shape of "
		    "this run (%" PRIu64 " x %" PRIu64 ")", path, n, w ? w : 1);
		rc = -1;
	}
	if (rc == 0)
		memcpy(data, a.data, a.nbytes);
	kg_npy_release(&a);
	free(path);
	return rc;
}

/* This rank's files: its learned rows and their Adam state, its nodes'
 * global IDs (checked on resume), its permutation and its RNG + cursor. */
static int
ckpt_write_rank(const char *dir, const struct tstate *ts, int rank)
{
	const struct kg_gnn *m = &ts->out->enc;
	uint64_t smp[5];
	int32_t *gid = kg_xmallocarray(ts->n_loc + 1, sizeof(*gid));
	char *f[5];
	size_t i;
	int rc;

	for (i = 0; i < ts->n_loc; i++)
		gid[i] = ts->p->lrow ? ts->p->lrow[i] : (int32_t)i;
	memcpy(smp, ts->rng.s, sizeof(ts->rng.s));
	smp[4] = ts->cursor;
	f[0] = rank_file(rank, "learned");
	f[1] = rank_file(rank, "learned_state");
	f[2] = rank_file(rank, "nodes");
	f[3] = rank_file(rank, "order");
	f[4] = rank_file(rank, "sampler");
	rc = put_arr(dir, f[0], KG_DT_F4, ts->n_loc, ts->d0,
	    m->w + m->learned) < 0 ||
	    put_arr(dir, f[1], KG_DT_F4, ts->n_loc, 2 * ts->d0 + 1,
	    ts->st_learn) < 0 ||
	    put_arr(dir, f[2], KG_DT_I4, ts->n_loc, 0, gid) < 0 ||
	    put_arr(dir, f[3], KG_DT_U8, ts->p->n_core, 0, ts->order) < 0 ||
	    put_arr(dir, f[4], KG_DT_U8, 5, 0, smp) < 0 ? -1 : 0;
	for (i = 0; i < 5; i++)
		free(f[i]);
	free(gid);
	return rc;
}

/* Rank 0's files: the dense parameters and their Adam states, state.json
 * and the manifest of every rank's files. */
static int
ckpt_write_shared(const char *dir, const struct tstate *ts,
    const struct kg_gnn_train_opts *o, const struct kg_gnn_ckpt *ck,
    int nranks)
{
	static const char *const what[] = { "learned", "learned_state",
	    "nodes", "order", "sampler" };
	static const char *const shared[] = { "dense.npy", "dense_state.npy",
	    "relations.npy", "relation_state.npy", "state.json" };
	const struct kg_gnn_trained *out = ts->out;
	struct kg_manifest man = KG_MANIFEST_INIT;
	json_t *st = ckpt_shape(ts, o, nranks);
	char *js;
	size_t i;
	int r, rc = -1;

	json_object_set_new(st, "epoch", json_integer(ts->epoch));
	json_object_set_new(st, "steps", json_integer((json_int_t)out->steps));
	json_object_set_new(st, "last_loss", json_real(out->last_loss));
	json_object_set_new(st, "seed", json_integer((json_int_t)o->seed));
	js = json_dumps(st, JSON_INDENT(2) | JSON_SORT_KEYS);
	json_decref(st);
	kg_manifest_init(&man, ck->argc, ck->argv);
	if (put_arr(dir, "dense.npy", KG_DT_F4, ts->n_dense, 0,
	    out->enc.w + ts->n_lf) < 0 ||
	    put_arr(dir, "dense_state.npy", KG_DT_F4, 2 * ts->n_dense + 1, 0,
	    ts->st_enc) < 0 ||
	    put_arr(dir, "relations.npy", KG_DT_F4, ts->n_rel_f, 0,
	    out->rel) < 0 ||
	    put_arr(dir, "relation_state.npy", KG_DT_F4, 2 * ts->n_rel_f + 1,
	    0, ts->st_rel) < 0 ||
	    kg_write_text(dir, "state.json", js) < 0)
		goto out;
	for (i = 0; i < KG_ARRAY_LEN(shared); i++)
		if (kg_manifest_add_file(&man, dir, shared[i]) < 0)
			goto out;
	for (r = 0; r < nranks; r++)
		for (i = 0; i < KG_ARRAY_LEN(what); i++) {
			char *f = rank_file(r, what[i]);
			int bad = kg_manifest_add_file(&man, dir, f) < 0;

			free(f);
			if (bad)
				goto out;
		}
	rc = kg_manifest_write(&man, dir);
out:
	kg_manifest_release(&man);
	free(js);
	return rc;
}

/* 1 on every rank when any rank passes bad != 0. */
static int
any_rank(struct kg_dist *d, int bad)
{
	uint64_t b = bad != 0;

	kg_dist_max_u64(d, &b, 1);
	return b != 0;
}

/* Save the state into ck->dir (collective): rank 0 opens the temporary
 * directory, every rank writes its files there, rank 0 adds the shared
 * ones and the manifest and renames it into place. */
static int
ckpt_save(const struct kg_gnn_ckpt *ck, const struct tstate *ts,
    const struct kg_gnn_train_opts *o, struct kg_dist *d)
{
	struct kg_outdir od = KG_OUTDIR_INIT;
	uint64_t len = 0;
	char *tmp;
	int bad;

	if (d->rank == 0 && kg_outdir_begin(&od, ck->dir, 1) == 0)
		len = strlen(od.tmp) + 1;
	kg_dist_bcast(d, &len, sizeof(len), 0);
	if (len == 0)
		return -1;
	tmp = d->rank == 0 ? kg_xstrdup(od.tmp) : kg_xmalloc(len);
	kg_dist_bcast(d, tmp, len, 0);
	bad = any_rank(d, ckpt_write_rank(tmp, ts, d->rank) < 0);
	if (d->rank == 0) {
		if (!bad && ckpt_write_shared(tmp, ts, o, ck, d->size) < 0)
			bad = 1;
		if (bad)
			kg_outdir_abort(&od);
		else if (kg_outdir_commit(&od) < 0)
			bad = 1;
	}
	free(tmp);
	return any_rank(d, bad) ? -1 : 0;
}

/* Restore the state from ck->dir after checking that it fits this run;
 * 0, or -1 after kg_error() on this rank. */
static int
ckpt_load_rank(const struct kg_gnn_ckpt *ck, struct tstate *ts,
    const struct kg_gnn_train_opts *o, struct kg_dist *d)
{
	struct kg_manifest man = KG_MANIFEST_INIT;
	struct kg_gnn_trained *out = ts->out;
	json_error_t jerr;
	char *path = kg_path_join(ck->dir, "state.json"), *f[5];
	json_t *have = json_load_file(path, 0, &jerr);
	json_t *want = ckpt_shape(ts, o, d->size);
	uint64_t smp[5], i;
	int32_t *gid = NULL;
	int rc = -1;

	memset(f, 0, sizeof(f));
	if (have == NULL) {
		kg_error("cannot read checkpoint '%s': %s", path, jerr.text);
		goto out;
	}
	if (kg_checkpoint_shape_check(ck->dir, want, have) < 0)
		goto out;
	/* Every file the ranks wrote, complete and of the recorded shape. */
	if (kg_manifest_load(&man, ck->dir, NULL) < 0 ||
	    kg_manifest_verify(&man, ck->dir, 0) < 0)
		goto out;
	f[0] = rank_file(d->rank, "learned");
	f[1] = rank_file(d->rank, "learned_state");
	f[2] = rank_file(d->rank, "nodes");
	f[3] = rank_file(d->rank, "order");
	f[4] = rank_file(d->rank, "sampler");
	gid = kg_xmallocarray(ts->n_loc + 1, sizeof(*gid));
	if (get_arr(ck->dir, f[2], KG_DT_I4, ts->n_loc, 0, gid) < 0)
		goto out;
	for (i = 0; i < ts->n_loc; i++)
		if (gid[i] != (ts->p->lrow ? ts->p->lrow[i] : (int32_t)i)) {
			kg_error("checkpoint '%s' holds other nodes for rank %d "
			    "(another expansion or dataset?)", ck->dir,
			    d->rank);
			goto out;
		}
	if (get_arr(ck->dir, "dense.npy", KG_DT_F4, ts->n_dense, 0,
	    out->enc.w + ts->n_lf) < 0 ||
	    get_arr(ck->dir, "dense_state.npy", KG_DT_F4,
	    2 * ts->n_dense + 1, 0, ts->st_enc) < 0 ||
	    get_arr(ck->dir, "relations.npy", KG_DT_F4, ts->n_rel_f, 0,
	    out->rel) < 0 ||
	    get_arr(ck->dir, "relation_state.npy", KG_DT_F4,
	    2 * ts->n_rel_f + 1, 0, ts->st_rel) < 0 ||
	    get_arr(ck->dir, f[0], KG_DT_F4, ts->n_loc, ts->d0,
	    out->enc.w + out->enc.learned) < 0 ||
	    get_arr(ck->dir, f[1], KG_DT_F4, ts->n_loc, 2 * ts->d0 + 1,
	    ts->st_learn) < 0 ||
	    get_arr(ck->dir, f[3], KG_DT_U8, ts->p->n_core, 0,
	    ts->order) < 0 ||
	    get_arr(ck->dir, f[4], KG_DT_U8, 5, 0, smp) < 0)
		goto out;
	for (i = 0; i < ts->p->n_core; i++)
		if (ts->order[i] >= ts->p->n_core)
			break;
	if (i < ts->p->n_core || smp[4] >= ts->p->n_core) {
		kg_error("checkpoint '%s': rank %d's permutation is out of "
		    "range", ck->dir, d->rank);
		goto out;
	}
	memcpy(ts->rng.s, smp, sizeof(ts->rng.s));
	ts->cursor = smp[4];
	ts->epoch = (uint32_t)json_integer_value(json_object_get(have,
	    "epoch"));
	out->steps = (uint64_t)json_integer_value(json_object_get(have,
	    "steps"));
	out->last_loss = json_number_value(json_object_get(have,
	    "last_loss"));
	rc = 0;
out:
	for (i = 0; i < 5; i++)
		free(f[i]);
	free(gid);
	kg_manifest_release(&man);
	json_decref(have);
	json_decref(want);
	free(path);
	return rc;
}

/* Resume when asked (collective); 0 or -1 on every rank. */
static int
ckpt_resume(const struct kg_gnn_ckpt *ck, struct tstate *ts,
    const struct kg_gnn_train_opts *o, struct kg_dist *d)
{
	uint64_t exists = 0;

	if (ck == NULL || !ck->resume || ck->dir == NULL)
		return 0;
	if (d->rank == 0)
		exists = (uint64_t)kg_path_exists(ck->dir);
	kg_dist_bcast(d, &exists, sizeof(exists), 0);
	if (!exists) {
		if (!o->quiet && d->rank == 0)
			kg_warn("no checkpoint '%s' to resume from; starting "
			    "afresh", ck->dir);
		return 0;
	}
	if (any_rank(d, ckpt_load_rank(ck, ts, o, d) < 0))
		return -1;
	if (!o->quiet && d->rank == 0)
		fprintf(stderr, "%s: resuming after epoch %u from '%s'\n",
		    kg_progname(), ts->epoch, ck->dir);
	return 0;
}

/* ---- training ---- */

int
kg_gnn_train(struct kg_gnn_trained *out, const struct kg_gnn_train_opts *o,
    const struct kg_gnn_problem *p, struct kg_dist *d)
{
	struct kg_dist solo = KG_DIST_INIT;
	struct kg_gnn_graph full = KG_GNN_GRAPH_INIT;
	struct edrop ed;
	struct kg_gnn_state st = KG_GNN_STATE_INIT;
	struct kg_adam adam = KG_ADAM_INIT;
	struct tstate ts;
	struct sub sb;
	uint32_t L = o->enc.n_layers, epoch, ran = 0;
	size_t nb, nc, dl, n_all, i, j;
	uint64_t steps, step, done;
	float *grad = NULL, *gh = NULL, *dist = NULL;
	struct kg_gnn_decode_work dwork = KG_GNN_DECODE_WORK_INIT;
	float *rows = NULL;
	uint64_t *ids = NULL;
	uint8_t *mark = NULL;
	struct kg_sparse_rows merged = KG_SPARSE_ROWS_INIT;
	int32_t *pos = NULL, *cand = NULL, *negs = NULL, *seeds = NULL;
	int bad = 0, rc = -1;
	double t0;

	memset(out, 0, sizeof(*out));
	memset(&sb, 0, sizeof(sb));
	memset(&ed, 0, sizeof(ed));
	memset(&ts, 0, sizeof(ts));
	if (d == NULL)
		d = &solo;
	ts.out = out;
	ts.p = p;
	ts.n_loc = p->n_nodes;
	ts.d0 = o->enc.dims[0];
	/* Check what every rank would fail alike before the first collective,
	 * and agree on the rest. */
	if (kg_gnn_train_opts_check(o) < 0)
		return -1;
	if (p->n_core == 0) {
		kg_error("no training triples");
		bad = 1;
	} else if (p->lrow == NULL && p->n_nodes > o->enc.n_learned) {
		kg_error("%" PRIu64 " nodes but %" PRIu64 " entities",
		    p->n_nodes, o->enc.n_learned);
		bad = 1;
	} else {
		ts.map = kg_xmallocarray(ts.n_loc + 1, sizeof(*ts.map));
		for (i = 0; i < ts.n_loc; i++) {
			ts.map[i].g = p->lrow ? (uint32_t)p->lrow[i] :
			    (uint32_t)i;
			ts.map[i].l = (uint32_t)i;
		}
		qsort(ts.map, ts.n_loc, sizeof(*ts.map), gl_cmp);
		for (i = 0; i < ts.n_loc && !bad; i++)
			if (ts.map[i].g >= o->enc.n_learned ||
			    (i > 0 && ts.map[i].g == ts.map[i - 1].g)) {
				kg_error("node %" PRIu32 " has global ID %" PRIu32
				    ", out of range or repeated", ts.map[i].l,
				    ts.map[i].g);
				bad = 1;
			}
	}
	if (!bad && (model_init(&out->enc, &o->enc, p->feat, o->seed,
	    ts.n_loc, p->lrow) < 0 || kg_model_init(&out->dec, o->decoder,
	    o->enc.dims[L], 0, (float)o->gamma) < 0))
		bad = 1;
	if (any_rank(d, bad)) {
		free(ts.map);
		kg_gnn_trained_release(out);
		return -1;
	}
	dl = o->enc.dims[L];
	ts.n_rel_f = (size_t)p->n_relations * out->dec.rel_width;
	out->rel = kg_xmallocarray(ts.n_rel_f + 1, sizeof(float));
	kg_rng_seed(&ts.rng, o->seed, 0x72656c);
	for (i = 0; i < ts.n_rel_f; i++)
		out->rel[i] = (float)((2.0 * kg_rng_uniform(&ts.rng) - 1.0) *
		    sqrt(6.0 / (double)(p->n_relations + dl)));
	n_all = out->enc.n_params + ts.n_rel_f;
	/* The learned table (offset 0) is synchronised by rows, the rest
	 * densely; its gradient rows are zeroed as they are consumed. */
	ts.n_lf = ts.n_loc * ts.d0;
	ts.n_dense = out->enc.n_params - ts.n_lf;
	grad = kg_xcalloc(n_all + 1, sizeof(float));
	ts.st_enc = kg_xcalloc(2 * ts.n_dense + 1, sizeof(float));
	ts.st_learn = kg_xcalloc(ts.n_loc * (2 * ts.d0 + 1) + 1,
	    sizeof(float));
	mark = kg_xcalloc(ts.n_loc + 1, 1);
	ts.st_rel = kg_xcalloc(2 * ts.n_rel_f + 1, sizeof(float));
	adam.lr = (float)o->lr;

	nb = o->batch_size / (uint32_t)d->size;
	if (nb == 0)
		nb = 1;
	nc = o->neg_candidates > 1 ? (size_t)o->neg * o->neg_candidates :
	    o->neg;
	pos = kg_xmallocarray(3 * nb, sizeof(*pos));
	cand = kg_xmallocarray(3 * nb * nc, sizeof(*cand));
	negs = kg_xmallocarray(3 * nb * o->neg, sizeof(*negs));
	seeds = kg_xmallocarray(2 * nb * (nc + 1), sizeof(*seeds));
	dist = kg_xmallocarray(nc * (size_t)omp_get_max_threads(),
	    sizeof(*dist));
	ts.order = kg_xmallocarray(p->n_core, sizeof(*ts.order));
	for (i = 0; i < p->n_core; i++)
		ts.order[i] = i;

	kg_gnn_graph_build(&full, p->n_nodes, p->n_relations, p->graph_hrt,
	    p->n_graph);
	if (o->nfanout > 0) {
		sb.local = kg_xmallocarray(p->n_nodes + 1, sizeof(*sb.local));
		for (i = 0; i < p->n_nodes; i++)
			sb.local[i] = -1;
		sb.cnt = kg_xcalloc(full.n_types + 1, sizeof(*sb.cnt));
	}
	kg_rng_seed(&ts.rng, o->seed, 1000 + (uint64_t)d->rank);
	if (ckpt_resume(o->ckpt, &ts, o, d) < 0)
		goto out;
	steps = (p->n_train_global + o->batch_size - 1) / o->batch_size;
	if (steps == 0)
		steps = 1;
	t0 = kg_now();
	for (epoch = ts.epoch; epoch < o->epochs && !(o->max_step > 0 &&
	    out->steps >= o->max_step); epoch++) {
		double loss = 0.0, te = kg_now();

		for (step = 0, done = 0; step < steps; step++) {
			const struct kg_gnn_graph *g = &full;
			const int32_t *frow = p->frow, *lrow = NULL;
			const float *h;

			/* Positives: a fresh permutation per pass. */
			for (i = 0; i < nb; i++) {
				if (ts.cursor == 0)
					for (j = p->n_core; j > 1; j--) {
						uint64_t r = kg_rng_below(&ts.rng,
						    j);
						uint64_t t = ts.order[j - 1];

						ts.order[j - 1] = ts.order[r];
						ts.order[r] = t;
					}
				memcpy(pos + 3 * i, p->core_hrt +
				    3 * ts.order[ts.cursor],
				    3 * sizeof(int32_t));
				ts.cursor = (ts.cursor + 1) % p->n_core;
			}
			for (i = 0; i < nb; i++)
				for (j = 0; j < nc; j++) {
					int32_t *c = cand + 3 * (i * nc + j);

					memcpy(c, pos + 3 * i, 3 * sizeof(int32_t));
					c[kg_rng_below(&ts.rng, 2) ? 0 : 2] =
					    draw_pool(p, &ts.rng);
				}
			if (o->nfanout > 0) {
				size_t ns = 0;

				for (i = 0; i < nb; i++) {
					seeds[ns++] = pos[3 * i];
					seeds[ns++] = pos[3 * i + 2];
				}
				for (i = 0; i < nb * nc; i++) {
					seeds[ns++] = cand[3 * i];
					seeds[ns++] = cand[3 * i + 2];
				}
				sub_build(&sb, &full, o, p, seeds, ns, &ts.rng);
				ns = 0;
				for (i = 0; i < nb; i++) {
					pos[3 * i] = seeds[ns++];
					pos[3 * i + 2] = seeds[ns++];
				}
				for (i = 0; i < nb * nc; i++) {
					cand[3 * i] = seeds[ns++];
					cand[3 * i + 2] = seeds[ns++];
				}
				g = &sb.g;
				frow = sb.frow;
				lrow = sb.lrow;
			}
			if (o->edge_dropout > 0.0)
				g = edge_drop(&ed, g, o->edge_dropout, &ts.rng);
			kg_gnn_forward(&out->enc, g, p->feat, frow, lrow,
			    &ts.rng, &st);
			h = st.h[L];
			if (nc > o->neg)
				select_adaptive(&out->dec, h, out->rel, pos, nb,
				    cand, nc, o->neg, negs, dist);
			else
				memcpy(negs, cand, 3 * nb * nc * sizeof(*negs));
			gh = kg_xreallocarray(gh, g->n_nodes * dl + 1,
			    sizeof(float));
			memset(gh, 0, g->n_nodes * dl * sizeof(float));
			memset(grad + ts.n_lf, 0, (n_all - ts.n_lf) *
			    sizeof(float));
			loss += kg_gnn_decode(&out->dec, &o->loss, h,
			    g->n_nodes, out->rel, p->n_relations, pos, nb,
			    negs, o->neg, 1.0f / (float)nb, gh,
			    grad + out->enc.n_params, &dwork);
			kg_gnn_backward(&out->enc, g, p->feat, frow, lrow, &st,
			    gh, grad);
			if (o->reg > 0.0) {
				kg_regularise(out->enc.w + ts.n_lf,
				    grad + ts.n_lf, ts.n_dense, o->reg, 2, 1.0);
				kg_regularise(out->rel,
				    grad + out->enc.n_params, ts.n_rel_f,
				    o->reg, 2, 1.0);
			}
			sync_learned(&ts, o, g, frow, lrow, grad, mark, &ids,
			    &rows, &merged, &adam, d);
			kg_dist_average_f32(d, grad + ts.n_lf, n_all - ts.n_lf);
			kg_adam_row(out->enc.w + ts.n_lf, ts.st_enc,
			    grad + ts.n_lf, ts.n_dense, &adam);
			kg_adam_row(out->rel, ts.st_rel,
			    grad + out->enc.n_params, ts.n_rel_f, &adam);
			out->steps++;
			done++;
			if (o->max_step > 0 && out->steps >= o->max_step)
				break;
		}
		kg_dist_sum_f64(d, &loss, 1);
		out->last_loss = loss / (double)(done * nb * (size_t)d->size);
		ran++;
		if (!o->quiet && d->rank == 0)
			fprintf(stderr, "%s: epoch %u loss %.6f (%.2f s)\n",
			    kg_progname(), epoch + 1, out->last_loss,
			    kg_now() - te);
		/* A checkpoint holds whole epochs only. */
		ts.epoch = epoch + 1;
		if (done == steps && o->ckpt != NULL && o->ckpt->save &&
		    o->ckpt->dir != NULL && ckpt_save(o->ckpt, &ts, o, d) < 0)
			goto out;
	}
	out->seconds_per_epoch = (kg_now() - t0) / (ran ? ran : 1);
	/* Rank 0's whole table should not meet the training buffers. */
	kg_gnn_graph_release(&full);
	edrop_release(&ed);
	kg_gnn_state_release(&st);
	free(grad);
	free(ts.st_learn);
	free(ts.st_enc);
	grad = ts.st_learn = ts.st_enc = NULL;
	if (any_rank(d, gather_learned(&ts, o, d) < 0))
		goto out;
	rc = 0;
out:
	kg_gnn_graph_release(&full);
	edrop_release(&ed);
	kg_gnn_state_release(&st);
	sub_release(&sb);
	free(grad);
	free(ts.st_enc);
	free(ts.st_learn);
	free(ts.st_rel);
	free(ts.map);
	free(ts.order);
	free(mark);
	free(ids);
	free(rows);
	kg_sparse_rows_release(&merged);
	free(gh);
	kg_gnn_decode_work_release(&dwork);
	free(dist);
	free(pos);
	free(cand);
	free(negs);
	free(seeds);
	if (rc < 0)
		kg_gnn_trained_release(out);
	return rc;
}

float *
kg_gnn_embed(const struct kg_gnn *m, const struct kg_features *f,
    uint64_t n_nodes, const int32_t *hrt, uint64_t n)
{
	struct kg_gnn_graph g = KG_GNN_GRAPH_INIT;
	struct kg_gnn_state st = KG_GNN_STATE_INIT;
	size_t dl = m->c.dims[m->c.n_layers];
	float *out = kg_xmallocarray(n_nodes * dl + 1, sizeof(float));

	kg_gnn_graph_build(&g, n_nodes, m->c.n_relations, hrt, n);
	kg_gnn_forward(m, &g, f, NULL, NULL, NULL, &st);
	memcpy(out, st.h[m->c.n_layers], n_nodes * dl * sizeof(float));
	kg_gnn_state_release(&st);
	kg_gnn_graph_release(&g);
	return out;
}

/* ---- from directories ---- */

struct part {
	struct kg_npy nodes, edges, core, pool, owner;
	int32_t *core_hrt;
	uint64_t n_core;
};

static void
part_release(struct part *pt)
{
	kg_npy_release(&pt->nodes);
	kg_npy_release(&pt->edges);
	kg_npy_release(&pt->core);
	kg_npy_release(&pt->pool);
	kg_npy_release(&pt->owner);
	free(pt->core_hrt);
}

static int
part_load(struct part *pt, const char *dir, uint64_t n_entities,
    uint32_t n_relations)
{
	static const char *names[5] = { "nodes.npy", "edges.npy",
	    "core_mask.npy", "neg_pool.npy", "owner.npy" };
	struct kg_npy *arr[5] = { &pt->nodes, &pt->edges, &pt->core,
	    &pt->pool, &pt->owner };
	static const enum kg_dtype dts[5] = { KG_DT_I4, KG_DT_I4, KG_DT_U1,
	    KG_DT_I4, KG_DT_I4 };
	static const int nds[5] = { 1, 2, 1, 1, 1 };
	uint64_t i, n, m;
	int k;

	for (k = 0; k < 5; k++) {
		char *path = kg_path_join(dir, names[k]);
		int rc = kg_npy_read_expect(path, dts[k], nds[k], arr[k]);

		free(path);
		if (rc < 0)
			return -1;
	}
	n = pt->nodes.shape[0];
	m = pt->edges.shape[0];
	if (pt->edges.shape[1] != 3 || pt->core.shape[0] != m) {
		kg_error("'%s': edges.npy and core_mask.npy do not match", dir);
		return -1;
	}
	if (pt->owner.shape[0] != n) {
		kg_error("'%s': nodes.npy and owner.npy do not match", dir);
		return -1;
	}
	for (i = 0; i < n; i++) {
		int32_t v = ((const int32_t *)pt->nodes.data)[i];

		if (v < 0 || (uint64_t)v >= n_entities) {
			kg_error("'%s': nodes.npy row %" PRIu64 " is not an "
			    "entity of the dataset", dir, i);
			return -1;
		}
	}
	for (i = 0; i < m; i++) {
		const int32_t *t = (const int32_t *)pt->edges.data + 3 * i;

		if (t[0] < 0 || (uint64_t)t[0] >= n || t[2] < 0 ||
		    (uint64_t)t[2] >= n || t[1] < 0 ||
		    (uint32_t)t[1] >= n_relations) {
			kg_error("'%s': edges.npy row %" PRIu64 " is out of "
			    "range", dir, i);
			return -1;
		}
	}
	for (i = 0; i < pt->pool.shape[0]; i++) {
		int32_t v = ((const int32_t *)pt->pool.data)[i];

		if (v < 0 || (uint64_t)v >= n) {
			kg_error("'%s': neg_pool.npy row %" PRIu64 " is out of "
			    "range", dir, i);
			return -1;
		}
	}
	pt->core_hrt = kg_xmallocarray(3 * m + 3, sizeof(int32_t));
	for (i = 0; i < m; i++)
		if (((const uint8_t *)pt->core.data)[i])
			memcpy(pt->core_hrt + 3 * pt->n_core++,
			    (const int32_t *)pt->edges.data + 3 * i,
			    3 * sizeof(int32_t));
	return 0;
}

static json_t *
config_json(const struct kg_gnn_train_opts *o, const struct kg_gnn_run *r,
    const struct kg_gnn_trained *t, int nranks)
{
	json_t *c = json_object(), *dims = json_array();
	uint32_t l;

	for (l = 0; l <= o->enc.n_layers; l++)
		json_array_append_new(dims, json_integer(o->enc.dims[l]));
	json_object_set_new(c, "encoder",
	    json_string(kg_gnn_encoder_name(o->enc.encoder)));
	json_object_set_new(c, "gnn_layers", json_integer(o->enc.n_layers));
	json_object_set_new(c, "gnn_dims", dims);
	json_object_set_new(c, "gnn_decomposition", json_string(
	    o->enc.decomp == KG_GNN_BASIS ? "basis" : "block"));
	json_object_set_new(c, "gnn_num_bases", json_integer(t->enc.c.n_bases));
	json_object_set_new(c, "gnn_learned_only",
	    json_boolean(t->enc.c.learned_only));
	json_object_set_new(c, "gnn_n_params", json_integer(
	    (json_int_t)t->enc.n_params));
	json_object_set_new(c, "dropout", json_real(o->enc.dropout));
	json_object_set_new(c, "edge_dropout", json_real(o->edge_dropout));
	json_object_set_new(c, "loss", json_string(kg_loss_name(o->loss.kind)));
	json_object_set_new(c, "lr", json_real(o->lr));
	json_object_set_new(c, "regularization_coef", json_real(o->reg));
	json_object_set_new(c, "batch_size", json_integer(o->batch_size));
	json_object_set_new(c, "neg_sample_size", json_integer(o->neg));
	json_object_set_new(c, "neg_candidates",
	    json_integer(o->neg_candidates));
	json_object_set_new(c, "epochs", json_integer(o->epochs));
	json_object_set_new(c, "seed", json_integer((json_int_t)o->seed));
	json_object_set_new(c, "ranks", json_integer(nranks));
	if (o->nfanout > 0) {
		json_t *f = json_array();

		for (l = 0; l < o->nfanout; l++)
			json_array_append_new(f, json_integer(o->fanout[l]));
		json_object_set_new(c, "fanout", f);
	}
	if (r->features != NULL)
		json_object_set_new(c, "features", json_string(r->features));
	if (r->expanded != NULL)
		json_object_set_new(c, "expanded", json_string(r->expanded));
	return c;
}

static int
write_model(const struct kg_gnn_run *r, const struct kg_gnn_train_opts *o,
    const struct kg_dataset *ds, const struct kg_features *gf,
    const struct kg_gnn_trained *t, int nranks, const uint64_t *rss)
{
	struct kg_outdir od = KG_OUTDIR_INIT;
	struct kg_manifest man = KG_MANIFEST_INIT;
	const struct kg_triples *tr = &ds->split[KG_SPLIT_TRAIN];
	float *emb = NULL;
	char *path = NULL;
	json_t *cfg, *v;
	const char *key;
	uint64_t shape[1];
	int rc = -1;

	if (kg_outdir_begin(&od, r->output, r->force) < 0)
		return -1;
	kg_manifest_init(&man, r->argc, r->argv);
	emb = kg_gnn_embed(&t->enc, gf, ds->n_entities, tr->hrt, tr->n);
	if (kg_check_finite("entities.npy", emb, ds->n_entities,
	    t->dec.dim) < 0 ||
	    kg_manifest_add_input(&man, "dataset", r->dataset) < 0 ||
	    (r->features != NULL &&
	    kg_manifest_add_input(&man, "features", r->features) < 0) ||
	    (r->expanded != NULL &&
	    kg_manifest_add_input(&man, "expanded", r->expanded) < 0) ||
	    kg_modeldir_write(od.tmp, &t->dec, 0, ds->n_entities,
	    ds->n_relations, emb, t->rel, r->dataset, &man) < 0)
		goto out;
	path = kg_outdir_file(&od, "gnn_weights.npy");
	shape[0] = t->enc.n_params;
	if (kg_npy_write(path, KG_DT_F4, 1, shape, t->enc.w) < 0 ||
	    kg_manifest_add_file(&man, od.tmp, "gnn_weights.npy") < 0)
		goto out;
	cfg = config_json(o, r, t, nranks);
	json_object_foreach(cfg, key, v)
		kg_manifest_set_config(&man, key, json_incref(v));
	json_decref(cfg);
	kg_manifest_set_figure(&man, "final_loss", json_real(t->last_loss));
	kg_manifest_set_figure(&man, "seconds_per_epoch",
	    json_real(t->seconds_per_epoch));
	kg_manifest_set_figure(&man, "steps", json_integer(
	    (json_int_t)t->steps));
	kg_manifest_set_figure(&man, "peak_rss_kib", json_integer(
	    (json_int_t)kg_peak_rss_kib()));
	{
		/* Each rank's peak at the end of training (rank 0's before
		 * the final embedding pass). */
		json_t *a = json_array();
		int k;

		for (k = 0; k < nranks; k++)
			json_array_append_new(a, json_integer((json_int_t)
			    rss[k]));
		kg_manifest_set_figure(&man, "peak_rss_kib_per_rank", a);
	}
	if (kg_manifest_write(&man, od.tmp) < 0)
		goto out;
	rc = kg_outdir_commit(&od);
out:
	if (rc < 0)
		kg_outdir_abort(&od);
	kg_manifest_release(&man);
	free(emb);
	free(path);
	return rc;
}

int
kg_gnn_train_run(const struct kg_gnn_run *r,
    const struct kg_gnn_train_opts *o, struct kg_dist *d)
{
	struct kg_dist solo = KG_DIST_INIT;
	struct kg_dataset ds = KG_DATASET_INIT;
	struct kg_features gf = KG_FEATURES_INIT;
	struct kg_features pf = KG_FEATURES_INIT;
	struct kg_gnn_trained t = KG_GNN_TRAINED_INIT;
	struct kg_gnn_train_opts oo = *o;
	struct kg_gnn_problem p;
	struct kg_gnn_ckpt ck;
	struct part pt;
	char *pdir = NULL, *fdir = NULL, *ckdir = NULL;
	uint64_t *rss = NULL;
	int rc;

	memset(&pt, 0, sizeof(pt));
	memset(&p, 0, sizeof(p));
	if (d == NULL)
		d = &solo;
	/* Every rank sees the same paths (a shared file system), so all
	 * fail alike here. */
	if (kg_path_exists(r->output) && !r->force) {
		kg_error("output '%s' exists; use --force to replace it",
		    r->output);
		return -1;
	}
	rc = kg_dataset_load(&ds, r->dataset);
	if (rc < 0)
		return rc;
	rc = -1;
	ckdir = r->checkpoint_dir ? kg_xstrdup(r->checkpoint_dir) :
	    kg_xasprintf("%s.ckpt", r->output);
	ck.dir = ckdir;
	ck.resume = r->resume;
	ck.save = !r->no_checkpoint;
	ck.argc = r->argc;
	ck.argv = r->argv;
	oo.ckpt = &ck;
	if (ds.n_relations > INT32_MAX / 2) {
		kg_error("too many relations");
		goto out;
	}
	if (r->features != NULL && kg_features_load(&gf, r->features,
	    NULL, ds.n_entities) < 0)
		goto out;
	oo.enc.n_relations = (uint32_t)ds.n_relations;
	oo.enc.n_learned = ds.n_entities;
	p.n_relations = (uint32_t)ds.n_relations;
	if (r->expanded != NULL) {
		char name[32], *last;
		int ok;

		snprintf(name, sizeof(name), "part-%03d", d->rank);
		pdir = kg_path_join(r->expanded, name);
		/* Every rank checks the same two paths, so all fail alike
		 * rather than some waiting in a collective. */
		snprintf(name, sizeof(name), "part-%03d", d->size);
		fdir = kg_path_join(r->expanded, name);
		snprintf(name, sizeof(name), "part-%03d", d->size - 1);
		last = kg_path_join(r->expanded, name);
		ok = !kg_path_exists(fdir) && kg_path_exists(last);
		free(last);
		if (!ok) {
			kg_error("'%s': run one rank per part (%d ranks)",
			    r->expanded, d->size);
			goto out;
		}
		free(fdir);
		fdir = NULL;
		if (part_load(&pt, pdir, ds.n_entities, p.n_relations) < 0)
			goto out;
		p.n_nodes = pt.nodes.shape[0];
		p.graph_hrt = pt.edges.data;
		p.n_graph = pt.edges.shape[0];
		p.core_hrt = pt.core_hrt;
		p.n_core = pt.n_core;
		p.pool = o->pool_seeds ? pt.pool.data : NULL;
		p.n_pool = pt.pool.shape[0];
		p.lrow = pt.nodes.data;
		p.owner = pt.owner.data;
		if (r->features != NULL) {
			fdir = kg_path_join(pdir, "features");
			if (kg_features_load(&pf, fdir, r->features,
			    p.n_nodes) < 0)
				goto out;
			p.feat = &pf;
		}
	} else {
		const struct kg_triples *tr = &ds.split[KG_SPLIT_TRAIN];

		p.n_nodes = ds.n_entities;
		p.graph_hrt = tr->hrt;
		p.n_graph = tr->n;
		p.core_hrt = tr->hrt;
		p.n_core = tr->n;
		p.feat = r->features != NULL ? &gf : NULL;
	}
	p.n_train_global = p.n_core;
	kg_dist_sum_u64(d, &p.n_train_global, 1);
	if (kg_gnn_train(&t, &oo, &p, d) < 0)
		goto out;
	rss = kg_xcalloc((size_t)d->size, sizeof(*rss));
	rss[d->rank] = kg_peak_rss_kib();
	kg_dist_sum_u64(d, rss, (size_t)d->size);
	if (d->rank == 0 && write_model(r, &oo, &ds,
	    r->features != NULL ? &gf : NULL, &t, d->size, rss) < 0)
		goto out;
	/* A checkpoint nobody named goes with the run that needed it. */
	if (d->rank == 0 && ck.save && !r->keep_checkpoint &&
	    r->checkpoint_dir == NULL && kg_path_exists(ckdir))
		kg_rmtree(ckdir);
	rc = 0;
out:
	free(rss);
	free(ckdir);
	kg_gnn_trained_release(&t);
	kg_features_release(&gf);
	kg_features_release(&pf);
	part_release(&pt);
	kg_dataset_release(&ds);
	free(pdir);
	free(fdir);
	return rc;
}
