/*
 * ingest: turn triple files into a kgpipe dataset directory (the work of
 * kg-ingest; see man/man1/kg-ingest.1 for the user's view).
 *
 * Input: TSV or CSV records (lib/io/tabread.h) of three fields in the order
 * given by "columns" (a permutation of "hrt").  Either split files (train
 * [+ valid] [+ test]), read in that order, or one stream of inputs that is
 * split at random with exact proportions (round(p * n) valid and test
 * triples) by a seeded shuffle, keeping input order inside each split.
 *
 * IDs: entities and relations are numbered densely in order of first
 * appearance in train, then valid, then test, over the triples that are
 * kept.  With split files this is the order in which they are read, so
 * they are assigned on the fly; with --split the names are first numbered
 * in input order and renumbered once the splits are known.
 *
 * Comments: a line starting with tab.comment ('#' by default) is skipped
 * when it does not have the file's number of fields, or always with
 * all_comments; so "#tag<TAB>r<TAB>t" is a triple unless the user asked
 * for comments.  Unless quiet, the run ends with a note on stderr of how
 * many lines were skipped as comments and where the first one was.
 *
 * Bad records (wrong number of fields, an empty field, a name holding a
 * NUL, tab or line break, or longer than KG_DICT_MAX_NAME) are fatal
 * unless max_errors allows skipping them; each one is reported as
 * "file:line: message".  Memory: 12 bytes per triple read plus the two
 * dictionaries (lib/io/dict.h), and 8 to 16 bytes more per triple for
 * the set that finds repeated triples.  Valid and test triples naming an
 * entity or relation absent from train are kept, dropped (counted) or an
 * error, by "unseen".  A triple equal to an earlier one (same split or an
 * earlier split) is counted in the figure "duplicates"; with "dedup" it
 * is also dropped (and counted in "dropped.duplicates").
 *
 * RDF (N-Triples, N-Quads, Turtle; lib/ingest/rdf.h): a statement whose
 * object is an IRI or blank node is a triple (subject, predicate,
 * object), named as rdf.h writes the terms; one whose object is a
 * literal is a row of the literal table literals.tsv (entity,
 * predicate, literal: see kgpipe-formats(5)), beside which
 * literals.schema.json proposes an attribute schema for kg-encode-attrs.
 * The literal table is written while reading, so memory does not grow
 * with the literals.  Blank nodes are scoped to their file: with more
 * than one input, file k's labels are prefixed "f<k>." (k from 1).
 *
 * Output (through lib/io/outdir.h, so nothing is left behind on error):
 * entities.tsv, relations.tsv, train.npy, valid.npy, test.npy (int32
 * [n, 3] head, relation, tail; int64 when an ID passes 2^31 - 1),
 * types.npy and types.tsv with a types file, and manifest.json with the
 * configuration and the figures.
 */
#ifndef KG_INGEST_H
#define KG_INGEST_H

#include <stddef.h>
#include <stdint.h>

#include "io/tabread.h"

enum kg_unseen { KG_UNSEEN_KEEP, KG_UNSEEN_DROP, KG_UNSEEN_ERROR };

/* What rdf:type statements become: edges, the node types (types.npy;
 * an entity's first type counts), or a multi_label attribute. */
enum kg_rdf_types { KG_RDF_TYPES_EDGE, KG_RDF_TYPES_TYPES,
	KG_RDF_TYPES_ATTRIBUTE };

/* RDF input (see "RDF" above). */
struct kg_ingest_rdf_opts {
	int syntax;		/* enum kg_rdf_syntax (ingest/rdf.h) of
				 * every input; 0: each input's extension
				 * (.nt, .nq, .ttl, also .gz) decides */
	int tabular;		/* --format tsv or csv given: no input is
				 * RDF whatever its extension */
	const char *base;	/* base IRI of Turtle inputs, or NULL */
	const char *graph;	/* N-Quads: keep only this graph, or NULL */
	const char *lang;	/* "en,de": language-tagged literals kept,
				 * or NULL: all */
	enum kg_rdf_types types;
	const char *predicates;	/* file of predicate IRIs to keep, or NULL */
	const char *exclude_predicates;	/* file of IRIs to drop, or NULL */
	/* --compact: IRIs that start with one of the namespaces are named
	 * "p:rest" (the longest namespace wins) in the dictionaries and the
	 * literal table; prefixes[i] is "p=namespace". */
	const char *const *prefixes;
	size_t n_prefixes;
	int compact;
};

struct kg_ingest_opts {
	struct kg_tab_opts tab;	/* format, delimiter, header, comment byte
				 * (its fields are set per file) */
	char columns[4];	/* permutation of "hrt", NUL-terminated */
	const char *train, *valid, *test;	/* split files, or NULL */
	const char *const *inputs;	/* otherwise these ("-" = stdin) */
	size_t n_inputs;
	int use_split;		/* split inputs at random */
	double split[3];	/* train, valid, test fractions (sum 1) */
	uint64_t seed;
	enum kg_unseen unseen;
	int dedup;
	const char *types;	/* "entity<SEP>type" file, or NULL */
	uint64_t max_errors;	/* bad records to skip before failing */
	int progress;		/* progress line on stderr (rate, and ETA
				 * for plain files) */
	const char *output;
	int force;
	int argc;		/* for the manifest */
	char *const *argv;
	int all_comments;	/* every line starting with tab.comment is a
				 * comment; otherwise only one that does not
				 * have the file's number of fields (3, or 2
				 * in the types file) */
	int quiet;		/* no note of skipped comment lines */
	const char *extend;	/* earlier dataset to extend (ingest/extend.h;
				 * needs dedup), or NULL */
	struct kg_ingest_rdf_opts rdf;
};

#define KG_INGEST_OPTS_INIT { .tab = KG_TAB_OPTS_INIT, .columns = "hrt", \
	.split = { 1, 0, 0 }, .unseen = KG_UNSEEN_KEEP }

/* Parse "keep", "drop" or "error"; 0, or -1 after kg_error(). */
int kg_ingest_parse_unseen(const char *s, enum kg_unseen *out);
/* Check a column order (a permutation of "hrt"); 0 or -1. */
int kg_ingest_check_columns(const char *s);
/* Check --prefix values: NAME=IRI, NAME a letter then letters, digits,
 * '_', '-' or '.' (not last), each NAME once; 0, or -1 after kg_error(). */
int kg_ingest_check_prefixes(const struct kg_ingest_rdf_opts *o);
/* Check split fractions: each in [0, 1], sum 1 within 1e-9; 0 or -1. */
int kg_ingest_check_split(const double split[3]);

/*
 * The total size of the input files paths[0..n) (NULL entries skipped)
 * when every one is a plain regular file, for a progress line with an
 * ETA; 0 when one is stdin, not a regular file, or gzip-compressed
 * (whose uncompressed size is unknown).
 */
uint64_t kg_ingest_plain_bytes(const char *const *paths, size_t n);

#endif
