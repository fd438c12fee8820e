/*
 * ingest_rdf: RDF statements into triples, the literal table and node
 * types (see ingest.h, "RDF", and ingest_impl.h).  Literal rows are
 * written to the stage directory as they are read; what stays in memory
 * is one small record per literal predicate (its class counts) and the
 * predicate filters.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <jansson.h>

#include "core/util.h"
#include "ingest/ingest_impl.h"
#include "ingest/rdf.h"
#include "ingest/rdf_opts.h"
#include "ingest/rdf_schema.h"
#include "io/dict.h"
#include "io/tabread.h"

#define RDF_TYPE "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
#define LIT_TABLE "literals.tsv"
#define LIT_SCHEMA "literals.schema.json"
#define TYPES_TMP "rdf_types.tmp"

struct ingest_rdf {
	const char *dir;		/* the stage directory */
	FILE *lit;			/* the literal table */
	char *lit_path;
	FILE *types;			/* --rdf-types types: pairs */
	char *types_path;
	struct kg_dict preds;		/* literal predicates */
	uint64_t *counts;		/* KG_RDF_N_CLASSES per predicate */
	uint64_t counts_cap;
	struct kg_dict keep, drop;	/* --predicates, --exclude-predicates */
	char **langs;			/* --lang */
	size_t n_langs;
	/* --compact: prefix names and namespaces, longest namespace first;
	 * where each comes from ("--prefix", or "file:line" of a Turtle
	 * input's directive). */
	char **pname, **pns, **pfrom;
	size_t *pname_len, *pns_len, n_prefix;
	size_t n_given;			/* of them, by --prefix */
	char *cbuf[3];			/* compacted s, p, o */
	size_t ccap[3];
	/* The input being read. */
	const char *file;		/* its name in messages */
	int split;
	uint64_t file_index;
	struct kg_rdf_counts c;
	/* Triples not yet numbered: their names in parena, so that the
	 * dictionary lookups of a batch overlap (kg_ingest_add_triples). */
	char *parena;
	size_t plen, pcap;
	size_t poff[3 * KG_INGEST_BATCH], psize[3 * KG_INGEST_BATCH];
	uint64_t pline[KG_INGEST_BATCH];
	int npend;
	/* Figures. */
	uint64_t statements, edges, literals, lang_dropped, filtered;
	uint64_t graph_dropped, type_rows, files;
	double next_progress;
};

enum kg_rdf_syntax
kg_ingest_syntax_of(const struct kg_ingest_opts *o, const char *path)
{
	if (o->rdf.syntax != KG_RDF_NONE)
		return (enum kg_rdf_syntax)o->rdf.syntax;
	if (o->rdf.tabular)
		return KG_RDF_NONE;
	return kg_rdf_syntax_of_name(path);
}


/* --lang "en,de" into rdf->langs. */
static void
split_langs(struct ingest_rdf *rdf, const char *list)
{
	const char *p = list, *q;

	rdf->langs = kg_xcalloc(strlen(list) + 1, sizeof(char *));
	while (*p != '\0') {
		q = strchr(p, ',');
		if (q == NULL)
			q = p + strlen(p);
		if (q > p)
			rdf->langs[rdf->n_langs++] = kg_xasprintf("%.*s",
			    (int)(q - p), p);
		p = *q == ',' ? q + 1 : q;
	}
}


/* Sort the prefixes of --compact, longest namespace first (a stable
 * insertion sort: few prefixes), and set their lengths. */
static void
sort_prefixes(struct ingest_rdf *rdf)
{
	size_t i, j;

	for (i = 1; i < rdf->n_prefix; i++)
		for (j = i; j > 0 && strlen(rdf->pns[j]) >
		    strlen(rdf->pns[j - 1]); j--) {
			char *a = rdf->pname[j], *b = rdf->pns[j];
			char *c = rdf->pfrom[j];

			rdf->pname[j] = rdf->pname[j - 1];
			rdf->pns[j] = rdf->pns[j - 1];
			rdf->pfrom[j] = rdf->pfrom[j - 1];
			rdf->pname[j - 1] = a;
			rdf->pns[j - 1] = b;
			rdf->pfrom[j - 1] = c;
		}
	rdf->pname_len = kg_xreallocarray(rdf->pname_len, rdf->n_prefix + 1,
	    sizeof(size_t));
	rdf->pns_len = kg_xreallocarray(rdf->pns_len, rdf->n_prefix + 1,
	    sizeof(size_t));
	for (i = 0; i < rdf->n_prefix; i++) {
		rdf->pname_len[i] = strlen(rdf->pname[i]);
		rdf->pns_len[i] = strlen(rdf->pns[i]);
	}
}

/* The prefixes of --compact given by --prefix. */
static int
setup_prefixes(struct ingest_rdf *rdf, const struct kg_ingest_rdf_opts *o)
{
	size_t i;

	if (kg_rdf_parse_prefixes(o, &rdf->pname, &rdf->pns,
	    &rdf->n_prefix) < 0)
		return -1;
	rdf->n_given = rdf->n_prefix;
	rdf->pfrom = kg_xcalloc(rdf->n_prefix + 1, sizeof(char *));
	for (i = 0; i < rdf->n_prefix; i++)
		rdf->pfrom[i] = kg_xstrdup("--prefix");
	sort_prefixes(rdf);
	return 0;
}

/*
 * --compact and a Turtle input's prefix directive: the prefix joins
 * those of --compact.  A name that --prefix gives is --prefix's (the
 * directive is ignored); the same name declared again must name the same
 * namespace, and a new one must come before the first statement of the
 * run, so that every IRI is named one way.  0, or -1 after kg_error().
 */
static int
on_prefix(void *arg, const char *name, size_t name_len, const char *ns,
    size_t ns_len, const char *file, uint64_t line)
{
	struct ingest *st = arg;
	struct ingest_rdf *rdf = st->rdf;
	size_t i, n = rdf->n_prefix;

	for (i = 0; i < n; i++) {
		if (rdf->pname_len[i] != name_len || memcmp(rdf->pname[i], name,
		    name_len) != 0)
			continue;
		if (strcmp(rdf->pfrom[i], "--prefix") == 0 || (rdf->pns_len[i] ==
		    ns_len && memcmp(rdf->pns[i], ns, ns_len) == 0))
			return 0;
		kg_error("%s:%" PRIu64 ": prefix '%.*s:' declared as <%.*s> "
		    "here and as <%s> at %s; --compact needs one namespace a "
		    "prefix (choose with --prefix %.*s=IRI)", file, line,
		    (int)name_len, name, (int)ns_len, ns, rdf->pns[i],
		    rdf->pfrom[i], (int)name_len, name);
		return -1;
	}
	if (rdf->statements > 0) {
		kg_error("%s:%" PRIu64 ": prefix '%.*s:' declared after the "
		    "first statement; --compact would name its IRIs two ways "
		    "(declare it before, or give --prefix %.*s=IRI)", file,
		    line, (int)name_len, name, (int)name_len, name);
		return -1;
	}
	rdf->pname = kg_xreallocarray(rdf->pname, n + 1, sizeof(char *));
	rdf->pns = kg_xreallocarray(rdf->pns, n + 1, sizeof(char *));
	rdf->pfrom = kg_xreallocarray(rdf->pfrom, n + 1, sizeof(char *));
	rdf->pname[n] = kg_xasprintf("%.*s", (int)name_len, name);
	rdf->pns[n] = kg_xasprintf("%.*s", (int)ns_len, ns);
	rdf->pfrom[n] = kg_xasprintf("%s:%" PRIu64, file, line);
	rdf->n_prefix++;
	sort_prefixes(rdf);
	return 0;
}

int
kg_ingest_rdf_begin(struct ingest *st, const char *dir)
{
	const struct kg_ingest_rdf_opts *o = &st->o->rdf;
	struct ingest_rdf *rdf = kg_xcalloc(1, sizeof(*rdf));

	st->rdf = rdf;
	rdf->dir = dir;
	/* IRIs share few namespaces: store each once. */
	kg_dict_split_names(&st->ent);
	kg_dict_init(&rdf->preds);
	kg_dict_init(&rdf->keep);
	kg_dict_init(&rdf->drop);
	if (o->lang != NULL)
		split_langs(rdf, o->lang);
	if (o->compact && setup_prefixes(rdf, o) < 0)
		return -1;
	if ((o->predicates != NULL &&
	    kg_rdf_read_iris(&rdf->keep, o->predicates) < 0) ||
	    (o->exclude_predicates != NULL &&
	    kg_rdf_read_iris(&rdf->drop, o->exclude_predicates) < 0))
		return -1;
	rdf->lit = kg_wfile_open(dir, LIT_TABLE, &rdf->lit_path);
	if (rdf->lit == NULL)
		return -1;
	if (o->types == KG_RDF_TYPES_TYPES) {
		rdf->types = kg_wfile_open(dir, TYPES_TMP, &rdf->types_path);
		if (rdf->types == NULL)
			return -1;
	}
	return 0;
}

void
kg_ingest_rdf_free(struct ingest *st)
{
	struct ingest_rdf *rdf = st->rdf;
	size_t i;

	if (rdf == NULL)
		return;
	if (rdf->lit != NULL)
		fclose(rdf->lit);
	if (rdf->types != NULL)
		fclose(rdf->types);
	free(rdf->lit_path);
	free(rdf->types_path);
	kg_dict_release(&rdf->preds);
	kg_dict_release(&rdf->keep);
	kg_dict_release(&rdf->drop);
	free(rdf->counts);
	free(rdf->parena);
	for (i = 0; i < rdf->n_prefix; i++) {
		free(rdf->pname[i]);
		free(rdf->pns[i]);
		free(rdf->pfrom[i]);
	}
	free(rdf->pname);
	free(rdf->pns);
	free(rdf->pfrom);
	free(rdf->pname_len);
	free(rdf->pns_len);
	for (i = 0; i < 3; i++)
		free(rdf->cbuf[i]);
	for (i = 0; i < rdf->n_langs; i++)
		free(rdf->langs[i]);
	free(rdf->langs);
	free(rdf);
	st->rdf = NULL;
}

/* Is the language tag one of --lang (equal, or a subtag of it, such as
 * en-GB for en; case-insensitive)? */
static int
lang_kept(const struct ingest_rdf *rdf, const struct kg_rdf_term *lang)
{
	size_t i, n;

	if (rdf->n_langs == 0 || lang->s == NULL)
		return 1;
	for (i = 0; i < rdf->n_langs; i++) {
		n = strlen(rdf->langs[i]);
		if (lang->len >= n && strncasecmp(lang->s, rdf->langs[i], n) ==
		    0 && (lang->len == n || lang->s[n] == '-'))
			return 1;
	}
	return 0;
}

/* Bytes s[0..len) with every double quote doubled. */
static void
put_doubled(FILE *f, const char *s, size_t len)
{
	const char *p, *q, *end = s + len;

	for (p = s; p < end; p = q + 1) {
		q = memchr(p, '"', (size_t)(end - p));
		if (q == NULL) {
			fwrite(p, 1, (size_t)(end - p), f);
			return;
		}
		fwrite(p, 1, (size_t)(q - p), f);
		fputs("\"\"", f);
	}
}

/*
 * One field of the literal table: as it is, or between double quotes
 * with quotes doubled when it holds a quote, tab or line break, starts
 * or ends with a space, or is empty (so that a CSV reader with a tab
 * delimiter, as kg-encode-attrs, gives back the bytes).
 */
static void
put_field(FILE *f, const char *s, size_t len)
{
	const char *p, *end = s + len;
	int quote = len == 0 || s[0] == ' ' || s[len - 1] == ' ';

	for (p = s; p < end && !quote; p++)
		quote = *p == '"' || *p == '\t' || *p == '\n' || *p == '\r';
	if (!quote) {
		fwrite(s, 1, len, f);
		return;
	}
	putc('"', f);
	put_doubled(f, s, len);
	putc('"', f);
}

/* The literal field: "lex", "lex"@lang or "lex"^^<datatype>, always
 * quoted, as kg-encode-attrs' "literals": "rdf" reads it. */
static void
put_literal(FILE *f, const struct kg_rdf_stmt *s)
{
	fputs("\"\"\"", f);
	put_doubled(f, s->o.s, s->o.len);
	fputs("\"\"", f);
	if (s->lang.s != NULL) {
		putc('@', f);
		fwrite(s->lang.s, 1, s->lang.len, f);
	} else if (s->datatype.s != NULL) {
		fputs("^^<", f);
		put_doubled(f, s->datatype.s, s->datatype.len);
		putc('>', f);
	}
	putc('"', f);
}

/* Count a literal row of predicate p in class cls. */
static int
count_row(struct ingest_rdf *rdf, const struct kg_rdf_term *p,
    enum kg_rdf_class cls)
{
	int64_t id = kg_dict_intern(&rdf->preds, p->s, p->len, NULL);

	if (id < 0)
		return -1;
	if ((uint64_t)id >= rdf->counts_cap) {
		uint64_t old = rdf->counts_cap;

		rdf->counts_cap = rdf->counts_cap ? 2 * rdf->counts_cap : 64;
		rdf->counts = kg_xreallocarray(rdf->counts, rdf->counts_cap,
		    KG_RDF_N_CLASSES * sizeof(uint64_t));
		memset(rdf->counts + old * KG_RDF_N_CLASSES, 0,
		    (rdf->counts_cap - old) * KG_RDF_N_CLASSES *
		    sizeof(uint64_t));
	}
	rdf->counts[(uint64_t)id * KG_RDF_N_CLASSES + cls]++;
	return 0;
}

/* Number the triples waiting in the batch; 0 or -1. */
static int
flush_edges(struct ingest *st)
{
	struct ingest_rdf *rdf = st->rdf;
	struct kg_field f[3 * KG_INGEST_BATCH];
	int j, n = rdf->npend;

	if (n == 0)
		return 0;
	for (j = 0; j < 3 * n; j++) {
		f[j].s = rdf->parena + rdf->poff[j];
		f[j].len = rdf->psize[j];
	}
	rdf->npend = 0;
	rdf->plen = 0;
	return kg_ingest_add_triples(st, f, rdf->pline, n, rdf->file,
	    rdf->split, rdf->file_index);
}

/* Queue the triple (s, p, o) of line; 0 or -1. */
static int
queue_edge(struct ingest *st, const struct kg_rdf_stmt *s, uint64_t line)
{
	struct ingest_rdf *rdf = st->rdf;
	const struct kg_rdf_term *t[3] = { &s->s, &s->p, &s->o };
	size_t need = s->s.len + s->p.len + s->o.len;
	int k, j = rdf->npend;

	if (rdf->plen + need > rdf->pcap) {
		while (rdf->plen + need > rdf->pcap)
			rdf->pcap = rdf->pcap ? 2 * rdf->pcap : 1 << 16;
		rdf->parena = kg_xrealloc(rdf->parena, rdf->pcap);
	}
	for (k = 0; k < 3; k++) {
		rdf->poff[3 * j + k] = rdf->plen;
		rdf->psize[3 * j + k] = t[k]->len;
		memcpy(rdf->parena + rdf->plen, t[k]->s, t[k]->len);
		rdf->plen += t[k]->len;
	}
	rdf->pline[j] = line;
	rdf->edges++;
	if (++rdf->npend == KG_INGEST_BATCH)
		return flush_edges(st);
	return 0;
}

/* A literal (or, with --rdf-types attribute, an rdf:type object) as a
 * row of the literal table.  0, or -1 after kg_error(). */
static int
literal_row(struct ingest *st, const struct kg_rdf_stmt *s, const char *file,
    uint64_t line, int type_row)
{
	struct ingest_rdf *rdf = st->rdf;
	enum kg_rdf_class cls;

	if (!type_row && memchr(s->o.s, '\0', s->o.len) != NULL)
		return flush_edges(st) < 0 ? -1 : kg_ingest_bad_record(st,
		    file, line, "literal holds a NUL byte (the literal table "
		    "cannot hold one)");
	if (!type_row && !lang_kept(rdf, &s->lang)) {
		rdf->lang_dropped++;
		return 0;
	}
	cls = type_row ? KG_RDF_MULTILABEL : kg_rdf_classify(&s->o,
	    &s->datatype, &s->lang);
	if (count_row(rdf, &s->p, cls) < 0)
		return -1;
	put_field(rdf->lit, s->s.s, s->s.len);
	putc('\t', rdf->lit);
	put_field(rdf->lit, s->p.s, s->p.len);
	putc('\t', rdf->lit);
	if (type_row)
		put_field(rdf->lit, s->o.s, s->o.len);
	else
		put_literal(rdf->lit, s);
	putc('\n', rdf->lit);
	if (type_row)
		rdf->type_rows++;
	else
		rdf->literals++;
	return 0;
}

/* --rdf-types types: "entity<TAB>type" for the node types file. */
static int
type_pair(struct ingest *st, const struct kg_rdf_stmt *s, const char *file,
    uint64_t line)
{
	struct ingest_rdf *rdf = st->rdf;

	if (memchr(s->s.s, '\t', s->s.len) != NULL ||
	    memchr(s->s.s, '\n', s->s.len) != NULL ||
	    memchr(s->o.s, '\t', s->o.len) != NULL ||
	    memchr(s->o.s, '\n', s->o.len) != NULL)
		return flush_edges(st) < 0 ? -1 : kg_ingest_bad_record(st,
		    file, line, "rdf:type statement names a node with a tab "
		    "or a line break");
	fwrite(s->s.s, 1, s->s.len, rdf->types);
	putc('\t', rdf->types);
	fwrite(s->o.s, 1, s->o.len, rdf->types);
	putc('\n', rdf->types);
	rdf->type_rows++;
	return 0;
}

static void
rdf_progress(struct ingest *st)
{
	struct ingest_rdf *rdf = st->rdf;
	double now = kg_now();

	if (now < rdf->next_progress)
		return;
	rdf->next_progress = now + 1.0;
	kg_progress_update(&st->prog, st->bytes_mode ? (st->bytes +
	    rdf->c.bytes) >> 20 : st->lines + rdf->c.lines);
}

/* Is the statement dropped by --graph or the predicate filters?
 * (Counted.) */
static int
dropped(struct ingest_rdf *rdf, const struct kg_ingest_rdf_opts *o,
    const struct kg_rdf_stmt *s)
{
	if (o->graph != NULL && (s->g.s == NULL || s->g.len !=
	    strlen(o->graph) || memcmp(s->g.s, o->graph, s->g.len) != 0)) {
		rdf->graph_dropped++;
		return 1;
	}
	if ((o->predicates != NULL && kg_dict_find(&rdf->keep, s->p.s,
	    s->p.len) < 0) || (o->exclude_predicates != NULL &&
	    kg_dict_find(&rdf->drop, s->p.s, s->p.len) >= 0)) {
		rdf->filtered++;
		return 1;
	}
	return 0;
}

static int
is_rdf_type(const struct kg_rdf_stmt *s)
{
	return s->p.len == strlen(RDF_TYPE) && memcmp(s->p.s, RDF_TYPE,
	    s->p.len) == 0;
}

/*
 * --compact: the prefix whose namespace starts IRI t (the longest), in
 * *pi, and 1; 0 when none does or t is no IRI; -1 when t itself reads as
 * a prefixed name "p:..." of a given prefix, which compacting would make
 * ambiguous.
 */
static int
compact_of(const struct ingest_rdf *rdf, const struct kg_rdf_term *t,
    size_t *pi)
{
	size_t i;

	if (t->kind != KG_RDF_IRI)
		return 0;
	for (i = 0; i < rdf->n_prefix; i++)
		if (t->len > rdf->pname_len[i] && t->s[rdf->pname_len[i]] ==
		    ':' && memcmp(t->s, rdf->pname[i], rdf->pname_len[i]) ==
		    0) {
			*pi = i;
			return -1;
		}
	for (i = 0; i < rdf->n_prefix; i++)
		if (t->len >= rdf->pns_len[i] && memcmp(t->s, rdf->pns[i],
		    rdf->pns_len[i]) == 0) {
			*pi = i;
			return 1;
		}
	return 0;
}

/* The statement with --compact's names for its subject, predicate and
 * object, in *out (pointing into rdf->cbuf); 0, or 1 for a bad
 * statement (reported; skipped when --max-errors allows: *rc 0), with
 * *rc -1 when fatal. */
static int
compacted(struct ingest *st, const struct kg_rdf_stmt *s,
    struct kg_rdf_stmt *out, const char *file, uint64_t line, int *rc)
{
	struct ingest_rdf *rdf = st->rdf;
	struct kg_rdf_term *t[3] = { &out->s, &out->p, &out->o };
	size_t pi, n;
	int k, c;

	*out = *s;
	for (k = 0; k < 3; k++) {
		if ((c = compact_of(rdf, t[k], &pi)) == 0)
			continue;
		if (c < 0) {
			int shown = t[k]->len > 80 ? 80 : (int)t[k]->len;

			*rc = flush_edges(st) < 0 ? -1 :
			    kg_ingest_bad_record(st, file, line, "IRI '%.*s' "
			    "reads as a name of --prefix %s, so --compact "
			    "could not be undone", shown, t[k]->s,
			    rdf->pname[pi]);
			return 1;
		}
		n = rdf->pname_len[pi] + 1 + t[k]->len - rdf->pns_len[pi];
		if (n + 1 > rdf->ccap[k]) {
			rdf->ccap[k] = 2 * (n + 1);
			rdf->cbuf[k] = kg_xrealloc(rdf->cbuf[k], rdf->ccap[k]);
		}
		memcpy(rdf->cbuf[k], rdf->pname[pi], rdf->pname_len[pi]);
		rdf->cbuf[k][rdf->pname_len[pi]] = ':';
		memcpy(rdf->cbuf[k] + rdf->pname_len[pi] + 1, t[k]->s +
		    rdf->pns_len[pi], t[k]->len - rdf->pns_len[pi]);
		t[k]->s = rdf->cbuf[k];
		t[k]->len = n;
	}
	return 0;
}

static int
on_statement(void *arg, const struct kg_rdf_stmt *s0, const char *file,
    uint64_t line)
{
	struct ingest *st = arg;
	struct ingest_rdf *rdf = st->rdf;
	enum kg_rdf_types how = st->o->rdf.types;
	struct kg_rdf_stmt sc;
	const struct kg_rdf_stmt *s = s0;
	int rc, is_type;

	rdf->statements++;
	if (st->o->progress && (rdf->statements & 0xfff) == 0)
		rdf_progress(st);
	if (dropped(rdf, &st->o->rdf, s))
		return 0;
	is_type = s->o.kind != KG_RDF_LITERAL && is_rdf_type(s);
	if (rdf->n_prefix > 0) {
		if (compacted(st, s, &sc, file, line, &rc))
			return rc;
		s = &sc;
	}
	if (s->o.kind == KG_RDF_LITERAL)
		return literal_row(st, s, file, line, 0);
	if (is_type && how == KG_RDF_TYPES_TYPES)
		return type_pair(st, s, file, line);
	if (is_type && how == KG_RDF_TYPES_ATTRIBUTE)
		return literal_row(st, s, file, line, 1);
	return queue_edge(st, s, line);
}

/* Statements of three IRIs in a batch: triples numbered in place (the
 * names are the reader's), after those queued before them. */
static int
on_iri_triples(void *arg, const struct kg_field *t, const uint64_t *lines,
    int n, const char *file)
{
	struct ingest *st = arg;
	struct ingest_rdf *rdf = st->rdf;
	const struct kg_ingest_rdf_opts *o = &st->o->rdf;
	struct kg_rdf_stmt s;
	struct kg_rdf_term *term[3] = { &s.s, &s.p, &s.o };
	int j, k;

	_Static_assert(KG_RDF_BATCH <= KG_INGEST_BATCH, "a batch of "
	    "statements fits one of triples");
	if (flush_edges(st) < 0)
		return -1;
	/* With a graph, filters, renaming or rdf:type statements that may
	 * be no triples, the batch goes one statement at a time, in order. */
	if (rdf->n_prefix > 0 || o->graph != NULL || o->predicates != NULL ||
	    o->exclude_predicates != NULL || o->types != KG_RDF_TYPES_EDGE) {
		memset(&s, 0, sizeof(s));
		for (j = 0; j < n; j++) {
			for (k = 0; k < 3; k++) {
				term[k]->s = t[3 * j + k].s;
				term[k]->len = t[3 * j + k].len;
				term[k]->kind = KG_RDF_IRI;
			}
			if (on_statement(st, &s, file, lines[j]) < 0)
				return -1;
		}
		n = 0;
	}
	rdf->statements += (uint64_t)n;
	rdf->edges += (uint64_t)n;
	if (st->o->progress)
		rdf_progress(st);
	return n > 0 ? kg_ingest_add_triples(st, t, lines, n, rdf->file,
	    rdf->split, rdf->file_index) : 0;
}

static int
on_bad(void *arg, const char *file, uint64_t line, const char *msg,
    int resumable)
{
	struct ingest *st = arg;

	/* Triples of earlier lines are reported first. */
	if (flush_edges(st) < 0)
		return -1;
	if (resumable)
		return kg_ingest_bad_record(st, file, line, "%s", msg);
	if (st->o->max_errors > 0)
		kg_error("%s:%" PRIu64 ": %s (a Turtle syntax error stops "
		    "reading: --max-errors skips bad lines of N-Triples and "
		    "N-Quads only)", file, line, msg);
	else
		kg_error("%s:%" PRIu64 ": %s", file, line, msg);
	return -1;
}

/* Inputs in all: split files, or the inputs. */
static uint64_t
n_files(const struct kg_ingest_opts *o)
{
	if (o->train != NULL)
		return 1 + (o->valid != NULL) + (o->test != NULL);
	return o->n_inputs;
}

/* The number (from 1) of the input being read, in reading order: split
 * file "split" (0..2) after those given before it, or input file_index. */
static uint64_t
file_number(const struct kg_ingest_opts *o, int split, uint64_t file_index)
{
	if (split < 0)
		return file_index + 1;
	return 1 + (split > 1 && o->valid != NULL) + (split > 0);
}

int
kg_ingest_read_rdf(struct ingest *st, const char *path,
    enum kg_rdf_syntax syntax, int split, uint64_t file_index)
{
	struct ingest_rdf *rdf = st->rdf;
	struct kg_rdf_opts ro;
	struct kg_rdf_sink sink = { on_statement, on_bad, on_iri_triples,
	    st->o->rdf.compact ? on_prefix : NULL, st };
	char prefix[32];
	int rc;

	memset(&ro, 0, sizeof(ro));
	ro.syntax = syntax;
	ro.base = st->o->rdf.base;
	/* File k (from 1) of several: the split file, or the input. */
	if (n_files(st->o) > 1) {
		snprintf(prefix, sizeof(prefix), "f%" PRIu64 ".",
		    file_number(st->o, split, file_index));
		ro.blank_prefix = prefix;
	}
	rdf->file = strcmp(path, "-") == 0 ? "stdin" : path;
	rdf->split = split;
	rdf->file_index = file_index;
	rdf->files++;
	rc = kg_rdf_read(path, &ro, &sink, &rdf->c);
	if (rc == 0)
		rc = flush_edges(st);
	st->lines += rdf->c.lines;
	st->blanks += rdf->c.blanks;
	st->bytes += rdf->c.bytes;
	memset(&rdf->c, 0, sizeof(rdf->c));
	return rc;
}

int
kg_ingest_rdf_types(struct ingest *st)
{
	struct ingest_rdf *rdf = st->rdf;
	struct kg_tab_opts to = KG_TAB_OPTS_INIT;
	int rc;

	if (rdf == NULL || rdf->types == NULL)
		return 0;
	rc = kg_wfile_close(rdf->types, rdf->types_path, 0);
	rdf->types = NULL;
	rdf->types_path = NULL;
	if (rc < 0)
		return -1;
	to.comment = '\0';
	to.fields = 2;
	rdf->types_path = kg_path_join(rdf->dir, TYPES_TMP);
	rc = kg_ingest_read_types(st, rdf->types_path, &to, 1);
	unlink(rdf->types_path);
	return rc;
}

/* dir/name holding doc, indented, ASCII, with a final newline; 0 or -1. */
static int
write_json(const char *dir, const char *name, const json_t *doc)
{
	char *text = json_dumps(doc, JSON_INDENT(2) | JSON_ENSURE_ASCII);
	char *line = kg_xasprintf("%s\n", text);
	int rc = kg_write_text(dir, name, line);

	free(text);
	free(line);
	return rc;
}

int
kg_ingest_rdf_end(struct ingest *st, struct kg_stage *stage)
{
	struct ingest_rdf *rdf = st->rdf;
	uint64_t i, n;
	const char **names;
	char *desc;
	json_t *schema;
	int rc;

	if (rdf == NULL)
		return 0;
	rc = kg_wfile_close(rdf->lit, rdf->lit_path, 1);
	rdf->lit = NULL;
	rdf->lit_path = NULL;
	if (rc < 0)
		return -1;
	n = kg_dict_size(&rdf->preds);
	names = kg_xcalloc(n + 1, sizeof(*names));
	for (i = 0; i < n; i++)
		names[i] = kg_dict_name(&rdf->preds, (uint32_t)i);
	desc = kg_xasprintf("Proposed by kg-ingest for the literals of this "
	    "dataset's RDF input (%s): xsd numeric types numeric, xsd date "
	    "types date, strings and language-tagged strings text%s%s, "
	    "others categorical. Edit freely; kg-encode-attrs fit "
	    "--schema literals.schema.json reads it as it is.", LIT_TABLE,
	    st->o->rdf.lang ? " in the languages " : "", st->o->rdf.lang ?
	    st->o->rdf.lang : "");
	schema = kg_rdf_schema_json(names, n, rdf->counts, LIT_TABLE, desc);
	free(desc);
	free(names);
	rc = write_json(stage->dir, LIT_SCHEMA, schema);
	json_decref(schema);
	if (rc < 0 || kg_stage_add_file(stage, LIT_TABLE) < 0 ||
	    kg_stage_add_file(stage, LIT_SCHEMA) < 0)
		return -1;
	return 0;
}

void
kg_ingest_rdf_figures(struct kg_manifest *m, const struct ingest *st)
{
	const struct ingest_rdf *rdf = st->rdf;
	json_t *r, *preds;
	uint64_t i, n;

	if (rdf == NULL)
		return;
	r = json_object();
	preds = json_object();
#define PUT(k, v) json_object_set_new(r, k, json_integer((json_int_t)(v)))
	PUT("files", rdf->files);
	PUT("statements", rdf->statements);
	PUT("edges", rdf->edges);
	PUT("literals", rdf->literals);
	PUT("type_rows", rdf->type_rows);
	PUT("types_ignored", st->types_extra);
	PUT("other_language", rdf->lang_dropped);
	PUT("predicate_filtered", rdf->filtered);
	PUT("other_graph", rdf->graph_dropped);
#undef PUT
	n = kg_dict_size(&rdf->preds);
	for (i = 0; i < n; i++) {
		const uint64_t *c = rdf->counts + i * KG_RDF_N_CLASSES;

		json_object_set_new(preds, kg_dict_name(&rdf->preds,
		    (uint32_t)i), json_pack("{s:s,s:I,s:I,s:I,s:I,s:I}", "kind",
		    kg_rdf_kind_of(c), "numeric", (json_int_t)c[KG_RDF_NUMERIC],
		    "date", (json_int_t)c[KG_RDF_DATE], "text",
		    (json_int_t)c[KG_RDF_TEXT], "categorical",
		    (json_int_t)c[KG_RDF_CATEGORICAL], "multi_label",
		    (json_int_t)c[KG_RDF_MULTILABEL]));
	}
	json_object_set_new(r, "literal_predicates", preds);
	if (rdf->n_prefix > 0) {
		json_t *c = json_array();

		for (i = 0; i < rdf->n_prefix; i++)
			json_array_append_new(c, json_pack("{s:s,s:s,s:s}",
			    "name", rdf->pname[i], "namespace", rdf->pns[i],
			    "from", rdf->pfrom[i]));
		json_object_set_new(r, "compact_prefixes", c);
	}
	kg_manifest_set_figure(m, "rdf", r);
}

void
kg_ingest_rdf_config(struct kg_manifest *m, const struct kg_ingest_opts *o)
{
	static const char *const types[] = { "edge", "types", "attribute" };
	const struct kg_ingest_rdf_opts *r = &o->rdf;
	json_t *c = json_object();

#define STR(k, v) json_object_set_new(c, k, (v) ? json_string(v) : json_null())
	STR("syntax", r->syntax == KG_RDF_NTRIPLES ? "ntriples" :
	    r->syntax == KG_RDF_NQUADS ? "nquads" : r->syntax ==
	    KG_RDF_TURTLE ? "turtle" : NULL);
	STR("base", r->base);
	STR("graph", r->graph);
	STR("lang", r->lang);
	STR("rdf_types", types[r->types]);
	STR("predicates", r->predicates);
	STR("exclude_predicates", r->exclude_predicates);
#undef STR
	json_object_set_new(c, "compact", json_boolean(r->compact));
	{
		json_t *p = json_array();
		size_t i;

		for (i = 0; i < r->n_prefixes; i++)
			json_array_append_new(p, json_string(r->prefixes[i]));
		json_object_set_new(c, "prefixes", p);
	}
	kg_manifest_set_config(m, "rdf", c);
}
