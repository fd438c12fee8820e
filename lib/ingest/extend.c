/*
 * extend: the earlier dataset under a kg-ingest run (see extend.h).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "ingest/extend.h"
#include "io/dataset.h"

/* Enter names[0..n) into d as IDs 0..n-1; a repeated name is an error. */
static int
enter_names(struct kg_dict *d, char **names, uint64_t n, const char *dir,
    const char *file, const char *what)
{
	uint64_t i;
	int added;

	for (i = 0; i < n; i++) {
		if (kg_dict_intern(d, names[i], strlen(names[i]), &added) < 0)
			return -1;
		if (!added) {
			kg_error("%s/%s:%" PRIu64 ": duplicate %s name '%s'",
			    dir, file, i + 1, what, names[i]);
			return -1;
		}
	}
	return 0;
}

static int
load_names(struct ingest *st, const struct kg_dataset *ds)
{
	static const char *const files[2] = { "entities.tsv", "relations.tsv" };
	struct kg_dict *d[2] = { &st->ent, &st->rel };
	uint64_t want[2] = { ds->n_entities, ds->n_relations };
	int k, rc;

	for (k = 0; k < 2; k++) {
		char **names;
		uint64_t n;

		if (kg_dataset_names(ds, files[k], &names, &n) < 0)
			return -1;
		if (n != want[k]) {
			kg_error("%s/%s: %" PRIu64 " names for %" PRIu64 " IDs",
			    ds->dir, files[k], n, want[k]);
			kg_names_free(names, n);
			return -1;
		}
		rc = enter_names(d[k], names, n, ds->dir, files[k], k ?
		    "relation" : "entity");
		kg_names_free(names, n);
		if (rc < 0)
			return -1;
	}
	st->old_ent = ds->n_entities;
	st->old_rel = ds->n_relations;
	return 0;
}

int
kg_ingest_extend_load(struct ingest *st)
{
	struct kg_dataset ds = KG_DATASET_INIT;
	uint64_t total = 0, i, k = 0, j;
	int s, rc = -1;

	if (st->o->extend == NULL)
		return 0;
	if (!st->o->dedup) {
		kg_error("--extend needs --dedup");
		return -1;
	}
	if (kg_dataset_load(&ds, st->o->extend) != 0)
		return -1;
	if (ds.types != NULL) {
		kg_error("%s: extending a dataset with node types is not "
		    "supported", st->o->extend);
		goto out;
	}
	if (load_names(st, &ds) < 0)
		goto out;
	for (s = 0; s < KG_NSPLITS; s++)
		total += ds.split[s].n;
	st->cap = total + (1 << 16);
	st->trip = kg_xmallocarray(st->cap, 3 * sizeof(*st->trip));
	if (st->o->use_split && st->o->unseen == KG_UNSEEN_ERROR)
		st->where = kg_xcalloc(st->cap, sizeof(*st->where));
	st->old_label = kg_xmalloc(total ? total : 1);
	for (s = 0; s < KG_NSPLITS; s++) {
		for (i = 0; i < ds.split[s].n; i++, k++) {
			for (j = 0; j < 3; j++)
				st->trip[3 * k + j] =
				    (uint32_t)ds.split[s].hrt[3 * i + j];
			st->old_label[k] = (uint8_t)s;
		}
	}
	st->n = st->old_n = total;
	kg_ingest_dedup_seed(st);
	rc = 0;
out:
	kg_dataset_release(&ds);
	return rc;
}

int
kg_ingest_extend_finish(struct ingest *st)
{
	uint64_t i;
	int s;

	if (st->o->extend == NULL)
		return 0;
	if (st->label == NULL) {
		st->label = kg_xmalloc(st->n ? st->n : 1);
		for (i = st->old_n; i < st->n; i++)
			st->label[i] = i < st->split_end[0] ? 0 :
			    i < st->split_end[1] ? 1 : 2;
	}
	memcpy(st->label, st->old_label, st->old_n);
	for (s = 0; s < 3; s++)
		st->count[s] = 0;
	for (i = 0; i < st->n; i++)
		if (st->label[i] < 3)
			st->count[st->label[i]]++;
	return 0;
}
