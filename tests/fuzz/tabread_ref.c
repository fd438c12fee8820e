/*
 * tabread_ref: see tabread_ref.h.  Records are flattened into one byte
 * string (count, line, then each field as length and bytes), so that two
 * readings compare with memcmp and a prefix test is a prefix of bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "tabread_ref.h"
#include "fuzz.h"
#include "core/util.h"

#define MAX_FIELDS 7
#define BATCH 5

int
tab_case_parse(const uint8_t *data, size_t size, enum kg_tab_format format,
    struct tab_case *c)
{
	char d;

	if (size < 2)
		return -1;
	memset(c, 0, sizeof(*c));
	c->opts.format = format;
	c->opts.header = data[0] & 1;
	c->opts.comment = (data[0] >> 1) & 1 ? '#' : '\0';
	c->batch = (data[0] & 4) ? BATCH : 1;
	c->max = (data[0] >> 3) & 7;
	/* The comment rule's field count: 0 (every '#' line) to 7. */
	c->opts.fields = c->max;
	c->extra = data[0] >> 6;
	d = (char)data[1];
	if (d == '\n' || d == '\r')
		d = '\t';
	if (format == KG_TAB_CSV && d == '"')
		d = ',';
	c->opts.delim = d;
	c->text = (const char *)data + 2;
	c->len = size - 2;
	return 0;
}

static void
put(struct tab_recs *r, const void *p, size_t n)
{
	if (r->len + n > r->cap) {
		r->cap = (r->len + n) * 2 + 256;
		r->bytes = kg_xrealloc(r->bytes, r->cap);
	}
	if (n > 0)
		memcpy(r->bytes + r->len, p, n);
	r->len += n;
}

/* Append one record: n fields in all, the first min(n, max) in f. */
static void
put_rec(struct tab_recs *r, const struct kg_field *f, size_t n, size_t max,
    uint64_t line)
{
	size_t k;

	put(r, &n, sizeof(n));
	put(r, &line, sizeof(line));
	for (k = 0; k < n && k < max; k++) {
		put(r, &f[k].len, sizeof(f[k].len));
		put(r, f[k].s, f[k].len);
	}
	r->n_recs++;
}

void
tab_read_file(const char *path, const struct tab_case *c,
    struct tab_recs *out)
{
	struct kg_field f[BATCH * MAX_FIELDS];
	size_t n[BATCH];
	uint64_t line[BATCH];
	struct kg_tabread *r;
	int rc, k;

	memset(out, 0, sizeof(*out));
	if (kg_tabread_open(&r, path, &c->opts) < 0) {
		out->failed = 1;
		return;
	}
	while ((rc = kg_tabread_batch(r, f, c->max, c->batch, n, line)) > 0) {
		FUZZ_CHECK((size_t)rc <= c->batch, "batch too large");
		for (k = 0; k < rc; k++) {
			FUZZ_CHECK(n[k] >= 1, "a record without fields");
			put_rec(out, f + (size_t)k * c->max, n[k], c->max,
			    line[k]);
		}
		FUZZ_CHECK(kg_tabread_line(r) == line[rc - 1],
		    "kg_tabread_line is not the last record's line");
	}
	out->failed = rc < 0;
	out->lines = kg_tabread_lines(r);
	out->comments = kg_tabread_comments(r);
	out->blanks = kg_tabread_blanks(r);
	kg_tabread_close(r);
}

/* Split one line (without its "\n" and final "\r") at the delimiter. */
static void
reference_line(struct tab_recs *out, const struct tab_case *c,
    const char *s, size_t len, uint64_t line)
{
	struct kg_field f[MAX_FIELDS];
	size_t n = 0, i, start = 0;

	for (i = 0; i <= len; i++) {
		if (i < len && s[i] != c->opts.delim)
			continue;
		if (n < MAX_FIELDS) {
			f[n].s = s + start;
			f[n].len = i - start;
		}
		n++;
		start = i + 1;
	}
	put_rec(out, f, n, c->max, line);
}

/* Is a line of len > 0 bytes a comment, by tabread.h's rule? */
static int
reference_comment(const struct tab_case *c, const char *s, size_t len)
{
	size_t i, n = 1;

	if (c->opts.comment == '\0' || s[0] != c->opts.comment)
		return 0;
	for (i = 0; i < len; i++)
		n += s[i] == c->opts.delim;
	return c->opts.fields == 0 || n != c->opts.fields;
}

void
tab_reference(const struct tab_case *c, struct tab_recs *out)
{
	const char *s = c->text, *end = c->text + c->len, *nl;
	int header_done = 0;

	memset(out, 0, sizeof(*out));
	/* A UTF-8 byte-order mark at the start is not text (issue 12). */
	if (c->len >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
		s += 3;
	while (s < end) {
		size_t len;

		nl = memchr(s, '\n', (size_t)(end - s));
		len = (size_t)((nl != NULL ? nl : end) - s);
		out->lines++;
		if (len > 0 && s[len - 1] == '\r')
			len--;
		if (len == 0)
			out->blanks++;
		else if (reference_comment(c, s, len))
			out->comments++;
		else if (c->opts.header && !header_done)
			header_done = 1;
		else
			reference_line(out, c, s, len, out->lines);
		s = nl != NULL ? nl + 1 : end;
	}
}

int
tab_recs_equal(const struct tab_recs *a, const struct tab_recs *b)
{
	return a->failed == b->failed && a->n_recs == b->n_recs &&
	    a->len == b->len && (a->len == 0 ||
	    memcmp(a->bytes, b->bytes, a->len) == 0) &&
	    a->lines == b->lines && a->comments == b->comments &&
	    a->blanks == b->blanks;
}

int
tab_recs_prefix(const struct tab_recs *a, const struct tab_recs *b)
{
	return a->len <= b->len && (a->len == 0 ||
	    memcmp(a->bytes, b->bytes, a->len) == 0);
}

void
tab_recs_release(struct tab_recs *r)
{
	free(r->bytes);
	memset(r, 0, sizeof(*r));
}
