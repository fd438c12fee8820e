#include "predict/query.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "io/tabread.h"

enum { SRC_TEXT, SRC_LISTS, SRC_CARTESIAN };

struct kg_query_reader {
	struct kg_tabread *tab;
	int nearest;
	int src;		/* SRC_* */
	int seen;		/* 0 nothing yet, 1 questions, 2 triples */
	/* Lists: heads, relations, tails (tab NULL: all, cartesian). */
	struct kg_tabread *list[3];
	int32_t *ids[3];	/* cartesian: the lists as IDs */
	uint64_t nids[3];
	int loaded;
	uint64_t next, total;	/* cartesian: next combination, count */
};

/* Intern names[0..n) so that name i gets ID i. */
static int
fill(struct kg_dict *d, char **names, uint64_t n, const char *dir,
    const char *file)
{
	uint64_t i;

	for (i = 0; i < n; i++) {
		int added = 0;
		int64_t id = kg_dict_intern(d, names[i], strlen(names[i]),
		    &added);

		if (id < 0)
			return -1;
		if (!added) {
			kg_error("%s/%s:%llu: name '%s' repeats line %lld", dir,
			    file, (unsigned long long)i + 1, names[i],
			    (long long)id + 1);
			return -1;
		}
	}
	return 0;
}

static int
load_one(struct kg_dict *d, const struct kg_dataset *ds, const char *file,
    uint64_t want)
{
	char **names = NULL;
	uint64_t n = 0;
	int rc;

	if (kg_dataset_names(ds, file, &names, &n) < 0)
		return -1;
	if (n != want) {
		kg_error("%s/%s: %llu names for %llu IDs", ds->dir, file,
		    (unsigned long long)n, (unsigned long long)want);
		kg_names_free(names, n);
		return -1;
	}
	rc = fill(d, names, n, ds->dir, file);
	kg_names_free(names, n);
	return rc;
}

int
kg_names_load(struct kg_names *n, const struct kg_dataset *ds)
{
	kg_dict_init(&n->ent);
	kg_dict_init(&n->rel);
	if (load_one(&n->ent, ds, "entities.tsv", ds->n_entities) < 0 ||
	    load_one(&n->rel, ds, "relations.tsv", ds->n_relations) < 0) {
		kg_names_release(n);
		return -1;
	}
	return 0;
}

void
kg_names_release(struct kg_names *n)
{
	kg_dict_release(&n->ent);
	kg_dict_release(&n->rel);
}

int
kg_query_open(struct kg_query_reader **rp, const char *path, int nearest)
{
	struct kg_tab_opts to = KG_TAB_OPTS_INIT;
	struct kg_query_reader *r = kg_xcalloc(1, sizeof(*r));

	r->nearest = nearest;
	/* A line that starts with '#' and has a query's fields is a query:
	 * kg-ingest keeps names such as "#tag" by the same rule. */
	to.fields = nearest ? 1 : 3;
	to.interactive = 1;
	if (kg_tabread_open(&r->tab, path, &to) < 0) {
		free(r);
		return -1;
	}
	*rp = r;
	return 0;
}

const char *
kg_query_name(const struct kg_query_reader *r)
{
	return r->tab != NULL ? kg_tabread_name(r->tab) :
	    kg_tabread_name(r->list[0] ? r->list[0] : r->list[1] ?
	    r->list[1] : r->list[2]);
}

void
kg_query_close(struct kg_query_reader *r)
{
	int i;

	if (r == NULL)
		return;
	kg_tabread_close(r->tab);
	for (i = 0; i < 3; i++) {
		kg_tabread_close(r->list[i]);
		free(r->ids[i]);
	}
	free(r);
}

int
kg_query_open_lists(struct kg_query_reader **rp, const char *heads,
    const char *relations, const char *tails, int cartesian)
{
	struct kg_tab_opts to = KG_TAB_OPTS_INIT;
	const char *path[3] = { heads, relations, tails };
	struct kg_query_reader *r = kg_xcalloc(1, sizeof(*r));
	int i;

	r->src = cartesian ? SRC_CARTESIAN : SRC_LISTS;
	for (i = 0; i < 3; i++) {
		if (path[i] == NULL && cartesian)
			continue;
		if (kg_tabread_open(&r->list[i], path[i], &to) < 0) {
			kg_query_close(r);
			return -1;
		}
	}
	*rp = r;
	return 0;
}

/* A name for a message: at most 80 bytes, control bytes as \xHH. */
static void
show(char *out, size_t cap, const struct kg_field *f)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, k = 0;

	for (i = 0; i < f->len && k + 8 < cap && i < 80; i++) {
		unsigned char c = (unsigned char)f->s[i];

		if (c < 0x20 || c == 0x7f) {
			out[k++] = '\\';
			out[k++] = 'x';
			out[k++] = hex[c >> 4];
			out[k++] = hex[c & 15];
		} else
			out[k++] = (char)c;
	}
	if (i < f->len) {
		memcpy(out + k, "...", 3);
		k += 3;
	}
	out[k] = '\0';
}

static int
is_hole(const struct kg_field *f)
{
	return f->len == 1 && f->s[0] == '?';
}

/* The ID of a field in d, or -1 after an error naming the line. */
static int32_t
lookup_in(struct kg_tabread *tab, const struct kg_dict *d,
    const struct kg_field *f, const char *what)
{
	int64_t id = kg_dict_find(d, f->s, f->len);
	char name[128];

	if (id >= 0)
		return (int32_t)id;
	show(name, sizeof(name), f);
	kg_error("%s:%llu: unknown %s '%s'", kg_tabread_name(tab),
	    (unsigned long long)kg_tabread_line(tab), what, name);
	return -1;
}

static int32_t
lookup(const struct kg_query_reader *r, const struct kg_dict *d,
    const struct kg_field *f, const char *what)
{
	return lookup_in(r->tab, d, f, what);
}

/* Parse one record of nf fields into q.  0 or -1. */
static int
parse(struct kg_query_reader *r, const struct kg_names *n,
    const struct kg_field *f, size_t nf, struct kg_query *q)
{
	const char *file = kg_tabread_name(r->tab);
	unsigned long long line = kg_tabread_line(r->tab);
	int holes;

	q->h = q->r = q->t = -1;
	q->line = line;
	if (r->nearest) {
		q->kind = KG_QUERY_NEAR;
		if (nf != 1) {
			kg_error("%s:%llu: expected one entity name, found %zu "
			    "fields", file, line, nf);
			return -1;
		}
		return (q->h = lookup(r, &n->ent, &f[0], "entity")) < 0 ? -1 :
		    0;
	}
	if (nf != 3) {
		/* One field is most often spaces for tabs, or a name meant
		 * for --nearest. */
		kg_error("%s:%llu: expected 3 fields (head, relation, tail), "
		    "found %zu%s", file, line, nf, nf == 1 ? " (fields are "
		    "separated by tabs; for the entities nearest a name, give "
		    "--nearest)" : "");
		return -1;
	}
	holes = is_hole(&f[0]) + is_hole(&f[1]) + is_hole(&f[2]);
	if (holes > 1) {
		kg_error("%s:%llu: expected one '?' (the part to predict) or "
		    "none (a triple to score), found %d", file, line, holes);
		return -1;
	}
	if (r->seen != 0 && r->seen != 2 - (holes == 1)) {
		kg_error("%s:%llu: a %s among %s: give them in separate runs",
		    file, line, holes ? "question" : "triple to score",
		    holes ? "triples to score" : "questions");
		return -1;
	}
	r->seen = 2 - (holes == 1);
	q->kind = holes == 0 ? KG_QUERY_SCORE : is_hole(&f[2]) ?
	    KG_QUERY_TAIL : is_hole(&f[0]) ? KG_QUERY_HEAD : KG_QUERY_REL;
	if ((q->kind != KG_QUERY_HEAD &&
	    (q->h = lookup(r, &n->ent, &f[0], "entity")) < 0) ||
	    (q->kind != KG_QUERY_REL &&
	    (q->r = lookup(r, &n->rel, &f[1], "relation")) < 0) ||
	    (q->kind != KG_QUERY_TAIL &&
	    (q->t = lookup(r, &n->ent, &f[2], "entity")) < 0))
		return -1;
	return 0;
}

/* One name a line from list i into *id: 1, 0 at its end, -1. */
static int
list_next(struct kg_query_reader *r, const struct kg_names *n, int i,
    int32_t *id)
{
	static const char *const what[3] = { "entity", "relation", "entity" };
	struct kg_field f[2];
	size_t nf;
	int rc = kg_tabread_next(r->list[i], f, 2, &nf);

	if (rc <= 0)
		return rc;
	if (nf != 1) {
		kg_error("%s:%llu: expected one name a line, found %zu fields",
		    kg_tabread_name(r->list[i]),
		    (unsigned long long)kg_tabread_line(r->list[i]), nf);
		return -1;
	}
	*id = lookup_in(r->list[i], i == 1 ? &n->rel : &n->ent, &f[0],
	    what[i]);
	return *id < 0 ? -1 : 1;
}

/* Line i of each list, as triples to score. */
static int64_t
read_lists(struct kg_query_reader *r, const struct kg_names *n,
    struct kg_query *q, size_t max)
{
	size_t k;
	int i;

	for (k = 0; k < max; k++) {
		int32_t id[3];
		int got[3];

		for (i = 0; i < 3; i++)
			if ((got[i] = list_next(r, n, i, &id[i])) < 0)
				return -1;
		if (got[0] + got[1] + got[2] == 0)
			break;
		for (i = 0; i < 3; i++)
			if (!got[i]) {
				kg_error("%s ends after %llu names, before %s",
				    kg_tabread_name(r->list[i]),
				    (unsigned long long)r->next,
				    kg_tabread_name(r->list[got[0] ? 0 :
				    got[1] ? 1 : 2]));
				return -1;
			}
		r->next++;
		q[k].h = id[0];
		q[k].r = id[1];
		q[k].t = id[2];
		q[k].kind = KG_QUERY_SCORE;
		q[k].line = r->next;
	}
	return (int64_t)k;
}

/* The cartesian lists as IDs (a missing one: every ID). */
static int
load_lists(struct kg_query_reader *r, const struct kg_names *n)
{
	int i, rc;

	for (i = 0; i < 3; i++) {
		uint64_t cap = 64, all = i == 1 ? kg_dict_size(&n->rel) :
		    kg_dict_size(&n->ent);
		int32_t id;

		if (r->list[i] == NULL) {
			r->ids[i] = kg_xmallocarray(all + 1, sizeof(int32_t));
			for (r->nids[i] = 0; r->nids[i] < all; r->nids[i]++)
				r->ids[i][r->nids[i]] = (int32_t)r->nids[i];
			continue;
		}
		r->ids[i] = kg_xmallocarray(cap, sizeof(int32_t));
		while ((rc = list_next(r, n, i, &id)) == 1) {
			if (r->nids[i] == cap) {
				cap *= 2;
				r->ids[i] = kg_xreallocarray(r->ids[i], cap,
				    sizeof(int32_t));
			}
			r->ids[i][r->nids[i]++] = id;
		}
		if (rc < 0)
			return -1;
	}
	r->total = r->nids[0] * r->nids[1] * r->nids[2];
	if (r->nids[0] && r->total / r->nids[0] != r->nids[1] * r->nids[2]) {
		kg_error("too many combinations");
		return -1;
	}
	r->loaded = 1;
	return 0;
}

void
kg_query_combination(const struct kg_query_reader *r, uint64_t idx,
    struct kg_query *q)
{
	uint64_t nr = r->nids[1], nt = r->nids[2];

	q->h = r->ids[0][idx / (nr * nt)];
	q->r = r->ids[1][idx / nt % nr];
	q->t = r->ids[2][idx % nt];
	q->kind = KG_QUERY_SCORE;
	q->line = idx + 1;
}

int64_t
kg_query_read(struct kg_query_reader *r, const struct kg_names *n,
    struct kg_query *q, size_t max)
{
	struct kg_field f[3];
	size_t nf, k = 0;
	int rc = 0;

	if (r->src == SRC_LISTS)
		return read_lists(r, n, q, max);
	if (r->src == SRC_CARTESIAN) {
		if (!r->loaded && load_lists(r, n) < 0)
			return -1;
		for (; k < max && r->next < r->total; k++)
			kg_query_combination(r, r->next++, &q[k]);
		return (int64_t)k;
	}
	/* What has arrived is answered before waiting for more. */
	while (k < max && (k == 0 || kg_tabread_ready(r->tab)) &&
	    (rc = kg_tabread_next(r->tab, f, 3, &nf)) == 1) {
		if (parse(r, n, f, nf, &q[k]) < 0)
			return -1;
		k++;
	}
	if (k < max && rc < 0)
		return -1;
	return (int64_t)k;
}
