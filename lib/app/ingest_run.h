/*
 * ingest_run: kg-ingest run from its options (application layer; parsing,
 * deduplication, splitting and writing are lib/ingest).
 */
#ifndef KG_APP_INGEST_RUN_H
#define KG_APP_INGEST_RUN_H

#include "ingest/ingest.h"

/*
 * Do the whole ingest and commit the output directory.  Prints nothing on
 * success except progress lines when asked.  Returns 0, or -1 after
 * kg_error() with no output left behind.
 */
int kg_ingest_run(const struct kg_ingest_opts *o);

#endif
