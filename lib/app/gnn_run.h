/*
 * gnn_run: kg-train's GNN path run from directories (application layer):
 * gnn_train.h's struct kg_gnn_run describes the run.
 */
#ifndef KG_APP_GNN_RUN_H
#define KG_APP_GNN_RUN_H

#include "gnntrain/gnn_train.h"

int kg_gnn_train_run(const struct kg_gnn_run *r,
    const struct kg_gnn_train_opts *o, struct kg_dist *d);

#endif
