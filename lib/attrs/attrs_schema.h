/*
 * attrs_schema: the attribute schema of kg-encode-attrs, read from JSON.
 *
 * {
 *   "na_values": ["", "NA"],            optional; values meaning "no value"
 *   "tables": [                         the attribute tables to read
 *     { "path": "people.csv",           relative to the schema's directory
 *                                       (or to --tables-dir), gzip allowed
 *       "form": "wide",                 "long": entity, attribute, value
 *                                       "wide": entity, col1, col2, ...
 *       "delimiter": ",",               default "," for *.csv[.gz], else tab
 *       "quote": "\"",                  "" turns quoting off
 *       "header": true,                 first row names the columns
 *       "columns": ["age", "bio"],      wide form without header
 *       "unknown_entities": "error",    or "skip"
 *       "unknown_attributes": "error",  or "skip" (long form)
 *       "literals": "plain",            or "rdf": "lex"^^<type> -> lex
 *       "multiline": false }            line ends inside quotes allowed
 *   ],
 *   "attributes": {
 *     "age":  { "kind": "numeric", "strategy": "quantile", "n_bins": 5 },
 *     "born": { "kind": "date", "format": "iso8601", "n_bins": 8 },
 *     "dept": { "kind": "categorical", "min_count": 1 },
 *     "tags": { "kind": "multi_label", "separator": ";", "min_count": 1 },
 *     "bio":  { "kind": "text", "dim": 32, "max_features": 2048,
 *               "min_df": 1, "sublinear_tf": false, "normalize": true },
 *     "note": { "kind": "text", "encoder": "transformer",
 *               "model": "models/all-MiniLM-L6-v2", "max_length": 256,
 *               "batch_size": 32 }
 *   }
 * }
 *
 * A text attribute's "encoder" is "tfidf" (the default: attrs_text.h,
 * with dim, max_features, min_df, sublinear_tf and normalize) or
 * "transformer" (attrs/bert.h: a sentence-transformers BERT directory
 * "model", relative to the schema's directory; "dim" absent or the
 * model's width; "max_length" at most the model's positions, default
 * its max_seq_length; "batch_size" default 32).
 *
 * Every attribute may also name its "output" (the file-name stem of its
 * arrays; default: the name with every byte outside [A-Za-z0-9_.-]
 * replaced by '_').  Date "format" is "iso8601" (default),
 * "decimal_year" (a number such as 1912.5) or a strptime(3) format with
 * '%' conversions ("%d/%m/%Y").  Unknown keys, wrong types and values out
 * of range are errors naming the schema file and the key.
 */
#ifndef KG_ATTRS_SCHEMA_H
#define KG_ATTRS_SCHEMA_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

enum kg_attr_kind {
	KG_ATTR_NUMERIC,
	KG_ATTR_DATE,
	KG_ATTR_CATEGORICAL,
	KG_ATTR_MULTILABEL,
	KG_ATTR_TEXT
};

enum kg_bins_strategy { KG_BINS_UNIFORM, KG_BINS_QUANTILE };

enum kg_date_format { KG_DATE_ISO, KG_DATE_DECIMAL_YEAR, KG_DATE_STRPTIME };

#define KG_ATTR_MAX_BINS 65536u
#define KG_ATTR_MAX_DIM 4096u
#define KG_ATTR_MAX_FEATURES 16384u

struct kg_attr_spec {
	char *name;		/* as in the tables */
	char *output;		/* file-name stem of the arrays */
	enum kg_attr_kind kind;
	/* numeric and date */
	enum kg_bins_strategy strategy;
	uint32_t n_bins;
	enum kg_date_format date_format;
	char *strptime_format;	/* KG_DATE_STRPTIME only */
	/* categorical and multi-label */
	uint32_t min_count;
	char *separator;
	/* text */
	uint32_t dim;		/* transformer: 0 = the model's width */
	uint32_t max_features;
	uint32_t min_df;
	int sublinear_tf;
	int normalize;
	int transformer;	/* "encoder": "transformer" */
	char *model;		/* its "model" directory, as written */
	char *model_path;	/* that, relative to the schema's directory */
	uint32_t max_length;	/* tokens a text keeps; 0: the model's */
	uint32_t batch_size;	/* texts a forward pass */
};

struct kg_attr_table {
	char *path;		/* as written in the schema */
	int wide;
	char delimiter;
	char quote;		/* '\0': no quoting */
	int header;
	char **columns;		/* wide form without header */
	size_t n_columns;
	int skip_unknown_entities;
	int skip_unknown_attributes;
	int rdf_literals;
	int multiline;		/* line ends allowed inside quotes */
};

struct kg_attr_schema {
	char *path;		/* the schema file, for messages */
	json_t *json;		/* the parsed document (owned) */
	struct kg_attr_spec *attrs;
	size_t n_attrs;
	struct kg_attr_table *tables;
	size_t n_tables;
	char **na_values;
	size_t n_na;
};

#define KG_ATTR_SCHEMA_INIT { 0 }

/* Read and check the schema file "path".  0, or -1 after kg_error() with
 * nothing to release. */
int kg_attr_schema_load(struct kg_attr_schema *s, const char *path);

/* Check and adopt a parsed document (a new reference is taken); "what"
 * names it in messages, and relative "model" directories are taken from
 * its directory.  0 or -1 after kg_error(). */
int kg_attr_schema_from_json(struct kg_attr_schema *s, json_t *root,
    const char *what);

void kg_attr_schema_release(struct kg_attr_schema *s);

/* Index of the attribute called name[0..len), or -1. */
int64_t kg_attr_schema_find(const struct kg_attr_schema *s, const char *name,
    size_t len);

/* 1 when value[0..len) is one of the schema's NA values. */
int kg_attr_schema_is_na(const struct kg_attr_schema *s, const char *value,
    size_t len);

/* "numeric", "date", ... */
const char *kg_attr_kind_name(enum kg_attr_kind kind);

/* 1 for the kinds encoded as index lists (all but text). */
static inline int
kg_attr_kind_is_index(enum kg_attr_kind kind)
{
	return kind != KG_ATTR_TEXT;
}

#endif
