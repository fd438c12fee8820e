/*
 * label: what every tool calls a model in titles, tables and reports.
 *
 * A shallow model is its decoder's name, in DGL-KE's spelling
 * ("ComplEx"); a GNN model is its encoder's name, then the decoder's
 * ("R-GCN + DistMult", "RelGNN + ComplEx").  kg-eval's table and JSON
 * report and kg-plot's titles all take it from here.
 */
#ifndef KG_LABEL_H
#define KG_LABEL_H

#include <stddef.h>

#include "io/manifest.h"

/* The encoder's name as shown: "rgcn" -> "R-GCN", "relgnn" -> "RelGNN",
 * anything else as given.  NULL stays NULL. */
const char *kg_label_encoder(const char *encoder);

/*
 * The label of a model whose decoder is decoder and whose encoder is
 * encoder (as a manifest spells it; NULL for a shallow model), into
 * buf[cap] (truncated to fit).  Returns buf.
 */
const char *kg_label_model(const char *encoder, const char *decoder,
    char *buf, size_t cap);

/*
 * The same from a kg-train manifest: config.encoder and config.model
 * ("model" when the manifest has none).  Returns buf.
 */
const char *kg_label_manifest(const struct kg_manifest *m, char *buf,
    size_t cap);

#endif
