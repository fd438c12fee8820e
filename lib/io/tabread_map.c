/*
 * tabread_map: a mapped input of tabread; see tabread_impl.h.
 *
 * A regular file of at least MAP_MIN bytes that is not gzip (and whose
 * offset is 0) is mapped (mmap) instead of read: the buffer is the
 * mapping, of which MAP_STEP bytes more are made available at a time and
 * the pages consumed are unmapped again (so that its resident size stays
 * about MAP_STEP).  That spares the read(2) calls and the kernel's copy
 * of every byte, most of the system time of reading a cached file.
 */
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/tabread_impl.h"
#include "io/dropbehind.h"
#include "io/fatal.h"
#include "core/util.h"

#define MAP_MIN ((size_t)4 << 20)
#define MAP_STEP ((size_t)1 << 20)

void
kg_tabread_map_open(struct kg_tabread *r, int fd, const struct stat *st)
{
	void *map;

	if ((uint64_t)st->st_size < MAP_MIN || (uint64_t)st->st_size >
	    SIZE_MAX)
		return;
	map = mmap(NULL, (size_t)st->st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return;
	(void)madvise(map, (size_t)st->st_size, MADV_SEQUENTIAL);
	r->buf = map;
	r->cap = r->map_len = (size_t)st->st_size;
	kg_fatal_watch_map(map, r->map_len, r->name);
}

int
kg_tabread_map_refill(struct kg_tabread *r)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t done = r->pos / page * page, old = r->len;
	struct stat st;

	/* Pages past a shrunk file's end fault (fatal.h: SIGBUS): say so
	 * here instead when the shrinking is seen first. */
	if (fstat(r->fd, &st) == 0 && (uint64_t)st.st_size < r->map_len) {
		kg_error("%s: the file shrank while it was read", r->name);
		return -1;
	}

	if (done > r->unmapped) {
		/* The pages stay in the file's cache; dropped from the
		 * mapping they no longer count as resident. */
		(void)madvise(r->buf + r->unmapped, done - r->unmapped,
		    MADV_DONTNEED);
		r->unmapped = done;
		kg_dropbehind_advance(&r->drop, r->fd, r->file_off0 + done, 0);
	}
	r->len = r->map_len - old > MAP_STEP ? old + MAP_STEP : r->map_len;
	r->bytes += r->len - old;
	r->eof = r->len == r->map_len;
	return 0;
}

void
kg_tabread_map_close(struct kg_tabread *r)
{
	kg_fatal_unwatch_map(r->buf);
	munmap(r->buf, r->map_len);
	/* The pages were mapped until now: drop what is planned. */
	kg_dropbehind_advance(&r->drop, r->fd, 0, 1);
}
