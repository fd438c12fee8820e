/*
 * GNN training's device step (lib/gnn/step_device.h) on a GPU against the
 * same step on the CPU backend: a generated graph, two R-GCN layers (basis
 * and block-diagonal) or two RelGNN attention layers, the whole graph and
 * sampled blocks, dropout on, the DistMult decoder; the loss and every
 * gradient within a relative 1e-4, and two steps with the update on the
 * device (kg_gnn_dstep_train): losses within 1e-3, parameters within 0.02
 * (the GPU adds scattered rows with atomics, in no fixed order, and
 * cuBLAS sums in its own order).  `make test-gpu` runs it
 * (tests/gpu/run.sh); without a GPU it prints one skip line saying why
 * (a failed test under KG_GPU_REQUIRE: gpu_open.h).
 * KG_GPU_DEVICE=cpu runs the CPU backend against itself.  Each case also
 * prints on stderr the seconds of one step on each backend (a figure, not
 * a check: the first GPU step includes cuBLAS's start).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/test.h"
#include "gpu_open.h"
#include "compute/backend.h"
#include "core/rng.h"
#include "core/util.h"
#include "gnn/sample.h"
#include "gnn/step_device.h"

enum { GN = 3000, GR = 7, GT = 30000, NSEED = 256, NB = 128, NEG = 8 };

static struct kg_backend *cpu, *gpu;
static int32_t hrt[GT * 3];

/* Two training steps on backend be with the update on the device
 * (kg_gnn_dstep_train, Adam lr 0.01): the losses into loss[2], the
 * parameters after them into w (a copy of m's layout). */
static int
train_on(struct kg_backend *be, const struct kg_gnn *m,
    const struct kg_model *dec, const float *rel, size_t nrel,
    const struct kg_gnn_graph *g, const uint64_t *n_dst, const int32_t *lrow,
    const int32_t *pos, const int32_t *negs, double *loss, float *w)
{
	struct kg_gnn_dstep ds = KG_GNN_DSTEP_INIT;
	struct kg_loss l = KG_LOSS_INIT;
	struct kg_adam a = KG_ADAM_INIT;
	struct kg_gnn mw = *m;
	size_t d0 = m->c.dims[0], nd = m->n_params - m->c.n_learned * d0;
	float *se = kg_xcalloc(2 * nd + 1, sizeof(float));
	float *sr = kg_xcalloc(2 * nrel + 1, sizeof(float));
	float *sl = kg_xcalloc(m->c.n_learned * (2 * d0 + 1), sizeof(float));
	float *r2 = kg_xmallocarray(nrel, sizeof(float));
	struct kg_rng r;
	int rc, k;

	a.lr = 0.01f;
	l.adv_temp = 1.0;
	kg_rng_seed(&r, 5, 5);
	memcpy(w, m->w, m->n_params * sizeof(float));
	mw.w = w;
	mw.lw = NULL;
	rc = kg_gnn_dstep_open(&ds, be, &mw, dec, rel, nrel) < 0 ||
	    kg_gnn_dstep_push(&ds, &mw, rel, se, sr, sl) < 0 ? -1 : 0;
	for (k = 0; k < 2 && rc == 0; k++)
		rc = kg_gnn_dstep_train(&ds, &mw, dec, &l, g, n_dst, lrow, &r,
		    pos, NB, negs, NEG, 1.0f / NB, &a, 1e-4, &loss[k]);
	if (rc == 0)
		rc = kg_gnn_dstep_pull(&ds, &mw, r2, se, sr, sl);
	if (rc < 0)
		fprintf(stderr, "%s: %s\n", kg_backend_name(be),
		    kg_error_last());
	kg_gnn_dstep_release(&ds);
	free(se);
	free(sr);
	free(sl);
	free(r2);
	return rc;
}

/* One step on backend be: the loss into *loss, gradients into grad. */
static int
step_on(struct kg_backend *be, const struct kg_gnn *m,
    const struct kg_model *dec, const float *rel, size_t nrel,
    const struct kg_gnn_graph *g, const uint64_t *n_dst, const int32_t *lrow,
    const int32_t *pos, const int32_t *negs, double *loss, float *grad)
{
	struct kg_gnn_dstep ds = KG_GNN_DSTEP_INIT;
	struct kg_loss l = KG_LOSS_INIT;
	struct kg_rng r;
	int rc;

	l.adv_temp = 1.0;
	kg_rng_seed(&r, 5, 5);
	rc = kg_gnn_dstep_open(&ds, be, m, dec, rel, nrel) < 0 ||
	    kg_gnn_dstep_grad(&ds, m, dec, &l, g, n_dst, lrow, &r, pos, NB,
	    negs, NEG, 1.0f / NB, grad, loss) < 0 ? -1 : 0;
	if (rc < 0)
		fprintf(stderr, "%s: %s\n", kg_backend_name(be),
		    kg_error_last());
	kg_gnn_dstep_release(&ds);
	return rc;
}

static void
check(enum kg_gnn_encoder enc, enum kg_gnn_decomp dc, int blocks)
{
	static const uint32_t fan[2] = { 10, 5 };
	struct kg_gnn_graph full = KG_GNN_GRAPH_INIT;
	struct kg_gnn_sampler sb = KG_GNN_SAMPLER_INIT;
	struct kg_gnn m = KG_GNN_INIT;
	struct kg_gnn_config c;
	struct kg_model dec;
	struct kg_rng r;
	int32_t seeds[NSEED], pos[NB * 3], negs[NB * NEG * 3];
	uint64_t n_dst[2], nout, mn, mm;
	const struct kg_gnn_graph *g = &full;
	const int32_t *lrow = NULL;
	size_t P, nrel, k, bad = 0;
	float *rel, *g1, *g2;
	double l1 = 0.0, l2 = 0.0, t0, t1, tl1[2], tl2[2];

	kg_rng_seed(&r, 17, 0);
	for (k = 0; k < GT; k++) {
		hrt[3 * k] = (int32_t)kg_rng_below(&r, k % 5 ? GN : 20);
		hrt[3 * k + 1] = (int32_t)kg_rng_below(&r, GR);
		hrt[3 * k + 2] = (int32_t)kg_rng_below(&r, GN);
	}
	kg_gnn_graph_build(&full, GN, GR, hrt, GT);
	nout = GN;
	if (blocks) {
		for (k = 0; k < NSEED; k++)
			seeds[k] = (int32_t)(k * 11 % GN);
		kg_gnn_sample_bounds(NSEED, fan, 2, &full, &mn, &mm);
		kg_gnn_sampler_init(&sb, &full, mn, mm, 10);
		kg_gnn_sample(&sb, &full, fan, 2, NULL, seeds, NSEED, &r);
		n_dst[0] = sb.hop_end[1];
		n_dst[1] = sb.hop_end[0];
		nout = n_dst[1];
		g = &sb.g;
		lrow = sb.lrow;
	}
	memset(&c, 0, sizeof(c));
	c.encoder = enc;
	c.decomp = dc;
	c.n_layers = 2;
	c.dims[0] = c.dims[1] = c.dims[2] = 32;
	c.n_bases = 4;
	c.n_relations = GR;
	c.n_learned = GN;
	c.learned_only = 1;
	c.dropout = 0.2f;
	T_CHECK(kg_gnn_init(&m, &c, NULL, 42) == 0);
	T_CHECK(kg_model_init(&dec, KG_MODEL_DISTMULT, 32, 0, 0.0f) == 0);
	P = m.n_params;
	nrel = GR * 32;
	rel = kg_xmallocarray(nrel, sizeof(*rel));
	for (k = 0; k < nrel; k++)
		rel[k] = (float)(kg_rng_uniform(&r) - 0.5);
	for (k = 0; k < NB; k++) {
		pos[3 * k] = (int32_t)kg_rng_below(&r, nout);
		pos[3 * k + 1] = (int32_t)kg_rng_below(&r, GR);
		pos[3 * k + 2] = (int32_t)kg_rng_below(&r, nout);
	}
	for (k = 0; k < NB * NEG; k++) {
		memcpy(negs + 3 * k, pos + 3 * (k / NEG), 3 * sizeof(int32_t));
		negs[3 * k + (k % 2 ? 0 : 2)] = (int32_t)kg_rng_below(&r, nout);
	}
	g1 = kg_xcalloc(P + nrel, sizeof(float));
	g2 = kg_xcalloc(P + nrel, sizeof(float));
	t0 = kg_now();
	T_CHECK(step_on(cpu, &m, &dec, rel, nrel, g, blocks ? n_dst : NULL,
	    lrow, pos, negs, &l1, g1) == 0);
	t1 = kg_now();
	T_CHECK(step_on(gpu, &m, &dec, rel, nrel, g, blocks ? n_dst : NULL,
	    lrow, pos, negs, &l2, g2) == 0);
	fprintf(stderr, "gpu_gnn: %s %s: %zu messages, one step %.4f s on "
	    "%s, %.4f s on %s\n", enc == KG_GNN_RELGNN ? "relgnn" :
	    dc == KG_GNN_BASIS ? "basis" : "block",
	    blocks ? "blocks" : "whole graph", (size_t)g->n_msgs, t1 - t0,
	    kg_backend_name(cpu), kg_now() - t1, kg_backend_name(gpu));
	T_CHECKF(fabs(l2 - l1) <= 1e-4 * fmax(1.0, fabs(l1)),
	    "loss: device %.9g, CPU %.9g", l2, l1);
	for (k = 0; k < P + nrel; k++)
		if (!(fabsf(g2[k] - g1[k]) <= 1e-4f * fmaxf(1.0f,
		    fabsf(g1[k]))) && bad++ < 5)
			fprintf(stderr, "gradient %zu: device %.9g, CPU %.9g\n",
			    k, (double)g2[k], (double)g1[k]);
	T_CHECKF(bad == 0, "%zu gradients differ", bad);
	/* Two steps updated on the device: the second loss sees the first
	 * update; Adam moves a parameter by about lr a step, so the two
	 * backends' parameters stay within 2 lr of each other. */
	T_CHECK(train_on(cpu, &m, &dec, rel, nrel, g, blocks ? n_dst : NULL,
	    lrow, pos, negs, tl1, g1) == 0);
	T_CHECK(train_on(gpu, &m, &dec, rel, nrel, g, blocks ? n_dst : NULL,
	    lrow, pos, negs, tl2, g2) == 0);
	for (k = 0; k < 2; k++)
		T_CHECKF(fabs(tl2[k] - tl1[k]) <= 1e-3 * fmax(1.0, fabs(tl1[k])),
		    "trained step %zu loss: device %.9g, CPU %.9g", k, tl2[k],
		    tl1[k]);
	T_CHECKF(tl1[1] != tl1[0], "the first update changed the loss");
	for (k = 0, bad = 0; k < P; k++)
		if (!(fabsf(g2[k] - g1[k]) <= 0.02f) && bad++ < 5)
			fprintf(stderr, "parameter %zu: device %.9g, CPU %.9g\n",
			    k, (double)g2[k], (double)g1[k]);
	T_CHECKF(bad == 0, "%zu parameters apart", bad);
	free(rel);
	free(g1);
	free(g2);
	kg_gnn_release(&m);
	kg_gnn_sampler_release(&sb);
	kg_gnn_graph_release(&full);
}

static void
rgcn_basis_whole_graph(void)
{
	check(KG_GNN_RGCN, KG_GNN_BASIS, 0);
}

static void
rgcn_basis_blocks(void)
{
	check(KG_GNN_RGCN, KG_GNN_BASIS, 1);
}

static void
rgcn_block_diagonal_whole_graph(void)
{
	check(KG_GNN_RGCN, KG_GNN_BLOCK, 0);
}

static void
rgcn_block_diagonal_blocks(void)
{
	check(KG_GNN_RGCN, KG_GNN_BLOCK, 1);
}

static void
relgnn_whole_graph(void)
{
	check(KG_GNN_RELGNN, KG_GNN_BASIS, 0);
}

static void
relgnn_blocks(void)
{
	check(KG_GNN_RELGNN, KG_GNN_BASIS, 1);
}

int
main(void)
{
	struct kg_device dc = KG_DEVICE_INIT, dg;
	const char *name = getenv("KG_GPU_DEVICE");

	cpu = kg_backend_open(&dc);
	if (cpu == NULL)
		return 1;
	if (kg_device_parse("KG_GPU_DEVICE", name != NULL ? name : "cuda",
	    &dg) < 0)
		return 1;
	gpu = gpu_open("gpu_gnn", &dg);
	if (gpu == NULL) {
		kg_backend_free(cpu);
		return gpu_required();
	}
	fprintf(stderr, "gpu_gnn: %s against %s\n", kg_backend_name(gpu),
	    kg_backend_name(cpu));
	T_RUN(rgcn_basis_whole_graph);
	T_RUN(rgcn_basis_blocks);
	T_RUN(rgcn_block_diagonal_whole_graph);
	T_RUN(rgcn_block_diagonal_blocks);
	T_RUN(relgnn_whole_graph);
	T_RUN(relgnn_blocks);
	kg_backend_free(gpu);
	kg_backend_free(cpu);
	return T_DONE();
}
