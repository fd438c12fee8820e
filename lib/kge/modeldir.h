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
 *                  reciprocal (bool), n_entities, n_relations,
 *                  dataset (path, may be absent for foreign arrays) and
 *                  dictionaries (the checksums of the dataset's
 *                  entities.tsv and relations.tsv, lib/io/dataset.h;
 *                  absent in models written before it), by which
 *                  lib/predict/modelsrc.h matches a model to a dataset.
 * Writers may add more config keys and more files (optimiser state,
 * checkpoints); readers ignore what they do not know.  Row layouts are
 * those of model.h.
 */
#ifndef KG_MODELDIR_H
#define KG_MODELDIR_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "io/manifest.h"
#include "io/npy.h"
#include "io/outdir.h"
#include "io/table_writer.h"
#include "kge/model.h"

struct kg_store;

struct kg_modeldir {
	struct kg_model model;
	int reciprocal;
	uint64_t n_entities;
	uint64_t n_relations;	/* of the dataset, not counting inverses */
	uint64_t n_rel_rows;	/* rows of relations.npy */
	/*
	 * Where readers get the entity rows (lib/store/store.h): a store
	 * lent by whoever made the model (a trainer validating its own
	 * rows), or, when NULL, the array at entities, which a loaded
	 * model dir maps from entities.npy (lib/eval opens a read-only
	 * store over it).  Nothing here owns ents.
	 */
	struct kg_store *ents;
	const float *entities;	/* n_entities x model.dim, in ent */
	const float *relations;	/* n_rel_rows x model.rel_width */
	struct kg_npy ent, rel;	/* backing mappings */
	struct kg_manifest manifest;	/* root NULL for foreign arrays */
	int reordered;	/* ent and rel were put in another dataset's ID
			 * order (lib/predict/modelsrc.h); the files on
			 * disk keep the training order */
};

#define KG_MODELDIR_INIT { .ent = KG_NPY_INIT, .rel = KG_NPY_INIT, \
	.manifest = KG_MANIFEST_INIT }

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
 * The store the model's entity rows are read through: the one md lends
 * (md->ents), or a new read-only one over md->entities, which *own gets
 * for the caller to free (NULL when md lends one).  NULL after kg_error()
 * when the model has no entity rows.
 */
struct kg_store *kg_modeldir_ents(const struct kg_modeldir *md,
    struct kg_store **own);

/*
 * Writing a model dir, the one writer of every trainer.  begin creates
 * the temporary sibling of spec->dir (lib/io/outdir.h) and opens
 * entities.npy, and entity_state.npy when state_width > 0, as a table
 * writer (lib/io/table_writer.h).  The caller streams the entity rows
 * into w->table: a store's partitions with kg_store_write
 * (lib/store/store.h), pieces as they arrive from other ranks, or the
 * whole table at once.  commit then writes relations.npy, optionally
 * relation_state.npy, train_log.jsonl and the extra arrays, and a
 * manifest with the inputs, the config keys listed above followed by
 * spec->config, and spec->figures; and renames the directory into place.
 * spec (and what it points to) is borrowed until commit or abort.
 */
struct kg_modeldir_array {
	const char *name;	/* "gnn_weights.npy" */
	uint64_t n;		/* float32 [n] */
	const float *x;
};

struct kg_modeldir_spec {
	const char *dir;
	int force;		/* replace an existing dir (at commit) */
	int argc;
	char *const *argv;
	const struct kg_model *model;
	int reciprocal;
	uint64_t n_entities, n_relations;
	const int32_t *order;	/* table row i is entity order[i]; NULL: i */
	uint32_t state_width;	/* entity_state.npy's; 0: no such file */
	const float *rel;	/* n_rel_rows x model->rel_width */
	const float *rel_state;	/* n_rel_rows x rel_state_width, or NULL */
	uint64_t rel_state_width;
	const char *log;	/* train_log.jsonl, or NULL: none */
	const char *dataset;	/* input and config.dataset, or NULL */
	const char *const (*inputs)[2];	/* more { role, dir } inputs, up to
					 * { NULL, NULL }; may be NULL */
	json_t *config, *figures;	/* may be NULL */
	const struct kg_modeldir_array *extra;
	size_t n_extra;
};

struct kg_modeldir_writer {
	const struct kg_modeldir_spec *spec;
	struct kg_outdir od;
	struct kg_table_writer table;
};

#define KG_MODELDIR_WRITER_INIT { .od = KG_OUTDIR_INIT, \
	.table = KG_TABLE_WRITER_INIT }

/*
 * The paths of a training run against what it reads, before any work
 * (lib/io/stage.h's rule): the model dir "output" and the checkpoint dir
 * "ckpt" (NULL: none) must not be, lie inside or hold one of
 * inputs[0..n) (NULL entries are skipped); the swap dir "swap" (NULL:
 * none), which only gets unnamed files, must not be or lie inside one.
 * With or without force.  The writers check again (kg_modeldir_begin
 * against the spec's dataset and inputs, kg_ckpt_begin).  0, or -1 after
 * kg_error() naming both paths.
 */
int kg_modeldir_check_paths(const char *output, const char *ckpt,
    const char *swap, const char *const *inputs, size_t n);

/* Refuses a dir that is, lies inside or holds the spec's dataset or one
 * of its inputs (kg_modeldir_check_paths), then begins.  0, or -1 after
 * kg_error() with nothing left behind. */
int kg_modeldir_begin(struct kg_modeldir_writer *w,
    const struct kg_modeldir_spec *spec);
/* 0, or -1 after kg_error() with the temporary removed (an old dir
 * stays).  Releases w either way. */
int kg_modeldir_commit(struct kg_modeldir_writer *w);
/* Remove the temporary; safe on INIT and twice. */
void kg_modeldir_abort(struct kg_modeldir_writer *w);

/*
 * For callers that manage their own output dir (test tools): write
 * entities.npy and relations.npy into "dir" (normally an outdir's
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
