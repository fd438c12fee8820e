/*
 * gnn_ssgd_check: GNN training on R ranks (under mpirun; or a plain
 * process, R = 1) against one process running the same global batches.
 * Every rank builds the same small graph (NE nodes, attribute features
 * on two thirds of them, learned rows for the rest) in a numbering of
 * its own, and every step each rank takes its 1/R of a fixed global
 * batch, written in by kg_gnn_tstate's draw hook in place of the random
 * draw; the step itself is lib/gnntrain's (kg_gnn_step: encoder, decoder,
 * backward, the learned rows' sparse sum, the dense gradients' average,
 * Adam).  Beside it every rank runs the whole batch as one process
 * (identity numbering, no collectives) and compares, after every step:
 * the loss summed over the ranks, the dense gradient averaged over the
 * ranks; and after the last: the dense parameters, the decoder's
 * relations, the learned rows (by global ID) and the Adam states, whose
 * moments carry the gradients' scale that Adam's step hides.  Equal
 * means within RTOL of the reference's largest magnitude (the ranks sum
 * in another order); and the ranks' dense parameters must be the same
 * bits.  Cases: R-GCN basis over the whole graph with adaptive
 * per-positive negatives; R-GCN block on sampled blocks (fan-outs above
 * every degree, so the sample keeps every message and touches only some
 * learned rows) with shared negatives; RelGNN attention, sampled, with
 * shared negatives; R-GCN basis on sampled blocks with shared negatives
 * exchanged between the ranks (the reference gives each chunk the
 * candidates its source rank drew, some of which are a positive's own
 * replaced node); R-GCN basis under the paper's epoch
 * (batches_per_epoch, each rank a whole batch of its own).  R must divide the batch's chunks (1, 2 or 4).  Rank 0 prints
 * one "ok - " / "not ok - " line per check, "# " lines with the errors
 * measured; the exit status is 1 if any check failed.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "core/util.h"
#include "dist/dist.h"
#include "gnntrain/train_state.h"

enum {
	NE = 113,	/* nodes (a prime: rank r numbers node i as i m_r + c_r mod NE) */
	NREL = 3,
	NT = 150,	/* triples */
	B = 8,		/* global positives per step */
	NEG = 3,
	CHUNK = 2,	/* shared negatives: positives per chunk */
	STEPS = 3
};
#define RTOL 1e-5

static struct kg_dist d;
static int failures;

static int32_t hrt[NT * 3];		/* global graph */
static int64_t f_off[NE + 1];
static int32_t f_idx[NE];
static uint8_t f_has[NE];

struct side {
	struct kg_gnn_problem p;
	int32_t hrt[NT * 3];		/* local */
	int32_t gid[NE];		/* local -> global */
	int32_t lid[NE];		/* global -> local */
	int rank, ranks;		/* the batch share this side takes */
	int ref;			/* the one-process reference */
	int step;
	struct kg_gnn_trained out;
	struct kg_gnn_tstate ts;
};

static int
has_attr(int32_t g)
{
	return g % 3 != 0;
}

/* The global graph and the attribute "kind" of nodes g % 3 != 0. */
static void
build_graph(struct kg_features *f, struct kg_features_attr *at)
{
	struct kg_rng r;
	int32_t g;
	size_t i;

	kg_rng_seed(&r, 5, 0);
	for (i = 0; i < NT; i++) {
		int32_t h = (int32_t)kg_rng_below(&r, NE);
		int32_t t = (int32_t)kg_rng_below(&r, NE - 1);

		hrt[3 * i] = h;
		hrt[3 * i + 1] = (int32_t)kg_rng_below(&r, NREL);
		hrt[3 * i + 2] = t >= h ? t + 1 : t;
	}
	f_off[0] = 0;
	for (g = 0; g < NE; g++) {
		f_has[g] = (uint8_t)has_attr(g);
		if (f_has[g])
			f_idx[f_off[g]] = g % 4;
		f_off[g + 1] = f_off[g] + f_has[g];
	}
	memset(at, 0, sizeof(*at));
	at->name = "kind";
	at->width = 4;
	at->off = f_off;
	at->idx = f_idx;
	at->has = f_has;
	memset(f, 0, sizeof(*f));
	f->n = NE;
	f->n_attrs = 1;
	f->attrs = at;
}

/* A side's numbering (the reference's the identity, rank r's a
 * permutation of its own) and its problem. */
static void
side_problem(struct side *s, const struct kg_features *f)
{
	static const int32_t mul[] = { 5, 7, 11, 13 };
	int32_t i;
	size_t k;

	for (i = 0; i < NE; i++) {
		s->gid[i] = s->ref ? i : (i * mul[s->rank % 4] + 3 * s->rank +
		    1) % NE;
		s->lid[s->gid[i]] = i;
	}
	for (k = 0; k < NT; k++) {
		s->hrt[3 * k] = s->lid[hrt[3 * k]];
		s->hrt[3 * k + 1] = hrt[3 * k + 1];
		s->hrt[3 * k + 2] = s->lid[hrt[3 * k + 2]];
	}
	memset(&s->p, 0, sizeof(s->p));
	s->p.n_nodes = NE;
	s->p.n_relations = NREL;
	s->p.graph_hrt = s->hrt;
	s->p.n_graph = NT;
	s->p.core_hrt = s->hrt;
	s->p.n_core = NT;
	s->p.n_train_global = (uint64_t)NT * (s->ref ? 1 : (uint64_t)s->ranks);
	s->p.frow = s->gid;
	s->p.lrow = s->gid;
	s->p.feat = f;
}

/* The global batch of step s: positive i, its candidate j (per-positive
 * negatives: which side, which node), chunk k's side and candidate j. */
static const int32_t *
pos_of(int s, size_t i)
{
	return hrt + 3 * ((((size_t)s * B + i) * 37 + 11) % NT);
}

static int32_t
cand_node(int s, size_t i, size_t j)
{
	return (int32_t)((i * 5 + j * 11 + (size_t)s * 3 + 1) % NE);
}

static uint8_t
chunk_side(int s, size_t k)
{
	return (uint8_t)((k + (size_t)s) % 2);
}

/* The rank and block whose candidates rank r's chunk c reads with
 * exchanged negatives: chunk c of rank r + c + s + 1, so that for each
 * c the ranks' chunks read a rotation of the ranks' blocks c, some their
 * own and some another rank's.  Every block is then read: a block that
 * no chunk reads is still encoded by its rank, and its nodes' learned
 * rows take lazy Adam steps (zero gradient, decayed moments) that one
 * process, which never drew those candidates, does not take. */
static void
pick(int s, int r, size_t c, int R, uint32_t *src, uint32_t *blk)
{
	*src = (uint32_t)(((size_t)r + c + (size_t)s + 1) % (size_t)R);
	*blk = (uint32_t)c;
}

/* Candidate j of chunk k (of step s, per chunks a rank) with exchanged
 * negatives on R ranks: the first is the node that the first positive
 * of the chunk reading k replaces, which the decoder must leave out of
 * that positive's negatives as one process does. */
static int32_t
xcand_node(int s, size_t k, size_t j, int R, size_t per)
{
	size_t c = k % per, r = (k / per + 4 * (size_t)R - c % (size_t)R -
	    (size_t)s - 1) % (size_t)R, reader = r * per + c;
	const int32_t *t = pos_of(s, reader * CHUNK);

	if (j > 0)
		return cand_node(s, k, j);
	return chunk_side(s, reader) ? t[0] : t[2];
}

/* The draw hook: this side's share of step s's batch, in its local
 * IDs.  The reference's chunk (r, c) reads the candidates of the chunk
 * that the ranks' exchange gives it. */
static void
draw(struct kg_gnn_tstate *ts, void *ctx)
{
	struct side *sd = ctx;
	struct kg_gnn_work *w = &ts->w;
	const struct kg_gnn_train_opts *o = ts->o;
	size_t nb = B / (size_t)sd->ranks, first, i, j, c, nc = w->nc;
	int s = sd->step, R = d.size;	/* the reference's too */

	first = sd->ref ? 0 : (size_t)sd->rank * nb;
	if (sd->ref)
		nb = B;
	if (w->nb != nb) {
		fprintf(stderr, "gnn_ssgd_check: step of %zu positives, "
		    "wanted %zu\n", w->nb, nb);
		kg_dist_abort(&d, 1);
	}
	for (i = 0; i < nb; i++) {
		const int32_t *t = pos_of(s, first + i);

		w->pos[3 * i] = sd->lid[t[0]];
		w->pos[3 * i + 1] = t[1];
		w->pos[3 * i + 2] = sd->lid[t[2]];
	}
	if (o->neg_chunk == 0) {
		for (i = 0; i < nb; i++)
			for (j = 0; j < nc; j++) {
				int32_t *cd = w->cand + 3 * (i * nc + j);
				size_t gi = first + i;

				memcpy(cd, w->pos + 3 * i, 3 * sizeof(*cd));
				cd[(gi + j + (size_t)s) % 2 ? 0 : 2] =
				    sd->lid[cand_node(s, gi, j)];
			}
		return;
	}
	w->nch = nb / CHUNK;
	for (c = 0; c < w->nch; c++) {
		size_t k = first / CHUNK + c, per = B / CHUNK / (size_t)R;
		size_t from = k;
		uint32_t src, blk;

		w->side[c] = chunk_side(s, k);
		if (o->neg_exchange && R > 1) {
			pick(s, (int)(k / per), k % per, R, &src, &blk);
			if (!sd->ref) {
				w->xneg.src[c] = src;
				w->xneg.blk[c] = blk;
			} else if (src != k / per) {
				/* A chunk whose source is its own rank
				 * keeps its own candidates. */
				from = src * per + blk;
			}
		}
		for (j = 0; j < w->kc; j++)
			w->cand[c * w->kc + j] = sd->lid[o->neg_exchange &&
			    R > 1 ? xcand_node(s, from, j, R, per) :
			    cand_node(s, from, j)];
	}
}

static void
report(const char *name, int good)
{
	uint64_t bad = !good;

	kg_dist_max_u64(&d, &bad, 1);
	if (bad)
		failures++;
	if (d.rank == 0)
		printf("%s - gnn_ssgd_check (%d ranks): %s\n", bad ? "not ok" :
		    "ok", d.size, name);
}

/* The largest of every rank's x (x >= 0). */
static double
max_ranks(double x)
{
	uint64_t u;

	memcpy(&u, &x, sizeof(u));
	kg_dist_max_u64(&d, &u, 1);
	memcpy(&x, &u, sizeof(x));
	return x;
}

/* Largest |a - b| over the largest |b|: the error of a against b
 * relative to b's scale (0 when both are zero); *scale gets max |b|. */
static double
rel_err(const float *a, const float *b, size_t n, double *scale)
{
	double e = 0.0, m = 0.0;
	size_t i;

	for (i = 0; i < n; i++) {
		double x = fabs((double)a[i] - (double)b[i]);

		if (x > e || x != x)
			e = x;
		if (fabs((double)b[i]) > m)
			m = fabs((double)b[i]);
	}
	if (scale != NULL)
		*scale = m;
	return m > 0.0 ? e / m : e;
}

/* Equal within RTOL (over every rank), and not vacuously: the
 * reference's values must not all be zero. */
static void
check_close(const char *what, const char *cs, double err, double scale)
{
	char name[256];

	err = max_ranks(err);
	if (d.rank == 0)
		printf("# %s: %s: relative error %.3g (scale %.3g)\n", cs,
		    what, err, scale);
	snprintf(name, sizeof(name), "%s: %s equal%s", cs, what,
	    scale > 0.0 ? "" : " (but all zero)");
	report(name, err <= RTOL && scale > 0.0);
}

/* Parameters a (rows x n) against the reference's b, and their Adam
 * states (2 n + 1 floats a row: first moments, second moments, step
 * count) each part on its own scale: the first moments carry the
 * gradients' scale, which Adam's steps hide. */
static void
check_params(const char *what, const char *cs, const float *a,
    const float *b, const float *sa, const float *sb, size_t rows, size_t n)
{
	static const char *part[] = { "Adam first moments",
		"Adam second moments", "Adam step counts" };
	size_t width[3] = { n, n, 1 }, off[3] = { 0, n, 2 * n };
	size_t sw = 2 * n + 1, i, k;
	float *x = kg_xmallocarray(rows * n + 1, sizeof(float));
	float *y = kg_xmallocarray(rows * n + 1, sizeof(float));
	double sc, e;
	char name[256];

	e = rel_err(a, b, rows * n, &sc);
	check_close(what, cs, e, sc);
	for (k = 0; k < 3; k++) {
		for (i = 0; i < rows; i++) {
			memcpy(x + i * width[k], sa + i * sw + off[k],
			    width[k] * sizeof(float));
			memcpy(y + i * width[k], sb + i * sw + off[k],
			    width[k] * sizeof(float));
		}
		e = rel_err(x, y, rows * width[k], &sc);
		snprintf(name, sizeof(name), "%s' %s", what, part[k]);
		check_close(name, cs, e, sc);
	}
	free(x);
	free(y);
}

/* The learned rows this side holds, in global order (rows of nodes
 * without attributes, which are the only ones training reads), with
 * their Adam states. */
static void
learned_rows(const struct side *s, float *w, float *st)
{
	const struct kg_gnn *enc = &s->out.enc;
	size_t d0 = s->ts.d0, sw = 2 * d0 + 1, n = 0;
	int32_t g;

	for (g = 0; g < NE; g++) {
		size_t l = (size_t)s->lid[g];

		if (has_attr(g))
			continue;
		memcpy(w + n * d0, kg_gnn_learned_rows(enc) + l * d0,
		    d0 * sizeof(float));
		memcpy(st + n * sw, s->ts.st_learn + l * sw, sw * sizeof(float));
		n++;
	}
}

/* Learned rows that moved from their initial values (an untouched row
 * keeps them; its Adam state stays zero). */
static size_t
rows_moved(const float *st, size_t n, size_t sw)
{
	size_t i, k, m = 0;

	for (i = 0; i < n; i++)
		for (k = 0; k < sw - 1; k++)
			if (st[i * sw + k] != 0.0f) {
				m++;
				break;
			}
	return m;
}

/* Rank 0's dense parameters on every rank: the same bits. */
static int
ranks_agree(const float *x, size_t n)
{
	float *y = kg_xmallocarray(n + 1, sizeof(float));
	int same;

	memcpy(y, x, n * sizeof(float));
	kg_dist_bcast(&d, y, n * sizeof(float), 0);
	same = memcmp(x, y, n * sizeof(float)) == 0;
	free(y);
	return same;
}

static void
run_case(const char *cs, const struct kg_gnn_train_opts *base,
    const struct kg_features *f, int paper)
{
	struct kg_dist solo = KG_DIST_INIT;
	struct kg_gnn_train_opts oref = *base, odist = *base;
	struct side *ref = kg_xcalloc(1, sizeof(*ref));
	struct side *me = kg_xcalloc(1, sizeof(*me));
	double e_loss = 0.0, e_grad = 0.0, sc_grad = 0.0, sc_loss = 0.0;
	size_t nl = 0, d0, sw, nd, nr, moved;
	float *lw_a, *lw_b, *ls_a, *ls_b;
	int s, rc;
	char what[256];

	ref->ref = 1;
	ref->ranks = 1;
	me->rank = d.rank;
	me->ranks = d.size;
	if (paper) {
		/* One batch of B on one process; R batches of B / R, one
		 * per rank and step, on R. */
		oref.batches_per_epoch = 1;
		odist.batches_per_epoch = (uint32_t)d.size;
		odist.batch_size = B / (uint32_t)d.size;
	}
	side_problem(ref, f);
	side_problem(me, f);
	rc = kg_gnn_tstate_init(&ref->ts, &ref->out, &oref, &ref->p, &solo);
	rc |= kg_gnn_tstate_init(&me->ts, &me->out, &odist, &me->p, &d);
	if (rc != 0) {
		fprintf(stderr, "gnn_ssgd_check: %s: set-up failed\n", cs);
		kg_dist_abort(&d, 1);
	}
	ref->ts.draw = draw;
	ref->ts.draw_ctx = ref;
	me->ts.draw = draw;
	me->ts.draw_ctx = me;
	nd = me->ts.n_all - me->ts.n_lf;
	for (s = 0; s < STEPS; s++) {
		double lr, lm, sc;

		ref->step = me->step = s;
		ref->ts.estep = me->ts.estep = 0;
		lr = kg_gnn_step(&ref->ts);
		lm = kg_gnn_step(&me->ts);
		kg_dist_sum_f64(&d, &lm, 1);
		if (fabs(lr) > sc_loss)
			sc_loss = fabs(lr);
		if (fabs(lm - lr) / fabs(lr) > e_loss || lm != lm)
			e_loss = fabs(lm - lr) / fabs(lr);
		/* After the step the workspace holds the dense gradient
		 * (averaged over the ranks, the regulariser's term in). */
		sc = 0.0;
		lr = rel_err(me->ts.w.grad + me->ts.n_lf, ref->ts.w.grad +
		    ref->ts.n_lf, nd, &sc);
		if (lr > e_grad)
			e_grad = lr;
		if (s == 0 || sc < sc_grad)
			sc_grad = sc;
	}
	check_close("loss summed over the ranks", cs, e_loss, sc_loss);
	snprintf(what, sizeof(what), "dense gradient of each of %d steps",
	    STEPS);
	check_close(what, cs, e_grad, sc_grad);
	nr = me->ts.n_rel_f;
	check_params("encoder's dense parameters", cs, me->out.enc.w +
	    me->ts.n_lf, ref->out.enc.w + ref->ts.n_lf, me->ts.st_enc,
	    ref->ts.st_enc, 1, me->ts.n_dense);
	check_params("decoder's relations", cs, me->out.rel, ref->out.rel,
	    me->ts.st_rel, ref->ts.st_rel, 1, nr);
	d0 = me->ts.d0;
	sw = 2 * d0 + 1;
	for (s = 0; s < NE; s++)
		nl += !has_attr(s);
	lw_a = kg_xmallocarray(nl * d0, sizeof(float));
	lw_b = kg_xmallocarray(nl * d0, sizeof(float));
	ls_a = kg_xmallocarray(nl * sw, sizeof(float));
	ls_b = kg_xmallocarray(nl * sw, sizeof(float));
	learned_rows(me, lw_a, ls_a);
	learned_rows(ref, lw_b, ls_b);
	moved = rows_moved(ls_b, nl, sw);
	if (d.rank == 0)
		printf("# %s: %zu of %zu learned rows trained\n", cs, moved, nl);
	check_params("learned rows by global ID", cs, lw_a, lw_b, ls_a, ls_b,
	    moved ? nl : 0, d0);
	snprintf(what, sizeof(what), "%s: every rank holds the same dense "
	    "parameters", cs);
	report(what, ranks_agree(me->out.enc.w + me->ts.n_lf,
	    me->ts.n_dense) & ranks_agree(me->out.rel, nr));
	free(lw_a);
	free(lw_b);
	free(ls_a);
	free(ls_b);
	kg_gnn_tstate_release(&ref->ts);
	kg_gnn_tstate_release(&me->ts);
	kg_gnn_trained_release(&ref->out);
	kg_gnn_trained_release(&me->out);
	free(ref);
	free(me);
}

int
main(int argc, char *argv[])
{
	struct kg_gnn_train_opts o = KG_GNN_TRAIN_OPTS_INIT, c;
	struct kg_features f;
	struct kg_features_attr at;

	kg_setprogname(argv[0]);
	if (kg_dist_init(&d, &argc, &argv) < 0)
		return 1;
	if ((B / CHUNK) % d.size != 0) {
		fprintf(stderr, "gnn_ssgd_check: %d ranks do not divide %d "
		    "chunks\n", d.size, B / CHUNK);
		kg_dist_finalize(&d);
		return 1;
	}
	build_graph(&f, &at);
	o.enc.n_layers = 2;
	o.enc.dims[0] = 8;
	o.enc.dims[1] = 8;
	o.enc.dims[2] = 8;
	o.enc.n_bases = 2;
	o.enc.n_relations = NREL;
	o.enc.n_learned = NE;
	o.enc.dropout = 0.0f;
	o.batch_size = B;
	o.neg = NEG;
	o.lr = 0.05;
	o.reg = 1e-3;
	o.epochs = 1;
	o.seed = 11;
	o.quiet = 1;

	c = o;
	c.neg_candidates = 2;
	run_case("R-GCN basis, whole graph, adaptive negatives", &c, &f, 0);

	c = o;
	c.enc.decomp = KG_GNN_BLOCK;
	c.nfanout = 2;
	c.fanout[0] = c.fanout[1] = 64;
	c.blocks = 1;
	c.neg_chunk = CHUNK;
	run_case("R-GCN block, sampled blocks, shared negatives", &c, &f, 0);

	c = o;
	c.enc.encoder = KG_GNN_RELGNN;
	c.decoder = KG_MODEL_COMPLEX;
	c.nfanout = 2;
	c.fanout[0] = c.fanout[1] = 64;
	c.neg_chunk = CHUNK;
	run_case("RelGNN, sampled, shared negatives", &c, &f, 0);

	c = o;
	c.nfanout = 2;
	c.fanout[0] = c.fanout[1] = 64;
	c.blocks = 1;
	c.neg_chunk = CHUNK;
	c.neg_exchange = 1;
	run_case("R-GCN basis, sampled blocks, exchanged shared negatives",
	    &c, &f, 0);

	c = o;
	run_case("R-GCN basis, paper's epoch", &c, &f, 1);

	kg_dist_finalize(&d);
	return failures ? 1 : 0;
}
