/*
 * dropbehind: keeping a large file that is read once, from start to end,
 * out of the page cache when it was not there before.  The file is seen
 * in windows of KG_DROP_WINDOW bytes; those that were not in the page
 * cache when the reader opened the file (fewer than half of a few pages
 * of each resident, by mincore(2)) are dropped from it
 * (POSIX_FADV_DONTNEED) once the reader is past them, so that reading a
 * file larger than memory leaves the cache as it was instead of evicting
 * everything else, and a file that was cached stays cached.  Only a hint
 * to the kernel: nothing here fails.
 */
#ifndef KG_DROPBEHIND_H
#define KG_DROPBEHIND_H

#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#define KG_DROP_WINDOW ((uint64_t)32 << 20)

struct kg_dropbehind {
	unsigned char *drop;	/* per window: 1 to drop it; NULL: none */
	uint64_t n_windows, next;	/* windows before next are done */
};

#define KG_DROPBEHIND_INIT { 0 }

/*
 * Plan for the regular file fd (st its fstat, off0 the offset its
 * reader starts at).  A file under two windows, one that cannot be
 * mapped, and one of another user (Linux shows the page cache of a file
 * to mincore(2) only for its owner, a writer or root) get no plan: the
 * other calls then do nothing.
 */
void kg_dropbehind_plan(struct kg_dropbehind *db, int fd,
    const struct stat *st, off_t off0);

/* The reader is done with the file's bytes before offset pos (with all
 * of them when end is set): drop the planned windows it is past. */
void kg_dropbehind_advance(struct kg_dropbehind *db, int fd, uint64_t pos,
    int end);

/* Free the plan; leaves *db empty.  Safe on KG_DROPBEHIND_INIT. */
void kg_dropbehind_release(struct kg_dropbehind *db);

#endif
