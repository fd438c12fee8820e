#include "attrs/attrs_table.h"

#include <csv.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/util.h"

/* One row as libcsv delivers it, field by field. */
struct row_state {
	struct kg_attr_reader *r;
	const struct kg_attr_table *t;
	const char *path;
	struct kg_dict attrs;	/* attribute name -> schema index */
	char *buf;		/* field bytes, each NUL-terminated */
	size_t buf_len, buf_cap;
	size_t *field_off;
	size_t n_fields, fields_cap;
	uint64_t line;		/* line being fed */
	uint64_t row_line;	/* line of the first field of the row */
	int64_t *col_attr;	/* wide form: attribute of each column, -1 */
	size_t n_cols;		/* wide form: columns after the entity */
	uint64_t rows_ended;	/* rows libcsv has closed */
	int pending;		/* input fed since the last row end */
	int header_done;
	int failed;
};

static void
on_field(void *s, size_t len, void *arg)
{
	struct row_state *st = arg;

	if (st->n_fields == 0)
		st->row_line = st->line;
	if (st->n_fields == st->fields_cap) {
		st->fields_cap = st->fields_cap ? 2 * st->fields_cap : 16;
		st->field_off = kg_xreallocarray(st->field_off,
		    st->fields_cap, sizeof(size_t));
	}
	if (st->buf_len + len + 1 > st->buf_cap) {
		while (st->buf_len + len + 1 > st->buf_cap)
			st->buf_cap = st->buf_cap ? 2 * st->buf_cap : 4096;
		st->buf = kg_xrealloc(st->buf, st->buf_cap);
	}
	st->field_off[st->n_fields++] = st->buf_len;
	if (len > 0)
		memcpy(st->buf + st->buf_len, s, len);
	st->buf_len += len;
	st->buf[st->buf_len++] = '\0';
}

static const char *
field(const struct row_state *st, size_t i, size_t *len)
{
	size_t end = i + 1 < st->n_fields ? st->field_off[i + 1] :
	    st->buf_len;

	*len = end - st->field_off[i] - 1;
	return st->buf + st->field_off[i];
}

/* Count a data error; 0 if it is tolerated (row skipped), -1 if not. */
static int KG_PRINTF(2, 3)
data_error(struct row_state *st, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (++st->r->n_errors <= st->r->max_errors) {
		kg_warn("%s:%llu: %s (row skipped)", st->path,
		    (unsigned long long)st->row_line, msg);
		return 0;
	}
	kg_error("%s:%llu: %s", st->path, (unsigned long long)st->row_line,
	    msg);
	st->failed = 1;
	return -1;
}

/* Quote at most 60 bytes of s for a message. */
static const char *
shorten(const char *s, size_t len, char *buf, size_t cap)
{
	if (len > 60)
		snprintf(buf, cap, "%.57s...", s);
	else
		snprintf(buf, cap, "%s", s);
	return buf;
}

/* "lex"^^<type> or "lex"@lang -> lex; anything else unchanged. */
static void
strip_rdf(const char **v, size_t *len)
{
	const char *s = *v, *q;

	if (*len < 2 || s[0] != '"')
		return;
	q = s + *len - 1;
	while (q > s && *q != '"')
		q--;
	if (q == s)
		return;
	if (q[1] != '\0' && q[1] != '@' && !(q[1] == '^' && q[2] == '^'))
		return;
	*v = s + 1;
	*len = (size_t)(q - s - 1);
}

static int
emit(struct row_state *st, uint32_t ent, uint32_t attr, const char *v,
    size_t len)
{
	char msg[400];

	if (st->t->rdf_literals)
		strip_rdf(&v, &len);
	if (kg_attr_schema_is_na(st->r->schema, v, len))
		return 0;
	msg[0] = '\0';
	if (st->r->fn(st->r->arg, ent, attr, v, len, msg, sizeof(msg)) != 0)
		return data_error(st, "%s", msg) < 0 ? -1 : 1;
	st->r->n_values++;
	return 0;
}

static int
lookup_entity(struct row_state *st, int64_t *ent)
{
	char sb[80];
	size_t len;
	const char *name = field(st, 0, &len);

	if (len == 0)
		return data_error(st, "empty entity name") < 0 ? -1 : 1;
	*ent = kg_dict_find(st->r->entities, name, len);
	if (*ent >= 0)
		return 0;
	if (st->t->skip_unknown_entities) {
		st->r->n_skipped_entities++;
		return 1;
	}
	return data_error(st, "unknown entity '%s'",
	    shorten(name, len, sb, sizeof(sb))) < 0 ? -1 : 1;
}

static void
mark_named(struct kg_attr_reader *r, int64_t attr)
{
	if (r->named != NULL && attr >= 0)
		r->named[attr] = 1;
}

static int
wide_header(struct row_state *st)
{
	char sb[80];
	size_t i, j, len;
	const char *name;

	st->n_cols = st->n_fields - 1;
	if (st->n_cols == 0) {
		kg_error("%s:%llu: the header names no attribute column",
		    st->path, (unsigned long long)st->row_line);
		return -1;
	}
	st->col_attr = kg_xcalloc(st->n_cols, sizeof(int64_t));
	for (i = 0; i < st->n_cols; i++) {
		name = field(st, i + 1, &len);
		st->col_attr[i] = kg_dict_find(&st->attrs, name, len);
		if (st->col_attr[i] < 0 && !st->t->skip_unknown_attributes) {
			kg_error("%s:%llu: attribute '%s' is not in the "
			    "schema", st->path,
			    (unsigned long long)st->row_line,
			    shorten(name, len, sb, sizeof(sb)));
			return -1;
		}
		for (j = 0; j < i; j++)
			if (st->col_attr[i] >= 0 &&
			    st->col_attr[j] == st->col_attr[i]) {
				kg_error("%s:%llu: column '%s' appears twice",
				    st->path,
				    (unsigned long long)st->row_line, name);
				return -1;
			}
		mark_named(st->r, st->col_attr[i]);
	}
	return 0;
}

static int
process_row(struct row_state *st)
{
	char sb[80];
	int64_t ent, attr;
	size_t i, len;
	const char *v;
	int rc;

	if (!st->header_done) {
		st->header_done = 1;
		if (st->t->wide && st->t->header)
			return wide_header(st);
		if (st->t->header)
			return 0;
	}
	st->r->n_rows++;
	if (st->t->wide) {
		if (st->n_fields != st->n_cols + 1)
			return data_error(st, "expected %zu fields, found %zu",
			    st->n_cols + 1, st->n_fields);
		if ((rc = lookup_entity(st, &ent)) != 0)
			return rc < 0 ? -1 : 0;
		for (i = 0; i < st->n_cols; i++) {
			if (st->col_attr[i] < 0)
				continue;
			v = field(st, i + 1, &len);
			if ((rc = emit(st, (uint32_t)ent,
			    (uint32_t)st->col_attr[i], v, len)) != 0)
				return rc < 0 ? -1 : 0;
		}
		return 0;
	}
	if (st->n_fields != 3)
		return data_error(st, "expected 3 fields (entity, attribute, "
		    "value), found %zu", st->n_fields);
	v = field(st, 1, &len);
	attr = kg_dict_find(&st->attrs, v, len);
	if (attr < 0) {
		if (st->t->skip_unknown_attributes)
			return 0;
		return data_error(st, "attribute '%s' is not in the schema",
		    shorten(v, len, sb, sizeof(sb)));
	}
	mark_named(st->r, attr);
	if ((rc = lookup_entity(st, &ent)) != 0)
		return rc < 0 ? -1 : 0;
	v = field(st, 2, &len);
	return emit(st, (uint32_t)ent, (uint32_t)attr, v, len) < 0 ? -1 : 0;
}

static void
on_row(int c, void *arg)
{
	struct row_state *st = arg;

	(void)c;
	st->rows_ended++;
	if (!st->failed && process_row(st) < 0)
		st->failed = 1;
	st->n_fields = 0;
	st->buf_len = 0;
}

static int
parser_init(struct csv_parser *p, const struct kg_attr_table *t)
{
	if (csv_init(p, CSV_APPEND_NULL) != 0) {
		kg_error("out of memory");
		return -1;
	}
	csv_set_delim(p, (unsigned char)t->delimiter);
	csv_set_quote(p, (unsigned char)t->quote);
	return 0;
}

static int
blank(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
			return 0;
	return 1;
}

/*
 * Feed one piece of input to libcsv: a whole line with its '\n' (whole
 * = 1) or a part of one.  A line end inside quotes is an error unless the
 * table allows multi-line fields: a stray quote would otherwise swallow
 * the rows that follow.  The parser restarts after such an error.
 */
static int
feed(struct csv_parser *p, struct row_state *st, const char *s, size_t len,
    int whole)
{
	uint64_t ended = st->rows_ended;

	if (memchr(s, '\0', len) != NULL) {
		kg_error("%s:%llu: NUL byte in input", st->path,
		    (unsigned long long)st->line);
		return -1;
	}
	if (csv_parse(p, s, len, on_field, on_row, st) != len) {
		kg_error("%s:%llu: %s", st->path,
		    (unsigned long long)st->line,
		    csv_strerror(csv_error(p)));
		return -1;
	}
	if (st->failed)
		return -1;
	if (whole && st->rows_ended != ended) {
		st->pending = 0;
		return 0;
	}
	if (!blank(s, len))
		st->pending = 1;
	if (!whole || st->t->multiline || st->t->quote == '\0' ||
	    !st->pending)
		return 0;
	st->row_line = st->line;
	if (data_error(st, "unterminated quoted field (a line end inside "
	    "quotes needs \"multiline\": true)") < 0)
		return -1;
	csv_free(p);
	if (parser_init(p, st->t) < 0)
		return -1;
	st->n_fields = 0;
	st->buf_len = 0;
	st->pending = 0;
	return 0;
}

/*
 * With an entity range, a simple line (no quote character, the entity
 * field without blanks around it) whose entity is outside the range, or
 * unknown in a table that skips unknown entities, is skipped unparsed:
 * a shard then pays libcsv only for its own rows.  Anything else goes
 * through the full path, which reports errors.
 */
static int
fast_skip(struct row_state *st, const char *s, size_t len)
{
	const struct kg_attr_reader *r = st->r;
	const char *d;
	int64_t ent;

	if (st->t->quote != '\0' && memchr(s, st->t->quote, len) != NULL)
		return 0;
	d = memchr(s, st->t->delimiter, len);
	if (d == NULL || d == s || s[0] == ' ' || s[0] == '\t' ||
	    d[-1] == ' ' || d[-1] == '\t')
		return 0;
	ent = kg_dict_find(r->entities, s, (size_t)(d - s));
	if (ent < 0) {
		if (!st->t->skip_unknown_entities)
			return 0;
		st->r->n_skipped_entities++;
	} else if ((uint64_t)ent >= r->lo && (uint64_t)ent < r->hi)
		return 0;
	st->r->n_rows++;
	return 1;
}

/* The reading state of table t: the schema's attribute names and, for a
 * wide table without header, the attribute of each column. */
static void
row_state_init(struct row_state *st, struct kg_attr_reader *r,
    const struct kg_attr_table *t, const char *path)
{
	size_t i;

	memset(st, 0, sizeof(*st));
	st->r = r;
	st->t = t;
	st->path = path;
	st->line = 1;
	kg_dict_init(&st->attrs);
	for (i = 0; i < r->schema->n_attrs; i++)
		(void)kg_dict_intern(&st->attrs, r->schema->attrs[i].name,
		    strlen(r->schema->attrs[i].name), NULL);
	if (t->wide && !t->header) {
		st->n_cols = t->n_columns;
		st->col_attr = kg_xcalloc(st->n_cols, sizeof(int64_t));
		for (i = 0; i < st->n_cols; i++) {
			st->col_attr[i] = kg_attr_schema_find(r->schema,
			    t->columns[i], strlen(t->columns[i]));
			mark_named(r, st->col_attr[i]);
		}
	}
}

static void
row_state_release(struct row_state *st)
{
	free(st->buf);
	free(st->field_off);
	free(st->col_attr);
	kg_dict_release(&st->attrs);
}

/* Feed s[0..len), a piece of the input, line by line; a line cut at the
 * end of the piece goes to libcsv as a part. */
static int
feed_lines(struct csv_parser *p, struct row_state *st, const char *s,
    const char *end)
{
	const char *nl;

	while (s < end) {
		nl = memchr(s, '\n', (size_t)(end - s));
		if (nl == NULL)
			return feed(p, st, s, (size_t)(end - s), 0);
		if (st->r->hi != 0 && st->header_done && !st->pending &&
		    fast_skip(st, s, (size_t)(nl - s))) {
			st->line++;
			s = nl + 1;
			continue;
		}
		if (feed(p, st, s, (size_t)(nl - s + 1), 1) < 0)
			return -1;
		st->line++;
		s = nl + 1;
	}
	return 0;
}

/* Read gz to its end through the parser (a UTF-8 byte order mark at the
 * start is dropped), then check how the table ended. */
static int
read_rows(gzFile gz, struct csv_parser *p, struct row_state *st)
{
	size_t cap = 1 << 16;
	char *buf = kg_xmalloc(cap), *s;
	int n, rc = -1, first = 1;

	for (;;) {
		n = gzread(gz, buf, (unsigned)cap);
		if (n < 0) {
			int e;

			kg_error("%s: read error: %s", st->path,
			    gzerror(gz, &e));
			goto out;
		}
		if (n == 0)
			break;
		s = buf;
		if (first && n >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
			s += 3;
		first = 0;
		if (feed_lines(p, st, s, buf + n) < 0)
			goto out;
	}
	if (csv_fini(p, on_field, on_row, st) != 0) {
		kg_error("%s:%llu: %s", st->path, (unsigned long long)st->line,
		    csv_strerror(csv_error(p)));
		goto out;
	}
	if (st->failed)
		goto out;
	if (st->t->wide && st->t->header && !st->header_done) {
		kg_error("%s: empty table (no header row)", st->path);
		goto out;
	}
	rc = 0;
out:
	free(buf);
	return rc;
}

int
kg_attr_read_table(struct kg_attr_reader *r, const struct kg_attr_table *t,
    const char *path)
{
	struct row_state st;
	struct csv_parser p;
	gzFile gz;
	int rc = -1;

	row_state_init(&st, r, t, path);
	gz = gzopen(path, "rb");
	if (gz == NULL) {
		kg_error_errno("cannot open '%s'", path);
		goto out;
	}
	if (parser_init(&p, t) < 0) {
		gzclose(gz);
		goto out;
	}
	rc = read_rows(gz, &p, &st);
	csv_free(&p);
	gzclose(gz);
out:
	row_state_release(&st);
	return rc;
}
