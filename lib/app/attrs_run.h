/*
 * attrs_run: kg-encode-attrs's subcommands run from directories and
 * options (application layer; the encoder itself is lib/attrs).
 */
#ifndef KG_APP_ATTRS_RUN_H
#define KG_APP_ATTRS_RUN_H

#include "attrs/attrs.h"

/*
 * The subcommands, end to end: inputs checked, output written through
 * lib/io/outdir.h with a manifest.  Return 0, -1 after kg_error(), or
 * KG_ERR_VERSION for an input of an unknown format version.
 */
int kg_attrs_run_fit(const struct kg_attrs_opts *o);
int kg_attrs_run_transform(const struct kg_attrs_opts *o);
int kg_attrs_run_merge(const struct kg_attrs_opts *o);

/*
 * transform --merge (attrs_gather.c): every shard of o->n_shards (0: one
 * a rank) encoded and merged into the features directory o->output, as
 * transform and merge write it.  Under mpirun the ranks share the shards
 * (shard k on rank k mod size) and rank 0 gathers them over MPI and
 * writes the output; with o->ship, rank 0's dataset, model and tables
 * are sent to the other ranks' own disks first.  Collective: the same
 * result on every rank, one message (printed by rank 0) on failure.
 */
int kg_attrs_run_transform_merge(const struct kg_attrs_opts *o);

#endif
