/*
 * export: a model's embeddings with their names, in the formats other
 * tools read (kg-export).
 *
 *   tsv        one line per row: name<TAB>v1<TAB>...<TAB>vd (no header)
 *   word2vec   word2vec's text format, as gensim's
 *              KeyedVectors.load_word2vec_format(binary=False) reads it:
 *              a first line "count dim", then "name v1 ... vd" per row
 *   projector  the TensorBoard Embedding Projector's pair, in a directory:
 *              vectors.tsv (values, tab-separated, no names) and
 *              metadata.tsv (one name a line, no header: the projector's
 *              rule for a single column), plus manifest.json
 *
 * Values are printed with 9 significant digits, so they read back as the
 * same float32 numbers.  Names with spaces: word2vec's format separates
 * fields by spaces, so there every ASCII space, vertical tab and form
 * feed of a name becomes '_'; two names that become the same are an
 * error (use tsv or projector, which keep names as they are; kg-ingest
 * keeps tabs and line breaks out of names).
 *
 * Rows are the entities (entities.npy: for a GNN model the encoder's
 * output) or the relations (relations.npy rows as they are, so TransR
 * rows hold [r | M] and RESCAL rows the matrix; with reciprocal
 * relations the inverse of relation "name" is the row "name^-1").
 */
#ifndef KG_EXPORT_H
#define KG_EXPORT_H

#include "predict/modelsrc.h"

enum kg_export_format { KG_EXPORT_TSV, KG_EXPORT_WORD2VEC,
	KG_EXPORT_PROJECTOR };

struct kg_export_opts {
	const char *dataset;	/* kg-ingest output: the names */
	struct kg_modelsrc src;
	enum kg_export_format format;
	int relations;		/* the relation table, not the entities */
	const char *output;	/* file (directory for projector); NULL or
				 * "-": stdout */
	int force;
	int argc;		/* for the projector's manifest */
	char *const *argv;
};

#define KG_EXPORT_OPTS_INIT { .src = KG_MODELSRC_INIT, \
	.format = KG_EXPORT_TSV }

/* Parse "tsv", "word2vec" or "projector"; 0, or -1 after kg_error(). */
int kg_export_format_parse(const char *s, enum kg_export_format *out);

/*
 * Export as o says.  Returns 0, -1 after kg_error() with no output left
 * (a file or directory output; stdout may hold a part), or
 * KG_ERR_VERSION for an input of an unknown format version.
 */
int kg_export_run(const struct kg_export_opts *o);

#endif
