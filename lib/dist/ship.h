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

/*
 * Rank 0's directory trees dirs[0..n) copied to every other rank's own
 * disk (collective), so that ranks on hosts that share no filesystem read
 * their inputs from their own disk: on a rank other than 0, *local gets a
 * fresh directory (kg_dist_local_tmpdir; the caller removes it with
 * kg_rmtree and frees it) and out[i] the path of dirs[i]'s copy in it; on
 * rank 0, out[i] is a copy of dirs[i] and *local NULL.  keep(i, rel,
 * rank), when not NULL, says whether the file rel (a path inside dirs[i])
 * goes to that rank; NULL dirs are skipped (out[i] NULL).  Regular files
 * only, in sorted order, with the directories they need.  The caller
 * frees out[i].  0 on every rank, or -1 on every rank after kg_error() on
 * the ranks that failed.
 */
int kg_dist_ship_trees(struct kg_dist *d, const char *const *dirs, size_t n,
    int (*keep)(size_t i, const char *rel, int rank), char **local,
    char **out);

/*
 * Rank from's directory tree src copied to directory dst on rank to
 * (point to point; every other rank returns 0 at once, and from == to
 * copies nothing): the regular files below src, in sorted order, with the
 * directories they need.  0, or -1 after kg_error() on the rank that
 * failed (src unreadable on from, dst unwritable on to); the other rank
 * may return 0, so callers agree afterwards, as for kg_dist_ship_files.
 */
int kg_dist_ship_tree(struct kg_dist *d, int from, int to, const char *src,
    const char *dst);

#endif
