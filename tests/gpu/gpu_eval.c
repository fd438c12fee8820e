/*
 * The device ranker (lib/eval/eval_device.h) on a GPU against the CPU
 * evaluator (lib/eval/eval.h's kg_eval_rank, every thread): filtered
 * ranking of the test split, both sides, on FB15k-237 (from
 * $KG_GPU_DATA, gpu-carry/data/fb15k-237 or ../shared/data/fb15k-237;
 * the bundled UMLS when none is there) with seeded random tables.
 *
 *   exact: tables in {-1, 0, 1} (d = 8), where every score is exact in
 *     any summation order, so the ranks, thousands of ties among them,
 *     must be equal one for one: every model but RotatE (whose moduli
 *     are square roots);
 *   close: Gaussian tables (DistMult and TransE_l2 at d = 400, the
 *     others on UMLS), where the GPU sums in other orders: at most 0.1%
 *     of the ranks may differ, and the MRR of each tie policy by at most
 *     1e-4.
 *
 * Each case prints the seconds of the device ranking (the second of two
 * runs: tables uploaded, every block ranked, counts read back) beside the
 * CPU's; bench/gpu_device.sh collects the "# eval" lines.  Without a GPU
 * it prints one skip line saying why (a failed test under
 * KG_GPU_REQUIRE: gpu_open.h); KG_GPU_DEVICE=cpu runs it on the
 * CPU backend (where "close" holds exactly).
 *
 * Like gpu_train it links no more than the GPU machine has: the splits
 * are read through gzip -dc.
 */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/test.h"
#include "gpu_open.h"
#include "compute/backend.h"
#include "core/rng.h"
#include "core/util.h"
#include "eval/eval.h"
#include "eval/eval_device.h"
#include "io/dict.h"
#include "kge/model.h"
#include "kge/modeldir.h"

static struct kg_dict ents, rels;
static struct kg_triples split[3];
static struct kg_filter filter = KG_FILTER_INIT;
static const char *data_name;
static struct kg_backend *dev;
static const char *dev_name = "cuda";

/* Split k from gzip -dc PATH: lines "h<TAB>r<TAB>t". */
static int
load_split(const char *path, int k)
{
	char *cmd = kg_xasprintf("gzip -dc '%s' 2>/dev/null", path);
	char line[4096];
	FILE *f = popen(cmd, "r");
	size_t cap = 1024;
	int32_t *hrt;
	int rc = 0;

	free(cmd);
	if (f == NULL)
		return -1;
	hrt = kg_xmallocarray(3 * cap, sizeof(int32_t));
	split[k].n = 0;
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
		if (split[k].n == cap) {
			cap *= 2;
			hrt = kg_xreallocarray(hrt, 3 * cap, sizeof(int32_t));
		}
		x = hrt + 3 * split[k].n++;
		x[0] = (int32_t)kg_dict_intern(&ents, h, strlen(h), NULL);
		x[1] = (int32_t)kg_dict_intern(&rels, r, strlen(r), NULL);
		x[2] = (int32_t)kg_dict_intern(&ents, t, strlen(t), NULL);
		if (x[0] < 0 || x[1] < 0 || x[2] < 0)
			rc = -1;
	}
	if (pclose(f) != 0 || split[k].n == 0)
		rc = -1;
	split[k].hrt = hrt;
	return rc;
}

/* The first of the data folders that loads; 0 or -1. */
static int
load_data(void)
{
	static const char *const names[3] = { "train", "valid", "test" };
	const char *top = getenv("KG_TOP"), *env = getenv("KG_GPU_DATA");
	char *dirs[4];
	int i, k, rc = -1;

	top = top ? top : ".";
	dirs[0] = env && *env ? kg_xstrdup(env) : NULL;
	dirs[1] = kg_xasprintf("%s/gpu-carry/data/fb15k-237", top);
	dirs[2] = kg_xasprintf("%s/../shared/data/fb15k-237", top);
	dirs[3] = kg_xasprintf("%s/examples/data/umls", top);
	for (i = 0; i < 4 && rc < 0; i++) {
		if (dirs[i] == NULL)
			continue;
		kg_dict_release(&ents);
		kg_dict_release(&rels);
		for (k = 0, rc = 0; k < 3 && rc == 0; k++) {
			char *p = kg_xasprintf("%s/%s.txt.gz", dirs[i],
			    names[k]);

			rc = load_split(p, k);
			free(p);
		}
		if (rc == 0)
			data_name = i == 3 ? "UMLS" : "FB15k-237";
	}
	for (i = 0; i < 4; i++)
		free(dirs[i]);
	if (rc == 0)
		kg_filter_build(&filter, split, 3);
	return rc;
}

/* A model over seeded tables: {-1, 0, 1} or N(0, s^2). */
static void
md_make(struct kg_modeldir *md, enum kg_model_kind kind, uint32_t dim,
    int integers, float **ent, float **rel)
{
	struct kg_rng rng;
	size_t i, ne, nr;
	float s = 1.0f / sqrtf((float)dim);

	*md = (struct kg_modeldir)KG_MODELDIR_INIT;
	if (kg_model_init(&md->model, kind, dim,
	    kind == KG_MODEL_TRANSR ? dim / 2 : 0, 6.0f) < 0)
		abort();
	md->n_entities = ents.n;
	md->n_relations = rels.n;
	md->n_rel_rows = rels.n;
	ne = ents.n * dim;
	nr = rels.n * md->model.rel_width;
	*ent = kg_xmallocarray(ne + 1, sizeof(float));
	*rel = kg_xmallocarray(nr + 1, sizeof(float));
	kg_rng_seed(&rng, 41, (uint64_t)kind);
	for (i = 0; i < ne + nr; i++) {
		float x = integers ? (float)((int)kg_rng_below(&rng, 3) - 1) :
		    s * (float)kg_rng_normal(&rng);

		if (i < ne)
			(*ent)[i] = x;
		else
			(*rel)[i - ne] = x;
	}
	md->entities = *ent;
	md->relations = *rel;
}

/*
 * Rank md on the CPU and on the device; the ranks that differ into
 * *ndiff, the largest MRR difference over the tie policies into *dmrr,
 * the tied candidates of the CPU's ranks into *tied.  0 or -1.
 */
static int
compare(const struct kg_modeldir *md, uint64_t *ndiff, double *dmrr,
    uint64_t *tied)
{
	static const enum kg_ties ties[] = { KG_TIES_REALISTIC,
	    KG_TIES_OPTIMISTIC, KG_TIES_PESSIMISTIC };
	struct kg_eval_opts o = KG_EVAL_OPTS_INIT;
	struct kg_eval_ranks a, b;
	struct kg_metrics ma[3], mb[3];
	double t0, t1, t2, t3;
	uint64_t i;
	size_t t;
	int side;

	o.filter = &filter;
	t0 = kg_now();
	if (kg_eval_rank(md, &split[2], &o, &a) < 0)
		return -1;
	t1 = kg_now();
	/* The first run loads cuBLAS's kernels; time the second. */
	if (kg_eval_rank_device(dev, md, &split[2], &o, &b) < 0)
		return -1;
	kg_eval_ranks_release(&b);
	t2 = kg_now();
	if (kg_eval_rank_device(dev, md, &split[2], &o, &b) < 0)
		return -1;
	t3 = kg_now();
	*ndiff = *tied = 0;
	*dmrr = 0.0;
	for (side = 0; side < 2; side++)
		for (i = 0; i < split[2].n; i++) {
			*tied += a.pess[side][i] - a.opt[side][i];
			*ndiff += a.opt[side][i] != b.opt[side][i] ||
			    a.pess[side][i] != b.pess[side][i];
		}
	for (t = 0; t < KG_ARRAY_LEN(ties); t++) {
		kg_eval_metrics(&a, &split[2], -1, ties[t], ma);
		kg_eval_metrics(&b, &split[2], -1, ties[t], mb);
		if (fabs(kg_metrics_mrr(&ma[2]) - kg_metrics_mrr(&mb[2])) >
		    *dmrr)
			*dmrr = fabs(kg_metrics_mrr(&ma[2]) -
			    kg_metrics_mrr(&mb[2]));
	}
	printf("# eval %s %s d=%u: %.4f s on %s, %.4f s on the CPU (%d "
	    "threads); %llu of %llu ranks differ, MRR %.6f against %.6f\n",
	    data_name, kg_model_name(md->model.kind), md->model.dim, t3 - t2,
	    dev_name, t1 - t0, omp_get_max_threads(),
	    (unsigned long long)*ndiff, (unsigned long long)(2 * split[2].n),
	    kg_metrics_mrr(&mb[2]), kg_metrics_mrr(&ma[2]));
	fflush(stdout);
	kg_eval_ranks_release(&a);
	kg_eval_ranks_release(&b);
	return 0;
}

static void
exact_ranks(void)
{
	static const enum kg_model_kind kinds[] = { KG_MODEL_TRANSE_L1,
	    KG_MODEL_TRANSE_L2, KG_MODEL_DISTMULT, KG_MODEL_COMPLEX,
	    KG_MODEL_RESCAL, KG_MODEL_TRANSR };
	uint64_t tied = 0;
	size_t k;

	for (k = 0; k < KG_ARRAY_LEN(kinds); k++) {
		struct kg_modeldir md;
		float *ent, *rel;
		uint64_t nd, t;
		double dm;

		md_make(&md, kinds[k], 8, 1, &ent, &rel);
		T_CHECK(compare(&md, &nd, &dm, &t) == 0);
		T_CHECKF(nd == 0, "%s: %llu ranks differ",
		    kg_model_name(kinds[k]), (unsigned long long)nd);
		tied += t;
		free(ent);
		free(rel);
	}
	T_CHECKF(tied > 100000, "only %llu tied candidates",
	    (unsigned long long)tied);
}

static void
close_ranks(void)
{
	static const struct {
		enum kg_model_kind kind;
		uint32_t dim;
		int big;	/* on FB15k-237 too */
	} cases[] = {
		{ KG_MODEL_DISTMULT, 400, 1 },
		{ KG_MODEL_TRANSE_L2, 400, 1 },
		{ KG_MODEL_TRANSE_L1, 64, 0 },
		{ KG_MODEL_COMPLEX, 64, 0 },
		{ KG_MODEL_ROTATE, 64, 0 },
		{ KG_MODEL_RESCAL, 32, 0 },
		{ KG_MODEL_TRANSR, 64, 0 },
	};
	int umls = strcmp(data_name, "UMLS") == 0;
	size_t k;

	for (k = 0; k < KG_ARRAY_LEN(cases); k++) {
		struct kg_modeldir md;
		float *ent, *rel;
		uint64_t nd, t;
		double dm;

		if (!cases[k].big && !umls)
			continue;
		md_make(&md, cases[k].kind, cases[k].dim, 0, &ent, &rel);
		T_CHECK(compare(&md, &nd, &dm, &t) == 0);
		T_CHECKF(nd * 1000 <= 2 * split[2].n, "%s: %llu ranks differ",
		    kg_model_name(cases[k].kind), (unsigned long long)nd);
		T_CHECKF(dm <= 1e-4, "%s: MRR %.6f apart",
		    kg_model_name(cases[k].kind), dm);
		free(ent);
		free(rel);
	}
}

int
main(void)
{
	struct kg_device d = { .kind = KG_DEVICE_CUDA, .index = 0 };
	const char *want = getenv("KG_GPU_DEVICE");

	if (want != NULL && *want != '\0') {
		dev_name = want;
		if (kg_device_parse("KG_GPU_DEVICE", want, &d) < 0)
			return 1;
	}
	dev = gpu_open("gpu_eval", &d);
	if (dev == NULL)
		return gpu_required();
	if (load_data() < 0) {
		printf("not ok - gpu_eval: no FB15k-237 nor UMLS data\n");
		return 1;
	}
	printf("# %s; %s: %llu entities, %llu test triples\n",
	    kg_backend_name(dev), data_name, (unsigned long long)ents.n,
	    (unsigned long long)split[2].n);
	T_RUN(exact_ranks);
	T_RUN(close_ranks);
	kg_backend_free(dev);
	return T_DONE();
}
