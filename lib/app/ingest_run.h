/*
 * ingest_run: kg-ingest run from its options (application layer; parsing,
 * deduplication, splitting and writing are lib/ingest).
 */
#ifndef KG_APP_INGEST_RUN_H
#define KG_APP_INGEST_RUN_H

#include "ingest/ingest.h"

/*
 * Check the options that go together only in some ways (the column
 * order, split fractions, RDF options without RDF input, --graph without
 * N-Quads, --types with --rdf-types types); kg_ingest_run checks them
 * too.  0, or -1 after kg_error().
 */
int kg_ingest_check_opts(const struct kg_ingest_opts *o);

/*
 * Do the whole ingest and commit the output directory.  Prints nothing on
 * success except progress lines when asked.  Returns 0, or -1 after
 * kg_error() with no output left behind.
 */
int kg_ingest_run(const struct kg_ingest_opts *o);

#endif
