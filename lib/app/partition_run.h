/*
 * partition_run: kg-partition end to end.  Load a kg-ingest dataset,
 * partition its training graph (lib/graph/partition.h) and write the
 * partition directory through lib/io/stage.h.
 */
#ifndef KG_PARTITION_RUN_H
#define KG_PARTITION_RUN_H

#include "graph/partition.h"

struct kg_partition_run_opts {
	struct kg_partition_opts part;
	const char *dataset;	/* kg-ingest output to read */
	const char *output;	/* partition directory to write */
	int force;		/* replace an existing output */
	int quiet;		/* no statistics on stderr */
	int progress;		/* progress lines (rate) on stderr */
	int argc;		/* for the manifest */
	char *const *argv;
};

#define KG_PARTITION_RUN_OPTS_INIT { .part = KG_PARTITION_OPTS_INIT }

/*
 * Partition o->dataset into o->output and print the statistics on stderr
 * unless quiet.  Returns 0, -1 after kg_error() with nothing written, or
 * KG_ERR_VERSION when the dataset was written by an unknown format
 * version.
 */
int kg_partition_run(const struct kg_partition_run_opts *o);

#endif
