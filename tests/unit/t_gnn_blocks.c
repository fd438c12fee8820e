/*
 * t_gnn_blocks: the cheaper step of GNN training at scale.
 *   - Passes on blocks (kg_gnn_forward_blocks): on a sampled graph, the
 *     seeds' outputs and every parameter gradient match the whole pass
 *     over the same graph, and the gradients match central finite
 *     differences (R-GCN basis and block, attention, with dropout).
 *   - Shared negatives (kg_gnn_decode_chunks): gradients against finite
 *     differences for every decoder and loss, with adaptive selection
 *     and a candidate equal to a positive's own entity; chunks of one
 *     positive equal the per-positive decoder; any thread count gives the
 *     same bits.
 *   - The layer-wise inference (kg_gnn_embed_chunks) gives the bits of
 *     the training forward, in any chunking.
 */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <string.h>

#include "gnn/gnn.h"
#include "gnn/gnn_decode.h"
#include "gnntrain/gnn_train.h"
#include "gnn/sample.h"
#include "kge/grad.h"
#include "test.h"
#include "core/util.h"

/* ---- a sampled graph ---- */

enum { GN = 80, GR = 3, GT = 400, NSEED = 5 };

static int32_t ghrt[GT * 3];

static void
make_triples(void)
{
	struct kg_rng r;
	int i;

	kg_rng_seed(&r, 17, 0);
	for (i = 0; i < GT; i++) {
		/* A fifth of the triples touch 4 hubs. */
		ghrt[3 * i] = (int32_t)kg_rng_below(&r, i % 5 ? GN : 4);
		ghrt[3 * i + 1] = (int32_t)kg_rng_below(&r, GR);
		ghrt[3 * i + 2] = (int32_t)kg_rng_below(&r, GN);
	}
}

/* The fan-out sample of NSEED seeds, nodes numbered by hop. */
static void
sample(struct kg_gnn_graph *full, struct kg_gnn_sampler *sb, uint32_t L)
{
	static const uint32_t fan[3] = { 3, 2, 2 };
	int32_t seeds[NSEED] = { 0, 7, 11, 30, 45 };
	uint64_t mn, mm;
	struct kg_rng r;

	make_triples();
	kg_gnn_graph_build(full, GN, GR, ghrt, GT);
	kg_gnn_sample_bounds(NSEED, fan, L, full, &mn, &mm);
	kg_gnn_sampler_init(sb, full, mn, mm, 3);
	kg_rng_seed(&r, 2, 2);
	kg_gnn_sample(sb, full, fan, L, NULL, seeds, NSEED, &r);
}

static struct kg_gnn_config
config(enum kg_gnn_encoder e, enum kg_gnn_decomp dc, uint32_t L, float p)
{
	struct kg_gnn_config c;

	memset(&c, 0, sizeof(c));
	c.encoder = e;
	c.decomp = dc;
	c.n_layers = L;
	c.dims[0] = 4;
	c.dims[1] = 6;
	c.dims[2] = 4;
	c.dims[3] = 2;
	c.n_bases = 2;
	c.n_relations = GR;
	c.n_learned = GN;
	c.learned_only = 1;
	c.dropout = p;
	return c;
}

/* sum_k c_k out_k over the seeds' rows, in double (blocks, or the whole
 * pass and its first rows); the masks come from a fresh stream. */
static double
objective(const struct kg_gnn *m, const struct kg_gnn_sampler *sb,
    const uint64_t *n_dst, struct kg_gnn_state *s, const float *c)
{
	struct kg_rng r;
	size_t k, n = sb->hop_end[0] * m->c.dims[m->c.n_layers];
	double sum = 0.0;

	kg_rng_seed(&r, 5, 5);
	kg_gnn_forward_blocks(m, &sb->g, n_dst, NULL, sb->frow, sb->lrow,
	    m->c.dropout > 0.0f ? &r : NULL, s);
	for (k = 0; k < n; k++)
		sum += (double)c[k] * (double)s->h[m->c.n_layers][k];
	return sum;
}

/* The gradient of objective() by the backward pass; on the whole pass
 * the rows past the seeds get a zero upstream gradient. */
static void
gradient(const struct kg_gnn *m, const struct kg_gnn_sampler *sb,
    const uint64_t *n_dst, struct kg_gnn_state *s, const float *c,
    float *grad)
{
	size_t dl = m->c.dims[m->c.n_layers];
	size_t rows = n_dst ? sb->hop_end[0] : sb->g.n_nodes;
	float *dout = kg_xcalloc(rows * dl + 1, sizeof(float));

	objective(m, sb, n_dst, s, c);
	memcpy(dout, c, sb->hop_end[0] * dl * sizeof(float));
	memset(grad, 0, m->n_params * sizeof(float));
	kg_gnn_backward(m, &sb->g, NULL, sb->frow, sb->lrow, s, dout, grad);
	free(dout);
}

static void
check_blocks(enum kg_gnn_encoder e, enum kg_gnn_decomp dc, uint32_t L,
    float p)
{
	struct kg_gnn_graph full = KG_GNN_GRAPH_INIT;
	struct kg_gnn_sampler sb = KG_GNN_SAMPLER_INIT;
	struct kg_gnn_state s = KG_GNN_STATE_INIT, s2 = KG_GNN_STATE_INIT;
	struct kg_gnn_config cf = config(e, dc, L, p);
	struct kg_gnn m = KG_GNN_INIT;
	uint64_t n_dst[KG_GNN_MAX_LAYERS];
	size_t k, bad = 0, nz = 0, nout;
	float *c, *g1, *g2;
	double diff = 0.0;
	struct kg_rng r;
	const float eps = 5e-4f;
	uint32_t l;

	sample(&full, &sb, L);
	for (l = 0; l < L; l++)
		n_dst[l] = sb.hop_end[L - 1 - l];
	T_CHECK(sb.hop_end[0] == NSEED && sb.hop_end[L] == sb.g.n_nodes);
	T_CHECK(sb.hop_end[L - 1] < sb.g.n_nodes);
	T_CHECK(kg_gnn_init(&m, &cf, NULL, 42) == 0);
	nout = NSEED * cf.dims[L];
	c = kg_xmallocarray(nout, sizeof(float));
	g1 = kg_xmallocarray(m.n_params, sizeof(float));
	g2 = kg_xmallocarray(m.n_params, sizeof(float));
	kg_rng_seed(&r, 3, 3);
	for (k = 0; k < nout; k++)
		c[k] = (float)(kg_rng_uniform(&r) * 2.0 - 1.0);
	gradient(&m, &sb, n_dst, &s, c, g1);
	/* Without dropout the blocks are the whole pass's seed rows. */
	if (p == 0.0f) {
		gradient(&m, &sb, NULL, &s2, c, g2);
		for (k = 0; k < nout; k++)
			diff = fmax(diff, fabs(s.h[L][k] - s2.h[L][k]));
		for (k = 0; k < m.n_params; k++)
			diff = fmax(diff, fabs(g1[k] - g2[k]));
		T_CHECKF(diff < 1e-5, "blocks differ from the whole pass by %g",
		    diff);
		T_CHECK(s.rows[L] == NSEED && s2.rows[L] == sb.g.n_nodes);
	}
	for (k = 0; k < m.n_params; k++) {
		float w = m.w[k];
		double lp, lm, fd;

		m.w[k] = w + eps;
		lp = objective(&m, &sb, n_dst, &s, c);
		m.w[k] = w - eps;
		lm = objective(&m, &sb, n_dst, &s, c);
		m.w[k] = w;
		fd = (lp - lm) / (2.0 * (double)eps);
		if (fabs(fd - g1[k]) > 2e-3 + 1e-2 * fabs(fd) && bad++ < 5)
			fprintf(stderr, "param %zu: backward %.6g, finite "
			    "difference %.6g\n", k, (double)g1[k], fd);
		nz += g1[k] != 0.0f;
	}
	T_CHECKF(bad == 0, "%zu gradients differ", bad);
	/* Learned rows of nodes beyond reach stay zero; the rest must not. */
	T_CHECKF(nz > m.n_params / 10, "%zu of %zu gradients non-zero", nz,
	    m.n_params);
	free(c);
	free(g1);
	free(g2);
	kg_gnn_release(&m);
	kg_gnn_state_release(&s);
	kg_gnn_state_release(&s2);
	kg_gnn_sampler_release(&sb);
	kg_gnn_graph_release(&full);
}

static void
blocks_rgcn_basis(void)
{
	check_blocks(KG_GNN_RGCN, KG_GNN_BASIS, 2, 0.0f);
	check_blocks(KG_GNN_RGCN, KG_GNN_BASIS, 3, 0.3f);
}

static void
blocks_rgcn_block(void)
{
	check_blocks(KG_GNN_RGCN, KG_GNN_BLOCK, 2, 0.0f);
	check_blocks(KG_GNN_RGCN, KG_GNN_BLOCK, 2, 0.2f);
}

static void
blocks_attention(void)
{
	check_blocks(KG_GNN_RELGNN, KG_GNN_BASIS, 2, 0.0f);
	check_blocks(KG_GNN_RELGNN, KG_GNN_BASIS, 3, 0.25f);
}

/* ---- shared negatives ---- */

enum { DN = 9, DR = 2, DB = 5, DCH = 2, DKC = 4, DD = 6 };

struct dbatch {
	float h[DN * DD], rel[DR * 2 * DD];
	int32_t pos[DB * 3], cand[3 * DKC];
	uint8_t side[3];
	size_t nrel;
};

static void
make_batch(struct dbatch *b, const struct kg_model *m, uint64_t seed)
{
	struct kg_rng r;
	size_t k;

	kg_rng_seed(&r, seed, 1);
	b->nrel = DR * m->rel_width;
	for (k = 0; k < DN * DD; k++)
		b->h[k] = (float)(kg_rng_uniform(&r) * 2.0 - 1.0);
	for (k = 0; k < b->nrel; k++)
		b->rel[k] = (float)(kg_rng_uniform(&r) * 2.0 - 1.0);
	for (k = 0; k < DB; k++) {
		b->pos[3 * k] = (int32_t)kg_rng_below(&r, DN);
		b->pos[3 * k + 1] = (int32_t)kg_rng_below(&r, DR);
		b->pos[3 * k + 2] = (int32_t)kg_rng_below(&r, DN);
	}
	for (k = 0; k < 3 * DKC; k++)
		b->cand[k] = (int32_t)kg_rng_below(&r, DN);
	b->side[0] = 0;
	b->side[1] = 1;
	b->side[2] = 1;
	/* Chunk 1 (positives 2, 3) replaces heads: one candidate is
	 * positive 2's own head, to be left out. */
	b->cand[DKC + 1] = b->pos[3 * 2];
}

static double
dec(const struct kg_model *m, const struct kg_loss *l, struct dbatch *b,
    size_t chunk, size_t keep, float *gh, float *grel,
    struct kg_gnn_decode_work *w)
{
	memset(gh, 0, DN * DD * sizeof(float));
	memset(grel, 0, b->nrel * sizeof(float));
	return kg_gnn_decode_chunks(m, l, b->h, DN, b->rel, DR, b->pos, DB,
	    chunk, b->cand, b->side, DKC, keep, 0.5f, gh, grel, w);
}

/* The central difference of the loss along *p, step eps. */
static double
fdiff(const struct kg_model *m, const struct kg_loss *l, struct dbatch *b,
    size_t keep, float *p, float eps, float *gh, float *grel,
    struct kg_gnn_decode_work *w)
{
	float x = *p;
	double lp, lm;

	*p = x + eps;
	lp = dec(m, l, b, DCH, keep, gh, grel, w);
	*p = x - eps;
	lm = dec(m, l, b, DCH, keep, gh, grel, w);
	*p = x;
	return 0.5 * (lp - lm) / (2.0 * (double)eps);
}

static void
check_chunks(enum kg_model_kind kind, enum kg_loss_kind lk, size_t keep)
{
	struct kg_model m;
	struct kg_loss l = KG_LOSS_INIT;
	struct kg_gnn_decode_work w = KG_GNN_DECODE_WORK_INIT;
	struct dbatch b;
	float gh[DN * DD], grel[DR * 2 * DD], gh2[DN * DD], gr2[DR * 2 * DD];
	size_t k, bad = 0, nz = 0, kinks = 0;
	const float eps = 1e-3f;

	T_CHECK(kg_model_init(&m, kind, DD, 0, 3.0f) == 0);
	l.kind = lk;
	make_batch(&b, &m, (uint64_t)kind * 10 + lk);
	dec(&m, &l, &b, DCH, keep, gh, grel, &w);
	for (k = 0; k < DN * DD + b.nrel; k++) {
		float *p = k < DN * DD ? b.h + k : b.rel + (k - DN * DD);
		float an = k < DN * DD ? gh[k] : grel[k - DN * DD];
		double fd = fdiff(&m, &l, &b, keep, p, eps, gh2, gr2, &w);
		double fd2 = fdiff(&m, &l, &b, keep, p, eps / 2, gh2, gr2, &w);

		/* L1 distances and the margin loss have kinks: where the
		 * two steps disagree one crossed a kink; skip it. */
		if (fabs(fd - fd2) > 1e-3 + 1e-2 * fabs(fd)) {
			kinks++;
			continue;
		}
		if (fabs(fd - an) > 1e-3 + 1e-2 * fabs(fd) && bad++ < 5)
			fprintf(stderr, "%s/%s keep %zu: param %zu: backward "
			    "%.6g, finite difference %.6g\n",
			    kg_model_name(kind), kg_loss_name(lk), keep, k,
			    (double)an, fd);
		nz += an != 0.0f;
	}
	T_CHECKF(kinks <= 3, "%s/%s: %zu kinks", kg_model_name(kind),
	    kg_loss_name(lk), kinks);
	T_CHECKF(bad == 0, "%s/%s keep %zu: %zu gradients differ",
	    kg_model_name(kind), kg_loss_name(lk), keep, bad);
	T_CHECK(nz > (DN * DD + b.nrel) / 3);
	kg_gnn_decode_work_release(&w);
}

static void
chunks_gradients(void)
{
	static const enum kg_model_kind kinds[] = { KG_MODEL_DISTMULT,
	    KG_MODEL_COMPLEX, KG_MODEL_TRANSE_L2, KG_MODEL_TRANSE_L1 };
	static const enum kg_loss_kind losses[] = { KG_LOSS_BCE,
	    KG_LOSS_LOGISTIC, KG_LOSS_MARGIN, KG_LOSS_SOFTMAX };
	size_t a, c;

	for (a = 0; a < 4; a++)
		for (c = 0; c < 4; c++)
			check_chunks(kinds[a], losses[c], DKC);
	/* Adaptive: 2 of the 4 candidates, closest to the positive. */
	check_chunks(KG_MODEL_DISTMULT, KG_LOSS_BCE, 2);
	check_chunks(KG_MODEL_COMPLEX, KG_LOSS_LOGISTIC, 2);
}

/* Chunks of one positive are the per-positive decoder whose negatives
 * are the chunk's candidates on its side. */
static void
chunks_of_one_are_pairs(void)
{
	static const enum kg_model_kind kinds[] = { KG_MODEL_DISTMULT,
	    KG_MODEL_COMPLEX, KG_MODEL_TRANSE_L1 };
	enum { NC = DB * DKC };
	struct kg_loss l = KG_LOSS_INIT;
	int32_t cand[NC], negs[NC * 3];
	uint8_t side[DB];
	float h[DN * DD], rel[DR * 2 * DD], gh1[DN * DD], gh2[DN * DD];
	float gr1[DR * 2 * DD], gr2[DR * 2 * DD];
	int32_t pos[DB * 3];
	struct kg_rng r;
	size_t a, i, j, k;

	kg_rng_seed(&r, 8, 8);
	for (k = 0; k < DN * DD; k++)
		h[k] = (float)(kg_rng_uniform(&r) - 0.5);
	for (k = 0; k < DR * 2 * DD; k++)
		rel[k] = (float)(kg_rng_uniform(&r) - 0.5);
	for (i = 0; i < DB; i++) {
		pos[3 * i] = (int32_t)i;
		pos[3 * i + 1] = (int32_t)(i % DR);
		pos[3 * i + 2] = (int32_t)(DN - 1 - i);
		side[i] = (uint8_t)(i % 2);
		for (j = 0; j < DKC; j++) {
			int32_t *t = negs + 3 * (i * DKC + j);
			int32_t e;

			do	/* never the positive's own entity */
				e = (int32_t)kg_rng_below(&r, DN);
			while (e == pos[3 * i + (side[i] ? 0 : 2)]);
			cand[i * DKC + j] = e;
			memcpy(t, pos + 3 * i, 3 * sizeof(int32_t));
			t[side[i] ? 0 : 2] = e;
		}
	}
	for (a = 0; a < 3; a++) {
		struct kg_gnn_decode_work w = KG_GNN_DECODE_WORK_INIT;
		struct kg_model m;
		double l1, l2, diff = 0.0;
		size_t nr;

		T_CHECK(kg_model_init(&m, kinds[a], DD, 0, 3.0f) == 0);
		nr = DR * m.rel_width;
		memset(gh1, 0, sizeof(gh1));
		memset(gh2, 0, sizeof(gh2));
		memset(gr1, 0, sizeof(gr1));
		memset(gr2, 0, sizeof(gr2));
		l1 = kg_gnn_decode_chunks(&m, &l, h, DN, rel, DR, pos, DB, 1,
		    cand, side, DKC, DKC, 0.25f, gh1, gr1, &w);
		l2 = kg_gnn_decode(&m, &l, h, DN, rel, DR, pos, DB, negs, DKC,
		    0.25f, gh2, gr2, &w);
		for (k = 0; k < DN * DD; k++)
			diff = fmax(diff, fabs(gh1[k] - gh2[k]));
		for (k = 0; k < nr; k++)
			diff = fmax(diff, fabs(gr1[k] - gr2[k]));
		T_NEAR(l1, l2, 1e-5);
		T_CHECKF(diff < 1e-5, "%s: gradients differ by %g",
		    kg_model_name(kinds[a]), diff);
		kg_gnn_decode_work_release(&w);
	}
}

/* Any thread count gives the same bits, over many chunks with hubs. */
static void
chunks_threads_same_bits(void)
{
	enum { N = 200, R = 4, NB = 301, CH = 16, KC = 7, D = 8 };
	enum { NCH = (NB + CH - 1) / CH };
	struct kg_loss l = KG_LOSS_INIT;
	static int32_t pos[NB * 3], cand[NCH * KC];
	static uint8_t side[NCH];
	static float h[N * D], rel[R * 2 * D], gh0[N * D], gr0[R * 2 * D];
	static float gh[N * D], gr[R * 2 * D];
	int saved = omp_get_max_threads(), t;
	struct kg_model m;
	struct kg_rng r;
	double l0 = 0.0;
	size_t k;

	kg_rng_seed(&r, 4, 4);
	for (k = 0; k < NB; k++) {
		pos[3 * k] = (int32_t)kg_rng_below(&r, 6);
		pos[3 * k + 1] = (int32_t)kg_rng_below(&r, R);
		pos[3 * k + 2] = (int32_t)kg_rng_below(&r, N);
	}
	for (k = 0; k < NCH * KC; k++)
		cand[k] = (int32_t)kg_rng_below(&r, N);
	for (k = 0; k < NCH; k++)
		side[k] = (uint8_t)kg_rng_below(&r, 2);
	for (k = 0; k < N * D; k++)
		h[k] = (float)(kg_rng_uniform(&r) - 0.5);
	for (k = 0; k < R * 2 * D; k++)
		rel[k] = (float)(kg_rng_uniform(&r) - 0.5);
	T_CHECK(kg_model_init(&m, KG_MODEL_COMPLEX, D, 0, 3.0f) == 0);
	for (t = 1; t <= 3; t++) {
		struct kg_gnn_decode_work w = KG_GNN_DECODE_WORK_INIT;
		double l1;

		omp_set_num_threads(t);
		memset(gh, 0, sizeof(gh));
		memset(gr, 0, sizeof(gr));
		l1 = kg_gnn_decode_chunks(&m, &l, h, N, rel, R, pos, NB, CH,
		    cand, side, KC, 3, 0.1f, gh, gr, &w);
		if (t == 1) {
			l0 = l1;
			memcpy(gh0, gh, sizeof(gh));
			memcpy(gr0, gr, sizeof(gr));
		}
		T_CHECKF(l1 == l0 && memcmp(gh, gh0, sizeof(gh)) == 0 &&
		    memcmp(gr, gr0, sizeof(gr)) == 0, "%d threads differ", t);
		kg_gnn_decode_work_release(&w);
	}
	omp_set_num_threads(saved);
}

/* ---- inference ---- */

static void
check_embed(enum kg_gnn_encoder e, enum kg_gnn_decomp dc, uint32_t L)
{
	struct kg_gnn_graph g = KG_GNN_GRAPH_INIT;
	struct kg_gnn_state s = KG_GNN_STATE_INIT;
	struct kg_gnn_config cf = config(e, dc, L, 0.3f);
	struct kg_gnn m = KG_GNN_INIT;
	static const uint64_t chunks[] = { 1, 7, GN, 1000 };
	size_t n = GN * cf.dims[L], k;

	make_triples();
	T_CHECK(kg_gnn_init(&m, &cf, NULL, 9) == 0);
	kg_gnn_graph_build(&g, GN, GR, ghrt, GT);
	kg_gnn_forward(&m, &g, NULL, NULL, NULL, NULL, &s);
	for (k = 0; k < sizeof(chunks) / sizeof(chunks[0]); k++) {
		float *y = kg_gnn_embed_chunks(&m, NULL, GN, ghrt, GT,
		    chunks[k]);

		T_CHECKF(memcmp(y, s.h[L], n * sizeof(float)) == 0,
		    "%s, chunks of %llu: not the forward's bits",
		    kg_gnn_encoder_name(e), (unsigned long long)chunks[k]);
		free(y);
	}
	kg_gnn_state_release(&s);
	kg_gnn_graph_release(&g);
	kg_gnn_release(&m);
}

static void
embed_is_the_forward(void)
{
	check_embed(KG_GNN_RGCN, KG_GNN_BASIS, 2);
	check_embed(KG_GNN_RGCN, KG_GNN_BLOCK, 2);
	check_embed(KG_GNN_RELGNN, KG_GNN_BASIS, 3);
}

int
main(void)
{
	T_RUN(blocks_rgcn_basis);
	T_RUN(blocks_rgcn_block);
	T_RUN(blocks_attention);
	T_RUN(chunks_gradients);
	T_RUN(chunks_of_one_are_pairs);
	T_RUN(chunks_threads_same_bits);
	T_RUN(embed_is_the_forward);
	return T_DONE();
}
