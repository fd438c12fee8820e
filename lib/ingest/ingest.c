/*
 * ingest: reading triple records into provisional IDs, and the node-types
 * file (see ingest.h and ingest_impl.h).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/progress.h"
#include "io/dict.h"
#include "ingest/ingest_impl.h"
#include "io/tabread.h"
#include "core/util.h"

int
kg_ingest_bad_record(struct ingest *st, const char *file, uint64_t line,
    const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	st->bad++;
	if (st->bad > st->o->max_errors) {
		if (st->o->max_errors > 0)
			kg_error("%s:%" PRIu64 ": %s (more than %" PRIu64
			    " bad lines)", file, line, msg, st->o->max_errors);
		else
			kg_error("%s:%" PRIu64 ": %s", file, line, msg);
		return -1;
	}
	kg_warn("%s:%" PRIu64 ": %s; line skipped", file, line, msg);
	return 0;
}

/* Names are written byte for byte into "id<TAB>name" lines, so they
 * cannot hold line breaks or tabs; the dictionary refuses NUL and names
 * longer than KG_DICT_MAX_NAME. */
static const char *
name_problem(const char *s, size_t len)
{
	size_t i;

	_Static_assert(KG_DICT_MAX_NAME == 262128, "update the message");
	if (len > KG_DICT_MAX_NAME)
		return "is longer than 262128 bytes";
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\0')
			return "holds a NUL byte";
		if (c == '\t' || c == '\n' || c == '\r')
			return "holds a tab or a line break";
	}
	return NULL;
}

/* A name for a message: control characters shown as \t, \n, \r, \0 and
 * \xHH, and long names cut, so that one message stays one line. */
static void
quote_name(char *out, size_t cap, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, k = 0;

	for (i = 0; i < len && k + 8 < cap; i++) {
		unsigned char c = (unsigned char)s[i];
		const char *esc = c == '\t' ? "\\t" : c == '\n' ? "\\n" :
		    c == '\r' ? "\\r" : c == '\0' ? "\\0" : NULL;

		if (esc != NULL) {
			out[k++] = esc[0];
			out[k++] = esc[1];
		} else if (c < 0x20 || c == 0x7f) {
			out[k++] = '\\';
			out[k++] = 'x';
			out[k++] = hex[c >> 4];
			out[k++] = hex[c & 15];
		} else
			out[k++] = (char)c;
	}
	if (i < len) {
		memcpy(out + k, "...", 3);
		k += 3;
	}
	out[k] = '\0';
}

/* ---- reading ---- */

/* Progress so far, reader r included (NULL: between files): MB of
 * plain files, whose total is known, or lines. */
uint64_t
kg_ingest_progress_units(const struct ingest *st,
    const struct kg_tabread *r)
{
	if (st->bytes_mode)
		return (st->bytes + (r ? kg_tabread_bytes(r) : 0)) >> 20;
	return st->lines + (r ? kg_tabread_lines(r) : 0);
}

static void
progress(struct ingest *st, const struct kg_tabread *r)
{
	double now = kg_now();

	if (now < st->next_progress)
		return;
	st->next_progress = now + 1.0;
	kg_progress_update(&st->prog, kg_ingest_progress_units(st, r));
}

/* Start the progress line: with an ETA when the inputs are plain
 * files. */
void
kg_ingest_progress_begin(struct ingest *st)
{
	const struct kg_ingest_opts *o = st->o;
	const char *split[3] = { o->train, o->valid, o->test };
	uint64_t total = o->train != NULL ? kg_ingest_plain_bytes(split, 3) :
	    kg_ingest_plain_bytes((const char *const *)o->inputs,
	    o->n_inputs);

	st->bytes_mode = total > 0;
	kg_progress_begin(&st->prog, o->progress, "reading", total ? "MB" :
	    "lines", total >> 20);
}

uint64_t
kg_ingest_plain_bytes(const char *const *paths, size_t n)
{
	uint64_t sum = 0;
	unsigned char magic[2];
	struct stat sb;
	size_t i;
	FILE *f;

	for (i = 0; i < n; i++) {
		if (paths[i] == NULL)
			continue;
		if (strcmp(paths[i], "-") == 0 || stat(paths[i], &sb) != 0 ||
		    !S_ISREG(sb.st_mode) || (f = fopen(paths[i], "rb")) ==
		    NULL)
			return 0;
		if (fread(magic, 1, 2, f) == 2 && magic[0] == 0x1f &&
		    magic[1] == 0x8b) {
			fclose(f);
			return 0;
		}
		fclose(f);
		sum += (uint64_t)sb.st_size;
	}
	return sum;
}

/* The names of one record, hashed, with candidate IDs from the table. */
struct rec {
	struct kg_field f[3];	/* head, relation, tail */
	uint64_t hash[3];
	uint32_t cand[3];	/* candidate record references, or 0 */
};

static inline struct kg_dict *
dict_of(struct ingest *st, int k)
{
	return k == 1 ? &st->rel : &st->ent;
}

/* The ID of field k of a record, or -1 if absent. */
static inline int64_t
lookup(struct ingest *st, const struct rec *rc, int k)
{
	const struct kg_dict *d = dict_of(st, k);
	int64_t id;

	if (rc->cand[k] != 0 && (id = kg_dict_record_id(d, rc->cand[k],
	    rc->f[k].s, rc->f[k].len)) >= 0)
		return id;
	return kg_dict_find_hashed(d, rc->f[k].s, rc->f[k].len, rc->hash[k]);
}

/*
 * Look up or insert the names of one record; ids[] gets the provisional
 * IDs.  Nothing is inserted when a new name is unusable.  Returns 0, 1
 * for a bad name (message in *why, field in *which), -1 on error.
 */
static int
resolve(struct ingest *st, const struct rec *rc, int64_t ids[3],
    const char **why, int *which)
{
	int k;

	for (k = 0; k < 3; k++) {
		ids[k] = lookup(st, rc, k);
		if (ids[k] < 0 && (*why = name_problem(rc->f[k].s,
		    rc->f[k].len)) != NULL) {
			*which = k;
			return 1;
		}
	}
	/* In the order h, r, t; a tail equal to a new head finds the head. */
	for (k = 0; k < 3; k++) {
		if (ids[k] >= 0)
			continue;
		ids[k] = kg_dict_intern_hashed(dict_of(st, k), rc->f[k].s,
		    rc->f[k].len, rc->hash[k], NULL);
		if (ids[k] < 0)
			return -1;
	}
	return 0;
}

static const char *const role_names[3] = { "head", "relation", "tail" };

/* Append one triple; returns its index. */
static uint64_t
push(struct ingest *st, const int64_t ids[3])
{
	if (st->n == st->cap) {
		st->cap = st->cap ? st->cap * 2 : 1 << 16;
		st->trip = kg_xreallocarray(st->trip, st->cap,
		    3 * sizeof(*st->trip));
		if (st->where != NULL || (st->o->use_split &&
		    st->o->unseen == KG_UNSEEN_ERROR))
			st->where = kg_xreallocarray(st->where, st->cap,
			    sizeof(*st->where));
	}
	st->trip[3 * st->n] = (uint32_t)ids[0];
	st->trip[3 * st->n + 1] = (uint32_t)ids[1];
	st->trip[3 * st->n + 2] = (uint32_t)ids[2];
	return st->n++;
}

/*
 * Check a valid/test record of split files against train before any name
 * is inserted.  Returns 0 to keep it, 1 to drop it, -1 for an error.
 */
static int
check_unseen(struct ingest *st, const struct rec *rc, const char *file,
    uint64_t line, int split, int *unseen)
{
	char name[96];
	int64_t id;
	int k;

	*unseen = 0;
	for (k = 0; k < 3; k++) {
		uint64_t lim = k == 1 ? st->train_rel : st->train_ent;

		id = lookup(st, rc, k);
		if (id >= 0 && (uint64_t)id < lim)
			continue;
		*unseen = 1;
		if (st->o->unseen == KG_UNSEEN_KEEP)
			return 0;
		if (st->o->unseen == KG_UNSEEN_DROP)
			return 1;
		quote_name(name, sizeof(name), rc->f[k].s, rc->f[k].len);
		kg_error("%s:%" PRIu64 ": %s '%s' of a %s triple does not "
		    "occur in train", file, line, k == 1 ? "relation" :
		    "entity", name, split_names[split]);
		return -1;
	}
	return 0;
}

/* Handle one record; 0 (kept or skipped) or -1 on error. */
static int
add_record(struct ingest *st, const struct rec *rc, size_t nf,
    const char *file, uint64_t line, int split, uint64_t file_index)
{
	const char *why;
	int64_t ids[3];
	uint64_t idx;
	int k, res, which, unseen = 0;

	if (nf != 3)
		return kg_ingest_bad_record(st, file, line, "expected 3 "
		    "fields, found %zu", nf);
	for (k = 0; k < 3 && rc->f[k].len > 0; k++)
		;
	if (k < 3)
		return kg_ingest_bad_record(st, file, line, "empty %s field "
		    "(column %d)", role_names[k], st->col[k] + 1);
	if (split > 0) {
		res = check_unseen(st, rc, file, line, split, &unseen);
		if (res < 0)
			return -1;
		if (res == 1) {
			st->unseen_dropped++;
			return 0;
		}
	}
	res = resolve(st, rc, ids, &why, &which);
	if (res < 0)
		return -1;
	if (res == 1) {
		char name[96];

		quote_name(name, sizeof(name), rc->f[which].s,
		    rc->f[which].len);
		return kg_ingest_bad_record(st, file, line, "%s '%s' %s",
		    which == 1 ? "relation" : "entity", name, why);
	}
	idx = push(st, ids);
	if (st->where != NULL)
		st->where[idx] = line | file_index << LINE_BITS;
	/* With --dedup the batch is checked in kg_ingest_dedup_batch, which
	 * counts. */
	if (st->o->dedup)
		st->unseen_flag[idx % DEDUP_BATCH] = (uint8_t)unseen;
	else
		st->unseen_kept += (uint64_t)unseen;
	return 0;
}

/*
 * The records recs[0..nb) of one batch, their names hashed and their
 * table slots prefetched: read the slots and prefetch the records they
 * point to, then handle the records one by one, in order (which decides
 * the IDs).  0, or -1 after kg_error().
 */
static int
add_batch(struct ingest *st, struct rec *recs, const size_t *nf,
    const uint64_t *lines, int nb, const char *file, int split,
    uint64_t file_index)
{
	uint64_t first;
	int j, k;

	for (j = 0; j < nb; j++) {
		if (nf[j] != 3)
			continue;
		for (k = 0; k < 3; k++) {
			struct kg_dict *d = dict_of(st, k);
			uint32_t c = kg_dict_candidate(d, recs[j].hash[k]);

			recs[j].cand[k] = c;
			if (c != 0)
				kg_dict_prefetch_record(d, c, recs[j].f[k].len);
		}
	}
	first = st->n;
	for (j = 0; j < nb; j++)
		if (add_record(st, &recs[j], nf[j], file, lines[j], split,
		    file_index) < 0)
			return -1;
	if (st->o->dedup)
		kg_ingest_dedup_batch(st, first);
	st->records += (uint64_t)nb;
	return 0;
}

int
kg_ingest_add_triples(struct ingest *st, const struct kg_field *f,
    const uint64_t *lines, int n, const char *file, int split,
    uint64_t file_index)
{
	struct rec recs[KG_INGEST_BATCH];
	size_t nf[KG_INGEST_BATCH];
	int j, k;

	for (j = 0; j < n; j++) {
		nf[j] = 3;
		for (k = 0; k < 3; k++) {
			struct rec *rc = &recs[j];

			rc->f[k] = f[3 * j + k];
			rc->hash[k] = kg_dict_hash(rc->f[k].s, rc->f[k].len);
			kg_dict_prefetch(dict_of(st, k), rc->hash[k]);
		}
	}
	return add_batch(st, recs, nf, lines, n, file, split, file_index);
}

struct kg_tab_opts
kg_ingest_tab_opts(const struct kg_ingest_opts *o, size_t nfields)
{
	struct kg_tab_opts to = o->tab;

	to.fields = o->all_comments ? 0 : nfields;
	return to;
}

void
kg_ingest_count_comments(struct ingest *st, const struct kg_tabread *r)
{
	if (st->comments == 0 && kg_tabread_comments(r) > 0) {
		st->comment_file = kg_xstrdup(kg_tabread_name(r));
		st->comment_line = kg_tabread_first_comment(r);
	}
	st->comments += kg_tabread_comments(r);
}

/*
 * Read one input.  split is 0..2 for split files, -1 for split mode;
 * file_index numbers split-mode inputs for error messages.
 *
 * Records come in batches so that the table lookups of a whole batch
 * overlap: hash every name and prefetch its slot, then read the slots and
 * prefetch the records they point to, and only then handle the records
 * one by one, in order (which decides the IDs).  With millions of
 * entities each stage is a cache miss per name, and doing them one name
 * at a time left the CPU waiting most of the time.
 */
int
kg_ingest_read_input(struct ingest *st, const char *path, int split,
    uint64_t file_index)
{
	enum { B = KG_INGEST_BATCH };
	_Static_assert(B <= DEDUP_BATCH, "a dedup batch holds one batch");
	const struct kg_ingest_opts *o = st->o;
	struct kg_tab_opts to;
	struct kg_tabread *r;
	struct kg_field f[3 * B];
	struct rec recs[B];
	size_t nf[B];
	uint64_t lines[B];
	const char *file;
	int nb, j, k;
	enum kg_rdf_syntax syn = kg_ingest_syntax_of(o, path);

	if (syn != KG_RDF_NONE)
		return kg_ingest_read_rdf(st, path, syn, split, file_index);
	to = kg_ingest_tab_opts(o, 3);
	if (kg_tabread_open(&r, path, &to) < 0)
		return -1;
	file = kg_tabread_name(r);
	while ((nb = kg_tabread_batch(r, f, 3, B, nf, lines)) > 0) {
		for (j = 0; j < nb; j++) {
			if (nf[j] != 3)
				continue;
			for (k = 0; k < 3; k++) {
				struct rec *rc = &recs[j];

				rc->f[k] = f[3 * j + st->col[k]];
				rc->hash[k] = kg_dict_hash(rc->f[k].s,
				    rc->f[k].len);
				kg_dict_prefetch(dict_of(st, k), rc->hash[k]);
			}
		}
		if (add_batch(st, recs, nf, lines, nb, file, split,
		    file_index) < 0)
			goto fail;
		if (o->progress)
			progress(st, r);
	}
	if (nb < 0)
		goto fail;
	st->lines += kg_tabread_lines(r);
	kg_ingest_count_comments(st, r);
	st->blanks += kg_tabread_blanks(r);
	st->bytes += kg_tabread_bytes(r);
	kg_tabread_close(r);
	return 0;
fail:
	kg_tabread_close(r);
	return -1;
}

/* ---- node types ---- */

int
kg_ingest_read_types(struct ingest *st, const char *path,
    const struct kg_tab_opts *to, int first_wins)
{
	const char *file;
	struct kg_tabread *r;
	struct kg_field f[2];
	size_t nf;
	uint64_t i;
	int rc;

	st->type_of = kg_xmallocarray(st->n_ent + 1, sizeof(*st->type_of));
	for (i = 0; i < st->n_ent; i++)
		st->type_of[i] = -1;
	if (kg_tabread_open(&r, path, to) < 0)
		return -1;
	file = kg_tabread_name(r);
	while ((rc = kg_tabread_next(r, f, 2, &nf)) == 1) {
		uint64_t line = kg_tabread_line(r);
		int64_t e, t;
		const char *why;
		char name[96], old[96];

		if (nf != 2) {
			rc = kg_ingest_bad_record(st, file, line, "expected 2 "
			    "fields (entity, type), found %zu", nf);
		} else if (f[0].len == 0 || f[1].len == 0) {
			rc = kg_ingest_bad_record(st, file, line, "empty %s "
			    "field", f[0].len == 0 ? "entity" : "type");
		} else if ((e = kg_dict_find(&st->ent, f[0].s, f[0].len)) < 0 ||
		    final_ent(st, (uint32_t)e) == NONE) {
			st->types_unknown++;
			continue;
		} else if ((t = kg_dict_find(&st->types, f[1].s, f[1].len)) <
		    0 && (why = name_problem(f[1].s, f[1].len)) != NULL) {
			quote_name(name, sizeof(name), f[1].s, f[1].len);
			rc = kg_ingest_bad_record(st, file, line, "type '%s' "
			    "%s", name, why);
		} else {
			uint32_t id = final_ent(st, (uint32_t)e);

			if (st->type_of[id] == -1) {
				/* Type IDs only for types given to entities. */
				if (t < 0 && (t = kg_dict_intern(&st->types,
				    f[1].s, f[1].len, NULL)) < 0)
					goto fail;
				st->type_of[id] = (int32_t)t;
				st->typed++;
				continue;
			}
			if (st->type_of[id] == t)
				continue;
			quote_name(name, sizeof(name), f[0].s, f[0].len);
			quote_name(old, sizeof(old), kg_dict_name(&st->types,
			    (uint32_t)st->type_of[id]), strlen(kg_dict_name(
			    &st->types, (uint32_t)st->type_of[id])));
			if (first_wins) {
				st->types_extra++;
				continue;
			}
			rc = kg_ingest_bad_record(st, file, line, "entity '%s' "
			    "already has type '%s'", name, old);
		}
		if (rc < 0)
			goto fail;
	}
	if (rc < 0)
		goto fail;
	st->n_types = kg_dict_size(&st->types);
	kg_ingest_count_comments(st, r);
	kg_tabread_close(r);
	return 0;
fail:
	kg_tabread_close(r);
	return -1;
}
