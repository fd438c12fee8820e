/*
 * store_buffer: the parts of kg_store_open_buffer (lib/store only).
 *
 *   store_buffer.c     the store's operations and its policy: which
 *                      partition has which frame, what to evict, what
 *                      to queue
 *   store_buffer_io.c  the I/O thread and the partition files
 *
 * One mutex guards everything below but the frames' contents; the I/O
 * thread takes jobs from a FIFO queue, so a partition's write-back is
 * always done before a later read of the same partition, and the frame
 * an eviction gives up is written before the read that reuses it.
 */
#ifndef KG_STORE_BUFFER_H
#define KG_STORE_BUFFER_H

#include <pthread.h>

#include "store/store_impl.h"

/* Where a partition's rows are while it has no frame. */
enum { BH_FRESH, BH_FILE, BH_SOURCE };
/* Whether it has one. */
enum { BS_ABSENT, BS_LOADING, BS_RESIDENT };

struct buf_part {
	struct kg_store_part pub;	/* w and state while resident */
	float *frame;
	uint32_t pins;
	uint8_t st;			/* BS_* */
	uint8_t home;			/* BH_* */
	uint8_t dirty;			/* the frame differs from home */
	uint8_t wanted;			/* prefetched, not acquired yet */
	uint64_t last_use;		/* clock of the last acquire/release */
	int fd[2];			/* BH_FILE: rows, state (.npy) */
	uint64_t data_off[2];		/* where their data starts */
	struct kg_store_src src[2];	/* BH_SOURCE */
};

enum { JOB_READ, JOB_WRITE };

struct buf_job {
	uint8_t kind;
	uint8_t keep;		/* write: the frame stays the partition's */
	uint32_t p;
	float *frame;
};

struct buf {
	struct kg_store st;	/* first */
	struct buf_part *parts;
	char *dir;		/* where the partition files are made */
	int anon;		/* 1: O_TMPFILE files (linkable), 0: unlinked */
	int half;		/* KG_DISK_F16: BH_FILE rows are binary16,
				 * raw (no .npy header) */
	uint16_t *hbuf;		/* the I/O thread's narrowing buffer */
	size_t hcap;		/* its values */
	uint32_t capacity;	/* partitions resident at most, plus one */
	uint32_t nframes, frames_made;
	size_t frame_floats;
	float **free_frames;
	uint32_t nfree;
	uint64_t clock;
	/* The queue and the thread. */
	pthread_mutex_t mu;
	pthread_cond_t wake;	/* a job was queued, or quit */
	pthread_cond_t done;	/* a job finished */
	pthread_t thread;
	int running, quit, busy;
	struct buf_job *q;
	size_t qcap, qhead, qlen;
	/* The first I/O error of the thread, reported by the next call. */
	int failed;
	char err[512];
};

/* Start and stop the I/O thread; 0 or -1 after kg_error(). */
int kg_buf_io_start(struct buf *b);
void kg_buf_io_stop(struct buf *b);
/* Queue a job (mu held). */
void kg_buf_queue(struct buf *b, struct buf_job job);
/* Wait until the queue is empty and the thread idle (mu held); 0, or
 * -1 after kg_error() when an I/O failed. */
int kg_buf_wait_idle(struct buf *b);
/* Report the thread's failure, if any (mu held); 0 or -1. */
int kg_buf_check(struct buf *b);
/* Create a partition file in b->dir: an O_TMPFILE when the filesystem
 * has them, else a named file unlinked at once.  fd or -1 (errno). */
int kg_buf_tmpfile(const struct buf *b);
/* Read rows [first, first + n) (local) of partition p's rows (k = 0) or
 * state (k = 1) from its home into dst, without a frame; 0 or -1 with a
 * message in msg. */
int kg_buf_read_home(struct buf *b, uint32_t p, int k, uint64_t first,
    uint64_t n, float *dst, char *msg, size_t msglen);
/* The bytes a row of partition p takes in its home files (rows and
 * state) as they are now: binary16 rows when the home is a file of a
 * KG_DISK_F16 store. */
uint64_t kg_buf_home_row_bytes(const struct buf *b, uint32_t p);

#endif
