/*
 * store_buffer_io: the I/O thread of the buffer store and its partition
 * files; see store_buffer.h.
 *
 * A partition's home on disk is two .npy files (its rows, float32
 * [rows, dim], and its optimiser state, float32 [rows] or [rows, width]),
 * the checkpoint layout of lib/io/ckpt.h, so that a checkpoint links them
 * instead of copying.  They are made nameless (O_TMPFILE) in the store's
 * directory, so nothing is left however the process ends; a write-back
 * makes new files and drops the old ones only once the new ones are
 * complete, so a failed write (a full disk) leaves the last good copy.
 * The thread never calls kg_error(): it records its first failure, which
 * the next call on the main thread reports.
 *
 * A KG_DISK_F16 store writes the rows file as raw binary16 (no header:
 * it is never linked into a checkpoint), narrowed a chunk at a time
 * through the thread's own buffer, and rounds the frame to the same
 * values as it goes; the state file stays float32 .npy.
 */
#include "store/store_buffer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/f16.h"
#include "io/fatal.h"
#include "io/npy.h"

int
kg_buf_tmpfile(const struct buf *b)
{
	char *tmpl;
	int fd;

#ifdef O_TMPFILE
	if (b->anon)
		return open(b->dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0644);
#endif
	tmpl = kg_path_join(b->dir, ".kgpipe-part.XXXXXX");
	fd = mkstemp(tmpl);
	if (fd >= 0)
		unlink(tmpl);
	free(tmpl);
	return fd;
}

/* Floats per row of file k (rows or state). */
static uint32_t
width_of(const struct buf *b, int k)
{
	return k == 0 ? b->st.dim : b->st.state_width;
}

int
kg_store_pread_rows(int fd, uint64_t off, int half, uint64_t first,
    uint64_t n, uint32_t dim, float *dst)
{
	size_t vals = (size_t)n * dim, hrow = (size_t)dim * sizeof(uint16_t);
	uint16_t *up = (uint16_t *)(void *)((char *)dst + vals *
	    sizeof(uint16_t));

	if (!half)
		return kg_pread_full(fd, dst, vals * sizeof(float),
		    (int64_t)(off + first * dim * sizeof(float)));
	if (kg_pread_full(fd, up, vals * sizeof(uint16_t), (int64_t)(off +
	    first * hrow)) < 0)
		return -1;
	kg_f16_decode(dst, up, vals);
	return 0;
}

uint64_t
kg_buf_home_row_bytes(const struct buf *b, uint32_t p)
{
	uint64_t esz = b->half && b->parts[p].home == BH_FILE ?
	    sizeof(uint16_t) : sizeof(float);

	return b->st.dim * esz + (uint64_t)b->st.state_width * sizeof(float);
}

int
kg_buf_read_home(struct buf *b, uint32_t p, int k, uint64_t first,
    uint64_t n, float *dst, char *msg, size_t msglen)
{
	struct buf_part *q = &b->parts[p];
	size_t row = (size_t)width_of(b, k) * sizeof(float);
	const char *what = k ? "state" : "rows";
	int fd, rc;
	uint64_t off;

	switch (q->home) {
	case BH_FRESH:
		if (k == 0)
			kg_store_init_rows(&b->st, p, first, n, dst);
		else
			memset(dst, 0, n * row);
		return 0;
	case BH_FILE:
		fd = q->fd[k];
		off = q->data_off[k];
		break;
	default:
		fd = q->src[k].fd;
		off = q->src[k].data_off;
		break;
	}
	rc = kg_store_pread_rows(fd, off, k == 0 && b->half && q->home ==
	    BH_FILE, first, n, width_of(b, k), dst);
	if (rc < 0) {
		snprintf(msg, msglen, "cannot read the %s of partition %u "
		    "from %s: %s", what, p, q->home == BH_FILE ? b->dir :
		    q->src[k].path, strerror(errno));
		return -1;
	}
	return 0;
}

/* Partition p's rows and state into frame; 0 or -1 (msg). */
static int
do_read(struct buf *b, uint32_t p, float *frame, char *msg, size_t len)
{
	uint64_t rows = b->parts[p].pub.rows;

	if (kg_buf_read_home(b, p, 0, 0, rows, frame, msg, len) < 0)
		return -1;
	if (b->st.state_width > 0 && kg_buf_read_home(b, p, 1, 0, rows,
	    frame + rows * b->st.dim, msg, len) < 0)
		return -1;
	return 0;
}

/* One new .npy file holding n rows of width w from x; fd or -1 (msg). */
static int
write_file(struct buf *b, uint32_t p, int k, const float *x,
    uint64_t *data_off, char *msg, size_t len)
{
	uint64_t rows = b->parts[p].pub.rows, w = width_of(b, k);
	uint64_t shape[2] = { rows, w };
	char hdr[1024];
	size_t hlen = kg_npy_header(hdr, sizeof(hdr), KG_DT_F4,
	    k == 1 && w == 1 ? 1 : 2, shape);
	int fd = kg_buf_tmpfile(b);

	if (fd < 0 || hlen == 0 || kg_write_full(fd, hdr, hlen, 0) < 0 ||
	    kg_write_full(fd, x, rows * w * sizeof(float), (int64_t)hlen) <
	    0) {
		snprintf(msg, len, "cannot write partition %u to '%s': %s", p,
		    b->dir, hlen == 0 ? "shape too large" : strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*data_off = hlen;
	return fd;
}

/* One new raw binary16 file of partition p's rows x, which are rounded
 * to the values written; fd or -1 (msg). */
static int
write_half_file(struct buf *b, uint32_t p, float *x, char *msg, size_t len)
{
	uint64_t vals = b->parts[p].pub.rows * b->st.dim, at, k, bad;
	int fd = kg_buf_tmpfile(b);

	if (fd < 0) {
		snprintf(msg, len, "cannot write partition %u to '%s': %s", p,
		    b->dir, strerror(errno));
		return -1;
	}
	for (at = 0; at < vals; at += k) {
		k = vals - at < b->hcap ? vals - at : b->hcap;
		bad = kg_f16_encode(b->hbuf, x + at, k);
		if (bad < k) {
			snprintf(msg, len, "partition %u: row %llu holds %g, "
			    "outside float16's range (|x| <= 65504): "
			    "--disk_dtype float16 cannot keep it", p,
			    (unsigned long long)((at + bad) / b->st.dim),
			    (double)x[at + bad]);
			close(fd);
			return -1;
		}
		kg_f16_decode(x + at, b->hbuf, k);
		if (kg_write_full(fd, b->hbuf, k * sizeof(uint16_t), (int64_t)
		    (at * sizeof(uint16_t))) < 0) {
			snprintf(msg, len, "cannot write partition %u to '%s': "
			    "%s", p, b->dir, strerror(errno));
			close(fd);
			return -1;
		}
	}
	return fd;
}

/* Write frame as partition p's new home files; on success fd and off get
 * them.  0 or -1 (msg), nothing made then.  A binary16 store rounds the
 * frame's rows to what it writes. */
static int
do_write(struct buf *b, uint32_t p, float *frame, int fd[2],
    uint64_t off[2], char *msg, size_t len)
{
	uint64_t rows = b->parts[p].pub.rows;

	fd[1] = -1;
	off[0] = 0;
	fd[0] = b->half ? write_half_file(b, p, frame, msg, len) :
	    write_file(b, p, 0, frame, &off[0], msg, len);
	if (fd[0] < 0)
		return -1;
	if (b->st.state_width > 0) {
		fd[1] = write_file(b, p, 1, frame + rows * b->st.dim, &off[1],
		    msg, len);
		if (fd[1] < 0) {
			close(fd[0]);
			return -1;
		}
	}
	return 0;
}

static void
close_home(struct buf_part *q)
{
	int k;

	for (k = 0; k < 2; k++) {
		if (q->fd[k] >= 0)
			close(q->fd[k]);
		q->fd[k] = -1;
		kg_store_src_close(&q->src[k]);
	}
}

/* Record the job's outcome (mu held). */
static void
finish(struct buf *b, const struct buf_job *j, int rc, int fd[2],
    uint64_t off[2], const char *msg)
{
	struct buf_part *q = &b->parts[j->p];

	if (rc < 0 && !b->failed) {
		b->failed = 1;
		snprintf(b->err, sizeof(b->err), "%s", msg);
	}
	if (j->kind == JOB_READ) {
		if (rc < 0) {
			q->st = BS_ABSENT;
			b->free_frames[b->nfree++] = j->frame;
			return;
		}
		if (q->home != BH_FRESH)
			b->st.stats.bytes_read += q->pub.rows *
			    kg_buf_home_row_bytes(b, j->p);
		q->frame = j->frame;
		q->st = BS_RESIDENT;
		q->pub.w = j->frame;
		q->pub.state = b->st.state_width ? j->frame + q->pub.rows *
		    b->st.dim : NULL;
		return;
	}
	if (rc < 0)
		return;
	close_home(q);
	q->fd[0] = fd[0];
	q->fd[1] = fd[1];
	q->data_off[0] = off[0];
	q->data_off[1] = off[1];
	q->home = BH_FILE;
	b->st.stats.bytes_written += q->pub.rows *
	    kg_buf_home_row_bytes(b, j->p);
}

static void *
io_main(void *arg)
{
	struct buf *b = arg;
	char msg[512];

	pthread_mutex_lock(&b->mu);
	for (;;) {
		struct buf_job j;
		int rc, fd[2] = { -1, -1 };
		uint64_t off[2] = { 0, 0 };

		while (b->qlen == 0 && !b->quit)
			pthread_cond_wait(&b->wake, &b->mu);
		if (b->qlen == 0)
			break;
		j = b->q[b->qhead];
		b->qhead = (b->qhead + 1) % b->qcap;
		b->qlen--;
		b->busy = 1;
		pthread_mutex_unlock(&b->mu);
		msg[0] = '\0';
		/* The queue's order makes the homes read here stable. */
		rc = j.kind == JOB_READ ? do_read(b, j.p, j.frame, msg,
		    sizeof(msg)) : do_write(b, j.p, j.frame, fd, off, msg,
		    sizeof(msg));
		pthread_mutex_lock(&b->mu);
		finish(b, &j, rc, fd, off, msg);
		b->busy = 0;
		pthread_cond_broadcast(&b->done);
	}
	pthread_mutex_unlock(&b->mu);
	return NULL;
}

void
kg_buf_queue(struct buf *b, struct buf_job job)
{
	/* At most one read and one write per partition are ever queued. */
	b->q[(b->qhead + b->qlen) % b->qcap] = job;
	b->qlen++;
	pthread_cond_signal(&b->wake);
}

int
kg_buf_check(struct buf *b)
{
	if (!b->failed)
		return 0;
	kg_error("%s", b->err);
	return -1;
}

int
kg_buf_wait_idle(struct buf *b)
{
	while (b->qlen > 0 || b->busy)
		pthread_cond_wait(&b->done, &b->mu);
	return kg_buf_check(b);
}

int
kg_buf_io_start(struct buf *b)
{
	sigset_t old;
	int err;

	b->qcap = 2 * (size_t)b->st.n_parts + 4;
	b->q = kg_xcalloc(b->qcap, sizeof(*b->q));
	pthread_mutex_init(&b->mu, NULL);
	pthread_cond_init(&b->wake, NULL);
	pthread_cond_init(&b->done, NULL);
	/* The thread starts with the fatal signals blocked (it inherits
	 * this mask), so they go to a thread that cleans up (io/fatal.h). */
	kg_fatal_block(&old);
	err = pthread_create(&b->thread, NULL, io_main, b);
	kg_fatal_unblock(&old);
	if (err != 0) {
		errno = err;
		kg_error_errno("cannot start the I/O thread of the partition "
		    "buffer");
		return -1;
	}
	b->running = 1;
	return 0;
}

void
kg_buf_io_stop(struct buf *b)
{
	uint32_t p;

	if (b->running) {
		pthread_mutex_lock(&b->mu);
		b->quit = 1;
		pthread_cond_signal(&b->wake);
		pthread_mutex_unlock(&b->mu);
		pthread_join(b->thread, NULL);
		b->running = 0;
	}
	for (p = 0; b->parts != NULL && p < b->st.n_parts; p++)
		close_home(&b->parts[p]);
	if (b->q != NULL) {
		pthread_cond_destroy(&b->done);
		pthread_cond_destroy(&b->wake);
		pthread_mutex_destroy(&b->mu);
	}
	free(b->q);
	b->q = NULL;
}
