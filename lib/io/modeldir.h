/*
 * modeldir: the model directory that kg-train writes and kg-eval reads.
 *
 * Layout:
 *   entities.npy   float32 [n_entities, dim]
 *   relations.npy  float32 [n_rel_rows, rel_width], n_rel_rows =
 *                  n_relations, or 2 * n_relations with reciprocal
 *                  relations (row r + n_relations is the inverse of r)
 *   manifest.json  tool "kg-train"; "config" holds at least
 *                  model (DGL-KE spelling), dim, rel_dim, gamma,
 *                  reciprocal (bool), n_entities, n_relations and
 *                  dataset (path, may be absent for foreign arrays).
 * Writers may add more config keys and more files (optimiser state,
 * checkpoints); readers ignore what they do not know.  Row layouts are
 * those of model.h.
 */
#ifndef KG_MODELDIR_H
#define KG_MODELDIR_H

#include <stdint.h>

#include "io/manifest.h"
#include "kge/model.h"
#include "io/npy.h"

struct kg_modeldir {
	struct kg_model model;
	int reciprocal;
	uint64_t n_entities;
	uint64_t n_relations;	/* of the dataset, not counting inverses */
	uint64_t n_rel_rows;	/* rows of relations.npy */
	const float *entities;	/* n_entities x model.dim, borrowed from ent */
	const float *relations;	/* n_rel_rows x model.rel_width */
	struct kg_npy ent, rel;	/* backing mappings */
	struct kg_manifest manifest;	/* root NULL for foreign arrays */
};

#define KG_MODELDIR_INIT { { 0, 0, 0, 0, 0 }, 0, 0, 0, 0, NULL, NULL, \
	KG_NPY_INIT, KG_NPY_INIT, KG_MANIFEST_INIT }

/*
 * Load a kg-train output directory: read the manifest (tool kg-train),
 * check that every recorded file matches its shape, rebuild the model from
 * the config, map both arrays and check their shapes against the config
 * and that every value is finite.  Returns 0, -1 after kg_error() (nothing
 * to release), or KG_ERR_VERSION for an unknown format version.
 */
int kg_modeldir_load(struct kg_modeldir *md, const char *dir);

/*
 * Wrap plain .npy embeddings made elsewhere: entities float32 [n, dim],
 * relations float32 [rows, width].  dim comes from the entity array;
 * TransR's rel_dim from width = k + k * dim.  The relation width must fit
 * the model, and with "reciprocal" the row count must be even
 * (n_relations = rows / 2).  Values must be finite.  0 or -1 after
 * kg_error() (nothing to release).
 */
int kg_modeldir_from_arrays(struct kg_modeldir *md, const char *ent_path,
    const char *rel_path, const char *model_name, float gamma,
    int reciprocal);

/* Unmap the arrays and free the manifest; leaves *md as KG_MODELDIR_INIT. */
void kg_modeldir_release(struct kg_modeldir *md);

/*
 * Write entities.npy and relations.npy into "dir" (normally an outdir's
 * temporary), record both files in "man" and set the config keys listed
 * above (dataset only when not NULL).  ent holds n_entities x m->dim
 * floats and rel (reciprocal ? 2 : 1) * n_relations x m->rel_width.  The
 * caller adds its own files and config, then writes the manifest.
 * 0 or -1 after kg_error().
 */
int kg_modeldir_write(const char *dir, const struct kg_model *m,
    int reciprocal, uint64_t n_entities, uint64_t n_relations,
    const float *ent, const float *rel, const char *dataset,
    struct kg_manifest *man);

/*
 * Check that rows x cols floats are all finite; "what" names the array in
 * the message ("entities.npy: row 3, column 7 is nan").  0 or -1.
 */
int kg_check_finite(const char *what, const float *x, uint64_t rows,
    uint64_t cols);

#endif
