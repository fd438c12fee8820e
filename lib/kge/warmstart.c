/*
 * warmstart: a shallow trainer's rows from an earlier model or from
 * given embeddings (see warmstart.h).
 */
#include "kge/warmstart.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "io/dict.h"
#include "io/tabread.h"
#include "kge/modeldir.h"

/* Where the rows come from, in the source's own row numbers. */
struct source {
	const float *ent;		/* rows of dim floats */
	uint64_t ent_rows;
	const float *ent_state;		/* ent_rows x state_width, or NULL */
	const float *rel;		/* rel_rows of rel_width, or NULL */
	uint64_t rel_rows, n_rel;	/* n_rel forward relations */
	const float *rel_state;		/* rel_rows x rel_state_width, or NULL */
	int64_t *emap;			/* dataset entity -> row, or -1 */
	int64_t *rmap;			/* dataset relation -> row, or -1 */
};

int
kg_warmstart_parse_init_new(const char *s, enum kg_init_new *out)
{
	if (strcmp(s, "neighbours") == 0 || strcmp(s, "neighbors") == 0)
		*out = KG_INIT_NEW_NEIGHBOURS;
	else if (strcmp(s, "random") == 0)
		*out = KG_INIT_NEW_RANDOM;
	else if (strcmp(s, "zero") == 0)
		*out = KG_INIT_NEW_ZERO;
	else {
		kg_error("--init_new: '%s' is not neighbours, random or zero",
		    s);
		return -1;
	}
	return 0;
}

int
kg_warmstart_check(const struct kg_warmstart_opts *o)
{
	if (o->init_from != NULL && o->init_entities != NULL) {
		kg_error("--init_from and --init_entities cannot be combined");
		return -1;
	}
	if (o->entity_map != NULL && o->init_entities == NULL) {
		kg_error("--entity_map goes with --init_entities");
		return -1;
	}
	if (o->no_train && o->init_from == NULL && o->init_entities == NULL) {
		kg_error("--epochs 0 needs --init_from or --init_entities");
		return -1;
	}
	if (o->freeze_relations && !o->freeze_old) {
		kg_error("--freeze_relations goes with --freeze_old");
		return -1;
	}
	if (o->freeze_old && o->init_from == NULL && o->init_entities == NULL) {
		kg_error("--freeze_old needs --init_from or --init_entities");
		return -1;
	}
	if (o->freeze_relations && o->init_from == NULL) {
		kg_error("--freeze_relations needs --init_from (given "
		    "embeddings carry no relations)");
		return -1;
	}
	return 0;
}

/* The names of ds's "file" entered into d (IDs in file order); a name
 * given twice is an error naming its line. */
static int
names_dict(const struct kg_dataset *ds, const char *file, const char *what,
    struct kg_dict *d, char ***names, uint64_t *n)
{
	uint64_t i;
	int added;

	if (kg_dataset_names(ds, file, names, n) < 0)
		return -1;
	for (i = 0; i < *n; i++) {
		if (kg_dict_intern(d, (*names)[i], strlen((*names)[i]),
		    &added) < 0)
			return -1;
		if (!added) {
			kg_error("%s/%s:%" PRIu64 ": duplicate %s name '%s'",
			    ds->dir, file, i + 1, what, (*names)[i]);
			return -1;
		}
	}
	return 0;
}

/*
 * map[i] for each of the n_new names of ds's "file": the ID of the same
 * name in old (-1: none).  *matched counts them.  0 or -1.
 */
static int
match_names(const struct kg_dataset *old, const struct kg_dataset *ds,
    const char *file, const char *what, int64_t *map, uint64_t n_new,
    uint64_t *matched)
{
	struct kg_dict dold = KG_DICT_INIT, dnew = KG_DICT_INIT;
	char **on = NULL, **nn = NULL;
	uint64_t non = 0, nnn = 0, i;
	int rc = -1;

	kg_dict_init(&dold);
	kg_dict_init(&dnew);
	if (names_dict(old, file, what, &dold, &on, &non) < 0 ||
	    names_dict(ds, file, what, &dnew, &nn, &nnn) < 0)
		goto out;
	if (nnn != n_new) {
		kg_error("%s/%s: %" PRIu64 " names for %" PRIu64 " IDs",
		    ds->dir, file, nnn, n_new);
		goto out;
	}
	*matched = 0;
	for (i = 0; i < n_new; i++) {
		map[i] = kg_dict_find(&dold, nn[i], strlen(nn[i]));
		*matched += map[i] >= 0;
	}
	rc = 0;
out:
	kg_names_free(on, non);
	kg_names_free(nn, nnn);
	kg_dict_release(&dold);
	kg_dict_release(&dnew);
	return rc;
}

/* The rows of a "row<TAB>name" file for the dataset's entities: emap[i]
 * is the row of entity i's name (-1: not in the file).  0 or -1. */
static int
read_entity_map(const char *path, const struct kg_dataset *ds,
    uint64_t rows, int64_t *emap, uint64_t *matched)
{
	struct kg_tab_opts to = KG_TAB_OPTS_INIT;
	struct kg_dict d = KG_DICT_INIT;
	struct kg_tabread *r;
	struct kg_field f[2];
	uint64_t *row = NULL, n = 0, cap = 0, i, v, nn = 0;
	char **names = NULL;
	size_t nf;
	int rc, first = 1, added;
	int64_t id;

	kg_dict_init(&d);
	to.comment = '\0';	/* a name may start with '#' */
	if (kg_tabread_open(&r, path, &to) < 0)
		return -1;
	while ((rc = kg_tabread_next(r, f, 2, &nf)) == 1) {
		uint64_t line = kg_tabread_line(r);

		if (nf == 2 && kg_field_u64(&f[0], UINT64_MAX, &v) < 0 &&
		    first) {
			first = 0;	/* a header names no row */
			continue;
		}
		first = 0;
		if (nf != 2 || kg_field_u64(&f[0], UINT64_MAX, &v) < 0 ||
		    v >= rows) {
			kg_error("%s:%" PRIu64 ": expected 'row<TAB>name' with "
			    "a row below %" PRIu64, kg_tabread_name(r), line,
			    rows);
			rc = -1;
			break;
		}
		if ((id = kg_dict_intern(&d, f[1].s, f[1].len, &added)) < 0) {
			rc = -1;
			break;
		}
		if (!added) {
			kg_error("%s:%" PRIu64 ": name '%.*s' was given a row "
			    "before", kg_tabread_name(r), line,
			    (int)(f[1].len > 80 ? 80 : f[1].len), f[1].s);
			rc = -1;
			break;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			row = kg_xreallocarray(row, cap, sizeof(*row));
		}
		row[n++] = v;
	}
	kg_tabread_close(r);
	if (rc == 0 && kg_dataset_names(ds, "entities.tsv", &names, &nn) < 0)
		rc = -1;
	if (rc == 0) {
		*matched = 0;
		for (i = 0; i < nn && i < ds->n_entities; i++) {
			id = kg_dict_find(&d, names[i], strlen(names[i]));
			emap[i] = id >= 0 ? (int64_t)row[id] : -1;
			*matched += id >= 0;
		}
	}
	kg_names_free(names, nn);
	kg_dict_release(&d);
	free(row);
	return rc < 0 ? -1 : 0;
}

int
kg_warmstart_guess(const struct kg_model *m, const float *nb,
    const float *rel, int head_known, float *out)
{
	size_t d = m->dim, h = d / 2, i;

	switch (m->kind) {
	case KG_MODEL_TRANSE_L1:
	case KG_MODEL_TRANSE_L2:
		if (rel == NULL)
			return 0;
		for (i = 0; i < d; i++)
			out[i] = head_known ? nb[i] + rel[i] : nb[i] - rel[i];
		return 1;
	case KG_MODEL_ROTATE:
		if (rel == NULL)
			return 0;
		for (i = 0; i < h; i++) {
			float c = cosf(rel[i]), s = sinf(rel[i]);

			if (!head_known)
				s = -s;
			out[i] = nb[i] * c - nb[h + i] * s;
			out[h + i] = nb[i] * s + nb[h + i] * c;
		}
		return 1;
	default:
		memcpy(out, nb, d * sizeof(*out));
		return 1;
	}
}

/*
 * init_new neighbours: the mean guess of each added entity over the
 * train triples that link it to a matched one, in slot[id]'s row of
 * sum (n_slots x dim doubles), the number of guesses in cnt.
 */
static void
neighbour_sums(const struct kg_trainer *tr, const struct kg_dataset *ds,
    const struct source *s, const uint64_t *slot, double *sum,
    uint32_t *cnt)
{
	const struct kg_triples *t = &ds->split[KG_SPLIT_TRAIN];
	size_t d = tr->model.dim, rw = tr->model.rel_width, k;
	float *g = kg_xmallocarray(d, sizeof(*g));
	uint64_t i;
	int side;

	for (i = 0; i < t->n; i++) {
		const int32_t *x = t->hrt + 3 * i;
		const float *rel = s->rel != NULL && s->rmap[x[1]] >= 0 ?
		    s->rel + (size_t)s->rmap[x[1]] * rw : NULL;

		for (side = 0; side < 2; side++) {
			int32_t known = side ? x[2] : x[0];
			int32_t fresh = side ? x[0] : x[2];

			if (s->emap[fresh] >= 0 || s->emap[known] < 0)
				continue;
			if (s->rel == NULL)
				memcpy(g, s->ent + (size_t)s->emap[known] * d,
				    d * sizeof(*g));
			else if (!kg_warmstart_guess(&tr->model, s->ent +
			    (size_t)s->emap[known] * d, rel, !side, g))
				continue;
			for (k = 0; k < d; k++)
				sum[slot[fresh] * d + k] += g[k];
			cnt[slot[fresh]]++;
		}
	}
	free(g);
}

/* Write the entity rows of the store's partitions p with parts[p] set
 * (parts NULL: all) through the store: the row of trainer ID id is ds's
 * entity order[id] (order NULL: id).  The counts in *st are those of
 * every partition. */
static int
set_entities(struct kg_trainer *tr, const struct kg_dataset *ds,
    const int32_t *order, const uint8_t *parts, const struct source *s,
    const struct kg_warmstart_opts *o, struct kg_warmstart_stats *st)
{
	struct kg_store *sto = tr->ents;
	size_t d = tr->model.dim, sw = sto->state_width, k;
	uint64_t n = tr->n_entities, i, n_new = 0, *slot;
	double *sum = NULL;
	uint32_t *cnt = NULL, p;

	slot = kg_xmallocarray(n + 1, sizeof(*slot));
	for (i = 0; i < n; i++)
		slot[i] = s->emap[i] >= 0 ? UINT64_MAX : n_new++;
	if (o->init_new == KG_INIT_NEW_NEIGHBOURS && n_new > 0) {
		sum = kg_xcalloc(n_new * d, sizeof(*sum));
		cnt = kg_xcalloc(n_new, sizeof(*cnt));
		neighbour_sums(tr, ds, s, slot, sum, cnt);
		for (i = 0; i < n_new; i++)
			st->ent.from_neighbours += cnt[i] > 0;
	}
	for (p = 0; p < sto->n_parts; p++) {
		const struct kg_store_part *pt;

		if (parts != NULL && !parts[p])
			continue;
		if ((pt = kg_store_acquire(sto, p)) == NULL) {
			free(slot);
			free(sum);
			free(cnt);
			return -1;
		}
		for (i = 0; i < pt->rows; i++) {
			uint64_t id = pt->base + i;
			uint64_t x = order != NULL ? (uint64_t)order[id] : id;
			uint64_t q = slot[x];
			float *w = pt->w + i * d;
			float *state = pt->state != NULL ? pt->state + i * sw :
			    NULL;

			if (s->emap[x] >= 0) {
				memcpy(w, s->ent + (size_t)s->emap[x] * d,
				    d * sizeof(*w));
				if (state != NULL && s->ent_state != NULL)
					memcpy(state, s->ent_state +
					    (size_t)s->emap[x] * sw,
					    sw * sizeof(*state));
				else if (state != NULL)
					memset(state, 0, sw * sizeof(*state));
				continue;
			}
			if (cnt != NULL && cnt[q] > 0) {
				for (k = 0; k < d; k++)
					w[k] = (float)(sum[q * d + k] / cnt[q]);
			} else if (o->init_new == KG_INIT_NEW_ZERO)
				memset(w, 0, d * sizeof(*w));
			if (state != NULL)
				memset(state, 0, sw * sizeof(*state));
		}
		kg_store_release(sto, p, 1);
	}
	st->ent.added = n_new;
	free(slot);
	free(sum);
	free(cnt);
	return 0;
}

/* A bitmap of n bits, all clear. */
static uint64_t *
bitmap(uint64_t n)
{
	return kg_xcalloc(n / 64 + 1, sizeof(uint64_t));
}

static void
bit_set(uint64_t *b, uint64_t i)
{
	b[i >> 6] |= (uint64_t)1 << (i & 63);
}

/*
 * o->freeze_old: the trainer's frozen bitmaps (kge/train.h), a bit for
 * every entity row matched from the source (in the trainer's IDs: ds's
 * entity order[id] is trainer ID id) and with freeze_relations every
 * matched relation row and its inverse.  A bitmap rather than a bound,
 * as a dataset made without kg-ingest --extend interleaves old and new
 * IDs.  The counts in *st.
 */
static void
set_frozen(struct kg_trainer *tr, const int32_t *order,
    const struct source *s, const struct kg_warmstart_opts *o,
    struct kg_warmstart_stats *st)
{
	uint64_t i, n = tr->n_relations;

	if (!o->freeze_old)
		return;
	tr->frozen_ent = bitmap(tr->n_entities);
	for (i = 0; i < tr->n_entities; i++)
		if (s->emap[order != NULL ? (uint64_t)order[i] : i] >= 0) {
			bit_set(tr->frozen_ent, i);
			st->frozen_ent++;
		}
	if (!o->freeze_relations)
		return;
	tr->frozen_rel = bitmap(tr->n_rel_rows);
	for (i = 0; i < n; i++)
		if (s->rmap[i] >= 0) {
			bit_set(tr->frozen_rel, i);
			if (tr->n_rel_rows > n)
				bit_set(tr->frozen_rel, i + n);
			st->frozen_rel++;
		}
}

/* Copy the matched relation rows (and their inverses) and their state. */
static void
set_relations(struct kg_trainer *tr, const struct source *s)
{
	size_t rw = tr->model.rel_width, sw = tr->rel_state_width;
	uint64_t r, n = tr->n_relations;
	int inv;

	for (r = 0; r < n; r++) {
		if (s->rmap[r] < 0)
			continue;
		for (inv = 0; inv <= (tr->o.reciprocal ? 1 : 0); inv++) {
			uint64_t to = r + (inv ? n : 0);
			uint64_t from = (uint64_t)s->rmap[r] + (inv ? s->n_rel :
			    0);

			memcpy(tr->rel + to * rw, s->rel + from * rw,
			    rw * sizeof(*tr->rel));
			if (tr->rel_state == NULL || sw == 0)
				continue;
			if (s->rel_state != NULL)
				memcpy(tr->rel_state + to * sw, s->rel_state +
				    from * sw, sw * sizeof(*tr->rel_state));
			else
				memset(tr->rel_state + to * sw, 0,
				    sw * sizeof(*tr->rel_state));
		}
	}
}

/* The model must have the trainer's parameter shapes. */
static int
check_model(const struct kg_trainer *tr, const struct kg_modeldir *md,
    const char *dir)
{
	const struct kg_model *a = &md->model, *b = &tr->model;

	if (a->kind != b->kind || a->dim != b->dim || a->rel_dim != b->rel_dim
	    || md->reciprocal != tr->o.reciprocal) {
		kg_error("model '%s' is %s of dim %u (relation dim %u%s); this "
		    "run trains %s of dim %u (relation dim %u%s)", dir,
		    kg_model_name(a->kind), a->dim, a->rel_dim,
		    md->reciprocal ? ", reciprocal" : "",
		    kg_model_name(b->kind), b->dim, b->rel_dim,
		    tr->o.reciprocal ? ", reciprocal" : "");
		return -1;
	}
	return 0;
}

/* An optional state array of the model dir: rows x width floats, or
 * NULL (with *why) when absent or of another width. */
static const float *
state_array(const char *dir, const char *name, uint64_t rows, size_t width,
    struct kg_npy *a, const char **why)
{
	char *path = kg_path_join(dir, name);
	const float *x = NULL;

	if (width == 0 || !kg_path_exists(path)) {
		if (width > 0)
			*why = "the model directory keeps none";
	} else if (kg_npy_read_expect(path, KG_DT_F4, -1, a) == 0 &&
	    a->count == rows * width)
		x = a->data;
	else
		*why = "the model's state has another shape";
	free(path);
	return x;
}

int
kg_warmstart_match(const struct kg_modeldir *md, const char *dir,
    const struct kg_dataset *ds, int64_t *emap, int64_t *rmap,
    struct kg_warmstart_stats *st)
{
	struct kg_dataset old = KG_DATASET_INIT;
	json_t *rec = kg_manifest_get(&md->manifest, "config.dictionaries");
	json_t *dsp = kg_manifest_get(&md->manifest, "config.dataset");
	uint64_t i;
	int rc = -1;

	if (kg_dataset_dict_same(rec, ds, "entities.tsv") == 1 &&
	    kg_dataset_dict_same(rec, ds, "relations.tsv") == 1 &&
	    md->n_entities == ds->n_entities &&
	    md->n_relations == ds->n_relations) {
		for (i = 0; i < ds->n_entities; i++)
			emap[i] = (int64_t)i;
		for (i = 0; i < ds->n_relations; i++)
			rmap[i] = (int64_t)i;
		st->ent.matched = ds->n_entities;
		st->rel.matched = ds->n_relations;
		return 0;
	}
	if (!json_is_string(dsp)) {
		kg_error("model '%s' names no dataset to match names through",
		    dir);
		return -1;
	}
	if (kg_dataset_load(&old, json_string_value(dsp)) != 0)
		return -1;
	if (kg_dataset_dict_same(rec, &old, "entities.tsv") == 0 ||
	    kg_dataset_dict_same(rec, &old, "relations.tsv") == 0) {
		kg_error("model '%s': its dataset '%s' no longer holds the "
		    "names it was trained on", dir, old.dir);
		goto out;
	}
	if (old.n_entities != md->n_entities ||
	    old.n_relations != md->n_relations) {
		kg_error("model '%s' has %" PRIu64 " entities, its dataset "
		    "'%s' %" PRIu64, dir, md->n_entities, old.dir,
		    old.n_entities);
		goto out;
	}
	if (match_names(&old, ds, "entities.tsv", "entity", emap,
	    ds->n_entities, &st->ent.matched) < 0 ||
	    match_names(&old, ds, "relations.tsv", "relation", rmap,
	    ds->n_relations, &st->rel.matched) < 0)
		goto out;
	rc = 0;
out:
	kg_dataset_release(&old);
	return rc;
}

/* config.init_from or config.init_entities. */
static void
record(const struct kg_warmstart_opts *o, const struct kg_warmstart_stats *st,
    json_t *config)
{
	static const char *const how[] = { "neighbours", "random", "zero" };
	char sum[32], *path;
	json_t *r;

	if (config == NULL)
		return;
	r = json_object();
	if (o->init_from != NULL) {
		json_object_set_new(r, "path", json_string(o->init_from));
		path = kg_path_join(o->init_from, "manifest.json");
		if (kg_checksum_file(path, sum) == 0)
			json_object_set_new(r, "checksum", json_string(sum));
		free(path);
	} else {
		json_object_set_new(r, "path", json_string(o->init_entities));
		json_object_set_new(r, "entity_map", o->entity_map ?
		    json_string(o->entity_map) : json_null());
	}
	json_object_set_new(r, "init_new", json_string(how[o->init_new]));
	json_object_set_new(r, "optimizer_state", json_string(st->state ?
	    "carried" : "zero"));
	json_object_set_new(r, "entities", json_pack("{s:I,s:I,s:I,s:I}",
	    "matched", (json_int_t)st->ent.matched, "added",
	    (json_int_t)st->ent.added, "dropped", (json_int_t)st->ent.dropped,
	    "from_neighbours", (json_int_t)st->ent.from_neighbours));
	json_object_set_new(r, "relations", json_pack("{s:I,s:I,s:I}",
	    "matched", (json_int_t)st->rel.matched, "added",
	    (json_int_t)st->rel.added, "dropped", (json_int_t)st->rel.dropped));
	json_object_set_new(r, "frozen", json_pack("{s:I,s:I}", "entities",
	    (json_int_t)st->frozen_ent, "relations",
	    (json_int_t)st->frozen_rel));
	json_object_set_new(config, o->init_from != NULL ? "init_from" :
	    "init_entities", r);
	/* The trainer ran with one epoch allowed and none taken. */
	if (o->no_train)
		json_object_set_new(config, "epochs", json_integer(0));
}

int
kg_warmstart_read_entities(const char *path, const char *entity_map,
    const struct kg_dataset *ds, uint32_t dim, struct kg_npy *a,
    int64_t *emap, uint64_t *matched)
{
	enum kg_dtype dt;
	uint64_t shape[KG_NPY_MAXDIM], i;
	size_t off;
	int nd;

	if (kg_npy_read_header(path, &dt, &nd, shape, &off) < 0)
		return -1;
	if (dt != KG_DT_F4 || nd != 2 || shape[1] != dim ||
	    (entity_map == NULL && shape[0] != ds->n_entities)) {
		kg_error("%s: %s with %d dimension%s; expected float32 [%s, %u]",
		    path, kg_dtype_descr(dt), nd, nd == 1 ? "" : "s",
		    entity_map ? "rows" : "entities", dim);
		return -1;
	}
	if (kg_npy_read_expect(path, KG_DT_F4, 2, a) < 0 ||
	    kg_check_finite(path, a->data, a->shape[0], a->shape[1]) < 0)
		return -1;
	if (entity_map != NULL)
		return read_entity_map(entity_map, ds, a->shape[0], emap,
		    matched);
	for (i = 0; i < ds->n_entities; i++)
		emap[i] = (int64_t)i;
	*matched = ds->n_entities;
	return 0;
}

/* The source of --init_entities: the array, checked, and its rows. */
static int
load_entities(const struct kg_trainer *tr, const struct kg_dataset *ds,
    const struct kg_warmstart_opts *o, struct kg_npy *a, struct source *s,
    struct kg_warmstart_stats *st)
{
	if (kg_warmstart_read_entities(o->init_entities, o->entity_map, ds,
	    tr->model.dim, a, s->emap, &st->ent.matched) < 0)
		return -1;
	s->ent = a->data;
	s->ent_rows = a->shape[0];
	return 0;
}

/* kg_warmstart_apply over the partitions parts selects (NULL: all). */
static int
apply(struct kg_trainer *tr, const struct kg_dataset *ds,
    const int32_t *order, const uint8_t *parts,
    const struct kg_warmstart_opts *o, json_t *config,
    struct kg_warmstart_stats *st)
{
	struct kg_modeldir md = KG_MODELDIR_INIT;
	struct kg_npy es = KG_NPY_INIT, rs = KG_NPY_INIT, ea = KG_NPY_INIT;
	struct source s;
	uint64_t i;
	int rc;

	memset(st, 0, sizeof(*st));
	if (o == NULL || (o->init_from == NULL && o->init_entities == NULL))
		return 0;
	memset(&s, 0, sizeof(s));
	s.emap = kg_xmallocarray(ds->n_entities + 1, sizeof(*s.emap));
	s.rmap = kg_xmallocarray(ds->n_relations + 1, sizeof(*s.rmap));
	for (i = 0; i < ds->n_entities; i++)
		s.emap[i] = -1;
	for (i = 0; i < ds->n_relations; i++)
		s.rmap[i] = -1;
	if (o->init_entities != NULL) {
		rc = load_entities(tr, ds, o, &ea, &s, st);
		st->state_why = "embeddings made elsewhere carry none";
		st->ent.dropped = s.ent_rows - st->ent.matched;
		st->rel.added = ds->n_relations;
		goto apply;
	}
	rc = kg_modeldir_load(&md, o->init_from);
	if (rc != 0)
		goto out;
	rc = -1;
	if (check_model(tr, &md, o->init_from) < 0 ||
	    kg_warmstart_match(&md, o->init_from, ds, s.emap, s.rmap,
	    st) < 0)
		goto out;
	s.ent = md.entities;
	s.ent_rows = md.n_entities;
	s.rel = md.relations;
	s.rel_rows = md.n_rel_rows;
	s.n_rel = md.n_relations;
	st->ent.dropped = md.n_entities - st->ent.matched;
	st->rel.dropped = md.n_relations - st->rel.matched;
	st->rel.added = ds->n_relations - st->rel.matched;
	if (o->reset_optimizer)
		st->state_why = "--reset_optimizer";
	else {
		s.ent_state = state_array(o->init_from, "entity_state.npy",
		    md.n_entities, tr->ents->state_width, &es, &st->state_why);
		s.rel_state = state_array(o->init_from, "relation_state.npy",
		    md.n_rel_rows, tr->rel_state_width, &rs, &st->state_why);
		if (s.ent_state == NULL || (tr->rel_state_width > 0 &&
		    s.rel_state == NULL)) {
			s.ent_state = s.rel_state = NULL;
			if (st->state_why == NULL)
				st->state_why = "the model directory keeps none";
		} else
			st->state = 1;
	}
	rc = 0;
apply:
	if (rc == 0)
		rc = set_entities(tr, ds, order, parts, &s, o, st);
	if (rc == 0 && s.rel != NULL)
		set_relations(tr, &s);
	if (rc == 0)
		set_frozen(tr, order, &s, o, st);
	if (rc == 0)
		record(o, st, config);
out:
	free(s.emap);
	free(s.rmap);
	kg_npy_release(&es);
	kg_npy_release(&rs);
	kg_npy_release(&ea);
	kg_modeldir_release(&md);
	return rc;
}

int
kg_warmstart_apply(struct kg_trainer *tr, const struct kg_dataset *ds,
    const int32_t *order, const struct kg_warmstart_opts *o, json_t *config,
    struct kg_warmstart_stats *st)
{
	return apply(tr, ds, order, NULL, o, config, st);
}

char *
kg_warmstart_format(const struct kg_warmstart_opts *o,
    const struct kg_warmstart_stats *st, char *buf, size_t cap)
{
	snprintf(buf, cap, "warm start from '%s': entities %" PRIu64
	    " matched, %" PRIu64 " added (%" PRIu64 " from neighbours), %"
	    PRIu64 " dropped; relations %" PRIu64 " matched, %" PRIu64
	    " added, %" PRIu64 " dropped; optimiser state %s%s%s",
	    o->init_from != NULL ? o->init_from : o->init_entities,
	    st->ent.matched, st->ent.added, st->ent.from_neighbours,
	    st->ent.dropped, st->rel.matched, st->rel.added, st->rel.dropped,
	    st->state ? "carried" : "starts at zero",
	    st->state_why != NULL ? ": " : "",
	    st->state_why != NULL ? st->state_why : "");
	if (o->freeze_old) {
		size_t n = strlen(buf);

		if (n < cap)
			snprintf(buf + n, cap - n, "; frozen: %" PRIu64
			    " entities, %" PRIu64 " relations",
			    st->frozen_ent, st->frozen_rel);
	}
	return buf;
}

int
kg_warmstart_run_parts(struct kg_trainer *tr, const struct kg_dataset *ds,
    const int32_t *order, const uint8_t *parts,
    const struct kg_warmstart_opts *o, json_t *config, int show)
{
	struct kg_warmstart_stats st;
	char line[512];
	int rc;

	if (!kg_warmstart_given(o))
		return 0;
	rc = apply(tr, ds, order, parts, o, config, &st);
	if (rc == 0 && show)
		fprintf(stderr, "%s: %s\n", kg_progname(),
		    kg_warmstart_format(o, &st, line, sizeof(line)));
	return rc;
}

int
kg_warmstart_run(struct kg_trainer *tr, const struct kg_dataset *ds,
    const int32_t *order, const struct kg_warmstart_opts *o, json_t *config,
    int show)
{
	return kg_warmstart_run_parts(tr, ds, order, NULL, o, config, show);
}

int
kg_warmstart_given(const struct kg_warmstart_opts *o)
{
	return o != NULL && (o->init_from != NULL || o->init_entities != NULL);
}

int
kg_warmstart_trains(const struct kg_warmstart_opts *o)
{
	return o == NULL || !o->no_train;
}
