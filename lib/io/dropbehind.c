/*
 * dropbehind: see dropbehind.h.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "io/dropbehind.h"
#include "core/util.h"

/* Pages looked at per window. */
#define SAMPLES 8

void
kg_dropbehind_plan(struct kg_dropbehind *db, int fd, const struct stat *st,
    off_t off0)
{
	uint64_t size = (uint64_t)st->st_size, w, len, off;
	long page = sysconf(_SC_PAGESIZE);
	unsigned char v;
	char *map;
	int i, in;

	if (off0 < 0 || size < 2 * KG_DROP_WINDOW || page <= 0 ||
	    size > SIZE_MAX || (st->st_uid != geteuid() && geteuid() != 0))
		return;
	/* A shared read-only mapping: mincore(2) on it reads nothing. */
	map = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return;
	db->n_windows = (size + KG_DROP_WINDOW - 1) / KG_DROP_WINDOW;
	db->drop = kg_xcalloc((size_t)db->n_windows, 1);
	for (w = 0; w < db->n_windows; w++) {
		len = size - w * KG_DROP_WINDOW;
		if (len > KG_DROP_WINDOW)
			len = KG_DROP_WINDOW;
		for (i = in = 0; i < SAMPLES; i++) {
			off = (w * KG_DROP_WINDOW + len * (uint64_t)i /
			    SAMPLES) & ~((uint64_t)page - 1);
			in += mincore(map + off, 1, &v) == 0 && (v & 1);
		}
		db->drop[w] = in < SAMPLES / 2;
	}
	munmap(map, (size_t)size);
	db->next = (uint64_t)off0 / KG_DROP_WINDOW;
}

void
kg_dropbehind_advance(struct kg_dropbehind *db, int fd, uint64_t pos,
    int end)
{
	for (; db->next < db->n_windows && (end || (db->next + 1) *
	    KG_DROP_WINDOW <= pos); db->next++)
		if (db->drop[db->next])
			(void)posix_fadvise(fd, (off_t)(db->next *
			    KG_DROP_WINDOW), (off_t)KG_DROP_WINDOW,
			    POSIX_FADV_DONTNEED);
}

void
kg_dropbehind_release(struct kg_dropbehind *db)
{
	struct kg_dropbehind zero = KG_DROPBEHIND_INIT;

	free(db->drop);
	*db = zero;
}
