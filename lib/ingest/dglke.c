#include "ingest/dglke.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/progress.h"
#include "core/util.h"
#include "ingest/ingest.h"
#include "io/dataset.h"
#include "io/dict.h"
#include "io/npy.h"
#include "io/stage.h"

static const char *const split_names[3] = { "train", "valid", "test" };

/* A dictionary file read: names by ID, and a lookup by name. */
struct dict_in {
	char **names;		/* names[id] */
	uint64_t n;
	struct kg_dict d;	/* name -> id (interned in ID order) */
};

struct run {
	const struct kg_dglke_opts *o;
	struct dict_in ent, rel;
	int col[3];		/* field of head, relation, tail */
	int ids;		/* triples hold IDs */
	int32_t *trip[3];	/* per split, 3 IDs a triple */
	uint64_t n[3], cap[3];
	uint64_t lines, records, dups;
	uint64_t done_before;	/* progress units of earlier files */
	int bytes_mode;		/* progress counts MB, not lines */
	struct kg_progress prog;
	double t0;
};

/* Short, one-line form of a field for messages. */
static int
flen(const struct kg_field *f)
{
	return f->len > 80 ? 80 : (int)f->len;
}

/* Check one dictionary record and keep it; 0 or -1. */
static int
dict_record(struct dict_in *di, const char *file, uint64_t line,
    const struct kg_field *f, size_t nf, uint64_t **lines, uint64_t *cap)
{
	uint64_t id;
	size_t i;

	if (nf != 2) {
		kg_error("%s:%" PRIu64 ": expected 'id<DELIM>name', found %zu "
		    "fields", file, line, nf);
		return -1;
	}
	if (kg_field_u64(&f[0], UINT32_MAX, &id) < 0) {
		kg_error("%s:%" PRIu64 ": '%.*s' is not an ID", file, line,
		    flen(&f[0]), f[0].s);
		return -1;
	}
	for (i = 0; i < f[1].len && f[1].s[i] != '\t' && f[1].s[i] != '\r';
	    i++)
		;
	if (f[1].len == 0 || i < f[1].len) {
		kg_error("%s:%" PRIu64 ": a name must be non-empty, without "
		    "tabs", file, line);
		return -1;
	}
	if (di->n == *cap) {
		*cap = *cap ? 2 * *cap : 1024;
		di->names = kg_xreallocarray(di->names, *cap, sizeof(char *));
		*lines = kg_xreallocarray(*lines, 2 * *cap, sizeof(uint64_t));
	}
	di->names[di->n] = kg_xasprintf("%.*s", (int)f[1].len, f[1].s);
	(*lines)[2 * di->n] = id;
	(*lines)[2 * di->n + 1] = line;
	di->n++;
	return 0;
}

/*
 * Put the names in ID order and intern them, checking that the IDs are
 * 0 .. n-1, each once, and the names distinct.  0 or -1.
 */
static int
dict_order(struct dict_in *di, const char *file, const uint64_t *idline)
{
	char **by_id = kg_xcalloc(di->n + 1, sizeof(char *));
	uint64_t *line_of = kg_xcalloc(di->n + 1, sizeof(uint64_t)), i;
	int rc = -1;

	for (i = 0; i < di->n; i++) {
		uint64_t id = idline[2 * i], line = idline[2 * i + 1];

		if (id >= di->n || by_id[id] != NULL) {
			kg_error("%s:%" PRIu64 ": ID %" PRIu64 " %s", file, line,
			    id, id >= di->n ? "is past the count of names "
			    "(IDs run from 0 with no gap)" : "was given before");
			goto out;
		}
		by_id[id] = di->names[i];
		line_of[id] = line;
	}
	for (i = 0; i < di->n; i++) {
		int added;
		int64_t k = kg_dict_intern(&di->d, by_id[i], strlen(by_id[i]),
		    &added);

		if (k < 0)
			goto out;
		if (!added) {
			kg_error("%s:%" PRIu64 ": name '%s' was given ID %lld "
			    "before", file, line_of[i], by_id[i], (long long)k);
			goto out;
		}
	}
	memcpy(di->names, by_id, di->n * sizeof(char *));
	rc = 0;
out:
	free(by_id);
	free(line_of);
	return rc;
}

static int
read_dict(struct dict_in *di, const char *path, const struct kg_tab_opts *to)
{
	struct kg_tabread *r;
	struct kg_field f[2];
	uint64_t *idline = NULL, cap = 0;
	size_t nf;
	int rc;

	kg_dict_init(&di->d);
	if (kg_tabread_open(&r, path, to) < 0)
		return -1;
	while ((rc = kg_tabread_next(r, f, 2, &nf)) == 1)
		if (dict_record(di, kg_tabread_name(r), kg_tabread_line(r), f,
		    nf, &idline, &cap) < 0) {
			rc = -1;
			break;
		}
	if (rc == 0 && di->n == 0) {
		kg_error("%s: no names", kg_tabread_name(r));
		rc = -1;
	}
	if (rc == 0)
		rc = dict_order(di, kg_tabread_name(r), idline);
	kg_tabread_close(r);
	free(idline);
	return rc;
}

static void
dict_release(struct dict_in *di)
{
	kg_names_free(di->names, di->n);
	kg_dict_release(&di->d);
}

/* The ID of field f in di (an ID or a name); -1 after an error. */
static int64_t
resolve(const struct run *st, const struct dict_in *di,
    const struct kg_field *f, const char *what, const char *file,
    uint64_t line)
{
	uint64_t id;
	int64_t k;

	if (st->ids) {
		if (kg_field_u64(f, di->n, &id) == 0)
			return (int64_t)id;
		kg_error("%s:%" PRIu64 ": %s '%.*s' is not an ID below %" PRIu64,
		    file, line, what, flen(f), f->s, di->n);
		return -1;
	}
	k = kg_dict_find(&di->d, f->s, f->len);
	if (k < 0)
		kg_error("%s:%" PRIu64 ": %s '%.*s' is not in the dictionary",
		    file, line, what, flen(f), f->s);
	return k;
}

static void
push(struct run *st, int split, const int64_t ids[3])
{
	uint64_t n = st->n[split];

	if (n == st->cap[split]) {
		st->cap[split] = st->cap[split] ? 2 * st->cap[split] : 4096;
		st->trip[split] = kg_xreallocarray(st->trip[split],
		    st->cap[split], 3 * sizeof(int32_t));
	}
	st->trip[split][3 * n] = (int32_t)ids[0];
	st->trip[split][3 * n + 1] = (int32_t)ids[1];
	st->trip[split][3 * n + 2] = (int32_t)ids[2];
	st->n[split] = n + 1;
}

/* One triple record; 0 or -1. */
static int
triple_record(struct run *st, int split, const char *file, uint64_t line,
    const struct kg_field *f, size_t nf)
{
	static const char *const what[3] = { "head", "relation", "tail" };
	int64_t ids[3];
	int k;

	if (nf != 3) {
		kg_error("%s:%" PRIu64 ": expected 3 fields, found %zu", file,
		    line, nf);
		return -1;
	}
	for (k = 0; k < 3; k++) {
		ids[k] = resolve(st, k == 1 ? &st->rel : &st->ent,
		    &f[st->col[k]], what[k], file, line);
		if (ids[k] < 0)
			return -1;
	}
	push(st, split, ids);
	return 0;
}

/* Progress units of a reader: MB read, or lines. */
static uint64_t
units(const struct run *st, const struct kg_tabread *r)
{
	return st->done_before + (st->bytes_mode ? kg_tabread_bytes(r) >> 20 :
	    kg_tabread_lines(r));
}

static int
read_triples(struct run *st, const char *path, int split)
{
	struct kg_tabread *r;
	struct kg_field f[3];
	size_t nf;
	int rc;

	if (kg_tabread_open(&r, path, &st->o->tab) < 0)
		return -1;
	while ((rc = kg_tabread_next(r, f, 3, &nf)) == 1) {
		if (triple_record(st, split, kg_tabread_name(r),
		    kg_tabread_line(r), f, nf) < 0) {
			rc = -1;
			break;
		}
		if ((++st->records & 0xffff) == 0)
			kg_progress_update(&st->prog, units(st, r));
	}
	st->done_before = units(st, r);
	st->lines += kg_tabread_lines(r);
	kg_tabread_close(r);
	return rc;
}

/* Do the train records hold IDs?  See enum kg_dglke_triples.  0 or -1. */
static int
detect(struct run *st)
{
	struct kg_tabread *r;
	struct kg_field f[3];
	uint64_t x;
	size_t nf;
	int rc, k;

	st->ids = st->o->triples == KG_DGLKE_IDS;
	if (st->o->triples != KG_DGLKE_DETECT)
		return 0;
	if (kg_tabread_open(&r, st->o->train, &st->o->tab) < 0)
		return -1;
	rc = kg_tabread_next(r, f, 3, &nf);
	if (rc == 1 && nf == 3 && kg_dict_find(&st->rel.d,
	    f[st->col[1]].s, f[st->col[1]].len) < 0) {
		st->ids = 1;
		for (k = 0; k < 3; k++)
			if (kg_field_u64(&f[k], UINT64_MAX, &x) < 0)
				st->ids = 0;
	}
	kg_tabread_close(r);
	return rc < 0 ? -1 : 0;
}

static int
cmp_triple(const void *a, const void *b)
{
	return memcmp(a, b, 3 * sizeof(int32_t));
}

/* Repeated triples within and across splits (counted, kept). */
static uint64_t
count_repeats(const struct run *st)
{
	uint64_t total = st->n[0] + st->n[1] + st->n[2], i, d = 0, at = 0;
	int32_t *all = kg_xmallocarray(total + 1, 3 * sizeof(int32_t));
	int s;

	for (s = 0; s < 3; s++) {
		if (st->n[s] > 0)
			memcpy(all + 3 * at, st->trip[s], st->n[s] * 3 *
			    sizeof(int32_t));
		at += st->n[s];
	}
	/* memcmp order is a total order on the bytes, all we need. */
	qsort(all, total, 3 * sizeof(int32_t), cmp_triple);
	for (i = 1; i < total; i++)
		d += memcmp(all + 3 * i, all + 3 * (i - 1),
		    3 * sizeof(int32_t)) == 0;
	free(all);
	return d;
}

static int
write_names(const char *dir, const char *file, const struct dict_in *di)
{
	struct kg_strbuf b = { NULL, 0, 0 };
	char num[32];
	uint64_t i;
	int rc;

	for (i = 0; i < di->n; i++) {
		snprintf(num, sizeof(num), "%" PRIu64 "\t", i);
		kg_strbuf_add(&b, num);
		kg_strbuf_add(&b, di->names[i]);
		kg_strbuf_add(&b, "\n");
	}
	rc = kg_write_text(dir, file, b.s);
	free(b.s);
	return rc;
}

static int
write_all(struct run *st, struct kg_stage *sg)
{
	static const char *const npy[3] = { "train.npy", "valid.npy",
	    "test.npy" };
	int s;

	if (write_names(sg->dir, "entities.tsv", &st->ent) < 0 ||
	    write_names(sg->dir, "relations.tsv", &st->rel) < 0 ||
	    kg_stage_add_file(sg, "entities.tsv") < 0 ||
	    kg_stage_add_file(sg, "relations.tsv") < 0)
		return -1;
	for (s = 0; s < 3; s++) {
		uint64_t shape[2] = { st->n[s], 3 };

		if (kg_manifest_put_npy(&sg->manifest, sg->dir, npy[s],
		    KG_DT_I4, 2, shape, st->trip[s]) < 0)
			return -1;
	}
	return 0;
}

static void
set_manifest(struct kg_manifest *m, const struct run *st)
{
	const struct kg_dglke_opts *o = st->o;
	char delim[2] = { o->tab.delim, '\0' };
	json_t *t = json_object();
	int s;

	kg_manifest_set_config(m, "format", json_string(st->ids ? "udd" :
	    "built_in"));
	kg_manifest_set_config(m, "delimiter", json_string(delim));
	kg_manifest_set_config(m, "columns", json_string(o->columns));
	kg_manifest_set_config(m, "entity_dict", json_string(o->entities));
	kg_manifest_set_config(m, "relation_dict", json_string(o->relations));
	kg_manifest_set_config(m, "train", json_string(o->train));
	kg_manifest_set_config(m, "valid", o->valid ? json_string(o->valid) :
	    json_null());
	kg_manifest_set_config(m, "test", o->test ? json_string(o->test) :
	    json_null());
	kg_manifest_set_figure(m, "entities", json_integer((json_int_t)
	    st->ent.n));
	kg_manifest_set_figure(m, "relations", json_integer((json_int_t)
	    st->rel.n));
	for (s = 0; s < 3; s++)
		json_object_set_new(t, split_names[s], json_integer(
		    (json_int_t)st->n[s]));
	kg_manifest_set_figure(m, "triples", t);
	kg_manifest_set_figure(m, "lines", json_integer((json_int_t)
	    st->lines));
	kg_manifest_set_figure(m, "records", json_integer((json_int_t)
	    st->records));
	kg_manifest_set_figure(m, "duplicates", json_integer((json_int_t)
	    st->dups));
	kg_manifest_set_figure(m, "id_dtype", json_string("int32"));
	kg_manifest_set_figure(m, "seconds", json_real(kg_now() - st->t0));
}

/* Dictionaries, then the splits; 0 or -1. */
static int
read_all(struct run *st)
{
	const struct kg_dglke_opts *o = st->o;
	const char *files[3] = { o->train, o->valid, o->test };
	struct kg_tab_opts dt = o->tab;
	uint64_t total;
	int s;

	dt.header = 0;
	if (read_dict(&st->ent, o->entities, &dt) < 0 ||
	    read_dict(&st->rel, o->relations, &dt) < 0 || detect(st) < 0)
		return -1;
	total = kg_ingest_plain_bytes(files, 3);
	st->bytes_mode = total > 0;
	kg_progress_begin(&st->prog, o->progress, "reading", total ? "MB" :
	    "lines", total >> 20);
	for (s = 0; s < 3; s++)
		if (files[s] != NULL && read_triples(st, files[s], s) < 0)
			return -1;
	kg_progress_end(&st->prog, st->done_before);
	if (st->n[0] == 0) {
		kg_error("%s: no training triples", o->train);
		return -1;
	}
	st->dups = count_repeats(st);
	return 0;
}

int
kg_dglke_run(const struct kg_dglke_opts *o)
{
	const struct kg_stage_input in[] = { { NULL, o->entities },
	    { NULL, o->relations }, { NULL, o->train }, { NULL, o->valid },
	    { NULL, o->test } };
	struct kg_stage sg = KG_STAGE_INIT;
	struct run st;
	int k, rc;

	if (kg_ingest_check_columns(o->columns) < 0)
		return -1;
	memset(&st, 0, sizeof(st));
	st.o = o;
	st.t0 = kg_now();
	for (k = 0; k < 3; k++)
		st.col[k] = (int)(strchr(o->columns, "hrt"[k]) - o->columns);
	rc = kg_stage_begin(&sg, o->output, o->force, in, KG_ARRAY_LEN(in),
	    o->argc, o->argv);
	if (rc == 0)
		rc = read_all(&st);
	if (rc == 0)
		rc = write_all(&st, &sg);
	if (rc == 0) {
		set_manifest(&sg.manifest, &st);
		rc = kg_stage_commit(&sg);
	}
	kg_stage_release(&sg);
	dict_release(&st.ent);
	dict_release(&st.rel);
	for (k = 0; k < 3; k++)
		free(st.trip[k]);
	return rc;
}

/* dir/base + one of the suffixes that exists, or NULL. */
static char *
find_file(const char *dir, const char *base, const char *const *suffix,
    size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		char *name = kg_xasprintf("%s%s", base, suffix[i]);
		char *path = kg_path_join(dir, name);

		free(name);
		if (kg_path_exists(path))
			return path;
		free(path);
	}
	return NULL;
}

int
kg_dglke_folder(struct kg_dglke_opts *o, const char *dir)
{
	static const char *const dict[] = { ".dict" };
	static const char *const tri[] = { ".tsv", ".txt", ".tsv.gz",
	    ".txt.gz" };
	char *f[5];
	int k;

	f[0] = find_file(dir, "entities", dict, 1);
	f[1] = find_file(dir, "relations", dict, 1);
	f[2] = find_file(dir, "train", tri, KG_ARRAY_LEN(tri));
	f[3] = find_file(dir, "valid", tri, KG_ARRAY_LEN(tri));
	f[4] = find_file(dir, "test", tri, KG_ARRAY_LEN(tri));
	o->entities = f[0];
	o->relations = f[1];
	o->train = f[2];
	o->valid = f[3];
	o->test = f[4];
	for (k = 0; k < 3; k++)
		if (f[k] == NULL) {
			kg_error("'%s' has no %s (a DGL-KE dataset folder holds "
			    "entities.dict, relations.dict and train.tsv or "
			    "train.txt)", dir, k == 0 ? "entities.dict" : k == 1 ?
			    "relations.dict" : "train.tsv or train.txt");
			kg_dglke_folder_free(o);
			return -1;
		}
	return 0;
}

void
kg_dglke_folder_free(struct kg_dglke_opts *o)
{
	free((char *)o->entities);
	free((char *)o->relations);
	free((char *)o->train);
	free((char *)o->valid);
	free((char *)o->test);
	o->entities = o->relations = o->train = o->valid = o->test = NULL;
}
