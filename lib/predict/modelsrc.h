/*
 * modelsrc: where the tools that use a trained model (kg-eval,
 * kg-predict, kg-export) get it from: a kg-train model directory, or
 * embeddings made by another tool.
 *
 * Foreign embeddings are two .npy arrays, entities [rows, dim] and
 * relations [rows, width], float32 or float64 (converted to float32 with
 * a note on stderr; a value beyond float32's range is an error).  Their
 * rows are in the dataset's ID order, or in any order when a mapping file
 * gives each name's row: one "row<TAB>name" line per name (the layout of
 * DGL-KE's entities.dict and of kgpipe's entities.tsv; gzip is
 * detected; a first line whose first field is not a number is a header
 * and skipped).  Every name of the dataset must have a row; names the
 * dataset does not know are ignored; a name given twice is an error.
 * A relation mapping cannot be combined with reciprocal relations.
 *
 * Converted or reordered arrays are written as float32 .npy files to a
 * private temporary directory ($TMPDIR, else /tmp) that is removed at
 * once (the arrays stay mapped), and wrapped with
 * kg_modeldir_from_arrays.  This module is the one place the tools call
 * kg_modeldir_load and kg_modeldir_from_arrays.
 */
#ifndef KG_MODELSRC_H
#define KG_MODELSRC_H

#include <stddef.h>

#include "io/dataset.h"
#include "kge/modeldir.h"

struct kg_modelsrc {
	const char *modeldir;	/* kg-train output, or NULL with: */
	const char *entities;	/* entity embeddings (.npy) */
	const char *relations;	/* relation parameters (.npy) */
	const char *model;	/* model name for the arrays */
	double gamma;		/* margin of the distance models */
	int reciprocal;		/* relations hold 2 x n_relations rows */
	const char *entity_map;	/* "row<TAB>name" file, or NULL */
	const char *relation_map;
	int quiet;		/* no note on stderr */
};

#define KG_MODELSRC_INIT { .gamma = 12.0 }

/*
 * Load the model src names into *md (release with kg_modeldir_release).
 * ds is the dataset the model is used with and whose names the mapping
 * files are read against (may be NULL without them).  With ds, this is
 * the one check of a model against a dataset (kg-eval, kg-predict,
 * kg-export): the entity and relation counts must agree; a model dir
 * records the checksums of its training dataset's entities.tsv and
 * relations.tsv (config.dictionaries), and when ds's differ, the
 * training dataset (config.dataset) must still be there with those
 * files: if it numbers the same names in another order, the rows are put
 * in ds's order by name (md->reordered, a note on stderr unless quiet);
 * other names are refused, naming both datasets.  Returns 0, -1 after
 * kg_error() with nothing to release, or KG_ERR_VERSION for a model
 * directory of an unknown format version.
 */
int kg_modelsrc_load(struct kg_modeldir *md, const struct kg_modelsrc *src,
    const struct kg_dataset *ds);

/*
 * Read the entity rows of md (loaded from src by kg_modelsrc_load) from
 * their file a piece at a time (kg_store_open_npy_stream) instead of the
 * mapping, whose pages are given back: for a model larger than memory.
 * md->ents lends the store, which *own gets for the caller to free after
 * md is done with.  The file's rows must be md's: refused (-1 after
 * kg_error()) with an entity map, or when loading put the rows in
 * another dataset's order (md->reordered; the messages name
 * --stream, the option of kg-eval and kg-predict that asks for this).
 * 0 or -1.
 */
int kg_modelsrc_stream(struct kg_modeldir *md, const struct kg_modelsrc *src,
    struct kg_store **own);

/*
 * What to call the model in headings (report/label.h): the decoder's
 * name ("ComplEx"), or the encoder's and the decoder's for a GNN model
 * directory ("R-GCN + DistMult").  Written into buf[cap]; returns buf.
 */
const char *kg_modelsrc_title(const struct kg_modeldir *md, char *buf,
    size_t cap);

#endif
