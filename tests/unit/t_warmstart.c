/*
 * Unit tests for lib/kge/warmstart: the neighbour guess against the
 * scoring module (a guessed tail or head scores gamma, distance zero),
 * and kg_warmstart_apply on two small datasets that share some names in
 * another order: rows matched by name, counts, the neighbour mean, the
 * random fallback equal to the trainer's own draw, and the refusals.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "app/ingest_run.h"
#include "core/rng.h"
#include "core/util.h"
#include "io/dataset.h"
#include "io/manifest.h"
#include "kge/modeldir.h"
#include "kge/score.h"
#include "kge/warmstart.h"
#include "test.h"

static void
fill(struct kg_rng *rng, float *x, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		x[i] = (float)(kg_rng_uniform(rng) * 2.0 - 1.0);
}

/* The guessed tail of (h, r, ?) and head of (?, r, t) are exactly what
 * the model's own query gives, so they score gamma. */
static void
t_guess_solves_the_score(void)
{
	static const enum kg_model_kind kinds[] = { KG_MODEL_TRANSE_L1,
	    KG_MODEL_TRANSE_L2, KG_MODEL_ROTATE };
	struct kg_model m;
	struct kg_rng rng;
	float h[8], r[8], g[8], q[8];
	size_t k, i;

	kg_rng_seed(&rng, 3, 0);
	for (k = 0; k < KG_ARRAY_LEN(kinds); k++) {
		T_CHECK(kg_model_init(&m, kinds[k], 8, 0, 6.0f) == 0);
		fill(&rng, h, 8);
		fill(&rng, r, m.rel_width);
		T_CHECK(kg_warmstart_guess(&m, h, r, 1, g) == 1);
		kg_score_query(&m, KG_SIDE_TAIL, h, r, q);
		for (i = 0; i < 8; i++)
			T_NEAR(g[i], q[i], 1e-6);
		T_CHECK(kg_warmstart_guess(&m, h, r, 0, g) == 1);
		kg_score_query(&m, KG_SIDE_HEAD, h, r, q);
		for (i = 0; i < 8; i++)
			T_NEAR(g[i], q[i], 1e-6);
		T_CHECK(kg_warmstart_guess(&m, h, NULL, 1, g) == 0);
	}
	/* A model without an inverse: the neighbour itself. */
	T_CHECK(kg_model_init(&m, KG_MODEL_DISTMULT, 8, 0, 6.0f) == 0);
	T_CHECK(kg_warmstart_guess(&m, h, NULL, 1, g) == 1);
	T_CHECK(memcmp(g, h, sizeof(h)) == 0);
}

static void
t_options(void)
{
	struct kg_warmstart_opts o = KG_WARMSTART_OPTS_INIT;
	enum kg_init_new n;

	kg_error_mute(1);
	T_CHECK(kg_warmstart_parse_init_new("zero", &n) == 0 &&
	    n == KG_INIT_NEW_ZERO);
	T_CHECK(kg_warmstart_parse_init_new("random", &n) == 0 &&
	    n == KG_INIT_NEW_RANDOM);
	T_CHECK(kg_warmstart_parse_init_new("neighbours", &n) == 0 &&
	    n == KG_INIT_NEW_NEIGHBOURS);
	T_CHECK(kg_warmstart_parse_init_new("mean", &n) < 0);
	T_CHECK(kg_warmstart_check(&o) == 0);
	o.no_train = 1;
	T_CHECK(kg_warmstart_check(&o) < 0);
	o.init_from = "m";
	T_CHECK(kg_warmstart_check(&o) == 0);
	o.init_entities = "e.npy";
	T_CHECK(kg_warmstart_check(&o) < 0);
	o.init_entities = NULL;
	o.freeze_old = 1;
	o.freeze_relations = 1;
	T_CHECK(kg_warmstart_check(&o) == 0);
	o.init_from = NULL;
	o.no_train = 0;
	T_CHECK(kg_warmstart_check(&o) < 0);
	o.init_entities = "e.npy";
	T_CHECK(kg_warmstart_check(&o) < 0);	/* no relations given */
	o.freeze_relations = 0;
	T_CHECK(kg_warmstart_check(&o) == 0);
	o.init_entities = NULL;
	T_CHECK(kg_warmstart_check(&o) < 0);	/* nothing to freeze */
	kg_error_mute(0);
}

/* A dataset from TSV text, in dir NAME under the scratch dir. */
static const char *
dataset(const char *name, const char *tsv)
{
	static char dirs[4][600];
	static int k;
	struct kg_ingest_opts o = KG_INGEST_OPTS_INIT;
	char *argv[] = { "kg-ingest", NULL };
	char *in = kg_xasprintf("%s/%s.tsv", t_tmpdir(), name);
	char *dir = dirs[k++ % 4];
	FILE *f = fopen(in, "w");
	int rc;

	fputs(tsv, f);
	fclose(f);
	snprintf(dir, 600, "%s/%s", t_tmpdir(), name);
	o.train = in;
	o.output = dir;
	o.argc = 1;
	o.argv = argv;
	o.quiet = 1;
	kg_setprogname("kg-ingest");
	rc = kg_ingest_run(&o);
	kg_setprogname("t_warmstart");
	free(in);
	return rc == 0 ? dir : NULL;
}

/* A TransE_l2 model dir of dim 4 for dataset ds, rows from seed 9. */
static const char *
model(const char *name, const char *ds, uint64_t ne, uint64_t nr,
    float *ent, float *rel)
{
	static char dir[600];
	struct kg_manifest man;
	struct kg_model m;
	struct kg_rng rng;
	char *argv[] = { "kg-train", NULL };
	int rc;

	kg_rng_seed(&rng, 9, 0);
	fill(&rng, ent, ne * 4);
	fill(&rng, rel, nr * 4);
	snprintf(dir, sizeof(dir), "%s/%s", t_tmpdir(), name);
	mkdir(dir, 0755);
	kg_model_init(&m, KG_MODEL_TRANSE_L2, 4, 0, 6.0f);
	kg_setprogname("kg-train");
	kg_manifest_init(&man, 1, argv);
	rc = kg_modeldir_write(dir, &m, 0, ne, nr, ent, rel, ds, &man);
	if (rc == 0)
		rc = kg_manifest_write(&man, dir);
	kg_manifest_release(&man);
	kg_setprogname("t_warmstart");
	return rc == 0 ? dir : NULL;
}

static int
trainer(struct kg_trainer *tr, const struct kg_dataset *ds, uint32_t dim)
{
	struct kg_train_opts o = KG_TRAIN_OPTS_INIT;

	o.dim = dim;
	o.gamma = 6.0;
	o.threads = 1;
	o.seed = 4;
	return kg_trainer_init(tr, &o, ds->n_entities, ds->n_relations,
	    ds->split[0].hrt, ds->split[0].n, NULL, 0, NULL, 0);
}

/*
 * Old: a b c, relations r s.  New: c a d e (b gone), relations r s q.
 * d is the head of (d, r, a): it starts at a - r.  e only meets c
 * through the new relation q: random, the trainer's own draw.
 */
static void
t_apply_matches_by_name(void)
{
	const char *old = dataset("old", "a\tr\tb\nb\tr\tc\nc\ts\ta\n");
	const char *new = dataset("new", "c\tr\ta\nd\tr\ta\na\ts\tc\n"
	    "e\tq\tc\n");
	struct kg_dataset ds = KG_DATASET_INIT;
	struct kg_warmstart_opts o = KG_WARMSTART_OPTS_INIT;
	struct kg_warmstart_stats st;
	struct kg_trainer tr, fresh;
	float ent[3 * 4], rel[2 * 4], got[4 * 4], want[4 * 4];
	const char *m;
	int i;

	T_CHECK(old != NULL && new != NULL);
	m = model("m", old, 3, 2, ent, rel);
	T_CHECK(m != NULL);
	if (m == NULL || kg_dataset_load(&ds, new) != 0)
		T_SKIP("no datasets");
	memset(&tr, 0, sizeof(tr));
	memset(&fresh, 0, sizeof(fresh));
	T_CHECK(trainer(&tr, &ds, 4) == 0 && trainer(&fresh, &ds, 4) == 0);
	o.init_from = m;
	T_CHECK(kg_warmstart_apply(&tr, &ds, NULL, &o, NULL, &st) == 0);
	T_CHECK(st.ent.matched == 2 && st.ent.added == 2 &&
	    st.ent.dropped == 1 && st.ent.from_neighbours == 1);
	T_CHECK(st.rel.matched == 2 && st.rel.added == 1 &&
	    st.rel.dropped == 0);
	T_CHECK(kg_store_read(tr.ents, 0, 4, got) == 0);
	T_CHECK(kg_store_read(fresh.ents, 0, 4, want) == 0);
	/* New IDs: c 0, a 1, d 2, e 3; old: a 0, b 1, c 2. */
	T_CHECK(memcmp(got, ent + 2 * 4, 16) == 0);
	T_CHECK(memcmp(got + 4, ent, 16) == 0);
	for (i = 0; i < 4; i++)
		T_CHECK(got[8 + i] == ent[i] - rel[i]);
	T_CHECK(memcmp(got + 12, want + 12, 16) == 0);
	/* Relations: r s q in both orders' first two. */
	T_CHECK(memcmp(tr.rel, rel, 2 * 16) == 0);
	T_CHECK(memcmp(tr.rel + 8, fresh.rel + 8, 16) == 0);
	T_CHECK(tr.frozen_ent == NULL && tr.frozen_rel == NULL);
	kg_trainer_release(&tr);
	kg_trainer_release(&fresh);

	/* Frozen: the matched rows c, a and r, s, wherever their IDs. */
	memset(&tr, 0, sizeof(tr));
	T_CHECK(trainer(&tr, &ds, 4) == 0);
	o.freeze_old = o.freeze_relations = 1;
	T_CHECK(kg_warmstart_apply(&tr, &ds, NULL, &o, NULL, &st) == 0);
	T_CHECK(st.frozen_ent == 2 && st.frozen_rel == 2);
	T_CHECK(kg_trainer_frozen(tr.frozen_ent, 0) &&
	    kg_trainer_frozen(tr.frozen_ent, 1) &&
	    !kg_trainer_frozen(tr.frozen_ent, 2) &&
	    !kg_trainer_frozen(tr.frozen_ent, 3));
	T_CHECK(kg_trainer_frozen(tr.frozen_rel, 0) &&
	    kg_trainer_frozen(tr.frozen_rel, 1) &&
	    !kg_trainer_frozen(tr.frozen_rel, 2));
	o.freeze_old = o.freeze_relations = 0;
	kg_trainer_release(&tr);

	/* Another dimension is refused. */
	memset(&tr, 0, sizeof(tr));
	T_CHECK(trainer(&tr, &ds, 6) == 0);
	kg_error_mute(1);
	T_CHECK(kg_warmstart_apply(&tr, &ds, NULL, &o, NULL, &st) < 0);
	kg_error_mute(0);
	T_CHECK(strstr(kg_error_last(), "this run trains TransE_l2 of dim 6")
	    != NULL);
	kg_trainer_release(&tr);
	kg_dataset_release(&ds);
}

/* A dictionary holding a name twice is refused, naming the line. */
static void
t_apply_refuses_duplicates(void)
{
	const char *old = dataset("old2", "a\tr\tb\n");
	const char *new = dataset("new2", "a\tr\tx\ny\tr\ta\n");
	struct kg_dataset ds = KG_DATASET_INIT;
	struct kg_warmstart_opts o = KG_WARMSTART_OPTS_INIT;
	struct kg_warmstart_stats st;
	struct kg_trainer tr;
	float ent[2 * 4], rel[4];
	char *path;
	FILE *f;

	o.init_from = old != NULL ? model("m2", old, 2, 1, ent, rel) : NULL;
	if (o.init_from == NULL || new == NULL)
		T_SKIP("no datasets");
	/* "2\ty" becomes "2\tx": the same size, x twice. */
	path = kg_path_join(new, "entities.tsv");
	f = fopen(path, "w");
	fputs("0\ta\n1\tx\n2\tx\n", f);
	fclose(f);
	free(path);
	T_CHECK(kg_dataset_load(&ds, new) == 0);
	memset(&tr, 0, sizeof(tr));
	T_CHECK(trainer(&tr, &ds, 4) == 0);
	kg_error_mute(1);
	T_CHECK(kg_warmstart_apply(&tr, &ds, NULL, &o, NULL, &st) < 0);
	kg_error_mute(0);
	T_CHECK(strstr(kg_error_last(), "entities.tsv:3: duplicate entity "
	    "name 'x'") != NULL);
	kg_trainer_release(&tr);
	kg_dataset_release(&ds);
}

int
main(void)
{
	kg_setprogname("t_warmstart");
	T_RUN(t_guess_solves_the_score);
	T_RUN(t_options);
	T_RUN(t_apply_matches_by_name);
	T_RUN(t_apply_refuses_duplicates);
	return T_DONE();
}
