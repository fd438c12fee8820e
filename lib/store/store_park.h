/*
 * store_park: the parking file of kg_store_open_park (lib/store only).
 *
 * One temporary file per store, unlinked as soon as it is created, so the
 * kernel frees it however the process ends (an error, a signal, SIGKILL,
 * MPI_Abort): nothing is ever left in TMPDIR.  Partition p has a fixed
 * slot at byte off[p] x (dim + state_width) x 4, the size of its buffer;
 * the file is sparse, so only parked partitions take disk space.
 */
#ifndef KG_STORE_PARK_H
#define KG_STORE_PARK_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

struct kg_park {
	int fd;
	char *dir;		/* where it was made, for messages */
};

/* Create the file under dir (NULL: $TMPDIR or /tmp); 0 or -1. */
int kg_park_open(struct kg_park *pk, const char *dir);
void kg_park_close(struct kg_park *pk);
/* Write partition p's buffer into its slot; 0 or -1 after kg_error(). */
int kg_park_write(struct kg_park *pk, struct kg_store *st, uint32_t p,
    const float *buf);
/* Read floats [at, at + n) of partition p's slot into dst; 0 or -1. */
int kg_park_read(struct kg_park *pk, struct kg_store *st, uint32_t p,
    size_t at, size_t n, float *dst);
/* Give partition p's slot back to the filesystem (best effort). */
void kg_park_drop(struct kg_park *pk, const struct kg_store *st, uint32_t p);

#endif
