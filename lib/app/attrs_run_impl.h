/*
 * attrs_run_impl: the steps of kg-encode-attrs's subcommands
 * (attrs_run.c) that its distributed transform (attrs_gather.c) runs as
 * well.  Not for other callers.
 */
#ifndef KG_APP_ATTRS_RUN_IMPL_H
#define KG_APP_ATTRS_RUN_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "attrs/attrs.h"
#include "io/stage.h"

/* Load an encoder model directory: its manifest (version), then the
 * model; sum gets the checksum of its manifest.json.  0, -1 after
 * kg_error(), or KG_ERR_VERSION. */
int kg_attrs_run_load_model(const char *dir, struct kg_attrs_model *m,
    char sum[32]);

/*
 * Where the model's tables are (o->table_paths, else the schema's names
 * under o->tables_dir, else the fitted paths), each checked against its
 * checksum at fit.  A new array of model->schema.n_tables paths (free it
 * with kg_attrs_run_free_paths), or NULL after kg_error().
 */
char **kg_attrs_run_tables(const struct kg_attrs_model *model,
    const struct kg_attrs_opts *o);
void kg_attrs_run_free_paths(char **paths, size_t n);

/* Begin the output o->output of a stage that reads o's dataset (and
 * model) and tables[0..n_tables) (lib/io/stage.h).  0, -1 or
 * KG_ERR_VERSION. */
int kg_attrs_run_begin(struct kg_stage *st, const struct kg_attrs_opts *o,
    char *const *tables, size_t n_tables);

/* One progress line "what n entities" unless o is quiet; *t is the
 * step's start and becomes the next's. */
void kg_attrs_run_progress(const struct kg_attrs_opts *o, const char *what,
    uint64_t n, double *t);

/*
 * The shard directories inputs[0..n) checked (made with the model whose
 * manifest checksum is msum, shards 0/n to n-1/n each once, of datasets
 * of one entity count, contiguous entity ranges covering them) and put
 * in shard order into dirs (pointers to inputs' strings); *n_entities
 * gets that count: the dataset's each shard records, or the model's for
 * a shard that records none.  0, -1 after kg_error(), or KG_ERR_VERSION.
 */
int kg_attrs_run_order_shards(const struct kg_attrs_model *model,
    const char *msum, const char *const *inputs, size_t n,
    const char **dirs, uint64_t *n_entities);

/* The ordered shards dirs[0..n) of n_entities entities merged into the
 * begun stage st: the feature arrays and the manifest's config and
 * figures (t0: the run's start).  0 or -1 after kg_error(); the caller
 * commits. */
int kg_attrs_run_merge_into(struct kg_stage *st,
    const struct kg_attrs_model *model, const char *msum,
    const char *const *dirs, size_t n, uint64_t n_entities, double t0);

#endif
