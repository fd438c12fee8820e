#include "predict/query.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "io/tabread.h"

struct kg_query_reader {
	struct kg_tabread *tab;
	int nearest;
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
	return kg_tabread_name(r->tab);
}

void
kg_query_close(struct kg_query_reader *r)
{
	if (r == NULL)
		return;
	kg_tabread_close(r->tab);
	free(r);
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
lookup(const struct kg_query_reader *r, const struct kg_dict *d,
    const struct kg_field *f, const char *what)
{
	int64_t id = kg_dict_find(d, f->s, f->len);
	char name[128];

	if (id >= 0)
		return (int32_t)id;
	show(name, sizeof(name), f);
	kg_error("%s:%llu: unknown %s '%s'", kg_tabread_name(r->tab),
	    (unsigned long long)kg_tabread_line(r->tab), what, name);
	return -1;
}

/* Parse one record of nf fields into q.  0 or -1. */
static int
parse(const struct kg_query_reader *r, const struct kg_names *n,
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
		kg_error("%s:%llu: expected 3 fields (head, relation, tail), "
		    "found %zu", file, line, nf);
		return -1;
	}
	holes = is_hole(&f[0]) + is_hole(&f[1]) + is_hole(&f[2]);
	if (holes != 1) {
		kg_error("%s:%llu: expected exactly one '?' (the part to "
		    "predict), found %d", file, line, holes);
		return -1;
	}
	q->kind = is_hole(&f[2]) ? KG_QUERY_TAIL : is_hole(&f[0]) ?
	    KG_QUERY_HEAD : KG_QUERY_REL;
	if ((q->kind != KG_QUERY_HEAD &&
	    (q->h = lookup(r, &n->ent, &f[0], "entity")) < 0) ||
	    (q->kind != KG_QUERY_REL &&
	    (q->r = lookup(r, &n->rel, &f[1], "relation")) < 0) ||
	    (q->kind != KG_QUERY_TAIL &&
	    (q->t = lookup(r, &n->ent, &f[2], "entity")) < 0))
		return -1;
	return 0;
}

int64_t
kg_query_read(struct kg_query_reader *r, const struct kg_names *n,
    struct kg_query *q, size_t max)
{
	struct kg_field f[3];
	size_t nf, k = 0;
	int rc = 0;

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
