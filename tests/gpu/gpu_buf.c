/*
 * The device's partition buffer (a device tier, lib/store/dev_tier.h,
 * under the device engine) end to end on a GPU: FB15k-237 (from the
 * shared data, $KG_SHARED_DATA or $KG_TOP/../shared/data) trained with the whole table on cuda:0 (or
 * $KG_GPU_DEVICE), then with P=8 ID-range partitions and C=2 of them on
 * the device, the buckets in the order of lib/store/order.h: filtered
 * MRR of the first 5000 test triples within KG_GPU_BUF_TOL (default 0.01,
 * issue 31's bound) of the whole table's, and the uploads at most the
 * order's swaps.  Negatives come from the bucket's partitions and the
 * negative pool (kg-train's default --neg_pool 4096; KG_GPU_BUF_POOL
 * sets it, 0 for none).  The CPU backend, running this same code, gave
 * 0.1840 for the whole table and 0.1790 for the buffer when this was
 * written (ComplEx d=200, 10 epochs); without the pool 0.1692.  Prints
 * both runs' positives per second.  Without the data it prints a skip
 * line and stops; without a GPU, the one skip line tests/gpu/run.sh
 * takes for "skipped" (a failed test under KG_GPU_REQUIRE: gpu_open.h).
 * KG_GPU_DEVICE=cpu runs both on the CPU backend.
 * KG_GPU_BUF_CPU set also trains the CPU bucket trainer at the same
 * settings and checks the buffer's MRR within 0.005 of it.
 *
 * With KG_GPU_BUF_BENCH=FILE it also measures (bench/gpu_device.sh) a
 * table 10 times the device's budget: FB15k-237 in P=40 partitions, the
 * budget a tenth of the entity table (rows and state), so C from it as
 * kg-train's --gpu_mem_budget takes it; positives per second of 2 epochs
 * through the buffer beside 2 with the whole table on the device, and the
 * uploads against the order's swaps and their lower bound, into FILE as
 * one JSON object.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../unit/test.h"
#include "gpu_open.h"
#include "../unit/devbuf_run.h"
#include "compute/backend.h"
#include "core/util.h"
#include "eval/eval.h"
#include "kge/modeldir.h"
#include "kge/train_device.h"

#define P 8
#define C 2
#define NTEST 5000

/* Names to IDs: open addressing over a power-of-two table. */
struct names {
	char **s;
	int32_t *slot;
	size_t n, cap;
};

static struct names ent, rel;
static int32_t *split[3];
static uint64_t nsplit[3];
static struct kg_backend *dev;
static struct kg_device dev_at;	/* dev's device, for the engine */
static const char *dev_name = "cuda";

static uint64_t
hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static int32_t
intern(struct names *nm, const char *s)
{
	size_t i;

	if (nm->cap == 0) {
		nm->cap = 1 << 16;
		nm->slot = kg_xmallocarray(nm->cap, sizeof(*nm->slot));
		nm->s = kg_xmallocarray(nm->cap / 2, sizeof(*nm->s));
		for (i = 0; i < nm->cap; i++)
			nm->slot[i] = -1;
	}
	for (i = hash(s) & (nm->cap - 1); nm->slot[i] >= 0;
	    i = (i + 1) & (nm->cap - 1))
		if (strcmp(nm->s[nm->slot[i]], s) == 0)
			return nm->slot[i];
	if (nm->n == nm->cap / 2)
		return -1;
	nm->s[nm->n] = kg_xstrdup(s);
	nm->slot[i] = (int32_t)nm->n;
	return (int32_t)nm->n++;
}

/* Split k from gzip -dc PATH: lines "h<TAB>r<TAB>t". */
static int
load_split(const char *path, int k)
{
	char *cmd = kg_xasprintf("gzip -dc '%s'", path), line[4096];
	FILE *f = popen(cmd, "r");
	size_t cap = 1 << 16;

	free(cmd);
	if (f == NULL)
		return -1;
	split[k] = kg_xmallocarray(3 * cap, sizeof(int32_t));
	while (fgets(line, sizeof(line), f) != NULL) {
		char *h = line, *r, *t;
		int32_t *x;

		line[strcspn(line, "\r\n")] = '\0';
		if ((r = strchr(h, '\t')) == NULL)
			continue;
		*r++ = '\0';
		if ((t = strchr(r, '\t')) == NULL)
			continue;
		*t++ = '\0';
		if (nsplit[k] == cap) {
			cap *= 2;
			split[k] = kg_xreallocarray(split[k], 3 * cap,
			    sizeof(int32_t));
		}
		x = split[k] + 3 * nsplit[k]++;
		x[0] = intern(&ent, h);
		x[1] = intern(&rel, r);
		x[2] = intern(&ent, t);
		if (x[0] < 0 || x[1] < 0 || x[2] < 0)
			break;
	}
	return pclose(f) == 0 && nsplit[k] > 0 ? 0 : -1;
}

static int
load_fb15k237(char **where)
{
	static const char *const names[3] = { "train", "valid", "test" };
	const char *data = getenv("KG_SHARED_DATA"), *top = getenv("KG_TOP");
	int k;

	*where = data != NULL && *data != '\0' ?
	    kg_xasprintf("%s/fb15k-237", data) :
	    kg_xasprintf("%s/../shared/data/fb15k-237", top ? top : ".");
	for (k = 0; k < 3; k++) {
		char *path = kg_xasprintf("%s/%s.txt.gz", *where, names[k]);
		int rc = access(path, R_OK) == 0 ? load_split(path, k) : -1;

		free(path);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* Filtered MRR (both sides, realistic ties) of the first NTEST test
 * triples, through lib/eval on every core. */
static double
test_mrr(const struct kg_trainer *tr)
{
	struct kg_triples sets[3], test;
	struct kg_filter filter = KG_FILTER_INIT;
	struct kg_modeldir md = KG_MODELDIR_INIT;
	struct kg_eval_opts eo = KG_EVAL_OPTS_INIT;
	struct kg_eval_ranks ranks = KG_EVAL_RANKS_INIT;
	struct kg_metrics m[3];
	int k;

	for (k = 0; k < 3; k++) {
		sets[k].n = nsplit[k];
		sets[k].hrt = split[k];
	}
	test.n = nsplit[2] < NTEST ? nsplit[2] : NTEST;
	test.hrt = split[2];
	kg_filter_build(&filter, sets, 3);
	md.model = tr->model;
	md.reciprocal = tr->o.reciprocal;
	md.n_entities = tr->n_entities;
	md.n_relations = tr->n_relations;
	md.n_rel_rows = tr->n_rel_rows;
	md.ents = tr->ents;
	md.relations = tr->rel;
	eo.filter = &filter;
	if (kg_eval_rank(&md, &test, &eo, &ranks) < 0)
		return -1.0;
	kg_eval_metrics(&ranks, &test, -1, KG_TIES_REALISTIC, m);
	kg_eval_ranks_release(&ranks);
	kg_filter_release(&filter);
	return kg_metrics_mrr(&m[2]);
}

/* A setting of at least lo from the environment, or dflt. */
static uint32_t
env_u32(const char *name, uint32_t lo, uint32_t dflt)
{
	const char *s = getenv(name);
	uint32_t v;

	if (s == NULL || *s == '\0' || kg_parse_u32(name, s, lo, 1u << 20,
	    &v) < 0)
		return dflt;
	return v;
}

/* ComplEx d=200, batch 1000, 200 negatives, 10 epochs (KG_GPU_BUF_DIM and
 * KG_GPU_BUF_EPOCHS change the two, for a smaller run on the CPU). */
static struct kg_train_opts
opts(void)
{
	struct kg_train_opts o = KG_TRAIN_OPTS_INIT;

	o.model = KG_MODEL_COMPLEX;
	o.dim = env_u32("KG_GPU_BUF_DIM", 1, 200);
	o.batch_size = 1000;
	o.neg_sample_size = 200;
	o.lr = 0.1;
	o.epochs = env_u32("KG_GPU_BUF_EPOCHS", 1, 10);
	o.threads = 0;
	o.neg_pool = env_u32("KG_GPU_BUF_POOL", 0, o.neg_pool);
	return o;
}

/*
 * KG_GPU_BUF_CPU set: the CPU bucket trainer (one thread) over the same
 * buckets, order and seed as the buffer's run, whose MRR was mb: within
 * 0.005, issue 31's bound for the same settings (on the CPU backend the
 * two run the same draws, and agree within rounding).
 */
static void
against_cpu(const struct kg_train_opts *o0, const struct devbuf_buckets *bk,
    const struct kg_store_layout *l, const struct kg_store_init *in,
    double mb)
{
	struct kg_train_opts o = *o0;
	struct kg_trainer c;
	struct kg_store *st;
	double t0 = kg_now(), mc;

	o.threads = 1;
	memset(&c, 0, sizeof(c));
	st = kg_store_open_mem(l, in);
	T_CHECK(st != NULL && kg_trainer_init_store(&c, &o, st, rel.n,
	    split[0], nsplit[0], NULL, 0, NULL, 0) == 0);
	c.bucket_chunks = 1;
	T_CHECK(devbuf_train(&c, bk, NULL, C, o.epochs, 0, 1, 0, NULL, NULL) ==
	    0);
	mc = test_mrr(&c);
	printf("# the CPU bucket trainer (one thread): MRR %.4f, %.0f "
	    "positives/s\n", mc, (double)nsplit[0] * o.epochs /
	    (kg_now() - t0));
	T_CHECKF(fabs(mb - mc) <= 0.005, "P=%u C=%u: MRR %.4f on the device, "
	    "%.4f on the CPU bucket trainer", P, C, mb, mc);
	kg_trainer_release(&c);
	kg_store_free(st);
}

static void
fb15k237_buffer(void)
{
	struct kg_train_opts o = opts();
	struct kg_trainer a, b;
	struct kg_store *st = NULL;
	struct kg_dev_trainer *dt;
	struct devbuf_buckets bk;
	struct kg_store_layout l;
	struct kg_store_init in;
	uint64_t done, swaps = 0, fills = 0, want = 0;
	double t0, ta, tb, ma, mb, tol = 0.01;
	const char *s = getenv("KG_GPU_BUF_TOL");
	uint32_t e;
	int rc = 0;

	if (s != NULL && *s != '\0')
		tol = atof(s);
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	/* The whole table on the device. */
	T_CHECK(kg_trainer_init(&a, &o, ent.n, rel.n, split[0], nsplit[0],
	    NULL, 0, NULL, 0) == 0);
	t0 = kg_now();
	dt = kg_dev_trainer_open(&a, dev);
	T_CHECK(dt != NULL);
	for (e = 0; dt != NULL && rc == 0 && e < o.epochs; e++)
		rc = kg_dev_trainer_epoch(dt, split[0], nsplit[0], &done);
	T_CHECK(rc == 0 && dt != NULL && kg_dev_trainer_download(dt) == 0);
	ta = kg_now() - t0;
	kg_dev_trainer_free(dt);
	/* P partitions, C of them on the device. */
	devbuf_cut(&bk, P, ent.n, split[0], nsplit[0]);
	l = kg_train_layout(&o, ent.n, P, bk.off);
	in = kg_train_init_rule(&o, KG_STREAM_BUCKET_ENTITY_INIT);
	st = kg_store_open_mem(&l, &in);
	T_CHECK(st != NULL && kg_trainer_init_store(&b, &o, st, rel.n,
	    split[0], nsplit[0], NULL, 0, NULL, 0) == 0);
	b.bucket_chunks = 1;
	t0 = kg_now();
	T_CHECK(devbuf_train(&b, &bk, &dev_at, C, o.epochs, 0, 1, 0, &swaps,
	    &fills) == 0);
	tb = kg_now() - t0;
	ma = test_mrr(&a);
	mb = test_mrr(&b);
	want = o.epochs * kg_order_swaps_formula(P, C);
	printf("# FB15k-237 ComplEx d=%u, %u epochs on %s: whole table MRR "
	    "%.4f, %.0f positives/s; P=%u C=%u MRR %.4f, %.0f positives/s, "
	    "%llu uploads (the order's %llu, at least %llu)\n", o.dim,
	    o.epochs, dev_name, ma, (double)nsplit[0] * o.epochs / ta, P, C,
	    mb, (double)nsplit[0] * o.epochs / tb, (unsigned long long)swaps,
	    (unsigned long long)want, (unsigned long long)(o.epochs *
	    kg_order_swaps_lower_bound(P, C)));
	T_CHECKF(fabs(ma - mb) <= tol, "P=%u C=%u: MRR %.4f against %.4f "
	    "with the whole table", P, C, mb, ma);
	T_CHECKF(swaps <= want && fills == C, "%llu uploads, %llu fills",
	    (unsigned long long)swaps, (unsigned long long)fills);
	if (getenv("KG_GPU_BUF_CPU") != NULL)
		against_cpu(&o, &bk, &l, &in, mb);
	kg_trainer_release(&a);
	kg_trainer_release(&b);
	kg_store_free(st);
}

static void
bench_10x(const char *path)
{
	struct kg_train_opts o = opts();
	struct kg_trainer a, b;
	struct kg_store *st = NULL;
	struct kg_dev_trainer *dt;
	struct devbuf_buckets bk;
	struct kg_store_layout l;
	struct kg_store_init in;
	uint64_t done, swaps = 0, fills = 0, most = 0, table;
	uint32_t p, cap = 0, e, np = 40;
	double t0, ta, tb;
	FILE *f;
	int rc = 0;

	o.epochs = 2;
	/* No pool unless asked: the default's 4096 slots a partition hold
	 * every row of these (about 360), three copies of the table on the
	 * device, which a table ten times the budget could not have. */
	o.neg_pool = env_u32("KG_GPU_BUF_POOL", 0, 0);
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	devbuf_cut(&bk, np, ent.n, split[0], nsplit[0]);
	for (p = 0; p < np; p++)
		if ((uint64_t)(bk.off[p + 1] - bk.off[p]) > most)
			most = (uint64_t)(bk.off[p + 1] - bk.off[p]);
	table = ent.n * (o.dim + 1) * sizeof(float);
	T_CHECK(kg_dev_tier_capacity(0, table / 10, np, most, o.dim, 1,
	    &cap) == 0);
	T_CHECK(kg_trainer_init(&a, &o, ent.n, rel.n, split[0], nsplit[0],
	    NULL, 0, NULL, 0) == 0);
	dt = kg_dev_trainer_open(&a, dev);
	T_CHECK(dt != NULL);
	t0 = kg_now();
	for (e = 0; dt != NULL && rc == 0 && e < o.epochs; e++)
		rc = kg_dev_trainer_epoch(dt, split[0], nsplit[0], &done);
	T_CHECK(rc == 0 && dt != NULL && kg_be_sync(dev) == 0);
	ta = kg_now() - t0;
	kg_dev_trainer_free(dt);
	l = kg_train_layout(&o, ent.n, np, bk.off);
	in = kg_train_init_rule(&o, KG_STREAM_BUCKET_ENTITY_INIT);
	st = kg_store_open_mem(&l, &in);
	T_CHECK(st != NULL && kg_trainer_init_store(&b, &o, st, rel.n,
	    split[0], nsplit[0], NULL, 0, NULL, 0) == 0);
	b.bucket_chunks = 1;
	t0 = kg_now();
	T_CHECK(cap >= 2 && devbuf_train(&b, &bk, &dev_at, cap, o.epochs, 0, 1,
	    0, &swaps, &fills) == 0);
	tb = kg_now() - t0;
	f = fopen(path, "w");
	T_CHECK(f != NULL);
	if (f != NULL) {
		fprintf(f, "{\"device\": \"%s\", \"model\": \"ComplEx\", "
		    "\"dim\": %u, \"epochs\": %u, \"entity_table_bytes\": "
		    "%llu, \"gpu_mem_budget\": %llu, \"partitions\": %u, "
		    "\"gpu_buffer_capacity\": %u, "
		    "\"in_memory_positives_per_second\": %.0f, "
		    "\"buffer_positives_per_second\": %.0f, "
		    "\"uploads\": %llu, \"order_swaps\": %llu, "
		    "\"swaps_lower_bound\": %llu}\n", kg_backend_name(dev),
		    o.dim, o.epochs, (unsigned long long)table,
		    (unsigned long long)(table / 10), np, cap,
		    (double)nsplit[0] * o.epochs / ta,
		    (double)nsplit[0] * o.epochs / tb,
		    (unsigned long long)swaps, (unsigned long long)(o.epochs *
		    kg_order_swaps_formula(np, cap)),
		    (unsigned long long)(o.epochs *
		    kg_order_swaps_lower_bound(np, cap)));
		T_CHECK(fclose(f) == 0);
	}
	printf("# a table 10x the budget: P=%u C=%u, %.0f positives/s "
	    "against %.0f in memory, %llu uploads (bound %llu)\n", np, cap,
	    (double)nsplit[0] * o.epochs / tb,
	    (double)nsplit[0] * o.epochs / ta, (unsigned long long)swaps,
	    (unsigned long long)(o.epochs *
	    kg_order_swaps_lower_bound(np, cap)));
	kg_trainer_release(&a);
	kg_trainer_release(&b);
	kg_store_free(st);
}

int
main(void)
{
	struct kg_device d = { .kind = KG_DEVICE_CUDA, .index = 0 };
	const char *want = getenv("KG_GPU_DEVICE");
	char *where = NULL;

	if (want != NULL && *want != '\0') {
		dev_name = want;
		if (kg_device_parse("KG_GPU_DEVICE", want, &d) < 0)
			return 1;
	}
	dev_at = d;
	dev = gpu_open("gpu_buf", &d);
	if (dev == NULL)
		return gpu_required();
	if (load_fb15k237(&where) < 0) {
		printf("# %s: no FB15k-237 there\n", where);
		printf("skip - gpu_buf: FB15k-237 not found\n");
		free(where);
		kg_backend_free(dev);
		return 0;
	}
	free(where);
	printf("# %s\n", kg_backend_name(dev));
	T_RUN(fb15k237_buffer);
	if (getenv("KG_GPU_BUF_BENCH") != NULL &&
	    *getenv("KG_GPU_BUF_BENCH") != '\0')
		bench_10x(getenv("KG_GPU_BUF_BENCH"));
	kg_backend_free(dev);
	return T_DONE();
}
