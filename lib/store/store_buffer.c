/*
 * store_buffer: kg_store_open_buffer, a buffer of partitions in memory
 * over partition files on disk (Marius's partition buffer); see store.h
 * and store_buffer.h.
 *
 * Memory is capacity + 1 frames of the largest partition's size: the
 * partitions a driver pins (at most capacity) and one more, into which
 * the next partition is read ahead while the current ones train.  A frame
 * is wanted (acquire, prefetch) from the free ones first, then by
 * evicting the unpinned partition used longest ago that nobody asked for
 * (a prefetched one is kept until it is acquired or nothing else is
 * left): a clean one is dropped, a dirty one queued for write-back, and
 * the frame goes to the read queued after it.  Frames are kept for reuse,
 * so the process does not give gigabytes back to the kernel and fault
 * them in again at every swap.
 */
#include "store/store_buffer.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/npy.h"

/* A frame for partition p, or NULL when every frame is pinned (mu held). */
static float *
get_frame(struct buf *b, int for_prefetch)
{
	struct buf_part *v = NULL;
	uint32_t p;
	float *f;

	if (b->nfree > 0)
		return b->free_frames[--b->nfree];
	if (b->frames_made < b->nframes) {
		b->frames_made++;
		b->st.stats.bytes_held += b->frame_floats * sizeof(float);
		if (b->st.stats.bytes_held > b->st.stats.bytes_held_max)
			b->st.stats.bytes_held_max = b->st.stats.bytes_held;
		return kg_xaligned_alloc(64, b->frame_floats * sizeof(float));
	}
	for (p = 0; p < b->st.n_parts; p++) {
		struct buf_part *q = &b->parts[p];

		if (q->st != BS_RESIDENT || q->pins > 0 ||
		    (for_prefetch && q->wanted))
			continue;
		if (v == NULL || (v->wanted && !q->wanted) ||
		    (v->wanted == q->wanted && q->last_use < v->last_use))
			v = q;
	}
	if (v == NULL)
		return NULL;
	f = v->frame;
	if (v->dirty)
		kg_buf_queue(b, (struct buf_job){ JOB_WRITE, 0,
		    (uint32_t)(v - b->parts), f });
	v->frame = NULL;
	v->pub.w = v->pub.state = NULL;
	v->st = BS_ABSENT;
	v->dirty = 0;
	v->wanted = 0;
	b->st.stats.evictions++;
	return f;
}

/* Start reading partition p (absent) into a frame; 0, or -1 when no
 * frame can be had. */
static int
start_read(struct buf *b, uint32_t p, int for_prefetch)
{
	float *f = get_frame(b, for_prefetch);

	if (f == NULL)
		return -1;
	b->parts[p].st = BS_LOADING;
	kg_buf_queue(b, (struct buf_job){ JOB_READ, 0, p, f });
	return 0;
}

static const struct kg_store_part *
buf_acquire(struct kg_store *st, uint32_t p)
{
	struct buf *b = (struct buf *)st;
	struct buf_part *q = &b->parts[p];
	const struct kg_store_part *r = NULL;

	pthread_mutex_lock(&b->mu);
	if (kg_buf_check(b) < 0)
		goto out;
	if (q->st == BS_ABSENT && start_read(b, p, 0) < 0) {
		kg_error("partition %u: all %u partitions of the buffer are in "
		    "use", p, b->capacity);
		goto out;
	}
	while (q->st == BS_LOADING)
		pthread_cond_wait(&b->done, &b->mu);
	if (q->st != BS_RESIDENT) {
		kg_buf_check(b);
		goto out;
	}
	q->pins++;
	q->wanted = 0;
	q->last_use = ++b->clock;
	r = &q->pub;
out:
	pthread_mutex_unlock(&b->mu);
	return r;
}

static void
buf_release(struct kg_store *st, uint32_t p, int dirty)
{
	struct buf *b = (struct buf *)st;
	struct buf_part *q = &b->parts[p];

	pthread_mutex_lock(&b->mu);
	if (q->pins > 0)
		q->pins--;
	if (dirty)
		q->dirty = 1;
	q->last_use = ++b->clock;
	pthread_mutex_unlock(&b->mu);
}

static void
buf_prefetch(struct kg_store *st, uint32_t p)
{
	struct buf *b = (struct buf *)st;
	struct buf_part *q = &b->parts[p];

	pthread_mutex_lock(&b->mu);
	/* A hint: without a frame to spare it is dropped. */
	if (!b->failed && (q->st != BS_ABSENT || start_read(b, p, 1) == 0))
		q->wanted = q->pins == 0;
	pthread_mutex_unlock(&b->mu);
}

/* Queue the write-back of every changed resident partition, which
 * stays resident (mu held). */
static void
queue_dirty(struct buf *b)
{
	uint32_t p;

	for (p = 0; p < b->st.n_parts && !b->failed; p++) {
		struct buf_part *q = &b->parts[p];

		if (q->st == BS_RESIDENT && q->dirty) {
			kg_buf_queue(b, (struct buf_job){ JOB_WRITE, 1, p,
			    q->frame });
			q->dirty = 0;
		}
	}
}

static int
buf_flush(struct kg_store *st)
{
	struct buf *b = (struct buf *)st;
	int rc;

	pthread_mutex_lock(&b->mu);
	queue_dirty(b);
	rc = kg_buf_wait_idle(b);
	pthread_mutex_unlock(&b->mu);
	return rc;
}

static int
buf_set_source(struct kg_store *st, uint32_t p, const char *rows,
    const char *state)
{
	struct buf *b = (struct buf *)st;
	struct buf_part *q = &b->parts[p];
	struct kg_store_src src[2];
	int rc = -1, k;

	src[0].fd = src[1].fd = -1;
	src[0].path = src[1].path = NULL;
	if (kg_store_src_open(&src[0], rows, q->pub.rows, st->dim) < 0 ||
	    (st->state_width > 0 && kg_store_src_open(&src[1], state,
	    q->pub.rows, st->state_width) < 0)) {
		kg_store_src_close(&src[0]);
		return -1;
	}
	pthread_mutex_lock(&b->mu);
	if (kg_buf_wait_idle(b) < 0)
		goto out;
	if (q->pins > 0 || q->st != BS_ABSENT) {
		if (q->pins > 0) {
			kg_error("'%s': partition %u is in use", rows, p);
			goto out;
		}
		b->free_frames[b->nfree++] = q->frame;
		q->frame = NULL;
		q->pub.w = q->pub.state = NULL;
		q->st = BS_ABSENT;
	}
	for (k = 0; k < 2; k++) {
		if (q->fd[k] >= 0)
			close(q->fd[k]);
		q->fd[k] = -1;
		kg_store_src_close(&q->src[k]);
		q->src[k] = src[k];
		src[k].fd = -1;
		src[k].path = NULL;
	}
	q->home = BH_SOURCE;
	q->dirty = 0;
	rc = 0;
out:
	pthread_mutex_unlock(&b->mu);
	kg_store_src_close(&src[0]);
	kg_store_src_close(&src[1]);
	return rc;
}

static int
buf_resident(const struct kg_store *st, uint32_t p)
{
	struct buf *b = (struct buf *)st;
	int r;

	pthread_mutex_lock(&b->mu);
	r = b->parts[p].st == BS_RESIDENT;
	pthread_mutex_unlock(&b->mu);
	return r;
}

/* Rows [first, first + n) of p: in its frame, or read from its home. */
static const float *
buf_view(struct kg_store *st, uint32_t p, uint64_t first, uint64_t n,
    float *scratch)
{
	struct buf *b = (struct buf *)st;
	struct buf_part *q = &b->parts[p];
	uint64_t at = first - q->pub.base;
	const float *frame;
	char msg[512];
	int rc;

	/* Views come while nobody acquires: once the thread is idle,
	 * nothing changes under us. */
	pthread_mutex_lock(&b->mu);
	rc = kg_buf_wait_idle(b);
	frame = q->st == BS_RESIDENT ? q->frame : NULL;
	pthread_mutex_unlock(&b->mu);
	if (rc < 0)
		return NULL;
	if (frame != NULL)
		return frame + at * st->dim;
	if (kg_buf_read_home(b, p, 0, at, n, scratch, msg, sizeof(msg)) < 0) {
		kg_error("%s", msg);
		return NULL;
	}
	return scratch;
}

static int
buf_read(struct kg_store *st, uint32_t p, uint64_t first, uint64_t n,
    float *rows, float *state)
{
	struct buf *b = (struct buf *)st;
	struct buf_part *q = &b->parts[p];
	uint64_t at = first - q->pub.base, sw = st->state_width;
	char msg[512];
	int rc;

	pthread_mutex_lock(&b->mu);
	rc = kg_buf_wait_idle(b);
	pthread_mutex_unlock(&b->mu);
	if (rc < 0)
		return -1;
	if (q->st == BS_RESIDENT) {
		memcpy(rows, q->frame + at * st->dim, n * st->dim *
		    sizeof(float));
		if (sw > 0)
			memcpy(state, q->pub.state + at * sw, n * sw *
			    sizeof(float));
		return 0;
	}
	if (kg_buf_read_home(b, p, 0, at, n, rows, msg, sizeof(msg)) < 0 ||
	    (sw > 0 && kg_buf_read_home(b, p, 1, at, n, state, msg,
	    sizeof(msg)) < 0)) {
		kg_error("%s", msg);
		return -1;
	}
	b->st.stats.bytes_read += n * kg_buf_home_row_bytes(b, p);
	return 0;
}

/* Link the nameless file fd as path; 0 or -1 (errno). */
static int
link_fd(int fd, const char *path)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	return linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW);
}

/* A checkpoint's copy of p: its home files linked when they are current
 * (no copy at all), else written out. */
static int
buf_save_part(struct kg_store *st, uint32_t p, const char *rows,
    const char *state)
{
	struct buf *b = (struct buf *)st;
	struct buf_part *q = &b->parts[p];
	const char *path[2] = { rows, state };
	int rc, k, n = st->state_width ? 2 : 1, linked[2] = { 0, 0 };

	pthread_mutex_lock(&b->mu);
	if (q->st == BS_RESIDENT && q->dirty) {
		kg_buf_queue(b, (struct buf_job){ JOB_WRITE, 1, p, q->frame });
		q->dirty = 0;
	}
	rc = kg_buf_wait_idle(b);
	/* Binary16 homes are no checkpoint files: those are copied. */
	for (k = 0; rc == 0 && k < n && !(q->home == BH_FILE && b->half); k++)
		linked[k] = q->home == BH_FILE && b->anon ?
		    link_fd(q->fd[k], path[k]) == 0 : q->home == BH_SOURCE ?
		    link(q->src[k].path, path[k]) == 0 : 0;
	pthread_mutex_unlock(&b->mu);
	if (rc < 0 || linked[0] + linked[1] == n)
		return rc;
	/* Another filesystem, or nothing on disk yet: a copy. */
	for (k = 0; k < n; k++)
		if (linked[k])
			unlink(path[k]);
	return kg_store_save_part_copy(st, p, rows, state);
}

/* The snapshot is the partition files: the changed partitions written
 * home, then each home's rows file kept open (a write-back makes new
 * files, so a kept one never changes). */
static int
buf_snapshot(struct kg_store *st, struct kg_store_snap_part *sp)
{
	struct buf *b = (struct buf *)st;
	uint32_t p;
	int rc;

	pthread_mutex_lock(&b->mu);
	queue_dirty(b);
	rc = kg_buf_wait_idle(b);
	for (p = 0; rc == 0 && p < st->n_parts; p++) {
		struct buf_part *q = &b->parts[p];

		if (q->home == BH_FRESH) {
			sp[p].kind = SNAP_FRESH;
			continue;
		}
		sp[p].fd = dup(q->home == BH_FILE ? q->fd[0] : q->src[0].fd);
		sp[p].half = q->home == BH_FILE && b->half;
		sp[p].off = q->home == BH_FILE ? q->data_off[0] :
		    q->src[0].data_off;
		if (sp[p].fd < 0) {
			kg_error_errno("cannot keep partition %u for the "
			    "snapshot", p);
			rc = -1;
		} else
			sp[p].kind = SNAP_FILE;
	}
	pthread_mutex_unlock(&b->mu);
	return rc;
}

static void
buf_free(struct kg_store *st)
{
	struct buf *b = (struct buf *)st;
	uint32_t p;

	kg_buf_io_stop(b);
	for (p = 0; b->parts != NULL && p < st->n_parts; p++)
		if (b->parts[p].frame != NULL)
			b->free_frames[b->nfree++] = b->parts[p].frame;
	for (p = 0; p < b->nfree; p++)
		free(b->free_frames[p]);
	free(b->free_frames);
	free(b->hbuf);
	free(b->parts);
	free(b->dir);
	kg_store_base_release(st);
	free(b);
}

static const struct kg_store_ops buf_ops = {
	.acquire = buf_acquire, .release = buf_release,
	.prefetch = buf_prefetch, .set_source = buf_set_source,
	.resident = buf_resident, .part_view = buf_view, .free = buf_free,
	.flush = buf_flush, .save_part = buf_save_part, .read = buf_read,
	.snapshot = buf_snapshot
};

/* Whether dir takes nameless files; 0, or -1 after kg_error() when it
 * takes no files at all. */
static int
probe_dir(struct buf *b)
{
	int fd;

	b->anon = 1;
	fd = kg_buf_tmpfile(b);
	if (fd < 0) {
		b->anon = 0;
		fd = kg_buf_tmpfile(b);
	}
	if (fd < 0) {
		kg_error_errno("cannot make partition files in '%s'", b->dir);
		return -1;
	}
	close(fd);
	return 0;
}

struct kg_store *
kg_store_open_buffer(const struct kg_store_layout *l,
    const struct kg_store_init *init, const char *dir, uint32_t capacity)
{
	return kg_store_open_buffer_as(l, init, dir, capacity, KG_DISK_F32);
}

/* Values the I/O thread narrows at a time (512 KiB of binary16). */
#define HALF_CHUNK ((size_t)1 << 18)

struct kg_store *
kg_store_open_buffer_as(const struct kg_store_layout *l,
    const struct kg_store_init *init, const char *dir, uint32_t capacity,
    enum kg_disk_dtype dtype)
{
	struct buf *b = kg_xcalloc(1, sizeof(*b));
	uint64_t most = 0;
	uint32_t p;

	if (kg_store_base_init(&b->st, &buf_ops, l, init) < 0) {
		free(b);
		return NULL;
	}
	b->dir = kg_xstrdup(dir != NULL ? dir : ".");
	b->parts = kg_xcalloc(l->n_parts, sizeof(*b->parts));
	for (p = 0; p < l->n_parts; p++) {
		struct buf_part *q = &b->parts[p];

		q->pub.base = b->st.off[p];
		q->pub.rows = b->st.off[p + 1] - b->st.off[p];
		q->fd[0] = q->fd[1] = q->src[0].fd = q->src[1].fd = -1;
		if (q->pub.rows > most)
			most = q->pub.rows;
	}
	b->capacity = capacity < l->n_parts ? capacity : l->n_parts;
	/* One frame more than the capacity, for the next partition to be
	 * read while the current ones train (none when all fit). */
	b->nframes = capacity == 0 ? 1 : capacity < l->n_parts ?
	    capacity + 1 : l->n_parts;
	b->frame_floats = (size_t)most * ((size_t)l->dim + l->state_width);
	b->free_frames = kg_xcalloc(b->nframes, sizeof(*b->free_frames));
	if (dtype == KG_DISK_F16) {
		b->half = 1;
		b->hcap = HALF_CHUNK;
		b->hbuf = kg_xmallocarray(b->hcap, sizeof(*b->hbuf));
	}
	if (capacity == 0) {
		kg_error("a partition buffer needs room for at least one "
		    "partition");
		buf_free(&b->st);
		return NULL;
	}
	if (probe_dir(b) < 0 || kg_buf_io_start(b) < 0) {
		buf_free(&b->st);
		return NULL;
	}
	return &b->st;
}
