/*
 * t_gnn: gradient checks of every GNN layer (attribute layer, R-GCN with
 * basis and block-diagonal weights, attention) and of the decoders and
 * losses used for GNN training, against central finite differences of
 * the loss summed in double; plus the message graph's normalisers and
 * the independence of the results from the thread count.
 */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <string.h>

#include "gnn/gnn.h"
#include "gnn/gnn_decode.h"
#include "gnntrain/gnn_train.h"
#include "kge/grad.h"
#include "test.h"
#include "core/util.h"

#define NN 7
#define NR 2
#define NT 12

static int32_t hrt[NT * 3];
static int64_t off0[NN + 1] = { 0, 2, 3, 3, 5, 6, 6, 6 };
static int32_t idx0[6] = { 0, 3, 1, 2, 3, 0 };
static uint8_t has0[NN] = { 1, 1, 0, 1, 1, 0, 0 };
static float vec1[NN * 3];
static uint8_t has1[NN] = { 1, 0, 1, 0, 1, 0, 0 };

static void
make_graph(void)
{
	struct kg_rng r;
	int i;

	kg_rng_seed(&r, 11, 0);
	for (i = 0; i < NT; i++) {
		hrt[3 * i] = (int32_t)kg_rng_below(&r, NN);
		hrt[3 * i + 1] = (int32_t)kg_rng_below(&r, NR);
		hrt[3 * i + 2] = (int32_t)kg_rng_below(&r, NN);
	}
	for (i = 0; i < NN * 3; i++)
		vec1[i] = (float)(kg_rng_uniform(&r) * 2.0 - 1.0);
}

/* Two attributes in memory: one multi-hot with 4 slots (off0 and idx0
 * above; nodes 2, 5 and 6 without a value), one text of dim 3 (nodes 0, 2
 * and 4).  Nodes 5 and 6 have neither and fall back to learned rows. */
static void
make_features(struct kg_features *f)
{
	memset(f, 0, sizeof(*f));
	f->n = NN;
	f->n_attrs = 2;
	f->attrs = kg_xcalloc(2, sizeof(*f->attrs));
	f->attrs[0].name = kg_xstrdup("cat");
	f->attrs[0].width = 4;
	f->attrs[0].off = off0;
	f->attrs[0].idx = idx0;
	f->attrs[0].has = has0;
	f->attrs[1].name = kg_xstrdup("txt");
	f->attrs[1].text = 1;
	f->attrs[1].width = 3;
	f->attrs[1].vec = vec1;
	f->attrs[1].has = has1;
}

/* sum_k c_k out_k in double, after a forward pass with dropout masks
 * drawn from a freshly seeded stream (the same masks every call). */
static double
objective(const struct kg_gnn *m, const struct kg_gnn_graph *g,
    const struct kg_features *f, struct kg_gnn_state *s, const float *c,
    int drop)
{
	struct kg_rng r;
	size_t k, n = NN * m->c.dims[m->c.n_layers];
	double sum = 0.0;

	kg_rng_seed(&r, 5, 5);
	kg_gnn_forward(m, g, f, NULL, NULL, drop ? &r : NULL, s);
	for (k = 0; k < n; k++)
		sum += (double)c[k] * (double)s->h[m->c.n_layers][k];
	return sum;
}

static int
near(double fd, double g)
{
	return fabs(fd - g) <= 2e-3 + 1e-2 * fabs(fd);
}

/* Compare the backward pass with central differences for every
 * parameter; returns the number of mismatches. */
static size_t
check_encoder(struct kg_gnn *m, const struct kg_features *f, int drop)
{
	struct kg_gnn_graph g = KG_GNN_GRAPH_INIT;
	struct kg_gnn_state s = KG_GNN_STATE_INIT;
	size_t n = NN * m->c.dims[m->c.n_layers], k, bad = 0, nz = 0;
	size_t kinks = 0;
	float *c = kg_xmallocarray(n, sizeof(float));
	float *dout = kg_xmallocarray(n, sizeof(float));
	float *grad = kg_xcalloc(m->n_params, sizeof(float));
	struct kg_rng r;
	const float eps = 5e-4f;

	kg_gnn_graph_build(&g, NN, NR, hrt, NT);
	kg_rng_seed(&r, 3, 3);
	for (k = 0; k < n; k++)
		c[k] = (float)(kg_rng_uniform(&r) * 2.0 - 1.0);
	objective(m, &g, f, &s, c, drop);
	memcpy(dout, c, n * sizeof(float));
	kg_gnn_backward(m, &g, f, NULL, NULL, &s, dout, grad);
	for (k = 0; k < m->n_params; k++) {
		float w = m->w[k];
		double lp, lm, fd;

		m->w[k] = w + eps;
		lp = objective(m, &g, f, &s, c, drop);
		m->w[k] = w - eps;
		lm = objective(m, &g, f, &s, c, drop);
		m->w[k] = w;
		fd = (lp - lm) / (2.0 * (double)eps);
		if (!near(fd, grad[k])) {
			/* A ReLU or leaky ReLU kink between w - eps and
			 * w + eps: the two one-sided slopes differ and the
			 * backward pass must equal one of them. */
			double l0 = objective(m, &g, f, &s, c, drop);
			double dp = (lp - l0) / (double)eps;
			double dm = (l0 - lm) / (double)eps;

			if (!near(dp, dm) && (near(dp, grad[k]) ||
			    near(dm, grad[k])))
				kinks++;
			else if (bad++ < 5)
				fprintf(stderr, "param %zu: backward %.6g, "
				    "finite difference %.6g (right %.6g, "
				    "left %.6g)\n", k, (double)grad[k], fd,
				    dp, dm);
		}
		if (grad[k] != 0.0f)
			nz++;
	}
	/* A check where every gradient is zero, or every one sits at a
	 * kink, proves nothing. */
	T_CHECKF(kinks <= m->n_params / 20, "%zu of %zu parameters at a kink",
	    kinks, m->n_params);
	T_CHECKF(nz > m->n_params / 3, "%zu of %zu gradients non-zero", nz,
	    m->n_params);
	kg_gnn_state_release(&s);
	kg_gnn_graph_release(&g);
	free(c);
	free(dout);
	free(grad);
	return bad;
}

static struct kg_gnn_config
config(enum kg_gnn_encoder e, enum kg_gnn_decomp dc, uint32_t layers)
{
	struct kg_gnn_config c;

	memset(&c, 0, sizeof(c));
	c.encoder = e;
	c.decomp = dc;
	c.n_layers = layers;
	c.dims[0] = 4;
	c.dims[1] = 6;
	c.dims[2] = 4;
	c.dims[3] = 2;
	c.n_bases = 2;
	c.n_relations = NR;
	c.n_learned = NN;
	return c;
}

static void
run_check(enum kg_gnn_encoder e, enum kg_gnn_decomp dc, uint32_t layers,
    int learned_only, float dropout)
{
	struct kg_features f;
	struct kg_gnn m = KG_GNN_INIT;
	struct kg_gnn_config c = config(e, dc, layers);
	size_t bad;

	make_graph();
	make_features(&f);
	c.learned_only = learned_only;
	c.dropout = dropout;
	T_CHECK(kg_gnn_init(&m, &c, &f, 42) == 0);
	bad = check_encoder(&m, &f, dropout > 0.0f);
	T_CHECKF(bad == 0, "%zu of %zu gradients differ", bad, m.n_params);
	kg_gnn_release(&m);
	kg_features_release(&f);
}

static void
grad_attribute_layer(void)
{
	run_check(KG_GNN_RGCN, KG_GNN_BASIS, 0, 0, 0.0f);
}

static void
grad_learned_only(void)
{
	run_check(KG_GNN_RGCN, KG_GNN_BASIS, 1, 1, 0.0f);
}

static void
grad_rgcn_basis(void)
{
	run_check(KG_GNN_RGCN, KG_GNN_BASIS, 2, 0, 0.0f);
}

static void
grad_rgcn_basis_three_layers_dropout(void)
{
	run_check(KG_GNN_RGCN, KG_GNN_BASIS, 3, 0, 0.3f);
}

static void
grad_rgcn_block(void)
{
	run_check(KG_GNN_RGCN, KG_GNN_BLOCK, 2, 0, 0.0f);
}

static void
grad_attention(void)
{
	run_check(KG_GNN_RELGNN, KG_GNN_BASIS, 2, 0, 0.0f);
}

static void
grad_attention_dropout(void)
{
	run_check(KG_GNN_RELGNN, KG_GNN_BASIS, 3, 0, 0.25f);
}

/* Messages: both directions of every triple, 1 / c_{i,r} summing to 1
 * over each (node, type). */
static void
graph_normalisers(void)
{
	struct kg_gnn_graph g = KG_GNN_GRAPH_INIT;
	double sum[NN][2 * NR];
	uint64_t i, e;
	int r;

	make_graph();
	kg_gnn_graph_build(&g, NN, NR, hrt, NT);
	T_CHECK(g.n_msgs == 2 * NT);
	T_CHECK(g.n_types == 2 * NR);
	T_CHECK(g.off[NN] == 2 * NT);
	memset(sum, 0, sizeof(sum));
	for (i = 0; i < NN; i++)
		for (e = g.off[i]; e < g.off[i + 1]; e++)
			sum[i][g.type[e]] += g.norm[e];
	for (i = 0; i < NN; i++)
		for (r = 0; r < 2 * NR; r++)
			T_CHECK(sum[i][r] == 0.0 || fabs(sum[i][r] - 1.0) < 1e-6);
	/* Triple k is the message h -> t of type r and t -> h of r + NR. */
	for (i = 0; i < NT; i++) {
		int found = 0;
		int32_t h = hrt[3 * i], rr = hrt[3 * i + 1], t = hrt[3 * i + 2];

		for (e = g.off[t]; e < g.off[t + 1]; e++)
			found |= g.src[e] == h && g.type[e] == rr;
		for (e = g.off[h]; e < g.off[h + 1]; e++)
			found |= (g.src[e] == t && g.type[e] == rr + NR) << 1;
		T_CHECK(found == 3);
	}
	kg_gnn_graph_release(&g);
}

/*
 * Threads: on a graph large enough to split (hubs, self-loops, repeated
 * triples), the encoder output and every gradient must have the same bits
 * with 1, 2 and 3 threads, and when run twice.
 */
#define TN 300
#define TR 3
#define TT 2500

static int32_t thrt[TT * 3];
static int64_t toff0[TN + 1];
static int32_t tidx0[TN * 3];
static uint8_t thas0[TN], thas1[TN];
static float tvec1[TN * 5];

static void
make_big(struct kg_features *f)
{
	struct kg_rng r;
	int i, k;

	kg_rng_seed(&r, 21, 0);
	for (i = 0; i < TT; i++) {
		/* A third of the messages touch the 5 hub nodes. */
		thrt[3 * i] = (int32_t)kg_rng_below(&r, i % 3 ? TN : 5);
		thrt[3 * i + 1] = (int32_t)kg_rng_below(&r, TR);
		thrt[3 * i + 2] = (int32_t)kg_rng_below(&r, TN);
	}
	for (i = 0; i < TN; i++) {
		int m = (int)kg_rng_below(&r, 4);

		toff0[i + 1] = toff0[i] + m;
		for (k = 0; k < m; k++)
			tidx0[toff0[i] + k] = (int32_t)kg_rng_below(&r, 6);
		thas0[i] = m > 0;
		thas1[i] = kg_rng_below(&r, 2);
	}
	for (i = 0; i < TN * 5; i++)
		tvec1[i] = (float)(kg_rng_uniform(&r) * 2.0 - 1.0);
	memset(f, 0, sizeof(*f));
	f->n = TN;
	f->n_attrs = 2;
	f->attrs = kg_xcalloc(2, sizeof(*f->attrs));
	f->attrs[0].name = kg_xstrdup("cat");
	f->attrs[0].width = 6;
	f->attrs[0].off = toff0;
	f->attrs[0].idx = tidx0;
	f->attrs[0].has = thas0;
	f->attrs[1].name = kg_xstrdup("txt");
	f->attrs[1].text = 1;
	f->attrs[1].width = 5;
	f->attrs[1].vec = tvec1;
	f->attrs[1].has = thas1;
}

/* Output and gradients with nt threads, into out and grad. */
static void
run_threads(const struct kg_gnn *m, const struct kg_gnn_graph *g,
    const struct kg_features *f, struct kg_gnn_state *s, int nt,
    int drop, float *out, float *grad)
{
	size_t n = TN * m->c.dims[m->c.n_layers], k;
	float *dout = kg_xmallocarray(n, sizeof(float));
	struct kg_rng r;

	omp_set_num_threads(nt);
	kg_rng_seed(&r, 5, 5);
	kg_gnn_forward(m, g, f, NULL, NULL, drop ? &r : NULL, s);
	memcpy(out, s->h[m->c.n_layers], n * sizeof(float));
	for (k = 0; k < n; k++)
		dout[k] = (float)sin((double)k) * out[k];
	memset(grad, 0, m->n_params * sizeof(float));
	kg_gnn_backward(m, g, f, NULL, NULL, s, dout, grad);
	free(dout);
}

static void
check_threads(enum kg_gnn_encoder e, enum kg_gnn_decomp dc, uint32_t layers,
    float dropout)
{
	struct kg_features f;
	struct kg_gnn m = KG_GNN_INIT;
	struct kg_gnn_config c = config(e, dc, layers);
	struct kg_gnn_graph g = KG_GNN_GRAPH_INIT;
	struct kg_gnn_state s = KG_GNN_STATE_INIT, s1 = KG_GNN_STATE_INIT;
	int nt, run, saved = omp_get_max_threads();
	float *out[2], *grad[2];
	size_t no, k, nz = 0;

	make_big(&f);
	c.dims[0] = 8;
	c.n_learned = TN;
	c.n_relations = TR;
	c.dropout = dropout;
	T_CHECK(kg_gnn_init(&m, &c, &f, 7) == 0);
	kg_gnn_graph_build(&g, TN, TR, thrt, TT);
	no = TN * c.dims[layers];
	for (k = 0; k < 2; k++) {
		out[k] = kg_xmallocarray(no, sizeof(float));
		grad[k] = kg_xmallocarray(m.n_params, sizeof(float));
	}
	run_threads(&m, &g, &f, &s1, 1, dropout > 0.0f, out[0], grad[0]);
	for (k = 0; k < m.n_params; k++)
		nz += grad[0][k] != 0.0f;
	T_CHECKF(nz > m.n_params / 10, "%zu of %zu gradients non-zero", nz,
	    m.n_params);
	/* 3 twice: the second run reuses the state's buffers. */
	for (run = 0; run < 3; run++) {
		nt = run < 2 ? run + 2 : 3;
		run_threads(&m, &g, &f, &s, nt, dropout > 0.0f, out[1],
		    grad[1]);
		T_CHECKF(memcmp(out[0], out[1], no * sizeof(float)) == 0,
		    "output differs with %d threads", nt);
		for (k = 0; k < m.n_params; k++)
			if (grad[0][k] != grad[1][k])
				break;
		T_CHECKF(k == m.n_params, "%d threads: gradient %zu is %.9g, "
		    "%.9g with 1", nt, k, k < m.n_params ?
		    (double)grad[1][k] : 0.0, k < m.n_params ?
		    (double)grad[0][k] : 0.0);
	}
	omp_set_num_threads(saved);
	for (k = 0; k < 2; k++) {
		free(out[k]);
		free(grad[k]);
	}
	kg_gnn_state_release(&s);
	kg_gnn_state_release(&s1);
	kg_gnn_graph_release(&g);
	kg_gnn_release(&m);
	kg_features_release(&f);
}

static void
threads_same_bits(void)
{
	check_threads(KG_GNN_RGCN, KG_GNN_BASIS, 0, 0.0f);
	check_threads(KG_GNN_RGCN, KG_GNN_BASIS, 2, 0.0f);
	check_threads(KG_GNN_RGCN, KG_GNN_BLOCK, 2, 0.0f);
	check_threads(KG_GNN_RGCN, KG_GNN_BLOCK, 3, 0.3f);
	check_threads(KG_GNN_RELGNN, KG_GNN_BASIS, 2, 0.0f);
	check_threads(KG_GNN_RELGNN, KG_GNN_BASIS, 3, 0.3f);
}

/* Decoder + loss: finite differences over the node and relation rows. */
static void
check_decoder(enum kg_model_kind kind, enum kg_loss_kind lk, double adv)
{
	struct kg_model m;
	struct kg_loss l = KG_LOSS_INIT;
	enum { N = 6, NB = 3, NEG = 4, D = 6 };
	float h[N * D], rel[NR * 2 * D], gh[N * D], grel[NR * 2 * D];
	float gh2[N * D], grel2[NR * 2 * D];
	int32_t pos[NB * 3], negs[NB * NEG * 3];
	struct kg_gnn_decode_work work = KG_GNN_DECODE_WORK_INIT;
	struct kg_rng r;
	size_t k, bad = 0, nz = 0, nrel;
	const float eps = 1e-3f;

	T_CHECK(kg_model_init(&m, kind, D, 0, 3.0f) == 0);
	nrel = NR * m.rel_width;
	l.kind = lk;
	l.adv_temp = adv;
	kg_rng_seed(&r, 9, (uint64_t)kind * 10 + lk);
	for (k = 0; k < N * D; k++)
		h[k] = (float)(kg_rng_uniform(&r) * 2.0 - 1.0);
	for (k = 0; k < nrel; k++)
		rel[k] = (float)(kg_rng_uniform(&r) * 2.0 - 1.0);
	for (k = 0; k < NB; k++) {
		pos[3 * k] = (int32_t)kg_rng_below(&r, N);
		pos[3 * k + 1] = (int32_t)kg_rng_below(&r, NR);
		pos[3 * k + 2] = (int32_t)kg_rng_below(&r, N);
	}
	for (k = 0; k < NB * NEG; k++) {
		memcpy(negs + 3 * k, pos + 3 * (k / NEG), 3 * sizeof(int32_t));
		negs[3 * k + (k % 2 ? 0 : 2)] = (int32_t)kg_rng_below(&r, N);
	}
	memset(gh, 0, sizeof(gh));
	memset(grel, 0, sizeof(grel));
	kg_gnn_decode(&m, &l, h, N, rel, NR, pos, NB, negs, NEG, 0.5f, gh,
	    grel, &work);
	for (k = 0; k < N * D + nrel; k++) {
		float *p = k < N * D ? h + k : rel + (k - N * D);
		float w = *p, an = k < N * D ? gh[k] : grel[k - N * D];
		double lp, lm, fd;

		*p = w + eps;
		lp = kg_gnn_decode(&m, &l, h, N, rel, NR, pos, NB, negs, NEG,
		    0.5f, gh2, grel2, &work);
		*p = w - eps;
		lm = kg_gnn_decode(&m, &l, h, N, rel, NR, pos, NB, negs, NEG,
		    0.5f, gh2, grel2, &work);
		*p = w;
		fd = 0.5 * (lp - lm) / (2.0 * (double)eps);
		if (fabs(fd - an) > 1e-3 + 1e-2 * fabs(fd)) {
			if (bad++ < 5)
				fprintf(stderr, "%s/%s: param %zu: backward "
				    "%.6g, finite difference %.6g\n",
				    kg_model_name(kind), kg_loss_name(lk), k,
				    (double)an, fd);
		}
		if (an != 0.0f)
			nz++;
	}
	T_CHECKF(bad == 0, "%s/%s: %zu gradients differ", kg_model_name(kind),
	    kg_loss_name(lk), bad);
	T_CHECK(nz > 0);
	kg_gnn_decode_work_release(&work);
}

static void
grad_decoders(void)
{
	static const enum kg_model_kind kinds[] = { KG_MODEL_DISTMULT,
	    KG_MODEL_COMPLEX, KG_MODEL_TRANSE_L2, KG_MODEL_TRANSE_L1 };
	static const enum kg_loss_kind losses[] = { KG_LOSS_BCE,
	    KG_LOSS_LOGISTIC, KG_LOSS_MARGIN, KG_LOSS_SOFTMAX };
	size_t a, b;

	for (a = 0; a < 4; a++)
		for (b = 0; b < 4; b++)
			check_decoder(kinds[a], losses[b], 0.0);
	/* Self-adversarial weights are constants (loss.h). */
	check_decoder(KG_MODEL_DISTMULT, KG_LOSS_LOGISTIC, 0.0);
}

/* The decoder's reference: one serial pass over the batch, each triple's
 * gradients added to its rows in triple order, head before tail. */
static double
decode_serial(const struct kg_model *m, const struct kg_loss *l,
    const float *h, const float *rel, const int32_t *pos, size_t nb,
    const int32_t *negs, size_t neg, float scale, float *gh, float *grel)
{
	size_t np = nb * (1 + neg), d = m->dim, rw = m->rel_width, i, j, k, x;
	float *f = kg_xcalloc(np * d, sizeof(float));
	float *r = kg_xcalloc(np * rw, sizeof(float));
	float *c = kg_xcalloc(np * d, sizeof(float));
	float *gf = kg_xcalloc(np * d, sizeof(float));
	float *gr = kg_xcalloc(np * rw, sizeof(float));
	float *gc = kg_xcalloc(np * d, sizeof(float));
	float *s = kg_xcalloc(np, sizeof(float));
	float *g = kg_xcalloc(np, sizeof(float));
	float *w = kg_xcalloc(kg_grad_work_size(m, np, 1), sizeof(float));
	double loss = 0.0;

	for (k = 0; k < np; k++) {
		const int32_t *t = k % (1 + neg) == 0 ? pos + 3 * (k / (1 + neg)) :
		    negs + 3 * ((k / (1 + neg)) * neg + k % (1 + neg) - 1);

		memcpy(f + k * d, h + (size_t)t[0] * d, d * sizeof(float));
		memcpy(r + k * rw, rel + (size_t)t[1] * rw, rw * sizeof(float));
		memcpy(c + k * d, h + (size_t)t[2] * d, d * sizeof(float));
	}
	kg_grad_pairs_forward(m, KG_SIDE_TAIL, np, f, r, c, s, w);
	for (i = 0; i < nb; i++) {
		loss += kg_loss_eval(l, s[i * (1 + neg)], s + i * (1 + neg) + 1,
		    neg, NULL, g + i * (1 + neg), g + i * (1 + neg) + 1);
		for (j = 0; j <= neg; j++)
			g[i * (1 + neg) + j] *= scale;
	}
	kg_grad_pairs_backward(m, KG_SIDE_TAIL, np, f, r, c, g, gf, gr, gc, w);
	for (k = 0; k < np; k++) {
		const int32_t *t = k % (1 + neg) == 0 ? pos + 3 * (k / (1 + neg)) :
		    negs + 3 * ((k / (1 + neg)) * neg + k % (1 + neg) - 1);

		for (x = 0; x < d; x++)
			gh[(size_t)t[0] * d + x] += gf[k * d + x];
		for (x = 0; x < d; x++)
			gh[(size_t)t[2] * d + x] += gc[k * d + x];
		for (x = 0; x < rw; x++)
			grel[(size_t)t[1] * rw + x] += gr[k * rw + x];
	}
	free(f), free(r), free(c), free(gf), free(gr), free(gc);
	free(s), free(g), free(w);
	return loss;
}

/* Any thread count gives the serial pass's bits, with hub nodes (many
 * triples on few rows) and a batch of many chunks. */
static void
decoder_threads_same_bits(void)
{
	static const enum kg_model_kind kinds[] = { KG_MODEL_DISTMULT,
	    KG_MODEL_TRANSE_L2, KG_MODEL_COMPLEX };
	enum { N = 300, R = 5, NB = 257, NEG = 3, D = 8 };
	struct kg_loss l = KG_LOSS_INIT;
	int32_t pos[NB * 3], negs[NB * NEG * 3];
	float h[N * D], rel[R * 2 * D], gh0[N * D], gr0[R * 2 * D];
	float gh[N * D], gr[R * 2 * D];
	int saved = omp_get_max_threads();
	struct kg_rng rng;
	size_t a, k;

	kg_rng_seed(&rng, 4, 4);
	for (k = 0; k < NB; k++) {
		pos[3 * k] = (int32_t)kg_rng_below(&rng, 10);
		pos[3 * k + 1] = (int32_t)kg_rng_below(&rng, R);
		pos[3 * k + 2] = (int32_t)kg_rng_below(&rng, N);
	}
	for (k = 0; k < NB * NEG; k++) {
		memcpy(negs + 3 * k, pos + 3 * (k / NEG), 3 * sizeof(int32_t));
		negs[3 * k + (k % 2 ? 0 : 2)] = (int32_t)kg_rng_below(&rng, N);
	}
	for (k = 0; k < N * D; k++)
		h[k] = (float)(kg_rng_uniform(&rng) - 0.5);
	for (k = 0; k < R * 2 * D; k++)
		rel[k] = (float)(kg_rng_uniform(&rng) - 0.5);
	for (a = 0; a < sizeof(kinds) / sizeof(kinds[0]); a++) {
		struct kg_model m;
		size_t nr;
		double l0;
		int t;

		T_CHECK(kg_model_init(&m, kinds[a], D, 0, 3.0f) == 0);
		nr = R * m.rel_width;
		l.adv_temp = a == 1 ? 1.0 : 0.0;
		/* Start from non-zero rows: the decoder adds. */
		for (k = 0; k < N * D; k++)
			gh0[k] = (float)k * 1e-3f;
		for (k = 0; k < nr; k++)
			gr0[k] = (float)k * 1e-3f;
		l0 = decode_serial(&m, &l, h, rel, pos, NB, negs, NEG, 0.25f,
		    gh0, gr0);
		for (t = 1; t <= 3; t++) {
			struct kg_gnn_decode_work w = KG_GNN_DECODE_WORK_INIT;
			double l1;
			int rep;

			omp_set_num_threads(t);
			/* Twice: the reused buffers must not leak into the
			 * second batch. */
			for (rep = 0; rep < 2; rep++) {
				for (k = 0; k < N * D; k++)
					gh[k] = (float)k * 1e-3f;
				for (k = 0; k < nr; k++)
					gr[k] = (float)k * 1e-3f;
				l1 = kg_gnn_decode(&m, &l, h, N, rel, R, pos, NB,
				    negs, NEG, 0.25f, gh, gr, &w);
				T_CHECKF(l1 == l0 && memcmp(gh, gh0, sizeof(gh)) == 0 &&
				    memcmp(gr, gr0, nr * sizeof(float)) == 0,
				    "%s, %d threads, pass %d: differs from the "
				    "serial pass", kg_model_name(kinds[a]), t, rep);
			}
			kg_gnn_decode_work_release(&w);
		}
	}
	omp_set_num_threads(saved);
}

static void
bad_configs(void)
{
	struct kg_gnn m = KG_GNN_INIT;
	struct kg_gnn_config c = config(KG_GNN_RGCN, KG_GNN_BLOCK, 2);

	kg_error_mute(1);
	c.n_bases = 4;		/* 6 is not divisible by 4 */
	T_CHECK(kg_gnn_init(&m, &c, NULL, 1) < 0);
	c = config(KG_GNN_RGCN, KG_GNN_BASIS, 4);
	T_CHECK(kg_gnn_init(&m, &c, NULL, 1) < 0);
	c = config(KG_GNN_RGCN, KG_GNN_BASIS, 2);
	c.dims[1] = 0;
	T_CHECK(kg_gnn_init(&m, &c, NULL, 1) < 0);
	c = config(KG_GNN_RGCN, KG_GNN_BASIS, 2);
	c.dropout = 1.0f;
	T_CHECK(kg_gnn_init(&m, &c, NULL, 1) < 0);
	kg_error_mute(0);
}

int
main(void)
{
	T_RUN(graph_normalisers);
	T_RUN(grad_attribute_layer);
	T_RUN(grad_learned_only);
	T_RUN(grad_rgcn_basis);
	T_RUN(grad_rgcn_basis_three_layers_dropout);
	T_RUN(grad_rgcn_block);
	T_RUN(grad_attention);
	T_RUN(grad_attention_dropout);
	T_RUN(threads_same_bits);
	T_RUN(grad_decoders);
	T_RUN(decoder_threads_same_bits);
	T_RUN(bad_configs);
	return T_DONE();
}
