/*
 * rdf: the statements of one RDF file (N-Triples, N-Quads or Turtle,
 * plain or gzip-compressed, a file or stdin), read with Serd and handed
 * to a callback with every term written out in full: IRIs absolute and
 * without angle brackets (prefixed names expanded, relative IRIs resolved
 * against the base), blank nodes as "_:label" (label prefixed with
 * opts.blank_prefix, which scopes them to the file), literals as their
 * lexical form after unescaping, with the datatype IRI or language tag.
 *
 * N-Triples and N-Quads are read a line at a time: one statement per
 * line (a second statement on a line, a prefixed name or a syntax error
 * make the line bad), a bad line reported to sink.bad with its line
 * number and skipped when that returns 0, so reading resumes at the next
 * line.  Their IRIs are absolute by the grammar.  Turtle is read as one
 * stream, a statement at a time through Serd, and lines of one triple of
 * plain IRIs or prefixed names between them by a fast path that gives
 * the same terms and lines; a syntax error stops reading (Serd cannot resume
 * inside a Turtle document safely: a lost "." or "]" changes the meaning
 * of everything after it), so sink.bad gets resumable 0.  Prefixes and
 * @base are those of the document; opts.base is the base before any
 * @base, and a relative IRI without one is a bad statement.
 *
 * Memory: the current line, or the statement being built, plus Serd's
 * parse stack; nothing grows with the input.
 */
#ifndef KG_RDF_H
#define KG_RDF_H

#include <stddef.h>
#include <stdint.h>

struct kg_field;

enum kg_rdf_syntax { KG_RDF_NONE, KG_RDF_NTRIPLES, KG_RDF_NQUADS,
	KG_RDF_TURTLE };

enum kg_rdf_kind { KG_RDF_IRI, KG_RDF_BLANK, KG_RDF_LITERAL };

/* The most statements of one iri_triples call. */
#define KG_RDF_BATCH 32

/* One term: s[0..len), not NUL-terminated (a literal may hold NULs). */
struct kg_rdf_term {
	const char *s;
	size_t len;
	enum kg_rdf_kind kind;
};

struct kg_rdf_stmt {
	struct kg_rdf_term s, p, o;
	struct kg_rdf_term g;	/* N-Quads graph; s NULL: the default graph */
	struct kg_rdf_term datatype;	/* literal: its datatype IRI, or s
					 * NULL (a simple literal) */
	struct kg_rdf_term lang;	/* literal: language tag, or s NULL */
};

struct kg_rdf_sink {
	/* One statement (the terms are valid during the call).  0, or -1
	 * (after kg_error()) to stop reading. */
	int (*statement)(void *arg, const struct kg_rdf_stmt *st,
	    const char *file, uint64_t line);
	/* A bad statement or syntax error, msg without file and line.
	 * resumable: 1 when the line is skipped if this returns 0; 0 when
	 * reading stops whatever it returns.  0, or -1 after kg_error(). */
	int (*bad)(void *arg, const char *file, uint64_t line,
	    const char *msg, int resumable);
	/* Line syntaxes, and the lines Turtle's fast path reads: n <=
	 * KG_RDF_BATCH statements of three IRIs (t[3 * j ...] subject,
	 * predicate, object of the statement on lines[j], each of kind
	 * KG_RDF_IRI), in input order with the others; valid during the
	 * call.  0, or -1 (after kg_error()) to stop. */
	int (*iri_triples)(void *arg, const struct kg_field *t,
	    const uint64_t *lines, int n, const char *file);
	/* Turtle, or NULL: a prefix directive (@prefix or PREFIX) of the
	 * line, name[0..name_len) for namespace ns[0..ns_len) (absolute, as
	 * the document's prefixed names expand), valid during the call;
	 * again for a name declared anew.  0, or -1 (after kg_error()) to
	 * stop. */
	int (*prefix)(void *arg, const char *name, size_t name_len,
	    const char *ns, size_t ns_len, const char *file, uint64_t line);
	void *arg;
};

struct kg_rdf_opts {
	enum kg_rdf_syntax syntax;
	const char *base;		/* base IRI, or NULL */
	const char *blank_prefix;	/* put before every blank label, or
					 * NULL */
};

/* Figures of a read, kept up to date while reading (for a progress
 * line): physical lines and uncompressed bytes read so far, blank lines
 * (line syntaxes) and statements handed to the sink. */
struct kg_rdf_counts {
	uint64_t lines, bytes, blanks, statements;
};

/*
 * Read "path" ("-" is stdin, "stdin" in messages).  Returns 0 at the end
 * of the input, or -1 after kg_error() (cannot open, read or decompress,
 * a fatal bad statement, or a sink callback that returned -1).
 */
int kg_rdf_read(const char *path, const struct kg_rdf_opts *o,
    const struct kg_rdf_sink *sink, struct kg_rdf_counts *c);

/* The syntax a file name's extension names (.nt, .nq, .ttl, each also
 * with .gz), or KG_RDF_NONE. */
enum kg_rdf_syntax kg_rdf_syntax_of_name(const char *path);
/* "ntriples", "nquads" or "turtle" (also "nt", "nq", "ttl"), or
 * KG_RDF_NONE for anything else.  Sets no error. */
enum kg_rdf_syntax kg_rdf_parse_syntax(const char *s);
/* "N-Triples", "N-Quads", "Turtle", or "none", for messages. */
const char *kg_rdf_syntax_name(enum kg_rdf_syntax syntax);

#endif
