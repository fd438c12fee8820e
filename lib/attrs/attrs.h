/*
 * attrs: node-attribute encoding (kg-encode-attrs): fit once, transform
 * contiguous entity ranges in parallel, merge the shards.
 *
 * One job a file: attrs_collect.c reads the values, attrs_fit.c fits,
 * attrs_model.c writes and reads the model directory, attrs_encode.c
 * computes the features, attrs_featwrite.c names, writes and merges the
 * feature arrays, attrs_values.c holds the column views fit and encode
 * share (attrs_impl.h), lib/app/attrs_run.c runs the subcommands.
 *
 * Encodings, per attribute (see attrs_schema.h for the schema):
 *   numeric, date  bins from attrs_bins.h; one index per distinct bin of
 *                  the entity's values; slot n_bins is the "missing" bin,
 *                  used by entities without a value;        slots n_bins+1
 *   categorical    the vocabulary seen at fit (values held by at least
 *                  min_count entities, in byte order); other values map to
 *                  the "unknown" slot n_vocab;              slots n_vocab+1
 *   multi_label    each value split at the separator (labels trimmed of
 *                  blanks, empty ones dropped), then as categorical
 *                  (multi-hot);                             slots n_vocab+1
 *   text           attrs_text.h; an entity's rows are joined with spaces;
 *                  a dense float32 vector of "dim" values.  With the
 *                  transformer encoder (attrs/bert.h) each distinct value
 *                  is encoded once and an entity gets the mean of its
 *                  values' vectors, L2-normalised when the model ends in
 *                  Normalize.
 * An entity may have several values of an attribute (several rows): index
 * kinds then list every distinct slot (sorted).  Entities without a value
 * have the missing bin (numeric, date), an empty list (categorical,
 * multi-label) or a zero vector (text), and has_OUT[e] = 0.
 *
 * Feature directory (and each shard directory, for its entity range
 * [lo, hi) with offsets starting at 0):
 *   OUT_offsets.npy  int64 [n + 1]   index kinds (CSR row pointers)
 *   OUT_indices.npy  int32 [nnz]     index kinds (slots, sorted per row)
 *   OUT.npy          float32 [n, dim] text
 *   has_OUT.npy      uint8 [n]       every kind: 1 if the entity has a value
 *   manifest.json    config.attributes lists name, output, kind, slots
 *                    (index kinds) or dim (text), in schema order.
 *
 * Model directory (fit): manifest.json, model.json (the schema, the
 * resolved tables with their checksums, per attribute its slots and
 * vocabulary; a transformer's directory and SHA-256 sums), OUT.edges.npy
 * (float64 bin edges), OUT.idf.npy (float64) and OUT.proj.npy (float32
 * [n_vocab, dim]) for TF-IDF text encoders.
 */
#ifndef KG_ATTRS_H
#define KG_ATTRS_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "attrs/attrs_schema.h"
#include "attrs/attrs_text.h"
#include "compute/backend.h"
#include "io/dict.h"

/* Values of every attribute for the entities in [lo, hi), as read. */
struct kg_attrs_col {
	uint64_t n, cap;
	uint32_t *ent;		/* entity - lo */
	double *num;		/* numeric and date kinds */
	uint64_t *off;		/* other kinds: value at arena + off[i] */
	uint32_t *len;
	char *arena;
	uint64_t arena_len, arena_cap;
	uint64_t *start;	/* grouped: values of entity e are */
	uint64_t *order;	/* order[start[e] .. start[e + 1]) */
};

struct kg_attrs_data {
	const struct kg_attr_schema *schema;
	uint64_t lo, hi;
	struct kg_attrs_col *cols;	/* one per schema attribute */
	uint64_t n_rows, n_values, n_errors, n_skipped_entities;
	uint8_t *named;		/* per attribute: 1 if a table names it */
};

#define KG_ATTRS_DATA_INIT { 0 }

/*
 * Read the tables (paths[i] is where schema table i is) and keep the
 * values of entities in [lo, hi), grouped by entity in file order.
 * Numbers and dates are parsed here (errors carry file:line).  Returns 0,
 * or -1 after kg_error() with nothing to release.
 */
int kg_attrs_collect(struct kg_attrs_data *d, const struct kg_attr_schema *s,
    const char *const *paths, const struct kg_dict *entities, uint64_t lo,
    uint64_t hi, uint64_t max_errors);
void kg_attrs_data_release(struct kg_attrs_data *d);

/* One fitted attribute. */
struct kg_attr_enc {
	uint64_t slots;		/* index kinds: width; text: dim */
	uint32_t n_bins;	/* numeric, date */
	double *edges;		/* n_bins + 1 */
	uint32_t n_vocab;	/* categorical, multi-label */
	struct kg_dict vocab;	/* value -> slot */
	struct kg_text_model text;
	int external;		/* text through the external command */
	/* text through a transformer model: where it is (resolved at fit)
	 * and the SHA-256 of its weights and tokenizer at fit */
	char *model_dir;
	char weights_sha256[65], tokenizer_sha256[65];
	uint64_t n_values;	/* fit: values (or texts) seen */
	uint64_t n_entities;	/* fit: entities with a value */
};

/* Where transformer text attributes run at transform (bert.h's paths):
 * on_device 0 the host path on the OpenMP threads, 1 the device path on
 * a backend opened on device. */
struct kg_attrs_place {
	int on_device;
	struct kg_device device;
};

struct kg_attrs_model {
	struct kg_attr_schema schema;
	struct kg_attr_enc *enc;	/* schema.n_attrs */
	char *text_command;	/* external text encoder, or NULL */
	uint64_t n_entities;
	json_t *tables;		/* [{ "path", "checksum" }] */
	struct kg_attrs_place place;	/* transform's, not in the files */
};

#define KG_ATTRS_MODEL_INIT { .schema = KG_ATTR_SCHEMA_INIT }

/*
 * Fit every attribute on d (which must cover all entities).  The schema
 * is copied (from its JSON).  text_command, when not NULL, replaces the
 * built-in text encoder.  0 or -1 after kg_error().
 */
int kg_attrs_fit(struct kg_attrs_model *m, const struct kg_attr_schema *s,
    const struct kg_attrs_data *d, uint64_t n_entities,
    const char *text_command);

/* Write model.json and the model arrays into dir; 0 or -1. */
int kg_attrs_model_write(const struct kg_attrs_model *m, const char *dir);
/* Read them back; 0 or -1 after kg_error(). */
int kg_attrs_model_read(struct kg_attrs_model *m, const char *dir);
void kg_attrs_model_release(struct kg_attrs_model *m);

/*
 * Encode d's entities [d->lo, d->hi) and write the arrays into dir.
 * text_command (NULL: the model's) feeds external text encoders.
 * figures (may be NULL) receives per-attribute counts.  0 or -1.
 */
int kg_attrs_encode(const struct kg_attrs_model *m,
    const struct kg_attrs_data *d, const char *text_command,
    const char *dir, json_t *figures);

/* The files written for attribute i, into names[0..3); returns the count
 * (3 for index kinds, 2 for text).  Free each name. */
size_t kg_attrs_files(const struct kg_attrs_model *m, size_t i,
    char *names[3]);

/* The config.attributes list of a feature or shard directory. */
json_t *kg_attrs_describe(const struct kg_attrs_model *m);

/*
 * Concatenate shard directories shards[0..n) (in entity order, ranges
 * already checked contiguous) into dir.  0 or -1 after kg_error().
 */
int kg_attrs_merge_arrays(const struct kg_attrs_model *m,
    const char *const *shards, size_t n, const char *dir);

/* What the tool's subcommands need. */
struct kg_attrs_opts {
	const char *dataset;	/* -d */
	const char *schema;	/* -s (fit) */
	const char *model;	/* -m (transform, merge) */
	const char *output;	/* -o */
	const char *tables_dir;	/* --tables-dir, or NULL */
	const char *text_command;	/* --text-command, or NULL */
	uint64_t max_errors;
	uint32_t shard, n_shards;	/* --shard i/n; --merge: --shards n
					 * (0: one shard a rank) */
	const char *const *inputs;	/* merge: shard directories */
	size_t n_inputs;
	/* The model's tables, one a schema table, read in place of the
	 * fitted paths and tables_dir (still checked against their
	 * checksums); NULL for those. */
	char *const *table_paths;
	int merge;		/* transform --merge: every shard, merged */
	int ship;		/* --ship-inputs */
	int force, quiet, progress;
	struct kg_attrs_place place;	/* transform: --device */
	int argc;
	char *const *argv;
};

#endif
