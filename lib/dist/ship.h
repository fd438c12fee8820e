/*
 * ship: files carried from one rank's disk to another's over MPI, for
 * ranks on hosts that share no filesystem (a checkpoint that rank 0
 * writes and reads for every rank).
 *
 * kg_dist_ship_files copies names[0..n) from directory src on rank
 * "from" to directory dst on rank "to", byte for byte; every other rank
 * returns 0 at once, and from == to copies nothing.  A file that "from"
 * cannot read (or that does not exist, when optional) travels as absent:
 * "to" then writes nothing for it.  A missing file that is not optional
 * is an error on "from"; a file "to" cannot write is an error on "to".
 * The two ranks return 0, or -1 after kg_error() on the rank that
 * failed; the other rank of the pair may return 0, so callers agree on
 * the outcome afterwards (a collective such as kg_dist_max_u64).
 *
 * kg_dist_local_tmpdir makes a fresh private directory under $TMPDIR
 * (else /tmp) on this rank's own disk: a new string, or NULL after
 * kg_error().  The caller removes it (kg_rmtree) and frees the string.
 */
#ifndef KG_DIST_SHIP_H
#define KG_DIST_SHIP_H

#include <stddef.h>

#include "dist/dist.h"

int kg_dist_ship_files(struct kg_dist *d, int from, int to, const char *src,
    const char *dst, const char *const *names, size_t n, int optional);

char *kg_dist_local_tmpdir(void);

#endif
