#include "store/store_park.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/util.h"

int
kg_park_open(struct kg_park *pk, const char *dir)
{
	const char *env = getenv("TMPDIR");
	char *tmpl;

	if (dir == NULL)
		dir = env != NULL && *env ? env : "/tmp";
	tmpl = kg_path_join(dir, "kgpipe-park.XXXXXX");
	pk->fd = mkstemp(tmpl);
	if (pk->fd < 0) {
		kg_error_errno("cannot create a parking file in '%s'", dir);
		free(tmpl);
		return -1;
	}
	/* Nameless from now on: the kernel reclaims it when we end. */
	unlink(tmpl);
	free(tmpl);
	pk->dir = kg_xstrdup(dir);
	return 0;
}

void
kg_park_close(struct kg_park *pk)
{
	if (pk->fd >= 0)
		close(pk->fd);
	free(pk->dir);
	pk->fd = -1;
	pk->dir = NULL;
}

static int64_t
slot(const struct kg_store *st, uint32_t p)
{
	return (int64_t)(st->off[p] * ((uint64_t)st->dim + st->state_width) *
	    sizeof(float));
}

int
kg_park_write(struct kg_park *pk, struct kg_store *st, uint32_t p,
    const float *buf)
{
	size_t bytes = kg_store_part_floats(st, p) * sizeof(float);

	if (kg_write_full(pk->fd, buf, bytes, slot(st, p)) < 0) {
		kg_error_errno("cannot park partition %u in '%s'", p, pk->dir);
		return -1;
	}
	__atomic_fetch_add(&st->stats.bytes_written, bytes, __ATOMIC_RELAXED);
	return 0;
}

int
kg_park_read(struct kg_park *pk, struct kg_store *st, uint32_t p, size_t at,
    size_t n, float *dst)
{
	if (kg_pread_full(pk->fd, dst, n * sizeof(float), slot(st, p) +
	    (int64_t)(at * sizeof(float))) < 0) {
		kg_error_errno("cannot read parked partition %u in '%s'", p,
		    pk->dir);
		return -1;
	}
	__atomic_fetch_add(&st->stats.bytes_read, n * sizeof(float),
	    __ATOMIC_RELAXED);
	return 0;
}

void
kg_park_drop(struct kg_park *pk, const struct kg_store *st, uint32_t p)
{
#ifdef FALLOC_FL_PUNCH_HOLE
	(void)fallocate(pk->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
	    (off_t)slot(st, p), (off_t)(kg_store_part_floats(st, p) *
	    sizeof(float)));
#else
	(void)pk;
	(void)st;
	(void)p;
#endif
}
