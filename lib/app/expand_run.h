/*
 * expand_run: kg-expand end to end.  Load a dataset and its partition
 * directory, check that they belong together, expand every part
 * (lib/graph/expand.h) and write the expanded directory through
 * lib/io/stage.h.
 */
#ifndef KG_EXPAND_RUN_H
#define KG_EXPAND_RUN_H

#include "graph/expand.h"

struct kg_expand_run_opts {
	struct kg_expand_opts x;
	const char *dataset;	/* kg-ingest output */
	const char *partitions;	/* kg-partition output of that dataset */
	const char *features;	/* feature directory to slice, or NULL */
	const char *output;	/* directory to write */
	int force;		/* replace an existing output */
	int quiet;		/* no statistics on stderr */
	int progress;		/* a line per part on stderr */
	int argc;		/* for the manifests */
	char *const *argv;
};

#define KG_EXPAND_RUN_OPTS_INIT { .x = KG_EXPAND_OPTS_INIT }

/*
 * Expand o->partitions of o->dataset into o->output and print the
 * statistics on stderr unless quiet.  Returns 0, -1 after kg_error() with
 * nothing written, or KG_ERR_VERSION when an input was written by an
 * unknown format version.
 */
int kg_expand_run(const struct kg_expand_run_opts *o);

#endif
