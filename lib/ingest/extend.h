/*
 * extend: kg-ingest --extend OLD, a dataset that grows an earlier one.
 *
 * The new dataset keeps every entity and relation of OLD under its ID
 * (names in OLD's order, new names appended after them in order of first
 * appearance among the new triples: train, valid, test) and every triple
 * of OLD in its split (train stays train, valid and test stay where they
 * are, so yesterday's test never leaks into today's train).  The new
 * triples come from split files or are split at random as without
 * --extend; a new triple equal to one of OLD, or to an earlier new one, is
 * dropped (--extend implies --dedup).  Extending twice gives the arrays
 * and dictionaries of extending once with both deltas read in that order,
 * and a delta of OLD's own triples gives OLD's arrays back.
 *
 * OLD must be a kg-ingest dataset of int32 IDs without node types and
 * with unique names in both dictionaries; it is recorded in the manifest
 * as the input "extends" (path and manifest checksum).
 */
#ifndef KG_INGEST_EXTEND_H
#define KG_INGEST_EXTEND_H

#include "ingest/ingest_impl.h"

/*
 * Before any input is read: load st->o->extend (nothing when NULL),
 * enter its names into st->ent and st->rel in ID order and its triples
 * into st->trip and the set of seen triples, remembering their splits.
 * Returns 0, or -1 after kg_error() (OLD missing or unreadable, of an
 * unknown format, with node types, or a duplicate name:
 * "OLD/entities.tsv:LINE: duplicate entity name 'x'").
 */
int kg_ingest_extend_load(struct ingest *st);

/*
 * After every input is read (and split and renumbered in split mode):
 * label each triple with its split (OLD's triples with theirs) and count
 * the splits again.  Nothing when not extending.  Returns 0.
 */
int kg_ingest_extend_finish(struct ingest *st);

#endif
