/*
 * The engine chooser and its supports table (lib/kge/engine.h): where a
 * run goes from its device, shape and ranks; every row of the table,
 * asked alone, refuses a run asking for its feature at exactly the places
 * it does not name, with its reason, and passes it at the others; a run asking for
 * nothing goes everywhere; the options-only rows are the device trainer's
 * own check (kg_train_device_check).  Every row must have a way to ask
 * for it below, so a row added without one fails here.
 */
#include <string.h>

#include "core/util.h"
#include "kge/engine.h"
#include "kge/train_device.h"
#include "test.h"

/* Make run r ask for the feature named; 0, or -1 for a name this test
 * does not know. */
static int
ask(const char *name, struct kg_engine_run *r, struct kg_train_opts *o)
{
	if (strcmp(name, "a device buffer") == 0 ||
	    strcmp(name, "a device buffer under mpirun") == 0)
		r->gpu_buffer = 1;
	else if (strcmp(name, "1-vs-all") == 0)
		o->one_vs_all = 1;
	else if (strcmp(name, "filtered negatives") == 0)
		o->filter_negatives = 1;
	else if (strcmp(name, "typed negatives") == 0)
		o->use_types = 1;
	else if (strcmp(name, "in-batch negatives") == 0)
		o->neg_in_batch = 1;
	else if (strcmp(name, "relation prediction") == 0)
		o->rel_pred = 0.1;
	else if (strcmp(name, "DURA") == 0)
		o->dura = 0.1;
	else if (strcmp(name, "subsampling weights") == 0)
		o->subsampling = 1;
	else if (strcmp(name, "gradient clipping") == 0)
		o->clip = 1.0;
	else if (strcmp(name, "a deterministic run") == 0)
		o->deterministic = 1;
	else if (strcmp(name, "a cut epoch of buckets") == 0)
		o->max_step = 10;
	else if (strcmp(name, "the negative pool of buckets") == 0)
		o->neg_pool = 16;
	else if (strcmp(name, "float16 partition files") == 0)
		r->disk_f16 = 1;
	else
		return -1;
	return 0;
}

/* The options of a run that asks for nothing: no pool. */
static struct kg_train_opts
plain_opts(void)
{
	struct kg_train_opts o = KG_TRAIN_OPTS_INIT;

	o.neg_pool = 0;
	return o;
}

static void
test_places(void)
{
	struct kg_train_opts o = plain_opts();
	struct kg_engine_run r = KG_ENGINE_RUN_INIT;

	r.o = &o;
	T_CHECK(kg_engine_place_of(&r) == KG_PLACE_HOST);
	r.shape = KG_SHAPE_BUCKETS;
	r.ranks = 4;
	T_CHECK(kg_engine_place_of(&r) == KG_PLACE_HOST);
	r.on_device = 1;
	T_CHECK(kg_engine_place_of(&r) == KG_PLACE_DEVICE_RANKS);
	r.ranks = 1;
	T_CHECK(kg_engine_place_of(&r) == KG_PLACE_DEVICE_BUFFER);
	r.shape = KG_SHAPE_BUFFER;
	T_CHECK(kg_engine_place_of(&r) == KG_PLACE_DEVICE_BUFFER);
	r.shape = KG_SHAPE_TABLE;
	r.ranks = 2;
	T_CHECK(kg_engine_place_of(&r) == KG_PLACE_DEVICE);
}

/* Every row, at every place: refused where it is not run, with its
 * reason, passed where it is. */
static void
test_rows(void)
{
	size_t n, i;
	const struct kg_engine_feature *f = kg_engine_features(&n);
	unsigned p;

	T_CHECK(n >= 10);
	kg_error_mute(1);
	for (i = 0; i < n; i++) {
		struct kg_train_opts o = plain_opts();
		struct kg_engine_run r = KG_ENGINE_RUN_INIT;
		int refused = 0;

		r.o = &o;
		r.shape = KG_SHAPE_BUCKETS;
		T_CHECKF(ask(f[i].name, &r, &o) == 0, "row '%s' has no test",
		    f[i].name);
		T_CHECKF(f[i].places != 0 && f[i].reason[0] != '\0',
		    "row '%s'", f[i].name);
		for (p = 0; p < KG_NPLACES; p++) {
			int rc = kg_engine_supports(p, &r, f[i].when);
			int runs = (f[i].places >> p) & 1u;

			T_CHECKF(rc == (runs ? 0 : -1), "row '%s' at place %u: "
			    "%d", f[i].name, p, rc);
			if (!runs) {
				refused++;
				T_CHECKF(strcmp(kg_error_last(), f[i].reason) ==
				    0, "row '%s': '%s'", f[i].name,
				    kg_error_last());
			}
			/* Not asked when its kind is left out. */
			if (kg_engine_supports(p, &r, KG_ASK_ALL &
			    ~(unsigned)f[i].when) < 0)
				T_CHECK(strcmp(kg_error_last(), f[i].reason) !=
				    0);
		}
		T_CHECKF(refused > 0, "row '%s' refuses nowhere", f[i].name);
	}
	kg_error_mute(0);
}

static void
test_nothing_asked(void)
{
	struct kg_train_opts o = plain_opts();
	struct kg_engine_run r = KG_ENGINE_RUN_INIT;
	enum kg_engine_place got;
	unsigned p;

	r.o = &o;
	for (p = 0; p < KG_NPLACES; p++)
		T_CHECK(kg_engine_supports(p, &r, KG_ASK_ALL) == 0);
	/* --max_step cuts a whole-table run on a device too. */
	o.max_step = 16;
	r.on_device = 1;
	T_CHECK(kg_engine_choose(&r, KG_ASK_ALL, &got) == 0 &&
	    got == KG_PLACE_DEVICE);
}

/* The chooser under mpirun: the pool refused on the ranks' devices, a
 * cut epoch on a device buffer, the device buffer on a host. */
static void
test_choose(void)
{
	struct kg_train_opts o = KG_TRAIN_OPTS_INIT;
	struct kg_engine_run r = KG_ENGINE_RUN_INIT;
	enum kg_engine_place got;

	kg_error_mute(1);
	r.o = &o;
	r.shape = KG_SHAPE_BUCKETS;
	r.ranks = 2;
	r.on_device = 1;
	T_CHECK(kg_engine_choose(&r, KG_ASK_PLACE | KG_ASK_OPTIONS, &got) ==
	    0 && got == KG_PLACE_DEVICE_RANKS);
	T_CHECK(kg_engine_choose(&r, KG_ASK_RUN, &got) < 0);
	T_CHECK(strcmp(kg_error_last(), "under mpirun a device trains "
	    "buckets without the negative pool; add --neg_pool 0") == 0);
	r.ranks = 1;
	r.shape = KG_SHAPE_BUFFER;
	o.max_step = 5;
	T_CHECK(kg_engine_choose(&r, KG_ASK_ALL, &got) < 0 &&
	    got == KG_PLACE_DEVICE_BUFFER);
	T_CHECK(strstr(kg_error_last(), "--max_step with partitions") !=
	    NULL);
	r.on_device = 0;
	r.gpu_buffer = 1;
	T_CHECK(kg_engine_choose(&r, KG_ASK_ALL, &got) < 0 &&
	    got == KG_PLACE_HOST);
	T_CHECK(strstr(kg_error_last(), "need --partitions and --device") !=
	    NULL);
	kg_error_mute(0);
}

/* kg_train_device_check is the options rows at a device. */
static void
test_device_check(void)
{
	struct kg_train_opts o = plain_opts();

	kg_error_mute(1);
	T_CHECK(kg_train_device_check(&o) == 0);
	o.max_step = 10;
	o.neg_pool = 16;
	T_CHECK(kg_train_device_check(&o) == 0);
	o.subsampling = 1;
	T_CHECK(kg_train_device_check(&o) < 0);
	T_CHECK(strcmp(kg_error_last(), "subsampling weights is not "
	    "supported on a device yet (use --device cpu)") == 0);
	kg_error_mute(0);
}

int
main(void)
{
	T_RUN(test_places);
	T_RUN(test_rows);
	T_RUN(test_nothing_asked);
	T_RUN(test_choose);
	T_RUN(test_device_check);
	return T_DONE();
}
