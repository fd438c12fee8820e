/*
 * model: names, dimensions, every score against the float64 reference
 * (kge_ref.h) and against values worked out by hand, and
 * kg_model_score_many against kg_model_score for every model, both sides
 * and several block shapes; model directories.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include <strings.h>
#include <sys/stat.h>

#include "compute/compute.h"
#include "io/manifest.h"
#include "kge/model.h"
#include "kge/modeldir.h"
#include "io/npy.h"
#include "core/util.h"
#include "kge/score.h"
#include "kge_ref.h"
#include "test.h"

static const enum kg_model_kind all_kinds[] = {
	KG_MODEL_TRANSE_L1, KG_MODEL_TRANSE_L2, KG_MODEL_DISTMULT,
	KG_MODEL_COMPLEX, KG_MODEL_ROTATE, KG_MODEL_RESCAL, KG_MODEL_TRANSR
};

static void
fill_normal(struct kg_rng *rng, float *x, size_t n, double scale)
{
	size_t i;

	for (i = 0; i < n; i++)
		x[i] = (float)(scale * kg_rng_normal(rng));
}

static int
close_rel(double a, double b, double rel)
{
	double scale = fmax(1.0, fmax(fabs(a), fabs(b)));

	return fabs(a - b) <= rel * scale;
}

static void
test_parse_names(void)
{
	enum kg_model_kind k;
	size_t i;

	for (i = 0; i < KG_ARRAY_LEN(all_kinds); i++) {
		T_CHECK(kg_model_parse(kg_model_name(all_kinds[i]), &k) == 0);
		T_CHECK(k == all_kinds[i]);
	}
	T_CHECK(kg_model_parse("transe", &k) == 0 &&
	    k == KG_MODEL_TRANSE_L2);
	T_CHECK(kg_model_parse("COMPLEX", &k) == 0 && k == KG_MODEL_COMPLEX);
	T_CHECK(kg_model_parse("transe_L1", &k) == 0 &&
	    k == KG_MODEL_TRANSE_L1);
	kg_error_mute(1);
	T_CHECK(kg_model_parse("TransH", &k) == -1);
	T_CHECK(strstr(kg_error_last(), "TransH") != NULL);
	T_CHECK(kg_model_parse("", &k) == -1);
	kg_error_mute(0);
}

static void
test_init(void)
{
	struct kg_model m;

	T_CHECK(kg_model_init(&m, KG_MODEL_TRANSE_L2, 8, 0, 12.0f) == 0);
	T_CHECK(m.rel_width == 8 && m.rel_dim == 8 && m.gamma == 12.0f);
	T_CHECK(kg_model_init(&m, KG_MODEL_COMPLEX, 8, 0, 0) == 0);
	T_CHECK(m.rel_width == 8);
	T_CHECK(kg_model_init(&m, KG_MODEL_ROTATE, 8, 0, 6) == 0);
	T_CHECK(m.rel_width == 4);
	T_CHECK(kg_model_init(&m, KG_MODEL_RESCAL, 8, 0, 0) == 0);
	T_CHECK(m.rel_width == 64);
	T_CHECK(kg_model_init(&m, KG_MODEL_TRANSR, 8, 3, 1) == 0);
	T_CHECK(m.rel_dim == 3 && m.rel_width == 3 + 3 * 8);
	T_CHECK(kg_model_init(&m, KG_MODEL_TRANSR, 8, 0, 1) == 0);
	T_CHECK(m.rel_dim == 8 && m.rel_width == 8 + 64);
	/* rel_dim is TransR's alone. */
	T_CHECK(kg_model_init(&m, KG_MODEL_DISTMULT, 8, 5, 0) == 0);
	T_CHECK(m.rel_dim == 8 && m.rel_width == 8);
	kg_error_mute(1);
	T_CHECK(kg_model_init(&m, KG_MODEL_COMPLEX, 7, 0, 0) == -1);
	T_CHECK(strstr(kg_error_last(), "even") != NULL);
	T_CHECK(kg_model_init(&m, KG_MODEL_ROTATE, 5, 0, 0) == -1);
	T_CHECK(kg_model_init(&m, KG_MODEL_DISTMULT, 0, 0, 0) == -1);
	T_CHECK(kg_model_init(&m, KG_MODEL_TRANSE_L1, 4, 0, NAN) == -1);
	T_CHECK(kg_model_init(&m, KG_MODEL_RESCAL, 70000, 0, 0) == -1);
	kg_error_mute(0);
}

/* Hand-computed values, so that a shared misreading of a formula in both
 * the model and the reference cannot pass. */
static void
test_known_values(void)
{
	struct kg_model m;
	float h[4] = { 1, 2, 3, 4 }, r[4] = { 0.5f, -1, 2, 0 };
	float t[4] = { 0, 1, -1, 2 };
	float rot[2] = { (float)M_PI / 2, 0 };
	float rescal[4] = { 1, 2, 3, 4 }, th[2] = { 1, -1 }, tt[2] = { 2, 1 };
	float transr[2 + 4] = { 1, 0, 1, 0, 0, 2 };

	kg_model_init(&m, KG_MODEL_TRANSE_L1, 4, 0, 10);
	/* h + r - t = (1.5, 0, 6, 2) */
	T_NEAR(kg_model_score(&m, h, r, t), 10 - 9.5, 1e-6);
	kg_model_init(&m, KG_MODEL_TRANSE_L2, 4, 0, 10);
	T_NEAR(kg_model_score(&m, h, r, t), 10 - sqrt(2.25 + 36 + 4), 1e-5);
	kg_model_init(&m, KG_MODEL_DISTMULT, 4, 0, 0);
	/* 1*.5*0 + 2*-1*1 + 3*2*-1 + 4*0*2 */
	T_NEAR(kg_model_score(&m, h, r, t), -8, 1e-6);
	kg_model_init(&m, KG_MODEL_COMPLEX, 4, 0, 0);
	/* h = (1+3i, 2+4i), r = (.5+2i, -1), t = (0-i, 1+2i):
	 * h r = (-5.5+3.5i, -2-4i); times conj(t) = (-3.5-5.5i, -10+0i). */
	T_NEAR(kg_model_score(&m, h, r, t), -13.5, 1e-5);
	kg_model_init(&m, KG_MODEL_ROTATE, 4, 0, 5);
	/* h o r = (i(1+3i), 2+4i) = (-3+i, 2+4i); minus t = (-3+2i, 1+2i) */
	T_NEAR(kg_model_score(&m, h, rot, t), 5 - (sqrt(13) + sqrt(5)), 1e-5);
	kg_model_init(&m, KG_MODEL_RESCAL, 2, 0, 0);
	/* (1, -1) [[1 2] [3 4]] (2, 1)^T = (-2, -2) . (2, 1) = -6 */
	T_NEAR(kg_model_score(&m, th, rescal, tt), -6, 1e-6);
	kg_model_init(&m, KG_MODEL_TRANSR, 2, 2, 3);
	/* M = [[1 0] [0 2]], r = (1, 0): M(h - t) + r = (-1+1, -4) */
	T_NEAR(kg_model_score(&m, th, transr, tt), 3 - 4, 1e-6);
}

static void
init_kind(struct kg_model *m, enum kg_model_kind kind, uint32_t dim)
{
	float gamma = kind == KG_MODEL_TRANSE_L1 || kind == KG_MODEL_ROTATE ||
	    kind == KG_MODEL_TRANSE_L2 || kind == KG_MODEL_TRANSR ? 9.0f : 0.0f;

	if (kg_model_init(m, kind, dim, kind == KG_MODEL_TRANSR ? 5 : 0,
	    gamma) < 0)
		abort();
}

static void
test_score_vs_reference(void)
{
	struct kg_rng rng;
	size_t i, trial;

	kg_rng_seed(&rng, 7, 0);
	for (i = 0; i < KG_ARRAY_LEN(all_kinds); i++) {
		struct kg_model m;
		float *h, *r, *t;

		init_kind(&m, all_kinds[i], 12);
		h = kg_xmalloc(m.dim * sizeof(float));
		t = kg_xmalloc(m.dim * sizeof(float));
		r = kg_xmalloc(m.rel_width * sizeof(float));
		for (trial = 0; trial < 50; trial++) {
			double want, got;

			fill_normal(&rng, h, m.dim, 0.5);
			fill_normal(&rng, t, m.dim, 0.5);
			fill_normal(&rng, r, m.rel_width, 0.5);
			want = kge_ref_score_f(&m, h, r, t);
			got = kg_model_score(&m, h, r, t);
			T_CHECKF(close_rel(got, want, 1e-5),
			    "%s: %.8g vs %.8g", kg_model_name(m.kind), got,
			    want);
		}
		free(h);
		free(r);
		free(t);
	}
}

/*
 * score_many on nq queries x nc candidates against kg_model_score.  With
 * "shared_rel", queries come in runs with equal relation rows (TransR
 * shares candidate projections across a run).
 */
static void
check_many(enum kg_model_kind kind, uint32_t dim, size_t nq, size_t nc,
    int shared_rel, uint64_t seed)
{
	struct kg_model m;
	struct kg_rng rng;
	float *fixed, *rel, *cand, *out, *work;
	size_t i, j, bad = 0;
	int side;

	init_kind(&m, kind, dim);
	kg_rng_seed(&rng, seed, kind);
	fixed = kg_xmallocarray(nq * m.dim, sizeof(float));
	rel = kg_xmallocarray(nq * m.rel_width, sizeof(float));
	cand = kg_xmallocarray(nc * m.dim, sizeof(float));
	out = kg_xmallocarray(nq * nc, sizeof(float));
	work = kg_xmallocarray(kg_model_score_work_size(&m, nq, nc) + 1,
	    sizeof(float));
	for (side = 0; side < 2; side++) {
		fill_normal(&rng, fixed, nq * m.dim, 0.4);
		fill_normal(&rng, cand, nc * m.dim, 0.4);
		fill_normal(&rng, rel, nq * m.rel_width, 0.4);
		if (shared_rel)
			for (i = 1; i < nq; i++)
				if (i % 3 != 0)
					memcpy(rel + i * m.rel_width,
					    rel + (i - 1) * m.rel_width,
					    m.rel_width * sizeof(float));
		/* A canary after the work area must survive. */
		work[kg_model_score_work_size(&m, nq, nc)] = 1234.5f;
		kg_model_score_many(&m, (enum kg_side)side, nq, fixed, rel,
		    cand, nc, out, work);
		T_CHECK(work[kg_model_score_work_size(&m, nq, nc)] == 1234.5f);
		for (i = 0; i < nq; i++) {
			for (j = 0; j < nc; j++) {
				const float *f = fixed + i * m.dim;
				const float *r = rel + i * m.rel_width;
				const float *c = cand + j * m.dim;
				float want = side == KG_SIDE_TAIL ?
				    kg_model_score(&m, f, r, c) :
				    kg_model_score(&m, c, r, f);
				float got = out[i * nc + j];

				if (!close_rel(got, want, 1e-4) && bad++ < 5)
					fprintf(stderr, "%s side %d [%zu,%zu]: "
					    "%.8g vs %.8g\n",
					    kg_model_name(kind), side, i, j,
					    got, want);
			}
		}
	}
	T_CHECKF(bad == 0, "%s dim %u %zux%zu: %zu mismatches",
	    kg_model_name(kind), dim, nq, nc, bad);
	free(fixed);
	free(rel);
	free(cand);
	free(out);
	free(work);
}

static void
test_many_vs_single(void)
{
	size_t i;

	for (i = 0; i < KG_ARRAY_LEN(all_kinds); i++) {
		check_many(all_kinds[i], 16, 9, 23, 0, 1);
		check_many(all_kinds[i], 16, 10, 17, 1, 2);
		check_many(all_kinds[i], 2, 1, 1, 0, 3);
		check_many(all_kinds[i], 64, 33, 70, 0, 4);
	}
}

/* Identical candidates must get bit-identical scores (ties are then
 * real ties in ranking), and a query's distance to itself is gamma. */
static void
test_many_exact_ties(void)
{
	struct kg_model m;
	float fixed[8] = { 0 }, rel[8] = { 0 }, cand[3 * 8] = { 0 };
	float out[3], work[64];
	size_t i;

	for (i = 0; i < KG_ARRAY_LEN(all_kinds); i++) {
		init_kind(&m, all_kinds[i], 4);
		if (m.rel_width > 8)
			continue;
		kg_model_score_many(&m, KG_SIDE_TAIL, 1, fixed, rel, cand, 3,
		    out, work);
		T_CHECK(out[0] == out[1] && out[1] == out[2]);
		T_CHECK(out[0] == m.gamma || m.gamma == 0.0f);
	}
}

/* Write a model dir as kg-train would; returns its path (static). */
static const char *
write_modeldir(const char *name, const struct kg_model *m, int recip,
    uint64_t ne, uint64_t nr, const float *ent, const float *rel)
{
	static char dir[600];
	struct kg_manifest man;
	char *argv[] = { "kg-train", NULL };
	int rc;

	snprintf(dir, sizeof(dir), "%s/%s", t_tmpdir(), name);
	mkdir(dir, 0755);
	kg_setprogname("kg-train");
	kg_manifest_init(&man, 1, argv);
	rc = kg_modeldir_write(dir, m, recip, ne, nr, ent, rel, "/data/x",
	    &man);
	if (rc == 0)
		rc = kg_manifest_write(&man, dir);
	kg_manifest_release(&man);
	kg_setprogname("t_model");
	return rc == 0 ? dir : NULL;
}

static void
test_modeldir_roundtrip(void)
{
	struct kg_model m;
	struct kg_modeldir md;
	struct kg_rng rng;
	float ent[5 * 6], rel[2 * 3 * (3 + 3 * 6)];
	const char *dir;
	json_t *v;

	kg_rng_seed(&rng, 1, 0);
	fill_normal(&rng, ent, KG_ARRAY_LEN(ent), 1);
	fill_normal(&rng, rel, KG_ARRAY_LEN(rel), 1);
	T_CHECK(kg_model_init(&m, KG_MODEL_TRANSR, 6, 3, 7.5f) == 0);
	dir = write_modeldir("transr", &m, 1, 5, 3, ent, rel);
	T_CHECK(dir != NULL);
	T_CHECK(kg_modeldir_load(&md, dir) == 0);
	T_CHECK(md.model.kind == KG_MODEL_TRANSR && md.model.dim == 6 &&
	    md.model.rel_dim == 3 && md.model.rel_width == 21);
	T_CHECK(md.model.gamma == 7.5f && md.reciprocal == 1);
	T_CHECK(md.n_entities == 5 && md.n_relations == 3 &&
	    md.n_rel_rows == 6);
	T_CHECK(memcmp(md.entities, ent, sizeof(ent)) == 0);
	T_CHECK(memcmp(md.relations, rel, sizeof(rel)) == 0);
	v = kg_manifest_get(&md.manifest, "config.dataset");
	T_CHECK(json_is_string(v) && strcmp(json_string_value(v),
	    "/data/x") == 0);
	T_CHECK(json_object_get(kg_manifest_get(&md.manifest, "files"),
	    "entities.npy") != NULL);
	kg_modeldir_release(&md);
	T_CHECK(md.entities == NULL && md.manifest.root == NULL);

	/* The same arrays as foreign embeddings: rel_dim from the width. */
	{
		char *ep = kg_path_join(dir, "entities.npy");
		char *rp = kg_path_join(dir, "relations.npy");

		T_CHECK(kg_modeldir_from_arrays(&md, ep, rp, "transr", 7.5f,
		    1) == 0);
		T_CHECK(md.model.rel_dim == 3 && md.n_relations == 3 &&
		    md.manifest.root == NULL);
		T_CHECK(memcmp(md.relations, rel, sizeof(rel)) == 0);
		kg_modeldir_release(&md);
		T_CHECK(kg_modeldir_from_arrays(&md, ep, rp, "TransR", 1,
		    0) == 0);
		T_CHECK(md.n_relations == 6 && md.reciprocal == 0);
		kg_modeldir_release(&md);
		kg_error_mute(1);
		T_CHECK(kg_modeldir_from_arrays(&md, ep, rp, "DistMult", 0,
		    0) == -1);
		T_CHECK(strstr(kg_error_last(), "needs 6") != NULL);
		T_CHECK(kg_modeldir_from_arrays(&md, ep, rp, "Bogus", 0,
		    0) == -1);
		T_CHECK(kg_modeldir_from_arrays(&md, rp, ep, "TransR", 0,
		    0) == -1);
		T_CHECK(kg_modeldir_from_arrays(&md, ep, "/nonexistent.npy",
		    "TransR", 0, 0) == -1);
		kg_error_mute(0);
		free(ep);
		free(rp);
	}
}

static void
test_modeldir_bad(void)
{
	struct kg_model m;
	struct kg_modeldir md;
	float ent[4 * 4] = { 0 }, rel[3 * 4] = { 0 };
	const char *dir;
	char *path;
	uint64_t shape[2] = { 3, 4 };

	kg_model_init(&m, KG_MODEL_DISTMULT, 4, 0, 0);
	kg_error_mute(1);
	/* NaN in the entities. */
	ent[4 * 2 + 1] = NAN;
	dir = write_modeldir("nan", &m, 0, 4, 3, ent, rel);
	T_CHECK(kg_modeldir_load(&md, dir) == -1);
	T_CHECKF(strstr(kg_error_last(), "row 2, column 1 is nan") != NULL,
	    "%s", kg_error_last());
	ent[4 * 2 + 1] = 0;
	rel[11] = INFINITY;
	dir = write_modeldir("inf", &m, 0, 4, 3, ent, rel);
	T_CHECK(kg_modeldir_load(&md, dir) == -1);
	T_CHECK(strstr(kg_error_last(), "infinite") != NULL);
	rel[11] = 0;
	/* relations.npy replaced behind the manifest's back. */
	dir = write_modeldir("swapped", &m, 0, 4, 3, ent, rel);
	path = kg_path_join(dir, "relations.npy");
	shape[0] = 2;
	T_CHECK(kg_npy_write(path, KG_DT_F4, 2, shape, rel) == 0);
	T_CHECK(kg_modeldir_load(&md, dir) == -1);
	free(path);
	/* Reciprocal: 2 * n_relations rows. */
	dir = write_modeldir("recip", &m, 1, 4, 1, ent, rel);
	T_CHECK(dir != NULL);
	T_CHECK(kg_modeldir_load(&md, dir) == 0);
	T_CHECK(md.n_rel_rows == 2);
	kg_modeldir_release(&md);
	T_CHECK(kg_modeldir_load(&md, t_tmpdir()) == -1);
	T_CHECK(kg_modeldir_load(&md, "/nonexistent/dir") == -1);
	kg_error_mute(0);
}

/* The OpenBLAS kernel hint never second-guesses an explicit choice, and
 * only replaces the generic fallback. */
static void
test_blas_core(void)
{
	const char *old = getenv("OPENBLAS_CORETYPE");
	char *saved = old ? kg_xstrdup(old) : NULL;
	const char *core;

	setenv("OPENBLAS_CORETYPE", "Haswell", 1);
	T_CHECK(kg_compute_better_core() == NULL);
	unsetenv("OPENBLAS_CORETYPE");
	core = kg_compute_better_core();
	if (core != NULL) {
		T_CHECK(strcmp(core, "SkylakeX") == 0 ||
		    strcmp(core, "Haswell") == 0);
		T_CHECK(strcasecmp(kg_compute_name(), "openblas:prescott") == 0);
	}
	if (saved != NULL)
		setenv("OPENBLAS_CORETYPE", saved, 1);
	free(saved);
}

int
main(void)
{
	T_RUN(test_parse_names);
	T_RUN(test_init);
	T_RUN(test_known_values);
	T_RUN(test_score_vs_reference);
	T_RUN(test_many_vs_single);
	T_RUN(test_many_exact_ties);
	T_RUN(test_modeldir_roundtrip);
	T_RUN(test_modeldir_bad);
	T_RUN(test_blas_core);
	return T_DONE();
}
