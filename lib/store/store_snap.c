/*
 * store_snap: the snapshot of a store's rows (kg_store_snapshot and its
 * kin, store.h).  A store with a snapshot operation of its own (the
 * buffer store) says where each partition's rows already are on disk;
 * for the others the rows are copied into memory, one array per
 * partition, allocated at the first snapshot and reused after.
 */
#include "store/store_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/npy.h"

/* Rows a copy moves at a time when a file is written piece by piece. */
#define SNAP_WINDOW_ROWS 4096

static uint64_t
rows_of(const struct kg_store *st, uint32_t p)
{
	return st->off[p + 1] - st->off[p];
}

static struct kg_store_snap *
snap_get(struct kg_store *st)
{
	uint32_t p;

	if (st->snap == NULL) {
		st->snap = kg_xcalloc(1, sizeof(*st->snap));
		st->snap->parts = kg_xcalloc(st->n_parts,
		    sizeof(*st->snap->parts));
		for (p = 0; p < st->n_parts; p++)
			st->snap->parts[p].fd = -1;
	}
	return st->snap;
}

/* Forget partition p's snapshot rows; keep_ram: an array in memory stays
 * allocated for the next copy. */
static void
part_drop(struct kg_store *st, uint32_t p, int keep_ram)
{
	struct kg_store_snap_part *sp = &st->snap->parts[p];

	if (sp->rows != NULL && !keep_ram) {
		st->stats.bytes_snapshot -= rows_of(st, p) * st->dim *
		    sizeof(float);
		free(sp->rows);
		sp->rows = NULL;
	}
	if (sp->fd >= 0)
		close(sp->fd);
	sp->fd = -1;
	sp->half = 0;
	sp->kind = SNAP_NONE;
}

void
kg_store_snap_free(struct kg_store *st)
{
	uint32_t p;

	if (st->snap == NULL)
		return;
	for (p = 0; p < st->n_parts; p++)
		part_drop(st, p, 0);
	free(st->snap->parts);
	free(st->snap);
	st->snap = NULL;
}

/* Partition p's array in memory, allocated once. */
static float *
ram_of(struct kg_store *st, uint32_t p)
{
	struct kg_store_snap_part *sp = &st->snap->parts[p];
	uint64_t n = rows_of(st, p) * st->dim;

	if (sp->rows == NULL) {
		sp->rows = kg_xmallocarray(n + 1, sizeof(float));
		st->stats.bytes_snapshot += n * sizeof(float);
	}
	return sp->rows;
}

/* The store's own snapshot: nothing copied. */
static int
snapshot_in_place(struct kg_store *st)
{
	uint32_t p;

	for (p = 0; p < st->n_parts; p++)
		part_drop(st, p, 0);
	if (st->ops->snapshot(st, st->snap->parts) == 0)
		return 0;
	for (p = 0; p < st->n_parts; p++)
		part_drop(st, p, 0);
	return -1;
}

int
kg_store_snapshot(struct kg_store *st)
{
	uint32_t p;

	if (st->read_only) {
		kg_error("snapshot: the store is read-only");
		return -1;
	}
	snap_get(st);
	if (st->ops->snapshot != NULL)
		return snapshot_in_place(st);
	for (p = 0; p < st->n_parts; p++) {
		const struct kg_store_part *a = kg_store_acquire(st, p);
		float *dst;

		if (a == NULL) {
			kg_store_snap_free(st);
			return -1;
		}
		part_drop(st, p, 1);
		dst = ram_of(st, p);
		memcpy(dst, a->w, a->rows * st->dim * sizeof(float));
		st->snap->parts[p].kind = SNAP_RAM;
		kg_store_release(st, p, 0);
	}
	return 0;
}

/* Rows [first, first + n) (local) of partition p's snapshot into dst;
 * 0 or -1. */
static int
snap_rows(struct kg_store *st, uint32_t p, uint64_t first, uint64_t n,
    float *dst)
{
	const struct kg_store_snap_part *sp = &st->snap->parts[p];
	size_t row = (size_t)st->dim * sizeof(float);

	switch (sp->kind) {
	case SNAP_RAM:
		memcpy(dst, sp->rows + first * st->dim, n * row);
		return 0;
	case SNAP_FRESH:
		kg_store_init_rows(st, p, first, n, dst);
		return 0;
	case SNAP_FILE:
		if (kg_store_pread_rows(sp->fd, sp->off, sp->half, first, n,
		    st->dim, dst) == 0)
			return 0;
		kg_error_errno("cannot read the snapshot of partition %u", p);
		return -1;
	default:
		kg_error("partition %u has no snapshot", p);
		return -1;
	}
}

/* A snapshot of partition p is there to use; 0 or -1. */
static int
check_snap(const struct kg_store *st, uint32_t p)
{
	if (p >= st->n_parts) {
		kg_error("snapshot: no partition %u (the store has %u)", p,
		    st->n_parts);
		return -1;
	}
	if (st->snap == NULL || st->snap->parts[p].kind == SNAP_NONE) {
		kg_error("partition %u has no snapshot", p);
		return -1;
	}
	return 0;
}

int
kg_store_restore(struct kg_store *st)
{
	uint32_t p;

	for (p = 0; p < st->n_parts; p++)
		if (check_snap(st, p) < 0)
			return -1;
	for (p = 0; p < st->n_parts; p++) {
		const struct kg_store_part *a = kg_store_acquire(st, p);
		int rc;

		if (a == NULL)
			return -1;
		rc = snap_rows(st, p, 0, a->rows, a->w);
		kg_store_release(st, p, 1);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* Link the open file fd as path; 0 or -1 (errno). */
static int
link_fd(int fd, const char *path)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	return linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW);
}

/* Partition p's snapshot written into path a window of rows at a time,
 * with the header kg_npy_write gives; the file is removed on error. */
static int
save_copy(struct kg_store *st, uint32_t p, const char *path)
{
	uint64_t rows = rows_of(st, p), shape[2] = { rows, st->dim }, at, k;
	uint64_t win = rows < SNAP_WINDOW_ROWS ? rows : SNAP_WINDOW_ROWS;
	size_t row = (size_t)st->dim * sizeof(float);
	char hdr[1024];
	size_t hlen = kg_npy_header(hdr, sizeof(hdr), KG_DT_F4, 2, shape);
	float *buf;
	int fd, rc = 0;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		kg_error_errno("cannot create '%s'", path);
		return -1;
	}
	buf = kg_xmallocarray(win * st->dim + 1, sizeof(float));
	if (hlen == 0 || kg_write_full(fd, hdr, hlen, 0) < 0)
		rc = -2;
	for (at = 0; rc == 0 && at < rows; at += k) {
		k = rows - at < win ? rows - at : win;
		rc = snap_rows(st, p, at, k, buf);
		if (rc == 0 && kg_write_full(fd, buf, k * row, (int64_t)(hlen +
		    at * row)) < 0)
			rc = -2;
	}
	free(buf);
	if (rc == 0 && fsync(fd) < 0)
		rc = -2;
	if (rc == -2)
		kg_error_errno("cannot write '%s'", path);
	if (close(fd) < 0 && rc == 0) {
		kg_error_errno("cannot close '%s'", path);
		rc = -1;
	}
	if (rc < 0)
		unlink(path);
	return rc < 0 ? -1 : 0;
}

int
kg_store_snapshot_save(struct kg_store *st, uint32_t p, const char *path)
{
	const struct kg_store_snap_part *sp;
	uint64_t shape[2];

	if (check_snap(st, p) < 0)
		return -1;
	sp = &st->snap->parts[p];
	shape[0] = rows_of(st, p);
	shape[1] = st->dim;
	if (sp->kind == SNAP_RAM)
		return kg_npy_write(path, KG_DT_F4, 2, shape, sp->rows);
	/* A kept file is never written again: a link is a copy. */
	if (sp->kind == SNAP_FILE && !sp->half && link_fd(sp->fd, path) == 0)
		return 0;
	return save_copy(st, p, path);
}

int
kg_store_snapshot_load(struct kg_store *st, uint32_t p, const char *path)
{
	struct kg_store_src src;
	struct kg_store_snap_part *sp;
	int rc = 0;

	if (p >= st->n_parts) {
		kg_error("snapshot: no partition %u (the store has %u)", p,
		    st->n_parts);
		return -1;
	}
	if (kg_store_src_open(&src, path, rows_of(st, p), st->dim) < 0)
		return -1;
	sp = &snap_get(st)->parts[p];
	part_drop(st, p, 1);
	if (st->ops->snapshot != NULL) {
		/* A store that keeps its snapshot on disk keeps this file. */
		sp->kind = SNAP_FILE;
		sp->fd = src.fd;
		sp->off = src.data_off;
		src.fd = -1;
	} else {
		rc = kg_store_src_read(&src, 0, rows_of(st, p), st->dim,
		    ram_of(st, p));
		sp->kind = rc == 0 ? SNAP_RAM : SNAP_NONE;
	}
	kg_store_src_close(&src);
	return rc;
}

int
kg_store_snapshot_read(struct kg_store *st, uint32_t p, uint64_t first,
    uint64_t n, float *dst)
{
	if (check_snap(st, p) < 0)
		return -1;
	if (first > rows_of(st, p) || n > rows_of(st, p) - first) {
		kg_error("snapshot: rows %" PRIu64 "..%" PRIu64 " are outside "
		    "partition %u", first, first + n, p);
		return -1;
	}
	return snap_rows(st, p, first, n, dst);
}

int
kg_store_snapshot_set(struct kg_store *st, uint32_t p, const float *rows)
{
	struct kg_store_snap_part *sp;

	if (p >= st->n_parts) {
		kg_error("snapshot: no partition %u (the store has %u)", p,
		    st->n_parts);
		return -1;
	}
	sp = &snap_get(st)->parts[p];
	part_drop(st, p, 1);
	memcpy(ram_of(st, p), rows, rows_of(st, p) * st->dim *
	    sizeof(float));
	sp->kind = SNAP_RAM;
	return 0;
}
