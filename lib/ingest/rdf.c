/*
 * rdf: Serd glue (see rdf.h).  The terms of a statement are copied into
 * one arena as they are converted, and handed out once the statement is
 * complete: for the line syntaxes only after the whole line parsed, so a
 * line with an error contributes nothing.
 */
#include "ingest/rdf.h"
#include "ingest/rdf_scan.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <serd/serd.h>
#include <zlib.h>

#include "core/util.h"
#include "io/tabread.h"

#define IN_CHUNK ((size_t)256 << 10)

/* Where a term lies in the arena (offsets: the arena may move). */
struct tref {
	size_t off, len;
	enum kg_rdf_kind kind;
	int set;
};

struct rd {
	const struct kg_rdf_opts *o;
	const struct kg_rdf_sink *sink;
	struct kg_rdf_counts *c;
	const char *file;
	SerdEnv *env;
	SerdReader *reader;
	char *arena;
	size_t alen, acap;
	struct tref t[6];	/* s, p, o, g, datatype, lang */
	int n_stmt;		/* line syntaxes: statements on the line */
	char err[512];		/* the first error of a line or document */
	uint64_t err_line;
	int has_err;
	int failed;		/* a sink callback returned -1 */
	uint64_t line;		/* line syntaxes: the current line */
	/* Turtle: the input, handed to Serd a byte at a time. */
	gzFile gz;
	unsigned char *in;
	size_t in_len, in_pos;
	uint64_t nl_before;	/* line breaks before the last byte read */
	uint64_t skipped;	/* lines read by the Turtle fast path */
	int last_nl;
	int read_failed;
	/* Turtle: the prefixes declared so far, as Serd expands them. */
	struct pfx {
		char *name, *ns;
		size_t name_len, ns_len;
	} *pfx;
	size_t n_pfx;
};

static void
arena_add(struct rd *rd, const void *s, size_t len)
{
	if (rd->alen + len + 1 > rd->acap) {
		while (rd->alen + len + 1 > rd->acap)
			rd->acap = rd->acap ? 2 * rd->acap : 4096;
		rd->arena = kg_xrealloc(rd->arena, rd->acap);
	}
	memcpy(rd->arena + rd->alen, s, len);
	rd->alen += len;
}

static void
set_err(struct rd *rd, const char *fmt, ...) KG_PRINTF(2, 3);

static void
set_err(struct rd *rd, const char *fmt, ...)
{
	va_list ap;

	if (rd->has_err)
		return;
	va_start(ap, fmt);
	vsnprintf(rd->err, sizeof(rd->err), fmt, ap);
	va_end(ap);
	rd->has_err = 1;
}

static SerdStatus
on_error(void *handle, const SerdError *e)
{
	struct rd *rd = handle;
	size_t n;
	va_list ap;

	if (rd->has_err)
		return SERD_SUCCESS;
	va_copy(ap, *e->args);
	vsnprintf(rd->err, sizeof(rd->err), e->fmt, ap);
	va_end(ap);
	n = strlen(rd->err);
	while (n > 0 && (rd->err[n - 1] == '\n' || rd->err[n - 1] == ' '))
		rd->err[--n] = '\0';
	/* Serd counts the lines it saw; the fast path's it did not. */
	rd->err_line = e->line + rd->skipped;
	rd->has_err = 1;
	return SERD_SUCCESS;
}

static SerdStatus
on_base(void *handle, const SerdNode *uri)
{
	struct rd *rd = handle;

	return serd_env_set_base_uri(rd->env, uri);
}

/* Turtle: the line of the statement just read (Serd has looked one
 * byte past it). */
static uint64_t
stream_line(const struct rd *rd)
{
	return rd->nl_before + 1;
}

/* Record prefix name (its namespace as Serd now expands it) in rd->pfx
 * and tell the sink.  0, or -1 when the sink said stop. */
static int
keep_prefix(struct rd *rd, const SerdNode *name)
{
	SerdChunk pre, suf;
	SerdNode curie;
	char *s = kg_xasprintf("%.*s:", (int)name->n_bytes,
	    (const char *)name->buf);
	struct pfx *x = NULL;
	size_t i;
	int rc = 0;

	curie = serd_node_from_string(SERD_CURIE, (const uint8_t *)s);
	if (serd_env_expand(rd->env, &curie, &pre, &suf) == SERD_SUCCESS) {
		for (i = 0; i < rd->n_pfx && x == NULL; i++)
			if (rd->pfx[i].name_len == name->n_bytes &&
			    memcmp(rd->pfx[i].name, name->buf,
			    name->n_bytes) == 0)
				x = &rd->pfx[i];
		if (x == NULL) {
			rd->pfx = kg_xreallocarray(rd->pfx, rd->n_pfx + 1,
			    sizeof(*rd->pfx));
			x = &rd->pfx[rd->n_pfx++];
			x->name = kg_xasprintf("%.*s", (int)name->n_bytes,
			    (const char *)name->buf);
			x->name_len = name->n_bytes;
		} else
			free(x->ns);
		x->ns = kg_xasprintf("%.*s", (int)pre.len,
		    (const char *)pre.buf);
		x->ns_len = pre.len;
		if (rd->sink->prefix != NULL)
			rc = rd->sink->prefix(rd->sink->arg, x->name,
			    x->name_len, x->ns, x->ns_len, rd->file,
			    stream_line(rd));
	}
	free(s);
	return rc;
}

static SerdStatus
on_prefix(void *handle, const SerdNode *name, const SerdNode *uri)
{
	struct rd *rd = handle;
	SerdStatus ss = serd_env_set_prefix(rd->env, name, uri);

	if (ss == SERD_SUCCESS && keep_prefix(rd, name) < 0) {
		rd->failed = 1;
		return SERD_ERR_UNKNOWN;
	}
	return ss;
}

/* A short form of a node for messages. */
static int
shown(const SerdNode *n)
{
	return n->n_bytes > 80 ? 80 : (int)n->n_bytes;
}

/*
 * Write node n into the arena as term k.  0, or -1 after set_err().
 * Line syntaxes take IRIs as they are (Serd has checked the scheme);
 * Turtle resolves relative IRIs and expands prefixed names.
 */
static int
put_node(struct rd *rd, int k, const SerdNode *n)
{
	int line_mode = rd->o->syntax != KG_RDF_TURTLE;
	struct tref *t = &rd->t[k];
	SerdChunk pre, suf;

	t->off = rd->alen;
	t->set = 1;
	switch (n->type) {
	case SERD_URI:
		t->kind = KG_RDF_IRI;
		if (line_mode || serd_uri_string_has_scheme(n->buf))
			arena_add(rd, n->buf, n->n_bytes);
		else {
			const SerdNode *base = serd_env_get_base_uri(rd->env,
			    NULL);
			SerdNode abs;

			if (base == NULL || base->buf == NULL) {
				set_err(rd, "relative IRI <%.*s> and no base "
				    "IRI (@base or --base)", shown(n), n->buf);
				return -1;
			}
			abs = serd_env_expand_node(rd->env, n);
			arena_add(rd, abs.buf, abs.n_bytes);
			serd_node_free(&abs);
		}
		break;
	case SERD_CURIE:
		t->kind = KG_RDF_IRI;
		if (line_mode) {
			set_err(rd, "prefixed name '%.*s' in %s", shown(n),
			    n->buf, kg_rdf_syntax_name(rd->o->syntax));
			return -1;
		}
		if (serd_env_expand(rd->env, n, &pre, &suf) != SERD_SUCCESS) {
			set_err(rd, "undefined prefix in '%.*s'", shown(n),
			    n->buf);
			return -1;
		}
		arena_add(rd, pre.buf, pre.len);
		arena_add(rd, suf.buf, suf.len);
		break;
	case SERD_BLANK:
		t->kind = KG_RDF_BLANK;
		arena_add(rd, "_:", 2);
		arena_add(rd, n->buf, n->n_bytes);
		break;
	default:
		t->kind = KG_RDF_LITERAL;
		arena_add(rd, n->buf, n->n_bytes);
		break;
	}
	t->len = rd->alen - t->off;
	arena_add(rd, "", 1);
	return 0;
}

/* The statement in the arena, as the sink sees it. */
static void
build(struct rd *rd, struct kg_rdf_stmt *st)
{
	struct kg_rdf_term *out[6] = { &st->s, &st->p, &st->o, &st->g,
	    &st->datatype, &st->lang };
	int k;

	for (k = 0; k < 6; k++) {
		struct tref *t = &rd->t[k];

		out[k]->s = t->set ? rd->arena + t->off : NULL;
		out[k]->len = t->set ? t->len : 0;
		out[k]->kind = t->kind;
	}
}

/* Convert the nodes of a statement into the arena; 0 or -1. */
static int
put_statement(struct rd *rd, const SerdNode *graph, const SerdNode *s,
    const SerdNode *p, const SerdNode *o, const SerdNode *dt,
    const SerdNode *lang)
{
	const SerdNode *n[6] = { s, p, o, graph, dt, lang };
	int k;

	rd->alen = 0;
	memset(rd->t, 0, sizeof(rd->t));
	for (k = 0; k < 6; k++)
		if (n[k] != NULL && n[k]->buf != NULL &&
		    put_node(rd, k, n[k]) < 0)
			return -1;
	return 0;
}

/* Line syntaxes: keep the line's statement until the line has parsed. */
static SerdStatus
on_statement_line(void *handle, SerdStatementFlags flags,
    const SerdNode *graph, const SerdNode *s, const SerdNode *p,
    const SerdNode *o, const SerdNode *dt, const SerdNode *lang)
{
	struct rd *rd = handle;

	(void)flags;
	if (++rd->n_stmt > 1) {
		set_err(rd, "more than one statement on a line");
		return SERD_ERR_BAD_SYNTAX;
	}
	return put_statement(rd, graph, s, p, o, dt, lang) < 0 ?
	    SERD_ERR_BAD_SYNTAX : SERD_SUCCESS;
}

static SerdStatus
on_statement_stream(void *handle, SerdStatementFlags flags,
    const SerdNode *graph, const SerdNode *s, const SerdNode *p,
    const SerdNode *o, const SerdNode *dt, const SerdNode *lang)
{
	struct rd *rd = handle;
	struct kg_rdf_stmt st;

	(void)flags;
	if (put_statement(rd, graph, s, p, o, dt, lang) < 0) {
		rd->err_line = stream_line(rd);
		return SERD_ERR_BAD_SYNTAX;
	}
	build(rd, &st);
	rd->c->statements++;
	if (rd->sink->statement(rd->sink->arg, &st, rd->file,
	    stream_line(rd)) < 0) {
		rd->failed = 1;
		return SERD_ERR_UNKNOWN;
	}
	return SERD_SUCCESS;
}

static int
rd_open(struct rd *rd, int line_mode)
{
	SerdNode base = SERD_NODE_NULL;

	if (rd->o->base != NULL)
		base = serd_node_from_string(SERD_URI,
		    (const uint8_t *)rd->o->base);
	rd->env = serd_env_new(rd->o->base != NULL ? &base : NULL);
	rd->reader = serd_reader_new(rd->o->syntax == KG_RDF_TURTLE ?
	    SERD_TURTLE : rd->o->syntax == KG_RDF_NQUADS ? SERD_NQUADS :
	    SERD_NTRIPLES, rd, NULL, on_base, on_prefix, line_mode ?
	    on_statement_line : on_statement_stream, NULL);
	if (rd->env == NULL || rd->reader == NULL) {
		kg_error("%s: cannot set up the RDF reader", rd->file);
		return -1;
	}
	serd_reader_set_strict(rd->reader, true);
	serd_reader_set_error_sink(rd->reader, on_error, rd);
	if (rd->o->blank_prefix != NULL)
		serd_reader_add_blank_prefix(rd->reader,
		    (const uint8_t *)rd->o->blank_prefix);
	return 0;
}

/* One line of N-Triples or N-Quads (more than 0 bytes), read by Serd:
 * NUL-terminated in buf.  0, or -1 when reading must stop. */
static int
read_line(struct rd *rd, char *buf, size_t len)
{
	struct kg_rdf_stmt st;
	SerdStatus ss;

	rd->n_stmt = 0;
	rd->has_err = 0;
	memset(rd->t, 0, sizeof(rd->t));
	if (memchr(buf, '\0', len) != NULL)
		set_err(rd, "NUL byte in the line");
	else {
		ss = serd_reader_read_string(rd->reader, (uint8_t *)buf);
		if (ss > SERD_FAILURE)
			set_err(rd, "syntax error");
		/* Serd reads one line as a whole document. */
		if (strcmp(rd->err, "unexpected end of file") == 0)
			snprintf(rd->err, sizeof(rd->err), "the line ends "
			    "before the statement does (a missing '.'?)");
	}
	if (rd->has_err)
		return rd->sink->bad(rd->sink->arg, rd->file, rd->line,
		    rd->err, 1);
	if (rd->n_stmt == 0)
		return 0;
	build(rd, &st);
	rd->c->statements++;
	return rd->sink->statement(rd->sink->arg, &st, rd->file, rd->line);
}

/* The lines of one batch (valid together): up to this many. */
#define LINE_BATCH KG_RDF_BATCH

/* Hand the IRI triples gathered from a batch's lines to the sink. */
static int
flush_iri(struct rd *rd, struct kg_field *t, uint64_t *lines, int *n)
{
	int rc = 0;

	if (*n > 0)
		rc = rd->sink->iri_triples(rd->sink->arg, t, lines, *n,
		    rd->file);
	rd->c->statements += (uint64_t)*n;
	*n = 0;
	return rc;
}

/*
 * A line that the fast path did not take, line[0..len) without its
 * "\n", as line rd->line: blank (nothing but a "\r"), or read by Serd
 * from a NUL-terminated copy in *buf (*cap bytes, grown here).  0, or -1
 * when reading must stop.
 */
static int
slow_line(struct rd *rd, const char *line, size_t len, char **buf,
    size_t *cap, uint64_t *blanks)
{
	if (len > 0 && line[len - 1] == '\r')
		len--;
	if (len == 0) {
		(*blanks)++;
		return 0;
	}
	if (len + 1 > *cap) {
		*cap = len + 1 > 4096 ? 2 * (len + 1) : 4096;
		*buf = kg_xrealloc(*buf, *cap);
	}
	memcpy(*buf, line, len);
	(*buf)[len] = '\0';
	return read_line(rd, *buf, len);
}

/*
 * Statements straight from the reader's buffer: the fast path takes a
 * statement of three IRIs with its line end in one scan, and its
 * triples go to the sink in batches, pointing into the buffer, until a
 * line that Serd reads (in order: the triples before it first) or the
 * end of what is buffered (before more is read in).
 */
static int
read_lines(struct rd *rd, const char *path)
{
	struct kg_tab_opts to = KG_TAB_OPTS_INIT;
	struct kg_tabread *r;
	struct kg_field t[3 * LINE_BATCH];
	uint64_t tl[LINE_BATCH], line0 = 0, nlines, blanks;
	char *buf = NULL;
	size_t cap = 0, len;
	const char *base, *p, *end, *next, *nl;
	int eof, more = 0, nt = 0, rc = 0;
	kg_rdf_fast_stmt_fn *fast = kg_rdf_pick_fast_stmt();

	to.delim = '\n';
	to.comment = '\0';
	if (kg_tabread_open(&r, path, &to) < 0)
		return -1;
	rd->file = kg_tabread_name(r);
	if (rd_open(rd, 1) < 0) {
		kg_tabread_close(r);
		return -1;
	}
	while (rc == 0 && (rc = kg_tabread_raw(r, more, &base, &len,
	    &eof)) == 0) {
		p = base;
		end = base + len;
		nlines = blanks = 0;
		while (p < end && rc == 0) {
			if ((next = fast(base, p, end, eof, t + 3 * nt)) !=
			    NULL) {
				tl[nt++] = line0 + ++nlines;
				if (nt == LINE_BATCH)
					rc = flush_iri(rd, t, tl, &nt);
				p = next;
				continue;
			}
			nl = memchr(p, '\n', (size_t)(end - p));
			if (nl == NULL && !eof)
				break;	/* the line goes on in more input */
			if ((rc = flush_iri(rd, t, tl, &nt)) < 0)
				break;
			rd->line = line0 + ++nlines;
			next = nl != NULL ? nl + 1 : end;
			rc = slow_line(rd, p, (size_t)((nl != NULL ? nl : end) -
			    p), &buf, &cap, &blanks);
			p = next;
		}
		if (rc == 0)
			rc = flush_iri(rd, t, tl, &nt);
		kg_tabread_consume(r, (size_t)(p - base), nlines, blanks);
		line0 += nlines;
		rd->c->lines = kg_tabread_lines(r);
		rd->c->bytes = kg_tabread_bytes(r);
		if (eof)
			break;
		more = 1;
	}
	rd->c->lines = kg_tabread_lines(r);
	rd->c->bytes = kg_tabread_bytes(r);
	rd->c->blanks = kg_tabread_blanks(r);
	free(buf);
	/* The name is the reader's: say it before closing. */
	kg_tabread_close(r);
	rd->file = NULL;
	return rc;
}

/* Serd's source: one byte a call, so that Serd never reads ahead of the
 * statement it is building and its line is known. */
static size_t
src_read(void *buf, size_t size, size_t nmemb, void *stream)
{
	struct rd *rd = stream;
	int got;

	(void)size;
	(void)nmemb;
	if (rd->in_pos == rd->in_len) {
		got = gzread(rd->gz, rd->in, (unsigned)IN_CHUNK);
		if (got <= 0) {
			int errnum = Z_OK;

			(void)gzerror(rd->gz, &errnum);
			if (got < 0 || errnum != Z_OK)
				rd->read_failed = 1;
			return 0;
		}
		rd->in_len = (size_t)got;
		rd->in_pos = 0;
		rd->c->bytes += (uint64_t)got;
	}
	rd->nl_before += (uint64_t)rd->last_nl;
	*(unsigned char *)buf = rd->in[rd->in_pos];
	rd->last_nl = rd->in[rd->in_pos++] == '\n';
	return 1;
}

static int
src_error(void *stream)
{
	return ((struct rd *)stream)->read_failed;
}

/* A letter, digit, '_' or '-': the bytes of the Turtle fast path's
 * prefixed names (a subset of PN_CHARS). */
static inline int
pn_char(unsigned char c)
{
	return ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || (c >= '0' &&
	    c <= '9') || c == '_' || c == '-';
}

/*
 * One term of a simple Turtle line at *pp: an absolute IRI without
 * escapes, or a prefixed name "p:local" (p empty or a letter then
 * pn_char bytes; local a letter, digit or '_' then pn_char bytes) of a
 * defined prefix, followed by a space, tab or (the object) '.'.  Writes
 * it out in the arena as term k and advances *pp; 0, or -1 when the line
 * is not simple (nothing reported: Serd reads it).
 */
static int
ttl_term(struct rd *rd, int k, const unsigned char **pp,
    const unsigned char *line, const unsigned char *end)
{
	const unsigned char *p = *pp, *a = p, *c;
	struct tref *t = &rd->t[k];
	size_t i;

	t->off = rd->alen;
	t->set = 1;
	t->kind = KG_RDF_IRI;
	if (*p == '<') {
		a = ++p;
		p = kg_rdf_iri_end(line, p, end);
		if (p == end || *p != '>' || !kg_rdf_has_scheme(a,
		    (size_t)(p - a)))
			return -1;
		arena_add(rd, a, (size_t)(p - a));
		p++;
	} else {
		if (p < end && ((*p | 0x20) >= 'a' && (*p | 0x20) <= 'z'))
			p = kg_rdf_name_end(line, p, end);
		if (p == end || *p != ':' || (p > a && p[-1] == '-'))
			return -1;
		c = p++;
		if (p == end || !pn_char(*p) || *p == '-')
			return -1;
		p = kg_rdf_name_end(line, p, end);
		for (i = 0; i < rd->n_pfx; i++)
			if (rd->pfx[i].name_len == (size_t)(c - a) &&
			    memcmp(rd->pfx[i].name, a, (size_t)(c - a)) == 0)
				break;
		if (i == rd->n_pfx)
			return -1;
		arena_add(rd, rd->pfx[i].ns, rd->pfx[i].ns_len);
		arena_add(rd, c + 1, (size_t)(p - c - 1));
	}
	if (p == end || (*p != ' ' && *p != '\t' && (k < 2 || *p != '.')))
		return -1;
	t->len = rd->alen - t->off;
	arena_add(rd, "", 1);
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	*pp = p;
	return 0;
}

/* The Turtle fast path's statements not yet handed out: term k of
 * statement j at rd->arena + off[3 * j + k], len[3 * j + k] bytes. */
struct ttl_batch {
	size_t off[3 * KG_RDF_BATCH], len[3 * KG_RDF_BATCH];
	uint64_t line[KG_RDF_BATCH];
	int n;
};

/* Hand the batch to the sink and empty it and the arena.  0, or -1
 * (rd->failed set) when the sink said stop. */
static int
ttl_flush(struct rd *rd, struct ttl_batch *b)
{
	struct kg_field t[3 * KG_RDF_BATCH];
	int j, rc = 0;

	for (j = 0; j < 3 * b->n; j++) {
		t[j].s = rd->arena + b->off[j];
		t[j].len = b->len[j];
	}
	if (b->n > 0 && rd->sink->iri_triples(rd->sink->arg, t, b->line,
	    b->n, rd->file) < 0) {
		rd->failed = 1;
		rc = -1;
	}
	rd->c->statements += (uint64_t)b->n;
	b->n = 0;
	rd->alen = 0;
	return rc;
}

/*
 * The Turtle fast path: while Serd stands between statements with a
 * line break as its look-ahead byte (so at the start of a line), whole
 * lines of one triple of three IRIs or prefixed names, "s p o .", are
 * read here and never shown to Serd; the first other line goes back to
 * Serd.  Their terms are those Serd would give (same prefixes, IRIs as
 * written), and their lines are counted; they go to the sink's
 * iri_triples in batches, the last before Serd reads on.  0, or -1 when
 * the sink said stop.
 */
static int
ttl_fast_lines(struct rd *rd)
{
	struct ttl_batch b;
	const unsigned char *line, *end, *p, *nl;
	int k;

	b.n = 0;
	rd->alen = 0;
	while (rd->last_nl && !rd->has_err) {
		line = rd->in + rd->in_pos;
		nl = memchr(line, '\n', rd->in_len - rd->in_pos);
		if (nl == NULL) {
			/* Keep the line's start and read on, once. */
			int got;

			if (rd->in_pos == 0 || rd->read_failed)
				return ttl_flush(rd, &b);
			memmove(rd->in, line, rd->in_len - rd->in_pos);
			rd->in_len -= rd->in_pos;
			rd->in_pos = 0;
			got = gzread(rd->gz, rd->in + rd->in_len,
			    (unsigned)(IN_CHUNK - rd->in_len));
			if (got <= 0)
				return ttl_flush(rd, &b);
			rd->in_len += (size_t)got;
			rd->c->bytes += (uint64_t)got;
			continue;
		}
		end = nl > line && nl[-1] == '\r' ? nl - 1 : nl;
		p = line;
		memset(rd->t, 0, sizeof(rd->t));
		if (p < end && p[0] != '@' && p[0] != '#') {
			for (k = 0; k < 3; k++)
				if (ttl_term(rd, k, &p, line, end) < 0)
					return ttl_flush(rd, &b);
			if (p == end || *p++ != '.')
				return ttl_flush(rd, &b);
			while (p < end && (*p == ' ' || *p == '\t'))
				p++;
			if (p != end)
				return ttl_flush(rd, &b);
		} else if (p != end)
			return ttl_flush(rd, &b);
		/* As if Serd had read the line: its break is the last byte. */
		rd->nl_before++;
		rd->skipped++;
		rd->in_pos = (size_t)(nl + 1 - rd->in);
		if (line == end)
			continue;
		for (k = 0; k < 3; k++) {
			b.off[3 * b.n + k] = rd->t[k].off;
			b.len[3 * b.n + k] = rd->t[k].len;
		}
		b.line[b.n++] = stream_line(rd);
		if (b.n == KG_RDF_BATCH && ttl_flush(rd, &b) < 0)
			return -1;
	}
	return ttl_flush(rd, &b);
}

static int
read_stream(struct rd *rd, const char *path)
{
	const char *name = strcmp(path, "-") == 0 ? "stdin" : path;
	int fd = strcmp(path, "-") == 0 ? dup(STDIN_FILENO) :
	    open(path, O_RDONLY | O_CLOEXEC);
	SerdStatus ss;
	int errnum, rc = 0;

	if (fd < 0) {
		kg_error_errno("%s: cannot open", name);
		return -1;
	}
	rd->file = name;
	rd->gz = gzdopen(fd, "rb");
	if (rd->gz == NULL) {
		close(fd);
		kg_error("%s: cannot open: out of memory", name);
		return -1;
	}
	gzbuffer(rd->gz, 1u << 17);
	rd->in = kg_xmalloc(IN_CHUNK);
	if (rd_open(rd, 0) < 0) {
		rc = -1;
		goto out;
	}
	/* Serd reads a byte at a time, so that it never reads ahead of the
	 * statement it is building and its line is known; simple lines
	 * between its statements go by the fast path. */
	ss = serd_reader_start_source_stream(rd->reader, src_read, src_error,
	    rd, (const uint8_t *)name, 1);
	while (ss == SERD_SUCCESS && !rd->failed) {
		ss = serd_reader_read_chunk(rd->reader);
		if (ss == SERD_SUCCESS && ttl_fast_lines(rd) < 0)
			break;
	}
	serd_reader_end_stream(rd->reader);
	rd->c->lines = rd->nl_before + rd->last_nl + (rd->c->bytes > 0 &&
	    !rd->last_nl);
	if (rd->read_failed) {
		const char *msg = gzerror(rd->gz, &errnum);

		if (errnum == Z_ERRNO)
			kg_error_errno("%s: read error", name);
		else if (errnum == Z_BUF_ERROR)
			kg_error("%s: truncated gzip input", name);
		else
			kg_error("%s: cannot decompress: %s", name, msg);
		rc = -1;
	} else if (rd->failed)
		rc = -1;
	else if (ss > SERD_FAILURE || rd->has_err) {
		if (!rd->has_err)
			set_err(rd, "syntax error");
		(void)rd->sink->bad(rd->sink->arg, name, rd->err_line ?
		    rd->err_line : stream_line(rd), rd->err, 0);
		rc = -1;
	}
out:
	gzclose(rd->gz);
	free(rd->in);
	return rc;
}

int
kg_rdf_read(const char *path, const struct kg_rdf_opts *o,
    const struct kg_rdf_sink *sink, struct kg_rdf_counts *c)
{
	struct rd rd;
	size_t i;
	int rc;

	memset(&rd, 0, sizeof(rd));
	memset(c, 0, sizeof(*c));
	rd.o = o;
	rd.sink = sink;
	rd.c = c;
	if (o->syntax == KG_RDF_TURTLE)
		rc = read_stream(&rd, path);
	else
		rc = read_lines(&rd, path);
	serd_reader_free(rd.reader);
	serd_env_free(rd.env);
	free(rd.arena);
	for (i = 0; i < rd.n_pfx; i++) {
		free(rd.pfx[i].name);
		free(rd.pfx[i].ns);
	}
	free(rd.pfx);
	return rc;
}

/* s ends with suffix. */
static int
ends_with(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len >= n && memcmp(s + len - n, suffix, n) == 0;
}

enum kg_rdf_syntax
kg_rdf_syntax_of_name(const char *path)
{
	size_t len = strlen(path);

	if (ends_with(path, len, ".gz"))
		len -= 3;
	if (ends_with(path, len, ".nt"))
		return KG_RDF_NTRIPLES;
	if (ends_with(path, len, ".nq"))
		return KG_RDF_NQUADS;
	if (ends_with(path, len, ".ttl"))
		return KG_RDF_TURTLE;
	return KG_RDF_NONE;
}

enum kg_rdf_syntax
kg_rdf_parse_syntax(const char *s)
{
	if (strcmp(s, "ntriples") == 0 || strcmp(s, "nt") == 0)
		return KG_RDF_NTRIPLES;
	if (strcmp(s, "nquads") == 0 || strcmp(s, "nq") == 0)
		return KG_RDF_NQUADS;
	if (strcmp(s, "turtle") == 0 || strcmp(s, "ttl") == 0)
		return KG_RDF_TURTLE;
	return KG_RDF_NONE;
}

const char *
kg_rdf_syntax_name(enum kg_rdf_syntax syntax)
{
	switch (syntax) {
	case KG_RDF_NTRIPLES:
		return "N-Triples";
	case KG_RDF_NQUADS:
		return "N-Quads";
	case KG_RDF_TURTLE:
		return "Turtle";
	case KG_RDF_NONE:
		break;
	}
	return "none";
}
