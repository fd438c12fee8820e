/*
 * gnntrain/train_io: the files of a GNN training run besides checkpoints
 * (internal to lib/gnntrain; lib/app/gnn_run.c orchestrates them):
 *   part.c         one rank's kg-expand part (graph/expand.h's format);
 *   model_write.c  the model directory rank 0 writes.
 */
#ifndef KG_GNN_TRAIN_IO_H
#define KG_GNN_TRAIN_IO_H

#include <stdint.h>

#include "gnntrain/gnn_train.h"
#include "io/dataset.h"
#include "io/npy.h"

/* A kg-expand part: mapped arrays, and its core triples copied out. */
struct kg_gnn_part {
	struct kg_npy nodes, edges, core, pool, owner;
	int32_t *core_hrt;
	uint64_t n_core;
};

#define KG_GNN_PART_INIT { .nodes = KG_NPY_INIT, .edges = KG_NPY_INIT, \
	.core = KG_NPY_INIT, .pool = KG_NPY_INIT, .owner = KG_NPY_INIT }

/*
 * Read the part in dir: nodes.npy (entities of the dataset, below
 * n_entities), edges.npy (local triples, relations below n_relations),
 * core_mask.npy, neg_pool.npy and owner.npy, every index checked.  0, or
 * -1 after kg_error() (release pt either way).
 */
int kg_gnn_part_load(struct kg_gnn_part *pt, const char *dir,
    uint64_t n_entities, uint32_t n_relations);
void kg_gnn_part_release(struct kg_gnn_part *pt);

/*
 * Write the model directory r->output (gnn_train.h's kg_gnn_train_run):
 * entities.npy = kg_gnn_embed over the dataset's training graph with the
 * whole features gf (NULL: none), relations.npy, gnn_weights.npy and the
 * manifest with the run's config and figures (rss: each rank's peak RSS,
 * nranks of them).  0 or -1 after kg_error(), nothing left behind.
 */
/* The run's settings as a new object: the model dir's config less the
 * encoder's derived sizes; checkpoints record it, and a resume compares
 * it (lib/io/ckpt.h, kg_ckpt_changes). */
json_t *kg_gnn_settings_json(const struct kg_gnn_train_opts *o,
    const struct kg_gnn_run *r, int nranks);

int kg_gnn_model_write(const struct kg_gnn_run *r,
    const struct kg_gnn_train_opts *o, const struct kg_dataset *ds,
    const struct kg_features *gf, const struct kg_gnn_trained *t,
    int nranks, const uint64_t *rss);

#endif
