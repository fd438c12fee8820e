/*
 * The BERT encoder's device path (lib/attrs/bert_device.c) on a GPU
 * against the same path on the CPU backend: a random 2-layer BERT of
 * width 64 (4 heads, FFN 128) built in memory, 70 texts of 1 to 40
 * tokens in batches of 16 (kg_bert_run_device, longest first), mean,
 * CLS and max pooling, with and without Normalize: every pooled value
 * within 1e-4 (cuBLAS sums in its own order) and one token upload and
 * one vector download a batch.  `make test-gpu` runs it
 * (tests/gpu/run.sh); without a GPU it prints one skip line saying why
 * (a failed test under KG_GPU_REQUIRE: gpu_open.h).  KG_GPU_DEVICE=cpu
 * runs the CPU backend against itself.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/test.h"
#include "gpu_open.h"
#include "attrs/bert_impl.h"
#include "core/rng.h"
#include "core/util.h"

enum { H = 64, HEADS = 4, INTER = 128, LAYERS = 2, VOCAB = 50, MAXPOS = 40,
	NTEXT = 70, BATCH = 16 };

static struct kg_device gdev;
static struct kg_rng rng;

static float *
rnd(size_t n, float scale)
{
	float *x = kg_xmallocarray(n, sizeof(*x));
	size_t i;

	for (i = 0; i < n; i++)
		x[i] = scale * (2.0f * (float)kg_rng_uniform(&rng) - 1.0f);
	return x;
}

/* A random model in m (weights owned by the caller through m). */
static void
model(struct kg_bert *m)
{
	uint32_t l;

	memset(m, 0, sizeof(*m));
	m->hidden = H;
	m->n_layers = LAYERS;
	m->n_heads = HEADS;
	m->inter = INTER;
	m->max_pos = MAXPOS;
	m->n_types = 1;
	m->n_vocab = VOCAB;
	m->eps = 1e-12f;
	m->word = rnd(VOCAB * H, 1);
	m->pos = rnd(MAXPOS * H, 1);
	m->type = rnd(H, 1);
	m->eln_w = rnd(H, 1);
	m->eln_b = rnd(H, 0.1f);
	m->layer = kg_xcalloc(LAYERS, sizeof(*m->layer));
	for (l = 0; l < LAYERS; l++) {
		struct kg_bert_layer *L = &m->layer[l];

		L->wqkv = rnd(3 * H * H, 0.2f);
		L->bqkv = rnd(3 * H, 0.1f);
		L->wo = rnd(H * H, 0.2f);
		L->bo = rnd(H, 0.1f);
		L->ln1_w = rnd(H, 1);
		L->ln1_b = rnd(H, 0.1f);
		L->wi = rnd(INTER * H, 0.2f);
		L->bi = rnd(INTER, 0.1f);
		L->wf = rnd(H * INTER, 0.2f);
		L->bf = rnd(H, 0.1f);
		L->ln2_w = rnd(H, 1);
		L->ln2_b = rnd(H, 0.1f);
	}
}

static void
model_free(struct kg_bert *m)
{
	uint32_t l;

	for (l = 0; l < LAYERS; l++) {
		const struct kg_bert_layer *L = &m->layer[l];

		free(L->wqkv);
		free(L->bqkv);
		free((void *)L->wo);
		free((void *)L->bo);
		free((void *)L->ln1_w);
		free((void *)L->ln1_b);
		free((void *)L->wi);
		free((void *)L->bi);
		free((void *)L->wf);
		free((void *)L->bf);
		free((void *)L->ln2_w);
		free((void *)L->ln2_b);
	}
	free(m->layer);
	free((void *)m->word);
	free((void *)m->pos);
	free((void *)m->type);
	free((void *)m->eln_w);
	free((void *)m->eln_b);
}

/* Texts of 1 to MAXPOS tokens, longest first, packed in ids/off. */
static size_t
texts(struct kg_bert_order *order, uint32_t *ids, uint64_t *off)
{
	size_t i, k, cap = 0;

	off[0] = 0;
	for (i = 0; i < NTEXT; i++) {
		size_t len = 1 + (size_t)kg_rng_below(&rng, MAXPOS);

		for (k = 0; k < len; k++)
			ids[off[i] + k] = (uint32_t)kg_rng_below(&rng, VOCAB);
		off[i + 1] = off[i] + len;
		order[i].len = len;
		order[i].i = i;
	}
	for (i = 1; i < NTEXT; i++)
		for (k = i; k > 0 && order[k - 1].len < order[k].len; k--) {
			struct kg_bert_order t = order[k];

			order[k] = order[k - 1];
			order[k - 1] = t;
		}
	for (i = 0; i < NTEXT; i += BATCH) {
		size_t s = 0;

		for (k = i; k < NTEXT && k < i + BATCH; k++)
			s += order[k].len;
		cap = s > cap ? s : cap;
	}
	return cap;
}

static void
check(enum kg_bert_pool pool, int normalize)
{
	struct kg_device cpu = KG_DEVICE_INIT;
	struct kg_bert m;
	struct kg_bert_order order[NTEXT];
	struct kg_bert_stats sg, sc;
	uint32_t *ids = kg_xmallocarray(NTEXT * MAXPOS, sizeof(uint32_t));
	uint64_t off[NTEXT + 1], want = 2 * ((NTEXT + BATCH - 1) / BATCH);
	float *a = kg_xcalloc(NTEXT * H, sizeof(float));
	float *b = kg_xcalloc(NTEXT * H, sizeof(float));
	size_t cap, i, bad = 0;
	double worst = 0;

	kg_rng_seed(&rng, 37, (uint64_t)pool * 2 + (uint64_t)normalize);
	model(&m);
	m.pool = pool;
	m.normalize = normalize;
	cap = texts(order, ids, off);
	memset(&sg, 0, sizeof(sg));
	memset(&sc, 0, sizeof(sc));
	T_CHECKF(kg_bert_run_device(&m, &gdev, BATCH, cap, NTEXT, order, ids,
	    off, a, &sg) == 0, "%s", kg_error_last());
	T_CHECKF(kg_bert_run_device(&m, &cpu, BATCH, cap, NTEXT, order, ids,
	    off, b, &sc) == 0, "%s", kg_error_last());
	for (i = 0; i < NTEXT * H; i++) {
		double d = fabs((double)a[i] - b[i]);

		worst = d > worst ? d : worst;
		bad += !(d <= 1e-4 * fmax(1.0, fabs(b[i])));
	}
	fprintf(stderr, "gpu_text: pool %d normalize %d: max |diff| %.3g, "
	    "%s\n", (int)pool, normalize, worst, sg.backend);
	T_CHECKF(bad == 0, "%zu values off by more than 1e-4", bad);
	T_CHECKF(sg.copies == want, "%llu copies, wanted %llu",
	    (unsigned long long)sg.copies, (unsigned long long)want);
	model_free(&m);
	free(ids);
	free(a);
	free(b);
}

static void mean_normalized(void) { check(KG_BERT_POOL_MEAN, 1); }
static void cls_plain(void) { check(KG_BERT_POOL_CLS, 0); }
static void max_normalized(void) { check(KG_BERT_POOL_MAX, 1); }

int
main(void)
{
	const char *name = getenv("KG_GPU_DEVICE");
	struct kg_backend *probe;

	if (kg_device_parse("KG_GPU_DEVICE", name != NULL ? name : "cuda",
	    &gdev) < 0)
		return 1;
	probe = gpu_open("gpu_text", &gdev);
	if (probe == NULL)
		return gpu_required();
	kg_backend_free(probe);
	T_RUN(mean_normalized);
	T_RUN(cls_plain);
	T_RUN(max_normalized);
	return T_DONE();
}
