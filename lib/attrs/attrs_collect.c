/*
 * attrs_collect: the values of the attribute tables kept per attribute and
 * grouped by entity (kg_attrs_collect, declared in attrs.h).
 */
#include "attrs/attrs.h"

#include <stdlib.h>
#include <string.h>

#include "attrs/attrs_bins.h"
#include "attrs/attrs_table.h"
#include "core/util.h"

static void
col_reserve(struct kg_attrs_col *c, int numeric)
{
	if (c->n < c->cap)
		return;
	c->cap = c->cap ? 2 * c->cap : 1024;
	c->ent = kg_xreallocarray(c->ent, c->cap, sizeof(uint32_t));
	if (numeric)
		c->num = kg_xreallocarray(c->num, c->cap, sizeof(double));
	else {
		c->off = kg_xreallocarray(c->off, c->cap, sizeof(uint64_t));
		c->len = kg_xreallocarray(c->len, c->cap, sizeof(uint32_t));
	}
}

static void
col_push_str(struct kg_attrs_col *c, uint32_t ent, const char *v, size_t len)
{
	col_reserve(c, 0);
	if (c->arena_len + len + 1 > c->arena_cap) {
		while (c->arena_len + len + 1 > c->arena_cap)
			c->arena_cap = c->arena_cap ? 2 * c->arena_cap : 65536;
		c->arena = kg_xrealloc(c->arena, c->arena_cap);
	}
	memcpy(c->arena + c->arena_len, v, len);
	c->arena[c->arena_len + len] = '\0';
	c->ent[c->n] = ent;
	c->off[c->n] = c->arena_len;
	c->len[c->n] = (uint32_t)len;
	c->arena_len += len + 1;
	c->n++;
}

static const char *
date_format_name(const struct kg_attr_spec *sp)
{
	switch (sp->date_format) {
	case KG_DATE_ISO:
		return "ISO 8601";
	case KG_DATE_DECIMAL_YEAR:
		return "decimal year";
	case KG_DATE_STRPTIME:
		return sp->strptime_format;
	}
	return "?";
}

static int
on_value(void *arg, uint32_t ent, uint32_t attr, const char *v, size_t len,
    char *msg, size_t cap)
{
	struct kg_attrs_data *d = arg;
	const struct kg_attr_spec *sp = &d->schema->attrs[attr];
	struct kg_attrs_col *c = &d->cols[attr];
	int shown = len > 60 ? 60 : (int)len;	/* v is not NUL-terminated */
	double x;

	if (ent < d->lo || ent >= d->hi)
		return 0;
	if (len > UINT32_MAX / 2) {
		snprintf(msg, cap, "value of '%s' too long", sp->name);
		return 1;
	}
	switch (sp->kind) {
	case KG_ATTR_NUMERIC:
		if (kg_parse_number(v, len, &x) < 0) {
			snprintf(msg, cap, "attribute '%s': cannot parse "
			    "'%.*s' as a number", sp->name, shown, v);
			return 1;
		}
		break;
	case KG_ATTR_DATE:
		if (kg_parse_date(v, len, sp->date_format, sp->strptime_format,
		    &x) < 0) {
			snprintf(msg, cap, "attribute '%s': cannot parse "
			    "'%.*s' as a date (%s)", sp->name, shown, v,
			    date_format_name(sp));
			return 1;
		}
		break;
	default:
		col_push_str(c, ent - (uint32_t)d->lo, v, len);
		return 0;
	}
	col_reserve(c, 1);
	c->ent[c->n] = ent - (uint32_t)d->lo;
	c->num[c->n] = x;
	c->n++;
	return 0;
}

/* Counting sort by entity, stable, so values keep their file order. */
static void
col_group(struct kg_attrs_col *c, uint64_t n_local)
{
	uint64_t i, e, *pos;

	c->start = kg_xcalloc(n_local + 1, sizeof(uint64_t));
	c->order = kg_xmallocarray(c->n + 1, sizeof(uint64_t));
	for (i = 0; i < c->n; i++)
		c->start[c->ent[i] + 1]++;
	for (e = 0; e < n_local; e++)
		c->start[e + 1] += c->start[e];
	pos = kg_xmallocarray(n_local + 1, sizeof(uint64_t));
	memcpy(pos, c->start, n_local * sizeof(uint64_t));
	for (i = 0; i < c->n; i++)
		c->order[pos[c->ent[i]]++] = i;
	free(pos);
}

int
kg_attrs_collect(struct kg_attrs_data *d, const struct kg_attr_schema *s,
    const char *const *paths, const struct kg_dict *entities, uint64_t lo,
    uint64_t hi, uint64_t max_errors)
{
	struct kg_attr_reader r;
	size_t i;

	memset(d, 0, sizeof(*d));
	if (hi > UINT32_MAX || lo > hi) {
		kg_error("entity range [%llu, %llu) not supported",
		    (unsigned long long)lo, (unsigned long long)hi);
		return -1;
	}
	d->schema = s;
	d->lo = lo;
	d->hi = hi;
	d->cols = kg_xcalloc(s->n_attrs, sizeof(*d->cols));
	d->named = kg_xcalloc(s->n_attrs + 1, 1);
	memset(&r, 0, sizeof(r));
	r.named = d->named;
	r.schema = s;
	r.entities = entities;
	r.fn = on_value;
	r.arg = d;
	r.max_errors = max_errors;
	if (lo > 0 || hi < kg_dict_size(entities)) {
		r.lo = lo;
		r.hi = hi;
	}
	for (i = 0; i < s->n_tables; i++)
		if (kg_attr_read_table(&r, &s->tables[i], paths[i]) < 0) {
			kg_attrs_data_release(d);
			return -1;
		}
	for (i = 0; i < s->n_attrs; i++)
		col_group(&d->cols[i], hi - lo);
	d->n_rows = r.n_rows;
	d->n_values = r.n_values;
	d->n_errors = r.n_errors;
	d->n_skipped_entities = r.n_skipped_entities;
	return 0;
}

void
kg_attrs_data_release(struct kg_attrs_data *d)
{
	size_t i;

	if (d == NULL || d->cols == NULL)
		return;
	for (i = 0; i < d->schema->n_attrs; i++) {
		struct kg_attrs_col *c = &d->cols[i];

		free(c->ent);
		free(c->num);
		free(c->off);
		free(c->len);
		free(c->arena);
		free(c->start);
		free(c->order);
	}
	free(d->cols);
	free(d->named);
	memset(d, 0, sizeof(*d));
}
